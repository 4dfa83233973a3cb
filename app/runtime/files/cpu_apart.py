"""A helper thread kept off the core its producer runs on (Linux; elsewhere nothing happens).

The recorder's writer thread encodes on whatever core the scheduler gives it, and the scheduler
wakes a thread where its waker runs: next to the stepping thread, which then loses the time the
writer takes. On a machine whose other core runs another job that is the whole difference: a
recorded humanoid on 2 cores with a busy loop beside it measured 0.57-0.60 of a bare loop left
to the scheduler, 0.71-0.73 with the writer on the busy loop's core (it takes half of that core,
the stepping thread all of its own). So the producer says where it runs (``here``) and the
writer, before each piece of work, allows itself every core of the process but that one
(``keep_off``); when it has fallen behind it takes any core again, so it is never starved there.

Threading: ``here`` on the producer; ``keep_off`` on the thread to move (it moves itself).
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable

__all__ = ["here", "Apart"]

_sched_getcpu: Callable[[], int] | None
try:
    _getcpu = ctypes.CDLL(None, use_errno=True).sched_getcpu
    _getcpu.restype = ctypes.c_int
    _sched_getcpu = _getcpu
except (OSError, AttributeError):  # not glibc, or not Linux
    _sched_getcpu = None


def here() -> int:
    """The core the calling thread runs on now, or -1 when that cannot be told."""
    return int(_sched_getcpu()) if _sched_getcpu is not None else -1


class Apart:
    """The calling thread's cores (``os.sched_getaffinity`` when it is made), to keep it off one."""

    def __init__(self) -> None:
        try:
            self._cores = frozenset(os.sched_getaffinity(0))
        except (AttributeError, OSError):  # no affinity on this system
            self._cores = frozenset()
        self._allowed = self._cores

    def keep_off(self, core: int, *, behind: bool = False) -> None:
        """Let the calling thread run on every core it may but ``core`` (-1: on any), or on any
        when it is ``behind``; a thread of one core, or a system without affinity, stays as
        it is."""
        if len(self._cores) < 2:
            return
        want = self._cores if behind or core not in self._cores else self._cores - {core}
        if want != self._allowed:
            try:
                os.sched_setaffinity(0, want)
                self._allowed = want
            except OSError:  # a cpuset changed under us: stop moving it
                self._cores = frozenset()
