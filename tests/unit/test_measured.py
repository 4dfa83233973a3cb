"""``[[measured]]``: bench data in CSV, Parquet, MAT (v5 and v7.3) and MCAP read into SI series
(units, scale, time unit and offset), the ``rms_error``/``max_error`` metrics against it on a
damped spring-mass whose motion is known in closed form, and bad input as one line at FILE:LINE."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from mjrig.headless import prepare, run
from mjrig.runtime.errors import ConfigError
from mjrig.scenario.parse import load_scenario
from tests.rig_toml import spring
from tests.unit.unit_util import SLIDER_WORLD

MODEL = f"""<mujoco>
  <option timestep="0.001" integrator="RK4" gravity="0 0 0"/>
{SLIDER_WORLD}</mujoco>
"""
M, K, C, X0 = 2.0, 400.0, 2.0, 0.02


def decay(t: np.ndarray, *, m: float = M, k: float = K, c: float = C, x0: float = X0) -> np.ndarray:
    """A damped spring-mass released at x0 from rest (m)."""
    wn, z = math.sqrt(k / m), c / (2 * math.sqrt(k * m))
    wd = wn * math.sqrt(1 - z * z)
    return x0 * np.exp(-z * wn * t) * (np.cos(wd * t) + z / math.sqrt(1 - z * z) * np.sin(wd * t))


def scenario(folder: Path, measured: str, *, k: float = K, c: float = C, extra: str = "") -> Path:
    (folder / "sm.xml").write_text(MODEL.format(mass=M), encoding="utf-8")
    path = folder / "sm.toml"
    path.write_text(
        f"""model = "sm.xml"

[simulation]
duration = 2.0

[params]
k = {{ value = {k}, unit = "N/m", min = 1.0, max = 5000.0 }}
c = {{ value = {c}, unit = "N*s/m", min = 0.001, max = 100.0 }}

[initial]
qpos = {{ slide = {X0} }}

{spring(stiffness="k", damping="c", rest_length=0.5)}
{measured}
{extra}""",
        encoding="utf-8",
    )
    return path


BOUND = """model = "sm.xml"

[simulation]
duration = 2.0

[params]
k = {{ value = 160.0, unit = "N/m", min = 1.0, max = 5000.0, model = "joint:slide.stiffness" }}
c = {{ value = 5.0, unit = "N*s/m", min = 0.001, max = 100.0, model = "joint:slide.damping" }}
m = {{ value = {mass}, unit = "kg", min = 0.1, max = 10.0, model = "body:block.mass" }}

[initial]
qpos = {{ slide = {x0} }}

{entry}
[fit]
params = {{ k = {{ low = 50.0, high = 2000.0 }}, c = {{ low = 0.01, high = 50.0, log = true }} }}
"""
"""The bench's spring and damper as the slide joint's own stiffness and damping (model fields),
the block's mass a bound param the fit leaves at its value."""


def bound_scenario(folder: Path) -> Path:
    """``sm.toml`` of ``BOUND`` in ``folder`` with its model and the bench of ``csv_bench`` (noise 0.05 mm)."""
    csv_bench(folder, noise=0.05, seed=2)
    (folder / "sm.xml").write_text(MODEL.format(mass=1.0), encoding="utf-8")  # the scenario's m overrides
    path = folder / "sm.toml"
    path.write_text(BOUND.format(mass=M, x0=X0, entry=CSV_ENTRY), encoding="utf-8")
    return path


DECAY_ENTRY = """
[[measured]]
name = "decay"
file = "decay.csv"
[measured.signals]
"Joints/slide:qpos" = { column = "x" }
"""
"""The [[measured]] entry of ``decay_csv``'s file ``decay.csv``: the slide's position."""


def decay_csv(path: Path, t: np.ndarray, *, m: float, k: float, c: float, noise: float = 2e-5) -> Path:
    """``path``: the decay of mass ``m`` on ``k``, ``c`` at times ``t`` (s) as ``time,x`` (m), with
    Gaussian noise of ``noise`` m (seeded: the same file each time)."""
    x = decay(t, m=m, k=k, c=c) + np.random.default_rng(5).normal(0, noise, t.size)
    path.write_text("time,x\n" + "".join(f"{a:.4f},{b:.9f}\n" for a, b in zip(t, x)), encoding="utf-8")
    return path


def csv_bench(
    folder: Path, *, noise: float = 0.0, seed: int = 0, rate: float = 250.0, offset: float = 0.1, duration: float = 2.0
) -> Path:
    """The decay sampled at ``rate`` Hz, in mm against ms, the file's clock ``offset`` s late."""
    t = np.arange(0.0, duration, 1.0 / rate)
    x = decay(t) * 1000 + np.random.default_rng(seed).normal(0.0, noise, t.size)
    path = folder / "bench.csv"
    path.write_text(
        "t_ms,x_mm\n" + "".join(f"{(a + offset) * 1000:.6f},{b:.9f}\n" for a, b in zip(t, x)), encoding="utf-8"
    )
    return path


CSV_ENTRY = """[[measured]]
name = "bench"
file = "bench.csv"
time = "t_ms"
time_unit = "ms"
offset = -0.1
[measured.signals]
"Joints/slide:qpos" = { column = "x_mm", unit = "mm" }
"""


def test_a_csv_in_mm_and_ms_with_an_offset_reads_as_si_series(tmp_path):
    csv_bench(tmp_path)
    sc = load_scenario(scenario(tmp_path, CSV_ENTRY))
    t, x = sc.measured[0].series("Joints/slide:qpos")
    assert t[0] == pytest.approx(0.0, abs=1e-12) and t.size == 500
    np.testing.assert_allclose(x, decay(t), atol=1e-11)


@pytest.mark.parametrize("cell", ["NA", "N/A", "#N/A", "nan", "NaN", "NULL", "-", ""])
def test_a_missing_cell_is_a_missing_sample_not_a_lost_column(tmp_path, cell):
    """A bench export's way of saying "no sample here" leaves that sample out; the column stays."""
    path = csv_bench(tmp_path)
    lines = path.read_text().splitlines()
    for row in (5, 200):  # two samples missing
        lines[row] = lines[row].split(",")[0] + "," + cell
    path.write_text("\n".join(lines) + "\n")
    sc = load_scenario(scenario(tmp_path, CSV_ENTRY))
    t, x = sc.measured[0].series("Joints/slide:qpos")
    assert t.size == 498
    np.testing.assert_allclose(x, decay(t), atol=1e-11)


def _write_formats(folder: Path, t: np.ndarray, x: np.ndarray) -> dict[str, tuple[Path, str, str]]:
    """The same samples (s, m) in every format: {suffix: (file, time column, value column)}."""
    import h5py
    import polars as pl
    import scipy.io
    from mcap.writer import Writer

    out = {}
    pq = folder / "bench.parquet"
    pl.DataFrame({"time": t, "pos": x}).write_parquet(pq)
    out["parquet"] = (pq, "time", "pos")
    mat = folder / "bench5.mat"
    scipy.io.savemat(mat, {"rig": {"t": t.reshape(-1, 1), "x": x.reshape(-1, 1)}})
    out["mat5"] = (mat, "rig.t", "rig.x")
    mat73 = folder / "bench73.mat"
    with h5py.File(mat73, "w", userblock_size=512) as fh:  # MATLAB's -v7.3: HDF5 after a 512-byte header
        fh["t"] = t.reshape(1, -1)
        fh["x"] = x.reshape(1, -1)
    with open(mat73, "r+b") as fh:
        fh.write(b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Thu Nov 26 2026 HDF5 schema 1.00 .")
    out["mat73"] = (mat73, "t", "x")
    mcap = folder / "bench.mcap"
    with open(mcap, "wb") as fh:
        w = Writer(fh)
        w.start()
        schema = w.register_schema(name="Pose", encoding="jsonschema", data=b"{}")
        chan = w.register_channel(topic="/rig", message_encoding="json", schema_id=schema)
        for a, b in zip(t, x):
            ns = int(round(a * 1e9))
            w.add_message(chan, log_time=ns, publish_time=ns, data=json.dumps({"pose": {"x": b}}).encode())
        w.finish()
    out["mcap"] = (mcap, "", "/rig/pose.x")
    return out


@pytest.mark.parametrize("fmt", ["parquet", "mat5", "mat73", "mcap"])
def test_every_format_gives_the_same_series(tmp_path, fmt):
    t = np.arange(0.0, 1.0, 0.004)
    files = _write_formats(tmp_path, t, decay(t))
    path, time, column = files[fmt]
    time_line = f'time = "{time}"\n' if time else ""  # MCAP: each topic's log_time
    entry = f"""[[measured]]
name = "bench"
file = "{path.name}"
{time_line}[measured.signals]
"Joints/slide:qpos" = {{ column = "{column}" }}
"""
    sc = load_scenario(scenario(tmp_path, entry))
    got_t, got_x = sc.measured[0].series("Joints/slide:qpos")
    np.testing.assert_allclose(got_t, t, atol=1e-9)
    np.testing.assert_allclose(got_x, decay(t), atol=1e-15)


METRICS = """[[metrics]]
name = "rms"
signal = "Joints/slide:qpos"
kind = "rms_error"
against = "bench"

[[metrics]]
name = "worst"
signal = "Joints/slide:qpos"
kind = "max_error"
against = "bench"
start = 0.5
"""


def test_the_error_metrics_score_the_run_against_the_bench(tmp_path):
    """At the true k and c the rms error is the bench's noise (0.05 mm); with k 10 % off it is
    the closed forms' difference."""
    csv_bench(tmp_path, noise=0.05, seed=3)
    t = np.arange(0.0, 2.0, 1 / 250)
    noise = np.random.default_rng(3).normal(0.0, 0.05, t.size) / 1000
    for k in (K, 1.1 * K):
        setup = prepare(load_scenario(scenario(tmp_path, CSV_ENTRY, k=k, extra=METRICS)), record=False)
        run(setup)
        values = setup.runtime.checks.metrics.values()
        err = decay(t, k=k) - (decay(t) + noise)
        assert values["rms"] == pytest.approx(math.sqrt(np.mean(err**2)), rel=2e-3)
        assert values["worst"] == pytest.approx(np.abs(err[t >= 0.5]).max(), rel=2e-2)
    assert math.sqrt(np.mean(noise**2)) == pytest.approx(0.05e-3, rel=0.1)


@pytest.mark.parametrize(
    ("change", "where", "words"),
    [
        (('column = "x_mm"', 'column = "x_m"'), "measured[0].signals.Joints/slide:qpos.column", "closest: x_mm"),
        (('unit = "mm"', 'unit = "deg"'), "measured[0].signals.Joints/slide:qpos.unit", "does not fit"),
        (('time = "t_ms"', 'time = "tms"'), "measured[0].time", "closest: t_ms"),
        (('file = "bench.csv"', 'file = "nope.csv"'), "measured[0].file", "not found"),
        (('time_unit = "ms"', 'time_unit = "min"'), "measured[0].time_unit", "choose s, ms"),
        (
            ('"Joints/slide:qpos" = {', '"Joints/slid:qpos" = {'),
            "measured[0].signals.Joints/slid:qpos",
            "closest: Joints/slide:qpos",
        ),
        (
            ("offset = -0.1", "offset = -0.1\nset = { kk = 1.0 }"),
            "measured[0].set.kk",
            "unknown param 'kk' (closest: k)",
        ),
        (  # a ms column read as s: 2,000 s of bench for a 2 s scenario
            ('time_unit = "ms"', 'time_unit = "s"'),
            "measured[0].time_unit",
            'bench.csv spans 1996 s of measured time (time_unit = "s"), more than 10 × the scenario\'s duration '
            "2 s: is 't_ms' in ms? (then it spans 1.996 s; time_unit = \"ms\")",
        ),
    ],
)
def test_bad_measured_input_is_one_line_at_its_field(tmp_path, change, where, words):
    csv_bench(tmp_path)
    path = scenario(tmp_path, CSV_ENTRY.replace(*change))
    with pytest.raises(ConfigError) as err:
        prepare(load_scenario(path), record=False)
    text = str(err.value)
    lines = path.read_text().splitlines()
    first = lines.index("[[measured]]") + 1
    assert "\n" not in text and text.startswith(f"{path}:") and where in text and words in text, text
    assert first <= int(text.split(":")[1]) <= len(lines)  # a line of the entry, not the file's top


def test_a_time_column_that_goes_back_is_refused_with_the_sample(tmp_path):
    path = csv_bench(tmp_path)
    rows = path.read_text().splitlines()
    rows[10], rows[11] = rows[11], rows[10]
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(ConfigError, match=r"measured\[0\]\.time: time does not increase in bench.csv: sample 11"):
        load_scenario(scenario(tmp_path, CSV_ENTRY))


def test_an_error_metric_must_name_a_measured_entry_that_maps_its_signal(tmp_path):
    csv_bench(tmp_path)
    with pytest.raises(ConfigError, match=r"metrics\[0\]\.against: unknown measured entry 'bnch' \(closest: bench\)"):
        load_scenario(scenario(tmp_path, CSV_ENTRY, extra=METRICS.replace('against = "bench"', 'against = "bnch"', 1)))
    with pytest.raises(ConfigError, match=r"needs 'against'"):
        load_scenario(scenario(tmp_path, CSV_ENTRY, extra=METRICS.replace('against = "bench"\n', "", 1)))


@pytest.mark.parametrize("cell", ["NA", ""])
def test_a_column_of_nothing_but_missing_cells_is_found_and_said_to_have_no_samples(tmp_path, cell):
    """A sensor that recorded nothing is still the file's column: not "no column 'x_mm'" (a
    typo's message, with the closest names), but that it has no samples."""
    path = csv_bench(tmp_path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0]] + [ln.split(",")[0] + "," + cell for ln in lines[1:]]) + "\n")
    with pytest.raises(ConfigError) as err:
        load_scenario(scenario(tmp_path, CSV_ENTRY))
    text = str(err.value)
    assert "measured[0].signals" in text and "'x_mm' of bench.csv has no samples: every cell is missing" in text, text
    assert "has no column" not in text


@pytest.mark.parametrize("cell", ["NA", "", "nan"])
def test_a_missing_time_beside_a_value_is_refused_with_its_sample(tmp_path, cell):
    """A value whose time is missing cannot be placed: refused at the entry's ``time`` with the
    sample, never quietly left out. A row missing both is only a missing sample."""
    path = csv_bench(tmp_path)
    lines = path.read_text().splitlines()
    lines[3] = "NA,NA"  # sample 3: nothing at all -- fine
    lines[7] = cell + "," + lines[7].split(",")[1]  # sample 7: a value without its time
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        ConfigError,
        match=r"measured\[0\]\.time: time is missing in bench.csv at sample 7, where 'x_mm' has a value \(1 such sample\)",
    ):
        load_scenario(scenario(tmp_path, CSV_ENTRY))
    lines[7] = "NA,NA"
    path.write_text("\n".join(lines) + "\n")
    t, x = load_scenario(scenario(tmp_path, CSV_ENTRY)).measured[0].series("Joints/slide:qpos")
    assert t.size == 498
    np.testing.assert_allclose(x, decay(t), atol=1e-11)
