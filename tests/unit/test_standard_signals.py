"""The standard signals of CONTRACT 9, recorded at every step and checked row by row against
MuJoCo's own functions and closed forms: body orientation (unit quaternions equal to ``xquat``)
and velocities (``mj_objectVelocity``: the origin's world velocity, ω × r off the centre of mass),
site positions, a hinge's constraint force holding a pendulum on its limit (m·g·L), and an
actuator's force (N·m on a hinge) and power (force · velocity)."""

from __future__ import annotations

import json
from pathlib import Path

import mujoco
import numpy as np
import polars as pl
import pyarrow.parquet as pq

from mjrig.runtime import RuntimeManager, SignalManager

SPIN = """
<mujoco>
  <option timestep="0.001" gravity="0 0 0"/>
  <worldbody>
    <body name="rotor" pos="0.3 0 0.5">
      <freejoint name="free"/>
      <geom type="box" size="0.2 0.05 0.02" pos="0.15 0.02 0" mass="2"/>
      <site name="rim" pos="0.35 0 0"/>
      <body name="flap" pos="0.35 0 0">
        <joint name="flap" type="hinge" axis="0 1 0" damping="0.01"/>
        <geom type="box" size="0.05 0.02 0.01" pos="0.05 0 0" mass="0.2"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

ARM = """
<mujoco>
  <option timestep="0.001" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="link" pos="0 0 1">
      <joint name="pin" type="hinge" axis="0 1 0" range="-5 0" limited="true" damping="0.5"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.01" mass="0"/>
      <body name="bob" pos="0.4 0 0"><geom type="sphere" size="0.02" mass="1.5"/></body>
    </body>
    <body name="wheel" pos="0 1 1">
      <joint name="axle" type="hinge" axis="0 0 1"/>
      <geom type="cylinder" size="0.1 0.02" mass="1"/>
    </body>
  </worldbody>
  <actuator><motor name="drive" joint="axle" gear="1"/></actuator>
</mujoco>
"""


def record(xml: str, out: Path, *, steps: int, setup=None, groups=("joints", "bodies", "sites", "actuators")):
    rm = RuntimeManager(playback_speed=0, signal_manager=SignalManager(out, groups=groups))
    model, data = rm.load_model(mujoco.MjSpec.from_string(xml))
    if setup is not None:
        setup(model, data)
    mujoco.mj_forward(model, data)
    with rm:
        for _ in range(steps):
            rm.step(model, data)
    return model, pl.read_parquet(out)


def at_rows(model: mujoco.MjModel, df: pl.DataFrame, qpos_cols: list[str], qvel_cols: list[str]):
    """A fresh MjData put in each row's state (positions and velocities: what the row describes)."""
    d = mujoco.MjData(model)
    qp, qv = df.select(qpos_cols).to_numpy(), df.select(qvel_cols).to_numpy()
    for i in range(len(df)):
        d.qpos[:], d.qvel[:] = qp[i], qv[i]
        mujoco.mj_forward(model, d)
        yield i, d


def test_body_orientation_and_velocities_are_mujocos_at_every_row(tmp_path):
    def spin(m, d):
        d.qvel[:6] = [0.4, -0.2, 0.1, 1.0, 2.0, 5.0]  # a tumbling free body: v (m/s), ω (rad/s)
        d.qvel[6] = 3.0

    model, df = record(SPIN, tmp_path / "spin.parquet", steps=400, setup=spin)
    free = ["x", "y", "z", "qw", "qx", "qy", "qz"]
    qpos_cols = [f"Joints/free:{a}" for a in free] + ["Joints/flap:qpos"]
    qvel_cols = [f"Joints/free:{a}" for a in ("vx", "vy", "vz", "wx", "wy", "wz")] + ["Joints/flap:qvel"]
    res = np.zeros(6)
    offsets = []
    for i, d in at_rows(model, df, qpos_cols, qvel_cols):
        for b, name in ((1, "rotor"), (2, "flap")):
            mujoco.mj_objectVelocity(model, d, mujoco.mjtObj.mjOBJ_XBODY, b, res, 0)  # [ω, v] at the origin, world axes
            row = df.row(i, named=True)
            got_v = [row[f"Bodies/{name}:v{a}"] for a in "xyz"]
            got_w = [row[f"Bodies/{name}:w{a}"] for a in "xyz"]
            np.testing.assert_allclose(got_v, res[3:], rtol=0, atol=1e-9)
            np.testing.assert_allclose(got_w, res[:3], rtol=0, atol=1e-9)
            q = np.array([row[f"Bodies/{name}:q{a}"] for a in "wxyz"])
            np.testing.assert_allclose(q, d.xquat[b], rtol=0, atol=1e-12)
            assert abs(np.linalg.norm(q) - 1.0) < 1e-9
        offsets.append(np.linalg.norm(res[3:] - d.cvel[2, 3:]))
    assert max(offsets) > 0.1  # the origin's velocity is not the centre of mass's: ω × r mattered
    # the free joint's own velocity (at the body's origin, world axes) is the rotor's
    np.testing.assert_allclose(df["Bodies/rotor:vz"].to_numpy(), df["Joints/free:vz"].to_numpy(), atol=1e-9)
    units = json.loads(pq.read_schema(tmp_path / "spin.parquet").metadata[b"mjrig.units"])
    assert units["Bodies/flap:vx"] == "m/s" and units["Bodies/flap:wy"] == "rad/s" and units["Sites/rim:x"] == "m"


def test_site_positions_are_site_xpos(tmp_path):
    model, df = record(SPIN, tmp_path / "s.parquet", steps=200, setup=lambda m, d: d.qvel.__setitem__(5, 4.0))
    rim = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, "rim")
    qpos_cols = [f"Joints/free:{a}" for a in ("x", "y", "z", "qw", "qx", "qy", "qz")] + ["Joints/flap:qpos"]
    qvel_cols = [f"Joints/free:{a}" for a in ("vx", "vy", "vz", "wx", "wy", "wz")] + ["Joints/flap:qvel"]
    xs = df.select("Sites/rim:x", "Sites/rim:y", "Sites/rim:z").to_numpy()
    for i, d in at_rows(model, df, qpos_cols, qvel_cols):
        np.testing.assert_allclose(xs[i], d.site_xpos[rim], rtol=0, atol=1e-12)
    assert np.ptp(xs[:, 0]) > 0.05  # it moved (ω = 4 rad/s about z)


def test_a_hinge_on_its_limit_holds_m_g_l_and_a_motors_power_is_force_times_speed(tmp_path):
    torque = 0.8  # N·m on the wheel

    def drive(m, d):
        d.ctrl[0] = torque

    model, df = record(ARM, tmp_path / "arm.parquet", steps=2000, setup=drive)
    units = json.loads(pq.read_schema(tmp_path / "arm.parquet").metadata[b"mjrig.units"])
    assert units["Joints/pin:constraint"] == "N*m" and units["Actuators/drive:force"] == "N*m"
    assert units["Actuators/drive:power"] == "W"
    # the link hangs horizontal on its limit (q = 0, the range's top): the limit holds the bob's
    # weight, m·g·L = 1.5 · 9.81 · 0.4 N·m, against gravity's torque about +y
    late = df.filter(pl.col("time") > 1.5)
    assert np.all(np.abs(late["Joints/pin:qpos"].to_numpy()) < 2e-3)
    np.testing.assert_allclose(late["Joints/pin:constraint"].to_numpy(), -1.5 * 9.81 * 0.4, rtol=2e-3)
    # power = force · angular speed (gear 1), row by row; the speed grows as torque/I·t
    force, speed = df["Actuators/drive:force"].to_numpy(), df["Joints/axle:qvel"].to_numpy()
    np.testing.assert_allclose(df["Actuators/drive:power"].to_numpy(), force * speed, rtol=1e-12, atol=1e-15)
    assert np.all(force[1:] == torque)
    inertia = 0.5 * 1.0 * 0.1**2
    assert abs(speed[-1] - torque / inertia * df["time"][-1]) < 0.02 * speed[-1]
