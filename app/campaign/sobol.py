"""Sobol sensitivity indices of a Saltelli sweep (``sensitivity = "sobol"`` in ``[sweep]``).

The sweep's trials are the design ``mjrig.scenario.studies.sweep`` lays out: n base points, then trial
``i`` is block ``i // n`` (A, B, then one ``AB_k`` block per distribution param) and row
``i % n``. ``sensitivity(table, spec=)`` reads each ``Requirements/<r>:value`` and
``Metrics/<m>:value`` column of the results in that order and gives each param's first-order
index S_k (the share of the value's variance that param k explains alone) and total index ST_k
(its share with every interaction it takes part in), as ``scipy.stats.sobol_indices`` (Saltelli
2010 estimators) gives them from those outputs, with a 95 % BCa bootstrap interval
(``scipy.stats.bootstrap`` over the n base points, resampling A, B and AB rows together as
``SobolResult.bootstrap`` does, on a generator seeded from the sweep's seed and the column's
position: ``numpy.random.default_rng([seed, 1, position])``). So the same results give the same
indices and intervals, on resume too.

Holes: a trial that diverged or failed with an error has no value; the estimators need every
one of the n x (d + 2), so such a column gets no indices but a ``reason``, as does a value that
never varies (no variance to share out). Nothing here raises on the results' numbers.

The metadata (``mjrig.sensitivity``, JSON; docs/outputs.md)::

    {"method": "sobol", "estimator": "saltelli_2010", "base_points": n, "trials": n*(d+2),
     "params": ["k", "mass"], "confidence_level": 0.95, "resamples": 999,
     "values": {"Metrics/f:value": {"first_order": {"k": {"index": 0.8, "low": 0.7, "high": 0.9}, ...},
                                     "total_order": {...}},
                "Requirements/travel:value": {"reason": "3 of 256 trials have no value ..."}}}

A number that is not finite (a degenerate bootstrap) is ``null``. ``SobolReading.parse`` reads it
back as arrays for the report's and the results view's bars.

GUI-free (numpy, scipy, pyarrow); any thread.
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from mjrig.scenario.studies.sweep import SweepSpec

__all__ = [
    "SENSITIVITY_KEY",
    "CONFIDENCE",
    "RESAMPLES",
    "sensitivity",
    "value_indices",
    "SobolValue",
    "SobolReading",
]

SENSITIVITY_KEY = "mjrig.sensitivity"
"""The results' metadata key of a Saltelli sweep's Sobol indices (JSON)."""
CONFIDENCE = 0.95
"""The bootstrap intervals' confidence level."""
RESAMPLES = 999
"""Bootstrap resamples per value (scipy's ``SobolResult.bootstrap`` default)."""
ORDERS = ("first_order", "total_order")


def sensitivity(table: pa.Table, *, spec: SweepSpec) -> dict[str, Any]:
    """The Sobol indices of every requirement's and metric's value column of ``table`` (a
    Saltelli sweep's results, one row per trial, sorted by trial) as the ``mjrig.sensitivity``
    document (see the module). ``spec``: the sweep as run (base points, params, seed)."""
    names = [name for name, _ in spec.distributions]
    n = spec.trials
    columns = [c for c in table.column_names if c.startswith(("Requirements/", "Metrics/")) and c.endswith(":value")]
    values: dict[str, Any] = {}
    for position, col in enumerate(columns):
        y = np.array([np.nan if v is None else v for v in table.column(col).to_pylist()], dtype=np.float64)
        rng = np.random.default_rng([spec.seed, 1, position])
        values[col] = value_indices(y, base=n, params=names, rng=rng).document()
    return {
        "method": "sobol",
        "estimator": "saltelli_2010",
        "base_points": n,
        "trials": spec.total,
        "params": names,
        "confidence_level": CONFIDENCE,
        "resamples": RESAMPLES,
        "values": values,
    }


@dataclass(frozen=True)
class SobolValue:
    """One value's indices: ``first``/``total`` (shape (params,), NaN where unknown) and their
    intervals' ``*_low``/``*_high``; or only a ``reason`` why there are none."""

    params: list[str]
    first: np.ndarray = field(default_factory=lambda: np.zeros(0))
    first_low: np.ndarray = field(default_factory=lambda: np.zeros(0))
    first_high: np.ndarray = field(default_factory=lambda: np.zeros(0))
    total: np.ndarray = field(default_factory=lambda: np.zeros(0))
    total_low: np.ndarray = field(default_factory=lambda: np.zeros(0))
    total_high: np.ndarray = field(default_factory=lambda: np.zeros(0))
    reason: str = ""

    @property
    def computed(self) -> bool:
        return not self.reason

    def bars(self, order: str, *, width: float = 0.38) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Where ``order``'s bars go ("first_order" left of each param's place x = 0, 1, ...,
        "total_order" right, each ``width`` wide): (x, height, whisker below, whisker above),
        shape (params,); an unknown index is a bar of 0, an unknown bound no whisker (0)."""
        mid, low, high = (
            (self.first, self.first_low, self.first_high)
            if order == "first_order"
            else (self.total, self.total_low, self.total_high)
        )
        x = np.arange(len(self.params), dtype=np.float64) + (-width / 2 if order == "first_order" else width / 2)
        height = np.nan_to_num(mid, nan=0.0)
        below = np.nan_to_num(np.clip(height - low, 0, None), nan=0.0)
        above = np.nan_to_num(np.clip(high - height, 0, None), nan=0.0)
        return x, height, below, above

    def limits(self) -> tuple[float, float]:
        """The y range that shows every bar and whisker: at least -0.05 .. 1.05 (an index is a
        share of the variance; an estimate or a bound may stray past 0 or 1)."""
        tops = np.concatenate([self.first, self.total, self.first_high, self.total_high, [1.0]])
        lows = np.concatenate([self.first, self.total, self.first_low, self.total_low, [0.0]])
        return min(-0.05, float(np.nanmin(lows)) - 0.05), max(1.05, float(np.nanmax(tops)) + 0.05)

    def document(self) -> dict[str, Any]:
        """This value as the metadata's JSON entry."""
        if self.reason:
            return {"reason": self.reason}
        out: dict[str, Any] = {}
        for order, (mid, low, high) in zip(
            ORDERS, ((self.first, self.first_low, self.first_high), (self.total, self.total_low, self.total_high))
        ):
            out[order] = {
                p: {"index": _number(mid[k]), "low": _number(low[k]), "high": _number(high[k])}
                for k, p in enumerate(self.params)
            }
        return out

    @classmethod
    def parse(cls, entry: Any, params: list[str]) -> SobolValue:
        """One entry of the metadata's ``values`` back as arrays (a damaged entry: a reason)."""
        if not isinstance(entry, dict) or "reason" in entry or not all(isinstance(entry.get(o), dict) for o in ORDERS):
            reason = entry.get("reason") if isinstance(entry, dict) else None
            return cls(params, reason=str(reason or "no indices in the file"))

        def arr(order: str, key: str) -> np.ndarray:
            got = [(entry[order].get(p) or {}).get(key) for p in params]
            return np.array([np.nan if v is None else float(v) for v in got], dtype=np.float64)

        first, total = ORDERS
        return cls(
            params,
            first=arr(first, "index"),
            first_low=arr(first, "low"),
            first_high=arr(first, "high"),
            total=arr(total, "index"),
            total_low=arr(total, "low"),
            total_high=arr(total, "high"),
        )


def _number(x: float) -> float | None:
    return float(x) if math.isfinite(float(x)) else None


def value_indices(
    y: np.ndarray,
    *,
    base: int,
    params: list[str],
    rng: np.random.Generator | np.random.RandomState,
    confidence_level: float = CONFIDENCE,
    resamples: int = RESAMPLES,
) -> SobolValue:
    """The Sobol indices of one value from its outputs ``y`` (shape (base x (params + 2),), in
    trial order: A, B, then each AB block; NaN where a trial has none): the point estimates are
    ``scipy.stats.sobol_indices``'s, the intervals a BCa bootstrap over the base points on
    ``rng`` (as ``SobolResult.bootstrap`` does on NumPy's global generator)."""
    from scipy.stats import bootstrap, sobol_indices

    d = len(params)
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (base * (d + 2),):
        return SobolValue(params, reason=f"{y.size} trials, the design has {base * (d + 2)}")
    holes = int(np.count_nonzero(~np.isfinite(y)))
    if holes:
        return SobolValue(
            params,
            reason=f"{holes} of {y.size} trials have no value for it (a trial diverged or failed, or a metric had "
            "nothing to measure): the Saltelli estimators need every trial of the design, so no indices",
        )
    f_a, f_b, f_ab = y[:base].reshape(1, base), y[base : 2 * base].reshape(1, base), y[2 * base :].reshape(d, 1, base)
    if np.ptp(y[: 2 * base]) == 0:
        return SobolValue(params, reason="the value does not vary over the trials: no variance to share out")
    res = sobol_indices(func={"f_A": f_a, "f_B": f_b, "f_AB": f_ab}, n=base)
    mean = np.mean([f_a, f_b], axis=(0, -1)).reshape(-1, 1)  # centred as scipy centres them
    a, b, ab = f_a - mean, f_b - mean, f_ab - mean

    def statistic(idx: np.ndarray) -> np.ndarray:
        return _saltelli_2010(a[:, idx], b[:, idx], ab[..., idx])

    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")  # a degenerate bootstrap (a constant resample) gives NaN
        boot = bootstrap(
            [np.arange(base)],
            statistic=statistic,
            method="BCa",
            n_resamples=resamples,
            confidence_level=confidence_level,
            rng=rng,
        )
    low, high = np.asarray(boot.confidence_interval.low), np.asarray(boot.confidence_interval.high)
    return SobolValue(
        params,
        first=np.asarray(res.first_order, dtype=np.float64).reshape(d),
        first_low=low[0].reshape(d),
        first_high=high[0].reshape(d),
        total=np.asarray(res.total_order, dtype=np.float64).reshape(d),
        total_low=low[1].reshape(d),
        total_high=high[1].reshape(d),
    )


def _saltelli_2010(f_a: np.ndarray, f_b: np.ndarray, f_ab: np.ndarray) -> np.ndarray:
    """First-order and total indices, shape (2, params), of centred outputs f_A, f_B (1, n) and
    f_AB (params, 1, n): Saltelli et al. 2010, Table 2 (b) and (f), as ``scipy.stats`` computes
    them (its estimator is private, and its bootstrap takes no generator: this is the statistic
    it resamples, so the intervals are its own on a seeded generator)."""
    var = np.var([f_a, f_b], axis=(0, -1))
    s = np.mean(f_b * (f_ab - f_a), axis=-1) / var
    st = 0.5 * np.mean((f_a - f_ab) ** 2, axis=-1) / var
    return np.squeeze((s.T, st.T))


@dataclass(frozen=True)
class SobolReading:
    """A results file's ``mjrig.sensitivity`` read back: the ``params`` (names), ``base_points``,
    ``confidence_level`` and each value column's ``SobolValue`` (in file order)."""

    params: list[str]
    base_points: int
    confidence_level: float
    values: dict[str, SobolValue]

    @classmethod
    def parse(cls, text: str) -> SobolReading | None:
        """The reading of the metadata's text; None when it is not a Sobol document."""
        try:
            doc = json.loads(text)
        except ValueError:
            return None
        if not isinstance(doc, dict) or doc.get("method") != "sobol" or not isinstance(doc.get("values"), dict):
            return None
        params = [str(p) for p in doc.get("params", [])]
        return cls(
            params,
            int(doc.get("base_points", 0)),
            float(doc.get("confidence_level", CONFIDENCE)),
            {str(col): SobolValue.parse(entry, params) for col, entry in doc["values"].items()},
        )
