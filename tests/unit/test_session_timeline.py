"""The timeline through the session's commands (what the slider and keys submit): scrubbing
restores the state and publishes the cursor, an edit made while scrubbed back acts from that
instant, and a branch's recording starts at the branch time and says so in its metadata."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

from mjrig import commands as C
from mjrig.runtime.errors import ConfigError
from mjrig.session.kernel import Session
from tests.rig_toml import spring

ARM = """
<mujoco model="arm">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 .1"/>
    <site name="anchor" pos="0.3 0 1"/>
    <body name="upper" pos="0 0 0.5">
      <joint name="shoulder" type="hinge" axis="0 1 0" damping="0.5"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="1"/>
      <site name="tip" pos="0.3 0 0"/>
    </body>
    <body name="ball" pos="0.6 0 0.2"><freejoint/><geom size="0.05" mass="0.2"/></body>
  </worldbody>
  <actuator>
    <motor name="drive" joint="shoulder" gear="3" ctrllimited="true" ctrlrange="-2 2"/>
  </actuator>
</mujoco>
"""

SCENARIO = (
    """model = "arm.xml"
[params]
k = { value = 40.0, min = 0.0, max = 500.0 }
u = { value = 0.5, min = -2.0, max = 2.0 }
"""
    + spring(stiffness="k", damping=0.3, rest_length=0.2)
    + """[[controls]]
actuator = "drive"
value = "u"
"""
)


@pytest.fixture()
def session(tmp_path: Path, open_session) -> Session:
    (tmp_path / "arm.xml").write_text(ARM)
    (tmp_path / "arm.toml").write_text(SCENARIO)
    s = open_session(tmp_path / "arm.toml")
    s.run.speed = 0.0
    return s


def steps(s: Session, n: int) -> list[np.ndarray]:
    """``n`` steps through the session's own stepping (StepOnce), the state after each."""
    out = []
    for _ in range(n):
        s.handle(C.StepOnce())
        out.append(np.concatenate([[s.data.time], s.data.qpos, s.data.qvel]))
    return out


def test_scrubbing_restores_the_state_publishes_the_cursor_and_stepping_on_repeats_the_run(session: Session) -> None:
    s = session
    original = steps(s, 300)  # the ball lands on the floor meanwhile
    assert s.data.ncon > 0
    info = s.publish().timeline
    assert info.start == 0.0 and info.end == pytest.approx(0.6) and not info.scrubbed and info.rows == 300
    s.handle(C.Play())
    s.handle(C.Scrub(0.2001))  # the newest kept instant at or before it: t = 0.2
    snap = s.publish()
    assert snap.state == C.RunState.PAUSED
    assert snap.timeline.cursor == pytest.approx(0.2) and snap.timeline.scrubbed
    assert snap.timeline.end == pytest.approx(0.6) and snap.timeline.rows == 301  # the live instant was kept
    assert s.data.time == pytest.approx(0.2) and np.array_equal(s.data.qpos, original[99][1 : 1 + s.model.nq])
    s.handle(C.StepHistory(-1))
    assert s.publish().timeline.cursor == pytest.approx(0.198)
    s.handle(C.StepHistory(+1))
    s.handle(C.StepHistory(+1))
    assert s.data.time == pytest.approx(0.202)
    np.testing.assert_array_equal(np.concatenate([[s.data.time], s.data.qpos, s.data.qvel]), original[100])
    again = steps(s, 199)  # a branch from t = 0.202 with nothing changed: the same run, bit for bit
    assert np.array_equal(np.array(again), np.array(original[101:]))
    info = s.publish().timeline
    assert not info.scrubbed and info.branches == 1 and info.branch_time == pytest.approx(0.202)
    assert info.rows == 300 and info.end == pytest.approx(0.6)
    # scrubbing to the newest instant and playing on is no branch
    s.handle(C.Scrub(10.0))
    assert s.publish().timeline.cursor == pytest.approx(0.6) and not s.publish().timeline.scrubbed
    steps(s, 1)
    assert s.publish().timeline.branches == 1
    with pytest.raises(ConfigError, match="number"):
        s.handle(C.Scrub(float("nan")))


def test_an_edit_made_while_scrubbed_back_acts_from_that_instant(session: Session) -> None:
    s = session
    steps(s, 200)
    s.handle(C.Scrub(0.1))
    qpos = s.data.qpos.copy()
    s.handle(C.SetParam("u", -1.5))
    s.handle(C.PutEntry("loads", {"name": "push", "kind": "force", "at": "body:ball", "vector": [0.0, 0.0, 1.0]}))
    assert s.data.time == pytest.approx(0.1) and np.array_equal(s.data.qpos, qpos)  # the edit kept the instant
    steps(s, 1)
    assert s.data.time == pytest.approx(0.102)
    assert s.data.ctrl[0] == -1.5  # the new input from the branch point on
    assert s.publish().timeline.branches == 1 and s.publish().timeline.end == pytest.approx(0.102)
    assert s.data.qfrc_applied.any()


def test_a_branch_recording_starts_at_the_branch_time_and_its_metadata_says_so(
    session: Session, tmp_path: Path
) -> None:
    s = session
    s.handle(C.StartRecording(path=str(tmp_path / "runs" / "rec.parquet")))
    steps(s, 250)
    s.handle(C.Scrub(0.3))
    s.handle(C.SetParam("k", 200.0))
    steps(s, 100)
    s.close()
    first = pl.read_parquet(tmp_path / "runs" / "rec.parquet")
    assert first["time"][0] == 0.0 and first["time"][-1] == pytest.approx(0.498)  # the abandoned future stays
    branch = tmp_path / "runs" / "rec-branch-0.3000s.parquet"
    df = pl.read_parquet(branch)
    assert df["time"][0] == pytest.approx(0.3) and len(df) == 100 and df["time"].is_sorted()
    assert df["Params/k:value"][0] == 200.0
    np.testing.assert_array_equal(
        df["Joints/shoulder:qpos"][0], first.filter(pl.col("time") == df["time"][0])["Joints/shoulder:qpos"][0]
    )  # the same instant, restored exactly
    meta = {k.decode(): v.decode() for k, v in pq.read_schema(branch).metadata.items()}
    where = json.loads(meta["mjrig.branched_from"])
    assert where["time"] == pytest.approx(0.3) and where["recording"] == str(tmp_path / "runs" / "rec.parquet")
    assert where["branched_from"] is None
    assert "200" in meta["mjrig.scenario"]  # the rig as edited while paused
    assert meta["mjrig.model_sha256"]


def test_history_limit_bounds_the_ring(session: Session) -> None:
    s = session
    s.handle(C.SetHistoryLimit(seconds=0.1, megabytes=256))
    steps(s, 300)
    info = s.publish().timeline
    assert info.end - info.start <= 0.1 + 1e-9 and info.rows <= 51 and info.max_seconds == 0.1
    s.handle(C.SetHistoryLimit(seconds=60, megabytes=0.001))  # ~1 kB: a handful of states
    info = s.publish().timeline
    assert 0 < info.nbytes <= 1024 * 1.0 + 1 and info.max_megabytes == 0.001
    with pytest.raises(ConfigError, match="positive"):
        s.handle(C.SetHistoryLimit(seconds=-1, megabytes=10))


def test_after_a_divergence_the_kept_run_can_be_scrubbed_and_played_from(session: Session) -> None:
    s = session
    steps(s, 100)
    s.data.qvel[0] = np.nan  # the run blows up at the next step (MuJoCo resets the state to t = 0)
    s.handle(C.StepOnce())
    assert s.publish().state == C.RunState.ERROR
    s.handle(C.Scrub(0.1))
    assert s.publish().state == C.RunState.PAUSED and s.data.time == pytest.approx(0.1)
    steps(s, 10)
    assert s.publish().state != C.RunState.ERROR and s.data.time == pytest.approx(0.12)
    assert s.publish().timeline.branches == 1


def test_arrows_and_lines_are_redrawn_from_the_restored_state(session: Session) -> None:
    s = session
    s.handle(C.PutEntry("proximities", {"name": "gap", "a": "tip", "b": "anchor"}))
    steps(s, 60)
    import mujoco

    mujoco.mj_forward(s.model, s.data)
    arrows, lines = s.rm.drawing.visuals(s.model, s.data)
    forces = s.rm.drawing.load_forces()
    t = s.data.time
    steps(s, 90)
    s.handle(C.Scrub(t))
    arrows2, lines2 = s.rm.drawing.visuals(s.model, s.data)
    assert s.rm.drawing.load_forces() == forces
    assert [(a.pos.tolist(), a.vec.tolist()) for a in arrows] == [(a.pos.tolist(), a.vec.tolist()) for a in arrows2]
    assert [(ln.start.tolist(), ln.end.tolist()) for ln in lines] == [
        (ln.start.tolist(), ln.end.tolist()) for ln in lines2
    ]
    assert arrows and lines


def test_a_branch_of_a_branch_names_both(session: Session, tmp_path: Path) -> None:
    s = session
    s.handle(C.StartRecording(path=str(tmp_path / "runs" / "rec.parquet")))
    steps(s, 100)
    s.handle(C.Scrub(0.1))
    steps(s, 50)
    s.handle(C.StepHistory(-1))
    s.handle(C.StepHistory(-1))
    steps(s, 10)
    s.close()
    second = tmp_path / "runs" / "rec-branch-0.1960s.parquet"
    meta = {k.decode(): v.decode() for k, v in pq.read_schema(second).metadata.items()}
    where = json.loads(meta["mjrig.branched_from"])
    assert where["recording"].endswith("rec-branch-0.1000s.parquet") and where["time"] == pytest.approx(0.196)
    assert where["branched_from"]["time"] == pytest.approx(0.1)
    assert pl.read_parquet(second)["time"][0] == pytest.approx(0.196) and s.publish().timeline.branches == 2
