"""The app's actuator sliders and state snapshots, through the session's commands (the logic the
panel's buttons and keys trigger; tests/gui drives the same through real clicks)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mjrig import commands as C
from mjrig.session.kernel import Session
from tests.unit.unit_util import SHOULDER_ARM_XML

ARM = SHOULDER_ARM_XML.format(
    actuators="""  <actuator>
    <motor name="drive" joint="shoulder" gear="3" ctrllimited="true" ctrlrange="-2 2"/>
    <motor name="spare" joint="shoulder" gear="1"/>
  </actuator>
"""
)


@pytest.fixture()
def session(tmp_path: Path, open_session) -> Session:
    xml = tmp_path / "arm.xml"
    xml.write_text(ARM)
    return open_session(xml)


def run(s: Session, *cmds: C.Command, steps: int = 0) -> None:
    for cmd in cmds:
        s.handle(cmd)
    for _ in range(steps):
        assert s.rm is not None and s.model is not None and s.data is not None
        s.rm.step(s.model, s.data)


def test_one_click_binds_a_slider_over_the_ctrlrange_that_drives_the_actuator(session: Session) -> None:
    run(session, C.BindActuator("drive"))
    snap = session.publish()
    param = next(p for p in snap.entries.params if p.name == "drive_input")
    assert (param.min, param.max) == (-2.0, 2.0)
    drive = next(a for a in snap.tools.actuators if a.name == "drive")
    assert drive.control == "drive_input" and drive.range == (-2.0, 2.0)
    assert next(a for a in snap.tools.actuators if a.name == "spare").range is None
    run(session, C.SetParam("drive_input", 1.5), steps=3)
    assert session.data.ctrl[0] == 1.5
    np.testing.assert_allclose(session.data.qfrc_actuator[0], 3 * 1.5)  # gear * input, N*m
    assert session.document.dirty and session.document.doc["controls"] == [
        {"actuator": "drive", "value": "drive_input"}
    ]
    with pytest.raises(Exception, match="already driven"):
        run(session, C.BindActuator("drive"))
    run(session, C.RemoveEntry("controls", "drive"), C.SetParam("drive_input", -1.0), steps=2)
    assert session.data.ctrl[0] == 1.5  # released: the input stays where it was
    with pytest.raises(Exception, match="unknown actuator 'drvie'.*drive"):
        run(session, C.BindActuator("drvie"))


def test_snapshot_then_restore_puts_the_run_back_bit_for_bit(session: Session, tmp_path: Path) -> None:
    run(session, C.BindActuator("drive"), C.SetParam("drive_input", 1.0), steps=100)
    run(session, C.TakeSnapshot())
    saved = Path(session.publish().tools.snapshot_path)
    assert saved.parent == tmp_path / "runs" and saved.suffix == ".npz" and saved.is_file()
    t0, qpos0 = session.data.time, session.data.qpos.copy()
    run(session, steps=50)
    after = (session.data.time, session.data.qpos.copy(), session.data.qvel.copy())
    assert session.data.time > t0
    run(session, C.RestoreSnapshot())
    assert session.data.time == t0 and np.array_equal(session.data.qpos, qpos0)
    run(session, steps=50)
    assert session.data.time == after[0]
    assert np.array_equal(session.data.qpos, after[1]) and np.array_equal(session.data.qvel, after[2])
    run(session, C.TakeSnapshot())  # never replaces the first one
    assert Path(session.publish().tools.snapshot_path) != saved and saved.is_file()


def test_a_snapshot_of_another_model_is_refused_in_one_line(session: Session, tmp_path: Path) -> None:
    other = tmp_path / "other.xml"
    other.write_text("<mujoco model='ball'><worldbody><body><freejoint/><geom size='0.1'/></body></worldbody></mujoco>")
    s2 = Session()
    s2.open(other)
    run(s2, C.TakeSnapshot(str(tmp_path / "ball.npz")))
    with pytest.raises(Exception) as err:
        run(session, C.RestoreSnapshot(str(tmp_path / "ball.npz")))
    assert "ball" in str(err.value) and "\n" not in str(err.value)
    run(session, C.RestoreSnapshot())  # none taken yet: one line says so (not an error), nothing moves
    level, text = session.publish().messages[-1]
    assert level == "info" and "no snapshot" in text and session.data.time == 0.0


@pytest.mark.parametrize("rig", ["bundled", "own"])
def test_snapshots_go_where_the_manual_says(rig: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scenario of one's own: ``<scenario>-snapshot.npz`` beside it; a bundled rig (whose
    scenario lies inside the installed package): ``runs/snapshot-<time>.npz`` in the current
    folder, never the package and never the current folder's top."""
    import shutil

    from mjrig.scenario.bundled import bundled_models

    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    scenario = next(m.scenario for m in bundled_models() if m.name == "spring_mass")
    if rig == "own":
        (tmp_path / "mine").mkdir()
        for f in ("spring_mass.toml", "spring_mass.xml"):
            shutil.copy(scenario.parent / f, tmp_path / "mine" / f)
        scenario = tmp_path / "mine" / "spring_mass.toml"
    s = Session()
    try:
        s.open(scenario)
        run(s, C.TakeSnapshot(), steps=0)
        written = Path(str(s.publish().tools.snapshot_path))
        if rig == "own":
            assert written == tmp_path / "mine" / "spring_mass-snapshot.npz"
        else:
            assert written.parent == work / "runs" and written.name.startswith("snapshot-"), written
        assert written.is_file() and not list(work.glob("*.npz"))
        if rig == "bundled":
            assert not list(scenario.parent.glob("*.npz"))  # nothing inside the installed package
    finally:
        s.close()
