"""Studies of several objectives (CONTRACT 7): the spring_mass block pulled 0.1 m and let go, a
stiffer spring (k) pulls harder at the start (peak tension 0.1·k) but reaches the far end of its
swing sooner (at π/ω_d, ω_d = sqrt(k/m − (c/2m)²)); damping c only slows it. Minimising both is
a trade-off in k, with every damped-more trial dominated. A requirement caps the tension at 90 N
(k above 900 N/m fails it). 0.4 s runs, 20 trials a study (about 3 s)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

from mjrig.campaign.optimize import run_optimize, study_paths
from mjrig.campaign.pareto import pareto_flags
from mjrig.runtime.errors import ConfigError
from mjrig.scenario.parse import load_scenario
from tests.sweep_util import bundled_spring_mass

PEAK, HALF = "Objectives/peak:value", "Objectives/half_period:value"


def study(folder: Path, *, objectives: str, sampler: str = "tpe", trials: int = 20, extra: str = "") -> Path:
    return bundled_spring_mass(
        folder,
        '\n[[metrics]]\nname = "peak"\nsignal = "Loads/main_spring:tension"\nkind = "max"\n'
        + '\n[[metrics]]\nname = "half_period"\nsignal = "Joints/slide_x:qpos"\nkind = "time_of_min"\n'
        + '\n[[requirements]]\nname = "not_too_hard"\nsignal = "Loads/main_spring:tension"\nmax = 90.0\n'
        + f'\n[optimize]\n{objectives}\ntrials = {trials}\nseed = 5\nsampler = "{sampler}"\n{extra}'
        + "[optimize.params]\nk = { low = 100.0, high = 1000.0 }\nc = { low = 0.5, high = 15.0 }\n",
        duration=0.4,
    )


def non_dominated(rows: list[dict]) -> set[int]:
    """The feasible trials no feasible trial beats on both (smaller) objectives: by definition."""
    good = [r for r in rows if r["feasible"]]
    return {
        r["trial"]
        for r in good
        if not any(o[PEAK] <= r[PEAK] and o[HALF] <= r[HALF] and (o[PEAK] < r[PEAK] or o[HALF] < r[HALF]) for o in good)
    }


@pytest.mark.parametrize("sampler", ["tpe", "random"])
def test_the_pareto_flags_are_the_non_dominated_trials_and_span_the_trade_off(tmp_path, sampler):
    path = study(tmp_path, objectives='minimize = ["Metrics/peak", "Metrics/half_period"]', sampler=sampler)
    told: list[tuple[dict, dict | None]] = []  # the progress bar's front after each trial
    outcome = run_optimize(
        load_scenario(path), out=tmp_path / "study.parquet", workers=1, progress=lambda r, b: told.append((r, b))
    )
    frame = pl.read_parquet(outcome.path)
    rows = frame.to_dicts()
    assert frame.height == 20 and "objective" not in frame.columns
    for n in range(1, len(told) + 1):  # kept a row at a time, it is the front of the rows so far
        best = told[n - 1][1]
        assert (best["front"] if best else []) == sorted(non_dominated([r for r, _ in told[:n]])), n
    for r in rows:  # the objectives are the closed forms (m = 1 kg)
        k, c = r["Params/k:value"], r["Params/c:value"]
        assert r["feasible"] == (k * 0.1 <= 90.0 + 1e-9)
        if not r["feasible"]:
            assert r[PEAK] is None and r[HALF] is None and not r["pareto"]
            continue
        assert r[PEAK] == pytest.approx(0.1 * k, rel=1e-3)
        assert r[HALF] == pytest.approx(math.pi / math.sqrt(k - c * c / 4), abs=1.5e-3)
    front = {r["trial"] for r in rows if r["pareto"]}
    assert front == non_dominated(rows) == set(outcome.pareto)
    feasible = [r for r in rows if r["feasible"]]
    assert 2 <= len(front) < len(feasible), "some trials are dominated (damped more), some are not"
    along = sorted((r[PEAK], r[HALF]) for r in rows if r["pareto"])
    assert all(b[1] < a[1] for a, b in zip(along, along[1:])), "along the front one objective buys the other"
    spread = max(r[PEAK] for r in feasible) - min(r[PEAK] for r in feasible)
    assert along[-1][0] - along[0][0] > 0.5 * spread, f"the front spans the trade-off: {along}"
    schema = pq.read_schema(outcome.path)
    assert schema.field(PEAK).metadata[b"unit"] == b"N" and schema.field(HALF).metadata[b"unit"] == b"s"
    assert not study_paths(outcome.path)[1].exists(), "no best set-up for several objectives"


def test_a_maximised_objective_and_a_resumed_study(tmp_path):
    """maximize and minimize lists together; a study given more trials runs only the new ones and
    flags the front over all of them."""
    objectives = 'minimize = ["Metrics/peak"]\nmaximize = ["Metrics/half_period"]'
    path = study(tmp_path, objectives=objectives, sampler="random", trials=8)
    out = tmp_path / "study.parquet"
    first = run_optimize(load_scenario(path), out=out, workers=1)
    again = run_optimize(load_scenario(path), out=out, workers=1, trials=14)
    assert (first.total, first.ran, again.total, again.ran) == (8, 8, 14, 6)
    frame = pl.read_parquet(out)
    values = frame.select(PEAK, HALF).fill_null(np.nan).to_numpy()
    flags = pareto_flags(values, maximize=[False, True], feasible=frame["feasible"].to_numpy())
    assert frame["pareto"].to_list() == flags.tolist() and set(again.pareto) == set(frame["trial"].filter(flags))
    # slow and soft wins both: the front is the one softest feasible trial, unless equals
    best = frame.filter(pl.col("feasible")).sort(PEAK)[0]
    assert best["pareto"][0] and frame["pareto"].sum() >= 1


def test_pareto_flags_by_hand():
    """Equal trials are on the front together; a NaN objective or an infeasible trial never is."""
    values = np.array([[1.0, 5.0], [2.0, 2.0], [2.0, 2.0], [3.0, 3.0], [0.5, np.nan], [0.1, 0.1]])
    flags = pareto_flags(values, maximize=[False, False], feasible=np.array([True] * 5 + [False]))
    assert flags.tolist() == [True, True, True, False, False, False]
    assert pareto_flags(values[:4], maximize=[True, True], feasible=np.ones(4, bool)).tolist() == [
        True,
        False,
        False,
        True,
    ]


def refusal(folder: Path, objectives: str, *, extra: str = "", sampler: str = "tpe") -> str:
    """The one line that refuses a study with these objectives (and ``extra`` [optimize] lines)."""
    with pytest.raises(ConfigError) as err:
        load_scenario(study(folder, objectives=objectives, extra=extra, sampler=sampler))
    assert "\n" not in str(err.value), err.value
    return str(err.value)


def test_bad_objectives_are_one_line(tmp_path):
    """An unknown metric (by its place in the list), a metric twice, an empty list, a target with
    several objectives, and CMA-ES (Optuna's searches one objective only)."""
    two = 'minimize = ["Metrics/peak", "Metrics/half_period"]'
    unknown = refusal(tmp_path, 'minimize = ["Metrics/peak", "Metrics/nope"]')
    assert "optimize.minimize[1]: unknown metric 'Metrics/nope'" in unknown
    assert "already an objective" in refusal(tmp_path, 'minimize = ["Metrics/peak"]\nmaximize = "Metrics/peak"')
    assert "'target' goes with one objective" in refusal(tmp_path, two, extra="target = 2.0\n")
    assert "the objective lists are empty" in refusal(tmp_path, "minimize = []")
    assert "'cmaes' searches one objective" in refusal(tmp_path, two, sampler="cmaes")


def test_the_reports_front_figure_two_objectives_a_scatter_more_parallel_coordinates():
    """Two objectives: the dominated points and the front joined in order of the first; three:
    a line per trial, the front's and the others' apart, each axis scaled best (0) to worst (1)."""
    from mjrig.exports.pareto_plot import front_figure

    values = np.array([[1.0, 5.0, 0.2], [2.0, 2.0, 0.9], [3.0, 3.0, 0.1], [4.0, 1.0, 0.5]])
    on = pareto_flags(values[:, :2], maximize=[False, False], feasible=np.ones(4, bool))
    fig = front_figure(np.arange(4), values[:, :2], on, labels=["a", "b"], maximize=[False, False])
    (ax,) = fig.axes
    (line,) = ax.lines
    assert line.get_xdata().tolist() == [1.0, 2.0, 4.0] and line.get_label() == "Pareto front (3)"
    fig = front_figure(np.arange(4), values, on, labels=["a", "b", "c"], maximize=[False, False, True])
    dominated, front = fig.axes[0].collections
    assert (dominated.get_label(), front.get_label()) == ("dominated (1)", "Pareto front (3)")
    (trial_2,) = dominated.get_segments()  # a = 3 of 1..4, b = 3 of 1..5, c = 0.1 maximised: the worst
    np.testing.assert_allclose(trial_2[:, 1], [2 / 3, 0.5, 1.0])


FINE = """
[simulation]
duration = 0.3

[[metrics]]
name = "peak"
signal = "Loads/spring:tension"
kind = "max"

[[metrics]]
name = "half_period"
signal = "Joints/slide:qpos"
kind = "time_of_min"

[optimize]
minimize = ["Metrics/peak", "Metrics/half_period"]
trials = 20
seed = 5
sampler = "random"
[optimize.params]
k = { low = 398.0, high = 402.0 }
c = { low = 0.5, high = 5.0 }
"""
"""A study of the 2 kg block of ``tests.unit.test_measured`` (RK4, 1 ms steps) released 20 mm from
rest: peak tension 0.02·k at the release, the trough at π/ω_d, ω_d = sqrt(k/m − (c/2m)²)."""


def test_a_trade_off_finer_than_a_step_gives_the_closed_forms_front(tmp_path):
    """k within 398..402 N/m: the half periods of all trials lie within about two steps (1 ms),
    so a time read to whole steps ties most trials and flags dominated ones (CONTRACT 14). Read
    between the samples (a parabola through the trough), each half period is the closed form's
    within 1 % of a step, and the flags are the closed form's front."""
    from tests.unit.test_measured import scenario

    path = scenario(tmp_path, "", k=400.0, c=2.0, extra=FINE)
    text = path.read_text()
    path.write_text(text.replace("[simulation]\nduration = 2.0\n", "", 1))
    outcome = run_optimize(load_scenario(path), out=tmp_path / "study.parquet", workers=1)
    rows = pl.read_parquet(outcome.path).to_dicts()
    closed = []
    for r in rows:
        k, c = r["Params/k:value"], r["Params/c:value"]
        half = math.pi / math.sqrt(k / 2.0 - (c / 4.0) ** 2)
        assert r[HALF] == pytest.approx(half, abs=1e-5), (k, c)
        assert r[PEAK] == pytest.approx(0.02 * k, rel=1e-9)
        closed.append({"trial": r["trial"], "feasible": True, PEAK: 0.02 * k, HALF: half})
    spread = max(r[HALF] for r in rows) - min(r[HALF] for r in rows)
    assert spread < 2.5e-3, f"the trade-off spans {spread * 1e3:.2f} ms: a few steps"
    front = {r["trial"] for r in rows if r["pareto"]}
    assert front == non_dominated(closed), (sorted(front), sorted(non_dominated(closed)))
    assert 2 <= len(front) < len(rows)
    whole = [{**r, HALF: round(r[HALF], 3)} for r in rows]  # the trough's sample: what whole steps read
    assert non_dominated(whole) != front, "the test tells sub-step times from whole steps"
    print(f"front of {len(front)} of {len(rows)} trials ({len(non_dominated(whole))} read to whole steps)")
