"""Every step's values of the signals a run's metrics read (``MetricLog``), from which each
metric is worked out over its window at any moment (``mjrig.runtime.analysis.metrics``).

A rig edited while it runs gets a new log seeded from the old one and the live plots' kept rows
(``MetricLog.seed``); a trial stepped side by side with others hands its whole run over (``load``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from mjrig.runtime.analysis.metrics import MODE_KINDS, Metric, metric_unit

__all__ = ["MetricLog"]


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

    def units(self, signal_units: Mapping[str, str]) -> dict[str, str]:
        """Each metric's unit by its ``Metrics/<name>`` column, from its signal's unit in
        ``signal_units`` (by column name; a mode metric's own: Hz, or none for a damping ratio)."""
        return {f"Metrics/{m.name}": metric_unit(m.kind, signal_units.get(m.signal, "")) for m in self.metrics}

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
