"""Soak: a long `mjrig run` recording every signal group, measured from outside the process.

Runs ``python -m mjrig run`` (the code path users run) on the bundled ``robot_arm`` rig with every
signal group recorded (a copy of its scenario with ``[recording] signals`` = all groups), for
``--sim-seconds`` of simulated time (an hour by default) or ``--minutes`` of wall time (20 by
default), whichever comes first: at the wall limit the run is stopped with SIGINT, as Ctrl+C
does, and keeps every row so far. Every ``--every`` seconds it samples the child's resident
memory (VmRSS, /proc) and the disk the recording takes (its ``.parts`` folder and the file).

Printed: wall time, steps per second, rows kept against rows expected (every step from t = 0
to the last row's time) and time gaps, resident memory at the start / peak / end and its slope
(MB per hour of wall time and bytes per row, least squares over the second half of the samples),
the disk peak while running, the final file's size and row groups, and the exit code.

Usage: python benchmarks/soak.py [--sim-seconds 3600] [--minutes 20] [--every 2] [--scenario X.toml]
       [--out DIR] [--keep]
"""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mjrig.runtime.telemetry.signals import SIGNAL_GROUPS  # noqa: E402

MB = 1e6


def every_group_scenario(folder: Path) -> Path:
    """A copy of the bundled robot_arm scenario recording every signal group (model path absolute)."""
    text = (ROOT / "models" / "robot_arm.toml").read_text(encoding="utf-8")
    text = text.replace('model = "robot_arm.xml"', f'model = "{(ROOT / "models" / "robot_arm.xml").as_posix()}"')
    text = re.sub(
        r"(?m)^signals = \[\"joints\".*$", "signals = [" + ", ".join(f'"{g}"' for g in SIGNAL_GROUPS) + "]", text
    )
    out = folder / "robot_arm_every_group.toml"
    out.write_text(text, encoding="utf-8")
    return out


def rss_bytes(pid: int) -> int | None:
    """VmRSS of process ``pid`` in bytes, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def disk_bytes(out: Path) -> int:
    """Bytes the recording takes now: its parts folder (while running) and the file."""
    total = 0
    parts = out.with_name(out.name + ".parts")
    for p in [out, *(parts.iterdir() if parts.is_dir() else [])]:
        try:
            total += p.stat().st_size if p.is_file() else 0
        except OSError:
            pass
    return total


def slope_per_hour(t: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of ``y`` over ``t`` (seconds), per hour."""
    if len(t) < 3:
        return float("nan")
    return float(np.polyfit(t, y, 1)[0]) * 3600


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim-seconds", type=float, default=3600.0, help="simulated seconds (default 3600)")
    ap.add_argument("--minutes", type=float, default=20.0, help="wall-time limit in minutes (default 20)")
    ap.add_argument("--every", type=float, default=2.0, help="sampling period, s (default 2)")
    ap.add_argument("--scenario", default=None, help="scenario to run (default: robot_arm, every group)")
    ap.add_argument("--out", default=None, help="folder for the recording (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the recording (default: delete it)")
    args = ap.parse_args()

    folder = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="mjrig-soak-"))
    folder.mkdir(parents=True, exist_ok=True)
    scenario = Path(args.scenario) if args.scenario else every_group_scenario(folder)
    out = folder / "soak.parquet"
    out.unlink(missing_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "mjrig",
        "run",
        str(scenario),
        "--duration",
        f"{args.sim_seconds:g}",
        "--out",
        str(out),
    ]
    print(
        f"soak: {' '.join(cmd[1:])}; at most {args.minutes:g} min of wall time, sampled every {args.every:g} s",
        flush=True,
    )
    log = folder / "soak.stderr"
    t0 = time.perf_counter()
    with open(log, "w", encoding="utf-8") as err:
        child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL, cwd=folder)
    samples: list[tuple[float, int]] = []
    disk_peak, stopped, next_line = 0, False, 60.0
    while child.poll() is None:
        now = time.perf_counter() - t0
        rss = rss_bytes(child.pid)
        if rss is not None:
            samples.append((now, rss))
        disk_peak = max(disk_peak, disk_bytes(out))
        if now >= next_line:
            print(
                f"  {now / 60:5.1f} min  RSS {rss / MB if rss else 0:7.1f} MB  disk {disk_bytes(out) / MB:9.1f} MB",
                flush=True,
            )
            next_line += 60.0
        if not stopped and now >= args.minutes * 60:
            child.send_signal(signal.SIGINT)  # Ctrl+C: the rows so far are kept in a valid file
            stopped = True
        time.sleep(args.every)
    wall = time.perf_counter() - t0
    disk_peak = max(disk_peak, disk_bytes(out))
    rc = child.returncode
    lines = [ln for ln in log.read_text(encoding="utf-8").splitlines() if ln.strip() and "simulating" not in ln]

    size = out.stat().st_size if out.is_file() else 0
    rows = groups = gaps = expected = 0
    if out.is_file():
        meta = pq.ParquetFile(out).metadata
        rows, groups = meta.num_rows, meta.num_row_groups
        times = pl.read_parquet(out, columns=["time"])["time"].to_numpy()
        dt = float(np.median(np.diff(times[:1000]))) if len(times) > 1 else 0.0
        if dt > 0:
            gaps = int(np.count_nonzero(np.abs(np.diff(times) - dt) > 1e-6))
            expected = int(round(times[-1] / dt)) + 1
    t = np.array([s[0] for s in samples])
    y = np.array([s[1] for s in samples], dtype=float)
    half = t >= t[-1] / 2 if len(t) else t.astype(bool)
    slope = slope_per_hour(t[half], y[half])
    rate = rows / wall if wall > 0 else 0.0

    print()
    print(f"exit code        {rc}{' (stopped at the wall-time limit, SIGINT)' if stopped else ''}")
    print(f"last line        {lines[-1] if lines else '(none)'}")
    print(f"wall time        {wall:.1f} s ({rate:.0f} rows/s overall)")
    print(f"rows kept        {rows} of {expected} expected (every step to the last row's time), {gaps} time gaps")
    if len(y):
        print(
            f"RSS              start {y[0] / MB:.1f} MB, peak {y.max() / MB:.1f} MB, end {y[-1] / MB:.1f} MB "
            f"({len(y)} samples)"
        )
        per_row = slope / 3600 / rate if rate else float("nan")
        print(
            f"RSS slope        {slope / MB:+.1f} MB per hour of wall time over the second half "
            f"({per_row:+.3f} bytes per row at {rate:.0f} rows/s)"
        )
    print(
        f"disk             peak {disk_peak / MB:.1f} MB while running, final file {size / MB:.1f} MB "
        f"({groups} row groups, {size / max(rows, 1):.1f} bytes/row)"
    )
    if args.keep:
        print(f"recording kept: {out}")
    elif args.out:
        out.unlink(missing_ok=True)
    else:
        shutil.rmtree(folder, ignore_errors=True)
    ok = rc in (0, 130) and rows == expected and gaps == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
