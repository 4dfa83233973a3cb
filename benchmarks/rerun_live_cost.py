"""What *Stream to Rerun* costs the stepping: session stepping at speed "max" streaming and not.

Runs the code path of the app's simulation thread with no window: a ``Session`` on dm_control's
humanoid (the rig of ``benchmarks/app_realtime.py``: 10 ideal springs and a proximity, the live
plots fed at 200 samples per simulated second, every signal), speed 0 (as fast as possible),
``session.advance(budget_s=0.014)`` in a loop as the simulation thread calls it. Phases of
``--seconds`` wall seconds alternate streaming on / off (``--rounds`` times, the order turned each
round) so machine noise hits both alike. The stream goes to a Rerun receiver on this machine
(``rerun --save``: a viewer's server that writes what it gets instead of drawing it), as a viewer
on the same desk would take it. Figures: the median of the rounds' ratios of simulated seconds per
wall second, streaming / not, with their spread, and the rows sent and dropped.

    python benchmarks/rerun_live_cost.py [--seconds 2] [--rounds 7] [--speed 0|1]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app_realtime import scenario  # noqa: E402  (the same humanoid rig as the app benchmark)

from mjrig import commands as C  # noqa: E402
from mjrig.session.kernel import Session  # noqa: E402
from tests.rerun_util import rerun_saver  # noqa: E402


def phase(session: Session, seconds: float) -> tuple[float, float]:
    """(simulated seconds per wall second, this process's CPU seconds per simulated second) over
    ``seconds`` of the simulation thread's loop (at speed 1 it sleeps between frames, as the
    app's loop waits for the next one)."""
    session.publish()
    t0, w0, c0 = session.data.time, time.perf_counter(), time.process_time()
    while time.perf_counter() - w0 < seconds:
        if session.advance(budget_s=0.014) == 0:
            time.sleep(0.005)
        session.publish()  # as the loop does (about every frame)
        session.drain_rows()  # the panel takes the plot rows
    simulated = session.data.time - t0
    return simulated / (time.perf_counter() - w0), (time.process_time() - c0) / max(simulated, 1e-9)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=2.0, help="wall seconds per phase")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--speed", type=float, default=0.0, help="0: as fast as possible; 1: real time")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="mjrig-rerun-cost-"))
    session = Session()
    session.open(scenario(folder))
    session.handle(C.SetSpeed(args.speed))
    session.handle(C.Play())
    phase(session, 1.0)  # warm up
    ratios, cpu, sent, dropped = [], [], 0, 0
    with rerun_saver(folder / "received.rrd") as port:
        for r in range(args.rounds):
            rates, costs = {}, {}
            for on in (False, True) if r % 2 == 0 else (True, False):
                if on:
                    session.handle(C.StreamToRerun(address=f"127.0.0.1:{port}"))
                rates[on], costs[on] = phase(session, args.seconds)
                if on:
                    part = session.publish().part(C.RerunPart)
                    sent, dropped = sent + part.rows, dropped + part.dropped
                    session.handle(C.StreamToRerun(on=False))  # waits for the queue: outside the phase
            ratios.append(rates[True] / rates[False])
            cpu.append(costs[True] / costs[False])
            print(
                f"round {r + 1}: {rates[True]:7.2f} sim s / wall s streaming, {rates[False]:7.2f} not; "
                f"CPU s per sim s {costs[True]:.3f} streaming, {costs[False]:.3f} not",
                flush=True,
            )
    columns = len(session.plot_feed.kept.columns)
    session.close()
    print(
        f"humanoid, {columns} signals at 200 rows/s, speed {args.speed:g} (0: max): sim s per wall s streaming / not "
        f"= {statistics.median(ratios):.3f} (median of {len(ratios)} rounds; {min(ratios):.3f}-{max(ratios):.3f}); "
        f"CPU per sim s {statistics.median(cpu):.3f} ({min(cpu):.3f}-{max(cpu):.3f}); "
        f"{sent} rows sent while the phases ran ({dropped} dropped)"
    )


if __name__ == "__main__":
    main()
