"""A recording's rows written once, as Parquet row groups that survive a kill.

Each ``RowGroupFile`` is one run of rows with the same columns, in the recording's work folder
(``OUT.parquet.parts/``)::

    part-0001.json    {"columns": [...]}
    part-0001.data    the Parquet file, a row group at a time (LZ4, byte-stream-split): each encoded alone by pyarrow
                      and its pages copied in, so only ``_parquet_tail``'s bytes of it stay in memory
    part-0001.index   a record per row group once it is on disk: magic, its end, its rows, CRC-32

``finish`` writes the footer (``_parquet_tail``, with the metadata and units as they are at the end)
and moves the data file onto the recording's path: the rows are encoded and written once. After
a kill, or a write that failed (disk full), the footer was never written: ``finish_parts`` then
cuts the data file after its last row group the index vouches for and writes the footer from
the row groups' own pages (``_parquet_footer.rebuild_row_group``).

Used from one thread at a time (the recorder's writer thread, then ``close``).
"""

from __future__ import annotations

import json
import mmap
import os
import re
import struct
import warnings
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mjrig.runtime.files._parquet_footer import (
    CODEC_LZ4_RAW,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    compose,
    footer_of,
    rebuild_row_group,
)
from mjrig.runtime.files._parquet_tail import column_heads, footer, row_group
from mjrig.runtime.files.atomic_output import replace_text
from mjrig.runtime.files.parquet_merge import ENCODING, recording_schema, table_of, write_union

__all__ = ["RowGroupFile", "parts", "part_groups", "promised_rows", "finish_parts", "template_footer", "CODEC"]

_datasync = getattr(os, "fdatasync", os.fsync)  # macOS has no fdatasync
_RECORD = struct.Struct("<4sQQ")  # magic, the data file's length after the row group, its rows
_MAGIC = b"RGE4"
_CODECS = {b"RGE1": CODEC_ZSTD, b"RGE2": CODEC_LZ4_RAW, b"RGE3": CODEC_SNAPPY, b"RGE4": CODEC_LZ4_RAW}
"""Each index magic's page compression: RGE4 LZ4 of byte-stream-split values; parts written by
earlier versions: zstd RGE1, LZ4 RGE2, Snappy RGE3, of plain values (a page names its encoding)."""
CODEC = _CODECS[_MAGIC]
"""The page compression of the parts this recorder writes (Parquet's codec number)."""
SLICE_BYTES = 2 * 2**20
"""Bytes of values encoded at a time (``RowGroupFile._encode``): their pages fit the cache."""
_PART_RE = re.compile(r"^part-(\d{4,})\.json$")


def template_footer(columns: tuple[str, ...], metadata: dict[str, str], units: dict[str, str]) -> bytes:
    """The footer (Thrift bytes) pyarrow writes for an empty table of the recording's schema:
    its schema, key-value metadata (units included) and writer, for ``compose``."""
    sink = pa.BufferOutputStream()
    # A writer closed with no rows (``pq.write_table`` would import pandas: 0.4 s at every close)
    pq.ParquetWriter(sink, recording_schema(columns, metadata, units), **ENCODING).close()
    return footer_of(sink.getvalue().to_pybytes())


class RowGroupFile:
    """Part ``number`` of the recording in ``folder``: row groups of ``columns`` (float64),
    the file's metadata and units as they were when it opened (``finish`` writes them anew)."""

    def __init__(
        self, folder: Path, number: int, columns: tuple[str, ...], metadata: dict[str, str], units: dict[str, str]
    ) -> None:
        self.columns = columns
        self.stem = folder / f"part-{number:04d}"
        self.rows = 0
        self.broken = False  # a write failed: the footer is rebuilt from the pages (``finish_parts``)
        self.whole = False  # closed with its footer: a file as it is
        self._opened = (dict(metadata), dict(units))  # the footer's on ``close``
        self._bare = pa.schema([pa.field(c, pa.float64()) for c in columns])  # a row group's own file
        replace_text(self.stem.with_suffix(".json"), json.dumps({"columns": list(columns)}))
        self._index = os.open(self.stem.with_suffix(".index"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self._fd = os.open(self.stem.with_suffix(".data"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self._open = True
        _write_all(self._fd, b"PAR1")
        self._end = 4  # the data file's length
        self._groups: list[bytes] = []  # each row group's footer entry (``_parquet_tail.row_group``)
        self._heads: list[bytes] | None = None  # the columns' footer entries' constant part
        self._scratch: np.ndarray | None = None  # the columns of the row group being written
        self._out: pa.Buffer | None = None  # kept memory a row group is encoded into (``_encode``)

    def append(self, blocks: list[np.ndarray]) -> int:
        """Encode ``blocks`` (rows x columns, NaN = null) as one row group on disk; returns the
        bytes it took. An OSError leaves the part ``broken`` (its rows so far stay recoverable)."""
        if self.broken or not self._open:
            raise OSError(f"{self.stem.name} could not be written before")
        rows = sum(len(b) for b in blocks)
        if self._scratch is None or self._scratch.shape[1] < rows:  # kept: the table is written before the next
            self._scratch = np.empty((len(self.columns), rows))
        table = table_of(self.columns, blocks, self._bare, scratch=self._scratch)
        start = self._end
        try:
            compressed, uncompressed = [], []
            encodings: list[str] = []  # pyarrow's names, of the first slice's first column chunk
            for lo in range(0, len(self.columns), self._slice(rows)):
                part = table.select(list(range(lo, min(lo + self._slice(rows), len(self.columns)))))
                pages, chunks = self._encode(part)
                compressed += [c.total_compressed_size for c in chunks]
                uncompressed += [c.total_uncompressed_size for c in chunks]
                encodings = encodings or chunks[0].encodings
                _write_all(self._fd, pages)
            if self._heads is None:
                self._heads = column_heads(self.columns, _CODECS[_MAGIC], encodings)
            _datasync(self._fd)
            size = int(sum(compressed))
            end = self._end = start + size
            head = _RECORD.pack(_MAGIC, end, table.num_rows)
            os.write(self._index, head + zlib.crc32(head).to_bytes(4, "little"))
        except (OSError, ValueError, pa.ArrowException) as exc:
            self.broken = True
            raise exc if isinstance(exc, OSError) else OSError(str(exc)) from None
        self._groups.append(
            row_group(
                self._heads,
                start=start,
                rows=table.num_rows,
                compressed=np.array(compressed, dtype=np.int64),
                uncompressed=np.array(uncompressed, dtype=np.int64),
                ordinal=len(self._groups),
            )
        )
        self.rows += table.num_rows
        return size

    @staticmethod
    def _slice(rows: int) -> int:
        """Columns encoded together (``SLICE_BYTES`` of values at ``rows`` rows)."""
        return max(1, SLICE_BYTES // (8 * max(1, rows)))

    def _encode(self, table: pa.Table) -> tuple[memoryview, list]:
        """``table`` (some of the row group's columns) as a Parquet file of one row group,
        encoded into memory kept from one slice to the next; returns its pages (column chunk
        after column chunk) and its column chunks' metadata as the writer made them.

        Why slices: the pages of a whole row group encoded into memory (20 MiB for a humanoid's
        605 columns) were cold in the cache by the time they were copied into the file -- the
        recording's CPU rose by half over pyarrow writing the file itself. A slice's pages are
        copied while they are still in the cache. LZ4 grows data by a 255th at most (plus 16
        bytes a page); room for a sixth is kept."""
        # the values and their validity bitmaps (``Table.nbytes`` walks every buffer: a tenth of
        # the encoding's time for a wide recording)
        need = (
            table.num_columns * (8 * table.num_rows + table.num_rows // 8 + 8) * 7 // 6
            + 1024 * table.num_columns
            + (1 << 16)
        )
        if self._out is None or self._out.size < need:
            self._out = pa.allocate_buffer(need + need // 4)
        sink = pa.FixedSizeBufferWriter(self._out)
        with pq.ParquetWriter(sink, table.schema, store_schema=False, **ENCODING) as alone:
            alone.write_table(table, row_group_size=max(1, table.num_rows))
        group = alone.writer.metadata.row_group(0)
        chunks = [group.column(i) for i in range(table.num_columns)]
        size = sum(c.total_compressed_size for c in chunks)
        if (
            chunks[0].data_page_offset != 4
            or chunks[-1].data_page_offset != 4 + size - chunks[-1].total_compressed_size
        ):
            raise ValueError(f"{self.stem.name}: a row group's column chunks are not one after the other")
        return memoryview(self._out)[4 : 4 + size], chunks

    def _write_footer(self, metadata: dict[str, str], units: dict[str, str]) -> None:
        """The footer after the row groups: the file is whole."""
        _write_all(self._fd, footer(template_footer(self.columns, metadata, units), self._groups, self.rows))
        _datasync(self._fd)

    def finish(self, path: Path, metadata: dict[str, str], units: dict[str, str]) -> int | None:
        """Write the footer with ``metadata`` and ``units`` and move the file onto ``path``;
        returns the rows, or None when the part is broken (``finish_parts`` rebuilds it)."""
        if self.whole:  # closed with its footer already (the columns changed after it)
            self.close()
            os.replace(self.stem.with_suffix(".data"), path)
            return self.rows
        if self.broken or not self._open:
            self.close()
            return None
        self._write_footer(metadata, units)
        self._open = False
        self.whole = True
        self.close()
        os.replace(self.stem.with_suffix(".data"), path)
        return self.rows

    def close(self) -> None:
        """Close the files (the part stays on disk): its footer for what it holds, with the
        metadata and units it opened with (``whole``), unless a write failed (``broken``); never
        raises."""
        if self._open:
            self._open = False
            if not self.broken:
                try:
                    self._write_footer(*self._opened)
                    self.whole = True
                except Exception:  # noqa: BLE001 - the disk that failed may fail again here
                    self.broken = True
        for fd in (self._fd, self._index):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._fd = self._index = -1


def _write_all(fd: int, data: bytes | memoryview) -> None:
    """All of ``data`` at ``fd``'s position (``os.write`` may take less at a time)."""
    view = memoryview(data)
    while len(view):
        view = view[os.write(fd, view) :]


def parts(folder: Path) -> list[Path]:
    """The parts' stems (``folder/part-0001``...) in write order."""
    found = (
        [
            (int(m.group(1)), folder / m.group(0)[: -len(".json")])
            for m in (_PART_RE.match(e.name) for e in os.scandir(folder))
            if m
        ]
        if folder.is_dir()
        else []
    )
    return [p for _, p in sorted(found)]


def part_groups(stem: Path) -> tuple[tuple[str, ...], list[tuple[int, int]], int]:
    """(columns, [(end, rows)] of each row group on disk, Parquet compression codec) of a part:
    its index read up to the first record a kill cut short or that the data file does not hold."""
    columns = tuple(json.loads(stem.with_suffix(".json").read_text(encoding="utf-8"))["columns"])
    try:
        index = stem.with_suffix(".index").read_bytes()
        size = stem.with_suffix(".data").stat().st_size
    except FileNotFoundError:  # caught between creating the part's files: none of its rows is on disk
        return columns, [], _CODECS[_MAGIC]
    groups, pos, last = [], 0, 4
    step = _RECORD.size + 4
    codec = _CODECS[_MAGIC]
    while pos + step <= len(index):
        magic, end, rows = _RECORD.unpack_from(index, pos)
        if not pos:
            codec = _CODECS.get(magic, codec)
        if (
            _CODECS.get(magic) != codec
            or zlib.crc32(index[pos : pos + _RECORD.size])
            != int.from_bytes(index[pos + _RECORD.size : pos + step], "little")
            or not last < end <= size
        ):
            break
        groups.append((end, rows))
        pos, last = pos + step, end
    if pos < len(index):
        warnings.warn(
            f"{stem.name}: its index is cut short or damaged after {len(groups)} row groups; the rows "
            "after them are left out",
            stacklevel=2,
        )
    return columns, groups, codec


def promised_rows(stem: Path) -> int:
    """Rows the records of part ``stem``'s index name, each whole (its CRC-32 right), up to the
    first that is not, whether or not the data file holds them: a record is written once its row
    group is on disk, so rows promised and not found were lost after (a data file cut or damaged)."""
    try:
        index = stem.with_suffix(".index").read_bytes()
    except OSError:
        return 0
    rows, step = 0, _RECORD.size + 4
    for pos in range(0, len(index) - step + 1, step):
        magic, _, n = _RECORD.unpack_from(index, pos)
        if magic not in _CODECS or zlib.crc32(index[pos : pos + _RECORD.size]) != int.from_bytes(
            index[pos + _RECORD.size : pos + step], "little"
        ):
            break
        rows += n
    return rows


def _rebuild(stem: Path, metadata: dict[str, str], units: dict[str, str]) -> tuple[Path, tuple[str, ...], int]:
    """A part without its footer made whole: cut after its last row group the index vouches for,
    and the footer written from the row groups' pages. Returns (data file, columns, rows)."""
    columns, groups, codec = part_groups(stem)
    data = stem.with_suffix(".data")
    if not data.exists():  # killed before the part's data file was made: an empty file of its columns
        data.write_bytes(b"PAR1")
    metas, start = [], 4
    if groups:
        with open(data, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            view = memoryview(mm)
            try:
                for end, rows in groups:
                    meta, stop = rebuild_row_group(view, start, columns, rows, codec=codec)
                    if stop != end:
                        raise ValueError(f"{stem.name}: a row group's pages end at {stop}, not {end}")
                    metas.append(meta)
                    start = end
            finally:
                view.release()
    tail = compose(template_footer(columns, metadata, units), metas)
    with open(data, "r+b") as out:
        out.truncate(start)
        out.seek(start)
        out.write(tail)
        out.flush()
        os.fsync(out.fileno())
    return data, columns, sum(m.rows for m in metas)


def finish_parts(
    stems: list[Path],
    path: Path,
    metadata: dict[str, str],
    units: dict[str, str],
    open_parts: dict[Path, RowGroupFile] | None = None,
) -> int:
    """The recording at ``path`` from its parts: a part still open (``open_parts``) gets
    pyarrow's footer, one left by a kill or a failed write a rebuilt one. One part becomes the
    file; several (the columns changed) are merged into the union of their columns. Returns the
    rows. The parts stay on an OSError."""
    finished = []
    for stem in stems:
        live = (open_parts or {}).get(stem)
        own = stem.with_suffix(".whole")
        rows = live.finish(own, metadata, units) if live is not None else None
        if rows is None:
            data, _, rows = _rebuild(stem, metadata, units)
            os.replace(data, own)
        finished.append((own, rows))
    if len(finished) == 1:
        os.replace(finished[0][0], path)
        return finished[0][1]
    files = [pq.ParquetFile(f) for f, _ in finished]
    try:
        names = tuple(dict.fromkeys(n for part in files for n in part.schema_arrow.names))
        tables = (part.read_row_group(i) for part in files for i in range(part.num_row_groups))
        return write_union(path, names, tables, metadata, units)
    finally:
        for part in files:
            part.close()
