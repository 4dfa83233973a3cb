"""Sweep throughput and memory: trials per second with 1 and 2 local workers and on a local Ray head.

Two rigs, each trial 1 s of simulated time: the bundled spring-mass (k swept, mass drawn from a
normal) and dm_control's humanoid with 10 body-to-body springs (gravity drawn from a uniform).
Each figure is the whole ``run_sweep`` call: starting the workers, building the rig once in each,
the trials, logging each row and merging them. The forkserver the worker processes fork from
starts once per process, with its first pool: a 4-trial sweep first says what that costs. Then the peak resident memory of a sweep
of short trials (driver and workers, each measured in a fresh process) at 250 and 1000 trials.

Last, each rig's 2-worker sweep in steps per second against MuJoCo's own limit on the same
compiled model (the rig's springs as MuJoCo tendons): for the spring-mass, ``mujoco.rollout``
with 2 threads stepping as many 1 s trials; for the humanoid, twice a plain ``mj_step`` loop on
one core.

    python benchmarks/sweep_scaling.py [--trials 300] [--no-ray] [--limits-only]

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
from typing import Any

import mujoco

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from step_overhead import model_path, rig_loads, toml_value  # noqa: E402

from tests.sweep_util import ray_env, write_scenario  # noqa: E402

SPRING_SWEEP = (
    "[sweep]\nseed = 1\n[sweep.params]\nk = { range = [100.0, 400.0], steps = 4 }\n"
    'mass = { distribution = "normal", mean = 1.0, std = 0.05 }\n'
)


def humanoid_scenario(folder: Path) -> Path:
    xml = model_path("humanoid")
    loads = rig_loads(mujoco.MjModel.from_xml_path(str(xml)), "body")
    lines = [
        f"model = {toml_value(str(xml))}",
        "",
        "[simulation]",
        "duration = 1.0",
        "",
        "[params]",
        'g = { value = -9.81, model = "opt.gravity_z" }',
        "",
    ]
    for i, load in enumerate(loads):
        lines += ["[[loads]]", f'name = "spring{i}"'] + [f"{k} = {toml_value(v)}" for k, v in load.items()] + [""]
    lines += ["[sweep]", "seed = 1", "[sweep.params]", 'g = { distribution = "uniform", low = -10.0, high = -9.6 }']
    path = folder / "humanoid_sweep.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def timed(path: Path, out: Path, *, trials: int, quiet: bool = False, **how) -> float:
    """Trials per second of one whole sweep of ``trials`` trials."""
    from mjrig.campaign.sweep import run_sweep
    from mjrig.scenario.parse import load_scenario

    sc = load_scenario(path)
    per_point = max(1, trials // sc.sweep.points)
    cpu0, t0 = time.process_time(), time.perf_counter()
    outcome = run_sweep(sc, out=out, trials=per_point, **how)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    if (how.get("workers", 0) > 1 or "ray" in how) and not quiet:
        print(f"    (driver CPU {1000 * cpu / outcome.total:.2f} ms per trial)")
    return outcome.total / wall


def _own_springs(rig: Any) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """The rig's model with its springs as MuJoCo's own tendon spring-dampers (stiffness,
    damping, rest length of each law at t = 0), for MuJoCo alone to step: what the springs
    cost MuJoCo itself, whichever helpers the rig compiled with (``rigmodel``)."""
    from mjrig.runtime.rigmodel import compile_rig, load_spec

    loads = [ld for ld in rig.runtime.loads if ld.is_point_to_point]
    model, layout = compile_rig(load_spec(rig.scenario.model), loads, tendons=True)
    for ld in loads:
        ref, _, k, c, *_ = ld.law.coefficients(ld.r0, 0.0)
        t = layout.helper_of[ld.name]
        model.tendon_stiffness[t], model.tendon_damping[t] = k, c
        model.tendon_lengthspring[t] = ref, ref
    model.opt.timestep = rig.model.opt.timestep
    return model, mujoco.MjData(model)


def physics_limit(path: Path, trials: int, *, threads: bool) -> tuple[float, int]:
    """(steps/s, steps per trial) of MuJoCo alone on the rig's compiled model: ``mujoco.rollout``
    with 2 threads over ``trials`` trials of 1 s (``threads``), or 2 x a plain ``mj_step`` loop."""
    import numpy as np
    from mujoco import rollout

    from mjrig.scenario.builder import build_rig
    from mjrig.scenario.parse import load_scenario

    rig = build_rig(load_scenario(path))
    model, data = _own_springs(rig)
    steps = int(round(1.0 / model.opt.timestep))
    if threads:
        mujoco.mj_resetData(model, data)
        spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        state = np.empty(mujoco.mj_stateSize(model, spec))
        mujoco.mj_getState(model, data, state, spec)
        initial = np.tile(state, (trials, 1))
        datas = [mujoco.MjData(model) for _ in range(2)]
        with rollout.Rollout(nthread=2) as pool:
            pool.rollout(model, datas, initial[:2], nstep=steps)  # warm-up
            t = time.perf_counter()
            pool.rollout(model, datas, initial, nstep=steps)
            return trials * steps / (time.perf_counter() - t), steps
    d, runs = mujoco.MjData(model), max(1, trials // 20)
    t = time.perf_counter()
    for _ in range(runs):
        mujoco.mj_resetData(model, d)
        for _ in range(steps):
            mujoco.mj_step(model, d)
    return 2 * runs * steps / (time.perf_counter() - t), steps


def peak_memory(path: Path, out: Path, trials: int) -> tuple[float, float]:
    """(driver, largest worker) peak resident memory (MiB) of a 2-worker sweep of 0.01 s trials,
    from the VmHWM of every process of the sweep's session, polled while it runs."""
    code = (
        "import sys; from pathlib import Path; from mjrig.scenario.parse import load_scenario; "
        "from mjrig.campaign.sweep import run_sweep; sc = load_scenario(sys.argv[1]); "
        "run_sweep(sc, out=Path(sys.argv[2]), workers=2, trials=int(sys.argv[3]) // sc.sweep.points, duration=0.01)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(path), str(out), str(trials)], start_new_session=True)
    peak: dict[int, float] = {}
    while proc.poll() is None:
        for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
            try:
                if int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[3]) != proc.pid:
                    continue  # not in the sweep's session
                status = Path(f"/proc/{pid}/status").read_text()
            except (OSError, IndexError, ValueError):
                continue
            hwm = next((float(ln.split()[1]) / 1024 for ln in status.splitlines() if ln.startswith("VmHWM:")), 0.0)
            peak[pid] = max(peak.get(pid, 0.0), hwm)
        time.sleep(0.05)
    assert proc.returncode == 0
    driver = peak.pop(proc.pid, 0.0)
    return driver, max(peak.values(), default=0.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=300)
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--limits-only", action="store_true", help="only the 2-worker sweeps against MuJoCo's limit")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mjrig-sweep-bench-"))
    rigs = {"spring-mass, 1 s": write_scenario(tmp, SPRING_SWEEP), "humanoid + 10 springs, 1 s": humanoid_scenario(tmp)}
    print(f"load average before: {os.getloadavg()[0]:.1f} (other work on this machine takes cores too)")
    print(
        f"{os.cpu_count()} cores; {args.trials} trials per figure; whole run_sweep calls (start-up and merge included)"
    )
    rates: dict[tuple[str, str], float] = {}
    if args.limits_only:
        limits(rigs, tmp, args.trials)
        return
    t0 = time.perf_counter()  # the first pool of this process also starts the forkserver (once)
    timed(rigs["spring-mass, 1 s"], tmp / "warm-up.parquet", trials=4, workers=2, quiet=True)
    print(f"first 2-worker sweep of 4 trials (forkserver start, once per process): {time.perf_counter() - t0:.2f} s")
    for rig, path in rigs.items():
        for workers in (1, 2):
            rates[rig, f"{workers}"] = timed(
                path, tmp / f"{workers}-{path.stem}.parquet", trials=args.trials, workers=workers
            )
            print(f"{rig:28s} local, {workers} worker(s): {rates[rig, str(workers)]:8.1f} trials/s")
        print(f"{rig:28s} local scaling 2 vs 1 worker: {rates[rig, '2'] / rates[rig, '1']:.2f}x")
    if not args.no_ray:
        from tests.sweep_util import ray_head

        os.environ.update(ray_env())
        with ray_head() as address:
            for rig, path in rigs.items():
                rates[rig, "ray"] = timed(path, tmp / f"ray-{path.stem}.parquet", trials=args.trials, ray=address)
                extra_ms = 1000 * (1 / rates[rig, "ray"] - 1 / rates[rig, "2"])
                print(
                    f"{rig:28s} Ray head (2 CPUs):     {rates[rig, 'ray']:8.1f} trials/s; "
                    f"overhead vs 2 local workers {extra_ms:+.1f} ms per trial (connect included)"
                )
    for n in (250, 1000):
        me, kid = peak_memory(rigs["spring-mass, 1 s"], tmp / f"mem-{n}.parquet", n)
        print(f"peak memory, {n:4d} trials of 0.01 s, 2 workers: driver {me:6.1f} MiB, largest worker {kid:6.1f} MiB")
    limits(rigs, tmp, args.trials)
    print(f"(scratch files in {tmp})")


def limits(rigs: dict[str, Path], tmp: Path, trials: int) -> None:
    """Each rig's 2-worker sweep in steps/s against MuJoCo alone on the same compiled model."""
    timed(rigs["spring-mass, 1 s"], tmp / "warm-up.parquet", trials=4, workers=2, quiet=True)
    for (rig, path), threads in zip(rigs.items(), (True, False)):
        limit, steps = physics_limit(path, trials, threads=threads)
        sweep = timed(path, tmp / f"limit-{path.stem}.parquet", trials=trials, workers=2, quiet=True) * steps
        what = "mujoco.rollout, 2 threads" if threads else "2 x a plain mj_step loop"
        print(f"{rig:28s} 2 workers {sweep:10,.0f} steps/s; {what} {limit:10,.0f} steps/s; ratio {sweep / limit:.2f}")


if __name__ == "__main__":
    main()
