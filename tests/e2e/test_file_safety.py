"""Nothing is replaced that the command line did not name; SIGTERM keeps the recording; a long
run says how long it will take and reports progress when stderr is not a terminal (the lines'
timing is tested in tests/unit/test_progress_lines.py)."""

from __future__ import annotations

import shutil
import signal
import subprocess
import threading

import polars as pl

from tests.e2e.e2e_util import MODELS, mjrig, mjrig_popen


def test_two_runs_into_one_folder_keep_both_files(tmp_path):
    first = mjrig("run", "spring_mass", "--duration", "0.2", cwd=tmp_path)
    assert first.rc == 0, first
    second = mjrig("run", "spring_mass", "--duration", "0.5", cwd=tmp_path)
    assert second.rc == 0, second
    a, b = tmp_path / "runs" / "spring_mass.parquet", tmp_path / "runs" / "spring_mass-2.parquet"
    assert first.err_lines[-1] == f"wrote 200 rows to {a}"
    assert second.err_lines[-1] == f"wrote 500 rows to {b}"  # the line names the file really written
    assert pl.read_parquet(a).height == 200 and pl.read_parquet(b).height == 500


def test_a_scenarios_recording_and_video_paths_are_never_replaced(tmp_path):
    scenario = tmp_path / "rig.toml"
    shutil.copy(MODELS / "spring_mass.xml", tmp_path / "spring_mass.xml")
    scenario.write_text(
        'model = "spring_mass.xml"\n[recording]\npath = "out/rec.parquet"\n'
        '[video]\npath = "out/clip.mp4"\nwidth = 64\nheight = 48\n',
        encoding="utf-8",
    )
    runs = [mjrig("run", scenario, "--duration", "0.1", cwd=tmp_path) for _ in range(2)]
    assert all(r.rc == 0 for r in runs), runs
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["clip-2.mp4", "clip.mp4", "rec-2.parquet", "rec.parquet"]
    assert f"wrote 100 rows to {out / 'rec-2.parquet'}" in runs[1].err_lines
    assert any(line.endswith(f"frames to {out / 'clip-2.mp4'}") for line in runs[1].err_lines), runs[1]
    # a path given on the command line is the user's word: it is replaced
    again = mjrig("run", scenario, "--duration", "0.3", "--out", out / "rec.parquet", cwd=tmp_path)
    assert again.rc == 0, again
    assert pl.read_parquet(out / "rec.parquet").height == 300
    assert not (out / "rec-3.parquet").exists()


LONG = "5e7"
"""A run that would take hours or days (stopped by the test): one that cannot finish in 30 days is
refused before it starts."""


def _start(tmp_path, *args: object) -> subprocess.Popen:
    """``mjrig ARGS`` with stderr piped; killed after 90 s, so a line that never comes fails the
    test instead of hanging it."""
    proc = mjrig_popen(*args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(90, proc.kill)
    watchdog.daemon = True
    watchdog.start()
    return proc


def test_a_file_where_the_outputs_parts_go_is_named_as_in_the_way_and_kept(tmp_path):
    """``OUT.parquet.parts`` is where a recording's segments (a sweep's trials) go while it is
    written: a file there is in the way (exit 2, one line saying so), not a disk that cannot be
    written, and it is left as it was."""
    scenario = tmp_path / "rig.toml"
    shutil.copy(MODELS / "spring_mass.xml", tmp_path / "spring_mass.xml")
    scenario.write_text('model = "spring_mass.xml"\n[sweep]\ntrials = 2\n', encoding="utf-8")
    for command in ("run", "sweep"):
        out = tmp_path / f"{command}.parquet"
        blocker = tmp_path / f"{command}.parquet.parts"
        blocker.write_text("mine", encoding="utf-8")
        r = mjrig(command, scenario, "--duration", "0.1", "--out", out, cwd=tmp_path)
        assert r.rc == 2 and r.err_lines == [
            f"mjrig: --out {out}: {blocker} is a file, where mjrig keeps {out.name}'s parts while it is written: "
            "move or remove it"
        ], r
        assert blocker.read_text(encoding="utf-8") == "mine" and not out.exists()


def test_sigterm_keeps_a_readable_recording_and_exits_143(tmp_path):
    proc = _start(tmp_path, "run", "spring_mass", "--duration", LONG)
    first = proc.stderr.readline()  # said once the speed is measured: the run would take long
    assert first.startswith(f"mjrig: {float(LONG):g} s simulated will take about"), first
    second = proc.stderr.readline()  # stderr is a pipe: a progress line once 5 s have passed
    assert second.startswith("simulating: 0% (") and "elapsed, about" in second, second
    proc.send_signal(signal.SIGTERM)
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 143
    out = tmp_path / "runs" / "spring_mass.parquet"
    lines = rest.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mjrig: terminated (SIGTERM) at t = "), rest
    assert "Traceback" not in rest
    df = pl.read_parquet(out)
    assert f"kept {df.height} rows in {out}" in lines[0]
    assert df.height > 1000 and df["time"].is_sorted()
    assert not (tmp_path / "runs" / "spring_mass.parquet.parts").exists()


def test_sigint_keeps_the_recording_and_exits_130(tmp_path):
    proc = _start(tmp_path, "run", "spring_mass", "--duration", LONG)
    proc.stderr.readline()
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 130, rest
    assert rest.startswith("mjrig: interrupted at t = ")
    assert pl.read_parquet(tmp_path / "runs" / "spring_mass.parquet").height > 1000
