"""Slow work off the simulation thread (finishing a recording, recovering one, a fit, modes, an
export), reported back on it.

A job a person waits for (started with a ``Job``: "a fit", "an export to csv") is *long*: it is listed by
``running()`` with its progress, and ``cancel()`` stops it. Its work calls ``Job.step`` now and
then, which raises ``Cancelled`` once a cancel was asked; work that never asks is abandoned (its
result is dropped, its thread left to end on its own, never waited for at exit). A job without
a ``Job`` (a recording being finished) is never cancelled and always waited for: nothing is lost.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from mjrig.panel_state import JobInfo

__all__ = ["BackgroundJobs", "Cancelled", "Job", "running", "infos", "cancel", "abandoned"]

ABANDON_S = 0.5
"""Seconds a cancelled job's thread is waited for at exit before it is left to end alone."""


_LEFT: list[threading.Thread] = []
"""Cancelled jobs' threads still running when they were no longer waited for (``join``)."""


def abandoned() -> bool:
    """Whether a cancelled job was left running (it may be inside MuJoCo's C code, a lock-step
    evaluation of a fit): the process must then end without tearing the interpreter down
    (``mjrig.entry``), which would free what that code still uses."""
    return any(t.is_alive() for t in _LEFT)


class Cancelled(Exception):
    """A long job was cancelled: its result is not wanted."""


@dataclass
class Job:
    """A long job's progress, as its work reports it, and the cancel a person may ask for."""

    what: str
    fraction: float | None = None  # 0..1 when known
    note: str = ""  # e.g. "12 evaluations"
    cancel: threading.Event = field(default_factory=threading.Event)

    def step(self, fraction: float | None = None, *, note: str | None = None) -> None:
        """Report progress; raises ``Cancelled`` once a cancel was asked (call from the work)."""
        if self.cancel.is_set():
            raise Cancelled(f"{self.what} cancelled")
        self.fraction = fraction
        if note is not None:
            self.note = note


class BackgroundJobs:
    """Runs ``work()`` on its own thread; ``done(result, error)`` runs later on the owner's thread.

    Threading: ``start``, ``finish`` and ``join`` are called from the owner (simulation) thread;
    a job's thread only computes and queues its outcome, it never touches the owner's state.
    """

    def __init__(self) -> None:
        self._threads: list[threading.Thread] = []
        self._long: dict[threading.Thread, Job] = {}
        self._outcomes: queue.Queue[tuple[Callable[[Any, BaseException | None], None], Any, BaseException | None]] = (
            queue.Queue()
        )

    def start(
        self,
        name: str,
        work: Callable[[], Any],
        done: Callable[[Any, BaseException | None], None],
        *,
        job: Job | None = None,
    ) -> None:
        """Run ``work`` now on a thread called ``name``; its result or exception goes to ``done``
        (``Cancelled`` when ``job``, a long job's, was cancelled meanwhile)."""

        def run() -> None:
            try:
                result, error = work(), None
            except Exception as exc:  # noqa: BLE001 - handed to done(), never lost
                result, error = None, exc
            if job is not None and job.cancel.is_set() and not isinstance(error, Cancelled):
                result, error = None, Cancelled(f"{job.what} cancelled")
            self._outcomes.put((done, result, error))

        t = threading.Thread(target=run, name=name, daemon=job is not None)
        t.start()
        self._threads = [th for th in self._threads if th.is_alive()] + [t]
        self._long = {th: j for th, j in self._long.items() if th.is_alive()}
        if job is not None:
            self._long[t] = job

    def running(self) -> tuple[Job, ...]:
        """The long jobs under way and not cancelled."""
        return tuple(j for th, j in self._long.items() if th.is_alive() and not j.cancel.is_set())

    def cancel(self) -> None:
        """Ask every long job to stop (their ``done`` gets ``Cancelled``)."""
        for job in self._long.values():
            job.cancel.set()

    def finish(self) -> None:
        """Run ``done`` of every job that has ended (call on the owner's thread)."""
        while True:
            try:
                done, result, error = self._outcomes.get_nowait()
            except queue.Empty:
                return
            done(result, error)

    def join(self) -> None:
        """Wait for every job (a cancelled long one ``ABANDON_S`` at most), then run their ``done``."""
        for t in self._threads:
            job = self._long.get(t)
            t.join(ABANDON_S if job is not None and job.cancel.is_set() else None)
            if t.is_alive():
                _LEFT.append(t)
        self._threads.clear()
        self.finish()


def running(owners: Iterable[Any]) -> tuple[Job, ...]:
    """The long jobs under way of ``owners`` (each with a ``jobs``: BackgroundJobs or None)."""
    return tuple(j for o in owners if o.jobs is not None for j in o.jobs.running())


def infos(owners: Iterable[Any]) -> tuple[JobInfo, ...]:
    """The long jobs under way of ``owners`` as the panel lists them (``PanelState.jobs``)."""
    return tuple(JobInfo(j.what, j.fraction, j.note) for j in running(owners))


def cancel(owners: Iterable[Any]) -> None:
    """Stop the long jobs of ``owners``; each says so as it ends."""
    for o in owners:
        if o.jobs is not None:
            o.jobs.cancel()
