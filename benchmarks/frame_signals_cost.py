"""What ten ``[[signals]]`` in other frames cost a recorded step, through ``mjrig run``'s path.

The rig: dm_control's humanoid with 10 ideal springs between bodies (``step_overhead.rig_loads``),
recording every group every step. Each round runs, back to back, the rig as it is and the same
rig with ten ``[[signals]]``: five springs' forces in the frame of a body, five points' position
and velocity in another body's frame. The figure is the ratio of the two runs' whole ``run()``
(until the Parquet file is closed), best of the rounds; the extra cost per step in µs too.

    python benchmarks/frame_signals_cost.py [--steps 40000] [--repeats 3]

Never a timed test: it prints figures (BENCHMARKS.md keeps them).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import mujoco

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_overhead import machine, model_path, rig_loads, rig_run, write_scenario  # noqa: E402


def signals(model: mujoco.MjModel) -> str:
    """Ten [[signals]]: springs 0-4 in the frames of five bodies, five points in others' frames."""
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(1, model.nbody)]
    names = [n for n in names if n]
    out = []
    for i in range(5):
        out += [
            "[[signals]]",
            f'name = "load{i}_in_{names[i]}"',
            f'of = "Loads/load{i}"',
            f'frame = "body:{names[i]}"',
            "",
        ]
        a, b = names[(2 * i + 3) % len(names)], names[(3 * i + 1) % len(names)]
        out += ["[[signals]]", f'name = "point{i}"', f'of = "body:{a}@0.05,0.02,0"', f'frame = "body:{b}"', ""]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=40_000, help="steps per run (default 40000)")
    ap.add_argument("--repeats", type=int, default=3, help="rounds, best kept (default 3)")
    args = ap.parse_args()
    print(machine())
    xml = model_path("humanoid")
    model = mujoco.MjModel.from_xml_path(str(xml))
    loads = rig_loads(model, "body")
    with tempfile.TemporaryDirectory(prefix="mjrig-bench-") as folder:
        tmp = Path(folder)
        plain, framed = tmp / "plain.toml", tmp / "framed.toml"
        write_scenario(plain, xml, loads, "every", tmp / "run.parquet")
        write_scenario(framed, xml, loads, "every", tmp / "run.parquet")
        framed.write_text(framed.read_text() + "\n" + signals(model) + "\n")
        best = {"plain": float("inf"), "framed": float("inf")}
        for r in range(args.repeats):
            for name, path in (("plain", plain), ("framed", framed)):
                t0 = time.perf_counter()
                rig_run(path, args.steps, model.opt.timestep)
                best[name] = min(best[name], time.perf_counter() - t0)
            print(f"  round {r + 1}/{args.repeats} done", file=sys.stderr)
    extra = (best["framed"] - best["plain"]) / args.steps * 1e6
    print(f"humanoid + 10 springs, every group every step, {args.steps} steps, best of {args.repeats}")
    print(
        f"ten [[signals]] (5 loads, 5 points in body frames): a recorded step costs "
        f"{best['framed'] / best['plain']:.3f}x ({extra:+.2f} µs a step; the whole run "
        f"{best['plain']:.2f} s -> {best['framed']:.2f} s, prepare and close included)"
    )


if __name__ == "__main__":
    main()
