"""The recorder's hand-over between the stepping thread and its writer thread: the blocks queued,
those taken for the row group being written (in flight), and the written blocks' arrays kept for
the next blocks (fresh memory costs a page fault a page).

Accounting only: the caller (``ParquetSink``) holds its lock around every call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Queued", "BlockQueue"]


@dataclass(frozen=True)
class Queued:
    """One block handed over: its ``columns``, its ``rows`` (rows x columns, float64) and the
    ``array`` they are the top-left corner of (kept for the next blocks once written)."""

    columns: tuple[str, ...]
    rows: np.ndarray
    array: np.ndarray
    finish: Callable[[np.ndarray], None] | None = None
    """Work left for the writer's thread on ``array[: len(rows)]`` before the rows are encoded
    (the derived columns, worked out of raw values kept after the columns), or None."""


@dataclass
class BlockQueue:
    """The blocks queued and in flight, in bytes (uncompressed) and rows."""

    items: list[Queued] = field(default_factory=list)
    spare: list[np.ndarray] = field(default_factory=list)
    queued_bytes: int = 0
    queued_rows: int = 0
    inflight_bytes: int = 0
    inflight_rows: int = 0

    def held(self) -> int:
        """Bytes queued or being written."""
        return self.queued_bytes + self.inflight_bytes

    def put(self, item: Queued) -> int:
        """Queue ``item``; returns the bytes queued before it."""
        before = self.queued_bytes
        self.items.append(item)
        self.queued_bytes += item.rows.nbytes
        self.queued_rows += item.rows.shape[0]
        return before

    def take(self, group: int) -> list[Queued]:
        """The queued blocks of the next row group, about ``group`` bytes, now in flight; the rest
        stays queued for the next."""
        taken, n = 0, 0
        while n < len(self.items) and taken < group:
            taken += self.items[n].rows.nbytes
            n += 1
        items, self.items = self.items[:n], self.items[n:]
        rows = sum(q.rows.shape[0] for q in items)
        self.inflight_rows += rows
        self.inflight_bytes += taken
        self.queued_rows -= rows
        self.queued_bytes -= taken
        return items

    def spare_of(self, shape: tuple[int, ...]) -> np.ndarray | None:
        """A kept array of ``shape`` (taken out of the kept ones), or None."""
        kept = next((i for i, a in enumerate(self.spare) if a.shape == shape), None)
        return self.spare.pop(kept) if kept is not None else None

    def keep(self, array: np.ndarray, *, limit: int) -> None:
        """Keep a written block's ``array`` for the next blocks, while the kept ones stay within
        ``limit`` bytes."""
        if sum(a.nbytes for a in self.spare) + array.nbytes <= limit:
            self.spare.append(array)

    def drop(self) -> int:
        """Forget every queued block (the writer failed); returns their rows."""
        rows = self.queued_rows
        self.items, self.queued_rows, self.queued_bytes = [], 0, 0
        return rows
