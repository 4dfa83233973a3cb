"""The one root error class of mjrig and its few specialisations."""

from __future__ import annotations

import errno
import re
import unicodedata
from dataclasses import dataclass

CHECK_FAILED = 4
"""Exit status when a check failed: a requirement in ``run``, a tolerance in ``compare``, no
feasible trial in ``optimize``."""
OUTPUT_FAILED = 5
"""Exit status when an output could not be written or a cluster was lost (disk full, permission,
Ray head gone): stepping stopped, what was written so far is kept and valid."""


def one_line(msg: str) -> str:
    """``msg`` with line breaks and other control characters escaped, so an error stays one line."""
    return "".join(
        ch.encode("unicode_escape").decode("ascii") if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch
        for ch in msg
    )


def exception_text(exc: BaseException, *, with_type: bool = False) -> str:
    """An exception's message on one line (whitespace collapsed); ``with_type`` prefixes its class."""
    text = " ".join(str(exc).split())
    if with_type:
        return f"{type(exc).__name__}: {text or 'no message'}"
    return text or type(exc).__name__


_CAUSES = {
    errno.ENOSPC: ("no space left on the device", "free space", "there is free space"),
    errno.EDQUOT: ("disk quota exceeded", "free space within the quota", "there is room within the quota"),
    errno.EFBIG: (
        "file too large: the process's file-size limit (RLIMIT_FSIZE, `ulimit -f`)",
        "raise the file-size limit",
        "the file-size limit is raised",
    ),
    errno.EACCES: ("permission denied", "make the folder writable", "the folder is writable"),
    errno.EPERM: (
        "operation not permitted (permissions or an immutable folder)",
        "make the folder writable",
        "the folder is writable",
    ),
    errno.EROFS: ("read-only file system", "write to a writable file system", "the file system is writable"),
    errno.EIO: ("input/output error", "check the disk", "the disk works again"),
}
_ERRNO_IN_TEXT = re.compile(r"\[errno (\d+)\]", re.IGNORECASE)


@dataclass(frozen=True)
class OutputFault:
    """Why an output could not be written, from the OSError's errno: ``cause`` names it
    ("no space left on the device"), ``fix`` says what to do ("free space", None when the
    cause is not one of the known output faults) and ``once`` when to go on ("there is free
    space")."""

    cause: str
    fix: str | None
    once: str | None

    def advice(self, then: str) -> str:
        """ "{fix} and {then}" (e.g. "free space and run again"), or "{then} once the cause is
        fixed" when the cause is unknown."""
        return f"{self.fix} and {then}" if self.fix else f"{then} once the cause is fixed"


def output_fault(error: BaseException | str) -> OutputFault:
    """The cause of an output fault: the errno of ``error`` (an OSError, or an exception whose
    cause or context is one, or a message holding ``[Errno N]`` as OSError and pyarrow write
    them); an unknown cause is named by the message itself, never guessed."""
    code, seen = None, set()
    exc = error if isinstance(error, BaseException) else None
    while exc is not None and id(exc) not in seen and code is None:
        seen.add(id(exc))
        code = exc.errno if isinstance(exc, OSError) and exc.errno in _CAUSES else None
        if code is None:
            found = _ERRNO_IN_TEXT.search(str(exc))
            code = int(found.group(1)) if found and int(found.group(1)) in _CAUSES else None
        exc = exc.__cause__ or exc.__context__
    if code is None and isinstance(error, str):
        found = _ERRNO_IN_TEXT.search(error)
        code = int(found.group(1)) if found and int(found.group(1)) in _CAUSES else None
    if code is None:
        text = error if isinstance(error, str) else exception_text(error, with_type=True)
        return OutputFault(" ".join(text.split()) or "unknown error", None, None)
    return OutputFault(*_CAUSES[code])


class MjrigError(Exception):
    """Root of every mjrig error. Its message is one line meant for the user."""


class ConfigError(MjrigError):
    """Bad input: a file, field or name the user gave is wrong. The CLI exits 2."""


class DivergenceError(MjrigError):
    """The physics diverged (NaN/Inf state or MuJoCo's bad-acceleration warning). The CLI exits 3."""


class OutputError(MjrigError):
    """An output could not be written (disk full, permission) or the cluster running the trials
    was lost; the message says what was kept and how to go on. The CLI exits 5."""


class KeptAside(OutputError):
    """A recording's final file could not be written; the message says where its rows are kept
    (a valid Parquet file in the parts folder, or the parts) and how to get the file."""


class ClusterLost(OutputError):
    """The Ray head stopped answering. Ray's own shutdown would wait for it (and may crash the
    process at exit), so the CLI leaves with ``os._exit`` once its line is out."""


class LoadError(MjrigError):
    """A load raised while computing its force; the load is named in the message."""


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (``kill``, ``timeout``, a job scheduler). A KeyboardInterrupt, so every
    path that finishes a recording or stops handing out trials on Ctrl+C does the same; the CLI
    exits 143 instead of 130."""
