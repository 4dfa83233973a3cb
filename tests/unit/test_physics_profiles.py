"""Time profiles and live params: their values, and the forces they drive, recorded to Parquet."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from mjrig.runtime import (
    Constant,
    NamedValue,
    PointToPointForce,
    Ramp,
    RuntimeManager,
    ScalarForce,
    SignalManager,
    Sine,
    Step,
    Table,
)
from tests.unit.unit_util import point_mass_xml

# --- the profile functions themselves ------------------------------------------------------------


def test_constant_profile() -> None:
    p = Constant(2.5)
    assert [p(t) for t in (0.0, 1e-9, 3.0, 1e6)] == [2.5] * 4


def test_step_profile() -> None:
    p = Step(time=0.3, before=1.0, after=-2.0)
    assert p(0.0) == 1.0
    assert p(0.3 - 1e-9) == 1.0
    assert p(0.3) == -2.0  # `after` from `time` on
    assert p(0.3 + 1e-9) == -2.0
    assert p(10.0) == -2.0


def test_ramp_profile() -> None:
    p = Ramp(start=0.2, end=0.6, from_=-1.0, to=3.0)
    slope = (3.0 - -1.0) / (0.6 - 0.2)
    assert p(0.0) == -1.0 and p(0.2) == -1.0  # held before the start
    for t in (0.25, 0.4, 0.55):
        assert p(t) == pytest.approx(-1.0 + slope * (t - 0.2), rel=1e-12)
    assert p(0.6) == 3.0 and p(5.0) == 3.0  # held after the end


def test_sine_profile() -> None:
    amp, freq, phase, off = 2.0, 1.5, 0.3, 0.5
    p = Sine(amp, freq, phase=phase, offset=off)
    assert p(0.0) == pytest.approx(off + amp * math.sin(phase), rel=1e-12)
    # the crest: 2π f t + phase = π/2
    t_peak = (math.pi / 2 - phase) / (2 * math.pi * freq)
    assert p(t_peak) == pytest.approx(off + amp, rel=1e-12)
    assert p(t_peak + 1 / freq) == pytest.approx(off + amp, rel=1e-12)  # period 1/f
    assert p(t_peak + 0.5 / freq) == pytest.approx(off - amp, rel=1e-12)
    assert Sine(3.0, 2.0)(0.125) == pytest.approx(3.0, rel=1e-12)  # phase and offset default to 0


def test_table_profile() -> None:
    p = Table(time=(0.0, 1.0, 3.0), value=(0.0, 2.0, -2.0))
    assert p(-1.0) == 0.0  # held at the first value
    assert p(0.25) == pytest.approx(0.5, rel=1e-12)
    assert p(1.0) == pytest.approx(2.0, rel=1e-12)
    assert p(2.0) == pytest.approx(0.0, abs=1e-12)  # halfway from 2 to -2
    assert p(2.5) == pytest.approx(-1.0, rel=1e-12)
    assert p(3.0) == -2.0 and p(9.0) == -2.0  # held at the last value


# --- profiles driving a force ----------------------------------------------------------------

SLED_XML = """
<mujoco>
  <option timestep="{dt}" gravity="0 0 0" integrator="{integrator}"/>
  <worldbody>
    <body name="sled" pos="0 0 0">
      <freejoint name="free"/>
      <geom type="sphere" size="0.1" mass="{m}" contype="0" conaffinity="0"/>
      <site name="nozzle" pos="0 0 0" euler="0 0 30"/>
    </body>
  </worldbody>
</mujoco>
"""
AXIS30 = np.array([math.cos(math.radians(30)), math.sin(math.radians(30)), 0.0])
T_END, DT, MASS = 0.5, 1e-3, 2.0

# (profile, its value as an independent formula, its exact integral over [0, T_END])
PROFILES = {
    "constant": (Constant(1.5), lambda t: 1.5, 1.5 * T_END),
    "step": (Step(0.2005, 1.0, 4.0), lambda t: 4.0 if t >= 0.2005 else 1.0, 1.0 * 0.2005 + 4.0 * (T_END - 0.2005)),
    "ramp": (
        Ramp(0.1, 0.3, 0.0, 2.0),
        lambda t: min(max((t - 0.1) / 0.2, 0.0), 1.0) * 2.0,
        0.5 * 2.0 * 0.2 + 2.0 * (T_END - 0.3),
    ),
    "sine": (
        Sine(2.0, 3.0, phase=0.4, offset=0.5),
        lambda t: 0.5 + 2.0 * math.sin(6 * math.pi * t + 0.4),
        0.5 * T_END + 2.0 / (6 * math.pi) * (math.cos(0.4) - math.cos(6 * math.pi * T_END + 0.4)),
    ),
    "table": (
        Table((0.0, 0.1, 0.4), (1.0, 3.0, -1.0)),
        lambda t: float(np.interp(t, [0.0, 0.1, 0.4], [1.0, 3.0, -1.0])),
        0.1 * (1.0 + 3.0) / 2 + 0.3 * (3.0 - 1.0) / 2 + -1.0 * (T_END - 0.4),
    ),
}


@pytest.mark.parametrize("integrator", ["Euler", "RK4"])
@pytest.mark.parametrize("name", sorted(PROFILES))
def test_profile_drives_scalar_force(rig, path: str, tmp_path: Path, name: str, integrator: str) -> None:
    profile, formula, integral = PROFILES[name]
    out = tmp_path / "run.parquet"
    rm = RuntimeManager(
        loads=[ScalarForce(name="thrust", action_site="nozzle", magnitude=profile)],
        signal_manager=SignalManager(out, groups=("loads",)),
        playback_speed=0,
    )
    model, data = rig.build(rm, SLED_XML.format(dt=DT, m=MASS, integrator=integrator), path)
    with rm:
        rig.run(rm, model, data, T_END)
    df = rig.read(out)
    t = df["time"].to_numpy()
    assert len(t) == round(T_END / DT)
    np.testing.assert_allclose(t, np.arange(len(t)) * DT, atol=1e-9)
    expected = np.array([formula(x) for x in t])
    for k, col in enumerate(("fx", "fy", "fz")):
        np.testing.assert_allclose(df[f"Loads/thrust:{col}"].to_numpy(), expected * AXIS30[k], rtol=1e-12, atol=1e-12)
    # and the force really acted: Δv = (1/m) ∫ F dt along the nozzle axis
    np.testing.assert_allclose(data.qvel[0:3], integral / MASS * AXIS30, rtol=1e-2, atol=1e-4 * abs(integral))


# --- params changed mid-run --------------------------------------------------------------------


def test_param_change_changes_force_from_next_step(rig, path: str, tmp_path: Path) -> None:
    out = tmp_path / "param.parquet"
    thrust = NamedValue("thrust", 2.0, min=0.0, max=10.0, unit="N")
    rm = RuntimeManager(
        loads=[ScalarForce(name="push", action_site="nozzle", magnitude=thrust)],
        signal_manager=SignalManager(out, groups=("loads", "params")),
        playback_speed=0,
    )
    model, data = rig.build(rm, SLED_XML.format(dt=DT, m=MASS, integrator="Euler"), path)
    n1, n2 = 100, 150
    with rm:
        for _ in range(n1):
            rm.step(model, data)
        thrust.value = 5.0
        for _ in range(n2):
            rm.step(model, data)
        thrust.value = 50.0  # clamped to max = 10
        rm.step(model, data)
    df = rig.read(out)
    fx = df["Loads/push:fx"].to_numpy()
    pv = df["Params/thrust:value"].to_numpy()
    expected = np.r_[np.full(n1, 2.0), np.full(n2, 5.0), [10.0]]
    np.testing.assert_allclose(pv, expected, rtol=0, atol=0)
    np.testing.assert_allclose(fx, expected * AXIS30[0], rtol=1e-12)
    # semi-implicit Euler: v = Σ F_i dt / m
    v = (2.0 * n1 + 5.0 * n2 + 10.0) * DT / MASS
    np.testing.assert_allclose(data.qvel[0:3], v * AXIS30, rtol=1e-9)


SLIDE_XML = point_mass_xml(dt=1e-3, mass=1000, inertia=1)
"""A 1 t mass at the origin: it barely moves under the springs of the tests below."""


def test_param_stiffness_change_mid_run(rig, path: str, tmp_path: Path) -> None:
    """A spring's stiffness param: the rig's spring bank must re-read it at the next step."""
    out = tmp_path / "k.parquet"
    k = NamedValue("k", 100.0, unit="N/m")
    rest = 0.2
    load = PointToPointForce.ideal_spring("s", "tip", "base", stiffness=k, rest_length=rest)
    rm = RuntimeManager(loads=[load], signal_manager=SignalManager(out, groups=("loads", "params")), playback_speed=0)
    model, data = rig.build(rm, SLIDE_XML, path)
    data.qpos[0] = 0.3
    with rm:
        for _ in range(50):
            rm.step(model, data)
        k.value = 300.0
        for _ in range(50):
            rm.step(model, data)
    df = rig.read(out)
    ks = np.r_[np.full(50, 100.0), np.full(50, 300.0)]
    np.testing.assert_allclose(df["Params/k:value"].to_numpy(), ks)
    length = df["Loads/s:length"].to_numpy()
    np.testing.assert_allclose(length[0], 0.3, rtol=1e-12)
    np.testing.assert_allclose(df["Loads/s:fx"].to_numpy(), -ks * (length - rest), rtol=1e-9)


def test_profiled_stiffness(rig, path: str, tmp_path: Path) -> None:
    out = tmp_path / "ramp.parquet"
    ramp = Ramp(0.02, 0.08, 100.0, 400.0)
    rest = 0.2
    load = PointToPointForce.ideal_spring("s", "tip", "base", stiffness=ramp, rest_length=rest)
    rm = RuntimeManager(loads=[load], signal_manager=SignalManager(out, groups=("loads",)), playback_speed=0)
    model, data = rig.build(rm, SLIDE_XML, path)
    data.qpos[0] = 0.25
    with rm:
        rig.run(rm, model, data, 0.1)
    df = rig.read(out)
    t = df["time"].to_numpy()
    ks = np.clip(100.0 + (t - 0.02) / 0.06 * 300.0, 100.0, 400.0)
    length = df["Loads/s:length"].to_numpy()
    np.testing.assert_allclose(df["Loads/s:fx"].to_numpy(), -ks * (length - rest), rtol=1e-9)


def _ten_steps_on_ten_off(rm: RuntimeManager, model, data, load) -> list[float]:
    """Ten steps with ``load`` active, then ten after ``load.active = False``; the generalized force
    mjrig applied on the first dof after each of those last ten (N)."""
    for _ in range(10):
        rm.step(model, data)
    load.active = False
    applied = []
    for _ in range(10):
        rm.step(model, data)
        applied.append(float(data.qfrc_applied[0]))
    return applied


def test_deactivated_loads_apply_and_record_nothing(rig, path: str, tmp_path: Path) -> None:
    """``active = False`` mid-run: no force from the next step on, and the columns say 0 N."""
    out = tmp_path / "off.parquet"
    push = ScalarForce(name="push", action_site="nozzle", magnitude=2.0)
    rm = RuntimeManager(loads=[push], signal_manager=SignalManager(out, groups=("loads",)), playback_speed=0)
    model, data = rig.build(rm, SLED_XML.format(dt=DT, m=MASS, integrator="Euler"), path)
    with rm:
        _ten_steps_on_ten_off(rm, model, data, push)
        v_off = data.qvel[0:3].copy()
    np.testing.assert_allclose(v_off, 10 * 2.0 * DT / MASS * AXIS30, rtol=1e-9)
    fx = rig.read(out)["Loads/push:fx"].to_numpy()
    np.testing.assert_allclose(fx, np.r_[np.full(10, 2.0 * AXIS30[0]), np.zeros(10)], atol=1e-12)


def test_deactivated_spring_applies_and_records_nothing(rig, path: str, tmp_path: Path) -> None:
    out = tmp_path / "off.parquet"
    spring = PointToPointForce.ideal_spring("s", "tip", "base", stiffness=100.0, rest_length=0.2)
    rm = RuntimeManager(loads=[spring], signal_manager=SignalManager(out, groups=("loads",)), playback_speed=0)
    model, data = rig.build(rm, SLIDE_XML, path)
    data.qpos[0] = 0.3
    with rm:
        applied_off = _ten_steps_on_ten_off(rm, model, data, spring)
        assert applied_off == [0.0] * 10
    fx = rig.read(out)["Loads/s:fx"].to_numpy()
    assert np.all(fx[:10] < -9.0)  # about −k·0.1 = −10 N while on (heavy mass: barely moves)
    np.testing.assert_allclose(fx[10:], 0.0, atol=1e-12)


def test_the_bundled_shaker_settles_into_its_forced_response() -> None:
    """The default rig keeps moving: spring_mass driven by 2 N at 2 Hz settles into the steady
    response of a forced damped oscillator, amplitude F/sqrt((k - m w^2)^2 + (c w)^2) about the
    rest point (-0.1 m), lagging the force by atan2(c w, k - m w^2). 25 s of simulated time
    (25,000 steps, about a second)."""
    from mjrig.scenario.builder import build_rig
    from mjrig.scenario.bundled import MODELS_DIR, default_model
    from mjrig.scenario.parse import load_scenario

    assert default_model().name == "shaker"
    rig = build_rig(load_scenario(MODELS_DIR / "shaker.toml"))
    m, k, c, force, f = 1.0, 200.0, 1.0, 2.0, 2.0
    w = 2 * math.pi * f
    amplitude, lag = force / math.hypot(k - m * w * w, c * w), math.atan2(c * w, k - m * w * w)
    rig.reset()
    times, qpos = [], []
    while rig.data.time < 25.0 - 1e-9:
        rig.runtime.step(rig.model, rig.data)
        if rig.data.time > 20.0:  # the release's free swing has died out (e^-10)
            times.append(rig.data.time)
            qpos.append(rig.data.qpos[0])
    t, x = np.array(times), np.array(qpos) + 0.1
    # least squares on sin and cos at the drive's frequency: x = a sin(w t) + b cos(w t)
    basis = np.column_stack([np.sin(w * t), np.cos(w * t)])
    (a, b), *_ = np.linalg.lstsq(basis, x, rcond=None)
    assert math.hypot(a, b) == pytest.approx(amplitude, rel=5e-3)
    assert math.atan2(-b, a) == pytest.approx(lag, abs=0.01)
