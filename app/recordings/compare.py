"""``mjrig compare``: two recordings, signal by signal, on the first one's time base.

B is interpolated linearly at A's times (``np.interp``). A signal is within tolerance when B
stays inside A's tolerance band, ``|b - a| <= rtol * |a| + atol``, at every one of A's samples
(``outside``: the one place the band is worked out, for the verdict and the comparison report
alike); a sample where exactly one of the two has no value (null: the signal did not exist yet)
is a difference, one where neither has a value is not. ``time`` and ``wall_time`` are not signals.
Only the times both recordings cover are compared (``compared``: A's samples within B's time
span): where one runs longer, the rest is not compared, said in one line (``coverage``), never a
difference; two recordings with no time in common are bad input.

``against_measured`` compares a bench's measured series with A's signal the same way, at the
measured samples' times (A interpolated there, as the error metrics do; missing samples and
samples outside A's time span left out).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.points import closest_names

__all__ = [
    "SignalDiff",
    "RecordingDiff",
    "Aligned",
    "compare_recordings",
    "align",
    "against_measured",
    "outside",
    "read_signals",
    "NOT_SIGNALS",
]

NOT_SIGNALS = ("time", "wall_time")


@dataclass(frozen=True)
class SignalDiff:
    """One signal's comparison: the largest |a - b| and the time (s, A's) where it is;
    ``within`` the tolerance; ``one_sided`` the time of the first sample where only one of the
    two has a value (None: none such); ``first_outside`` the time (s) of the first sample outside
    A's band or with one value only (None: within)."""

    name: str
    max_abs: float
    time: float | None
    within: bool
    one_sided: float | None = None
    first_outside: float | None = None

    def line(self) -> str:
        """How ``mjrig compare`` prints it."""
        verdict = "ok  " if self.within else "FAIL"
        if self.one_sided is not None:
            return f"{verdict}  {self.name}  present in one recording only, from t = {self.one_sided:.6g} s"
        at = "" if self.time is None else f" at t = {self.time:.6g} s"
        return f"{verdict}  {self.name}  max |a-b| = {self.max_abs:.6g}{at}"


@dataclass(frozen=True)
class RecordingDiff:
    """Every compared signal (A's column order) and whether B covers A's time span."""

    signals: list[SignalDiff]
    coverage: str | None = None
    """None, or the one line saying which times only one recording covers (not compared)."""
    compared: tuple[float, float] | None = None
    """The times (s) both cover, those the signals were compared on (None: every one of A's)."""
    apart: tuple[tuple[float, float], ...] = ()
    """The times (s, start and end) only one of the two covers: not compared (``coverage``'s)."""

    @property
    def within(self) -> bool:
        return all(s.within for s in self.signals)


def _read(path: Path, what: str) -> tuple[list[str], object]:
    """(numeric signal columns, the file's schema) of recording ``path``; ConfigError if it is not one."""
    import polars as pl

    if not path.exists():
        raise ConfigError(f"{what}: recording not found: {path}")
    if path.is_dir():
        raise ConfigError(f"{what}: {path} is a folder, not a recording")
    try:
        schema = pl.read_parquet_schema(path)
    except Exception as exc:  # noqa: BLE001 - whatever the reader says, it is not a Parquet file
        raise ConfigError(f"{what}: {path} is not a Parquet recording ({' '.join(str(exc).split())[:120]})") from None
    if "time" not in schema or not schema["time"].is_numeric():
        raise ConfigError(f"{what}: {path} is not an mjrig recording (no numeric 'time' column)")
    names = [n for n, t in schema.items() if n not in NOT_SIGNALS and (t.is_numeric() or t == pl.Boolean)]
    return names, schema


def read_signals(path: Path, names: Sequence[str], what: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(time s, {name: values float64, NaN where null}) of recording ``path``'s columns ``names``;
    ConfigError naming ``what`` ("A", "B") when the file cannot be read."""
    import polars as pl

    try:
        df = pl.read_parquet(path, columns=["time", *names])
    except Exception as exc:  # noqa: BLE001
        raise ConfigError(f"{what}: cannot read {path}: {' '.join(str(exc).split())[:120]}") from None
    time = df["time"].cast(pl.Float64).to_numpy()
    if time.size and np.isnan(time).any():
        raise ConfigError(f"{what}: {path} has rows without a time")
    cols = {n: df[n].cast(pl.Float64).to_numpy().astype(float) for n in names}
    return time, cols


def _pick(common: list[str], patterns: Sequence[str]) -> list[str]:
    if not patterns:
        return common
    picked: list[str] = []
    for pat in patterns:
        hits = [n for n in common if fnmatch.fnmatchcase(n, pat)]
        if not hits:
            raise ConfigError(
                f"--signals '{pat}' matches no signal the two recordings share{closest_names(pat, common)}"
            )
        picked += [n for n in hits if n not in picked]
    return [n for n in common if n in picked]


def compare_recordings(
    a: Path, b: Path, *, signals: Sequence[str] = (), rtol: float = 1e-6, atol: float = 1e-9
) -> RecordingDiff:
    """Compare recordings ``a`` and ``b`` (Parquet) signal by signal on ``a``'s time base.

    ``signals`` are glob patterns on column names (``Joints/*:qpos``); empty: every signal the
    two share. ConfigError (one line) for a missing or unreadable file, a file that is not a
    recording, no common signal, a pattern that matches none, or B's time going back.
    """
    for name, tol in (("--rtol", rtol), ("--atol", atol)):
        if not (math.isfinite(tol) and tol >= 0):
            raise ConfigError(f"{name} must be a number >= 0, got {tol}")
    a_names, _ = _read(a, "A")
    b_names, _ = _read(b, "B")
    b_set = set(b_names)
    common = [n for n in a_names if n in b_set]
    if not common:
        raise ConfigError(f"{a.name} and {b.name} have no signal in common")
    names = _pick(common, signals)
    ta, ca = read_signals(a, names, "A")
    tb, cb = read_signals(b, names, "B")
    if ta.size == 0 or tb.size == 0:
        raise ConfigError(f"{(a if ta.size == 0 else b).name}: the recording has no rows")
    if np.any(np.diff(tb) < 0):
        raise ConfigError(f"B: time goes back in {b.name} (reset while recording?): compare needs one run per file")
    lo, hi = max(float(ta.min()), float(tb[0])), min(float(ta.max()), float(tb[-1]))
    keep = (ta >= lo - _SAME_TIME) & (ta <= hi + _SAME_TIME)
    if not keep.any():
        raise ConfigError(
            f"{a.name} spans {ta.min():.6g}..{ta.max():.6g} s, {b.name} {tb[0]:.6g}..{tb[-1]:.6g} s: no time in common"
        )
    apart, left_out = [], []
    for start, end, longer in (
        (min(float(ta.min()), float(tb[0])), lo, a.name if ta.min() < lo - _SAME_TIME else b.name),
        (hi, max(float(ta.max()), float(tb[-1])), a.name if ta.max() > hi + _SAME_TIME else b.name),
    ):
        if end - start > _SAME_TIME:
            apart.append((start, end))
            left_out.append(f"{start:.6g}..{end:.6g} s (only in {longer})")
    coverage = f"not compared: {', '.join(left_out)}; compared on {lo:.6g}..{hi:.6g} s" if left_out else None
    ta = ta[keep]
    diffs = [_diff(n, ta, ca[n][keep], tb, cb[n], rtol=rtol, atol=atol) for n in names]
    return RecordingDiff(diffs, coverage, (lo, hi), tuple(apart))


_SAME_TIME = 1e-9
"""Times (s) this close are the same instant (a recording's times are sums of steps)."""


@dataclass(frozen=True)
class Aligned:
    """One signal of A and B on a common time base, shape (n,) each: ``time`` (s), ``a`` and ``b``
    (NaN where one has no value), ``band`` = rtol·|a| + atol (the signal's unit; NaN where A has
    no value) and ``out`` (bool: the sample is outside the band or has one value only)."""

    time: np.ndarray
    a: np.ndarray
    b: np.ndarray
    band: np.ndarray
    out: np.ndarray

    def diff(self, name: str) -> SignalDiff:
        """The summary ``mjrig compare`` prints: the largest |b - a| and where, the first time outside."""
        na, nb = np.isnan(self.a), np.isnan(self.b)
        one, both = na ^ nb, ~(na | nb)
        first_one = float(self.time[np.argmax(one)]) if one.any() else None
        first = float(self.time[np.argmax(self.out)]) if self.out.any() else None
        within = first is None
        if not both.any():
            return SignalDiff(name, math.nan, None, within, first_one, first)
        d = np.where(both, np.abs(self.b - self.a), -np.inf)
        k = int(np.argmax(d))
        return SignalDiff(name, float(d[k]), float(self.time[k]), within, first_one, first)


def outside(a: np.ndarray, b: np.ndarray, *, rtol: float, atol: float) -> tuple[np.ndarray, np.ndarray]:
    """(band, out) of ``b`` against reference ``a`` (same times, shape (n,)): the band
    rtol·|a| + atol, and whether each sample lies outside it (|b - a| > band) or only one of the
    two has a value (NaN). The contract's tolerance, worked out here only."""
    band = rtol * np.abs(a) + atol
    na, nb = np.isnan(a), np.isnan(b)
    both = ~(na | nb)
    out = na ^ nb
    out[both] = ~(np.abs(b[both] - a[both]) <= band[both])  # inf - inf (NaN) is outside too
    return band, out


def align(ta: np.ndarray, a: np.ndarray, tb: np.ndarray, b: np.ndarray, *, rtol: float, atol: float) -> Aligned:
    """B (``b`` at times ``tb``, s) interpolated linearly at A's times ``ta`` (held at its ends;
    no value where a neighbouring sample has none), against A's band."""
    missing = np.isnan(b)
    bi = np.interp(ta, tb, np.where(missing, 0.0, b))
    if missing.any():  # no value where either neighbour has none
        bi[np.interp(ta, tb, missing.astype(float)) > 0] = np.nan
    return Aligned(ta, a, bi, *outside(a, bi, rtol=rtol, atol=atol))


def against_measured(
    ta: np.ndarray, a: np.ndarray, tm: np.ndarray, xm: np.ndarray, *, rtol: float, atol: float
) -> Aligned:
    """A measured series (``xm`` at times ``tm``, s; NaN: a missing sample) against A's signal
    (``a`` at ``ta``): at the measured samples inside A's time span, A interpolated there (``b``
    is the measured value); missing samples left out, as in the error metrics."""
    keep = np.isfinite(a)
    ta, a = ta[keep], a[keep]
    tm, xm = np.asarray(tm, float), np.asarray(xm, float)
    inside = np.isfinite(xm) & (tm >= ta[0] - 1e-12) & (tm <= ta[-1] + 1e-12) if ta.size else np.zeros(tm.shape, bool)
    tm, xm = tm[inside], xm[inside]
    ai = np.interp(tm, ta, a) if ta.size else np.empty(0)
    return Aligned(tm, ai, xm, *outside(ai, xm, rtol=rtol, atol=atol))


def _diff(
    name: str, ta: np.ndarray, a: np.ndarray, tb: np.ndarray, b: np.ndarray, *, rtol: float, atol: float
) -> SignalDiff:
    return align(ta, a, tb, b, rtol=rtol, atol=atol).diff(name)
