"""The Loads table's readout: each load's size in its own unit (a joint torque in N·m while it
acts, not "|F| = 0 N"), checked on the bundled motor pendulum against its motor's profile."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from mjrig.scenario.bundled import bundled_models
from mjrig.session.kernel import Session


@pytest.fixture()
def pendulum(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Session:
    monkeypatch.chdir(tmp_path)
    s = Session()
    s.open(next(m.scenario for m in bundled_models() if m.name == "motor_pendulum"))
    yield s
    s.close()


def test_joint_loads_read_in_their_own_unit(pendulum: Session) -> None:
    m, d, rm = pendulum.model, pendulum.data, pendulum.rm
    while d.time < 3.0 - 1e-9:  # the motor's table ramps 0 -> 3.6 N·m over 0.5 .. 5.5 s
        rm.step(m, d)
    loads = {ld.name: ld for ld in pendulum.publish().loads}
    ((torque, unit),) = loads["motor"].readout
    expected = 3.6 * (d.time - 0.5) / 5.0  # the profile at the last applied step
    assert unit == "N*m" and torque == pytest.approx(expected, abs=3.6 / 5.0 * 2e-3)
    assert loads["motor"].readout_text() == f"{torque:.3g} N·m"
    ((friction, funit),) = loads["bearing"].readout
    assert funit == "N*m" and 0 < abs(friction) <= 1.0 + 1e-9  # held by the bearing, within breakaway
    ((pin, punit),) = loads["pin"].readout
    assert punit == "N*m" and math.isfinite(pin) and pin != 0.0  # the released pin pendulum swings


def test_point_loads_read_in_newtons_and_torques_in_newton_metres(pendulum: Session) -> None:
    from mjrig import commands as C

    pendulum.handle(
        C.PutEntry("loads", {"name": "twist", "kind": "torque", "at": "body:motor_pendulum", "vector": [0.0, 0.0, 2.0]})
    )
    pendulum.handle(
        C.PutEntry(
            "loads",
            {
                "name": "both",
                "kind": "general",
                "at": "body:motor_pendulum",
                "force": [3.0, 4.0, 0.0],
                "torque": [0.0, 0.5, 0.0],
            },
        )
    )
    pendulum.rm.step(pendulum.model, pendulum.data)
    loads = {ld.name: ld for ld in pendulum.publish().loads}
    assert loads["twist"].readout == ((2.0, "N*m"),)
    assert loads["both"].readout == ((5.0, "N"), (0.5, "N*m"))
    assert loads["both"].readout_text() == "5 N, 0.5 N·m"
