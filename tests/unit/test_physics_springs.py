"""Point-to-point springs against closed-form physics, on both compile paths.

Every expected number below is computed from the textbook formula (period 2π√(m/k), static
deflection m·g/k, Hooke's law with the contract's windows), never copied from a run.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from mjrig.runtime import PointToPointForce, RuntimeManager, ScalarForce, SignalManager
from tests.unit.unit_util import point_mass_xml

# The same spring named by body points instead of sites (exercises the rig's hidden sites).
POINT_STYLES = {"sites": ("tip", "base"), "bodies": ("body:mass@0,0,0", "body:world@0,0,0")}


def _slide(
    rig,
    path: str,
    load: PointToPointForce,
    *,
    mass: float = 1.0,
    dt: float = 1e-4,
    x0: float,
    v0: float = 0.0,
    integrator: str | None = None,
):
    rm = RuntimeManager(loads=[load], playback_speed=0)
    model, data = rig.build(rm, point_mass_xml(dt=dt, mass=mass), path, integrator=integrator)
    data.qpos[0] = x0
    data.qvel[0] = v0
    return rm, model, data


def _downward_crossings(t: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Times where v crosses zero from + to −, linearly interpolated."""
    idx = np.nonzero((v[:-1] > 0) & (v[1:] <= 0))[0]
    return t[idx] - v[idx] * (t[idx + 1] - t[idx]) / (v[idx + 1] - v[idx])


INTEGRATOR_ENUMS = {"Euler": "mjINT_EULER", "implicitfast": "mjINT_IMPLICITFAST", "RK4": "mjINT_RK4"}


# --- period ------------------------------------------------------------------------------------


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "RK4"])
def test_spring_mass_period(rig, path: str, integrator: str) -> None:
    mass, k, rest, amp = 1.5, 600.0, 0.2, 0.04
    expected = 2 * math.pi * math.sqrt(mass / k)
    load = PointToPointForce.ideal_spring("s", "tip", "base", stiffness=k, damping=0.0, rest_length=rest)
    rm, model, data = _slide(rig, path, load, mass=mass, dt=5e-4, x0=rest + amp, integrator=integrator)
    assert model.opt.integrator == getattr(mujoco.mjtIntegrator, INTEGRATOR_ENUMS[integrator])
    ts, vs, xs = [], [], []
    with rm:
        rig.run(
            rm,
            model,
            data,
            3.3 * expected,
            each=lambda: (ts.append(data.time), vs.append(data.qvel[0]), xs.append(data.qpos[0])),
        )
    crossings = _downward_crossings(np.array(ts), np.array(vs))
    assert len(crossings) >= 3
    period = float(np.mean(np.diff(crossings)))
    assert period == pytest.approx(expected, rel=1e-3)
    # It oscillates about the rest length with the initial amplitude (no energy drift to speak of).
    xs = np.array(xs)
    assert 0.5 * (xs.max() + xs.min()) == pytest.approx(rest, rel=1e-3)
    assert 0.5 * (xs.max() - xs.min()) == pytest.approx(amp, rel=1e-2)
    # The model really came the way we meant: only the rig adds a hidden spring tendon, and
    # only under an implicit integrator (``rigmodel``).
    assert model.ntendon == (1 if path != "self" and integrator == "implicitfast" else 0)


def test_period_with_body_points(rig, path: str) -> None:
    mass, k, rest = 0.8, 320.0, 0.25
    expected = 2 * math.pi * math.sqrt(mass / k)
    at, to = POINT_STYLES["bodies"]
    load = PointToPointForce.ideal_spring("s", at, to, stiffness=k, rest_length=rest)
    rm, model, data = _slide(rig, path, load, mass=mass, dt=5e-4, x0=rest - 0.05)
    ts, vs = [], []
    with rm:
        rig.run(rm, model, data, 3.3 * expected, each=lambda: (ts.append(data.time), vs.append(data.qvel[0])))
    period = float(np.mean(np.diff(_downward_crossings(np.array(ts), np.array(vs)))))
    assert period == pytest.approx(expected, rel=1e-3)


# --- static deflection ----------------------------------------------------------------------------


def test_static_deflection_under_gravity(rig, path: str) -> None:
    mass, k, rest, g = 1.2, 250.0, 0.5, 9.81
    c = 0.7 * 2 * math.sqrt(k * mass)  # damping ratio 0.7: settles in well under a second
    load = PointToPointForce.ideal_spring("hang", "tip", "base", stiffness=k, damping=c, rest_length=rest)
    rm = RuntimeManager(loads=[load], playback_speed=0)
    hanging = point_mass_xml(dt=5e-4, mass=mass, joint="z", axis="0 0 1", gravity=f"0 0 -{g}")
    model, data = rig.build(rm, hanging, path)
    data.qpos[0] = -rest  # hanging at the rest length: gravity then stretches it
    with rm:
        rig.run(rm, model, data, 2.0)
        deflection = -data.qpos[0] - rest
        assert deflection == pytest.approx(mass * g / k, rel=1e-3)
        assert abs(data.qvel[0]) < 1e-4
        fx, fy, fz = rig.wrench(rm, "hang")[:3]
        assert fz == pytest.approx(mass * g, rel=1e-3)  # holds the weight up
        assert abs(fx) < 1e-9 and abs(fy) < 1e-9


# --- one-sided springs ---------------------------------------------------------------------------

K, C, REST, MASS = 400.0, 0.0, 0.2, 1.0


def _one_step_force(rig, path: str, load: PointToPointForce, x: float, v: float = 0.0, *, r0: float | None = None):
    """(force on tip along x, generalized joint force, joint acceleration) at state (x, v).

    The rig is resolved at x = r0 (the stroke spring's reference), then the state is set.
    """
    rm, model, data = _slide(rig, path, load, mass=MASS, x0=x if r0 is None else r0)
    with rm:
        if r0 is not None:
            rm.step(model, data)
            data.qpos[0], data.qvel[0] = x, v
        else:
            data.qvel[0] = v
        rm.step(model, data)
        w = rig.wrench(rm, load.name)
        return w, float(rig.qfrc(data)[0]), float(data.qacc[0])


@pytest.mark.parametrize(
    ("spring", "name", "x0", "v0"),
    [
        (PointToPointForce.tension_spring, "cable", 0.1, 0.05),  # stays below the rest length: 0.1 -> 0.125
        (PointToPointForce.compression_spring, "bump", 0.3, -0.05),  # stays above it: 0.3 -> 0.275
    ],
    ids=["tension_spring_compressed", "compression_spring_stretched"],
)
@pytest.mark.parametrize("style", sorted(POINT_STYLES))
def test_one_sided_spring_idle_on_its_slack_side_coasts(rig, path: str, style: str, spring, name, x0, v0) -> None:
    """A tension spring kept shorter than its rest length, a compression spring kept longer: no
    force at all (damping included), so the mass coasts at its start speed."""
    at, to = POINT_STYLES[style]
    load = spring(name, at, to, stiffness=K, damping=5.0, rest_length=REST)
    t_end = 0.5
    rm, model, data = _slide(rig, path, load, x0=x0, v0=v0, dt=1e-3)
    forces = []
    with rm:
        rig.run(rm, model, data, t_end, each=lambda: forces.append(float(rig.qfrc(data)[0])))
        assert np.all(np.array(forces) == 0.0)
        assert data.qvel[0] == pytest.approx(v0, rel=1e-12)
        assert data.qpos[0] == pytest.approx(x0 + v0 * t_end, rel=1e-9)
        assert np.all(rig.wrench(rm, name) == 0.0)


@pytest.mark.parametrize("style", sorted(POINT_STYLES))
def test_tension_spring_active_when_stretched(rig, path: str, style: str) -> None:
    at, to = POINT_STYLES[style]
    load = PointToPointForce.tension_spring("cable", at, to, stiffness=K, damping=C, rest_length=REST)
    stretch = 0.07
    w, qfrc, qacc = _one_step_force(rig, path, load, REST + stretch)
    assert w[0] == pytest.approx(-K * stretch, rel=1e-9)  # pulls the tip back toward the base
    assert np.allclose(w[1:], 0.0, atol=1e-12)
    assert qfrc == pytest.approx(-K * stretch, rel=1e-9)
    assert qacc == pytest.approx(-K * stretch / MASS, rel=1e-9)


def test_tension_spring_snaps_back_then_coasts(rig, path: str) -> None:
    """Released stretched by A it reaches the rest length at speed A·√(k/m), then coasts."""
    amp = 0.05
    load = PointToPointForce.tension_spring("cable", "tip", "base", stiffness=K, rest_length=REST)
    rm, model, data = _slide(rig, path, load, x0=REST + amp, dt=1e-4)
    quarter = 0.5 * math.pi * math.sqrt(MASS / K)
    with rm:
        rig.run(rm, model, data, quarter + 0.07)
    v_expected = -amp * math.sqrt(K / MASS)
    assert data.qvel[0] == pytest.approx(v_expected, rel=1e-3)
    assert data.qpos[0] == pytest.approx(REST + v_expected * 0.07, rel=1e-2)


@pytest.mark.parametrize("style", sorted(POINT_STYLES))
def test_compression_spring_active_when_compressed(rig, path: str, style: str) -> None:
    at, to = POINT_STYLES[style]
    load = PointToPointForce.compression_spring("bump", at, to, stiffness=K, damping=C, rest_length=REST)
    squeeze = 0.06
    w, qfrc, qacc = _one_step_force(rig, path, load, REST - squeeze)
    assert w[0] == pytest.approx(+K * squeeze, rel=1e-9)  # pushes the tip away from the base
    assert qfrc == pytest.approx(K * squeeze, rel=1e-9)
    assert qacc == pytest.approx(K * squeeze / MASS, rel=1e-9)


def test_compression_spring_pushes_out_then_coasts(rig, path: str) -> None:
    amp = 0.05
    load = PointToPointForce.compression_spring("bump", "tip", "base", stiffness=K, rest_length=REST)
    rm, model, data = _slide(rig, path, load, x0=REST - amp, dt=1e-4)
    quarter = 0.5 * math.pi * math.sqrt(MASS / K)
    with rm:
        rig.run(rm, model, data, quarter + 0.05)
    assert data.qvel[0] == pytest.approx(amp * math.sqrt(K / MASS), rel=1e-3)


@pytest.mark.parametrize(
    "kind,x,v,expected",
    [
        # ideal: F_tip = -(k s + c v) in both directions
        ("ideal_spring", 0.25, 0.3, -(K * 0.05 + 5.0 * 0.3)),
        ("ideal_spring", 0.15, -0.2, -(K * -0.05 + 5.0 * -0.2)),
        # one-sided springs with damping inside their window
        ("tension_spring", 0.25, 0.3, -(K * 0.05 + 5.0 * 0.3)),
        ("compression_spring", 0.15, -0.2, -(K * -0.05 + 5.0 * -0.2)),
        # and nothing at all outside it, whatever the rate
        ("tension_spring", 0.15, 0.3, 0.0),
        ("compression_spring", 0.25, -0.2, 0.0),
    ],
)
def test_spring_damper_force_values(rig, path: str, kind: str, x: float, v: float, expected: float) -> None:
    load = getattr(PointToPointForce, kind)("s", "tip", "base", stiffness=K, damping=5.0, rest_length=REST)
    w, qfrc, qacc = _one_step_force(rig, path, load, x, v)
    assert w[0] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert qfrc == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert qacc == pytest.approx(expected / MASS, rel=1e-9, abs=1e-12)


# --- stroke compression spring -----------------------------------------------------------------

R0, PRELOAD, KS, STROKE = 0.2, 10.0, 100.0, 0.05


@pytest.mark.parametrize(
    "x,v,preload,c,expected",
    [
        (R0 - 0.02, 0.0, PRELOAD, 0.0, 0.0),  # below r0: off
        (R0 + 0.02, 0.0, PRELOAD, 0.0, PRELOAD - KS * 0.02),  # inside the stroke
        (R0 + 0.001, 0.0, PRELOAD, 0.0, PRELOAD - KS * 0.001),  # just past r0
        (R0 + 0.04, 0.1, PRELOAD, 5.0, PRELOAD - KS * 0.04 - 5.0 * 0.1),  # damped, inside
        (R0 + 0.06, 0.0, PRELOAD, 0.0, 0.0),  # beyond r0 + max_stroke
        (R0 + 0.02, 0.0, 1.0, 0.0, 0.0),  # preload - k s < 0: clipped
        (R0 + 0.01, 0.5, PRELOAD, 30.0, 0.0),  # damping drives it < 0: clipped
    ],
    ids=["below", "inside", "at-start", "damped", "beyond", "clip-k", "clip-c"],
)
def test_stroke_compression_spring_regimes(rig, path: str, x, v, preload, c, expected) -> None:
    load = PointToPointForce.stroke_compression_spring(
        "gas", "tip", "base", stiffness=KS, damping=c, preload=preload, max_stroke=STROKE
    )
    w, qfrc, qacc = _one_step_force(rig, path, load, x, v, r0=R0)
    # Tension pushes the points apart: the tip (on +x of the base) is pushed toward +x.
    assert w[0] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert qfrc == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert qacc == pytest.approx(expected / MASS, rel=1e-9, abs=1e-12)


# --- several springs at once: each one's force lands on its own body and its own columns ---------

MULTI_XML = """
<mujoco>
  <option timestep="1e-3" gravity="0 0 0" integrator="Euler"/>
  <worldbody>
    <site name="o1" pos="0 0 0"/>
    <site name="o2" pos="0 1 0"/>
    <site name="o3" pos="0 2 0"/>
    <body name="m1" pos="0 0 0">
      <joint name="x1" type="slide" axis="1 0 0"/>
      <inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>
      <site name="t1"/>
    </body>
    <body name="m2" pos="0 1 0">
      <joint name="x2" type="slide" axis="1 0 0"/>
      <inertial pos="0 0 0" mass="2" diaginertia="0.01 0.01 0.01"/>
      <site name="t2"/>
    </body>
    <body name="m3" pos="0 2 0">
      <joint name="x3" type="slide" axis="1 0 0"/>
      <inertial pos="0 0 0" mass="4" diaginertia="0.01 0.01 0.01"/>
      <site name="t3"/>
    </body>
  </worldbody>
  <tendon>
    <spatial name="user_tendon"><site site="o1"/><site site="t3"/></spatial>
  </tendon>
</mujoco>
"""


def test_several_springs_keep_their_own_rows(rig, path: str, tmp_path) -> None:
    """Springs interleaved with another load, in a model with a tendon of its own."""
    out = tmp_path / "multi.parquet"
    ks, rests, x0 = (100.0, 200.0, 400.0), (0.2, 0.3, 0.1), (0.25, 0.2, 0.16)
    masses = (1.0, 2.0, 4.0)
    loads = [
        PointToPointForce.ideal_spring("s1", "t1", "o1", stiffness=ks[0], rest_length=rests[0]),
        ScalarForce(name="kick", action_site="t2", magnitude=-3.0),
        PointToPointForce.tension_spring("s3", "t3", "o3", stiffness=ks[2], rest_length=rests[2]),
        PointToPointForce.compression_spring("s2", "t2", "o2", stiffness=ks[1], rest_length=rests[1]),
    ]
    rm = RuntimeManager(loads=loads, playback_speed=0, signal_manager=SignalManager(out, groups=("loads", "joints")))
    model, data = rig.build(rm, MULTI_XML, path)
    data.qpos[:] = x0
    with rm:
        rm.step(model, data)
        # first step: qacc from each spring on its own mass (s2 also carries the kick)
        s = np.array(x0) - np.array(rests)
        f = -np.array(ks) * s  # all three inside their windows: s1 either way, s2 compressed, s3 stretched
        assert s[1] < 0 < s[2]
        np.testing.assert_allclose(data.qacc, (f + [0.0, -3.0, 0.0]) / np.array(masses), rtol=1e-9)
        rig.run(rm, model, data, 0.05)
        # the engine's per-load outputs (what the GUI draws) agree, load by load
        eng = rm.engine
        for i, name in enumerate(("s1", "s2", "s3")):
            w = rig.wrench(rm, name)
            length = eng.lv[[ld.name for ld in eng.loads].index(name), 0]
            # the last step started from x = qpos − qvel·dt (semi-implicit Euler)
            assert length == pytest.approx(data.qpos[i] - data.qvel[i] * model.opt.timestep, rel=1e-9)
            sx = length - rests[i]
            inside = {0: True, 1: sx <= 0, 2: sx >= 0}[i]
            assert w[0] == pytest.approx(-ks[i] * sx if inside else 0.0, rel=1e-9, abs=1e-12)
    df = rig.read(out)
    for i, name in enumerate(("s1", "s2", "s3")):
        x = df[f"Joints/x{i + 1}:qpos"].to_numpy()
        np.testing.assert_allclose(df[f"Loads/{name}:length"].to_numpy(), x, rtol=1e-12)
        sx = x - rests[i]
        window = {0: np.ones_like(sx, bool), 1: sx <= 0, 2: sx >= 0}[i]
        np.testing.assert_allclose(
            df[f"Loads/{name}:fx"].to_numpy(), np.where(window, -ks[i] * sx, 0.0), rtol=1e-9, atol=1e-12
        )
    np.testing.assert_allclose(df["Loads/kick:fx"].to_numpy(), -3.0)


def test_custom_magnitude_func_spring(rig, path: str) -> None:
    """A user law f(d, v, r0, model, data) -> tension: −k(d − r0) is a spring resting at r0."""
    mass, k = 1.0, 250.0
    seen_r0 = []

    def law(d: float, v: float, r0: float, model, data) -> float:
        seen_r0.append(r0)
        return -k * (d - r0)

    load = PointToPointForce(name="user", action_site="tip", xtion_site="base", magnitude_func=law)
    rm, model, data = _slide(rig, path, load, mass=mass, dt=5e-4, x0=0.3)
    expected = 2 * math.pi * math.sqrt(mass / k)
    ts, vs = [], []
    with rm:
        rm.step(model, data)
        data.qpos[0] = 0.33  # displaced 3 cm from the r0 taken at resolve time
        rig.run(rm, model, data, 3.3 * expected, each=lambda: (ts.append(data.time), vs.append(data.qvel[0])))
    assert seen_r0 and np.allclose(seen_r0, 0.3, rtol=0, atol=1e-12)
    period = float(np.mean(np.diff(_downward_crossings(np.array(ts), np.array(vs)))))
    assert period == pytest.approx(expected, rel=1e-3)


def test_stroke_reference_survives_rig_edits(rig, path: str) -> None:
    """r0 is the distance when the run began: attaching a load or starting a recording mid-run
    (both re-resolve the rig) must not move the stroke window."""
    load = PointToPointForce.stroke_compression_spring(
        "gas", "tip", "base", stiffness=KS, damping=0.0, preload=PRELOAD, max_stroke=STROKE
    )
    rm, model, data = _slide(rig, path, load, mass=MASS, x0=R0, dt=1e-3)
    with rm:
        rig.run(rm, model, data, 0.03)
        assert data.qpos[0] > R0 + 0.002  # the strut has pushed the mass out
        rm.add_load(ScalarForce(name="nudge", action_site="tip", magnitude=0.0))
        rm.step(model, data)
        rm.set_recorder(SignalManager(None, groups=("loads",)))
        rm.step(model, data)
        x = R0 + 0.01
        data.qpos[0], data.qvel[0] = x, 0.0
        rm.step(model, data)
        assert rig.wrench(rm, "gas")[0] == pytest.approx(PRELOAD - KS * (x - R0), rel=1e-9)
    # a fresh MjData is a new run: r0 is taken again there
    data2 = mujoco.MjData(model)
    data2.qpos[0] = R0 + 0.02
    rm2 = RuntimeManager(loads=[load], playback_speed=0)
    rm2.step(model, data2)
    data2.qpos[0], data2.qvel[0] = R0 + 0.03, 0.0
    rm2.step(model, data2)
    assert rig.wrench(rm2, "gas")[0] == pytest.approx(PRELOAD - KS * 0.01, rel=1e-9)
