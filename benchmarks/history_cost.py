"""What keeping the timeline's history costs: session stepping at speed "max" with and without it.

Runs the code path of the app's simulation thread with no window: a ``Session`` on dm_control's
humanoid (the rig of ``benchmarks/app_realtime.py``: 10 ideal springs and a proximity, live plots
fed at 200 samples per simulated second; ``--record`` also records every signal group every step),
speed 0 (as fast as possible), ``session.advance(budget_s=0.014)`` in a loop as the simulation
thread calls it. Phases of ``--seconds`` wall seconds alternate history on / off (``--rounds``
times, in alternating order), so machine noise hits both alike; the figures are the best
simulated-seconds-per-wall-second with history over the best without, and the median of the
rounds' ratios. With history on, the ring keeps every step (the default bound:
60 simulated seconds or 256 MB, whichever is less); the phases are long enough for it to wrap.

    python benchmarks/history_cost.py [--seconds 1] [--rounds 12] [--record]
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


def phase(session: Session, seconds: float) -> float:
    """Simulated seconds per wall second over ``seconds`` of the simulation thread's loop."""
    session.publish()
    t0, w0 = session.data.time, time.perf_counter()
    while time.perf_counter() - w0 < seconds:
        session.advance(budget_s=0.014)
        session.publish()  # as the loop does (about every frame)
        session.drain_rows()  # the panel takes the plot rows
    return (session.data.time - t0) / (time.perf_counter() - w0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=1.0, help="wall seconds per phase")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--record", action="store_true", help="also record every signal every step")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="mjrig-history-cost-"))
    session = Session()
    session.open(scenario(folder))
    session.handle(C.SetSpeed(0.0))
    if args.record:
        session.handle(C.StartRecording(str(folder / "rec.parquet")))
    session.handle(C.Play())
    phase(session, 1.0)  # warm up
    best = {True: 0.0, False: 0.0}
    ratios = []
    for r in range(args.rounds):
        rates = {}
        for on in (False, True) if r % 2 == 0 else (True, False):
            session.timeline.enabled = on
            rates[on] = phase(session, args.seconds)
            best[on] = max(best[on], rates[on])
        ratios.append(rates[True] / rates[False])
        print(
            f"round {r + 1:2d}: {rates[True]:7.2f} sim s / wall s with history, {rates[False]:7.2f} without", flush=True
        )
    h = session.timeline.history
    session.close()
    assert h is not None
    print(
        f"history: {len(h)} rows ({h.capacity} at most), {h.time(-1) - h.time(0):.1f} s simulated, "
        f"{h.nbytes / 2**20:.1f} MiB (bound {h.max_seconds:g} s / {h.max_bytes / 2**20:g} MiB)"
    )
    what = f"humanoid, speed max{', recording' if args.record else ''}"
    print(
        f"{what}: with history / without = {best[True] / best[False]:.3f} (best of each), "
        f"{statistics.median(ratios):.3f} (median of rounds)"
    )


if __name__ == "__main__":
    main()
