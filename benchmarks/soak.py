"""Soak: an hour of simulated time through a headless Session, recording, with live-plot draining.

Runs the Session the way the app does, minus the windows: a simulation thread steps "as fast as
possible" (speed 0; ``--speed 1`` paces to real time, as the app does) with recording on; another thread drains the live-plot rows every ~16 ms
into a bounded history of the last ``--plot-rows`` rows, like the plot panel. Prints progress
every 10 % of simulated time, then the wall time, rows written, file size, and memory: the peak
resident set (VmHWM) and the resident set (VmRSS) sampled over the run, which should stay flat
(the recorder streams to disk, the live rows are bounded).

Usage: python benchmarks/soak.py [--model models/spring_mass.toml] [--sim-seconds 3600]
       [--speed 0] [--out DIR] [--keep] [--plot-rows 20000]
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mjrig import commands as C  # noqa: E402
from mjrig.session.plot_rows import is_new_model  # noqa: E402
from mjrig.session.kernel import Session  # noqa: E402
from mjrig.desktop.sim_thread import FRAME_S  # noqa: E402

MiB = 2**20


def proc_status_kib(field: str) -> int:
    """A ``kB`` field of /proc/self/status (VmRSS, VmHWM, ...), in KiB."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


class LiveRows:
    """The last ``capacity`` telemetry rows, all columns (the plot panel's bounded history)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.columns: list[str] = []
        self.buf = np.empty((capacity, 0))
        self.count = 0   # rows stored (<= capacity)
        self.end = 0     # ring index after the newest row
        self.received = 0

    def append(self, columns: list[str], block: np.ndarray) -> None:
        if columns != self.columns:  # a column appeared: widen (old rows get NaN)
            old = {c: i for i, c in enumerate(self.columns)}
            grown = np.full((self.capacity, len(columns)), np.nan)
            for j, c in enumerate(columns):
                if c in old:
                    grown[:, j] = self.buf[:, old[c]]
            self.buf, self.columns = grown, list(columns)
        self.received += len(block)
        block = block[-self.capacity:]
        rows = (self.end + np.arange(len(block))) % self.capacity
        self.buf[rows] = block
        self.end = (self.end + len(block)) % self.capacity
        self.count = min(self.capacity, self.count + len(block))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=str(ROOT / "models" / "spring_mass.toml"),
                    help="scenario .toml or model .xml/.mjb (default: models/spring_mass.toml)")
    ap.add_argument("--sim-seconds", type=float, default=3600.0, help="simulated seconds to run (default 3600)")
    ap.add_argument("--out", default=None, help="folder for the recording (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the recording (default: delete it at the end)")
    ap.add_argument("--plot-rows", type=int, default=20000, help="live-plot rows kept (default 20000)")
    ap.add_argument("--speed", type=float, default=0.0,
                    help="real-time factor, as the app's speed (default 0: as fast as possible; 1: an hour of "
                         "simulated time takes an hour, as an app left running)")
    ap.add_argument("--drain-ms", type=float, default=16.0, help="live-plot drain period (default 16 ms)")
    args = ap.parse_args()

    folder = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="mjrig-soak-"))
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / "soak.parquet"
    rss0 = proc_status_kib("VmRSS")

    session = Session()
    session.open(args.model)
    assert session.model is not None
    dt = float(session.model.opt.timestep)
    total_steps = int(round(args.sim_seconds / dt))
    session.submit(C.SetSpeed(args.speed))
    session.submit(C.StartRecording(str(out)))
    print(f"soak: {Path(args.model).name}, {args.sim_seconds:g} s simulated = {total_steps} steps of "
          f"{dt * 1e3:g} ms, recording every step to {out}", flush=True)

    failures: list[BaseException] = []
    done = threading.Event()
    live = LiveRows(args.plot_rows)

    def simulate() -> None:
        """The simulation thread (no viewer): commands, steps, snapshot, until the last step."""
        try:
            while total_steps - session.steps > 5000:
                session.process_commands()
                session.advance(budget_s=0.8 * FRAME_S)
                session.publish()
            session.submit(C.StepOnce(total_steps - session.steps))   # land on the exact step
            session.process_commands()
            session.publish()
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)
        finally:
            done.set()

    def drain() -> None:
        """The panel side: take the live rows every ~16 ms and keep the last N."""
        try:
            while not done.is_set():
                for cols, block in session.drain_rows():
                    if not is_new_model(cols):
                        live.append(cols, block)
                time.sleep(args.drain_ms / 1e3)
            for cols, block in session.drain_rows():
                if not is_new_model(cols):
                    live.append(cols, block)
        except BaseException as exc:  # noqa: BLE001
            failures.append(exc)

    wall0 = time.perf_counter()
    threads = [threading.Thread(target=simulate, name="sim"), threading.Thread(target=drain, name="panel")]
    for t in threads:
        t.start()

    samples: list[tuple[float, float, int]] = []   # (fraction done, wall s, VmRSS KiB)
    marks: dict[int, tuple[float, int]] = {}       # percent -> (wall s, VmRSS KiB)
    next_pct = 10
    last = (0.0, 0)  # (wall s, steps) at the previous progress line
    cpu0 = time.process_time()
    while not done.wait(0.1):
        steps = session.steps
        frac = steps / total_steps
        wall, rss = time.perf_counter() - wall0, proc_status_kib("VmRSS")
        samples.append((frac, wall, rss))
        if next_pct < 100 and frac * 100 >= next_pct:
            snap = session.latest()
            marks[next_pct] = (wall, rss)
            rate = (steps - last[1]) / max(wall - last[0], 1e-9)
            print(f"  {next_pct:3d} %  sim {snap.time:8.1f} s  wall {wall:7.1f} s  {rate:7.0f} steps/s  "
                  f"rows {snap.recording_rows:>9d}  on disk {snap.recording_bytes / MiB:8.1f} MiB  "
                  f"RSS {rss / 1024:7.1f} MiB  cpu {time.process_time() - cpu0:6.1f} s", flush=True)
            last = (wall, steps)
            while next_pct < 100 and frac * 100 >= next_pct:
                next_pct += 10
    for t in threads:
        t.join(timeout=60)
    wall_run = time.perf_counter() - wall0
    rss_end, hwm_run = proc_status_kib("VmRSS"), proc_status_kib("VmHWM")
    marks[100] = (wall_run, rss_end)
    snap = session.publish()
    cpu_run = time.process_time() - cpu0
    rate = (session.steps - last[1]) / max(wall_run - last[0], 1e-9)
    print(f"  100 %  sim {snap.time:8.1f} s  wall {wall_run:7.1f} s  {rate:7.0f} steps/s  "
          f"rows {snap.recording_rows:>9d}  on disk {snap.recording_bytes / MiB:8.1f} MiB  "
          f"RSS {rss_end / 1024:7.1f} MiB  cpu {cpu_run:6.1f} s", flush=True)

    # Finish the recording (the segments are merged into one Parquet file) and shut down.
    t_close = time.perf_counter()
    session.submit(C.StopRecording())
    session.submit(C.Quit())
    session.process_commands()
    session.close()
    wall_close = time.perf_counter() - t_close
    hwm_all = proc_status_kib("VmHWM")

    errors = [text for level, text in session.publish().messages if level == "error"]
    size = out.stat().st_size if out.is_file() else 0
    rows = pl.scan_parquet(out).select(pl.len()).collect().item() if out.is_file() else 0
    times = pl.read_parquet(out, columns=["time"])["time"].to_numpy() if out.is_file() else np.zeros(0)
    gaps = int(np.count_nonzero(np.abs(np.diff(times) - dt) > 1e-9)) if len(times) > 1 else 0

    after_10 = [rss for frac, _, rss in samples if frac >= 0.10] or [rss_end]
    print()
    print(f"simulated        {snap.time:.3f} s in {session.steps} steps")
    print(f"wall time        {wall_run:.1f} s stepping ({session.steps / wall_run:.0f} steps/s, "
          f"real-time factor {snap.time / wall_run:.1f}; process CPU {cpu_run:.1f} s, all threads) "
          f"+ {wall_close:.1f} s to finalize the Parquet file")
    print(f"rows written     {rows} ({'= steps' if rows == session.steps else f'!= {session.steps} steps'}), "
          f"{len(pl.read_parquet_schema(out)) if out.is_file() else 0} columns, {gaps} time gaps")
    print(f"file size        {size / MiB:.1f} MiB ({size / max(rows, 1):.1f} bytes/row)")
    print(f"live plot rows   {live.received} received, last {live.count} kept")
    print(f"VmRSS            start {rss0 / 1024:.1f} MiB; " + ", ".join(
        f"{p} % {marks[p][1] / 1024:.1f} MiB" for p in (10, 50, 100) if p in marks))
    print(f"VmRSS after 10 % min {min(after_10) / 1024:.1f} / max {max(after_10) / 1024:.1f} MiB "
          f"over {len(after_10)} samples (growth {(max(after_10) - min(after_10)) / 1024:.1f} MiB)")
    print(f"VmHWM (peak)     {hwm_run / 1024:.1f} MiB while stepping, {hwm_all / 1024:.1f} MiB including "
          f"the final merge")
    if errors:
        print("errors:", *errors, sep="\n  ")
    if failures:
        print("FAILED:", *(repr(f) for f in failures), sep="\n  ")
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True) if not args.out else out.unlink(missing_ok=True)
    else:
        print(f"recording kept: {out}")
    ok = not failures and not errors and rows == session.steps and gaps == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
