"""The app's side of ``[units]`` (CONTRACT 9): the Units menu's command writes ``[units]`` into the
rig (saved with the scenario, read back by ``mjrig run``), the panel state carries the chosen
units, and what the panel shows (readouts, requirement bounds, values) converts exactly."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from mjrig import commands as C
from mjrig.runtime.telemetry.units import DisplayUnits
from mjrig.scenario.parse import load_scenario
from mjrig.session.kernel import Session

XML = """
<mujoco model="slider">
  <option timestep="0.001"/>
  <worldbody>
    <body name="cart" pos="0 0 0.1">
      <joint name="rail" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.05 0.05 0.05" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""

RIG = """
model = "slider.xml"

[params]
travel = { value = 0.02, min = 0.0, max = 0.05, unit = "m" }

[[loads]]
name = "push"
kind = "force"
at = "body:cart"
vector = [4.4482216152605, 0, 0]

[[requirements]]
name = "stays_close"
signal = "Bodies/cart:x"
max = 0.25
"""


@pytest.fixture()
def session(tmp_path: Path, open_session) -> Session:
    (tmp_path / "slider.xml").write_text(XML)
    (tmp_path / "rig.toml").write_text(RIG)
    return open_session(tmp_path / "rig.toml")


def test_choosing_units_writes_them_into_the_rig_and_the_saved_scenario(session: Session, tmp_path: Path) -> None:
    assert session.publish().tools.shown_units == DisplayUnits()
    session.handle(C.SetUnits("length", "mm"))
    session.handle(C.SetUnits("force", "lbf"))
    snap = session.publish()
    assert snap.tools.shown_units == DisplayUnits(length="mm", force="lbf")
    assert snap.dirty and session.document.doc["units"] == {"length": "mm", "force": "lbf"}
    session.handle(C.SetUnits("length", "m"))  # back to SI: it leaves the table
    assert session.document.doc["units"] == {"force": "lbf"}
    session.handle(C.SaveScenario(str(tmp_path / "saved.toml")))
    assert load_scenario(tmp_path / "saved.toml").units == DisplayUnits(force="lbf")
    session.handle(C.SetUnits("force", "N"))
    assert "units" not in session.document.doc


def test_an_unknown_unit_is_one_error_line_and_changes_nothing(session: Session) -> None:
    session.handle(C.SetUnits("length", "mm"))
    before = len(session.publish().messages)
    session.process_commands()
    session.submit(C.SetUnits("length", "furlong"))
    session.process_commands()
    new = session.publish().messages[before:]
    errors = [text for level, text in new if level == "error"]
    assert errors == ["unknown length unit 'furlong' (choose m, mm, cm, in)"]
    assert session.publish().tools.shown_units == DisplayUnits(length="mm")


def test_what_the_panel_shows_converts_exactly(session: Session) -> None:
    session.handle(C.SetUnits("force", "lbf"))
    session.handle(C.SetUnits("length", "mm"))
    for _ in range(5):
        session.rm.step(session.model, session.data)
    snap = session.publish()
    push = next(e for e in snap.loads if e.name == "push")
    assert push.readout_text() == "4.45 N"  # SI by default
    assert push.readout_text(snap.tools.shown_units) == "1 lbf"  # 4.4482216152605 N is one pound-force
    req = next(r for r in snap.tools.requirements if r.name == "stays_close")
    assert req.wanted(snap.units["Bodies/cart:x"], snap.tools.shown_units) == "<= 250 mm"
    assert req.wanted("m") == "<= 0.25 m"
    x = session.data.qpos[0]
    assert snap.tools.shown_units.text(x, "m", fmt=".9g") == f"{1000 * x:.9g} mm"


@pytest.mark.parametrize(
    ("si", "value", "expected"),
    [
        ("m", 0.0125, (12.5, "mm")),
        ("m/s", 2.0, (2000.0, "mm/s")),
        ("rad", math.pi, (180.0, "deg")),
        ("rad/s^2", 1.0, (180 / math.pi, "deg/s^2")),
        ("N*m", 2.0, (2000.0, "N·mm")),
        ("N", 1000.0, (1.0, "kN")),
        ("J", 3.0, (3.0, "J")),
        ("N/m", 800.0, (800.0, "N/m")),
    ],
)
def test_display_units_show_each_quantity_and_leave_others_as_they_are(
    si: str, value: float, expected: tuple[float, str]
) -> None:
    units = DisplayUnits(length="mm", angle="deg", force="kN", torque="N·mm")
    shown, label = units.show(value, si)
    assert shown == pytest.approx(expected[0], rel=1e-12) and label == expected[1]


def test_choose_names_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown quantity 'mass'"):
        DisplayUnits().choose("mass", "g")
    assert DisplayUnits().choose("angle", "deg").angle == "deg"
