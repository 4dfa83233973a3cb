"""`mjrig run` draws progress bars on a terminal, and nothing but its summary when piped."""
from __future__ import annotations

import os
import pty
import subprocess
import sys

from tests.e2e.e2e_util import MODELS, REPO, cli_env


def run_on_terminal(*args: object) -> tuple[int, str]:
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "mjrig", *map(str, args)], cwd=REPO, env=cli_env(),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return proc.wait(timeout=120), out.decode(errors="replace")


def test_bars_on_a_terminal(tmp_path):
    rc, err = run_on_terminal("run", MODELS / "clearance.toml", "--duration", "0.5",
                              "--out", tmp_path / "x.parquet", "--video", tmp_path / "v.mp4")
    assert rc == 0, err
    assert "simulating 100% [" in err
    assert "encoding video 100% [" in err and "15/15 frames" in err


def test_no_bar_when_piped(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mjrig", "run", str(MODELS / "spring_mass.toml"), "--duration", "0.2",
                           "--out", str(tmp_path / "x.parquet")], cwd=REPO, env=cli_env(), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0
    assert "simulating" not in proc.stderr and "%" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [f"wrote 200 rows to {tmp_path / 'x.parquet'}"]
