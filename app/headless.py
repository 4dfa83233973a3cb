"""Headless runs of a scenario: build the rig, step it as fast as possible, record, report."""
from __future__ import annotations

import datetime as _dt
import hashlib
import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import mujoco

import mjrig
from mjrig.runtime import mjwarnings
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.manager import RuntimeManager, load_model_file
from mjrig.runtime.signals import SignalManager
from mjrig.runtime.video import VideoRecorder
from mjrig.scenario import Scenario, VideoSettings

__all__ = ["RunSetup", "prepare", "run", "recording_metadata", "check_writable"]


def recording_metadata(model_path: Path, scenario_text: str) -> dict[str, str]:
    """The Parquet key-value metadata the contract names (model path and SHA-256, scenario, versions)."""
    digest = hashlib.sha256(model_path.read_bytes()).hexdigest() if model_path.is_file() else ""
    return {
        "mjrig.model_path": str(model_path),
        "mjrig.model_sha256": digest,
        "mjrig.scenario": scenario_text,
        "mjrig.mujoco_version": mujoco.__version__,
        "mjrig.version": mjrig.__version__,
        "mjrig.start_time": _dt.datetime.now(_dt.timezone.utc).isoformat(),
    }


def check_writable(path: Path, what: str, *, create: bool = True) -> None:
    """ConfigError naming ``what`` unless a file can be written at ``path``.

    ``create`` makes the missing folders; without it (``mjrig check``) nothing is touched and
    the nearest existing ancestor must be a writable folder.
    """
    try:
        _check_writable(path, what, create=create)
    except OSError as exc:  # e.g. a name too long for the file system
        raise ConfigError(f"{what}: cannot write {path}: {exc.strerror or exc}") from None


def _check_writable(path: Path, what: str, *, create: bool) -> None:
    parent = path.parent
    if path.is_dir():
        raise ConfigError(f"{what}: {path} is a folder, not a file")
    if create:
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"{what}: cannot create folder {parent}: {exc.strerror or exc}") from None
    existing = parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(f"{what}: {existing} is a file, so no folder can be made under it")
    if not os.access(existing, os.W_OK):
        raise ConfigError(f"{what}: folder {existing} is not writable")
    if not create:  # probe with a folder that is removed at once (permissions alone can lie)
        try:
            os.rmdir(tempfile.mkdtemp(prefix=".mjrig-check-", dir=existing))
        except OSError as exc:
            raise ConfigError(f"{what}: cannot create folder {parent}: {exc.strerror or exc}") from None


@dataclass
class RunSetup:
    """A scenario made ready to step: the runtime, the compiled model and its data."""

    scenario: Scenario
    runtime: RuntimeManager
    model: mujoco.MjModel
    data: mujoco.MjData
    duration: float
    out: Path | None


def prepare(sc: Scenario, *, out: Path | None = None, duration: float | None = None,
            video: Path | None = None, record: bool = True) -> RunSetup:
    """Compile the model with the rig, apply overrides, validate every name, open the recorders.

    ``out``/``duration``/``video`` override the scenario's; ``record=False`` (``mjrig check``)
    validates everything but creates nothing.
    """
    mjwarnings.install()  # before the model compiles: no MUJOCO_LOG.TXT in the working folder
    if duration is not None and not (math.isfinite(duration) and duration > 0):
        raise ConfigError(f"--duration must be a positive number of seconds, got {duration:g}")
    out_path = out if out is not None else sc.recording.path
    where = "--out" if out is not None else sc.where("recording", "path")
    if out_path is not None:
        if out_path.suffix.lower() != ".parquet":
            raise ConfigError(f"{where}: must end in .parquet, got '{out_path.name}'")
        check_writable(out_path, where, create=record)
    rm = sc.runtime()
    try:
        plain = load_model_file(sc.model)
    except ConfigError as exc:
        raise ConfigError(f"{sc.where('model')}: {exc}") from None
    # Check names on the model as written first: compiling the rig's helper tendons would
    # otherwise report a spring's unknown site/body at the `model` line, not at its own field.
    sc.check_model(plain)
    try:
        model, data = rm.load_model(sc.model)
    except ConfigError as exc:
        raise ConfigError(f"{sc.where('model')}: {exc}") from None
    if sc.timestep is not None:
        model.opt.timestep = sc.timestep
    sc.check_model(model)
    recorder = _video_recorder(sc, video, model, create=record)
    if record and recorder is not None:
        rm.video_recorders.append(recorder)
    if record and out_path is not None:
        rm.signal_manager = SignalManager(out_path, rate=sc.recording.rate, groups=sc.recording.signals,
                                          metadata=recording_metadata(sc.model, sc.text))
    rm.resolve(model, data)
    return RunSetup(sc, rm, model, data, duration if duration is not None else sc.duration,
                    out_path if record else None)


def _video_recorder(sc: Scenario, video: Path | None, model: mujoco.MjModel, *,
                    create: bool) -> VideoRecorder | None:
    """The scenario's [video] (``video`` overrides its path), checked against the model."""
    if video is None and sc.video is None:
        return None
    settings = sc.video or VideoSettings(path=video)  # type: ignore[arg-type]
    path = video if video is not None else settings.path
    where = "--video" if video is not None else sc.where("video", "path")
    if path.suffix.lower() not in (".mp4", ".gif"):
        raise ConfigError(f"{where}: must end in .mp4 or .gif, got '{path.name}'")
    check_writable(path, where, create=create)
    rec = VideoRecorder(path=path, camera_name=settings.camera, fps=settings.fps, width=settings.width,
                        height=settings.height, show_loads=settings.show_loads,
                        show_proximities=settings.show_proximities, show_contacts=settings.show_contacts,
                        show_net_force=settings.show_net_force)
    try:
        if create:
            rec.check(model)
        else:
            probe = VideoRecorder(path=path.parent / ".mjrig-check.mp4", camera_name=settings.camera,
                                  width=settings.width, height=settings.height)
            probe.check(model)
    except ConfigError as exc:
        field = "video" if video is None else "--video"
        raise ConfigError(f"{sc.where('video') if video is None else field}: {exc}") from None
    return rec


def run(setup: RunSetup, *, progress: Callable[[float], None] | None = None) -> int:
    """Step until the duration; returns the number of steps. DivergenceError propagates after the
    recording is closed (every row before it kept). ``progress(seconds)`` is called now and then
    with the simulated time done (s, up to ``setup.duration``)."""
    m, d, rm = setup.model, setup.data, setup.runtime
    n_steps = max(1, int(round(setup.duration / m.opt.timestep)))
    report_every = max(1, n_steps // 200)
    mjwarnings.install()  # never MuJoCo's default: it writes MUJOCO_LOG.TXT into the working folder
    with rm:
        for i in range(n_steps):
            rm.step(m, d)
            if progress is not None and i % report_every == 0:
                progress(setup.duration * i / n_steps)
        if progress is not None:
            progress(setup.duration)
    return n_steps
