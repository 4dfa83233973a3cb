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
from typing import Any

import mujoco

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.points import closest_names

__all__ = ["INITIAL", "OFFSET", "is_variable", "check_offset", "check_joints", "start_value", "unit", "apply"]

INITIAL = "initial."
OFFSET = "offset."
_SCALAR = (int(mujoco.mjtJoint.mjJNT_SLIDE), int(mujoco.mjtJoint.mjJNT_HINGE))


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
