"""A random param of a ``[sweep]``: its law (``Distribution``: a draw, the value at a quantile),
and reading one from its ``{ distribution = ... }`` table (``read_distribution``).

Distributions: ``normal`` (mean, std), ``uniform`` (low, high), ``lognormal`` (mu, sigma: the
mean and std of ln x), ``truncated_normal`` (mean, std, low, high: a normal restricted to
[low, high], drawn by inverse CDF -- one uniform draw per value, no rejection loop, so the draw
count is fixed). A uniform with a ``step`` takes only the grid low, low + step, ... up to high
(whole numbers when low and step are); a catalogue (``{ choices = [...] }``, read by ``sweep``) is
a ``Distribution`` of kind "choices", each value equally likely.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from mjrig.scenario.fields import FieldReader

__all__ = ["DISTRIBUTIONS", "Distribution", "truncated_normal", "read_distribution"]

DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "normal": ("mean", "std"),
    "uniform": ("low", "high"),
    "lognormal": ("mu", "sigma"),
    "truncated_normal": ("mean", "std", "low", "high"),
}
"""Each distribution's (required) parameters."""
_STD = NormalDist()


@dataclass(frozen=True)
class Distribution:
    """A random param: ``kind`` (a key of DISTRIBUTIONS, or "choices": a catalogue, each value
    equally likely) and its parameters; ``values`` the catalogue, or the grid low + i·step a
    ``step``-ped uniform takes (integers stay integers)."""

    kind: str
    args: dict[str, float]
    values: tuple[float, ...] = ()

    def draw(self, rng: np.random.Generator) -> float:
        """A value drawn with ``rng``: a catalogue's value (each equally likely), else the law's
        (a truncated normal by one uniform draw)."""
        a = self.args
        if self.values:
            return self.values[int(rng.integers(len(self.values)))]
        if self.kind == "normal":
            return float(rng.normal(a["mean"], a["std"]))
        if self.kind == "uniform":
            return float(rng.uniform(a["low"], a["high"]))
        if self.kind == "lognormal":
            return float(rng.lognormal(a["mu"], a["sigma"]))
        return truncated_normal(float(rng.random()), **a)

    def at(self, u: float) -> float:
        """The value at quantile ``u`` in [0, 1) (the inverse CDF; the ends are nudged inside)."""
        a = self.args
        if self.values:  # equal strata, one value each
            return self.values[min(int(u * len(self.values)), len(self.values) - 1)]
        if self.kind == "uniform":
            return a["low"] + (a["high"] - a["low"]) * u
        if self.kind == "truncated_normal":
            return truncated_normal(u, **a)
        z = _STD.inv_cdf(min(max(u, 1e-300), 1 - 1e-16))
        if self.kind == "normal":
            return a["mean"] + a["std"] * z
        return math.exp(a["mu"] + a["sigma"] * z)


def truncated_normal(u: float, *, mean: float, std: float, low: float, high: float) -> float:
    """The value of a normal(mean, std) restricted to [low, high] at quantile ``u`` in [0, 1).

    Works on the side of the mean where the interval's tail probabilities are largest, so a
    window far in a tail keeps its precision; the result is clipped into [low, high]."""
    if std == 0 or low == high:
        return min(max(mean, low), high)
    a, b = (low - mean) / std, (high - mean) / std
    flip = a > 0  # both ends above the mean: mirror, where the CDF is small and precise
    if flip:
        a, b, u = -b, -a, 1.0 - u  # mirrored: the same quantile from the other end
    pa, pb = _STD.cdf(a), _STD.cdf(b)
    p = pa + u * (pb - pa)
    p = min(max(p, 1e-300), 1 - 1e-16)
    z = _STD.inv_cdf(p)
    x = mean + std * (-z if flip else z)
    return min(max(x, low), high)


def read_distribution(reader: FieldReader, entry: dict, where: tuple) -> Distribution:
    """The ``Distribution`` of a ``{ distribution = kind, ... }`` table at ``where`` (its parameters
    in the param's unit; a uniform's ``step`` makes it a grid); FILE:LINE errors from ``reader``
    (a ``fields.FieldReader``): an unknown kind, a parameter missing or out of place."""
    kind = reader.choice(entry["distribution"], (*where, "distribution"), sorted(DISTRIBUTIONS), noun="distribution")
    needed = DISTRIBUTIONS[kind]
    reader.keys(entry, {"distribution", *needed, *(("step",) if kind == "uniform" else ())}, where)
    missing = [k for k in needed if k not in entry]
    if missing:
        raise reader.fail(where, f"a {kind} distribution needs '{missing[0]}' ({', '.join(needed)})")
    args = {k: reader.number(entry[k], (*where, k)) for k in needed}
    for k in ("std", "sigma"):
        if k in args and args[k] < 0:
            raise reader.fail((*where, k), f"must not be negative, got {args[k]:g}")
    if "low" in args and args["low"] > args["high"]:
        raise reader.fail((*where, "low"), f"low ({args['low']:g}) is above high ({args['high']:g})")
    if "step" in entry:
        return Distribution(kind, args, _stepped(reader, entry, where))
    return Distribution(kind, args)


def _stepped(reader: FieldReader, entry: dict, where: tuple) -> tuple[float, ...]:
    """The grid low, low + step, ... up to high of a ``step``-ped uniform (integers when low and
    step are: a coil count stays a whole number)."""
    step = reader.number(entry["step"], (*where, "step"), positive=True)
    low, high = (reader.number(entry[k], (*where, k)) for k in ("low", "high"))
    n = int(math.floor((high - low) / step * (1 + 1e-12))) + 1
    whole = all(isinstance(entry[k], int) and not isinstance(entry[k], bool) for k in ("low", "step"))
    return tuple(int(entry["low"]) + i * int(entry["step"]) if whole else low + i * step for i in range(n))
