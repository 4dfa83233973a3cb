"""The campaign commands of the CLI (``mjrig sweep``, ``mjrig optimize``): progress on stderr,
what was written, and for a study the ``best:`` line on stdout (exit 4 when no trial was feasible)."""
from __future__ import annotations

import argparse
import sys

from mjrig.runtime.errors import CHECK_FAILED

__all__ = ["sweep", "optimize"]


def sweep(args: argparse.Namespace) -> int:
    """``mjrig sweep``: run the sweep with a progress bar; one line saying what was written."""
    from mjrig.progress import SweepBar
    from mjrig.campaign.sweep import run_sweep
    from mjrig.scenario.targets import load_target
    sc = load_target(args.scenario)
    with SweepBar() as bar:
        def started(total: int, done: int) -> None:
            bar.start(total, done)
            if done:
                print(f"resuming: {done} of {total} trials already done, running {total - done}", file=sys.stderr)
        outcome = run_sweep(sc, out=args.out.resolve(), workers=args.workers, ray=args.ray, trials=args.trials,
                            seed=args.seed, duration=args.duration, progress=bar.update, on_start=started)
    counts = ", ".join(f"{n} {s}" for s, n in outcome.counts.items() if n)
    print(f"wrote {outcome.total} trials to {outcome.path} ({counts}; ran {len(outcome.ran)} now)", file=sys.stderr)
    return 0


def optimize(args: argparse.Namespace) -> int:
    """``mjrig optimize``: run or continue the study with a progress bar; the ``best:`` line last."""
    from mjrig.campaign.optimize import run_optimize
    from mjrig.progress import StudyBar
    from mjrig.scenario.targets import load_target
    sc = load_target(args.scenario)
    with StudyBar() as bar:
        def started(total: int, done: int) -> None:
            bar.start(total, done)
            if done:
                print(f"resuming: {done} of {total} trials already done, running {max(0, total - done)}",
                      file=sys.stderr)
        outcome = run_optimize(sc, out=args.out.resolve(), workers=args.workers, ray=args.ray, trials=args.trials,
                               seed=args.seed, progress=bar.update, on_start=started)
    print(f"wrote {outcome.total} trials to {outcome.path} (ran {outcome.ran} now)", file=sys.stderr)
    best = outcome.best
    if best is None:
        print("no feasible trial")
        return CHECK_FAILED
    print(f"wrote the best set-up to {outcome.best_path}", file=sys.stderr)
    params = ", ".join(f"{n} = {best[f'Params/{n}:value']:.6g}" for n in sc.optimize.params)  # type: ignore[union-attr]
    unit = f" {outcome.unit}" if outcome.unit else ""
    print(f"best: trial {best['trial']}, {outcome.objective} = {best['objective']:.6g}{unit}, {params}")
    return 0
