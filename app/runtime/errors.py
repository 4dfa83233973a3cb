"""The one root error class of mjrig and its few specialisations."""
from __future__ import annotations

import unicodedata

CHECK_FAILED = 4
"""Exit status when a check failed: a requirement in ``run``, a tolerance in ``compare``, no
feasible trial in ``optimize``."""
OUTPUT_FAILED = 5
"""Exit status when an output could not be written or a cluster was lost (disk full, permission,
Ray head gone): stepping stopped, what was written so far is kept and valid."""


def one_line(msg: str) -> str:
    """``msg`` with line breaks and other control characters escaped, so an error stays one line."""
    return "".join(ch.encode("unicode_escape").decode("ascii")
                   if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in msg)


def exception_text(exc: BaseException, *, with_type: bool = False) -> str:
    """An exception's message on one line (whitespace collapsed); ``with_type`` prefixes its class."""
    text = " ".join(str(exc).split())
    if with_type:
        return f"{type(exc).__name__}: {text or 'no message'}"
    return text or type(exc).__name__


class MjrigError(Exception):
    """Root of every mjrig error. Its message is one line meant for the user."""


class ConfigError(MjrigError):
    """Bad input: a file, field or name the user gave is wrong. The CLI exits 2."""


class DivergenceError(MjrigError):
    """The physics diverged (NaN/Inf state or MuJoCo's bad-acceleration warning). The CLI exits 3."""


class OutputError(MjrigError):
    """An output could not be written (disk full, permission) or the cluster running the trials
    was lost; the message says what was kept and how to go on. The CLI exits 5."""


class ClusterLost(OutputError):
    """The Ray head stopped answering. Ray's own shutdown would wait for it (and may crash the
    process at exit), so the CLI leaves with ``os._exit`` once its line is out."""


class LoadError(MjrigError):
    """A load raised while computing its force; the load is named in the message."""


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (``kill``, ``timeout``, a job scheduler). A KeyboardInterrupt, so every
    path that finishes a recording or stops handing out trials on Ctrl+C does the same; the CLI
    exits 143 instead of 130."""
