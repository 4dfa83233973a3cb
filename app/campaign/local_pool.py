"""Trials run on this machine: in lock-step in this process, or on a pool of local worker processes.

Local execution, on ``workers`` cores (default: every core this process may use). A rig whose
loads are all MuJoCo's own and that runs no Python between steps is run in lock-step by this
process on ``workers`` C threads (``mjrig.campaign.lockstep``: the same rows, bit for bit; rows
reach the log a batch of about half a second at a time). Otherwise: ``workers`` processes from a
``ProcessPoolExecutor`` on the ``forkserver`` start method (no fork of a threaded parent); each
builds the rig once in its initializer (``mjrig.campaign.trial``). Trials are sent in chunks of up
to 8 and at most ``4 x workers`` chunks are in flight, so memory stays flat in the number of
trials. ``workers=1`` runs in this process. A sweep (``run_local``), a study and a fit
(``open_pool``, ``kill_workers``) share the pool's making and its ending.

Lifetime: a worker ends within milliseconds of this process, however it ends (SIGKILL too), and
writes nothing after it: each worker watches this process's pidfd from a thread and SIGKILLs
itself when it becomes readable (``mjrig.campaign.trial.end_with_driver``); with the workers gone
the forkserver and the resource tracker see their pipes close and end too. Workers ignore
SIGINT; on Ctrl+C, SIGTERM or an error this process stops handing out trials, keeps the rows
already handed on (a sweep's log keeps them), and kills its workers rather than wait for the chunks they run (those trials
run again on resume).

Threads: the caller's (the driver's main thread); the pool's own management thread is
``concurrent.futures``'.
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import multiprocessing
import os
import sys
from collections.abc import Callable, Collection, Iterable
from typing import Any

from mjrig.campaign.lockstep import LockStep, lockstep_refusal
from mjrig.campaign.trial import SweepJob, Task, TrialRunner, init_worker, run_trials
from mjrig.runtime.errors import ConfigError, MjrigError

__all__ = ["RowSink", "run_local", "default_workers", "open_pool", "kill_workers"]

RowSink = Callable[[dict[str, Any]], None]
"""What a finished trial's row is handed to (the sweep's log, a study's or a fit's collector)."""


def default_workers() -> int:
    """Every core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def run_local(
    job: SweepJob,
    todo: Collection[Task],
    keep: RowSink,
    *,
    workers: int,
    lockstep: bool = True,
    runner: TrialRunner | None = None,
) -> None:
    """Run ``todo`` on ``workers`` cores, handing each row to ``keep``: in lock-step on as many
    C threads of this process when the rig allows (``mjrig.campaign.lockstep``; ``lockstep=False``
    never), else on ``workers`` local processes (this one when 1). ``runner``: this process's
    runner of ``job`` if one was built already."""
    if not todo:
        return
    workers = min(workers, len(todo))
    if lockstep or workers == 1:  # in this process
        here = runner if runner is not None else TrialRunner(job)
        if lockstep and lockstep_refusal(here) is None:
            LockStep(here, nthread=workers).run(todo, keep)
            return
        if workers == 1:
            for i in todo:
                keep(here.run(i))
            return
    pool = open_pool(job, workers)
    # Trials go in chunks, so a short trial's round trip to the driver is shared (up to 8 a task,
    # while every worker still gets 4 chunks or more); at most 4 chunks a worker are in flight.
    chunk = max(1, min(8, len(todo) // (4 * workers)))
    try:
        pending: set[cf.Future] = set()
        queue = iter(todo)
        for _ in range(4 * workers):
            if part := _take(queue, chunk):
                pending.add(pool.submit(run_trials, job, part))
        while pending:
            finished, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for fut in finished:
                for row in _result(fut):
                    keep(row)
                if part := _take(queue, chunk):
                    pending.add(pool.submit(run_trials, job, part))
    except BaseException:  # Ctrl+C, SIGTERM (Terminated), a broken pool, a full disk...
        kill_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def open_pool(job: SweepJob, workers: int) -> cf.ProcessPoolExecutor:
    """``workers`` local worker processes for ``job`` (forkserver; each builds the rig once,
    ignores Ctrl+C and ends with this process: ``mjrig.campaign.trial.init_worker``)."""
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    _quiet_tracker()
    if ctx.get_start_method() == "forkserver":  # workers fork from a server that imported mjrig once
        ctx.set_forkserver_preload(
            ["mjrig.campaign.trial", "mjrig.scenario.builder", "mjrig.campaign.forkserver_quiet"]
        )
    init = functools.partial(init_worker, driver_pid=os.getpid())
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=init, initargs=(job,))


_TRACKER_QUIET = "ignore::UserWarning:multiprocessing.resource_tracker"


def _quiet_tracker() -> None:
    """The resource tracker started for the pool says nothing of "leaked semaphore objects" when
    this process is killed (SIGKILL leaves it no time to remove the pool's semaphores): the
    tracker removes them, and its warning would reach the user's terminal after the driver is
    gone. The tracker is a new interpreter given this process's ``-W`` options
    (``sys.warnoptions``), so the filter goes there before the pool makes its first semaphore;
    this process's own warnings are not changed."""
    if _TRACKER_QUIET not in sys.warnoptions:
        sys.warnoptions.append(_TRACKER_QUIET)


def kill_workers(pool: cf.ProcessPoolExecutor) -> None:
    """SIGKILL ``pool``'s workers now. Why: the trials they are running are lost either way
    (rows come back a chunk at a time; a resumed sweep runs them again), and ``shutdown(wait=True)``
    would wait for up to a whole chunk of trials before a Ctrl+C or SIGTERM takes effect."""
    kill = getattr(pool, "kill_workers", None)  # Python 3.14
    if kill is not None:
        kill()
        return
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            proc.kill()
        except (OSError, ValueError):  # already gone or closed
            pass


def _take(it: Iterable[Task], n: int) -> list[Task]:
    out = []
    for x in it:
        out.append(x)
        if len(out) >= n:
            break
    return out


def _result(fut: cf.Future) -> list[dict[str, Any]]:
    try:
        return fut.result()
    except cf.process.BrokenProcessPool as exc:
        raise MjrigError(f"a sweep worker process died ({exc}); run the same command again to resume") from None
    except ConfigError:
        raise
    except Exception as exc:  # the rig could not be built in a worker
        raise MjrigError(f"a sweep worker failed: {type(exc).__name__}: {exc}") from None
