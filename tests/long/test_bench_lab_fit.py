"""The same spring-mass bench (k = 300 N/m, sampled every 10 ms, time in ms, position in mm) as
lab software writes it -- a European CSV (``;``, decimal commas, a units row), an Excel workbook
with a units row and a LabVIEW TDMS file whose channels carry ``unit_string`` -- fitted with an
entry that names only the columns: each gives k within 0.5 % (CONTRACT 14). In the long lane: three
whole fits (about 2 s each)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mjrig.campaign.fit import run_fit
from mjrig.scenario.parse import load_scenario
from tests.unit.test_measured import decay, scenario

pytestmark = pytest.mark.long

K_TRUE = 300.0
T = np.arange(0.0, 2.0, 0.01)
"""The bench's sample times (s): every 10 ms."""
X_MM = decay(T, k=K_TRUE) * 1000 + np.random.default_rng(7).normal(0.0, 0.01, T.size)
"""The measured position (mm), with 0.01 mm of noise."""


def _european_csv(folder: Path) -> str:
    rows = "".join(f"{t * 1000:.1f};{x:.6f}\n".replace(".", ",") for t, x in zip(T, X_MM))
    (folder / "bench.csv").write_text("t;x\nms;mm\n" + rows, encoding="utf-8")
    return "bench.csv"


def _workbook(folder: Path) -> str:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.append(["t", "x"])
    sheet.append(["ms", "mm"])
    for t, x in zip(T, X_MM):
        sheet.append([t * 1000, x])
    book.save(folder / "bench.xlsx")
    return "bench.xlsx"


def _tdms(folder: Path) -> str:
    from nptdms import ChannelObject, GroupObject, RootObject, TdmsWriter

    with TdmsWriter(str(folder / "bench.tdms")) as writer:
        writer.write_segment(
            [
                RootObject({"title": "spring-mass"}),
                GroupObject("Bench"),
                ChannelObject("Bench", "t", T * 1000, properties={"unit_string": "ms"}),
                ChannelObject("Bench", "x", X_MM, properties={"unit_string": "mm"}),
            ]
        )
    return "bench.tdms"


ENTRY = """[[measured]]
name = "bench"
file = "{file}"
time = "t"
[measured.signals]
"Joints/slide:qpos" = {{ column = "x" }}

[fit]
params = {{ k = {{ low = 50.0, high = 2000.0 }} }}
"""
"""Only the columns named: the units come from the file."""


@pytest.mark.parametrize("write", [_european_csv, _workbook, _tdms], ids=["european-csv", "xlsx", "tdms"])
def test_each_lab_format_fits_k_within_half_a_percent(tmp_path, write):
    sc = load_scenario(scenario(tmp_path, ENTRY.format(file=write(tmp_path)), k=240.0))  # a guess 20 % off
    t, x = sc.measured[0].series("Joints/slide:qpos")
    np.testing.assert_allclose(t, T, atol=1e-9)  # ms read as ms
    np.testing.assert_allclose(x, X_MM / 1000, atol=1e-9)  # mm read as mm
    outcome = run_fit(sc, out=tmp_path / "FIT.parquet", workers=1)
    assert outcome.converged, outcome.summary["message"]
    k = outcome.summary["estimate"]["k"]
    print(f"{write.__name__}: k = {k:.6g} N/m after {outcome.evaluations} evaluations")
    assert abs(k / K_TRUE - 1) < 0.005, k
