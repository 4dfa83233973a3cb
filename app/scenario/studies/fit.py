"""The ``[fit]`` section: which params ``mjrig fit`` estimates from the ``[[measured]]`` data.

```toml
[fit]
params = { k = { low = 50.0, high = 2000.0 }, c = { low = 0.01, high = 50.0, log = true } }
signals = ["Joints/slide:qpos"]          # optional: the measured signals in the residual (default all)
weights = { "Joints/slide:qpos" = 1.0 }  # optional; default 1 / the measured signal's std
start = 0.0                              # optional window of each experiment, s
end = 4.0
starts = 1                               # optional: more starts (spread over the bounds) when > 1
```

``log = true`` fits the param on a log scale (its steps and bounds in log space).

Besides ``[params]``, the fit variables (``"initial.slide" = { low = 0.005, high = 0.04 }``):
``initial.<joint>`` is a slide's (m) or hinge's (rad) position at the start of every fitted
experiment, as ``[initial] qpos`` (or the entry's own ``[measured.initial]``) would set it: written
after the start state, before the rig is resolved, so a spring's length at rest taken from the
start is taken from it. A validation entry starts there too unless it starts that joint itself.
``offset.<entry>`` is the ``offset`` (s) of a fitted ``[[measured]]`` entry: its samples are
scored at their time as read plus the offset. A trial's values may name both kinds beside params
(``apply_variables``). GUI-free.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import mujoco

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.points import closest_names
from mjrig.scenario.fields import FieldReader
from mjrig.scenario.studies.optimize import SearchRange, search_range, search_ranges

__all__ = [
    "FitSpec",
    "parse_fit",
    "INITIAL",
    "OFFSET",
    "Variable",
    "is_variable",
    "check_offset",
    "check_joints",
    "start_value",
    "variable_unit",
    "apply_variables",
    "offered_variables",
]

_KEYS = {"params", "signals", "weights", "start", "end", "starts"}


@dataclass
class FitSpec:
    """A parsed ``[fit]``: the estimated ``params`` with their bounds, the residual's
    ``signals`` (None: every measured one) and ``weights`` (by signal; missing: 1/std), the
    window ``start``..``end`` (s) of each experiment, and how many ``starts``."""

    params: dict[str, SearchRange] = field(default_factory=dict)
    signals: list[str] | None = None
    weights: dict[str, float] = field(default_factory=dict)
    start: float = 0.0
    end: float | None = None
    starts: int = 1


def parse_fit(spec: Any, reader: FieldReader, params: Mapping[str, Any], measured: list[Any]) -> FitSpec:
    """Read ``[fit]`` with ``reader`` (FILE:LINE errors); ``params`` by name, ``measured`` entries."""
    path = ("fit",)
    table = reader.keys(spec, _KEYS, path)
    out = FitSpec()
    if not measured:
        raise reader.fail(path, "[fit] needs [[measured]] data to fit to")
    entries = table.get("params", {})
    if not isinstance(entries, dict) or not entries:
        raise reader.fail((*path, "params"), "needs params = { NAME = { low = ..., high = ... } } (at least one)")
    plain = {n: e for n, e in entries.items() if not is_variable(n)}
    out.params = search_ranges(plain, reader, path, params, what="the estimate")
    for name, entry in entries.items():
        if name.startswith(OFFSET) and (wrong := check_offset(name, measured)) is not None:
            raise reader.fail((*path, "params", name), wrong)
        if is_variable(name):
            out.params[name] = search_range(entry, reader, (*path, "params", name), what="the estimate")
    out.params = {n: out.params[n] for n in entries}  # as written
    for name, r in out.params.items():
        if is_variable(name):
            continue  # its start is known once the model is (start_value)
        value = float(params[name].value)
        if not r.low <= value <= r.high:
            raise reader.fail(
                (*path, "params", name),
                f"the param's value {value:g} (the fit's start) is outside [{r.low:g}, {r.high:g}]",
            )
    mapped = sorted({s for m in measured for s in m.signals})
    if "signals" in table:
        sig = table["signals"]
        if not isinstance(sig, list) or not sig or not all(isinstance(s, str) for s in sig):
            raise reader.fail((*path, "signals"), "must be a list of measured signals' names")
        for s in sig:
            if s not in mapped:
                raise reader.fail((*path, "signals"), f"no [[measured]] entry maps '{s}'{closest_names(s, mapped)}")
        out.signals = list(sig)
    if "weights" in table:
        weights = reader.keys(table["weights"], set(mapped), (*path, "weights"))
        out.weights = {s: reader.number(w, (*path, "weights", s), positive=True) for s, w in weights.items()}
    if "start" in table:
        out.start = reader.number(table["start"], (*path, "start"), nonneg=True)
    if "end" in table:
        out.end = reader.number(table["end"], (*path, "end"), positive=True)
        if out.end <= out.start:
            raise reader.fail((*path, "end"), f"end ({out.end:g} s) must be after start ({out.start:g} s)")
    if "starts" in table:
        v = table["starts"]
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 64:
            raise reader.fail((*path, "starts"), f"must be a whole number from 1 to 64, got {v!r}")
        out.starts = v
    return out


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


def variable_unit(name: str, model: mujoco.MjModel) -> str:
    """The variable's unit: s for an offset, m for a slide's position, rad for a hinge's."""
    if name.startswith(OFFSET):
        return "s"
    return "m" if int(model.joint(name[len(INITIAL) :]).type[0]) == int(mujoco.mjtJoint.mjJNT_SLIDE) else "rad"


def apply_variables(
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


def offered_variables(sc: Any, model: mujoco.MjModel, data: mujoco.MjData) -> list[Variable]:
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
        span = max(abs(v), 0.01 if variable_unit(name, model) == "m" else 0.1)
        out.append(Variable(name, v, variable_unit(name, model), v - span, v + span))
    for m in fitted:
        out.append(Variable(f"{OFFSET}{m.name}", m.offset, "s", m.offset - OFFSET_SPAN, m.offset + OFFSET_SPAN))
    return out
