"""A big recording in the app: how long Stop takes to give a finished file, and the speed its replay plays at.

Each run is a fresh process running the real app (``PanelApp`` on the session, the passive viewer
in its thread; a display is needed: Xvfb) on the generated model ``mjrig.models.scale`` of
``--bodies`` bodies (chains of hinged links that keep swinging). It records every step, all signal
groups, for ``--record`` simulated seconds, then Stop; measured:

- save: wall seconds from Stop to the file existing with the panel's "recording stopped" line (the
  largest "saving" progress seen on the way is printed too);
- replay: the recording opened in the same app and played at 1x for ``--replay`` wall seconds;
  its speed is simulated seconds per wall second (1.00x: as recorded), what the run bar says, and
  the app's CPU (cores) meanwhile.

The baseline is the old way: it replays one timestep a step (``ReplaySource.leap`` off) and
records in row groups of at most 32 MiB (``_parquet_pace.FLOOR_BYTES``; 419 rows of 1,000 bodies);
runs alternate baseline and current, ``--pairs`` pairs, and the medians and the median ratios are
printed.

Usage: DISPLAY=:99 python benchmarks/record_replay.py [--bodies 1000] [--record 30] [--replay 10] [--pairs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, pathlib, sys, tempfile, time
bodies, record_s, replay_s, baseline = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"
from mjrig import commands as C
from mjrig.desktop.app import PanelApp, SessionClient
from mjrig.desktop.sim_thread import SimThread
from mjrig.models.scale import many_bodies
from mjrig.panel_state import job_text
from mjrig.session.kernel import Session
from mjrig.session.replay_mode import ReplaySource
if baseline:
    ReplaySource.leap = lambda self, target: False  # the old way: one timestep a step
    from mjrig.runtime.files import _parquet_pace
    _parquet_pace.FLOOR_BYTES = 32 * 2**20  # the old row groups: 419 rows of 1,000 bodies
work = pathlib.Path(tempfile.mkdtemp())
model, rec = work / f"bodies_{bodies}.xml", work / "big.parquet"
model.write_text(many_bodies(bodies))
s = Session(); s.open(model); s.run.play()
sim = SimThread(s); sim.start()
app = PanelApp(SessionClient(s), exit_after=record_s * 20 + replay_s + 300)
out = {"saving_max": ""}
def said(snap, text):
    return any(text in line for _, line in snap.messages)
def on_frame(a):
    snap, now = s.latest(), time.perf_counter()
    phase = out.get("phase")
    if phase is None and snap.model.path.endswith(model.name) and a.frames > 1:
        s.submit(C.StartRecording(str(rec)))
        out["phase"], out["t_rec0"] = "recording", now
    elif phase == "recording" and snap.time >= record_s:
        s.submit(C.StopRecording())
        out["phase"], out["t_stop"] = "saving", now
        out["recorded_wall_s"] = now - out["t_rec0"]
    elif phase == "saving":
        if snap.outputs.saving:
            out["saving_max"] = job_text(snap.outputs.saving)
        if said(snap, "recording stopped:"):
            out["save_s"] = now - out["t_stop"]
            out["file_mb"] = rec.stat().st_size / 1e6
            out["phase"] = "opening"
            s.submit(C.OpenModel(str(rec)))
    elif phase == "opening" and snap.timeline.replay and snap.state == C.RunState.RUNNING:
        out["phase"], out["t_play"], out["sim0"], out["cpu0"] = "replaying", now, snap.time, time.process_time()
    elif phase == "replaying" and now - out["t_play"] > 2.0 and "bar" not in out:
        out["bar"] = f"{snap.realtime_factor:.2f}x"
    elif phase == "replaying" and (now - out["t_play"] >= replay_s or snap.state != C.RunState.RUNNING):
        out["replay_x"] = (snap.time - out["sim0"]) / (now - out["t_play"])
        out["replay_cores"] = (time.process_time() - out["cpu0"]) / (now - out["t_play"])
        out["phase"] = "done"
        s.submit(C.Quit())
app.on_frame = on_frame
app.run(); s.submit(C.Quit()); sim.stop(); sim.join(30)
s.close()
print(json.dumps(out))
"""


def run(*, bodies: int, record: float, replay: float, baseline: bool) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(bodies), str(record), str(replay), "1" if baseline else "0"],
        capture_output=True,
        text=True,
        timeout=3600,
        cwd=ROOT,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    if "replay_x" not in r:
        raise SystemExit(f"the run did not finish: {r}")
    return r


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, default=1000)
    parser.add_argument("--record", type=float, default=30.0, help="simulated seconds recorded")
    parser.add_argument("--replay", type=float, default=10.0, help="wall seconds of replay measured")
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    got: dict[bool, list[dict]] = {True: [], False: []}
    for i in range(args.pairs):
        for baseline in (True, False):
            r = run(bodies=args.bodies, record=args.record, replay=args.replay, baseline=baseline)
            got[baseline].append(r)
            print(
                f"pair {i + 1} {'baseline' if baseline else 'current '}: recorded {args.record:.0f} s in "
                f"{r['recorded_wall_s']:.1f} s wall, {r['file_mb']:.0f} MB; saved {r['save_s']:.2f} s after Stop "
                f"(seen: {r['saving_max'] or 'no saving line'}); replay {r['replay_x']:.2f}x (run bar {r['bar']}, the app's CPU {r['replay_cores']:.2f} cores)",
                flush=True,
            )
    ratios = [c["replay_x"] / b["replay_x"] for b, c in zip(got[True], got[False], strict=True)]
    cpu = [c["replay_cores"] / b["replay_cores"] for b, c in zip(got[True], got[False], strict=True)]
    saves = [c["save_s"] / b["save_s"] for b, c in zip(got[True], got[False], strict=True)]
    cur = got[False]
    print(
        f"\ncurrent: replay median {statistics.median(r['replay_x'] for r in cur):.2f}x, save after Stop median "
        f"{statistics.median(r['save_s'] for r in cur):.2f} s (max {max(r['save_s'] for r in cur):.2f} s), baseline "
        f"{statistics.median(r['save_s'] for r in got[True]):.2f} s (max {max(r['save_s'] for r in got[True]):.2f} s), "
        f"ratio current/baseline median {statistics.median(saves):.2f}; "
        f"baseline replay median {statistics.median(r['replay_x'] for r in got[True]):.2f}x; "
        f"replay speed ratio current/baseline median {statistics.median(ratios):.2f}; the app's CPU while "
        f"replaying, ratio current/baseline median {statistics.median(cpu):.2f}"
    )


if __name__ == "__main__":
    main()
