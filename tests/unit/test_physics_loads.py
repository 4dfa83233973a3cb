"""Forces, torques, frames and reactions against Newton's laws (closed form).

Bodies have known masses and inertias (spheres, boxes, explicit <inertial>), gravity is off
and contacts are disabled, so each expected acceleration is F/m or τ/I computed by hand.
"""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import pytest

from mjrig.runtime import (
    GeneralLoad,
    PointToPointForce,
    RuntimeManager,
    ScalarForce,
    ScalarTorque,
    SignalManager,
    VectorForce,
    VectorTorque,
)
from tests import mjcf

S2 = math.sqrt(0.5)


def _rotz(deg: float) -> np.ndarray:
    a = math.radians(deg)
    return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])


def _roty(deg: float) -> np.ndarray:
    a = math.radians(deg)
    return np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])


# --- equal and opposite: two free bodies joined by a spring --------------------------------------

PAIR_XML = mjcf.model(
    mjcf.free_ball("a", joint="ja", mass="{ma}", site="sa", site_pos="{sa}"),
    mjcf.free_ball("b", pos="0.3 0.1 -0.05", joint="jb", mass="{mb}", site="sb", site_pos="{sb}"),
    option='timestep="5e-4" gravity="0 0 0"',
)
MA, MB = 1.0, 3.0


@pytest.mark.parametrize("integrator", ["Euler", "RK4"])
def test_spring_between_free_bodies_conserves_momentum(rig, path: str, integrator: str) -> None:
    # Sites off the centres: the spring also spins the bodies; linear momentum must not care.
    xml = PAIR_XML.format(ma=MA, mb=MB, sa="0.02 0.03 0", sb="-0.01 0 0.04")
    load = PointToPointForce.ideal_spring("link", "sa", "sb", stiffness=300.0, damping=2.0, rest_length=0.2)
    rm = RuntimeManager(loads=[load], playback_speed=0)
    model, data = rig.build(rm, xml, path, integrator=integrator)
    data.qvel[0:3] = [0.1, 0.0, 0.2]
    data.qvel[6:9] = [-0.3, 0.05, 0.0]
    p0 = MA * data.qvel[0:3] + MB * data.qvel[6:9]
    total = float(sum(model.body_mass))
    assert total == pytest.approx(MA + MB)
    worst = [0.0]

    def check() -> None:
        mujoco.mj_subtreeVel(model, data)
        p = total * data.subtree_linvel[0]
        worst[0] = max(worst[0], float(np.linalg.norm(p - p0) / np.linalg.norm(p0)))

    with rm:
        rig.run(rm, model, data, 0.5, each=check)
    assert worst[0] < 1e-6
    # ... and the spring did act: each body's velocity changed by far more than that.
    assert np.linalg.norm(data.qvel[0:3] - [0.1, 0.0, 0.2]) > 0.05
    assert np.linalg.norm(data.qvel[6:9] - [-0.3, 0.05, 0.0]) > 0.05 / 3


def test_recorded_force_is_minus_force_on_other_body(rig, path: str, tmp_path: Path) -> None:
    """Loads/link:fx..fz equals k(d−L)·û (closed form, from recorded positions) and −m_b·a_b."""
    k, rest = 300.0, 0.2
    xml = PAIR_XML.format(ma=MA, mb=MB, sa="0 0 0", sb="0 0 0")
    out = tmp_path / "pair.parquet"
    load = PointToPointForce.ideal_spring("link", "sa", "sb", stiffness=k, damping=0.0, rest_length=rest)
    rm = RuntimeManager(
        loads=[load], playback_speed=0, signal_manager=SignalManager(out, groups=("bodies", "joints", "loads"))
    )
    model, data = rig.build(rm, xml, path, integrator="Euler")
    data.qvel[0:3] = [0.1, 0.0, 0.2]
    on_b, on_a = [], []
    with rm:
        rig.run(
            rm,
            model,
            data,
            0.2,
            each=lambda: (on_b.append(MB * data.qacc[6:9].copy()), on_a.append(MA * data.qacc[0:3].copy())),
        )
    df = rig.read(out)
    assert df.height == len(on_b)
    f = df.select([f"Loads/link:{a}" for a in ("fx", "fy", "fz")]).to_numpy()
    pa = df.select([f"Bodies/a:{a}" for a in "xyz"]).to_numpy()
    pb = df.select([f"Bodies/b:{a}" for a in "xyz"]).to_numpy()
    d = np.linalg.norm(pb - pa, axis=1)
    expected = (k * (d - rest) / d)[:, None] * (pb - pa)  # stretched: pulls `a` toward `b`
    assert np.max(np.abs(d - 0.2)) > 0.05  # the spring is well away from rest: real forces
    np.testing.assert_allclose(f, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(df["Loads/link:length"].to_numpy(), d, rtol=1e-12)
    va = df.select([f"Joints/ja:{a}" for a in ("vx", "vy", "vz")]).to_numpy()
    vb = df.select([f"Joints/jb:{a}" for a in ("vx", "vy", "vz")]).to_numpy()
    rate = np.einsum("ij,ij->i", (pb - pa) / d[:, None], vb - va)  # d/dt |pb − pa|
    assert np.max(np.abs(rate)) > 0.1
    np.testing.assert_allclose(df["Loads/link:velocity"].to_numpy(), rate, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(f, -np.array(on_b), rtol=1e-9, atol=1e-9)  # reaction on b
    np.testing.assert_allclose(f, np.array(on_a), rtol=1e-9, atol=1e-9)  # action on a
    assert np.allclose(df.select([f"Loads/link:{a}" for a in ("tx", "ty", "tz")]).to_numpy(), 0.0)


# --- a scalar force along a rotated site axis ----------------------------------------------------

FREE_SPHERE_XML = """
<mujoco>
  <option timestep="1e-3" gravity="0 0 0" integrator="Euler"/>
  <worldbody>
    <body name="ball" pos="0 0 1">
      <freejoint name="free"/>
      <geom type="sphere" size="{r}" mass="{m}" contype="0" conaffinity="0"/>
      <site name="s" pos="0 0 0" {orient}/>
    </body>
  </worldbody>
</mujoco>
"""
# The site's x-axis for each orientation, worked out by hand.
ORIENTS = {
    "euler-z45": ('euler="0 0 45"', np.array([S2, S2, 0.0])),
    "euler-y-90": ('euler="0 -90 0"', np.array([0.0, 0.0, 1.0])),
    "quat-z90": ('quat="0.7071067811865476 0 0 0.7071067811865476"', np.array([0.0, 1.0, 0.0])),
    "quat-z60": (f'quat="{math.cos(math.pi / 6)} 0 0 {math.sin(math.pi / 6)}"', np.array([0.5, math.sqrt(3) / 2, 0.0])),
}


@pytest.mark.parametrize("orient", sorted(ORIENTS))
def test_scalar_force_along_rotated_site_axis(rig, path: str, orient: str) -> None:
    attr, axis = ORIENTS[orient]
    m, F, T = 2.0, 3.0, 0.5
    rm = RuntimeManager(loads=[ScalarForce(name="push", action_site="s", magnitude=F)], playback_speed=0)
    model, data = rig.build(rm, FREE_SPHERE_XML.format(r=0.1, m=m, orient=attr), path)
    with rm:
        rm.step(model, data)
        np.testing.assert_allclose(data.qacc[0:3], F / m * axis, atol=1e-12)
        np.testing.assert_allclose(data.qacc[3:6], 0.0, atol=1e-12)
        np.testing.assert_allclose(rig.wrench(rm, "push")[:3], F * axis, atol=1e-12)
        rig.run(rm, model, data, T)
    np.testing.assert_allclose(data.qvel[0:3], F / m * T * axis, rtol=1e-9, atol=1e-12)


# --- a torque about a site axis --------------------------------------------------------------


@pytest.mark.parametrize("orient", sorted(ORIENTS))
def test_scalar_torque_on_sphere(rig, path: str, orient: str) -> None:
    attr, axis = ORIENTS[orient]
    m, r, tau = 2.0, 0.1, 0.04
    inertia = 0.4 * m * r * r  # solid sphere: isotropic, so no gyroscopic coupling
    rm = RuntimeManager(loads=[ScalarTorque(name="twist", action_site="s", magnitude=tau)], playback_speed=0)
    model, data = rig.build(rm, FREE_SPHERE_XML.format(r=r, m=m, orient=attr), path)
    assert model.body_inertia[1] == pytest.approx([inertia] * 3, rel=1e-9)
    with rm:
        rm.step(model, data)
        # body frame = world frame at the start: free-joint angular qacc is in the body frame
        np.testing.assert_allclose(data.qacc[3:6], tau / inertia * axis, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(data.qacc[0:3], 0.0, atol=1e-12)
        np.testing.assert_allclose(rig.wrench(rm, "twist")[3:], tau * axis, atol=1e-12)
        rig.run(rm, model, data, 0.3)
    # The site (and its axis) turns with the body about that same axis: ω = τ/I·t stays along it.
    mujoco.mj_forward(model, data)
    omega_world = data.xmat[1].reshape(3, 3) @ data.qvel[3:6]
    np.testing.assert_allclose(omega_world, tau / inertia * 0.3 * axis, rtol=1e-6, atol=1e-9)


HINGE_BOX_XML = """
<mujoco>
  <option timestep="1e-3" gravity="0 0 0" integrator="Euler"/>
  <worldbody>
    <body name="plate" pos="0 0 0">
      <joint name="spin" type="hinge" axis="0 0 1"/>
      <geom type="box" size="{a} {b} {c}" mass="{m}" contype="0" conaffinity="0"/>
      <site name="top" pos="0 0 {c}" euler="0 -90 0"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_scalar_torque_on_hinged_box(rig, path: str) -> None:
    a, b, c, m, tau = 0.3, 0.1, 0.02, 1.5, 0.2
    izz = m * (a * a + b * b) / 3.0  # box with half-sizes a, b about its centre z-axis
    rm = RuntimeManager(loads=[ScalarTorque(name="twist", action_site="top", magnitude=tau)], playback_speed=0)
    model, data = rig.build(rm, HINGE_BOX_XML.format(a=a, b=b, c=c, m=m), path)
    with rm:
        rm.step(model, data)
        assert data.qacc[0] == pytest.approx(tau / izz, rel=1e-9)
        rig.run(rm, model, data, 0.5)
    assert data.qvel[0] == pytest.approx(tau / izz * 0.5, rel=1e-9)
    # θ = ½αT² within 1 %; exactly ½αT(T+dt) for semi-implicit Euler's sum of steps.
    assert data.qpos[0] == pytest.approx(0.5 * tau / izz * 0.5**2, rel=1e-2)
    assert data.qpos[0] == pytest.approx(0.5 * tau / izz * 0.5 * (0.5 + model.opt.timestep), rel=1e-9)


# --- a force at a body offset: the lever torque ---------------------------------------------------

ARM_XML = """
<mujoco>
  <option timestep="1e-4" gravity="0 0 0" integrator="Euler"/>
  <worldbody>
    <body name="arm" pos="0 0 0">
      <joint name="pivot" type="hinge" axis="0 0 1"/>
      <geom type="box" pos="{h} 0 0" size="{h} {w} {w}" mass="{m}" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("lever", [0.5, 0.2, -0.3])
def test_force_at_body_offset_gives_lever_torque(rig, path: str, lever: float) -> None:
    h, w, m, F = 0.25, 0.01, 1.0, 2.0
    i_hinge = m * (h * h + w * w) / 3.0 + m * h * h  # box about its centre + parallel axis
    load = VectorForce(name="tap", action_site=f"body:arm@{lever},0,0", vector=[0.0, F, 0.0])
    rm = RuntimeManager(loads=[load], playback_speed=0)
    model, data = rig.build(rm, ARM_XML.format(h=h, w=w, m=m), path)
    with rm:
        rm.step(model, data)
    assert data.qacc[0] == pytest.approx(F * lever / i_hinge, rel=1e-9)


# --- frames and reactions ---------------------------------------------------------------------

FRAME_XML = mjcf.model(
    mjcf.free_ball("ball", pos="0 0 1", joint="free", size=0.1, mass="{m}", site="s"),
    option='timestep="1e-3" gravity="0 0 0" integrator="Euler"',
    world='    <site name="frame" pos="0.5 0 0" euler="0 0 90"/>\n    <site name="tilted" pos="0 0 0" euler="0 30 45"/>',
)


def test_vector_force_in_site_frame(rig, path: str) -> None:
    m, local = 2.0, np.array([1.5, 0.0, 0.5])
    expected = _rotz(90) @ local  # (0, 1.5, 0.5)
    assert np.allclose(expected, [0.0, 1.5, 0.5])
    load = VectorForce(name="f", action_site="s", vector=list(local), rel_to_site="frame")
    rm = RuntimeManager(loads=[load], playback_speed=0)
    model, data = rig.build(rm, FRAME_XML.format(m=m), path)
    with rm:
        rm.step(model, data)
        np.testing.assert_allclose(rig.wrench(rm, "f")[:3], expected, atol=1e-12)
        np.testing.assert_allclose(data.qacc[0:3], expected / m, atol=1e-12)


def test_vector_force_and_torque_in_tilted_frame(rig, path: str) -> None:
    """MJCF euler="0 30 45" is intrinsic x-y-z: R = Ry(30)·Rz(45)."""
    m, r = 2.0, 0.1
    inertia = 0.4 * m * r * r
    rot = _roty(30) @ _rotz(45)
    f_local, t_local = np.array([0.0, 2.0, 0.0]), np.array([0.01, 0.0, 0.0])
    loads = [
        VectorForce(name="f", action_site="s", vector=list(f_local), rel_to_site="tilted"),
        VectorTorque(name="t", action_site="s", vector=list(t_local), rel_to_site="tilted"),
    ]
    rm = RuntimeManager(loads=loads, playback_speed=0)
    model, data = rig.build(rm, FRAME_XML.format(m=m), path)
    with rm:
        rm.step(model, data)
        np.testing.assert_allclose(rig.wrench(rm, "f")[:3], rot @ f_local, atol=1e-12)
        np.testing.assert_allclose(rig.wrench(rm, "t")[3:], rot @ t_local, atol=1e-12)
        np.testing.assert_allclose(data.qacc[0:3], rot @ f_local / m, atol=1e-12)
        np.testing.assert_allclose(data.qacc[3:6], rot @ t_local / inertia, rtol=1e-9, atol=1e-12)


REACTION_XML = mjcf.model(
    mjcf.free_ball("a", size=0.1, mass="{ma}", site="sa"),
    mjcf.free_ball("b", pos="1 0.5 0", size="{rb}", mass="{mb}"),
    option='timestep="1e-3" gravity="0 0 0" integrator="Euler"',
)


def test_general_load_reaction_on_xtion_body(rig, path: str) -> None:
    ma, mb, rb = 1.0, 4.0, 0.2
    ib = 0.4 * mb * rb * rb
    F, T = np.array([1.0, -2.0, 0.5]), np.array([0.0, 0.03, -0.02])
    load = GeneralLoad(name="g", action_site="sa", force=list(F), torque=list(T), xtion_body="body:b")
    rm = RuntimeManager(loads=[load], playback_speed=0)
    model, data = rig.build(rm, REACTION_XML.format(ma=ma, mb=mb, rb=rb), path)
    with rm:
        rm.step(model, data)
    np.testing.assert_allclose(data.qacc[0:3], F / ma, atol=1e-12)
    np.testing.assert_allclose(data.qacc[6:9], -F / mb, atol=1e-12)  # reaction: −F ...
    np.testing.assert_allclose(data.qacc[9:12], -T / ib, rtol=1e-9, atol=1e-12)  # ... and −T
    np.testing.assert_allclose(data.qfrc_applied[0:3], -data.qfrc_applied[6:9], atol=1e-12)


def test_scalar_force_reaction_on_xtion_body(rig, path: str) -> None:
    ma, mb = 1.0, 4.0
    load = ScalarForce(name="thrust", action_site="sa", magnitude=2.0, xtion_body="body:b")
    rm = RuntimeManager(loads=[load], playback_speed=0)
    model, data = rig.build(rm, REACTION_XML.format(ma=ma, mb=mb, rb=0.2), path)
    with rm:
        rm.step(model, data)
    np.testing.assert_allclose(data.qacc[0:3], [2.0 / ma, 0, 0], atol=1e-12)
    np.testing.assert_allclose(data.qacc[6:9], [-2.0 / mb, 0, 0], atol=1e-12)


def test_vector_force_edit_takes_effect_next_step(rig, path: str) -> None:
    """Load fields are live: assigning a new ``vector`` changes the force from the next step on."""
    m = 2.0
    load = VectorForce(name="f", action_site="s", vector=[1.0, 0.0, 0.0])
    rm = RuntimeManager(loads=[load], playback_speed=0)
    model, data = rig.build(rm, FRAME_XML.format(m=m), path)
    with rm:
        rm.step(model, data)
        np.testing.assert_allclose(data.qacc[0:3], [1.0 / m, 0, 0], atol=1e-12)
        load.vector = [0.0, 0.0, -3.0]
        rm.step(model, data)
        np.testing.assert_allclose(rig.wrench(rm, "f")[:3], [0.0, 0.0, -3.0], atol=1e-12)
        np.testing.assert_allclose(data.qacc[0:3], [0.0, 0.0, -3.0 / m], atol=1e-12)


def test_vector_torque_edit_takes_effect_next_step(rig, path: str) -> None:
    m, r = 2.0, 0.1
    inertia = 0.4 * m * r * r
    load = VectorTorque(name="t", action_site="s", vector=[0.0, 0.0, 0.01])
    rm = RuntimeManager(loads=[load], playback_speed=0)
    model, data = rig.build(rm, FRAME_XML.format(m=m), path)
    with rm:
        rm.step(model, data)
        np.testing.assert_allclose(data.qacc[3:6], [0, 0, 0.01 / inertia], rtol=1e-9)
        load.vector = [0.02, 0.0, 0.0]
        rm.step(model, data)
        np.testing.assert_allclose(rig.wrench(rm, "t")[3:], [0.02, 0.0, 0.0], atol=1e-12)
        # qacc is in the body frame, which turned a little about z during the first step; xmat
        # still holds the orientation the step started from (mj_step2 does not redo kinematics)
        alpha_world = data.xmat[1].reshape(3, 3) @ data.qacc[3:6]
        np.testing.assert_allclose(alpha_world, [0.02 / inertia, 0, 0], rtol=1e-9, atol=1e-9)
