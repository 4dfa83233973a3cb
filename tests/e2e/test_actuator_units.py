"""Actuator columns carry their real units (docs/outputs.md, "Telemetry columns"): N·m for hinge transmissions, N for slide
and site ones, their velocities in rad/s or m/s; the input's unit follows what the actuator does with it (a
servo's target in joint units, a motor's input none)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from tests.e2e.e2e_util import mjrig

MODEL = """<mujoco>
  <worldbody>
    <body name="arm">
      <joint name="hinge" type="hinge" axis="0 0 1"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
      <site name="tip" pos="0.3 0 0"/>
      <body name="carriage" pos="0.3 0 0">
        <joint name="rail" type="slide" axis="1 0 0"/>
        <geom type="box" size="0.03 0.03 0.03"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="coupled"><joint joint="hinge" coef="1"/></fixed>
  </tendon>
  <actuator>
    <motor name="hinge_motor" joint="hinge"/>
    <motor name="rail_motor" joint="rail" gear="2"/>
    <position name="hinge_servo" joint="hinge" kp="10"/>
    <velocity name="rail_speed" joint="rail" kv="3"/>
    <motor name="thruster" site="tip" gear="1 0 0 0 0 0"/>
    <motor name="tendon_motor" tendon="coupled"/>
    <general name="filtered" joint="rail" dyntype="filter" dynprm="0.1"/>
  </actuator>
</mujoco>
"""


def test_actuator_force_and_input_units_read_back(tmp_path):
    model = tmp_path / "arm.xml"
    model.write_text(MODEL, encoding="utf-8")
    out = tmp_path / "arm.parquet"
    result = mjrig("run", model, "--duration", "0.01", "--out", out, cwd=tmp_path)
    assert result.rc == 0, result
    units = json.loads(pq.read_schema(out).metadata[b"mjrig.units"])
    expected = {  # actuator: (force, velocity, ctrl): a motor of gain 1 and gear 1 is given its force;
        # one of another gear scales it (no unit)
        "hinge_motor": ("N*m", "rad/s", "N*m"),
        "rail_motor": ("N", "m/s", ""),
        "hinge_servo": ("N*m", "rad/s", "rad"),
        "rail_speed": ("N", "m/s", "m/s"),
        "thruster": ("N", "m/s", "N"),
        "tendon_motor": ("N*m", "rad/s", "N*m"),
        "filtered": ("N", "m/s", ""),
    }
    got = {a: tuple(units.get(f"Actuators/{a}:{what}", "") for what in ("force", "velocity", "ctrl")) for a in expected}
    assert got == expected
