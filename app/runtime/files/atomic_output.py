"""Whole files or none: an output written to a hidden part file beside it and renamed over it
when complete, so a full disk, a file-size limit, a read-only folder or a stop never leaves a
0-byte or half-written file.

- ``atomic_output(path, what=...)``: a context manager yielding the part file's path
  (``.NAME.PID.HEX.part`` beside ``path``, created empty); on a clean exit it replaces ``path``,
  on any exception it is removed. An OSError of the disk or the folder (no space, file too
  large, permission, read-only file system) becomes ``OutputError`` (exit 5) naming the cause
  (``output_error``).
- ``part_file(path)``: the same without the naming of errors (OSError as it comes), for the
  recorder's own files and caches; ``replace_text``/``replace_bytes`` write one whole through it.
- ``remove_stale_parts(folder)``: removes the part files in ``folder`` whose writer (the process
  id in the name) is gone: what a killed writer left. Every command calls it for the folders it
  reads or writes, so the next command on a folder cleans it.

GUI-free; any thread.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from mjrig.runtime.errors import ConfigError, MjrigError, OutputError, output_fault

__all__ = [
    "atomic_output",
    "remove_stale_parts",
    "output_error",
    "fault_errno",
    "OUTPUT_ERRNOS",
    "PART_PATTERN",
    "replace_text",
    "replace_bytes",
    "part_file",
]

OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO, errno.EFBIG})
"""OSErrors of an output that could not be written (exit 5), not of a bad name (exit 2)."""

PART_PATTERN = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}\.part$")
"""A part file's name: ``.NAME.PID.HEX.part`` (the writer's process id, 8 random hex digits)."""


_ERRNO_IN_TEXT = re.compile(r"(?:os error|errno) (\d+)", re.IGNORECASE)


def fault_errno(exc: BaseException) -> int | None:
    """The errno of an output fault (one of ``OUTPUT_ERRNOS``) behind ``exc``, or None. Libraries
    writing from native code raise OSError without ``errno`` (polars: "File too large (os error
    27)") or their own errors (pyarrow: "[errno 28] No space left on device"): read from the text."""
    code = getattr(exc, "errno", None) if isinstance(exc, OSError) else None
    if code is None:
        m = _ERRNO_IN_TEXT.search(str(exc))
        code = int(m.group(1)) if m else next((e for e in OUTPUT_ERRNOS if os.strerror(e) in str(exc)), None)
    return code if code in OUTPUT_ERRNOS else None


def output_error(
    exc: BaseException, *, what: str, path: str | os.PathLike, kept: str = "nothing was written"
) -> Exception:
    """The error to raise for ``exc`` met writing output ``path`` (``what``: ``-o``, ``--json``):
    OutputError (exit 5) for the disk or the folder, naming the cause from its errno
    (``errors.output_fault``: "no space left on the device", "file too large", "permission
    denied", "read-only file system"), what was ``kept`` and what to do; ConfigError (exit 2) for
    anything else (a name the system refuses)."""
    code = fault_errno(exc)
    if code is not None:
        fault = output_fault(OSError(code, os.strerror(code)))
        return OutputError(f"{what} {path}: cannot write: {fault.cause}; {kept}: {fault.advice('run again')}")
    cause = (getattr(exc, "strerror", None) or str(exc)).strip() or type(exc).__name__
    return ConfigError(f"{what} {path}: cannot write: {' '.join(cause.split())}")


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (one of another user's counts too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_parts(folders: Iterable[str | os.PathLike]) -> int:
    """Remove the part files in ``folders`` whose writer is gone (never one of a live process);
    returns how many. Folders that cannot be listed are skipped."""
    removed = 0
    for folder in dict.fromkeys(Path(f) for f in folders):
        try:
            names = [e.name for e in os.scandir(folder) if e.name.endswith(".part") and e.name.startswith(".")]
        except OSError:
            continue
        for name in names:
            m = PART_PATTERN.match(name)
            if m is None or int(m["pid"]) == os.getpid() or _alive(int(m["pid"])):
                continue
            try:
                os.unlink(Path(folder) / name)
                removed += 1
            except OSError:
                pass
    return removed


@contextmanager
def part_file(path: str | os.PathLike) -> Iterator[Path]:
    """The one way mjrig writes a file whole: yields the path of a part file beside ``path``
    (``.NAME.PID.HEX.part``, not created) to write; when the block ends cleanly it is renamed over
    ``path``, when it raises (a stop included) it is removed and ``path`` is left as it was.
    OSError as it comes (``atomic_output`` names it for a command's output)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.part")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise


@contextmanager
def atomic_output(path: str | os.PathLike, *, what: str) -> Iterator[Path]:
    """A command's output ``path`` whole or not at all (``part_file``; the part file is created
    empty with the umask's permissions, and a killed writer's left in the folder go first).
    OSErrors of the disk or folder become OutputError (``output_error``)."""
    path = Path(path)
    remove_stale_parts([path.parent])
    try:
        with part_file(path) as tmp:
            try:
                os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            except OSError as exc:
                raise output_error(exc, what=what, path=path) from None
            yield tmp
    except Exception as exc:
        if not isinstance(exc, MjrigError) and fault_errno(exc) is not None:
            raise output_error(exc, what=what, path=path) from None
        raise


def _remove(tmp: Path) -> None:
    try:
        tmp.unlink(missing_ok=True)
    except OSError:
        pass


def replace_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole (``part_file``), so a reader (another process, a
    crash) never finds it half-written. A small settings or cache file's way: OSError as it comes
    (its callers keep going without it), no part file left behind."""
    with part_file(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def replace_bytes(path: str | os.PathLike, data: bytes) -> None:
    """``replace_text`` for bytes (a compiled object file)."""
    with part_file(path) as tmp:
        tmp.write_bytes(data)
