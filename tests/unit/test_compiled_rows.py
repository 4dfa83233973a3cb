"""Telemetry rows written by MuJoCo's control callback in blocks of steps (``native_rows``)
against the Python recorder, their reference: a long ``mjrig run`` whose only work between
steps is its recording writes the same file, value for value (the wall clock aside), every step
or at a rate, contacts included; a block that diverges is rolled back with its rows and the run
ends where the Python path ends, with the same rows and message."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from mjrig import headless
from mjrig.runtime.errors import DivergenceError
from mjrig.runtime.telemetry.native_rows import RowTable
from mjrig.scenario.parse import load_scenario

XML = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <site name="hook" pos="0 0 1.0"/>
    <body name="box" pos="0 0 0.3">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="0.5"/>
      <site name="eye" pos="0 0 0.05"/>
    </body>
  </worldbody>
  <sensor><accelerometer site="eye"/><velocimeter site="eye"/></sensor>
</mujoco>
"""

RIG = """
[simulation]
duration = 1.0

[[loads]]
name = "cable"
kind = "tension_spring"
at = "eye"
to = "hook"
stiffness = {k}
damping = 2.0
rest_length = 0.8

[recording]
signals = ["joints", "bodies", "sensors", "actuators", "loads", "proximities", "params", "contacts", "energy", "sites"]
{rate}
"""


def _record(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    compiled: bool,
    rate: str = "",
    k: float = 30.0,
    integrator: str = "Euler",
) -> tuple[pl.DataFrame, int, str | None]:
    """(the recording, blocks stepped by the callback, the divergence message or None)."""
    folder = tmp_path / ("compiled" if compiled else "python")
    folder.mkdir(exist_ok=True)
    (folder / "box.xml").write_text(XML.format(integrator=integrator), encoding="utf-8")
    (folder / "rig.toml").write_text('model = "box.xml"\n' + RIG.format(k=k, rate=rate), encoding="utf-8")
    monkeypatch.setattr(headless, "ROWS_IN_BLOCKS_FROM", 1)  # a short run takes the compiled path too
    if compiled:
        monkeypatch.delenv("MJRIG_COMPILED", raising=False)
    else:
        monkeypatch.setenv("MJRIG_COMPILED", "0")
    blocks = []
    real = RowTable.steps
    monkeypatch.setattr(RowTable, "steps", lambda self, *a: blocks.append(1) or real(self, *a))
    out = folder / "rec.parquet"
    setup = headless.prepare(load_scenario(folder / "rig.toml"), out=out, duration=1.0)
    message = None
    try:
        headless.run(setup)
    except DivergenceError as exc:
        message = str(exc)
    return pl.read_parquet(out), len(blocks), message


@pytest.mark.parametrize("rate", ["", "rate = 240"], ids=["every_step", "at_a_rate"])
@pytest.mark.parametrize("integrator", ["Euler", "implicitfast"])
def test_the_callback_writes_the_rows_the_python_recorder_writes(tmp_path, monkeypatch, rate, integrator):
    py, py_blocks, _ = _record(tmp_path, monkeypatch, compiled=False, rate=rate, integrator=integrator)
    co, co_blocks, _ = _record(tmp_path, monkeypatch, compiled=True, rate=rate, integrator=integrator)
    assert py_blocks == 0 and co_blocks > 1
    assert co.columns == py.columns and co.height == py.height == (500 if not rate else 240)
    for c in co.columns:
        if c != "wall_time":
            np.testing.assert_array_equal(co[c].to_numpy(), py[c].to_numpy(), err_msg=c)
    wall = co["wall_time"].to_numpy()
    assert wall[0] == 0.0 and np.all(np.diff(wall) >= 0) and wall[-1] < 30.0  # seconds since the first row
    count = co["Contacts/all:count"].to_numpy()
    assert count[0] == 0 and count.max() >= 4  # the box lands on its face
    assert co["Contacts/all:max_penetration"].to_numpy().max() > 0


def test_a_block_that_diverges_is_rolled_back_with_its_rows(tmp_path, monkeypatch):
    """A spring far too stiff for the timestep: both paths stop at the same step, keep the same
    rows and say the same thing."""
    py, _, py_msg = _record(tmp_path, monkeypatch, compiled=False, k=5e7)
    co, co_blocks, co_msg = _record(tmp_path, monkeypatch, compiled=True, k=5e7)
    assert py_msg is not None and co_msg == py_msg and co_blocks >= 1
    assert co.height == py.height > 0
    np.testing.assert_array_equal(co["time"].to_numpy(), py["time"].to_numpy())
    np.testing.assert_array_equal(co["Joints/joint0:z"].to_numpy(), py["Joints/joint0:z"].to_numpy())
    assert co.height < 500  # it ended early, at the divergence
