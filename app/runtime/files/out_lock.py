"""Two at a time: an output held by the one process that writes it.

A hold is an exclusive ``flock`` on ``OUT.parts/holder``, in the folder a recording's segments
and a sweep's finished trials go to (``OUT.parquet.parts``), and the file names the holder (its
process id and command line). The lock goes with the process however it ends (SIGKILL
included); the file may stay (a resume or ``mjrig recover`` needs the folder) and the next
process takes it over.

- ``hold(path, fresh=True)``: ``path`` or the next free name (``NAME-2.parquet``...), reserved
  atomically (the folder is made with ``mkdir``, which one process wins): two runs started
  together get two names.
- ``hold(path)``: exactly ``path`` (an explicit ``--out``); ConfigError (one line naming the
  holder) while another process holds it.
- ``same_file(a, b)``: whether two paths are one file (an output that is an input).
- ``check_outputs_apart(outputs, inputs)``: ConfigError (one line naming both) when an explicit
  output is one of the command's inputs or another of its outputs; every command asks it.

Linux and macOS (``fcntl``). GUI-free; any thread.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.files.atomic_output import output_error
from mjrig.runtime.files.paths import name_candidates, work_dir

__all__ = ["Hold", "hold", "held", "same_file", "check_outputs_apart", "work_dir", "HOLDER"]

HOLDER = "holder"
"""The lock file's name in the output's work folder."""


class Hold:
    """This process's hold on ``path`` (``hold``); ``release()`` lets it go (also at exit)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        """Unlock, and remove the lock file and the work folder when nothing else is in it."""
        if self._fd is None:
            return
        folder = work_dir(self.path)
        try:
            (folder / HOLDER).unlink(missing_ok=True)
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> Hold:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def hold(path: str | os.PathLike, *, what: str, fresh: bool = False) -> Hold:
    """Hold output ``path`` for this process (``what`` names it in messages: ``--out``).

    ``fresh``: the first of ``path``, ``STEM-2.EXT``... that has neither a file nor a work folder,
    claimed by making its work folder (``Hold.path`` is the name really taken). Otherwise
    ``path`` itself: ConfigError naming the process that holds it."""
    path = Path(path)
    if not fresh:
        parts = work_dir(path)
        if parts.exists() and not parts.is_dir():  # in the way: nothing to write about
            raise ConfigError(
                f"{what} {path}: {parts} is a file, where mjrig keeps {path.name}'s parts while it is written: "
                "move or remove it"
            )
        try:
            parts.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # exit 5 for the disk or the folder (permission, read-only), else 2
            raise output_error(exc, what=what, path=parts) from None
        return _take(path, what)
    for candidate in name_candidates(path):
        if candidate.exists():
            continue
        try:
            os.mkdir(work_dir(candidate))
        except FileExistsError:
            continue
        except OSError as exc:
            raise output_error(exc, what=what, path=work_dir(candidate)) from None
        try:
            return _take(candidate, what)
        except ConfigError:
            shutil.rmtree(work_dir(candidate), ignore_errors=True)
            raise
    raise AssertionError("name_candidates never ends")  # pragma: no cover


def _take(path: Path, what: str) -> Hold:
    lock = work_dir(path) / HOLDER
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise output_error(exc, what=what, path=lock) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 512, 0).decode("utf-8", "replace").strip() or "another process"
        os.close(fd)
        raise ConfigError(
            f"{what}: {path} is being written by {holder}; wait for it to end or choose another output"
        ) from None
    command = " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])[:300] if sys.argv and sys.argv[0] else "python"
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"process {os.getpid()} ({command})".encode("utf-8", "replace"), 0)
    except OSError as exc:  # a full disk: nothing of ours stays
        Hold(path, fd).release()
        raise output_error(exc, what=what, path=path) from None
    return Hold(path, fd)


def held(path: str | os.PathLike) -> bool:
    """Whether some process (this one included) holds output ``path`` now."""
    try:
        fd = os.open(work_dir(path) / HOLDER, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether paths ``a`` and ``b`` name one file (links and ``..`` resolved; False when either
    does not exist yet and they differ as paths)."""
    a, b = Path(a).expanduser(), Path(b).expanduser()
    try:
        return os.path.samefile(a, b)
    except OSError:
        pass
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symbolic-link loop (Python 3.11/3.12)
        return os.path.abspath(a) == os.path.abspath(b)


def check_outputs_apart(
    outputs: Mapping[str, str | os.PathLike | None],
    inputs: Mapping[str, str | os.PathLike | None] | Iterable[tuple[str, str | os.PathLike | None]],
) -> None:
    """ConfigError (one line naming both) when an explicit output is an input or another output.

    ``outputs``: ``{flag: path}`` as the command line gave them (``{"--out": ...}``); ``inputs``:
    ``{what: path}``, ``what`` saying what the file is to the command (``"the scenario"``,
    ``"the scenario's measured file 'bench'"``), or such pairs. None entries are skipped. Paths are compared as
    files (symbolic links followed, ``os.path.samefile`` where both exist, else resolved)."""
    given = [(flag, Path(p)) for flag, p in outputs.items() if p is not None]
    pairs = list(inputs.items() if isinstance(inputs, Mapping) else inputs)
    for i, (flag, out) in enumerate(given):
        for what, src in pairs:
            if src is not None and same_file(out, src):
                raise ConfigError(f"{flag} {out} is {what} ({src}); choose another path")
        for other_flag, other in given[:i]:
            if same_file(out, other):
                raise ConfigError(f"{flag} {out} is the {other_flag} file too; give each its own path")
