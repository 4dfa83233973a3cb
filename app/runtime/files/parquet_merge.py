"""What the recording's Parquet files share: their schema (``recording_schema``: float64
columns, units as field metadata and as the JSON map under ``UNITS_KEY``), float64 blocks as
Arrow tables (``table_of``: NaN becomes null), the encoding, reading a file's schema; and
``merge_dir``, which turns the raw segments an older mjrig left after a crash into a file (one
segment in memory at a time, row groups of at most ``ROW_GROUP_BYTES``, a column missing from
a segment null there).
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mjrig.runtime.errors import ConfigError, exception_text
from mjrig.runtime.files._parquet_footer import PAGE_ROWS
from mjrig.runtime.files.atomic_output import part_file

__all__ = [
    "UNITS_KEY",
    "ENCODING",
    "check_columns",
    "merge",
    "merge_dir",
    "recording_schema",
    "table_of",
    "write_union",
    "read_schema",
    "schema_units",
    "text_metadata",
]

UNITS_KEY = "mjrig.units"
"""Schema metadata key of the JSON ``{column: unit}`` map."""
ROW_GROUP_BYTES = 64 * 2**20
"""Uncompressed bytes gathered from segments into one row group of the merged file."""
# Dictionary encoding is almost never chosen for float telemetry but costs 3-4x the write time
# (measured: 7500 rows x 302 columns, 148 ms -> 43 ms with zstd).
ENCODING = dict(
    compression="lz4",
    use_byte_stream_split=True,
    use_dictionary=False,
    write_statistics=False,
    max_rows_per_page=PAGE_ROWS,
    write_page_checksum=True,
)
"""How mjrig writes recordings: each float's bytes split into streams (byte-stream-split: a
physical signal's exponents and high bytes vary slowly, so each stream compresses well) and LZ4:
a humanoid's every-group recording is 31 % smaller than Snappy of the plain values for the same
encoding CPU, and reads faster (zstd level 1: the same size for 20 % more CPU; BENCHMARKS.md);
polars, pyarrow and DuckDB read it; no dictionaries or statistics (float columns); pages of ``PAGE_ROWS`` values (a part whose index
was lost is read by its pages, ``_parquet_footer.find_row_group``), each with its CRC-32, so bytes
damaged inside a page are found when it is read back (``mjrig recover``), not taken as values."""
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


_TRANSPOSE_ROWS = 256
"""Rows transposed at a time by ``table_of``."""


def table_of(
    columns: tuple[str, ...],
    blocks: list[np.ndarray],
    schema: pa.Schema | None = None,
    *,
    scratch: np.ndarray | None = None,
) -> pa.Table:
    """float64 blocks (rows x columns) -> Arrow table, NaN as null (with ``schema``'s fields).

    scratch: (columns x at least the rows) float64 memory the table's columns are written into,
    reused by a caller that is done with the table before its next call (fresh memory costs a
    page fault a page); the table wraps it without a copy."""
    # One transposing copy (block by block, no concatenated copy first) makes every column a
    # C-contiguous row, which Arrow wraps without copying. It goes _TRANSPOSE_ROWS rows at a time:
    # a strip that fits the cache (a whole 4096 x 605 block at once is 8x slower: 16 ms, not 2).
    rows = sum(len(b) for b in blocks)
    if scratch is not None and scratch.shape[0] == blocks[0].shape[1] and scratch.shape[1] >= rows:
        by_column = scratch[:, :rows]
    else:
        by_column = np.empty((blocks[0].shape[1], rows))
    row = 0
    for b in blocks:
        for r in range(0, len(b), _TRANSPOSE_ROWS):
            part = b[r : r + _TRANSPOSE_ROWS]
            by_column[:, row + r : row + r + len(part)] = part.T
        row += len(b)
    nan = np.isnan(by_column)
    has_nan = nan.any(axis=1)
    # Arrays built from buffers (each wraps its row of ``by_column``): `pa.array` on a NumPy array
    # would also import pandas (0.26 s, holding the GIL, in the writer thread) to ask whether it is
    # a Series.
    arrays = [
        pa.Array.from_buffers(
            pa.float64(),
            rows,
            [_validity(nan[i]) if has_nan[i] else None, pa.py_buffer(col)],
            null_count=int(nan[i].sum()) if has_nan[i] else 0,
        )
        for i, col in enumerate(by_column)
    ]
    if schema is not None:
        return pa.Table.from_arrays(arrays, schema=schema)
    return pa.Table.from_arrays(arrays, names=list(columns))


def _validity(nan: np.ndarray) -> pa.Buffer:
    """Arrow's validity bitmap (LSB first, 1 = a value) of a column whose NaN are nulls."""
    return pa.py_buffer(np.packbits(~nan, bitorder="little"))


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
    return table_of(cols, [rows])


def merge_dir(segs: list[Path], path: Path, metadata: dict[str, str], units: dict[str, str]) -> tuple[int, bool]:
    """Merge the readable prefix of ``segs``; returns (rows, every segment was readable)."""
    schemas = []
    for seg in segs:
        try:
            schemas.append(_read_header(seg)[0])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            warnings.warn(
                f"segment {seg} unreadable ({exception_text(exc, with_type=True)}); "
                f"merging the {len(schemas)} segments before it",
                stacklevel=3,
            )
            break
    ok = len(schemas) == len(segs)
    return merge(list(zip(segs, schemas)), path, metadata, units), ok


def recording_schema(names: tuple[str, ...], metadata: dict[str, str], units: dict[str, str]) -> pa.Schema:
    """The schema of a recording: float64 columns ``names`` with their units as field metadata
    ``{b"unit": ...}``, the key-value ``metadata`` and the JSON units map under ``UNITS_KEY``."""
    fields = [
        pa.field(n, pa.float64(), nullable=True, metadata={b"unit": units[n].encode()} if n in units else None)
        for n in names
    ]
    used_units = {n: units[n] for n in names if n in units}
    kv = {k.encode(): v.encode() for k, v in metadata.items()}
    kv[UNITS_KEY.encode()] = json.dumps(used_units).encode()
    return pa.schema(fields, metadata=kv)


def merge(segs: list[tuple[Path, tuple[str, ...]]], path: Path, metadata: dict[str, str], units: dict[str, str]) -> int:
    """Stream segments into ``path`` (via a temp file), one segment in memory at a time."""
    names: dict[str, None] = dict.fromkeys(_FIXED)
    for _, columns in segs:
        names.update(dict.fromkeys(columns))
    return write_union(path, tuple(names), (_read_segment(seg) for seg, _ in segs), metadata, units)


def write_union(
    path: Path, names: tuple[str, ...], tables: Iterable[pa.Table], metadata: dict[str, str], units: dict[str, str]
) -> int:
    """``tables`` (float64 columns, each a subset of ``names``) one after another into ``path``
    (via a temp file) with columns ``names``, null where a table lacks one, in row groups of
    about ``ROW_GROUP_BYTES``; returns the rows. One table in memory at a time."""
    schema = recording_schema(names, metadata, units)
    rows = 0
    with part_file(path) as tmp:  # a part file a stop or a full disk never leaves behind
        with pq.ParquetWriter(tmp, schema, **ENCODING) as writer:
            pending: list[pa.Table] = []
            pending_bytes = 0
            for table in tables:
                n = table.num_rows
                # One lookup table per table: `name in table.column_names` rebuilds that list
                # for every name, which made merging wide recordings quadratic in the columns.
                have = {name: i for i, name in enumerate(table.column_names)}
                cols = [table.column(have[name]) if name in have else pa.nulls(n, pa.float64()) for name in names]
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
