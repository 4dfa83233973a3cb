"""NSGA-II and NSGA-III studies and the front's hypervolume (CONTRACT 14, "Studies"), on the
closed-form trade-off of ``test_study_pareto``: the spring_mass block (m = 1 kg) pulled 0.1 m and
let go, peak tension 0.1·k against the time to the far end of its swing π/ω_d,
ω_d = sqrt(k − c²/4); a requirement caps the tension at 90 N (k <= 900 N/m).

The true front is c at its lower bound (0.5 N·s/m) and k over 100..900 N/m: the curve
f2 = g(f1) = π/sqrt(10·f1 − c²/4) for f1 = 0.1·k in 10..90 N. Its hypervolume against the
reference (R1, R2) = (92 N, 0.32 s) is ∫_10^90 (R2 − g(f1)) df1 + (R1 − 90)(R2 − g(90)): every
point up to R dominated by the curve (the second term: the strip past the stiffest feasible spring).

How many trials: NSGA-II with 20 a generation (4 generations) and seed 5 reaches 96.8 % of it in
80 trials (about 7 s). NSGA-II is no quicker than random sampling on this two-param problem: over
60 seeds its fraction after 80 trials ranged 0.92..0.97 (median 0.96), random sampling's 0.95..0.97,
TPE's 0.98..0.99 (with the closed forms for the simulation); the 95 % here is seed 5's."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import optuna
import polars as pl
import pytest
from scipy.integrate import quad

from mjrig.campaign.optimize import run_optimize, study_paths
from mjrig.campaign.results import SweepResults
from mjrig.cli import main
from mjrig.scenario.parse import load_scenario
from tests.long.test_study_pareto import HALF, PEAK, refusal, study

TWO = 'minimize = ["Metrics/peak", "Metrics/half_period"]'
REFERENCE = (92.0, 0.32)
"""The reference point (N, s): just past the true front's ends (90 N, g(10) = 0.314 s)."""


def g(f1: float, c: float = 0.5) -> float:
    """The true front's half period (s) at peak tension ``f1`` (N): π/sqrt(k − c²/4), k = 10·f1."""
    return math.pi / math.sqrt(10.0 * f1 - c * c / 4)


def true_hypervolume(r1: float, r2: float) -> float:
    """The true front's hypervolume against (r1, r2), N·s: numerically (scipy's quad, relative
    error 1e-12), checked against the curve's antiderivative −(π/5)·sqrt(10·f1 − c²/4)."""
    curve, _ = quad(lambda f1: r2 - g(f1), 10.0, 90.0, epsabs=0.0, epsrel=1e-12)
    exact = r2 * 80.0 - (math.pi / 5) * (math.sqrt(900.0 - 0.0625) - math.sqrt(100.0 - 0.0625))
    assert curve == pytest.approx(exact, rel=1e-6)
    return curve + (r1 - 90.0) * (r2 - g(90.0))


def union_area(points: np.ndarray, reference: tuple[float, float]) -> float:
    """Brute force: the area of the union of the boxes [p, reference] on the grid of every
    point's coordinates, each cell counted when some point dominates its lower corner."""
    pts = points[(points < np.array(reference)).all(axis=1)]
    if not len(pts):
        return 0.0
    xs, ys = np.unique(np.append(pts[:, 0], reference[0])), np.unique(np.append(pts[:, 1], reference[1]))
    x0, y0 = np.meshgrid(xs[:-1], ys[:-1], indexing="ij")
    covered = ((pts[:, 0][None, None, :] <= x0[..., None]) & (pts[:, 1][None, None, :] <= y0[..., None])).any(axis=2)
    return float((np.diff(xs)[:, None] * np.diff(ys)[None, :] * covered).sum())


@pytest.fixture(scope="module")
def nsga2(tmp_path_factory) -> tuple[Path, object]:
    """The NSGA-II study: 80 trials, 20 a generation, the reference (92 N, 0.32 s)."""
    folder = tmp_path_factory.mktemp("nsga2")
    extra = f"population = 20\nreference = [{REFERENCE[0]}, {REFERENCE[1]}]\n"
    path = study(folder, objectives=TWO, sampler="nsga2", trials=80, extra=extra)
    return path, run_optimize(load_scenario(path), out=folder / "study.parquet", workers=1)


def test_an_nsga2_study_reaches_95_percent_of_the_true_fronts_hypervolume(nsga2):
    path, outcome = nsga2
    frame = pl.read_parquet(outcome.path)
    true = true_hypervolume(*REFERENCE)
    reached = frame["hypervolume"][-1] / true
    print(f"hypervolume after {frame.height} trials: {frame['hypervolume'][-1]:.4f} N·s of {true:.4f}: {reached:.4f}")
    assert 0.95 <= reached <= 1.0 + 1e-3, reached  # a simulated front is the true one within its reading
    assert load_scenario(path).optimize.population == 20
    db = optuna.load_study(study_name="mjrig", storage=f"sqlite:///{study_paths(outcome.path)[0]}")
    generations = [t.system_attrs["NSGAIISampler:generation"] for t in db.trials]
    assert generations == [n // 20 for n in range(80)], "20 trials a generation"
    infeasible = [t for t, f in zip(db.trials, frame["feasible"]) if not f]
    assert infeasible and all(t.system_attrs["constraints:requirements"] > 0 for t in infeasible)


def test_the_hypervolume_column_grows_and_is_the_union_of_the_trials_boxes(nsga2):
    """Non-decreasing; after each trial the area the feasible trials so far dominate up to the
    reference, recomputed cell by cell from the rows; trials past the reference are left out and
    the outcome names the first one."""
    _, outcome = nsga2
    frame = pl.read_parquet(outcome.path).sort("trial")
    hv = frame["hypervolume"].to_numpy()
    assert frame["hypervolume"].dtype == pl.Float64 and np.all(np.diff(hv) >= 0)
    values = frame.select(PEAK, HALF).fill_null(np.nan).to_numpy()
    ok = frame["feasible"].to_numpy()
    for i in range(frame.height):
        assert hv[i] == pytest.approx(union_area(values[: i + 1][ok[: i + 1]], REFERENCE), rel=1e-12, abs=1e-12), i
    past = [int(t) for t, v, f in zip(frame["trial"], values, ok) if f and (v > REFERENCE).any()]
    assert past, "two soft, heavily damped springs are slower than 0.32 s"
    (line,) = outcome.warnings
    assert f"optimize.reference[1]: trial {past[0]}'s Metrics/half_period" in line and "\n" not in line
    assert f"and {len(past) - 1} other trial" in line
    assert outcome.hypervolume.startswith(f"{hv[-1]:.6g} N·s (reference 92 N, 0.32 s)")
    trials, shown = SweepResults.open(outcome.path).hypervolume()  # what the results view shows
    assert trials.tolist() == frame["trial"].to_list() and shown.tolist() == hv.tolist()


def test_the_report_draws_the_hypervolume_beside_the_front(nsga2, tmp_path):
    from mjrig.exports.report import write_report

    _, outcome = nsga2
    html = write_report(outcome.path, out=tmp_path / "study.html").read_text(encoding="utf-8")
    assert html.count('alt="the front\'s hypervolume by trial"') == 1 and 'class="pair"' in html
    assert "up to the reference point (92 N, 0.32 s)" in html
    last = pl.read_parquet(outcome.path).sort("trial")["hypervolume"][-1]
    assert f"{last:.6g} N·s" in html


def test_nsga3_and_a_population_with_one_objective_and_two(tmp_path):
    """NSGA-III with two objectives, 4 a generation; NSGA-II with one objective (the softest
    spring pulls least), 4 a generation; the default reference: each objective's worst feasible."""
    path = study(tmp_path, objectives=TWO, sampler="nsga3", trials=10, extra="population = 4\n")
    outcome = run_optimize(load_scenario(path), out=tmp_path / "three.parquet", workers=1)
    frame = pl.read_parquet(outcome.path)
    db = optuna.load_study(study_name="mjrig", storage=f"sqlite:///{study_paths(outcome.path)[0]}")
    assert [t.system_attrs["NSGAIIISampler:generation"] for t in db.trials] == [0] * 4 + [1] * 4 + [2] * 2
    good = frame.filter(pl.col("feasible"))
    worst = (good[PEAK].max(), good[HALF].max())
    assert outcome.hypervolume.endswith(f"(reference {worst[0]:g} N, {worst[1]:g} s)") and not outcome.warnings
    assert frame["hypervolume"][-1] == pytest.approx(union_area(good.select(PEAK, HALF).to_numpy(), worst))
    one = study(tmp_path, objectives='minimize = "Metrics/peak"', sampler="nsga2", trials=8, extra="population = 4\n")
    single = run_optimize(load_scenario(one), out=tmp_path / "one.parquet", workers=1)
    rows = pl.read_parquet(single.path)
    assert single.best["objective"] == rows.filter(pl.col("feasible"))["objective"].min()
    assert single.best["objective"] == pytest.approx(0.1 * single.best["Params/k:value"], rel=1e-3)
    assert "hypervolume" not in rows.columns


@pytest.mark.parametrize(
    ("extra", "sampler", "words"),
    [
        ("population = 1\n", "nsga2", "optimize.population: must be a whole number >= 2, got 1"),
        ("population = 2.5\n", "nsga2", "optimize.population: must be a whole number >= 2, got 2.5"),
        ('population = "8"\n', "nsga3", "optimize.population: must be a whole number >= 2, got '8'"),
        ("population = 200000\n", "nsga2", "a population of 200,000 trials cannot finish"),
        ("population = 8\n", "tpe", '\'population\' goes with sampler = "nsga2" or "nsga3"'),
        ("reference = [90.0]\n", "nsga2", "optimize.reference: must be a list of 2 numbers, one per objective"),
        ("reference = 90.0\n", "nsga2", "optimize.reference: must be a list of 2 numbers"),
        ('reference = [90.0, "x"]\n', "nsga2", "optimize.reference[1]: must be a number"),
    ],
)
def test_bad_population_and_reference_are_one_line_at_file_line(tmp_path, extra, sampler, words):
    line = refusal(tmp_path, TWO, extra=extra, sampler=sampler)
    assert "rig.toml:" in line and words in line, line


def test_a_reference_with_one_objective_and_through_the_command_line(tmp_path, capsys):
    line = refusal(tmp_path, 'minimize = "Metrics/peak"', extra="reference = [90.0]\n", sampler="nsga2")
    assert "optimize.reference: 'reference' goes with two or more objectives" in line
    study(tmp_path, objectives=TWO, sampler="nsga2", extra="population = 1\n")
    assert main(["check", str(tmp_path / "rig.toml")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "rig.toml:" in err and "optimize.population" in err and "Traceback" not in err


def test_a_reference_some_trials_are_worse_than_is_one_warning_and_they_are_left_out(tmp_path, capsys):
    """The study runs (which trials pass the reference is not known before); at the end one line
    on stderr names the first trial and objective past it; exit 0 and the pareto line last; the
    column counts only the trials within it."""
    reference = (50.0, 0.2)
    path = study(
        tmp_path, objectives=TWO, sampler="random", trials=10, extra=f"reference = [{reference[0]}, {reference[1]}]\n"
    )
    assert main(["optimize", str(path), "--out", str(tmp_path / "s.parquet"), "--workers", "1"]) == 0
    out, err = capsys.readouterr()
    assert out.strip().splitlines()[-1].startswith("pareto: ")
    warnings = [line for line in err.splitlines() if line.startswith("mjrig: warning:")]
    frame = pl.read_parquet(tmp_path / "s.parquet").sort("trial")
    values, ok = frame.select(PEAK, HALF).fill_null(np.nan).to_numpy(), frame["feasible"].to_numpy()
    past = [i for i in range(frame.height) if ok[i] and (values[i] > reference).any()]
    assert past and 0 < len(past) < ok.sum(), "some trials within the reference, some past it"
    first = past[0]
    objective = "peak" if values[first, 0] > reference[0] else "half_period"
    (warning,) = warnings
    assert (
        f"optimize.reference[{0 if objective == 'peak' else 1}]: trial {frame['trial'][first]}'s Metrics/{objective}"
        in warning
    )
    assert f"and {len(past) - 1} other trial" in warning if len(past) > 1 else "other" not in warning
    assert "Traceback" not in err
    within = union_area(values[ok], reference)
    assert within > 0 and frame["hypervolume"][-1] == pytest.approx(within, rel=1e-12)
    # another reference is the same study (it changes what the file says, not the search): no
    # trial runs again, the column is worked out anew, and a reference every trial beats warns of none
    path.write_text(path.read_text().replace("reference = [50.0, 0.2]", "reference = [100.0, 0.5]"))
    again = run_optimize(load_scenario(path), out=tmp_path / "s.parquet", workers=1)
    assert again.ran == 0 and again.warnings == ()
    wider = pl.read_parquet(tmp_path / "s.parquet").sort("trial")["hypervolume"][-1]
    assert wider == pytest.approx(union_area(values[ok], (100.0, 0.5)), rel=1e-12) and wider > within
