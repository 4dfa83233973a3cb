"""Sweeps (``mjrig.campaign.sweep``): grids, Monte Carlo draws, reproducible seeds, resume after SIGKILL,
the same numbers locally and on a real local Ray head."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

from mjrig.campaign.sweep import parts_dir, run_sweep
from mjrig.campaign.trial import SweepJob, TrialRunner
from mjrig.scenario.parse import load_scenario
from mjrig.scenario.studies.distributions import truncated_normal
from tests.sweep_util import write_scenario

MC = """[sweep]
seed = 11
trials = 3
[sweep.params]
k = { values = [150.0, 600.0] }
mass = { distribution = "normal", mean = 1.0, std = 0.05 }
"""


def period(path) -> float:
    """Mean time between successive zero crossings of the block's velocity, doubled (s)."""
    df = pl.read_parquet(path)
    t, v = df["time"].to_numpy(), df["Joints/slide_x:qvel"].to_numpy()
    i = np.nonzero(np.sign(v[:-1]) * np.sign(v[1:]) < 0)[0]
    cross = t[i] - v[i] * (t[i + 1] - t[i]) / (v[i + 1] - v[i])
    return 2.0 * float(np.mean(np.diff(cross)))


def test_grid_sweep_period_matches_closed_form(tmp_path):
    sc = load_scenario(
        write_scenario(
            tmp_path,
            "[sweep]\n[sweep.params]\nk = { range = [100.0, 900.0], steps = 3 }\nmass = { values = [0.5, 2.0] }\n",
            record=True,
        )
    )
    out = run_sweep(sc, out=tmp_path / "res.parquet", workers=2)
    df = pl.read_parquet(out.path)
    assert df["trial"].to_list() == list(range(6)) and out.total == 6 and len(out.ran) == 6
    assert df["Params/k:value"].to_list() == [100.0, 100.0, 500.0, 500.0, 900.0, 900.0]  # last grid fastest
    assert df["Params/mass:value"].to_list() == [0.5, 2.0] * 3
    for row in df.iter_rows(named=True):
        expected = 2 * math.pi * math.sqrt(row["Params/mass:value"] / row["Params/k:value"])
        measured = period(tmp_path / "res" / f"trial-{row['trial']}.parquet")
        assert measured == pytest.approx(expected, rel=0.01), row
    assert not parts_dir(out.path).exists()
    meta = pq.read_schema(out.path).metadata
    assert b"[sweep" in meta[b"mjrig.sweep"] and b"mjrig.model_sha256" in meta


def test_monte_carlo_mass_mean_and_std(tmp_path):
    sweep = (
        '[sweep]\ntrials = 400\nseed = 3\n[sweep.params]\nmass = { distribution = "normal", mean = 1.0, std = 0.05 }\n'
    )
    sc = load_scenario(write_scenario(tmp_path, sweep))
    out = run_sweep(sc, out=tmp_path / "mc.parquet", workers=1, duration=0.002)
    m = pl.read_parquet(out.path)["Params/mass:value"].to_numpy()
    n = len(m)
    assert n == 400
    assert abs(m.mean() - 1.0) < 4 * 0.05 / math.sqrt(n)
    assert abs(m.std(ddof=1) - 0.05) < 4 * 0.05 / math.sqrt(2 * (n - 1))


def test_distributions_stay_in_their_bounds():
    xs = [truncated_normal(u, mean=1.0, std=0.5, low=0.9, high=1.2) for u in np.linspace(0, 0.999999, 1001)]
    assert min(xs) >= 0.9 and max(xs) <= 1.2 and xs == sorted(xs)
    far = [truncated_normal(u, mean=0.0, std=1.0, low=8.0, high=9.0) for u in (0.0, 0.5, 0.99)]
    assert all(8.0 <= x <= 9.0 for x in far) and far[0] < far[1] < far[2]


def test_same_seed_same_results_whatever_the_workers_or_order(tmp_path):
    path = write_scenario(tmp_path, MC)
    a = pl.read_parquet(run_sweep(load_scenario(path), out=tmp_path / "a.parquet", workers=1).path)
    b = pl.read_parquet(run_sweep(load_scenario(path), out=tmp_path / "b.parquet", workers=2).path)
    assert a.equals(b)
    assert len(set(a["seed"].to_list())) == 6
    sc = load_scenario(path)
    runner = TrialRunner(SweepJob(text=sc.text, source=str(path), base=str(tmp_path)))
    backwards = [runner.run(i) for i in reversed(range(6))][::-1]  # one rig, the other order
    assert pl.DataFrame(backwards).select(a.columns).equals(a)
    c = pl.read_parquet(run_sweep(load_scenario(path), out=tmp_path / "c.parquet", workers=1, seed=12).path)
    assert not c["Params/mass:value"].equals(a["Params/mass:value"])


def recording_runner(path: Path, folder: Path, *, duration: float) -> TrialRunner:
    """A fresh worker's trial runner of the sweep scenario at ``path`` (trials of ``duration`` s),
    recording each trial it runs into ``folder`` as trial-N.parquet."""
    sc = load_scenario(path)
    job = SweepJob(text=sc.text, source=str(path), base=str(path.parent), record_dir=str(folder), duration=duration)
    return TrialRunner(job)


def test_a_trials_recording_does_not_depend_on_what_its_worker_ran_before(tmp_path):
    """Trial 1 (gravity -5 m/s²) recorded by a fresh runner and by one that ran trial 0 (gravity
    -20 m/s²) first: every row the same, the first one's accelerometer included, which reads the
    trial's own gravity at rest (5 m/s² up; the previous trial's 20 was read before)."""
    path = write_scenario(
        tmp_path,
        '[params.g]\nvalue = -9.81\nmin = -30.0\nmax = 0.0\nunit = "m/s²"\n'
        'model = "opt.gravity_z"\n'
        '[recording]\npath = "unused.parquet"\nsignals = ["joints", "sensors", "params"]\n'
        "[sweep]\n[sweep.params]\ng = { values = [-20.0, -5.0] }\n",
    )
    fresh = recording_runner(path, tmp_path / "fresh", duration=0.05)
    fresh.run(1)
    used = recording_runner(path, tmp_path / "used", duration=0.05)
    used.run(0)
    used.run(1)
    a = pl.read_parquet(tmp_path / "fresh" / "trial-1.parquet").drop("wall_time")
    b = pl.read_parquet(tmp_path / "used" / "trial-1.parquet").drop("wall_time")
    assert b["Sensors/block_acc:2"][0] == pytest.approx(5.0, rel=1e-12), b.select("time", "Sensors/block_acc:2").head(2)
    assert a.equals(b), [(c, a[c][0], b[c][0]) for c in a.columns if a[c][0] != b[c][0]][:5]


def test_a_trials_first_row_reads_its_own_spring_whatever_ran_before(tmp_path):
    """The spring-mass starts 0.1 m stretched, so its accelerometer reads -k 0.1 / m at t = 0 (each
    trial its own k: 180, 100, 50 N/m). Row 0 of every trial holds that, whether the trial ran
    first in its worker, after others, or as a fresh ``mjrig run``; before, a worker's row 0 held
    the stiffness the spring's tendon kept from the trial before (a fresh run read 0.0)."""
    path = write_scenario(
        tmp_path,
        '[recording]\npath = "unused.parquet"\nsignals = ["joints", "sensors", "params"]\n'
        "[sweep]\n[sweep.params]\nk = { values = [180.0, 100.0, 50.0] }\n",
    )
    for folder, order in (("fresh", [1]), ("after", [0, 2, 1]), ("each", [2, 0, 1])):
        runner = recording_runner(path, tmp_path / folder, duration=0.005)
        for trial in order:
            runner.run(trial)
    for folder, trials in (("fresh", [1]), ("after", [0, 1, 2]), ("each", [0, 1, 2])):
        for trial in trials:
            df = pl.read_parquet(tmp_path / folder / f"trial-{trial}.parquet")
            k = df["Params/k:value"][0]
            acc = df["Sensors/block_acc:0"].to_numpy()
            assert acc[0] == pytest.approx(-k * 0.1, rel=1e-9), (folder, trial, acc[:3])
            assert acc[1] == acc[0]  # the step from t = 0 was taken with this acceleration
    fresh = pl.read_parquet(tmp_path / "fresh" / "trial-1.parquet").drop("wall_time")
    after = pl.read_parquet(tmp_path / "after" / "trial-1.parquet").drop("wall_time")
    assert fresh.equals(after)


def test_a_trial_after_one_that_diverged_sees_its_own_divergence(tmp_path):
    """A rig with an [initial] restores its start state between trials: MuJoCo's warning counters,
    by which a divergence in the first steps is told, start over too (else the second trial of
    an unstable stiffness ran on from MuJoCo's reset as if nothing happened)."""
    import json
    import sys
    from pathlib import Path as _P

    sys.path.insert(0, str(_P(__file__).resolve().parent))
    from test_measured import scenario

    from mjrig.campaign.trial import SweepJob, TrialRunner

    path = scenario(tmp_path, "", k=400.0)
    path.write_text(path.read_text().replace("max = 5000.0", "max = 1e10"))
    runner = TrialRunner(
        SweepJob(text=path.read_text(), source=str(path), base=str(tmp_path), duration=0.05, metadata=json.dumps({}))
    )
    rows = [runner.run((i, {"k": k}, 0))["status"] for i, k in enumerate((5e9, 5e9, 400.0, 5e9))]
    assert rows == ["diverged", "diverged", "pass", "diverged"]
