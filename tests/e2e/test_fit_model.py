"""``mjrig fit --write-model OUT.xml``: the estimate written back into a copy of the MJCF, which
plain MuJoCo loads and steps exactly as ``mjrig run`` steps the rig at the estimate; bad input is
one line and writes nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import mujoco
import numpy as np
import polars as pl
import pytest
from e2e_util import mjrig, mjrig_here

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_measured import X0, bound_scenario  # noqa: E402


def test_the_written_model_steps_in_plain_mujoco_as_the_rig_at_the_estimate(tmp_path):
    """Slow-ish (a 2-param fit, ~4 s, and one run): the fit, the file, and both responses."""
    path = bound_scenario(tmp_path)
    out = tmp_path / "fitted" / "sm-fitted.xml"
    r = mjrig("fit", path, "--out", tmp_path / "FIT.parquet", "--workers", 1, "--write-model", out, cwd=tmp_path)
    assert r.rc == 0, r
    assert f"wrote the fitted model to {out}" in r.stderr
    text = out.read_text(encoding="utf-8")
    head = text[: text.index("-->")]
    assert "bench = " + str(tmp_path / "bench.csv") in head and str(path) in head, head
    assert "k = 400.0" in head and "N/m, 95 % interval" in head and "-> joint:slide.stiffness" in head, head
    assert "m = 2 kg as in the scenario -> body:block.mass" in head, head

    model = mujoco.MjModel.from_xml_path(str(out))  # plain MuJoCo, from another folder
    got = mjrig("run", tmp_path / "FIT-best.toml", "--out", tmp_path / "rec.parquet", cwd=tmp_path)
    assert got.rc == 0, got
    rec = pl.read_parquet(tmp_path / "rec.parquet")
    k = float(model.jnt_stiffness[0])
    assert abs(k / 400.0 - 1) < 0.005 and model.body_mass[1] == 2.0

    data = mujoco.MjData(model)
    data.qpos[0] = X0
    expected = [float(data.qpos[0])]
    for _ in range(rec.height - 1):
        mujoco.mj_step(model, data)
        expected.append(float(data.qpos[0]))
    np.testing.assert_array_equal(rec["Joints/slide:qpos"].to_numpy(), np.array(expected))


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ((', model = "joint:slide.stiffness"', ""), "no fitted param (c, k) is bound to a model field"),
        (("", ""), "--write-model: must end in .xml"),
    ],
)
def test_bad_write_model_input_is_one_line_and_writes_nothing(tmp_path, change, words):
    path = bound_scenario(tmp_path)
    text = path.read_text().replace(', model = "joint:slide.damping"', "")
    path.write_text(text.replace(*change) if change[0] else text)
    out = tmp_path / ("fitted.xml" if change[0] else "fitted.txt")
    r = mjrig_here("fit", path, "--out", tmp_path / "FIT.parquet", "--write-model", out, cwd=tmp_path)
    assert r.rc == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r
    assert not out.exists() and not (tmp_path / "FIT.parquet").exists()


def test_the_model_itself_is_refused_as_the_output(tmp_path):
    path = bound_scenario(tmp_path)
    before = (tmp_path / "sm.xml").read_bytes()
    r = mjrig_here("fit", path, "--out", tmp_path / "FIT.parquet", "--write-model", tmp_path / "sm.xml", cwd=tmp_path)
    assert r.rc == 2 and "--write-model" in r.stderr and "is the model" in r.stderr, r
    assert (tmp_path / "sm.xml").read_bytes() == before
