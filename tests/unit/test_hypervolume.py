"""The hypervolume of a front (``mjrig.campaign.hypervolume``): exact against the union of boxes by
inclusion-exclusion (the volume of every intersection of the boxes [p, r], signed by how many
intersect), for 1 to 5 objectives; by hand for a staircase; and a study's history by trial:
infeasible trials and trials past an explicit reference left out, a maximised objective's
reference the value below which a trial adds nothing."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from mjrig.campaign.hypervolume import hypervolume, hypervolume_history, product_unit


def inclusion_exclusion(points: np.ndarray, reference: np.ndarray) -> float:
    """|∪ boxes [p, r]| = Σ over non-empty subsets S of (−1)^(|S|+1) · |∩ S|, the intersection of a
    subset's boxes being [max of its points, r] (points not below r everywhere dropped)."""
    inside = [p for p in points if (p < reference).all()]
    total = 0.0
    for size in range(1, len(inside) + 1):
        for subset in itertools.combinations(inside, size):
            total += (-1) ** (size + 1) * float(np.prod(reference - np.max(subset, axis=0)))
    return total


@pytest.mark.parametrize("objectives", [1, 2, 3, 4, 5])
def test_the_hypervolume_is_the_union_of_the_boxes(objectives):
    rng = np.random.default_rng(objectives)
    for case in range(40):
        points = rng.random((int(rng.integers(1, 9)), objectives))
        if case % 3 == 0:  # ties and equal points: rounded to a coarse grid
            points = np.round(points, 1)
        reference = np.full(objectives, 0.9)
        assert hypervolume(points, reference) == pytest.approx(inclusion_exclusion(points, reference), abs=1e-12)


def test_a_staircase_by_hand():
    """Points (1, 5), (2, 2), (3, 3) (dominated), (4, 1) against (5, 6): the strips between
    successive x, each up to the best y so far, 1·1 + 2·4 + 1·5, whatever their order."""
    points = np.array([[3.0, 3.0], [4.0, 1.0], [1.0, 5.0], [2.0, 2.0]])
    assert hypervolume(points, np.array([5.0, 6.0])) == 14.0
    assert hypervolume(points, np.array([5.0, 6.0])) == pytest.approx(inclusion_exclusion(points, np.array([5.0, 6.0])))
    assert hypervolume(points[:0], np.array([5.0, 6.0])) == 0.0
    assert hypervolume(points, np.array([1.0, 1.0])) == 0.0, "no point better than the reference everywhere"


def test_the_history_by_trial_with_a_maximised_objective_and_an_explicit_reference():
    """After each trial: the hypervolume of the feasible trials so far. Objective 2 maximised
    (cost −value); reference (3.5, 1.5): trial 4 (4 > 3.5 on the first) is left out and named,
    trial 1 is infeasible, trial 2 has a missing value (never counted)."""
    values = np.array([[1.0, 2.5], [0.5, 9.0], [0.2, np.nan], [2.0, 4.0], [4.0, 9.0], [3.0, 1.0]])
    feasible = np.array([True, False, True, True, True, True])
    h = hypervolume_history(values, maximize=[False, True], feasible=feasible, reference=[3.5, 1.5])
    first = (3.5 - 1.0) * (2.5 - 1.5)
    both = first + (3.5 - 2.0) * (4.0 - 2.5)  # (2, 4) adds the strip above the first's box
    np.testing.assert_allclose(h.values, [first, first, first, both, both, both])
    assert h.outside == ((4, 0), (5, 1)), "trial 4 past the reference on objective 0, trial 5 below it on 1"
    assert h.reference == (3.5, 1.5)
    default = hypervolume_history(values, maximize=[False, True], feasible=feasible)
    assert default.reference == (4.0, 1.0) and default.outside == (), "the default: each objective's worst feasible"
    assert np.all(np.diff(default.values) >= 0) and default.values[-1] == pytest.approx(
        hypervolume(np.array([[1.0, -2.5], [2.0, -4.0], [4.0, -9.0], [3.0, -1.0]]), np.array([4.0, -1.0]))
    )
    none = hypervolume_history(values, maximize=[False, True], feasible=np.zeros(6, bool))
    assert none.reference is None and none.values.tolist() == [0.0] * 6


def test_the_unit_is_the_objectives_multiplied():
    assert product_unit(["N", "s"]) == "N·s"
    assert product_unit(["m/s", "s", ""]) == "(m/s)·s"
    assert product_unit(["", ""]) == ""


@pytest.mark.parametrize("objectives", [2, 3, 4, 5])
def test_the_history_adds_each_trials_gain_as_a_recomputation_would(objectives):
    """Row by row, the running sum of what each new front point adds equals the hypervolume of the
    feasible trials so far worked out whole (some objectives maximised, some trials infeasible)."""
    rng = np.random.default_rng(10 + objectives)
    values = rng.random((60, objectives))
    feasible = rng.random(60) > 0.2
    maximize = [bool(j % 2) for j in range(objectives)]
    h = hypervolume_history(values, maximize=maximize, feasible=feasible)
    costs = np.where(maximize, -values, values)
    reference = np.where(maximize, -np.array(h.reference), np.array(h.reference))
    for i in range(60):
        whole = hypervolume(costs[: i + 1][feasible[: i + 1]], reference)
        assert h.values[i] == pytest.approx(whole, rel=1e-12, abs=1e-15), i
