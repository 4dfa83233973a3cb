"""Crash-safe Parquet telemetry writer.

A Parquet file is unreadable until its footer is written, so a recording killed mid-way would
lose everything if it only streamed into one file. While recording, a writer thread therefore
does two things with the queued row blocks, on the other core:

- it appends them to small *closed* segments (``seg-000001.rows``, ...) inside
  ``segment_dir(path)``, the recording's safe copy: a SIGKILL loses at most the rows of the last
  ``flush_seconds``, and ``recover(path)`` merges the segments into ``path``;
- it encodes them into the final Parquet file (``stream.parquet`` in the same folder) as row
  groups of about ``ROW_GROUP_BYTES``.

``ParquetSink.close()`` then writes only the last row group and the footer, moves the file onto
``path`` and removes the folder. Where the stream cannot be finished (the columns or units
changed mid-way, a write failed), ``close()`` merges the segments instead, as ``recover`` does.

Layout of ``segment_dir(path)`` (``OUT.parquet.parts/`` next to ``OUT.parquet``)::

    meta.json            {"metadata": {str: str}, "units": {column: unit}}
    seg-000001.rows      8-byte little-endian header length n, n bytes of JSON {"columns": [...]}
                         (padded to a multiple of 8), then float64 rows (row-major, NaN = null);
                         columns may differ between segments
    seg-000002.rows      ...
    stream.parquet       the final file while it is written (no footer yet)

The file has the union of all columns in order of first appearance ('time' and 'wall_time'
first), null where a column did not exist yet, zstd compression, the key-value file metadata
given by the caller, and units both as field metadata ``{b"unit": ...}`` and as the JSON schema
metadata entry ``mjrig.units``.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from mjrig.runtime.errors import MjrigError, exception_text
from mjrig.runtime.parquet_merge import UNITS_KEY, ParquetStream, check_columns, merge, merge_dir
from mjrig.runtime.parquet_segments import (check_str_map as _check_str_map, discard, recover, segment_dir, segments,
                                            sweep_done,
                                            write_meta as _write_meta, write_segment as _write_segment)

__all__ = ["ParquetSink", "recover", "segment_dir"]

STREAM_NAME = "stream.parquet"
SEGMENT_TARGET_BYTES = 4 * 2**20
"""Queued bytes that wake the writer before ``flush_seconds`` (keeps segments small, and the
rows left for ``close`` to encode few)."""
ROW_GROUP_BYTES = 4 * 2**20
"""Uncompressed bytes per row group of the streamed file: what ``close`` encodes at most (with
the queue's), about 15 ms."""
MAX_QUEUED_BYTES = 256 * 2**20
"""Queued bytes past which the recording stops with an error instead of growing memory."""

class ParquetSink:
    """Streams telemetry blocks to a Parquet file, crash-safe.

    Use as a context manager, or call ``close()``; ``close()`` is safe twice.

    Threading: ``write_block()`` and ``set_units()`` are called from the stepping thread and
    never block on disk: they copy the block onto a queue. A daemon writer thread writes the
    queue out as a closed segment at least every ``flush_seconds`` (sooner when ~16 MiB are
    queued). A write error in the writer thread (disk full, folder removed) never raises in
    the stepping thread: it is recorded in ``error``, writing stops, and every segment
    written so far stays valid. ``close()`` and the properties may be called from any thread.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        metadata: dict[str, str] | None = None,
        units: dict[str, str] | None = None,
        flush_seconds: float = 0.5,
    ) -> None:
        """Create ``segment_dir(path)`` and its ``meta.json`` and start the writer thread.

        path: final Parquet file, written on ``close()`` (replaced if it exists).
        metadata: key-value file metadata, str -> str, stored under the keys as given.
        units: column -> unit (e.g. ``{"time": "s"}``); more can come via ``set_units``.
        flush_seconds: wall-clock seconds (> 0) between segment writes; the most a kill loses.

        Raises MjrigError if the folder cannot be created or holds segments of an earlier
        recording that were never merged (run ``recover(path)`` first).
        """
        self._metadata = _check_str_map(metadata, "metadata")
        self._late: dict[str, str] = {}  # added after the streamed file was opened
        if UNITS_KEY in self._metadata:
            raise ValueError(f"metadata key {UNITS_KEY!r} is reserved for the units map")
        self._units = _check_str_map(units, "units")
        if not flush_seconds > 0:
            raise ValueError(f"flush_seconds must be > 0 s, got {flush_seconds!r}")
        self._path = Path(path)
        self._dir = segment_dir(self._path)
        self._flush_seconds = float(flush_seconds)
        if self._dir.is_dir() and segments(self._dir):
            raise MjrigError(f"{self._dir} holds segments of an unfinished recording; "
                             f"recover {self._path} first or delete that folder")
        sweep_done(self._dir)
        try:
            self._dir.mkdir(parents=True, exist_ok=True)  # the output's folder too, like the CLI
            _write_meta(self._dir, self._metadata, self._units)
        except OSError as exc:
            raise MjrigError(f"cannot start recording to {self._path}: {exception_text(exc, with_type=True)}") from exc

        self._cond = threading.Condition()
        self._queue: list[tuple[tuple[str, ...], np.ndarray]] = []  # guarded by _cond
        self._queued_bytes = 0  # in _queue
        self._queued_rows = 0
        self._inflight_rows = 0  # taken off the queue by the writer, not yet on disk
        self._units_dirty = False
        self._closing = False
        self._failed = False  # no more blocks accepted; set by writer error or overflow
        self._error: str | None = None
        self._rows_written = 0
        self._rows_dropped = 0
        self._bytes_written = 0
        self._next_segment = 1
        self._last_columns: tuple[str, ...] | None = None
        self._closed = False
        # The final file as it is written (writer thread only, then close): None until the
        # first block; `_streaming` False once it cannot be finished (close merges then).
        self._stream: ParquetStream | None = None
        self._streaming = True
        self._pending: list[np.ndarray] = []  # blocks of the next row group, on disk as segments
        self._pending_bytes = 0
        self._tail: list[tuple[tuple[str, ...], np.ndarray]] = []  # the last blocks, for close
        self._thread = threading.Thread(target=self._run, name="mjrig-parquet-writer", daemon=True)
        self._thread.start()

    # --- stepping-thread API -------------------------------------------------------------

    def write_block(self, columns: Sequence[str], block: np.ndarray) -> None:
        """Queue ``block`` for writing; returns at once.

        block: float64 array (rows x len(columns)); NaN means null. Column order: 'time',
        'wall_time', then signals. The caller may reuse ``block`` after the call (it is
        copied). Columns may change between calls (a new signal appended); the change starts
        a new segment. After a writer error the block is dropped and counted in ``error``.
        """
        if self._closed or self._closing:
            raise MjrigError(f"telemetry sink for {self._path} is closed")
        cols = columns if type(columns) is tuple else tuple(columns)
        if cols != self._last_columns:
            check_columns(cols)
            self._last_columns = cols
        data = np.array(block, dtype=np.float64, copy=True)
        if data.ndim != 2 or data.shape[1] != len(cols):
            raise ValueError(f"block shape {np.shape(block)} does not match {len(cols)} columns")
        if data.shape[0] == 0:
            return
        with self._cond:
            if self._closing:  # re-checked under the lock: the writer may have drained already
                raise MjrigError(f"telemetry sink for {self._path} is closed")
            if self._failed:
                self._rows_dropped += data.shape[0]
                return
            if self._queued_bytes + data.nbytes > MAX_QUEUED_BYTES:
                self._fail(f"telemetry writer fell behind ({MAX_QUEUED_BYTES >> 20} MiB queued); "
                           f"recording stopped before time={data[0, 0]!r} s")
                self._rows_dropped += data.shape[0]
                return
            self._queue.append((cols, data))
            before = self._queued_bytes
            self._queued_bytes += data.nbytes
            self._queued_rows += data.shape[0]
            if before < SEGMENT_TARGET_BYTES <= self._queued_bytes:
                self._cond.notify()

    def add_metadata(self, metadata: dict[str, str]) -> None:
        """Add key-value file metadata now (e.g. a run's metrics, known at its end)."""
        metadata = _check_str_map(metadata, "metadata")
        with self._cond:
            self._metadata.update(metadata)
            self._late.update(metadata)

    def set_units(self, units: dict[str, str]) -> None:
        """Add or change units (column -> unit), e.g. for a column that appears mid-recording."""
        units = _check_str_map(units, "units")
        with self._cond:
            self._units.update(units)
            self._units_dirty = True

    # --- state ---------------------------------------------------------------------------

    @property
    def path(self) -> Path:
        """The final Parquet file."""
        return self._path

    @property
    def rows_written(self) -> int:
        """Rows in closed segments on disk so far (after close: rows in the final file)."""
        return self._rows_written

    @property
    def pending_rows(self) -> int:
        """Rows queued but not yet on disk (a producer faster than the disk can throttle on it)."""
        return self._queued_rows + self._inflight_rows

    @property
    def bytes_written(self) -> int:
        """Bytes of segment files written so far; after close, the size of the final file."""
        return self._bytes_written

    @property
    def error(self) -> str | None:
        """Last write error (one line, e.g. disk full), or None. Once set, writing has stopped."""
        if self._error is not None and self._rows_dropped:
            return f"{self._error} ({self._rows_dropped} rows not recorded)"
        return self._error

    # --- lifecycle -----------------------------------------------------------------------

    def close(self) -> Path:
        """Flush and finish ``path``; remove the segment folder; returns ``path``.

        The streamed file only needs its last row group and footer. Otherwise (columns or units
        changed mid-way, a write failed) the segments are merged into ``path``. Safe twice (the
        second call only returns the path). Raises MjrigError only if no valid file can be
        produced; the segments are then kept for ``recover``.
        """
        if self._closed:
            return self._path
        with self._cond:
            self._closing = True
            self._cond.notify()
        self._thread.join()
        self._closed = True
        if self._finish_stream():
            return self._path
        if self._tail:  # the stream could not take them: they go where merge reads them
            try:
                self._write_items(self._tail)
            except Exception as exc:  # noqa: BLE001 - merge what is on disk, say what is not
                self._rows_dropped += sum(b.shape[0] for _, b in self._tail)
                self._error = self._error or exception_text(exc, with_type=True)
            self._tail = []
        if not self._dir.is_dir():
            if self._rows_written:
                raise MjrigError(f"segment folder {self._dir} vanished; "
                                 f"{self._rows_written} recorded rows are lost")
            rows, ok = merge([], self._path, self._metadata, self._units), True
        else:
            segs = segments(self._dir)
            try:
                rows, ok = merge_dir(segs, self._path, self._metadata, self._units)
            except (OSError, pa.ArrowException) as exc:
                raise MjrigError(f"cannot write {self._path}: {exception_text(exc, with_type=True)}; "
                                 f"segments kept in {self._dir}") from exc
            if ok:
                discard(self._dir)
        if rows != self._rows_written and self._error is None:
            self._error = (f"only {rows} of {self._rows_written} recorded rows could be merged "
                           f"into {self._path}")
        self._rows_written = rows
        self._bytes_written = self._path.stat().st_size
        return self._path

    def _finish_stream(self) -> bool:
        """Write the last rows into the streamed file and move it onto ``path``; False (stream
        dropped) where the file must be merged from the segments instead."""
        if self._failed or not self._streaming:
            self._drop_stream()
            return False
        self._stream_items(self._tail)  # drops the stream if the columns changed
        if not self._streaming:
            return False
        try:
            if self._stream is None:  # nothing was recorded: an empty file
                self._stream = self._open_stream(("time", "wall_time"))
            if self._pending:
                self._stream.write(self._pending)
            rows = self._stream.finish(self._late)
        except Exception:  # noqa: BLE001 - a disk error: merge instead
            self._drop_stream()
            return False
        self._tail, self._pending = [], []
        self._rows_written = rows
        discard(self._dir)
        self._bytes_written = self._path.stat().st_size
        return True

    def _open_stream(self, columns: tuple[str, ...]) -> ParquetStream:
        return ParquetStream(self._path, self._dir / STREAM_NAME, columns, self._metadata, dict(self._units))

    def _drop_stream(self) -> None:
        self._streaming = False
        self._pending, self._pending_bytes = [], 0
        if self._stream is not None:
            self._stream.abandon()
            self._stream = None

    def __enter__(self) -> ParquetSink:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- writer thread -------------------------------------------------------------------

    def _run(self) -> None:
        next_flush = time.monotonic() + self._flush_seconds
        while True:
            with self._cond:
                while not (self._closing or self._queued_bytes >= SEGMENT_TARGET_BYTES):
                    wait = next_flush - time.monotonic()
                    if wait <= 0:
                        break
                    self._cond.wait(wait)
                items, self._queue = self._queue, []
                self._inflight_rows += self._queued_rows
                self._queued_rows = self._queued_bytes = 0
                closing = self._closing
                units = dict(self._units) if self._units_dirty else None
                self._units_dirty = False
            next_flush = time.monotonic() + self._flush_seconds
            if units is not None and self._stream is not None and not self._stream.has_units(units):
                self._drop_stream()  # its schema has the old units: close merges
            if closing and self._streaming and not self._failed:
                # The last blocks go straight into the file by close(), not via a segment first.
                self._tail = items
                with self._cond:
                    self._inflight_rows = 0
                return
            try:
                # After a failure write_block drops blocks, so `items` is empty then.
                self._write_items(items)
                if units is not None and not self._failed:
                    _write_meta(self._dir, self._metadata, units)
            except Exception as exc:  # noqa: BLE001 - the stepping thread must never see it
                with self._cond:
                    self._rows_dropped += self._inflight_rows
                    self._inflight_rows = 0
                    self._fail(exception_text(exc, with_type=True))
            if self._failed:
                self._drop_stream()
            else:
                self._stream_items(items)
            if closing:
                return

    def _stream_items(self, items: list[tuple[tuple[str, ...], np.ndarray]]) -> None:
        """Encode blocks already safe in segments into the streamed file, a row group at a time."""
        if not self._streaming:
            return
        try:
            for cols, block in items:
                if self._stream is None:
                    self._stream = self._open_stream(cols)
                if cols != self._stream.columns:  # its schema lacks the new column: close merges
                    self._drop_stream()
                    return
                self._pending.append(block)
                self._pending_bytes += block.nbytes
                if self._pending_bytes >= ROW_GROUP_BYTES:
                    self._stream.write(self._pending)
                    self._pending, self._pending_bytes = [], 0
        except Exception:  # noqa: BLE001 - a disk error; the segments hold every row: close merges them
            self._drop_stream()

    def _write_items(self, items: list[tuple[tuple[str, ...], np.ndarray]]) -> None:
        """Write queued blocks as segments, one per run of blocks with equal columns."""
        start = 0
        for i in range(1, len(items) + 1):
            if i == len(items) or items[i][0] != items[start][0]:
                blocks = [b for _, b in items[start:i]]
                name = f"seg-{self._next_segment:06d}.rows"
                size = _write_segment(items[start][0], blocks, self._dir / name)
                rows = sum(b.shape[0] for b in blocks)
                self._next_segment += 1
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

