"""Display units: how values are shown (``[units]`` in a scenario), while files stay SI.

```toml
[units]
length = "mm"      # m | mm | cm | in
angle = "deg"      # rad | deg
force = "N"        # N | kN | lbf
torque = "N·m"     # N·m | N·mm | kN·m
```

``DisplayUnits.convert(si_unit)`` gives the factor and the label a value in ``si_unit`` is shown
with: a column in ``m`` with ``length = "mm"`` is shown ×1000 in ``mm``; derived units follow
(``m/s`` → ``mm/s``, ``rad/s^2`` → ``deg/s^2``); units of other quantities (J, W, kg, N/m, s) are
shown as they are. GUI-free; immutable.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

__all__ = ["DisplayUnits", "CHOICES", "SI", "read_units", "scenario_units"]

CHOICES: dict[str, dict[str, float]] = {
    "length": {"m": 1.0, "mm": 1000.0, "cm": 100.0, "in": 1 / 0.0254},
    "angle": {"rad": 1.0, "deg": 180.0 / math.pi},
    "force": {"N": 1.0, "kN": 1e-3, "lbf": 1 / 4.4482216152605},
    "torque": {"N·m": 1.0, "N·mm": 1000.0, "kN·m": 1e-3},
}
"""Each quantity's choices: unit -> how many of it make one SI unit."""
SI = {"length": "m", "angle": "rad", "force": "N", "torque": "N·m"}
_BASE = {"m": "length", "rad": "angle", "N": "force", "N*m": "torque", "N·m": "torque", "Nm": "torque"}
_RATES = ("/s^2", "/s²", "/s", "")


@dataclass(frozen=True)
class DisplayUnits:
    """The units values are shown in; SI for every quantity left out."""

    length: str = "m"
    angle: str = "rad"
    force: str = "N"
    torque: str = "N·m"

    @property
    def is_si(self) -> bool:
        return all(getattr(self, q) == SI[q] for q in SI)

    def convert(self, si_unit: str) -> tuple[float, str]:
        """(factor, label): a value in ``si_unit`` times factor, in unit ``label``."""
        for rate in _RATES:
            if si_unit.endswith(rate):
                base = si_unit[: len(si_unit) - len(rate)] if rate else si_unit
                if base in _BASE:
                    quantity = _BASE[base]
                    chosen = getattr(self, quantity)
                    if chosen == SI[quantity]:
                        return 1.0, si_unit
                    return CHOICES[quantity][chosen], chosen + rate
        return 1.0, si_unit

    def show(self, value: float, si_unit: str) -> tuple[float, str]:
        """(value in the shown unit, that unit's label) of ``value`` in ``si_unit``."""
        factor, label = self.convert(si_unit)
        return value * factor, label.replace("*", "·")

    def text(self, value: float | None, si_unit: str, *, fmt: str = ".4g") -> str:
        """``value`` (in ``si_unit``) as a person reads it in the shown unit: "12.5 mm"; "-" for None."""
        if value is None:
            return "-"
        shown, label = self.show(value, si_unit)
        return f"{shown:{fmt}} {label}".strip()

    def choose(self, quantity: str, unit: str) -> DisplayUnits:
        """These units with ``quantity`` shown in ``unit`` (ValueError naming the choices if unknown)."""
        if quantity not in CHOICES:
            raise ValueError(f"unknown quantity '{quantity}' (choose {', '.join(CHOICES)})")
        if unit not in CHOICES[quantity]:
            raise ValueError(f"unknown {quantity} unit '{unit}' (choose {', '.join(CHOICES[quantity])})")
        return replace(self, **{quantity: unit})

    def columns(self, frame: Any, units: Mapping[str, str]) -> tuple[Any, dict[str, str]]:
        """A polars ``frame`` in SI (``units`` by column) in these units: (the frame with each
        column that has a unit converted, the unit shown of each such column)."""
        import polars as pl

        conv = {c: self.convert(units[c]) for c in frame.columns if units.get(c)}
        scaled = [(pl.col(c) * f).alias(c) for c, (f, _) in conv.items() if f != 1.0]
        return (frame.with_columns(scaled) if scaled else frame), {c: u.replace("*", "·") for c, (_, u) in conv.items()}

    def table(self) -> dict[str, str]:
        """The ``[units]`` table of these units (the quantities not in SI)."""
        return {q: getattr(self, q) for q in SI if getattr(self, q) != SI[q]}


def read_units(table: Any, fail: Any) -> DisplayUnits:
    """``[units]`` as DisplayUnits; ``fail(key, message)`` makes the error for a bad key or value
    (an unknown quantity or unit, with the closest names)."""
    import difflib

    if not isinstance(table, Mapping):
        raise fail(None, "must be a table: length, angle, force, torque")
    out: dict[str, str] = {}
    for key, value in table.items():
        if key not in CHOICES:
            close = difflib.get_close_matches(str(key), list(CHOICES), n=2, cutoff=0.4)
            raise fail(
                key,
                f"unknown quantity '{key}'"
                + (f" (closest: {', '.join(close)})" if close else " (choose length, angle, force, torque)"),
            )
        names = list(CHOICES[key])
        text = value.replace("*", "·").replace("Nm", "N·m") if isinstance(value, str) else value
        if text not in names:
            close = difflib.get_close_matches(str(value), names, n=2, cutoff=0.3)
            raise fail(
                key,
                f"unknown {key} unit {value!r} (choose {', '.join(names)}"
                + (f"; closest: {', '.join(close)})" if close else ")"),
            )
        out[key] = text
    return DisplayUnits(**out)


def scenario_units(scenario_text: str) -> DisplayUnits:
    """The ``[units]`` of a scenario's TOML text (a recording's ``mjrig.scenario``); SI when it has
    none or they cannot be read (the file was checked when it ran)."""
    import tomllib

    try:
        table = tomllib.loads(scenario_text or "").get("units", {})
        return read_units(table, lambda key, msg: ValueError(msg))
    except (tomllib.TOMLDecodeError, ValueError):
        return DisplayUnits()
