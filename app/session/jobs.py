"""Slow work off the simulation thread (finishing a recording, recovering one), reported back on it."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["BackgroundJobs"]


class BackgroundJobs:
    """Runs ``work()`` on its own thread; ``done(result, error)`` runs later on the owner's thread.

    Threading: ``start``, ``finish`` and ``join`` are called from the owner (simulation) thread;
    a job's thread only computes and queues its outcome, it never touches the owner's state.
    """

    def __init__(self) -> None:
        self._threads: list[threading.Thread] = []
        self._outcomes: queue.Queue[tuple[Callable[[Any, BaseException | None], None], Any, BaseException | None]] = (
            queue.Queue()
        )

    def start(self, name: str, work: Callable[[], Any], done: Callable[[Any, BaseException | None], None]) -> None:
        """Run ``work`` now on a thread called ``name``; its result or exception goes to ``done``."""

        def run() -> None:
            try:
                result, error = work(), None
            except Exception as exc:  # noqa: BLE001 - handed to done(), never lost
                result, error = None, exc
            self._outcomes.put((done, result, error))

        t = threading.Thread(target=run, name=name)
        t.start()
        self._threads = [th for th in self._threads if th.is_alive()] + [t]

    def finish(self) -> None:
        """Run ``done`` of every job that has ended (call on the owner's thread)."""
        while True:
            try:
                done, result, error = self._outcomes.get_nowait()
            except queue.Empty:
                return
            done(result, error)

    def join(self) -> None:
        """Wait for every job, then run their ``done``."""
        for t in self._threads:
            t.join()
        self._threads.clear()
        self.finish()
