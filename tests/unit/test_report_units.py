"""A report of a recording whose rig shows millimetres: every figure is converted from the SI file
exactly once -- a requirement on a metric in mm too, the requirement's two bounds drawn (both, at -150 mm and 20 mm, not 1.5e5), the
metric's window shaded and named, the params table in mm -- and the CSV export agrees with the
report and the Parquet file. One 1.2 s run of the spring-mass (about a second)."""

from __future__ import annotations

import csv
import html
import re
from pathlib import Path

import polars as pl
import pytest

from mjrig.exports import plotting
from mjrig.exports.export import export_recording
from mjrig.exports.report import write_report
from mjrig.headless import prepare, run
from mjrig.scenario.parse import load_scenario
from tests.sweep_util import K_PARAM, spring_mass

MODELS = Path(__file__).resolve().parents[2] / "models"

RIG = f"""{spring_mass(duration=1.2, params=(K_PARAM, 'gap = { value = 0.05, min = 0.0, max = 0.2, unit = "m" }'))}
[units]
length = "mm"

[[requirements]]
name = "travel"
signal = "Joints/slide_x:qpos"
min = -0.15
max = 0.02

[[requirements]]
name = "swing_ok"
signal = "Metrics/back_swing"
max = 0.01

[[metrics]]
name = "back_swing"
signal = "Joints/slide_x:qpos"
kind = "max"
start = 0.4
end = 1.0
"""


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("units")
    (folder / "rig.toml").write_text(RIG, encoding="utf-8")
    path = folder / "rec.parquet"
    run(prepare(load_scenario(folder / "rig.toml"), out=path))
    return path


def test_the_report_draws_both_bounds_and_the_window_once_converted(
    recording: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[dict] = []
    figure = plotting.signals_figure
    monkeypatch.setattr(plotting, "signals_figure", lambda traces, **kw: drawn.append(kw) or figure(traces, **kw))
    page = write_report(recording, out=tmp_path / "r.html").read_text(encoding="utf-8")
    (mm,) = [kw for kw in drawn if any(s == "Joints/slide_x:qpos" for s, *_ in kw["limits"])]
    assert sorted(v for _, v, _ in mm["limits"]) == pytest.approx([-150.0, 20.0], rel=1e-12)  # both, in mm
    assert mm["spans"] == [("Joints/slide_x:qpos", 0.4, 1.0, "back_swing: 0.4..1 s")]
    caption = html.unescape(re.search(r'<span class="marks">(.*?)</span>', page).group(1))
    assert caption == "dashed: travel >= -150 mm, travel <= 20 mm; shaded: back_swing: 0.4..1 s", caption
    rows = dict(re.findall(r"<tr><td>(\w+)</td><td class=\"num\">([^<]*)</td>", page))
    assert "0.4..1 s" in page and re.search(r"<td>gap</td><td class=\"num\">50</td>", page), rows
    verdict = re.sub(r"\s+", " ", page[page.index("swing_ok</td>") :][:300])  # a requirement on a metric, in mm too
    assert re.search(r'<td class="num">-?[0-9.e-]+ mm</td><td class="num">10 mm</td>', verdict), verdict


def test_the_csv_and_the_report_agree_with_the_si_file(recording: Path, tmp_path: Path) -> None:
    export_recording(recording, to="csv", out=tmp_path / "r.csv")
    with open(tmp_path / "r.csv", newline="") as fh:
        table = list(csv.reader(fh))
    column = table[0].index("Joints/slide_x:qpos [mm]")
    si = pl.read_parquet(recording, columns=["Joints/slide_x:qpos"])["Joints/slide_x:qpos"].to_list()
    assert [float(r[column]) for r in table[1:]] == pytest.approx([1000.0 * v for v in si], rel=1e-12)


def test_a_study_report_states_the_objective_as_written_with_its_unit(tmp_path: Path) -> None:
    """``minimize = "Metrics/f"`` with ``target = 3``: the report says |Metrics/f − 3 Hz| and
    gives the best objective in Hz (it said "minimize Metrics/f", a bare number). Three 2 s trials."""
    from mjrig.campaign.optimize import run_optimize
    from tests.sweep_util import BASE

    base = BASE.split("[[requirements]]")[0].replace("duration = 1.0", "duration = 2.0")
    path = tmp_path / "opt.toml"
    path.write_text(
        base + '\n[[metrics]]\nname = "f"\nsignal = "Joints/slide_x:qpos"\nkind = "frequency"\n\n'
        '[optimize]\nminimize = "Metrics/f"\ntarget = 3.0\ntrials = 3\n'
        "[optimize.params]\nk = { low = 100.0, high = 400.0 }\n",
        encoding="utf-8",
    )
    outcome = run_optimize(load_scenario(path), out=tmp_path / "study.parquet", workers=1)
    page = html.unescape(write_report(outcome.path, out=tmp_path / "s.html").read_text(encoding="utf-8"))
    assert "|Metrics/f − 3 Hz|" in page
    best = re.search(r'<div class="big">([^ <]+) <span class="muted" style="font-size:14px">Hz</span>', page)
    assert best and float(best.group(1)) == pytest.approx(outcome.best["objective"], rel=1e-5), best


def test_a_sweep_report_counts_each_requirements_failures_and_names_the_worst_trial(tmp_path: Path) -> None:
    """Four damping values of the undamped-released spring-mass (1 s each): travel >= -0.15 m
    needs a damping ratio above 0.215 (c > 6.1 N·s/m), so c = 0 and 2 fail; the worst is c = 0,
    whose block swings to -0.2 m, 0.05 m past the bound. And the pass/fail matrix is drawn."""
    from mjrig.campaign.sweep import run_sweep
    from tests.sweep_util import write_scenario

    path = write_scenario(tmp_path, "[sweep]\n[sweep.params]\nc = { values = [0.0, 2.0, 10.0, 30.0] }\n")
    outcome = run_sweep(load_scenario(path), out=tmp_path / "res.parquet", workers=1)
    df = pl.read_parquet(outcome.path)
    assert df["Requirements/travel:pass"].to_list() == [False, False, True, True]
    page = write_report(outcome.path, out=tmp_path / "res.html").read_text(encoding="utf-8")
    row = re.sub(r"\s+", " ", page[page.index("<td>travel</td>") :][:400])
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", row)[:6]
    assert cells[:4] == ["travel", "Joints/slide_x:qpos", "2 of 4", "0"], cells
    assert cells[4].endswith(" m") and cells[5].endswith(" m"), cells
    assert float(cells[4][:-2]) == pytest.approx(-0.2, abs=2e-4) and float(cells[5][:-2]) == pytest.approx(
        0.05, abs=2e-4
    )
    assert 'alt="pass/fail of each requirement in each trial" src="data:image/png;base64,' in page


def test_a_sweep_report_under_units_shows_every_value_in_them_once(tmp_path: Path) -> None:
    """The same sweep with ``[units] length = "mm"`` (two 1 s trials): the results file keeps SI
    and says so per column (``unit`` = "m"); the report gives the worst travel as -200 mm, 50 mm
    past its bound, and the trial table's columns in mm, 1000 times the file's values."""
    import pyarrow.parquet as pq

    from mjrig.campaign.sweep import run_sweep
    from tests.sweep_util import write_scenario

    metric = '[[metrics]]\nname = "low"\nsignal = "Joints/slide_x:qpos"\nkind = "min"\n\n[units]\nlength = "mm"\n'
    path = write_scenario(tmp_path, metric + "[sweep]\n[sweep.params]\nc = { values = [0.0, 30.0] }\n")
    outcome = run_sweep(load_scenario(path), out=tmp_path / "res.parquet", workers=1)
    schema = pq.read_schema(outcome.path)
    units = {f.name: (f.metadata or {}).get(b"unit", b"").decode() for f in schema}
    assert units["Requirements/travel:value"] == "m" and units["Metrics/low:value"] == "m", units
    assert units["Params/k:value"] == "N/m" and units["Params/c:value"] == "", units
    si = pl.read_parquet(outcome.path).sort("trial")
    page = html.unescape(write_report(outcome.path, out=tmp_path / "res.html").read_text(encoding="utf-8"))
    row = re.sub(r"\s+", " ", page[page.index("<td>travel</td>") :][:400])
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", row)[:6]
    assert cells[3] == "0" and cells[4].endswith(" mm") and cells[5].endswith(" mm"), cells
    assert float(cells[4][:-3]) == pytest.approx(-200.0, abs=0.2) and float(cells[5][:-3]) == pytest.approx(
        50.0, abs=0.2
    )
    header = re.findall(r"<th>([^<]*)</th>", page[page.rindex("<th>trial</th>") - 10 :])
    assert "Requirements/travel [mm]" in header and "Metrics/low [mm]" in header and "Params/k [N/m]" in header, header
    first = re.findall(r'<td class="num">([^<]*)</td>', page[page.rindex("<th>trial</th>") :])[: len(header)]
    for name, col in (
        ("Metrics/low [mm]", "Metrics/low:value"),
        ("Requirements/travel [mm]", "Requirements/travel:value"),
    ):
        assert float(first[header.index(name)]) == pytest.approx(1000.0 * si[col][0], rel=1e-5), (name, first)
    assert "length in mm; the file holds SI" in page
