"""The rig linearised (``mjrig.runtime.analysis.linearise``, ``modes``) against closed forms: a two-mass
chain (frequencies sqrt(k(3 ∓ √5)/2m), mass-proportional damping), a pendulum about the vertical
and about an equilibrium a joint torque holds, a mass resting inside a preloaded stroke spring's
stroke, dm_control's cart-pole (its unstable mode a positive real root, the free cart a rigid-body
mode), and a chain's frequency response (static gain, first resonance). Frequencies within 0.5 %,
damping ratios within 2 %. Each linearisation takes milliseconds."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

from mjrig.linear.analysis import analyse
from mjrig.runtime.analysis.modes import frequencies, oscillatory, response
from mjrig.runtime.errors import ConfigError
from mjrig.scenario.parse import load_scenario
from tests import mjcf
from tests.rig_toml import spring

G = 9.81

_BLOCK = 'type="box" size="0.05 0.05 0.05" mass="{m}" contype="0" conaffinity="0"'
"""A 10 cm box of ``{m}`` kg (a format field) that touches nothing."""

CHAIN_XML = mjcf.model(
    mjcf.slider("m1", joint="x1", pos="0.5 0 0", damping="{c}", geom=_BLOCK, site="s1"),
    mjcf.slider("m2", joint="x2", pos="1 0 0", damping="{c}", geom=_BLOCK, site="s2"),
    option='timestep="0.0005" gravity="0 0 0"',
    world='    <site name="wall"/>',
)

CHAIN = (
    """model = "chain.xml"

[params]
k = {{ value = {k}, unit = "N/m" }}
F = {{ value = 0.0, unit = "N" }}

"""
    + spring("wall_spring", at="wall", to="s1", stiffness="k", rest_length=0.5)
    + spring("link", at="s1", to="s2", stiffness="k", rest_length=0.5)
    + """
[[loads]]
name = "push"
kind = "force"
at = "s2"
vector = ["F", 0.0, 0.0]
"""
)


def chain(folder: Path, *, k: float = 800.0, m: float = 2.0, alpha: float = 0.2) -> Path:
    """wall -k- m -k- m, each mass damped to ground by alpha * m (mass-proportional damping)."""
    (folder / "chain.xml").write_text(CHAIN_XML.format(m=m, c=alpha * m), encoding="utf-8")
    path = folder / "chain.toml"
    path.write_text(CHAIN.format(k=k), encoding="utf-8")
    return path


def test_a_two_mass_chain_has_its_two_modes(tmp_path):
    k, m, alpha = 800.0, 2.0, 0.2
    an = analyse(load_scenario(chain(tmp_path, k=k, m=m, alpha=alpha)))
    osc = oscillatory(an.modes)
    assert len(osc) == 2 and len(an.modes) == 2 and an.linear.kinks == ()
    golden = (math.sqrt(5) - 1) / 2
    for mode, sign, shape in zip(osc, (-1, 1), ({"x1": golden, "x2": 1.0}, {"x1": 1.0, "x2": -golden})):
        w = math.sqrt(k * (3 + sign * math.sqrt(5)) / (2 * m))
        zeta = alpha / (2 * w)  # C = alpha M: each mode's damping ratio alpha / 2ω
        assert mode.undamped_frequency_hz == pytest.approx(w / (2 * math.pi), rel=0.005)
        assert mode.frequency_hz == pytest.approx(w * math.sqrt(1 - zeta**2) / (2 * math.pi), rel=0.005)
        assert mode.damping_ratio == pytest.approx(zeta, rel=0.02)
        assert mode.shape == pytest.approx(shape, abs=1e-4)  # signs kept, largest 1


def test_the_chains_frequency_response_is_its_closed_form(tmp_path):
    """|H| of x2 to a force on m2: static gain 2/k, the first resonance where (K - ω²M + jωC)⁻¹
    peaks, and the whole curve near it."""
    k, m, alpha = 800.0, 2.0, 0.2
    an = analyse(load_scenario(chain(tmp_path, k=k, m=m, alpha=alpha)), inputs=("F",), outputs=("Joints/x2:qpos",))
    f = frequencies(an.modes, an.linear.dt)
    assert np.all(np.diff(np.log10(f)) <= 0.01 + 1e-12)  # at least 100 points a decade
    assert {mo.frequency_hz for mo in oscillatory(an.modes)} <= set(f)  # each mode's frequency among them
    h = response(an.linear, f)
    K, M, C = np.array([[2 * k, -k], [-k, k]]), m * np.eye(2), alpha * m * np.eye(2)
    exact = np.array([np.linalg.solve(K - (2 * math.pi * x) ** 2 * M + 2j * math.pi * x * C, [0.0, 1.0])[1] for x in f])
    assert abs(response(an.linear, np.array([1e-4]))[0]) == pytest.approx(2 / k, rel=0.02)
    fine = np.linspace(f[0], 2 * oscillatory(an.modes)[0].frequency_hz, 20001)
    peak = fine[
        np.argmax(
            np.abs(
                [np.linalg.solve(K - (2 * math.pi * x) ** 2 * M + 2j * math.pi * x * C, [0.0, 1.0])[1] for x in fine]
            )
        )
    ]
    first = f < 1.5 * oscillatory(an.modes)[0].frequency_hz
    assert f[first][np.argmax(np.abs(h[first]))] == pytest.approx(peak, rel=0.02)
    assert np.abs(h[first]).max() == pytest.approx(np.abs(exact[first]).max(), rel=0.02)
    near = np.abs(f / peak - 1) < 0.3
    np.testing.assert_allclose(np.abs(h[near]), np.abs(exact[near]), rtol=0.02)


PENDULUM_XML = """<mujoco>
  <option timestep="0.0005"/>
  <worldbody>
    <body name="bob">
      <joint name="swing" type="hinge" axis="0 1 0" damping="{c}"/>
      <geom type="sphere" size="0.02" pos="0 0 -{l}" contype="0" conaffinity="0"/>
      <inertial pos="0 0 -{l}" mass="{m}" diaginertia="{ic} {ic} {ic}"/>
    </body>
  </worldbody>
</mujoco>
"""


def pendulum(folder: Path, *, m: float, l: float, ic: float, c: float, torque: float | None = None) -> Path:
    (folder / "pend.xml").write_text(PENDULUM_XML.format(m=m, l=l, ic=ic, c=c), encoding="utf-8")
    text = 'model = "pend.xml"\n\n[simulation]\nduration = 30.0\n'
    if torque is not None:
        text += (
            f'\n[params]\ntau = {{ value = {torque}, unit = "N*m" }}\n\n[[loads]]\nname = "hold"\n'
            'kind = "joint_torque"\njoint = "swing"\nmagnitude = "tau"\n'
        )
    path = folder / "pend.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_pendulum_about_the_vertical(tmp_path):
    m, l, ic, c = 0.5, 0.4, 2e-3, 0.01
    an = analyse(load_scenario(pendulum(tmp_path, m=m, l=l, ic=ic, c=c)))
    (mode,) = an.modes
    i = ic + m * l * l
    assert mode.kind == "oscillatory" and mode.shape == {"swing": 1.0}
    assert mode.undamped_frequency_hz == pytest.approx(math.sqrt(m * G * l / i) / (2 * math.pi), rel=0.005)
    assert mode.damping_ratio == pytest.approx(c / (2 * math.sqrt(m * G * l * i)), rel=0.02)


def test_a_pendulum_about_the_angle_a_joint_torque_holds(tmp_path):
    """τ0 = m g l sin θ0 holds it at θ0 = 40°; about there ω² = m g l cos θ0 / I. Found by
    letting it settle (the joint's damping brings it to rest), and solved (Newton on the
    acceleration, from the vertical): the same angle, closer."""
    m, l, ic, c = 0.5, 0.4, 2e-3, 0.15
    theta0 = math.radians(40.0)
    path = pendulum(tmp_path, m=m, l=l, ic=ic, c=c, torque=m * G * l * math.sin(theta0))
    an = analyse(load_scenario(path), settle=True)
    assert an.settled_after is not None and 0 < an.settled_after < 30.0
    assert abs(an.linear.qpos[0]) == pytest.approx(theta0, rel=1e-3)
    solved = analyse(load_scenario(path), equilibrium=True)
    assert solved.solved is not None and solved.settled_after is None and solved.solved.residual < 1e-9
    assert abs(solved.linear.qpos[0]) == pytest.approx(theta0, rel=1e-9)
    (mode,) = an.modes
    i = ic + m * l * l
    kt = m * G * l * math.cos(theta0)
    assert mode.undamped_frequency_hz == pytest.approx(math.sqrt(kt / i) / (2 * math.pi), rel=0.005)
    assert mode.damping_ratio == pytest.approx(c / (2 * math.sqrt(kt * i)), rel=0.02)
    # about the vertical instead (its initial state), the frequency is the untilted one
    upright = oscillatory(analyse(load_scenario(tmp_path / "pend.toml")).modes)[0]
    assert upright.undamped_frequency_hz == pytest.approx(math.sqrt(m * G * l / i) / (2 * math.pi), rel=0.005)


def test_a_pendulum_that_does_not_settle_is_one_line(tmp_path):
    path = pendulum(tmp_path, m=0.5, l=0.4, ic=2e-3, c=0.0, torque=0.5)
    with pytest.raises(ConfigError) as err:
        analyse(load_scenario(path), settle=True)
    line = str(err.value)
    assert "\n" not in line and "--settle: the rig did not come to rest within 30 s" in line and "'swing'" in line, line


JOINTS_XML = """<mujoco>
  <option timestep="0.0005"/>
  <worldbody>
    <body name="bob">
      <joint name="ball" type="ball" damping="{c}"/>
      <inertial pos="0 0 -{l}" mass="{m}" diaginertia="{ic} {ic} {ic}"/>
    </body>
    <body name="float" pos="1 0 1">
      <freejoint name="free"/>
      <geom type="box" size="0.1 0.1 0.1" mass="1" contype="0" conaffinity="0"/>
    </body>
    <body name="p1" pos="2 0 0">
      <joint name="h1" type="hinge" axis="0 1 0"/>
      <inertial pos="0 0 -{l}" mass="{m}" diaginertia="{ic} {ic} {ic}"/>
    </body>
    <body name="p2" pos="3 0 0">
      <joint name="h2" type="hinge" axis="0 1 0"/>
      <inertial pos="0 0 -{l}" mass="{m}" diaginertia="{ic} {ic} {ic}"/>
    </body>
  </worldbody>
  <equality>
    <joint joint1="h1" joint2="h2"/>
  </equality>
</mujoco>
"""


def test_ball_and_free_joints_and_a_constraint(tmp_path):
    """A pendulum on a ball joint swings both ways at the hinge pendulum's frequency and spins
    freely (a rigid mode whose velocity its damping takes away in I/c); a free body has six rigid
    modes; two pendulums whose angles an equality ties swing together at one's frequency (and
    against each other only as fast as the soft equality lets them: critically damped)."""
    m, l, ic, c = 0.5, 0.4, 2e-3, 0.01
    (tmp_path / "joints.xml").write_text(JOINTS_XML.format(m=m, l=l, ic=ic, c=c), encoding="utf-8")
    an = analyse(load_scenario_of(tmp_path / "joints.xml"))
    i = ic + m * l * l
    w = math.sqrt(m * G * l / i)
    ball = [mo for mo in oscillatory(an.modes) if "ball" in mo.shape]
    assert len(ball) == 2 and all(
        mo.undamped_frequency_hz == pytest.approx(w / (2 * math.pi), rel=0.005)
        and mo.damping_ratio == pytest.approx(c / (2 * math.sqrt(m * G * l * i)), rel=0.02)
        for mo in ball
    )
    tied, apart = sorted((mo for mo in oscillatory(an.modes) if "h1" in mo.shape), key=lambda mo: mo.damping_ratio)
    assert tied.undamped_frequency_hz == pytest.approx(w / (2 * math.pi), rel=0.005)
    assert tied.shape == pytest.approx({"h1": 1.0, "h2": 1.0}, abs=1e-3)
    # the equality's own softness (solref: critically damped), h1 against h2, far faster
    assert apart.damping_ratio == pytest.approx(1.0, abs=2e-3) and apart.shape == pytest.approx(
        {"h1": -1.0, "h2": 1.0}, abs=1e-3
    )
    assert apart.undamped_frequency_hz > 5 * tied.undamped_frequency_hz
    rigid = [mo for mo in an.modes if mo.kind == "rigid"]
    assert sorted(next(iter(mo.shape)) for mo in rigid) == ["ball"] + ["free"] * 6
    spin = [mo for mo in an.modes if mo.kind == "decaying" and "ball" in mo.shape]
    assert len(spin) == 1 and spin[0].time_constant_s == pytest.approx(ic / c, rel=0.02)


STROKE_XML = """<mujoco>
  <option timestep="0.0005"/>
  <worldbody>
    <site name="floor" pos="0 0 0"/>
    <body name="block" pos="0 0 0.3">
      <joint name="z" type="slide" axis="0 0 1"/>
      <geom type="box" size="0.05 0.05 0.05" mass="{m}" contype="0" conaffinity="0"/>
      <site name="foot"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_a_mass_resting_inside_a_stroke_springs_stroke(tmp_path):
    """The spring pushes the block up with P - k s over its stroke s = 0..max_stroke from where it
    starts; P > m g, so the block rises (P - m g)/k (inside the stroke) and oscillates there at
    sqrt(k/m), damped c / 2 sqrt(k m)."""
    m, k, c, preload = 2.0, 3000.0, 6.0, 30.0
    (tmp_path / "stroke.xml").write_text(STROKE_XML.format(m=m), encoding="utf-8")
    path = tmp_path / "stroke.toml"
    path.write_text(
        f"""model = "stroke.xml"

[simulation]
duration = 10.0

[[loads]]
name = "stop"
kind = "stroke_compression_spring"
at = "floor"
to = "foot"
stiffness = {k}
damping = {c}
preload = {preload}
max_stroke = 0.02
""",
        encoding="utf-8",
    )
    an = analyse(load_scenario(path), equilibrium=True)
    rise = (preload - m * G) / k
    assert an.linear.qpos[0] == pytest.approx(rise, rel=1e-3) and 0 < rise < 0.02
    assert an.linear.kinks == ()  # inside the stroke: smooth
    assert analyse(load_scenario(path)).linear.kinks == ("z",)  # where it starts: the stroke's end, a corner
    (mode,) = an.modes
    assert mode.undamped_frequency_hz == pytest.approx(math.sqrt(k / m) / (2 * math.pi), rel=0.005)
    assert mode.damping_ratio == pytest.approx(c / (2 * math.sqrt(k * m)), rel=0.02)


def test_dm_controls_cart_pole_upright_is_unstable(tmp_path):
    """Upright (its initial state): det(M s² + C s + K) = 0 from the cart's and pole's mass
    properties has one positive real root; the free cart is a rigid-body mode."""
    dm_control = pytest.importorskip("dm_control")
    xml = Path(os.path.dirname(dm_control.__file__)) / "suite" / "cartpole.xml"
    an = analyse(load_scenario_of(xml))
    model = an.setup.model
    cart, pole = model.body("cart"), model.body("pole_1")
    mc, mp = float(cart.mass[0]), float(pole.mass[0])
    l, ip = float(pole.ipos[2]), float(pole.inertia[1])  # the pole's centre of mass above the hinge, its inertia
    M = np.array([[mc + mp, mp * l], [mp * l, ip + mp * l * l]])
    C = np.diag([model.dof_damping[0], model.dof_damping[1]])
    K = np.array([[0.0, 0.0], [0.0, -mp * G * l]])
    roots = np.roots(_det_poly(M, C, K))
    grow = max(r.real for r in roots if abs(r.imag) < 1e-9)
    unstable = [mo for mo in an.modes if mo.kind == "unstable"]
    assert len(unstable) == 1 and grow > 3.0
    assert 1.0 / unstable[0].time_constant_s == pytest.approx(grow, rel=0.005)
    assert unstable[0].eigenvalue.real > 0 and unstable[0].eigenvalue.imag == 0.0
    assert [mo.kind for mo in an.modes].count("rigid") == 1  # the cart: no spring holds it
    assert not oscillatory(an.modes)


def _det_poly(M: np.ndarray, C: np.ndarray, K: np.ndarray) -> np.ndarray:
    """Coefficients (highest power first) of det(M s² + C s + K) for 2x2 matrices."""

    def entry(i: int, j: int) -> np.poly1d:
        return np.poly1d([M[i, j], C[i, j], K[i, j]])

    return (entry(0, 0) * entry(1, 1) - entry(0, 1) * entry(1, 0)).coeffs


def load_scenario_of(model: Path):
    from mjrig.scenario.targets import load_target

    return load_target(str(model))


SPRING_XML = mjcf.model(
    mjcf.slider("block", joint="x", pos="0.3 0 0", damping="{c}", geom=_BLOCK, site="tip"),
    world='    <site name="anchor"/>',
)

SPRING = """model = "spring.xml"

[simulation]
duration = 10.0

[params]
F = {{ value = 0.0, unit = "N" }}

[[loads]]
name = "spring"
kind = "ideal_spring"
at = "anchor"
to = "tip"
stiffness = {k}
rest_length = 0.3

[[loads]]
name = "push"
kind = "force"
at = "tip"
vector = [{force}, 0.0, 0.0]
"""


def test_a_chirp_run_measures_the_response_bode_predicts(tmp_path):
    """A 0.5-10 Hz chirp force for 6 s, then 4 s of decay (8 time constants), recorded every
    step: the ratio of the position's spectrum to the force's is the frequency response; near the
    resonance it agrees with the linearisation's within 5 %, and both with the closed form.
    About 1 s: 10,000 recorded steps."""
    import polars as pl

    from mjrig.headless import prepare, run

    m, k, zeta = 1.0, 400.0, 0.1
    c = 2 * zeta * math.sqrt(k * m)
    (tmp_path / "spring.xml").write_text(SPRING_XML.format(m=m, c=c), encoding="utf-8")
    (tmp_path / "bode.toml").write_text(SPRING.format(k=k, force='"F"'), encoding="utf-8")
    chirp = '{ profile = "chirp", amplitude = 1.0, f0 = 0.5, f1 = 10.0, duration = 6.0 }'
    (tmp_path / "chirp.toml").write_text(SPRING.format(k=k, force=chirp), encoding="utf-8")
    an = analyse(load_scenario(tmp_path / "bode.toml"), inputs=("F",), outputs=("Joints/x:qpos",))
    setup = prepare(load_scenario(tmp_path / "chirp.toml"), out=tmp_path / "chirp.parquet")
    run(setup)
    rec = pl.read_parquet(tmp_path / "chirp.parquet")
    t, x, u = (rec[col].to_numpy() for col in ("time", "Joints/x:qpos", "Loads/push:fx"))
    assert np.allclose(np.diff(t), 0.001) and abs(x[-1]) < 1e-3 * np.abs(x).max()  # every step; decayed
    f = np.fft.rfftfreq(t.size, 0.001)
    measured = np.fft.rfft(x) / np.fft.rfft(u)
    fn = math.sqrt(k / m) / (2 * math.pi)
    near = (f > 0.8 * fn) & (f < 1.2 * fn)
    assert near.sum() >= 10
    predicted = response(an.linear, f[near])
    np.testing.assert_allclose(np.abs(measured[near]), np.abs(predicted), rtol=0.05)
    w = 2 * math.pi * f[near]
    np.testing.assert_allclose(np.abs(predicted), 1 / np.abs(k - m * w**2 + 1j * c * w), rtol=0.02)
    assert abs(response(an.linear, np.array([1e-4]))[0]) == pytest.approx(1 / k, rel=0.02)  # static gain
