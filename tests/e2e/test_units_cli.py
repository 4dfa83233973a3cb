"""``[units]`` (CONTRACT 9) as a user meets it: the recording stays SI with units in its metadata;
`mjrig export --to csv` writes the chosen units in its headers and values (mm = 1000·m,
deg = rad·180/π), `mjrig plot` labels its panels with them, `mjrig report` shows requirement
values and limits in them; a bad [units] entry is one line at FILE:LINE with the closest names."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from e2e_util import MODELS, mjrig

RIG = f"""model = "{MODELS / "robot_arm.xml"}"

[simulation]
duration = 0.5

[[requirements]]
name = "elbow_reach"
signal = "Bodies/forearm:z"
max = 2.0

[units]
length = "mm"
angle = "deg"
torque = "N·mm"
"""


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    d = tmp_path_factory.mktemp("units")
    (d / "arm.toml").write_text(RIG, encoding="utf-8")
    r = mjrig("run", d / "arm.toml", "--out", d / "arm.parquet", cwd=d)
    assert r.rc == 0, r
    return d / "arm.parquet"


def test_the_recording_stays_si_and_the_csv_shows_mm_and_degrees(recording, tmp_path):
    units = json.loads(pq.read_schema(recording).metadata[b"mjrig.units"])
    assert units["Joints/shoulder:qpos"] == "rad" and units["Bodies/forearm:z"] == "m"
    r = mjrig("export", recording, "--to", "csv", "-o", tmp_path / "arm.csv")
    assert r.rc == 0, r
    si = pl.read_parquet(recording)
    csv = pl.read_csv(tmp_path / "arm.csv", infer_schema_length=0)
    header = csv.columns
    assert "Joints/shoulder:qpos [deg]" in header and "Joints/shoulder:qvel [deg/s]" in header
    assert "Bodies/forearm:z [mm]" in header and "time [s]" in header
    assert any(h.startswith("Actuators/") and h.endswith(":force [N·mm]") for h in header)
    deg = csv["Joints/shoulder:qpos [deg]"].cast(pl.Float64).to_numpy()
    np.testing.assert_allclose(deg, si["Joints/shoulder:qpos"].to_numpy() * 180 / math.pi, rtol=1e-15)
    mm = csv["Bodies/forearm:z [mm]"].cast(pl.Float64).to_numpy()
    np.testing.assert_allclose(mm, 1000 * si["Bodies/forearm:z"].to_numpy(), rtol=1e-15)
    assert np.ptp(deg) > 0.5  # the arm moved (about 0.75°): the values say something
    # a quantity not asked for keeps SI: energy in J, time in s
    np.testing.assert_array_equal(csv["time [s]"].cast(pl.Float64).to_numpy(), si["time"].to_numpy())


def test_plot_and_report_show_the_chosen_units(recording, tmp_path):
    r = mjrig(
        "plot", recording, "--signals", "Joints/*:qpos", "--signals", "Bodies/forearm:z", "-o", tmp_path / "p.svg"
    )
    assert r.rc == 0, r
    svg = (tmp_path / "p.svg").read_text()
    assert ">deg<" in svg.replace("\n", "") or "deg" in svg  # the axis label
    rep = mjrig("report", recording, "-o", tmp_path / "r.html")
    assert rep.rc == 0, rep
    html = (tmp_path / "r.html").read_text()
    verdict = json.loads(pq.read_schema(recording).metadata[b"mjrig.requirements"])[0]
    assert f"{verdict['value'] * 1000:.6g} mm" in html and "2000 mm" in html
    assert "length in mm, angle in deg" in html


@pytest.mark.parametrize(
    "entry, words",
    [
        ('length = "mmm"', "units.length: unknown length unit 'mmm' (choose m, mm, cm, in; closest: mm"),
        ('angel = "deg"', "units.angel: unknown quantity 'angel' (closest: angle"),
        ("force = 3", "units.force: unknown force unit 3"),
    ],
)
def test_bad_units_exit_2_with_one_line(tmp_path, entry, words):
    (tmp_path / "bad.toml").write_text(RIG.split("[units]")[0] + "[units]\n" + entry + "\n", encoding="utf-8")
    r = mjrig("check", tmp_path / "bad.toml")
    assert r.rc == 2 and len(r.err_lines) == 1 and "bad.toml:" in r.stderr and words in r.stderr, r
