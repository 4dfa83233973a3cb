"""Ctrl+C and SIGTERM that arrive while the compiled callbacks are made are answered after it:
the block runs to its end, then the handler that was in place runs once (a KeyboardInterrupt for
SIGINT), so a stop never lands inside numba's compilation (which segfaults at exit)."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from mjrig.runtime.compiled import native_kernel
from mjrig.runtime.stops_held import stops_held

pytestmark = [
    pytest.mark.unit,
    pytest.mark.skipif(
        threading.current_thread() is not threading.main_thread(), reason="signals need the main thread"
    ),
]


def test_sigint_inside_the_block_is_raised_when_it_ends():
    finished = False
    with pytest.raises(KeyboardInterrupt):
        with stops_held():
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):  # the bytecode checks where a handler would have run
                pass
            finished = True
    assert finished
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_sigterm_goes_to_the_handler_that_was_there_once(monkeypatch):
    seen: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    try:
        with stops_held():
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):
                pass
            assert seen == []
        for _ in range(1000):
            pass
        assert seen == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_nothing_arrives_nothing_is_raised():
    with stops_held():
        value = 1
    assert value == 1 and signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_kernel_is_made_whole_before_a_ctrl_c_is_answered(monkeypatch):
    made: list[str] = []

    class Slow:
        def __init__(self) -> None:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                pass
            made.append("whole")

    monkeypatch.setattr(native_kernel, "_kernel", None)
    monkeypatch.setattr(native_kernel, "_Kernel", Slow)
    monkeypatch.setenv("MJRIG_COMPILED", "1")
    with pytest.raises(KeyboardInterrupt):
        native_kernel.kernel()
    assert made == ["whole"] and isinstance(native_kernel._kernel, Slow)
