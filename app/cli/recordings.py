"""``mjrig recover`` (a recording a crash or kill interrupted, rebuilt) and ``mjrig compare`` (two
recordings signal by signal; exit 4 beyond tolerance)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from mjrig.cli.arguments import tolerance
from mjrig.runtime.errors import CHECK_FAILED, ConfigError, one_line
from mjrig.runtime.files.out_lock import check_outputs_apart
from mjrig.runtime.files.paths import check_writable, cli_path

__all__ = ["COMMANDS", "add_parsers", "recover", "compare"]

COMMANDS = ("recover", "compare")


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add ``recover`` and ``compare`` to ``sub``, the ``mjrig`` parser's subparsers; their handlers."""
    rc = sub.add_parser("recover", help="rebuild a recording interrupted by a crash or kill")
    rc.add_argument("out", type=cli_path)
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
    cmp.add_argument("--rtol", type=tolerance, default=1e-6, help="relative tolerance (default 1e-6)")
    cmp.add_argument("--atol", type=tolerance, default=1e-9, help="absolute tolerance (default 1e-9)")
    cmp.add_argument(
        "--report",
        type=cli_path,
        metavar="OUT.html",
        help="also write an HTML report: each signal of both with A's band, their difference, the first time "
        "outside (written when signals differ too; replaced when it exists)",
    )
    return {"recover": recover, "compare": compare}


def compare(args: argparse.Namespace) -> int:
    """``mjrig compare A B [--signals] [--rtol] [--atol] [--report OUT.html]``: one line per signal
    on stdout, the count within tolerance on stderr, and the line naming the report written;
    4 when one is beyond it (the report is written then too)."""
    from mjrig.recordings.compare import compare_recordings

    if args.report is not None:  # bad input before any work
        check_outputs_apart({"--report": args.report}, {"recording A": args.a, "recording B": args.b})
        if args.report.suffix.lower() not in (".html", ".htm"):
            raise ConfigError(f"--report {args.report}: a report is HTML: name it .html")
        check_writable(args.report, "--report")
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
    if args.report is not None:
        from mjrig.exports.compare_report import write_comparison_report
        from mjrig.progress import WorkBar

        with WorkBar("drawing the comparison report", unit="figures") as bar:
            write_comparison_report(
                args.a,
                args.b,
                out=args.report,
                signals=args.signals,
                rtol=args.rtol,
                atol=args.atol,
                diff=result,
                progress=bar,
            )
        print(f"wrote the comparison report of {args.a.name} and {args.b.name} to {args.report}", file=sys.stderr)
    return 0 if result.within else CHECK_FAILED


def recover(args: argparse.Namespace) -> int:
    """``mjrig recover OUT``: the recording's segments merged into OUT, a damaged one's loss told
    (exit 2: its parts are kept aside, ``OUT.parts.damaged``)."""
    import warnings

    from mjrig.runtime.files.out_lock import hold
    from mjrig.runtime.files.parquet_segments import DamagedParts
    from mjrig.runtime.files.parquet_sink import recover as rebuild

    with hold(args.out, what="recover"), warnings.catch_warnings(record=True) as notes:  # not while another writes it
        warnings.simplefilter("always")
        path, rows = rebuild(args.out)
    for note in notes:  # a damaged segment: what was kept, one line each
        print(f"mjrig: warning: {one_line(str(note.message))}", file=sys.stderr)
    print(f"recovered {rows} rows into {path}", file=sys.stderr)
    return 2 if any(issubclass(note.category, DamagedParts) for note in notes) else 0
