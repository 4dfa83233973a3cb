"""What a frequency response can be taken to besides a param: a load's magnitude or one of its
force or torque components, and an actuator's input.

``input_names`` lists them for a rig's entries, named as their telemetry columns are
(``Loads/push:magnitude``, ``Loads/push:fz``, ``Actuators/shoulder:ctrl``); ``as_param`` turns
one of them into a param of a parsed scenario, valued as it is at the operating point, so that the
linearisation perturbs it as it perturbs any param (CONTRACT 12: an input is "a param that a load
or control uses").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mjrig.runtime.controls import Control
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.values import NamedValue, value_at

__all__ = ["input_names", "as_param"]

_VECTORS = {"force": ("fx", "fy", "fz"), "torque": ("tx", "ty", "tz")}
"""A load's vector field -> the names of its components (its telemetry columns' too)."""
_UNITS = {"f": "N", "t": "N*m"}


def _vector_fields(kind: str, spec: Mapping[str, Any]) -> list[str]:
    """The force/torque fields of a load's table (the ``force`` and ``torque`` kinds' ``vector``
    is the field their kind names)."""
    if "vector" in spec and kind in _VECTORS:
        return [kind]
    return [f for f in _VECTORS if f in spec]


def input_names(loads: Iterable[tuple[str, str, Mapping[str, Any]]], actuators: Iterable[str]) -> list[str]:
    """The inputs of loads ``(name, kind, table)`` and of ``actuators`` (names), in their order."""
    out: list[str] = []
    for name, kind, spec in loads:
        if "magnitude" in spec:
            out.append(f"Loads/{name}:magnitude")
        for field in _vector_fields(kind, spec):
            out += [f"Loads/{name}:{c}" for c in _VECTORS[field]]
    return out + [f"Actuators/{a}:ctrl" for a in actuators]


def as_param(sc: Any, name: str, *, time: float, ctrl: Callable[[str], float]) -> NamedValue:
    """Make input ``name`` (``input_names``) a param of parsed scenario ``sc``, valued as it is at
    simulated ``time`` (s) (``ctrl(actuator)``: an actuator's input now, for one no control
    drives); the load or control then reads the param. ConfigError (one line) for a name that
    is no such input."""
    section, _, rest = name.partition("/")
    entry, _, what = rest.rpartition(":")
    if section == "Loads":
        load = next((x for x in sc.loads if x.name == entry), None)
        if load is None:
            raise ConfigError(f"Bode input '{name}': the rig has no load '{entry}'")
        if what == "magnitude" and hasattr(load, "magnitude"):
            p = NamedValue(name, value_at(load.magnitude, time))
            load.magnitude = p
        elif what in _VECTORS["force"] + _VECTORS["torque"]:
            field = "force" if what[0] == "f" else "torque"
            vector = list(getattr(load, field, None) or ())
            if len(vector) != 3:
                raise ConfigError(f"Bode input '{name}': load '{entry}' has no {field}")
            i = "xyz".index(what[1])
            p = NamedValue(name, value_at(vector[i], time), unit=_UNITS[what[0]])
            vector[i] = p
            setattr(load, "vector" if getattr(load, "_vector_of", "") == field else field, vector)
        else:
            raise ConfigError(f"Bode input '{name}': load '{entry}' has no '{what}'")
    elif section == "Actuators" and what == "ctrl":
        control = next((c for c in sc.controls if c.actuator == entry), None)
        p = NamedValue(name, value_at(control.value, time) if control else ctrl(entry))
        if control is None:
            sc.controls.append(Control(entry, value=p))
        else:
            control.value = p
    else:
        raise ConfigError(f"Bode input '{name}': not a param, a load's magnitude or force, or an actuator's input")
    sc.params[name] = p
    return p
