"""Bench data brought into the app: a CSV, MAT or MCAP file (or a Parquet file that is neither a
recording nor results) opened with File > Open or dropped on the 3D view is offered to the rig
(``BenchPart.measured_offer``): its columns, with a guess of the time column and of the signal
and unit each column measures. The panel asks; ``AddMeasured`` makes the answer a
``[[measured]]`` entry of the rig (saved with the scenario) and the plots draw it.

Guesses: a time column named like ``t``/``time`` (with a unit: ``t_ms``, ``time [s]``), else the
first that increases; a unit from a column's suffix or brackets (``x_mm``, ``angle [deg]``); a
signal whose short name (``slide:qpos`` of ``Joints/slide:qpos``) reads like the column's name
(difflib), among those whose unit fits. GUI-free.
"""
from __future__ import annotations

import copy
import difflib
import re
from pathlib import Path
from typing import Any, Callable

import numpy as np

from mjrig import commands as C
from mjrig.recordings.measured_files import MEASURED_SUFFIXES, MeasuredFileError, read_measured
from mjrig.runtime.errors import ConfigError
from mjrig.scenario.measured import TIME_UNITS, unit_factor
from mjrig.session.context import RigContext

__all__ = ["Bench", "is_bench_file", "guess_unit"]

_OFFERED_SIGNALS = 400
"""Signals a column may be mapped to in the panel's list at most (those whose unit fits first)."""


def is_bench_file(path: str | Path) -> bool:
    """Whether ``path`` is bench data to offer (not a model, scenario, recording or results)."""
    return Path(path).suffix.lower() in MEASURED_SUFFIXES and Path(path).suffix.lower() != ".parquet"


def guess_unit(column: str) -> tuple[str, str]:
    """(the column's name without a unit, the unit it names or "")."""
    m = re.fullmatch(r"\s*(.*?)\s*[\[(]\s*([^\])]+?)\s*[\])]\s*", column) or re.fullmatch(r"(.*?)[_ ]([A-Za-z·*/^²0-9]+)", column)
    if m and (unit_factor(m.group(2)) is not None):
        return m.group(1), m.group(2)
    return column, ""


class Bench:
    """The bench file offered to the rig, and its answer."""

    def __init__(self, ctx: RigContext) -> None:
        self.ctx = ctx
        self.offer: C.MeasuredOffer | None = None

    def handlers(self) -> dict[type[C.Command], Callable[[Any], None]]:
        return {C.AddMeasured: self.add}

    def rig_opened(self) -> None:
        """An offer is made to the rig it was made for."""
        self.offer = None

    def publish(self) -> C.BenchPart:
        return C.BenchPart(self.offer)

    def offered(self, path: str | Path) -> None:
        """Offer the bench file ``path`` to the rig (ConfigError: unreadable, or no rig open)."""
        rig = self.ctx.rig()
        if rig is None:
            raise ConfigError(f"{Path(path).name}: open a model or scenario first, then its bench data")
        path = Path(path).expanduser().resolve()
        try:
            f = read_measured(path)
        except MeasuredFileError as exc:
            raise ConfigError(str(exc)) from None
        units = rig.runtime.signal_units()
        cols = tuple(f.columns)
        time = "" if f.topic else next((c for c in cols if guess_unit(c)[0].lower() in ("t", "time")), "")
        if not time and not f.topic:
            time = next((c for c in cols if np.all(np.diff(f.columns[c][np.isfinite(f.columns[c])]) > 0)), cols[0])
        time_unit = guess_unit(time)[1] if guess_unit(time)[1] in TIME_UNITS else "s"
        guesses = tuple((c, *self._guess(c, units)) for c in cols if c != time and not c.endswith("/log_time"))
        names = {m.name for m in rig.scenario.measured}
        name = next(n for n in (path.stem, *(f"{path.stem}-{i}" for i in range(2, 99))) if n not in names)
        self.offer = C.MeasuredOffer(str(path), cols, time, time_unit, name, guesses, self._signals(units, guesses))
        self.ctx.log("info", f"{path.name}: bench data -- map its columns to signals in the dialog")

    @staticmethod
    def _guess(column: str, units: dict[str, str]) -> tuple[str, str]:
        """(the signal ``column`` seems to measure or "", its unit or "")."""
        stem, unit = guess_unit(column)
        si = unit_factor(unit)[1] if unit else None
        fits = [s for s, u in units.items() if si is None or u.replace("*", "·") == si]
        short = {s.rsplit("/", 1)[-1].replace(":", "_").lower(): s for s in fits}
        key = re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_")
        hit = difflib.get_close_matches(key, list(short), n=1, cutoff=0.75)
        return (short[hit[0]] if hit else ""), unit

    @staticmethod
    def _signals(units: dict[str, str], guesses: tuple[tuple[str, str, str], ...]) -> tuple[tuple[str, str], ...]:
        """The signals the panel lists: the guessed ones, then the rest (at most ``_OFFERED_SIGNALS``)."""
        first = [g[1] for g in guesses if g[1]]
        rest = [s for s in units if s not in first][: max(0, _OFFERED_SIGNALS - len(first))]
        return tuple((s, units.get(s, "")) for s in [*first, *rest])

    def add(self, cmd: C.AddMeasured) -> None:
        s = self.ctx
        if not cmd.path:
            if self.offer is not None:
                s.log("info", f"{Path(self.offer.path).name}: not added to the rig")
            self.offer = None
            return
        if not cmd.signals:
            raise ConfigError("measured data: map at least one column to a signal")
        entry: dict[str, Any] = {"name": cmd.name, "file": str(Path(cmd.path))}  # relative once saved
        if cmd.time:
            entry["time"] = cmd.time
        if cmd.time_unit != "s":
            entry["time_unit"] = cmd.time_unit
        if cmd.offset:
            entry["offset"] = float(cmd.offset)
        entry["signals"] = {sig: ({"column": col, "unit": unit} if unit else {"column": col})
                            for sig, col, unit in cmd.signals}
        doc = copy.deepcopy(s.document.doc)
        doc.setdefault("measured", []).append(entry)
        s.rebuild(doc)  # validated as the scenario would be: one line at the field otherwise
        self.offer = None
        s.log("info", f"measured data '{cmd.name}' added: {len(cmd.signals)} signal{'s' if len(cmd.signals) != 1 else ''}"
                      f" from {Path(cmd.path).name} (dotted on the plots; saved with the scenario)")
