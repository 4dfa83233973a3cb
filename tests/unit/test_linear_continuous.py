"""Continuous-time linearisation (the default): a spring-mass-damper's modes at a 10 ms Euler
step as at 0.1 ms (its discrete step's drift shown beside), A and B to 1e-6 of
[[0, 1], [-k/m, -c/m]] and [0, 1/m], a Bode phase without the step's lag, and rigid-body modes
counted as the null space of MuJoCo's own linearisation (``mjd_transitionFD``) with and without
gravity: a free box with a hinged arm and a hinged wheel, and dm_control's humanoid in the air
(eight, as MuJoCo has).
Each linearisation takes milliseconds (the humanoid's a second)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import mujoco
import numpy as np
import pytest

from mjrig.linear.analysis import analyse
from mjrig.runtime.analysis.modes import NULL, frequencies, oscillatory, response, rigid_count
from mjrig.scenario.parse import load_scenario
from mjrig.scenario.targets import load_target
from tests.unit.test_modes import SPRING, SPRING_XML

K, M, C = 800.0, 2.0, 12.0
"""The spring-mass-damper: 3.183 Hz undamped, damping ratio 0.15."""


def smd(folder: Path, *, dt: float, integrator: str = "Euler") -> Path:
    xml = SPRING_XML.format(c=C, m=M).replace('timestep="0.001"', f'timestep="{dt}" integrator="{integrator}"')
    (folder / "spring.xml").write_text(xml, encoding="utf-8")
    path = folder / "spring.toml"
    path.write_text(SPRING.format(k=K, force='"F"'), encoding="utf-8")
    return path


@pytest.mark.parametrize("dt", [0.01, 0.0001])
def test_a_spring_mass_dampers_mode_does_not_depend_on_the_step(tmp_path, dt):
    """fn = sqrt(k/m)/2π and ζ = c/2sqrt(km) within 0.5 % and 2 % at either step (the step's
    own linearisation at 10 ms: -1.3 % and -1.6 %, outside)."""
    path = smd(tmp_path, dt=dt)
    an = analyse(load_scenario(path), inputs=("F",), outputs=("Joints/x:qpos",))
    (mode,) = an.modes
    fn, zeta = math.sqrt(K / M) / (2 * math.pi), C / (2 * math.sqrt(K * M))
    assert mode.undamped_frequency_hz == pytest.approx(fn, rel=0.005)
    assert mode.damping_ratio == pytest.approx(zeta, rel=0.02)
    lin = an.linear
    assert lin.kind == "continuous"
    np.testing.assert_allclose(lin.A, [[0.0, 1.0], [-K / M, -C / M]], atol=1e-6 * K / M)
    np.testing.assert_allclose(lin.B[:, 0], [0.0, 1.0 / M], atol=1e-6)
    np.testing.assert_allclose(lin.C, [[1.0, 0.0]], atol=1e-9)
    if dt == 0.01:
        (step,) = analyse(load_scenario(path), discrete=True).modes
        assert abs(step.undamped_frequency_hz / fn - 1) > 0.01  # the Euler step's own dynamics drift


def test_the_bode_phase_has_no_lag_of_the_step(tmp_path):
    """At a 10 ms step: the position's response to the force is 1 / (k - m ω² + j c ω) to 1e-6,
    its phase -90° at the undamped frequency (the step's own lags it by about ω dt / 2)."""
    an = analyse(load_scenario(smd(tmp_path, dt=0.01)), inputs=("F",), outputs=("Joints/x:qpos",))
    f = frequencies(an.modes, an.linear.dt)
    w = 2 * np.pi * f
    np.testing.assert_allclose(response(an.linear, f), 1 / (K - M * w**2 + 1j * C * w), rtol=1e-6)
    wn = math.sqrt(K / M)
    at = np.array([wn / (2 * math.pi)])
    assert math.degrees(np.angle(response(an.linear, at)[0])) == pytest.approx(-90.0, abs=1e-4)


ARM_WHEEL = """<mujoco>
  <option timestep="0.002" gravity="0 0 {g}"/>
  <worldbody>
    <body name="box" pos="0 0 2">
      <freejoint name="base"/>
      <geom type="box" size="0.2 0.1 0.1" mass="3" contype="0" conaffinity="0"/>
      <body name="arm" pos="0.2 0 0">
        <joint name="shoulder" type="hinge" axis="0 1 0" damping="0.1"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.5" contype="0" conaffinity="0"/>
      </body>
      <body name="wheel" pos="-0.2 0 0">
        <joint name="spin" type="hinge" axis="1 0 0"/>
        <geom type="cylinder" size="0.08 0.01" euler="0 90 0" mass="0.2" contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _mujocos_rigid_count(model: mujoco.MjModel, data: mujoco.MjData) -> int:
    """The null space's dimension of MuJoCo's own step linearisation (``mjd_transitionFD``): of
    A - I, singular values below NULL times the largest."""
    n = 2 * model.nv + model.na
    a = np.zeros((n, n))
    mujoco.mjd_transitionFD(model, data, 1e-6, True, a, None, None, None)
    sv = np.linalg.svd(a - np.eye(n), compute_uv=False)
    return int(n - np.count_nonzero(sv > NULL * max(1.0, sv[0])))


@pytest.mark.parametrize("g", [0.0, -9.81])
def test_a_free_box_with_an_arm_and_a_wheel_has_eight_rigid_modes(tmp_path, g):
    """In the air, gravity or not, nothing holds the box (6), the arm (falling, nothing turns
    it) or the wheel: eight rigid modes, MuJoCo's own count; the arm's damping makes its
    velocity decay, one mode besides."""
    (tmp_path / "aw.xml").write_text(ARM_WHEEL.format(g=g), encoding="utf-8")
    an = analyse(load_target(str(tmp_path / "aw.xml")))
    rigid = [m for m in an.modes if m.kind == "rigid"]
    assert len(rigid) == rigid_count(an.linear) == 8
    model = an.setup.model
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    assert _mujocos_rigid_count(model, data) == 8
    assert not oscillatory(an.modes) and [m.kind for m in an.modes].count("decaying") == 1


def test_dm_controls_humanoid_in_the_air_has_mujocos_count_of_rigid_modes(tmp_path):
    """Lifted clear of the floor (no contact), with gravity: eight rigid modes, as many as MuJoCo's
    own linearisation has (its free base's six first, and two joints nothing holds in free fall);
    the joints' springs hold the rest."""
    dm_control = pytest.importorskip("dm_control")
    xml = Path(os.path.dirname(dm_control.__file__)) / "suite" / "humanoid.xml"
    sc = load_target(str(xml))
    from mjrig.headless import prepare

    setup = prepare(sc, out=None, record=False)
    model = setup.model
    data = mujoco.MjData(model)
    mujoco.mj_resetData(model, data)
    data.qpos[2] = 3.0  # in the air
    mujoco.mj_forward(model, data)
    assert data.ncon == 0
    state = np.empty(mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_FULLPHYSICS))
    mujoco.mj_getState(model, data, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    an = analyse(sc, state=state)
    mine = [m for m in an.modes if m.kind == "rigid"]
    assert len(mine) == rigid_count(an.linear) == _mujocos_rigid_count(model, data)
    assert len(mine) == 8 and {next(iter(m.shape)) for m in mine[:6]} == {"root"}


def test_the_continuous_a_is_the_limit_of_mujocos_step_linearisation(tmp_path):
    """The free box with its arm and wheel, swinging and spinning under gravity: A equals
    (A_step - I) / dt of MuJoCo's own ``mjd_transitionFD`` at a step of 1e-5 s, to 1e-3 of A's
    largest entry (the orientation's own turning, -[ω×], included)."""
    (tmp_path / "aw.xml").write_text(ARM_WHEEL.format(g=-9.81), encoding="utf-8")
    sc = load_target(str(tmp_path / "aw.xml"))
    from mjrig.headless import prepare

    setup = prepare(sc, out=None, record=False)
    model, data = setup.model, mujoco.MjData(setup.model)
    data.qpos[3:7] = [0.9, 0.1, 0.3, 0.2]
    data.qpos[7], data.qvel[:] = 0.7, np.linspace(-1.0, 1.0, model.nv)
    mujoco.mj_normalizeQuat(model, data.qpos)
    mujoco.mj_forward(model, data)
    state = np.empty(mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_FULLPHYSICS))
    mujoco.mj_getState(model, data, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    mine = analyse(sc, state=state).linear.A
    n = 2 * model.nv
    step = np.zeros((n, n))
    model.opt.timestep = 1e-5
    mujoco.mjd_transitionFD(model, data, 1e-6, True, step, None, None, None)
    np.testing.assert_allclose(mine, (step - np.eye(n)) / 1e-5, atol=1e-3 * np.abs(mine).max())


@pytest.mark.parametrize("compiled", ["1", "0"], ids=["compiled", "python"])
def test_an_acceleration_output_sees_every_load(tmp_path, monkeypatch, compiled):
    """The block's acceleration (an accelerometer) as an output: C = [-k/m, -c/m] and D = 1/m, with the spring
    evaluated in compiled code or in Python (``MJRIG_COMPILED=0``), whose force joins the step
    after MuJoCo's forward pass -- as it does when the rig runs and records qacc."""
    monkeypatch.setenv("MJRIG_COMPILED", compiled)
    path = smd(tmp_path, dt=0.001)
    xml = tmp_path / "spring.xml"
    xml.write_text(
        xml.read_text().replace("</mujoco>", '<sensor><accelerometer name="acc" site="tip"/></sensor></mujoco>')
    )
    an = analyse(load_scenario(path), inputs=("F",), outputs=("Sensors/acc:0",))
    np.testing.assert_allclose(an.linear.C, [[-K / M, -C / M]], rtol=1e-6)
    np.testing.assert_allclose(an.linear.D, [[1.0 / M]], rtol=1e-6)
