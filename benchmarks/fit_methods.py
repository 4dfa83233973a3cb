"""``mjrig fit``'s two solvers on the same benches: scipy's ``least_squares`` (trust-region
reflective, the default) and MuJoCo's ``minimize.least_squares`` (Levenberg-Marquardt), through
``run_fit`` as users run it (``method=``), on local workers, in lock-step (the default) and with
every evaluation a trial on the worker processes (``lockstep=False``). Prints, per bench, solver
and path, the evaluations, the wall time, its ratio to the default's, and the estimate's error
against the truth.

    python benchmarks/fit_methods.py [--workers 2]

Never a timed test: it prints figures (BENCHMARKS.md keeps them).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the tests' bench, as the tests import it
from tests.unit.test_measured import CSV_ENTRY, C, K, csv_bench, scenario  # noqa: E402

FIT = """[fit]
params = { k = { low = 50.0, high = 2000.0 }, c = { low = 0.01, high = 50.0, log = true } }
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    from mjrig.campaign.fit import run_fit
    from mjrig.scenario.parse import load_scenario

    print(
        f"{'bench':25} {'solver':7} {'path':9} {'evaluations':>11} {'wall s':>7} {'/ trf':>6} {'k error':>8} "
        f"{'c error':>8}"
    )
    with tempfile.TemporaryDirectory() as folder:  # warm-up: imports, the compiled laws, the pool's first fork
        csv_bench(Path(folder), noise=0.05, seed=1)
        sc = load_scenario(scenario(Path(folder), CSV_ENTRY, k=K, c=C, extra=FIT))
        for lockstep in (True, False):
            run_fit(sc, out=Path(folder) / f"{lockstep}.parquet", workers=args.workers, lockstep=lockstep)
    for label, start in (("spring-mass, 2.5x off", (K / 2.5, C * 2.5)), ("spring-mass, 4x off", (K * 4, C / 4))):
        base = None
        for method, lockstep in (("trf", True), ("trf", False), ("mujoco", True), ("mujoco", False)):
            with tempfile.TemporaryDirectory() as folder:
                folder = Path(folder)
                csv_bench(folder, noise=0.05, seed=1)
                sc = load_scenario(scenario(folder, CSV_ENTRY, k=start[0], c=start[1], extra=FIT))
                t = time.perf_counter()
                out = run_fit(sc, out=folder / "FIT.parquet", workers=args.workers, method=method, lockstep=lockstep)
                wall = time.perf_counter() - t
            base = base or wall
            est = out.summary["estimate"]
            path = "lock-step" if lockstep else "processes"
            print(
                f"{label:25} {method:7} {path:9} {out.evaluations:11d} {wall:7.2f} {wall / base:6.2f} "
                f"{est['k'] / K - 1:+8.1e} {est['c'] / C - 1:+8.1e}{'' if out.converged else ' (not converged)'}"
            )


if __name__ == "__main__":
    main()
