"""`mjrig check` counts what the panel counts (one summary), in words a person reads ("1 body"),
and paths in what mjrig shows and records carry no '..'."""

from __future__ import annotations

import shutil

import mujoco
import pyarrow.parquet as pq

from mjrig.model_info import describe_model, summary
from tests.e2e.e2e_util import MODELS, mjrig


def test_check_says_one_body_as_the_panel_does(tmp_path):
    result = mjrig("check", "spring_mass", cwd=tmp_path)
    assert result.rc == 0, result
    assert result.stdout.strip() == (
        "spring_mass: ok (1 load, 1 proximity, 2 params; model spring_mass.xml: 1 body, "
        "1 joint, 3 sites, 3 sensors, 0 actuators, timestep 0.001 s)"
    )
    model = mujoco.MjModel.from_xml_path(str(MODELS / "spring_mass.xml"))
    assert model.nbody == 2  # the world and the block: the world is not counted
    assert summary(describe_model(model, path=None)) in result.stdout


def test_a_model_path_with_dot_dot_is_shown_and_recorded_without_it(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "rigs").mkdir()
    shutil.copy(MODELS / "spring_mass.xml", tmp_path / "models" / "spring_mass.xml")
    scenario = tmp_path / "rigs" / "rig.toml"
    scenario.write_text('model = "../models/spring_mass.xml"\n', encoding="utf-8")
    out = tmp_path / "out.parquet"
    result = mjrig("run", scenario, "--duration", "0.01", "--out", out, cwd=tmp_path)
    assert result.rc == 0, result
    meta = pq.read_schema(out).metadata
    assert meta[b"mjrig.model_path"].decode() == str(tmp_path / "models" / "spring_mass.xml")
