"""What a user waits for: `mjrig run` as a process, start-up subtracted, as a ratio of a bare
`mujoco.mj_step` loop on the same model measured in this process between the runs.

Rows (dm_control's suite models, rigs of ``step_overhead.rig_loads``):

- each of ``--models`` with 10 *mixed* loads (damped tension- and compression-only springs,
  stroke springs with preload, sine forces), no recording;
- humanoid with 10 body-body ideal springs, no recording, and with every signal group every
  step until the file is closed.

A figure: ``python -m mjrig run SCENARIO --duration D`` is timed as a subprocess (wall clock,
best of ``--repeats``), and so is the same command with a duration of one step (the start-up:
interpreter, imports, compiling, ``prepare``, the close of an empty recording); their difference
is what the steps cost. Ratio = steps / that difference over the bare loop's best steps/s. The
steps per model make the bare loop last about ``--seconds``.

``--busy`` runs every row again with a busy loop pinned to the last core beside it (what a
desktop rendering the app, or another job, leaves of the machine).

    python benchmarks/user_path.py [--models cartpole humanoid quadruped humanoid_CMU] [--seconds 2]
                                   [--repeats 3] [--busy]

Never a timed test: it prints figures (BENCHMARKS.md keeps them).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import mujoco

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_overhead import bare_run, machine, model_path, rig_loads, write_scenario  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def process_seconds(scenario: Path, duration: float, repeats: int) -> float:
    """Best wall-clock seconds of ``mjrig run SCENARIO --duration DURATION`` as a subprocess."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "mjrig", "run", str(scenario), "--duration", repr(duration)],
            check=True,
            env=env,
            cwd=scenario.parent,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        best = min(best, time.perf_counter() - t)
    return best


def row(label: str, model: mujoco.MjModel, scenario: Path, seconds: float, repeats: int) -> tuple[str, float, str]:
    """(label, ratio, detail) of one row: the run, its start-up and the bare loop, interleaved."""
    probe = 2000
    per_step = bare_run(model, probe) / probe
    steps = max(probe, int(seconds / per_step))
    dt = float(model.opt.timestep)
    bare = run_ = start = float("inf")
    for _ in range(repeats):
        bare = min(bare, bare_run(model, steps))
        run_ = min(run_, process_seconds(scenario, steps * dt, 1))
        start = min(start, process_seconds(scenario, dt, 1))
    stepping = max(run_ - start, 1e-9)
    ratio = (steps / stepping) / (steps / bare)
    return label, ratio, f"{steps} steps: bare {bare:.2f} s, process {run_:.2f} s - start-up {start:.2f} s"


def table(models: list[str], seconds: float, repeats: int, folder: Path) -> list[tuple[str, float, str]]:
    rows = []
    for name in models:
        xml = model_path(name)
        model = mujoco.MjModel.from_xml_path(str(xml))
        scen = folder / f"{name}-mixed.toml"
        write_scenario(scen, xml, rig_loads(model, "mixed"), "off", folder / "unused.parquet")
        rows.append(row(f"{name} + 10 mixed loads, no recording", model, scen, seconds, repeats))
        print(f"  {rows[-1][0]}: {rows[-1][1]:.2f} ({rows[-1][2]})", file=sys.stderr, flush=True)
        if name == "humanoid":
            for rec in ("off", "every"):
                scen = folder / f"{name}-springs-{rec}.toml"
                write_scenario(scen, xml, rig_loads(model, "body"), rec, folder / f"{name}-springs.parquet")
                what = "no recording" if rec == "off" else "every group every step, until the file is closed"
                rows.append(row(f"{name} + 10 body-body springs, {what}", model, scen, seconds, repeats))
                print(f"  {rows[-1][0]}: {rows[-1][1]:.2f} ({rows[-1][2]})", file=sys.stderr, flush=True)
    return rows


def busy_loop() -> subprocess.Popen:
    """A process spinning on the last core."""
    code = f"import os\nos.sched_setaffinity(0, {{{(os.cpu_count() or 1) - 1}}})\nwhile True:\n    pass\n"
    return subprocess.Popen([sys.executable, "-c", code])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=["cartpole", "humanoid", "quadruped", "humanoid_CMU"])
    ap.add_argument("--seconds", type=float, default=2.0, help="the bare loop's length per row (s)")
    ap.add_argument("--repeats", type=int, default=3, help="rounds, best kept (default 3)")
    ap.add_argument("--busy", action="store_true", help="again with a busy loop on the other core")
    args = ap.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory(prefix="mjrig-bench-") as folder:
        results = {"idle": table(args.models, args.seconds, args.repeats, Path(folder))}
        if args.busy:
            spinner = busy_loop()
            try:
                results["one job beside"] = table(args.models, args.seconds, args.repeats, Path(folder))
            finally:
                spinner.kill()
    names = list(results)
    print(f"\n`mjrig run` as a process, start-up subtracted / bare `mj_step`, best of {args.repeats}\n")
    print("| rig | " + " | ".join(names) + " |")
    print("| --- |" + " --- |" * len(names))
    for i, (label, _, _) in enumerate(results["idle"]):
        print(f"| {label} | " + " | ".join(f"{results[n][i][1]:.2f}" for n in names) + " |")


if __name__ == "__main__":
    main()
