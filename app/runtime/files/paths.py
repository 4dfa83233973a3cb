"""Where mjrig writes: suffix and writability checks and fresh names, one of each.

Every output path (recording, video, screenshot, scenario, keyframe), from the CLI, a scenario
file or the app, is checked here, so the messages are the same everywhere.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from mjrig.runtime.errors import ConfigError

__all__ = [
    "RECORDING_SUFFIXES",
    "VIDEO_SUFFIXES",
    "suffix_problem",
    "check_suffix",
    "check_writable",
    "check_name",
    "fresh_path",
    "name_candidates",
    "work_dir",
    "file_sha256",
    "cli_path",
    "default_report_path",
]

RECORDING_SUFFIXES = (".parquet",)
VIDEO_SUFFIXES = (".mp4", ".gif")


def suffix_problem(path: Path, suffixes: tuple[str, ...]) -> str | None:
    """None when ``path`` ends in one of ``suffixes`` (any case), else what is wrong with it."""
    if Path(path).suffix.lower() in suffixes:
        return None
    return f"must end in {' or '.join(suffixes)}, got '{Path(path).name}'"


def check_suffix(path: Path, suffixes: tuple[str, ...], *, where: str) -> None:
    """ConfigError ``WHERE: must end in ...`` unless ``path`` ends in one of ``suffixes``."""
    problem = suffix_problem(path, suffixes)
    if problem is not None:
        raise ConfigError(f"{where}: {problem}")


def check_writable(path: Path, what: str, *, create: bool = True) -> None:
    """ConfigError naming ``what`` unless a file can be written at ``path``: OutputError (exit 5,
    the cause from the errno: permission denied, read-only file system, no space) when the
    folder refuses it.

    ``create`` makes the missing folders; without it (``mjrig check``) nothing is touched and
    the nearest existing ancestor must be a writable folder.
    """
    from mjrig.runtime.files.atomic_output import output_error

    try:
        _check_writable(path, what, create=create)
    except OSError as exc:  # e.g. a name too long for the file system
        raise output_error(exc, what=what, path=path) from None


NAME_MAX = 255
"""Bytes of one file or folder name at most (Linux, macOS)."""


def check_name(path: Path, what: str) -> None:
    """ConfigError naming ``what`` when a name in ``path`` is longer than a file system takes;
    nothing on disk is asked (``mjrig check``, ``modes`` and ``bode`` leave output folders alone)."""
    for part in Path(path).parts:
        if len(os.fsencode(part)) > NAME_MAX:
            raise ConfigError(f"{what}: cannot write {path}: File name too long")


def _check_writable(path: Path, what: str, *, create: bool) -> None:
    parent = path.parent
    if path.is_dir():
        raise ConfigError(f"{what}: {path} is a folder, not a file")
    if create:
        parent.mkdir(parents=True, exist_ok=True)  # an OSError: check_writable's line
    existing = parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(f"{what}: {existing} is a file, so no folder can be made under it")
    if not create or not os.access(existing, os.W_OK):  # probe with a folder removed at once (permissions lie)
        os.rmdir(tempfile.mkdtemp(prefix=".mjrig-check-", dir=existing))


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, as hex (a recording names its model's)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def work_dir(path: str | os.PathLike) -> Path:
    """The folder beside output ``path`` that holds its parts while it is written, and the lock
    of the process writing it: ``<path>.parts`` (a recording's segments, a sweep's trials)."""
    path = Path(path)
    return path.with_name(path.name + ".parts")


def fresh_path(path: Path) -> Path:
    """``path`` when nothing is there yet, else the first free ``STEM-2.EXT``, ``STEM-3.EXT``...

    A recording's segment folder (``OUT.parquet.parts``) counts as taken: the app never
    replaces what the user made without asking.
    """

    def taken(p: Path) -> bool:
        return p.exists() or work_dir(p).exists()

    return next(p for p in name_candidates(path) if not taken(p))


def name_candidates(path: Path) -> Iterator[Path]:
    """``path``, then ``STEM-2.EXT``, ``STEM-3.EXT``... (a ``STEM-N`` given counts on from
    ``STEM``), without end: the names a fresh output may take."""
    yield path
    stem = path.stem
    head, sep, tail = stem.rpartition("-")
    if sep and tail.isdigit():
        stem = head
    n = 2
    while True:
        yield path.with_name(f"{stem}-{n}{path.suffix}")
        n += 1


def default_report_path(path: Path) -> Path:
    """FILE.html beside FILE.parquet, the HTML report of a recording or results file (the caller
    picks the next free name when it exists: ``fresh_path``)."""
    return path.with_suffix(".html")


def cli_path(text: str) -> Path:
    """A path given on the command line, resolved (``~``, ``..``, links): an argparse ``type``.
    ``argparse.ArgumentTypeError`` (one line) for a symbolic-link loop or a name the system
    refuses, which would otherwise surface as a traceback wherever the path is first used."""
    import argparse

    try:
        return Path(text).expanduser().resolve()
    except (RuntimeError, OSError) as exc:  # RuntimeError: a link loop (Python 3.11/3.12)
        why = "a symbolic-link loop" if "loop" in str(exc).lower() else getattr(exc, "strerror", None) or str(exc)
        raise argparse.ArgumentTypeError(f"{text}: cannot be used as a path ({why})") from None
