"""A headless run whose physics blows up exits 3, says when and where, and keeps its rows."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest
from e2e_util import mjrig

from tests import mjcf

BEAD_XML = mjcf.model(
    mjcf.slider("bead", joint="slide", pos="0.5 0 0", geom='type="sphere" size="0.01" mass="0.001"', site="tip"),
    option='timestep="0.01" gravity="0 0 0"',
    world='    <site name="anchor" pos="0 0 0" size="0.01"/>',
    name="diverge",
)
"""A 1 g bead on a slide joint along x, 0.5 m from the fixed site ``anchor``; 10 ms steps, no gravity."""

# 1e12 N/m on 1 g at dt = 0.01 s: omega*dt ~ 3e5, explicit integration explodes at once.
STRETCHED = """model = "bead.xml"
[simulation]
duration = 2.0
[[loads]]
name = "absurd"
kind = "ideal_spring"
at = "tip"
to = "anchor"
stiffness = 1e12
rest_length = 0.1
"""

# The same spring starts relaxed; a 1 N kick at t = 0.3 s sets it off: ~30 rows before it.
KICKED = (
    STRETCHED.replace("rest_length = 0.1", "rest_length = 0.5")
    + """[[loads]]
name = "kick"
kind = "force"
at = "body:bead"
vector = [{ profile = "step", time = 0.3, before = 0.0, after = 1.0 }, 0.0, 0.0]
"""
)


def run_diverging(tmp_path: Path, scenario: str):
    (tmp_path / "bead.xml").write_text(BEAD_XML)
    scen = tmp_path / "bead.toml"
    scen.write_text(scenario)
    out = tmp_path / "out.parquet"
    return mjrig("run", scen, "--out", out), out


def check_divergence(res, out: Path) -> tuple[float, pl.DataFrame]:
    assert res.rc == 3, res
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip("\n").splitlines()
    assert len(lines) == 1, f"expected exactly one stderr line\n{res}"
    msg = lines[0]
    m = re.search(r"\bt\s*=\s*([-+0-9.eE]+)", msg)
    assert m, f"no 't=...' in: {msg}"
    assert "slide" in msg, f"the diverging joint is not named: {msg}"
    t_div = float(m.group(1))
    # every row recorded before it is in a valid, complete Parquet file
    assert out.is_file(), res
    assert not out.with_name(out.name + ".parts").exists(), "segments left behind"
    df = pl.read_parquet(out)
    assert pq.read_table(out).num_rows == df.height == len(pd.read_parquet(out))
    assert df.height >= 1
    assert df.columns[:2] == ["time", "wall_time"]
    t = df["time"].to_numpy()
    assert t[0] == 0.0 and (t[1:] > t[:-1]).all()
    assert t[-1] <= t_div + 0.01 + 1e-9, f"rows after the divergence at {t_div}: last {t[-1]}"
    for col in ("Joints/slide:qpos", "Loads/absurd:fx", "Loads/absurd:length"):
        assert col in df.columns
        assert df[col].is_finite().all(), f"{col} holds NaN/Inf rows"
    return t_div, df


def test_divergence_at_once_exits_3(tmp_path: Path):
    res, out = run_diverging(tmp_path, STRETCHED)
    t_div, df = check_divergence(res, out)
    assert t_div == pytest.approx(0.0, abs=0.011)


def test_divergence_later_keeps_rows_before_it(tmp_path: Path):
    res, out = run_diverging(tmp_path, KICKED)
    t_div, df = check_divergence(res, out)
    assert 0.3 - 1e-9 <= t_div <= 0.35, res
    assert df.height >= 30, "the quiet rows before the kick must be kept"
    assert df["time"].max() >= 0.29
    assert df.filter(pl.col("time") < 0.3)["Loads/absurd:fx"].abs().max() == pytest.approx(0.0, abs=1e-6)


def test_requirements_failed_before_the_divergence_are_named(tmp_path: Path):
    """A requirement broken at the kick (0.3 s), before the spring blows up: its line comes
    before the divergence's, and the run still exits 3."""
    res, out = run_diverging(
        tmp_path,
        KICKED
        + """
[[requirements]]
name = "stays_put"
signal = "Joints/slide:qpos"
max = 1e-6
[[requirements]]
name = "never_decided"
signal = "Joints/slide:qpos"
final = 0.0
tolerance = 1.0
""",
    )
    assert res.rc == 3, res
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 2 and "Traceback" not in res.stderr, res
    assert re.fullmatch(
        r"mjrig: requirement 'stays_put' failed: Joints/slide:qpos [-+0-9.e]+ against limit 1e-06, "
        r"first at t = 0\.3\d* s",
        lines[0],
    ), lines[0]
    assert "diverged" in lines[1] or "t =" in lines[1], lines[1]
