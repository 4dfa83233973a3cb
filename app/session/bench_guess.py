"""How a bench file's columns are guessed when it is offered to the rig (``session.bench``).

A time column named like ``t``/``time`` (with a unit: ``t_ms``, ``time [s]``), else the first
that increases; a unit from the file's units row, else a column's suffix or brackets (``x_mm``,
``angle [deg]``); a signal whose short name (``slide:qpos`` of ``Joints/slide:qpos``) reads like
the column's name (difflib), among those whose unit fits, else the signal whose object the name
names with the field its quantity word means (``Position_slide_x``). GUI-free.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import numpy as np

from mjrig.scenario.measured import unit_factor
from mjrig.scenario.measured_files import MEASURED_SUFFIXES, MeasuredFileError, read_measured

__all__ = ["is_bench_file", "guess_unit", "guess_signal", "listed_signals", "has_columns"]

_OFFERED_SIGNALS = 400
"""Signals a column may be mapped to in the panel's list at most (those whose unit fits first)."""


_QUANTITY_WORDS = {
    "qpos": ("position", "pos", "displacement", "disp", "angle", "deflection", "travel"),
    "qvel": ("velocity", "vel", "speed", "rate"),
    "qacc": ("acceleration", "acc", "accel"),
    "tension": ("tension", "force", "load"),
}
"""Words a bench column's name says its quantity with, by the signal field they mean."""


def _by_words(key: str, signals: list[str]) -> str:
    """The signal whose object a column's name ``key`` (lower case, ``_`` between words) names,
    with the field its quantity word means (``position_slide_x`` -> ``Joints/slide_x:qpos``):
    the longest object named wins; "" when none is, or two fit equally."""
    words = set(key.split("_"))
    field = next((f for f, said in _QUANTITY_WORDS.items() if words & set(said)), None)
    found: list[tuple[int, str]] = []
    for s in signals:
        obj, _, what = s.rsplit("/", 1)[-1].partition(":")
        name = re.sub(r"[^a-z0-9]+", "_", obj.lower()).strip("_")
        if name and f"_{name}_" in f"_{key}_" and (field is None or what == field):
            found.append((len(name), s))
    found.sort(reverse=True)
    if not found or (len(found) > 1 and found[0][0] == found[1][0]):
        return ""
    return found[0][1]


def has_columns(path: Path, part: str) -> bool:
    """Whether sheet or group ``part`` of ``path`` has a numeric column of two samples or more."""
    try:
        return any(np.isfinite(c).sum() >= 2 for c in read_measured(path, part=part).columns.values())
    except MeasuredFileError:
        return False


def is_bench_file(path: str | Path) -> bool:
    """Whether ``path`` is bench data to offer (not a model, scenario, recording or results)."""
    return Path(path).suffix.lower() in MEASURED_SUFFIXES and Path(path).suffix.lower() != ".parquet"


def guess_unit(column: str) -> tuple[str, str]:
    """(the column's name without a unit, the unit it names or "")."""
    m = re.fullmatch(r"\s*(.*?)\s*[\[(]\s*([^\])]+?)\s*[\])]\s*", column) or re.fullmatch(
        r"(.*?)[_ ]([A-Za-z·*/^²0-9]+)", column
    )
    if m and (unit_factor(m.group(2)) is not None):
        return m.group(1), m.group(2)
    return column, ""


def guess_signal(column: str, units: dict[str, str], *, said: str = "") -> tuple[str, str]:
    """(the signal ``column`` seems to measure or "", its unit or ""): the unit the file
    ``said`` (its units row) or the column's name names."""
    stem, unit = guess_unit(column)
    unit = said or unit
    known = unit_factor(unit) if unit else None
    si = known[1] if known is not None else None
    fits = [s for s, u in units.items() if si is None or u.replace("*", "·") == si]
    short = {s.rsplit("/", 1)[-1].replace(":", "_").lower(): s for s in fits}
    key = re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_")
    hit = difflib.get_close_matches(key, list(short), n=1, cutoff=0.75)
    return (short[hit[0]] if hit else _by_words(key, fits)), unit


def listed_signals(units: dict[str, str], guesses: tuple[tuple[str, str, str], ...]) -> tuple[tuple[str, str], ...]:
    """The signals the panel lists: the guessed ones, then the rest (at most ``_OFFERED_SIGNALS``)."""
    first = [g[1] for g in guesses if g[1]]
    rest = [s for s in units if s not in first][: max(0, _OFFERED_SIGNALS - len(first))]
    return tuple((s, units.get(s, "")) for s in [*first, *rest])
