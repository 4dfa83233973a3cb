"""The ``mjrig`` command: open the app, or run a command headless. Each family of commands is a
module of this package with its ``COMMANDS``, ``add_parsers(sub)`` (its arguments; returns
its handlers) and the handlers over the services: ``run`` (run, check, models), ``recordings``
(recover, compare), ``campaigns`` (sweep, optimize, fit), ``exports`` (report, export, plot),
``linear`` (modes, bode, linearise); ``open_app`` is ``mjrig [PATH]``; ``arguments`` the parser and the
argument types. A new command is one entry of its family (or a new family in ``FAMILIES``).

Bad input exits 2 with one line on stderr; a diverging headless run exits 3; a failed check (a
requirement in ``run``, a tolerance in ``compare``) exits 4; an output that could not be written
exits 5. No traceback reaches the user.
"""

from __future__ import annotations

import argparse
import errno
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from mjrig.cli import campaigns, exports, linear, ray_guard, recordings, run
from mjrig.cli.arguments import ArgumentParser, add_package_path, use_package_paths
from mjrig.cli.open_app import app_parser, open_app
from mjrig.runtime import mjwarnings
from mjrig.runtime.errors import (
    OUTPUT_FAILED,
    ClusterLost,
    ConfigError,
    DivergenceError,
    MjrigError,
    OutputError,
    Terminated,
    one_line,
)

__all__ = ["main", "terminate", "parser", "app_parser", "SUBCOMMANDS", "FAMILIES"]

_OUTPUT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO, errno.EFBIG}
"""OSErrors of an output that could not be written (exit 5)."""

FAMILIES = (run, recordings, campaigns, exports, linear)
"""The modules of commands, in the order ``mjrig --help`` lists them."""

SUBCOMMANDS = tuple(name for family in FAMILIES for name in family.COMMANDS)

Handler = Callable[[argparse.Namespace], int]


def parser() -> tuple[argparse.ArgumentParser, dict[str, Handler]]:
    """The ``mjrig COMMAND`` parser and each command's handler."""
    p = ArgumentParser(prog="mjrig", description="A test rig for MuJoCo models.")
    sub = p.add_subparsers(dest="command", parser_class=ArgumentParser)
    handlers: dict[str, Handler] = {}
    for family in FAMILIES:
        handlers.update(family.add_parsers(sub))
    for command in sub.choices.values():  # every command may read a URDF's package:// meshes
        add_package_path(command)
    return p, handlers


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
            command_parser, handlers = parser()
            args = command_parser.parse_args(argv)
            use_package_paths(args)
            if getattr(args, "ray", None) and not ray_guard.is_guarded():
                return ray_guard.guarded(argv, address=args.ray)  # see ray_guard: Ray may hold the process
            if getattr(args, "ray", None):
                ray_guard.drop_ray_lines()
            _tidy(args)
            with mjwarnings.route(_report_warning):
                return handlers[args.command](args)
        app_args = app_parser(SUBCOMMANDS).parse_args(argv)
        use_package_paths(app_args)
        return open_app(app_args)
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
