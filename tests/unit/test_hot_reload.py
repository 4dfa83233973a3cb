"""Hot reload, through the app's session (the file watcher on): a model file -- or a file it
includes -- edited on disk is read again with the rig and the run kept; an edit MuJoCo refuses
keeps the old model running with one error line; the scenario file edited on disk is read again
unless the rig has unsaved edits; switched off, nothing is reloaded."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mjrig import commands as C
from mjrig.session.kernel import Session
from tests.waiting import wait_for

MAIN = """<mujoco model="cart">
  <include file="parts/body.xml"/>
</mujoco>
"""
BODY = """<mujoco>
  <worldbody>
    <body name="cart" pos="0 0 0.1">
      <joint name="x" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.1 0.1 0.1" mass="{mass}"/>
      <site name="front" pos="0.1 0 0"/>
    </body>
    <site name="anchor" pos="1 0 0.1"/>
  </worldbody>
</mujoco>
"""
SCENARIO = """model = "cart.xml"
[params]
k = {{ value = {k} }}
[[loads]]
name = "spring"
kind = "ideal_spring"
at = "front"
to = "anchor"
stiffness = "k"
rest_length = 0.5
"""


def settle(s: Session, ok, *, what: str) -> None:
    """Run the session's queued commands (the watcher's ``Reload``) until ``ok()`` holds."""
    wait_for(lambda: s.process_commands() or ok(), what=what, timeout=15.0)


@pytest.fixture()
def rig(tmp_path: Path):
    (tmp_path / "parts").mkdir()
    (tmp_path / "cart.xml").write_text(MAIN)
    (tmp_path / "parts" / "body.xml").write_text(BODY.format(mass=1.0))
    (tmp_path / "cart.toml").write_text(SCENARIO.format(k=100.0))
    s = Session(watch_files=True)
    s.open(tmp_path / "cart.toml")
    assert s.files is not None and s.files.ready.wait(10), "the file watcher did not come up"
    yield s, tmp_path
    s.close()


def mass(s: Session) -> float:
    return float(s.model.body_mass[1])


def test_an_included_file_edited_on_disk_is_reloaded_keeping_the_rig_and_the_run(rig) -> None:
    s, tmp = rig
    for _ in range(300):
        s.rm.step(s.model, s.data)
    t = s.data.time
    assert mass(s) == 1.0 and s.publish().hot_reload
    (tmp / "parts" / "body.xml").write_text(BODY.format(mass=2.5))
    settle(s, lambda: mass(s) == 2.5, what="the new mass")
    assert s.data.time == pytest.approx(t) and [ld.name for ld in s.rm.loads] == ["spring"]
    assert any("cart.xml changed on disk: reloaded, loads kept" in m for _, m in s.publish().messages)
    # an edit MuJoCo refuses: the old model runs on, one error line
    (tmp / "parts" / "body.xml").write_text(BODY.format(mass=2.5).replace("<geom", "<gem"))
    settle(s, lambda: any(level == "error" for level, _ in s.publish().messages), what="the error line")
    assert mass(s) == 2.5 and s.model is not None
    errors = [m for level, m in s.publish().messages if level == "error"]
    assert len(errors) == 1 and "\n" not in errors[0], errors


def test_the_scenario_edited_on_disk_is_read_again_unless_the_rig_has_unsaved_edits(rig) -> None:
    s, tmp = rig
    (tmp / "cart.toml").write_text(SCENARIO.format(k=250.0))
    settle(s, lambda: s.document.doc["params"]["k"]["value"] == 250.0, what="the new stiffness")
    assert s.rm.params[0].value == 250.0 and not s.document.dirty
    s.handle(C.SetParam("k", 300.0))  # an unsaved edit in the app
    (tmp / "cart.toml").write_text(SCENARIO.format(k=400.0))
    settle(s, lambda: any("unsaved edits, which are kept" in m for _, m in s.publish().messages), what="the warning")
    assert s.rm.params[0].value == 300.0


def test_switched_off_nothing_is_reloaded(rig) -> None:
    s, tmp = rig
    s.handle(C.SetHotReload(False))
    assert not s.publish().hot_reload
    (tmp / "parts" / "body.xml").write_text(BODY.format(mass=4.0))
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        s.process_commands()
        time.sleep(0.05)
    assert mass(s) == 1.0
