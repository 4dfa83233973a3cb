"""Cold start to the first drawn viewer frame, and the time to switch models (needs a display).

Measured in a fresh process per run (imports included, interpreter start excluded), three runs,
on the default bundled rig, then switching to dm_control's humanoid and back.
Usage: DISPLAY=:99 python benchmarks/app_startup.py
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import time, json, sys, threading
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
from mjrig.scenario.bundled import default_model
from mjrig.desktop.app import PanelApp, SessionClient
from mjrig.session.kernel import Session
from mjrig.desktop.sim_thread import SimThread
from mjrig import commands as C
import dm_control, pathlib
humanoid = str(pathlib.Path(dm_control.__file__).parent / "suite" / "humanoid.xml")
s = Session(); s.open(default_model().scenario)
sim = SimThread(s); sim.start()
app = PanelApp(SessionClient(s), exit_after=60)
out = {}
def script():
    while sim.frames < 1: time.sleep(0.001)
    out["first_frame_s"] = time.perf_counter() - t0
    while app.frames < 1: time.sleep(0.001)
    out["first_panel_frame_s"] = time.perf_counter() - t0
    switches = []
    for path in (humanoid, str(default_model().scenario), humanoid):
        f0 = sim.frames
        t = time.perf_counter()
        s.submit(C.OpenModel(path))
        while not (s.latest().model.path.endswith(pathlib.Path(path).stem + ".xml") and sim.frames > f0 + 1):
            time.sleep(0.001)
        switches.append(time.perf_counter() - t)
    out["switch_s"] = switches
    s.submit(C.Quit())
threading.Thread(target=script, daemon=True).start()
app.run(); s.submit(C.Quit()); sim.stop(); sim.join(10); s.close()
print(json.dumps(out))
"""


def main() -> None:
    runs = []
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", CHILD, str(ROOT)], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise SystemExit(proc.stderr)
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    for i, r in enumerate(runs):
        print(
            f"run {i}: first viewer frame {r['first_frame_s']:.2f} s, first panel frame "
            f"{r['first_panel_frame_s']:.2f} s, model switches " + ", ".join(f"{x:.2f} s" for x in r["switch_s"])
        )
    print(
        f"cold start to first drawn frame (median): {sorted(r['first_frame_s'] for r in runs)[1]:.2f} s (target < 2 s)"
    )
    worst = max(x for r in runs for x in r["switch_s"])
    print(f"model switch (worst of {3 * len(runs)}): {worst:.2f} s (target < 1 s)")


if __name__ == "__main__":
    main()
