"""`mjrig report` and `mjrig plot` as a user runs them (CONTRACT 8): a report of a recording with
requirements and metrics, of a sweep and of a study -- HTML that parses, references nothing
outside itself, holds every requirement's verdict and every metric's value, and renders in
headless Chromium; plots in PNG, SVG and PDF; bad input in one line; no file silently replaced."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from e2e_util import mjrig

from tests.sweep_util import K_PARAM, spring_mass

RIG = (
    spring_mass(
        duration=2.0, params=(K_PARAM, 'c = { value = 1.0, min = 0.0, max = 50.0, unit = "N·s/m" }'), damping='"c"'
    )
    + """
[[proximities]]
name = "gap"
a = "tip"
b = "stop"

[[requirements]]
name = "keeps_clear"
signal = "Proximities/gap:distance"
min = 0.02

[[requirements]]
name = "gentle_spring"
signal = "Loads/main_spring:fx"
max = 10.0

[[metrics]]
name = "f"
signal = "Joints/slide_x:qpos"
kind = "frequency"

[[metrics]]
name = "peak_force"
signal = "Loads/main_spring:fx"
kind = "max"
"""
)

SWEEP = """
[sweep]
seed = 5
[sweep.params]
k = { values = [100.0, 200.0, 400.0] }
c = { distribution = "uniform", low = 0.5, high = 2.0 }
"""

OPTIMIZE = """
[optimize]
minimize = "Metrics/peak_force"
trials = 8
seed = 2
[optimize.params]
k = { low = 50.0, high = 400.0 }
"""


class _Page(HTMLParser):
    """Every tag's attributes and the page's text, from Python's own HTML parser."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.refs += [v or "" for k, v in attrs if k in ("src", "href", "srcset", "data", "action")]

    def handle_data(self, data):
        self.text.append(data)


def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def self_contained(page: _Page, html: str) -> None:
    assert page.tags.count("script") == 0 and "<link" not in html and "@import" not in html and "url(" not in html
    for ref in page.refs:  # only inline images and in-page anchors
        assert ref.startswith("data:image/png;base64,") or ref.startswith("#"), ref[:80]


def read_report(out: Path) -> tuple[str, str]:
    """The report at ``out``, checked to be self-contained: its HTML and its text with white space
    folded."""
    html = out.read_text(encoding="utf-8")
    page = parse(out)
    self_contained(page, html)
    return html, " ".join(" ".join(page.text).split())


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("rec")
    (d / "rig.toml").write_text(RIG, encoding="utf-8")
    r = mjrig("run", d / "rig.toml", "--out", d / "run.parquet", "--metrics", d / "m.json", cwd=d)
    assert r.rc == 4, r  # gentle_spring fails: the spring starts at 20 N
    return d / "run.parquet"


def test_a_recordings_report_holds_every_verdict_and_metric_and_nothing_from_outside(recording):
    r = mjrig("report", recording, "--signals", "Energy/*", cwd=recording.parent)
    out = recording.with_suffix(".html")
    assert r.rc == 0 and f"to {out}" in r.stderr, r
    html, text = read_report(out)
    metrics = json.loads((recording.parent / "m.json").read_text())
    verdicts = json.loads(pq.read_schema(recording).metadata[b"mjrig.requirements"])
    assert [v["name"] for v in verdicts] == ["keeps_clear", "gentle_spring"]
    assert [v["pass"] for v in verdicts] == [True, False]
    rows = re.findall(
        r"<tr><td>(\w+)</td><td class=\"mono\">([^<]+)</td>\s*<td class=\"(pass|fail)\">(PASS|FAIL)</td>", html
    )
    assert [(n, s, v) for n, s, _, v in rows] == [
        ("keeps_clear", "Proximities/gap:distance", "PASS"),
        ("gentle_spring", "Loads/main_spring:fx", "FAIL"),
    ]
    first_fail = verdicts[1]["time"]
    assert f"{first_fail:.6g}" in text and f"{verdicts[1]['value']:.6g}" in text
    for name, m in metrics.items():
        assert name in text and f"{m['value']:.6g}" in text, name
    assert abs(metrics["f"]["value"] - np.sqrt(200.0) / (2 * np.pi)) < 0.02  # the value reported is the physics'
    assert "1 PASS" in text and "1 FAIL" in text
    assert "spring_mass.xml" in text and pq.read_schema(recording).metadata[b"mjrig.model_sha256"].decode() in text
    # one figure per unit: m (gap, slide), N (spring force) and J (--signals Energy/*)
    assert html.count('src="data:image/png;base64,') == 3
    shot = screenshot(out)
    assert shot.stat().st_size > 20_000


def test_a_second_report_gets_the_next_free_name_and_o_replaces(recording, tmp_path):
    src = tmp_path / "a.parquet"
    shutil.copy(recording, src)
    assert mjrig("report", src, cwd=tmp_path).rc == 0
    first = (tmp_path / "a.html").read_bytes()
    r = mjrig("report", src, cwd=tmp_path)
    assert r.rc == 0 and "a-2.html" in r.stderr, r
    assert (tmp_path / "a.html").read_bytes() == first and (tmp_path / "a-2.html").is_file()
    given = tmp_path / "given.html"
    given.write_text("old")
    assert mjrig("report", src, "-o", given, cwd=tmp_path).rc == 0
    assert given.read_text().startswith("<!DOCTYPE html>")


def test_a_sweeps_report_counts_scatters_and_sensitivity(tmp_path):
    (tmp_path / "sweep.toml").write_text(RIG + SWEEP, encoding="utf-8")
    assert (
        mjrig(
            "sweep",
            tmp_path / "sweep.toml",
            "--out",
            tmp_path / "res.parquet",
            "--workers",
            "1",
            "--trials",
            "2",
            cwd=tmp_path,
        ).rc
        == 0
    )
    r = mjrig("report", tmp_path / "res.parquet", cwd=tmp_path)
    assert r.rc == 0, r
    out = tmp_path / "res.html"
    html, text = read_report(out)
    df = pl.read_parquet(tmp_path / "res.parquet")
    assert f"Trials {len(df)}" in text
    counts = df["status"].value_counts()
    for status, n in counts.iter_rows():
        assert f"{n} {status}" in text
    # k and c varied, against 2 requirement values + 2 metrics: 8 scatters; histograms of k, c, f, peak_force
    assert len(re.findall(r"<figcaption>Params/\w+ → ", html)) == 8
    assert len(re.findall(r'alt="histogram of ', html)) == 4
    assert "Sensitivity" in text and "Spearman" in text
    for trial in df["trial"]:
        assert re.search(rf"<tr><td class=\"num\">{trial}</td>", html)
    screenshot(out)


def test_a_studys_report_has_the_history_and_the_best_trial(tmp_path):
    (tmp_path / "opt.toml").write_text(RIG + OPTIMIZE, encoding="utf-8")
    r = mjrig("optimize", tmp_path / "opt.toml", "--out", tmp_path / "study.parquet", "--workers", "1", cwd=tmp_path)
    assert r.rc in (0, 4), r
    rep = mjrig("report", tmp_path / "study.parquet", cwd=tmp_path)
    assert rep.rc == 0, rep
    out = tmp_path / "study.html"
    html, text = read_report(out)
    df = pl.read_parquet(tmp_path / "study.parquet")
    assert "Objective history" in text and "minimize Metrics/peak_force" in text
    feasible = df.filter(pl.col("feasible"))
    if feasible.height:
        best = feasible.sort(["objective", "trial"])[0]
        assert f"trial {best['trial'][0]}: k = {best['Params/k:value'][0]:.6g}" in text
        assert 'alt="objective by trial"' in html
    else:
        assert "no feasible trial" in text
    screenshot(out)


def test_plot_writes_png_svg_and_pdf_overlaying_files(recording, tmp_path):
    other = tmp_path / "other.parquet"
    shutil.copy(recording, other)
    for suffix, magic in ((".png", b"\x89PNG"), (".svg", b"<?xml"), (".pdf", b"%PDF")):
        out = tmp_path / f"p{suffix}"
        r = mjrig("plot", recording, other, "--signals", "Joints/*:qpos", "--signals", "Loads/*:fx", "-o", out)
        assert r.rc == 0 and "wrote 4 signals in 2 panels" in r.stderr, r
        assert out.read_bytes()[: len(magic)] == magic
    svg = (tmp_path / "p.svg").read_text()
    texts = [t.replace("&gt;", ">") for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]  # words as text
    for label in ("run.parquet: Joints/slide_x:qpos", "other.parquet: Loads/main_spring:fx", "time (s)"):
        assert label in texts, texts


def test_export_writes_beside_the_recording_never_replacing_and_reads_back(recording, tmp_path):
    src = tmp_path / "a.parquet"
    shutil.copy(recording, src)
    rows = pl.read_parquet(src)
    for fmt in ("csv", "mat", "mcap"):
        r = mjrig("export", src, "--to", fmt, cwd=tmp_path)
        assert r.rc == 0 and f"wrote {len(rows)} rows of a.parquet to {tmp_path / ('a.' + fmt)}" in r.stderr, r
    r = mjrig("export", src, "--to", "CSV", cwd=tmp_path)  # again: the next free name
    assert r.rc == 0 and str(tmp_path / "a-2.csv") in r.stderr, r
    back = pl.read_csv(tmp_path / "a-2.csv", infer_schema_length=0)
    assert "time [s]" in back.columns  # every column with a unit says it, SI too
    back = back.rename({h: re.sub(r" \[[^\]]*\]$", "", h) for h in back.columns}).select(
        [pl.col(c).cast(rows.schema[c]) for c in rows.columns]
    )
    assert back.equals(rows)
    given = tmp_path / "given.csv"
    given.write_text("old")
    assert mjrig("export", src, "--to", "csv", "-o", given, cwd=tmp_path).rc == 0
    assert pl.read_csv(given).height == len(rows)


@pytest.mark.parametrize(
    "args, words",
    [
        (["report", "{nothing}"], "file not found"),
        (["report", "{text}"], "not a readable Parquet file"),
        (["report", "{rec}", "--signals", "Loads/*:fxx"], "matches no signal (closest: Loads/main_spring:fx"),
        (["report", "{rec}", "-o", "{tmp}/r.pdf"], "name it .html"),
        (["plot", "{rec}", "--signals", "Jonts/*", "-o", "{tmp}/p.png"], "matches no signal (closest:"),
        (["plot", "{rec}", "--signals", "Joints/*", "-o", "{tmp}/p.jpg"], "name the figure .png, .svg or .pdf"),
        (["plot", "{notrec}", "--signals", "x", "-o", "{tmp}/p.png"], "not an mjrig recording (no 'time' column)"),
        (["export", "{rec}", "--to", "xlsx"], "unknown export format 'xlsx': choose csv, mat, mcap"),
        (["export", "{text}", "--to", "csv"], "not a readable Parquet file"),
    ],
)
def test_bad_input_exits_2_with_one_line(recording, tmp_path, args, words):
    (tmp_path / "t.parquet").write_text("not parquet")
    pq.write_table(pl.DataFrame({"x": [1.0]}).to_arrow(), tmp_path / "n.parquet")
    subs = {
        "{nothing}": str(tmp_path / "none.parquet"),
        "{text}": str(tmp_path / "t.parquet"),
        "{rec}": str(recording),
        "{notrec}": str(tmp_path / "n.parquet"),
        "{tmp}": str(tmp_path),
    }
    argv = [a for a in args]
    for k, v in subs.items():
        argv = [a.replace(k, v) for a in argv]
    r = mjrig(*argv, cwd=tmp_path)
    assert r.rc == 2 and len(r.err_lines) == 1 and words in r.stderr and "Traceback" not in r.stderr, r


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def screenshot(page: Path) -> Path:
    """The page rendered by headless Chromium (offline: no network flags), saved beside it and in
    tests/artifacts for a person to look at."""
    exe = chromium()
    if exe is None:
        pytest.skip("no Chromium (scripts/test.sh installs Debian's chromium)")
    shot = page.with_suffix(".png")
    subprocess.run(
        [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={page.parent / 'chromium-profile'}",
            "--window-size=1280,2400",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    artifacts = Path(__file__).resolve().parents[1] / "artifacts"
    artifacts.mkdir(exist_ok=True)
    shutil.copy(shot, artifacts / f"report-{page.stem}.png")
    return shot
