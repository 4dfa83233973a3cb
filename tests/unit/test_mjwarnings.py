"""MuJoCo's warnings go through mjrig.runtime.mjwarnings: to logging and routes, never to a file."""

from __future__ import annotations

import logging

import mujoco
import pytest

from mjrig.runtime import mjwarnings

SLIDER = """<mujoco><worldbody><body><joint name="x" type="slide"/><geom size=".1"/></body></worldbody></mujoco>"""


CROWDED = """<mujoco><size memory="10K"/><worldbody><geom type="plane" size="1 1 .1"/>
  <body pos="0 0 0.1"><freejoint/><geom type="box" size=".05 .05 .05"/></body>
  <body pos="0.2 0 0.1"><freejoint/><geom type="box" size=".05 .05 .05"/></body>
  <body pos="0.4 0 0.1"><freejoint/><geom type="box" size=".05 .05 .05"/></body></worldbody></mujoco>"""
ARENA_FULL = (
    "Insufficient arena memory for the number of constraints generated. "
    "Increase arena memory allocation above 10K bytes. Time = 0.1000."
)


def crowded_landing() -> None:
    """Three boxes land with no arena room for their constraints: MuJoCo warns (no divergence)."""
    m = mujoco.MjModel.from_xml_string(CROWDED)
    d = mujoco.MjData(m)
    while d.time < 0.11:
        mujoco.mj_step(m, d)


def nan_velocity_step(model: mujoco.MjModel) -> mujoco.MjData:
    """One step from a NaN velocity: MuJoCo warns "Nan, Inf or huge value in QVEL" and resets."""
    data = mujoco.MjData(model)
    data.qvel[0] = float("nan")
    mujoco.mj_step(model, data)
    return data


def test_route_gets_each_warning_once_and_flags_divergence(tmp_path, monkeypatch, caplog):
    monkeypatch.chdir(tmp_path)
    model = mujoco.MjModel.from_xml_string(SLIDER)
    got: list[mjwarnings.MujocoWarning] = []
    caplog.set_level(logging.WARNING, logger="mjrig.mujoco")
    with mjwarnings.route(got.append) as r:
        assert mjwarnings.installed()
        for _ in range(3):  # three resets: three warnings, one text (less its time)
            d = nan_velocity_step(model)
        crowded_landing()  # not a divergence
    assert [w.text for w in got] == [
        "Nan, Inf or huge value in QVEL at DOF 0. The simulation is unstable. Time = 0.0000.",
        ARENA_FULL,
    ]
    assert [w.divergence for w in got] == [True, False]
    assert r.repeats == 2
    # the divergence counters the stepper relies on are MuJoCo's, untouched by the routing
    assert d.warning[mujoco.mjtWarning.mjWARN_BADQVEL].number == 1
    # logging saw every call; MuJoCo wrote no log file into the working folder
    assert sum("QVEL" in rec.getMessage() for rec in caplog.records) == 3
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()
    assert not mujoco.MjLogConfig.get().logto_file
    # closed (twice): the sink hears no more
    r.close()
    nan_velocity_step(model)
    assert len(got) == 2


def test_status_sink_logs_warnings_but_not_divergence():
    logged: list[tuple[str, str]] = []
    with mjwarnings.route(mjwarnings.status_sink(lambda level, text: logged.append((level, text)))):
        nan_velocity_step(mujoco.MjModel.from_xml_string(SLIDER))
        crowded_landing()
    assert logged == [("warning", f"MuJoCo: {ARENA_FULL}")]


def test_a_failing_sink_is_removed_and_others_still_hear(caplog):
    calls: list[str] = []

    def broken(w: mjwarnings.MujocoWarning) -> None:
        calls.append(w.text)
        raise RuntimeError("sink bug")

    with mjwarnings.route(broken), mjwarnings.route(lambda w: calls.append("ok:" + w.text)):
        crowded_landing()
        nan_velocity_step(mujoco.MjModel.from_xml_string(SLIDER))
    assert calls[:2] == [ARENA_FULL, "ok:" + ARENA_FULL]
    assert len(calls) == 3 and calls[2].startswith("ok:Nan, Inf or huge value in QVEL")
    failed = [rec for rec in caplog.records if "failed; removed" in rec.getMessage()]
    assert len(failed) == 1 and failed[0].levelno == logging.ERROR and "sink bug" in str(failed[0].exc_info[1])


@pytest.mark.parametrize("text", ["multi\nline  warning", "  spaced\t"])
def test_text_is_one_line(text):
    """What MuJoCo hands the handler (called here as MuJoCo calls it) becomes one line."""
    got: list[str] = []
    with mjwarnings.route(lambda w: got.append(w.text)):
        mjwarnings._dispatch(text)
    assert got == [" ".join(text.split())]


def test_session_status_log_gets_the_warning_as_the_app_routes_it(tmp_path):
    """As in gui.open_app: a session's status log shows MuJoCo's warning once, no file appears."""
    from mjrig.desktop.sim_thread import run_headless_frames
    from mjrig.session.kernel import Session

    model = tmp_path / "crowded.xml"
    model.write_text(CROWDED)
    session = Session()
    try:
        with mjwarnings.route(mjwarnings.status_sink(session.log)):
            session.open(model)
            run_headless_frames(session, seconds=0.5)  # runs from the start: lands at t = 0.1 s
            assert session.data is not None and session.data.time > 0.11
        warnings = [text for level, text in session.latest().messages if level == "warning"]
        assert warnings == [f"MuJoCo: {ARENA_FULL}"]
    finally:
        session.close()
    assert not list(tmp_path.rglob("MUJOCO_LOG.TXT"))


def test_a_mujoco_with_known_wrong_physics_is_named():
    from mjrig.runtime.mjwarnings import version_problem

    assert "mujoco>=4.0.1" in version_problem("4.0.0")
    assert version_problem("4.0.1") is None and version_problem("4.1.0") is None
    assert version_problem() is None  # the installed one: what pyproject.toml requires
