"""A MuJoCo warning during `mjrig run` is one stderr line; MuJoCo writes no MUJOCO_LOG.TXT."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from e2e_util import mjrig

# Three boxes on a floor with a 10 KB arena: from t = 0.1 s (when they land) MuJoCo has no room
# for their contact constraints, warns ("Insufficient arena memory...") at every step, drops the
# constraints and lets the boxes fall through the floor -- a warning, not a divergence.
CROWDED_XML = """<mujoco model="crowded">
  <size memory="10K"/>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 .1"/>
    <body name="a" pos="0 0 0.1"><freejoint/><geom type="box" size=".05 .05 .05"/></body>
    <body name="b" pos="0.2 0 0.1"><freejoint/><geom type="box" size=".05 .05 .05"/></body>
    <body name="c" pos="0.4 0 0.1"><freejoint/><geom type="box" size=".05 .05 .05"/></body>
  </worldbody>
</mujoco>
"""


def test_warning_is_one_line_and_no_log_file(tmp_path: Path):
    (tmp_path / "crowded.xml").write_text(CROWDED_XML)
    res = mjrig("run", "crowded.xml", "--duration", "0.5", "--out", "out.parquet", cwd=tmp_path)
    assert res.rc == 0, res
    assert not list(tmp_path.rglob("MUJOCO_LOG.TXT")), "MuJoCo wrote its log into the working folder"
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    # MuJoCo warned on each of the ~200 steps after landing: reported once, in one line
    assert lines == [
        "mjrig: MuJoCo warning: Insufficient arena memory for the number of constraints generated. "
        "Increase arena memory allocation above 10K bytes. Time = 0.1000.",
        f"wrote 250 rows to {tmp_path / 'out.parquet'}",
    ], res
    # the run went on after the warning: the boxes fell through the floor
    df = pl.read_parquet(tmp_path / "out.parquet")
    assert df["time"].max() > 0.49 and df["Bodies/a:z"][-1] < -0.5


def test_check_compiles_quietly(tmp_path: Path):
    (tmp_path / "crowded.xml").write_text(CROWDED_XML)
    res = mjrig("check", "crowded.xml", cwd=tmp_path)
    assert res.rc == 0 and res.stderr == "", res
    assert not list(tmp_path.rglob("MUJOCO_LOG.TXT"))
