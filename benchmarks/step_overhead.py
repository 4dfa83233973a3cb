"""Steps/s of the headless runner (`mjrig run`) as a ratio of a bare `mujoco.mj_step` loop.

Matrix: dm_control suite models x rigs x recording modes. Each rig is written as a scenario TOML
file (model path absolute) into a temporary folder, then run exactly as ``mjrig run SCENARIO
--duration D`` runs it: ``load_target(path)``, ``prepare(sc, out=None, duration=D, video=None)``,
``run(setup, progress=callback)``. Every rig run is paired with a bare ``mj_step`` loop of the same
number of steps on the same model (compiled from the same XML, fresh MjData) just before it, in
this process; pairs are repeated ``--repeats`` times (all cells of a model once per round) and a
cell's figure is best rig steps/s over best bare steps/s, so machine noise hits both alike.

What the timing includes. ``run()`` steps inside ``with runtime:``, whose exit closes the
recording (flush, final Parquet merge). It calls ``progress(seconds)`` every n/200 steps and once
more right after the step loop, still inside the ``with``; the CLI passes its progress bar there,
this script a callback that only takes a timestamp. So:
  * stepping time (s) = from calling ``run()`` to its last progress call: the first step's binding
    of loads and recorder, every ``RuntimeManager.step`` (loads, sampling, handing full blocks to
    the writer thread, which shares the cores), and the progress calls;
  * close time (s) = from the last progress call to ``run()`` returning: the final flush and merge
    into one Parquet file, reported separately in a footnote;
  * excluded: ``prepare()`` (parsing, compiling the model with the rig, validation, opening the
    recorder).

Rigs (10 loads each, bodies picked deterministically from the compiled model, world skipped;
few-body models reuse bodies at different local offsets):
  none   no loads;
  world  10 ideal springs, body:B@x,y,z to a world point 0.3 m above it;
  body   10 ideal springs between two different bodies;
  mixed  3 tension_spring + 3 compression_spring (damped), 2 stroke_compression_spring with
         preload, 2 force with a sine-profile z component.
Recording: off; every signal group every step; ``rate = 500`` (samples per simulated second).

    python benchmarks/step_overhead.py [--steps 20000] [--repeats 3] [--models humanoid ...]
        [--rigs none world ...] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from mjrig.headless import prepare, run
from mjrig.runtime.telemetry.signals import SIGNAL_GROUPS
from mjrig.scenario.targets import load_target

MODELS = ("cartpole", "humanoid", "quadruped", "humanoid_CMU")
RIGS = {"none": "no loads", "world": "10 springs to world", "body": "10 springs body-body", "mixed": "10 mixed loads"}
RECORDINGS = {"off": "recording off", "every": "every group, every step", "500": "every group, 500/s"}
Load = dict[str, object]


def model_path(name: str) -> Path:
    """The XML of dm_control's suite model ``name``."""
    import dm_control

    return Path(dm_control.__file__).parent / "suite" / f"{name}.xml"


def toml_value(v: object) -> str:
    """A TOML literal for a string, number, list or inline table."""
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string
    if isinstance(v, (int, float)):
        return repr(float(v))
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    assert isinstance(v, dict)
    return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"


def rig_loads(model: mujoco.MjModel, rig: str) -> list[Load]:
    """The ten loads of ``rig`` on ``model`` (lengths in m, stiffness N/m, damping N·s/m, forces N).

    Stiffness is 20 N/m per kg of the lighter body's subtree (about 4.5 rad/s alone), rest lengths
    are the distances at qpos0, so each rig stays stable and its cost is what is measured.
    """
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    bodies = [b for b in range(1, model.nbody) if mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b)]
    nb = len(bodies)

    def point(i: int, b: int) -> tuple[str, np.ndarray, float]:
        off = np.array([0.01 * (i + 1), 0.005 * (i % 3), 0.0])  # distinct per load: bodies may repeat
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b)
        world = data.xpos[b] + data.xmat[b].reshape(3, 3) @ off
        return f"body:{name}@{off[0]:g},{off[1]:g},{off[2]:g}", world, float(model.body_subtreemass[b])

    loads: list[Load] = []
    for i in range(10 if rig != "none" else 0):
        a, pa, ma = point(i, bodies[(3 * i) % nb])
        b, pb, mb = point(i + 10, bodies[(3 * i + 1 + (i // nb) % max(1, nb - 1)) % nb])
        if rig == "world":
            up = pa + np.array([0.0, 0.0, 0.3])
            loads.append(
                {
                    "kind": "ideal_spring",
                    "at": a,
                    "to": "body:world@" + ",".join(f"{x:.6g}" for x in up),
                    "stiffness": 20 * ma,
                    "damping": 0.5 * ma,
                    "rest_length": 0.3,
                }
            )
            continue
        m, r0 = min(ma, mb), float(np.linalg.norm(pa - pb))
        spring: Load = {"at": a, "to": b, "stiffness": 20 * m, "damping": 0.5 * m}
        if rig == "body":
            loads.append({"kind": "ideal_spring", **spring, "rest_length": r0})
        elif i < 6:
            loads.append({"kind": "tension_spring" if i < 3 else "compression_spring", **spring, "rest_length": r0})
        elif i < 8:
            loads.append({"kind": "stroke_compression_spring", **spring, "preload": 2 * m, "max_stroke": 0.1})
        else:
            loads.append(
                {
                    "kind": "force",
                    "at": a,
                    "vector": [0.0, 0.0, {"profile": "sine", "amplitude": 2 * ma, "frequency": 2.0}],
                }
            )
    return loads


def write_scenario(path: Path, xml: Path, loads: list[Load], recording: str, out: Path) -> None:
    """Write a scenario TOML (docs/scenario.md): the model, ``loads`` and the recording mode."""
    lines = [f"model = {toml_value(str(xml))}", "", "[simulation]", "duration = 1.0", ""]
    for i, load in enumerate(loads):
        lines += ["[[loads]]", f'name = "load{i}"'] + [f"{k} = {toml_value(v)}" for k, v in load.items()] + [""]
    if recording != "off":
        lines += ["[recording]", f"path = {toml_value(str(out))}", f"signals = {toml_value(list(SIGNAL_GROUPS))}"]
        lines += ["rate = 500"] if recording == "500" else []
    path.write_text("\n".join(lines) + "\n")


@dataclass
class Timing:
    """One run: steps done, stepping and close times (s), rows recorded."""

    steps: int
    stepping: float
    closing: float
    rows: int


def rig_run(scenario: Path, steps: int, timestep: float, *, keep: bool = False) -> Timing:
    """Run ``scenario`` for ``steps`` steps the way ``mjrig run SCENARIO --duration D`` does
    (its recording is deleted after, unless ``keep``)."""
    sc = load_target(str(scenario))
    setup = prepare(sc, out=None, duration=steps * timestep, video=None)
    last = [0.0]

    def progress(_seconds: float) -> None:
        last[0] = time.perf_counter()

    t0 = time.perf_counter()
    n = run(setup, progress=progress)
    t2 = time.perf_counter()
    sm = setup.runtime.signal_manager
    if sm is not None and sm.error:
        raise RuntimeError(f"{scenario.name}: recording stopped: {sm.error}")
    if setup.out is not None and not keep:
        setup.out.unlink(missing_ok=True)
    return Timing(n, last[0] - t0, t2 - last[0], sm.rows_recorded if sm is not None else 0)


def bare_run(model: mujoco.MjModel, steps: int) -> float:
    """Seconds for ``steps`` calls of ``mj_step`` from a fresh MjData."""
    data = mujoco.MjData(model)
    t = time.perf_counter()
    for _ in range(steps):
        mujoco.mj_step(model, data)
    return time.perf_counter() - t


def machine() -> str:
    """CPU model, cores, mujoco and Python versions."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"CPU {cpu}; {os.cpu_count()} cores; mujoco {mujoco.__version__}; Python {platform.python_version()}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=None, help="steps per run (default 20000, --quick 2000)")
    ap.add_argument("--repeats", type=int, default=None, help="rounds, best kept (default 3, --quick 1)")
    ap.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    ap.add_argument("--rigs", nargs="+", choices=list(RIGS), default=list(RIGS))
    ap.add_argument("--quick", action="store_true", help="2000 steps, 1 round: a rough look")
    args = ap.parse_args()
    steps = args.steps or (2000 if args.quick else 20000)
    repeats = args.repeats or (1 if args.quick else 3)
    print(machine())
    print(f"{steps} steps per run, best of {repeats}; ratio = `mjrig run` steps/s / bare mj_step steps/s\n")
    with tempfile.TemporaryDirectory(prefix="mjrig-bench-") as folder:
        measure(Path(folder), args.models, args.rigs, steps, repeats)


def measure(tmp: Path, models: list[str], rigs: list[str], steps: int, repeats: int) -> None:
    """Write the scenarios into ``tmp``, run the matrix and print the table and footnotes."""
    cells = [(rig, rec) for rig in rigs for rec in RECORDINGS]
    ratio: dict[tuple[str, str, str], float] = {}
    closing: dict[str, list[float]] = {rec: [] for rec in RECORDINGS if rec != "off"}
    rows_per_step: dict[str, float] = {}
    bare_best: dict[str, float] = {}
    nv: dict[str, int] = {}
    for name in models:
        xml = model_path(name)
        model = mujoco.MjModel.from_xml_path(str(xml))
        nv[name] = model.nv
        paths: dict[tuple[str, str], Path] = {}
        for rig in rigs:
            loads = rig_loads(model, rig)
            for rec in RECORDINGS:
                paths[rig, rec] = tmp / f"{name}-{rig}-{rec}.toml"
                write_scenario(paths[rig, rec], xml, loads, rec, tmp / f"{name}-{rig}-{rec}.parquet")
        best_bare = {c: 0.0 for c in cells}
        best_rig = {c: 0.0 for c in cells}
        for r in range(repeats):
            for cell in cells:
                best_bare[cell] = max(best_bare[cell], steps / bare_run(model, steps))
                t = rig_run(paths[cell], steps, model.opt.timestep)
                if t.steps != steps:
                    raise RuntimeError(f"{paths[cell].name}: ran {t.steps} steps, not {steps}")
                best_rig[cell] = max(best_rig[cell], steps / t.stepping)
                if cell[1] != "off":
                    closing[cell[1]].append(t.closing)
                if cell[1] == "500":
                    rows_per_step[name] = t.rows / steps
            print(f"  {name}: round {r + 1}/{repeats} done", file=sys.stderr)
        for cell in cells:
            ratio[(name, *cell)] = best_rig[cell] / best_bare[cell]
        bare_best[name] = max(best_bare.values())

    print("| model (nv) | rig | " + " | ".join(RECORDINGS.values()) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in RECORDINGS) + " |")
    for name in models:
        for rig in rigs:
            figures = " | ".join(f"{ratio[name, rig, rec]:.2f}" for rec in RECORDINGS)
            print(f"| {name} ({nv[name]}) | {RIGS[rig]} | {figures} |")
    print()
    print("Bare mj_step, best steps/s: " + ", ".join(f"{n} {bare_best[n]:,.0f}" for n in models) + ".")
    for rec, times in closing.items():
        if times:
            print(
                f"Close (flush + Parquet merge) after {steps} steps, {RECORDINGS[rec]}: median "
                f"{statistics.median(times):.3f} s, max {max(times):.3f} s (not in the ratios)."
            )
    if rows_per_step:
        print(
            "Rows per step at 500/s: "
            + ", ".join(f"{n} {v:.2f}" for n, v in rows_per_step.items())
            + " (1.00: every step)."
        )
    if "humanoid" in models and "body" in rigs:
        scaling(tmp, steps, repeats)


def scaling(tmp: Path, steps: int, repeats: int) -> None:
    """Print time(4N steps) / time(N steps), humanoid, body-to-body springs, every group every step."""
    scenario = tmp / "humanoid-body-every.toml"
    timestep = mujoco.MjModel.from_xml_path(str(model_path("humanoid"))).opt.timestep
    small: list[Timing] = []
    large: list[Timing] = []
    for _ in range(repeats):
        small.append(rig_run(scenario, steps, timestep))
        large.append(rig_run(scenario, 4 * steps, timestep))
    step_ratio = min(t.stepping for t in large) / min(t.stepping for t in small)
    total_ratio = min(t.stepping + t.closing for t in large) / min(t.stepping + t.closing for t in small)
    print(
        f"Recording 4x the steps (humanoid, 10 springs body-body, every group every step, {steps} vs "
        f"{4 * steps} steps): stepping time x{step_ratio:.2f}, with the close x{total_ratio:.2f} (linear: x4.00)."
    )


if __name__ == "__main__":
    main()
