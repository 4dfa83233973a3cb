"""Actuator controls and params bound to model fields, against closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mjrig.runtime import NamedValue, RuntimeManager, Step
from mjrig.runtime.controls import Control
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.forces.joint_loads import JointTorque
from mjrig.runtime.model_fields import ModelBinding, parse_model_field

INTEGRATORS = ("Euler", "implicitfast", "RK4")

OSCILLATOR = """<mujoco><option timestep="1e-3" gravity="0 0 0"/><worldbody>
  <body name="block"><joint name="rail" type="slide" axis="1 0 0" stiffness="{k}"/>
    <geom name="box" type="box" size=".05 .05 .05" mass="1" contype="0" conaffinity="0"/></body>
</worldbody></mujoco>"""

ARM = """<mujoco><option timestep="1e-3" gravity="0 0 0"/><worldbody>
  <body name="arm"><joint name="shoulder_joint" type="hinge" axis="0 0 1"/>
    <inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.2"/></body>
</worldbody>
<actuator><motor name="shoulder" joint="shoulder_joint" gear="3" ctrlrange="-1 1" ctrllimited="true"/>
  <motor name="free_motor" joint="shoulder_joint" gear="1"/></actuator></mujoco>"""


def _upward_crossings(ts: np.ndarray, xs: np.ndarray) -> np.ndarray:
    i = np.nonzero((xs[:-1] < 0) & (xs[1:] >= 0))[0]
    return ts[i] - xs[i] * (ts[i + 1] - ts[i]) / (xs[i + 1] - xs[i])


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_a_mass_param_changed_mid_run_changes_the_period(rig, integrator):
    k = 100.0
    mass = NamedValue("mass", 1.0, unit="kg")
    rm = RuntimeManager(bindings=[ModelBinding(mass, field="body:block.mass")], playback_speed=0)
    model, data = rig.build(rm, OSCILLATOR.format(k=k), "native", integrator=integrator)
    data.qpos[0] = 0.1
    inertia0 = model.body_inertia[1].copy()
    ts, xs = [], []
    rig.run(rm, model, data, 3.0, each=lambda: (ts.append(data.time), xs.append(data.qpos[0])))
    mass.value = 4.0  # the binding writes it at the next step boundary
    assert model.body_mass[1] == 1.0
    rig.run(rm, model, data, 9.0, each=lambda: (ts.append(data.time), xs.append(data.qpos[0])))
    assert model.body_mass[1] == 4.0
    np.testing.assert_allclose(model.body_inertia[1], 4.0 * inertia0)  # same radius of gyration
    assert model.body_subtreemass[1] == 4.0  # mj_setConst ran
    cross = _upward_crossings(np.array(ts), np.array(xs))
    before = np.diff(cross[cross < 3.0])
    after = np.diff(cross[cross > 3.0 + 2 * math.pi * math.sqrt(4.0 / k)])
    assert before.mean() == pytest.approx(2 * math.pi * math.sqrt(1.0 / k), rel=0.01)
    assert after.mean() == pytest.approx(2 * math.pi * math.sqrt(4.0 / k), rel=0.01)


def test_every_model_field_path_is_written(rig):
    xml = """<mujoco><worldbody><body name="b"><joint name="j" type="hinge"/><geom name="g" size=".1"/>
      <site name="s"/></body><site name="w" pos="0 0 1"/></worldbody>
      <tendon><spatial name="t"><site site="w"/><site site="s"/></spatial></tendon>
      <actuator><motor name="a" joint="j"/></actuator></mujoco>"""
    values = {
        "body:b.mass": 2.5,
        "joint:j.damping": 0.1,
        "joint:j.stiffness": 3.0,
        "joint:j.frictionloss": 0.2,
        "joint:j.armature": 0.05,
        "geom:g.friction": 0.7,
        "actuator:a.gear": 4.0,
        "tendon:t.stiffness": 30.0,
        "tendon:t.damping": 0.3,
        "opt.timestep": 0.004,
        "opt.gravity_z": -3.0,
    }
    params = {p: NamedValue(f"p{i}", v) for i, (p, v) in enumerate(values.items())}
    rm = RuntimeManager(bindings=[ModelBinding(nv, field=p) for p, nv in params.items()], playback_speed=0)
    model, data = rig.build(rm, xml, "self")
    rm.step(model, data)
    got = [
        model.body_mass[1],
        model.dof_damping[0],
        model.jnt_stiffness[0],
        model.dof_frictionloss[0],
        model.dof_armature[0],
        model.geom_friction[0, 0],
        model.actuator_gear[0, 0],
        model.tendon_stiffness[0],
        model.tendon_damping[0],
        model.opt.timestep,
        model.opt.gravity[2],
    ]
    assert got == pytest.approx(list(values.values()))
    params["opt.gravity_z"].value = -9.0
    assert model.opt.gravity[2] == -3.0  # not mid-step from another thread: at the next step boundary
    rm.step(model, data)
    assert model.opt.gravity[2] == -9.0


@pytest.mark.parametrize(
    "text, message",
    [
        ("body:block.mas", r"unknown body attribute 'mas' in 'body:block.mas' \(closest: mass\)"),
        ("bdy:block.mass", r"starts with one of body:.*\(closest: body\)"),
        ("opt.timestp", r"unknown model field 'opt.timestp' \(closest: opt.timestep"),
        ("joint:.damping", r"must read joint:NAME.ATTRIBUTE"),
    ],
)
def test_bad_model_field_paths_name_the_closest(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_model_field(text)


def test_an_unknown_entity_names_the_closest(rig):
    rm = RuntimeManager(bindings=[ModelBinding(NamedValue("m", 1.0), field="body:blok.mass")], playback_speed=0)
    model, data = rig.build(rm, OSCILLATOR.format(k=1.0), "native")
    with pytest.raises(ConfigError, match=r"unknown body 'blok' \(closest: block"):
        rm.step(model, data)


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_a_controlled_motor_gives_gear_times_ctrl(rig, integrator):
    u = NamedValue("u", 0.7)
    gear = NamedValue("gear", 3.0)
    rm = RuntimeManager(
        controls=[Control("shoulder", value=u), Control("free_motor", value=Step(0.05, 0.0, -0.4))],
        loads=[JointTorque(name="t", joint="shoulder_joint", magnitude=0.1)],
        bindings=[ModelBinding(gear, field="actuator:shoulder.gear")],
        playback_speed=0,
    )
    model, data = rig.build(rm, ARM, "native", integrator=integrator)
    data.xfrc_applied[1, 5] = 0.05  # the mouse: it adds too
    rig.run(rm, model, data, 0.02)
    assert data.ctrl[0] == 0.7 and data.actuator_force[0] == pytest.approx(0.7)
    assert data.qfrc_actuator[0] == pytest.approx(3.0 * 0.7)
    assert data.qacc[0] == pytest.approx((3.0 * 0.7 + 0.1 + 0.05) / 0.2, rel=1e-6)
    gear.value, u.value = 5.0, -0.2
    rig.run(rm, model, data, 0.1)
    assert data.qfrc_actuator[0] == pytest.approx(5.0 * -0.2 - 0.4)


def test_a_control_outside_ctrlrange_is_clamped_with_one_warning(rig):
    warnings: list[str] = []
    u = NamedValue("u", 0.5)
    rm = RuntimeManager(controls=[Control("shoulder", value=u)], on_warning=warnings.append, playback_speed=0)
    model, data = rig.build(rm, ARM, "native")
    rig.run(rm, model, data, 0.01)
    assert warnings == []
    u.value = 3.0
    rig.run(rm, model, data, 0.02)
    u.value = -5.0
    rig.run(rm, model, data, 0.03)
    assert data.ctrl[0] == -1.0 and data.qfrc_actuator[0] == pytest.approx(-3.0)
    assert len(warnings) == 1 and "ctrlrange [-1, 1]" in warnings[0] and "'shoulder'" in warnings[0]


def test_an_unknown_actuator_names_the_closest(rig):
    rm = RuntimeManager(controls=[Control("shouldr", value=1.0)], playback_speed=0)
    model, data = rig.build(rm, ARM, "native")
    with pytest.raises(ConfigError, match=r"unknown actuator 'shouldr' \(closest: shoulder"):
        rm.step(model, data)
