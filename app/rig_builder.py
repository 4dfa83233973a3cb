"""The one way a scenario becomes a running rig: compile, check every name, set the start state.

``mjrig run``, ``mjrig check`` and the app (open, reload, every rig edit) all build through
here, so what the app accepts is exactly what the headless runner runs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import mujoco

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.loads import Load
from mjrig.runtime.manager import RuntimeManager, load_model_file
from mjrig.runtime.signals import SignalManager
from mjrig.scenario import Scenario

__all__ = ["Rig", "build_rig", "rebuild_rig", "check_names", "reset_state"]

LoadErrorHook = Callable[[Load, BaseException], None]


@dataclass
class Rig:
    """A scenario made ready to step: its runtime manager, compiled model and data (resolved)."""

    scenario: Scenario
    runtime: RuntimeManager
    model: mujoco.MjModel
    data: mujoco.MjData


def reset_state(model: mujoco.MjModel, data: mujoco.MjData) -> None:
    """The state every run starts from (and Reset returns to): the model's own initial state."""
    mujoco.mj_resetData(model, data)
    mujoco.mj_forward(model, data)


def check_names(sc: Scenario) -> mujoco.MjModel:
    """Compile the model as written and check every name the scenario uses against it.

    Checking before the rig's helper tendons are compiled in reports an unknown site or body at
    its own field, not at the ``model`` line. Returns the plain model.
    """
    try:
        plain = load_model_file(sc.model)
    except ConfigError as exc:
        raise ConfigError(f"{sc.where('model')}: {exc}") from None
    sc.check_model(plain)
    return plain


def build_rig(sc: Scenario, *, monitors: Sequence[SignalManager] = (), on_load_error: LoadErrorHook | None = None,
              recorder: SignalManager | None = None, start_from: mujoco.MjData | None = None) -> Rig:
    """Compile ``sc``'s model with its rig, validate every name, and resolve it.

    ``monitors`` are file-less SignalManagers (live plots); ``recorder`` records to a file;
    ``start_from`` carries the state of a previous run of the same model over (a reload), else
    the run starts from :func:`reset_state`. ConfigError (one line) on any bad input.
    """
    check_names(sc)
    rm = sc.runtime(monitors=list(monitors), on_load_error=on_load_error, signal_manager=recorder)
    try:
        model, data = rm.load_model(sc.model)
    except ConfigError as exc:
        raise ConfigError(f"{sc.where('model')}: {exc}") from None
    if sc.timestep is not None:
        model.opt.timestep = sc.timestep
    sc.check_model(model)
    if start_from is not None and (model.nq, model.nv, model.na) == (start_from.qpos.size, start_from.qvel.size,
                                                                       start_from.act.size):
        data.qpos[:], data.qvel[:], data.act[:] = start_from.qpos, start_from.qvel, start_from.act
        data.time = start_from.time
        mujoco.mj_forward(model, data)
    else:
        reset_state(model, data)
    rm.resolve(model, data)
    return Rig(sc, rm, model, data)


def rebuild_rig(sc: Scenario, *, on: Rig, monitors: Sequence[SignalManager] = (),
                on_load_error: LoadErrorHook | None = None) -> Rig:
    """The rig of ``sc`` on ``on``'s model and data as they are now (an edit while running).

    Unchanged loads keep the compiled fast path and their initial distances; the recorder and
    video recorders move over from ``on``; loads switched off there stay off.
    """
    sc.check_model(on.model)
    rm = sc.runtime(monitors=list(monitors), on_load_error=on_load_error)
    rm.inherit_layout(on.runtime)
    rm.video_recorders = on.runtime.video_recorders
    keep_switched_off(on.runtime, rm)
    rm.resolve(on.model, on.data)
    rm.set_recorder(on.runtime.set_recorder(None))
    on.runtime.detach()
    return Rig(sc, rm, on.model, on.data)


def keep_switched_off(old: RuntimeManager, new: RuntimeManager) -> None:
    """Loads switched off in ``old`` (by the user or after an error) stay off in ``new``."""
    off = {ld.name for ld in old.loads if not ld.active}
    for ld in new.loads:
        if ld.name in off:
            ld.active = False
