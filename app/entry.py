"""The ``mjrig`` command's entry point (``python -m mjrig`` too). Its first act is to take SIGINT
and SIGTERM, before anything heavy is imported: a stop at any moment of the start (Python still
importing mjrig, MuJoCo or their libraries) ends with one line and status 130 or 143, as it does
once a command runs. (A native module interrupted while it initialises raises ImportError, or
ctypes' ArgumentError, from the KeyboardInterrupt: the stop noted by the handler says what it was.)"""

from __future__ import annotations

import atexit
import signal
import sys

_STOPS: list[int] = []
"""The signals that arrived while mjrig started (before the command's own handlers)."""

_STOPPED_WITH: list[int] = []
"""The status of a stopped command (130 or 143), for ``_end_now``."""
_STATUS: list[int] = []
"""The status ``main`` returned, for ``_end_now``."""


class _Stopped(KeyboardInterrupt):
    """SIGINT or SIGTERM while mjrig starts."""


def _early_stop(signum: int, frame: object) -> None:
    _STOPS.append(signum)
    if signum == signal.SIGTERM:  # a second one while the line is written: ignored
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise _Stopped()


def _interrupted(exc: BaseException | None) -> bool:
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, KeyboardInterrupt) or "KeyboardInterrupt" in str(exc):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def _terminated(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what it came from) is SIGTERM's ``Terminated`` or a SIGTERM at start."""
    seen = 0
    while exc is not None and seen < 20:
        if type(exc).__name__ == "Terminated":
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return signal.SIGTERM in _STOPS


def _stopped(exc: BaseException | None) -> int:
    """The one line of a stop that no command's handler answered; 130 or 143."""
    if _terminated(exc):
        print("mjrig: terminated (SIGTERM)", file=sys.stderr)
        return 143
    print("mjrig: interrupted", file=sys.stderr)
    return 130


def _forget_native_interrupt() -> None:
    """A KeyboardInterrupt that went through code a native module ran with ``PyRun_String`` (as
    MuJoCo's bindings do while they import) leaves CPython's "unhandled Ctrl+C" flag set, and
    the interpreter would then end by SIGINT whatever status mjrig returns. Any code run the
    same way clears it: an empty statement."""
    try:
        import ctypes

        ctypes.pythonapi.PyRun_SimpleString(b"")
    except (ImportError, AttributeError, OSError):
        pass


def main() -> int:
    """Take SIGINT and SIGTERM, import the command line and run it; returns the exit status (a
    stopped command's 130 or 143 ends the process in the last exit handler: ``_end_now``)."""
    atexit.register(_end_now)  # first registered, so it runs last
    own_int = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    own_term = signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # an embedding program's own stays
    if own_int:
        signal.signal(signal.SIGINT, _early_stop)
    if own_term:
        signal.signal(signal.SIGTERM, _early_stop)
    try:
        from mjrig.progress import clean_terminal

        clean_terminal()  # no control character read from a file reaches the terminal raw
        from mjrig import cli

        command = sys.argv[1] if len(sys.argv) > 1 else ""
        if own_term:  # the commands' SIGTERM raises Terminated; the app's stays the default
            signal.signal(signal.SIGTERM, cli.terminate if command in cli.SUBCOMMANDS else signal.SIG_DFL)
        if own_int:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    except BaseException as exc:
        if _STOPS or _interrupted(exc):
            _forget_native_interrupt()
            return _end(_stopped(exc))
        raise
    try:
        status = cli.main()
    except BaseException as exc:  # a stop the command did not answer: between handlers, or raised
        if not _interrupted(exc):  # inside an import, which wraps it (``__set_name__``: RuntimeError)
            raise
        _forget_native_interrupt()
        return _end(_stopped(exc))
    if status in (130, 143):  # a stop the command answered may have gone through native code too
        _forget_native_interrupt()
        return _end(status)
    _finished(sigint=own_int, sigterm=own_term)
    _STATUS.append(status)
    return status


def _finished(*, sigint: bool, sigterm: bool) -> None:
    """The command is done (its line written, its files whole): a SIGINT or SIGTERM from now
    on has nothing left to stop, so it is ignored and the process ends with the command's status (a
    KeyboardInterrupt in the interpreter's teardown would end it by the signal: status -2). Not
    a handler of ours: the interpreter's last act puts the default back for those, and a signal
    then would end the process by itself. SIGKILL still ends a teardown that hangs."""
    for signum, own in ((signal.SIGINT, sigint), (signal.SIGTERM, sigterm)):
        if own:
            signal.signal(signum, signal.SIG_IGN)


def _end(status: int) -> int:
    """A stopped command's ``status``, noted for ``_end_now``; returned for ``sys.exit``."""
    _STOPPED_WITH.append(status)
    return status


def _end_now() -> None:
    """The last exit handler (registered first): after a stop, end the process here, once its
    line is written, its files are whole and every other exit handler ran (pools, trackers,
    temporary files), without tearing the interpreter down. A stop that came while native code
    ran (numba compiling a load law, MuJoCo loading) can leave that library half-built, and its
    teardown then crashed the process (SIGSEGV) after the line, instead of exit 130."""
    jobs = sys.modules.get("mjrig.session.jobs")  # loaded by the app only: nothing imported at exit
    left = jobs is not None and jobs.abandoned()
    if not _STOPPED_WITH and not (left and _STATUS):
        return
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(_STOPPED_WITH[-1] if _STOPPED_WITH else _STATUS[-1])
