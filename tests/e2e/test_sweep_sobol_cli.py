"""`mjrig sweep` of a Saltelli design (``sensitivity = "sobol"``) as a user runs it: the results'
``mjrig.sensitivity`` holds each value's Sobol indices, near the closed form of the spring-mass's
frequency; its report draws them; a bad field or ``--trials`` is one line and exit 2."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pyarrow.parquet as pq
from e2e_util import mjrig

from mjrig.campaign.sobol import value_indices
from tests.e2e.test_sweep_cli import one_line
from tests.sweep_util import write_scenario

K, MASS = (100.0, 900.0), (0.5, 1.5)
SOBOL = f"""[[metrics]]
name = "f"
signal = "Joints/slide_x:qpos"
kind = "frequency"

[sweep]
seed = 9
trials = {{trials}}
sensitivity = "sobol"
[sweep.params]
k = {{{{ distribution = "uniform", low = {K[0]}, high = {K[1]} }}}}
mass = {{{{ distribution = "uniform", low = {MASS[0]}, high = {MASS[1]} }}}}
"""


def closed_form() -> dict[str, tuple[float, float]]:
    """(first-order, total) of f = sqrt(k) * m^-1/2 / 2π, k and m uniform and independent: a
    product g(k) h(m), so V_k = Var g E[h]^2, V_m = E[g]^2 Var h, V = E[g^2] E[h^2] - E[g]^2 E[h]^2."""
    (a, b), (c, d) = K, MASS
    g1, g2 = 2 / 3 * (b**1.5 - a**1.5) / (b - a), (a + b) / 2  # E[sqrt k], E[k]
    h1, h2 = 2 * (math.sqrt(d) - math.sqrt(c)) / (d - c), math.log(d / c) / (d - c)  # E[m^-1/2], E[1/m]
    v_k, v_m, v = (g2 - g1**2) * h1**2, g1**2 * (h2 - h1**2), g2 * h2 - (g1 * h1) ** 2
    return {"k": (v_k / v, 1 - v_m / v), "mass": (v_m / v, 1 - v_k / v)}


def test_a_sobol_sweep_writes_indices_near_the_closed_form_and_its_report_draws_them(tmp_path):
    """64 base points, 2 params: 256 trials of 3 s (a few seconds on 2 workers, in lock-step).
    The indices of the measured frequency are those of the formula at the trials' own values
    (within 0.02), and the closed form lies in each 95 % interval."""
    path = write_scenario(tmp_path, SOBOL.format(trials=64))
    path.write_text(path.read_text().replace("duration = 1.0", "duration = 3.0"))
    out = tmp_path / "res.parquet"
    r = mjrig("sweep", path, "--out", out, "--workers", "2")
    assert r.rc == 0, r
    assert "wrote 256 trials" in r.stderr, r
    doc = json.loads(pq.read_schema(out).metadata[b"mjrig.sensitivity"])
    assert (doc["method"], doc["base_points"], doc["trials"], doc["params"]) == ("sobol", 64, 256, ["k", "mass"])
    assert set(doc["values"]) == {"Requirements/travel:value", "Metrics/f:value"}
    f = doc["values"]["Metrics/f:value"]
    df = pl.read_parquet(out)
    formula = np.sqrt(df["Params/k:value"].to_numpy() / df["Params/mass:value"].to_numpy()) / (2 * np.pi)
    ref = value_indices(formula, base=64, params=["k", "mass"], rng=np.random.default_rng(0), resamples=9)
    for i, p in enumerate(["k", "mass"]):
        first, total = f["first_order"][p], f["total_order"][p]
        assert abs(first["index"] - ref.first[i]) < 0.02 and abs(total["index"] - ref.total[i]) < 0.02, (p, f)
        s, st = closed_form()[p]
        assert first["low"] <= s <= first["high"] and total["low"] <= st <= total["high"], (p, s, st, f)
    assert f["first_order"]["k"]["index"] > 2 * f["first_order"]["mass"]["index"]  # k's range matters most
    report = mjrig("report", out, "-o", tmp_path / "report.html")
    assert report.rc == 0, report
    html = (tmp_path / "report.html").read_text()
    assert '<h3 id="sobol">Sobol indices</h3>' in html and "A Saltelli design of 64 base points (256 trials)" in html
    assert html.count('alt="Sobol indices of ') == 2


def test_a_bad_sobol_sweep_is_one_line_and_exit_2(tmp_path):
    path = write_scenario(tmp_path, SOBOL.format(trials=100))
    line = one_line(mjrig("sweep", path, "--out", tmp_path / "res.parquet"), "sweep.trials", "power of two")
    assert "closest: 64 or 128" in line and "sweep.toml:" in line
    path = write_scenario(tmp_path, SOBOL.format(trials=64), name="good.toml")
    line = one_line(mjrig("sweep", path, "--out", tmp_path / "res.parquet", "--trials", "48"), "--trials")
    assert "power of two >= 4, got 48 (closest: 32 or 64)" in line
    assert not (tmp_path / "res.parquet").exists()
