"""What recording costs in CPU: the humanoid with 10 body-body springs run through ``mjrig.headless``
(the code ``mjrig run`` runs), without a recording and with every signal group every step until
the file is closed, alternately, each timed in CPU seconds of the whole process (every thread:
the stepping, the derived columns, the writer's encoding). Ratio = CPU without / CPU with: the
share of the recorded run that is the rig's own stepping.

With ``--one-core`` the process is pinned to one core (``os.sched_setaffinity``), so the writer
thread shares it with the stepping, as when the machine's other core is busy; CPU seconds are
steadier than wall seconds on a noisy machine (another tenant's load slows both runs alike).

    python benchmarks/recorder_cpu.py [--seconds 150] [--rounds 5] [--one-core]

Never a timed test: it prints figures (BENCHMARKS.md keeps them).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import mujoco

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_overhead import machine, model_path, rig_loads, write_scenario  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=150.0, help="simulated seconds per run (humanoid: 200 steps/s)")
    ap.add_argument("--rounds", type=int, default=5, help="runs of each kind, alternating (median and best kept)")
    ap.add_argument("--one-core", action="store_true", help="pin the process to one core")
    args = ap.parse_args()
    if args.one_core:
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    from mjrig.headless import prepare, run
    from mjrig.scenario.parse import load_scenario

    print(machine())
    xml = model_path("humanoid")
    model = mujoco.MjModel.from_xml_path(str(xml))
    cpu: dict[str, list[float]] = {"off": [], "every": []}
    with tempfile.TemporaryDirectory(prefix="mjrig-bench-") as folder:
        scen = Path(folder) / "every.toml"
        write_scenario(scen, xml, rig_loads(model, "body"), "every", Path(folder) / "unused.parquet")
        for _ in range(args.rounds):
            for kind in cpu:
                out = Path(folder) / "rec.parquet"
                setup = prepare(
                    load_scenario(scen),
                    out=out if kind == "every" else None,
                    duration=args.seconds,
                    record=kind == "every",
                )
                t = time.process_time()
                run(setup)
                cpu[kind].append(time.process_time() - t)
                for p in Path(folder).glob("rec.parquet*"):
                    shutil.rmtree(p) if p.is_dir() else p.unlink()
    off, every = sorted(cpu["off"]), sorted(cpu["every"])
    mid = len(off) // 2
    print(
        f"humanoid + 10 body-body springs, {args.seconds:g} s simulated, {'one core' if args.one_core else 'any core'}:"
    )
    print(f"  CPU without recording {off[mid]:.3f} s, with every group every step {every[mid]:.3f} s (medians)")
    print(f"  ratio: median {off[mid] / every[mid]:.3f}, best {off[0] / every[0]:.3f}")


if __name__ == "__main__":
    main()
