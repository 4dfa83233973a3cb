"""Linear analysis a controls engineer finishes with (CONTRACT 14): a bare model linearised about
its actuators (B = the inverse mass matrix for torque motors), equilibria solved rather than waited
for (an upright pendulum: the upright state, root +sqrt(g/l)), trimmed torques (an arm held
level: gear·ctrl = m g l), transfer functions equal to python-control's and scipy's, singular
values of a decoupled pair, and bad input as one line."""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import pytest

from mjrig.linear.analysis import analyse
from mjrig.runtime.errors import ConfigError
from mjrig.scenario.parse import load_scenario
from mjrig.scenario.targets import load_target

G = 9.81

PENDULUM = """<mujoco model="pendulum">
  <option timestep="0.001" gravity="0 0 -{g}"/>
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 {l}" size="0.002" mass="0"/>
      <geom type="sphere" pos="0 0 {l}" size="0.001" mass="{m}"/>
    </body>
  </worldbody>
  {actuator}
</mujoco>
"""
"""A point mass ``m`` (kg) on a massless rod of ``l`` (m), upright at hinge = 0."""

ARM = """<mujoco model="arm2">
  <option timestep="0.002" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.03" mass="1"/>
      <body name="fore" pos="0.5 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0" damping="0.1"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.025" mass="0.5"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="shoulder_motor" joint="shoulder" gear="{gear}" ctrlrange="-{limit} {limit}" ctrllimited="true"/>
    <motor name="elbow_motor" joint="elbow" gear="1" ctrlrange="-10 10" ctrllimited="true"/>
  </actuator>
</mujoco>
"""
"""A two-link arm held level (both links along x) by two motors; the shoulder's ``gear`` and
``limit`` (its ctrlrange) as given."""


def _pendulum(folder: Path, *, m: float = 1.0, l: float = 1.0, start: float = 0.05, actuator: str = "") -> Path:
    (folder / "pend.xml").write_text(PENDULUM.format(g=G, m=m, l=l, actuator=actuator), encoding="utf-8")
    path = folder / "pend.toml"
    path.write_text(f'model = "pend.xml"\n\n[initial]\nqpos = {{ hinge = {start} }}\n', encoding="utf-8")
    return path


def _arm(folder: Path, *, gear: float = 1.0, limit: float = 20.0) -> Path:
    path = folder / "arm2.xml"
    path.write_text(ARM.format(gear=gear, limit=limit), encoding="utf-8")
    return path


def test_a_bare_arm_linearises_about_both_motors():
    """Inputs default to the actuators' controls (N·m), outputs to the joints' positions; B's
    velocity rows are M⁻¹ (torque in, acceleration out) at the state."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        sc = load_target(str(_arm(Path(tmp))))
        an = analyse(sc, inputs=None, outputs=None)
    lin = an.linear
    assert lin.inputs == ("Actuators/shoulder_motor:ctrl", "Actuators/elbow_motor:ctrl")
    assert an.input_units == ("N*m", "N*m")
    assert lin.outputs == ("Joints/shoulder:qpos", "Joints/elbow:qpos")
    m, d = an.setup.model, mujoco.MjData(an.setup.model)
    mujoco.mj_forward(m, d)
    full = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, full)
    np.testing.assert_allclose(lin.B[m.nv :, :], np.linalg.inv(full), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(lin.C, np.hstack([np.eye(2), np.zeros((2, 2))]), atol=1e-9)


def test_the_upright_pendulum_is_solved_and_its_root_is_plus_sqrt_g_over_l(tmp_path):
    """Started 0.05 rad from upright: --equilibrium finds upright (residual ~0) where --settle
    could not (it falls), and the real root is +sqrt(g/l) within 1 %."""
    l = 0.8
    an = analyse(load_scenario(_pendulum(tmp_path, l=l)), equilibrium=True)
    assert an.solved is not None and an.solved.residual < 1e-9
    assert abs(an.linear.qpos[0]) < 1e-9
    root = max(np.linalg.eigvals(an.linear.A).real)
    assert root == pytest.approx(math.sqrt(G / l), rel=0.01)
    assert root == pytest.approx(math.sqrt(G / l), rel=1e-4)  # the point mass's, to the rod's 2 mm
    (unstable,) = [mode for mode in an.modes if mode.kind == "unstable"]
    assert 1 / unstable.time_constant_s == pytest.approx(math.sqrt(G / l), rel=1e-4)


@pytest.mark.parametrize("gear", [1.0, 2.5])
def test_a_level_arm_is_held_by_trimmed_torques(tmp_path, gear):
    """The arm level, motors trimmed: gear·ctrl of the shoulder = the whole arm's moment about it
    (m1 g l1/2 + m2 g (l1 + l2/2)), the elbow's = m2 g l2/2; the joints do not move."""
    sc = load_target(str(_arm(tmp_path, gear=gear)))
    an = analyse(sc, trim=True, inputs=(), outputs=())
    ctrl = an.solved.ctrl
    shoulder = 1.0 * G * 0.25 + 0.5 * G * (0.5 + 0.2)
    elbow = 0.5 * G * 0.2
    assert abs(gear * ctrl[0]) == pytest.approx(shoulder, rel=1e-6) and abs(ctrl[1]) == pytest.approx(elbow, rel=1e-6)
    np.testing.assert_allclose(an.linear.qpos, [0.0, 0.0], atol=1e-12)
    assert an.ctrl.tolist() == ctrl.tolist()


def test_a_motor_too_weak_to_hold_the_point_is_one_line_naming_the_joint(tmp_path):
    sc = load_target(str(_arm(tmp_path, limit=3.0)))  # the shoulder needs 5.89 N·m
    with pytest.raises(ConfigError) as err:
        analyse(sc, trim=True, inputs=(), outputs=())
    line = str(err.value)
    assert "\n" not in line and "--trim-inputs" in line and "joint 'shoulder'" in line and "N·m missing" in line, line


def test_bad_linear_input_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match="the model has no actuators to hold the point with"):
        analyse(load_scenario(_pendulum(tmp_path)), trim=True)
    arm = load_target(str(_arm(tmp_path)))
    with pytest.raises(ConfigError) as err:
        analyse(arm, inputs=("Actuators/wrist:ctrl",), outputs=())
    assert "no actuator 'wrist' (its actuators: shoulder_motor, elbow_motor)" in str(err.value)
    with pytest.raises(ConfigError, match="neither a param .* nor an actuator.s control"):
        analyse(arm, inputs=("wrist",), outputs=())
    (tmp_path / "free.xml").write_text(
        '<mujoco><worldbody><body name="ball"><freejoint name="fly"/><geom size="0.1" mass="1"/></body>'
        "</worldbody></mujoco>"
    )
    with pytest.raises(ConfigError) as err:
        analyse(load_target(str(tmp_path / "free.xml")), equilibrium=True, inputs=(), outputs=())
    line = str(err.value)
    assert "no equilibrium near the operating point" in line and "-9.81" in line and "'fly'" in line, line


@pytest.mark.filterwarnings("ignore:Badly conditioned filter coefficients")  # scipy's own, for the reference
def test_transfer_functions_equal_python_controls_and_scipys(tmp_path):
    """Each input/output pair of the level arm: num and den as control.ss2tf gives them for that
    pair, poles and zeros as scipy's ss2zpk."""
    import control
    from scipy import signal

    from mjrig.linear.transfer import transfer_functions

    an = analyse(load_target(str(_arm(tmp_path))), trim=True, inputs=None, outputs=None)
    lin = an.linear
    tfs = transfer_functions(lin)
    assert len(tfs) == 4
    for entry in tfs:
        j, i = lin.inputs.index(entry["input"]), lin.outputs.index(entry["output"])
        ref = control.ss2tf(control.ss(lin.A, lin.B[:, [j]], lin.C[[i]], lin.D[[i]][:, [j]]))
        num, den = np.trim_zeros(np.asarray(entry["num"]), "f"), np.asarray(entry["den"])
        np.testing.assert_allclose(
            np.polyval(num, 2.0j) / np.polyval(den, 2.0j), ref(2.0j), rtol=1e-9
        )  # the same rational function, however the leading zeros are written
        np.testing.assert_allclose(den / den[0], np.asarray(ref.den[0][0]) / ref.den[0][0][0], atol=1e-9)
        z, p, k = signal.ss2zpk(lin.A, lin.B, lin.C[[i]], lin.D[[i]], input=j)
        np.testing.assert_allclose(
            np.sort_complex(np.asarray(entry["poles"], float)), np.sort_complex(p.real), atol=1e-9
        )
        assert entry["gain"] == pytest.approx(float(np.real(k)), rel=1e-9)


def test_the_singular_values_of_two_decoupled_sliders_are_their_two_gains(tmp_path):
    """Two sliders on springs of their own, each pushed by its own motor: H is diagonal, so its
    singular values at each frequency are |H11| and |H22|, largest first."""
    from mjrig.linear.analysis import bode
    from mjrig.linear.transfer import singular_values

    (tmp_path / "two.xml").write_text(
        """<mujoco><option timestep="0.001" gravity="0 0 0"/><worldbody>
<body name="a"><joint name="xa" type="slide" axis="1 0 0" stiffness="100" damping="1"/><geom size="0.05" mass="1"/></body>
<body name="b" pos="0 1 0"><joint name="xb" type="slide" axis="1 0 0" stiffness="400" damping="2"/><geom size="0.05" mass="2"/></body>
</worldbody><actuator><motor name="fa" joint="xa"/><motor name="fb" joint="xb"/></actuator></mujoco>"""
    )
    sc = load_target(str(tmp_path / "two.xml"))
    an = analyse(sc, inputs=None, outputs=None)
    sigma = singular_values(an)
    h11 = np.asarray(bode(an, sc, where="--input", pair=(0, 0))["magnitude"])
    h22 = np.asarray(bode(an, sc, where="--input", pair=(1, 1))["magnitude"])
    want = np.sort(np.column_stack([h11, h22]), axis=1)[:, ::-1]
    np.testing.assert_allclose(np.asarray(sigma["values"]), want, rtol=1e-9)
