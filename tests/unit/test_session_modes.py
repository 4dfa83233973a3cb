"""The rig's modes in the app, through the session's commands (what the Modes section's buttons
submit; tests/gui/test_desktop_modes.py does it with real input): worked out on a background job
at the run's state and params now, the Bode response, a mode animated about the linearisation
state with the run's own state put back after each frame, and Play ending the animation."""

from __future__ import annotations

import math
import time
from pathlib import Path

import mujoco
import numpy as np
import pytest
from test_modes import chain

from mjrig import commands as C
from mjrig.session.kernel import Session
from tests.waiting import wait_for

K, M = 800.0, 2.0


def _settled(s: Session) -> C.PanelState:
    """The panel state once the modes job has ended."""
    return wait_for(lambda: not (state := s.publish()).part(C.ModesPart).running and state, what="the modes job to end")


@pytest.fixture()
def session(tmp_path: Path, open_session) -> Session:
    s = open_session(chain(tmp_path, k=K, m=M))
    yield s
    s.close()


def test_modes_follow_the_sliders_and_give_the_bode_response(session):
    session.handle(C.SetParam("k", 4 * K))  # a slider moved: the modes are of the rig as it is now
    session.handle(C.ComputeModes(bode=("F", ("Joints/x2:qpos",))))
    first = session.publish().part(
        C.ModesPart
    )  # a background job: under way, or (a small rig, a quick thread) done already
    assert first.running or first.modes, first
    part = _settled(session).part(C.ModesPart)
    first = math.sqrt(4 * K * (3 - math.sqrt(5)) / (2 * M)) / (2 * math.pi)
    assert part.error == "" and [m.kind for m in part.modes] == ["oscillatory"] * 2
    assert part.modes[0].undamped_hz == pytest.approx(first, rel=0.005)
    assert dict(part.modes[0].shape) == pytest.approx({"x2": 1.0, "x1": 0.618034}, abs=1e-4)
    (bode,) = part.bode
    assert (bode.input, bode.output, bode.unit) == ("F", "Joints/x2:qpos", "m/N")
    assert 10 ** (bode.magnitude_db[0] / 20) == pytest.approx(2 / (4 * K), rel=0.02)


def test_a_bad_bode_pair_is_one_line(session):
    session.handle(C.ComputeModes(bode=("F", ("Joints/x9:qpos",))))
    part = _settled(session).part(C.ModesPart)
    assert part.error.startswith("Bode output 'Joints/x9:qpos': unknown signal") and "\n" not in part.error


def test_a_shown_mode_moves_the_view_and_leaves_the_runs_state(session):
    s = session
    s.handle(C.Play())
    s.advance(budget_s=0.05)  # a run under way: its state is what the modes are of
    s.handle(C.ComputeModes())
    _settled(s)
    m, d = s.model, s.data
    state = np.empty(mujoco.mj_stateSize(m, mujoco.mjtState.mjSTATE_INTEGRATION))
    mujoco.mj_getState(m, d, state, mujoco.mjtState.mjSTATE_INTEGRATION)
    q_run = d.qpos.copy()
    s.handle(C.ShowMode(1, amplitude=2.0))
    assert s.run.state == C.RunState.PAUSED and s.publish().part(C.ModesPart).shown == 1
    seen = []
    for _ in range(40):  # frames over about 0.8 s: the second mode swings x1 against x2
        assert s.view.draw()
        seen.append(d.qpos - q_run)
        s.view.undraw()
        time.sleep(0.02)
    after = np.empty_like(state)
    mujoco.mj_getState(m, d, after, mujoco.mjtState.mjSTATE_INTEGRATION)
    np.testing.assert_array_equal(after, state)  # the run's own state, bit for bit
    seen = np.array(seen)
    assert np.ptp(seen[:, 0]) > 0.05  # 2 x a tenth of the model's size, swung
    ratio = seen[:, 1] / np.where(np.abs(seen[:, 0]) > 1e-3, seen[:, 0], np.nan)
    assert np.nanmedian(ratio) == pytest.approx(-0.618034, abs=0.02)  # the shape: opposed, golden ratio
    assert s.view.rig_hidden is False  # between frames nothing is hidden
    s.handle(C.Play())  # playing ends the animation
    assert not s.view.draw() and s.publish().part(C.ModesPart).shown is None


def test_a_failed_response_keeps_the_modes(session):
    session.handle(C.ComputeModes(bode=("F", ("Joints/x2:qpos",))))
    before = _settled(session).part(C.ModesPart)
    session.handle(C.ComputeModes(bode=("F", ("Joints/x9:qpos",))))  # a response that cannot be worked out
    after = _settled(session).part(C.ModesPart)
    assert after.error.startswith("Bode output 'Joints/x9:qpos'")
    assert after.modes == before.modes and len(after.modes) == 2 and after.bode == before.bode


def test_a_reload_marks_the_modes_stale_and_another_rig_starts_without_them(session, tmp_path):
    s = session
    s.handle(C.ComputeModes(bode=("F", ("Joints/x2:qpos",))))
    first = _settled(s).part(C.ModesPart)
    assert not first.stale
    chain(tmp_path, k=K, m=2 * M)  # the model file edited: twice the masses
    s.handle(C.Reload(changed="model"))
    stale = s.publish().part(C.ModesPart)
    assert stale.stale and stale.modes == first.modes and stale.bode == first.bode  # shown, marked
    with pytest.raises(Exception, match="before the model changed"):
        s.handle(C.ShowMode(0))
    s.handle(C.ComputeModes())
    fresh = _settled(s).part(C.ModesPart)
    assert not fresh.stale and fresh.bode == ()  # the old response is not carried into the new result
    w1 = math.sqrt(K * (3 - math.sqrt(5)) / (2 * 2 * M)) / (2 * math.pi)  # the heavier chain's first mode
    assert fresh.modes[0].undamped_hz == pytest.approx(w1, rel=0.005)
    other = tmp_path / "other"
    other.mkdir()
    s.handle(C.OpenModel(str(chain(other, k=K, m=M)), discard=True))
    assert s.publish().part(C.ModesPart) == C.ModesPart()


def test_bode_to_a_load_magnitude_and_an_actuator_input_on_bundled_rigs_at_rest(open_session):
    """No param needed: the shaker's drive (a joint force with a sine profile) is an input as it
    is; its response is the spring-mass's, 1/k at low frequency and peaking at sqrt(k/m)/2π
    (k = 200 N/m, m = 1 kg). The robot arm's shoulder motor input moves the shoulder."""
    from mjrig.scenario.bundled import MODELS_DIR

    s = open_session(MODELS_DIR / "shaker.toml")
    try:
        s.handle(C.ComputeModes(bode=("Loads/drive:magnitude", ("Joints/slide_x:qpos",))))
        part = _settled(s).part(C.ModesPart)
        assert part.error == "", part.error
        (bode,) = part.bode
        assert bode.input == "Loads/drive:magnitude"
        assert 10 ** (bode.magnitude_db[0] / 20) == pytest.approx(1 / 200.0, rel=0.02)
        peak = bode.frequency_hz[int(np.argmax(bode.magnitude_db))]
        assert peak == pytest.approx(math.sqrt(200.0) / (2 * math.pi), rel=0.01)
        assert s.document.scenario(s.document.doc).params.keys() == {"k", "c"}  # the rig is unchanged
    finally:
        s.close()
    s = open_session(MODELS_DIR / "robot_arm.toml")
    try:
        s.handle(C.ComputeModes(bode=("Actuators/shoulder:ctrl", ("Joints/shoulder:qpos",))))
        part = _settled(s).part(C.ModesPart)
        assert part.error == "" and len(part.bode) == 1, part.error
        assert max(part.bode[0].magnitude_db) > -200
    finally:
        s.close()


def test_modes_at_a_time_of_the_run_and_two_outputs_in_one_bode(session):
    """``at``: the chain run from its start to 0.5 s and linearised there (the run's own state
    is not used); ``bode`` with two outputs: one response each."""
    session.handle(C.ComputeModes(at=0.5, bode=("F", ("Joints/x1:qpos", "Joints/x2:qpos"))))
    part = _settled(session).part(C.ModesPart)
    assert part.error == "" and part.point == "t = 0.5 s" and part.at == pytest.approx(0.5), part
    assert [(c.input, c.output) for c in part.bode] == [("F", "Joints/x1:qpos"), ("F", "Joints/x2:qpos")]
    assert 10 ** (part.bode[1].magnitude_db[0] / 20) == pytest.approx(2 / K, rel=0.02)  # x2's static gain
    assert 10 ** (part.bode[0].magnitude_db[0] / 20) == pytest.approx(1 / K, rel=0.02)  # x1's: one spring of two


def test_modes_of_a_replayed_recording_at_the_scrubbed_instant(tmp_path, open_session):
    """A pendulum's recording replayed and scrubbed to 0.3 s: *Work out modes* linearises the rig
    at that instant of the recording, where it swings at sqrt(m g l cos θ / I) for the recorded θ."""
    import numpy as np
    import polars as pl

    from mjrig.headless import prepare, run
    from mjrig.scenario.parse import load_scenario
    from tests.unit.test_modes import pendulum

    m, l, ic = 0.5, 0.4, 2e-3
    path = pendulum(tmp_path, m=m, l=l, ic=ic, c=0.0)
    text = path.read_text().replace("duration = 30.0", "duration = 1.0")
    path.write_text(text + "\n[initial]\nqpos = { swing = 1.0 }\n")
    rec = tmp_path / "swing.parquet"
    run(prepare(load_scenario(path), out=rec))
    s = open_session(rec)
    try:
        s.handle(C.Scrub(0.3))
        s.handle(C.ComputeModes())
        part = _settled(s).part(C.ModesPart)
        frame = pl.read_parquet(rec, columns=["time", "Joints/swing:qpos"])
        theta = float(np.interp(0.3, frame["time"].to_numpy(), frame["Joints/swing:qpos"].to_numpy()))
        assert part.error == "" and part.at == pytest.approx(0.3) and 0.1 < abs(theta) < 0.95, (part, theta)
        want = math.sqrt(m * 9.81 * l * math.cos(theta) / (ic + m * l * l)) / (2 * math.pi)
        assert [x.undamped_hz for x in part.modes] == pytest.approx([want], rel=0.005)
    finally:
        s.close()
