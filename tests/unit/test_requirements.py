"""Requirements: each bound (min, max, final ± tolerance) over windows, the first violation exact to
one step, stop_on fail/pass, live state, and signals read whether or not they are recorded.

Scripted signals go straight through ``Requirement.update``; the physics tests run the bundled
spring-mass rig undamped, whose motion is closed-form: the tip starts 0.1 m past the spring's
rest length, so q(t) = -0.1 (1 - cos ωt) with ω = sqrt(k/m), m = 1 kg.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from mjrig.headless import prepare, run
from mjrig.runtime.analysis.requirements import FAILED, PASSED, Requirement, RequirementError
from mjrig.runtime.errors import ConfigError
from mjrig.scenario.builder import build_rig
from mjrig.scenario.parse import parse_scenario

MODELS = Path(__file__).resolve().parents[2] / "models"
DT = 0.001


def feed(req: Requirement, values, *, dt: float = DT, t0: float = 0.0) -> list[int]:
    """Feed ``values`` at t0, t0 + dt, ... (the times a run's rows have); returns the events."""
    req.arm(dt)
    t, events = t0, []
    for v in values:
        events.append(req.update(t, float(v)))
        t += dt  # a running sum, as MuJoCo's time is
    return events


# --- scripted signals -----------------------------------------------------------------------------


def test_min_fails_at_the_first_step_below_and_reports_the_observed_minimum():
    req = Requirement(name="r", signal="s", min=1.0)
    values = [3.0, 2.0, 1.0, 0.99, 0.5, 2.0]  # 1.0 itself holds; 0.99 at t = 3 ms fails
    events = feed(req, values)
    assert events == [0, 0, 0, FAILED, 0, 0]
    assert not req.passed and req.first_violation == pytest.approx(0.003, abs=1e-12)
    assert req.value == 0.5 and req.limit == 1.0  # the window's minimum, not the first bad value
    assert req.finish() == 0 and not req.passed


def test_max_holds_when_never_above_and_passes_at_the_end():
    req = Requirement(name="r", signal="s", max=2.0)
    assert feed(req, [1.0, 2.0, 1.5]) == [0, 0, 0]
    assert req.passed and not req.decided and req.value == 2.0 and req.limit == 2.0
    assert req.finish() == PASSED and req.decided and req.first_violation is None
    req2 = Requirement(name="r", signal="s", max=2.0)
    feed(req2, [1.0, 2.5, 3.0, 0.0])
    assert req2.first_violation == pytest.approx(0.001) and req2.value == 3.0


def test_violations_outside_the_window_do_not_count():
    req = Requirement(name="r", signal="s", min=0.0, max=1.0, start=0.002, end=0.004)
    # t = 0, 1, 2, 3, 4, 5 ms: out-of-range values only at 0, 1 and 5 ms
    assert feed(req, [-5.0, 9.0, 0.5, 0.2, 0.9, 99.0]) == [0, 0, 0, 0, PASSED, 0]
    assert req.passed and req.decided and req.value == pytest.approx(0.9) and req.limit == 1.0  # least margin: max
    req = Requirement(name="r", signal="s", min=0.0, start=0.002, end=0.004)
    assert feed(req, [0.0, 0.0, 0.0, -1e-9, 0.0]) == [0, 0, 0, FAILED, 0]
    assert req.first_violation == pytest.approx(0.003)


def test_final_is_the_last_step_at_or_before_end_within_tolerance():
    # end = 3.5 ms falls between steps: the value at 3 ms decides, at that step.
    req = Requirement(name="r", signal="s", final=1.0, tolerance=0.1, end=0.0035)
    assert feed(req, [5.0, 5.0, 5.0, 1.09, -7.0]) == [0, 0, 0, PASSED, 0]
    assert req.passed and req.value == pytest.approx(1.09) and req.limit == pytest.approx(1.1)
    req = Requirement(name="r", signal="s", final=1.0, tolerance=0.1, end=0.0035)
    assert feed(req, [1.0, 1.0, 1.0, 0.85, 1.0]) == [0, 0, 0, FAILED, 0]
    assert not req.passed and req.first_violation == pytest.approx(0.003)
    assert req.value == pytest.approx(0.85) and req.limit == pytest.approx(0.9)
    # end exactly on a step: that step decides; with no end, the run's end does
    req = Requirement(name="r", signal="s", final=2.0, end=0.002)
    assert feed(req, [0.0, 0.0, 2.0, 0.0]) == [0, 0, PASSED, 0]
    req = Requirement(name="r", signal="s", final=2.0, tolerance=0.5)
    assert feed(req, [0.0, 2.4, 2.6]) == [0, 0, 0] and req.passed
    assert req.finish() == FAILED and req.first_violation == pytest.approx(0.002) and req.value == 2.6


def test_nan_steps_are_not_observed_and_an_empty_window_fails():
    req = Requirement(name="r", signal="s", min=0.0)
    assert feed(req, [math.nan, 1.0, math.nan]) == [0, 0, 0]
    assert req.finish() == PASSED and req.value == 1.0
    req = Requirement(name="r", signal="s", max=1.0, start=5.0)
    feed(req, [0.0] * 10)
    assert req.finish() == FAILED and not req.passed and req.value is None and req.first_violation is None
    assert req.entry() == {"name": "r", "signal": "s", "pass": False, "value": None, "limit": 1.0, "time": None}


def test_time_going_back_starts_over():
    req = Requirement(name="r", signal="s", max=1.0)
    feed(req, [0.0, 2.0])
    assert not req.passed
    assert req.update(0.0, 0.5) == 0 and req.passed and req.first_violation is None


@pytest.mark.parametrize(
    "fields, field, words",
    [
        ({}, None, "at least one bound"),
        ({"min": 2.0, "max": 1.0}, "max", "below min"),
        ({"max": 1.0, "tolerance": 0.1}, "tolerance", "goes with 'final'"),
        ({"final": 1.0, "tolerance": -0.1}, "tolerance", "negative"),
        ({"max": 1.0, "start": 2.0, "end": 1.0}, "end", "after start"),
        ({"max": 1.0, "stop_on": "never"}, "stop_on", '"fail" or "pass"'),
        ({"max": math.inf}, "max", "finite"),
    ],
)
def test_a_requirement_that_makes_no_sense_is_refused(fields, field, words):
    with pytest.raises(RequirementError, match=words) as info:
        Requirement(name="r", signal="s", **fields)
    assert info.value.field == field


# --- on the spring-mass rig -------------------------------------------------------------------------

K = 200.0
OMEGA = math.sqrt(K / 1.0)
CROSS = math.pi / (3 * OMEGA)  # q(t) = -0.1 (1 - cos ωt) reaches -0.05 when ωt = π/3 (74.0 ms)


def scenario(
    tmp_path: Path, requirements: str, *, signals: str | None = '"joints", "loads", "params"', duration: float = 0.3
):
    text = (
        f'model = "{MODELS / "spring_mass.xml"}"\n[simulation]\nduration = {duration}\ntimestep = {DT}\n'
        f"[params]\nk = {K}\n"
        '[[loads]]\nname = "main_spring"\nkind = "ideal_spring"\nat = "tip"\nto = "base"\nstiffness = "k"\n'
        "rest_length = 0.25\n"
        '[[proximities]]\nname = "gap"\na = "tip"\nb = "stop"\n'
        + (f'[recording]\npath = "out.parquet"\nsignals = [{signals}]\n' if signals is not None else "")
        + requirements
    )
    path = tmp_path / "rig.toml"
    path.write_text(text, encoding="utf-8")
    return parse_scenario(text, source=path, base=tmp_path)


def requirement(name: str, signal: str, **fields) -> str:
    body = "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in fields.items())
    return f'[[requirements]]\nname = "{name}"\nsignal = "{signal}"\n{body}'


def headless(sc, tmp_path: Path):
    setup = prepare(sc, out=tmp_path / "out.parquet" if sc.recording.path else None)
    run(setup)
    return setup


def test_the_first_violation_is_the_closed_form_crossing_to_one_step(tmp_path):
    sc = scenario(tmp_path, requirement("amplitude", "Joints/slide_x:qpos", min=-0.05))
    setup = headless(sc, tmp_path)
    (req,) = setup.runtime.requirements
    assert not req.passed and abs(req.first_violation - CROSS) < DT
    df = pl.read_parquet(tmp_path / "out.parquet")
    q, t = df["Joints/slide_x:qpos"].to_numpy(), df["time"].to_numpy()
    first = int(np.argmax(q < -0.05))
    assert req.first_violation == t[first]  # exactly the first recorded step below the bound
    assert req.value == pytest.approx(q.min()) and q.min() == pytest.approx(-0.2, abs=2e-3)  # the window's minimum
    passed = df["Requirements/amplitude:pass"].to_numpy()
    assert (passed[:first] == 1.0).all() and (passed[first:] == 0.0).all()


def test_a_requirement_on_an_unrecorded_signal_still_evaluates(tmp_path):
    req = requirement("amplitude", "Joints/slide_x:qpos", min=-0.05)
    for signals in ('"params"', None):  # the joints group not recorded; nothing recorded at all
        sc = scenario(tmp_path, req, signals=signals)
        setup = headless(sc, tmp_path)
        (r,) = setup.runtime.requirements
        assert not r.passed and abs(r.first_violation - CROSS) < DT
        assert setup.runtime.signal_manager is None or "Joints/slide_x:qpos" not in setup.runtime.signal_manager.columns
    df = pl.read_parquet(tmp_path / "out.parquet")  # from the run that recorded params only
    assert "Joints/slide_x:qpos" not in df.columns and "Requirements/amplitude:pass" in df.columns
    assert df["Requirements/amplitude:pass"].to_list()[-1] == 0.0


SIGNALS = [
    "Joints/slide_x:qvel",
    "Loads/main_spring:fx",
    "Loads/main_spring:length",
    "Proximities/gap:distance",
    "Params/k:value",
    "Sensors/block_x:0",
    "Bodies/block:x",
    "Energy/all:kinetic",
    "Contacts/all:count",
]


def test_each_kind_of_signal_is_read_as_the_recorder_records_it(tmp_path):
    """The final value at end = 0.2 s of every kind of column (spring forces are worked out per
    block when recorded, per step for a requirement) equals the recorded value at that row."""
    (tmp_path / "a").mkdir()
    full = scenario(tmp_path / "a", "", signals=None)
    full.recording.path = tmp_path / "a" / "out.parquet"  # every group
    headless(full, tmp_path / "a")
    rec = pl.read_parquet(tmp_path / "a" / "out.parquet")
    row = rec.filter((rec["time"] - 0.2).abs() < DT / 2)
    reqs = "".join(requirement(f"r{i}", s, final=0.0, tolerance=1e9, end=0.2) for i, s in enumerate(SIGNALS))
    sc = scenario(tmp_path, reqs, signals='"params"')
    setup = headless(sc, tmp_path)
    for r, s in zip(setup.runtime.requirements, SIGNALS):
        assert r.passed and r.value == pytest.approx(row[s][0], rel=1e-12, abs=1e-12), s
    assert setup.runtime.requirements[1].value == pytest.approx(-K * 0.1 * math.cos(OMEGA * 0.2), rel=5e-3)


def test_stop_on_fail_ends_the_run_at_the_failing_step(tmp_path):
    sc = scenario(
        tmp_path,
        requirement("amplitude", "Joints/slide_x:qpos", min=-0.05, stop_on="fail")
        + requirement("force", "Loads/main_spring:fx", max=1e6),
    )
    setup = headless(sc, tmp_path)
    first = setup.runtime.requirements[0].first_violation
    assert setup.stopped_at == pytest.approx(first + DT)
    df = pl.read_parquet(tmp_path / "out.parquet")
    assert df["time"].to_list()[-1] == first and df["Requirements/amplitude:pass"].to_list()[-2:] == [1.0, 0.0]
    assert setup.runtime.requirements[1].passed and setup.runtime.requirements[1].decided  # decided at the run's end


def test_stop_on_pass_ends_the_run_at_the_windows_end(tmp_path):
    # min/max: passed at the window's end with no violation; final: within tolerance at the end
    q_end = -0.1 * (1 - math.cos(OMEGA * 0.15))
    for req in (
        requirement("small", "Joints/slide_x:qpos", min=-0.25, max=0.05, end=0.1, stop_on="pass"),
        requirement("there", "Joints/slide_x:qpos", final=q_end, tolerance=2e-3, end=0.1505, stop_on="pass"),
    ):
        sc = scenario(tmp_path, req)
        setup = headless(sc, tmp_path)
        (r,) = setup.runtime.requirements
        end = 0.1 if "small" in req else 0.15
        assert r.passed and r.decided and setup.stopped_at == pytest.approx(end + DT)
        assert pl.read_parquet(tmp_path / "out.parquet")["time"].to_list()[-1] == pytest.approx(end)
    sc = scenario(tmp_path, requirement("never", "Joints/slide_x:qpos", final=0.5, end=0.1, stop_on="pass"))
    setup = headless(sc, tmp_path)  # it failed: the run goes on to its duration
    assert setup.stopped_at is None and not setup.runtime.requirements[0].passed
    assert pl.read_parquet(tmp_path / "out.parquet").height == 300


def test_live_state_on_the_runtime_and_a_reset_starts_over(tmp_path):
    sc = scenario(tmp_path, requirement("amplitude", "Joints/slide_x:qpos", min=-0.05), signals=None)
    rig = build_rig(sc)
    rm, m, d = rig.runtime, rig.model, rig.data
    (r,) = rm.requirements
    for _ in range(50):
        rm.step(m, d)
    # the last step seen is at t = 49 ms; semi-implicit Euler leads the closed form by about half a step
    assert r.passed and r.first_violation is None
    assert r.value == pytest.approx(-0.1 * (1 - math.cos(OMEGA * 0.0495)), rel=1e-3)
    for _ in range(50):
        rm.step(m, d)
    assert not r.passed and abs(r.first_violation - CROSS) < DT and r.limit == -0.05
    rm.set_recorder(None)  # the rig is resolved again at the next step: the state stays
    rm.step(m, d)
    assert not r.passed
    rig.reset()
    rm.step(m, d)
    assert r.passed and r.first_violation is None


def test_unknown_signals_name_the_closest_columns_and_the_line(tmp_path):
    sc = scenario(
        tmp_path,
        requirement("ok", "Joints/slide_x:qpos", max=1.0) + requirement("bad", "Proximities/gapp:distance", max=1.0),
    )
    with pytest.raises(
        ConfigError,
        match=r"rig\.toml:\d+: requirements\[1\]\.signal: unknown signal "
        r"'Proximities/gapp:distance' \(closest: Proximities/gap:distance",
    ):
        build_rig(sc)
    sc = scenario(tmp_path, requirement("r", "Requirements/r:pass", max=1.0))
    with pytest.raises(ConfigError, match="unknown signal"):
        build_rig(sc)
    with pytest.raises(ConfigError, match=r"requirements\[1\]\.name: duplicate requirement name 'r'"):
        scenario(tmp_path, requirement("r", "Joints/slide_x:qpos", max=1.0) + requirement("r", "time", max=1.0))


def test_requirements_do_not_change_the_physics(tmp_path):
    """Checked every step (the recorder's hook runs then), the run is bit-identical to one without."""
    runs = []
    for i, reqs in enumerate(
        ("", requirement("r", "Loads/main_spring:fx", max=1e9) + requirement("s", "Energy/all:kinetic", max=1e9))
    ):
        folder = tmp_path / str(i)
        folder.mkdir()
        sc = scenario(folder, reqs, signals='"joints"')
        sc.recording.rate = 100.0  # most steps record nothing: a plain step unless requirements need the hook
        headless(sc, folder)
        runs.append(pl.read_parquet(folder / "out.parquet")["Joints/slide_x:qpos"].to_numpy())
    assert runs[0].size == 30 and np.array_equal(runs[0], runs[1])


def test_the_probe_reads_plain_derived_and_contact_columns():
    import mujoco

    from mjrig.runtime.telemetry.signal_probe import SignalProbe, rig_columns
    from mjrig.runtime.telemetry.signal_sources import Derived

    m = mujoco.MjModel.from_xml_path(str(MODELS / "spring_mass.xml"))
    d = mujoco.MjData(m)
    raw = np.array([1.5, -2.0])
    twice = Derived("loads", [raw], [("Loads/x:a", ""), ("Loads/x:b", "")], lambda block: 2.0 * block)
    prepared = []
    extra = [twice, ("params", np.array([7.0]), [("Params/p:value", 0, "")])]
    probe = SignalProbe(
        m,
        d,
        ["Loads/x:b", "Joints/slide_x:qpos", "Contacts/all:count", "Params/p:value"],
        extra=extra,
        prepare={"loads": lambda: prepared.append(1)},
    )
    d.qpos[0] = 0.125
    assert probe.read().tolist() == [-4.0, 0.125, 0.0, 7.0] and prepared == [1] and not probe.prepares
    raw[1] = 3.0
    assert probe.read()[0] == 6.0  # worked out from the raw row at every read
    with pytest.raises(KeyError):
        SignalProbe(m, d, ["Joints/slide_x:qpso"], extra=extra)
    cols = rig_columns(m, d, extra=[*extra, ("requirements", np.ones(1), [("Requirements/r:pass", 0, "")])])
    assert {"Loads/x:a", "Contacts/all:max_penetration", "Energy/all:kinetic", "Sensors/block_acc:2"} <= set(cols)
    assert "Requirements/r:pass" not in cols and "time" not in cols
