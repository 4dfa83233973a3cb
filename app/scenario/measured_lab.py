"""Bench files from lab software other than text: Excel workbooks (``.xlsx``) and LabVIEW TDMS.

- ``.xlsx`` (fastexcel, through polars' ``read_excel``): one sheet (``sheet``, default the
  first), its first row the header; a row of units under it (every cell a unit or empty) gives
  the columns their units, as in a CSV; numeric columns only.
- ``.tdms`` (npTDMS): one group (``group``, default the file's first), each channel a column by
  its name, its unit from the channel's ``unit_string`` property; a waveform channel (with
  ``wf_increment``) also gives the group's time, the column ``time`` (s), where no channel has
  that name.

``read_lab(path, part=...)`` returns (columns, units) as ``measured_csv.read_csv`` does;
``parts(path)`` the sheets or groups a file offers. MeasuredFileError (one line) otherwise.
GUI-free; any thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from mjrig.scenario.measured_csv import MISSING_CELLS, MeasuredFileError, unit_cell

__all__ = ["LAB_SUFFIXES", "parts", "read_lab"]

LAB_SUFFIXES = (".xlsx", ".tdms")
"""The suffixes read here."""


def parts(path: Path) -> list[str]:
    """The sheets of a workbook or the groups of a TDMS file, in the file's order;
    MeasuredFileError (one line) for a file the library cannot open."""
    try:
        if path.suffix.lower() == ".xlsx":
            import fastexcel

            return list(fastexcel.read_excel(str(path)).sheet_names)
        from nptdms import TdmsFile

        with TdmsFile.open(str(path)) as f:
            return [g.name for g in f.groups()]
    except Exception as exc:  # noqa: BLE001 - the library's own error, as one line
        raise MeasuredFileError(f"cannot read {path.name}: {type(exc).__name__}: {exc}".splitlines()[0]) from None


def read_lab(path: Path, *, part: str | None = None) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """({column: float64 values}, {column: unit}) of sheet or group ``part`` (default the first)."""
    offered = parts(path)
    if not offered:
        raise MeasuredFileError(f"{path.name} has no {'sheets' if path.suffix.lower() == '.xlsx' else 'groups'}")
    what = "sheet" if path.suffix.lower() == ".xlsx" else "group"
    name = part if part is not None else offered[0]
    if name not in offered:
        raise MeasuredFileError(f"{path.name} has no {what} '{name}' (it has {', '.join(offered)})")
    return _sheet(path, name) if what == "sheet" else _group(path, name)


def _number(value: Any) -> float | None:
    """A cell as a number, None for a missing cell; raises ValueError for text."""
    if value is None or (isinstance(value, str) and value.strip() in MISSING_CELLS):
        return None
    if isinstance(value, bool):
        raise ValueError(value)
    return float(value)


def _sheet(path: Path, name: str) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    import polars as pl

    frame = pl.read_excel(path, sheet_name=name, has_header=False, infer_schema_length=None, engine="calamine")
    if frame.height == 0:
        raise MeasuredFileError(f"{path.name}: sheet '{name}' is empty")
    header = [("" if v is None else str(v)).strip() for v in frame.row(0)]
    rows = frame.slice(1)
    units: dict[str, str] = {}
    if rows.height:
        first = rows.row(0)
        cells = ["" if v is None else str(v).strip() for v in first]
        if any(cells) and all(not c or _is_text(v) for c, v in zip(cells, first)):
            units = {h: unit_cell(c) for h, c in zip(header, cells) if h and c and c != "-"}
            rows = rows.slice(1)
    columns: dict[str, np.ndarray] = {}
    for i, h in enumerate(header):
        if not h:
            continue
        try:
            values = [_number(v) for v in rows.get_column(rows.columns[i]).to_list()]
        except (TypeError, ValueError):
            continue  # a text column
        columns[h] = np.array([np.nan if v is None else v for v in values], dtype=float)
    return columns, {h: u for h, u in units.items() if h in columns}


def _is_text(value: Any) -> bool:
    """Whether a cell holds words (a unit), not a number or a missing cell."""
    try:
        _number(value)
    except (TypeError, ValueError):
        return True
    return False


def _group(path: Path, name: str) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    from nptdms import TdmsFile

    columns: dict[str, np.ndarray] = {}
    units: dict[str, str] = {}
    with TdmsFile.open(str(path)) as f:
        group = f[name]
        clock: np.ndarray | None = None
        for channel in group.channels():
            data = np.asarray(channel[:])
            if data.dtype.kind not in "fiub":
                continue
            columns[channel.name] = data.astype(float)
            unit = str(channel.properties.get("unit_string", "") or "").strip()
            if unit:
                units[channel.name] = unit_cell(unit)
            if clock is None and "wf_increment" in channel.properties:
                clock = np.asarray(channel.time_track(), dtype=float)
        if clock is not None and "time" not in columns:
            columns["time"], units["time"] = clock, "s"
    return columns, units
