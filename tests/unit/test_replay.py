"""Replaying a recording: the model from its metadata, joint positions back into qpos for every
joint type (bit for bit at recorded instants, interpolated between), one line for a recording
without joints, one warning line for a changed model; a second recording for comparison."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mjrig.headless import prepare
from mjrig.recordings.replay import OverlaidRecording, Replay, read_recording
from mjrig.runtime.errors import ConfigError
from mjrig.scenario.parse import scenario_from_doc
from mjrig.session.plot_rows import is_new_model

XML = """<mujoco model="joints"><option timestep="2e-3"/><worldbody>
  <geom name="floor" type="plane" size="2 2 .1"/>
  <body name="arm" pos="0 0 1"><joint name="hinge" type="hinge" axis="0 1 0"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="1"/>
    <body name="box" pos="0.3 0 0"><joint name="slide" type="slide" axis="1 0 0"/>
      <geom type="box" size=".04 .04 .04" mass="0.5"/>
      <body name="bob" pos="0 0 -0.2"><joint name="ball" type="ball"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02" mass="0.3"/></body></body></body>
  <body name="puck" pos="0.8 0 0.3" euler="20 30 40"><freejoint name="free"/><geom size="0.05" mass="0.2"/></body>
</worldbody></mujoco>"""


def record(
    tmp_path: Path, *, signals: list[str] | None = None, duration: float = 0.3, xml: str = XML, name: str = "joints.xml"
) -> tuple[Path, np.ndarray]:
    """Record a run headless (as `mjrig run`); returns the file and the qpos of every step."""
    model_path = tmp_path / name
    if not model_path.exists():
        model_path.write_text(xml)
    out = tmp_path / f"rec-{len(list(tmp_path.glob('rec-*.parquet')))}.parquet"
    doc = {"model": str(model_path), "recording": {"path": str(out)}}
    if signals is not None:
        doc["recording"]["signals"] = signals
    setup = prepare(scenario_from_doc(doc, base=tmp_path, source=None), duration=duration)
    setup.data.qvel[:] = np.linspace(-1, 1, setup.model.nv)  # something to see in every joint
    qpos = []
    rm, m, d = setup.runtime, setup.model, setup.data
    with rm:
        for _ in range(int(round(duration / m.opt.timestep))):
            qpos.append(d.qpos.copy())  # what the row of this step records (the state it starts from)
            rm.step(m, d)
    return out, np.array(qpos)


def test_qpos_at_matches_the_recorded_run_and_interpolates_between(tmp_path: Path) -> None:
    out, qpos = record(tmp_path)
    warnings: list[str] = []
    rp = Replay.open(out, on_warning=warnings.append)
    assert not warnings and not rp.missing
    assert rp.model.nq == qpos.shape[1] and rp.times.size == len(qpos)
    for k in (0, 1, 57, len(qpos) - 1):
        assert np.array_equal(rp.qpos_at(rp.times[k]), qpos[k])  # bit for bit at recorded instants
    t = 0.5 * (rp.times[10] + rp.times[11])
    q = rp.qpos_at(t)
    np.testing.assert_allclose(q[:2], 0.5 * (qpos[10, :2] + qpos[11, :2]), rtol=1e-12)  # hinge, slide
    for i in (2, 9):  # the ball's and the free joint's quaternions: unit, between the two
        assert np.linalg.norm(q[i : i + 4]) == pytest.approx(1.0, abs=1e-12)
        mid = qpos[10, i : i + 4] + qpos[11, i : i + 4]
        np.testing.assert_allclose(q[i : i + 4], mid / np.linalg.norm(mid), rtol=1e-12)
    np.testing.assert_allclose(q[6:9], 0.5 * (qpos[10, 6:9] + qpos[11, 6:9]), rtol=1e-12)  # free x, y, z
    assert np.array_equal(rp.qpos_at(-1.0), qpos[0]) and np.array_equal(rp.qpos_at(99.0), qpos[-1])
    data = mujoco.MjData(rp.model)
    rp.show(data, rp.times[20])
    ref = mujoco.MjData(rp.model)
    ref.qpos[:] = qpos[20]
    mujoco.mj_kinematics(rp.model, ref)
    assert data.time == rp.times[20] and np.array_equal(data.xpos, ref.xpos)


def test_a_recording_without_joints_is_refused_with_one_line(tmp_path: Path) -> None:
    out, _ = record(tmp_path, signals=["bodies", "energy"])
    with pytest.raises(ConfigError) as err:
        Replay.open(out)
    assert "no joint positions" in str(err.value) and "\n" not in str(err.value)


def test_a_changed_model_gives_one_warning_line_and_a_missing_one_is_refused(tmp_path: Path) -> None:
    out, qpos = record(tmp_path)
    model_path = tmp_path / "joints.xml"
    model_path.write_text(XML.replace('mass="0.2"', 'mass="0.25"'))
    warnings: list[str] = []
    rp = Replay.open(out, on_warning=warnings.append)
    assert len(warnings) == 1 and "joints.xml changed" in warnings[0] and "\n" not in warnings[0]
    assert np.array_equal(rp.qpos_at(rp.times[5]), qpos[5])
    model_path.unlink()
    with pytest.raises(ConfigError, match="its model .*joints.xml is not found"):
        Replay.open(out)


def test_unreadable_files_are_refused_with_one_line(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"not parquet at all")
    for path, what in ((tmp_path / "nope.parquet", "not found"), (garbage, "not a readable Parquet")):
        with pytest.raises(ConfigError, match=what) as err:
            read_recording(path)
        assert "\n" not in str(err.value)
    foreign = tmp_path / "foreign.parquet"
    pq.write_table(pa.table({"x": [1.0, 2.0]}), foreign)
    with pytest.raises(ConfigError, match="no 'time' column"):
        read_recording(foreign)


def test_a_comparison_of_the_same_model_has_a_ghost_and_its_signals_on_the_same_time_axis(tmp_path: Path) -> None:
    a, _ = record(tmp_path)
    b, qpos_b = record(tmp_path, duration=0.2)
    base = Replay.open(a)
    cmp = OverlaidRecording.open(b, model=base.model, sha256=base.recording.metadata["mjrig.model_sha256"])
    assert cmp.ghost is not None and np.array_equal(cmp.ghost.qpos_at(cmp.ghost.times[7]), qpos_b[7])
    t = base.times
    v = cmp.signal_at("Joints/hinge:qpos", t)
    assert np.isnan(v[-1]) and v[0] == qpos_b[0, 0]  # B is shorter: NaN past its end
    c, _ = record(tmp_path, duration=0.02, xml=XML.replace('name="hinge"', 'name="elbow"'), name="other.xml")
    other = OverlaidRecording.open(c, model=base.model, sha256=base.recording.metadata["mjrig.model_sha256"])
    assert other.ghost is None and other.signal_at("Joints/elbow:qpos", t[:3]).size == 3  # signals only


def test_the_session_replays_a_recording_on_its_timeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mjrig import commands as C
    from mjrig.session.kernel import Session

    monkeypatch.chdir(tmp_path)
    out, qpos = record(tmp_path)
    b, qpos_b = record(tmp_path, duration=0.2)
    s = Session()
    s.open(out)
    info = s.publish().timeline
    assert info.replay and info.start == 0.0 and info.end == pytest.approx(0.298) and info.rows == len(qpos)
    assert "Joints/hinge:qpos" in s.publish().signals
    blocks = s.drain_rows()  # the whole recording for the plots, after the mark that clears them
    assert (
        is_new_model(blocks[0][0])
        and blocks[0][0][1].endswith("joints.xml")
        and blocks[1][0][:2] == ["time", "wall_time"]
    )
    rows = np.concatenate([blk for _, blk in blocks[1:]])  # 500 rows/s thinned to the plots' 200/s: every 2nd
    assert np.array_equal(rows[:, 0], read_recording(out).times[::2]) and len(rows) == len(qpos) // 2
    assert np.array_equal(s.data.qpos, qpos[0])
    s.handle(C.StepOnce(5))  # replay time moves by the model's timestep: rows 1..5
    assert s.data.time == pytest.approx(0.010) and np.array_equal(s.data.qpos, qpos[5])
    s.handle(C.StepHistory(-1))
    assert np.array_equal(s.data.qpos, qpos[4]) and s.publish().state == C.RunState.PAUSED
    s.handle(C.Scrub(0.1))
    assert s.publish().timeline.cursor == pytest.approx(0.1)
    np.testing.assert_allclose(s.data.qpos[:2], qpos[50, :2], rtol=0, atol=1e-12)
    s.handle(C.OpenComparison(str(b)))
    info = s.publish().timeline
    assert info.compare == str(b) and info.ghost
    np.testing.assert_allclose(s.replayer.ghost_qpos()[:2], qpos_b[50, :2], atol=1e-12)
    s.run.speed = 0.0
    s.handle(C.Scrub(0.29))
    s.handle(C.Play())
    s.advance(budget_s=0.05)
    assert s.publish().state == C.RunState.PAUSED and s.data.time == pytest.approx(0.298)  # paused at the end
    s.open(tmp_path / "joints.xml")  # anything else leaves replay mode
    assert not s.publish().timeline.replay and not s.replayer.active
    s.close()


def test_a_live_run_compares_with_a_recording_and_draws_its_ghost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mjrig import commands as C
    from mjrig.session.kernel import Session

    monkeypatch.chdir(tmp_path)
    b, qpos_b = record(tmp_path, duration=0.2)
    s = Session()
    s.open(tmp_path / "joints.xml")  # a live run of the recording's model
    s.handle(C.OpenComparison(str(b)))
    info = s.publish().timeline
    assert not info.replay and info.compare == str(b) and info.ghost
    s.handle(C.StepOnce(25))
    assert np.array_equal(s.replayer.ghost_qpos(), qpos_b[25])  # the recorded pose at the live time
    scene = mujoco.MjvScene(s.model, maxgeom=100)
    bodies = sum(1 for g in range(s.model.ngeom) if s.model.geom_bodyid[g] > 0)
    assert s.replayer.draw_ghost(scene) == bodies == scene.ngeom  # every moving geom, no static floor
    ghost = mujoco.MjData(s.model)
    ghost.qpos[:] = qpos_b[25]
    mujoco.mj_kinematics(s.model, ghost)
    geoms = [g for g in range(s.model.ngeom) if s.model.geom_bodyid[g] > 0]
    for i, g in enumerate(geoms):  # where the recording had them, translucent and not selectable
        np.testing.assert_allclose(scene.geoms[i].pos, ghost.geom_xpos[g], atol=1e-12)
        assert scene.geoms[i].rgba[3] < 0.5 and scene.geoms[i].transparent and scene.geoms[i].objid == -1
    (tmp_path / "other.xml").write_text(XML.replace('name="hinge"', 'name="elbow"'))
    s.open(tmp_path / "other.xml")  # another model: the comparison goes
    assert s.publish().timeline.compare == "" and s.replayer.draw_ghost(scene) == 0
    with pytest.raises(ConfigError, match="not found"):
        s.handle(C.OpenComparison(str(tmp_path / "missing.parquet")))
    s.close()


def test_the_session_reads_the_compared_recording_and_publishes_its_plotted_signals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plots draw a compared recording from the panel state: the session read the file (the
    panel reads none) and hands over the plotted signals it has, the same object until the
    comparison or the plotted signals change."""
    from mjrig import commands as C
    from mjrig.session.kernel import Session

    monkeypatch.chdir(tmp_path)
    b, _ = record(tmp_path, duration=0.2)
    rec = read_recording(b)
    s = Session()
    s.open(tmp_path / "joints.xml")
    assert s.publish().comparison.compared.path == "" and not s.publish().comparison.compared.has("Joints/hinge:qpos")
    s.handle(C.PlotSignals(("Joints/hinge:qpos", "Joints/slide:qvel", "Loads/none:force")))
    s.handle(C.OpenComparison(str(b)))
    first = s.publish().comparison.compared
    assert first.path == str(b) and s.publish().comparison.compared is first  # nothing changed: the same object
    assert set(first.values) == {"Joints/hinge:qpos", "Joints/slide:qvel"}  # plotted, and in the recording
    np.testing.assert_array_equal(first.times, rec.times)
    np.testing.assert_array_equal(first.values["Joints/hinge:qpos"], rec.columns["Joints/hinge:qpos"])
    t = np.array([rec.times[0] - 1.0, 0.5 * (rec.times[3] + rec.times[4]), rec.times[-1] + 1.0])
    got = first.at("Joints/slide:qvel", t)
    v = rec.columns["Joints/slide:qvel"]
    assert np.isnan(got[0]) and np.isnan(got[2]) and got[1] == pytest.approx(0.5 * (v[3] + v[4]), rel=1e-12)
    s.handle(C.PlotSignals(("Joints/ball:qw",)))  # other ticks: another object with those
    ticked = s.publish().comparison.compared
    assert ticked is not first and set(ticked.values) == {"Joints/ball:qw"}
    s.handle(C.OpenComparison(""))
    assert s.publish().comparison.compared.path == "" and not s.publish().comparison.compared.values
    s.close()
