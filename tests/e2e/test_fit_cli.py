"""``mjrig fit`` as a user runs it: the ``fit:`` line, FIT.parquet and FIT-best.toml, local
workers, a kill mid-fit resumed from the evaluations kept (the same estimate, bit for bit), and
its bad input as one line."""

from __future__ import annotations

import json
import signal
import sys
import time
from html import unescape
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from e2e_util import mjrig, mjrig_popen

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_measured import CSV_ENTRY, C, K, csv_bench, scenario  # noqa: E402

FIT = """[fit]
params = { k = { low = 50.0, high = 2000.0 }, c = { low = 0.01, high = 50.0, log = true } }
"""


def _bench(folder: Path) -> Path:
    csv_bench(folder, noise=0.05, seed=2)
    return scenario(folder, CSV_ENTRY, k=K / 2.5, c=C * 2.5, extra=FIT)


def test_fit_on_two_workers_prints_the_estimate(tmp_path):
    path = _bench(tmp_path)
    r = mjrig("fit", path, "--out", tmp_path / "FIT.parquet", "--workers", 2, cwd=tmp_path)
    assert r.rc == 0, r
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("fit: k = 4") and " N/m, 95 % interval " in last and "; c = " in last, last
    assert "N·s/m, 95 % interval" in last and "; rms error 5" in last and last.endswith(" m"), last
    meta = json.loads(pq.read_schema(tmp_path / "FIT.parquet").metadata[b"mjrig.fit"])
    low, high = meta["ci95"]["k"]
    assert f"k = {meta['estimate']['k']:.6g} N/m, 95 % interval {low:.6g} … {high:.6g};" in last, last
    assert meta["converged"] and abs(meta["estimate"]["k"] / K - 1) < 0.01
    assert (tmp_path / "FIT-best.toml").is_file()
    assert f"wrote the estimate as a scenario to {tmp_path / 'FIT-best.toml'}" in r.stderr


def test_a_validation_entry_is_on_the_last_line_and_in_the_report(tmp_path):
    """A second bench kept out of the fit (role = "validation"): its rms error at the estimate
    ends the last line, and the report lists it before and after, with its overlay."""
    path = _bench(tmp_path)
    (tmp_path / "check.csv").write_text((tmp_path / "bench.csv").read_text())
    check = CSV_ENTRY.replace('name = "bench"', 'name = "check"\nrole = "validation"').replace("bench.csv", "check.csv")
    path.write_text(path.read_text() + "\n" + check)
    r = mjrig("fit", path, "--out", tmp_path / "FIT.parquet", "--workers", 1, cwd=tmp_path)
    assert r.rc == 0, r
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("fit: k = 4") and "; validation rms error 5" in last and last.endswith(" m"), last
    rep = mjrig("report", tmp_path / "FIT.parquet", "-o", tmp_path / "fit.html", cwd=tmp_path)
    assert rep.rc == 0, rep
    page = unescape((tmp_path / "fit.html").read_text())
    assert "check (validation: not fitted)" in page and page.count("data:image/png;base64,") == 5


def test_a_start_position_and_a_clock_offset_on_the_last_line_and_in_the_report(tmp_path):
    """``initial.slide`` and ``offset.bench`` fitted beside k (the bench released at 20 mm, its
    clock 0.1 s late; the scenario said 15 mm and -0.08 s): the last line gives each in m and s,
    the report a tile and a row of each."""
    path = _bench(tmp_path)
    text = path.read_text().replace("slide = 0.02", "slide = 0.015").replace("offset = -0.1", "offset = -0.08")
    text = text.replace(
        "params = { k = { low = 50.0, high = 2000.0 }, c = { low = 0.01, high = 50.0, log = true } }",
        '[fit.params]\nk = { low = 50.0, high = 2000.0 }\n"initial.slide" = { low = 0.005, high = 0.04 }\n'
        '"offset.bench" = { low = -0.15, high = -0.05 }',
    ).replace("[fit]\n[fit.params]", "[fit.params]")
    path.write_text(text.replace(f"c = {{ value = {C * 2.5}", f"c = {{ value = {C}"))
    r = mjrig("fit", path, "--out", tmp_path / "FIT.parquet", "--workers", 1, cwd=tmp_path)
    assert r.rc == 0, r
    last = r.stdout.strip().splitlines()[-1]
    got = dict(part.split(" = ") for part in last.removeprefix("fit: ").split("; ")[:3])
    x0, x0_unit = got["initial.slide"].split(",")[0].split()
    offset, offset_unit = got["offset.bench"].split(",")[0].split()
    assert abs(float(x0) / 0.02 - 1) < 0.02 and abs(float(offset) + 0.1) < 1 / 250, last  # one sample at 250 Hz
    assert (x0_unit, offset_unit) == ("m", "s") and "; rms error 5" in last, last
    rep = mjrig("report", tmp_path / "FIT.parquet", "-o", tmp_path / "fit.html", cwd=tmp_path)
    assert rep.rc == 0, rep
    page = unescape((tmp_path / "fit.html").read_text())
    assert page.count("initial.slide") >= 2 and page.count("offset.bench") >= 2  # a tile and a row each


def test_a_killed_fit_resumes_from_what_it_evaluated(tmp_path):
    """SIGKILL after ten evaluations; the same command again replays them (evaluating only the
    rest) and ends on the estimate of a fit never killed."""
    whole = tmp_path / "whole"
    whole.mkdir()
    done = mjrig("fit", _bench(whole), "--out", whole / "FIT.parquet", "--workers", 1, cwd=whole)
    assert done.rc == 0, done
    killed = tmp_path / "killed"
    killed.mkdir()
    path = _bench(killed)
    log = killed / "FIT.parquet.parts" / "evals.jsonl"
    proc = mjrig_popen("fit", path, "--out", killed / "FIT.parquet", "--workers", 1)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not log.is_file() or len(log.read_text().splitlines()) < 10):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    kept = len(log.read_text().splitlines())
    assert kept >= 10 and not (killed / "FIT.parquet").exists()
    again = mjrig("fit", path, "--out", killed / "FIT.parquet", "--workers", 1, cwd=killed)
    assert again.rc == 0, again
    assert "from the earlier run" in again.stderr
    ours = json.loads(pq.read_schema(killed / "FIT.parquet").metadata[b"mjrig.fit"])
    theirs = json.loads(pq.read_schema(whole / "FIT.parquet").metadata[b"mjrig.fit"])
    assert ours["estimate"] == theirs["estimate"] and ours["stderr"] == theirs["stderr"]
    assert again.stdout.splitlines()[-1] == done.stdout.splitlines()[-1]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (("c = { low = 0.01", "cc = { low = 0.01"), "fit.params.cc: unknown param 'cc' (closest: c)"),
        (("k = { low = 50.0", "k = { low = 500.0"), "fit.params.k: the param's value 160 (the fit's start) is outside"),
    ],
)
def test_bad_fit_input_is_one_line(tmp_path, change, words):
    path = _bench(tmp_path)
    path.write_text(path.read_text().replace(*change))
    r = mjrig("fit", path, "--out", tmp_path / "FIT.parquet", cwd=tmp_path)
    assert r.rc == 2 and len(r.err_lines) == 1 and words in r.stderr, r


def test_the_report_of_a_fit_shows_the_estimate_and_both_overlays(tmp_path):
    path = _bench(tmp_path)
    assert mjrig("fit", path, "--out", tmp_path / "FIT.parquet", "--workers", 1, cwd=tmp_path).rc == 0
    r = mjrig("report", tmp_path / "FIT.parquet", "-o", tmp_path / "fit.html", cwd=tmp_path)
    assert r.rc == 0, r
    html = (tmp_path / "fit.html").read_text()
    meta = json.loads(pq.read_schema(tmp_path / "FIT.parquet").metadata[b"mjrig.fit"])
    assert "<h1>Fit: FIT.parquet</h1>" in html and ">identified<" in html
    assert f"{meta['estimate']['k']:.6g}" in html and f"{meta['stderr']['k']:.3g}" in html
    assert html.count("data:image/png;base64,") == 3  # the experiment, its residuals, the cost
    assert "from the start" in html and "at the estimate" in html


def test_a_fit_that_cannot_converge_exits_4_with_the_reason(tmp_path):
    """Every stiffness within the bounds makes this 1 kHz model blow up: the best point diverged."""
    path = _bench(tmp_path)
    text = path.read_text().replace("k = { value = 160.0", "k = { value = 5e9").replace("max = 5000.0", "max = 1e10")
    path.write_text(text.replace("k = { low = 50.0, high = 2000.0 }", "k = { low = 1e9, high = 1e10 }"))
    r = mjrig("fit", path, "--out", tmp_path / "FIT.parquet", "--workers", 1, cwd=tmp_path)
    assert r.rc == 4, r
    assert r.stdout.strip().splitlines()[-1] == "fit: did not converge (the best point diverged)", r
    assert (tmp_path / "FIT.parquet").is_file()


def test_a_fit_that_is_not_identified_exits_4_and_says_why(tmp_path):
    """The bench written in cm and declared mm: the fit ends, its files are written, and the last
    line says which estimate cannot be signed and why; the report's first tile says it too."""
    path = _bench(tmp_path)
    bench = tmp_path / "bench.csv"
    lines = bench.read_text().splitlines()
    bench.write_text(
        "\n".join([lines[0], *(f"{t},{float(x) / 10:.9f}" for t, x in (ln.split(",") for ln in lines[1:]))]) + "\n"
    )
    r = mjrig("fit", path, "--out", tmp_path / "FIT.parquet", "--workers", 1, cwd=tmp_path)
    assert r.rc == 4, r
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("fit: not identified (") and ("bound" in last or "spread" in last), last
    assert (tmp_path / "FIT.parquet").is_file() and (tmp_path / "FIT-best.toml").is_file()
    meta = json.loads(pq.read_schema(tmp_path / "FIT.parquet").metadata[b"mjrig.fit"])
    assert meta["identified"] is False and meta["converged"] is True and meta["reasons"]
    rep = mjrig("report", tmp_path / "FIT.parquet", "-o", tmp_path / "fit.html", cwd=tmp_path)
    assert rep.rc == 0, rep
    page = unescape((tmp_path / "fit.html").read_text())
    assert "not identified" in page and next(iter(meta["reasons"].values())) in page


@pytest.mark.slow
@pytest.mark.xdist_group("ray")  # one Ray head at a time: on one worker, in turn
def test_a_fit_on_a_real_local_ray_head_gives_the_local_estimate(tmp_path, monkeypatch):
    """Slow (up to a minute): starts a real Ray head (about 10 s, one at a time, see ``ray_head``)
    and fits on it: every evaluation a Ray task, the same estimate as on local workers."""
    from tests.sweep_util import ray_env, ray_head

    for k, v in ray_env().items():
        monkeypatch.setenv(k, v)
    path = _bench(tmp_path)
    local = mjrig("fit", path, "--out", tmp_path / "local.parquet", "--workers", 1, cwd=tmp_path)
    assert local.rc == 0, local
    with ray_head() as address:
        r = mjrig("fit", path, "--out", tmp_path / "FIT.parquet", "--ray", address, timeout=600, cwd=tmp_path)
    assert r.rc == 0, r
    assert r.stdout.splitlines()[-1] == local.stdout.splitlines()[-1]
