"""Frames a second a software renderer draws of the robot arm (``models/robot_arm.xml``) with a
200-segment trail, at the size of the 3D view on a laptop's screen: with MuJoCo's shadows and
reflections (the baseline) or without them (mjrig's choice when the view is drawn on the CPU),
and the trail as capsules (before) or flat lines (``Trail``), in one process, alternating.

The offscreen renderer uses the same OpenGL as the view (``MUJOCO_GL``; on a machine without a
graphics driver, Mesa's llvmpipe), so the ratios are the view's.
Usage: MUJOCO_GL=egl python benchmarks/view_rate.py [--frames 20] [--rounds 3] [--size 730x770]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import mujoco
import numpy as np

from mjrig.runtime.drawing.visuals import LineConfig, Trail, draw_all

ARM = Path(__file__).resolve().parents[1] / "models" / "robot_arm.xml"


def trail(model: mujoco.MjModel) -> Trail:
    """A circle of 200 fading segments over the arm (m)."""
    a = np.linspace(0.0, 2 * np.pi, 201)
    points = np.column_stack([0.6 * np.cos(a), 0.6 * np.sin(a), np.full_like(a, 1.0)])
    rgba = np.tile(np.array([1.0, 0.2, 0.8, 1.0], dtype=np.float32), (200, 1))
    rgba[:, 3] = np.linspace(0.0, 1.0, 200)
    return Trail(points=points, rgba=rgba)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size", default="730x770")
    args = ap.parse_args()
    width, height = map(int, args.size.split("x"))
    model = mujoco.MjModel.from_xml_path(str(ARM))
    model.vis.global_.offwidth, model.vis.global_.offheight = max(width, 1280), max(height, 960)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    renderer = mujoco.Renderer(model, height, width)
    line = trail(model)
    capsules: list[LineConfig] = line.segments()

    def frames(*, light: bool, lines: bool) -> float:
        scene = renderer.scene
        t0 = time.perf_counter()
        for _ in range(args.frames):
            renderer.update_scene(data)
            scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = not light
            scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = not light
            draw_all(model, scene, [], [line] if lines else capsules)
            renderer.render()
        return args.frames / (time.perf_counter() - t0)

    cases = {
        "shadows + reflections, trail of capsules (before)": {"light": False, "lines": False},
        "shadows + reflections, trail of lines": {"light": False, "lines": True},
        "neither, trail of lines (mjrig on a software renderer)": {"light": True, "lines": True},
    }
    rates: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.rounds):
        for name, how in cases.items():
            rates[name].append(frames(**how))
    renderer.close()
    base = statistics.median(rates[next(iter(cases))])
    print(f"robot_arm at {width}x{height}, median of {args.rounds} rounds of {args.frames} frames")
    for name in cases:
        rate = statistics.median(rates[name])
        print(f"{name:58s} {rate:6.1f} frames/s  x{rate / base:.1f}")


if __name__ == "__main__":
    main()
