"""The one way a scenario becomes a running rig: compile, check every name, set the start state.

``mjrig run``, ``mjrig check`` and the app (open, reload, every rig edit) all build through
here, so what the app accepts is exactly what the headless runner runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from mjrig.runtime.analysis.requirements import UnknownSignalError
from mjrig.runtime.drawing.visuals import ArrowScale
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.forces.loads import Load
from mjrig.runtime.manager import RuntimeManager, load_model_file
from mjrig.runtime.points import Geom, find_id
from mjrig.runtime.telemetry.signals import SignalManager
from mjrig.runtime.telemetry.snapshots import PhysicsState, load_snapshot, put_snapshot
from mjrig.scenario.parse import Scenario

__all__ = ["Rig", "build_rig", "rebuild_rig", "runtime_of", "check_names", "reset_state", "start_state"]

LoadErrorHook = Callable[[Load, BaseException], None]


@dataclass
class Rig:
    """A scenario made ready to step: its runtime manager, compiled model and data (resolved).

    ``initial`` is the state runs start from and Reset returns to when the scenario names one
    (``initial_key`` or ``initial_state``); None: the model's own initial state.
    """

    scenario: Scenario
    runtime: RuntimeManager
    model: mujoco.MjModel
    data: mujoco.MjData
    initial: PhysicsState | None = None

    def reset(self) -> None:
        """Back to the start state (the app's Reset; every headless run starts there)."""
        if self.initial is None:
            reset_state(self.model, self.data)
        else:
            self.runtime.restore(self.data, self.initial)
            # MuJoCo's own counters too, as mj_resetData clears them: a divergence in the next run
            # is told by them (a sweep trial after one that diverged would not see its own).
            self.data.warning.number[:] = 0


def reset_state(model: mujoco.MjModel, data: mujoco.MjData) -> None:
    """The state every run starts from (and Reset returns to): the model's own initial state."""
    mujoco.mj_resetData(model, data)
    mujoco.mj_forward(model, data)


def check_names(sc: Scenario) -> mujoco.MjModel:
    """Compile the model as written and check every name the scenario uses against it.

    Checking before the rig's helpers are compiled in reports an unknown site or body at
    its own field, not at the ``model`` line. Returns the plain model.
    """
    try:
        plain = load_model_file(sc.model)
    except ConfigError as exc:
        raise ConfigError(f"{sc.where('model')}: {exc}") from None
    sc.check_model(plain)
    return plain


def runtime_of(sc: Scenario, **options: Any) -> RuntimeManager:
    """A RuntimeManager over ``sc``'s loads, proximities, params, controls, tracers, bindings,
    requirements, metrics and frame signals (not yet resolved); ``options`` are RuntimeManager's
    other fields (``playback_speed`` defaults to as fast as possible, ``arrow_scale`` to the
    scenario's)."""
    options.setdefault("playback_speed", 0.0)
    options.setdefault("arrow_scale", ArrowScale(force=sc.arrow_scales[0], torque=sc.arrow_scales[1]))
    return RuntimeManager(
        loads=sc.loads,
        proximities=sc.proximities,
        params=list(sc.params.values()),
        controls=sc.controls,
        tracers=sc.tracers,
        bindings=sc.bindings,
        requirements=sc.requirements,
        metrics=sc.metrics,
        frame_signals=sc.signals,
        **options,
    )


def build_rig(
    sc: Scenario,
    *,
    monitors: Sequence[SignalManager] = (),
    on_load_error: LoadErrorHook | None = None,
    recorder: SignalManager | None = None,
    start_from: mujoco.MjData | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> Rig:
    """Compile ``sc``'s model with its rig (once), validate every name (once), and resolve it.

    ``monitors`` are file-less SignalManagers (live plots); ``recorder`` records to a file;
    ``start_from`` carries the state of a previous run of the same model over (a reload), else
    the run starts from :func:`start_state`. ``on_warning(text)`` receives one-line warnings (a
    control clamped to its ctrlrange). ConfigError (one line) on any bad input.
    """
    rm = runtime_of(
        sc, monitors=list(monitors), on_load_error=on_load_error, signal_manager=recorder, on_warning=on_warning
    )
    try:
        model, data = rm.load_model(sc.model, skip_unknown=True)
    except ConfigError as exc:
        raise ConfigError(f"{sc.where('model')}: {exc}") from None
    sc.check_model(model)  # an unknown name at its own field: its load got no helper above
    warn_unreachable(sc, on_warning)
    if sc.timestep is not None:
        model.opt.timestep = sc.timestep
    snap = _initial_snapshot(sc, model)
    carried = start_from is not None and (model.nq, model.nv, model.na) == (
        start_from.qpos.size,
        start_from.qvel.size,
        start_from.act.size,
    )
    if carried:
        assert start_from is not None  # carried: a state was given, of this model's size
        data.qpos[:], data.qvel[:], data.act[:] = start_from.qpos, start_from.qvel, start_from.act
        data.time = start_from.time
        mujoco.mj_forward(model, data)
    else:
        start_state(sc, model, data, snapshot=snap)
    resolve_at(sc, rm, model, data)  # initial distances are taken from the start state
    if snap is not None and not carried:
        rm.restore(data, snap)  # the rig's own part of the snapshot
        if sc.initial:
            sc.initial.apply(model, data)  # over the snapshot's joints again
    initial = snap
    if sc.initial_key is not None or (sc.initial and not carried):
        initial = rm.snapshot(data)  # the keyframe and [initial] together: where Reset returns
    return Rig(sc, rm, model, data, initial)


def warn_unreachable(sc: Scenario, on_warning: Callable[[str], None] | None) -> None:
    """Tell ``on_warning`` of settings that can never act: a negative proximity threshold between
    two points (a distance between points is never negative; only two geoms' clearance is, while
    they penetrate)."""
    if on_warning is None:
        return
    for i, p in enumerate(sc.proximities):
        if p.threshold is not None and p.threshold < 0 and not isinstance(p.a, Geom):
            on_warning(
                f"{sc.where('proximities', i, 'threshold')}: {p.threshold:g} m can never be reached: the "
                "distance between two points is never negative (a negative threshold fits two geoms, "
                "whose clearance is negative while they penetrate)"
            )


def resolve_at(sc: Scenario, rm: RuntimeManager, model: mujoco.MjModel, data: mujoco.MjData) -> None:
    """``rm.resolve``; a requirement's or metric's unknown signal is reported at its field in ``sc``."""
    try:
        rm.resolve(model, data)
    except UnknownSignalError as exc:
        i = next(i for i, r in enumerate(getattr(sc, exc.section)) if r.name == exc.requirement)
        raise ConfigError(f"{sc.where(exc.section, i, 'signal')}: {exc}") from None
    units = rm.signal_units() if sc.measured else {}
    for i, m in enumerate(sc.measured):  # its signals and initial state, once the rig has its columns
        m.initial.check(model, sc.where, at=("measured", i, "initial"))
        m.check(units, lambda *path, i=i: sc.where("measured", i, *path))


def _initial_snapshot(sc: Scenario, model: mujoco.MjModel) -> PhysicsState | None:
    """The scenario's ``initial_state`` read and checked against ``model`` (None without one)."""
    if sc.initial_state is None:
        return None
    try:
        return load_snapshot(sc.initial_state, model=model)
    except ConfigError as exc:
        raise ConfigError(f"{sc.where('simulation', 'initial_state')}: {exc}") from None


def start_state(
    sc: Scenario, model: mujoco.MjModel, data: mujoco.MjData, *, snapshot: PhysicsState | None = None
) -> None:
    """Put ``data`` in the scenario's start state: its keyframe ``initial_key``, the ``snapshot``
    of its ``initial_state``, or the model's own initial state; then ``[initial]``'s joint values."""
    reset_state(model, data)
    if sc.initial_key is not None:
        key = find_id(model, mujoco.mjtObj.mjOBJ_KEY, sc.initial_key, kind="keyframe", count=model.nkey)
        mujoco.mj_resetDataKeyframe(model, data, key)
        mujoco.mj_forward(model, data)
    elif snapshot is not None:
        put_snapshot(model, data, snapshot)
        mujoco.mj_forward(model, data)
    if sc.initial:
        sc.initial.apply(model, data)


def rebuild_rig(
    sc: Scenario,
    *,
    on: Rig,
    monitors: Sequence[SignalManager] = (),
    on_load_error: LoadErrorHook | None = None,
    on_warning: Callable[[str], None] | None = None,
    kept: Callable[[str], tuple[np.ndarray, np.ndarray]] | None = None,
) -> Rig:
    """The rig of ``sc`` on ``on``'s model and data as they are now (an edit while running).

    Unchanged loads keep the compiled fast path and their initial distances; the recorder and
    video recorders move over from ``on``; loads switched off there stay off. The metrics go on
    from every step ``on`` logged, and a metric's new signal from ``kept(signal)`` (times s,
    values: what the live plots keep of the run so far; ``MetricLog.seed``).
    """
    sc.check_model(on.model)
    rm = runtime_of(sc, monitors=list(monitors), on_load_error=on_load_error, on_warning=on_warning)
    rm.carried = (on.runtime.checks.metrics if on.runtime.checks else None, kept or rm.carried[1])
    rm.inherit_layout(on.runtime)
    for rec in on.runtime.video_recorders:
        rm.add_video(rec)
    keep_switched_off(on.runtime, rm)
    resolve_at(sc, rm, on.model, on.data)
    rm.set_recorder(on.runtime.set_recorder(None))
    on.runtime.detach()
    return Rig(sc, rm, on.model, on.data, on.initial)


def keep_switched_off(old: RuntimeManager, new: RuntimeManager) -> None:
    """Loads switched off in ``old`` (by the user or after an error) stay off in ``new``."""
    off = {ld.name for ld in old.loads if not ld.active}
    for ld in new.loads:
        if ld.name in off:
            ld.active = False
