"""What a person waits for, measured so that it holds on a noisy machine: every case is a whole
process, the cases of a round run one after another (their order turned each round), and a
figure is the median of ``--pairs`` rounds with its spread (lowest-highest).

The rig is dm_control's humanoid with 10 body-to-body ideal springs (``step_overhead.rig_loads``),
``--steps`` steps (default 80,000 = 400 s):

- ``bare``: ``python -c`` importing mujoco, loading the model and calling ``mj_step`` N times;
  ``bare 1``: the same for one step (the interpreter, ``import mujoco``, the model);
- ``springs`` / ``springs 1``: the same with the rig's springs added as MuJoCo's own spatial
  tendons (stiffness, damping, rest length): what the springs cost MuJoCo itself;
- ``run``: ``mjrig run SCENARIO --duration N*dt``, no recording; ``run 1``: one step (start-up
  and close: imports, compiling, ``prepare``);
- ``record``: the same rig recording every signal group every step until the file is closed;
  ``record 1``: one step of it;
- ``check``: ``mjrig check SCENARIO``.

The recorded file's size is printed too (of this checkout and of the baseline).

Ratios, one per round, then their median: *steady* = (bare - bare 1) / (run - run 1), the steps'
speed against the bare loop with the start-ups taken out; the same for the recorded run, and
both against ``springs``. A warm-up round comes first (not counted): bytecode is cached as an
installed mjrig has it.
Start-up is ``run 1`` (and ``check``) in seconds, beside ``bare 1``.

``--baseline TREE``: a second checkout of mjrig (a git worktree); its ``mjrig`` cases run too,
from a tree laid out as installed on ``PYTHONPATH`` (``app/`` as ``mjrig``), in the same rounds,
and each case's time is compared as this / baseline (the median of the rounds' ratios: < 1 is
faster). The bare cases are the same for both.

    python benchmarks/paired.py [--pairs 5] [--steps 80000] [--baseline ../old-checkout]
                                [--only run record check]

Never a timed test: it prints figures (BENCHMARKS.md keeps them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import mujoco

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_overhead import machine, model_path, rig_loads, write_scenario  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PYCACHE = Path(tempfile.gettempdir()) / "mjrig-paired-pycache"
"""Where the cases' bytecode is kept (one warm-up round fills it)."""
BARE = """import sys, mujoco
m = mujoco.MjModel.from_xml_path(sys.argv[1]); d = mujoco.MjData(m)
for _ in range(int(sys.argv[2])):
    mujoco.mj_step(m, d)
"""
SPRINGS = """import json, sys, mujoco
spec = mujoco.MjSpec.from_file(sys.argv[1])
for i, load in enumerate(json.loads(sys.argv[3])):  # the rig's springs as MuJoCo's own tendons
    for end in ("at", "to"):
        body, at = load[end].removeprefix("body:").split("@")
        spec.body(body).add_site(name=f"{end}{i}", pos=[float(v) for v in at.split(",")])
    tendon = spec.add_tendon(name=f"spring{i}")
    tendon.wrap_site(f"at{i}"), tendon.wrap_site(f"to{i}")
    tendon.stiffness, tendon.damping = [load["stiffness"], 0, 0], [load["damping"], 0, 0]
    tendon.springlength = [load["rest_length"], load["rest_length"]]
m = spec.compile(); d = mujoco.MjData(m)
for _ in range(int(sys.argv[2])):
    mujoco.mj_step(m, d)
"""
MJRIG_CASES = ("run", "run 1", "record", "record 1", "check")


def installed_layout(checkout: Path, into: Path) -> Path:
    """A tree of links laying ``checkout`` out as installed (its ``pyproject.toml``'s
    ``package-dir``: ``app/`` as ``mjrig``, ``widgets/`` as ``mjrig.widgets``), for ``PYTHONPATH``."""
    dirs = tomllib.loads((checkout / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for package, folder in sorted(dirs.items(), key=lambda kv: kv[0].count(".")):
        target = into.joinpath(*package.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for item in (checkout / folder).iterdir():
            if item.name != "__pycache__" and not target.joinpath(item.name).exists():
                target.joinpath(item.name).symlink_to(item.resolve())
    return into


def wall(argv: list[str], *, cwd: Path, pythonpath: Path | None) -> float:
    """Wall-clock seconds of one process (its output dropped; a failure stops the benchmark).
    Bytecode is cached (in ``PYCACHE``), as an installed package has it, whatever the
    environment says (``PYTHONDONTWRITEBYTECODE``: compiling mjrig's modules again is 0.3 s)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    t = time.perf_counter()
    subprocess.run(argv, check=True, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - t


def cases(xml: Path, plain: Path, every: Path, steps: int, dt: float, loads: str) -> dict[str, list[str]]:
    """Each case's command line."""
    mjrig = [sys.executable, "-m", "mjrig"]
    return {
        "bare": [sys.executable, "-c", BARE, str(xml), str(steps)],
        "bare 1": [sys.executable, "-c", BARE, str(xml), "1"],
        "springs": [sys.executable, "-c", SPRINGS, str(xml), str(steps), loads],
        "springs 1": [sys.executable, "-c", SPRINGS, str(xml), "1", loads],
        "run": [*mjrig, "run", str(plain), "--duration", repr(steps * dt)],
        "run 1": [*mjrig, "run", str(plain), "--duration", repr(dt)],
        "record": [*mjrig, "run", str(every), "--duration", repr(steps * dt)],
        "record 1": [*mjrig, "run", str(every), "--duration", repr(dt)],
        "check": [*mjrig, "check", str(plain)],
    }


def spread(values: list[float], fmt: str = ".2f") -> str:
    """``median (lowest-highest)``."""
    return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}-{max(values):{fmt}})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=5, help="rounds (at least 5 for a figure worth keeping)")
    ap.add_argument("--steps", type=int, default=80_000, help="steps of the long runs")
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout to compare with")
    ap.add_argument("--only", nargs="+", choices=MJRIG_CASES, default=list(MJRIG_CASES), help="mjrig cases to run")
    args = ap.parse_args()
    print(machine())
    xml = model_path("humanoid")
    model = mujoco.MjModel.from_xml_path(str(xml))
    dt = float(model.opt.timestep)
    with tempfile.TemporaryDirectory(prefix="mjrig-paired-") as folder:
        tmp = Path(folder)
        plain, every = tmp / "springs.toml", tmp / "springs-every.toml"
        write_scenario(plain, xml, rig_loads(model, "body"), "off", tmp / "unused.parquet")
        write_scenario(every, xml, rig_loads(model, "body"), "every", tmp / "every.parquet")
        commands = cases(xml, plain, every, args.steps, dt, json.dumps(rig_loads(model, "body")))
        wanted = ["bare", "bare 1", "springs", "springs 1", *args.only]
        runs = [(name, None) for name in wanted]  # (case, PYTHONPATH): this checkout as installed
        if args.baseline is not None:
            tree = installed_layout(args.baseline.resolve(), tmp / "baseline")
            runs += [(f"{name} (baseline)", tree) for name in args.only]
        for name, tree in runs:  # a warm-up round, not counted: bytecode cached, files in the page cache
            wall(commands[name.removesuffix(" (baseline)")], cwd=tmp, pythonpath=tree)
            (tmp / "every.parquet").unlink(missing_ok=True)
        times: dict[str, list[float]] = {name: [] for name, _ in runs}
        sizes: dict[str, int] = {}  # the recorded file's bytes, by case
        for i in range(args.pairs):
            order = runs if i % 2 == 0 else runs[::-1]
            for name, tree in order:
                times[name].append(wall(commands[name.removesuffix(" (baseline)")], cwd=tmp, pythonpath=tree))
                if (tmp / "every.parquet").exists():
                    sizes[name] = (tmp / "every.parquet").stat().st_size
                (tmp / "every.parquet").unlink(missing_ok=True)
            print(f"  round {i + 1}: " + ", ".join(f"{n} {t[-1]:.2f}" for n, t in times.items()), file=sys.stderr)
    print(f"\nhumanoid + 10 body-body springs, {args.steps} steps; {args.pairs} rounds, median (lowest-highest)\n")
    print("| case | wall (s) |" + (" this / baseline |" if args.baseline else ""))
    print("| --- | --- |" + (" --- |" if args.baseline else ""))
    for name in wanted:
        line = f"| {name} | {spread(times[name])} |"
        if args.baseline is not None and name in args.only:
            line += f" {spread([a / b for a, b in zip(times[name], times[f'{name} (baseline)'])])} |"
        elif args.baseline is not None:
            line += " |"
        print(line)
    for base in ("bare", "springs"):
        ref = [a - b for a, b in zip(times[base], times[f"{base} 1"])]
        for label, long, short in (("no recording", "run", "run 1"), ("every group every step", "record", "record 1")):
            if long in times and short in times:
                steady = [b / (a - s) for b, a, s in zip(ref, times[long], times[short])]
                print(f"\nsteady state, {label}, of {base}: {spread(steady)}")
    for name, size in sorted(sizes.items()):
        if not name.startswith("record 1"):
            print(f"file of `{name}`: {size / 1e6:.1f} MB")
    if "run 1" in times:
        print(f"start-up of `mjrig run` (one step): {spread(times['run 1'])} s; bare: {spread(times['bare 1'])} s")


if __name__ == "__main__":
    main()
