"""``mjrig fit`` estimating what the bench set but did not measure exactly -- the initial
deflection (``initial.<joint>``) and the clock offset (``offset.<entry>``) -- beside k and c, on
the damped spring-mass whose decay is known in closed form; one RMS for the fit and the
``rms_error`` metric; bad fit variables as one line at their field. Fits run in this process
(``workers=1``): 2-4 s each."""

from __future__ import annotations

import shutil

import pytest

from mjrig.campaign.fit import run_fit
from mjrig.headless import prepare, run
from mjrig.runtime.errors import ConfigError
from mjrig.scenario.parse import load_scenario
from tests.unit.test_measured import CSV_ENTRY, METRICS, X0, C, K, csv_bench, scenario

RATE = 250.0
"""The bench's sample rate (Hz)."""


def test_the_initial_deflection_and_the_clock_offset_are_estimated(tmp_path):
    """The bench released the mass at 20 mm and its clock runs 0.1 s late; the scenario says
    15 mm and -0.08 s. The fit finds the deflection within 2 % and the offset within one sample,
    and FIT-best.toml starts there and reads the bench on that clock. A held-out bench on a
    known clock is run from the estimated deflection: its error falls to the noise."""
    csv_bench(tmp_path, noise=0.05, seed=5, rate=RATE, offset=0.1)
    shutil.copy(tmp_path / "bench.csv", tmp_path / "check.csv")  # held out, its clock known
    csv_bench(tmp_path, noise=0.05, seed=4, rate=RATE, offset=0.1)
    check = CSV_ENTRY.replace('name = "bench"', 'name = "check"\nrole = "validation"').replace("bench.csv", "check.csv")
    entry = CSV_ENTRY.replace("offset = -0.1", "offset = -0.08") + "\n" + check
    fit = """[fit.params]
k = { low = 50.0, high = 2000.0 }
c = { low = 0.01, high = 50.0, log = true }
"initial.slide" = { low = 0.005, high = 0.04 }
"offset.bench" = { low = -0.15, high = -0.05 }
"""
    path = scenario(tmp_path, entry, k=K / 2, c=C * 2, extra=fit)
    path.write_text(path.read_text().replace(f"slide = {X0}", "slide = 0.015"))
    got = run_fit(load_scenario(path), out=tmp_path / "FIT.parquet", workers=1)
    s = got.summary
    assert got.identified, (s["message"], s.get("reasons"))
    assert s["start"]["initial.slide"] == 0.015 and s["start"]["offset.bench"] == -0.08
    assert s["estimate"]["initial.slide"] == pytest.approx(X0, rel=0.02)
    assert abs(s["estimate"]["offset.bench"] - -0.1) < 1 / RATE
    assert s["estimate"]["k"] == pytest.approx(K, rel=0.02)
    assert s["units"]["initial.slide"] == "m" and s["units"]["offset.bench"] == "s"
    lo, hi = s["ci95"]["offset.bench"]
    assert lo < s["estimate"]["offset.bench"] < hi
    after = s["validation"]["rms"]["check"]["Joints/slide:qpos"]  # started at the estimated deflection
    assert (
        after == pytest.approx(0.05e-3, rel=0.15)
        and s["validation"]["rms_before"]["check"]["Joints/slide:qpos"] > 20 * after
    )
    best = load_scenario(got.best_path)
    assert best.initial.qpos["slide"] == (s["estimate"]["initial.slide"],)
    assert best.measured[0].offset == s["estimate"]["offset.bench"]


def test_the_fits_rms_is_the_rms_error_metric_of_the_estimate(tmp_path):
    """A held-out bench ("check", role = "validation"): the fit's validation RMS at the estimate
    equals the ``rms_error`` metric of ``mjrig run`` on FIT-best.toml against it, and the fit's
    own RMS equals the metric against the fitted bench (one function, the same samples)."""
    csv_bench(tmp_path, noise=0.05, seed=3)
    shutil.copy(tmp_path / "bench.csv", tmp_path / "check.csv")
    csv_bench(tmp_path, noise=0.05, seed=1)
    check = CSV_ENTRY.replace('name = "bench"', 'name = "check"\nrole = "validation"').replace("bench.csv", "check.csv")
    metrics = METRICS + METRICS.replace('"rms"', '"rms_check"').replace('"worst"', '"worst_check"').replace(
        'against = "bench"', 'against = "check"'
    )
    fit = "[fit]\nparams = { k = { low = 50.0, high = 2000.0 }, c = { low = 0.01, high = 50.0, log = true } }\n"
    path = scenario(tmp_path, CSV_ENTRY + "\n" + check, k=K / 2.5, c=C * 2.5, extra=metrics + fit)
    s = run_fit(load_scenario(path), out=tmp_path / "FIT.parquet", workers=1).summary
    setup = prepare(load_scenario(tmp_path / "FIT-best.toml"), record=False)
    run(setup)
    values = setup.runtime.checks.metrics.values()
    assert s["validation"]["rms"]["check"]["Joints/slide:qpos"] == pytest.approx(values["rms_check"], rel=1e-9)
    assert s["rms"]["bench"]["Joints/slide:qpos"] == pytest.approx(values["rms"], rel=1e-9)


BAD = {
    '"offset.bnch"': "fit.params.offset.bnch: no [[measured]] entry 'bnch' (closest: bench",
    '"offset.check"': "fit.params.offset.check: 'check' is a validation entry",
    '"initial.slid"': "fit.params.initial.slid: the model has no joint 'slid' (closest: slide)",
    '"initial.slide"': "fit.params.initial.slide: its value before the fit, 0.02, is outside [0.03, 0.04]",
}
"""A fit variable -> the start of the one line it is refused with."""


def test_a_bad_fit_variable_is_one_line_at_its_field(tmp_path):
    """An unknown entry's offset, a validation entry's, an unknown joint, a start outside the
    bounds: each one line at its field."""
    csv_bench(tmp_path)
    shutil.copy(tmp_path / "bench.csv", tmp_path / "check.csv")
    check = CSV_ENTRY.replace('name = "bench"', 'name = "check"\nrole = "validation"').replace("bench.csv", "check.csv")
    for param, words in BAD.items():
        bounds = "{ low = 0.03, high = 0.04 }" if param.startswith('"initial') else "{ low = -0.2, high = 0.0 }"
        path = scenario(tmp_path, CSV_ENTRY + "\n" + check, extra=f"[fit]\nparams = {{ {param} = {bounds} }}\n")
        with pytest.raises(ConfigError) as err:
            run_fit(load_scenario(path), out=tmp_path / "FIT.parquet", workers=1)
        text = str(err.value)
        assert f": {words}" in text and "\n" not in text, text
