"""``mjrig fit`` on synthetic benches from closed forms, each started a factor 2.5 or more from the
truth: a damped spring-mass (k within 1 %, c within 5 %; its 95 % intervals hold the truth in at
least 9 of 10 noise seeds), a torsion pendulum with Coulomb friction in its bearing (the friction
level within 5 %), and a static sag under a known force fitted jointly with a free decay (stiffness
and mass, which neither experiment tells apart alone). Fits run in this process (``workers=1``):
each takes 1-3 s of simulation."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest

from mjrig.campaign.fit import FIT_KEY, run_fit
from mjrig.scenario.parse import load_scenario
from tests.unit.test_measured import CSV_ENTRY, C, K, csv_bench, scenario

FIT = """[fit]
params = { k = { low = 50.0, high = 2000.0 }, c = { low = 0.01, high = 50.0, log = true } }
"""


def test_a_spring_mass_is_fitted_from_far_off(tmp_path):
    """Noise 0.05 mm on 20 mm, 250 Hz against a 1 kHz model, mm and ms, the clock 0.1 s late."""
    csv_bench(tmp_path, noise=0.05, seed=1)
    sc = load_scenario(scenario(tmp_path, CSV_ENTRY, k=K / 2.5, c=C * 2.5, extra=FIT))
    out = tmp_path / "FIT.parquet"
    got = run_fit(sc, out=out, workers=1)
    s = got.summary
    assert got.converged and s["estimate"]["k"] == pytest.approx(K, rel=0.01)
    assert s["estimate"]["c"] == pytest.approx(C, rel=0.05)
    table = pq.read_table(out)
    assert table.num_rows == got.evaluations > 5
    assert json.loads(table.schema.metadata[FIT_KEY.encode()].decode())["estimate"] == s["estimate"]
    first = table.slice(0, 1).to_pylist()[0]
    assert (first["Params/k:value"], first["Params/c:value"]) == (K / 2.5, C * 2.5)  # the start, exactly
    assert s["rms"]["bench"]["Joints/slide:qpos"] == pytest.approx(0.05e-3, rel=0.1)  # the noise is what is left
    assert s["rms_before"]["bench"]["Joints/slide:qpos"] > 20 * s["rms"]["bench"]["Joints/slide:qpos"]
    assert abs(s["correlation"][0][1]) < 0.5 and s["correlation"][0][0] == pytest.approx(1.0)
    best = load_scenario(got.best_path)
    assert best.params["k"].value == s["estimate"]["k"] and best.measured[0].file == sc.measured[0].file
    assert not (tmp_path / "FIT.parquet.parts").exists()


def test_a_fits_trials_run_in_lock_step_with_the_same_residuals(tmp_path, monkeypatch):
    """The spring-mass bench (RK4, a damped spring): its evaluations run in lock-step (none one
    by one), and FIT.parquet equals the one-by-one fit's, every residual bit for bit."""
    from mjrig.campaign.trial import TrialRunner

    csv_bench(tmp_path, noise=0.05, seed=2)
    path = scenario(tmp_path, CSV_ENTRY, k=K / 2.5, c=C * 2.5, extra=FIT)
    alone = run_fit(load_scenario(path), out=tmp_path / "alone.parquet", workers=1, lockstep=False)
    ran: list[Any] = []
    real = TrialRunner.run
    monkeypatch.setattr(TrialRunner, "run", lambda self, task: ran.append(task) or real(self, task))
    both = run_fit(load_scenario(path), out=tmp_path / "both.parquet", workers=2)
    assert not ran and both.evaluations == alone.evaluations > 5
    assert pq.read_table(tmp_path / "both.parquet").equals(pq.read_table(tmp_path / "alone.parquet"))
    assert both.summary["estimate"] == alone.summary["estimate"]
    assert both.summary["series"] == alone.summary["series"]


def test_the_intervals_hold_the_truth_as_often_as_they_say(tmp_path):
    """Ten noise seeds (fewer samples, about 1 s of fitting each): the 95 % intervals of k and c
    each hold the truth in at least 9."""
    held = {"k": 0, "c": 0}
    for seed in range(10):
        folder = tmp_path / str(seed)
        folder.mkdir()
        csv_bench(folder, noise=0.2, seed=seed, rate=100.0, duration=1.5)
        sc = load_scenario(scenario(folder, CSV_ENTRY, k=K * 1.2, c=C / 1.2, extra=FIT))
        s = run_fit(sc, out=folder / "FIT.parquet", workers=1).summary
        for name, truth in (("k", K), ("c", C)):
            lo, hi = s["ci95"][name]
            held[name] += lo <= truth <= hi
    assert held["k"] >= 9 and held["c"] >= 9, held


TORSION = """<mujoco>
  <option timestep="0.0005" integrator="RK4" gravity="0 0 0"/>
  <worldbody>
    <body name="wheel">
      <joint name="pivot" type="hinge" axis="0 0 1" stiffness="{kappa}"/>
      <geom type="cylinder" size="0.1 0.01" contype="0" conaffinity="0"/>
      <inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 {inertia}"/>
    </body>
  </worldbody>
</mujoco>
"""


def coulomb_decay(t: np.ndarray, *, inertia: float, kappa: float, fc: float, theta0: float) -> np.ndarray:
    """I θ'' + κ θ = -Fc sign(θ'), from θ0 at rest: each half period an oscillation about ±Fc/κ."""
    w = math.sqrt(kappa / inertia)
    half = math.pi / w
    out = np.empty_like(t)
    amp, centre, t0 = theta0, 0.0, 0.0
    sign = 1.0  # moving towards negative θ: friction pushes positive, the centre is +Fc/κ
    for i, ti in enumerate(t):
        while ti >= t0 + half and abs(amp - sign * fc / kappa) > fc / kappa:
            centre = sign * fc / kappa
            amp = 2 * centre - amp  # the far end of this half swing
            t0 += half
            sign = -sign
        centre = sign * fc / kappa
        if abs(amp - centre) <= 0 or abs(amp) <= fc / kappa:  # stuck
            out[i] = amp
        else:
            out[i] = centre + (amp - centre) * math.cos(w * min(ti - t0, half))
    return out


def test_the_friction_in_a_pendulums_bearing_is_fitted(tmp_path):
    inertia, kappa, fc, theta0 = 0.02, 2.0, 0.02, 0.3
    (tmp_path / "wheel.xml").write_text(TORSION.format(kappa=kappa, inertia=inertia), encoding="utf-8")
    t = np.arange(0.0, 2.5, 1 / 200)
    theta = coulomb_decay(t, inertia=inertia, kappa=kappa, fc=fc, theta0=theta0)
    assert theta[-1] < 0.2 and np.ptp(theta) > 0.4  # a few swings, each shorter by 4 Fc/κ
    deg = np.degrees(theta) + np.random.default_rng(0).normal(0.0, 0.05, t.size)
    (tmp_path / "swing.csv").write_text("time,angle\n" + "".join(f"{a:.4f},{b:.6f}\n" for a, b in zip(t, deg)))
    path = tmp_path / "wheel.toml"
    path.write_text(
        f"""model = "wheel.xml"

[simulation]
duration = 2.5

[params]
fc = {{ value = {fc * 2.5}, unit = "N*m", min = 0.0, max = 1.0 }}

[initial]
qpos = {{ pivot = {theta0} }}

[[loads]]
name = "bearing"
kind = "joint_friction"
joint = "pivot"
coulomb = "fc"

[[measured]]
name = "swing"
file = "swing.csv"
[measured.signals]
"Joints/pivot:qpos" = {{ column = "angle", unit = "deg" }}

[fit]
params = {{ fc = {{ low = 0.001, high = 0.2, log = true }} }}
""",
        encoding="utf-8",
    )
    s = run_fit(load_scenario(path), out=tmp_path / "FIT.parquet", workers=1).summary
    assert s["converged"] and s["estimate"]["fc"] == pytest.approx(fc, rel=0.05)


SAG = """[params]
k = {{ value = {k}, unit = "N/m", min = 1.0, max = 5000.0 }}
m = {{ value = {m}, unit = "kg", min = 0.1, max = 50.0, model = "body:block.mass" }}
c = {{ value = {c}, unit = "N*s/m" }}
F0 = {{ value = 0.0, unit = "N" }}
"""


def test_stiffness_and_mass_are_fitted_from_a_sag_and_a_decay_together(tmp_path):
    """The sag under a known 20 N (damped tenfold to settle) tells k (δ = F0/k), the decay only
    k/m (and its damping): only together do they give both."""
    k, m, c = 400.0, 2.0, 4.0
    t = np.arange(0.0, 2.0, 1 / 250)
    from tests.unit.test_measured import DECAY_ENTRY, decay_csv

    decay_csv(tmp_path / "decay.csv", t, m=m, k=k, c=c)
    rng = np.random.default_rng(6)
    ts = np.arange(2.0, 3.0, 1 / 50)  # settled: the sag is damped tenfold (ζ about 0.7)
    (tmp_path / "sag.csv").write_text(
        "time,x\n" + "".join(f"{a:.4f},{b:.9f}\n" for a, b in zip(ts, 20.0 / k + rng.normal(0, 2e-5, ts.size)))
    )
    path = scenario(tmp_path, "", extra="")
    doc = path.read_text()
    head, rest = doc.split("[params]", 1)
    rest = rest.split("[initial]", 1)[1]
    doc = (
        head.replace("duration = 2.0", "duration = 2.0\ntimestep = 0.002")
        + SAG.format(k=k / 2.5, m=m * 2.5, c=c)
        + "\n[initial]"
        + rest
    )
    doc += (
        """
[[loads]]
name = "push"
kind = "force"
at = "tip"
vector = ["F0", 0.0, 0.0]

[[measured]]
name = "sag"
file = "sag.csv"
set = { F0 = 20.0, c = 40.0 }
[measured.initial]
qpos = { slide = 0.0 }
[measured.signals]
"Joints/slide:qpos" = { column = "x" }

"""
        + DECAY_ENTRY
        + """
[fit]
params = { k = { low = 50.0, high = 2000.0 }, m = { low = 0.2, high = 20.0, log = true } }
"""
    )
    path.write_text(doc)
    sc = load_scenario(path)
    s = run_fit(sc, out=tmp_path / "FIT.parquet", workers=1).summary
    assert s["converged"], s["message"]
    assert s["estimate"]["k"] == pytest.approx(k, rel=0.01) and s["estimate"]["m"] == pytest.approx(m, rel=0.02)
    assert set(s["rms"]) == {"sag", "decay"}


@pytest.mark.parametrize(
    ("fit", "where", "words"),
    [
        ("params = { kk = { low = 1.0, high = 2.0 } }", "fit.params.kk", "unknown param 'kk' (closest: k)"),
        ("params = { k = { low = 500.0, high = 100.0 } }", "fit.params.k.low", "must be below high"),
        ("params = { c = { low = 0.0, high = 10.0, log = true } }", "fit.params.c.low", "a log scale needs low > 0"),
        ("params = { k = { low = 50.0 } }", "fit.params.k", "needs 'high'"),
        (
            'params = { k = { low = 50.0, high = 2000.0 } }\nsignals = ["Joints/slide:qvel"]',
            "fit.signals",
            "no [[measured]] entry maps 'Joints/slide:qvel' (closest: Joints/slide:qpos)",
        ),
        (
            'params = { k = { low = 50.0, high = 2000.0 } }\nweights = { "Joints/slide:qvel" = 1.0 }',
            "fit.weights.Joints/slide:qvel",
            "unknown field",
        ),
        ("params = { k = { low = 50.0, high = 2000.0 } }\nstart = 2.0\nend = 1.0", "fit.end", "must be after start"),
        ("params = { k = { low = 50.0, high = 2000.0 } }\nstarts = 0", "fit.starts", "from 1 to 64"),
        ('params = { k = { low = 50.0, high = 2000.0 } }\nmethod = "lm"', "fit.method", "unknown field 'method'"),
    ],
)
def test_bad_fit_input_is_one_line_at_its_field(tmp_path, fit, where, words):
    from mjrig.runtime.errors import ConfigError

    csv_bench(tmp_path)
    path = scenario(tmp_path, CSV_ENTRY, k=K, c=C, extra=f"[fit]\n{fit}\n")
    with pytest.raises(ConfigError) as err:
        load_scenario(path)
    text = str(err.value)
    assert text.startswith(f"{path}:") and f": {where}:" in text and words in text and "\n" not in text, text


def test_a_fit_needs_measured_data(tmp_path):
    from mjrig.runtime.errors import ConfigError

    path = scenario(tmp_path, "", extra=FIT)
    with pytest.raises(ConfigError, match=r"fit: \[fit\] needs \[\[measured\]\] data to fit to"):
        load_scenario(path)


def test_a_param_the_data_do_not_depend_on_is_not_an_estimate(tmp_path):
    csv_bench(tmp_path, noise=0.05, seed=1)
    path = scenario(tmp_path, CSV_ENTRY, extra="[fit]\nparams = { idle = { low = 0.1, high = 10.0 } }\n")
    path.write_text(path.read_text().replace("[params]\n", "[params]\nidle = { value = 1.0 }\n"))
    s = run_fit(load_scenario(path), out=tmp_path / "FIT.parquet", workers=1).summary
    assert not s["converged"] and s["message"] == "the measured signals do not change with idle: no estimate of it"


def test_missing_cells_fit_as_the_rows_left_out(tmp_path):
    """Every spelling of a missing cell (``NA``, ``N/A``, ``#N/A``, ``nan``, ``NaN``, ``NULL``,
    ``-``, empty) in the bench's column, one row each: the fit's estimate is the one of the same
    bench with those rows deleted, exactly."""
    from mjrig.scenario.measured_files import MISSING_CELLS

    path = csv_bench(tmp_path, noise=0.05, seed=1)
    lines = path.read_text().splitlines()
    rows = range(10, 10 + 20 * len(MISSING_CELLS), 20)
    holes = list(lines)
    for row, cell in zip(rows, MISSING_CELLS):
        holes[row] = lines[row].split(",")[0] + "," + cell
    (tmp_path / "holes").mkdir()
    (tmp_path / "holes" / "bench.csv").write_text("\n".join(holes) + "\n")
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / "bench.csv").write_text("\n".join(x for i, x in enumerate(lines) if i not in rows) + "\n")
    got = {}
    for folder in ("holes", "cut"):
        sc = load_scenario(scenario(tmp_path / folder, CSV_ENTRY, k=K / 2.5, c=C * 2.5, extra=FIT))
        assert sc.measured[0].series("Joints/slide:qpos")[0].size == len(lines) - 1 - len(MISSING_CELLS)
        got[folder] = run_fit(sc, out=tmp_path / folder / "FIT.parquet", workers=1).summary["estimate"]
    assert got["holes"] == got["cut"] and got["cut"]["k"] == pytest.approx(K, rel=0.01)
