"""``mjrig report``, ``mjrig export`` and ``mjrig plot``: their arguments, and the line
that says what was written (CONTRACT 1: a default name never replaces a file, ``-o`` does)."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mjrig.runtime.errors import ConfigError, Terminated
from mjrig.runtime.files.out_lock import Hold, check_outputs_apart, hold
from mjrig.runtime.files.paths import check_writable, cli_path

__all__ = ["add_parsers", "report", "export", "plot", "COMMANDS"]

COMMANDS = ("report", "export", "plot")


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add the three commands to ``sub``, the ``mjrig`` parser's subparsers; their handlers."""
    r = sub.add_parser("report", help="a self-contained HTML report of a recording, a sweep's results or a study")
    r.add_argument("file", type=cli_path, metavar="FILE.parquet")
    r.add_argument("-o", dest="out", type=cli_path, metavar="REPORT.html", help="default: FILE.html beside FILE")
    r.add_argument(
        "--signals",
        action="append",
        default=[],
        metavar="PATTERN",
        help="glob of more signals to plot, e.g. 'Loads/*:fx' (repeatable)",
    )
    e = sub.add_parser("export", help="a recording as CSV, MATLAB (.mat), MCAP or Rerun (.rrd)")
    e.add_argument("file", type=cli_path, metavar="FILE.parquet")
    e.add_argument("--to", required=True, metavar="csv|mat|mcap|rrd", help="the format")
    e.add_argument("-o", dest="out", type=cli_path, metavar="OUT", help="default: FILE with the format's suffix")
    p = sub.add_parser("plot", help="plots of a recording's signals, one panel per unit")
    p.add_argument("files", type=cli_path, nargs="+", metavar="FILE.parquet")
    p.add_argument(
        "--signals",
        action="append",
        required=True,
        metavar="PATTERN",
        help="glob on column names, e.g. 'Joints/*:qpos' (repeatable)",
    )
    p.add_argument("-o", dest="out", type=cli_path, required=True, metavar="OUT.png|svg|pdf")
    return {"report": report, "export": export, "plot": plot}


def _target(given: Path | None, default: Path, what: str, *, inputs: dict[str, Path]) -> Hold:
    """This process's hold on ``-o`` as given (replaced when it exists), else on the next free
    name from ``default`` (``Hold.path``): two commands never write one file at once (the second
    is told which process writes it). ConfigError when it names one of the command's ``inputs``
    (``{what: path}``)."""
    if given is not None:
        out = given.expanduser().resolve()
        check_outputs_apart({what: out}, inputs)
        check_writable(out, what)
        return hold(out, what=what)
    taken = hold(default, what=what, fresh=True)
    try:
        check_outputs_apart({what: taken.path}, inputs)
        check_writable(taken.path, what)
    except BaseException:
        taken.release()
        raise
    return taken


def _identity(path: Path) -> tuple[int, int] | None:
    """(inode, modification time ns) of ``path``, or None when there is no such file."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def _replaced(out: Path, before: tuple[int, int] | None) -> bool:
    """Whether ``out`` was put in place whole since ``before`` (its identity then): a stop that
    came after the rename and before ``_finished`` changes nothing of a finished output."""
    now = _identity(out)
    return now is not None and now != before


def _finished() -> None:
    """The output is whole: a stop from here on has nothing left to stop (the command ends with
    its own line, not a second one saying it was stopped)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _stopped(exc: KeyboardInterrupt, out: Path, existed: bool) -> int:
    """A stop (Ctrl+C, SIGTERM) while ``out`` was written: one line saying truly what it left
    (its part file is removed: ``atomic_output``): nothing, or ``out`` as it was; 130 or 143."""
    term = isinstance(exc, Terminated)
    left = f"{out} is as it was" if existed else f"nothing was written to {out}"
    print(
        f"mjrig: {'terminated (SIGTERM)' if term else 'interrupted'}; {left} (no partial file is left)", file=sys.stderr
    )
    return 143 if term else 130


def report(args: argparse.Namespace) -> int:
    """``mjrig report FILE [-o OUT] [--signals P]...``."""
    from mjrig.exports.report import default_report_path, write_report
    from mjrig.progress import WorkBar

    src = args.file.expanduser().resolve()
    inputs = {"the file reported on": src}
    check_outputs_apart({"-o": args.out}, inputs)
    if args.out is not None and args.out.suffix.lower() not in (".html", ".htm"):
        raise ConfigError(f"-o {args.out}: a report is HTML: name it .html")
    with _target(args.out, default_report_path(src), "-o", inputs=inputs) as held:
        out = held.path
        existed = _identity(out)
        try:
            with WorkBar("drawing the report", unit="figures") as bar:
                write_report(src, out=out, signals=args.signals, progress=bar)
            _finished()
        except KeyboardInterrupt as exc:
            if not _replaced(out, existed):
                return _stopped(exc, out, existed is not None)
    print(f"wrote the report of {src.name} to {out}", file=sys.stderr)
    return 0


def export(args: argparse.Namespace) -> int:
    """``mjrig export FILE --to FORMAT [-o OUT]``."""
    from mjrig.exports.export import default_output, export_recording
    from mjrig.progress import WorkBar

    src = args.file.expanduser().resolve()
    fmt = args.to.lower().lstrip(".")
    default = default_output(src, fmt)  # an unknown format: one line naming the known
    rows: int | None = None
    with _target(args.out, default, "-o", inputs={"the recording exported": src}) as held:
        out = held.path
        existed = _identity(out)
        try:
            with WorkBar(f"exporting to {fmt}", unit="rows") as bar:
                rows = export_recording(src, to=fmt, out=out, progress=bar)
            _finished()
        except KeyboardInterrupt as exc:
            if not _replaced(out, existed):
                return _stopped(exc, out, existed is not None)
    print(
        f"wrote {rows} rows of {src.name} to {out}" if rows is not None else f"wrote {src.name} to {out}",
        file=sys.stderr,
    )
    return 0


def plot(args: argparse.Namespace) -> int:
    """``mjrig plot FILE... --signals P... -o OUT``: one figure, one panel per unit."""
    from mjrig.exports import plotting

    out = args.out.expanduser().resolve()
    files = [f.expanduser().resolve() for f in args.files]
    check_outputs_apart({"-o": out}, [("a recording plotted", f) for f in files])
    if out.suffix.lower() not in plotting.FIGURE_SUFFIXES:
        raise ConfigError(f"-o {args.out}: name the figure .png, .svg or .pdf")
    labels = plotting.names_of(files) if len(files) > 1 else [""]
    traces = [
        tr for f, label in zip(files, labels) for tr in plotting.read_traces(f, patterns=args.signals, source=label)
    ]
    check_writable(out, "-o")
    with hold(out, what="-o"):
        existed = _identity(out)
        try:
            plotting.save(plotting.signals_figure(traces), out)
            _finished()
        except KeyboardInterrupt as exc:
            if not _replaced(out, existed):
                return _stopped(exc, out, existed is not None)
    units = len({tr.unit for tr in traces})
    shown = sum(not tr.measured for tr in traces)
    bench = len(traces) - shown
    also = f" and {bench} measured series" if bench else ""
    print(
        f"wrote {shown} signal{'s' if shown != 1 else ''}{also} in {units} panel{'s' if units != 1 else ''} to {out}",
        file=sys.stderr,
    )
    return 0
