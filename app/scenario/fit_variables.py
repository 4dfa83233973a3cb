"""What a fit estimates besides ``[params]``: an initial joint position and a bench's clock offset.

```toml
[fit]
params = { k = { low = 50.0, high = 2000.0 }, "initial.slide" = { low = -0.03, high = 0.03 },
           "offset.bench" = { low = -0.05, high = 0.05 } }
```

``initial.<joint>`` is a slide's (m) or hinge's (rad) position at the start of every fitted
experiment, as ``[initial] qpos`` (or the entry's own ``[measured.initial]``) would set it: written
after the start state, before the rig is resolved, so a spring's length at rest taken from the
start is taken from it. Validation entries keep their own start. ``offset.<entry>`` is the
``offset`` (s) of a fitted ``[[measured]]`` entry: its samples are scored at their time as read
plus the offset. A trial's values may name both kinds beside params (``apply``). GUI-free.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import mujoco

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.points import closest_names

__all__ = [
    "INITIAL",
    "OFFSET",
    "Variable",
    "is_variable",
    "check_offset",
    "check_joints",
    "start_value",
    "unit",
    "apply",
    "offered",
]

INITIAL = "initial."
OFFSET = "offset."
_SCALAR = (int(mujoco.mjtJoint.mjJNT_SLIDE), int(mujoco.mjtJoint.mjJNT_HINGE))
OFFSET_SPAN = 0.05
"""s either side of an entry's offset that the app offers to search by default."""


@dataclass(frozen=True)
class Variable:
    """A fit variable a rig offers: its ``value`` before the fit, ``unit`` and default bounds."""

    name: str
    value: float
    unit: str
    low: float
    high: float


def is_variable(name: str) -> bool:
    """Whether ``name`` is an ``initial.<joint>`` or ``offset.<entry>`` fit variable."""
    return name.startswith((INITIAL, OFFSET))


def check_offset(name: str, measured: list[Any]) -> str | None:
    """What is wrong with ``offset.<entry>`` ``name`` against the ``[[measured]]`` entries (None:
    nothing): the entry must exist and be fitted (a validation entry is not in the residual)."""
    entry = name[len(OFFSET) :]
    by_name = {m.name: m for m in measured}
    if entry not in by_name:
        return f"no [[measured]] entry '{entry}'{closest_names(entry, sorted(by_name))}"
    if by_name[entry].role != "fit":
        return f"'{entry}' is a validation entry: it is not fitted, so its offset cannot be estimated"
    return None


def check_joints(names: list[str], model: mujoco.MjModel, where: Callable[[str], str]) -> None:
    """ConfigError (one line at ``where(name)``) for an ``initial.<joint>`` whose joint the model
    lacks (the closest names) or is not a slide or hinge."""
    joints = [model.joint(j).name for j in range(model.njnt)]
    for name in names:
        if not name.startswith(INITIAL):
            continue
        joint = name[len(INITIAL) :]
        if joint not in joints:
            raise ConfigError(f"{where(name)}: the model has no joint '{joint}'{closest_names(joint, joints)}")
        if int(model.joint(joint).type[0]) not in _SCALAR:
            raise ConfigError(
                f"{where(name)}: joint '{joint}' is not a slide or hinge: only one-value joints' positions are fitted"
            )


def start_value(name: str, sc: Any, model: mujoco.MjModel, data: mujoco.MjData) -> float:
    """The variable's value before the fit: the first fitted entry's own initial position or
    offset, else the joint's position in ``data`` (the scenario's start state)."""
    fitted = [m for m in sc.measured if m.role == "fit"]
    if name.startswith(OFFSET):
        return float(next(m.offset for m in sc.measured if m.name == name[len(OFFSET) :]))
    joint = name[len(INITIAL) :]
    own = next((m.initial.qpos[joint] for m in fitted if joint in m.initial.qpos), None)
    if own is not None:
        return float(own[0])
    return float(data.qpos[model.jnt_qposadr[model.joint(joint).id]])


def unit(name: str, model: mujoco.MjModel) -> str:
    """The variable's unit: s for an offset, m for a slide's position, rad for a hinge's."""
    if name.startswith(OFFSET):
        return "s"
    return "m" if int(model.joint(name[len(INITIAL) :]).type[0]) == int(mujoco.mjtJoint.mjJNT_SLIDE) else "rad"


def apply(
    values: Mapping[str, float], sc: Any, *, data: tuple[mujoco.MjModel, mujoco.MjData] | None
) -> dict[str, float]:
    """Set the fit variables of a trial's ``values``: each ``offset.<entry>`` moves the samples of
    the metrics against that entry (``Metric.shift``); each ``initial.<joint>`` is written into
    ``data`` (a model and its data at the start state; None: leave the state alone). Returns the
    plain params among ``values``."""
    params: dict[str, float] = {}
    moved = False
    for name, v in values.items():
        if name.startswith(OFFSET):
            entry = name[len(OFFSET) :]
            read = next(m.offset for m in sc.measured if m.name == entry)
            for metric in sc.metrics:
                if metric.against == entry:
                    metric.shift = float(v) - float(read)
        elif name.startswith(INITIAL):
            if data is not None:
                model, d = data
                d.qpos[model.jnt_qposadr[model.joint(name[len(INITIAL) :]).id]] = float(v)
                moved = True
        else:
            params[name] = v
    if moved and data is not None:
        mujoco.mj_forward(*data)
    return params


def offered(sc: Any, model: mujoco.MjModel, data: mujoco.MjData) -> list[Variable]:
    """The fit variables worth offering for scenario ``sc`` (``data`` at its start state): the
    start position of each slide or hinge that ``[initial]``, a fitted entry's own start or a
    measured ``Joints/<joint>:...`` signal names, and each fitted entry's offset; default bounds
    the value ± its size (at least 10 mm or 0.1 rad) and the offset ± ``OFFSET_SPAN``."""
    fitted = [m for m in sc.measured if m.role == "fit"]
    if not fitted:
        return []
    joints = dict.fromkeys(
        [*sc.initial.qpos, *(j for m in fitted for j in m.initial.qpos)]
        + [s.split("/", 1)[1].split(":", 1)[0] for m in fitted for s in m.signals if s.startswith("Joints/")]
    )
    out = []
    for joint in joints:
        j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint)
        if j < 0 or int(model.jnt_type[j]) not in _SCALAR:
            continue
        name = f"{INITIAL}{joint}"
        v = start_value(name, sc, model, data)
        span = max(abs(v), 0.01 if unit(name, model) == "m" else 0.1)
        out.append(Variable(name, v, unit(name, model), v - span, v + span))
    for m in fitted:
        out.append(Variable(f"{OFFSET}{m.name}", m.offset, "s", m.offset - OFFSET_SPAN, m.offset + OFFSET_SPAN))
    return out
