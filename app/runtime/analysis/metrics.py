"""Metrics: a signal reduced over a window to the one number an engineer reads off a run.

``Metric`` is a ``[[metrics]]`` entry (CONTRACT 6): a telemetry column, a kind, an optional
window of simulated time and the kind's own settings, checked when it is made. ``Metric.value``
reduces a window's samples (every step's, not a thinned recording) to the value: each kind's
arithmetic is ``reductions.metric_value``'s, the error kinds' (against measured data)
``error_value``; ``metric_unit`` gives its unit from the signal's. A run keeps the samples its
metrics read in a ``metric_log.MetricLog``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mjrig.runtime.analysis.reductions import metric_value

__all__ = ["Metric", "MetricError", "METRIC_KINDS", "ERROR_KINDS", "MODE_KINDS", "metric_unit", "error_value"]

METRIC_KINDS: dict[str, tuple[str, ...]] = {
    "max": (),
    "min": (),
    "mean": (),
    "final": (),
    "rms": (),
    "peak_to_peak": (),
    "integral": (),
    "time_of_max": (),
    "time_of_min": (),
    "first_crossing": ("level",),
    "settling_time": ("band", "band_abs"),
    "overshoot": (),
    "period": (),
    "frequency": (),
    "dominant_frequency": (),
    "rms_error": ("against",),
    "max_error": ("against",),
    "mode_frequency": ("mode",),
    "mode_damping": ("mode",),
}
"""Each kind and the settings it takes (settling_time: one of the two)."""

_TIMES = {"time_of_max", "time_of_min", "first_crossing", "settling_time", "period"}
ERROR_KINDS = ("rms_error", "max_error")
"""Kinds that compare the signal with measured data (``against``: a ``[[measured]]`` entry)."""
MODE_KINDS = ("mode_frequency", "mode_damping")
"""Kinds read off the rig linearised at the run's start (``mode``: 1 the lowest oscillatory
mode; ``mjrig.runtime.analysis.modes``): its undamped frequency (Hz) and damping ratio. No signal."""


class MetricError(ValueError):
    """A bad metric entry; ``field`` names the entry's field at fault (None: the entry)."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(eq=False, kw_only=True)
class Metric:
    """``kind`` of telemetry column ``signal`` over ``start``..``end`` (simulated s; ``end``
    None: to the run's end). ``level`` for first_crossing; ``band`` (fraction of abs(final)) or
    ``band_abs`` (the signal's unit) for settling_time; ``against`` (a ``[[measured]]`` entry's
    name) for rms_error/max_error, whose ``reference`` (times s, values SI) the scenario gives."""

    name: str
    kind: str
    signal: str = ""
    start: float = 0.0
    end: float | None = None
    level: float | None = None
    band: float | None = None
    band_abs: float | None = None
    against: str | None = None
    reference: tuple[np.ndarray, np.ndarray] | None = None
    mode: int | None = None
    shift: float = 0.0
    """s added to the measured samples' times (a fit estimating an entry's clock offset moves
    it); the window is judged on the times as read, so every shift scores the same samples."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise MetricError("a metric needs a non-empty name", field="name")
        if self.kind in MODE_KINDS:
            if isinstance(self.mode, bool) or not isinstance(self.mode, int) or self.mode < 1:
                raise MetricError(
                    f"a {self.kind} metric needs 'mode': 1 for the lowest oscillatory mode, got {self.mode!r}",
                    field="mode" if self.mode is not None else None,
                )
            self.signal = ""
        elif self.mode is not None:
            raise MetricError(f"'mode' goes with mode_frequency or mode_damping, not {self.kind}", field="mode")
        elif not isinstance(self.signal, str) or not self.signal.strip():
            raise MetricError(f"metric '{self.name}' needs a signal", field="signal")
        if self.kind not in METRIC_KINDS:
            from mjrig.runtime.points import closest_names

            raise MetricError(
                f"unknown metric kind {self.kind!r}{closest_names(str(self.kind), list(METRIC_KINDS))}", field="kind"
            )
        for f in ("start", "end", "level", "band", "band_abs"):
            v = getattr(self, f)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)):
                raise MetricError(f"must be a finite number, got {v!r}", field=f)
        self.start = float(self.start or 0.0)
        if self.start < 0:
            raise MetricError(f"must not be negative, got {self.start:g}", field="start")
        if self.end is not None and self.end <= self.start:
            raise MetricError(f"end ({self.end:g} s) must be after start ({self.start:g} s)", field="end")
        takes = METRIC_KINDS[self.kind]
        for f in ("level", "band", "band_abs"):
            if getattr(self, f) is not None and f not in takes:
                raise MetricError(f"'{f}' goes with {self._owner(f)}, not {self.kind}", field=f)
        if (self.kind in ERROR_KINDS) != (self.against is not None):
            raise MetricError(
                f"a {self.kind} metric needs 'against' (a [[measured]] entry's name)"
                if self.kind in ERROR_KINDS
                else f"'against' goes with rms_error or max_error, not {self.kind}",
                field="against" if self.against is not None else None,
            )
        if self.kind == "first_crossing" and self.level is None:
            raise MetricError("a first_crossing metric needs 'level' (the signal's unit)")
        if self.kind == "settling_time":
            if (self.band is None) == (self.band_abs is None):
                raise MetricError(
                    "a settling_time metric needs one of 'band' (fraction of the final value) "
                    "or 'band_abs' (the signal's unit)"
                )
            for f in ("band", "band_abs"):
                v = getattr(self, f)
                if v is not None and v <= 0:
                    raise MetricError(f"must be positive, got {v:g}", field=f)

    @staticmethod
    def _owner(f: str) -> str:
        return "first_crossing" if f == "level" else "settling_time"

    def window(self, t: np.ndarray) -> slice:
        """The steps of times ``t`` (sorted, s) inside the window (a thousandth of a step of slack)."""
        dt = float(t[1] - t[0]) if len(t) > 1 else 0.0
        eps = 1e-3 * dt if dt > 0 else 1e-12
        lo = int(np.searchsorted(t, self.start - eps, side="left"))
        hi = len(t) if self.end is None else int(np.searchsorted(t, self.end + eps, side="right"))
        return slice(lo, hi)

    def value(self, t: np.ndarray, x: np.ndarray) -> float:
        """The metric of samples ``x`` at times ``t`` (every step of a run), over its window."""
        if self.kind in ERROR_KINDS:  # the window picks the measured samples; the whole run is interpolated
            return self._error(t, x)
        w = self.window(t)
        return metric_value(self.kind, t[w], x[w], level=self.level, band=self.band, band_abs=self.band_abs)

    def _error(self, t: np.ndarray, x: np.ndarray) -> float:
        """rms or max abs of (simulated - measured) at the measured samples inside the window and
        the simulated span (the simulation interpolated linearly); NaN with none."""
        if self.reference is None:
            return math.nan
        return error_value(self.kind, self.samples(t, x), self.measured()[1])

    def measured(self) -> tuple[np.ndarray, np.ndarray]:
        """(times s, values SI) of the measured samples inside the window (``reference``'s)."""
        tm, xm = self.reference if self.reference is not None else (np.empty(0), np.empty(0))
        inside = tm >= self.start - 1e-12
        if self.end is not None:
            inside &= tm <= self.end + 1e-12
        return tm[inside] + self.shift, xm[inside]

    def samples(self, t: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The simulated signal (``x`` at times ``t``) at each of ``measured()``'s times,
        interpolated linearly; NaN where the simulation did not reach (or its value is NaN)."""
        tm = self.measured()[0]
        keep = np.isfinite(x)
        t, x = np.asarray(t, float)[keep], np.asarray(x, float)[keep]
        out = np.full(tm.shape, np.nan)
        if t.size:
            inside = (tm >= t[0] - 1e-12) & (tm <= t[-1] + 1e-12)
            out[inside] = np.interp(tm[inside], t, x)
        return out

    def entry(self, value: float, signal_unit: str) -> dict[str, Any]:
        """Its line of ``--metrics METRICS.json``: value (None for NaN), unit, signal, kind."""
        return {
            "value": value if math.isfinite(value) else None,
            "unit": metric_unit(self.kind, signal_unit),
            "signal": self.signal,
            "kind": self.kind,
        }


def error_value(kind: str, simulated: np.ndarray, measured: np.ndarray) -> float:
    """``kind`` ("rms_error" or "max_error") of ``simulated - measured`` over the samples where
    both are finite (NaN: the simulation did not reach it); NaN with none. The one error
    function: the metrics and ``mjrig fit``'s RMS per signal both use it."""
    err = np.asarray(simulated, float) - np.asarray(measured, float)
    err = err[np.isfinite(err)]
    if not err.size:
        return math.nan
    return float(np.sqrt(np.mean(err * err))) if kind == "rms_error" else float(np.abs(err).max())


def metric_unit(kind: str, signal_unit: str) -> str:
    """The unit of a ``kind`` metric of a signal in ``signal_unit``."""
    if kind in _TIMES:
        return "s"
    if kind == "mode_damping":
        return ""
    if kind in ("frequency", "dominant_frequency", "mode_frequency"):
        return "Hz"
    if kind == "overshoot":
        return "%"
    if kind == "integral":
        return f"{signal_unit}*s" if signal_unit else "s"
    return signal_unit
