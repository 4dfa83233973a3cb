"""Crash-safe Parquet telemetry writer that writes every row once.

A Parquet file is unreadable until its footer is written, so a recording killed mid-way would
lose everything if the footer were its only index. While recording, a writer thread therefore
turns the queued row blocks, on the other core, into row groups (``parquet_stream``): each is
encoded once (Snappy) and appended to the recording's data file, and its own footer to an index
beside it, so a SIGKILL keeps every row group written (``recover(path)`` writes the footer
from the index). ``ParquetSink.close()`` writes the last row group and the footer and moves the
data file onto ``path``: nothing is copied or encoded twice, and the crash-safe copy is the
file itself (plus its index, about a hundred bytes per column and row group).

A row group is written when ``ROW_GROUP_BYTES`` are queued, or ``flush_seconds`` (5 s by
default) after the last one: a kill loses at most that, and row groups stay big enough that the
footer (about 100 bytes a column and row group, held in memory until close) stays small.

Layout of ``segment_dir(path)`` (``OUT.parquet.parts/`` next to ``OUT.parquet``)::

    meta.json            {"metadata": {str: str}, "units": {column: unit}}
    holder               the lock of the process writing (``out_lock``)
    part-0001.json       the part's columns; a new part starts when the columns change
    part-0001.data       its row groups (the final file, once it has its footer)
    part-0001.index      each row group's offset, length, rows and footer

The file has the union of all columns in order of first appearance ('time' and 'wall_time'
first), null where a column did not exist yet (several parts are merged at close), Snappy
compression, the key-value file metadata given by the caller, and units both as field metadata
``{b"unit": ...}`` and as the JSON schema metadata entry ``mjrig.units``.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mjrig.runtime.cpu_apart import Apart, here
from mjrig.runtime.errors import MjrigError, OutputError, exception_text
from mjrig.runtime.parquet_merge import UNITS_KEY, check_columns
from mjrig.runtime.parquet_segments import (check_str_map as _check_str_map, discard, recover, segment_dir, segments,
                                            sweep_done, write_meta as _write_meta)
from mjrig.runtime.parquet_stream import RowGroupFile, finish_parts, parts

__all__ = ["ParquetSink", "recover", "segment_dir"]

ROW_GROUP_BYTES = 4 * 2**20
"""Queued bytes (uncompressed) that make a row group at once, about 15 ms of encoding..."""
ROW_GROUP_ROWS = 4096
"""... but never fewer rows than this: each row group costs Parquet a column chunk (and the file
a sync) per column, so a humanoid's 605 columns in 4 MiB groups (870 rows) spent a third of the
writer's time on them; 4096 rows (20 MiB there) a tenth. A narrow recording keeps 4 MiB groups."""
MAX_QUEUED_BYTES = 256 * 2**20
"""Queued bytes past which the recording stops with an error instead of growing memory."""
SPARE_BYTES = 48 * 2**20
"""Written blocks' memory kept for the next blocks (fresh memory costs a page fault a page:
copying 150 MB of rows into new arrays took 0.09 s, into kept ones a third of that; a block
handed over whole for a kept one of its shape costs no copy at all)."""

class ParquetSink:
    """Streams telemetry blocks to a Parquet file, crash-safe, each row written once.

    Use as a context manager, or call ``close()``; ``close()`` is safe twice.

    Threading: ``write_block()`` and ``set_units()`` are called from the stepping thread and
    never block on disk: they copy the block onto a queue. A daemon writer thread writes the
    queue out as row groups (see the module). A write error in the writer thread (disk full,
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
    ) -> None:
        """Create ``segment_dir(path)`` and its ``meta.json`` and start the writer thread.

        path: final Parquet file, written on ``close()`` (replaced if it exists).
        metadata: key-value file metadata, str -> str, stored under the keys as given.
        units: column -> unit (e.g. ``{"time": "s"}``); more can come via ``set_units``.
        flush_seconds: wall-clock seconds (> 0) after which queued rows are written however few.

        Raises MjrigError if the folder cannot be created or holds an earlier recording that was
        never finished (run ``recover(path)`` first).
        """
        self._metadata = _check_str_map(metadata, "metadata")
        if UNITS_KEY in self._metadata:
            raise ValueError(f"metadata key {UNITS_KEY!r} is reserved for the units map")
        self._units = _check_str_map(units, "units")
        if not flush_seconds > 0:
            raise ValueError(f"flush_seconds must be > 0 s, got {flush_seconds!r}")
        self._path = Path(path)
        self._dir = segment_dir(self._path)
        self._flush_seconds = float(flush_seconds)
        if self._dir.is_dir() and (segments(self._dir) or parts(self._dir)):
            raise MjrigError(f"{self._dir} holds rows of an unfinished recording; "
                             f"recover {self._path} first or delete that folder")
        sweep_done(self._dir)
        try:
            self._dir.mkdir(parents=True, exist_ok=True)  # the output's folder too, like the CLI
            _write_meta(self._dir, self._metadata, self._units)
        except OSError as exc:
            raise MjrigError(f"cannot start recording to {self._path}: {exception_text(exc, with_type=True)}") from exc

        self._cond = threading.Condition()
        self._queue: list[tuple[tuple[str, ...], np.ndarray, np.ndarray]] = []  # (columns, rows, their array); _cond
        self._spare: list[np.ndarray] = []  # written blocks' arrays, for the next blocks; guarded by _cond
        self._queued_bytes = 0  # in _queue
        self._queued_rows = 0
        self._group_bytes = ROW_GROUP_BYTES  # a row group at this much queued (``ROW_GROUP_ROWS``)
        self._inflight_rows = 0  # taken off the queue by the writer, not yet on disk
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

    def write_block(self, columns: Sequence[str], block: np.ndarray, *,
                    whole: np.ndarray | None = None) -> np.ndarray | None:
        """Queue ``block`` for writing; returns at once.

        block: float64 array (rows x len(columns)); NaN means null. Column order: 'time',
        'wall_time', then signals. Without ``whole`` the caller may reuse ``block`` after the
        call (it is copied). Columns may change between calls (a new signal appended); the change starts
        a new part. After a writer error the block is dropped and counted in ``error``.

        whole: the array ``block`` is the top-left corner of, offered instead of a copy. When a
        written block's array of its shape is spare, ``block`` is queued as it is and that
        array is returned; else ``block`` is copied and ``whole`` itself is returned. Either
        way the caller writes its next rows into the array returned, never into the other.
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
            kept = next((i for i, a in enumerate(self._spare) if a.shape == shape), None)
            spare = self._spare.pop(kept) if kept is not None else None
        if whole is not None and spare is not None:
            data, base, back = block, whole, spare  # no copy: the caller goes on in a written array
        else:
            base = spare if spare is not None else np.empty(shape)
            data, back = base[:block.shape[0], :block.shape[1]], whole
            np.copyto(data, block, casting="unsafe")
        with self._cond:
            if self._closing:  # re-checked under the lock: the writer may have drained already
                raise MjrigError(f"telemetry sink for {self._path} is closed")
            if self._failed:
                self._rows_dropped += data.shape[0]
                return whole
            if self._queued_bytes + data.nbytes > MAX_QUEUED_BYTES:
                self._fail(f"telemetry writer fell behind ({MAX_QUEUED_BYTES >> 20} MiB queued); "
                           f"recording stopped before time={data[0, 0]!r} s")
                self._rows_dropped += data.shape[0]
                return whole
            self._queue.append((cols, data, base))
            before = self._queued_bytes
            self._queued_bytes += data.nbytes
            self._queued_rows += data.shape[0]
            self._group_bytes = max(ROW_GROUP_BYTES, ROW_GROUP_ROWS * data.shape[1] * 8)
            if before < self._group_bytes <= self._queued_bytes:
                self._cond.notify()
        return back

    def add_metadata(self, metadata: dict[str, str]) -> None:
        """Add key-value file metadata now (e.g. a run's metrics, known at its end)."""
        metadata = _check_str_map(metadata, "metadata")
        with self._cond:
            self._metadata.update(metadata)
            self._meta_dirty = True  # meta.json again, for a recovery

    def set_units(self, units: dict[str, str]) -> None:
        """Add or change units (column -> unit), e.g. for a column that appears mid-recording."""
        units = _check_str_map(units, "units")
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
        return self._queued_rows + self._inflight_rows

    @property
    def bytes_written(self) -> int:
        """Bytes of row groups written so far; after close, the size of the final file."""
        return self._bytes_written

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
            self._cond.notify()
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
            raise OutputError(f"cannot write {self._path}: {exception_text(exc, with_type=True)}; the rows so far "
                              f"are kept in {self._dir}: free space, then `mjrig recover {self._path}`") from exc
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
        return (self._closing or self._queued_bytes >= self._group_bytes
                or (self._queued_rows > 0 and time.monotonic() - since >= self._flush_seconds))

    def _run(self) -> None:
        since = time.monotonic()
        apart = Apart()  # this thread off the stepping thread's core (``cpu_apart``)
        while True:
            with self._cond:
                while not self._due(since):
                    self._cond.wait(min(self._flush_seconds, 0.25))
                apart.keep_off(self._stepper_core, behind=self._queued_bytes > MAX_QUEUED_BYTES // 4)
                items, self._queue = self._queue, []
                self._inflight_rows += self._queued_rows
                self._queued_rows = self._queued_bytes = 0
                closing = self._closing
                meta = (dict(self._metadata), dict(self._units)) if self._meta_dirty else None
                self._meta_dirty = False
            since = time.monotonic()
            try:
                # After a failure write_block drops blocks, so `items` is empty then.
                self._write_items(items)
                if meta is not None and not self._failed:
                    _write_meta(self._dir, *meta)
                with self._cond:  # their memory takes the next blocks
                    for _, _, base in items:
                        if sum(a.nbytes for a in self._spare) + base.nbytes <= SPARE_BYTES:
                            self._spare.append(base)
            except Exception as exc:  # noqa: BLE001 - the stepping thread must never see it
                with self._cond:
                    self._rows_dropped += self._inflight_rows
                    self._inflight_rows = 0
                    self._fail(exception_text(exc, with_type=True))
            if closing:
                return

    def _write_items(self, items: list[tuple[tuple[str, ...], np.ndarray, np.ndarray]]) -> None:
        """Write queued blocks as row groups, one per run of blocks with equal columns (a new
        part when the columns change)."""
        if items and not self._dir.is_dir():  # its open files would take rows nothing could read
            raise FileNotFoundError(f"the recording's folder {self._dir} was removed")
        start = 0
        for i in range(1, len(items) + 1):
            if i == len(items) or items[i][0] != items[start][0]:
                cols, blocks = items[start][0], [b for _, b, _ in items[start:i]]
                if not self._files or self._files[-1].columns != cols:
                    if self._files:
                        self._files[-1].close()  # a whole file with its footer
                    with self._cond:
                        metadata, units = dict(self._metadata), dict(self._units)
                    self._files.append(RowGroupFile(self._dir, len(self._files) + 1, cols, metadata, units))
                size = self._files[-1].append(blocks)
                rows = sum(b.shape[0] for b in blocks)
                with self._cond:
                    self._rows_written += rows
                    self._bytes_written += size
                    self._inflight_rows -= rows
                start = i

    def _fail(self, message: str) -> None:
        """Stop accepting blocks and drop the queue; caller holds ``_cond``."""
        self._error = message
        self._failed = True
        self._rows_dropped += self._queued_rows
        self._queue, self._queued_rows, self._queued_bytes = [], 0, 0
