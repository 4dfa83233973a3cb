"""Cost of recording video: steps/s of a headless run with and without a video, side by side.

Runs a bundled rig (default: clearance, 640x480 at 30 frames per simulated second) through
RuntimeManager twice in one process and prints the ratio. Rendering is offscreen (EGL with no
display), on the stepping thread; encoding runs on a writer thread.
Usage: python benchmarks/video_cost.py [--rig clearance] [--seconds 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

if not os.environ.get("DISPLAY"):
    os.environ.setdefault("MUJOCO_GL", "egl")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mjrig.headless import prepare  # noqa: E402
from mjrig.runtime.drawing.video import VideoRecorder  # noqa: E402
from mjrig.scenario.parse import load_scenario  # noqa: E402

MODELS = Path(__file__).resolve().parents[1] / "models"


def steps_per_second(rig: str, seconds: float, video: Path | None) -> tuple[float, int]:
    sc = load_scenario(MODELS / f"{rig}.toml")
    sc.video = None
    setup = prepare(sc, record=False)
    rm, m, d = setup.runtime, setup.model, setup.data
    rec = None
    if video is not None:
        rec = VideoRecorder(path=video, fps=30, width=640, height=480, show_loads=True, show_proximities=True)
        rm.add_video(rec)
    n = int(seconds / m.opt.timestep)
    t = time.perf_counter()
    for _ in range(n):
        rm.step(m, d)
    rm.close()
    return n / (time.perf_counter() - t), (rec.frames_written if rec else 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rig", default="clearance")
    ap.add_argument("--seconds", type=float, default=3.0, help="simulated seconds per run")
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp()) / "bench.mp4"
    base, _ = steps_per_second(args.rig, args.seconds, None)
    with_video, frames = steps_per_second(args.rig, args.seconds, out)
    base2, _ = steps_per_second(args.rig, args.seconds, None)
    base = max(base, base2)
    print(f"rig {args.rig}: {args.seconds:g} s simulated, video 640x480 at 30 fps ({frames} frames)")
    print(f"  without video {base:9.0f} steps/s")
    print(f"  with video    {with_video:9.0f} steps/s")
    steps = args.seconds / setup_timestep(args.rig)
    per_frame_ms = (steps / with_video - steps / base) / max(frames, 1) * 1e3
    print(
        f"ratio with/without video: {with_video / base:.3f}   (about {per_frame_ms:.0f} ms per frame on the "
        f"stepping thread: offscreen render and read-back)"
    )


def setup_timestep(rig: str) -> float:
    sc = load_scenario(MODELS / f"{rig}.toml")
    return sc.timestep if sc.timestep is not None else prepare(sc, record=False).model.opt.timestep


if __name__ == "__main__":
    main()
