"""How long the 3D view freezes when the app opens a large rig: dm_control's humanoid_CMU with
10 ideal springs between bodies.

The app's simulation thread holds the viewer's lock while it runs commands; while it holds it
the viewer cannot draw, so that time is the freeze a person sees. Opening runs through the same
calls the simulation thread makes (``Session.process_commands``), in two ways side by side:

- ``all under the lock``: every command inside the lock (how the viewer loop ran them before
  opening moved off the lock);
- ``off the lock``: the viewer loop's way now: ``process_commands(off_lock=True)`` first
  (outside the lock: opening compiles the new model while the view keeps drawing the old one),
  then ``process_commands()`` inside the lock.

Figures are ratios to one bare compile of the same model file (``MjModel.from_xml_path``),
measured in the same process, so they mean the same on a fast or a slow machine: opening
used to cost about two compiles plus the checks (the model was compiled once to check names,
once more with the rig); one build path compiles once.

    python benchmarks/open_freeze.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path

import mujoco

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_overhead import model_path, rig_loads, write_scenario  # noqa: E402

from mjrig import commands as C  # noqa: E402
from mjrig.session.kernel import Session  # noqa: E402


def bare_compile(xml: Path) -> float:
    gc.collect()
    t0 = time.perf_counter()
    mujoco.MjModel.from_xml_path(str(xml))
    return time.perf_counter() - t0


def open_rig(path: Path, *, off_lock: bool) -> tuple[float, float]:
    """(seconds under the lock, seconds in all) to open ``path`` in a fresh session."""
    gc.collect()  # the previous session's model is freed here, not inside the measurement
    s = Session()
    try:
        s.submit(C.OpenModel(str(path)))
        t0 = time.perf_counter()
        if off_lock:
            s.process_commands(off_lock=True)
        t1 = time.perf_counter()
        s.process_commands()
        t2 = time.perf_counter()
        assert s.model is not None and len(s.rm.loads) == 10, s.publish().messages
        return t2 - t1, t2 - t0
    finally:
        s.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    xml = model_path("humanoid_CMU")
    model = mujoco.MjModel.from_xml_path(str(xml))
    with tempfile.TemporaryDirectory() as tmp:
        scen = Path(tmp) / "humanoid_cmu_springs.toml"
        write_scenario(scen, xml, rig_loads(model, "body"), "off", Path(tmp) / "out.parquet")
        rows: dict[str, list[float]] = {
            "compile": [],
            "locked_before": [],
            "total_before": [],
            "locked_after": [],
            "total_after": [],
        }
        open_rig(scen, off_lock=True)  # warm caches (file system, imports)
        for _ in range(args.repeats):  # interleaved, so drift hits every row alike
            rows["compile"].append(bare_compile(xml))
            locked, total = open_rig(scen, off_lock=False)
            rows["locked_before"].append(locked)
            rows["total_before"].append(total)
            locked, total = open_rig(scen, off_lock=True)
            rows["locked_after"].append(locked)
            rows["total_after"].append(total)
    med = {k: statistics.median(v) for k, v in rows.items()}
    c = med["compile"]
    print(f"humanoid_CMU + 10 springs, {args.repeats} repeats (medians); one bare compile = {c * 1e3:.1f} ms")
    print(
        f"  open, all under the lock : view frozen {med['locked_before'] / c:5.2f} compiles "
        f"({med['locked_before'] * 1e3:.1f} ms), open in all {med['total_before'] / c:5.2f} compiles"
    )
    print(
        f"  open, compile off the lock: view frozen {med['locked_after'] / c:5.2f} compiles "
        f"({med['locked_after'] * 1e3:.1f} ms), open in all {med['total_after'] / c:5.2f} compiles"
    )


if __name__ == "__main__":
    main()
