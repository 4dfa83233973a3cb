"""The tests' one way to wait: look again and again until something holds, or fail naming it.

A test waits for an event or a state that shows the app has done what it was asked (a line it
writes, a file, the state it publishes); it never sleeps to let something happen, nor to assert
that something did not.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["wait_for"]

T = TypeVar("T")

FIRST_LOOK_S = 0.01
"""The pause before the second look (s); it doubles up to ``every``: what holds almost at once is
seen almost at once, and a long wait looks no more often than ``every``."""


def _holds(value: object) -> bool:
    """Whether ``value`` counts as the condition met: true, or a value that has no truth of its
    own (a DataFrame: having one is enough)."""
    if value is None or value is False:
        return False
    try:
        return bool(value)
    except (TypeError, ValueError):
        return True


def _shown(value: object, limit: int = 300) -> str:
    """``repr(value)``, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def wait_for(predicate: Callable[[], T], *, what: str, timeout: float = 30.0, every: float = 0.1) -> T:
    """Call ``predicate`` until it returns a value that holds (true; a DataFrame or another value
    without a truth of its own counts) and return that value. Between two looks it pauses at most
    ``every`` seconds (the first pauses are shorter, see ``FIRST_LOOK_S``). After ``timeout``
    seconds it raises AssertionError naming ``what`` and the last value seen."""
    end = time.monotonic() + timeout
    pause = min(FIRST_LOOK_S, every)
    while True:
        value = predicate()
        if _holds(value):
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what} (last seen: {_shown(value)})")
        time.sleep(pause)
        pause = min(2 * pause, every)
