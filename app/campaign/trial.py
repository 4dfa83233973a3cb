"""One worker's side of a sweep: build the rig once, then run trial after trial on it.

A worker (a local process, or a Ray worker process) gets a picklable ``SweepJob`` -- the
scenario's text and where it came from, not a file to re-read -- and builds a ``TrialRunner``:
the model compiled with its rig, once. Each trial then only resets what a trial changes: the
physics state (``Rig.reset``), the params it sweeps, the requirements' state and the recorder;
the rig is re-resolved on the same compiled model (``RuntimeManager.set_recorder``), which
re-writes every model-field binding from the values the model had when first bound. So trial
``i`` gives the same numbers whatever ran before it in that process, and wherever it runs.

Per process, runners are cached by job (``runner_for``): a pool initializer or the first Ray
task of a process builds it; later tasks reuse it.

A local worker lives no longer than its driver (``end_with_driver``): however the driver ends,
SIGKILL included, the worker is killed within milliseconds and writes nothing after it. It
ignores SIGINT: Ctrl+C reaches the whole process group, and the driver decides what stops.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import shutil
import signal
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mjrig.recordings.recorder import open_recorder, outcome_metadata
from mjrig.runtime import mjwarnings
from mjrig.runtime.errors import DivergenceError, one_line
from mjrig.runtime.files.parquet_sink import segment_dir
from mjrig.runtime.telemetry.signals import SignalManager
from mjrig.scenario.studies.fit import apply_variables

__all__ = [
    "SweepJob",
    "TrialRunner",
    "Task",
    "runner_for",
    "run_trial",
    "run_trials",
    "init_worker",
    "end_with_driver",
    "STATUSES",
]

STATUSES = ("pass", "fail", "diverged", "error")

Task = int | tuple[int, dict[str, float], int]
"""A trial to run: a sweep's trial number, or (number, param values, seed) chosen by a driver."""


@dataclass(frozen=True)
class SweepJob:
    """What every worker needs to run any trial of a sweep (picklable, hashable).

    ``text``/``source``/``base``: the scenario as parsed by the driver; ``trials``/``seed``: the
    command line's overrides (None: the scenario's); ``duration`` (s) of each trial;
    ``record_dir``: where ``trial-<n>.parquet`` go (None: no per-trial recordings);
    ``metadata``: the recordings' file metadata as JSON text."""

    text: str
    source: str | None
    base: str
    trials: int | None = None
    seed: int | None = None
    duration: float | None = None
    record_dir: str | None = None
    metadata: str = "{}"
    traces: bool = False
    """Rows carry ``Trace/<metric>``: each rms_error/max_error metric's simulated values at its
    measured samples (``Metric.samples``; what ``mjrig fit`` builds its residuals from)."""

    def scenario(self) -> Any:
        from mjrig.scenario.parse import parse_scenario

        return parse_scenario(self.text, source=Path(self.source) if self.source else None, base=Path(self.base))


@dataclass
class TrialRunner:
    """A compiled rig that runs trials of ``job`` one after the other (one thread)."""

    job: SweepJob
    warnings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        from mjrig.scenario.builder import build_rig

        mjwarnings.install()
        self.scenario = self.job.scenario()
        sweep = self.scenario.sweep
        self.spec = sweep.with_overrides(trials=self.job.trials, seed=self.job.seed) if sweep is not None else None
        self.rig = build_rig(self.scenario, on_warning=self.warnings.append)
        self.duration = self.job.duration if self.job.duration is not None else self.scenario.duration

    def task(self, task: Task) -> tuple[int, dict[str, float], int]:
        """(trial number, param values, trial seed) of ``task``: a sweep's trial number, or a
        trial whose values and seed its driver chose (an optimisation's)."""
        if isinstance(task, int):
            values, tseed = self.spec.trial(task)  # type: ignore[union-attr]
            return task, values, tseed
        trial, values, tseed = task
        return int(trial), dict(values), int(tseed)

    def run(self, task: Task) -> dict[str, Any]:
        """Run ``task``; returns its results row (see ``mjrig.campaign.sweep.row_schema``)."""
        trial, values, tseed = self.task(task)
        self.warnings.clear()
        status, message = "pass", None
        recorder = None
        try:
            recorder = self.begin(trial, values, tseed)
            self._step()
            if recorder is not None:
                recorder.add_metadata(outcome_metadata(self.rig.runtime))
        except DivergenceError as exc:
            status, message = "diverged", one_line(str(exc))
        except Exception as exc:  # a trial's failure is a row, not the end of the sweep
            status, message = "error", one_line(f"{type(exc).__name__}: {exc}")
        finally:
            if recorder is not None:
                try:
                    recorder.close()
                except Exception as exc:
                    status, message = "error", one_line(f"recording: {exc}")
        return self.row(trial, tseed, status, message)

    def begin(self, trial: int, values: dict[str, float], tseed: int) -> SignalManager | None:
        """Set the rig up for a trial with param ``values`` (and a fit's ``initial.<joint>`` and
        ``offset.<entry>``: ``mjrig.scenario.studies.fit``): the start state, the params, the
        requirements' state and the recorder (returned; the caller closes it). The rig is
        re-resolved at the first step, on the same compiled model."""
        self.rig.reset()
        rig = self.rig
        for name, v in apply_variables(values, self.scenario, data=(rig.model, rig.data)).items():
            self.scenario.params[name].value = v
        for r in self.scenario.requirements:
            r.reset()
        recorder = self._recorder(trial, tseed)
        self.rig.runtime.set_recorder(recorder)
        return recorder

    def row(self, trial: int, tseed: int, status: str, message: str | None) -> dict[str, Any]:
        """The results row of a trial that ended with ``status``: the params' values now, and
        each requirement decided now (when the trial passed or diverged)."""
        sc, rig = self.scenario, self.rig
        row: dict[str, Any] = {"trial": trial, "seed": tseed}
        for name, nv in sc.params.items():
            row[f"Params/{name}:value"] = float(nv.value)
        decided = status in ("pass", "diverged")
        reqs = rig.runtime.finish_requirements() if decided else sc.requirements
        for r in reqs:
            row[f"Requirements/{r.name}:pass"] = bool(r.passed) if decided else None
            v = r.value if decided else None
            row[f"Requirements/{r.name}:value"] = None if v is None else float(v)
        metrics = rig.runtime.metric_entries() if decided else {}
        for m in sc.metrics:
            row[f"Metrics/{m.name}:value"] = metrics[m.name]["value"] if m.name in metrics else None
        if self.job.traces:
            log = rig.runtime.checks.metrics if rig.runtime.checks is not None else None
            for m in sc.metrics:
                if m.reference is not None:
                    t, x = log.series(m.signal) if decided and log is not None else (np.empty(0), np.empty(0))
                    row[f"Trace/{m.name}"] = m.samples(t, x).tolist()
        if status == "pass" and not all(r.passed for r in reqs):
            status = "fail"
        if message is None and self.warnings:
            message = "; ".join(dict.fromkeys(one_line(w) for w in self.warnings))
        row["status"], row["message"] = status, message
        return row

    def _step(self) -> None:
        m, d, rm = self.rig.model, self.rig.data, self.rig.runtime
        n_steps = max(1, int(round(self.duration / m.opt.timestep)))
        checks = bool(rm.requirements)
        for _ in range(n_steps):
            rm.step(m, d)
            if checks and rm.stop_requested:
                break

    def _recorder(self, trial: int, tseed: int) -> SignalManager | None:
        if self.job.record_dir is None:
            return None
        path = Path(self.job.record_dir) / f"trial-{trial}.parquet"
        shutil.rmtree(segment_dir(path), ignore_errors=True)  # what a killed earlier attempt left
        extra = {
            "mjrig.set": json.dumps({n: nv.value for n, nv in self.scenario.params.items()}),
            "mjrig.trial": str(trial),
            "mjrig.seed": str(tseed),
        }
        rec = self.scenario.recording
        return open_recorder(
            path, metadata=json.loads(self.job.metadata), rate=rec.rate, groups=rec.signals, extra_metadata=extra
        )


RUNNERS_KEPT = 8
"""Rigs a worker process keeps built (one per job: a sweep has one, a fit one per experiment)."""


class _Runners:
    """The runners this process built, by job (a worker process serves one sweep at a time)."""

    by_job: dict[SweepJob, TrialRunner] = {}


def runner_for(job: SweepJob) -> TrialRunner:
    """This process's runner of ``job``, built on first use."""
    runner = _Runners.by_job.get(job)
    if runner is None:
        if len(_Runners.by_job) >= RUNNERS_KEPT:  # a fit's experiments take turns: keep a few
            _Runners.by_job.pop(next(iter(_Runners.by_job)))
        runner = _Runners.by_job[job] = TrialRunner(job)
    return runner


def init_worker(job: SweepJob, *, driver_pid: int | None = None) -> None:
    """Pool initializer: leave Ctrl+C to the driver, end with the driver ``driver_pid`` (see
    ``end_with_driver``), and build the rig before the first trial arrives."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl+C goes to the whole process group: the driver decides
    if driver_pid is not None:
        end_with_driver(driver_pid)
    runner_for(job)


PR_SET_PDEATHSIG = 1
"""prctl(2) option: the signal this process gets when its parent ends (linux/prctl.h)."""


def end_with_driver(driver_pid: int) -> bool:
    """Kill this process as soon as process ``driver_pid`` ends, however it ends.

    Why: a pool worker's parent is the forkserver, not the driver, and nothing in
    ``concurrent.futures`` notices a driver killed by SIGKILL: its workers went on running (and
    writing trial recordings) for good, and kept the forkserver and the resource tracker alive.
    A daemon thread blocks on a pidfd of the driver (readable once it has exited: no polling)
    and then SIGKILLs this process, so no cleanup runs and nothing more is written. As a belt,
    PR_SET_PDEATHSIG kills it when its parent (the forkserver; the driver under ``spawn``) ends.
    True when the watch is set; False where pidfds are missing (not Linux, a kernel before 5.3):
    the worker then runs as before.
    """
    _die_with_parent()
    try:
        fd = os.pidfd_open(driver_pid)
    except ProcessLookupError:  # the driver ended before this worker started
        os.kill(os.getpid(), signal.SIGKILL)
    except (AttributeError, OSError):
        return False

    def watch() -> None:
        poll = select.poll()
        poll.register(fd, select.POLLIN)
        poll.poll()  # blocks until the driver has exited (an EINTR is retried)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="mjrig-driver-watch", daemon=True).start()
    return True


def _die_with_parent() -> None:
    """prctl(PR_SET_PDEATHSIG, SIGKILL) on Linux (nothing elsewhere or if libc refuses)."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent ended before the call took effect
        os.kill(os.getpid(), signal.SIGKILL)


def run_trial(job: SweepJob, task: Task) -> dict[str, Any]:
    """Run ``task`` of ``job`` on this process's runner (a pool or Ray task)."""
    return runner_for(job).run(task)


def run_trials(job: SweepJob, tasks: list[Task]) -> list[dict[str, Any]]:
    """Run several tasks of ``job`` in turn on this process's runner (one pool task)."""
    runner = runner_for(job)
    return [runner.run(t) for t in tasks]
