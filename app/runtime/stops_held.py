"""Ctrl+C and SIGTERM held back while native code is made, then answered.

numba (llvmlite) compiles mjrig's callbacks in the calling thread. A KeyboardInterrupt raised
by a Python signal handler in the middle of that leaves a half-built LLVM execution engine whose
finaliser ends the process with a segfault (measured: 2 of 25 ``mjrig run`` stops 0.4 s after
start, after the command had printed its line). Holding the two signals for that second and
delivering them once it is over turns every such stop into the command's usual one line.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["stops_held"]

_HELD = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def stops_held() -> Iterator[None]:
    """Run the block with SIGINT and SIGTERM noted rather than handled; on leaving it, the
    previous handlers come back and the first signal that arrived is raised again, so they
    answer it as if it came just then. Off the main thread (where Python signal handlers never
    run) and for signals whose handler Python did not set, nothing is held."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []

    def note(signum: int, frame: object) -> None:
        arrived.append(signum)

    previous = {s: h for s in _HELD if (h := signal.getsignal(s)) is not None}
    for s in previous:
        signal.signal(s, note)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        if arrived:
            signal.raise_signal(arrived[0])
