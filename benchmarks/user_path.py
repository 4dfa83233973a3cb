"""What a user waits for, start to file: `mjrig run` through the close of its recording, as a
ratio of a bare `mujoco.mj_step` loop on the same model, measured side by side in this process.

The rig: dm_control's humanoid with 10 ideal springs between bodies (``step_overhead.rig_loads``,
"body"), ``--steps`` steps (default 80,000). Each round runs, back to back, a bare ``mj_step`` loop
of the same steps, then the rig as ``mjrig run SCENARIO --duration D`` runs it (``load_target``,
``prepare``, ``run``) with recording off, and again with every signal group every step. A figure
is best rig steps/s over best bare steps/s of the rounds. Timed: the whole ``run()`` call, which
ends when the Parquet file is closed (the process start and ``prepare`` are out, as the same for
every run). The close alone (from the step loop's last progress call to ``run()`` returning) is
printed next to it, with the file's size and columns. One more row steps the rig's compiled
model (the springs as MuJoCo tendons) with a plain ``mj_step`` loop: what the springs cost the
physics itself, the limit of the first row.

``--pieces`` then prints where the recorded run's time goes, in µs per step: the recorded run
again with the writer's segments, its Parquet encoding, or both switched off (monkeypatched in
this process, for the measurement only).

    python benchmarks/user_path.py [--steps 80000] [--repeats 3] [--pieces]

Never a timed test: it prints figures (BENCHMARKS.md keeps them).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import mujoco
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_overhead import bare_run, machine, model_path, rig_loads, rig_run, write_scenario  # noqa: E402

from mjrig.headless import prepare  # noqa: E402
from mjrig.scenario.targets import load_target  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=80_000, help="steps per run (default 80000)")
    ap.add_argument("--repeats", type=int, default=3, help="rounds, best kept (default 3)")
    ap.add_argument("--pieces", action="store_true", help="also: the writer's halves switched off in turn")
    args = ap.parse_args()
    print(machine())
    xml = model_path("humanoid")
    model = mujoco.MjModel.from_xml_path(str(xml))
    loads = rig_loads(model, "body")
    steps = args.steps
    best = {"bare": 0.0, "rig model": 0.0, "off": 0.0, "every": 0.0}
    closes: list[float] = []
    with tempfile.TemporaryDirectory(prefix="mjrig-bench-") as folder:
        tmp = Path(folder)
        out = tmp / "run.parquet"
        scenarios = {rec: tmp / f"humanoid-{rec}.toml" for rec in ("off", "every")}
        for rec, path in scenarios.items():
            write_scenario(path, xml, loads, rec, out)
        size, columns = 0, 0
        for r in range(args.repeats):
            best["bare"] = max(best["bare"], steps / bare_run(model, steps))
            rigged = prepare(load_target(str(scenarios["off"])), duration=1.0).model  # with the springs' tendons
            best["rig model"] = max(best["rig model"], steps / bare_run(rigged, steps))
            for rec, path in scenarios.items():
                t = rig_run(path, steps, model.opt.timestep, keep=rec == "every")
                if t.steps != steps:
                    raise RuntimeError(f"{path.name}: ran {t.steps} steps, not {steps}")
                best[rec] = max(best[rec], steps / (t.stepping + t.closing))
                if rec == "every":
                    closes.append(t.closing)
                    meta = pq.ParquetFile(out).metadata
                    size, columns = out.stat().st_size, meta.num_columns
                    out.unlink()
            print(f"  round {r + 1}/{args.repeats} done", file=sys.stderr)
    print(f"humanoid (nv {model.nv}), 10 body-body springs, {steps} steps, best of {args.repeats}; "
          f"bare mj_step {best['bare']:,.0f} steps/s\n")
    print("| figure | ratio |")
    print("| --- | --- |")
    print(f"| `mjrig run`, no recording / bare `mj_step` | {best['off'] / best['bare']:.2f} |")
    print(f"| `mjrig run`, every group every step, until the file is closed / bare | {best['every'] / best['bare']:.2f} |")
    print(f"| the rig's compiled model (the springs as MuJoCo tendons), plain `mj_step` loop / bare: the physics' own cost, "
          f"the limit of the first row | {best['rig model'] / best['bare']:.2f} |")
    print(f"\nClose of that recording: median {statistics.median(closes):.3f} s, max {max(closes):.3f} s, "
          f"of a {steps / best['every']:.2f} s run (best); the file {size / 2**20:.0f} MiB, {columns} columns.")
    if args.pieces:
        pieces(model, xml, loads, steps, args.repeats, best)


def pieces(model: mujoco.MjModel, xml: Path, loads: list, steps: int, repeats: int, best: dict[str, float]) -> None:
    """µs per step of the recorded run with the writer's row groups switched off (rows gathered
    and queued, nothing encoded or written)."""
    from mjrig.runtime import parquet_stream
    real = parquet_stream.RowGroupFile.append
    us = {k: 1e6 / v for k, v in best.items()}
    with tempfile.TemporaryDirectory(prefix="mjrig-bench-") as folder:
        path = Path(folder) / "every.toml"
        write_scenario(path, xml, loads, "every", Path(folder) / "run.parquet")
        parquet_stream.RowGroupFile.append = lambda self, blocks: 0
        try:
            us["no writing"] = min((lambda t: (t.stepping + t.closing) / steps * 1e6)(
                rig_run(path, steps, model.opt.timestep)) for _ in range(repeats))
        finally:
            parquet_stream.RowGroupFile.append = real
    print("\nµs per step: " + ", ".join(f"{k} {v:.2f}" for k, v in us.items()))


if __name__ == "__main__":
    main()
