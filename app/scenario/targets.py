"""What ``mjrig run|check|open TARGET`` accepts: a scenario, a bare model, or a bundled rig's name
(and ``mjrig RECORDING.parquet``: a recording to replay in the app).

One resolver for the CLI and the app, so that all three take the same targets and give the same
one-line error for a wrong one. Outputs never go into the installed package: a bundled rig's
relative output paths, and a bare model's default recording, resolve under the current folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.files.paths import RECORDING_SUFFIXES
from mjrig.runtime.points import closest_names

__all__ = ["resolve_target", "load_target", "is_bundled", "scenario_of_recording", "rig_of_recording"]

_SUFFIXES = (".toml", ".xml", ".urdf", ".mjb")


def is_bundled(path: Path) -> bool:
    """Whether ``path`` lies in the bundled rigs' folder (inside the installed package)."""
    from mjrig.scenario.bundled import MODELS_DIR

    p = Path(path).resolve()
    return p.parent == MODELS_DIR or MODELS_DIR in p.parents


def resolve_target(target: str | os.PathLike, *, recording: bool = False) -> Path:
    """The file TARGET names: an existing .toml/.xml/.urdf/.mjb path, else a bundled rig's scenario;
    with ``recording=True`` (``mjrig RECORDING.parquet``, the app only) also a ``.parquet``.

    A path that exists wins over a rig of the same name. ConfigError (one line) otherwise.
    """
    from mjrig.scenario.bundled import bundled_models

    p = Path(target).expanduser()
    if recording and p.suffix.lower() in RECORDING_SUFFIXES:
        if not p.is_file():
            raise ConfigError(f"{p}: recording not found")
        return p
    if p.is_file():
        if p.suffix.lower() in RECORDING_SUFFIXES:
            raise ConfigError(f"{p}: a recording, not a scenario or a model: replay it in the app with `mjrig {p}`")
        if p.suffix.lower() not in _SUFFIXES:
            raise ConfigError(f"{p}: not a scenario or a model (expected .toml, .xml, .urdf or .mjb)")
        return p
    if p.exists() and str(target) not in {m.name for m in bundled_models()}:
        raise ConfigError(
            f"{p}: not a regular file ({'a folder' if p.is_dir() else 'a pipe, socket or device'}); "
            "give a scenario .toml, a model .xml/.urdf/.mjb or a name from `mjrig models`"
        )
    rigs = {m.name: m.scenario for m in bundled_models()}
    if str(target) in rigs:
        return rigs[str(target)]
    if p.suffix.lower() in _SUFFIXES or os.sep in str(target):
        raise ConfigError(f"{p}: file not found")
    raise ConfigError(
        f"{target}: no such file or bundled rig{closest_names(str(target), list(rigs))}; "
        "give a scenario .toml, a model .xml/.urdf/.mjb or a name from `mjrig models`"
    )


def rig_of_recording(path: Path) -> tuple[dict, Path]:
    """(the scenario document, its base folder) of the rig a recording ran: the scenario it carries
    (``mjrig.scenario`` in its file metadata) on the model it names (``mjrig.model_path``), its
    params at the values its rows start with, relative paths resolved where that scenario was.
    ConfigError (one line) for a recording that carries no rig (made before recordings kept it),
    or whose model is not there any more."""
    import tomllib

    import pyarrow.parquet as pq

    try:
        meta = {k.decode(): v.decode() for k, v in (pq.read_schema(path).metadata or {}).items()}
    except Exception as exc:  # noqa: BLE001 - not Parquet, damaged, unreadable: one line
        raise ConfigError(f"{path}: not a readable recording ({type(exc).__name__}: {exc})") from None
    text, model = meta.get("mjrig.scenario", ""), meta.get("mjrig.model_path", "")
    if not text.strip() or not model:
        raise ConfigError(f"{path}: carries no rig (recorded before recordings kept their scenario): give its scenario")
    model_path = Path(model)
    if not model_path.is_file():
        raise ConfigError(f"{path}: its model {model_path} is not there any more: give its scenario")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: the scenario it carries does not read: {exc}") from None
    base = model_path.parent  # where the scenario was: the model's path, less the scenario's relative one
    rel = Path(str(doc.get("model", "")))
    if str(rel) and not rel.is_absolute() and model_path.parts[-len(rel.parts) :] == rel.parts:
        base = Path(*model_path.parts[: -len(rel.parts)])
    doc["model"] = str(model_path)
    _params_as_recorded(path, doc)
    return doc, base


def scenario_of_recording(path: Path):
    """The Scenario of the rig a recording ran (``rig_of_recording``; ConfigError, one line)."""
    from mjrig.scenario.parse import scenario_from_doc

    doc, base = rig_of_recording(path)
    return scenario_from_doc(doc, base=base, source=path)


def _params_as_recorded(path: Path, doc: dict) -> None:
    """Set the params of ``doc`` to the values the recording started with (its ``Params/<name>:value``
    columns: a run with ``--set k=800`` carries the scenario's 200 in its text, 800 in its rows)."""
    import pyarrow.parquet as pq

    params = doc.get("params")
    if not isinstance(params, dict) or not params:
        return
    f = pq.ParquetFile(path)
    names = set(f.schema_arrow.names)
    wanted = [f"Params/{n}:value" for n in params if f"Params/{n}:value" in names]
    if not wanted or f.metadata.num_rows == 0:
        return
    first = f.read_row_group(0, columns=wanted).slice(0, 1).to_pylist()[0]
    for name, spec in params.items():
        value = first.get(f"Params/{name}:value")
        if value is None:
            continue
        if isinstance(spec, dict):
            spec["value"] = float(value)
        else:
            params[name] = float(value)


def load_target(target: str | os.PathLike, *, recording: bool = False):
    """The Scenario TARGET stands for (see ``resolve_target``); a bare model is a rig with no
    loads that records every signal group to ``runs/<model>.parquet`` under the current folder.
    ``recording=True``: a recording stands for the rig it ran (``scenario_of_recording``)."""
    from mjrig.scenario.parse import load_scenario, scenario_from_doc

    path = resolve_target(target, recording=recording)
    if path.suffix.lower() in RECORDING_SUFFIXES:
        return scenario_of_recording(path)
    if path.suffix.lower() != ".toml":
        doc = {"model": str(path.resolve()), "recording": {"path": str(Path.cwd() / "runs" / f"{path.stem}.parquet")}}
        return scenario_from_doc(doc, base=path.resolve().parent, source=path)
    sc = load_scenario(path)
    if is_bundled(path):
        for section, target_obj in (("recording", sc.recording), ("video", getattr(sc, "video", None))):
            raw = sc.doc.get(section, {}).get("path") if isinstance(sc.doc.get(section), dict) else None
            if target_obj is not None and isinstance(raw, str) and not Path(raw).expanduser().is_absolute():
                target_obj.path = Path.cwd() / raw
    return sc
