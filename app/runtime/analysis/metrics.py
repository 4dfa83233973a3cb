"""Metrics: a signal reduced over a window to the one number an engineer reads off a run.

``Metric`` is a ``[[metrics]]`` entry (CONTRACT 6): a telemetry column, a kind, an optional
window of simulated time and the kind's own settings. ``metric_value`` reduces a window's samples
(every step's, not a thinned recording) to the value; ``metric_unit`` gives its unit from the
signal's. Crossing times are interpolated linearly between steps.

Kinds: ``max``, ``min``, ``mean``, ``final``, ``rms`` (sqrt of the mean square), ``peak_to_peak``,
``integral`` (trapezoidal, unit·s), ``time_of_max``/``time_of_min`` (the first), ``first_crossing``
(``level``), ``settling_time`` (``band`` as a fraction of abs(final), or ``band_abs``: the time
from which the signal stays within final ± band), ``overshoot`` (%: beyond the final value, as a
share of the step from the first value), ``period``/``frequency`` (the mean time between the
oscillation's successive crests, each placed between samples by a parabola: exact for a sine and
for a decaying one about any level, where crossings of the window's mean are not; crests smaller
than a hundredth of the window's swing are ripple, not the oscillation; NaN with fewer than two
full periods), ``dominant_frequency`` (the largest peak of the power spectrum, a settling
response's final value and the Hann-weighted mean removed, Hann-windowed, zero-padded, above 2 /
the window's length and refined between bins by a parabola through the log powers).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.signal import windows

__all__ = ["Metric", "MetricError", "MetricLog", "METRIC_KINDS", "metric_value", "metric_unit", "error_value"]

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


class MetricLog:
    """Every step's values of the signals ``metrics`` read (one column per distinct signal),
    kept so that each metric can be worked out over its window at any moment (``values``).

    Memory: 8 bytes per signal and step, plus the times (a million steps of one signal: 16 MB).
    Threading: ``add`` on the stepping thread; ``values`` may run elsewhere (it reads a prefix
    that ``add`` no longer writes)."""

    def __init__(self, metrics: list[Metric]) -> None:
        self.metrics = list(metrics)
        self.signals = list(dict.fromkeys(m.signal for m in self.metrics if m.kind not in MODE_KINDS))
        self._col = [self.signals.index(m.signal) if m.kind not in MODE_KINDS else -1 for m in self.metrics]
        self.modal = [m for m in self.metrics if m.kind in MODE_KINDS]
        self.fixed: dict[str, float] = {}
        """The mode metrics' values (the rig linearised at the run's start), by name."""
        self._t = np.empty(1024)
        self._x = np.empty((1024, len(self.signals)))
        self.n = 0

    def add(self, t: float, values: np.ndarray) -> None:
        """Keep the signals' ``values`` (in ``signals`` order) at simulated time ``t`` (s); a
        time before the last one (a reset, a restored snapshot) starts the log over."""
        n = self.n
        if n and t < self._t[n - 1]:
            n = 0
        if n == len(self._t):
            grow = max(n, 1024)
            self._t = np.concatenate([self._t, np.empty(grow)])
            self._x = np.concatenate([self._x, np.empty((grow, self._x.shape[1]))])
        self._t[n] = t
        self._x[n] = values
        self.n = n + 1

    last_time = property(
        lambda self: float(self._t[self.n - 1]) if self.n else -math.inf,
        doc="The newest logged step's time (s); -inf before any.",
    )

    def load(self, t: np.ndarray, x: np.ndarray) -> None:
        """Take over a run logged elsewhere: step times ``t`` (s, (K,)) and the signals' values
        ``x`` ((K, len(signals))), e.g. one of many trials stepped side by side
        (``mjrig.campaign.lockstep``)."""
        self._t = np.array(t, dtype=float)
        self._x = np.array(x, dtype=float).reshape(self._t.size, len(self.signals))
        self.n = self._t.size

    def entries(self, units: dict[str, str]) -> dict[str, dict[str, Any]]:
        """``--metrics METRICS.json``'s content: each metric's ``Metric.entry`` by name; ``units``
        are the signals' units by column name."""
        values = self.values()
        return {m.name: m.entry(values[m.name], units.get(m.signal, "")) for m in self.metrics}

    def values(self) -> dict[str, float]:
        """Each metric's value over what was logged so far (NaN before anything was), from its
        signal's first value (``seed`` may leave earlier rows without one)."""
        n, out = self.n, {}
        for m, c in zip(self.metrics, self._col):
            if c < 0:
                out[m.name] = self.fixed.get(m.name, math.nan)
                continue
            x = self._x[:n, c]
            k = int(np.argmax(np.isfinite(x))) if n else 0
            out[m.name] = m.value(self._t[k:n], x[k:]) if n and np.isfinite(x[k]) else math.nan
        return out

    def series(self, signal: str) -> tuple[np.ndarray, np.ndarray]:
        """(times s, values) of ``signal`` at every step logged so far (copies)."""
        c = self.signals.index(signal)
        return self._t[: self.n].copy(), self._x[: self.n, c].copy()

    def since(self, name: str) -> float | None:
        """Simulated time (s) of metric ``name``'s first value logged, None before any."""
        c = self._col[[m.name for m in self.metrics].index(name)]
        if c < 0:  # a mode metric: of the run's start
            return float(self._t[0]) if self.n else None
        ok = np.flatnonzero(np.isfinite(self._x[: self.n, c]))
        return float(self._t[ok[0]]) if ok.size else None

    def seed(self, old: MetricLog | None, kept: Callable[[str], tuple[np.ndarray, np.ndarray]]) -> None:
        """Start from what is known of the run so far (a rig edited while it runs): the steps
        ``old`` logged, its signals' values at them, and for a signal it did not log, ``kept(signal)``
        (times s, values: the rows the live plots keep) at the same times, interpolated, NaN
        before and after them. With no ``old`` steps, the kept rows' own times."""
        if self.n or not self.signals:
            return
        shared = [s for s in self.signals if old is not None and s in old.signals]
        if old is not None and old.n and shared:
            t = old._t[: old.n].copy()
        else:
            t = np.unique(np.concatenate([kept(s)[0] for s in self.signals] or [np.empty(0)]))
        if not t.size:
            return
        x = np.full((t.size, len(self.signals)), np.nan)
        for j, signal in enumerate(self.signals):
            if old is not None and signal in shared:
                x[:, j] = old._x[: old.n, old.signals.index(signal)]
                continue
            kt, kx = kept(signal)
            ok = np.isfinite(kx)
            if ok.sum() >= 2:
                inside = (t >= kt[ok][0]) & (t <= kt[ok][-1])
                x[inside, j] = np.interp(t[inside], kt[ok], kx[ok])
        self._t, self._x, self.n = (
            np.concatenate([t, np.empty(1024)]),
            np.concatenate([x, np.empty((1024, x.shape[1]))]),
            t.size,
        )


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


def metric_value(
    kind: str,
    t: np.ndarray,
    x: np.ndarray,
    *,
    level: float | None = None,
    band: float | None = None,
    band_abs: float | None = None,
) -> float:
    """``kind`` of samples ``x`` at times ``t`` (s); NaN samples (a signal that did not exist
    then) are left out; NaN when nothing is left or the kind cannot be told."""
    t, x = np.asarray(t, float), np.asarray(x, float)
    keep = np.isfinite(x)
    t, x = t[keep], x[keep]
    if x.size == 0:
        return math.nan
    if kind == "max":
        return float(x.max())
    if kind == "min":
        return float(x.min())
    if kind == "mean":
        return float(x.mean())
    if kind == "final":
        return float(x[-1])
    if kind == "rms":
        return float(np.sqrt(np.mean(x * x)))
    if kind == "peak_to_peak":
        return float(x.max() - x.min())
    if kind == "integral":
        return float(np.trapezoid(x, t)) if x.size > 1 else 0.0
    if kind == "time_of_max":
        return float(t[int(x.argmax())])
    if kind == "time_of_min":
        return float(t[int(x.argmin())])
    if kind == "first_crossing":
        times = _crossings(t, x - float(level), upward=None)  # type: ignore[arg-type]
        return float(times[0]) if times.size else math.nan
    if kind == "settling_time":
        final = float(x[-1])
        width = band_abs if band_abs is not None else band * abs(final)  # type: ignore[operator]
        out = np.flatnonzero(np.abs(x - final) > width)
        return float(t[0]) if out.size == 0 else (float(t[out[-1] + 1]) if out[-1] + 1 < t.size else math.nan)
    if kind == "overshoot":
        first, final = float(x[0]), float(x[-1])
        step = final - first
        if step == 0:
            return math.nan
        beyond = (x.max() - final) if step > 0 else (final - x.min())
        return float(beyond / abs(step) * 100.0)
    if kind in ("period", "frequency"):
        crests = _crests(t, x)
        if crests.size < 3:
            return math.nan
        period = float((crests[-1] - crests[0]) / (crests.size - 1))
        return period if kind == "period" else 1.0 / period
    if kind == "dominant_frequency":
        return _dominant_frequency(t, x)
    raise ValueError(f"unknown metric kind {kind!r}")


RIPPLE = 0.01
"""A crest counts when it stands out by this share of the window's swing (peak to peak)."""


def _crests(t: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Times (s) of the crests of ``x``: its local maxima standing out by RIPPLE of its swing,
    each at the vertex of the parabola through it and its two neighbours."""
    from scipy.signal import find_peaks

    swing = float(x.max() - x.min()) if x.size else 0.0
    if x.size < 3 or swing <= 0:
        return np.empty(0)
    k, _ = find_peaks(x, prominence=RIPPLE * swing)  # never the first or last sample
    t0, t1, t2 = t[k - 1], t[k], t[k + 1]
    y0, y1, y2 = x[k - 1], x[k], x[k + 1]
    # the vertex of the parabola through the three points (unevenly spaced allowed)
    d01, d12 = (y1 - y0) / (t1 - t0), (y2 - y1) / (t2 - t1)
    curv = (d12 - d01) / (t2 - t0)
    with np.errstate(divide="ignore", invalid="ignore"):
        vertex = 0.5 * (t0 + t1) - d01 / (2.0 * curv)
    flat = ~np.isfinite(vertex) | (curv >= 0)
    return np.where(flat, t1, np.clip(vertex, t0, t2))


TAPER = 0.5
"""The fraction of the window ``dominant_frequency`` tapers (a cosine each end; 1 is Hann's)."""


def _dominant_frequency(t: np.ndarray, x: np.ndarray) -> float:
    """The frequency (Hz) of the largest peak of the power spectrum of ``x`` (resampled evenly at
    its median step when the steps vary) after removing its final value when it settles (a step
    response: its last fifth moves less than a twentieth of its whole range) and then its
    window-weighted mean (a Tukey window, ``TAPER`` of it tapered), never below 2 / the window's length (the window's own main lobe, where
    what is left of an offset lands); NaN for fewer than 8 samples or a constant signal."""
    if x.size < 8 or t[-1] <= t[0]:
        return math.nan
    dt = float(np.median(np.diff(t)))
    even = np.arange(t[0], t[-1] + 0.5 * dt, dt)
    y = np.interp(even, t, x)
    if not np.ptp(y):
        return math.nan  # constant: no frequency (the window's mean would leave rounding's)
    tail = y[-max(2, y.size // 5) :]
    if np.ptp(tail) < 0.05 * np.ptp(y):  # it settles: the offset it settles to is no oscillation
        y = y - y[-1]
    # Tukey (half its length tapered): a Hann window weighs the run's middle most, and pulled a
    # sweep's resonance towards the frequency it passed mid-run (5 % on a 1-10 Hz chirp).
    w = windows.tukey(y.size, TAPER)
    y = (y - float(w @ y) / float(w.sum())) * w
    if not np.any(y):
        return math.nan
    n = 1 << int(math.ceil(math.log2(8 * y.size)))  # zero-padded: bins 8 times finer
    power = np.abs(np.fft.rfft(y, n)) ** 2
    lowest = math.ceil(2 * n / y.size)  # the bin of 2 / window length
    power[: min(lowest, power.size)] = 0.0
    if not np.any(power):
        return math.nan
    k = int(power.argmax())
    if 0 < k < power.size - 1 and np.all(power[k - 1 : k + 2] > 0):
        a, b, c = np.log(power[k - 1 : k + 2])
        shift = 0.5 * (a - c) / (a - 2 * b + c) if a - 2 * b + c != 0 else 0.0
    else:
        shift = 0.0
    return float((k + shift) / (n * dt))


def _crossings(t: np.ndarray, y: np.ndarray, *, upward: bool | None) -> np.ndarray:
    """Times (s) where ``y`` crosses zero between samples (linearly interpolated): upward only
    (``upward``), or either way (None). A sample exactly at zero counts where the sign changes."""
    a, b = y[:-1], y[1:]
    if upward is None:
        hit = ((a < 0) & (b >= 0)) | ((a > 0) & (b <= 0))
    else:
        hit = (a < 0) & (b >= 0)
    k = np.flatnonzero(hit)
    return t[k] + (t[k + 1] - t[k]) * (-a[k]) / (b[k] - a[k])
