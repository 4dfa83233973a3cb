"""The Pareto front of a multi-objective study: which trials no other trial beats on every objective.

A feasible trial *dominates* another when it is at least as good on every objective and better
on at least one (smaller when minimised, larger when maximised). The front is the feasible
trials that no feasible trial dominates; trials with equal objectives are on it together.
Infeasible trials and trials with a missing or non-finite objective are never on it and
dominate nothing.

GUI-free (numpy). Threading: pure functions; any thread.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["pareto_flags"]

_BLOCK = 512
"""Trials compared against all others at a time: memory grows as block × trials × objectives."""


def pareto_flags(values: np.ndarray, *, maximize: Sequence[bool], feasible: np.ndarray) -> np.ndarray:
    """For each trial (a row of ``values``: trials × objectives, NaN where missing), whether it is
    on the front: feasible (``feasible``, one bool per trial), every objective finite and no such
    trial dominating it. ``maximize``: per objective, whether larger is better."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or values.shape[1] != len(maximize):
        raise ValueError(f"values must be trials × {len(maximize)} objectives, got shape {values.shape}")
    costs = np.where(np.asarray(maximize, dtype=bool), -values, values)  # every objective minimised
    ok = np.asarray(feasible, dtype=bool) & np.isfinite(costs).all(axis=1)
    idx = np.flatnonzero(ok)
    c = costs[idx]
    dominated = np.zeros(idx.size, dtype=bool)
    for start in range(0, idx.size, _BLOCK):
        mine = c[start : start + _BLOCK]  # is any trial at least as good everywhere and better somewhere?
        no_worse = (c[None, :, :] <= mine[:, None, :]).all(axis=2)
        better = (c[None, :, :] < mine[:, None, :]).any(axis=2)
        dominated[start : start + _BLOCK] = np.any(no_worse & better, axis=1)
    out = np.zeros(len(values), dtype=bool)
    out[idx[~dominated]] = True
    return out
