"""The live plots' data: signal names split for the tree, a bounded history of telemetry rows,
and min/max decimation (GUI-free, numpy only)."""
from __future__ import annotations

import numpy as np

__all__ = ["SignalHistory", "decimate_minmax", "split_signal"]


def split_signal(name: str) -> tuple[str, str, str]:
    """``"Sites/arm/tip:pos_x"`` -> ``("Sites", "arm/tip", "pos_x")``.

    Category is the text before the first ``/``, attribute the text after the last ``:``, and the
    entity everything between (entity names may contain ``/``). Missing parts are ``""``.
    """
    category, _, rest = name.partition("/")
    entity, colon, attribute = rest.rpartition(":")
    if not colon:  # no attribute: the whole rest names the entity
        entity, attribute = rest, ""
    return category, entity, attribute


def decimate_minmax(x: np.ndarray, y: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Reduce a NaN-free series to at most ``max_points`` samples (``max_points`` >= 2).

    Splits the samples into equal buckets and keeps each bucket's minimum and maximum in time
    order, so peaks survive (a plain stride would alias them away). The kept points are original
    samples: ``y[i]`` still belongs to ``x[i]``.
    """
    n = len(x)
    if n <= max_points:
        return x, y
    per = -(-n // (max_points // 2))       # samples per bucket (ceil)
    buckets = -(-n // per)                 # buckets actually needed (ceil) <= max_points // 2
    pad = buckets * per - n
    yp = np.concatenate((y, np.full(pad, y[-1]))) if pad else y
    blocks = yp.reshape(buckets, per)
    base = np.arange(buckets) * per
    i_min = np.minimum(base + blocks.argmin(axis=1), n - 1)  # padding repeats the last sample
    i_max = np.minimum(base + blocks.argmax(axis=1), n - 1)
    idx = np.column_stack((np.minimum(i_min, i_max), np.maximum(i_min, i_max))).ravel()
    return x[idx], y[idx]


class SignalHistory:
    """Bounded ring of the last ``capacity`` telemetry rows, all columns, float64 (NaN = no value).

    Memory is ``capacity`` x number of columns, whatever the run length. A column first seen in a
    later block is added at the end and is NaN for the older rows. A block that starts at or
    before the last stored row replaces the rows from its first time on (a run branched from a
    past instant), or all of them when it starts before the first (a reset, another model).
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.columns: list[str] = []
        self._index: dict[str, int] = {}
        self._buf = np.empty((capacity, 0))
        self._start = 0   # ring index of the oldest row
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def clear(self) -> None:
        """Forget every row and column."""
        self.columns, self._index = [], {}
        self._buf = np.empty((self.capacity, 0))
        self._start = self._count = 0

    def first_time(self) -> float | None:
        """Simulated time (s) of the oldest row kept, or None when empty."""
        if not self._count:
            return None
        return float(self._buf[self._start, self._index["time"]])

    def last_time(self) -> float | None:
        """Simulated time (s) of the newest row, or None when empty."""
        if not self._count:
            return None
        return float(self._buf[(self._start + self._count - 1) % self.capacity, self._index["time"]])

    def append(self, columns: list[str], block: np.ndarray) -> None:
        """Store ``block`` (rows x ``len(columns)``, must include ``time``); the oldest rows drop out."""
        block = np.asarray(block, dtype=np.float64)
        if block.ndim != 2 or block.shape[1] != len(columns) or "time" not in columns:
            raise ValueError(f"block of shape {block.shape} does not match {len(columns)} columns "
                             "including 'time'")
        if not len(block):
            return
        last, first_t = self.last_time(), float(block[0, columns.index("time")])
        if last is not None and first_t <= last:
            self._drop_from(first_t)  # a branch from a past instant: its old future goes
        cols = [self._column(name) for name in columns]
        block = block[-self.capacity:]
        n, cap = len(block), self.capacity
        rows = (self._start + self._count + np.arange(n)) % cap
        self._buf[rows] = np.nan               # columns this block lacks have no value here
        self._buf[np.ix_(rows, cols)] = block
        count = min(self._count + n, cap)
        self._start = (self._start + self._count + n - count) % cap
        self._count = count

    def window(self, t0: float, t1: float, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Rows with ``t0 <= time <= t1`` (s): times (k,) and values (k, len(names)), NaN if unknown."""
        if not self._count:
            return np.empty(0), np.empty((0, len(names)))
        t = self._ordered(self._index["time"])
        lo, hi = np.searchsorted(t, t0, "left"), np.searchsorted(t, t1, "right")
        rows = (self._start + np.arange(lo, hi)) % self.capacity
        out = np.full((hi - lo, len(names)), np.nan)
        for j, name in enumerate(names):
            c = self._index.get(name)
            if c is not None:
                out[:, j] = self._buf[rows, c]
        return t[lo:hi], out

    def _drop_from(self, t: float) -> None:
        """Forget the rows at or after ``t`` (s); all of them if ``t`` is before the first."""
        times = self._ordered(self._index["time"])
        keep = int(np.searchsorted(times, t, "left"))
        if keep == 0:
            self.clear()
        else:
            self._count = keep

    def _ordered(self, c: int) -> np.ndarray:
        """Column ``c`` oldest-first."""
        end = self._start + self._count
        if end <= self.capacity:
            return self._buf[self._start:end, c]
        return np.concatenate((self._buf[self._start:, c], self._buf[:end - self.capacity, c]))

    def _column(self, name: str) -> int:
        c = self._index.get(name)
        if c is None:
            c = self._index[name] = len(self.columns)
            self.columns.append(name)
            self._buf = np.hstack((self._buf, np.full((self.capacity, 1), np.nan)))
        return c
