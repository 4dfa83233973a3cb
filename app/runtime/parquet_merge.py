"""The recording's Parquet file: written as the run goes (``ParquetStream``), or merged from the
recorder's segments (``merge_dir``).

``ParquetSink`` streams its blocks into a ``ParquetStream`` on its writer thread, so closing a
recording only writes the last row group and the footer. ``recover`` (after a crash) and a
recording whose columns changed mid-way merge the segments instead, one segment in memory at a
time, row groups of at most ``ROW_GROUP_BYTES``. Either way NaN becomes null, a column missing
from a block is null, and the file carries the same schema, metadata and units.
"""
from __future__ import annotations

import base64
import json
import os
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mjrig.runtime.errors import ConfigError, exception_text

__all__ = ["UNITS_KEY", "ParquetStream", "check_columns", "merge", "merge_dir", "recording_schema",
           "read_schema", "schema_units", "text_metadata"]

UNITS_KEY = "mjrig.units"
"""Schema metadata key of the JSON ``{column: unit}`` map."""
ROW_GROUP_BYTES = 64 * 2**20
"""Uncompressed bytes gathered from segments into one row group of the merged file."""
# Dictionary encoding is almost never chosen for float telemetry but costs 3-4x the write time
# (measured: 7500 rows x 302 columns, 148 ms -> 43 ms with zstd).
_ENCODING = dict(use_dictionary=False, write_statistics=False)
_FIXED = ("time", "wall_time")


def check_columns(cols: tuple[str, ...]) -> None:
    if cols[:2] != _FIXED:
        raise ValueError(f"columns must start with 'time', 'wall_time'; got {list(cols[:2])}")
    if len(set(cols)) != len(cols):
        dupes = sorted({c for c in cols if cols.count(c) > 1})
        raise ValueError(f"duplicate column names {dupes}")
    bad = [c for c in cols if not isinstance(c, str) or not c]
    if bad:
        raise ValueError(f"column names must be non-empty str, got {bad}")


def _to_table(columns: tuple[str, ...], blocks: list[np.ndarray], schema: pa.Schema | None = None) -> pa.Table:
    """float64 blocks (rows x columns) -> Arrow table, NaN as null (with ``schema``'s fields)."""
    data = blocks[0] if len(blocks) == 1 else np.concatenate(blocks)
    # One transposing copy makes every column a C-contiguous row, which Arrow wraps without
    # copying; slicing columns out of a Fortran array instead costs ~10x more in pa.array.
    by_column = np.ascontiguousarray(data.T)
    nan = np.isnan(by_column)
    has_nan = nan.any(axis=1)
    arrays = [pa.array(col, mask=nan[i]) if has_nan[i] else pa.array(col) for i, col in enumerate(by_column)]
    if schema is not None:
        return pa.Table.from_arrays(arrays, schema=schema)
    return pa.Table.from_arrays(arrays, names=list(columns))


def _read_header(seg: Path) -> tuple[tuple[str, ...], int]:
    """(columns, byte offset of the rows) of a segment; ValueError if it is not one."""
    with open(seg, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        if not 0 < n < 2**26:
            raise ValueError("bad segment header")
        head = json.loads(f.read(n).decode())
    cols = tuple(head["columns"])
    check_columns(cols)
    size = seg.stat().st_size - 8 - n
    if size % (8 * len(cols)):
        raise ValueError(f"segment size is not a whole number of {len(cols)}-column rows")
    return cols, 8 + n


def _read_segment(seg: Path) -> pa.Table:
    cols, offset = _read_header(seg)
    rows = np.fromfile(seg, dtype="<f8", offset=offset).reshape(-1, len(cols))
    return _to_table(cols, [rows])


def merge_dir(segs: list[Path], path: Path, metadata: dict[str, str],
               units: dict[str, str]) -> tuple[int, bool]:
    """Merge the readable prefix of ``segs``; returns (rows, every segment was readable)."""
    schemas = []
    for seg in segs:
        try:
            schemas.append(_read_header(seg)[0])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            warnings.warn(f"segment {seg} unreadable ({exception_text(exc, with_type=True)}); "
                          f"merging the {len(schemas)} segments before it", stacklevel=3)
            break
    ok = len(schemas) == len(segs)
    return merge(list(zip(segs, schemas)), path, metadata, units), ok


def recording_schema(names: tuple[str, ...], metadata: dict[str, str], units: dict[str, str]) -> pa.Schema:
    """The schema of a recording: float64 columns ``names`` with their units as field metadata
    ``{b"unit": ...}``, the key-value ``metadata`` and the JSON units map under ``UNITS_KEY``."""
    fields = [pa.field(n, pa.float64(), nullable=True,
                       metadata={b"unit": units[n].encode()} if n in units else None)
              for n in names]
    used_units = {n: units[n] for n in names if n in units}
    kv = {k.encode(): v.encode() for k, v in metadata.items()}
    kv[UNITS_KEY.encode()] = json.dumps(used_units).encode()
    return pa.schema(fields, metadata=kv)


class ParquetStream:
    """The final Parquet file, written as the recording goes: each ``write`` appends row groups
    to ``part`` (a file in the segment folder) and makes them durable; ``finish`` writes the
    footer and moves ``part`` onto ``path``. A stream cut off before ``finish`` leaves a file
    without a footer, which nothing reads: the segments are the recording's safe copy.

    Used from one thread (the recorder's writer thread, then ``close``).
    """

    def __init__(self, path: Path, part: Path, columns: tuple[str, ...], metadata: dict[str, str],
                 units: dict[str, str]) -> None:
        self.path = path
        self.part = part
        self.columns = columns
        self.units = self._units_of(units)
        """The units the file's schema was made with (a later change needs a merge)."""
        self.rows = 0
        self._schema = recording_schema(columns, metadata, units)
        # The writer opens the file natively (a Python file object would take the GIL for
        # every write); `_fd` is only for fsync, which works through any descriptor.
        self._writer = pq.ParquetWriter(str(part), self._schema, compression="zstd", **_ENCODING)
        self._fd = os.open(part, os.O_RDONLY)

    def _units_of(self, units: dict[str, str]) -> dict[str, str]:
        return {n: units[n] for n in self.columns if n in units}

    def has_units(self, units: dict[str, str]) -> bool:
        """Whether ``units`` give this file's columns the units its schema was made with."""
        return self._units_of(units) == self.units

    def write(self, blocks: list[np.ndarray]) -> None:
        """Append ``blocks`` (rows x ``columns``, float64, NaN = null) as one row group, on disk."""
        table = _to_table(self.columns, blocks, self._schema)
        self._writer.write_table(table, row_group_size=table.num_rows)
        os.fsync(self._fd)
        self.rows += table.num_rows

    def finish(self, late: dict[str, str] | None = None) -> int:
        """Footer, fsync, move onto ``path``; returns the rows in the file. ``late``: key-value
        metadata that came after the file was opened (added to the footer, and to the Arrow
        schema stored there, so that readers of the schema see it too)."""
        if self.rows == 0:
            self._writer.write_table(self._schema.empty_table())
        if late:
            kv = {**self._schema.metadata, **{k.encode(): v.encode() for k, v in late.items()}}
            schema = self._schema.with_metadata(kv)
            self._writer.add_key_value_metadata({**late, "ARROW:schema": base64.b64encode(
                schema.serialize().to_pybytes()).decode("ascii")})
        self._writer.close()
        os.fsync(self._fd)
        os.close(self._fd)
        os.replace(self.part, self.path)
        return self.rows

    def abandon(self) -> None:
        """Stop writing and remove ``part`` (the segments hold the data); never raises."""
        try:
            self._writer.close()
        except Exception:  # noqa: BLE001 - the disk that failed may fail again here
            pass
        for undo in (lambda: os.close(self._fd), lambda: self.part.unlink(missing_ok=True)):
            try:
                undo()
            except OSError:
                pass


def merge(segs: list[tuple[Path, tuple[str, ...]]], path: Path, metadata: dict[str, str],
           units: dict[str, str]) -> int:
    """Stream segments into ``path`` (via a temp file), one segment in memory at a time."""
    names: dict[str, None] = dict.fromkeys(_FIXED)
    for _, columns in segs:
        names.update(dict.fromkeys(columns))
    schema = recording_schema(tuple(names), metadata, units)

    tmp = path.with_name(f".{path.name}.{os.getpid()}.merging")
    rows = 0
    try:
        with pq.ParquetWriter(tmp, schema, compression="zstd", **_ENCODING) as writer:
            pending: list[pa.Table] = []
            pending_bytes = 0
            for seg, _ in segs:
                table = _read_segment(seg)
                n = table.num_rows
                # One lookup table per segment: `name in table.column_names` rebuilds that list
                # for every name, which made merging wide recordings quadratic in the columns.
                have = {name: i for i, name in enumerate(table.column_names)}
                cols = [table.column(have[name]) if name in have
                        else pa.nulls(n, pa.float64()) for name in names]
                pending.append(pa.Table.from_arrays(cols, schema=schema))
                pending_bytes += n * len(names) * 8
                rows += n
                if pending_bytes >= ROW_GROUP_BYTES:
                    writer.write_table(pa.concat_tables(pending))
                    pending, pending_bytes = [], 0
            if pending:
                writer.write_table(pa.concat_tables(pending))
            elif rows == 0:
                writer.write_table(schema.empty_table())
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return rows



def text_metadata(schema: pa.Schema) -> dict[str, str]:
    """A Parquet schema's key-value metadata as text (undecodable bytes replaced)."""
    return {k.decode("utf-8", "replace"): v.decode("utf-8", "replace") for k, v in (schema.metadata or {}).items()}


def read_schema(path: str | os.PathLike) -> tuple[pa.Schema, dict[str, str]]:
    """The schema of Parquet file ``path`` and its key-value metadata as text; ConfigError (one
    line naming the file) when it is missing, a folder or not readable as Parquet."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise ConfigError(f"{path}: {'a folder, not a recording' if path.is_dir() else 'file not found'}")
    try:
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException) as exc:
        raise ConfigError(f"{path}: not a readable Parquet file ({str(exc).splitlines()[0][:120]})") from None
    return schema, text_metadata(schema)


def schema_units(metadata: dict[str, str], schema: pa.Schema) -> list[str]:
    """Each column's unit: from ``mjrig.units`` (``UNITS_KEY``), else the field's ``unit`` metadata, else ""."""
    try:
        given = json.loads(metadata.get(UNITS_KEY, "{}"))
    except ValueError:
        given = {}
    given = given if isinstance(given, dict) else {}
    units = []
    for field in schema:
        unit = given.get(field.name)
        if unit is None and field.metadata:
            unit = field.metadata.get(b"unit", b"").decode("utf-8", "replace")
        units.append(str(unit or ""))
    return units
