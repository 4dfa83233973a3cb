"""Every sensor column carries the SI unit of what it measures, told from MuJoCo's sensor type
and, where that is not enough, from the object it reads (a hinge's position in rad, a slide's in
m; a fixed tendon over hinges in rad; an actuator's force in its transmission's space), so it
converts under ``[units]`` beside ``qpos`` -- and what has no unit is never converted."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from mjrig.runtime.telemetry.sensor_units import sensor_unit
from mjrig.runtime.telemetry.signals import SignalManager
from mjrig.runtime.telemetry.units import DisplayUnits

MODEL = """<mujoco>
  <worldbody>
    <body name="arm">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
      <site name="tip" pos="0.3 0 0"/>
      <body name="slider" pos="0.3 0 0">
        <joint name="slide" type="slide" axis="1 0 0"/>
        <geom type="box" size="0.03 0.03 0.03"/>
        <site name="end" pos="0.03 0 0"/>
      </body>
    </body>
    <site name="anchor" pos="0 0 0.5"/>
  </worldbody>
  <tendon>
    <fixed name="coupling"><joint joint="hinge" coef="1"/></fixed>
    <spatial name="cord"><site site="anchor"/><site site="end"/></spatial>
  </tendon>
  <actuator>
    <motor name="shoulder" joint="hinge" gear="10"/>
    <motor name="pusher" joint="slide"/>
  </actuator>
  <sensor>
    <jointpos name="angle" joint="hinge"/>
    <jointpos name="stroke" joint="slide"/>
    <jointvel name="spin" joint="hinge"/>
    <jointactuatorfrc name="drive" joint="hinge"/>
    <tendonpos name="coupled" tendon="coupling"/>
    <tendonpos name="cord_length" tendon="cord"/>
    <actuatorfrc name="shoulder_force" actuator="shoulder"/>
    <actuatorpos name="pusher_pos" actuator="pusher"/>
    <framequat name="attitude" objtype="site" objname="tip"/>
    <framepos name="where" objtype="site" objname="tip"/>
    <clock name="clock"/>
    <user name="custom" dim="1"/>
  </sensor>
</mujoco>"""

EXPECTED = {
    "angle": "rad",
    "stroke": "m",
    "spin": "rad/s",
    "drive": "N*m",
    "coupled": "rad",
    "cord_length": "m",
    "shoulder_force": "N*m",
    "pusher_pos": "m",
    "attitude": "",
    "where": "m",
    "clock": "s",
    "custom": "",
}


def test_each_sensor_has_the_unit_of_what_it_measures() -> None:
    m = mujoco.MjModel.from_xml_string(MODEL)
    got = {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_SENSOR, s): sensor_unit(m, s) for s in range(m.nsensor)}
    assert got == EXPECTED


def test_sensor_columns_carry_their_units_and_convert_like_qpos() -> None:
    m = mujoco.MjModel.from_xml_string(MODEL)
    d = mujoco.MjData(m)
    sm = SignalManager(groups=("joints", "sensors"))
    sm.bind(m, d)
    assert sm.units["Sensors/stroke:0"] == sm.units["Joints/slide:qpos"] == "m"
    assert sm.units["Sensors/angle:0"] == "rad" and "Sensors/attitude:0" not in sm.units
    shown = DisplayUnits(length="mm", angle="deg")
    assert shown.convert(sm.units["Sensors/stroke:0"]) == shown.convert(sm.units["Joints/slide:qpos"]) == (1000.0, "mm")
    assert shown.convert(sm.units["Sensors/angle:0"]) == pytest.approx((180 / np.pi, "deg"))
    assert shown.convert(sm.units.get("Sensors/attitude:0", "")) == (1.0, "")  # a quaternion stays as it is


def test_an_actuators_force_times_its_velocity_is_its_power_and_a_motors_input_has_no_unit(tmp_path) -> None:
    """A gear-10 motor on the hinge, recorded: its force is MuJoCo's actuator-space force (the
    joint gets ten times it), its velocity ten times the joint's, and force x velocity = power,
    row by row in the file; the motor's input is not a force to convert (no unit)."""
    import json

    import polars as pl
    import pyarrow.parquet as pq

    from mjrig.headless import prepare, run
    from mjrig.scenario.parse import load_scenario

    (tmp_path / "arm.xml").write_text(MODEL)
    (tmp_path / "arm.toml").write_text(
        'model = "arm.xml"\n[simulation]\nduration = 0.2\n'
        '[[controls]]\nactuator = "shoulder"\nvalue = 0.3\n'
        '[recording]\nsignals = ["joints", "actuators"]\n'
    )
    out = tmp_path / "arm.parquet"
    run(prepare(load_scenario(tmp_path / "arm.toml"), out=out))
    units = json.loads(pq.read_schema(out).metadata[b"mjrig.units"])
    assert units["Actuators/shoulder:force"] == "N*m" and units["Actuators/shoulder:velocity"] == "rad/s"
    assert units["Actuators/pusher:force"] == "N" and units["Actuators/pusher:velocity"] == "m/s"
    assert "Actuators/shoulder:ctrl" not in units and units["Actuators/shoulder:power"] == "W"
    df = pl.read_parquet(out)
    force, velocity = df["Actuators/shoulder:force"].to_numpy(), df["Actuators/shoulder:velocity"].to_numpy()
    assert force[1:] == pytest.approx(np.full(df.height - 1, 0.3))  # from the first step the control acts
    assert velocity == pytest.approx(10 * df["Joints/hinge:qvel"].to_numpy(), rel=1e-9, abs=1e-12)
    assert df["Actuators/shoulder:power"].to_numpy() == pytest.approx(force * velocity, rel=1e-12, abs=1e-15)
    assert np.abs(velocity).max() > 0.1  # it turned
