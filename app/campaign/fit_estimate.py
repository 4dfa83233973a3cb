"""The estimate of ``mjrig fit``: the params scaled to [0, 1] within their bounds (on a log scale
where asked), the starts, and the statistics at the solution (the residual variance, the
covariance from the Jacobian in the params' own units, standard errors, 95 % intervals from
Student's t -- symmetric in log space for a log-scale param -- and correlations). GUI-free."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Scale", "starts", "summary_at"]


@dataclass
class Scale:
    """The params <-> [0, 1] within their bounds (log-scaled where asked)."""

    names: list[str]
    low: np.ndarray
    high: np.ndarray
    log: np.ndarray

    exact: dict[bytes, dict[str, float]] = field(default_factory=dict)
    """Points given as values (a start), by their scaled form: returned exactly, not re-derived."""

    def values(self, u: np.ndarray) -> dict[str, float]:
        if (hit := self.exact.get(np.asarray(u, float).tobytes())) is not None:
            return dict(hit)
        lo, hi = self._space(self.low), self._space(self.high)
        v = lo + np.clip(u, 0.0, 1.0) * (hi - lo)
        return {n: float(x) for n, x in zip(self.names, np.where(self.log, np.exp(np.where(self.log, v, 0.0)), v))}

    def scaled(self, values: dict[str, float]) -> np.ndarray:
        x = np.array([values[n] for n in self.names])
        lo, hi = self._space(self.low), self._space(self.high)
        return (self._space(x) - lo) / (hi - lo)

    def _space(self, x: np.ndarray) -> np.ndarray:
        """``x`` on each param's own scale: its log where log-scaled (a bound below zero of
        another param is never logged)."""
        return np.where(self.log, np.log(np.where(self.log, x, 1.0)), x)

    def slope(self, values: dict[str, float]) -> np.ndarray:
        """d param / d scaled param at ``values``."""
        x = np.array([values[n] for n in self.names])
        ratio = np.where(
            self.log, self.high / np.where(self.log, self.low, 1.0), 1.0
        )  # a linear param's bounds may straddle 0
        return np.where(self.log, x * np.log(ratio), self.high - self.low)


def starts(scale: Scale, values: dict[str, float], n: int) -> list[np.ndarray]:
    """The fit's starts (scaled): the params' values, then a Sobol sequence over the bounds."""
    first = [np.clip(scale.scaled(values), 0.0, 1.0)]
    scale.exact[first[0].tobytes()] = dict(values)
    if n <= 1:
        return first
    from scipy.stats import qmc

    return first + list(qmc.Sobol(d=len(scale.names), scramble=True, seed=0).random(n - 1))


def summary_at(scale: Scale, res: Any, status: str, units: dict[str, str]) -> dict[str, Any]:
    """``mjrig.fit``: the estimate, standard errors, 95 % intervals, correlations, convergence."""
    from scipy.stats import t as student

    est = scale.values(res.x)
    r = res.fun
    m, n = res.jac.shape
    jac = res.jac / scale.slope(est)  # residual per unit of each param
    dof = max(m - n, 1)
    s2 = float(r @ r) / dof
    cov = s2 * np.linalg.pinv(jac.T @ jac)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    q = float(student.ppf(0.975, dof))
    ci = {}
    for i, name in enumerate(scale.names):
        v = est[name]
        if scale.log[i] and v > 0:
            half = q * se[i] / v
            ci[name] = [v * math.exp(-half), v * math.exp(half)]
        else:
            ci[name] = [v - q * se[i], v + q * se[i]]
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = cov / np.outer(se, se)
    blind = [n for n, col in zip(scale.names, res.jac.T) if not np.any(col)]  # no sample moves with it
    converged = bool(res.status > 0) and status == "ok" and not blind
    message = str(res.message)
    if status != "ok":
        message = f"the best point {status}"
    elif blind:
        message = f"the measured signals do not change with {', '.join(blind)}: no estimate of it"
    return {
        "params": scale.names,
        "estimate": est,
        "stderr": dict(zip(scale.names, se.tolist())),
        "ci95": ci,
        "correlation": np.nan_to_num(corr, nan=0.0).tolist(),
        "units": units,
        "cost": float(res.cost),
        "converged": converged,
        "message": message,
        "dof": dof,
        "residual_std": math.sqrt(s2),
    }
