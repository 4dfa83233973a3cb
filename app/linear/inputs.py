"""What a linearisation's inputs and outputs may be, and what a bare model gets by default.

An input is a param of the scenario (a load's or control's number, a model field) or an
actuator's control, ``Actuators/<name>:ctrl``, in the actuator's own unit (what its transmission
makes of it: N·m for a motor on a hinge with gear 1, rad for a position servo). A control input is
written into ``data.ctrl`` after the rig's own writes (a control bound to that actuator is
overridden while the rig is linearised). Where the target names no params (a bare model), the
inputs default to every actuator's control; the outputs to the ``[plots]`` signals, else the
model's sensors, else its hinge and slide joints' positions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import mujoco
import numpy as np

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.points import closest_names
from mjrig.runtime.values import NamedValue

__all__ = ["CTRL", "check_inputs", "input_values", "default_inputs", "default_outputs", "actuator_names", "used_params"]

CTRL = re.compile(r"Actuators/(?P<name>.+):ctrl")
"""An actuator's control as an input: ``Actuators/<name>:ctrl``."""


def actuator_names(model: mujoco.MjModel) -> list[str]:
    """The model's actuators' names, in MuJoCo's order (``actuator<i>`` for an unnamed one)."""
    return [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, i) or f"actuator{i}" for i in range(model.nu)]


def check_inputs(sc: Any, inputs: Sequence[str] | None, *, where: str) -> None:
    """ConfigError (one line, at ``where``) for an input that is neither a param of ``sc`` nor an
    actuator's control (the actuator itself is checked once the model is compiled)."""
    for name in inputs or ():
        if name in sc.params or CTRL.fullmatch(name):
            continue
        hint = closest_names(name, sorted(sc.params)) if sc.params else " (the target has none)"
        raise ConfigError(f"{where} '{name}': neither a param{hint} nor an actuator's control (Actuators/<name>:ctrl)")


def default_inputs(sc: Any, model: mujoco.MjModel) -> tuple[str, ...]:
    """The params a load or control of ``sc`` uses, else (a bare model) every actuator's control."""
    used = used_params(sc)
    return tuple(used) if used else tuple(f"Actuators/{n}:ctrl" for n in actuator_names(model))


def default_outputs(sc: Any, model: mujoco.MjModel, units: Mapping[str, str]) -> tuple[str, ...]:
    """The ``[plots]`` signals of ``sc``, else the model's sensors' columns, else its hinge and
    slide joints' positions (``units``: every column the rig has)."""
    if sc.plots.signals:
        return tuple(sc.plots.signals)
    sensors = tuple(c for c in units if c.startswith("Sensors/"))
    if sensors:
        return sensors
    joints = []
    for j in range(model.njnt):
        if int(model.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_SLIDE), int(mujoco.mjtJoint.mjJNT_HINGE)):
            name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j)
            if name and f"Joints/{name}:qpos" in units:
                joints.append(f"Joints/{name}:qpos")
    return tuple(joints)


def input_values(
    sc: Any,
    inputs: Sequence[str],
    writes: Callable[[], None],
    model: mujoco.MjModel,
    data: mujoco.MjData,
    *,
    units: Mapping[str, str],
    where: str,
    ctrl: np.ndarray | None = None,
) -> tuple[list[NamedValue], list[str], Callable[[], None]]:
    """The ``inputs`` as values the linearisation moves, their units, and what a step writes
    with them: the rig's ``writes``, then ``ctrl`` (trimmed controls, one per actuator) and each
    control input's value into ``data.ctrl``. ConfigError (one line, at ``where``) naming the
    actuators for an unknown one."""
    names = actuator_names(model)
    held: list[tuple[int, NamedValue]] = []
    values: list[NamedValue] = []
    unit_of: list[str] = []

    def write() -> None:
        writes()
        if ctrl is not None:
            data.ctrl[:] = ctrl
        for i, nv in held:
            data.ctrl[i] = nv.value

    write()  # the controls as the point has them: each control input starts there
    for name in inputs:
        if name in sc.params:
            values.append(sc.params[name])
            unit_of.append(sc.params[name].unit or "")
            continue
        m = CTRL.fullmatch(name)
        assert m is not None  # check_inputs let only these through
        actuator = m.group("name")
        if actuator not in names:
            listed = ", ".join(names) if names else "none"
            raise ConfigError(f"{where} '{name}': the model has no actuator '{actuator}' (its actuators: {listed})")
        i = names.index(actuator)
        nv = NamedValue(name, float(data.ctrl[i]), unit=units.get(name, ""))
        held.append((i, nv))
        values.append(nv)
        unit_of.append(units.get(name, ""))
    return values, unit_of, write


def used_params(sc: Any) -> list[str]:
    """The params a load or control of scenario ``sc`` names (``mjrig linearise``'s default
    inputs), in the order of ``[params]``."""
    named: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            named.add(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for section in ("loads", "controls"):
        walk(sc.doc.get(section, []))
    return [n for n in sc.params if n in named]
