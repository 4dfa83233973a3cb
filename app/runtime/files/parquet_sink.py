"""Crash-safe Parquet telemetry writer that writes every row once.

A Parquet file is unreadable until its footer is written, so a recording killed mid-way would
lose everything if the footer were its only index. While recording, a writer thread therefore
turns the queued row blocks, on the other core, into row groups (``_parquet_stream``): each is
encoded once (LZ4 of byte-stream-split values) and appended to the recording's data file, and
its own footer to an index beside it, so a SIGKILL keeps every row group written (``recover(path)`` writes the footer
from the index). ``ParquetSink.close()`` writes the last row group and the footer and moves the
data file onto ``path``: nothing is copied or encoded twice, and the crash-safe copy is the
file itself (plus its index, about a hundred bytes per column and row group).

A row group is written when ``_parquet_pace.group_bytes`` are queued (4 MiB, more for a wide or
a long recording), or ``flush_seconds`` (5 s by default) after the last one: a kill loses at
most that, and row groups stay big enough that the footer (held in memory until close) stays small.

Layout of ``segment_dir(path)`` (``OUT.parquet.parts/`` next to ``OUT.parquet``)::

    meta.json            {"metadata": {str: str}, "units": {column: unit}}
    holder               the lock of the process writing (``out_lock``)
    part-0001.json       the part's columns; a new part starts when the columns change
    part-0001.data       its row groups (the final file, once it has its footer)
    part-0001.index      each row group's offset, length, rows and footer

The file has the union of all columns in order of first appearance ('time' and 'wall_time'
first), null where a column did not exist yet (several parts are merged at close), LZ4 of
byte-stream-split values (``parquet_merge.ENCODING``), the key-value file metadata given by the caller, and units both as field metadata
``{b"unit": ...}`` and as the JSON schema metadata entry ``mjrig.units``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import overload

import numpy as np

from mjrig.runtime.errors import KeptAside, MjrigError, exception_text, output_fault
from mjrig.runtime.files import _parquet_pace as pace
from mjrig.runtime.files._parquet_queue import BlockQueue, Queued, make_spares
from mjrig.runtime.files._parquet_salvage import where_kept
from mjrig.runtime.files._parquet_stream import RowGroupFile, finish_parts, part_groups, parts
from mjrig.runtime.files.cpu_apart import Apart, here
from mjrig.runtime.files.parquet_merge import UNITS_KEY, check_columns
from mjrig.runtime.files.parquet_segments import (
    check_str_map,
    discard,
    recover,
    segment_dir,
    segments,
    sweep_done,
    write_meta,
)

__all__ = ["ParquetSink", "recover", "segment_dir", "parts", "part_groups"]  # the last two: a recording on disk

Finish = Callable[[np.ndarray], None] | None
"""Work left on a block's rows for the writer's thread (``Queued.finish``)."""
SPARE_BYTES = 48 * 2**20
"""Written blocks' memory kept for the next blocks (fresh memory costs a page fault a page:
copying 150 MB of rows into new arrays took 0.09 s, into kept ones a third of that; a block
handed over whole for a kept one of its shape costs no copy at all)."""


class ParquetSink:
    """Streams telemetry blocks to a Parquet file, crash-safe, each row written once.

    Use as a context manager, or call ``close()``; ``close()`` is safe twice.

    Threading: ``write_block()`` and ``set_units()`` are called from the stepping thread and
    never block on disk: they copy the block onto a queue. A daemon writer thread writes the
    queue out as row groups (see the module). A writer that falls behind (the queue past
    ``pace.queue_cap``) makes ``write_block`` wait for it (``wait_when_behind``: a headless run steps
    no faster than its disk; ``backlog`` counts it), or, for a recorder that
    must keep real time, is said in ``behind``; then only blocks past twice the cap are dropped
    (counted in ``rows_dropped``), never what was queued. A write error in the writer thread (disk full,
    folder removed) never raises in the stepping thread: it is recorded in ``error``, writing
    stops, and every row group written so far stays in the file. ``close()`` and the
    properties may be called from any thread.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        metadata: dict[str, str] | None = None,
        units: dict[str, str] | None = None,
        flush_seconds: float = 5.0,
        wait_when_behind: bool = True,
    ) -> None:
        """Create ``segment_dir(path)`` and its ``meta.json`` and start the writer thread.

        path: final Parquet file, written on ``close()`` (replaced if it exists).
        metadata: key-value file metadata, str -> str, stored under the keys as given.
        units: column -> unit (e.g. ``{"time": "s"}``); more can come via ``set_units``.
        flush_seconds: wall-clock seconds (> 0) after which queued rows are written however few.
        wait_when_behind: ``write_block`` waits while the writer is behind (else it returns at
            once and ``behind`` says so).

        Raises MjrigError if the folder cannot be created or holds an earlier recording that was
        never finished (run ``recover(path)`` first).
        """
        self._metadata = check_str_map(metadata, "metadata")
        if UNITS_KEY in self._metadata:
            raise ValueError(f"metadata key {UNITS_KEY!r} is reserved for the units map")
        self._units = check_str_map(units, "units")
        if not flush_seconds > 0:
            raise ValueError(f"flush_seconds must be > 0 s, got {flush_seconds!r}")
        self._path = Path(path)
        self._dir = segment_dir(self._path)
        self._flush_seconds = float(flush_seconds)
        self._wait_when_behind = bool(wait_when_behind)
        if self._dir.is_dir() and (segments(self._dir) or parts(self._dir)):
            raise MjrigError(
                f"{self._dir} holds rows of an unfinished recording; recover {self._path} first or delete that folder"
            )
        sweep_done(self._dir)
        try:
            self._dir.mkdir(parents=True, exist_ok=True)  # the output's folder too, like the CLI
            write_meta(self._dir, self._metadata, self._units)
        except OSError as exc:
            raise MjrigError(f"cannot start recording to {self._path}: {exception_text(exc, with_type=True)}") from exc

        self._cond = threading.Condition()
        self._q = BlockQueue()  # queued, in flight, arrays kept for the next blocks; guarded by _cond
        self.backlog = pace.Backlog()
        """The row groups' size, the queue's cap, the waits for the writer (``waits``, ``waited_seconds``)."""
        self._bytes_in = 0  # uncompressed bytes of the row groups written
        self._meta_dirty = False
        self._closing = False
        self._failed = False  # no more blocks accepted; set by writer error or overflow
        self._error: str | None = None
        self._rows_written = 0
        self._rows_dropped = 0
        self._bytes_written = 0
        self._last_columns: tuple[str, ...] | None = None
        self._stepper_core = -1  # where write_block's caller last ran (``cpu_apart``)
        self._closed = False
        self._files: list[RowGroupFile] = []  # the parts (the writer thread's, then close's)
        self._thread = threading.Thread(target=self._run, name="mjrig-parquet-writer", daemon=True)
        self._thread.start()

    # --- stepping-thread API -------------------------------------------------------------

    @overload
    def write_block(
        self, columns: Sequence[str], block: np.ndarray, *, whole: np.ndarray, finish: Finish = None
    ) -> np.ndarray: ...
    @overload
    def write_block(self, columns: Sequence[str], block: np.ndarray, *, whole: None = None) -> None: ...
    def write_block(
        self, columns: Sequence[str], block: np.ndarray, *, whole: np.ndarray | None = None, finish: Finish = None
    ) -> np.ndarray | None:
        """Queue ``block`` for writing; returns at once, unless the writer is behind and the sink
        waits for it (``wait_when_behind``).

        block: float64 array (rows x len(columns)); NaN means null. Column order: 'time',
        'wall_time', then signals. Without ``whole`` the caller may reuse ``block`` after the
        call (it is copied). Columns may change between calls (a new signal appended); the change starts
        a new part. After a writer error the block is dropped and counted in ``error``.

        whole: the array ``block`` is the top-left corner of, offered instead of a copy. When a
        written block's array of its shape is spare, ``block`` is queued as it is and that
        array is returned; else ``block`` is copied and ``whole`` itself is returned. Either
        way the caller writes its next rows into the array returned, never into the other.

        finish: work left on ``whole[: len(block)]`` before the rows are encoded (the derived
        columns): done on the writer's thread when ``block`` is queued as it is, else here.
        """
        if self._closed or self._closing:
            raise MjrigError(f"telemetry sink for {self._path} is closed")
        cols = columns if type(columns) is tuple else tuple(columns)
        if cols != self._last_columns:
            check_columns(cols)
            self._last_columns = cols
        if np.ndim(block) != 2 or np.shape(block)[1] != len(cols):
            raise ValueError(f"block shape {np.shape(block)} does not match {len(cols)} columns")
        if np.shape(block)[0] == 0:
            return whole
        shape = np.shape(block) if whole is None else whole.shape
        self._stepper_core = here()
        with self._cond:
            spare = self._q.spare_of(shape, limit=SPARE_BYTES)
            if spare is None:
                self._cond.notify_all()  # the writer makes arrays ready for the next blocks
        back: np.ndarray | None  # the array the caller writes its next rows into
        if whole is not None and spare is not None:
            data, base, back = block, whole, spare  # no copy: the caller goes on in a written array
        else:
            if finish is not None and whole is not None:  # here, before the copy leaves its raw values
                finish(whole[: block.shape[0]])
                finish = None
            base = spare if spare is not None else np.empty(shape)
            data, back = base[: block.shape[0], : block.shape[1]], whole
            np.copyto(data, block, casting="unsafe")
        with self._cond:
            if self._closing:  # re-checked under the lock: the writer may have drained already
                raise MjrigError(f"telemetry sink for {self._path} is closed")
            self.backlog.size(data.shape[1], data.nbytes, self._bytes_in)
            if self._wait_when_behind and self._q.held() + data.nbytes > self.backlog.cap:
                self._wait_for_room(data.nbytes)
            if self._failed:
                self._rows_dropped += data.shape[0]
                return whole
            if self._closing:
                raise MjrigError(f"telemetry sink for {self._path} is closed")
            if self._q.held() + data.nbytes > 2 * self.backlog.cap:  # a recorder that keeps real time, far behind
                self.backlog.left_out(data)
                self._rows_dropped += data.shape[0]
                return whole
            before = self._q.put(Queued(cols, data, base, finish))
            if before < self.backlog.group <= self._q.queued_bytes:
                self._cond.notify_all()
        return back

    def _wait_for_room(self, nbytes: int) -> None:
        """Wait (caller holds ``_cond``) until ``nbytes`` more fit the queue, the writer failed
        or the sink closes; counted in ``backlog``."""
        t0 = time.monotonic()
        self._cond.notify_all()  # the writer, should a timer be all it waits for
        while self._q.held() and self._q.held() + nbytes > self.backlog.cap and not self._failed and not self._closing:
            self._cond.wait(0.25)
        self.backlog.waited(time.monotonic() - t0)

    def add_metadata(self, metadata: dict[str, str]) -> None:
        """Add key-value file metadata now (e.g. a run's metrics, known at its end)."""
        metadata = check_str_map(metadata, "metadata")
        with self._cond:
            self._metadata.update(metadata)
            self._meta_dirty = True  # meta.json again, for a recovery

    def set_units(self, units: dict[str, str]) -> None:
        """Add or change units (column -> unit), e.g. for a column that appears mid-recording."""
        units = check_str_map(units, "units")
        with self._cond:
            self._units.update(units)
            self._meta_dirty = True

    # --- state ---------------------------------------------------------------------------

    @property
    def path(self) -> Path:
        """The final Parquet file."""
        return self._path

    @property
    def rows_written(self) -> int:
        """Rows in whole row groups on disk so far (after close: rows in the final file)."""
        return self._rows_written

    @property
    def pending_rows(self) -> int:
        """Rows queued but not yet on disk (a producer faster than the disk can throttle on it)."""
        return self._q.queued_rows + self._q.inflight_rows

    @property
    def bytes_written(self) -> int:
        """Bytes of row groups written so far; after close, the size of the final file."""
        return self._bytes_written

    @property
    def rows_dropped(self) -> int:
        """Rows handed over that are not in the file (the writer failed, or far behind)."""
        return self._rows_dropped

    @property
    def behind(self) -> str | None:
        """A recorder that does not wait (``wait_when_behind=False``): one line while the writer
        is behind or after it had to leave rows out (``recording behind: ...``), else None."""
        with self._cond:
            return self.backlog.status(self._q.held())

    @property
    def error(self) -> str | None:
        """Last write error (one line, e.g. disk full), or None. Once set, writing has stopped."""
        if self._error is not None and self._rows_dropped:
            return f"{self._error} ({self._rows_dropped} rows not recorded)"
        return self._error

    # --- lifecycle -----------------------------------------------------------------------

    def close(self) -> Path:
        """Write what is queued, the footer, move the file onto ``path``, remove the folder;
        returns ``path``. Safe twice (the second call only returns the path). Raises MjrigError
        (one line) when no valid file can be written; the folder is then kept for ``recover``."""
        if self._closed:
            return self._path
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join()
        self._closed = True
        if not self._dir.is_dir():
            for f in self._files:
                f.close()
            if self._rows_written:
                raise MjrigError(f"segment folder {self._dir} vanished; {self._rows_written} recorded rows are lost")
            stems = []
        else:
            stems = parts(self._dir)
        with self._cond:
            metadata, units = dict(self._metadata), dict(self._units)
        try:
            if not stems:  # nothing was recorded: an empty file
                self._dir.mkdir(parents=True, exist_ok=True)
                self._files.append(RowGroupFile(self._dir, 1, ("time", "wall_time"), metadata, units))
                stems = parts(self._dir)
            rows = finish_parts(stems, self._path, metadata, units, open_parts={f.stem: f for f in self._files})
        except (OSError, ValueError) as exc:
            fault = output_fault(exc)
            raise KeptAside(
                f"cannot write {self._path}: {fault.cause}; {where_kept(self._dir)}; `mjrig recover "
                f"{self._path}` once {fault.once or 'the cause is fixed'}"
            ) from exc
        discard(self._dir)
        if rows != self._rows_written and self._error is None:
            self._error = f"only {rows} of {self._rows_written} recorded rows could be written into {self._path}"
        self._rows_written = rows
        self._bytes_written = self._path.stat().st_size
        return self._path

    def __enter__(self) -> ParquetSink:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- writer thread -------------------------------------------------------------------

    def _due(self, since: float) -> bool:
        """Whether the queue makes a row group now (caller holds ``_cond``)."""
        return (
            self._closing
            or self._q.queued_bytes >= self.backlog.group
            or (self._q.queued_rows > 0 and time.monotonic() - since >= self._flush_seconds)
        )

    def _run(self) -> None:
        since = time.monotonic()
        apart = Apart()  # this thread off the stepping thread's core (``cpu_apart``)
        while True:
            with self._cond:
                while not self._due(since) and self._q.wanted is None:
                    self._cond.wait(min(self._flush_seconds, 0.25))
                wanted = None if self._due(since) else self._q.take_wanted()
            if wanted is not None:  # no row group due: arrays made ready for the next blocks
                make_spares(self._q, self._cond, *wanted, limit=SPARE_BYTES, due=partial(self._due, since))
                continue
            with self._cond:
                apart.keep_off(self._stepper_core, behind=self._q.queued_bytes > self.backlog.cap // 4)
                items = self._q.take(self.backlog.group)
                last = self._closing and not self._q.items
                meta = (dict(self._metadata), dict(self._units)) if self._meta_dirty else None
                self._meta_dirty = False
            since = time.monotonic()
            try:
                # After a failure write_block drops blocks, so `items` is empty then.
                for q in items:  # what the stepping thread left for this one (the derived columns)
                    if q.finish is not None:
                        q.finish(q.array[: q.rows.shape[0]])
                self._write_items(items)
                if meta is not None and not self._failed:
                    write_meta(self._dir, *meta)
                with self._cond:  # their memory takes the next blocks
                    for q in items:
                        self._q.keep(q.array, limit=SPARE_BYTES)
            except Exception as exc:  # noqa: BLE001 - the stepping thread must never see it
                with self._cond:
                    self._rows_dropped += self._q.inflight_rows
                    self._q.inflight_rows = 0
                    self._fail(exception_text(exc, with_type=True))
            with self._cond:
                self._q.inflight_bytes = 0
                self._cond.notify_all()  # a write_block waiting for room
            if last:
                return

    def _write_items(self, items: list[Queued]) -> None:
        """Write queued blocks as row groups, one per run of blocks with equal columns (a new
        part when the columns change)."""
        if items and not self._dir.is_dir():  # its open files would take rows nothing could read
            raise FileNotFoundError(f"the recording's folder {self._dir} was removed")
        start = 0
        for i in range(1, len(items) + 1):
            if i == len(items) or items[i].columns != items[start].columns:
                cols, blocks = items[start].columns, [q.rows for q in items[start:i]]
                if not self._files or self._files[-1].columns != cols:
                    if self._files:
                        self._files[-1].close()  # a whole file with its footer
                    with self._cond:
                        metadata, units = dict(self._metadata), dict(self._units)
                    self._files.append(RowGroupFile(self._dir, len(self._files) + 1, cols, metadata, units))
                size = self._files[-1].append(blocks)
                rows = sum(b.shape[0] for b in blocks)
                with self._cond:
                    self._bytes_in += sum(b.nbytes for b in blocks)
                    self._rows_written += rows
                    self._bytes_written += size
                    self._q.inflight_rows -= rows
                start = i

    def _fail(self, message: str) -> None:
        """Stop accepting blocks and drop the queue; caller holds ``_cond``."""
        self._error = message
        self._failed = True
        self._rows_dropped += self._q.drop()
        self._cond.notify_all()  # a write_block waiting for room
