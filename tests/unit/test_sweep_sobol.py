"""Sobol indices of a sweep (``sensitivity = "sobol"``, CONTRACT 5): the Saltelli design's trials,
the indices of closed-form functions through the code the sweep runs (``mjrig.campaign.sobol``:
from a results table), equal to ``scipy.stats.sobol_indices`` on the same points, and the same
after a resume."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy.stats import bootstrap, qmc, sobol_indices, uniform

from mjrig.campaign.sobol import SENSITIVITY_KEY, SobolReading, sensitivity, value_indices
from mjrig.campaign.sweep import run_sweep
from mjrig.runtime.errors import ConfigError
from mjrig.scenario.parse import load_scenario
from mjrig.scenario.studies.distributions import Distribution
from mjrig.scenario.studies.sweep import SweepSpec, sample_seed
from tests.sweep_util import write_scenario

pytestmark = pytest.mark.unit

UNIT = Distribution("uniform", {"low": 0.0, "high": 1.0})
FUNCTIONS = {
    "additive": (lambda x: x[0] + 2.0 * x[1], (1 / 5, 4 / 5), (1 / 5, 4 / 5)),
    "product": (lambda x: x[0] * x[1], (3 / 7, 3 / 7), (4 / 7, 4 / 7)),
}
"""f(x1, x2) on U[0, 1]^2 and its closed-form first-order and total indices: x1 + 2 x2 has
variances 1/12 and 4/12 and no interaction; x1 x2 has Var = 7/144 of which each E[Y|x_i] = x_i/2
explains 3/144."""


def design(base: int, *, seed: int = 11, d: int = 2) -> SweepSpec:
    return SweepSpec(
        trials=base,
        seed=seed,
        distributions=[(f"x{k + 1}", UNIT) for k in range(d)],
        trials_given=True,
        sensitivity="sobol",
    )


def results(spec: SweepSpec) -> pa.Table:
    """A results table of ``spec``'s trials as a sweep writes it: params, then each function's value."""
    x = np.array([[spec.trial(i)[0][name] for name, _ in spec.distributions] for i in range(spec.total)]).T
    cols = {"trial": list(range(spec.total))}
    cols |= {f"Params/{name}:value": x[k] for k, (name, _) in enumerate(spec.distributions)}
    cols |= {f"Metrics/{name}:value": f(x) for name, (f, _, _) in FUNCTIONS.items()}
    return pa.table(cols)


def test_the_design_is_a_b_and_one_ab_block_per_param_from_scipys_sobol_points():
    spec = design(16, d=3)
    assert spec.total == 16 * (3 + 2)
    rows = np.array([[spec.trial(i)[0][f"x{k}"] for k in (1, 2, 3)] for i in range(spec.total)])
    u = qmc.Sobol(d=6, seed=sample_seed(11, 0), bits=64).random(16)
    a, b = rows[:16], rows[16:32]
    assert np.array_equal(a, u[:, :3]) and np.array_equal(b, u[:, 3:])
    for k in range(3):
        ab = rows[32 + 16 * k : 48 + 16 * k]
        others = [j for j in range(3) if j != k]
        assert np.array_equal(ab[:, k], b[:, k]) and np.array_equal(ab[:, others], a[:, others])
    # a trial's values and seed depend on (seed, trial) only: asked alone, in any order, again
    again = design(16, d=3)
    assert [again.trial(i) for i in (70, 3, 41)] == [spec.trial(i) for i in (70, 3, 41)]
    assert design(16, d=3, seed=12).trial(3)[0] != spec.trial(3)[0]


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_indices_of_closed_form_functions_are_scipys_on_the_same_points(name):
    """At 1,024 base points: within 0.05 of the closed form, and scipy's own numbers (it draws
    the same points for the same generator) to 1e-12; intervals hold the estimate."""
    f, first, total = FUNCTIONS[name]
    spec = design(1024)
    doc = sensitivity(results(spec), spec=spec)
    assert doc["base_points"] == 1024 and doc["trials"] == 4096 and doc["params"] == ["x1", "x2"]
    got = SobolReading.parse(json.dumps(doc)).values[f"Metrics/{name}:value"]
    np.testing.assert_allclose(got.first, first, atol=0.05)
    np.testing.assert_allclose(got.total, total, atol=0.05)
    ref = sobol_indices(func=f, n=1024, dists=[uniform(), uniform()], rng=sample_seed(11, 0))
    np.testing.assert_allclose(got.first, ref.first_order, rtol=1e-12)
    np.testing.assert_allclose(got.total, ref.total_order, rtol=1e-12)
    assert np.all(got.first_low <= got.first) and np.all(got.first <= got.first_high)
    assert np.all(got.total_low <= got.total) and np.all(got.total <= got.total_high)
    assert np.all(got.total_high - got.total_low < 0.2)


def test_the_intervals_are_scipys_bootstrap_of_its_own_estimator_on_the_same_generator():
    """``SobolResult.bootstrap`` resamples the base points on NumPy's global generator; given
    one generator, our intervals are that bootstrap's to the last bit."""
    f = FUNCTIONS["product"][0]
    spec = design(64)
    y = np.asarray(results(spec).column("Metrics/product:value"))
    ours = value_indices(y, base=64, params=["x1", "x2"], rng=np.random.default_rng(5), resamples=199)
    ref = sobol_indices(func=f, n=64, dists=[uniform(), uniform()], rng=sample_seed(11, 0))

    def statistic(idx):  # SobolResult.bootstrap's own statistic
        return ref._indices_method(ref._f_A[:, idx], ref._f_B[:, idx], ref._f_AB[..., idx])

    boot = bootstrap([np.arange(64)], statistic, method="BCa", n_resamples=199, rng=np.random.default_rng(5))
    np.testing.assert_allclose(ours.first_low, boot.confidence_interval.low[0], rtol=1e-12)
    np.testing.assert_allclose(ours.total_high, boot.confidence_interval.high[1], rtol=1e-12)


def test_a_value_with_holes_or_no_variance_gets_a_reason_not_indices():
    spec = design(8)
    table = results(spec)
    holed = np.asarray(table.column("Metrics/additive:value")).copy()
    holed[[3, 20]] = np.nan
    table = table.append_column("Metrics/holed:value", pa.array(holed)).append_column(
        "Requirements/flat:value", pa.array(np.full(spec.total, 2.0))
    )
    values = SobolReading.parse(json.dumps(sensitivity(table, spec=spec))).values
    assert values["Metrics/additive:value"].computed
    assert "2 of 32 trials have no value" in values["Metrics/holed:value"].reason
    assert "does not vary" in values["Requirements/flat:value"].reason
    assert not values["Requirements/flat:value"].computed


def test_bars_place_each_params_pair_and_its_whiskers():
    spec = design(8)
    value = SobolReading.parse(json.dumps(sensitivity(results(spec), spec=spec))).values["Metrics/additive:value"]
    x, height, below, above = value.bars("total_order", width=0.4)
    np.testing.assert_allclose(x, [0.2, 1.2])
    np.testing.assert_array_equal(height, value.total)
    np.testing.assert_allclose(height - below, np.minimum(value.total_low, value.total))
    lo, hi = value.limits()
    assert lo <= -0.05 and hi >= 1.05


SWEEP = """[sweep]
{fields}
[sweep.params]
k = {{ distribution = "uniform", low = 100.0, high = 900.0 }}
mass = {{ distribution = "normal", mean = 1.0, std = 0.05 }}
{extra}
"""


@pytest.mark.parametrize(
    ("fields", "extra", "where", "words"),
    [
        ('trials = 64\nsensitivity = "sobel"', "", "sweep.sensitivity", "unknown sensitivity 'sobel' (closest: sobol)"),
        (
            'trials = 100\nsensitivity = "sobol"',
            "",
            "sweep.trials",
            "a power of two >= 4, got 100 (closest: 64 or 128)",
        ),
        ('trials = 64\nsensitivity = "sobol"\nsampler = "lhs"', "", "sweep.sampler", "leave the sampler out"),
        ('trials = 64\nsensitivity = "sobol"', "c = { values = [0.0, 1.0] }", "sweep.params.c", "a grid"),
        ('trials = 64\nsensitivity = "sobol"', "c = { choices = [0.0, 1.0] }", "sweep.params.c", "a catalogue"),
    ],
)
def test_a_bad_sobol_sweep_is_one_line_at_its_field(tmp_path, fields, extra, where, words):
    with pytest.raises(ConfigError) as err:
        load_scenario(write_scenario(tmp_path, SWEEP.format(fields=fields, extra=extra)))
    text = str(err.value)
    assert f": {where}: " in text and words in text and "\n" not in text, text


def test_without_trials_the_design_has_64_base_points_and_trials_on_the_command_line_set_them(tmp_path):
    spec = load_scenario(write_scenario(tmp_path, SWEEP.format(fields='sensitivity = "sobol"', extra=""))).sweep
    assert (spec.trials, spec.total) == (64, 64 * 4)
    assert spec.with_overrides(trials=16).total == 16 * 4


def test_a_resumed_sobol_sweep_gives_the_same_indices(tmp_path):
    """32 trials of 50 ms (8 base points, k and mass): stopped after 10 rows, then run again."""
    metric = '[[metrics]]\nname = "low"\nsignal = "Joints/slide_x:qpos"\nkind = "min"\n\n'
    path = write_scenario(
        tmp_path, metric + SWEEP.format(fields='trials = 8\nseed = 3\nsensitivity = "sobol"', extra="")
    )
    whole = run_sweep(load_scenario(path), out=tmp_path / "whole.parquet", workers=1, duration=0.05)
    assert whole.total == 32
    seen: list[int] = []

    def stop(row):
        seen.append(row["trial"])
        if len(seen) == 10:
            raise KeyboardInterrupt

    out = tmp_path / "resumed.parquet"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(load_scenario(path), out=out, workers=1, duration=0.05, progress=stop)
    resumed = run_sweep(load_scenario(path), out=out, workers=1, duration=0.05)
    assert resumed.resumed >= 10
    first, second = (pq.read_schema(p).metadata[SENSITIVITY_KEY.encode()] for p in (whole.path, out))
    assert first == second
    doc = json.loads(first)
    assert doc["values"]["Metrics/low:value"]["first_order"]["k"]["index"] is not None
    with pytest.raises(ConfigError, match=r"^--trials: .* power of two >= 4, got 12 \(closest: 8 or 16\)$"):
        run_sweep(load_scenario(path), out=tmp_path / "x.parquet", trials=12)
