"""``[initial]`` (CONTRACT 9): joint positions and velocities by name over the keyframe; a run's
first row holds them, Reset returns to them, and the app's "Use current as initial" writes them
from the state it shows (saved with the scenario, read back by ``mjrig run``)."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import polars as pl
import pytest

from mjrig import commands as C
from mjrig.cli import main
from mjrig.scenario.parse import load_scenario
from mjrig.session.kernel import Session

XML = """
<mujoco model="walker">
  <option timestep="0.001"/>
  <worldbody>
    <geom type="plane" size="5 5 0.1"/>
    <body name="torso" pos="0 0 1">
      <freejoint name="root"/>
      <geom type="box" size="0.1 0.1 0.1" mass="2"/>
      <body name="thigh" pos="0 0 -0.2">
        <joint name="hip" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03" mass="0.5"/>
        <body name="foot" pos="0 0 -0.35">
          <joint name="ankle" type="ball"/>
          <joint name="rail" type="slide" axis="1 0 0"/>
          <geom type="sphere" size="0.04" mass="0.2"/>
        </body>
      </body>
    </body>
  </worldbody>
  <keyframe><key name="crouch" qpos="0 0 0.8 1 0 0 0  0.4  1 0 0 0  0.02"/></keyframe>
</mujoco>
"""

SCENARIO = """model = "walker.xml"

[simulation]
duration = 0.005
initial_key = "crouch"

[initial]
qpos = { hip = -0.3, ankle = [0.0, 0.0, 2.0, 0.0], root = [0.1, 0.2, 1.1, 1.0, 0.0, 0.0, 0.0] }
qvel = { hip = 2.0, root = [0.5, 0, 0, 0, 0, 1.5] }
"""


@pytest.fixture()
def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "walker.xml").write_text(XML)
    path = tmp_path / "walker.toml"
    path.write_text(SCENARIO)
    return path


def test_the_first_row_holds_initial_over_the_keyframe(rig: Path) -> None:
    assert main(["run", str(rig), "--out", "out.parquet"]) == 0
    first = pl.read_parquet("out.parquet").row(0, named=True)
    assert first["time"] == 0.0
    assert first["Joints/hip:qpos"] == -0.3 and first["Joints/hip:qvel"] == 2.0
    assert first["Joints/rail:qpos"] == 0.02  # not named in [initial]: the keyframe's
    assert [first[f"Joints/ankle:q{a}"] for a in "wxyz"] == [0.0, 0.0, 1.0, 0.0]  # normalised
    assert [first[f"Joints/root:{a}"] for a in ("x", "y", "z", "qw")] == [0.1, 0.2, 1.1, 1.0]
    assert first["Joints/root:vx"] == 0.5 and first["Joints/root:wz"] == 1.5


def test_reset_returns_to_initial_and_use_current_writes_it(rig: Path) -> None:
    s = Session()
    s.open(rig)
    hip = int(s.model.jnt_qposadr[mujoco.mj_name2id(s.model, mujoco.mjtObj.mjOBJ_JOINT, "hip")])
    assert s.data.qpos[hip] == -0.3
    for _ in range(200):
        s.rm.step(s.model, s.data)
    assert s.data.qpos[hip] != -0.3
    s.handle(C.Reset())
    assert s.data.qpos[hip] == -0.3 and s.data.time == 0.0
    for _ in range(150):
        s.rm.step(s.model, s.data)
    here_q, here_v = s.data.qpos.copy(), s.data.qvel.copy()
    s.handle(C.UseCurrentAsInitial())
    initial = s.document.doc["initial"]
    assert set(initial["qpos"]) == {"root", "hip", "ankle", "rail"} and len(initial["qpos"]["root"]) == 7
    assert initial["qpos"]["hip"] == here_q[hip] and s.document.dirty
    for _ in range(100):
        s.rm.step(s.model, s.data)
    s.handle(C.Reset())
    assert s.data.time == 0.0  # as a run of the saved scenario starts
    np.testing.assert_array_equal(s.data.qpos, here_q)
    np.testing.assert_array_equal(s.data.qvel, here_v)
    saved = rig.with_name("saved.toml")
    s.handle(C.SaveScenario(str(saved)))
    assert load_scenario(saved).initial.qpos["hip"] == (here_q[hip],)


@pytest.mark.parametrize(
    "entry, words",
    [
        ("qpos = { hipp = 0.1 }", "initial.qpos.hipp: unknown joint 'hipp' (closest: hip"),
        ("qpos = { ankle = 0.1 }", "initial.qpos.ankle: a ball joint takes 4 values in qpos, got 1"),
        ("qvel = { root = [1, 2, 3] }", "initial.qvel.root: a free joint takes 6 values in qvel, got 3"),
        ("qvel = { hip = nan }", "initial.qvel.hip: must be a finite number, got nan"),
        ("qpos = { hip = [] }", "initial.qpos.hip: must be a number or a list of numbers"),
        ("qpose = { hip = 1 }", "initial.qpose: unknown field 'qpose' (closest: qpos"),
    ],
)
def test_bad_initial_entries_exit_2_naming_file_line_and_closest(rig: Path, capsys, entry: str, words: str) -> None:
    rig.write_text(SCENARIO.split("[initial]")[0] + "[initial]\n" + entry + "\n")
    assert main(["check", str(rig)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"walker.toml:8: {words}" in err, err
