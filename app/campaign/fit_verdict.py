"""Whether a converged fit is *identified* (CONTRACT 11): the checks an engineer makes before
signing an estimate, each failing one as a reason in words they act on.

- an estimate on a bound (within 1e-6 of the range from it): the data pushed it out of the range
  (often a unit: a bench in cm declared mm);
- a param the data cannot tell: its standard error above its own value, or a correlation above
  0.999 with another (the pair named: a free decay cannot tell k, c and m apart); an initial
  position or clock offset (``mjrig.scenario.studies.fit``), whose zero is arbitrary, when its standard error
  is above a quarter of its bounds' range (its 95 % interval would span them);
- a final RMS error above the measured signal's own RMS about its mean: the model does not explain
  the data (units, mapping).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mjrig.scenario.studies.fit import is_variable

__all__ = ["verdict", "said_once", "CORRELATION", "ON_BOUND"]

CORRELATION = 0.999
"""A correlation above this (in size) between two estimates: the data cannot tell them apart."""
ON_BOUND = 1e-6
"""An estimate this close to a bound, as a fraction of its range, is on it."""


def _unit(unit: str) -> str:
    return f" {unit.replace('*', '·')}" if unit else ""


def verdict(
    summary: dict[str, Any],
    *,
    low: Sequence[float] | np.ndarray,
    high: Sequence[float] | np.ndarray,
    spreads: dict[str, dict[str, float]],
) -> dict[str, str]:
    """The reasons a fit of ``summary`` (``mjrig.fit``: estimate, stderr, correlation, units, rms)
    within bounds ``low``/``high`` (SI; in the order of ``summary["params"]``, a sequence or an
    array of shape (params,)) is not identified, by
    the param (or ``experiment/signal`` for an error too large) they are about; empty: identified.
    ``spreads``: each experiment's measured signals' RMS about their mean (SI)."""
    names, est, se, units = summary["params"], summary["estimate"], summary["stderr"], summary["units"]
    corr = np.asarray(summary["correlation"], dtype=float)
    reasons: dict[str, str] = {}
    told: dict[tuple[str, str], str] = {}  # the pairs said not told apart, and the words
    for i, name in enumerate(names):
        v, lo, hi, unit = est[name], float(low[i]), float(high[i]), _unit(units.get(name, ""))
        room = ON_BOUND * (hi - lo)
        if v - lo <= room:
            reasons[name] = (
                f"{name} at its lower bound {lo:g}{unit}: not identified beyond it (check the bench's units and the bounds)"
            )
        elif hi - v <= room:
            reasons[name] = (
                f"{name} at its upper bound {hi:g}{unit}: not identified beyond it (check the bench's units and the bounds)"
            )
        elif is_variable(name) and se[name] > (hi - lo) / 4:
            reasons[name] = (
                f"{name} is not told by the data (standard error {se[name]:.2g}{unit} above a quarter "
                f"of its range {hi - lo:.3g}{unit})"
            )
        elif not is_variable(name) and se[name] > abs(v):
            reasons[name] = (
                f"{name} is not told by the data (standard error {se[name]:.2g}{unit} above its value {v:.3g})"
            )
        else:
            apart = [(abs(corr[i, j]), names[j]) for j in range(len(names)) if j != i and abs(corr[i, j]) > CORRELATION]
            if apart:
                c, other = max(apart)
                if (other, name) in told:  # the pair said already: the same words (``said_once``)
                    reasons[name] = told[(other, name)]
                    continue
                reasons[name] = told[(name, other)] = (
                    f"{name} and {other} are not told apart by the data (correlation {c:.6f}): fix one, "
                    "or add an experiment that moves them differently"
                )
    for exp, per in summary["rms"].items():
        for signal, rms in per.items():
            spread = spreads.get(exp, {}).get(signal)
            if spread is not None and rms > spread:
                unit = _unit(summary.get("signal_units", {}).get(signal, ""))
                reasons[f"{exp}/{signal}"] = (
                    f"rms error {rms:.3g}{unit} of {signal} in {exp} above the measured signal's own spread "
                    f"{spread:.3g}{unit}: the model does not explain the data (check the units and the mapping)"
                )
    return reasons


def said_once(reasons: dict[str, str]) -> list[str]:
    """The reasons' words, each once, in order (a pair not told apart is both params' reason)."""
    return list(dict.fromkeys(reasons.values()))
