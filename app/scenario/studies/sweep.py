"""The ``[sweep]`` section of a scenario: grids and distributions over params, and which params
trial ``i`` runs with (a random param's law and its table: ``distributions``).

Trial order. Grids combine as a Cartesian product in file order, the last grid varying fastest
(``itertools.product``); each grid point runs ``trials`` times in a row (``trials`` defaults to 1,
so a grid-only sweep has as many trials as grid points). Trial ``i`` is repetition
``i % trials`` of grid point ``i // trials``; the total is ``points * trials``.

Seeds. Trial ``i``'s seed is ``SeedSequence([seed, i]).generate_state(2, uint32)`` packed into a
non-negative 63-bit integer (the results' ``seed`` column); its distributions are drawn, in file
order, from ``numpy.random.default_rng(trial_seed)``. So a trial reproduces anywhere from
(seed, i), or from its row's ``seed`` alone, whatever ran before it and wherever it runs.

Samplers (``sampler``): ``random`` (the default) draws each trial's values as above. ``lhs``
(Latin hypercube) and ``sobol`` (scrambled Sobol points) spread the ``trials`` of one grid point
over the distributions' quantiles: the point's ``trials`` x (distribution params) uniform sample
comes from ``scipy.stats.qmc.LatinHypercube``/``Sobol`` seeded with
``numpy.random.default_rng([seed, point])`` (``sample_seed``), repetition ``r`` takes row ``r``,
and each value is its distribution's inverse CDF at that quantile. LHS puts exactly one trial of
the point in each of the ``trials`` equal-probability strata of every param; Sobol points are
balanced for a power-of-two ``trials``.

Sensitivity (``sensitivity``): ``"spearman"`` (the default: the results show each param's rank
correlation with each value) or ``"sobol"``: a Saltelli design for Sobol indices, distribution
params only (no grid, no ``choices``), ``trials`` = n base points, a power of two (Sobol points
balance there, and ``scipy.stats.sobol_indices`` refuses any other n). The design takes the
(n, 2d) scrambled Sobol sample of ``scipy.stats.qmc.Sobol(d=2d, bits=64)`` seeded with
``sample_seed(seed, 0)`` (as ``scipy.stats.sobol_indices`` draws it), its first d columns the
matrix A, the last d B; the sweep has n x (d + 2) trials: trial ``i`` is block ``i // n``, row
``r = i % n``: block 0 runs A[r], block 1 B[r], block 2 + k runs A[r] with param k's column taken
from B[r] (``AB_k``). Each value is its distribution's inverse CDF at the quantile.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mjrig.runtime.points import closest_names
from mjrig.scenario.fields import FieldReader
from mjrig.scenario.studies.distributions import Distribution, read_distribution

__all__ = [
    "SweepSpec",
    "SAMPLERS",
    "SENSITIVITIES",
    "parse_sweep",
    "trial_seed",
    "sample_seed",
    "outside_range",
    "catalogue",
    "saltelli_trials_problem",
]

_SWEEP_KEYS = {"trials", "seed", "params", "sampler", "sensitivity"}
SAMPLERS = ("random", "lhs", "sobol")
"""The ``sampler`` values."""
SENSITIVITIES = ("spearman", "sobol")
"""The ``sensitivity`` values: rank correlations of any sweep, or a Saltelli design's Sobol indices."""
SALTELLI_BASE_POINTS = 64
"""A Saltelli design's base points when neither ``trials`` nor ``--trials`` gives them."""


def trial_seed(seed: int, trial: int) -> int:
    """The seed of trial ``trial`` of a sweep seeded ``seed`` (a non-negative 63-bit integer)."""
    lo, hi = np.random.SeedSequence([seed, trial]).generate_state(2, np.uint32)
    return ((int(hi) << 32) | int(lo)) & (2**63 - 1)


def sample_seed(seed: int, point: int) -> np.random.Generator:
    """The generator a stratified sampler of grid point ``point`` of a sweep seeded ``seed`` is
    seeded with (``scipy.stats.qmc``'s ``seed=``)."""
    return np.random.default_rng([seed, point])


@dataclass
class SweepSpec:
    """A parsed ``[sweep]``: ``grids`` (param, values) and ``distributions`` (param, Distribution)
    in file order, ``trials`` per grid point (a Sobol design's base points), the base ``seed``,
    the ``sampler`` and the ``sensitivity`` ("spearman" or "sobol": a Saltelli design)."""

    trials: int = 1
    seed: int = 0
    grids: list[tuple[str, tuple[float, ...]]] = field(default_factory=list)
    distributions: list[tuple[str, Distribution]] = field(default_factory=list)
    trials_given: bool = False
    sampler: str = "random"
    sensitivity: str = "spearman"

    @property
    def points(self) -> int:
        """The number of grid points (1 without grids)."""
        return math.prod(len(v) for _, v in self.grids)

    @property
    def saltelli(self) -> bool:
        """Whether the trials are a Saltelli design (``sensitivity = "sobol"``)."""
        return self.sensitivity == "sobol"

    @property
    def total(self) -> int:
        """Trials in the whole sweep: grid points x trials per point; a Saltelli design's
        base points x (distribution params + 2)."""
        if self.saltelli:
            return self.trials * (len(self.distributions) + 2)
        return self.points * self.trials

    def with_overrides(self, *, trials: int | None = None, seed: int | None = None) -> SweepSpec:
        """A copy with the command line's ``--trials`` (per grid point) and ``--seed``."""
        return SweepSpec(
            trials=self.trials if trials is None else trials,
            seed=self.seed if seed is None else seed,
            grids=list(self.grids),
            distributions=list(self.distributions),
            trials_given=self.trials_given or trials is not None,
            sampler=self.sampler,
            sensitivity=self.sensitivity,
        )

    def grid_point(self, index: int) -> dict[str, float]:
        """The values of grid point ``index`` (the last grid varies fastest)."""
        out: dict[str, float] = {}
        for name, values in reversed(self.grids):
            index, k = divmod(index, len(values))
            out[name] = values[k]
        return {name: out[name] for name, _ in self.grids}

    def trial(self, i: int) -> tuple[dict[str, float], int]:
        """(param values, trial seed) of trial ``i`` (0-based, < ``total``)."""
        if not 0 <= i < self.total:
            raise IndexError(f"trial {i} is outside 0..{self.total - 1}")
        point, rep = divmod(i, self.trials)
        tseed = trial_seed(self.seed, i)
        if self.saltelli:
            return self.saltelli_values(i), tseed
        values = self.grid_point(point)
        if self.sampler == "random":
            rng = np.random.default_rng(tseed)
            for name, dist in self.distributions:
                values[name] = dist.draw(rng)
        elif self.distributions:
            u = self.quantiles(point)[rep]
            for (name, dist), q in zip(self.distributions, u):
                values[name] = dist.at(float(q))
        return values, tseed

    def quantiles(self, point: int) -> np.ndarray:
        """Grid point ``point``'s stratified sample: (trials, distribution params) in [0, 1)."""
        key = (self.sampler, self.seed, self.trials, len(self.distributions), point)
        cached = _QUANTILES.get(key)
        if cached is None:
            from scipy.stats import qmc

            d, rng = len(self.distributions), sample_seed(self.seed, point)
            engine = qmc.LatinHypercube(d=d, seed=rng) if self.sampler == "lhs" else qmc.Sobol(d=d, seed=rng)
            with warnings.catch_warnings():  # Sobol's balance warning for trials that are not 2^m
                warnings.simplefilter("ignore", UserWarning)
                cached = engine.random(self.trials)
            _QUANTILES.clear()  # one point at a time is what a worker needs
            _QUANTILES[key] = cached
        return cached

    def saltelli_values(self, i: int) -> dict[str, float]:
        """Trial ``i``'s param values in the Saltelli design (see the module): A's row, B's, or
        A's with one param's column from B."""
        n, d = self.trials, len(self.distributions)
        block, row = divmod(i, n)
        ab = self.saltelli_quantiles()[row]
        u = ab[d : 2 * d] if block == 1 else ab[:d].copy()
        if block >= 2:
            u[block - 2] = ab[d + block - 2]
        return {name: dist.at(float(q)) for (name, dist), q in zip(self.distributions, u)}

    def saltelli_quantiles(self) -> np.ndarray:
        """The design's (base points, 2 x distribution params) Sobol sample in [0, 1): A's
        columns, then B's."""
        d = len(self.distributions)
        key = ("saltelli", self.seed, self.trials, d, 0)
        cached = _QUANTILES.get(key)
        if cached is None:
            from scipy.stats import qmc

            cached = qmc.Sobol(d=2 * d, seed=sample_seed(self.seed, 0), bits=64).random(self.trials)
            _QUANTILES.clear()
            _QUANTILES[key] = cached
        return cached


_QUANTILES: dict[tuple, np.ndarray] = {}


def parse_sweep(spec: Any, reader: FieldReader, params: dict[str, Any]) -> SweepSpec:
    """Read a ``[sweep]`` table with ``reader`` (a ``scenario_fields.FieldReader``: its ``fail``
    gives FILE:LINE: field errors); ``params`` are the scenario's params by name."""
    path = ("sweep",)
    table = reader.keys(spec, _SWEEP_KEYS, path)
    out = SweepSpec()
    if "trials" in table:
        out.trials, out.trials_given = reader.whole(table["trials"], (*path, "trials"), least=1), True
    if "seed" in table:
        out.seed = reader.whole(table["seed"], (*path, "seed"), least=0)
    if "sampler" in table:
        out.sampler = reader.choice(table["sampler"], (*path, "sampler"), list(SAMPLERS), noun="sampler")
    if "sensitivity" in table:
        out.sensitivity = reader.choice(
            table["sensitivity"], (*path, "sensitivity"), list(SENSITIVITIES), noun="sensitivity"
        )
    entries = table.get("params", {})
    if not isinstance(entries, dict):
        raise reader.fail((*path, "params"), "must be a table of param = { values | range | distribution }")
    for name, entry in entries.items():
        where = (*path, "params", name)
        if name not in params:
            hint = closest_names(name, sorted(params)) if params else " (the scenario has no [params])"
            raise reader.fail(where, f"unknown param '{name}'{hint}")
        if not isinstance(entry, dict):
            raise reader.fail(
                where,
                "must be a table: { values = [...] }, { range = [a, b], steps = n } "
                'or { distribution = "normal", ... }',
            )
        ways = [k for k in ("values", "range", "distribution", "choices") if k in entry]
        if len(ways) != 1:
            raise reader.fail(
                where, "give exactly one of 'values', 'range' (with 'steps'), 'distribution' or 'choices'"
            )
        if ways[0] == "choices":
            out.distributions.append((name, _choices(reader, entry, where, params[name])))
        elif ways[0] == "distribution":
            out.distributions.append((name, read_distribution(reader, entry, where)))
        else:
            out.grids.append((name, _grid(reader, entry, where, params[name])))
    if out.saltelli:
        _check_saltelli(reader, table, out)
    return out


def _check_saltelli(reader: FieldReader, table: dict, out: SweepSpec) -> None:
    """``sensitivity = "sobol"``: distribution params only, ``trials`` a power of two, no other
    sampler (FILE:LINE errors)."""
    path = ("sweep",)
    for name, dist in out.distributions:
        if dist.kind == "choices":
            raise reader.fail(
                (*path, "params", name),
                'a catalogue (choices) does not go with sensitivity = "sobol": give the param a distribution',
            )
    if out.grids:
        raise reader.fail(
            (*path, "params", out.grids[0][0]),
            'a grid (values or range) does not go with sensitivity = "sobol": give the param a distribution',
        )
    if not out.distributions:
        raise reader.fail((*path, "sensitivity"), '"sobol" needs at least one param with a distribution')
    if table.get("sampler", "sobol") != "sobol":
        raise reader.fail((*path, "sampler"), 'sensitivity = "sobol" draws its own Sobol points: leave the sampler out')
    if not out.trials_given:  # --trials may still set them
        out.trials = SALTELLI_BASE_POINTS
    if problem := saltelli_trials_problem(out.trials):
        raise reader.fail((*path, "trials"), problem)


def saltelli_trials_problem(trials: int) -> str | None:
    """Why ``trials`` cannot be a Saltelli design's base points (None: it can): a power of two,
    at least 4 (Sobol points balance at powers of two only; ``scipy.stats.sobol_indices`` takes
    no other, and a bootstrap interval needs a few points)."""
    if trials < 4 or trials & (trials - 1):
        lower = max(4, 1 << (max(trials, 1).bit_length() - 1))
        return (
            f'with sensitivity = "sobol", trials (base points) must be a power of two >= 4, got {trials} '
            f"(closest: {lower} or {lower * 2})"
        )
    return None


def _grid(reader: FieldReader, entry: dict, where: tuple, param: Any) -> tuple[float, ...]:
    if "values" in entry:
        reader.keys(entry, {"values"}, where)
        vals = entry["values"]
        if not isinstance(vals, list) or not vals:
            raise reader.fail((*where, "values"), "must be a non-empty list of numbers")
        values = tuple(reader.number(v, (*where, "values")) for v in vals)
    else:
        reader.keys(entry, {"range", "steps"}, where)
        rng = entry["range"]
        if not isinstance(rng, list) or len(rng) != 2:
            raise reader.fail((*where, "range"), "must be [first, last] (both included)")
        a, b = (reader.number(v, (*where, "range")) for v in rng)
        if "steps" not in entry:
            raise reader.fail(where, "a range needs 'steps' (the number of values, >= 2)")
        steps = reader.whole(entry["steps"], (*where, "steps"), least=2)
        values = tuple(float(v) for v in np.linspace(a, b, steps))
    for v in values:
        if (bounds := outside_range(param, v)) is not None:
            raise reader.fail(where, f"grid value {v:g} is outside the param's range {bounds}")
    return values


def outside_range(param: Any, *values: float) -> str | None:
    """The param's range as text ("[lo, hi]") when a value lies outside it, else None."""
    lo, hi = getattr(param, "min", None), getattr(param, "max", None)
    if any((lo is not None and v < lo) or (hi is not None and v > hi) for v in values):
        return f"[{'-inf' if lo is None else f'{lo:g}'}, {'inf' if hi is None else f'{hi:g}'}]"
    return None


def _choices(reader: FieldReader, entry: dict, where: tuple, param: Any) -> Distribution:
    """``{ choices = [...] }``: a catalogue, each value equally likely (each within the param's
    range)."""
    values = catalogue(reader, entry, where)
    for v in values:
        if (bounds := outside_range(param, v)) is not None:
            raise reader.fail(where, f"choice {v:g} is outside the param's range {bounds}")
    return Distribution("choices", {}, values)


def catalogue(reader: FieldReader, entry: dict, where: tuple) -> tuple[float, ...]:
    """The values of a ``{ choices = [...] }`` table at ``where`` (a whole number stays one);
    FILE:LINE errors: another field, not a non-empty list of numbers."""
    reader.keys(entry, {"choices"}, where)
    vals = entry["choices"]
    if not isinstance(vals, list) or not vals:
        raise reader.fail((*where, "choices"), "must be a non-empty list of numbers (a catalogue)")
    return tuple(
        v
        if isinstance(v, int) and reader.number(v, (*where, "choices")) == v
        else reader.number(v, (*where, "choices"))
        for v in vals
    )
