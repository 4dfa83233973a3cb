"""The ``mjrig`` command's entry point (``python -m mjrig`` too): Ctrl+C while Python is still
importing mjrig and its libraries ends with one line and status 130, as it does once a command
runs. (A native module interrupted while it initialises raises ImportError from the
KeyboardInterrupt: that is the same Ctrl+C.)"""
from __future__ import annotations

import sys


def _interrupted(exc: BaseException | None) -> bool:
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, KeyboardInterrupt):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def main() -> int:
    """Import the command line and run it; returns the exit status."""
    try:
        from mjrig.progress import clean_terminal
        clean_terminal()  # no control character read from a file reaches the terminal raw
        from mjrig.cli import main as run_command
    except (KeyboardInterrupt, ImportError) as exc:
        if not _interrupted(exc):
            raise
        print("mjrig: interrupted", file=sys.stderr)
        return 130
    return run_command()
