"""Per-step cost of requirements in the headless runner (`mjrig run`), recording off.

For each model, the same rig runs with no requirements and with a few sets of them; each run
is `load_target` -> `prepare` -> `run` as the CLI does, timed from calling `run()` to its last
progress call. A figure is best-of-N microseconds per step; the "+µs" column is the extra cost
per step over the same rig without requirements. Requirements never fail (their bounds are
wide), so every run goes to its duration. A second table times the per-step check itself
in-process (``timeit`` of the manager's requirement set: the probe's read, then every
requirement's update), which the machine's noise touches far less.

    python benchmarks/requirements_cost.py [--steps 20000] [--repeats 3] [--models spring_mass humanoid]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import timeit
from pathlib import Path

import mujoco

from mjrig.headless import prepare, run
from mjrig.scenario.builder import build_rig
from mjrig.scenario.targets import load_target

REPO = Path(__file__).resolve().parents[1]

SETS = {
    "none": [],
    "1 joint": [("Joints/{j}:qpos", "")],
    "5 joint/body": [
        ("Joints/{j}:qpos", ""),
        ("Joints/{j}:qvel", ""),
        ("Bodies/{b}:x", ""),
        ("Bodies/{b}:z", ""),
        ("Joints/{j}:qpos", "end = 0.5\n"),
    ],
    "1 proximity": [("Proximities/gap:distance", "")],
    "1 spring force": [("Loads/spring:fx", "")],
}


def model_path(name: str) -> Path:
    if name == "spring_mass":
        return REPO / "models" / "spring_mass.xml"
    import dm_control

    return Path(dm_control.__file__).parent / "suite" / f"{name}.xml"


def names(xml: Path) -> tuple[str, str, str]:
    """A hinge or slide joint and the last body (twice: a point of the rig's spring is on it)."""
    m = mujoco.MjModel.from_xml_path(str(xml))
    j = next(
        mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, i)
        for i in range(m.njnt)
        if int(m.jnt_type[i]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    )
    b = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, m.nbody - 1)
    return j, b, b


def scenario(folder: Path, xml: Path, reqs: list[tuple[str, str]], duration: float) -> Path:
    j, b, _ = names(xml)
    text = (
        f'model = "{xml}"\n[simulation]\nduration = {duration}\n'
        f'[[loads]]\nname = "spring"\nkind = "ideal_spring"\nat = "body:{b}@0,0,0.05"\nto = "body:world@0,0,2"\n'
        "stiffness = 10.0\ndamping = 1.0\nrest_length = 0.5\n"
        f'[[proximities]]\nname = "gap"\na = "body:{b}"\nb = "body:world@0,0,3"\n'
    )
    for i, (signal, extra) in enumerate(reqs):
        text += (
            f'[[requirements]]\nname = "r{i}"\nsignal = "{signal.format(j=j, b=b)}"\nmin = -1e9\nmax = 1e9\n' + extra
        )
    path = folder / "rig.toml"
    path.write_text(text, encoding="utf-8")
    return path


def timed(path: Path, steps: int, timestep: float) -> float:
    setup = prepare(load_target(str(path)), duration=steps * timestep)
    last = [0.0]

    def progress(_s: float) -> None:
        last[0] = time.perf_counter()

    t0 = time.perf_counter()
    n = run(setup, progress=progress)
    assert n == steps and all(r.passed for r in setup.runtime.requirements)
    return (last[0] - t0) / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--models", nargs="+", default=["spring_mass", "humanoid"])
    args = ap.parse_args()
    print("| model | requirements | µs/step | +µs/step |\n| --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            xml = model_path(name)
            dt = mujoco.MjModel.from_xml_path(str(xml)).opt.timestep
            best: dict[str, float] = {}
            for _ in range(args.repeats):  # rounds over every set, so noise hits all alike
                for label, reqs in SETS.items():
                    folder = Path(tmp) / f"{name}-{label.replace(' ', '_').replace('/', '_')}"
                    folder.mkdir(exist_ok=True)
                    us = timed(scenario(folder, xml, reqs, args.steps * dt), args.steps, dt)
                    best[label] = min(best.get(label, float("inf")), us)
            for label in SETS:
                extra = "" if label == "none" else f"{best[label] - best['none']:+.2f}"
                print(f"| {name} | {label} | {best[label]:.2f} | {extra} |")
        print("\n| model | requirements | check µs/step | of which reading the signals |\n| --- | --- | --- | --- |")
        for name in args.models:
            xml = model_path(name)
            for label, reqs in SETS.items():
                if not reqs:
                    continue
                rig = build_rig(load_target(str(scenario(Path(tmp), xml, reqs, 1.0))))
                rig.runtime.step(rig.model, rig.data)
                checks = rig.runtime.checks
                n = 20000
                total = min(timeit.repeat(checks.evaluate, number=n, repeat=5)) / n * 1e6
                read = min(timeit.repeat(checks.probe.read, number=n, repeat=5)) / n * 1e6
                print(f"| {name} | {label} | {total:.2f} | {read:.2f} |")


if __name__ == "__main__":
    main()
