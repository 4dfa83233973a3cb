"""The rig's own cost per step: ``RuntimeManager.step`` against a bare ``mujoco.mj_step`` on the
same model in the same process, best of many short blocks (a block's best is what the code
costs; the machine's noise only makes blocks slower). Rows are ``model/rig/recording`` with the
rigs of ``step_overhead.rig_loads`` and recording ``off`` or ``every`` (every group every step).

    python benchmarks/step_cost.py [cartpole/mixed/off cartpole/mixed/every humanoid/body/every]

Prints µs per step for the rig and the bare loop, their difference and ratio. Never a timed test.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import mujoco

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_overhead import model_path, rig_loads, write_scenario  # noqa: E402

from mjrig.headless import prepare  # noqa: E402
from mjrig.scenario.parse import load_scenario  # noqa: E402

BLOCKS, STEPS = 40, 300
"""Blocks timed for each loop, and steps in a block."""


def row(name: str, rig: str, recording: str) -> str:
    """One row: the rig's and the bare loop's best µs per step."""
    xml = model_path(name)
    with tempfile.TemporaryDirectory() as tmp:
        scenario, out = Path(tmp) / "rig.toml", Path(tmp) / "out.parquet"
        write_scenario(scenario, xml, rig_loads(mujoco.MjModel.from_xml_path(str(xml)), rig), recording, out)
        on = recording != "off"
        setup = prepare(load_scenario(scenario), out=out if on else None, duration=1.0, record=on)
        rm, m, d = setup.runtime, setup.model, setup.data
        bare_data = mujoco.MjData(m)
        rm.step(m, d)
        best_rig = best_bare = float("inf")
        for _ in range(BLOCKS):
            t = time.perf_counter()
            for _ in range(STEPS):
                rm.step(m, d)
            best_rig = min(best_rig, (time.perf_counter() - t) / STEPS)
            t = time.perf_counter()
            for _ in range(STEPS):
                mujoco.mj_step(m, bare_data)
            best_bare = min(best_bare, (time.perf_counter() - t) / STEPS)
        rm.close()
    return (
        f"| {name}/{rig}/{recording} | {best_rig * 1e6:.1f} | {best_bare * 1e6:.1f} | "
        f"{(best_rig - best_bare) * 1e6:.1f} | {best_bare / best_rig:.2f} |"
    )


def main() -> None:
    rows = sys.argv[1:] or ["cartpole/mixed/off", "cartpole/mixed/every", "humanoid/body/every"]
    print("| model/rig/recording | rig µs/step | bare µs/step | rig's own µs | bare / rig |")
    print("| --- | --- | --- | --- | --- |")
    for spec in rows:
        print(row(*spec.split("/")), flush=True)


if __name__ == "__main__":
    main()
