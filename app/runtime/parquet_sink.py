"""Crash-safe Parquet telemetry writer.

A Parquet file is unreadable until its footer is written, so a recording killed mid-way would
lose everything if it streamed into one file. Instead, while recording, a writer thread turns
queued row blocks into small *closed* segments (``seg-000001.rows``, ...) inside
``segment_dir(path)``; a SIGKILL loses at most the rows of the last ``flush_seconds``.
Segments are raw float64 rows behind a JSON header: writing them is one ``write`` per block,
which releases the GIL, so the writer thread never stalls the stepping thread. All Arrow and
Parquet work happens when the recording is closed or recovered.
``ParquetSink.close()`` (or ``recover()`` after a crash) merges the segments, one at a time,
into ``path``.

Layout of ``segment_dir(path)`` (``OUT.parquet.parts/`` next to ``OUT.parquet``)::

    meta.json            {"metadata": {str: str}, "units": {column: unit}}
    seg-000001.rows      8-byte little-endian header length n, n bytes of JSON {"columns": [...]}
                         (padded to a multiple of 8), then float64 rows (row-major, NaN = null);
                         columns may differ between segments
    seg-000002.rows      ...

The merged file has the union of all columns in order of first appearance ('time' and
'wall_time' first), null where a column did not exist yet, zstd compression, the key-value
file metadata given by the caller, and units both as field metadata ``{b"unit": ...}`` and
as the JSON schema metadata entry ``mjrig.units``.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from mjrig.runtime.errors import MjrigError, exception_text
from mjrig.runtime.parquet_merge import UNITS_KEY, check_columns, merge, merge_dir

__all__ = ["ParquetSink", "recover", "segment_dir"]

META_NAME = "meta.json"
SEGMENT_TARGET_BYTES = 16 * 2**20
"""Queued bytes that wake the writer before ``flush_seconds`` (keeps segments small)."""
MAX_QUEUED_BYTES = 256 * 2**20
"""Queued bytes past which the recording stops with an error instead of growing memory."""

_SEGMENT_RE = re.compile(r"^seg-(\d+)\.rows$")


def segment_dir(path: str | os.PathLike) -> Path:
    """Folder holding the segments of the recording bound for ``path``: ``<path>.parts``."""
    path = Path(path)
    return path.with_name(path.name + ".parts")


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
        if UNITS_KEY in self._metadata:
            raise ValueError(f"metadata key {UNITS_KEY!r} is reserved for the units map")
        self._units = _check_str_map(units, "units")
        if not flush_seconds > 0:
            raise ValueError(f"flush_seconds must be > 0 s, got {flush_seconds!r}")
        self._path = Path(path)
        self._dir = segment_dir(self._path)
        self._flush_seconds = float(flush_seconds)
        if self._dir.is_dir() and _segments(self._dir):
            raise MjrigError(f"{self._dir} holds segments of an unfinished recording; "
                             f"recover {self._path} first or delete that folder")
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
        """Flush, merge segments into ``path``, remove the segment folder; returns ``path``.

        Safe twice (the second call only returns the path). Still merges after a writer
        error. Raises MjrigError only if no valid file can be produced; the segments are
        then kept for ``recover``.
        """
        if self._closed:
            return self._path
        with self._cond:
            self._closing = True
            self._cond.notify()
        self._thread.join()
        self._closed = True
        if not self._dir.is_dir():
            if self._rows_written:
                raise MjrigError(f"segment folder {self._dir} vanished; "
                                 f"{self._rows_written} recorded rows are lost")
            rows, ok = merge([], self._path, self._metadata, self._units), True
        else:
            segs = _segments(self._dir)
            try:
                rows, ok = merge_dir(segs, self._path, self._metadata, self._units)
            except (OSError, pa.ArrowException) as exc:
                raise MjrigError(f"cannot write {self._path}: {exception_text(exc, with_type=True)}; "
                                 f"segments kept in {self._dir}") from exc
            if ok:
                shutil.rmtree(self._dir, ignore_errors=True)
        if rows != self._rows_written and self._error is None:
            self._error = (f"only {rows} of {self._rows_written} recorded rows could be merged "
                           f"into {self._path}")
        self._rows_written = rows
        self._bytes_written = self._path.stat().st_size
        return self._path

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
            if closing:
                return

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


def recover(path: str | os.PathLike) -> tuple[Path, int]:
    """After a crash: merge whatever segments exist for ``path`` into a valid ``path``.

    Returns (path, rows). Removes the segment folder unless a segment was unreadable (then the
    readable prefix is merged, a warning is issued and the folder is kept). Raises MjrigError
    with one clear line if there is nothing to recover.
    """
    path = Path(path)
    seg_dir = segment_dir(path)
    segs = _segments(seg_dir) if seg_dir.is_dir() else []
    if not segs:
        raise MjrigError(f"nothing to recover for {path}: no segments in {seg_dir}")
    metadata: dict[str, str] = {}
    units: dict[str, str] = {}
    try:
        meta = json.loads((seg_dir / META_NAME).read_text(encoding="utf-8"))
        metadata = _check_str_map(meta.get("metadata"), "metadata")
        units = _check_str_map(meta.get("units"), "units")
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        warnings.warn(f"{seg_dir / META_NAME} unreadable ({exception_text(exc, with_type=True)}); "
                      "recovering without file metadata and units", stacklevel=2)
    metadata.pop(UNITS_KEY, None)
    try:
        rows, ok = merge_dir(segs, path, metadata, units)
    except (OSError, pa.ArrowException) as exc:
        raise MjrigError(f"cannot write {path}: {exception_text(exc, with_type=True)}") from exc
    if rows == 0 and not ok:
        path.unlink(missing_ok=True)
        raise MjrigError(f"nothing to recover for {path}: no readable segment in {seg_dir}")
    if ok:
        shutil.rmtree(seg_dir, ignore_errors=True)
    return path, rows


# --- helpers -------------------------------------------------------------------------------

def _segments(folder: Path) -> list[Path]:
    """Closed segment files of ``folder`` in write order (temp files are ignored)."""
    found = []
    for entry in os.scandir(folder):
        m = _SEGMENT_RE.match(entry.name)
        if m:
            found.append((int(m.group(1)), Path(entry.path)))
    return [p for _, p in sorted(found)]


def _check_str_map(value: dict[str, str] | None, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise TypeError(f"{what} must map str to str, got {value!r}")
    return dict(value)


def _write_meta(folder: Path, metadata: dict[str, str], units: dict[str, str]) -> None:
    tmp = folder / (META_NAME + ".tmp")
    tmp.write_text(json.dumps({"metadata": metadata, "units": units}, indent=1), encoding="utf-8")
    os.replace(tmp, folder / META_NAME)


def _write_segment(columns: tuple[str, ...], blocks: list[np.ndarray], target: Path) -> int:
    """Write the blocks as one closed segment at ``target`` atomically; returns its size."""
    header = json.dumps({"columns": list(columns)}).encode()
    header += b" " * (-len(header) % 8)
    tmp = target.with_name(target.name + ".tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(len(header).to_bytes(8, "little"))
            f.write(header)
            for block in blocks:
                f.write(np.ascontiguousarray(block, dtype="<f8").data)
            f.flush()
            os.fsync(f.fileno())
            size = f.tell()
        os.replace(tmp, target)
    except BaseException:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise
    return size
