"""The fit's TRF solver holds a param on the bound its solution reaches (``campaign.fit_solve``):
an exponential ``a·exp(−b·t)`` fitted to data that rise (``2 + 0.3·t``), with ``b`` bounded below
by 0, has its least-squares solution at b = 0 and a = mean(y) (closed form); reached exactly, in
no more evaluations than the same fit of data whose solution lies inside (b = 0.7)."""

from __future__ import annotations

import numpy as np
import pytest

from mjrig.campaign.fit_estimate import Scale
from mjrig.campaign.fit_solve import solve_trf

T = np.linspace(0.0, 2.0, 41)


class Points:
    """``Evaluations``' face for the solver: the residuals of ``a·exp(−b·t) − y``, counted."""

    def __init__(self, y: np.ndarray) -> None:
        self.y, self.count = y, 0

    def many(self, points: list[dict[str, float]], start: int) -> list[tuple[np.ndarray, str]]:
        self.count += len(points)
        return [(p["a"] * np.exp(-p["b"] * T) - self.y, "ok") for p in points]


SCALE = Scale(["a", "b"], np.array([0.1, 0.0]), np.array([10.0, 5.0]), np.array([False, False]))


def _fit(y: np.ndarray) -> tuple[dict[str, float], int, int]:
    points = Points(y)
    res = solve_trf(points, SCALE, SCALE.scaled({"a": 1.0, "b": 2.0}), 0)  # type: ignore[arg-type]
    return SCALE.values(res.x), points.count, res.status


def test_a_solution_on_a_bound_is_reached_exactly_and_as_fast_as_one_inside(monkeypatch):
    inside, n_inside, ok_inside = _fit(2.0 * np.exp(-0.7 * T))
    assert ok_inside > 0 and inside["a"] == pytest.approx(2.0, abs=1e-7) and inside["b"] == pytest.approx(0.7, abs=1e-7)
    y = 2.0 + 0.3 * T
    on_bound, n_bound, ok_bound = _fit(y)
    assert ok_bound > 0 and on_bound["b"] == 0.0
    assert on_bound["a"] == pytest.approx(float(np.mean(y)), abs=1e-9)  # a = mean(y) when b = 0
    monkeypatch.setattr("mjrig.campaign.fit_solve.NEAR", -1.0)  # never held: TRF creeping to the bound
    _, n_creeping, _ = _fit(y)
    assert n_bound <= n_inside + 5 and n_bound < n_creeping, (n_bound, n_inside, n_creeping)


def test_a_param_held_too_early_is_released_when_the_others_pull_it_off_the_bound():
    """Data whose decay is slow (b = 0.05, within 2 % of the span from 0) from a start far off:
    wherever the solver holds b on 0 on the way, the gradient at the end pulls it off again, and
    the fit ends at the truth."""
    got, _, ok = _fit(2.0 * np.exp(-0.05 * T))
    assert ok > 0 and got["b"] == pytest.approx(0.05, abs=1e-7) and got["a"] == pytest.approx(2.0, abs=1e-7)
