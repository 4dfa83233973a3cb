"""The contacts group: how many contacts there are and the deepest penetration (m), exactly."""

from __future__ import annotations

import mujoco
import pytest

from mjrig.runtime import SignalManager


def _balls(n: int, sink: float) -> str:
    """``n`` spheres of radius 0.05 m, each pushed ``sink`` m (plus a little per ball) into the floor."""
    bodies = "".join(
        f'<body pos="{0.2 * i} 0 {0.05 - sink - 0.0001 * i}"><freejoint/><geom type="sphere" size="0.05"/></body>'
        for i in range(n)
    )
    return f'<mujoco><worldbody><geom type="plane" size="10 10 .1"/>{bodies}</worldbody></mujoco>'


def _row(model: mujoco.MjModel, data: mujoco.MjData) -> dict[str, float]:
    """The contacts group's row for the current state."""
    sm = SignalManager(None, groups=("contacts",))
    rows = []
    sm.on_rows = lambda cols, block: rows.append(dict(zip(cols, block[-1])))
    sm.bind(model, data)
    sm.sample(data)
    sm.flush()
    return rows[-1]


@pytest.mark.parametrize("n", [3, 40])  # few contacts and many: both ways of taking the minimum
def test_contact_count_and_deepest_penetration(n: int) -> None:
    model = mujoco.MjModel.from_xml_string(_balls(n, 0.002))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    assert data.ncon == n
    row = _row(model, data)
    assert row["Contacts/all:count"] == n
    deepest = 0.002 + 0.0001 * (n - 1)  # the last ball sits lowest
    assert row["Contacts/all:max_penetration"] == pytest.approx(deepest, abs=1e-9)


def test_no_contact_no_penetration() -> None:
    model = mujoco.MjModel.from_xml_string(_balls(2, -0.5))  # floating 0.5 m above the floor
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    row = _row(model, data)
    assert row["Contacts/all:count"] == 0 and row["Contacts/all:max_penetration"] == 0.0
