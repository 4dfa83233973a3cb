"""The campaign commands (``mjrig sweep``, ``mjrig optimize``, ``mjrig fit``): their arguments,
progress on stderr, what was written, and for a study the ``best:`` line on stdout (exit 4 when
no trial was feasible)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mjrig.cli.arguments import count as whole_number
from mjrig.cli.arguments import seconds
from mjrig.runtime.errors import CHECK_FAILED, Terminated
from mjrig.runtime.files.paths import cli_path

if TYPE_CHECKING:
    from pathlib import Path

    from mjrig.scenario.parse import Scenario

__all__ = ["COMMANDS", "add_parsers", "sweep", "optimize", "fit"]

COMMANDS = ("sweep", "optimize", "fit")


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add ``sweep``, ``optimize`` and ``fit`` to ``sub``, the ``mjrig`` parser's subparsers; their handlers."""
    for name, section, out, help_, trials in (
        (
            "sweep",
            "[sweep]",
            "RESULTS.parquet",
            "run a scenario's [sweep] as many trials (locally or on Ray), resumable",
            "trials per grid point",
        ),
        (
            "optimize",
            "[optimize]",
            "STUDY.parquet",
            "search a scenario's [optimize] params for the best objective, resumable",
            "evaluations in all",
        ),
    ):
        c = sub.add_parser(name, help=help_)
        c.add_argument("scenario", metavar="SCENARIO.toml", help=f"a scenario with a {section} section")
        c.add_argument("--out", type=cli_path, required=True, metavar=out, help="one row per finished trial")
        c.add_argument("--workers", type=whole_number(1), help="local cores (default: every core)")
        c.add_argument("--ray", metavar="ADDRESS", help="run the trials on a Ray cluster: 'auto' or HOST:PORT")
        c.add_argument("--trials", type=whole_number(1), help=f"{trials} (overrides {section} trials)")
        c.add_argument("--seed", type=whole_number(0), help=f"the seed (overrides {section} seed)")
        if name == "sweep":
            c.add_argument("--duration", type=seconds, help="simulated seconds of each trial (overrides the scenario)")
            c.add_argument(
                "--junit",
                type=cli_path,
                metavar="OUT.xml",
                help="write each trial's requirements as JUnit XML tests, its params as their properties",
            )
    f = sub.add_parser("fit", help="estimate a scenario's [fit] params from its [[measured]] data, resumable")
    f.add_argument("scenario", metavar="SCENARIO.toml", help="a scenario with [[measured]] data and a [fit] section")
    f.add_argument("--out", type=cli_path, required=True, metavar="FIT.parquet", help="one row per evaluated point")
    f.add_argument("--workers", type=whole_number(1), help="local cores (default: every core)")
    f.add_argument("--ray", metavar="ADDRESS", help="run the evaluations on a Ray cluster: 'auto' or HOST:PORT")
    f.add_argument(
        "--write-model",
        type=cli_path,
        metavar="OUT.xml",
        help="write a copy of the MJCF whose model-bound params carry their estimates",
    )
    return {"sweep": sweep, "optimize": optimize, "fit": fit}


def sweep(args: argparse.Namespace) -> int:
    """``mjrig sweep``: run the sweep with a progress bar; one line saying what was written
    (``--junit``: the results as JUnit XML too, once every trial ran)."""
    from mjrig.campaign.sweep import run_sweep
    from mjrig.progress import SweepBar
    from mjrig.runtime.files.paths import check_writable
    from mjrig.scenario.targets import load_target

    began = time.monotonic()
    sc = load_target(args.scenario)
    _apart(args, sc)
    junit = args.junit.resolve() if getattr(args, "junit", None) else None
    if junit is not None:
        check_writable(junit, "--junit")
    count = _Count()
    try:
        with SweepBar() as bar:

            def started(total: int, done: int) -> None:
                count.start(total, done)
                bar.start(total, done)
                if done:
                    print(f"resuming: {done} of {total} trials already done, running {total - done}", file=sys.stderr)

            outcome = run_sweep(
                sc,
                out=args.out.resolve(),
                workers=args.workers,
                ray=args.ray,
                trials=args.trials,
                seed=args.seed,
                duration=args.duration,
                progress=count.then(bar.update),
                on_start=started,
            )
    except KeyboardInterrupt as exc:
        from mjrig.campaign.sweep import parts_dir

        return count.stopped(exc, f"in {parts_dir(args.out.resolve())}")
    counts = ", ".join(f"{n} {s}" for s, n in outcome.counts.items() if n)
    print(f"wrote {outcome.total} trials to {outcome.path} ({counts}; ran {len(outcome.ran)} now)", file=sys.stderr)
    if junit is not None:
        _sweep_junit(junit, outcome.path, sc, began)
    return 0


def _sweep_junit(path: Path, results: Path, sc: Scenario, began: float) -> None:
    """``sweep --junit``: a JUnit test per trial and requirement of the ``results`` file, written
    to ``path``; ``began``: ``time.monotonic()`` (s) when the command began (the suite's time)."""
    from mjrig.campaign.results import SweepResults
    from mjrig.exports.junit import scenario_name, sweep_cases, write_junit

    opened = SweepResults.open(results)
    name = scenario_name(sc)
    cases = sweep_cases(opened.table.iter_rows(named=True), sc.requirements, classname=name, units=opened.units)
    write_junit(path, cases, suite=f"mjrig sweep {name}", seconds=time.monotonic() - began)
    print(f"wrote {len(cases)} JUnit tests to {path}", file=sys.stderr)


def optimize(args: argparse.Namespace) -> int:
    """``mjrig optimize``: run or continue the study with a progress bar; the ``best:`` line last
    (several objectives: the ``pareto:`` line, the front's trial numbers)."""
    from mjrig.campaign.optimize import run_optimize, study_paths
    from mjrig.progress import StudyBar
    from mjrig.scenario.targets import load_target

    sc = load_target(args.scenario)
    _apart(args, sc)
    count = _Count()
    try:
        with StudyBar() as bar:

            def started(total: int, done: int) -> None:
                count.start(total, done)
                bar.start(total, done)
                if done:
                    print(
                        f"resuming: {done} of {total} trials already done, running {max(0, total - done)}",
                        file=sys.stderr,
                    )

            outcome = run_optimize(
                sc,
                out=args.out.resolve(),
                workers=args.workers,
                ray=args.ray,
                trials=args.trials,
                seed=args.seed,
                progress=count.then(bar.update),
                on_start=started,
            )
    except KeyboardInterrupt as exc:
        return count.stopped(exc, f"in {study_paths(args.out.resolve())[0]}")
    print(f"wrote {outcome.total} trials to {outcome.path} (ran {outcome.ran} now)", file=sys.stderr)
    for line in outcome.warnings:
        print(f"mjrig: warning: {line}", file=sys.stderr)
    if outcome.multi:
        if outcome.hypervolume:
            print(f"hypervolume of the front: {outcome.hypervolume}", file=sys.stderr)
        if not outcome.pareto:
            print("no feasible trial")
            return CHECK_FAILED
        print(f"pareto: {len(outcome.pareto)} trials: {', '.join(str(n) for n in outcome.pareto)}")
        return 0
    best = outcome.best
    if best is None:
        print("no feasible trial")
        return CHECK_FAILED
    print(f"wrote the best set-up to {outcome.best_path}", file=sys.stderr)
    params = ", ".join(f"{n} = {best[f'Params/{n}:value']:.6g}" for n in sc.optimize.params)
    unit = f" {outcome.unit}" if outcome.unit else ""
    print(f"best: trial {best['trial']}, {outcome.objective} = {best['objective']:.6g}{unit}, {params}")
    return 0


def fit(args: argparse.Namespace) -> int:
    """``mjrig fit``: estimate the params (a bar of evaluations); the ``fit:`` line last (exit 4
    when the estimate did not converge or is not identified: ``campaign.fit_verdict``)."""
    from mjrig.campaign.fit import run_fit
    from mjrig.campaign.sweep import parts_dir
    from mjrig.progress import WorkBar
    from mjrig.runtime.telemetry.units import DisplayUnits
    from mjrig.scenario.targets import load_target

    sc = load_target(args.scenario)
    _apart(args, sc)
    written = getattr(args, "write_model", None)
    if written is not None:
        from mjrig.exports.fitted_model import check_model_output

        check_model_output(sc, written, fitted=sc.fit.params if sc.fit is not None else ())
    bar = WorkBar("fitting", unit="evaluations")
    done = [0]

    def step(n: int, cost: float) -> None:
        done[0] = n
        bar(n, max(n, 1))

    try:
        with bar:
            outcome = run_fit(sc, out=args.out.resolve(), workers=args.workers, ray=args.ray, progress=step)
    except KeyboardInterrupt as exc:
        how = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
        print(
            f"mjrig: {how} after {done[0]} evaluations; they are kept in {parts_dir(args.out.resolve())}: "
            "run the same command again to go on from them",
            file=sys.stderr,
        )
        return 143 if isinstance(exc, Terminated) else 130
    s = outcome.summary
    reused = f", {outcome.reused} from the earlier run" if outcome.reused else ""
    print(f"wrote {outcome.evaluations} evaluations to {outcome.path}{reused}", file=sys.stderr)
    print(f"wrote the estimate as a scenario to {outcome.best_path}", file=sys.stderr)
    if not outcome.converged:
        if written is not None:
            print(f"mjrig: {written} was not written: the fit did not converge", file=sys.stderr)
        print(f"fit: did not converge ({s['message']})")
        return CHECK_FAILED
    if written is not None:
        from mjrig.exports.fitted_model import write_fitted_model

        print(f"wrote the fitted model to {write_fitted_model(sc, s, out=written)}", file=sys.stderr)
    if not outcome.identified:
        from mjrig.campaign.fit_verdict import said_once

        print(f"fit: not identified ({'; '.join(said_once(s['reasons']))})")
        return CHECK_FAILED
    shown = sc.units if sc.units is not None else DisplayUnits()
    parts = []
    for n in s["params"]:  # the estimate with its 95 % interval, labelled (CONTRACT 14)
        unit = f" {s['units'][n].replace('*', '·')}" if s["units"][n] else ""
        low, high = s["ci95"][n]
        parts.append(f"{n} = {s['estimate'][n]:.6g}{unit}, 95 % interval {low:.6g} … {high:.6g}")
    checked = s.get("validation")
    validation = f"; validation rms error {_rms_text(checked['rms'], s, shown)}" if checked else ""
    print(f"fit: {'; '.join(parts)}; rms error {_rms_text(s['rms'], s, shown)}{validation}")
    return 0


def _rms_text(rms: dict[str, dict[str, float]], s: dict, shown: Any) -> str:
    """The RMS errors of ``rms`` (experiment -> signal -> SI), each signal's over its
    experiments, in the units the scenario shows: "0.05 mm" or "0.05 mm (A), 0.2 N (B)"."""
    errors: dict[str, list[float]] = {}
    for per in rms.values():
        for sig, v in per.items():
            errors.setdefault(sig, []).append(v)
    return ", ".join(
        shown.text(float((sum(x * x for x in v) / len(v)) ** 0.5), s["signal_units"].get(sig, ""), fmt=".3g")
        + (f" ({sig})" if len(errors) > 1 else "")
        for sig, v in errors.items()
    )


def _apart(args: argparse.Namespace, sc: Scenario) -> None:
    """ConfigError (exit 2, one line) when ``--out`` (or ``--write-model``, ``--junit``) is one of
    the scenario's inputs or another output."""
    from mjrig.runtime.files.out_lock import check_outputs_apart
    from mjrig.scenario.inputs import scenario_inputs

    outputs = {
        "--out": args.out,
        "--write-model": getattr(args, "write_model", None),
        "--junit": getattr(args, "junit", None),
    }
    check_outputs_apart(outputs, scenario_inputs(sc))


class _Count:
    """Trials done so far in a campaign, to say what an interruption kept."""

    def __init__(self) -> None:
        self.total, self.done = 0, 0

    def start(self, total: int, done: int) -> None:
        self.total, self.done = total, done

    def then(self, progress: Callable[..., None]) -> Callable[..., None]:
        """``progress``, counting each finished trial first."""

        def counted(*args: object) -> None:
            self.done += 1
            progress(*args)

        return counted

    def stopped(self, exc: KeyboardInterrupt, where: str) -> int:
        """One line for Ctrl+C or SIGTERM: what was kept and how to go on; exit 130 or 143."""
        how = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
        print(
            f"mjrig: {how} after {self.done} of {self.total} trials; the finished ones are kept {where}: "
            f"run the same command again to run the other {max(0, self.total - self.done)}",
            file=sys.stderr,
        )
        return 143 if isinstance(exc, Terminated) else 130
