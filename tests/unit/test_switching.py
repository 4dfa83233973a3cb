"""Opening another rig leaves nothing of the previous one the new one did not ask for: what
Ctrl+E records (the Recording form's plan), the last snapshot, the run state, the timeline.
Through the session's commands, as the panel and the keys submit them (tests/gui drives the same
with real clicks and keys: test_desktop_switching.py)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mjrig import commands as C
from mjrig.scenario.bundled import MODELS_DIR
from mjrig.session.kernel import Session

BALL = "<mujoco model='ball'><worldbody><body><freejoint/><geom size='0.1'/></body></worldbody></mujoco>"


@pytest.fixture()
def session(open_session) -> Session:
    return open_session(MODELS_DIR / "robot_arm.toml")


def steps(s: Session, n: int) -> None:
    for _ in range(n):
        s.run.step()


def recorded(s: Session, path: Path) -> pl.DataFrame:
    s.outputs.jobs.join()  # the recorder is closed on a background job
    return pl.read_parquet(path)


def test_ctrl_e_after_opening_another_rig_records_that_rigs_plan(session: Session, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    # robot_arm recorded from its form, at 50 samples/s, then thruster is opened
    session.handle(C.StartRecording(str(runs / "robot_arm.parquet"), 50.0, ("joints", "energy")))
    steps(session, 100)
    session.handle(C.StopRecording())
    session.open(MODELS_DIR / "thruster.toml")
    session.handle(C.ToggleRecording())  # Ctrl+E
    steps(session, 50)
    session.handle(C.ToggleRecording())
    session.outputs.jobs.join()
    assert sorted(p.name for p in runs.glob("*.parquet")) == ["robot_arm.parquet", "thruster.parquet"]
    df = recorded(session, runs / "thruster.parquet")
    assert {c.split("/")[0] for c in df.columns[2:]} == {
        "Joints",
        "Bodies",
        "Sensors",
        "Loads",
        "Proximities",
        "Params",
        "Energy",
    }
    assert df.height == 50  # every step: no rate in thruster's [recording]
    # the form shows thruster's plan still (with the file written), not robot_arm's
    thrusters = ["joints", "bodies", "sensors", "loads", "proximities", "params", "energy"]
    assert session.publish().outputs.recording_plan == {
        "path": str(runs / "thruster.parquet"),
        "rate": None,
        "signals": thrusters,
    }
    assert session.document.doc["recording"]["signals"] == thrusters


def test_ctrl_e_records_what_the_form_was_edited_to(session: Session, tmp_path: Path) -> None:
    before = session.publish().outputs.plan_revision
    session.handle(C.PlanRecording("runs/edited.parquet", 100.0, ("joints",)))  # each edit of the form
    snap = session.publish()
    assert snap.outputs.plan_revision == before, "the form's own edits must not be echoed back into it"
    assert snap.outputs.recording_plan == {"path": "runs/edited.parquet", "rate": 100.0, "signals": ["joints"]}
    session.handle(C.ToggleRecording())
    steps(session, 50)  # 0.1 s at 2 ms
    session.handle(C.ToggleRecording())
    df = recorded(session, tmp_path / "runs" / "edited.parquet")
    assert {c.split("/")[0] for c in df.columns[2:]} == {"Joints"}
    assert df["time"].diff().drop_nulls().median() == pytest.approx(0.01)
    after = session.publish()
    assert after.outputs.plan_revision > before and after.outputs.recording_plan["path"] == str(
        tmp_path / "runs" / "edited.parquet"
    )


def test_a_bare_model_plans_what_mjrig_run_records(session: Session, tmp_path: Path) -> None:
    (tmp_path / "ball.xml").write_text(BALL)
    session.handle(C.PlanRecording("somewhere/else.parquet", 5.0, ("joints",)))
    session.open(tmp_path / "ball.xml")
    assert session.publish().outputs.recording_plan == {
        "path": str(tmp_path / "runs" / "ball.parquet"),
        "rate": None,
        "signals": None,
    }


def test_an_empty_path_records_to_the_rigs_own_file(session: Session, tmp_path: Path) -> None:
    """Start recording with the form's path empty (emptied, or clicked before the form was filled):
    the rig's own file, never the working folder taken as a file name."""
    (tmp_path / "ball.xml").write_text(BALL)
    session.open(tmp_path / "ball.xml")
    session.handle(C.StartRecording("  ", None, ("joints",)))
    steps(session, 10)
    session.handle(C.StopRecording())
    assert not [text for level, text in session.publish().messages if level == "error"]
    assert recorded(session, tmp_path / "runs" / "ball.parquet").height == 10


def test_reload_keeps_the_form_and_the_snapshot_opening_forgets_them(session: Session) -> None:
    session.handle(C.PlanRecording("runs/mine.parquet", 20.0, ("joints",)))
    session.handle(C.TakeSnapshot())
    opened, revision = session.publish().opened, session.publish().outputs.plan_revision
    session.handle(C.Reload())
    snap = session.publish()
    assert (snap.opened, snap.outputs.plan_revision) == (opened, revision)
    assert snap.outputs.recording_plan["path"] == "runs/mine.parquet" and snap.tools.snapshot_path is not None
    session.open(MODELS_DIR / "robot_arm.toml")  # the same rig, opened again: a new rig
    snap = session.publish()
    assert snap.opened == opened + 1 and snap.outputs.plan_revision > revision
    assert snap.outputs.recording_plan["path"].endswith("runs/robot_arm.parquet") and snap.tools.snapshot_path is None


def test_restore_after_opening_another_rig_says_there_is_none_in_one_line_not_an_error(
    session: Session, tmp_path: Path
) -> None:
    (tmp_path / "ball.xml").write_text(BALL)
    session.handle(C.TakeSnapshot())
    session.open(tmp_path / "ball.xml")
    assert session.publish().tools.snapshot_path is None
    session.submit(C.RestoreSnapshot())  # Ctrl+G / Restore
    session.process_commands()
    said = [(level, text) for level, text in session.publish().messages if "snapshot" in text]
    assert said[-1][0] == "info" and "no snapshot of this rig" in said[-1][1] and "\n" not in said[-1][1]
    assert not any(level == "error" for level, _ in session.publish().messages)


@pytest.mark.parametrize("how", ["paused", "replay_ended"])
def test_a_newly_opened_rig_runs_whatever_the_previous_one_did(session: Session, tmp_path: Path, how: str) -> None:
    if how == "paused":
        session.handle(C.Pause())
    else:  # a replay that reached its end pauses
        session.handle(C.StartRecording(str(tmp_path / "rec.parquet")))
        steps(session, 20)
        session.handle(C.StopRecording())
        session.outputs.jobs.join()
        session.open(tmp_path / "rec.parquet")
        steps(session, 40)
        assert session.replayer.active
    assert session.state == C.RunState.PAUSED
    session.open(MODELS_DIR / "thruster.toml")
    assert session.state == C.RunState.RUNNING and session.steps == 0
    session.handle(C.Pause())
    session.handle(C.Reload())  # a reload is the same rig: it stays as it was
    assert session.state == C.RunState.PAUSED


def test_the_new_rig_has_no_history_or_branches_of_the_old(session: Session) -> None:
    steps(session, 30)
    session.handle(C.Scrub(0.02))
    session.handle(C.Play())
    steps(session, 5)  # a branch
    assert session.publish().timeline.branches == 1
    session.open(MODELS_DIR / "thruster.toml")
    tl = session.publish().timeline
    assert (tl.branches, tl.branch_time, tl.rows) == (0, None, 0)
