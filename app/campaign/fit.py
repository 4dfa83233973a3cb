"""``mjrig fit``: estimate a scenario's ``[fit]`` params from its ``[[measured]]`` data.

Method: scipy's bounded ``least_squares`` (trust-region reflective) over the params scaled to
[0, 1] within their bounds (on a log scale where ``log = true``), from the params' values, then
from ``[fit] starts - 1`` more points of a Sobol sequence over the bounds; the lowest cost wins.
The Jacobian is forward differences whose points are evaluated as trials side by side: every
experiment of every point (``fit_problem``) in lock-step on ``workers`` C threads of this process
where the experiment's rig allows (``mjrig.campaign.lockstep``: the same residuals, bit for bit),
else on ``workers`` local processes (the sweep's pool: each builds each experiment's rig once),
or as Ray tasks.

At the solution (``fit_estimate``): the residual variance s² = Σr² / (m − n), the covariance s² (JᵀJ)⁻¹ with J in
the params' own units, standard errors, 95 % intervals from Student's t (for a log-scale param,
symmetric in log space), correlations, and the RMS error per experiment and signal before and
after. Converged: least_squares ended on a tolerance and every sample was reached.

Resume: every evaluated point's residual is appended at once to ``FIT.parquet.parts/evals.jsonl``
(exact floats); the same command run again replays the fit from it, evaluating only points not
there (the method is deterministic), and a folder of another fit is refused.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mjrig.campaign.fit_estimate import Scale, starts, summary_at
from mjrig.campaign.fit_problem import Experiment, experiments, per_signal, residual, series
from mjrig.campaign.fit_verdict import verdict
from mjrig.campaign.lockstep import LockStep, lockstep_refusal
from mjrig.campaign.sweep import default_workers, kill_workers, open_pool, parts_dir
from mjrig.campaign.trial import TrialRunner, run_trials
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.files.out_lock import hold
from mjrig.runtime.files.paths import RECORDING_SUFFIXES, check_suffix, check_writable
from mjrig.scenario.best import write_with_values
from mjrig.scenario.fit import OFFSET, check_joints, is_variable, start_value, variable_unit

__all__ = ["FitOutcome", "run_fit", "FIT_KEY"]

FIT_KEY = "mjrig.fit"
STEP = 1e-5
"""The forward-difference step of the scaled params (their bounds' span is 1)."""
_LOG = "evals.jsonl"


@dataclass
class FitOutcome:
    """What a fit found; ``summary`` is the ``mjrig.fit`` metadata."""

    path: Path
    best_path: Path | None
    summary: dict[str, Any]
    evaluations: int
    reused: int

    @property
    def converged(self) -> bool:
        return bool(self.summary["converged"])

    @property
    def identified(self) -> bool:
        """Converged, and the estimate passes the checks of ``fit_verdict``."""
        return bool(self.summary.get("identified", self.converged))


@dataclass
class _Evaluations:
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
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        if self.ran_on_ray and self.ray is not None:
            from mjrig.campaign.ray_cluster import disconnect

            disconnect(self.ray)


def run_fit(
    sc: Any,
    *,
    out: Path,
    workers: int | None = None,
    ray: str | None = None,
    progress: Callable[[int, float], None] | None = None,
    method: str = "trf",
    lockstep: bool = True,
) -> FitOutcome:
    """Fit ``sc``'s ``[fit]`` params to its ``[[measured]]`` data into ``out`` (FIT.parquet) and
    ``FIT-best.toml`` beside it; resume what an earlier run of the same fit left.
    ``progress(evaluations, lowest cost)`` after each batch; ``method``: "trf" (scipy's) or
    "mujoco" (``mujoco.minimize``; BENCHMARKS.md compares them); ``lockstep=False`` runs no
    experiment in lock-step (the residuals are the same). ConfigError (one line) for bad input."""
    if sc.fit is None:
        raise ConfigError(f"{sc.where()}: no [fit] section: nothing to estimate (see [fit] in docs/fit.md)")
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {workers}")
    out = Path(out)
    check_suffix(out, RECORDING_SUFFIXES, where="--out")
    check_writable(out, "--out")
    from mjrig.scenario.builder import build_rig

    rig = build_rig(sc)  # every name checked (one line, exit 2) before any worker starts
    exps = experiments(sc, float(rig.model.opt.timestep))
    checks = experiments(sc, float(rig.model.opt.timestep), role="validation")
    if not exps:
        raise ConfigError(f"{sc.where('fit')}: no measured samples inside the fit's window")
    spec = sc.fit
    scale = Scale(
        list(spec.params),
        np.array([r.low for r in spec.params.values()]),
        np.array([r.high for r in spec.params.values()]),
        np.array([r.log for r in spec.params.values()]),
    )
    check_joints(scale.names, rig.model, lambda n: sc.where("fit", "params", n))
    units = {n: variable_unit(n, rig.model) if is_variable(n) else sc.params[n].unit for n in scale.names}
    start_values = _start_values(sc, scale, rig)
    out_hold = hold(out, what="--out")
    try:
        parts = parts_dir(out)
        _open_parts(parts, _fingerprint(sc, exps))
        with open(parts / _LOG, "a", encoding="utf-8") as log:
            ev = _Evaluations(
                exps,
                log,
                workers or default_workers(),
                ray,
                known=_read_log(parts / _LOG),
                progress=progress,
                lockstep=lockstep,
            )
            try:
                solve = _solve_mujoco if method == "mujoco" else _solve
                runs = [solve(ev, scale, u0, k) for k, u0 in enumerate(starts(scale, start_values, spec.starts))]
                best = min(runs, key=lambda r: r.cost)
                before = ev.many([start_values], 0)[0][0]
                status = ev.many([scale.values(best.x)], 0)[0][1]
            finally:
                ev.close()
            taken = [n for n in scale.names if not n.startswith(OFFSET)]  # not their clocks
            validation = (
                _validate(
                    checks,
                    {n: start_values[n] for n in taken},
                    {n: v for n, v in scale.values(best.x).items() if n in taken},
                    lockstep=lockstep,
                )
                if checks
                else None
            )
        summary = summary_at(scale, best, status, units)
        summary["rms"] = per_signal(exps, best.fun)
        summary["rms_before"] = per_signal(exps, before)
        summary["series"] = series(exps, before, best.fun)
        summary["start"] = start_values
        summary["starts"] = spec.starts
        summary["evaluations"] = len(ev.rows)
        summary["signals"] = {
            e.name: {s.signal: {"weight": s.weight, "samples": int(s.times.size)} for s in e.signals} for e in exps
        }
        known = rig.runtime.signal_units()
        summary["signal_units"] = {s.signal: known.get(s.signal, "") for e in exps + checks for s in e.signals}
        spreads = {e.name: {s.signal: float(np.std(s.values)) for s in e.signals} for e in exps}
        summary["reasons"] = verdict(summary, low=scale.low, high=scale.high, spreads=spreads)
        summary["identified"] = summary["converged"] and not summary["reasons"]
        if validation is not None:
            summary["validation"] = validation
        _write(sc, out, ev.rows, summary, units)
        best_path = write_with_values(sc, summary["estimate"], out.with_name(out.stem + "-best.toml"))
        shutil.rmtree(parts, ignore_errors=True)
        return FitOutcome(out, best_path, summary, len(ev.rows), ev.reused)
    finally:
        out_hold.release()


def _start_values(sc: Any, scale: Scale, rig: Any) -> dict[str, float]:
    """Where the fit starts: each param's value, each fit variable's value before the fit
    (``mjrig.scenario.fit.start_value``); ConfigError (one line) for a variable's start outside its
    bounds."""
    out = {}
    rig.reset()
    for i, n in enumerate(scale.names):
        if not is_variable(n):
            out[n] = float(sc.params[n].value)
            continue
        v = out[n] = start_value(n, sc, rig.model, rig.data)
        if not scale.low[i] <= v <= scale.high[i]:
            raise ConfigError(
                f"{sc.where('fit', 'params', n)}: its value before the fit, {v:g}, is outside "
                f"[{scale.low[i]:g}, {scale.high[i]:g}]"
            )
    return out


def _validate(
    checks: list[Experiment], start: dict[str, float], estimate: dict[str, float], *, lockstep: bool
) -> dict[str, Any]:
    """The validation entries (``role = "validation"``) scored with the start and the estimate:
    ``{"rms_before": {exp: {signal: rms}}, "rms": {...}, "series": {...}}`` (SI), run here."""
    import io

    ev = _Evaluations(checks, io.StringIO(), 1, None, lockstep=lockstep)
    try:
        (before, _), (after, _) = ev.many([start, estimate], 0)
    finally:
        ev.close()
    return {
        "rms_before": per_signal(checks, before),
        "rms": per_signal(checks, after),
        "series": series(checks, before, after),
    }


def _solve(ev: _Evaluations, scale: Scale, u0: np.ndarray, start: int) -> Any:
    """scipy's least_squares (TRF) from ``u0`` (scaled), its points evaluated by ``ev``."""
    from scipy.optimize import least_squares

    cache: dict[bytes, np.ndarray] = {}

    def fun(u: np.ndarray) -> np.ndarray:
        if u.tobytes() not in cache:
            cache[u.tobytes()] = ev.many([scale.values(u)], start)[0][0]
        return cache[u.tobytes()]

    def jac(u: np.ndarray) -> np.ndarray:
        steps = np.where(u + STEP <= 1.0, STEP, -STEP)
        points = [np.clip(u + np.eye(u.size)[j] * steps[j], 0.0, 1.0) for j in range(u.size)]
        rs = ev.many([scale.values(p) for p in points], start)
        r0 = fun(u)
        return np.column_stack([(r - r0) / h for (r, _), h in zip(rs, steps)])

    return least_squares(
        fun, u0, jac=jac, bounds=(0.0, 1.0), method="trf", x_scale=1.0, ftol=1e-8, xtol=1e-8, gtol=1e-8, max_nfev=100
    )


def _solve_mujoco(ev: _Evaluations, scale: Scale, u0: np.ndarray, start: int) -> Any:
    """MuJoCo's ``minimize.least_squares`` (Levenberg-Marquardt with box bounds) from ``u0``: its
    residual takes a batch of points, which ``ev`` evaluates side by side."""
    from types import SimpleNamespace

    from mujoco import minimize

    def residual(u: np.ndarray) -> np.ndarray:
        us = u.reshape(u.shape[0], -1)
        return np.column_stack([r for r, _ in ev.many([scale.values(us[:, j]) for j in range(us.shape[1])], start)])

    n = u0.size
    x, trace = minimize.least_squares(
        u0, residual, bounds=[np.zeros(n), np.ones(n)], eps=STEP, xtol=1e-8, gtol=1e-8, max_iter=100, verbose=0
    )
    r = residual(x)[:, 0]
    steps = np.where(x + STEP <= 1.0, STEP, -STEP)
    around = residual(np.column_stack([np.clip(x + np.eye(n)[j] * steps[j], 0, 1) for j in range(n)]))
    jac = (around - r[:, None]) / steps
    status = 1 if len(trace) < 100 else 0
    return SimpleNamespace(
        x=x,
        fun=r,
        jac=jac,
        cost=float(0.5 * r @ r),
        status=status,
        message=f"MuJoCo's least_squares, {len(trace)} iterations" if status else "out of iterations",
    )


def _fingerprint(sc: Any, exps: list[Experiment]) -> str:
    h = hashlib.sha256()
    from mjrig.scenario.toml_writer import dumps

    h.update(dumps({"fit": sc.doc["fit"]}).encode())
    for e in exps:
        h.update(e.job.text.encode())
        for s in e.signals:
            h.update(s.times.tobytes() + s.values.tobytes() + repr(s.weight).encode())
    return h.hexdigest()


def _open_parts(parts: Path, fingerprint: str) -> None:
    """The work folder of this fit (ConfigError when it holds another fit's evaluations)."""
    stamp = parts / "fit.json"
    if stamp.is_file():
        try:
            same = json.loads(stamp.read_text(encoding="utf-8")).get("fingerprint") == fingerprint
        except ValueError:
            same = False
        if not same:
            raise ConfigError(
                f"{parts} holds the evaluations of another fit (the scenario, its data or [fit] "
                "changed): remove that folder to start this fit afresh"
            )
        return
    parts.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps({"fingerprint": fingerprint}), encoding="utf-8")


def _read_log(path: Path) -> dict[str, tuple[np.ndarray, str]]:
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


def _write(sc: Any, out: Path, rows: list[dict[str, Any]], summary: dict[str, Any], units: dict[str, str]) -> None:
    """FIT.parquet: one row per evaluated point; ``mjrig.fit`` and the scenario in its metadata."""
    from mjrig.recordings.recorder import recording_metadata

    fields = [pa.field("trial", pa.int64()), pa.field("start", pa.int64())]
    fields += [
        pa.field(f"Params/{n}:value", pa.float64(), metadata={"unit": u} if u else None) for n, u in units.items()
    ]
    fields += [pa.field("cost", pa.float64()), pa.field("status", pa.string())]
    table = pa.Table.from_pylist(rows, schema=pa.schema(fields))
    meta = recording_metadata(sc.model, sc.toml())
    meta[FIT_KEY] = json.dumps(summary)
    if sc.source is not None:
        meta["mjrig.scenario_path"] = str(Path(sc.source).resolve())
    table = table.replace_schema_metadata({k.encode(): v.encode() for k, v in meta.items()})
    tmp = out.with_name(out.name + ".tmp")
    pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, out)
