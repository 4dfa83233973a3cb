"""What a report draws over a recording's signals, worked out once from the scenario (SI) and
converted once to the units shown: every bound of each requirement (``min``, ``max``, ``final``
± ``tolerance``) as a dashed line, and each metric's window as a shaded span; with the words a
figure's caption gives them, so a reviewer reads the numbers that were drawn.

GUI-free; any thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mjrig.runtime.telemetry.units import DisplayUnits

__all__ = ["Bound", "Window", "requirement_bounds", "metric_windows", "window_text", "caption", "number"]


@dataclass(frozen=True)
class Bound:
    """A level a requirement holds ``signal`` to, in the unit shown (``unit``)."""

    signal: str
    value: float
    unit: str
    label: str  # "travel >= -150 mm" ("": the other edge of a final ± tolerance band)


@dataclass(frozen=True)
class Window:
    """The span (simulated s) a metric of ``signal`` is worked out over; ``end`` None: the run's end."""

    signal: str
    start: float
    end: float | None
    label: str  # "back_swing: 0.4..1 s"


def number(value: Any) -> float | None:
    """``value`` as a float when it is a number (not a bool), else None."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def requirement_bounds(scenario: Mapping[str, Any], units: Mapping[str, str], shown: DisplayUnits) -> list[Bound]:
    """Every bound of the scenario's ``[[requirements]]``, in the units ``shown`` (each value
    converted from its signal's SI unit in ``units`` exactly once)."""
    out: list[Bound] = []
    for spec in scenario.get("requirements", []):
        if not isinstance(spec, Mapping):
            continue
        name, signal = str(spec.get("name", "?")), str(spec.get("signal", ""))
        factor, unit = shown.convert(units.get(signal, ""))
        text = lambda v, unit=unit: f"{v:g} {unit}".strip()  # noqa: E731
        lo, hi, final = number(spec.get("min")), number(spec.get("max")), number(spec.get("final"))
        if lo is not None:
            out.append(Bound(signal, lo * factor, unit, f"{name} >= {text(lo * factor)}"))
        if hi is not None:
            out.append(Bound(signal, hi * factor, unit, f"{name} <= {text(hi * factor)}"))
        if final is not None:
            tol = number(spec.get("tolerance")) or 0.0
            label = f"{name} final {text(final * factor)}" + (f" ± {text(tol * factor)}" if tol else "")
            out.append(Bound(signal, (final - tol) * factor, unit, label))
            if tol:  # the band's other edge: one label for the two lines
                out.append(Bound(signal, (final + tol) * factor, unit, ""))
    return out


def window_text(spec: Mapping[str, Any]) -> str:
    """A metric's window as read: "0.4..1 s", "from 2 s", "the whole run"."""
    start, end = number(spec.get("start")) or 0.0, number(spec.get("end"))
    if end is not None:
        return f"{start:g}..{end:g} s"
    return f"from {start:g} s" if start else "the whole run"


def metric_windows(scenario: Mapping[str, Any]) -> list[Window]:
    """The windows of the scenario's ``[[metrics]]`` that are not the whole run."""
    out: list[Window] = []
    for spec in scenario.get("metrics", []):
        if not isinstance(spec, Mapping):
            continue
        start, end = number(spec.get("start")) or 0.0, number(spec.get("end"))
        if start > 0 or end is not None:
            out.append(Window(str(spec.get("signal", "")), start, end, f"{spec.get('name', '?')}: {window_text(spec)}"))
    return out


def caption(bounds: list[Bound], windows: list[Window]) -> str:
    """What a figure draws besides the signals: "dashed: travel >= -150 mm; shaded: back_swing: 0.4..1 s"."""
    parts = []
    if bounds:
        parts.append("dashed: " + ", ".join(b.label for b in bounds if b.label))
    if windows:
        parts.append("shaded: " + ", ".join(w.label for w in windows))
    return "; ".join(parts)
