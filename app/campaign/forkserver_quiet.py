"""Imported by the local worker pool's forkserver only (``local_pool.open_pool`` preloads it): a
worker forked as the pool is being shut down says nothing.

Why: a SIGTERM or Ctrl+C just as the pool starts its workers (about 0.6 s into a sweep) makes the
driver shut the pool down and unlink its semaphores while the forkserver is still forking a
worker; that worker then cannot rebuild the semaphores of the process object it is sent
(``FileNotFoundError`` in ``SemLock._rebuild``) and the forkserver's child prints the traceback
on the terminal the driver shares, under the driver's one line. Nothing was lost: the worker
never ran a trial. Every other error of a forked worker is printed as before.

Importing it replaces ``sys.excepthook`` in the importing process: import it nowhere else.
"""

from __future__ import annotations

import sys
from types import TracebackType

__all__ = ["pool_gone"]

_PRINT = sys.excepthook


def pool_gone(kind: type[BaseException], tb: TracebackType | None) -> bool:
    """Whether an error is a worker's start after its pool's semaphores were removed: an OSError
    raised while a ``SemLock`` was rebuilt from the driver's pickled process object."""
    if not issubclass(kind, OSError):
        return False
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "__setstate__" and code.co_filename.endswith("synchronize.py"):
            return True
        tb = tb.tb_next
    return False


def _hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    if not pool_gone(kind, tb):
        _PRINT(kind, value, tb)


sys.excepthook = _hook
