"""The desktop on big models: open time, panel frame time and memory at 10, 100 and 1,000 bodies.

Each size runs in a fresh process through the real app (``PanelApp`` on the session, the passive
viewer in its thread, a display needed: Xvfb): the generated model ``mjrig.models.scale``
(chains of hinged links that keep swinging) is opened, ``--signals`` signals are ticked in the
plots (joint angles first), and the run goes on for ``--seconds``. Printed per size, and as
ratios to the 10-body case:

- open: process start (imports included) to the first panel frame drawn with the model shown;
- panel frame p50/p95 (ms): a frame's work (the snapshot, every panel's update, the drawing),
  frames after the first two seconds of the run;
- RSS: the process's resident memory at the end (MB);
- real-time factor of the simulation over the run;
- the 3D view's CPU (cores): its render thread and the rasteriser threads it started, which run
  at a lower priority (``viewer_adapter.VIEW_NICE``) and draw with what the panel and the
  physics leave;
- key and click to frame (ms, median and worst): Space sent to the 3D view's window with xdotool,
  and a click on the run bar's Play/Pause button (pressed 50 ms), each from the key or the release
  until the first panel frame drawn that shows the run paused or running again; alternately,
  every 0.8 s after the first 3 s. The key is read by the 3D view's own loop, once per frame it
  draws: on a software renderer (llvmpipe) that frame, not the panel, sets the key's time.

Usage: DISPLAY=:99 python benchmarks/panel_scale.py [--sizes 10 100 1000] [--seconds 15] [--signals 50]
(needs xdotool)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import time, json, sys, threading, tempfile, pathlib
t0 = time.perf_counter()
bodies, seconds, n_signals = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
from mjrig.models.scale import many_bodies
from mjrig.desktop.app import PanelApp, SessionClient
from mjrig.session.kernel import Session
from mjrig.desktop.sim_thread import SimThread
from mjrig import commands as C
path = pathlib.Path(tempfile.mkdtemp()) / f"bodies_{bodies}.xml"
path.write_text(many_bodies(bodies))
s = Session(); s.open(path); s.run.play()
sim = SimThread(s); sim.start()
app = PanelApp(SessionClient(s), exit_after=seconds + 60)
out, times = {}, []
import os, subprocess
import dearpygui.dearpygui as dpg
answers = {"key": [], "click": []}
pending = []  # (kind, time sent, the state before)
def poke():
    # alternately Space to the 3D view and a click on Play/Pause; each answer waited for
    while "wall_t0" not in out:
        time.sleep(0.1)
    time.sleep(3.0)
    find = lambda name: subprocess.run(["xdotool", "search", "--name", name], capture_output=True, text=True).stdout.split()
    viewer, panel = find("^MuJoCo")[0], find("^mjrig$")[0]
    i = 0
    while "rtf" not in out:
        kind = ("key", "click")[i % 2]
        if kind == "key":
            target, cmd = viewer, ["xdotool", "key", "space"]
        else:
            x, y = out["button"]
            target, cmd = panel, ["xdotool", "mouseup", "1"]  # pressed 50 ms before, as a hand clicks
        subprocess.run(["xdotool", "windowactivate", "--sync", target], check=True)
        if kind == "click":  # the pointer comes to the button, and rests there a moment
            for dx in (8, 0):
                subprocess.run(["xdotool", "mousemove", "--window", panel, str(x + dx), str(y)], check=True)
                time.sleep(0.1)
        time.sleep(0.2)
        if kind == "click":  # a button acts on its release: the click is timed from there
            subprocess.run(["xdotool", "mousedown", "1"], check=True)
            time.sleep(0.05)
        pending.append((kind, time.perf_counter(), app.shown.state))
        subprocess.run(cmd, check=True)
        end = time.perf_counter() + 3
        while pending and time.perf_counter() < end:
            time.sleep(0.005)
        pending.clear()
        i += 1
        time.sleep(0.6)
threading.Thread(target=poke, daemon=True).start()
from mjrig.desktop.viewer_adapter import VIEW_NICE
def view_cpu():
    total = 0.0
    for tid in os.listdir("/proc/self/task"):
        try:
            if os.getpriority(os.PRIO_PROCESS, int(tid)) == VIEW_NICE:
                f = open(f"/proc/self/task/{tid}/stat").read().rsplit(")", 1)[1].split()
                total += (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            pass
    return total
def on_frame(a):
    snap = s.latest()
    if "open_s" not in out and snap.model.path.endswith(path.name) and a.frames > 1:
        out["open_s"] = time.perf_counter() - t0
        out["sim_t0"], out["wall_t0"], out["view0"] = s.data.time, time.perf_counter(), view_cpu()
        for name in sorted(snap.signals, key=lambda n: ":qpos" not in n)[:n_signals]:
            a.plot.set_checked(name, True)
    elif "open_s" in out:
        if "button" not in out:
            for item in dpg.get_all_items():
                if dpg.get_item_type(item).endswith("mvButton") and dpg.get_item_label(item) in ("Pause", "Play"):
                    (bx, by), (bw, bh) = dpg.get_item_rect_min(item), dpg.get_item_rect_size(item)
                    out["button"] = (int(bx + bw / 2), int(by + bh / 2))
                    break
        if pending and a.shown.state != pending[0][2]:
            kind, sent, _ = pending[0]
            answers[kind].append(time.perf_counter() - sent)
            pending.clear()
        run = time.perf_counter() - out["wall_t0"]
        if run > 2.0:
            times.append(a.frame_seconds)
        if run > seconds:
            out["rtf"] = (s.data.time - out["sim_t0"]) / run
            out["view_cores"] = (view_cpu() - out["view0"]) / run
            s.submit(C.Quit())
app.on_frame = on_frame
app.run(); s.submit(C.Quit()); sim.stop(); sim.join(10)
rss = int(next(l for l in open("/proc/self/status") if l.startswith("VmRSS")).split()[1]) / 1024
times.sort()
out.update(p50_ms=1e3 * times[len(times) // 2], p95_ms=1e3 * times[int(0.95 * (len(times) - 1))],
           frames=len(times), rss_mb=rss, signals=len(s.latest().signals), plotted=len(app.plot.checked()))
for kind, seen in answers.items():
    seen.sort()
    out[kind] = (1e3 * seen[len(seen) // 2], 1e3 * seen[-1], len(seen)) if seen else (float("nan"),) * 2 + (0,)
s.close()
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--signals", type=int, default=50, help="signals ticked in the plots")
    args = parser.parse_args()
    rows = []
    for n in args.sizes:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(n), str(args.seconds), str(args.signals)],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=ROOT,
        )
        if proc.returncode != 0:
            raise SystemExit(proc.stderr[-3000:])
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        rows.append((n, r))
        print(
            f"{n:5d} bodies ({r['signals']} signals, {r['plotted']} plotted): open {r['open_s']:.2f} s, panel frame p50 "
            f"{r['p50_ms']:.1f} ms p95 {r['p95_ms']:.1f} ms ({r['frames']} frames), RSS {r['rss_mb']:.0f} MB, "
            f"real-time factor {r['rtf']:.2f}, 3D view {r['view_cores']:.2f} cores; key to frame "
            f"{r['key'][0]:.0f} ms (worst {r['key'][1]:.0f}, {r['key'][2]} keys), click to frame "
            f"{r['click'][0]:.0f} ms (worst {r['click'][1]:.0f}, {r['click'][2]} clicks)",
            flush=True,
        )
    base = rows[0][1]
    print(f"\nratios to {rows[0][0]} bodies:")
    for n, r in rows:
        print(
            f"{n:5d} bodies: open x{r['open_s'] / base['open_s']:.2f}, p50 x{r['p50_ms'] / base['p50_ms']:.2f}, "
            f"p95 x{r['p95_ms'] / base['p95_ms']:.2f}, RSS x{r['rss_mb'] / base['rss_mb']:.2f}, "
            f"key x{r['key'][0] / base['key'][0]:.2f}, click x{r['click'][0] / base['click'][0]:.2f}"
        )


if __name__ == "__main__":
    main()
