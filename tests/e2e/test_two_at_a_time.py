"""Two at a time (CONTRACT 1): two processes never write the same file. Two runs started
together on one rig get two names, both complete; a sweep, a study or a recovery on an --out
that another process holds exits 2 naming that process; an output that is one of the command's
inputs is bad input and the input stays as it was."""

from __future__ import annotations

import os
import subprocess
import sys

import polars as pl
import pytest

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.files.out_lock import held, hold, work_dir
from tests.e2e.e2e_util import MODELS, cli_env, mjrig
from tests.sweep_util import write_scenario


def test_two_runs_started_together_get_two_complete_recordings(tmp_path):
    """Three pairs started at once (about 2 s a pair): each pair's two lines name two files, each
    holding its 1500 rows (the old way both took NAME.parquet and shared its segments)."""
    written = []
    for _ in range(3):
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "mjrig", "run", "spring_mass", "--duration", "1.5"],
                cwd=tmp_path,
                env=cli_env(),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        lines = []
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
            lines.append(err.strip().splitlines()[-1])
        paths = [ln.removeprefix("wrote 1500 rows to ") for ln in lines]
        assert all(ln.startswith("wrote 1500 rows to ") for ln in lines) and paths[0] != paths[1], lines
        written += paths
    for path in written:
        assert pl.read_parquet(path).height == 1500
    runs = tmp_path / "runs"
    assert sorted(p.name for p in runs.iterdir()) == sorted(os.path.basename(p) for p in written)  # no folder left


def test_a_held_out_is_refused_with_the_holders_name(tmp_path):
    """This process holds RESULTS.parquet: a sweep, a study and a recovery of it exit 2 with one
    line naming this process; once it lets go, the sweep runs."""
    scenario = write_scenario(
        tmp_path,
        '[[metrics]]\nname = "low"\nsignal = "Joints/slide_x:qpos"\nkind = "min"\n'
        "[sweep]\n[sweep.params]\nk = { values = [100.0, 400.0] }\n"
        '[optimize]\nminimize = "Metrics/low"\ntrials = 2\n'
        "[optimize.params]\nk = { low = 100.0, high = 400.0 }\n",
    )
    out = tmp_path / "RESULTS.parquet"
    held = hold(out, what="--out")
    try:
        for args in (
            ("sweep", scenario, "--out", out, "--workers", "1"),
            ("optimize", scenario, "--out", out, "--workers", "1"),
            ("recover", out),
        ):
            r = mjrig(*args, cwd=tmp_path)
            assert r.rc == 2 and len(r.err_lines) == 1, r
            assert f"{out} is being written by process {os.getpid()} (" in r.err_lines[0], r
        assert not out.exists()
    finally:
        held.release()
    assert not work_dir(out).exists()
    r = mjrig("sweep", scenario, "--out", out, "--workers", "1", cwd=tmp_path)
    assert r.rc == 0 and pl.read_parquet(out).height == 2, r


def test_an_export_report_or_plot_onto_a_held_file_is_refused_and_a_default_name_counts_on(tmp_path):
    """This process holds rec.csv, rec.html and fig.png as another export would while it writes
    them: ``export``, ``report`` and ``plot`` onto them exit 2 naming this process and leave them
    alone; without ``-o`` the export takes the next free name. Once let go, ``-o`` writes."""
    rec = tmp_path / "rec.parquet"
    assert mjrig("run", "spring_mass", "--duration", "0.2", "--out", rec, cwd=tmp_path).rc == 0
    csv, html, png = tmp_path / "rec.csv", tmp_path / "rec.html", tmp_path / "fig.png"
    holds = [hold(p, what="-o") for p in (csv, html, png)]
    try:
        for args, out in (
            (("export", rec, "--to", "csv", "-o", csv), csv),
            (("report", rec, "-o", html), html),
            (("plot", rec, "--signals", "Joints/*:qpos", "-o", png), png),
        ):
            r = mjrig(*args, cwd=tmp_path)
            assert r.rc == 2 and len(r.err_lines) == 1, r
            assert r.err_lines[0].startswith(f"mjrig: -o: {out} is being written by process {os.getpid()} ("), r
            assert not out.exists()
        r = mjrig("export", rec, "--to", "csv", cwd=tmp_path)
        assert r.rc == 0 and r.err_lines[-1] == f"wrote 200 rows of rec.parquet to {tmp_path / 'rec-2.csv'}", r
    finally:
        for h in holds:
            h.release()
    r = mjrig("export", rec, "--to", "csv", "-o", csv, cwd=tmp_path)
    assert r.rc == 0 and pl.read_csv(csv).height == 200 and not work_dir(csv).exists(), r


def test_holding_in_one_process_twice_is_refused_and_fresh_names_count_on(tmp_path):
    out = tmp_path / "rec.parquet"
    first = hold(out, what="--out", fresh=True)
    second = hold(out, what="--out", fresh=True)
    assert (first.path.name, second.path.name) == ("rec.parquet", "rec-2.parquet")
    assert held(out) and held(second.path) and not held(tmp_path / "rec-3.parquet")
    with pytest.raises(ConfigError, match=r"--out: .*rec\.parquet is being written by process \d+"):
        hold(out, what="--out")
    first.release()
    second.release()
    assert not held(out) and not any(tmp_path.iterdir())


def test_an_output_that_is_an_input_is_bad_input(tmp_path):
    rec = tmp_path / "rec.parquet"
    assert mjrig("run", "spring_mass", "--duration", "0.1", "--out", rec, cwd=tmp_path).rc == 0
    before = rec.read_bytes()
    r = mjrig("export", rec, "--to", "csv", "-o", rec, cwd=tmp_path)
    assert r.rc == 2 and len(r.err_lines) == 1 and f"-o {rec} is the recording exported ({rec})" in r.err_lines[0], r
    assert rec.read_bytes() == before
    scenario = tmp_path / "rig.toml"
    scenario.write_text(f'model = "{MODELS / "spring_mass.xml"}"\n', encoding="utf-8")
    text = scenario.read_text(encoding="utf-8")
    for flag, target, what in (
        ("--report", scenario, "is the scenario"),
        ("--metrics", rec, "is the --out file too"),
        ("--report", rec, "is the --out file too"),
    ):
        r = mjrig("run", scenario, "--duration", "0.1", "--out", rec, flag, target, cwd=tmp_path)
        assert r.rc == 2 and len(r.err_lines) == 1 and f"{flag} {target} {what}" in r.err_lines[0], r
    assert scenario.read_text(encoding="utf-8") == text and rec.read_bytes() == before
