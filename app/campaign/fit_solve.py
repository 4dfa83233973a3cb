"""The fit's solvers: scipy's bounded least squares with the bounds a solution reaches held, and
MuJoCo's ``minimize.least_squares``. Both work on the params scaled to [0, 1] (``Scale``) and
evaluate their points through ``Evaluations`` (trials side by side, replayed on resume).

Why bounds are held: scipy's trust-region reflective method (TRF) keeps its iterates strictly
inside the bounds and scales each step by the distance to the bound it heads for (Coleman-Li), so a
param whose best value is the bound itself (an undamped bench fitted with a damping bounded at 0)
halves its distance to it at every iteration and needs some twenty more Jacobians to "converge"
there. ``solve_trf`` stops that: when the Gauss-Newton step at a Jacobian would take a param that
is already within ``NEAR`` of a bound past it, while the gradient pushes it there, the param is
held on the bound and the others are solved for alone (an active set). At the end each held param
is checked: a gradient that now points inwards releases it and the solve goes on. The result is
the same point TRF creeps towards, in the evaluations of a fit whose solution is inside.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from mjrig.campaign.fit_estimate import Scale
    from mjrig.campaign.fit_evals import Evaluations

__all__ = ["STEP", "NEAR", "solve_trf", "solve_mujoco"]

STEP = 1e-5
"""The forward-difference step of the scaled params (their bounds' span is 1)."""
NEAR = 0.02
"""How close to a bound (a fraction of the span) a param must be before it may be held on it."""


class _Reached(Exception):
    """Raised inside a solve: param ``j`` is to be held on bound ``bound`` (0 or 1) from ``u``."""

    def __init__(self, u: np.ndarray, j: int, bound: float) -> None:
        super().__init__(j)
        self.u, self.j, self.bound = u, j, bound


@dataclass
class _Result:
    """What the fit reads of a solve (scipy's ``OptimizeResult`` fields): the scaled solution
    ``x``, residual ``fun``, Jacobian ``jac`` (every param's column), ``cost`` ½Σr², ``status``
    (> 0: converged) and ``message``."""

    x: np.ndarray
    fun: np.ndarray
    jac: np.ndarray
    cost: float
    status: int
    message: str


class _Points:
    """Residuals of scaled points, each evaluated once (``Evaluations`` replays a resumed fit)."""

    def __init__(self, ev: Evaluations, scale: Scale, start: int) -> None:
        self.ev, self.scale, self.start = ev, scale, start
        self.cache: dict[bytes, np.ndarray] = {}

    def residual(self, u: np.ndarray) -> np.ndarray:
        if u.tobytes() not in self.cache:
            self.cache[u.tobytes()] = self.ev.many([self.scale.values(u)], self.start)[0][0]
        return self.cache[u.tobytes()]

    def jacobian(self, u: np.ndarray, columns: list[int]) -> np.ndarray:
        """Forward differences of ``columns`` at ``u`` (a step inwards at the upper bound), the
        points of all columns evaluated side by side."""
        steps = np.where(u + STEP <= 1.0, STEP, -STEP)
        points = [np.clip(u + np.eye(u.size)[j] * steps[j], 0.0, 1.0) for j in columns]
        rs = self.ev.many([self.scale.values(p) for p in points], self.start)
        r0 = self.residual(u)
        return np.column_stack([(r - r0) / steps[j] for (r, _), j in zip(rs, columns)])


def solve_trf(ev: Evaluations, scale: Scale, u0: np.ndarray, start: int) -> _Result:
    """scipy's least_squares (TRF) from ``u0`` (scaled), holding on its bound each param the
    solution reaches (module docstring); at most 100 residuals per solve."""
    from scipy.optimize import least_squares

    points = _Points(ev, scale, start)
    n = u0.size
    held: dict[int, float] = {}
    u = np.asarray(u0, dtype=float).copy()
    for _ in range(2 * n + 1):  # each param held and released at most once, in practice
        free = [j for j in range(n) if j not in held]
        reduced = _Reduced(points, u, held)
        if free:
            try:
                res = least_squares(
                    reduced.residual,
                    u[free],
                    jac=reduced.jacobian,
                    bounds=(0.0, 1.0),
                    method="trf",
                    x_scale=1.0,
                    ftol=1e-8,
                    xtol=1e-8,
                    gtol=1e-8,
                    max_nfev=100,
                )
            except _Reached as hit:
                held[hit.j] = hit.bound
                u = hit.u.copy()
                u[hit.j] = hit.bound
                continue
            u, r, status, message = reduced.full(res.x), res.fun, int(res.status), str(res.message)
            if not held:
                return _Result(u, r, res.jac, float(res.cost), status, message)
        else:
            r, status, message = points.residual(u), 1, "every param on a bound"
        J = np.empty((r.size, n))
        if free:
            J[:, free] = res.jac
        J[:, list(held)] = points.jacobian(u, list(held))
        g = J.T @ r
        inwards = [j for j, b in held.items() if (g[j] < 0) == (b == 0.0) and g[j] != 0.0]
        if not inwards or status <= 0:
            names = ", ".join(scale.names[j] for j in held)
            return _Result(u, r, J, float(0.5 * r @ r), status, f"{message} ({names} held on a bound)")
        for j in inwards:  # the others now pull it off the bound: free it again
            del held[j]
    r = points.residual(u)
    return _Result(u, r, points.jacobian(u, list(range(n))), float(0.5 * r @ r), 0, "the bounds reached kept changing")


class _Reduced:
    """The problem in the params not ``held`` on a bound: points of ``base`` with those set."""

    def __init__(self, points: _Points, base: np.ndarray, held: dict[int, float]) -> None:
        self.points, self.base, self.held = points, base, dict(held)
        self.free = [j for j in range(base.size) if j not in held]

    def full(self, v: np.ndarray) -> np.ndarray:
        w = self.base.copy()
        w[self.free] = v
        for j, b in self.held.items():
            w[j] = b
        return w

    def residual(self, v: np.ndarray) -> np.ndarray:
        return self.points.residual(self.full(v))

    def jacobian(self, v: np.ndarray) -> np.ndarray:
        """The free params' columns at ``v``; ``_Reached`` when one is to be held from here."""
        w = self.full(v)
        J = self.points.jacobian(w, self.free)
        _check_bounds(w, J, self.points.residual(w), self.free)
        return J


def _check_bounds(u: np.ndarray, J: np.ndarray, r: np.ndarray, free: list[int]) -> None:
    """Raise ``_Reached`` for the first free param within ``NEAR`` of a bound that the
    Gauss-Newton step takes past it, the gradient pushing it that way."""
    step = np.linalg.lstsq(J, -r, rcond=None)[0]
    g = J.T @ r
    for k, j in enumerate(free):
        if u[j] < NEAR and u[j] + step[k] < 0.0 and g[k] > 0.0:
            raise _Reached(u, j, 0.0)
        if u[j] > 1.0 - NEAR and u[j] + step[k] > 1.0 and g[k] < 0.0:
            raise _Reached(u, j, 1.0)


def solve_mujoco(ev: Evaluations, scale: Scale, u0: np.ndarray, start: int) -> Any:
    """MuJoCo's ``minimize.least_squares`` (Levenberg-Marquardt with box bounds) from ``u0``: its
    residual takes a batch of points, which ``ev`` evaluates side by side."""
    from mujoco import minimize

    def residual(u: np.ndarray) -> np.ndarray:
        us = u.reshape(u.shape[0], -1)
        return np.column_stack([r for r, _ in ev.many([scale.values(us[:, j]) for j in range(us.shape[1])], start)])

    n = u0.size
    x, trace = minimize.least_squares(
        u0, residual, bounds=[np.zeros(n), np.ones(n)], eps=STEP, xtol=1e-8, gtol=1e-8, max_iter=100, verbose=0
    )
    r = residual(x)[:, 0]
    steps = np.where(x + STEP <= 1.0, STEP, -STEP)
    around = residual(np.column_stack([np.clip(x + np.eye(n)[j] * steps[j], 0, 1) for j in range(n)]))
    jac = (around - r[:, None]) / steps
    status = 1 if len(trace) < 100 else 0
    return _Result(
        x,
        r,
        jac,
        float(0.5 * r @ r),
        status,
        f"MuJoCo's least_squares, {len(trace)} iterations" if status else "out of iterations",
    )
