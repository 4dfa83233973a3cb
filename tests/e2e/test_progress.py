"""`mjrig run` draws progress bars on a terminal, and nothing but its summary when piped."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.e2e.e2e_util import MODELS, REPO, cli_env, on_terminal


def run_on_terminal(*args: object, columns: int = 0) -> tuple[int, str]:
    """Run ``mjrig ARGS`` from the repository with stderr on a pseudo-terminal of ``columns``
    (0: size unset, see ``on_terminal``)."""
    return on_terminal("-m", "mjrig", *args, cwd=REPO, columns=columns)


BLOCKS = "[█▏▎▍▌▋▊▉#0-9 ]"  # tqdm's unicode bar, or its ASCII one on a non-UTF-8 terminal


def screen_lines(err: str) -> list[str]:
    """What stays on the terminal: each line as its last carriage-return redraw left it."""
    return [line.rsplit("\r", 1)[-1] for line in err.replace("\r\n", "\n").split("\n") if line.strip("\r")]


def test_bars_on_a_terminal_of_unknown_size(tmp_path):
    rc, err = run_on_terminal(
        "run",
        MODELS / "clearance.toml",
        "--duration",
        "0.5",
        "--out",
        tmp_path / "x.parquet",
        "--video",
        tmp_path / "v.mp4",
    )
    assert rc == 0, err
    lines = screen_lines(err)
    sim = re.fullmatch(r"simulating 100%\|([█#]+)\| 0\.50/0\.50 s simulated \[\d\d:\d\d, ETA \d\d:\d\d\]", lines[0])
    assert sim and len(sim.group(1)) >= 10, lines  # a full, visible bar; sim seconds done/total
    assert re.fullmatch(r"encoding video 100%\|[█#]+\| 15/15 frames \[\d\d:\d\d, ETA \d\d:\d\d\]", lines[1]), lines
    assert lines[2:] == [f"wrote 250 rows to {tmp_path / 'x.parquet'}", f"wrote 15 frames to {tmp_path / 'v.mp4'}"]
    # the bar was drawn while it moved, not only at the end
    partial = re.findall(rf"simulating +(\d+)%\|{BLOCKS}*\| (\d\.\d\d)/0\.50 s simulated \[[^]]*ETA", err)
    assert any(0 < int(pct) < 100 for pct, _ in partial), err
    assert all(len(line) <= 80 for line in lines[:2]), lines


def test_bar_fits_the_terminal_width(tmp_path):
    rc, err = run_on_terminal(
        "run", MODELS / "spring_mass.toml", "--duration", "2", "--out", tmp_path / "x.parquet", columns=100
    )
    assert rc == 0, err
    first = screen_lines(err)[0]
    assert re.match(r"simulating 100%\|[█#]", first) and "2.00/2.00 s simulated" in first, first
    assert 90 <= len(first) <= 100, first


def test_no_bar_when_piped(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mjrig",
            "run",
            str(MODELS / "spring_mass.toml"),
            "--duration",
            "0.2",
            "--out",
            str(tmp_path / "x.parquet"),
        ],
        cwd=REPO,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0
    assert "simulating" not in proc.stderr and "%" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [f"wrote 200 rows to {tmp_path / 'x.parquet'}"]
