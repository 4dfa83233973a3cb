"""The rows a session hands to the live plots, across threads.

A bounded queue of telemetry blocks (columns, rows x columns float64): the newest ``limit`` rows
are kept, older blocks drop out. When a model is opened the session puts a *new-model mark* in
the queue (a block of no rows whose first column is ``NEW_MODEL`` and second the model's path),
so a panel clears its plots exactly between the old model's rows and the new one's, whatever
its snapshot says at that moment. A mark is never dropped.

Threading: any thread (one lock).
"""
from __future__ import annotations

import collections
import threading

import numpy as np

__all__ = ["RowQueue", "NEW_MODEL", "is_new_model"]

NEW_MODEL = "#new-model"
"""First column of the mark that says the rows after it are of a newly opened model."""


def is_new_model(columns: list[str]) -> bool:
    """Whether a block with these ``columns`` is a new-model mark."""
    return bool(columns) and columns[0] == NEW_MODEL


class RowQueue:
    """Blocks of plot rows, oldest first; at most ``limit`` rows (marks are kept)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._blocks: collections.deque[tuple[list[str], np.ndarray]] = collections.deque()
        self._count = 0
        self._lock = threading.Lock()

    def push(self, columns: list[str], block: np.ndarray) -> None:
        """Add a block; drop the oldest ones beyond ``limit`` rows."""
        with self._lock:
            self._blocks.append((columns, block))
            self._count += len(block)
            kept: list[tuple[list[str], np.ndarray]] = []
            while self._count > self.limit and len(self._blocks) > 1:
                cols, old = self._blocks.popleft()
                self._count -= len(old)
                if is_new_model(cols):
                    kept.append((cols, old))
            self._blocks.extendleft(reversed(kept[-1:]))  # the latest mark dropped still says it

    def mark_new_model(self, path: str) -> None:
        """Say that the rows from now on are of a newly opened model (at ``path``)."""
        self.push([NEW_MODEL, path], np.empty((0, 2)))

    def drain(self) -> list[tuple[list[str], np.ndarray]]:
        """Every block since the last call, oldest first."""
        with self._lock:
            out = list(self._blocks)
            self._blocks.clear()
            self._count = 0
        return out
