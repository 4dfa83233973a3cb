"""Headless runs of a scenario: build the rig, step it as fast as possible, record, report.

``prepare`` applies the command line's overrides (``--set NAME=VALUE`` through ``set_params``)
and opens the recorders; ``run`` steps to the duration, or until a requirement's ``stop_on``
ends it, and decides the requirements at the end; ``write_report`` writes their results.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import mujoco
import numpy as np

from mjrig.recordings.recorder import open_recorder, outcome_metadata
from mjrig.runtime import mjwarnings
from mjrig.runtime.analysis.requirements import Requirement, report_entries
from mjrig.runtime.bounds import check_work, step_seconds
from mjrig.runtime.compiled.native_kernel import kernel
from mjrig.runtime.drawing.framing import rig_points
from mjrig.runtime.drawing.video import VideoRecorder
from mjrig.runtime.errors import ConfigError, OutputError
from mjrig.runtime.files.atomic_output import atomic_output
from mjrig.runtime.files.out_lock import Hold, hold
from mjrig.runtime.files.paths import (
    RECORDING_SUFFIXES,
    VIDEO_SUFFIXES,
    check_name,
    check_suffix,
    check_writable,
    fresh_path,
)
from mjrig.runtime.forces.engine import step_plain
from mjrig.runtime.manager import RuntimeManager
from mjrig.runtime.points import closest_names
from mjrig.runtime.telemetry.native_rows import RowTable
from mjrig.scenario.builder import Rig, build_rig
from mjrig.scenario.measured import MEASURED_KEY, measured_metadata
from mjrig.scenario.parse import Scenario, VideoSettings

__all__ = ["RunSetup", "prepare", "run", "set_params", "write_metrics", "write_report"]


@dataclass
class RunSetup:
    """A rig (``scenario.builder.Rig``: the scenario, its runtime, compiled model and data) made
    ready for one headless run: how long it runs (s) and where it records."""

    rig: Rig
    duration: float
    out: Path | None
    stopped_at: float | None = None
    """Simulated time (s) at which a requirement's ``stop_on`` ended the run, or None."""
    hold: Hold | None = None
    """This process's hold on ``out`` (no other process writes it meanwhile)."""

    @property
    def scenario(self) -> Scenario:
        return self.rig.scenario

    @property
    def runtime(self) -> RuntimeManager:
        return self.rig.runtime

    @property
    def model(self) -> mujoco.MjModel:
        return self.rig.model

    @property
    def data(self) -> mujoco.MjData:
        return self.rig.data


def set_params(
    sc: Scenario, values: Mapping[str, float], *, on_warning: Callable[[str], None] | None = None
) -> dict[str, float]:
    """Override the values of ``sc``'s params (``mjrig run --set``); returns the values set.

    As everywhere a param is set (sliders, sweeps), a value outside the param's [min, max] is
    clamped into it; ``on_warning(text)`` is told. ConfigError (one line, the closest names) for
    a param the scenario does not have.
    """
    done: dict[str, float] = {}
    for name, value in values.items():
        nv = sc.params.get(name)
        if nv is None:
            hint = closest_names(name, sorted(sc.params)) if sc.params else " (the scenario has no params)"
            raise ConfigError(f"--set {name}: unknown param '{name}'{hint}")
        nv.value = value
        if nv.value != value and on_warning is not None:
            lo = "-inf" if nv.min is None else f"{nv.min:g}"
            hi = "inf" if nv.max is None else f"{nv.max:g}"
            on_warning(f"--set {name}={value:g} is outside the param's range [{lo}, {hi}]: clamped to {nv.value:g}")
        done[name] = nv.value
    return done


def _plain(rm: RuntimeManager) -> bool:
    """Whether the next steps need nothing but MuJoCo (``StepPlan.between_steps`` is empty)."""
    plan = rm.plan
    return plan is not None and not plan.between_steps()


ROWS_IN_BLOCKS_FROM = 20_000
"""Steps from which a recorded run has its rows written by the compiled callback (it pays for
compiling it, about a second, after some 20,000 steps of Python sampling)."""


def _row_table(rm: RuntimeManager) -> RowTable | None:
    """A recorder table when the only work between steps is one recording (rows written by
    MuJoCo's control callback in blocks of steps: ``native_rows``)."""
    plan = rm.plan
    if plan is None or len(plan.samplers) != 1 or rm.engine is None or plan.between_steps() != ("recording",):
        return None
    return RowTable.make(plan.samplers[0], rm.engine.model, rm.engine.data)


def write_metrics(path: Path, rm: RuntimeManager) -> None:
    """The metrics over the run as JSON (``mjrig run --metrics``): ``{name: {value, unit, signal,
    kind}}``, NaN as null."""
    with atomic_output(path, what="--metrics") as tmp:
        tmp.write_text(json.dumps(rm.metric_entries(), indent=2, allow_nan=False) + "\n", encoding="utf-8")


def write_report(path: Path, requirements: Sequence[Requirement]) -> None:
    """The requirements' results as JSON: a list with one entry per requirement (``name``,
    ``signal``, ``pass``, ``value``, ``limit``, ``time`` of the first violation or null)."""
    with atomic_output(path, what="--report") as tmp:
        tmp.write_text(json.dumps(report_entries(requirements), indent=2, allow_nan=False) + "\n", encoding="utf-8")


def prepare(
    sc: Scenario,
    *,
    out: Path | None = None,
    duration: float | None = None,
    video: Path | None = None,
    record: bool = True,
    params: Mapping[str, float] | None = None,
    report: Path | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> RunSetup:
    """Compile the model with the rig, apply overrides, validate every name, open the recorders.

    ``out``/``duration``/``video`` override the scenario's and are replaced when they exist; the
    scenario's own paths never are (the next free name, ``NAME-2.parquet``..., is used, and
    ``RunSetup.out`` / the video recorder's ``path`` name the file really written); ``params`` override param values
    (``set_params``; the recording's metadata keeps them as ``mjrig.set``); ``report`` is only
    checked to be writable; ``record=False`` (``mjrig check``) validates everything but creates
    nothing; ``on_warning(text)`` gets one-line warnings.
    """
    mjwarnings.install()  # before the model compiles: no MUJOCO_LOG.TXT in the working folder
    if duration is not None and not (math.isfinite(duration) and duration > 0):
        raise ConfigError(f"--duration must be a positive number of seconds, got {duration:g}")
    run_end = duration if duration is not None else sc.duration
    for i, metric in enumerate(sc.metrics):
        if metric.start >= run_end:
            raise ConfigError(
                f"{sc.where('metrics', i, 'start')}: metric '{metric.name}' starts at {metric.start:g} s, "
                f"not before the run's end at {run_end:g} s: it would see no step"
            )
    out_path = out if out is not None else sc.recording.path
    where = "--out" if out is not None else sc.where("recording", "path")
    if out_path is not None:
        check_suffix(out_path, RECORDING_SUFFIXES, where=where)
        if record:  # a command that does not record (check, modes, bode) never asks the folder
            check_writable(out_path, where)
        else:
            check_name(out_path, where)
    if report is not None:
        check_writable(report, "--report", create=record)
    overrides = set_params(sc, params or {}, on_warning=on_warning)
    out_hold = None
    if out_path is not None and record:  # a path the command line did not name is never replaced
        out_hold = hold(out_path, what=where, fresh=out is None)
        out_path = out_hold.path
    try:
        recorder = None
        if record and out_path is not None:  # its file is only opened at the first flush
            extra = {"mjrig.set": json.dumps(overrides)} if overrides else {}
            if sc.measured:
                extra[MEASURED_KEY] = measured_metadata(sc.measured)
            recorder = open_recorder(
                out_path,
                model_path=sc.model,
                scenario_text=sc.toml(),
                rate=sc.recording.rate,
                groups=sc.recording.signals,
                extra_metadata=extra or None,
            )
        rig = build_rig(sc, recorder=recorder, on_warning=on_warning)
        check_work(  # a duration that cannot finish is refused with its estimate, before any step
            what="steps",
            count=round(run_end / rig.model.opt.timestep),
            each_s=step_seconds(rig.model, rig.data),
            where="--duration" if duration is not None else sc.where("simulation", "duration"),
        )
        video_rec = _video_recorder(sc, video, rig.model, create=record)
    except BaseException:
        if out_hold is not None:
            out_hold.release()
        raise
    if record and video_rec is not None:
        video_rec.frame_points = partial(_rig_points_of, rig.runtime)  # no camera named: frame the rig too
        rig.runtime.add_video(video_rec)
    return RunSetup(
        rig,
        duration if duration is not None else sc.duration,
        out_path if record else None,
        hold=out_hold,
    )


def _check_outputs(rm: RuntimeManager, t: float) -> None:
    """OutputError once the recording could not be written (disk full...): stepping stops; the
    rows written before stay in the file, which closing the recorder finishes."""
    sm = rm.signal_manager
    if sm is not None and sm.error:
        raise OutputError(f"the recording stopped at t = {t:.6g} s: {sm.error}")


def _rig_points_of(rm: RuntimeManager, model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """The points ``rm``'s loads, proximities and tracers name (world, m, (n, 3))."""
    return rig_points(model, data, loads=rm.loads, proximities=rm.proximities, tracers=rm.tracers)


def _video_recorder(sc: Scenario, video: Path | None, model: mujoco.MjModel, *, create: bool) -> VideoRecorder | None:
    """The scenario's [video] (``video`` overrides its path), checked against the model."""
    if video is None and sc.video is None:
        return None
    settings = sc.video or VideoSettings(path=video)  # type: ignore[arg-type]
    path = video if video is not None else settings.path
    where = "--video" if video is not None else sc.where("video", "path")
    check_suffix(path, VIDEO_SUFFIXES, where=where)
    if create:  # a command that does not record (check, modes, bode) never asks the folder
        check_writable(path, where)
    else:
        check_name(path, where)
    if video is None and create:  # the scenario's path: the next free name, never a replacement
        path = fresh_path(path)
    rec = VideoRecorder(
        path=path,
        camera_name=settings.camera,
        fps=settings.fps,
        width=settings.width,
        height=settings.height,
        show_loads=settings.show_loads,
        show_proximities=settings.show_proximities,
        show_contacts=settings.show_contacts,
        show_net_force=settings.show_net_force,
    )
    try:
        if create:
            rec.check(model)
        else:
            probe = VideoRecorder(
                path=Path(tempfile.gettempdir()) / ".mjrig-check.mp4",
                camera_name=settings.camera,
                width=settings.width,
                height=settings.height,
            )
            probe.check(model)
    except ConfigError as exc:
        field = "video" if video is None else "--video"
        raise ConfigError(f"{sc.where('video') if video is None else field}: {exc}") from None
    return rec


def run(setup: RunSetup, *, progress: Callable[[float], None] | None = None) -> int:
    """Step until the duration, or until a requirement's ``stop_on`` ends the run (then
    ``setup.stopped_at`` says when); returns the number of steps. The requirements are decided
    at the end (``RuntimeManager.finish_requirements``). DivergenceError propagates after the
    recording is closed (every row before it kept). ``progress(seconds)`` is called now and then
    with the simulated time done (s, up to ``setup.duration``)."""
    m, d, rm = setup.model, setup.data, setup.runtime
    n_steps = max(1, int(round(setup.duration / m.opt.timestep)))
    report_every = min(max(1, n_steps // 200), 1000)  # a huge duration still reports (and can be stopped)
    checks = bool(rm.requirements)
    mjwarnings.install()  # never MuJoCo's default: it writes MUJOCO_LOG.TXT into the working folder
    done = n_steps
    rows: RowTable | None = None
    blocks_of_rows = n_steps >= ROWS_IN_BLOCKS_FROM and rm.signal_manager is not None
    if blocks_of_rows:
        kernel()  # compiled (about a second, once) before the first row's clock starts
    with rm:
        i = alone = 0  # steps up to ``alone`` go one by one (a block found a divergence there)
        while i < n_steps:
            if i >= alone and i:  # a block of steps in one call into MuJoCo, recording in it or not
                block = min(report_every - i % report_every, n_steps - i)
                if i == 1 and blocks_of_rows:  # the rig resolved and prepared by its first step
                    rows = _row_table(rm)
                eng = rm.engine
                if eng is None:  # the first step resolved the rig
                    raise RuntimeError("the rig has no load engine after its first step")
                if _plain(rm):
                    went: int | None = block if step_plain(eng, block) else 0
                else:  # the recording's rows written by the control callback, or None: Python
                    went = rows.steps(partial(step_plain, eng), block) if rows is not None else None
                if went:
                    i += went
                    _check_outputs(rm, d.time)
                    if progress is not None and i % report_every == 0 and i < n_steps:
                        progress(setup.duration * i / n_steps)
                    continue
                if went == 0:
                    alone = i + block  # step by step to the divergence, which raises where it happened
            rm.step(m, d)
            if i % report_every == 0:
                _check_outputs(rm, d.time)
                if progress is not None:
                    progress(setup.duration * i / n_steps)
            i += 1
            if checks and rm.stop_requested:
                done, setup.stopped_at = i, d.time
                break
        if rows is not None:
            rows.release()
        if progress is not None:
            progress(setup.duration * done / n_steps)
        rm.finish_requirements()
        if rm.signal_manager is not None:  # the recording's metadata holds the metrics and verdicts too
            rm.signal_manager.add_metadata(outcome_metadata(rm))
    return done
