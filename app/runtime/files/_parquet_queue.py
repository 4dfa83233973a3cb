"""The recorder's hand-over between the stepping thread and its writer thread: the blocks queued,
those taken for the row group being written (in flight), and the written blocks' arrays kept for
the next blocks (fresh memory costs a page fault a page).

Accounting only: the caller (``ParquetSink``) holds its lock around every call, but for
``make_spares``, which takes it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Queued", "BlockQueue", "make_spares"]


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
    wanted: tuple[tuple[int, ...], int] | None = None
    """(shape, how many) arrays the writer's thread is to make ready for the next blocks: a block
    found none spare (``spare_of``), and copying into fresh memory faults its pages in on the
    stepping thread (20 ms a humanoid's block of 1,000 rows on a virtual machine)."""

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

    def spare_of(self, shape: tuple[int, ...], *, limit: int) -> np.ndarray | None:
        """A kept array of ``shape`` (taken out of the kept ones), or None: then as many as fit
        ``limit`` bytes (eight at most) are ``wanted``."""
        kept = next((i for i, a in enumerate(self.spare) if a.shape == shape), None)
        if kept is not None:
            return self.spare.pop(kept)
        nbytes = 8 * int(np.prod(shape))
        self.wanted = (shape, min(8, limit // max(1, nbytes)))
        return None

    def take_wanted(self) -> tuple[tuple[int, ...], int] | None:
        """What is ``wanted``, now no longer."""
        wanted, self.wanted = self.wanted, None
        return wanted

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


def make_spares(
    queue: BlockQueue,
    lock: threading.Condition,
    shape: tuple[int, ...],
    count: int,
    *,
    limit: int,
    due: Callable[[], bool],
) -> None:
    """Up to ``count`` arrays of ``shape`` kept in ``queue`` for the next blocks (within ``limit``
    bytes), their pages faulted in by the calling thread (the writer's); stops when a row group
    is ``due()`` (asked holding ``lock``, which guards ``queue``)."""
    nbytes = 8 * int(np.prod(shape))
    for _ in range(count):
        with lock:
            if due() or sum(a.nbytes for a in queue.spare) + nbytes > limit:
                return
        array = np.empty(shape)
        array.fill(0.0)
        with lock:
            queue.keep(array, limit=limit)
