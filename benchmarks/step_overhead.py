"""Steps/s of the rig with 10 springs, without and with full recording, over a bare mj_step loop.

Runs all three side by side in one process on the same model (dm_control's humanoid, 27 DoF, by
default) and prints the ratios. Usage: python benchmarks/step_overhead.py [--model PATH] [--steps N]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import mujoco

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mjrig.runtime import PointToPointForce, RuntimeManager, SignalManager  # noqa: E402


def humanoid_path() -> Path:
    import dm_control
    return Path(dm_control.__file__).parent / "suite" / "humanoid.xml"


def springs(spec: mujoco.MjSpec) -> list[PointToPointForce]:
    """Ten springs from bodies of the model to points in the world above them."""
    bodies = [b.name for b in spec.bodies if b.name and b.name != "world"]
    out = []
    for i in range(10):
        body = bodies[(1 + 3 * i) % len(bodies)]
        out.append(PointToPointForce.ideal_spring(f"spring{i}", f"body:{body}@0.01,0,0",
                                                  f"body:world@{0.1 * i:.2f},0,2.5",
                                                  stiffness=50.0, damping=1.0, rest_length=1.0))
    return out


def bare(model: mujoco.MjModel, n: int) -> float:
    data = mujoco.MjData(model)
    t = time.perf_counter()
    for _ in range(n):
        mujoco.mj_step(model, data)
    return n / (time.perf_counter() - t)


def rig(path: Path, n: int, record: Path | None) -> float:
    spec = mujoco.MjSpec.from_file(str(path))
    sm = SignalManager(record) if record is not None else None
    rm = RuntimeManager(loads=springs(spec), signal_manager=sm, playback_speed=0.0)
    model, data = rm.load_model(spec)
    with rm:
        rm.step(model, data)
        t = time.perf_counter()
        for _ in range(n):
            rm.step(model, data)
        rate = n / (time.perf_counter() - t)
    return rate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    path = args.model or humanoid_path()
    model = mujoco.MjModel.from_xml_path(str(path))
    print(f"model {path.name}: nv={model.nv}, nbody={model.nbody}, {args.steps} steps x {args.repeats}")
    tmp = Path(tempfile.mkdtemp())
    best = {"bare": 0.0, "rig": 0.0, "rig+rec": 0.0}
    for r in range(args.repeats):
        b = bare(model, args.steps)
        s = rig(path, args.steps, None)
        out = tmp / f"rec{r}.parquet"
        s_rec = rig(path, args.steps, out)
        print(f"  run {r}: bare {b:9.0f}/s   rig {s:9.0f}/s ({s / b:.3f})   rig+record {s_rec:9.0f}/s ({s_rec / b:.3f})")
        best = {k: max(best[k], v) for k, v in (("bare", b), ("rig", s), ("rig+rec", s_rec))}
        os.remove(out)
    print(f"ratio rig/bare (10 springs, no recording):       {best['rig'] / best['bare']:.3f}   (target >= 0.75)")
    print(f"ratio rig+record/bare (every signal, every step): {best['rig+rec'] / best['bare']:.3f}   (target >= 0.50)")


if __name__ == "__main__":
    main()
