"""``mjrig run``: a scenario headless, its recording, video, report and metrics, and the exit
status (0; 4 when a requirement failed; 130/143 when stopped; 5 when the recording could not be
written); ``mjrig check`` (a scenario validated, not run) and ``mjrig models`` (the bundled rigs)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mjrig.cli.arguments import assignment, seconds
from mjrig.runtime.errors import (
    CHECK_FAILED,
    OUTPUT_FAILED,
    DivergenceError,
    KeptAside,
    OutputError,
    Terminated,
    one_line,
    output_fault,
)
from mjrig.runtime.files.paths import cli_path

if TYPE_CHECKING:
    from mjrig.headless import RunSetup
    from mjrig.runtime.analysis.requirements import Requirement

__all__ = ["COMMANDS", "add_parsers", "run", "check", "models", "warn"]

COMMANDS = ("run", "check", "models")

TARGET_HELP = "a scenario .toml, a model .xml/.urdf/.mjb or a bundled rig's name"


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add ``run``, ``check`` and ``models`` to ``sub``, the ``mjrig`` parser's subparsers; their handlers."""
    r = sub.add_parser("run", help="run a scenario, a bare model or a bundled rig headless and record it")
    r.add_argument("scenario", metavar="TARGET", help=TARGET_HELP)
    r.add_argument("--duration", type=seconds, help="simulated seconds (overrides the scenario)")
    r.add_argument("--out", type=cli_path, help="Parquet output (overrides the scenario)")
    r.add_argument("--video", type=cli_path, help="video output, .mp4 or .gif (overrides the scenario)")
    r.add_argument(
        "--set",
        dest="params",
        action="append",
        default=[],
        type=assignment,
        metavar="NAME=VALUE",
        help="override a param's value (repeatable); clamped to its [min, max]",
    )
    r.add_argument("--report", type=cli_path, metavar="REPORT.json", help="write the requirements' results as JSON")
    r.add_argument("--metrics", type=cli_path, metavar="METRICS.json", help="write the metrics' values as JSON")
    r.add_argument("--junit", type=cli_path, metavar="OUT.xml", help="write the requirements' results as JUnit XML")
    c = sub.add_parser("check", help="validate a scenario without running it")
    c.add_argument("scenario", metavar="TARGET", help=TARGET_HELP)
    c.add_argument(
        "--junit", type=cli_path, metavar="OUT.xml", help="when valid, write one passed JUnit test per requirement"
    )
    sub.add_parser("models", help="list the bundled models")
    return {"run": run, "check": check, "models": models}


def run(args: argparse.Namespace) -> int:
    """``mjrig run TARGET [--duration] [--out] [--video] [--set NAME=VALUE] [--report] [--metrics] [--junit]``."""
    started = time.monotonic()
    from mjrig.headless import prepare, run, write_metrics, write_report
    from mjrig.progress import EncodingBar, SimulationBar
    from mjrig.runtime.files.out_lock import check_outputs_apart
    from mjrig.runtime.files.paths import check_writable
    from mjrig.scenario.inputs import scenario_inputs
    from mjrig.scenario.targets import load_target

    sc = load_target(args.scenario)
    report = args.report.resolve() if args.report else None
    metrics = args.metrics.resolve() if args.metrics else None
    junit = args.junit.resolve() if args.junit else None
    check_outputs_apart(
        {"--out": args.out, "--video": args.video, "--report": report, "--metrics": metrics, "--junit": junit},
        {**scenario_inputs(sc), "the recording of this run": None if args.out else sc.recording.path},
    )
    for path, flag in ((metrics, "--metrics"), (junit, "--junit")):
        if path is not None:
            check_writable(path, flag)
    setup = prepare(
        sc,
        out=args.out.resolve() if args.out else None,
        duration=args.duration,
        video=args.video.resolve() if args.video else None,
        params=dict(args.params),
        report=report,
        on_warning=warn,
    )
    encoding = [EncodingBar() for _ in setup.runtime.video_recorders]
    for rec, frames_bar in zip(setup.runtime.video_recorders, encoding):
        rec.on_progress = frames_bar
    try:
        with SimulationBar(setup.duration) as bar:
            run(setup, progress=bar.update)
    except DivergenceError as exc:
        undecided = _undecided(setup)
        _say_failed(r for r in setup.runtime.requirements if r.first_violation is not None)  # before it blew up
        if report is not None:  # what was decided before the physics blew up
            write_report(report, setup.runtime.finish_requirements())
        if metrics is not None:  # over the steps before it
            write_metrics(metrics, setup.runtime)
        if junit is not None:
            why = f"the physics diverged: {one_line(str(exc))}"
            _write_junit(junit, setup, started, unfinished=why, undecided=undecided)
        raise
    except OutputError as exc:  # disk full...: stepping stopped, the recorders were closed on the way out
        sm = setup.runtime.signal_manager
        if isinstance(exc, KeptAside):  # the file could not be finished: the line says where the rows are
            print(f"mjrig: {one_line(str(exc))}", file=sys.stderr)
            return OUTPUT_FAILED
        kept = (
            f"kept {sm.rows_written} rows in {setup.out}, a valid file"
            if sm is not None and setup.out and setup.out.is_file()
            else "nothing was recorded"
        )
        print(f"mjrig: {one_line(str(exc))}; {kept}: {output_fault(exc).advice('run again')}", file=sys.stderr)
        return OUTPUT_FAILED
    except KeyboardInterrupt as exc:  # SIGINT or SIGTERM: the recorders were closed on the way out
        if metrics is not None:
            write_metrics(metrics, setup.runtime)
        if junit is not None:
            how = "stopped (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
            why = f"the run was {how} at t = {setup.data.time:.6g} s"
            _write_junit(junit, setup, started, unfinished=why, undecided=_undecided(setup))
        return _stopped(setup, exc, report)
    finally:
        for ebar in encoding:
            ebar.close()
    if report is not None:
        write_report(report, setup.runtime.requirements)
    if metrics is not None:
        write_metrics(metrics, setup.runtime)
    if junit is not None:
        _write_junit(junit, setup, started)
    sm = setup.runtime.signal_manager
    if sm is not None and sm.error:
        print(f"mjrig: recording stopped: {sm.error}", file=sys.stderr)
        return 1
    if setup.out is not None:
        print(f"wrote {sm.rows_recorded if sm else 0} rows to {setup.out}", file=sys.stderr)
    for rec in setup.runtime.video_recorders:
        print(f"wrote {rec.frames_written} frames to {rec.path}", file=sys.stderr)
    if report is not None:
        print(f"wrote {len(setup.runtime.requirements)} requirement results to {report}", file=sys.stderr)
    if metrics is not None:
        print(f"wrote {len(setup.runtime.metrics)} metrics to {metrics}", file=sys.stderr)
    if junit is not None:
        print(f"wrote {len(setup.runtime.requirements)} JUnit tests to {junit}", file=sys.stderr)
    return _requirements_verdict(setup)


def _undecided(setup: RunSetup) -> list[str]:
    """The names of the requirements whose window is still open (not decided yet)."""
    return [r.name for r in setup.runtime.requirements if not r.decided]


def _write_junit(
    path: Path, setup: RunSetup, started: float, *, unfinished: str | None = None, undecided: Iterable[str] = ()
) -> None:
    """``--junit``: the requirements as decided now, one JUnit test each (``exports.junit``);
    ``started``: ``time.monotonic()`` (s) when the command began, so the suite's time is the
    command's wall time so far; ``unfinished``: why the run did not finish, while the
    requirements ``undecided`` were still open."""
    from mjrig.exports.junit import requirement_cases, scenario_name, write_junit

    rm = setup.runtime
    name = scenario_name(setup.scenario)
    cases = requirement_cases(
        rm.finish_requirements() if unfinished else rm.requirements,
        classname=name,
        units=rm.checks.value_units() if rm.checks is not None else {},
        unfinished=unfinished,
        undecided=set(undecided),
    )
    write_junit(path, cases, suite=f"mjrig run {name}", seconds=time.monotonic() - started)


def _stopped(setup: RunSetup, exc: KeyboardInterrupt, report: Path | None) -> int:
    """A run stopped by SIGINT/SIGTERM: one line naming what was kept; exit 130 or 143."""
    if report is not None:
        from mjrig.headless import write_report

        write_report(report, setup.runtime.finish_requirements())
    sm = setup.runtime.signal_manager
    kept = [f"{sm.rows_recorded} rows in {sm.export_path or setup.out}"] if sm is not None and setup.out else []
    kept += [f"{rec.frames_written} frames in {rec.path}" for rec in setup.runtime.video_recorders]
    how = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
    print(
        f"mjrig: {how} at t = {setup.data.time:.6g} s of {setup.duration:g} s"
        + (f"; kept {' and '.join(kept)}" if kept else ""),
        file=sys.stderr,
    )
    return 143 if isinstance(exc, Terminated) else 130


def _requirements_verdict(setup: RunSetup) -> int:
    """One stderr line per failed requirement (and for an early stop); the exit status."""
    reqs = setup.runtime.requirements
    if setup.stopped_at is not None:
        print(f"mjrig: a requirement's stop_on ended the run at t = {setup.stopped_at:.6g} s", file=sys.stderr)
    failed = [r for r in reqs if not r.passed]
    _say_failed(failed)
    if reqs:
        print(f"requirements: {len(reqs) - len(failed)} passed, {len(failed)} failed", file=sys.stderr)
    return CHECK_FAILED if failed else 0


def _say_failed(failed: Iterable[Requirement]) -> None:
    """One stderr line per failed requirement: what was seen against which limit, and when."""
    for r in failed:
        seen = "nothing observed in its window" if r.value is None else f"{r.value:.6g} against limit {r.limit:.6g}"
        when = "" if r.first_violation is None else f", first at t = {r.first_violation:.6g} s"
        print(f"mjrig: requirement '{r.name}' failed: {r.signal} {seen}{when}", file=sys.stderr)


def warn(text: str) -> None:
    """A rig's warning (e.g. a control clamped to its ctrlrange): one stderr line."""
    from mjrig.progress import say

    say(f"mjrig: warning: {one_line(text)}")


def check(args: argparse.Namespace) -> int:
    """``mjrig check TARGET [--junit OUT.xml]``: the scenario built (model compiled, rig resolved),
    not run; ``--junit`` is written only when it is valid (bad input writes nothing, exit 2)."""
    from mjrig.headless import prepare
    from mjrig.model_info import describe_model, summary
    from mjrig.runtime.files.out_lock import check_outputs_apart
    from mjrig.runtime.files.paths import check_writable
    from mjrig.scenario.inputs import scenario_inputs
    from mjrig.scenario.targets import load_target

    started = time.monotonic()
    sc = load_target(args.scenario)
    junit = args.junit.resolve() if getattr(args, "junit", None) else None
    if junit is not None:
        check_outputs_apart({"--junit": junit}, scenario_inputs(sc))
        check_writable(junit, "--junit", create=False)  # no folder made before the scenario is known valid
    setup = prepare(sc, record=False, on_warning=warn)
    parts = [
        f"{len(x)} {what if len(x) != 1 else one}"
        for x, one, what in (
            (sc.loads, "load", "loads"),
            (sc.proximities, "proximity", "proximities"),
            (sc.params, "param", "params"),
            (sc.controls, "control", "controls"),
            (sc.tracers, "tracer", "tracers"),
            (sc.requirements, "requirement", "requirements"),
            (sc.metrics, "metric", "metrics"),
        )
        if x or what in ("loads", "params")
    ]
    if junit is not None:
        from mjrig.exports.junit import checked_cases, scenario_name, write_junit

        check_writable(junit, "--junit")  # valid: its folder is made now
        name = scenario_name(sc)
        cases = checked_cases(sc.requirements, classname=name)
        write_junit(junit, cases, suite=f"mjrig check {name}", seconds=time.monotonic() - started)
    print(
        f"{args.scenario}: ok ({', '.join(parts)}; model {sc.model.name}: "
        f"{summary(describe_model(setup.model, path=sc.model))})"
    )
    if junit is not None:
        print(f"wrote {len(sc.requirements)} JUnit tests to {junit}", file=sys.stderr)
    return 0


def models(args: argparse.Namespace) -> int:
    """``mjrig models``: each bundled rig's name, its description and its scenario's path."""
    import textwrap

    from mjrig.scenario.bundled import bundled_models

    rows = bundled_models()
    indent = " " * (max((len(m.name) for m in rows), default=0) + 2)
    for m in rows:  # 80 columns: the name, its description wrapped beside it, the scenario's path below
        text = textwrap.fill(
            m.description or "(no description)",
            width=80,
            initial_indent=indent,
            subsequent_indent=indent,
            break_on_hyphens=False,
        )
        print(m.name + text[len(m.name) :])
        print(f"{indent}{m.scenario}")
    return 0
