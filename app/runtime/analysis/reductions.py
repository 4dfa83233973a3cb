"""A window's samples reduced to one number: each metric kind's arithmetic (``metric_value``).

Kinds: ``max``, ``min``, ``mean``, ``final``, ``rms`` (sqrt of the mean square), ``peak_to_peak``,
``integral`` (trapezoidal, unit·s), ``time_of_max``/``time_of_min`` (the first extreme sample,
placed between samples at the vertex of the parabola through it and its two neighbours: within a
hundredth of a step on a sine sampled at 1 ms), ``first_crossing`` (``level``), ``settling_time``
(``band`` as a fraction of abs(final), or ``band_abs``: the time from which the signal stays
within final ± band, where it last comes in over the band's edge, interpolated linearly), ``overshoot`` (%: beyond the final value, as a
share of the step from the first value), ``period``/``frequency`` (the mean time between the
oscillation's successive crests, each placed between samples by a parabola: exact for a sine and
for a decaying one about any level, where crossings of the window's mean are not; crests smaller
than a hundredth of the window's swing are ripple, not the oscillation; NaN with fewer than two
full periods), ``dominant_frequency`` (the largest peak of the power spectrum, a settling
response's final value and the Hann-weighted mean removed, Hann-windowed, zero-padded, above 2 /
the window's length and refined between bins by a parabola through the log powers). Crossing
times are interpolated linearly between steps.

The kinds that need more than a signal's samples are ``metrics``' (``rms_error``/``max_error``:
``error_value`` against measured data) and ``modes``' (``mode_frequency``/``mode_damping``).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["metric_value", "RIPPLE", "TAPER"]


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
        return _vertex_time(t, x, int(x.argmax()))
    if kind == "time_of_min":
        return _vertex_time(t, -x, int(x.argmin()))
    if kind == "first_crossing":
        times = _crossings(t, x - float(level), upward=None)  # type: ignore[arg-type]
        return float(times[0]) if times.size else math.nan
    if kind == "settling_time":
        final = float(x[-1])
        width = band_abs if band_abs is not None else band * abs(final)  # type: ignore[operator]
        out = np.flatnonzero(np.abs(x - final) > width)
        if out.size == 0:
            return float(t[0])
        k = int(out[-1])
        if k + 1 >= t.size:
            return math.nan
        edge = final + math.copysign(width, x[k] - final)  # the band's edge it last comes in over
        return float(t[k] + (t[k + 1] - t[k]) * (x[k] - edge) / (x[k] - x[k + 1]))
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
    return _vertices(t, x, k)


def _vertices(t: np.ndarray, x: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Times (s) of the maxima at samples ``k`` (none the first or last), each the vertex of the
    parabola through it and its two neighbours (unevenly spaced allowed), kept between them; the
    sample's own time where the three do not bend down."""
    t0, t1, t2 = t[k - 1], t[k], t[k + 1]
    y0, y1, y2 = x[k - 1], x[k], x[k + 1]
    d01, d12 = (y1 - y0) / (t1 - t0), (y2 - y1) / (t2 - t1)
    curv = (d12 - d01) / (t2 - t0)
    with np.errstate(divide="ignore", invalid="ignore"):
        vertex = 0.5 * (t0 + t1) - d01 / (2.0 * curv)
    flat = ~np.isfinite(vertex) | (curv >= 0)
    return np.where(flat, t1, np.clip(vertex, t0, t2))


def _vertex_time(t: np.ndarray, x: np.ndarray, k: int) -> float:
    """The time (s) of the largest sample ``k`` of ``x``, between samples (``_vertices``); the
    sample's own at either end of the window."""
    if k == 0 or k == x.size - 1:
        return float(t[k])
    return float(_vertices(t, x, np.array([k]))[0])


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
    from scipy.signal import windows  # on first use: scipy.signal is 0.8 s of import

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
