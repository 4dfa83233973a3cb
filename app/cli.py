"""The ``mjrig`` command: open the app, or run / check / recover / compare / list models headless.

Bad input exits 2 with one line on stderr; a diverging headless run exits 3; a failed check (a
requirement in ``run``, a tolerance in ``compare``) exits 4. No traceback reaches the user.
"""

from __future__ import annotations

import argparse
import errno
import math
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from mjrig.run_command import cmd_run, warn
from mjrig.runtime import mjwarnings
from mjrig.runtime.errors import (
    CHECK_FAILED,
    OUTPUT_FAILED,
    ClusterLost,
    ConfigError,
    DivergenceError,
    MjrigError,
    OutputError,
    Terminated,
    one_line,
)
from mjrig.runtime.files.paths import cli_path

__all__ = ["main", "terminate", "SUBCOMMANDS"]

_OUTPUT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO, errno.EFBIG}
"""OSErrors of an output that could not be written (exit 5)."""

SUBCOMMANDS = (
    "run",
    "check",
    "recover",
    "models",
    "compare",
    "sweep",
    "optimize",
    "fit",
    "report",
    "export",
    "plot",
    "modes",
    "bode",
)


class _ArgumentParser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        prog = self.prog.removeprefix("mjrig").strip()
        raise ConfigError(f"{prog}: {message}" if prog else message)


def _seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: '{text}'") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got '{text}'")
    return v


def _assignment(text: str) -> tuple[str, float]:
    """``NAME=VALUE`` of ``--set``: (name, finite number)."""
    name, eq, value = text.partition("=")
    if not eq or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got '{text}'")
    try:
        v = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name.strip()}: not a number: '{value}'") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"{name.strip()}: must be a finite number, got '{value}'")
    return name.strip(), v


def _tolerance(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: '{text}'") from None
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got '{text}'")
    return v


def _count(least: int):
    """An argparse type: a whole number >= ``least``."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: '{text}'") from None
        if v < least:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {least}, got '{text}'")
        return v

    return parse


def _parser() -> argparse.ArgumentParser:
    p = _ArgumentParser(prog="mjrig", description="A test rig for MuJoCo models.")
    sub = p.add_subparsers(dest="command", parser_class=_ArgumentParser)
    r = sub.add_parser("run", help="run a scenario, a bare model or a bundled rig headless and record it")
    r.add_argument("scenario", metavar="TARGET", help="a scenario .toml, a model .xml/.mjb or a bundled rig's name")
    r.add_argument("--duration", type=_seconds, help="simulated seconds (overrides the scenario)")
    r.add_argument("--out", type=cli_path, help="Parquet output (overrides the scenario)")
    r.add_argument("--video", type=cli_path, help="video output, .mp4 or .gif (overrides the scenario)")
    r.add_argument(
        "--set",
        dest="params",
        action="append",
        default=[],
        type=_assignment,
        metavar="NAME=VALUE",
        help="override a param's value (repeatable); clamped to its [min, max]",
    )
    r.add_argument("--report", type=cli_path, metavar="REPORT.json", help="write the requirements' results as JSON")
    r.add_argument("--metrics", type=cli_path, metavar="METRICS.json", help="write the metrics' values as JSON")
    c = sub.add_parser("check", help="validate a scenario without running it")
    c.add_argument("scenario", metavar="TARGET", help="a scenario .toml, a model .xml/.mjb or a bundled rig's name")
    rc = sub.add_parser("recover", help="rebuild a recording interrupted by a crash or kill")
    rc.add_argument("out", type=cli_path)
    sub.add_parser("models", help="list the bundled models")
    cmp = sub.add_parser("compare", help="compare two recordings signal by signal (exit 4 beyond tolerance)")
    cmp.add_argument("a", type=cli_path, metavar="A.parquet", help="the reference: its time base is used")
    cmp.add_argument("b", type=cli_path, metavar="B.parquet", help="interpolated linearly at A's times")
    cmp.add_argument(
        "--signals",
        action="append",
        default=[],
        metavar="PATTERN",
        help="glob on column names, e.g. 'Joints/*' (repeatable; default: every common signal)",
    )
    cmp.add_argument("--rtol", type=_tolerance, default=1e-6, help="relative tolerance (default 1e-6)")
    cmp.add_argument("--atol", type=_tolerance, default=1e-9, help="absolute tolerance (default 1e-9)")
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
        c.add_argument("--workers", type=_count(1), help="local cores (default: every core)")
        c.add_argument("--ray", metavar="ADDRESS", help="run the trials on a Ray cluster: 'auto' or HOST:PORT")
        c.add_argument("--trials", type=_count(1), help=f"{trials} (overrides {section} trials)")
        c.add_argument("--seed", type=_count(0), help=f"the seed (overrides {section} seed)")
        if name == "sweep":
            c.add_argument("--duration", type=_seconds, help="simulated seconds of each trial (overrides the scenario)")
    f = sub.add_parser("fit", help="estimate a scenario's [fit] params from its [[measured]] data, resumable")
    f.add_argument("scenario", metavar="SCENARIO.toml", help="a scenario with [[measured]] data and a [fit] section")
    f.add_argument("--out", type=cli_path, required=True, metavar="FIT.parquet", help="one row per evaluated point")
    f.add_argument("--workers", type=_count(1), help="local cores (default: every core)")
    f.add_argument("--ray", metavar="ADDRESS", help="run the evaluations on a Ray cluster: 'auto' or HOST:PORT")
    from mjrig.exports.commands import add_parsers

    add_parsers(sub)
    from mjrig.exports import linear

    linear.add_parsers(sub)
    return p


def _app_parser() -> argparse.ArgumentParser:
    p = _ArgumentParser(
        prog="mjrig", description="Open the mjrig desktop app (commands: " + ", ".join(SUBCOMMANDS) + ")."
    )
    p.add_argument(
        "path",
        nargs="?",
        help="an MJCF .xml, binary .mjb, scenario .toml, a bundled rig's name, "
        "a .parquet recording to replay, or a sweep's RESULTS.parquet to browse",
    )
    p.add_argument(
        "--compare",
        type=cli_path,
        metavar="OTHER.parquet",
        help="with a recording: overlay a second recording's signals (and a ghost of the same model)",
    )
    p.add_argument("--record", type=cli_path, metavar="OUT.parquet", help="record telemetry from the first step")
    p.add_argument("--exit-after", type=_seconds, metavar="SECONDS", help="close cleanly after SECONDS of wall time")
    p.add_argument(
        "--panel-process", action="store_true", help="run the control panel in its own process (always so on macOS)"
    )
    return p


def cmd_sweep(args: argparse.Namespace) -> int:
    from mjrig.campaign.commands import sweep

    return sweep(args)


def cmd_optimize(args: argparse.Namespace) -> int:
    from mjrig.campaign.commands import optimize

    return optimize(args)


def cmd_fit(args: argparse.Namespace) -> int:
    from mjrig.campaign.commands import fit

    return fit(args)


def cmd_check(args: argparse.Namespace) -> int:
    from mjrig.headless import prepare
    from mjrig.model_info import describe_model, summary
    from mjrig.scenario.targets import load_target

    sc = load_target(args.scenario)
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
    print(
        f"{args.scenario}: ok ({', '.join(parts)}; model {sc.model.name}: "
        f"{summary(describe_model(setup.model, path=sc.model))})"
    )
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from mjrig.recordings.compare import compare_recordings

    result = compare_recordings(args.a, args.b, signals=args.signals, rtol=args.rtol, atol=args.atol)
    for diff in result.signals:
        print(diff.line())
    if result.coverage is not None:
        print(f"mjrig: compare: {result.coverage}", file=sys.stderr)
    bad = sum(not d.within for d in result.signals)
    print(
        f"{len(result.signals) - bad} of {len(result.signals)} signals within tolerance "
        f"(rtol {args.rtol:g}, atol {args.atol:g})",
        file=sys.stderr,
    )
    return 0 if result.within else CHECK_FAILED


def cmd_recover(args: argparse.Namespace) -> int:
    import warnings

    from mjrig.runtime.files.out_lock import hold
    from mjrig.runtime.files.parquet_sink import recover

    with hold(args.out, what="recover"), warnings.catch_warnings(record=True) as notes:  # not while another writes it
        warnings.simplefilter("always")
        path, rows = recover(args.out)
    for note in notes:  # a damaged segment: what was kept, one line each
        print(f"mjrig: warning: {one_line(str(note.message))}", file=sys.stderr)
    print(f"recovered {rows} rows into {path}", file=sys.stderr)
    return 0


def cmd_models(args: argparse.Namespace) -> int:
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


def check_replay(path: Path, compare: Path | None) -> None:
    """``mjrig RECORDING.parquet [--compare OTHER.parquet]``: refuse a bad recording or comparison
    with one line (ConfigError) before any window opens (the app repeats the model's SHA check)."""
    from mjrig.recordings.replay import OverlaidRecording, Replay

    base = Replay.open(path)
    if compare is not None:
        OverlaidRecording.open(compare, model=base.model, sha256=base.recording.metadata.get("mjrig.model_sha256", ""))


def cmd_open(args: argparse.Namespace) -> int:
    from mjrig.campaign.results import SweepResults, is_results
    from mjrig.runtime.files.paths import RECORDING_SUFFIXES
    from mjrig.scenario.targets import resolve_target

    path = resolve_target(args.path, recording=True) if args.path is not None else None  # one line, screen or not
    replaying = path is not None and path.suffix.lower() in RECORDING_SUFFIXES
    results = replaying and is_results(path)  # a sweep's results: the results view, not a replay
    if args.compare is not None and results:
        raise ConfigError(
            f"{path}: a sweep's results, not a recording: --compare goes with a recording "
            "(open a trial's recording from the results view)"
        )
    if args.compare is not None and not replaying:
        raise ConfigError("--compare goes with a recording: mjrig RECORDING.parquet --compare OTHER.parquet")
    if results:
        SweepResults.open(path)
    elif replaying:
        check_replay(path, args.compare)
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise ConfigError(
            "no display: the desktop app needs a screen (set DISPLAY, e.g. under Xvfb); "
            "`mjrig run TARGET` runs headless"
        )
    try:
        from mjrig.desktop.app import open_app
    except ImportError as exc:
        raise MjrigError(f"the desktop app cannot start: {exc}") from None
    return open_app(
        path,
        record=args.record,
        exit_after=args.exit_after,
        panel_process=True if args.panel_process else None,
        compare=args.compare,
    )


def _report_warning(warning: mjwarnings.MujocoWarning) -> None:
    """One stderr line per distinct MuJoCo warning; a divergence is left to DivergenceError's line."""
    if not warning.divergence:
        from mjrig.progress import say

        say(f"mjrig: MuJoCo warning: {one_line(warning.text)}")


def terminate(signum: int, frame: object) -> None:
    """SIGTERM handler: raise Terminated where the main thread is, as SIGINT raises KeyboardInterrupt.
    A second SIGTERM while the files are being finished is ignored (SIGKILL still ends it)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated()


def _tidy(args: argparse.Namespace) -> None:
    """Remove what killed writers left in the folders of this command's files (part files of
    a process that is gone: ``atomic_output.remove_stale_parts``)."""
    from mjrig.runtime.files.atomic_output import remove_stale_parts

    folders = []
    for value in vars(args).values():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, Path) or (isinstance(v, str) and os.path.isfile(v)):
                folders.append(Path(v).parent)
    remove_stale_parts(folders)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mjrig`` console command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if (problem := mjwarnings.version_problem()) is not None:
        print(f"mjrig: warning: {problem}", file=sys.stderr)
    try:
        if argv and argv[0] in SUBCOMMANDS:
            if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:  # leave an embedding program's own alone
                signal.signal(signal.SIGTERM, terminate)
            args = _parser().parse_args(argv)
            _tidy(args)
            command = {
                "run": cmd_run,
                "check": cmd_check,
                "recover": cmd_recover,
                "models": cmd_models,
                "compare": cmd_compare,
                "sweep": cmd_sweep,
                "optimize": cmd_optimize,
                "fit": cmd_fit,
            }.get(args.command)
            if command is None and args.command in ("modes", "bode"):
                from mjrig.exports import linear

                command = linear.modes_command if args.command == "modes" else linear.bode_command
            elif command is None:  # report, export, plot
                from mjrig.exports import commands as exports

                command = getattr(exports, args.command)
            with mjwarnings.route(_report_warning):
                return command(args)
        return cmd_open(_app_parser().parse_args(argv))
    except ConfigError as exc:
        print(f"mjrig: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except DivergenceError as exc:
        print(f"mjrig: {one_line(str(exc))} (rows before it are kept)", file=sys.stderr)
        return 3
    except OutputError as exc:
        print(f"mjrig: {one_line(str(exc))}", file=sys.stderr)
        if isinstance(exc, ClusterLost):  # Ray's teardown would wait for the lost head (or crash)
            sys.stderr.flush()
            sys.stdout.flush()
            os._exit(OUTPUT_FAILED)
        return OUTPUT_FAILED
    except MjrigError as exc:
        print(f"mjrig: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except Terminated:
        print("mjrig: terminated (SIGTERM)", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("mjrig: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `mjrig models | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # an output that could not be written where no command expected it
        if exc.errno not in _OUTPUT_ERRNOS:
            raise
        from mjrig.runtime.errors import output_fault

        fault = output_fault(exc)
        where = f" {exc.filename}" if exc.filename else ""
        print(
            f"mjrig: cannot write{where}: {fault.cause}; what was finished is kept: "
            f"{fault.advice('run the same command again')}",
            file=sys.stderr,
        )
        return OUTPUT_FAILED


if __name__ == "__main__":
    sys.exit(main())
