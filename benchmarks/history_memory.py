"""Timeline history over a one-hour run: its bytes stay within the configured bound, memory flat.

Runs the code path of the app's simulation thread with no window, as ``history_cost.py`` does: a
``Session`` on the humanoid rig of ``benchmarks/app_realtime.py`` (10 springs, a proximity, live
plot rows drained as the panel does), history on, speed max (0), ``session.advance(budget_s=0.014)``
then ``session.publish()`` in a loop, for ``--sim-seconds`` simulated seconds (default 3600).
``--limit SECONDS MB`` first submits ``SetHistoryLimit(SECONDS, MB)``, as the panel's fields do
(default: none, the app's bound of 60 simulated s or 256 MB, whichever is less).

Every ``--every`` simulated seconds (default 60) it samples the published snapshot's timeline
(``TimelineInfo``: kept rows, their bytes ``nbytes``, the bound ``max_seconds`` / ``max_megabytes``)
and the process's resident set (VmRSS). Prints the samples, the largest history in bytes against
the configured bound (MB = MiB, 2**20 bytes, as ``SetHistoryLimit`` counts them) and what the
ring reserves (``History.reserved_bytes``: its preallocated rows, committed as they fill), the
longest kept span against ``max_seconds``, and VmRSS at 10 / 50 / 100 % of the run.

    python benchmarks/history_memory.py [--sim-seconds 3600] [--every 60] [--limit 60 8]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app_realtime import scenario  # noqa: E402  (the same humanoid rig as the app benchmark)
from soak import proc_status_kib  # noqa: E402

from mjrig import commands as C  # noqa: E402
from mjrig.session.kernel import Session  # noqa: E402

MiB = 2**20


def load_note() -> str:
    with open("/proc/loadavg", encoding="ascii") as f:
        return "load average " + " ".join(f.read().split()[:3])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim-seconds", type=float, default=3600.0, help="simulated seconds to run (default 3600)")
    ap.add_argument("--every", type=float, default=60.0, help="simulated seconds between samples (default 60)")
    ap.add_argument(
        "--limit",
        type=float,
        nargs=2,
        metavar=("SECONDS", "MB"),
        default=None,
        help="SetHistoryLimit(SECONDS, MB) before the run (default: the app's bound)",
    )
    args = ap.parse_args()
    rss0 = proc_status_kib("VmRSS")
    session = Session()
    session.open(scenario(Path(tempfile.mkdtemp(prefix="mjrig-history-memory-"))))
    if args.limit is not None:
        session.submit(C.SetHistoryLimit(args.limit[0], args.limit[1]))
    session.submit(C.SetSpeed(0.0))
    session.submit(C.Play())
    session.process_commands()
    rss_open = proc_status_kib("VmRSS")
    print(
        f"history_memory: humanoid rig, {args.sim_seconds:g} simulated s at speed max, "
        f"{'SetHistoryLimit({:g}, {:g})'.format(*tuple(args.limit)) if args.limit else 'the default bound'}; "
        f"{load_note()}",
        flush=True,
    )
    print(
        f"{'sim s':>7} {'wall s':>7} {'rows':>7} {'span s':>7} {'history MiB':>11} {'bound':>13} {'VmRSS MiB':>9}",
        flush=True,
    )

    # sim s, wall s, rows, kept span (s, oldest to newest row), bytes, VmRSS KiB
    samples: list[tuple[float, float, int, float, int, int]] = []
    wall0 = time.perf_counter()
    next_at = args.every
    while True:
        session.advance(budget_s=0.014)
        snap = session.publish()
        session.drain_rows()  # the panel takes the plot rows
        if snap.state == C.RunState.ERROR:
            print(f"the run stopped: {snap.error}")
            return 1
        done = snap.time >= args.sim_seconds
        if snap.time >= next_at or done:
            tl, rss = snap.timeline, proc_status_kib("VmRSS")
            wall = time.perf_counter() - wall0
            ring = session.timeline.history
            span = ring.time(-1) - ring.time(0) if ring is not None and len(ring) else 0.0
            samples.append((snap.time, wall, tl.rows, span, tl.nbytes, rss))
            print(
                f"{snap.time:7.1f} {wall:7.1f} {tl.rows:7d} {span:7.3f} {tl.nbytes / MiB:11.2f} "
                f"{tl.max_seconds:5g} s/{tl.max_megabytes:4g} MB {rss / 1024:9.1f}",
                flush=True,
            )
            while next_at <= snap.time:
                next_at += args.every
        if done:
            break
    wall = time.perf_counter() - wall0
    h = session.timeline.history
    assert h is not None and session.model is not None
    tl = session.latest().timeline
    hwm = proc_status_kib("VmHWM")
    session.close()

    bound = int(tl.max_megabytes * MiB)
    seconds_rows = int(tl.max_seconds / session.model.opt.timestep) + 1
    biggest = max(s[4] for s in samples)
    longest = max(s[3] for s in samples)
    binding = "MB" if h.capacity < seconds_rows else "seconds"
    print()
    print(f"wall time        {wall:.1f} s ({samples[-1][0] / wall:.1f} simulated s per wall s); {load_note()}")
    print(
        f"row              {h.row_bytes} bytes (a state of {h.width} doubles, time first); ring of {h.capacity} rows "
        f"reserves {h.reserved_bytes / MiB:.2f} MiB; the {binding} bound binds "
        f"({tl.max_seconds:g} s = {seconds_rows} rows, {tl.max_megabytes:g} MB = {bound // h.row_bytes} rows)"
    )
    print(
        f"history bytes    max {biggest / MiB:.2f} MiB of the {tl.max_megabytes:g} MB bound "
        f"({biggest / bound:.3f}); {'within' if biggest <= bound else 'OVER'} the bound"
    )
    print(
        f"kept span        max {longest:.6f} s of {tl.max_seconds:g} s (oldest to newest kept row; the slider "
        f"reaches one step further, to the live instant); {'within' if longest <= tl.max_seconds else 'OVER'} "
        f"the bound"
    )
    n = len(samples)
    marks = {p: samples[max(0, min(n - 1, round(p / 100 * n) - 1))] for p in (10, 50, 100)}
    print(
        f"VmRSS            start {rss0 / 1024:.1f} MiB, rig open {rss_open / 1024:.1f} MiB; "
        + ", ".join(f"{p} % ({marks[p][0]:.0f} s) {marks[p][5] / 1024:.1f} MiB" for p in marks)
    )
    full = [s for s in samples if s[2] >= h.capacity - 1]  # the ring has wrapped (give or take the float bound)
    if full:
        after = [s[5] for s in full]
        print(
            f"VmRSS once full  from {full[0][0]:.0f} s: min {min(after) / 1024:.1f} / max {max(after) / 1024:.1f} "
            f"MiB over {len(after)} samples (growth {(max(after) - min(after)) / 1024:.1f} MiB); end - rig open "
            f"{(samples[-1][5] - rss_open) / 1024:.1f} MiB against the ring's {h.reserved_bytes / MiB:.1f} MiB; "
            f"VmHWM {hwm / 1024:.1f} MiB"
        )
    return 0 if biggest <= bound and longest <= tl.max_seconds else 1


if __name__ == "__main__":
    sys.exit(main())
