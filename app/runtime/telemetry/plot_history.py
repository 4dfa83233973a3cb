"""The live plots' data: signal names split for the tree, a bounded history of telemetry rows,
and min/max decimation (numpy only; the session keeps one history of every signal, the panel one
of the plotted signals)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = [
    "HistoryFetch",
    "SignalHistory",
    "decimate_minmax",
    "split_signal",
    "NEW_MODEL",
    "FILL",
    "is_new_model",
    "is_fill",
]

HistoryFetch = Callable[[Sequence[str]], tuple[list[str], np.ndarray, np.ndarray]]
"""``fetch(names)`` -> (the names it has, times (s), values rows x names): a signal's whole history
(a replay's recording, read when the plots tick a signal they kept no rows of)."""

NEW_MODEL = "#new-model"
"""First column of the mark that says the rows after it are of a newly opened model."""
FILL = "#fill"
"""First column of a block of past values of signals just ticked (its column is NaN); the other
columns are ``time`` and those signals."""


def is_new_model(columns: list[str]) -> bool:
    """Whether a block with these ``columns`` is a new-model mark."""
    return bool(columns) and columns[0] == NEW_MODEL


def is_fill(columns: list[str]) -> bool:
    """Whether a block with these ``columns`` holds past values of signals just ticked."""
    return bool(columns) and columns[0] == FILL


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
    per = -(-n // (max_points // 2))  # samples per bucket (ceil)
    buckets = -(-n // per)  # buckets actually needed (ceil) <= max_points // 2
    pad = buckets * per - n
    yp = np.concatenate((y, np.full(pad, y[-1]))) if pad else y
    blocks = yp.reshape(buckets, per)
    base = np.arange(buckets) * per
    i_min = np.minimum(base + blocks.argmin(axis=1), n - 1)  # padding repeats the last sample
    i_max = np.minimum(base + blocks.argmax(axis=1), n - 1)
    idx = np.column_stack((np.minimum(i_min, i_max), np.maximum(i_min, i_max))).ravel()
    return x[idx], y[idx]


class SignalHistory:
    """Bounded ring of the last telemetry rows, float64 (NaN = no value), oldest first.

    ``capacity`` rows at most; with ``budget`` (values), at most ``budget // columns`` rows as
    well (but at least ``min_rows``), so a model of thousands of signals keeps a few seconds of
    all of them and a small one the whole ``capacity``. Columns first seen in a later block are
    added together (the buffer grows by half again, never once per column) and are NaN for the
    older rows. Time must rise within the kept rows: a block is split where its time does not
    rise, and a piece that starts at or before the last stored row replaces the rows from its
    first time on (a run branched from a past instant), or all of them when it starts before the
    first (a Reset, another model). ``fill`` adds columns to rows already kept.
    """

    def __init__(self, capacity: int, *, budget: int | None = None, min_rows: int = 1000) -> None:
        self.capacity = capacity
        self.budget, self.min_rows = budget, min(min_rows, capacity)
        self.columns: list[str] = []
        self._index: dict[str, int] = {}
        self._rows = capacity  # the ring's length now (the budget may shorten it)
        self._buf = np.empty((0, 0))
        self._start = 0  # ring index of the oldest row
        self._count = 0

    def __len__(self) -> int:
        return self._count

    @property
    def rows(self) -> int:
        """Rows kept at most with the columns known now."""
        return self._rows

    def clear(self) -> None:
        """Forget every row and column."""
        self.columns, self._index = [], {}
        self._rows, self._buf = self.capacity, np.empty((0, 0))
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
        return float(self._buf[(self._start + self._count - 1) % self._rows, self._index["time"]])

    def append(self, columns: list[str], block: np.ndarray) -> None:
        """Store ``block`` (rows x ``len(columns)``, must include ``time``); the oldest rows drop out."""
        block = self._checked(columns, block)
        if not len(block):
            return
        t = block[:, columns.index("time")]
        cuts = np.flatnonzero(np.diff(t) <= 0) + 1  # time went back: a Reset or a branch
        for piece in np.split(block, cuts) if len(cuts) else (block,):
            self._append_rising(columns, piece, float(piece[0, columns.index("time")]))

    def fill(self, columns: list[str], block: np.ndarray) -> None:
        """Set ``columns`` (``time`` and signals) of the kept rows whose time is in ``block``
        (exactly): a signal ticked later gets the values kept elsewhere for the same instants."""
        block = self._checked(columns, block)
        if not self._count or not len(block):
            return
        kept = self._ordered(self._index["time"])
        t = block[:, columns.index("time")]
        at = np.minimum(np.searchsorted(kept, t), self._count - 1)
        hit = kept[at] == t
        names = [n for n in columns if n != "time"]
        self._grow(names)
        rows = (self._start + at[hit]) % self._rows
        for name in names:
            self._buf[rows, self._index[name]] = block[hit, columns.index(name)]

    def window(self, t0: float, t1: float, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Rows with ``t0 <= time <= t1`` (s): times (k,) and values (k, len(names)), NaN if unknown."""
        if not self._count:
            return np.empty(0), np.empty((0, len(names)))
        t = self._ordered(self._index["time"])
        lo, hi = np.searchsorted(t, t0, "left"), np.searchsorted(t, t1, "right")
        rows = (self._start + np.arange(lo, hi)) % self._rows
        out = np.full((hi - lo, len(names)), np.nan)
        for j, name in enumerate(names):
            c = self._index.get(name)
            if c is not None:
                out[:, j] = self._buf[rows, c]
        return t[lo:hi], out

    @staticmethod
    def _checked(columns: list[str], block: np.ndarray) -> np.ndarray:
        block = np.asarray(block, dtype=np.float64)
        if block.ndim != 2 or block.shape[1] != len(columns) or "time" not in columns:
            raise ValueError(f"block of shape {block.shape} does not match {len(columns)} columns including 'time'")
        return block

    def _append_rising(self, columns: list[str], block: np.ndarray, first_t: float) -> None:
        last = self.last_time()
        if last is not None and first_t <= last:
            self._drop_from(first_t)  # a branch from a past instant: its old future goes
        self._grow(columns)
        cols = np.array([self._index[name] for name in columns], dtype=np.intp)
        block = block[-self._rows :]
        n, cap = len(block), self._rows
        rows = (self._start + self._count + np.arange(n)) % cap
        self._buf[rows, : len(self.columns)] = np.nan  # columns this block lacks have no value here
        self._buf[np.ix_(rows, cols)] = block
        count = min(self._count + n, cap)
        self._start = (self._start + self._count + n - count) % cap
        self._count = count

    def _grow(self, names: list[str]) -> None:
        """Give every name of ``names`` a column; the buffer is laid out again (oldest row first)
        only when the columns outgrow it, to half again as many as needed."""
        new = [n for n in dict.fromkeys(names) if n not in self._index]
        for name in new:
            self._index[name] = len(self.columns)
            self.columns.append(name)
        if len(self.columns) <= self._buf.shape[1] and self._buf.shape[0] == self._rows:
            return
        width = len(self.columns) + len(self.columns) // 2 + 8
        rows = self.capacity
        if self.budget is not None:
            rows = max(self.min_rows, min(self.capacity, self.budget // width))
        keep = min(self._count, rows)
        buf = np.full((rows, width), np.nan)
        if keep:
            order = (self._start + self._count - keep + np.arange(keep)) % self._rows
            buf[:keep, : self._buf.shape[1]] = self._buf[order]
        self._buf, self._rows, self._start, self._count = buf, rows, 0, keep

    def _drop_from(self, t: float) -> None:
        """Forget the rows at or after ``t`` (s); all of them if ``t`` is before the first."""
        times = self._ordered(self._index["time"])
        keep = int(np.searchsorted(times, t, "left"))
        if keep == 0:
            self._start = self._count = 0  # the columns stay: the same rig goes on
        else:
            self._count = keep

    def _ordered(self, c: int) -> np.ndarray:
        """Column ``c`` oldest-first."""
        end = self._start + self._count
        if end <= self._rows:
            return self._buf[self._start : end, c]
        return np.concatenate((self._buf[self._start :, c], self._buf[: end - self._rows, c]))
