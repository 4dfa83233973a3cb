"""A scenario's ``[[measured]]`` entries: data measured on the bench, mapped onto telemetry.

```toml
[[measured]]
name = "bench"                 # unique; the overlay's label
file = "bench/drop3.csv"       # .csv, .parquet, .mat (v5 or v7.3), .mcap (JSON messages), .xlsx, .tdms
time = "t"                     # the time column (MCAP: each topic's log_time when left out)
time_unit = "ms"               # s (default), ms, us, ns
offset = 0.0                   # s added to the file's time to line it up with the run
set = { F0 = 20.0 }            # optional: param values this experiment was made with
[measured.initial]             # optional: the experiment's initial state, as [initial]
qpos = { slide = 0.02 }
[measured.signals]             # a telemetry column = a column of the file, in its unit
"Joints/slide:qpos" = { column = "x_mm", unit = "mm", scale = 1.0 }
```

Each mapped signal becomes a series in SI (``Measured.series``: times in s with the offset,
values × scale in the signal's SI unit), its NaN samples left out. Units are the display units'
(``[units]``: m, mm, cm, in; rad, deg; N, kN, lbf; N·m, N·mm, kN·m), their rates (``mm/s``,
``deg/s^2``), s, ms, us for times, or the signal's own SI unit. Errors are one line at
FILE:LINE: a file column that is missing (with the closest names), a unit that does not fit,
a time column that does not increase; ``Measured.check`` adds the signals the rig does not have
and units that do not fit the signal's quantity, once the model is compiled. GUI-free.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.points import closest_names
from mjrig.runtime.telemetry.units import CHOICES, SI
from mjrig.scenario.fields import FieldReader
from mjrig.scenario.initial import InitialState, read_initial
from mjrig.scenario.measured_files import MEASURED_SUFFIXES, MeasuredFileError, read_measured

__all__ = [
    "Measured",
    "MeasuredSignal",
    "parse_measured",
    "link_metrics",
    "unit_factor",
    "TIME_UNITS",
    "MEASURED_KEY",
    "measured_metadata",
    "read_measured_metadata",
]

MEASURED_KEY = "mjrig.measured"
"""A recording's metadata key of its scenario's measured entries (``measured_metadata``)."""
KEPT_SAMPLES = 20000
"""Samples of a measured series a recording keeps (more are thinned evenly for the overlays)."""
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
"""A time column's units: seconds per unit."""
_KEYS = {"name", "file", "time", "time_unit", "offset", "set", "initial", "signals", "role", "sheet", "group"}
_PART_KEYS = {".xlsx": "sheet", ".tdms": "group"}
"""The key naming the part of a file an entry reads, by suffix: a workbook's sheet, a TDMS group."""
ROLES = ("fit", "validation")
"""An entry's part in a fit: in its residual, or only scored with the start and the estimate."""
_SIGNAL_KEYS = {"column", "unit", "scale"}
_RATES = ("", "/s", "/s^2", "/s²")


def _norm(unit: str) -> str:
    return unit.replace("*", "·").replace("Nm", "N·m").replace("/s²", "/s^2").strip()


def unit_factor(unit: str) -> tuple[float, str] | None:
    """(SI per ``unit``, the SI unit) of a known unit (a display unit, its rates, a time unit),
    None for any other (which must then be the signal's own SI unit)."""
    u = _norm(unit)
    for rate in _RATES:
        if rate and not u.endswith(rate):
            continue
        base = u[: len(u) - len(rate)] if rate else u
        for quantity, choices in CHOICES.items():
            if base in choices:
                return 1.0 / choices[base], SI[quantity] + rate
    if u in TIME_UNITS:
        return TIME_UNITS[u], "s"
    return None


@dataclass(frozen=True)
class MeasuredSignal:
    """One mapped signal: the file's ``column``, its ``unit`` ("" : the signal's SI unit) and a
    ``scale`` applied before the unit."""

    signal: str
    column: str
    unit: str = ""
    scale: float = 1.0
    unit_from_file: bool = False
    """Whether ``unit`` is the file's (a units row, a channel's ``unit_string``), not the entry's."""


@dataclass(eq=False)
class Measured:
    """One ``[[measured]]`` entry (one experiment) with its series read (``series``)."""

    name: str
    file: Path
    time: str | None = None
    part: str | None = None
    """The sheet (``.xlsx``) or group (``.tdms``) read: ``sheet`` / ``group`` (None: the first)."""
    time_unit: str = "s"
    offset: float = 0.0
    role: str = "fit"  # or "validation": kept out of a fit's residual, scored before and after it
    set: dict[str, float] = field(default_factory=dict)
    initial: InitialState = field(default_factory=InitialState)
    signals: dict[str, MeasuredSignal] = field(default_factory=dict)
    data: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)
    """Signal -> (times s, values in SI), filled when the entry is read."""

    def series(self, signal: str) -> tuple[np.ndarray, np.ndarray]:
        """(times s, values in SI) of a mapped signal."""
        return self.data[signal]

    def check(self, units: Mapping[str, str], where: Callable[..., str]) -> None:
        """ConfigError for a mapped signal the rig does not have (closest names; ``units``: the
        rig's columns' SI units) or whose unit does not fit the signal's."""
        for sig, ms in self.signals.items():
            if sig not in units:
                raise ConfigError(
                    f"{where('signals', sig)}: the rig has no signal '{sig}'{closest_names(sig, sorted(units))}"
                )
            have = _norm(units[sig])
            known = unit_factor(ms.unit) if ms.unit else None
            got = known[1] if known is not None else _norm(ms.unit or units[sig])
            if _norm(got) == have:
                continue
            said = f"{self.file.name} gives column '{ms.column}' the unit" if ms.unit_from_file else "unit"
            at = where("signals", sig, "column" if ms.unit_from_file else "unit")
            if known is None and ms.unit_from_file:  # a unit of the file's own words
                knows = "; ".join(f"{q} {', '.join(c)}" for q, c in CHOICES.items())
                raise ConfigError(
                    f"{at}: {said} '{ms.unit}', which is neither {sig}'s own '{units[sig] or 'none'}' nor one "
                    f"mjrig knows ({knows}; time {', '.join(TIME_UNITS)}; their rates per s): give the "
                    "entry's 'unit' (and 'scale')"
                )
            raise ConfigError(f"{at}: {said} '{ms.unit}' does not fit {sig}, whose unit is '{units[sig] or 'none'}'")


def parse_measured(
    entries: Any, reader: FieldReader, params: Mapping[str, Any], *, duration: float | None = None
) -> list[Measured]:
    """``[[measured]]`` read with ``reader`` (its ``fail`` gives FILE:LINE errors), each file read
    and mapped; ``params`` are the scenario's params by name (for ``set``); a time span more than
    ``SPAN_FACTOR`` × ``duration`` (s, the scenario's) is refused, naming the likely time unit."""
    if not isinstance(entries, list):
        raise reader.fail(("measured",), "must be an array of tables ([[measured]])")
    out: list[Measured] = []
    for i, spec in enumerate(entries):
        entry = _entry(spec, reader, ("measured", i), params)
        if duration is not None:
            _check_span(entry, duration, reader, ("measured", i))
        if any(m.name == entry.name for m in out):
            raise reader.fail(("measured", i, "name"), f"duplicate measured name '{entry.name}'")
        out.append(entry)
    return out


def _entry(spec: Any, reader: FieldReader, path: tuple, params: Mapping[str, Any]) -> Measured:
    table = reader.keys(spec, _KEYS, path)
    for key in ("name", "file", "signals"):
        if key not in table:
            raise reader.fail(path, f"missing required field '{key}'")
    m = Measured(
        name=reader.string(table["name"], (*path, "name")), file=reader.path_value(table["file"], (*path, "file"))
    )
    if m.file.suffix.lower() not in MEASURED_SUFFIXES:
        raise reader.fail(
            (*path, "file"), f"'{m.file.name}' is not measured data (choose {', '.join(MEASURED_SUFFIXES)})"
        )
    if not m.file.is_file():
        raise reader.fail((*path, "file"), f"measured file not found: {m.file}")
    for key in ("sheet", "group"):
        if key in table:
            if _PART_KEYS.get(m.file.suffix.lower()) != key:
                raise reader.fail(
                    (*path, key), f"'{key}' is for {'.xlsx' if key == 'sheet' else '.tdms'} files, not {m.file.name}"
                )
            m.part = reader.string(table[key], (*path, key))
    if "time" in table:
        m.time = reader.string(table["time"], (*path, "time"))
    if "time_unit" in table:
        unit = table["time_unit"]
        if unit not in TIME_UNITS:
            raise reader.fail((*path, "time_unit"), f"unknown time unit {unit!r} (choose {', '.join(TIME_UNITS)})")
        m.time_unit = unit
    if "offset" in table:
        m.offset = reader.number(table["offset"], (*path, "offset"))
    if "role" in table:
        if table["role"] not in ROLES:
            raise reader.fail((*path, "role"), f"unknown role {table['role']!r} (choose {', '.join(ROLES)})")
        m.role = table["role"]
    sets = table.get("set", {})
    if not isinstance(sets, dict):
        raise reader.fail((*path, "set"), "must be a table of param values: { NAME = value }")
    for k in sets:
        if k not in params:
            hint = closest_names(k, sorted(params)) if params else " (the scenario has no [params])"
            raise reader.fail((*path, "set", k), f"unknown param '{k}'{hint}")
    m.set = {k: reader.number(v, (*path, "set", k)) for k, v in sets.items()}
    if "initial" in table:
        m.initial = read_initial(reader, table["initial"], at=(*path, "initial"))
    signals = table["signals"]
    if not isinstance(signals, dict) or not signals:
        raise reader.fail((*path, "signals"), 'needs [measured.signals]: "SIGNAL" = { column = "...", unit = "..." }')
    for sig, s in signals.items():
        where = (*path, "signals", sig)
        if isinstance(s, str):
            s = {"column": s}
        reader.keys(s, _SIGNAL_KEYS, where)
        if "column" not in s:
            raise reader.fail(where, "missing required field 'column' (the file's column)")
        unit = s.get("unit", "")
        if not isinstance(unit, str):
            raise reader.fail((*where, "unit"), "must be a string")
        scale = reader.number(s["scale"], (*where, "scale")) if "scale" in s else 1.0
        m.signals[sig] = MeasuredSignal(sig, reader.string(s["column"], (*where, "column")), unit, scale)
    _read(m, reader, path, time_unit_given="time_unit" in table)
    return m


def _read(m: Measured, reader: FieldReader, path: tuple, *, time_unit_given: bool) -> None:
    """Fill ``m.data`` from its file (FILE:LINE errors at the fields that name what is wrong);
    the file's own units (a CSV's units row) where the entry gives none (``time_unit_given``:
    whether it gave its time's)."""
    try:
        f = read_measured(m.file, part=m.part)
    except MeasuredFileError as exc:
        raise reader.fail((*path, "file"), str(exc)) from None
    names = list(f.columns)
    for sig, ms in m.signals.items():
        if ms.column not in f.columns:
            raise reader.fail(
                (*path, "signals", sig, "column"),
                f"{m.file.name} has no column '{ms.column}'{closest_names(ms.column, names)}",
            )
    for sig, ms in m.signals.items():  # a units row's unit where the entry gives none
        if not ms.unit and f.units.get(ms.column):
            m.signals[sig] = replace(ms, unit=f.units[ms.column], unit_from_file=True)
    time_col = m.time
    if time_col is None and not f.topic:
        time_col = next((c for c in ("time", "t") if c in f.columns), None)
        if time_col is None:
            raise reader.fail(
                path, f"needs 'time': the column of {m.file.name} that holds the time{closest_names('time', names)}"
            )
    if time_col is not None and time_col not in f.columns:
        raise reader.fail((*path, "time"), f"{m.file.name} has no column '{time_col}'{closest_names(time_col, names)}")
    if time_col is not None and not time_unit_given and f.units.get(time_col) in TIME_UNITS:
        m.time_unit = f.units[time_col]
    for sig, ms in m.signals.items():
        if ms.unit:
            known = unit_factor(ms.unit)
            factor = known[0] if known is not None else 1.0
        else:
            factor = 1.0
        if time_col is None:  # MCAP: the topic's own log times, in ns
            group = f.rows_of(ms.column)
            t_raw, scale_t, tpath = f.columns[f"{group}/log_time"], 1e-9, (*path, "signals", sig, "column")
        else:
            if f.rows_of(ms.column) != f.rows_of(time_col):
                raise reader.fail(
                    (*path, "signals", sig, "column"),
                    f"'{ms.column}' is on topic "
                    f"{f.rows_of(ms.column)!r}, the time column '{time_col}' on {f.rows_of(time_col)!r}",
                )
            t_raw, scale_t, tpath = f.columns[time_col], TIME_UNITS[m.time_unit], (*path, "time")
        x = f.columns[ms.column] * ms.scale * factor
        t = t_raw * scale_t + m.offset
        if not np.isfinite(x).any():
            raise reader.fail(
                (*path, "signals", sig, "column"),
                f"'{ms.column}' of {m.file.name} has no samples: every cell is missing",
            )
        untimed = np.flatnonzero(np.isfinite(x) & ~np.isfinite(t))
        if untimed.size:  # a value is kept only with its time
            k = int(untimed[0])
            raise reader.fail(
                tpath,
                f"time is missing in {m.file.name} at sample {k + 1}, where '{ms.column}' has a value "
                f"({untimed.size} such sample{'s' if untimed.size > 1 else ''})",
            )
        keep = np.isfinite(x) & np.isfinite(t)
        t, x = t[keep], x[keep]
        if t.size < 2:
            raise reader.fail((*path, "signals", sig, "column"), f"'{ms.column}' has fewer than 2 samples")
        if np.any(np.diff(t) <= 0):
            k = int(np.flatnonzero(np.diff(t) <= 0)[0])
            raise reader.fail(
                tpath,
                f"time does not increase in {m.file.name}: sample {k + 2} of "
                f"'{ms.column}' is at {t_raw[keep][k + 1]:g}, after {t_raw[keep][k]:g}",
            )
        m.data[sig] = (t, x)


SPAN_FACTOR = 10.0
"""A measured time span this many times the scenario's duration is a time unit gone wrong."""


def _check_span(m: Measured, duration: float, reader: FieldReader, path: tuple) -> None:
    """ConfigError when ``m``'s samples span more than ``SPAN_FACTOR`` × ``duration`` s (a ms
    column read as s simulates a thousand times too long and scores a handful of samples)."""
    spans = [float(t[-1] - t[0]) for t, _ in m.data.values() if t.size]
    span = max(spans, default=0.0)
    if span <= SPAN_FACTOR * duration:
        return
    per = TIME_UNITS[m.time_unit]
    fits = {u: span * f / per for u, f in TIME_UNITS.items() if u != m.time_unit}
    likely = min(fits, key=lambda u: abs(math.log(max(fits[u], 1e-300) / duration)))
    hint = (
        f": is '{m.time}' in {likely}? (then it spans {fits[likely]:.4g} s; time_unit = \"{likely}\")"
        if m.time and fits[likely] <= SPAN_FACTOR * duration
        else ""
    )
    raise reader.fail(
        (*path, "time_unit" if m.time else "file"),
        f'{m.file.name} spans {span:.4g} s of measured time (time_unit = "{m.time_unit}"), more than '
        f"{SPAN_FACTOR:g} × the scenario's duration {duration:g} s{hint}",
    )


def link_metrics(metrics: list[Any], measured: list[Measured], reader: FieldReader) -> None:
    """Give each ``rms_error``/``max_error`` metric the series of the ``[[measured]]`` entry it
    names in ``against`` (ConfigError at its field: an unknown entry, or one that does not map
    the metric's signal)."""
    by_name = {m.name: m for m in measured}
    for i, metric in enumerate(metrics):
        if metric.against is None:
            continue
        entry = by_name.get(metric.against)
        if entry is None:
            hint = closest_names(metric.against, sorted(by_name)) if by_name else " (the scenario has no [[measured]])"
            raise reader.fail(("metrics", i, "against"), f"unknown measured entry '{metric.against}'{hint}")
        if metric.signal not in entry.signals:
            raise reader.fail(
                ("metrics", i, "signal"),
                f"measured entry '{entry.name}' has no column for "
                f"{metric.signal}{closest_names(metric.signal, sorted(entry.signals))}",
            )
        metric.reference = entry.series(metric.signal)


def measured_metadata(measured: list[Measured]) -> str:
    """The JSON a recording keeps under ``MEASURED_KEY``: each entry's name, file and mapping, and
    each series in SI (times s, values), thinned evenly to ``KEPT_SAMPLES``, so that its plots,
    replay and report show the bench again without the files."""
    out = []
    for m in measured:
        signals = {}
        for sig, ms in m.signals.items():
            t, x = m.series(sig)
            step = max(1, -(-t.size // KEPT_SAMPLES))
            signals[sig] = {
                "column": ms.column,
                "unit": ms.unit,
                "scale": ms.scale,
                "t": t[::step].tolist(),
                "x": x[::step].tolist(),
            }
        out.append({"name": m.name, "file": str(m.file), "signals": signals})
    return json.dumps(out)


def read_measured_metadata(text: str) -> list[tuple[str, str, np.ndarray, np.ndarray]]:
    """(entry name, signal, times s, values SI) of every series in ``measured_metadata``'s JSON;
    empty for none or unreadable text."""
    try:
        entries = json.loads(text) if text else []
        return [
            (str(e["name"]), str(sig), np.asarray(v["t"], float), np.asarray(v["x"], float))
            for e in entries
            for sig, v in e["signals"].items()
        ]
    except (ValueError, KeyError, TypeError, AttributeError):
        return []
