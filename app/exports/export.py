"""A recording exported as CSV, MATLAB v5 (``.mat``), MCAP or Rerun (``.rrd``): ``mjrig export FILE --to FORMAT``.

``export_recording(path, to=..., out=...)`` reads an mjrig recording (a Parquet file: ``time`` in
simulated seconds, ``wall_time``, then ``Category/Entity:attribute`` signal columns) one row group
at a time with ``pyarrow.parquet.ParquetFile.iter_batches`` and writes:

- ``csv``: a header row of the column names, then one line per recorded row. Floats are written
  in their shortest form that reads back to the same float64 (polars' default: ``0.1``,
  ``0.30000000000000004``, ``5e-324``, ``-0.0``; NaN as ``NaN``, infinities as ``inf``/``-inf``);
  narrower floats are widened to float64 first. Integers as integers, booleans as ``true`` /
  ``false``, nulls as empty fields. Streamed: one batch in memory at a time.
- ``mat``: a MATLAB v5 file holding one struct ``mjrig`` with ``names`` (1×N cell of column
  names), ``units`` (1×N cell, ``''`` where a column has none), ``data`` (rows×N double: booleans
  as 0/1, integers as doubles (exact up to 2^53), NaN for null) and ``metadata`` (a struct of the
  file's key-value metadata, each key made a MATLAB field name: ``.`` and other characters that
  cannot appear in one become ``_``, e.g. ``mjrig_model_path``). Written as it is read
  (``mat_stream``): one column in memory at a time; a recording past the format's 4 GiB per
  variable is refused. Uncompressed.
- ``mcap``: one topic per entity, ``/<Category>/<Entity>`` (``/Joints/slide_x``), JSON messages
  with a JSON Schema per topic (each attribute's unit its property's ``description``), a message
  holding that entity's attributes in one row (``{"fx": 1.5, ...}``), ``log_time`` and
  ``publish_time`` the simulated time in ns (``round(time * 1e9)``); a null, NaN or infinite
  attribute is left out, an entity with none left gets no message; ``time`` and ``wall_time``
  are only the times; the file's metadata is an MCAP metadata record ``mjrig``; a column not named
  ``Category/Entity:attribute`` gets a topic too (``value`` without ``:``). Beside them, the rig in
  3D for Foxglove: ``/tf`` and ``/scene`` (``mcap_scene``).

Output goes to a temporary file beside ``out`` that replaces ``out`` only when it is complete, so
a failure or Ctrl+C never leaves half a file. Bad input raises a one-line ``ConfigError`` naming
the file: missing, not Parquet, a sweep's or study's results, not a recording, an unknown format.

GUI-free (pyarrow, polars, numpy, scipy, mcap). Threading: no shared state; any thread.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mjrig.exports.rrd.stream import write_rrd
from mjrig.runtime.errors import ConfigError, exception_text, one_line
from mjrig.runtime.files.atomic_output import atomic_output, fault_errno
from mjrig.runtime.files.parquet_merge import schema_units
from mjrig.runtime.telemetry.units import scenario_units

if TYPE_CHECKING:
    import polars as pl

__all__ = ["FORMATS", "Progress", "default_output", "export_recording"]

FORMATS: dict[str, str] = {"csv": ".csv", "mat": ".mat", "mcap": ".mcap", "rrd": ".rrd"}
"""The export formats and the suffix of each one's file."""
Progress = Callable[[int, int], None]
"""Called as ``progress(rows_done, rows_total)`` after each row group of the recording."""

_NOT_SIGNALS = ("time", "wall_time")
_CAMPAIGN_KEYS = {"mjrig.sweep": "a sweep's", "mjrig.optimize": "a study's"}
_BATCH_ROWS = 65_536
"""Rows read at once (a row group may be read in several batches)."""
MCAP_CELLS = 2_000_000
"""Cells (rows × columns) of the recording turned into MCAP messages at once."""
_MAT_NAME_MAX = 63
"""MATLAB's longest field name (``namelengthmax``)."""


@dataclass(frozen=True)
class _Source:
    """An open recording: its columns, their units ("" for none) and the file's key-value metadata."""

    path: Path
    file: pq.ParquetFile
    names: list[str]
    types: list[pa.DataType]
    units: list[str]
    metadata: dict[str, str]

    @property
    def rows(self) -> int:
        return self.file.metadata.num_rows

    def batches(self, progress: Progress | None, *, rows: int = _BATCH_ROWS) -> Iterator[pa.RecordBatch]:
        """The rows, batch by batch (``rows`` at most), reporting progress after each row group."""
        done, total = 0, self.rows
        for group in range(self.file.num_row_groups):
            for batch in self.file.iter_batches(batch_size=rows, row_groups=[group]):
                done += batch.num_rows
                yield batch
            if progress is not None:
                progress(done, total)
        if self.file.num_row_groups == 0 and progress is not None:
            progress(0, total)


def _format(to: str, path: Path) -> str:
    """``to`` as a key of FORMATS (case and a leading dot ignored); ConfigError naming the valid ones."""
    fmt = to.strip().lower().lstrip(".")
    if fmt in FORMATS:
        return fmt
    close = difflib.get_close_matches(fmt, list(FORMATS), n=1, cutoff=0.4)
    hint = f" (closest: {close[0]})" if close else ""
    raise ConfigError(one_line(f"{path}: unknown export format '{to}': choose {', '.join(FORMATS)}{hint}"))


def default_output(path: Path, fmt: str) -> Path:
    """``path`` with the suffix of format ``fmt`` (``rec.parquet`` -> ``rec.csv``)."""
    path = Path(path)
    return path.with_suffix(FORMATS[_format(fmt, path)])


def _first_line(exc: BaseException) -> str:
    return (exception_text(exc).splitlines() or [""])[0][:200]


def _check_recording(path: Path, metadata: dict[str, str], schema: pa.Schema) -> None:
    """ConfigError unless the schema and metadata are a recording's."""
    for key, whose in _CAMPAIGN_KEYS.items():
        if key in metadata:
            raise ConfigError(
                one_line(
                    f"{path}: is {whose} results, not a recording (export a trial's recording "
                    f"instead: {path.with_suffix('').name}/trial-<n>.parquet)"
                )
            )
    if "time" not in schema.names:
        raise ConfigError(one_line(f"{path}: not an mjrig recording (no 'time' column)"))
    for field in schema:
        t = field.type
        if not (pa.types.is_floating(t) or pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_null(t)):
            raise ConfigError(
                one_line(
                    f"{path}: not an mjrig recording (column '{field.name}' is {t}; "
                    "a recording holds numbers and booleans)"
                )
            )


@contextmanager
def _open(path: Path) -> Iterator[_Source]:
    """The recording at ``path``, open for the block; ConfigError (one line) when it is not one."""
    if not path.is_file():
        raise ConfigError(one_line(f"{path}: {'a folder, not a recording' if path.is_dir() else 'file not found'}"))
    try:
        file = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise ConfigError(one_line(f"{path}: not a readable Parquet file ({_first_line(exc)})")) from None
    try:
        schema = file.schema_arrow
        metadata = {
            k.decode("utf-8", "replace"): v.decode("utf-8", "replace")
            for k, v in (schema.metadata or {}).items()
            if not k.startswith(b"ARROW:")
        }
        _check_recording(path, metadata, schema)
        yield _Source(path, file, list(schema.names), list(schema.types), schema_units(metadata, schema), metadata)
    finally:
        file.close()


@contextmanager
def _replacing(out: Path) -> Iterator[IO[bytes]]:
    """A new part file beside ``out`` that replaces ``out`` when the block ends without error
    (and is deleted when it raises): ``mjrig.runtime.files.atomic_output``, whose part names carry this
    process's id (what a killed export left is removed by the next command on the folder)."""
    with atomic_output(out, what="-o") as tmp, open(tmp, "wb") as fh:
        yield fh


def _frame(batch: pa.RecordBatch) -> pl.DataFrame:
    """One record batch as a polars DataFrame (``pl.from_arrow`` reads a batch as one; its return
    type also names a Series, for an arrow array)."""
    import polars as pl

    frame = pl.from_arrow(batch)
    if not isinstance(frame, pl.DataFrame):
        raise TypeError(f"a record batch read as a {type(frame).__name__}, not a DataFrame")
    return frame


# --- CSV ------------------------------------------------------------------------------------------
def _write_csv(src: _Source, fh: IO[bytes], progress: Progress | None) -> int:
    """The rows as CSV; every column with a unit says it in its header (``Joints/x:qpos [m]``),
    shown in the unit the recording's scenario's ``[units]`` chose (``[mm]``, values converted)."""
    import polars as pl
    import polars.selectors as cs

    shown = scenario_units(src.metadata.get("mjrig.scenario", ""))
    scale: dict[str, float] = {}
    header = list(src.names)
    for i, (name, unit) in enumerate(zip(src.names, src.units)):
        factor, label = shown.convert(unit)
        if label:
            header[i] = f"{name} [{label}]"
        if factor != 1.0:
            scale[name] = factor
    fh.write((",".join(_csv_field(h) for h in header) + "\n").encode("utf-8"))  # the header, also for 0 rows
    rows = 0
    for batch in src.batches(progress):
        frame = _frame(batch).with_columns(cs.float().cast(pl.Float64))
        if scale:
            frame = frame.with_columns([pl.col(n).cast(pl.Float64) * f for n, f in scale.items()])
        frame.write_csv(fh, include_header=False, null_value="")
        rows += batch.num_rows
    return rows


def _csv_field(text: str) -> str:
    """A header cell as polars writes one: quoted when it holds a comma, quote or line break."""
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n\r') else text


# --- MATLAB ---------------------------------------------------------------------------------------
def _mat_field(key: str) -> str:
    """``key`` as a MATLAB field name: ``mjrig.model_path`` -> ``mjrig_model_path``."""
    name = re.sub(r"[^0-9A-Za-z_]", "_", key)
    if not name[:1].isalpha():
        name = "x" + name
    return name[:_MAT_NAME_MAX]


def _write_mat(src: _Source, fh: IO[bytes], progress: Progress | None) -> int:
    from mjrig.exports.mat_stream import MAX_BYTES, write_struct

    rows, cols = src.rows, len(src.names)
    if 8 * rows * cols >= MAX_BYTES:
        raise ConfigError(
            one_line(
                f"{src.path}: {rows} rows x {cols} columns is past MATLAB v5's 4 GiB "
                "per variable: export it to csv or mcap"
            )
        )

    def column(j: int) -> np.ndarray:  # null -> NaN, bool -> 0/1; one column in memory at a time
        values = src.file.read(columns=[src.names[j]]).column(0).cast(pa.float64()).to_numpy(zero_copy_only=False)
        if progress is not None:
            progress(rows * (j + 1) // max(cols, 1), rows)
        return values

    write_struct(
        fh,
        name="mjrig",
        names=src.names,
        units=src.units,
        rows=rows,
        column=column,
        metadata={_mat_field(k): v for k, v in src.metadata.items()},
    )
    if cols == 0 and progress is not None:
        progress(rows, rows)
    return rows


# --- MCAP -----------------------------------------------------------------------------------------
def _topic_of(column: str) -> tuple[str, str]:
    """(topic, attribute) of a signal column: ``Loads/main_spring:fx`` -> (``/Loads/main_spring``, ``fx``).
    Category = text before the first ``/``, attribute = text after the last ``:``."""
    head, colon, attribute = column.rpartition(":")
    if not colon:
        head, attribute = column, "value"
    category, _, entity = head.partition("/")
    return (f"/{category}/{entity}" if entity else f"/{category}"), attribute


def _json_type(t: pa.DataType) -> str:
    if pa.types.is_boolean(t):
        return "boolean"
    return "integer" if pa.types.is_integer(t) else "number"


def _plan(src: _Source) -> dict[str, list[tuple[str, int]]]:
    """Topic -> its (attribute, column index) pairs, topics in the order of their first column."""
    topics: dict[str, list[tuple[str, int]]] = {}
    for j, name in enumerate(src.names):
        if name in _NOT_SIGNALS:
            continue
        topic, attribute = _topic_of(name)
        attrs = topics.setdefault(topic, [])
        if any(a == attribute for a, _ in attrs):  # a second column ending the same way: keep it whole
            attribute = name
        attrs.append((attribute, j))
    return topics


def _schema(src: _Source, topic: str, attrs: list[tuple[str, int]]) -> bytes:
    """A topic's JSON Schema: an object of its attributes, each typed, its unit the description."""
    props = {}
    for attribute, j in attrs:
        props[attribute] = {"type": _json_type(src.types[j])}
        if src.units[j]:
            props[attribute]["description"] = src.units[j]
    schema = {"title": f"mjrig{topic}", "type": "object", "properties": props, "additionalProperties": False}
    return json.dumps(schema).encode()


def _stamps(src: _Source, times: np.ndarray, first: int) -> np.ndarray:
    """Simulated times (s) as MCAP nanoseconds; ConfigError naming the first row whose time MCAP
    cannot hold (not a number >= 0)."""
    bad = np.flatnonzero(~(np.isfinite(times) & (times >= 0)))
    if bad.size:
        raise ConfigError(
            one_line(
                f"{src.path}: row {first + int(bad[0])} has time {times[bad[0]]!r}: MCAP needs "
                "a time >= 0 s in every row"
            )
        )
    return np.round(times * 1e9).astype(np.uint64)


def _payloads(frame: pl.DataFrame, src: _Source, attrs: list[tuple[str, int]]) -> pl.Series:
    """Each row's JSON message of one entity (bytes), null where every attribute is null, NaN or
    infinite (JSON has no such number: those are left out of the message)."""
    import polars as pl

    pieces = []
    for attribute, j in attrs:
        col = pl.col(src.names[j])
        if pa.types.is_floating(src.types[j]):
            col = pl.when(col.is_finite()).then(col.cast(pl.Float64))
        pieces.append(pl.concat_str([pl.lit(json.dumps(attribute) + ":"), col.cast(pl.Utf8)]))
    body = pl.concat_str(pieces, separator=",", ignore_nulls=True)
    return frame.select(
        pl.when(body.str.len_bytes() > 0)
        .then(pl.concat_str([pl.lit("{"), body, pl.lit("}")]))
        .cast(pl.Binary)
        .alias("m")
    ).to_series()


def _write_mcap(src: _Source, fh: IO[bytes], progress: Progress | None) -> int:
    import polars as pl
    from mcap.well_known import MessageEncoding, SchemaEncoding

    import mjrig
    from mjrig.exports.mcap_scene import open_scene
    from mjrig.exports.mcap_stream import McapStream

    out = McapStream(fh, library=f"mjrig {mjrig.__version__}")
    plan = list(_plan(src).items())
    for k, (topic, attrs) in enumerate(plan, start=1):
        out.schema(k, f"mjrig{topic}", SchemaEncoding.JSONSchema, _schema(src, topic, attrs))
        out.channel(k, k, topic, MessageEncoding.JSON)
    scene = open_scene(src.metadata, src.names, out, first_id=len(plan) + 1)  # the rig in 3D, or None
    out.metadata("mjrig", src.metadata)
    ids = np.arange(1, len(plan) + 1, dtype=np.uint16)
    rows = 0
    # A row's messages are JSON text of every column: a batch of a wide recording read at once
    # held it all three times over (the text, the messages, the chunk). Batches of MCAP_CELLS
    # cells keep the peak near CSV's; each ends in the chunk (flushed at CHUNK_BYTES).
    for batch in src.batches(progress, rows=max(64, MCAP_CELLS // max(1, len(src.names)))):
        frame = _frame(batch)
        n = batch.num_rows
        stamps = _stamps(src, frame["time"].cast(pl.Float64).to_numpy(), rows)
        grid = np.empty((n, len(plan)), dtype=object)
        for k, (_, attrs) in enumerate(plan):
            grid[:, k] = _payloads(frame, src, attrs).to_list()
        keep = np.not_equal(grid, np.array(None, dtype=object)).ravel()  # the cells with a message
        out.messages(
            np.tile(ids, n)[keep],
            np.repeat(np.arange(rows, rows + n, dtype=np.uint32), len(plan))[keep],
            np.repeat(stamps, len(plan))[keep],
            grid.ravel()[keep].tolist(),
        )
        if scene is not None:
            scene.write_rows(out, frame, stamps, first_row=rows)
        rows += n
    out.finish()
    return rows


_WRITERS = {"csv": _write_csv, "mat": _write_mat, "mcap": _write_mcap, "rrd": write_rrd}


def export_recording(path: Path, *, to: str, out: Path, progress: Progress | None = None) -> int:
    """Write the recording at ``path`` to ``out`` in format ``to`` (a key of FORMATS); return the
    rows written. ``out`` is replaced if it exists (the caller decides whether it may be), only
    once the export is complete. ``progress(rows_done, rows_total)`` is called after each row group
    (MATLAB: after each column of the matrix, the rows' worth of the columns written).

    ConfigError (one line, naming the file): ``path`` missing, not Parquet, a sweep's or study's
    results, not a recording (no ``time`` column, a text column); an unknown format; ``out`` not
    writable; a recording too large for MATLAB v5; a row without a time >= 0 s (MCAP)."""
    path, out = Path(path), Path(out)
    fmt = _format(to, path)
    with _open(path) as src, _replacing(out) as fh:
        try:
            return _WRITERS[fmt](src, fh, progress)
        except (OSError, pa.ArrowException) as exc:
            if fault_errno(exc) is not None:  # the disk or the folder: exit 5, atomic_output's line
                raise
            raise ConfigError(one_line(f"{path}: export to {out} failed ({_first_line(exc)})")) from None
