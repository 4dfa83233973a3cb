"""The rig as a scenario document: what the user opened, every edit made since, where it is saved.

Held as the tables a scenario file has, so each edit is validated by the scenario code and
"Save scenario" writes exactly what ``mjrig run`` reads back. Edits return a new document; the
caller builds the rig from it and only then adopts it (a refused edit changes nothing).

Threading: simulation thread only.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from mjrig.runtime.errors import ConfigError
from mjrig.scenario.kinds import REGISTRY
from mjrig.scenario.parse import Scenario, load_scenario, scenario_from_doc

__all__ = ["RigDocument", "read_document"]


def read_document(path: Path) -> tuple[dict[str, Any], float | None]:
    """The rig document of file ``path`` and the speed it asks for: a .toml scenario's as read
    (checked) with its speed; an .xml/.urdf/.mjb model's is the bare model (no speed). ConfigError
    (one line) for a missing model or another kind of file."""
    suffix = path.suffix.lower()
    if suffix == ".toml":
        sc = load_scenario(path)
        return copy.deepcopy(sc.doc), sc.speed
    if suffix in (".xml", ".urdf", ".mjb"):
        if not path.is_file():
            raise ConfigError(f"{path}: model file not found")
        return {"model": str(path)}, None
    raise ConfigError(f"{path}: not a model or scenario (expected .xml, .urdf, .mjb or .toml)")


def _section(key: str) -> tuple[str, str]:
    """(noun, unique field) of a scenario section, from the one registry."""
    sec = REGISTRY.find(key)
    return (sec.noun, sec.name_key) if sec is not None else (key, "name")


class RigDocument:
    """A scenario document with its base folder (relative paths), source file and saved state."""

    def __init__(self) -> None:
        self.doc: dict[str, Any] = {}
        self.base = Path.cwd()
        self.source: Path | None = None  # the file opened (xml/mjb/toml) or saved to
        self.model_path: Path | None = None
        self.dirty = False  # edited since opened or saved

    def scenario(self, doc: dict[str, Any] | None = None) -> Scenario:
        """``doc`` (default: the current one) validated as a scenario (ConfigError if not)."""
        return scenario_from_doc(self.doc if doc is None else doc, base=self.base, source=self.source)

    def opened(self, doc: dict[str, Any], *, base: Path, source: Path | None, model_path: Path, fresh: bool) -> None:
        """``doc`` was built from ``source`` (``fresh``: a new file, no unsaved edits; else a reload)."""
        self.doc, self.base, self.source, self.model_path = doc, base, source, model_path
        if fresh:
            self.dirty = False

    def edited(self, doc: dict[str, Any]) -> None:
        """``doc`` (an edit of the rig) was built: it is the rig now, not yet saved."""
        self.doc, self.dirty = doc, True

    def saved(self, path: Path) -> None:
        """The rig now lives in ``path`` (Recent, reload)."""
        self.source, self.dirty = path, False

    # --- edits: each returns the new document ----------------------------------------------------
    def with_item(
        self, key: str, spec: dict[str, Any], *, replace: bool, base: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """``doc`` with ``spec`` added to the ``key`` list ("loads", "proximities", "controls",
        "tracers"), or replacing the entry of the same name (a control's actuator) when ``replace``.
        ``base``: edit that document (another edit's result) instead of the current one."""
        doc = copy.deepcopy(self.doc if base is None else base)
        items = doc.setdefault(key, [])
        noun, name_key = _section(key)
        name = spec.get(name_key)
        clash = [i for i, it in enumerate(items) if it.get(name_key) == name]
        if clash and not replace:
            what = "a control for" if name_key == "actuator" else f"a {noun} named"
            raise ConfigError(f"{what} '{name}' already exists")
        if clash:
            items[clash[0]] = dict(spec)
        else:
            items.append(dict(spec))
        return doc

    def without_item(self, key: str, name: str) -> dict[str, Any]:
        """``doc`` without the ``key`` entry called ``name`` (ConfigError if there is none)."""
        doc = copy.deepcopy(self.doc)
        items = doc.get(key, [])
        noun, name_key = _section(key)
        doc[key] = [it for it in items if it.get(name_key) != name]
        if len(doc[key]) == len(items):
            raise ConfigError(f"no {noun} {'for' if name_key == 'actuator' else 'named'} '{name}'")
        return doc

    def with_param(
        self, name: str, *, value: float, min: float | None = None, max: float | None = None, unit: str = ""
    ) -> dict[str, Any]:
        """``doc`` with a param table ``name`` (value, optional bounds and unit); a param bound to a
        model field keeps its binding (``model``)."""
        doc = copy.deepcopy(self.doc)
        old = doc.get("params", {}).get(name)
        spec: dict[str, Any] = {"value": float(value)}
        if isinstance(old, dict) and "model" in old:
            spec["model"] = old["model"]
        if min is not None:
            spec["min"] = float(min)
        if max is not None:
            spec["max"] = float(max)
        if unit:
            spec["unit"] = unit
        doc.setdefault("params", {})[name] = spec
        return doc

    def set_param_value(self, name: str, value: float) -> None:
        """Write a param's new value into the document (its slider moved): an unsaved change."""
        params = self.doc.setdefault("params", {})
        if isinstance(params.get(name), dict):
            params[name]["value"] = value
        else:
            params[name] = value
        self.dirty = True

    def specs(self, key: str) -> dict[str, dict[str, Any]]:
        """The ``key`` list's entries by name (a control's: by actuator)."""
        name_key = _section(key)[1]
        return {s.get(name_key): s for s in self.doc.get(key, [])}

    # --- where outputs named in the rig go -------------------------------------------------------
    def bundled(self) -> bool:
        """Whether the rig is one of the bundled ones (its outputs go to the current folder)."""
        from mjrig.scenario.bundled import MODELS_DIR

        base = Path(self.base).resolve()
        return base == MODELS_DIR or MODELS_DIR in base.parents

    def resolve_path(self, path: str | Path) -> Path:
        """A path written in the rig: relative to the scenario file, except for a bundled rig,
        whose outputs go to the current folder (never into the installed package)."""
        p = Path(path).expanduser()
        if p.is_absolute():
            return p
        return (Path.cwd() if self.bundled() else Path(self.base)) / p

    def recording_plan(self) -> dict[str, Any]:
        """What the rig records, as ``mjrig run`` would: its [recording] ``path`` as it will be
        written (absolute; without one ``runs/<model>.parquet`` in the current folder), ``rate``
        (samples per simulated second, None: every step) and ``signals`` (groups, None: all)."""
        rec = self.doc.get("recording", {})
        if isinstance(rec.get("path"), str):
            path = self.resolve_path(rec["path"])
        else:
            path = Path.cwd() / "runs" / f"{self.model_path.stem if self.model_path else 'recording'}.parquet"
        signals = rec.get("signals")
        return {"path": str(path), "rate": rec.get("rate"), "signals": list(signals) if signals is not None else None}
