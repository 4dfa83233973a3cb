"""Cost of drawing a tracer's trail each frame: the rig's drawing (a ``Trail`` of 200 segments)
against the same segments made and drawn one by one as ``LineConfig`` (the baseline), in one
process, alternating.

The viewer draws the rig 60 times a second on the simulation thread, so a trail's cost per frame
is taken from the time that thread has for stepping.
Usage: python benchmarks/trail_cost.py [--frames 300] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import mujoco

from mjrig.runtime.drawing.tracers import SAMPLES, Tracer
from mjrig.runtime.drawing.visuals import draw_all

ARM = """<mujoco><option timestep="0.002"/><worldbody>
<body name="arm"><joint name="hinge" type="hinge" axis="0 1 0"/>
<geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.03" mass="1"/>
<site name="tip" pos="0.5 0 0"/></body></worldbody></mujoco>"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    model = mujoco.MjModel.from_xml_string(ARM)
    data = mujoco.MjData(model)
    data.qpos[0] = 1.0
    tracer = Tracer(name="trail", at="tip", duration=1.0)
    while len(tracer.samples()[0]) < SAMPLES + 1:
        mujoco.mj_step(model, data)
        tracer.sample(model, data)
    scene = mujoco.MjvScene(model, maxgeom=1000)

    def trail() -> None:
        scene.ngeom = 0
        t = tracer.trail()
        assert t is not None
        draw_all(model, scene, [], [t])

    def one_by_one() -> None:
        scene.ngeom = 0
        draw_all(model, scene, [], tracer.lines())

    segments = len(tracer.lines())
    per: dict[str, list[float]] = {"trail": [], "one by one": []}
    for _ in range(args.rounds):
        for name, fn in (("one by one", one_by_one), ("trail", trail)):
            t0 = time.perf_counter()
            for _ in range(args.frames):
                fn()
            per[name].append((time.perf_counter() - t0) / args.frames)
    base = statistics.median(per["one by one"])
    new = statistics.median(per["trail"])
    print(f"{segments} segments a frame, median of {args.rounds} rounds of {args.frames} frames")
    print(f"one by one (baseline): {1e3 * base:.2f} ms a frame, {1e6 * base / segments:.1f} us a segment")
    print(f"trail:                 {1e3 * new:.2f} ms a frame, {1e6 * new / segments:.1f} us a segment")
    print(
        f"trail / baseline: {new / base:.2f}; at 60 frames/s the trail takes {60 * new:.0%} of a core (baseline {60 * base:.0%})"
    )


if __name__ == "__main__":
    main()
