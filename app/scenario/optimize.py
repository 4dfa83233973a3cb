"""The ``[optimize]`` section of a scenario: what ``mjrig optimize`` searches and for what.

``minimize`` or ``maximize`` names a metric (``"Metrics/<name>"`` of ``[[metrics]]``); with
``minimize``, ``target`` makes the objective abs(metric − target). ``trials`` evaluations in all,
``seed`` the study's seed (each trial's seed is ``trial_seed(seed, number)``, as a sweep's),
``sampler`` Optuna's ``tpe`` (default), ``cmaes`` or ``random``. ``[optimize.params]`` bounds each
searched param of ``[params]``: ``{ low, high, log = false }``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mjrig.runtime.points import closest_names
from mjrig.scenario.fields import FieldReader
from mjrig.scenario.sweep import catalogue, outside_range

__all__ = ["OptimizeSpec", "SearchRange", "OPTIMIZE_SAMPLERS", "parse_optimize", "search_ranges", "search_range"]

OPTIMIZE_SAMPLERS = ("tpe", "cmaes", "random")
_KEYS = {"minimize", "maximize", "target", "trials", "seed", "sampler", "params"}


@dataclass(frozen=True)
class SearchRange:
    """A searched param's bounds (its unit), on a log scale when ``log``; ``step``: only the grid
    low + i·step (whole numbers when ``whole``); ``choices``: only these values (a catalogue)."""

    low: float
    high: float
    log: bool = False
    step: float | None = None
    whole: bool = False
    choices: tuple[float, ...] = ()


@dataclass
class OptimizeSpec:
    """A parsed ``[optimize]``: the objective ``metric`` (its name), ``maximize`` or not, the
    optional ``target``, ``trials``, ``seed``, ``sampler`` and the searched ``params``."""

    metric: str
    maximize: bool = False
    target: float | None = None
    trials: int = 50
    seed: int = 0
    sampler: str = "tpe"
    params: dict[str, SearchRange] = field(default_factory=dict)

    @property
    def objective(self) -> str:
        """The objective as the section says it, e.g. ``Metrics/f`` or ``|Metrics/f - 2|``."""
        column = f"Metrics/{self.metric}"
        return column if self.target is None else f"|{column} - {self.target:g}|"

    def objective_text(self, unit: str = "") -> str:
        """The objective as a person reads it, with the metric's ``unit``: ``Metrics/f (Hz)``,
        ``|Metrics/f − 3 Hz|``."""
        column = f"Metrics/{self.metric}"
        if self.target is None:
            return f"{column} ({unit})" if unit else column
        return f"|{column} − {self.target:g}{' ' + unit if unit else ''}|"

    def objective_of(self, value: float | None) -> float | None:
        """The objective for a metric value (None: no value)."""
        if value is None or not math.isfinite(value):
            return None
        return abs(value - self.target) if self.target is not None else value


def parse_optimize(spec: Any, reader: FieldReader, params: dict[str, Any], metrics: list[Any]) -> OptimizeSpec:
    """Read an ``[optimize]`` table with ``reader`` (its ``fail`` gives FILE:LINE: field errors);
    ``params`` are the scenario's params by name, ``metrics`` its metrics."""
    path = ("optimize",)
    table = reader.keys(spec, _KEYS, path)
    ways = [k for k in ("minimize", "maximize") if k in table]
    if len(ways) != 1:
        raise reader.fail(path, "give exactly one of 'minimize' or 'maximize' (a metric: \"Metrics/<name>\")")
    way = ways[0]
    text = table[way]
    names = [f"Metrics/{m.name}" for m in metrics]
    if not isinstance(text, str) or text not in names:
        hint = closest_names(str(text), names) if names else " (the scenario has no [[metrics]])"
        raise reader.fail((*path, way), f"unknown metric {text!r}{hint}")
    out = OptimizeSpec(metric=text[len("Metrics/") :], maximize=way == "maximize")
    if "target" in table:
        if out.maximize:
            raise reader.fail(
                (*path, "target"), "'target' goes with 'minimize' (the objective is abs(metric - target))"
            )
        out.target = reader.number(table["target"], (*path, "target"))
    for key, least in (("trials", 1), ("seed", 0)):
        if key in table:
            v = table[key]
            if isinstance(v, bool) or not isinstance(v, int) or v < least:
                raise reader.fail((*path, key), f"must be a whole number >= {least}, got {v!r}")
            setattr(out, key, v)
    if "sampler" in table:
        s = table["sampler"]
        if not isinstance(s, str) or s not in OPTIMIZE_SAMPLERS:
            raise reader.fail(
                (*path, "sampler"), f"unknown sampler {s!r}{closest_names(str(s), list(OPTIMIZE_SAMPLERS))}"
            )
        out.sampler = s
    entries = table.get("params", {})
    if not isinstance(entries, dict) or not entries:
        raise reader.fail(
            (*path, "params"), "needs [optimize.params]: param = { low = ..., high = ... } (at least one)"
        )
    out.params = search_ranges(entries, reader, path, params, what="the search", discrete=True)
    return out


def search_ranges(
    entries: dict[str, Any],
    reader: FieldReader,
    path: tuple,
    params: Mapping[str, Any],
    *,
    what: str,
    discrete: bool = False,
) -> dict[str, SearchRange]:
    """Each ``NAME = { low, high, log = false }`` of ``entries`` (at ``path``.params) as a
    SearchRange of the scenario's param NAME; ``what`` the bounds bound ("the search"). FILE:LINE
    errors: an unknown param (closest names), a missing bound, low >= high, a log scale with
    low <= 0, bounds outside the param's own range. ``discrete``: a range may also take ``step``
    (not with ``log``), or be ``{ choices = [...] }``."""
    out: dict[str, SearchRange] = {}
    for name, entry in entries.items():
        where = (*path, "params", name)
        if name not in params:
            hint = closest_names(name, sorted(params)) if params else " (the scenario has no [params])"
            raise reader.fail(where, f"unknown param '{name}'{hint}")
        if discrete and isinstance(entry, dict) and "choices" in entry:
            r = _choices(entry, reader, where)
        else:
            r = search_range(entry, reader, where, what=what, discrete=discrete)
        if (bounds := outside_range(params[name], r.low, r.high)) is not None:
            raise reader.fail(where, f"[{r.low:g}, {r.high:g}] goes outside the param's range {bounds}")
        out[name] = r
    return out


def search_range(entry: Any, reader: FieldReader, where: tuple, *, what: str, discrete: bool = False) -> SearchRange:
    """One ``{ low, high, log = false }`` at ``where`` (FILE:LINE errors: not a table, a missing
    bound, low >= high, a log scale with low <= 0); ``discrete``: ``step`` allowed too."""
    if not isinstance(entry, dict):
        raise reader.fail(where, "must be a table: { low = ..., high = ..., log = false }")
    reader.keys(entry, {"low", "high", "log", *(("step",) if discrete else ())}, where)
    missing = [k for k in ("low", "high") if k not in entry]
    if missing:
        raise reader.fail(where, f"needs '{missing[0]}' (low and high bound {what})")
    low, high = (reader.number(entry[k], (*where, k)) for k in ("low", "high"))
    if low >= high:
        raise reader.fail((*where, "low"), f"low ({low:g}) must be below high ({high:g})")
    log = entry.get("log", False)
    if not isinstance(log, bool):
        raise reader.fail((*where, "log"), f"must be true or false, got {log!r}")
    if log and low <= 0:
        raise reader.fail((*where, "low"), f"a log scale needs low > 0, got {low:g}")
    if "step" in entry:
        step = reader.number(entry["step"], (*where, "step"), positive=True)
        if log:
            raise reader.fail((*where, "step"), "a step goes with a linear scale, not log = true")
        whole = all(isinstance(entry[k], int) and not isinstance(entry[k], bool) for k in ("low", "high", "step"))
        return SearchRange(low, high, log, step, whole)
    return SearchRange(low, high, log)


def _choices(entry: dict, reader: FieldReader, where: tuple) -> SearchRange:
    """``{ choices = [...] }``: a catalogue to search (its bounds its least and largest value)."""
    values = tuple(float(v) for v in catalogue(reader, entry, where))
    return SearchRange(min(values), max(values), choices=values)
