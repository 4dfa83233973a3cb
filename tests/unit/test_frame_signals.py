"""``[[signals]]`` in another frame (CONTRACT 9), against closed forms on a body spinning at a known
rate about a known axis: a world-fixed force in the spinning frame is Rᵀf at every row; a
point's velocity relative to the spinning frame is Rᵀ(v − v_o − ω×r); with a site as the frame
its origin's own velocity counts. Bad entries are one line at FILE:LINE with the closest names."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from mjrig.cli import main

W, V = 2.0, 0.5  # rad/s about z (the rotor), m/s along x (the cart)

XML = """
<mujoco>
  <option timestep="0.001" gravity="0 0 0"/>
  <worldbody>
    <body name="rotor" pos="0 0 0">
      <joint name="spin" type="hinge" axis="0 0 1"/>
      <geom type="box" size="0.3 0.05 0.05" mass="1"/>
      <site name="arm" pos="0.3 0.1 0" euler="0 0 30"/>
    </body>
    <body name="cart" pos="0 1 0">
      <joint name="rail" type="slide" axis="1 0 0"/>
      <geom type="sphere" size="0.05" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""

SCENARIO = f"""model = "spin.xml"

[simulation]
duration = 1.0

[initial]
qvel = {{ spin = {W}, rail = {V} }}

[[loads]]
name = "push"
kind = "force"
at = "body:rotor"
vector = [3.0, 0.0, 5.0]   # N, world frame, through the axis: the spin stays {W} rad/s

[[signals]]
name = "push_in_rotor"
of = "Loads/push"
frame = "body:rotor"

[[signals]]
name = "cart_from_rotor"
of = "body:cart@0,0.2,0"
frame = "body:rotor"

[[signals]]
name = "cart_from_arm"
of = "body:cart@0,0.2,0"
frame = "arm"

[[signals]]
name = "mark_in_world"
of = "body:world@1,0,0"
"""


@pytest.fixture(params=["every group", "joints only"])
def run(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> pl.DataFrame:
    """The spinning rig's recording: with every group (the signals read the same rows' Bodies/
    and Loads/ columns), or the joints only (they work everything out from raw values)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spin.xml").write_text(XML)
    only = '\n[recording]\nsignals = ["joints"]\n' if request.param == "joints only" else ""
    (tmp_path / "spin.toml").write_text(SCENARIO + only)
    assert main(["run", "spin.toml", "--out", "out.parquet"]) == 0
    df = pl.read_parquet("out.parquet")
    assert any(c.startswith("Bodies/") for c in df.columns) == (request.param == "every group")
    return df


def rot_z(theta: np.ndarray) -> np.ndarray:
    c, s = np.cos(theta), np.sin(theta)
    out = np.zeros((len(theta), 3, 3))
    out[:, 0, 0], out[:, 0, 1], out[:, 1, 0], out[:, 1, 1], out[:, 2, 2] = c, -s, s, c, 1.0
    return out


def cols(df: pl.DataFrame, name: str, attrs: str) -> np.ndarray:
    return df.select([f"Signals/{name}:{a}" for a in attrs.split()]).to_numpy()


def test_a_world_fixed_force_in_a_spinning_frame_is_r_transpose_f(run: pl.DataFrame) -> None:
    theta = run["Joints/spin:qpos"].to_numpy()
    np.testing.assert_allclose(run["Joints/spin:qvel"].to_numpy(), W, atol=1e-9)  # a known rate
    assert theta[-1] > 1.9  # it turned (about 2 rad in 1 s)
    R = rot_z(theta)
    f = np.array([3.0, 0.0, 5.0])
    np.testing.assert_allclose(cols(run, "push_in_rotor", "fx fy fz"), np.einsum("rji,j->ri", R, f), atol=1e-9)
    np.testing.assert_allclose(cols(run, "push_in_rotor", "tx ty tz"), 0.0, atol=1e-9)


def test_a_points_velocity_in_a_rotating_frame_is_r_transpose_of_v_minus_omega_cross_r(run: pl.DataFrame) -> None:
    theta = run["Joints/spin:qpos"].to_numpy()
    R = rot_z(theta)
    x = run["Joints/rail:qpos"].to_numpy()
    p = np.stack([x, np.full_like(x, 1.2), np.zeros_like(x)], axis=1)  # the cart's point, world
    v = np.tile([V, 0.0, 0.0], (len(x), 1))
    w = np.tile([0.0, 0.0, W], (len(x), 1))
    np.testing.assert_allclose(cols(run, "cart_from_rotor", "x y z"), np.einsum("rji,rj->ri", R, p), atol=1e-9)
    np.testing.assert_allclose(
        cols(run, "cart_from_rotor", "vx vy vz"), np.einsum("rji,rj->ri", R, v - np.cross(w, p)), atol=1e-9
    )
    # the site `arm` (0.3, 0.1, 0) on the rotor, turned 30° about z: its origin moves at ω × o
    Ra = np.einsum("rij,jk->rik", R, rot_z(np.array([np.radians(30.0)]))[0])
    o = np.einsum("rij,j->ri", R, np.array([0.3, 0.1, 0.0]))
    r = p - o
    np.testing.assert_allclose(cols(run, "cart_from_arm", "x y z"), np.einsum("rji,rj->ri", Ra, r), atol=1e-9)
    expected = np.einsum("rji,rj->ri", Ra, v - np.cross(w, o) - np.cross(w, r))
    np.testing.assert_allclose(cols(run, "cart_from_arm", "vx vy vz"), expected, atol=1e-9)
    # a world point seen from the world: where it is, not moving
    np.testing.assert_allclose(
        cols(run, "mark_in_world", "x y z vx vy vz"), [[1.0, 0, 0, 0, 0, 0]] * len(x), atol=1e-12
    )


@pytest.mark.parametrize(
    "entry, words",
    [
        ('of = "Loads/psh"', "signals[0].of: unknown load 'psh' (closest: push"),
        ('of = "body:rotr@0,0,0"', "signals[0].of: unknown body 'rotr' (closest: rotor"),
        ('of = "Loads/push"\nframe = "body:crt"', "signals[0].frame: unknown body 'crt' (closest: cart"),
        ('of = "Loads/push"\nframe = "armm"', "signals[0].frame: unknown site 'armm' (closest: arm"),
        ('of = "Loads/push"\nframes = "arm"', "signals[0].frames: unknown field 'frames' (closest: frame"),
        ('of = "Joints/xc"', "signals[0].of: 'Joints/xc' is neither a load (\"Loads/NAME\") nor a point"),
    ],
)
def test_bad_signal_entries_exit_2_naming_file_line_and_closest(
    tmp_path: Path, monkeypatch, capsys, entry: str, words: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spin.xml").write_text(XML)
    text = SCENARIO.split("[[signals]]")[0] + f'[[signals]]\nname = "s"\n{entry}\n'
    (tmp_path / "spin.toml").write_text(text)
    assert main(["check", "spin.toml"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "spin.toml:" in err and words in err, err
