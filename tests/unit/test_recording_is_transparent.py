"""Recording must not change the physics: with a recorder sampling every group at every step,
the trajectory equals plain ``mj_step``'s bit for bit on every integrator (RK4 takes the
recorder's row inside ``mj_step``'s own sequence, not from a second forward pass)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from mjrig.runtime import RuntimeManager, SignalManager

XML = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="box" pos="0 0 0.3">
      <freejoint/>
      <geom type="box" size="0.05 0.04 0.03" mass="0.4"/>
    </body>
    <body name="arm" pos="0.3 0 0.5">
      <joint name="hinge" type="hinge" axis="0 1 0" damping="0.01"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/>
    </body>
  </worldbody>
  <actuator><motor joint="hinge" gear="2"/></actuator>
  <sensor><jointpos joint="hinge"/></sensor>
</mujoco>
"""


@pytest.mark.parametrize("integrator", ["Euler", "implicit", "implicitfast", "RK4"])
def test_a_recorded_run_follows_mj_step_bit_for_bit(integrator: str) -> None:
    model = mujoco.MjModel.from_xml_string(XML.format(integrator=integrator))
    plain, rigged = mujoco.MjData(model), mujoco.MjData(model)
    for d in (plain, rigged):
        d.qvel[:] = 0.5
        d.ctrl[:] = 0.1
    rm = RuntimeManager(playback_speed=0, signal_manager=SignalManager(None))
    for _ in range(400):  # the box lands: contacts come and go
        mujoco.mj_step(model, plain)
        rm.step(model, rigged)
    assert rm.signal_manager.rows_recorded == 400
    assert plain.ncon > 0
    np.testing.assert_array_equal(rigged.qpos, plain.qpos)
    np.testing.assert_array_equal(rigged.qvel, plain.qvel)
    assert rigged.time == plain.time
