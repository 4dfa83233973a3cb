"""Metric kinds (``mjrig.runtime.analysis.metrics``, CONTRACT 6) against closed forms: a sine's rms,
peak-to-peak and period, a first-order step response's settling time, an underdamped
spring-mass's overshoot simulated by mjrig, a ramp's integral -- and bad entries refused with
the field at fault."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from mjrig.headless import prepare, run
from mjrig.runtime.analysis.metrics import Metric, MetricError, metric_unit
from mjrig.runtime.analysis.reductions import metric_value
from mjrig.scenario.parse import load_scenario
from tests.sweep_util import REPO

DT = 0.001


def steps(duration: float) -> np.ndarray:
    """Times of every step of a run, summed as MuJoCo advances them."""
    t = [0.0]
    for _ in range(int(round(duration / DT)) - 1):
        t.append(t[-1] + DT)
    return np.array(t)


def test_a_sines_rms_peak_to_peak_period_and_frequency():
    a, f = 2.0, 1.25  # a period of 800 steps
    t = steps(4.0)
    x = 0.3 + a * np.sin(2 * math.pi * f * t + 0.4)
    m = Metric(name="m", signal="s", kind="rms", start=0.5, end=0.5 + 4 / f - DT)  # whole periods
    assert m.value(t, x - 0.3) == pytest.approx(a / math.sqrt(2), rel=1e-5)
    assert metric_value("peak_to_peak", t, x) == pytest.approx(2 * a, rel=1e-5)
    assert abs(metric_value("period", t, x) - 1 / f) < DT
    assert metric_value("frequency", t, x) == pytest.approx(f, abs=f * f * DT)
    assert metric_value("mean", t[:2000], x[:2000]) == pytest.approx(
        0.3 + a * np.mean(np.sin(2 * math.pi * f * t[:2000] + 0.4))
    )
    assert math.isnan(metric_value("period", t[:1500], x[:1500]))  # under two periods
    peak = (math.pi / 2 - 0.4) / (2 * math.pi * f)
    assert abs(metric_value("time_of_max", t, x) - peak) <= 0.01 * DT  # between samples
    trough = (1.5 * math.pi - 0.4) / (2 * math.pi * f)
    assert abs(metric_value("time_of_min", t, x) - trough) <= 0.01 * DT
    assert math.isnan(metric_value("first_crossing", t, x, level=0.3 + 1.01 * a))  # never reached
    cross = (math.pi - 0.4) / (2 * math.pi * f)  # the first downward pass through the mean
    assert abs(metric_value("first_crossing", t, x, level=0.3) - cross) < 1e-6


def underdamped(t: np.ndarray, *, zeta: float, fn: float, x0: float = 0.0, final: float = 1.0) -> np.ndarray:
    """A second-order system from ``x0`` (at rest) to ``final``: ``final`` + (x0 − final) ·
    e^(−ζωn t)(cos ωd t + ζ/√(1−ζ²) sin ωd t)."""
    wn = 2 * math.pi * fn
    wd = wn * math.sqrt(1 - zeta**2)
    return final + (x0 - final) * np.exp(-zeta * wn * t) * (
        np.cos(wd * t) + zeta / math.sqrt(1 - zeta**2) * np.sin(wd * t)
    )


@pytest.mark.parametrize("case", ["step zeta 0.2", "free decay zeta 0.035", "sine about 0.3"])
def test_period_and_frequency_are_the_oscillations_within_half_a_percent(case):
    """CONTRACT 6: the damped period Td = 1/(fn·√(1−ζ²)) of a step response (ζ = 0.2: crossings
    of the window's mean gave 0.3066 s for 0.3206 s), of a free decay, and a sine's period."""
    t = steps(4.0)
    if case.startswith("step"):
        fn, zeta = 3.19, 0.2
        x = np.where(t < 0.5, 0.0, underdamped(np.clip(t - 0.5, 0, None), zeta=zeta, fn=fn))
        expected = 1 / (fn * math.sqrt(1 - zeta**2))
    elif case.startswith("free"):
        fn, zeta = 2.25, 0.035
        x = underdamped(t, zeta=zeta, fn=fn, x0=0.1, final=-0.1)
        expected = 1 / (fn * math.sqrt(1 - zeta**2))
    else:
        x = 0.3 + 2.0 * np.sin(2 * math.pi * 1.7 * t + 0.4)
        expected = 1 / 1.7
    assert metric_value("period", t, x) == pytest.approx(expected, rel=5e-3)
    assert metric_value("frequency", t, x) == pytest.approx(1 / expected, rel=5e-3)
    assert metric_value("period", t, x) == pytest.approx(expected, rel=1e-4)  # parabolas between samples


def test_the_dominant_frequency_is_the_spectrums_peak_between_bins():
    """A sine of 2.25 Hz plus a smaller one of 7 Hz over 3 s (bins of 0.33 Hz), and a decaying
    oscillation: the largest spectral peak, refined between bins."""
    t = steps(3.0)
    x = 0.5 + np.sin(2 * math.pi * 2.25 * t) + 0.3 * np.sin(2 * math.pi * 7.0 * t)
    assert metric_value("dominant_frequency", t, x) == pytest.approx(2.25, rel=2e-3)
    decay = underdamped(t, zeta=0.035, fn=2.25, x0=0.1, final=-0.1)
    assert metric_value("dominant_frequency", t, decay) == pytest.approx(2.25 * math.sqrt(1 - 0.035**2), rel=1e-2)
    assert math.isnan(metric_value("dominant_frequency", t, np.full_like(t, 4.0)))
    assert metric_unit("dominant_frequency", "m") == "Hz"


@pytest.mark.parametrize("duration", [1.5, 5.0, 20.0])
def test_the_dominant_frequency_of_a_step_response_over_the_whole_run(duration):
    """A ζ = 0.2 step response settles within a second to its final value; over a run of 20 s the
    offset it settles to once outweighed the ringing (0.0153 Hz for 3.12): its damped frequency
    within 1 %, whatever the run's length, and a sine's on the same runs."""
    t = steps(duration)
    fn = 3.12 / math.sqrt(1 - 0.2**2)
    got = metric_value("dominant_frequency", t, underdamped(t, zeta=0.2, fn=fn, final=0.05))
    assert got == pytest.approx(3.12, rel=0.01)
    assert metric_value("dominant_frequency", t, 0.3 + np.sin(2 * math.pi * 3.12 * t)) == pytest.approx(3.12, rel=0.01)


@pytest.mark.parametrize("fr", [3.0, 4.0, 6.5])
@pytest.mark.parametrize("zeta", [0.02, 0.05])
def test_the_dominant_frequency_of_a_swept_resonance_is_its_peak(fr, zeta):
    """A resonance swept slowly by a 1-10 Hz linear chirp over 20 s (the response's amplitude
    |H(f)| at each instant's frequency, on an offset): the spectrum's peak is |H|'s, at
    fr·√(1 − 2ζ²), within 1 % wherever in the sweep it lies (a Hann window, weighing the middle
    of the run most, moved it up to 5 % towards 5.5 Hz)."""
    t = steps(20.0)
    f = 1.0 + 9.0 * t / 20.0
    phase = 2 * math.pi * (t + 9.0 * t**2 / 40.0)
    gain = 1 / np.sqrt((1 - (f / fr) ** 2) ** 2 + (2 * zeta * f / fr) ** 2)
    peak = fr * math.sqrt(1 - 2 * zeta**2)
    assert metric_value("dominant_frequency", t, 0.2 + gain * np.sin(phase)) == pytest.approx(peak, rel=0.01)


def test_a_first_order_step_settles_at_2_percent_after_tau_ln_50():
    """Where it comes in over the band's edge, interpolated between samples: within a hundredth of
    a step of the closed form (its final value is the window's last sample's)."""
    tau = 0.2
    t = steps(5.0)
    x = 1.0 - np.exp(-t / tau)
    final = x[-1]
    exact = -tau * math.log(0.02 * final + (1.0 - final))  # |x - final| = 0.02 final
    assert abs(metric_value("settling_time", t, x, band=0.02) - exact) <= 0.01 * DT
    exact_abs = -tau * math.log(0.05 + (1.0 - final))
    assert abs(metric_value("settling_time", t, x, band_abs=0.05) - exact_abs) <= 0.01 * DT
    assert metric_value("overshoot", t, x) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("phase", [0.0, 0.3, 1.1, 2.9])
def test_the_peak_time_of_a_sine_sampled_at_1_ms_is_within_a_hundredth_of_a_step(phase):
    """CONTRACT 14, times finer than a step: the parabola through the largest sample and its two
    neighbours puts the peak of a sine at 1.37 Hz sampled every millisecond within 1 % of a step."""
    t = np.arange(0.0, 0.9, DT)
    x = np.sin(2 * math.pi * 1.37 * t + phase)
    peak = ((math.pi / 2 - phase) % (2 * math.pi)) / (2 * math.pi * 1.37)
    if peak < t[-1]:
        assert abs(metric_value("time_of_max", t, x) - peak) <= 0.01 * DT


def test_a_ramps_integral_and_the_units():
    t = steps(2.0 + DT)
    assert metric_value("integral", t, 3.0 * t) == pytest.approx(1.5 * t[-1] ** 2, rel=1e-12)
    assert Metric(name="m", signal="s", kind="integral", start=0.5, end=1.5).value(t, 3.0 * t) == pytest.approx(
        1.5 * (1.5**2 - 0.5**2), rel=1e-9
    )
    assert metric_unit("integral", "N") == "N*s" and metric_unit("frequency", "m") == "Hz"
    assert metric_unit("overshoot", "m") == "%" and metric_unit("settling_time", "m") == "s"
    assert metric_unit("rms", "N*m") == "N*m"


SPRING = f"""model = "{REPO / "models" / "spring_mass.xml"}"

[simulation]
duration = 8.0
timestep = 0.0005

[params]
c = {{ value = 4.0 }}

[[loads]]
name = "main_spring"
kind = "ideal_spring"
at = "tip"
to = "base"
stiffness = 200.0
damping = "c"
rest_length = 0.25

[recording]
path = "out.parquet"
signals = ["joints"]
"""


def test_an_underdamped_spring_mass_overshoots_by_exp_of_minus_zeta_pi(tmp_path):
    """The block starts 0.1 m stretched and at rest: a falling step to the rest length."""
    path = tmp_path / "rig.toml"
    path.write_text(SPRING, encoding="utf-8")
    setup = prepare(load_scenario(path), out=tmp_path / "run.parquet")
    run(setup)
    df = pl.read_parquet(tmp_path / "run.parquet")
    t, x = df["time"].to_numpy(), df["Joints/slide_x:qpos"].to_numpy()
    zeta = 4.0 / (2 * math.sqrt(200.0 * 1.0))
    expected = math.exp(-zeta * math.pi / math.sqrt(1 - zeta**2)) * 100
    assert metric_value("overshoot", t, x) == pytest.approx(expected, abs=0.5)
    assert metric_value("final", t, x) == pytest.approx(-0.1, abs=1e-6)


@pytest.mark.parametrize(
    "entry, field, words",
    [
        ({"kind": "perod"}, "kind", "closest: period"),
        ({"kind": "first_crossing"}, None, "needs 'level'"),
        ({"kind": "settling_time"}, None, "one of 'band'"),
        ({"kind": "settling_time", "band": 0.02, "band_abs": 0.1}, None, "one of 'band'"),
        ({"kind": "settling_time", "band": -0.02}, "band", "positive"),
        ({"kind": "max", "level": 1.0}, "level", "first_crossing"),
        ({"kind": "max", "start": 2.0, "end": 1.0}, "end", "after start"),
        ({"kind": "max", "end": math.nan}, "end", "finite"),
        ({"kind": "max", "start": -1.0}, "start", "negative"),
    ],
)
def test_bad_metric_entries_name_the_field(entry, field, words):
    with pytest.raises(MetricError) as err:
        Metric(name="m", signal="Joints/slide_x:qpos", **entry)
    assert err.value.field == field and words in str(err.value)


def test_the_log_gives_values_as_the_run_goes_and_starts_over_when_time_goes_back():
    from mjrig.runtime.analysis.metric_log import MetricLog

    log = MetricLog(
        [
            Metric(name="top", signal="a", kind="max"),
            Metric(name="area", signal="b", kind="integral"),
            Metric(name="late", signal="a", kind="mean", start=1.0),
        ]
    )
    assert all(math.isnan(v) for v in log.values().values())
    t = steps(3.0)
    for k, tk in enumerate(t):  # past the first 1024 steps: the log grows
        log.add(tk, np.array([math.sin(tk), 2.0]))
        if k == 1500:
            live = log.values()
            assert live["top"] == pytest.approx(math.sin(t[1500]), abs=1e-12)  # still rising
    final = log.values()
    assert final["top"] == pytest.approx(1.0, abs=1e-6) and final["area"] == pytest.approx(2.0 * t[-1])
    assert final["late"] == pytest.approx(np.mean(np.sin(t[t >= 1.0 - 1e-6])))
    log.add(0.0, np.array([-5.0, 1.0]))  # a reset: the run starts over
    assert log.values()["top"] == -5.0 and log.n == 1


def test_a_metric_added_mid_run_starts_from_what_was_kept():
    """A rig edited at t = 3 s: the metrics it had go on from every step logged; a new metric's
    signal comes from the plots' kept rows (interpolated onto those steps), and its value covers
    the kept stretch, not only the steps since the edit."""
    from mjrig.runtime.analysis.metric_log import MetricLog

    old = MetricLog([Metric(name="top", signal="a", kind="max")])
    t = steps(3.0)
    for tk in t:
        old.add(tk, np.array([math.sin(tk)]))
    kept_t = np.arange(int(1.0 * 200), int(3.0 * 200) + 1) / 200.0  # the plots kept 1..3 s at 200 Hz
    new = MetricLog([Metric(name="top", signal="a", kind="max"), Metric(name="area", signal="b", kind="integral")])
    new.seed(old, lambda s: (kept_t, 2.0 * np.ones_like(kept_t)) if s == "b" else (np.empty(0), np.empty(0)))
    assert new.n == old.n and new.since("top") == t[0] and new.since("area") == pytest.approx(1.0)
    t2 = t[-1] + steps(1.0)
    for tk in t2:
        new.add(tk, np.array([math.sin(tk), 2.0]))
    values = new.values()
    assert values["top"] == pytest.approx(1.0, abs=1e-6)  # over 0..4 s, not 3..4 s
    assert values["area"] == pytest.approx(2.0 * (t2[-1] - 1.0), rel=1e-3)  # from 1 s, where the kept rows begin
    fresh = MetricLog([Metric(name="area", signal="b", kind="integral")])  # no old log: the kept rows' times
    fresh.seed(None, lambda s: (kept_t, 2.0 * np.ones_like(kept_t)))
    assert fresh.n == kept_t.size and fresh.values()["area"] == pytest.approx(4.0)


def test_a_metric_window_after_the_run_is_refused_naming_the_field(tmp_path):
    """A window wholly after the run's end gave a silent null: now one line naming the field."""
    from mjrig.runtime.errors import ConfigError

    src = (REPO / "models" / "spring_mass.toml").read_text()
    path = tmp_path / "late.toml"
    path.write_text(
        src.replace('model = "spring_mass.xml"', f'model = "{REPO / "models" / "spring_mass.xml"}"')
        + '\n[[metrics]]\nname = "late"\nsignal = "Joints/slide_x:qpos"\nkind = "max"\nstart = 6.0\n'
    )
    with pytest.raises(ConfigError) as err:
        prepare(load_scenario(path), record=False)  # duration 5 s
    line = str(err.value)
    assert "\n" not in line and "late.toml:" in line and "start" in line and "'late'" in line and "5 s" in line, line
    prepare(load_scenario(path), record=False, duration=7.0)  # a longer run covers it
