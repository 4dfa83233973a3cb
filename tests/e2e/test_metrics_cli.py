"""Metrics through the CLI (CONTRACT 6): ``mjrig run --metrics`` writes each metric's value,
unit, signal and kind (a spring-mass's frequency against sqrt(k/m)/2π); the recording's
metadata holds the same JSON; a requirement bounds a metric; a sweep's results carry a
``Metrics/<m>:value`` column per metric; every bad metric field exits 2 with one line naming
FILE:LINE and the closest names."""

from __future__ import annotations

import json
import math

import polars as pl
import pyarrow.parquet as pq
import pytest
from e2e_util import mjrig

from tests.sweep_util import K_PARAM, spring_mass

RIG = f"""{spring_mass(duration=4.0, params=(K_PARAM,))}
[[metrics]]
name = "freq"
signal = "Joints/slide_x:qpos"
kind = "frequency"

[[metrics]]
name = "settled"
signal = "Joints/slide_x:qpos"
kind = "mean"
start = 2.0
end = 2.8886                  # two periods of 2π·sqrt(1 kg / 200 N/m)

[[requirements]]
name = "fast_enough"
signal = "Metrics/freq"
min = {{min}}
"""


def scenario(tmp_path, text: str):
    path = tmp_path / "rig.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("bound, rc", [(2.0, 0), (2.3, 4)])
def test_run_writes_the_metrics_and_a_requirement_bounds_one(tmp_path, bound, rc):
    path = scenario(tmp_path, RIG.replace("{min}", str(bound)))
    r = mjrig(
        "run",
        path,
        "--metrics",
        tmp_path / "m.json",
        "--out",
        tmp_path / "run.parquet",
        "--report",
        tmp_path / "report.json",
    )
    assert r.rc == rc, r
    got = json.loads((tmp_path / "m.json").read_text())
    assert set(got) == {"freq", "settled"}
    assert got["freq"]["unit"] == "Hz" and got["freq"]["kind"] == "frequency"
    assert got["freq"]["signal"] == "Joints/slide_x:qpos"
    assert got["freq"]["value"] == pytest.approx(math.sqrt(200.0) / (2 * math.pi), rel=2e-3)
    assert got["settled"]["unit"] == "m" and got["settled"]["value"] == pytest.approx(-0.1, abs=2e-3)  # the rest point
    assert "wrote 2 metrics to" in r.stderr
    meta = pq.read_schema(tmp_path / "run.parquet").metadata
    assert json.loads(meta[b"mjrig.metrics"]) == got  # the same JSON in the recording
    report = json.loads((tmp_path / "report.json").read_text())
    assert report[0]["pass"] is (rc == 0) and report[0]["value"] == pytest.approx(got["freq"]["value"])


def test_a_sweep_has_a_column_per_metric(tmp_path):
    path = scenario(
        tmp_path, RIG.replace("{min}", "2.0") + "\n[sweep]\n[sweep.params]\nk = { values = [100.0, 400.0] }\n"
    )
    r = mjrig("sweep", path, "--out", tmp_path / "res.parquet", "--workers", "2")
    assert r.rc == 0, r
    df = pl.read_parquet(tmp_path / "res.parquet")
    expected = [math.sqrt(k) / (2 * math.pi) for k in (100.0, 400.0)]
    assert df["Metrics/freq:value"].to_list() == pytest.approx(expected, rel=2e-3)
    assert df["Requirements/fast_enough:pass"].to_list() == [False, True]


BAD = [
    ('kind = "frequncy"', "kind", "closest: frequency"),
    ('kind = "first_crossing"', "metrics[0]", "needs 'level'"),
    ('kind = "max"\nlevel = 1.0', "level", "'level' goes with first_crossing, not max"),
    ('kind = "settling_time"\nband = -0.1', "band", "positive"),
    ('kind = "max"\nend = -1.0', "end", ""),
    ('kind = "max"\nsignl = "x"', "signl", "closest: signal"),
]


@pytest.mark.parametrize("entry, field, words", BAD, ids=[b[1] + "-" + b[2][:12] for b in BAD])
def test_bad_metric_fields_exit_2_with_one_line(tmp_path, entry, field, words):
    text = RIG.replace("{min}", "2.0").replace('kind = "frequency"', entry)
    path = scenario(tmp_path, text)
    r = mjrig("check", path)
    assert r.rc == 2 and len(r.err_lines) == 1 and "Traceback" not in r.stderr, r
    line = r.err_lines[0]
    assert f"{path}:" in line and field in line and words in line, line


@pytest.mark.parametrize(
    "old, new, words",
    [
        (
            'signal = "Joints/slide_x:qpos"\nkind = "frequency"',
            'signal = "Joints/slide_x:qpso"\nkind = "frequency"',
            "closest: Joints/slide_x:qpos",
        ),
        ('signal = "Metrics/freq"', 'signal = "Metrics/frq"', "closest: Metrics/freq"),
    ],
)
def test_unknown_signals_and_metrics_name_the_line_and_the_closest(tmp_path, old, new, words):
    text = RIG.replace("{min}", "2.0").replace(old, new)
    path = scenario(tmp_path, text)
    r = mjrig("run", path, "--metrics", tmp_path / "m.json")
    assert r.rc == 2 and len(r.err_lines) == 1, r
    line_no = text.splitlines().index(new.splitlines()[0]) + 1
    assert f"{path}:{line_no}:" in r.err_lines[0] and words in r.err_lines[0], r.err_lines[0]
    assert not (tmp_path / "m.json").exists()
