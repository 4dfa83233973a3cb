"""The hypervolume of a study's front: how much of objective space its feasible trials dominate.

Every objective is turned into a cost to minimise (a maximised one negated). The hypervolume of
a set of cost points against a reference point r is the volume (Lebesgue measure) of the union of
the boxes [p, r], one per point p better than r on every objective: the objectives' units
multiplied (N·s for a force against a time). It only grows as trials are added, is the same for
the set and for its non-dominated part, and a point worse than r on some objective adds nothing.

Exact, by slicing (HSO, "hypervolume by slicing objectives", While et al. 2006): two objectives
by sorting (the staircase under the front, O(n log n)); more by cutting the space into slabs along
the last objective, each slab's depth times the hypervolume of the points below it in the others,
O(n^(d−1) log n) for n non-dominated points of d objectives (three: every slab's staircase at
once in numpy, O(n²)). Optuna's own (``optuna._hypervolume``)
is private API, so it is not used. By trial, each point that joins the front adds its own box less
what the front's boxes already cover of it (the front moved up to the point, mostly dominated).

``hypervolume_history`` is what a study's ``hypervolume`` column holds: the hypervolume of the
feasible trials finished so far, after each trial, against one reference point for the whole
study (explicit, or the worst feasible value of each objective over all of its trials, so that a
row's value does not change as later trials are added to the same file; a study continued with
more trials may move the default reference, and its file is written again whole).
``study_hypervolume`` reads it off a study's rows, with the column's unit and, when an explicit
reference leaves trials out, the line that says so: that is not known before the trials run, so
the study is not refused; it is reported once, when its file is written.

GUI-free (numpy). Threading: pure functions; any thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mjrig.campaign.pareto import pareto_flags

_BLOCK = 256
"""Slabs of three objectives worked out at a time: memory grows as block × points."""

__all__ = ["hypervolume", "hypervolume_history", "VolumeHistory", "study_hypervolume", "product_unit"]


def hypervolume(costs: np.ndarray, reference: np.ndarray) -> float:
    """The hypervolume of ``costs`` (points × objectives, every objective minimised, finite)
    against ``reference`` (one cost per objective), in the objectives' units multiplied; points not
    better than the reference on every objective add nothing (0.0 for none)."""
    pts = np.asarray(costs, dtype=np.float64).reshape(-1, len(reference))
    ref = np.asarray(reference, dtype=np.float64)
    pts = pts[(pts < ref).all(axis=1)]
    if not len(pts):
        return 0.0
    return _slices(pts[_front(pts)] if pts.shape[1] > 3 else pts, ref)


def _gain(c: np.ndarray, kept: np.ndarray, ref: np.ndarray) -> float:
    """What point ``c`` adds to the hypervolume of ``kept`` (the front so far): its box [c, r]
    less the part the others' boxes cover, which is the hypervolume of the others moved up to c
    (the box [max(p, c), r] is [p, r] ∩ [c, r]); never below 0 (rounding)."""
    clip = np.maximum(kept, c)
    clip = clip[(clip < ref).all(axis=1)]
    if len(clip) > 1 and clip.shape[1] > 3:  # moved up to c, most of them are dominated: fewer slices
        clip = clip[_front(clip)]
    covered = _slices(clip, ref) if len(clip) else 0.0
    return max(0.0, float(np.prod(ref - c)) - covered)


def _front(costs: np.ndarray) -> np.ndarray:
    """Which of ``costs`` (points × objectives, minimised) no other point dominates."""
    return pareto_flags(costs, maximize=[False] * costs.shape[1], feasible=np.ones(len(costs), dtype=bool))


def _slices(pts: np.ndarray, ref: np.ndarray) -> float:
    """HSO on ``pts``, each better than ``ref`` everywhere (dominated ones add nothing; leaving
    them out only saves slices)."""
    d = pts.shape[1]
    if d == 1:
        return float(ref[0] - pts[:, 0].min())
    if d == 2:  # the staircase: between one point's x and the next, height to the best y so far
        order = np.lexsort((pts[:, 1], pts[:, 0]))
        x, best_y = pts[order, 0], np.minimum.accumulate(pts[order, 1])
        return float(np.sum(np.diff(np.append(x, ref[0])) * (ref[1] - best_y)))
    order = np.argsort(pts[:, -1], kind="stable")
    pts = pts[order]
    depth = np.diff(np.append(pts[:, -1], ref[-1]))
    if d == 3:
        return _three(pts, depth, ref)
    total = 0.0
    for i in np.flatnonzero(depth > 0):  # the slab from point i's last cost to the next's
        below = pts[: i + 1, :-1]
        total += float(depth[i]) * _slices(below[_front(below)] if d > 4 else below, ref[:-1])
    return total


def _three(pts: np.ndarray, depth: np.ndarray, ref: np.ndarray) -> float:
    """Three objectives, ``pts`` sorted by the last: each slab's area (the staircase of the points
    below it) for ``_BLOCK`` slabs at once, in numpy: point j is in slab i's staircase when i >= j."""
    by_x = np.lexsort((pts[:, 1], pts[:, 0]))  # the points in x order; by_x[k]: k-th's slab rank
    y = pts[by_x, 1]
    widths = np.diff(np.append(pts[by_x, 0], ref[0]))
    total = 0.0
    for start in range(0, len(pts), _BLOCK):
        slabs = np.arange(start, min(len(pts), start + _BLOCK))
        below = np.where(by_x[None, :] <= slabs[:, None], y[None, :], ref[1])
        area = ((ref[1] - np.minimum.accumulate(below, axis=1)) * widths[None, :]).sum(axis=1)
        total += float((area * depth[slabs]).sum())
    return total


@dataclass(frozen=True)
class VolumeHistory:
    """A study's hypervolume after each trial: ``values`` (one per trial, in the order given, in
    the objectives' units multiplied), the ``reference`` point used (as the objectives are written:
    a maximised one's value, not its cost; None when no trial is feasible), and ``outside``: the
    feasible trials worse than an explicit reference on some objective, left out of it, as
    (trial index, objective index)."""

    values: np.ndarray
    reference: tuple[float, ...] | None
    outside: tuple[tuple[int, int], ...] = ()


def hypervolume_history(
    values: np.ndarray,
    *,
    maximize: Sequence[bool],
    feasible: np.ndarray,
    reference: Sequence[float] | None = None,
) -> VolumeHistory:
    """After each trial (a row of ``values``: trials × objectives, in trial order, NaN where
    missing), the hypervolume of the feasible trials so far (``feasible``: bool per trial; a
    missing or non-finite objective counts as infeasible) against ``reference`` (one value per
    objective, in its unit; None: the worst feasible value of each objective over all the trials).
    ``maximize``: per objective, whether larger is better. A feasible trial worse than the
    reference on some objective is left out (``VolumeHistory.outside``); it never is with the default."""
    vals = np.asarray(values, dtype=np.float64).reshape(len(feasible), len(maximize))
    sign = np.where(np.asarray(maximize, dtype=bool), -1.0, 1.0)
    costs = vals * sign
    ok = np.asarray(feasible, dtype=bool) & np.isfinite(costs).all(axis=1)
    out = np.zeros(len(vals))
    if reference is None:
        if not ok.any():
            return VolumeHistory(out, None)
        ref = costs[ok].max(axis=0)
    else:
        ref = np.asarray(reference, dtype=np.float64) * sign
    worse = costs > ref  # cost past the reference: the trial is left out
    outside = tuple((int(i), int(np.flatnonzero(worse[i])[0])) for i in np.flatnonzero(ok & worse.any(axis=1)))
    counted = ok & ~worse.any(axis=1)
    kept = np.empty((0, len(maximize)))  # the front so far
    current = 0.0
    for i in range(len(vals)):
        c = costs[i]
        if counted[i] and not (kept <= c).all(axis=1).any():  # not weakly dominated: the front grows
            current += _gain(c, kept, ref)
            kept = np.vstack([kept[~(c <= kept).all(axis=1)], c])
        out[i] = current
    return VolumeHistory(out, tuple(float(r) for r in ref * sign), outside)


def product_unit(units: Sequence[str]) -> str:
    """The objectives' ``units`` multiplied, as a column's unit: "N·s"; a unit with a "/" in
    parentheses ("(m/s)·s"); units left empty (dimensionless) left out."""
    return "·".join(f"({u})" if "/" in u else u for u in units if u)


def study_hypervolume(
    rows: Sequence[dict[str, Any]],
    objectives: Sequence[Any],
    units: dict[str, str],
    *,
    reference: Sequence[float] | None,
    where: Callable[[int], str],
) -> tuple[VolumeHistory, str, str | None]:
    """The ``hypervolume`` column of a study's ``rows`` (trial order; each with ``feasible`` and
    its ``objectives``' columns: ``Objective.column``, ``.metric``, ``.maximize``), its unit (the
    objectives' ``units``, by metric, multiplied) and, when the explicit ``reference`` leaves
    trials out, the line that says so, naming the first such trial and objective (``where(j)``:
    where the reference's j-th value is written, FILE:LINE)."""
    values = np.array([[np.nan if r.get(o.column) is None else r[o.column] for o in objectives] for r in rows])
    values = values.reshape(len(rows), len(objectives))
    feasible = np.array([bool(r["feasible"]) for r in rows], dtype=bool)
    hv = hypervolume_history(values, maximize=[o.maximize for o in objectives], feasible=feasible, reference=reference)
    named = [units.get(o.metric, "") for o in objectives]
    if not hv.outside or reference is None:
        return hv, product_unit(named), None
    (i, j), more = hv.outside[0], len(hv.outside) - 1
    o, u = objectives[j], f" {named[j]}" if named[j] else ""
    line = (
        f"{where(j)}: trial {rows[i]['trial']}'s Metrics/{o.metric} = {values[i, j]:.6g}{u} is "
        f"{'below' if o.maximize else 'above'} the reference {reference[j]:g}{u}"
        + (f" (and {more} other trial{'s' if more > 1 else ''} past the reference)" if more else "")
        + ": left out of the hypervolume; a reference every feasible trial beats counts them all"
    )
    return hv, product_unit(named), line
