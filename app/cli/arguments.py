"""The command line's parser and argument types: a usage error is one line and exit status 2
(``ConfigError``), never argparse's usage dump; each type names what it expected."""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from pathlib import Path

from mjrig.runtime.errors import ConfigError

__all__ = [
    "add_package_path",
    "use_package_paths",
    "ArgumentParser",
    "seconds",
    "instant",
    "frame_rate",
    "assignment",
    "tolerance",
    "count",
]


class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]  # raises instead of exiting
        prog = self.prog.removeprefix("mjrig").strip()
        raise ConfigError(f"{prog}: {message}" if prog else message)


def _number(text: str, what: str) -> float:
    """``text`` as a number of ``what`` (argparse's error otherwise)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of {what}: '{text}'") from None


def _positive(text: str, what: str) -> float:
    """``text`` as a positive, finite number of ``what`` (argparse's error otherwise)."""
    v = _number(text, what)
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of {what}, got '{text}'")
    return v


def seconds(text: str) -> float:
    """A positive, finite number of seconds."""
    return _positive(text, "seconds")


def instant(text: str) -> float:
    """A finite number of seconds from the run's start, 0 or more (an operating point's time)."""
    v = _number(text, "seconds")
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds, 0 or more, got '{text}'")
    return v


def frame_rate(text: str) -> float:
    """A positive, finite number of frames per second."""
    return _positive(text, "frames per second")


def assignment(text: str) -> tuple[str, float]:
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


def tolerance(text: str) -> float:
    """A finite number >= 0 (a relative or absolute tolerance)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: '{text}'") from None
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got '{text}'")
    return v


def count(least: int) -> Callable[[str], int]:
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


def add_package_path(p: argparse.ArgumentParser) -> None:
    """``--package-path DIR`` (repeatable): where a URDF's ``package://NAME/...`` meshes are looked
    for first (``mjrig.runtime.files.urdf``)."""
    p.add_argument(
        "--package-path",
        action="append",
        metavar="DIR",
        help="a folder holding ROS packages (or one package) for a URDF's package:// meshes (repeatable)",
    )


def use_package_paths(args: argparse.Namespace) -> None:
    """Hand ``--package-path`` on to the URDF reader (and to the processes this one starts)."""
    from mjrig.runtime.files.urdf import PACKAGE_PATH_ENV

    given = getattr(args, "package_path", None)
    if given:
        os.environ[PACKAGE_PATH_ENV] = os.pathsep.join(str(Path(p).expanduser().resolve()) for p in given)
