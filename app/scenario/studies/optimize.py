"""The ``[optimize]`` section of a scenario: what ``mjrig optimize`` searches and for what.

``minimize`` or ``maximize`` names a metric (``"Metrics/<name>"`` of ``[[metrics]]``); with
``minimize``, ``target`` makes the objective abs(metric − target). Either may be a list: two or
more objectives in all (``minimize`` and ``maximize`` lists together) make a multi-objective
(Pareto) study, whose objectives are the metrics themselves (no ``target``). ``trials`` evaluations in all,
``seed`` the study's seed (each trial's seed is ``trial_seed(seed, number)``, as a sweep's),
``sampler`` Optuna's ``tpe`` (default), ``cmaes``, ``random``, ``nsga2`` or ``nsga3``
(``population``: NSGA's ``population_size``, trials a generation; Optuna's 50 when left out).
``reference``: with several objectives, the hypervolume's reference point (one number per
objective, in its metric's unit, as the objective is written: a maximised objective's reference is
the value below which a trial adds nothing). ``[optimize.params]`` bounds each searched param of
``[params]``: ``{ low, high, log = false }``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mjrig.runtime.points import closest_names
from mjrig.scenario.fields import FieldReader
from mjrig.scenario.studies.sweep import catalogue, outside_range

__all__ = [
    "Objective",
    "OptimizeSpec",
    "SearchRange",
    "OPTIMIZE_SAMPLERS",
    "NSGA_SAMPLERS",
    "MAX_POPULATION",
    "parse_optimize",
    "search_ranges",
    "search_range",
]

OPTIMIZE_SAMPLERS = ("tpe", "cmaes", "random", "nsga2", "nsga3")
NSGA_SAMPLERS = ("nsga2", "nsga3")
"""The samplers that breed generations of ``population`` trials (Optuna's NSGA-II and NSGA-III)."""
MAX_POPULATION = 100_000
"""The largest ``population`` taken: NSGA ranks a generation by comparing every pair of its
trials (population² comparisons a generation), and one larger than this never finishes a first
generation on a rig worth optimising."""
_KEYS = {"minimize", "maximize", "target", "trials", "seed", "sampler", "population", "reference", "params"}


@dataclass(frozen=True)
class SearchRange:
    """A searched param's bounds (its unit), on a log scale when ``log``; ``step``: only the grid
    low + i·step (whole numbers when ``whole``); ``choices``: only these values (a catalogue;
    ``whole`` when every one is a whole number)."""

    low: float
    high: float
    log: bool = False
    step: float | None = None
    whole: bool = False
    choices: tuple[float, ...] = ()


@dataclass(frozen=True)
class Objective:
    """One objective of a study: metric ``metric`` (its name in ``[[metrics]]``), maximised or minimised."""

    metric: str
    maximize: bool = False

    @property
    def column(self) -> str:
        """Its column in a multi-objective study's results: ``Objectives/<metric>:value``."""
        return f"Objectives/{self.metric}:value"


@dataclass
class OptimizeSpec:
    """A parsed ``[optimize]``: the objective ``metric`` (its name), ``maximize`` or not, the
    optional ``target``, ``trials``, ``seed``, ``sampler`` and the searched ``params``.
    ``objectives``: every objective in the order given (minimize's, then maximize's); with two or
    more the study is multi-objective and ``metric``/``maximize`` are the first one's.
    ``population``: an NSGA sampler's trials a generation (None: Optuna's default, 50).
    ``reference``: the hypervolume's reference point, one value per objective in its metric's unit
    (None: the worst feasible value of each, over the study as written)."""

    metric: str
    maximize: bool = False
    target: float | None = None
    trials: int = 50
    seed: int = 0
    sampler: str = "tpe"
    params: dict[str, SearchRange] = field(default_factory=dict)
    objectives: tuple[Objective, ...] = ()
    population: int | None = None
    reference: tuple[float, ...] | None = None

    @property
    def multi(self) -> bool:
        """Two or more objectives: a Pareto study."""
        return len(self.objectives) > 1

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
    objectives = _objectives(table, reader, path, metrics)
    out = OptimizeSpec(metric=objectives[0].metric, maximize=objectives[0].maximize, objectives=objectives)
    if "target" in table:
        if out.multi:
            raise reader.fail((*path, "target"), "'target' goes with one objective; several are the metrics themselves")
        if out.maximize:
            raise reader.fail(
                (*path, "target"), "'target' goes with 'minimize' (the objective is abs(metric - target))"
            )
        out.target = reader.number(table["target"], (*path, "target"))
    for key, least in (("trials", 1), ("seed", 0)):
        if key in table:
            setattr(out, key, reader.whole(table[key], (*path, key), least=least))
    if "sampler" in table:
        out.sampler = reader.choice(table["sampler"], (*path, "sampler"), list(OPTIMIZE_SAMPLERS), noun="sampler")
    if out.multi and out.sampler == "cmaes":
        raise reader.fail(
            (*path, "sampler"),
            "'cmaes' searches one objective: give 'tpe', 'nsga2', 'nsga3' or 'random' for several objectives",
        )
    if "population" in table:
        out.population = _population(table["population"], reader, (*path, "population"), out.sampler)
    if "reference" in table:
        out.reference = _reference(table["reference"], reader, (*path, "reference"), out.objectives)
    entries = table.get("params", {})
    if not isinstance(entries, dict) or not entries:
        raise reader.fail(
            (*path, "params"), "needs [optimize.params]: param = { low = ..., high = ... } (at least one)"
        )
    out.params = search_ranges(entries, reader, path, params, what="the search", discrete=True)
    return out


def _objectives(table: dict, reader: FieldReader, path: tuple, metrics: list[Any]) -> tuple[Objective, ...]:
    """The objectives of ``minimize`` and ``maximize`` (each a metric or a list of them): at
    least one in all, each metric once; FILE:LINE errors name the unknown one (closest names)."""
    if not any(k in table for k in ("minimize", "maximize")):
        raise reader.fail(path, "give 'minimize' or 'maximize' (a metric: \"Metrics/<name>\", or a list of them)")
    names = [f"Metrics/{m.name}" for m in metrics]
    out: list[Objective] = []
    for way in ("minimize", "maximize"):
        given = table.get(way, [])
        for i, text in enumerate(given if isinstance(given, list) else [given]):
            where = (*path, way) if not isinstance(given, list) else (*path, way, i)
            if not isinstance(text, str) or text not in names:
                hint = closest_names(str(text), names) if names else " (the scenario has no [[metrics]])"
                raise reader.fail(where, f"unknown metric {text!r}{hint}")
            metric = text[len("Metrics/") :]
            if any(o.metric == metric for o in out):
                raise reader.fail(where, f"{text} is already an objective: each metric once")
            out.append(Objective(metric, maximize=way == "maximize"))
    if not out:
        raise reader.fail(path, "the objective lists are empty: name at least one metric")
    return tuple(out)


def _population(value: Any, reader: FieldReader, where: tuple, sampler: str) -> int:
    """``population``: a whole number of trials a generation, 2 (two parents a child) to
    ``MAX_POPULATION``, with an NSGA sampler only."""
    if sampler not in NSGA_SAMPLERS:
        raise reader.fail(where, f'\'population\' goes with sampler = "nsga2" or "nsga3", not {sampler!r}')
    count = reader.whole(value, where, least=2)
    if count > MAX_POPULATION:
        raise reader.fail(
            where,
            f"a population of {count:,} trials cannot finish: NSGA compares every pair of a generation "
            f"({float(count) ** 2:.3g} comparisons each); at most {MAX_POPULATION:,}",
        )
    return count


def _reference(value: Any, reader: FieldReader, where: tuple, objectives: tuple[Objective, ...]) -> tuple[float, ...]:
    """``reference``: one finite number per objective (several objectives only), each in its
    metric's unit."""
    if len(objectives) < 2:
        raise reader.fail(where, "'reference' goes with two or more objectives (the hypervolume of their front)")
    names = ", ".join(f"Metrics/{o.metric}" for o in objectives)
    if not isinstance(value, list) or len(value) != len(objectives):
        got = f"{len(value)} values" if isinstance(value, list) else repr(value)
        raise reader.fail(where, f"must be a list of {len(objectives)} numbers, one per objective ({names}), got {got}")
    return tuple(reader.number(v, (*where, i)) for i, v in enumerate(value))


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
    values = catalogue(reader, entry, where)
    whole = all(isinstance(v, int) and not isinstance(v, bool) for v in values)  # a whole catalogue stays whole
    return SearchRange(float(min(values)), float(max(values)), choices=tuple(values), whole=whole)
