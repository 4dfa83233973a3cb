"""A recording's rows written once, as Parquet row groups that survive a kill.

Each ``RowGroupFile`` is one run of rows with the same columns, in the recording's work folder
(``OUT.parquet.parts/``)::

    part-0001.json    {"columns": [...]}
    part-0001.data    b"PAR1", then each row group's bytes as pyarrow encoded them (zstd)
    part-0001.index   a record per row group: magic, offset, length, rows, its footer, CRC-32

A row group is encoded once (a small Parquet file in memory), its bytes appended to the data
file, then its footer (``parquet_footer``) to the index; both reach the kernel before the next,
so a SIGKILL keeps every row group whose index record is whole. ``finish`` writes one footer
for them all after the last and moves the data file onto the recording's path: the file is
whole without a second copy of the rows. ``recover_parts`` does the same from the index after
a crash, cutting off a row group the kill interrupted. A write that fails (disk full) cuts the
data file back to its last whole row group, so the rows before it stay recoverable.

Used from one thread at a time (the recorder's writer thread, then ``close``).
"""
from __future__ import annotations

import json
import os
import re
import struct
import warnings
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mjrig.runtime.parquet_footer import RowGroupMeta, compose, footer_of, moved_row_groups
from mjrig.runtime.parquet_merge import ENCODING, recording_schema, table_of

__all__ = ["RowGroupFile", "parts", "part_groups", "finish_parts", "template_footer"]

_RECORD = struct.Struct("<4sQQQI")  # magic, offset, length, rows, footer length
_MAGIC = b"RGI1"
_PART_RE = re.compile(r"^part-(\d{4,})\.json$")


def template_footer(columns: tuple[str, ...], metadata: dict[str, str], units: dict[str, str]) -> bytes:
    """The footer (Thrift bytes) pyarrow writes for an empty table of the recording's schema:
    its schema, key-value metadata (units included) and writer, for ``compose``."""
    sink = pa.BufferOutputStream()
    pq.write_table(recording_schema(columns, metadata, units).empty_table(), sink, compression="zstd", **ENCODING)
    return footer_of(sink.getvalue().to_pybytes())


class RowGroupFile:
    """Part ``number`` of the recording in ``folder``: row groups of ``columns`` (float64)."""

    def __init__(self, folder: Path, number: int, columns: tuple[str, ...]) -> None:
        self.columns = columns
        self.stem = folder / f"part-{number:04d}"
        self.rows = 0
        self.end = 4  # the data file's length once its last row group is whole
        self.groups: list[RowGroupMeta] = []
        self._schema = pa.schema([pa.field(c, pa.float64()) for c in columns])
        tmp = self.stem.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({"columns": list(columns)}), encoding="utf-8")
        os.replace(tmp, self.stem.with_suffix(".json"))
        self._data = os.open(self.stem.with_suffix(".data"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self._index = os.open(self.stem.with_suffix(".index"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        _write_all(self._data, b"PAR1", 0)

    def append(self, blocks: list[np.ndarray]) -> int:
        """Encode ``blocks`` (rows x columns, NaN = null) as one row group and append it; returns
        the bytes written. On an OSError the data file is cut back to its last whole row group."""
        table = table_of(self.columns, blocks, self._schema)
        sink = pa.BufferOutputStream()
        with pq.ParquetWriter(sink, self._schema, compression="zstd", **ENCODING) as writer:
            writer.write_table(table, row_group_size=max(1, table.num_rows))
        blob = memoryview(sink.getvalue())
        flen = int.from_bytes(blob[-8:-4], "little")
        footer = bytes(blob[len(blob) - 8 - flen:len(blob) - 8])
        body = blob[4:len(blob) - 8 - flen]
        try:
            _write_all(self._data, body, self.end)
            os.fdatasync(self._data)
            head = _RECORD.pack(_MAGIC, self.end, len(body), table.num_rows, len(footer)) + footer
            os.write(self._index, head + zlib.crc32(head).to_bytes(4, "little"))
        except OSError:
            try:
                os.ftruncate(self._data, self.end)
            except OSError:
                pass
            raise
        self.groups += moved_row_groups(footer, self.end - 4)
        self.end += len(body)
        self.rows += table.num_rows
        return len(body)

    def close(self) -> None:
        """Close the files (the part stays on disk); never raises."""
        for fd in (self._data, self._index):
            try:
                os.close(fd)
            except OSError:
                pass
        self._data = self._index = -1


def _write_all(fd: int, data: bytes | memoryview, offset: int) -> None:
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, offset)
        view, offset = view[n:], offset + n


def parts(folder: Path) -> list[Path]:
    """The parts' stems (``folder/part-0001``...) in write order."""
    found = [(int(m.group(1)), folder / m.group(0)[:-len(".json")]) for m in
             (_PART_RE.match(e.name) for e in os.scandir(folder)) if m] if folder.is_dir() else []
    return [p for _, p in sorted(found)]


def part_groups(stem: Path) -> tuple[tuple[str, ...], list[RowGroupMeta], int]:
    """(columns, whole row groups, the data file's length that holds them) of a part on disk: its
    index read up to the first record that a kill cut short or whose bytes the data file lacks."""
    columns = tuple(json.loads(stem.with_suffix(".json").read_text(encoding="utf-8"))["columns"])
    index = stem.with_suffix(".index").read_bytes()
    size = stem.with_suffix(".data").stat().st_size
    groups, end, pos = [], 4, 0
    while pos + _RECORD.size <= len(index):
        magic, offset, length, _rows, flen = _RECORD.unpack_from(index, pos)
        stop = pos + _RECORD.size + flen
        if magic != _MAGIC or stop + 4 > len(index) or offset != end or offset + length > size:
            break
        if zlib.crc32(index[pos:stop]) != int.from_bytes(index[stop:stop + 4], "little"):
            break
        groups += moved_row_groups(bytes(index[pos + _RECORD.size:stop]), offset - 4)
        end, pos = offset + length, stop + 4
    if pos < len(index):
        warnings.warn(f"{stem.name}: its index is cut short or damaged after {len(groups)} row groups; the rows "
                      "after them are left out", stacklevel=2)
    return columns, groups, end


def finish_parts(stems: list[Path], path: Path, metadata: dict[str, str], units: dict[str, str]) -> int:
    """The recording at ``path`` from its parts (each row group whole in its index): one part
    gets its footer and becomes the file; several (the columns changed) are finished one by one
    and merged into the union of their columns. Returns the rows. The parts stay on OSError."""
    finished = []
    for stem in stems:
        columns, groups, end = part_groups(stem)
        data = stem.with_suffix(".data")
        tail = compose(template_footer(columns, metadata, units), groups)
        with open(data, "r+b") as fh:
            fh.truncate(end)
            fh.seek(end)
            fh.write(tail)
            fh.flush()
            os.fsync(fh.fileno())
        finished.append((data, columns, sum(g.rows for g in groups)))
    if len(finished) == 1:
        os.replace(finished[0][0], path)
        return finished[0][2]
    names: dict[str, None] = {}
    for _, columns, _ in finished:
        names.update(dict.fromkeys(columns))
    schema = recording_schema(tuple(names), metadata, units)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.merging")
    rows = 0
    try:
        with pq.ParquetWriter(tmp, schema, compression="zstd", **ENCODING) as writer:
            for data, _, _ in finished:
                part = pq.ParquetFile(data)
                for i in range(part.num_row_groups):
                    t = part.read_row_group(i)
                    have = set(t.column_names)
                    cols = [t.column(n) if n in have else pa.nulls(t.num_rows, pa.float64()) for n in names]
                    writer.write_table(pa.Table.from_arrays(cols, schema=schema))
                    rows += t.num_rows
            if rows == 0:
                writer.write_table(schema.empty_table())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return rows
