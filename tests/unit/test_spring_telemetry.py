"""Spring telemetry is worked out per block from each row's raw state: the recorded force must
still be k·stretch at every row, also when the springs' path points move around in MjData
(a model tendon before them that wraps a geom has a varying number of path points)."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import polars as pl

from mjrig.runtime import PointToPointForce, RuntimeManager, SignalManager

XML = """
<mujoco>
  <option timestep="0.001" gravity="0 0 0"/>
  <worldbody>
    <site name="anchor" pos="0 0 0"/>
    <site name="s1" pos="0 0.5 0"/>
    <geom name="pole" type="cylinder" pos="0.18 0 0" size="0.03 0.2" contype="0" conaffinity="0"/>
    <body name="cart" pos="0 0 0">
      <joint name="x" type="slide" axis="1 0 0"/>
      <inertial pos="0 0 0" mass="2" diaginertia="0.01 0.01 0.01"/>
      <site name="tip" pos="0 0 0"/>
      <site name="s2" pos="0 -0.5 0"/>
    </body>
  </worldbody>
  <tendon>
    <spatial name="strap">
      <site site="s1"/><geom geom="pole"/><site site="s2"/>
    </spatial>
  </tendon>
</mujoco>
"""
K, REST, X0 = 100.0, 0.3, 0.4


def test_recorded_spring_force_is_k_stretch_while_a_wrapping_tendon_changes_its_path(tmp_path: Path) -> None:
    out = tmp_path / "wrap.parquet"
    spring = PointToPointForce.ideal_spring("s", "tip", "anchor", stiffness=K, damping=0.0, rest_length=REST)
    rm = RuntimeManager(loads=[spring], playback_speed=0, signal_manager=SignalManager(out, groups=("joints", "loads")))
    model, data = rm.load_model(mujoco.MjSpec.from_string(XML))
    data.qpos[0] = X0
    mujoco.mj_forward(model, data)
    strap = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_TENDON, "strap")
    points_seen = set()
    with rm:
        for _ in range(1500):  # about one period (2π·√(2/100) ≈ 0.89 s)
            rm.step(model, data)
            points_seen.add(int(data.ten_wrapnum[strap]))
    assert len(points_seen) > 1, f"the strap never changed its path: {points_seen} path points"
    df = pl.read_parquet(out)
    x = df["Joints/x:qpos"].to_numpy()
    assert x.min() < 0.25 and x.max() > 0.35  # it oscillated across the pole's wrap zone
    np.testing.assert_allclose(df["Loads/s:fx"].to_numpy(), -K * (x - REST), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(df["Loads/s:length"].to_numpy(), np.abs(x), rtol=1e-12, atol=1e-12)
    assert np.all(df["Loads/s:fy"].to_numpy() == 0.0) and np.all(df["Loads/s:tx"].to_numpy() == 0.0)


def test_tension_is_positive_pulling_the_points_together_on_every_path(tmp_path: Path) -> None:
    """``Loads/<l>:tension`` (CONTRACT 9): k·(length − rest) for an ideal spring, positive when
    stretched, whether MuJoCo's tendon evaluates it (bank), a user's tension callable does
    (its number is positive pushing apart: the recorded tension is its negative) or it was attached after the
    model was compiled (the general path); the force on the `at` point is the tension along the
    unit vector towards the other point."""
    k, rest = 40.0, 0.3
    cases = {
        "bank": (PointToPointForce.ideal_spring("s", "tip", "anchor", stiffness=k, rest_length=rest), False, 1.0),
        "callable": (
            PointToPointForce(
                name="s", action_site="tip", xtion_site="anchor", magnitude_func=lambda d, v, r0, m, dd: -k * (d - rest)
            ),
            False,
            1.0,
        ),
        "general": (PointToPointForce.ideal_spring("s", "tip", "anchor", stiffness=k, rest_length=rest), True, 1.0),
    }
    for path, (spring, late, sign) in cases.items():
        out = tmp_path / f"{path}.parquet"
        rm = RuntimeManager(
            loads=[] if late else [spring],
            playback_speed=0,
            signal_manager=SignalManager(out, groups=("joints", "loads")),
        )
        model, data = rm.load_model(mujoco.MjSpec.from_string(XML))
        data.qpos[0] = X0
        mujoco.mj_forward(model, data)
        if late:
            rm.loads.append(spring)
            rm.resolve(model, data)
        with rm:
            for _ in range(600):
                rm.step(model, data)
        assert (spring in rm.engine.general) == late, path
        df = pl.read_parquet(out)
        length = df["Loads/s:length"].to_numpy()
        assert length.max() > rest + 0.05 and length.min() < rest - 0.05, path  # stretched and compressed
        tension = df["Loads/s:tension"].to_numpy()
        np.testing.assert_allclose(tension, sign * k * (length - rest), rtol=1e-9, atol=1e-9, err_msg=path)
        x = df["Joints/x:qpos"].to_numpy()  # the tip is on the x axis, the anchor at the origin
        np.testing.assert_allclose(
            df["Loads/s:fx"].to_numpy(), -np.sign(x) * tension, rtol=1e-9, atol=1e-9, err_msg=path
        )
