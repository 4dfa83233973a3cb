"""Joint loads against closed-form physics: Coulomb, viscous and Stribeck friction on a slide,
a constant torque on a hinge, and a pin whose friction follows the load it carries."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from mjrig.runtime import RuntimeManager, SignalManager
from mjrig.runtime.forces.joint_loads import JointFriction, JointTorque, friction_force

INTEGRATORS = ("Euler", "implicitfast", "RK4")

SLIDE = """<mujoco><option timestep="{dt}" gravity="0 0 0"/><worldbody>
  <body name="block"><joint name="rail" type="slide" axis="1 0 0"/>
    <geom type="box" size=".05 .05 .05" mass="{m}" contype="0" conaffinity="0"/></body>
</worldbody></mujoco>"""

HINGE = """<mujoco><option timestep="1e-3" gravity="0 0 -9.81"/><worldbody>
  <body name="wheel"><joint name="axle" type="hinge" axis="0 0 1"/>
    <inertial pos="0 0 0" mass="2" diaginertia="0.1 0.2 0.3"/></body>
  <body name="bob" pos="1 0 0"><joint name="ball" type="ball"/><geom size=".05" mass="1"/></body>
</worldbody></mujoco>"""


def _slide(
    rig, path: str, integrator: str, load: JointFriction, *, m: float = 2.0, dt: float = 1e-4, v0: float = 1.0
) -> tuple[RuntimeManager, mujoco.MjModel, mujoco.MjData]:
    rm = RuntimeManager(loads=[load], playback_speed=0)
    model, data = rig.build(rm, SLIDE.format(dt=dt, m=m), path, integrator=integrator)
    data.qvel[0] = v0
    return rm, model, data


@pytest.mark.parametrize("integrator", INTEGRATORS)
@pytest.mark.parametrize("path", ["native", "self"])
def test_coulomb_friction_stops_the_block_where_and_when_closed_form_says(rig, path, integrator):
    m, v0, fc = 2.0, 1.0, 1.0
    rm, model, data = _slide(
        rig, path, integrator, JointFriction(name="f", joint="rail", coulomb=fc, coulomb_velocity=1e-4), m=m, v0=v0
    )
    stopped: list[float] = []
    rig.run(
        rm, model, data, 2.3, each=lambda: stopped.append(data.time) if not stopped and data.qvel[0] < 1e-3 else None
    )
    assert data.qpos[0] == pytest.approx(m * v0**2 / (2 * fc), rel=0.01)
    assert stopped and stopped[0] == pytest.approx(m * v0 / fc, rel=0.01)
    assert abs(data.qvel[0]) < 1e-4  # it stays stopped


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_viscous_friction_decays_exponentially(rig, integrator):
    m, b, v0 = 2.0, 0.5, 1.0
    rm, model, data = _slide(
        rig, "native", integrator, JointFriction(name="f", joint="rail", coulomb=0.0, viscous=b), m=m, dt=1e-3, v0=v0
    )
    for t in (0.5, 1.0, 2.0, 4.0):
        rig.run(rm, model, data, t)
        assert data.qvel[0] == pytest.approx(v0 * math.exp(-b * data.time / m), rel=0.01), t
    assert rm.loads[0].value == pytest.approx(-b * data.qvel[0], rel=0.01)


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_stribeck_curve_at_constant_speeds(rig, integrator):
    """A block so heavy that its speed stays constant: the friction recorded is the contract's curve."""
    law = dict(coulomb=0.3, breakaway=0.5, stribeck_velocity=0.05, viscous=0.2, coulomb_velocity=0.002)
    for v in (-0.3, -0.04, 0.001, 0.01, 0.05, 0.1, 0.5):
        rm, model, data = _slide(
            rig, "native", integrator, JointFriction(name="f", joint="rail", **law), m=1e6, dt=1e-3, v0=v
        )
        rig.run(rm, model, data, 0.01)
        expected = -((0.3 + 0.2 * math.exp(-((v / 0.05) ** 2))) * math.tanh(v / 0.002) + 0.2 * v)
        assert rm.loads[0].value == pytest.approx(expected, rel=0.01), v
        assert friction_force(v, **law) == pytest.approx(expected, rel=1e-12)


def test_friction_value_is_recorded(rig, tmp_path):
    out = tmp_path / "f.parquet"
    rm = RuntimeManager(
        loads=[JointFriction(name="brake", joint="rail", coulomb=0.0, viscous=0.5)],
        signal_manager=SignalManager(out),
        playback_speed=0,
    )
    model, data = rig.build(rm, SLIDE.format(dt=1e-3, m=2.0), "native")
    data.qvel[0] = 1.0
    with rm:
        rig.run(rm, model, data, 0.5)
    df = rig.read(out)
    assert "Loads/brake:fx" not in df.columns  # a joint load has no point: only its generalized force
    np.testing.assert_allclose(df["Loads/brake:value"].to_numpy(), -0.5 * df["Joints/rail:qvel"].to_numpy(), rtol=1e-9)


@pytest.mark.parametrize("integrator", INTEGRATORS)
@pytest.mark.parametrize("path", ["native", "self"])
def test_constant_joint_torque_on_a_hinge(rig, path, integrator):
    tau, inertia = 0.6, 0.3
    rm = RuntimeManager(loads=[JointTorque(name="motor", joint="axle", magnitude=tau)], playback_speed=0)
    model, data = rig.build(rm, HINGE, path, integrator=integrator)
    model.opt.gravity[:] = 0.0
    rig.run(rm, model, data, 1.0)
    assert data.qpos[0] == pytest.approx(tau * data.time**2 / (2 * inertia), rel=0.01)
    assert rm.loads[0].value == tau
    assert data.qfrc_applied[0] == tau


def test_joint_torque_adds_to_other_loads_and_to_the_mouse(rig):
    rm = RuntimeManager(
        loads=[JointTorque(name="a", joint="axle", magnitude=0.2), JointTorque(name="b", joint="axle", magnitude=0.1)],
        playback_speed=0,
    )
    model, data = rig.build(rm, HINGE, "native")
    data.xfrc_applied[1, 5] = 0.3  # a mouse torque about z on the wheel
    rm.step(model, data)
    assert data.qacc[0] == pytest.approx(0.6 / 0.3, rel=1e-9)


def test_joint_loads_refuse_ball_joints(rig):
    from mjrig.runtime.errors import ConfigError

    rm = RuntimeManager(loads=[JointTorque(name="t", joint="ball", magnitude=1.0)], playback_speed=0)
    model, data = rig.build(rm, HINGE, "native")
    with pytest.raises(ConfigError, match="joint 'ball' is a ball joint"):
        rm.step(model, data)


PENDULUM = """<mujoco><option timestep="1e-3"/><worldbody>
  <body name="link"><joint name="pin" type="hinge" axis="0 0 1"/>
    <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.01" mass="1.5"/></body>
</worldbody></mujoco>"""


def test_pin_friction_follows_the_load_of_a_pin_at_rest(rig):
    """A horizontal link on a vertical pin: the pin carries its weight and gravity gives no torque."""
    mu, r, m = 0.3, 0.02, 1.5
    rm = RuntimeManager(
        loads=[
            JointFriction(name="f", joint="pin", mu=mu, pin_radius=r),
            JointTorque(name="push", joint="pin", magnitude=0.5 * mu * r * m * 9.81),
        ],
        playback_speed=0,
    )
    model, data = rig.build(rm, PENDULUM, "native")
    rig.run(rm, model, data, 0.5)
    f = rm.loads[0]
    assert f.pin_load == pytest.approx(m * 9.81, rel=0.01)
    assert f.coulomb_level(data.time) == pytest.approx(mu * r * m * 9.81, rel=0.01)
    # Pushed at half its Coulomb level, the pin holds: friction balances the push, nothing moves.
    assert f.value == pytest.approx(-rm.loads[1].value, rel=0.01)
    assert abs(data.qpos[0]) < 1e-3


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_spinning_disk_on_a_loaded_pin_stops_as_closed_form_says(rig, integrator):
    """A wheel on a vertical axle: the pin carries m·g, so the friction torque is mu·r·m·g."""
    mu, r, m, inertia, w0 = 0.5, 0.1, 2.0, 0.3, 2.0
    rm = RuntimeManager(
        loads=[JointFriction(name="f", joint="axle", mu=mu, pin_radius=r, coulomb_velocity=1e-2)], playback_speed=0
    )
    model, data = rig.build(rm, HINGE.replace('timestep="1e-3"', 'timestep="1e-4"'), "native", integrator=integrator)
    data.qvel[0] = w0
    rig.run(rm, model, data, 0.6)
    alpha = mu * r * m * 9.81 / inertia
    assert data.qpos[0] == pytest.approx(w0**2 / (2 * alpha), rel=0.01)
    assert rm.loads[0].pin_load == pytest.approx(m * 9.81, rel=0.01)
