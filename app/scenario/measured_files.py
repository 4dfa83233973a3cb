"""Files of data measured on a bench, read as named numeric columns.

Formats (by suffix): ``.csv`` (a header row, its dialect found: ``measured_csv``), ``.xlsx``
and LabVIEW ``.tdms`` (a sheet or a group: ``measured_lab``), ``.parquet`` (polars), ``.mat`` (MATLAB v5
by scipy, v7.3 -- HDF5 -- by h5py: each numeric vector variable is a column, a struct's fields
are ``struct.field``) and ``.mcap`` (messages with JSON encoding: each numeric field of a topic's
messages is a column ``topic/field`` -- nested fields joined with dots -- sampled at the
messages' ``log_time``, kept as the column ``topic/log_time`` in ns).

``read_measured(path)`` returns ``MeasuredFile``: ``columns`` (name -> float64 array) and, for
MCAP, ``topic`` (column -> its topic, whose columns share rows). ``MeasuredFileError`` carries one
line saying what is wrong with the file. GUI-free; any thread.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from mjrig.scenario.measured_csv import MISSING_CELLS, MeasuredFileError, read_csv
from mjrig.scenario.measured_lab import LAB_SUFFIXES, read_lab

__all__ = ["MeasuredFile", "MeasuredFileError", "MEASURED_SUFFIXES", "MISSING_CELLS", "read_measured"]

MEASURED_SUFFIXES = (".csv", ".parquet", ".mat", ".mcap", *LAB_SUFFIXES)


@dataclass
class MeasuredFile:
    """Numeric columns of a measured-data file; ``topic`` names each MCAP column's topic (the
    columns of one topic share rows; a table's columns all share them)."""

    path: Path
    columns: dict[str, np.ndarray]
    topic: dict[str, str] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    """Column -> the unit the file gives it (a CSV's units row), where it gives one."""

    def rows_of(self, column: str) -> str:
        """The group of columns that share ``column``'s rows ("" for a table's)."""
        return self.topic.get(column, "")


_cache: dict[tuple[str, int, int, str | None], MeasuredFile] = {}


def read_measured(path: Path, *, part: str | None = None) -> MeasuredFile:
    """The file's numeric columns (cached while the file is unchanged); ``part``: a workbook's
    sheet or a TDMS file's group (default the first); MeasuredFileError."""
    try:
        st = path.stat()
    except OSError as exc:
        raise MeasuredFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    key = (str(path), st.st_mtime_ns, st.st_size, part)
    if key not in _cache:
        suffix = path.suffix.lower()
        readers: dict[str, Callable[[Path], MeasuredFile]] = {
            ".csv": _csv,
            ".parquet": _table,
            ".mat": _mat,
            ".mcap": _mcap,
        }
        readers.update(dict.fromkeys(LAB_SUFFIXES, partial(_lab, part=part)))
        reader = readers.get(suffix)
        if reader is None:
            raise MeasuredFileError(f"{path.name}: not a measured-data file (choose {', '.join(MEASURED_SUFFIXES)})")
        try:
            found = reader(path)
        except MeasuredFileError:
            raise
        except Exception as exc:  # noqa: BLE001 - every library's own error, as one line
            raise MeasuredFileError(f"cannot read {path.name}: {type(exc).__name__}: {exc}".splitlines()[0]) from None
        if not found.columns:
            raise MeasuredFileError(f"{path.name} has no numeric columns")
        if len(_cache) > 16:
            _cache.clear()
        _cache[key] = found
    return _cache[key]


def _lab(path: Path, *, part: str | None) -> MeasuredFile:
    columns, units = read_lab(path, part=part)
    return MeasuredFile(path, columns, units=units)


def _csv(path: Path) -> MeasuredFile:
    columns, units = read_csv(path)
    return MeasuredFile(path, columns, units=units)


def _table(path: Path) -> MeasuredFile:
    import polars as pl

    frame = pl.read_parquet(path)
    # a column of numbers, or of nothing but missing cells (a sensor that recorded nothing is
    # still the file's column: CONTRACT 10), never a text column
    cols = {
        c: frame[c].cast(pl.Float64, strict=False).fill_null(np.nan).to_numpy().astype(float)
        for c in frame.columns
        if frame[c].dtype.is_numeric() or frame[c].null_count() == frame.height > 0
    }
    return MeasuredFile(path, cols)


def _mat(path: Path) -> MeasuredFile:
    with open(path, "rb") as fh:
        head = fh.read(512)
    if b"MATLAB 7.3" in head[:128] or head[:8] == b"\x89HDF\r\n\x1a\n":
        return MeasuredFile(path, _mat73(path))
    import scipy.io

    data = scipy.io.loadmat(str(path), squeeze_me=True, struct_as_record=False)
    cols: dict[str, np.ndarray] = {}
    for name, value in data.items():
        if not name.startswith("__"):
            _mat_value(name, value, cols)
    return MeasuredFile(path, cols)


def _mat_value(name: str, value: Any, cols: dict[str, np.ndarray]) -> None:
    if type(value).__name__ == "mat_struct":  # a MATLAB struct: its fields are its attributes
        for f, v in vars(value).items():
            if not f.startswith("_"):
                _mat_value(f"{name}.{f}", v, cols)
        return
    arr = np.asarray(value)
    if arr.dtype.kind in "fiub" and arr.size > 1 and (arr.ndim == 1 or (arr.ndim == 2 and min(arr.shape) == 1)):
        cols[name] = arr.astype(float).ravel()


def _mat73(path: Path) -> dict[str, np.ndarray]:
    import h5py

    cols: dict[str, np.ndarray] = {}
    with h5py.File(path, "r") as fh:

        def visit(name: str, obj: Any) -> None:
            if (
                isinstance(obj, h5py.Dataset)
                and obj.dtype.kind in "fiub"
                and obj.ndim <= 2
                and obj.size > 1
                and min(obj.shape) == 1
                and not name.startswith("#")
            ):
                cols[name.replace("/", ".")] = np.asarray(obj[()], dtype=float).ravel()

        fh.visititems(visit)
    return cols


def _mcap(path: Path) -> MeasuredFile:
    from mcap.reader import make_reader

    rows: dict[str, list[tuple[int, dict[str, float]]]] = {}
    with open(path, "rb") as fh:
        for _schema, channel, message in make_reader(fh).iter_messages():
            if channel.message_encoding != "json":
                continue
            try:
                payload = json.loads(message.data)
            except ValueError:
                raise MeasuredFileError(f"{path.name}: a message on {channel.topic} is not JSON") from None
            flat: dict[str, float] = {}
            _flatten("", payload, flat)
            rows.setdefault(channel.topic, []).append((int(message.log_time), flat))
    if not rows:
        raise MeasuredFileError(f"{path.name} has no messages with JSON encoding")
    cols: dict[str, np.ndarray] = {}
    topic: dict[str, str] = {}
    for name, msgs in rows.items():
        msgs.sort(key=lambda m: m[0])
        fields = list(dict.fromkeys(k for _, f in msgs for k in f))
        cols[f"{name}/log_time"] = np.array([t for t, _ in msgs], dtype=float)
        topic[f"{name}/log_time"] = name
        for k in fields:
            cols[f"{name}/{k}"] = np.array([f.get(k, np.nan) for _, f in msgs], dtype=float)
            topic[f"{name}/{k}"] = name
    return MeasuredFile(path, cols, topic)


def _flatten(prefix: str, value: Any, out: dict[str, float]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        out[prefix] = float(value)
