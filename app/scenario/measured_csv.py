"""Bench CSV files as lab software writes them.

A bench's CSV comes with the habits of the program that wrote it: a separator of ``,``, ``;``,
a tab or runs of spaces; decimal commas (``0,25`` where ``;`` separates); ``#`` comment lines
before the header or between rows; a byte-order mark; quoted header cells; and, under the
header, a row of units (``s;mm;N`` or ``[ms] [mm]``). ``read_csv`` finds the dialect from the
first lines (``sniff``), hands the rows to polars with it, and returns the numeric columns with
the units of the units row. A file that still cannot be read raises ``MeasuredFileError`` with
one line naming the cause and the line (``line 3 has 2 fields, the header 3``).

GUI-free; any thread.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["Dialect", "MeasuredFileError", "MISSING_CELLS", "read_csv", "sniff", "unit_cell"]

MISSING_CELLS = ("NA", "N/A", "#N/A", "nan", "NaN", "NULL", "-", "")
"""How a bench's CSV says a sample is missing (CONTRACT 10): read as NaN, never a text column."""
COMMENT = "#"
"""A line whose first non-blank character is this is a comment."""
SEPARATORS = (",", ";", "\t", " ")
"""The separators tried, in this order when two fit equally (``" "``: runs of spaces and tabs)."""
SAMPLE_LINES = 50
"""Lines (comments and blank lines left out) the dialect is found from."""
_DECIMAL_COMMA = re.compile(r"^[+-]?(\d+,\d*|,\d+)([eE][+-]?\d+)?$")
_UNIT_BRACKETS = "[]()"
_UNIT_WORDS = {"°": "deg", "°/s": "deg/s", "µs": "us", "μs": "us", "sec": "s", "msec": "ms"}


class MeasuredFileError(ValueError):
    """A measured-data file that cannot be read as columns (one line)."""


@dataclass(frozen=True)
class Dialect:
    """How a CSV file is written: its ``separator`` (``" "`` for runs of blanks), whether numbers
    have a ``decimal_comma``, the file's line number (1-based) of the ``header`` and of its units
    row (``units_line``, 0 without one) and that row's ``units`` (one per column, "" for none)."""

    separator: str
    decimal_comma: bool
    header: int
    units_line: int = 0
    units: tuple[str, ...] = ()


def _fields(line: str, separator: str) -> list[str]:
    """The cells of one line (quotes as CSV quotes them), stripped of blanks."""
    if separator == " ":
        line, separator = line.replace("\t", " ").strip(), " "
        row = next(csv.reader([line], delimiter=" ", skipinitialspace=True), [])
    else:
        row = next(csv.reader([line], delimiter=separator), [])
    return [c.strip() for c in row]


def _number(cell: str, decimal_comma: bool) -> bool:
    """Whether ``cell`` is a number (or a missing cell) as the file writes them."""
    if cell in MISSING_CELLS:
        return True
    try:
        float(cell.replace(",", ".") if decimal_comma and _DECIMAL_COMMA.match(cell) else cell)
    except ValueError:
        return False
    return True


def unit_cell(cell: str) -> str:
    """A units row's cell as a unit: brackets taken off, ``°`` as ``deg``."""
    u = cell.strip().strip(_UNIT_BRACKETS).strip()
    return _UNIT_WORDS.get(u, u)


def _is_units_row(cells: list[str], width: int, decimal_comma: bool) -> bool:
    """Every cell a unit or empty (at least one unit), as many cells as the header has."""
    if len(cells) > width or not any(cells):
        return False
    return all(c in ("", "-") or (not _number(c, decimal_comma) and len(unit_cell(c)) <= 16) for c in cells)


def _kept_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line that is neither blank nor a comment."""
    return [
        (i, line)
        for i, line in enumerate(text.splitlines(), 1)
        if line.strip() and not line.lstrip().startswith(COMMENT)
    ]


def sniff(lines: list[tuple[int, str]]) -> Dialect:
    """The dialect of a CSV file from its first kept lines ((line number, line); comments and
    blank lines left out); MeasuredFileError when there are none."""
    if not lines:
        raise MeasuredFileError("has no header row")
    sample = lines[:SAMPLE_LINES]
    best: tuple[int, str] | None = None
    for sep in SEPARATORS:
        counts = [len(_fields(line, sep)) for _, line in sample]
        if counts[0] < 2:
            continue
        fit = sum(1 for c in counts if c == counts[0])
        if best is None or fit > best[0]:
            best = (fit, sep)
    sep = best[1] if best is not None else ","  # one column
    header_no, header = lines[0]
    width = len(_fields(header, sep))
    rows = [_fields(line, sep) for _, line in sample[1:]]
    decimal_comma = sep != "," and any(_DECIMAL_COMMA.match(c) for row in rows for c in row)
    if rows and _is_units_row(rows[0], width, decimal_comma):
        cells = [unit_cell(c) if c != "-" else "" for c in rows[0]]
        return Dialect(sep, decimal_comma, header_no, sample[1][0], tuple(cells + [""] * (width - len(cells))))
    return Dialect(sep, decimal_comma, header_no)


def _decode(data: bytes) -> str:
    """The file's text: UTF-8 (a byte-order mark dropped), else Windows-1252 as lab PCs write it."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _ragged(lines: list[tuple[int, str]], dialect: Dialect, width: int) -> str | None:
    """The first data line whose fields are not the header's (a separator ending a line is no
    field), as one line, or None."""
    sep = dialect.separator
    for no, line in lines:
        if no <= max(dialect.header, dialect.units_line):
            continue
        if sep != " " and '"' not in line:  # the common case, counted without a CSV reader
            n = line.count(sep) + 1
            if n == width or (n == width + 1 and line.rstrip().endswith(sep)):
                continue
        cells = _fields(line, sep)
        while len(cells) > width and cells[-1] == "":  # a separator at the end of the line
            cells.pop()
        if len(cells) != width:
            return f"line {no} has {len(cells)} field{'s' if len(cells) != 1 else ''}, the header {width}"
    return None


def read_csv(path: Path) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """({column: float64 values}, {column: unit from the units row}) of a bench CSV: numeric
    columns only (a column of nothing but missing cells is one), missing cells NaN."""
    import polars as pl

    lines = _kept_lines(_decode(path.read_bytes()))
    try:
        dialect = sniff(lines)
    except MeasuredFileError as exc:
        raise MeasuredFileError(f"{path.name}: {exc}") from None
    header = _fields(lines[0][1], dialect.separator)
    body = [line for no, line in lines if no != dialect.units_line]
    if dialect.separator == " ":  # runs of blanks: polars reads one separator, a tab
        body = ["\t".join(_fields(line, " ")) for line in body]
    ragged = _ragged(lines, dialect, len(header))
    if ragged:
        raise MeasuredFileError(f"{path.name}: {ragged}")
    try:
        frame = pl.read_csv(
            io.BytesIO("\n".join(body).encode("utf-8")),
            separator="\t" if dialect.separator == " " else dialect.separator,
            decimal_comma=dialect.decimal_comma,
            infer_schema_length=10000,
            null_values=list(MISSING_CELLS),
            truncate_ragged_lines=True,  # only a separator ending a line is left (``_ragged``)
        )
    except pl.exceptions.PolarsError as exc:
        raise MeasuredFileError(f"{path.name}: {type(exc).__name__}: {str(exc).splitlines()[0]}") from None
    frame.columns = [h or f"column_{i + 1}" for i, h in enumerate(header)][: frame.width] + frame.columns[len(header) :]
    columns = {
        c: frame[c].cast(pl.Float64, strict=False).fill_null(np.nan).to_numpy().astype(float)
        for c in frame.columns
        if frame[c].dtype.is_numeric() or frame[c].null_count() == frame.height > 0
    }
    units = {c: u for c, u in zip(frame.columns, dialect.units) if u and c in columns}
    return columns, units
