"""An explicit output that is one of the command's inputs is bad input, for every command and
every output flag: exit 2, one line naming both files, and the input's bytes unchanged. The
inputs: the scenario, the model, a file the model includes, the ``[[measured]]`` bench file and
the recordings given. Each case is refused before any stepping (well under a second of work
after the imports)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.e2e.e2e_util import mjrig
from tests.rig_toml import spring
from tests.unit.unit_util import SLIDER_WORLD

MODEL = f"""<mujoco>
  <option timestep="0.002" gravity="0 0 0"/>
  <include file="parts.xml"/>
{SLIDER_WORLD.format(mass=2)}</mujoco>
"""
PARTS = """<mujoco><default><geom rgba="0.5 0.5 0.5 1"/></default></mujoco>
"""
SCENARIO = (
    """model = "rig.xml"

[simulation]
duration = 0.2

[params]
k = { value = 400.0, unit = "N/m", min = 1.0, max = 5000.0 }

"""
    + spring(stiffness="k", rest_length=0.45)
    + """

[[metrics]]
name = "peak"
signal = "Joints/slide:qpos"
kind = "max"

[[measured]]
name = "bench"
file = "bench.parquet"
time = "t"
[measured.signals]
"Joints/slide:qpos" = { column = "x", unit = "m" }

[sweep]
[sweep.params]
k = { values = [100.0, 400.0] }

[optimize]
minimize = "Metrics/peak"
trials = 2

[optimize.params]
k = { low = 50.0, high = 500.0 }

[fit]
params = { k = { low = 50.0, high = 2000.0 } }
"""
)


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    """A scenario whose model includes parts.xml, with a Parquet bench file, and a recording of it."""
    folder = tmp_path_factory.mktemp("apart")
    (folder / "rig.xml").write_text(MODEL, encoding="utf-8")
    (folder / "parts.xml").write_text(PARTS, encoding="utf-8")
    t = np.arange(0.0, 0.2, 0.004)
    pq.write_table(pa.table({"t": t, "x": 0.05 * np.cos(14 * t)}), folder / "bench.parquet")
    (folder / "rig.toml").write_text(SCENARIO, encoding="utf-8")
    rec = folder / "rec.parquet"
    r = mjrig("run", folder / "rig.toml", "--out", rec, cwd=folder)
    assert r.rc == 0, r
    return folder


INPUTS = {
    "rig.toml": "the scenario",
    "rig.xml": "the model",
    "parts.xml": "the model's include file 'parts.xml'",
    "bench.parquet": "the scenario's measured file 'bench'",
}

CASES = [
    *[("run", "--out", name) for name in ("bench.parquet",)],
    *[("run", flag, name) for flag in ("--metrics", "--report") for name in INPUTS],
    ("run", "--video", "rig.xml"),
    *[(cmd, "--out", "bench.parquet") for cmd in ("sweep", "optimize", "fit")],
    *[("modes", "--json", name) for name in INPUTS],
    *[("bode", flag, name) for flag in ("--json", "-o") for name in ("rig.toml", "rig.xml", "parts.xml")],
    ("bode", "--json", "bench.parquet"),
    ("export", "-o", "rec.parquet"),
    ("report", "-o", "rec.parquet"),
    ("plot", "-o", "rec.parquet"),
]


def _args(cmd: str, flag: str, path) -> list:
    folder = path.parent
    scenario = folder / "rig.toml"
    rec = folder / "rec.parquet"
    return {
        "run": ["run", scenario, "--duration", "0.05"],
        "sweep": ["sweep", scenario, "--workers", "1"],
        "optimize": ["optimize", scenario, "--workers", "1"],
        "fit": ["fit", scenario, "--workers", "1"],
        "modes": ["modes", scenario],
        "bode": ["bode", scenario, "--input", "k", "--output", "Joints/slide:qpos"],
        "export": ["export", rec, "--to", "csv"],
        "report": ["report", rec],
        "plot": ["plot", rec, "--signals", "Joints/*"],
    }[cmd] + [flag, path]


@pytest.mark.parametrize(("cmd", "flag", "name"), CASES, ids=[f"{c}{f}={n}" for c, f, n in CASES])
def test_an_output_named_onto_an_input_is_refused(rig, cmd, flag, name):
    target = rig / name
    before = {p.name: p.read_bytes() for p in rig.iterdir() if p.is_file()}
    r = mjrig(*_args(cmd, flag, target), cwd=rig)
    assert r.rc == 2 and len(r.err_lines) == 1 and "Traceback" not in r.stderr, r
    what = INPUTS.get(name) or "the recording"
    assert r.err_lines[0].startswith(f"mjrig: {flag} {target} is "), r
    assert f"({target}); choose another path" in r.err_lines[0], r
    if name in INPUTS:
        assert what in r.err_lines[0], r
    after = {p.name: p.read_bytes() for p in rig.iterdir() if p.is_file()}
    assert after == before
    assert not list(rig.glob("*.parts")) and not list(rig.glob(".*.part"))


def test_an_output_through_a_symbolic_link_is_still_the_input(rig, tmp_path):
    link = tmp_path / "link.parquet"
    link.symlink_to(rig / "bench.parquet")
    before = (rig / "bench.parquet").read_bytes()
    r = mjrig("sweep", rig / "rig.toml", "--out", link, cwd=rig)
    assert r.rc == 2 and "is the scenario's measured file 'bench'" in r.stderr and len(r.err_lines) == 1, r
    assert (rig / "bench.parquet").read_bytes() == before


def test_two_outputs_on_one_file_are_refused(rig, tmp_path):
    r = mjrig(
        "run",
        rig / "rig.toml",
        "--duration",
        "0.05",
        "--out",
        tmp_path / "a.parquet",
        "--report",
        tmp_path / "x.json",
        "--metrics",
        tmp_path / "x.json",
        cwd=rig,
    )
    assert r.rc == 2 and len(r.err_lines) == 1, r
    assert r.err_lines[0] == f"mjrig: --metrics {tmp_path / 'x.json'} is the --report file too; give each its own path"
    assert not any(tmp_path.iterdir())
