"""The compiled load laws (``native_table``/``_native_code``) against the Python path, their
reference: every law MuJoCo's tendon springs do not compute -- one-sided damping, a stroke window
with preload, each profile kind, world forces and torques with reactions, joint torques and
frictions -- gives the same motion and the same recorded loads on Euler, implicitfast and RK4; a
param moved mid-run reaches the next step; a reset keeps the laws; a Python callable keeps the
rig on the Python path."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import polars as pl
import pytest

from mjrig.headless import prepare
from mjrig.runtime.forces.engine import step_with_loads
from mjrig.runtime.values import Ramp
from mjrig.scenario.parse import load_scenario

XML = """
<mujoco>
  <option timestep="0.001" integrator="{integrator}"/>
  <worldbody>
    <site name="base" pos="0 0 0"/>
    <body name="cart" pos="0.3 0 0">
      <joint name="x" type="slide" axis="1 0 0" damping="0.2"/>
      <geom type="box" size="0.05 0.05 0.05" mass="1.2"/>
      <site name="tip" pos="0 0 0"/>
      <body name="arm" pos="0 0 -0.05">
        <joint name="swing" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02" mass="0.4"/>
        <site name="end" pos="0 0 -0.3"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

LOADS = """
[params]
k = { value = 300.0, unit = "N/m" }
pre = { value = 4.0, unit = "N" }

[[loads]]
name = "cable"
kind = "tension_spring"
at = "tip"
to = "base"
stiffness = "k"
damping = 1.5
rest_length = 0.25

[[loads]]
name = "bumper"
kind = "compression_spring"
at = "end"
to = "base"
stiffness = 50.0
damping = 0.8
rest_length = 0.5

[[loads]]
name = "stop"
kind = "stroke_compression_spring"
at = "tip"
to = "end"
stiffness = 200.0
damping = 0.5
preload = "pre"
max_stroke = 0.08

[[loads]]
name = "shake"
kind = "force"
at = "end"
to = "tip"
vector = [{ profile = "sine", amplitude = 2.0, frequency = 3.0, phase = 0.4, offset = 0.5 },
          { profile = "chirp", amplitude = 1.5, f0 = 1.0, f1 = 20.0, duration = 0.3 },
          { profile = "table", time = [0.0, 0.1, 0.25], value = [0.0, 3.0, -1.0] }]

[[loads]]
name = "twist"
kind = "general"
at = "body:arm@0,0,-0.1"
force = [0.0, 0.0, { profile = "step", time = 0.15, before = 0.0, after = 1.5 }]
torque = [0.0, 0.3, 0.0]

[[loads]]
name = "drive"
kind = "joint_torque"
joint = "swing"
magnitude = { profile = "sine", amplitude = 0.2, frequency = 2.0 }

[[loads]]
name = "rub"
kind = "joint_friction"
joint = "x"
coulomb = 0.4
breakaway = 0.7
stribeck_velocity = 0.05
viscous = 0.3
"""


def _setup(tmp_path: Path, integrator: str, *, compiled: bool, loads: str = LOADS, out: Path | None = None):
    xml = tmp_path / "rig.xml"
    xml.write_text(XML.format(integrator=integrator), encoding="utf-8")
    scen = tmp_path / "rig.toml"
    scen.write_text(f'model = "{xml}"\n\n[simulation]\nduration = 1.0\n{loads}', encoding="utf-8")
    setup = prepare(load_scenario(scen), out=out, duration=1.0, record=out is not None)
    rm = setup.runtime
    rm.compiled_laws = compiled
    if loads is LOADS:  # a spring's number as a profile (the Python API's; a scenario takes params)
        rm.loads[1].law.stiffness = Ramp(0.0, 0.2, 50.0, 400.0)
    rm.resolve(setup.model, setup.data)
    return setup


def _trajectory(setup, steps: int) -> np.ndarray:
    d, eng = setup.data, setup.runtime.engine
    rows = []
    for _ in range(steps):
        step_with_loads(eng)
        rows.append(np.concatenate([d.qpos, d.qvel, d.qfrc_applied]))
    return np.array(rows)


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "RK4"])
def test_the_compiled_laws_move_the_rig_as_the_python_path_does(tmp_path, integrator):
    py = _setup(tmp_path, integrator, compiled=False)
    assert py.runtime.engine.table is None
    ref = _trajectory(py, 400)
    co = _setup(tmp_path, integrator, compiled=True)
    assert co.runtime.engine.table is not None
    got = _trajectory(co, 400)
    assert co.runtime.plan.between_steps() == ()  # nothing in Python between steps
    assert py.runtime.plan.between_steps() == ("loads",)
    nq = py.model.nq + py.model.nv
    assert np.ptp(ref[:, 0]) > 0.01 and np.ptp(ref[:, 1]) > 0.05  # the rig moves
    # every law acted: the spring window, the table profile's change of sign, the step at 0.15 s
    assert np.abs(ref[:, nq:]).max() > 1.0
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-11)


def test_the_recorded_loads_are_the_python_paths(tmp_path):
    """Telemetry reads what the callback wrote (the springs' numbers, the wrenches, the joint
    values): the same columns as the Python path's, a profile's value at each step included."""
    frames = []
    for compiled in (False, True):
        folder = tmp_path / str(compiled)
        folder.mkdir()
        setup = _setup(folder, "Euler", compiled=compiled, out=folder / "rec.parquet")
        from mjrig.headless import run

        setup.duration = 0.3
        run(setup)
        frames.append(pl.read_parquet(folder / "rec.parquet"))
    py, co = frames
    cols = [c for c in py.columns if c.startswith("Loads/")]
    assert any(":tension" in c for c in cols) and any(c.startswith("Loads/rub:") for c in cols)
    assert py.height == co.height > 100
    for c in cols:
        np.testing.assert_allclose(co[c].to_numpy(), py[c].to_numpy(), rtol=0, atol=1e-9, err_msg=c)
    assert np.ptp(py["Loads/shake:fz"].to_numpy()) > 3.0  # the table profile, evaluated per step
    fy = py["Loads/shake:fy"].to_numpy()
    assert np.ptp(fy) > 2.5  # the chirp


def test_a_param_moved_mid_run_reaches_the_next_compiled_step(tmp_path):
    """The step after a slider moved uses the new value (what the Python path applies from the
    same state with it), not the old one."""
    setup = _setup(tmp_path, "Euler", compiled=True)
    d, rm = setup.data, setup.runtime
    _trajectory(setup, 50)
    qpos, qvel, t = d.qpos.copy(), d.qvel.copy(), d.time

    def python_qfrc(k: float) -> np.ndarray:
        ref = _setup(tmp_path, "Euler", compiled=False)
        ref.data.qpos[:], ref.data.qvel[:], ref.data.time = qpos, qvel, t
        ref.runtime.loads[0].law.stiffness.value = k
        ref.runtime.engine.prepare()
        mujoco.mj_step1(ref.model, ref.data)
        ref.runtime.engine.apply()
        return ref.data.qfrc_applied.copy()

    rm.loads[0].law.stiffness.value = 3000.0  # the param "k" behind the cable's stiffness
    step_with_loads(rm.engine)
    np.testing.assert_allclose(d.qfrc_applied, python_qfrc(3000.0), rtol=0, atol=1e-12)
    assert np.abs(d.qfrc_applied - python_qfrc(300.0)).max() > 1.0  # the cable is stretched: it matters


def test_a_reset_keeps_the_compiled_laws(tmp_path):
    setup = _setup(tmp_path, "Euler", compiled=True)
    m, d = setup.model, setup.data
    first = _trajectory(setup, 100)
    mujoco.mj_resetData(m, d)  # clears userdata, which names the table
    assert not setup.runtime.engine.table.stamped()
    again = _trajectory(setup, 100)
    np.testing.assert_array_equal(again, first)


def test_a_python_callable_keeps_the_rig_on_the_python_path(tmp_path):
    setup = _setup(tmp_path, "Euler", compiled=True)
    rm = setup.runtime
    rm.loads[3].force[0] = lambda t: 1.0 + t  # a user's callable: no table can hold it
    rm.engine.invalidate()
    _trajectory(setup, 5)
    assert rm.engine.table is None and rm.plan.between_steps() == ("loads",)
    rm.engine.update_outputs()
    assert rm.engine.wrench[3, 0] == pytest.approx(1.0 + setup.data.time - setup.model.opt.timestep, abs=1e-9)
