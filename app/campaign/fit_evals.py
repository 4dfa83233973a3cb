"""A fit's evaluations: each point's residual, computed as trials or replayed from the log of an
earlier run of the same fit.

A point (the fitted params' and variables' values) is run as one trial per experiment
(``fit_problem``): on Ray, in lock-step on ``workers`` C threads of this process where the
experiment's rig allows (``mjrig.campaign.lockstep``), else on the local pool (``local_pool``:
its workers keep each experiment's rig built) or one by one here. Its residual is stacked from
the experiments' rows (``fit_problem.residual``). Each point's residual and status is appended at
once as one JSON line to the fit's log (``EVALS_LOG`` in the fit's parts folder: exact floats;
a line a kill cut short is dropped when it is read back, ``read_evaluations``), so a fit run
again evaluates only points not there. Every point new to the fit gets a row (its trial number,
the start it belongs to, its values, its cost ½·Σr², its status): FIT.parquet's rows.

Threads: the fit's driver (the caller's) only; the pool's workers and MuJoCo's C threads run
the trials.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mjrig.campaign.fit_problem import Experiment, residual
from mjrig.campaign.local_pool import kill_workers, open_pool
from mjrig.campaign.lockstep import LockStep, lockstep_refusal
from mjrig.campaign.trial import TrialRunner, run_trials

__all__ = ["Evaluations", "read_evaluations", "EVALS_LOG"]

EVALS_LOG = "evals.jsonl"
"""The log of a fit's evaluated points, in its parts folder (``FIT.parquet.parts``)."""


@dataclass
class Evaluations:
    """Residuals by point: computed on workers, or replayed from the log of an earlier run."""

    exps: list[Experiment]
    log: Any
    workers: int
    ray: str | None
    known: dict[str, tuple[np.ndarray, str]] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    reused: int = 0
    pool: Any = None
    runners: dict[int, TrialRunner] = field(default_factory=dict)
    ran_on_ray: bool = False
    progress: Callable[[int, float], None] | None = None
    lockstep: bool = True
    locksteps: dict[int, LockStep | None] = field(default_factory=dict)

    def many(self, points: list[dict[str, float]], start: int) -> list[tuple[np.ndarray, str]]:
        """Each point's (residual, status), in order; a point new to this fit gets a row (its
        trial number) and runs unless an earlier run of the same fit logged it."""
        keys = [json.dumps(p, sort_keys=True) for p in points]
        fresh = [(k, p) for k, p in dict(zip(keys, points)).items() if k not in self.seen]
        numbered = {k: len(self.rows) + 1 + i for i, (k, _) in enumerate(fresh)}
        todo = [(k, p) for k, p in fresh if k not in self.known]
        if todo:
            results = self._run([(numbered[k], p) for k, p in todo])
            for (key, _), (r, status) in zip(todo, results):
                self.known[key] = (r, status)
                self.log.write(json.dumps({"key": key, "r": r.tolist(), "status": status}) + "\n")
                self.log.flush()  # in the kernel's hands: a kill loses nothing logged
        self.reused += len(fresh) - len(todo)
        for key, p in fresh:
            self.seen.add(key)
            r, status = self.known[key]
            self.rows.append(
                {
                    "trial": numbered[key],
                    "start": start,
                    **{f"Params/{n}:value": v for n, v in p.items()},
                    "cost": float(0.5 * r @ r),
                    "status": status,
                }
            )
        if self.progress is not None and fresh:
            self.progress(len(self.rows), min(row["cost"] for row in self.rows))
        return [self.known[k] for k in keys]

    def _run(self, points: list[tuple[int, dict[str, float]]]) -> list[tuple[np.ndarray, str]]:
        """Every experiment of every (trial number, point): on Ray, in lock-step here, on local
        workers or one by one here."""
        tasks = [(e, (trial, exp.values(p), 0)) for trial, p in points for e, exp in enumerate(self.exps)]
        got: dict[tuple[int, int], dict[str, Any]] = {}

        def keeper(e: int) -> Callable[[dict[str, Any]], None]:
            """What keeps experiment ``e``'s rows in ``got``, by (experiment, trial)."""

            def keep(row: dict[str, Any]) -> None:
                got[(e, int(row["trial"]))] = row

            return keep

        if self.ray is not None:
            from mjrig.campaign.ray_cluster import run_on_ray

            for e, exp in enumerate(self.exps):
                mine = [t for ee, t in tasks if ee == e]
                run_on_ray(
                    exp.job,
                    mine,
                    keeper(e),
                    address=self.ray,
                    again=self.ran_on_ray,
                    stay=True,
                )
                self.ran_on_ray = True
            tasks = []
        for e in range(len(self.exps)) if self.ray is None and self.lockstep else ():
            if (step := self._lockstep(e)) is not None:
                mine = [t for ee, t in tasks if ee == e]
                if mine:
                    step.run(mine, keeper(e))
        tasks = [(e, t) for e, t in tasks if (e, t[0]) not in got]
        if self.workers > 1 and len(tasks) > 1:
            if self.pool is None:
                self.pool = open_pool(self.exps[0].job, self.workers)
            futures = {self.pool.submit(run_trials, self.exps[e].job, [t]): (e, t[0]) for e, t in tasks}
            try:
                for fut in cf.as_completed(futures):
                    got[futures[fut]] = fut.result()[0]
            except BaseException:
                kill_workers(self.pool)
                raise
        else:
            for e, t in tasks:
                got[(e, t[0])] = self._runner(e).run(t)
        return [residual(self.exps, [got[(e, trial)] for e in range(len(self.exps))]) for trial, _ in points]

    def _runner(self, e: int) -> TrialRunner:
        """This process's runner of experiment ``e``, built on first use."""
        return self.runners.get(e) or self.runners.setdefault(e, TrialRunner(self.exps[e].job))

    def _lockstep(self, e: int) -> LockStep | None:
        """Experiment ``e``'s trials in lock-step, or None when its rig does not allow it."""
        if e not in self.locksteps:
            runner = self._runner(e)
            self.locksteps[e] = LockStep(runner, nthread=self.workers) if lockstep_refusal(runner) is None else None
        return self.locksteps[e]

    def close(self) -> None:
        """End the local pool's workers and leave the Ray cluster, where this fit used them."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        if self.ran_on_ray and self.ray is not None:
            from mjrig.campaign.ray_cluster import disconnect

            disconnect(self.ray)


def read_evaluations(path: Path) -> dict[str, tuple[np.ndarray, str]]:
    """The residuals an earlier run logged (a line cut short by a kill is dropped)."""
    known: dict[str, tuple[np.ndarray, str]] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                item = json.loads(line)
                known[item["key"]] = (np.array(item["r"], dtype=float), str(item["status"]))
            except (ValueError, KeyError, TypeError):
                continue
    return known
