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
from mjrig.scenario.studies.sweep import sample_seed
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


CATALOGUE = """[sweep]
seed = 5
trials = {trials}
sampler = "{sampler}"
[sweep.params]
k = {{ choices = [120, 180.0, 250.0] }}
c = {{ distribution = "uniform", low = 2, high = 8, step = 1 }}
"""


@pytest.mark.parametrize("sampler", ["random", "lhs", "sobol"])
def test_catalogue_and_stepped_params_take_only_their_values(tmp_path, sampler):
    """``choices`` and a ``step``-ped uniform (CONTRACT 5): every trial's value is one of the
    catalogue's or on the grid 2, 3 ... 8 (whole numbers stay whole), each about equally often;
    Latin hypercube strata of 210 trials give each value exactly its share (Sobol: within 2)."""
    sp = load_scenario(write_scenario(tmp_path, CATALOGUE.format(sampler=sampler, trials=210))).sweep
    rows = [sp.trial(i)[0] for i in range(sp.total)]
    ks, cs = [r["k"] for r in rows], [r["c"] for r in rows]
    assert set(ks) == {120, 180.0, 250.0} and set(cs) == set(range(2, 9))
    assert all(type(c) is int for c in cs) and all(type(k) is int for k in ks if k == 120)
    counts = [ks.count(v) for v in (120, 180.0, 250.0)] + [cs.count(v) for v in range(2, 9)]
    if sampler == "random":
        assert min(counts[:3]) > 50 and min(counts[3:]) > 15  # 70 and 30 expected
    elif sampler == "lhs":
        assert counts == [70] * 3 + [30] * 7  # one trial a stratum: each value its share exactly
    else:  # Sobol points balance exactly at powers of two only
        assert all(abs(n - want) <= 2 for n, want in zip(counts, [70] * 3 + [30] * 7)), counts


def test_whole_values_stay_whole_in_the_results(tmp_path):
    """The stepped c (2, 3 ... 8) is an Int64 column of the results, k (a catalogue with 180.0 in
    it) a Float64 one; the values are the ones drawn. Eight 1 s trials on two workers (about 3 s)."""
    path = write_scenario(tmp_path, CATALOGUE.format(sampler="lhs", trials=8))
    sp = load_scenario(path).sweep
    frame = pl.read_parquet(run_sweep(load_scenario(path), out=tmp_path / "res.parquet", workers=2).path)
    assert frame.schema["Params/c:value"] == pl.Int64 and frame.schema["Params/k:value"] == pl.Float64
    assert frame.sort("trial")["Params/c:value"].to_list() == [sp.trial(i)[0]["c"] for i in range(8)]


@pytest.mark.parametrize(
    ("entry", "where", "words"),
    [
        ("{ choices = [] }", "sweep.params.k.choices", "must be a non-empty list of numbers"),
        ("{ choices = [100.0, 9000.0] }", "sweep.params.k", "choice 9000 is outside the param's range"),
        ('{ distribution = "uniform", low = 1, high = 3, step = 0 }', "sweep.params.k.step", "must be"),
        ('{ distribution = "normal", mean = 1, std = 1, step = 1 }', "sweep.params.k.step", "unknown field 'step'"),
        ("{ choices = [1.0], values = [2.0] }", "sweep.params.k", "give exactly one of"),
    ],
)
def test_a_bad_catalogue_or_step_is_one_line_at_its_field(tmp_path, entry, where, words):
    from mjrig.runtime.errors import ConfigError

    sweep = f"[sweep]\n[sweep.params]\nk = {entry}\n"
    with pytest.raises(ConfigError) as err:
        load_scenario(write_scenario(tmp_path, sweep))
    assert f": {where}: " in str(err.value) and words in str(err.value) and "\n" not in str(err.value), err.value


def test_a_catalogue_sweep_runs_and_records_the_values_it_took(tmp_path):
    """Twelve trials of the catalogue sweep run (2 ms each): RESULTS.parquet's params are the
    values the trials took, on the catalogue and the grid."""
    path = write_scenario(tmp_path, CATALOGUE.format(sampler="lhs", trials=12))
    frame = pl.read_parquet(
        run_sweep(load_scenario(path), out=tmp_path / "cat.parquet", workers=1, duration=0.002).path
    )
    assert frame.height == 12 and set(frame["status"]) <= {"pass"}
    assert set(frame["Params/k:value"]) <= {120.0, 180.0, 250.0} and set(frame["Params/c:value"]) <= set(range(2, 9))
    sp = load_scenario(path).sweep
    assert frame["Params/c:value"].to_list() == [float(sp.trial(i)[0]["c"]) for i in range(12)]
