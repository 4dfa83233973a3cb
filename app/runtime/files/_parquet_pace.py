"""How big the recorder's row groups are and how much it queues: sizes that hold for any width.

A row group is written once ``group_bytes`` are queued. Its row floor (fewer, wider groups cost
Parquet less per column chunk) adapts to the width: 4096 rows of a 600-body model's 9,606 columns
would be 315 MB, past any sane queue, so the floor is what fits ``FLOOR_BYTES``. A long
recording's groups grow with it, so its footer (kept in memory until close, and read whole by
whoever opens the file) stays small over hours. ``queue_cap`` is always several row groups: past it the writer is
behind (``ParquetSink`` then makes the stepping wait, or says so).

GUI-free; any thread.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Backlog", "group_bytes", "queue_cap"]

ROW_GROUP_BYTES = 4 * 2**20
"""Queued bytes (uncompressed) that make a row group at once, about 15 ms of encoding..."""
ROW_GROUP_ROWS = 4096
"""... but never fewer rows than this, while they fit ``FLOOR_BYTES``: each row group costs
Parquet a column chunk (and the file a sync) per column, so a humanoid's 605 columns in 4 MiB
groups (870 rows) spent a third of the writer's time on them; 4096 rows (20 MiB there) a tenth.
A narrow recording keeps 4 MiB groups."""
FLOOR_BYTES = 64 * 2**20
"""The row floor shrinks to what fits this, down to ``ROW_GROUP_MIN_ROWS``: 4096 rows of a
600-body model's 9,606 columns are 315 MB, 873 rows 64 MiB. Wide groups of few rows spend the
writer on its per-column-chunk cost: 9,602 columns encode at 112 MB/s in groups of 419 rows
(32 MiB), 193 MB/s in groups of 838 (64 MiB), so a 1,000-body recording's writer keeps up on a
busy machine."""
ROW_GROUP_MIN_ROWS = 64
LONG_GROUP_BYTES = 16 * 2**20
"""A long recording's row groups grow to 1/``GROUPS_SCALE`` of the bytes written so far, up to
this (from 256 MiB written on), so an hour's footer stays small: the writer keeps about 40 bytes
per column chunk for it (``_parquet_tail``), and a reader that opens the file holds the whole
footer too (pyarrow about 860 bytes per column chunk). 4 MiB groups of 80 columns at 23,000 rows
a second are 12,600 row groups an hour, 16 MiB groups 3,200. Bigger ones would cost the writer
as much memory again per row group (its queue and the columns being encoded)."""
GROUPS_SCALE = 16
MAX_QUEUED_BYTES = 256 * 2**20
"""Queued bytes (row groups being written included) past which ``write_block`` waits for the
writer (``wait_when_behind``), or, in a recorder that must keep real time, says it is behind
(``behind``); more when a row group is bigger (``QUEUED_GROUPS`` of them), never past
``QUEUED_BOUND`` unless two row groups need it."""
QUEUED_GROUPS = 4
QUEUED_BOUND = 2**30


def group_bytes(width: int, written: int) -> int:
    """Uncompressed bytes (queued) that make a row group of ``width`` float64 columns, after
    ``written`` bytes of the recording: ``ROW_GROUP_BYTES``, or a long recording's share of what
    it wrote (``LONG_GROUP_BYTES`` at most), and never fewer rows than the row floor."""
    row = 8 * max(width, 1)
    floor_rows = min(ROW_GROUP_ROWS, max(ROW_GROUP_MIN_ROWS, FLOOR_BYTES // row))
    target = max(ROW_GROUP_BYTES, min(LONG_GROUP_BYTES, written // GROUPS_SCALE))
    return max(target, floor_rows * row)


def queue_cap(group: int, block: int) -> int:
    """Queued bytes (in the writer's hands included) past which the writer is behind: several
    row groups of ``group`` bytes, within ``QUEUED_BOUND``, and always two row groups and two
    blocks of ``block`` bytes (so a writer waiting for a whole row group is never behind)."""
    return max(min(QUEUED_BOUND, max(MAX_QUEUED_BYTES, QUEUED_GROUPS * group)), 2 * group + 2 * block)


class Backlog:
    """What the stepping thread knows of the writer's backlog: the row groups' size and the
    queue's cap for the blocks handed over, the waits for the writer, the rows left out."""

    def __init__(self) -> None:
        self.group = ROW_GROUP_BYTES  # a row group at this much queued (``group_bytes``)
        self.cap = MAX_QUEUED_BYTES  # queued and in-flight bytes past which the writer is behind
        self.waits = 0  # times the stepping waited for the writer
        self.waited_seconds = 0.0
        self._left_out: list[float] = []  # [rows, first time, last time] of blocks left out

    def size(self, width: int, block: int, written: int) -> None:
        """Sizes for blocks of ``width`` columns and ``block`` bytes, ``written`` bytes in."""
        self.group = group_bytes(width, written)
        self.cap = queue_cap(self.group, block)

    def waited(self, seconds: float) -> None:
        """The stepping waited ``seconds`` (wall) for the writer."""
        self.waits += 1
        self.waited_seconds += seconds

    def left_out(self, block: np.ndarray) -> None:
        """``block`` (rows x columns, 'time' first) was not queued: the writer was far behind."""
        first, last = float(block[0, 0]), float(block[-1, 0])
        d = self._left_out
        self._left_out = [d[0] + len(block), d[1], last] if d else [float(len(block)), first, last]

    def status(self, held: int) -> str | None:
        """One line while ``held`` bytes are past the cap, or once rows were left out; else None."""
        if self._left_out:
            rows, first, last = self._left_out
            return (
                f"recording behind: {int(rows)} rows not recorded (t = {first:.6g} to {last:.6g} s), "
                f"the disk could not keep up; {held / 1e6:.0f} MB waiting for it"
            )
        if held > self.cap:
            return f"recording behind: {held / 1e6:.0f} MB waiting for the disk, every row kept"
        return None
