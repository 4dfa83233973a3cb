"""Stratified samplers of a sweep (``sampler = "lhs" | "sobol"``, CONTRACT 5): Latin hypercube
strata, Sobol points as ``scipy.stats.qmc`` gives them for the seed, per grid point, and the
same values whatever runs the trials."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import polars as pl
import pytest
from scipy.stats import qmc

from mjrig.campaign.sweep import run_sweep
from mjrig.scenario.parse import load_scenario
from mjrig.scenario.sweep import sample_seed
from tests.sweep_util import write_scenario

SWEEP = """[sweep]
seed = 21
trials = {trials}
sampler = "{sampler}"
[sweep.params]
k = {{ values = [150.0, 600.0] }}
mass = {{ distribution = "normal", mean = 1.0, std = 0.05 }}
c = {{ distribution = "uniform", low = 0.5, high = 4.5 }}
"""


def spec(tmp_path, sampler: str, trials: int):
    return load_scenario(write_scenario(tmp_path, SWEEP.format(sampler=sampler, trials=trials))).sweep


def test_lhs_puts_one_trial_of_each_grid_point_in_each_stratum_of_each_param(tmp_path):
    sp = spec(tmp_path, "lhs", 20)
    rows = [sp.trial(i)[0] for i in range(sp.total)]
    for point in range(2):
        mine = rows[20 * point : 20 * point + 20]
        assert {r["k"] for r in mine} == {(150.0, 600.0)[point]}
        u_mass = [NormalDist(1.0, 0.05).cdf(r["mass"]) for r in mine]
        u_c = [(r["c"] - 0.5) / 4.0 for r in mine]
        for u in (u_mass, u_c):
            assert sorted(int(x * 20) for x in u) == list(range(20))  # one per stratum
    assert rows[0]["mass"] != rows[20]["mass"]  # each grid point has its own hypercube
    random = spec(tmp_path, "random", 20)
    strata = sorted(int((random.trial(i)[0]["c"] - 0.5) / 4.0 * 20) for i in range(20))
    assert strata != list(range(20))  # plain random draws leave strata empty (this seed)


def test_sobol_values_are_scipys_scrambled_sobol_points_for_the_seed(tmp_path):
    sp = spec(tmp_path, "sobol", 16)
    for point in range(2):
        u = qmc.Sobol(d=2, seed=sample_seed(21, point)).random(16)
        got = np.array([[sp.trial(16 * point + r)[0]["mass"], sp.trial(16 * point + r)[0]["c"]] for r in range(16)])
        assert np.array_equal(got[:, 1], 0.5 + 4.0 * u[:, 1])
        assert np.allclose(got[:, 0], [NormalDist(1.0, 0.05).inv_cdf(x) for x in u[:, 0]], rtol=0, atol=1e-15)
    # balanced: every 1/16 of the c range holds one of the 16 points
    assert sorted(int((sp.trial(r)[0]["c"] - 0.5) / 4.0 * 16) for r in range(16)) == list(range(16))


@pytest.mark.parametrize("sampler", ["lhs", "sobol"])
def test_stratified_sweeps_are_the_same_whatever_runs_them(tmp_path, sampler):
    path = write_scenario(tmp_path, SWEEP.format(sampler=sampler, trials=4))
    one = pl.read_parquet(run_sweep(load_scenario(path), out=tmp_path / "one.parquet", workers=1).path)
    pool = pl.read_parquet(
        run_sweep(load_scenario(path), out=tmp_path / "pool.parquet", workers=2, lockstep=False).path
    )
    assert one.equals(pool)
    assert one["Params/c:value"].n_unique() == 8


def test_sensitivity_says_which_knob_matters(tmp_path):
    """The spring-mass's frequency, sqrt(k/m)/2π, rises with k (rank correlation near 1), falls a
    little with the mass (std 5 %) and barely feels a light damper."""
    from mjrig.campaign.results import SweepResults

    metric = '[[metrics]]\nname = "f"\nsignal = "Joints/slide_x:qpos"\nkind = "frequency"\n\n'
    sweep = (
        '[sweep]\nseed = 4\ntrials = 16\nsampler = "lhs"\n[sweep.params]\n'
        'k = { distribution = "uniform", low = 100.0, high = 900.0 }\n'
        'mass = { distribution = "normal", mean = 1.0, std = 0.05 }\n'
        'c = { distribution = "uniform", low = 0.0, high = 0.3 }\n'
    )
    path = write_scenario(tmp_path, metric + sweep)
    out = run_sweep(load_scenario(path), out=tmp_path / "res.parquet", workers=1).path
    sens = SweepResults.open(out).sensitivity()
    f = sens["Metrics/f:value"]
    assert f["Params/k:value"] > 0.95 and abs(f["Params/c:value"]) < 0.6
    assert f["Params/k:value"] > abs(f["Params/mass:value"])
    assert set(sens) == {"Requirements/travel:value", "Metrics/f:value"}
