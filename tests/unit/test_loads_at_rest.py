"""A load's readout and arrow are worked out at the state shown, also where no step has been taken
since it was set: a rig just opened and paused, a Reset, an edit while paused. (On a busy machine
the first frames come late: a push paused before its first step read 0 N and drew no arrow.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mjrig import commands as C

pytestmark = pytest.mark.unit

BOX = """<mujoco><option timestep="0.002"/><worldbody>
  <body name="box" pos="0 0 1"><freejoint/><geom type="box" size=".1 .1 .1" mass="2"/></body>
</worldbody></mujoco>"""

SCENARIO = """model = "box.xml"
[params]
f = { value = 40.0, min = 0.0, max = 100.0 }

[[loads]]
name = "push"
kind = "force"
at = "body:box"
vector = ["f", 0.0, 0.0]

[[loads]]
name = "wave"
kind = "force"
at = "body:box"
vector = [0.0, { profile = "sine", amplitude = 3.0, frequency = 2.0, phase = 0.5 }, 0.0]
"""


@pytest.fixture(params=[True, False], ids=["compiled", "python"])
def session(request, tmp_path: Path, open_session, monkeypatch):
    # "python": the loads evaluated in Python (as a user callable or a pin friction would be)
    monkeypatch.setenv("MJRIG_COMPILED", "1" if request.param else "0")
    (tmp_path / "box.xml").write_text(BOX)
    (tmp_path / "box.toml").write_text(SCENARIO)
    s = open_session(tmp_path / "box.toml")
    s.handle(C.Pause())
    yield s
    s.close()


def _wave(t: float) -> float:
    return 3.0 * np.sin(2 * np.pi * 2.0 * t + 0.5)


def test_a_rig_never_stepped_reads_and_draws_its_loads(session) -> None:
    s = session
    assert s.data.time == 0.0 and s.run.steps == 0
    forces = s.rm.drawing.load_forces()
    assert forces["push"] == (40.0, 0.0, 0.0)
    assert forces["wave"][1] == pytest.approx(_wave(0.0), abs=1e-12)
    arrows, _ = s.rm.drawing.visuals(s.model, s.data)
    assert sorted(round(float(np.linalg.norm(a.vec)), 9) for a in arrows) == sorted(
        round(abs(v), 9) for v in (40.0, _wave(0.0))
    )


def test_reset_and_an_edit_while_paused_are_read_at_once(session) -> None:
    s = session
    for _ in range(137):
        s.handle(C.StepOnce())
    s.handle(C.Reset())
    assert s.data.time == 0.0
    assert s.rm.drawing.load_forces()["wave"][1] == pytest.approx(_wave(0.0), abs=1e-12)
    s.handle(C.SetParam("f", 12.5))  # paused: no step since
    assert s.rm.drawing.load_forces()["push"] == (12.5, 0.0, 0.0)
