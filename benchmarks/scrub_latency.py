"""Scrub latency: from the timeline slider moving to the new instant handed to the viewer.

Runs the app's simulation side for real (``SimThread`` with MuJoCo's passive viewer, needs a
display: ``DISPLAY`` if set, else a private ``Xvfb :98`` started and stopped here) on the humanoid
rig of ``benchmarks/app_realtime.py`` (10 springs, a proximity), plays it at speed max for
``--fill`` simulated seconds so the history fills, pauses, then submits ``--scrubs`` times a
``Scrub(t)`` through the panel's client (``SessionClient.submit``, what the timeline slider's
callback calls) to a random instant ``t`` of the kept history (a slider value between two kept
instants, as a drag gives). Measured: wall time (ms) from the submit to the end of the frame that
carried it out, i.e. after ``v.sync()`` handed the state to the viewer and the snapshot was
published; every such snapshot's timeline cursor is checked to be the expected kept instant.

Baseline in the same process, interleaved in random order with the scrubs: the same round trip
for ``SetSpeed`` to the current speed (changes nothing shown), so scrub / baseline is what the
scrub itself adds to the frame loop. The round trip splits into the wait for the next frame to
start (up to one ``FRAME_S`` of the loop's pacing, as the submit falls anywhere in a frame; slightly
negative when it lands while a frame waits for the viewer lock), then that frame taking the viewer
lock and running the queued commands up to the probed one, and the rest of the frame (draw,
sync, publish).

"Frame shown" is observed without changing the app: a ``Session`` subclass notes in which frame
``handle`` ran the probed command and a ``SimThread`` subclass time-stamps the end of ``_frame``.
Then, with no viewer, ``Session.handle(Scrub(t))`` alone is timed in µs (the restore: pause,
find the row, ``mj_setState`` + ``mj_forward``, the rig's own state), back to back and, as in the
frame loop, each after sleeping one frame period.

    python benchmarks/scrub_latency.py [--scrubs 200] [--fill 70] [--restores 2000]
"""

from __future__ import annotations

import argparse
import atexit
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app_realtime import scenario  # noqa: E402  (the humanoid rig of the app benchmark)

from mjrig import commands as C  # noqa: E402
from mjrig.desktop.panel_client import SessionClient  # noqa: E402
from mjrig.desktop.sim_thread import FRAME_S, SimThread  # noqa: E402
from mjrig.session.kernel import Session  # noqa: E402


@dataclass
class Probe:
    """One round trip: ``cmd`` submitted at ``submitted``; frame ``frame``, started at
    ``frame_start``, ran it (done at ``handled``); ``shown`` when that frame ended (sync done,
    snapshot published), whose snapshot had timeline cursor ``cursor`` (simulated s).
    Times: ``time.perf_counter()`` s."""

    cmd: C.Command
    submitted: float = 0.0
    frame: int = -1
    frame_start: float = 0.0
    handle_s: float = 0.0  # how long ``Session.handle`` took (s)
    handled: float = 0.0
    shown: float = 0.0
    cursor: float = float("nan")
    done: threading.Event = field(default_factory=threading.Event)


class TimedSession(Session):
    """A Session that notes when (and in which frame) it carried out the probed command.

    Threading: ``probe`` is set by the benchmark thread before it submits; ``handle`` runs on the
    simulation thread."""

    def __init__(self) -> None:
        super().__init__()
        self.probe: Probe | None = None
        self.frame_no = 0  # set by TimedSimThread at each frame's start...
        self.frame_start = 0.0  # ...and when (perf_counter s)

    def handle(self, cmd: C.Command) -> None:
        t0 = time.perf_counter()
        super().handle(cmd)
        p = self.probe
        if p is not None and cmd is p.cmd:
            p.handled, p.frame, p.frame_start = time.perf_counter(), self.frame_no, self.frame_start
            p.handle_s = p.handled - t0


class TimedSimThread(SimThread):
    """The app's SimThread; each frame's end is time-stamped for the probed command's frame."""

    session: TimedSession

    def _frame(self, v: Any) -> None:
        s = self.session
        s.frame_start = time.perf_counter()
        s.frame_no += 1
        super()._frame(v)
        p = s.probe
        if p is not None and p.frame == s.frame_no and not p.done.is_set():
            p.shown = time.perf_counter()
            p.cursor = s.latest().timeline.cursor
            p.done.set()


def ensure_display(display: str) -> None:
    """Use ``DISPLAY`` if set; else start ``Xvfb display``, stopped at exit. Call before the viewer
    is opened: exit handlers run last-in first-out, so GLFW's own (registered when the viewer first
    imports it) closes its connection before the screen goes."""
    if os.environ.get("DISPLAY"):
        return
    if shutil.which("Xvfb") is None:
        sys.exit("no DISPLAY and no Xvfb: set DISPLAY to an X screen")
    proc = subprocess.Popen(
        ["Xvfb", display, "-screen", "0", "1920x1080x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    sock = Path(f"/tmp/.X11-unix/X{display.lstrip(':')}")
    deadline = time.time() + 10
    while not sock.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    if proc.poll() is not None or not sock.exists():
        sys.exit(f"Xvfb {display} did not start")
    os.environ["DISPLAY"] = display
    atexit.register(_stop, proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.wait(10)


def round_trip(session: TimedSession, client: SessionClient, cmd: C.Command, *, timeout_s: float = 5.0) -> Probe:
    """Submit ``cmd`` as the panel does and wait for the frame that carried it out to end."""
    p = Probe(cmd)
    session.probe = p
    p.submitted = time.perf_counter()
    client.submit(cmd)
    if not p.done.wait(timeout_s):
        raise RuntimeError(f"{type(cmd).__name__} was not shown within {timeout_s} s")
    session.probe = None
    return p


def wait_for(predicate: Any, *, timeout_s: float, what: str) -> None:
    deadline = time.perf_counter() + timeout_s
    while not predicate():
        if time.perf_counter() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.01)


def ms_stats(values: list[float]) -> tuple[float, float, float]:
    """Median, 95th percentile and max of ``values`` (s), in ms."""
    a = np.asarray(values) * 1e3
    return float(np.median(a)), float(np.percentile(a, 95)), float(a.max())


def viewer_run(folder: Path, *, scrubs: int, fill_s: float, seed: int) -> tuple[dict[str, list[Probe]], int]:
    """The app's simulation side with its viewer: fill the history, then the interleaved round trips.
    Returns the probes of each kind and the number of kept instants scrubbed over."""
    session = TimedSession()
    session.open(scenario(folder))
    sim = TimedSimThread(session)
    client = SessionClient(session)
    sim.start()
    rng = random.Random(seed)
    out: dict[str, list[Probe]] = {"scrub": [], "baseline": []}
    try:
        wait_for(lambda: sim.frames >= 10, timeout_s=60, what="the viewer's first frames")
        client.submit(C.SetSpeed(0.0))  # speed max
        client.submit(C.Play())
        wait_for(lambda: session.latest().time >= fill_s, timeout_s=600, what=f"{fill_s} simulated s")
        client.submit(C.Pause())
        wait_for(lambda: session.latest().state == C.RunState.PAUSED, timeout_s=10, what="the pause")
        end = session.latest().timeline.end
        first = round_trip(session, client, C.Scrub(end))  # enters the timeline (keeps the live instant)
        assert first.cursor == end, (first.cursor, end)
        h = session.timeline.history
        assert h is not None
        times = h.times()  # paused: the ring does not change from here on
        dt = float(session.model.opt.timestep)  # type: ignore[union-attr]
        speed = session.latest().speed
        for _ in range(4):  # warm-up of both kinds
            round_trip(session, client, C.SetSpeed(speed))
            round_trip(session, client, C.Scrub(float(times[rng.randrange(len(times))])))
        for _ in range(scrubs):
            i = rng.randrange(len(times))
            target = float(times[i])
            slider = target + rng.uniform(0.0, 0.9) * dt  # between kept instants, as a drag gives
            kinds = ["scrub", "baseline"]
            rng.shuffle(kinds)
            for kind in kinds:
                time.sleep(rng.uniform(0.0, 2 * FRAME_S))  # land anywhere in the frame loop's cycle
                if kind == "scrub":
                    p = round_trip(session, client, C.Scrub(slider))
                    if p.cursor != target:
                        raise RuntimeError(f"Scrub({slider}) showed {p.cursor}, expected {target}")
                else:
                    p = round_trip(session, client, C.SetSpeed(speed))
                out[kind].append(p)
    finally:
        client.submit(C.Quit())
        sim.stop()
        sim.join(10)
        session.close()
    if sim.failure is not None:
        raise RuntimeError(f"simulation thread failed: {sim.failure!r}")
    return out, len(times)


def restore_cost(folder: Path, *, fill_s: float, n: int, seed: int) -> dict[str, list[float]]:
    """``Session.handle`` of ``Scrub(t)`` (random kept t) and of the no-op ``SetSpeed``, no viewer,
    and ``publish()`` (s each). "hot": back to back; "woken": each after sleeping one ``FRAME_S``,
    as the frame loop's commands run (a thread woken from sleep runs its first ~0.5 ms much slower
    here: caches, and the virtual CPU waking up)."""
    session = Session()
    session.open(scenario(folder))
    session.handle(C.SetSpeed(0.0))
    session.handle(C.Play())
    while session.data.time < fill_s:  # type: ignore[union-attr]
        session.advance(budget_s=0.014)
        session.publish()
        session.drain_rows()
    session.handle(C.Pause())
    session.advance()
    session.handle(C.Scrub(session.data.time))  # type: ignore[union-attr]
    h = session.timeline.history
    assert h is not None
    times = h.times()
    rng = random.Random(seed)
    noop = C.SetSpeed(session.run.speed)
    out: dict[str, list[float]] = {}
    perf = time.perf_counter
    for how, count, sleep_s in (("hot", n, 0.0), ("woken", max(1, n // 10), FRAME_S)):
        scrub, base, pub = (out.setdefault(f"{kind} {how}", []) for kind in ("scrub", "baseline", "publish"))
        for k in range(count + 20):  # the first 20: warm-up
            for cmd, into in ((C.Scrub(float(times[rng.randrange(len(times))])), scrub), (noop, base)):
                if sleep_s:
                    time.sleep(sleep_s)
                t0 = perf()
                session.handle(cmd)
                if k >= 20:
                    into.append(perf() - t0)
        for k in range(count + 20):  # apart: building a snapshot would evict the restore's data from cache
            if sleep_s:
                time.sleep(sleep_s)
            t0 = perf()
            session.publish()
            if k >= 20:
                pub.append(perf() - t0)
    session.close()
    return out


def load_note() -> str:
    with open("/proc/loadavg", encoding="ascii") as f:
        return "load average " + " ".join(f.read().split()[:3])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scrubs", type=int, default=200, help="scrubs (and as many baseline commands)")
    ap.add_argument(
        "--fill",
        type=float,
        default=70.0,
        help="simulated seconds played before scrubbing (default 70: the default 60 s ring wraps)",
    )
    ap.add_argument("--restores", type=int, default=2000, help="session-level restores timed (no viewer)")
    ap.add_argument("--display", default=":98", help="Xvfb screen to start when DISPLAY is not set")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="mjrig-scrub-latency-"))
    print(f"before: {load_note()}", flush=True)
    ensure_display(args.display)
    trips, rows = viewer_run(folder, scrubs=args.scrubs, fill_s=args.fill, seed=args.seed)
    print(f"after the viewer run: {load_note()}", flush=True)
    print(
        f"humanoid rig, {args.fill:g} simulated s at speed max, then {args.scrubs} scrubs over {rows} kept "
        f"instants (DISPLAY={os.environ.get('DISPLAY')}, frame loop FRAME_S = {FRAME_S * 1e3:.1f} ms)"
    )
    print(f"{'submit -> shown (ms)':<34} {'median':>7} {'p95':>7} {'max':>7}")
    med: dict[str, tuple[float, float, float]] = {}
    rest_med: dict[str, tuple[float, float, float]] = {}
    for kind, label in (("scrub", "Scrub(t)"), ("baseline", "SetSpeed(same) (baseline)")):
        ps = trips[kind]
        total = ms_stats([p.shown - p.submitted for p in ps])
        wait = ms_stats([p.frame_start - p.submitted for p in ps])
        run = ms_stats([p.handled - p.frame_start for p in ps])
        cmd = ms_stats([p.handle_s for p in ps])
        rest = ms_stats([p.shown - p.handled for p in ps])
        med[kind], rest_med[kind] = total, rest
        print(f"{label + ': round trip':<34} {total[0]:7.2f} {total[1]:7.2f} {total[2]:7.2f}")
        print(f"{'  wait for the next frame to start':<34} {wait[0]:7.2f} {wait[1]:7.2f} {wait[2]:7.2f}")
        print(f"{'  then viewer lock + the command':<34} {run[0]:7.2f} {run[1]:7.2f} {run[2]:7.2f}")
        print(f"{'    of which the command (handle)':<34} {cmd[0]:7.2f} {cmd[1]:7.2f} {cmd[2]:7.2f}")
        print(f"{'  then the rest (draw, sync, pub)':<34} {rest[0]:7.2f} {rest[1]:7.2f} {rest[2]:7.2f}")
    within = sum(p.shown - p.submitted <= 0.033 for p in trips["scrub"])
    print(
        f"scrub / baseline: median {med['scrub'][0] / med['baseline'][0]:.3f}, "
        f"p95 {med['scrub'][1] / med['baseline'][1]:.3f}, max {med['scrub'][2] / med['baseline'][2]:.3f}; "
        f"scrubs shown within 33 ms: {within}/{len(trips['scrub'])}"
    )
    print(
        f"rest of the frame, scrub / baseline: median {rest_med['scrub'][0] / rest_med['baseline'][0]:.3f} "
        f"({rest_med['scrub'][0] - rest_med['baseline'][0]:+.2f} ms)"
    )
    cost = restore_cost(folder, fill_s=args.fill, n=args.restores, seed=args.seed)
    shutil.rmtree(folder, ignore_errors=True)
    print(
        f"session-level, no viewer (µs; hot: {args.restores} back to back, woken: {max(1, args.restores // 10)} "
        f"each after a {FRAME_S * 1e3:.1f} ms sleep)        median     p95     max"
    )
    for how in ("hot", "woken"):
        for kind, label in (
            ("scrub", "handle(Scrub(t))"),
            ("baseline", "handle(SetSpeed(same))"),
            ("publish", "publish() (every frame)"),
        ):
            a = np.asarray(cost[f"{kind} {how}"]) * 1e6
            print(f"  {how + ': ' + label:<33} {np.median(a):8.1f} {np.percentile(a, 95):7.1f} {a.max():7.1f}")
    print(
        f"restore / frame period: {statistics.median(cost['scrub hot']) / FRAME_S:.4f} hot, "
        f"{statistics.median(cost['scrub woken']) / FRAME_S:.4f} woken"
    )
    print(f"end: {load_note()}")


if __name__ == "__main__":
    main()
