"""``mjrig optimize``: search a scenario's ``[optimize]`` params for the best objective, every
requirement a constraint (CONTRACT 7), with Optuna.

The study lives in ``STUDY.optuna.db`` (SQLite) beside ``STUDY.parquet``: each finished trial
keeps its results row there (a user attribute), so a study killed at any moment (SIGKILL too)
and started again with the same command continues -- trials asked but never told are marked
failed and not counted, the finished ones count towards ``trials``. A database of a different
study (other scenario, objective, params or seed; ``trials`` may change) is refused with one line.
The database is ``mjrig.campaign.study_db``'s: opening it, the trials a killed run left, its errors.

Trials are asked a batch at a time (one per worker) and run as a sweep's trials are: in this
process, on local worker processes that build the rig once, or as Ray tasks; a trial's seed is
``trial_seed(seed, number)``. A trial whose requirements all pass is feasible; one that fails a
requirement is told with its objective and a positive constraint (TPE ranks it below every
feasible trial; CMA-ES and random sampling ignore constraints); a trial without an objective
(diverged, an error, a NaN metric) is told failed. STUDY.parquet: a sweep's columns plus
``objective`` (null when infeasible) and ``feasible``; ``STUDY-best.toml`` is the scenario with
the best feasible trial's param values (the next free name when one exists). NSGA-II and NSGA-III
(``nsga2``, ``nsga3``: ``population`` trials a generation) are told the constraint as TPE is.

With two or more objectives (``OptimizeSpec.multi``) the study is Optuna's multi-objective one
(TPE's, NSGA's or random sampling; requirements stay constraints): each trial is told its
objectives' values, STUDY.parquet has ``Objectives/<metric>:value`` per objective (null when
infeasible) instead of ``objective``, ``pareto`` (``campaign.pareto``: feasible and not dominated
by another feasible trial) and ``hypervolume`` (``campaign.hypervolume``: the front's after each
trial, worked out when the file is written); no best set-up is written, the outcome names the
front's trials and says (``warnings``) when an explicit reference leaves trials out.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mjrig.campaign.hypervolume import study_hypervolume
from mjrig.campaign.local_pool import default_workers, kill_workers, open_pool
from mjrig.campaign.pareto import pareto_flags
from mjrig.campaign.study_db import (
    CONSTRAINED,
    database_faults,
    finished_rows,
    open_study,
    quiet_optuna,
    study_fingerprint,
    unfinished_trials,
)
from mjrig.campaign.sweep import row_schema, rows_table, value_units
from mjrig.campaign.trial import SweepJob, TrialRunner, run_trial
from mjrig.runtime.bounds import check_work, step_seconds
from mjrig.runtime.errors import ConfigError, MjrigError
from mjrig.runtime.files.atomic_output import atomic_output
from mjrig.runtime.files.out_lock import hold
from mjrig.runtime.files.paths import RECORDING_SUFFIXES, check_suffix, check_writable
from mjrig.scenario.parse import Scenario
from mjrig.scenario.studies.best import write_with_values
from mjrig.scenario.studies.optimize import OptimizeSpec, SearchRange
from mjrig.scenario.studies.sweep import trial_seed

__all__ = ["StudyOutcome", "run_optimize", "study_paths"]


@dataclass
class StudyOutcome:
    """What a study did: its results file, the best feasible row (None: no feasible trial, or
    several objectives) and the file of its set-up, trials in all and how many ran now; for
    several objectives the trials on the Pareto front (``pareto``, by number)."""

    path: Path
    best: dict[str, Any] | None
    best_path: Path | None
    total: int
    ran: int
    objective: str
    unit: str
    multi: bool = False
    pareto: tuple[int, ...] = ()
    hypervolume: str = ""
    """Several objectives: the front's hypervolume after the last trial with its unit (the
    objectives' multiplied) and the reference point, as a line says it ("": no feasible trial)."""
    warnings: tuple[str, ...] = ()
    """Lines for the user about the results (an explicit reference some trial is worse than)."""


def study_paths(out: Path) -> tuple[Path, Path]:
    """(the study's database, its best set-up's scenario) beside ``out`` (STUDY.parquet)."""
    return out.with_name(out.stem + ".optuna.db"), out.with_name(out.stem + "-best.toml")


def run_optimize(
    sc: Scenario,
    *,
    out: Path,
    workers: int | None = None,
    ray: str | None = None,
    trials: int | None = None,
    seed: int | None = None,
    progress: Callable[[dict[str, Any], dict[str, Any] | None], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> StudyOutcome:
    """Run (or continue) ``sc``'s study into ``out`` (STUDY.parquet); ``trials`` and ``seed``
    override the section's. ``on_start(total, done)`` is told before trials run, ``progress(row,
    best)`` after each (best: the best feasible row so far). ConfigError (one line) for bad input."""
    spec = sc.optimize
    if spec is None:
        raise ConfigError(f"{sc.where()}: no [optimize] section: nothing to optimise (see docs/campaigns.md)")
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {workers}")
    total, seed = trials or spec.trials, spec.seed if seed is None else seed
    out = Path(out)
    check_suffix(out, RECORDING_SUFFIXES, where="--out")
    check_writable(out, "--out")
    from mjrig.recordings.recorder import recording_metadata

    meta = recording_metadata(sc.model, sc.toml())
    job = SweepJob(
        text=sc.toml(),
        source=str(sc.source) if sc.source else None,
        base=str(sc.source.resolve().parent if sc.source else Path.cwd()),
        metadata=json.dumps(meta),
    )
    runner = TrialRunner(job)  # every name checked here (one line, exit 2), before the study opens
    rm = runner.rig.runtime
    rm.resolve(runner.rig.model, runner.rig.data)
    units = {o.metric: rm.metric_entries()[o.metric]["unit"] for o in spec.objectives}
    model = runner.rig.model
    check_work(  # before the study opens: what cannot finish is refused with its estimate
        what="trials",
        count=total,
        each_s=step_seconds(model, runner.rig.data) * sc.duration / model.opt.timestep,
        workers=workers or default_workers(),
        where="--trials" if trials is not None else f"{sc.where()}: [optimize] trials",
    )
    out_hold = hold(out, what="--out")  # one study at a time on this --out
    try:
        with database_faults(study_paths(out)[0]):
            return _study(sc, spec, out, job, runner, meta, units, total, seed, workers, ray, progress, on_start)
    finally:
        out_hold.release()


def _study(
    sc: Scenario,
    spec: OptimizeSpec,
    out: Path,
    job: SweepJob,
    runner: TrialRunner,
    meta: dict[str, str],
    units: dict[str, str],
    total: int,
    seed: int,
    workers: int | None,
    ray: str | None,
    progress: Any,
    on_start: Any,
) -> StudyOutcome:
    """The study itself, ``run_optimize``'s body once ``out`` is held."""
    optuna = quiet_optuna()
    db, best_toml = study_paths(out)
    study = open_study(optuna, db, spec, seed=seed, fingerprint=study_fingerprint(sc, meta, seed=seed))
    pending = unfinished_trials(optuna, study, db)  # asked by a run that was killed: run again first
    finished = finished_rows(study)
    if on_start is not None:
        on_start(total, len(finished))
    best = _best(finished, spec)
    workers = workers or default_workers()
    pool = open_pool(job, workers) if ray is None and workers > 1 and total > len(finished) else None
    ran = 0
    try:
        while len(finished) < total:
            room = min(workers, total - len(finished))
            asked, pending = pending[:room], pending[room:]
            asked += [study.ask() for _ in range(room - len(asked))]
            tasks = [
                (
                    t.number,
                    {n: suggest(t, n, r) for n, r in spec.params.items()},
                    trial_seed(seed, t.number),
                )
                for t in asked
            ]
            for t, row in zip(asked, _run(job, tasks, runner, pool, ray, again=ran > 0)):
                values = _score(spec, row)
                t.set_user_attr("mjrig.row", row)
                if values is None:
                    study.tell(t, state=optuna.trial.TrialState.FAIL)
                else:
                    constraint = [-1.0 if row["feasible"] else 1.0]
                    if spec.sampler not in CONSTRAINED:  # the others ignore constraints (and would warn of them)
                        pass
                    elif hasattr(t, "set_constraint"):  # Optuna 5
                        t.set_constraint("requirements", constraint[0])
                    else:
                        t.set_user_attr("mjrig.constraint", constraint)
                    study.tell(t, values if spec.multi else values[0])
                finished.append(row)
                ran += 1
                best = _better(best, row, spec)  # a row at a time: a long study's bar costs no more per trial
                if progress is not None:
                    progress(row, best)
    except BaseException:
        if pool is not None:
            kill_workers(pool)
        raise
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        if ray is not None:
            from mjrig.campaign.ray_cluster import disconnect

            disconnect(ray)
    unit = units[spec.metric]
    schema = row_schema(sc, value_units(runner.rig))
    if spec.multi:
        front = set(_front(finished, spec))
        for row in finished:
            row["pareto"] = row["trial"] in front
        for o in spec.objectives:
            u = units[o.metric]
            schema = schema.append(pa.field(o.column, pa.float64(), metadata={"unit": u} if u else None))
        schema = schema.append(pa.field("feasible", pa.bool_())).append(pa.field("pareto", pa.bool_()))
        hv, hv_unit, note = study_hypervolume(
            finished,
            spec.objectives,
            units,
            reference=spec.reference,
            where=lambda j: sc.where("optimize", "reference", j),
        )
        for row, v in zip(finished, hv.values):
            row["hypervolume"] = float(v)
        schema = schema.append(pa.field("hypervolume", pa.float64(), metadata={"unit": hv_unit} if hv_unit else None))
        stated = json.dumps(
            {
                "objectives": [
                    {"column": o.column, "metric": o.metric, "unit": units[o.metric], "maximize": o.maximize}
                    for o in spec.objectives
                ],
                "reference": None if hv.reference is None else list(hv.reference),  # the hypervolume's
            }
        )
        _write(sc, out, finished, {**meta, "mjrig.objective": stated}, schema)
        return StudyOutcome(
            out,
            None,
            None,
            len(finished),
            ran,
            spec.objective,
            unit,
            multi=True,
            pareto=tuple(sorted(front)),
            hypervolume=_volume_text(hv.values, hv_unit, hv.reference, [units[o.metric] for o in spec.objectives]),
            warnings=(note,) if note else (),
        )
    stated = json.dumps({"text": spec.objective_text(unit), "unit": unit})
    objective = pa.field("objective", pa.float64(), metadata={"unit": unit} if unit else None)
    schema = schema.append(objective).append(pa.field("feasible", pa.bool_()))
    _write(sc, out, finished, {**meta, "mjrig.objective": stated}, schema)
    best_path = (
        write_with_values(sc, {n: best[f"Params/{n}:value"] for n in sc.params}, best_toml)
        if best is not None
        else None
    )
    return StudyOutcome(out, best, best_path, len(finished), ran, spec.objective, unit)


def _volume_text(values: Any, unit: str, reference: tuple[float, ...] | None, units: list[str]) -> str:
    """ "12.7 N·s (reference 92 N, 0.32 s)": the last of ``values`` (in ``unit``) against
    ``reference`` (one value per objective, in its unit of ``units``); "" without a reference."""
    if reference is None or not len(values):
        return ""
    at = ", ".join(f"{r:g}{' ' + u if u else ''}" for r, u in zip(reference, units))
    return f"{float(values[-1]):.6g}{' ' + unit if unit else ''} (reference {at})"


def _score(spec: OptimizeSpec, row: dict[str, Any]) -> list[float] | None:
    """Trial ``row``'s objective values for Optuna (None: one is missing or not finite: the
    trial is told failed), its objective columns and ``feasible`` (every requirement passed and
    every objective a number) set in ``row``."""
    if spec.multi:
        got = [_finite(row.get(f"Metrics/{o.metric}:value")) for o in spec.objectives]
        values = None if any(v is None for v in got) else [float(v) for v in got if v is not None]
    else:
        one = spec.objective_of(row.get(f"Metrics/{spec.metric}:value"))
        values = None if one is None else [one]
    feasible = row["status"] == "pass" and values is not None
    if spec.multi:
        shown: list[float | None] = [*values] if values else [None] * len(spec.objectives)
        for o, v in zip(spec.objectives, shown):
            row[o.column] = v if feasible else None
    else:
        row["objective"] = values[0] if feasible and values else None
    row["feasible"] = feasible
    return values


def _finite(value: Any) -> float | None:
    """A metric's value as an objective: None when missing or not finite."""
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def _front(rows: list[dict[str, Any]], spec: OptimizeSpec) -> list[int]:
    """The numbers of the trials of ``rows`` on the Pareto front of ``spec``'s objectives."""
    if not rows:
        return []
    values = np.array(
        [[np.nan if r.get(o.column) is None else r[o.column] for o in spec.objectives] for r in rows], dtype=float
    )
    flags = pareto_flags(
        values, maximize=[o.maximize for o in spec.objectives], feasible=np.array([bool(r["feasible"]) for r in rows])
    )
    return [int(r["trial"]) for r, on in zip(rows, flags) if on]


def _best(rows: list[dict[str, Any]], spec: OptimizeSpec) -> dict[str, Any] | None:
    """The best feasible row (the first of equals); with several objectives ``{"front": [trial
    numbers]}`` (None: no feasible trial)."""
    good = [r for r in rows if r["feasible"]]
    if not good:
        return None
    if spec.multi:
        front = set(_front(good, spec))
        return {"front": sorted(front), "rows": [r for r in good if r["trial"] in front]}
    if spec.maximize:  # the best objective; of equals, the first trial
        return max(good, key=lambda r: (r["objective"], -r["trial"]))
    return min(good, key=lambda r: (r["objective"], r["trial"]))


def _better(best: dict[str, Any] | None, row: dict[str, Any], spec: OptimizeSpec) -> dict[str, Any] | None:
    """``_best`` of the rows so far and ``row``, from ``best`` (theirs) alone: a row beaten once
    stays beaten, so the best of the best and ``row`` (several objectives: of the front's rows
    and ``row``, through ``pareto_flags``) is the best of all."""
    if not row["feasible"]:
        return best
    kept = [] if best is None else best["rows"] if spec.multi else [best]
    return _best([*kept, row], spec)


def _run(
    job: SweepJob, tasks: list, runner: TrialRunner, pool: Any, ray: str | None, *, again: bool = False
) -> list[dict[str, Any]]:
    if ray is not None:  # ``again``: this command's trials ran on that cluster before
        from mjrig.campaign.ray_cluster import run_on_ray

        rows: dict[int, dict[str, Any]] = {}
        # joined once for the whole study (``stay``): a batch is one trial per worker, and joining
        # the cluster again for each would start every worker process again (seconds a batch)
        run_on_ray(job, tasks, lambda row: rows.__setitem__(row["trial"], row), address=ray, again=again, stay=True)
        return [rows[t[0]] for t in tasks]
    if pool is None:
        return [runner.run(t) for t in tasks]
    try:
        return [f.result() for f in [pool.submit(run_trial, job, t) for t in tasks]]
    except Exception as exc:
        raise MjrigError(
            f"a study worker failed: {type(exc).__name__}: {exc}; run the same command again to continue"
        ) from None


def _write(sc: Scenario, out: Path, rows: list[dict[str, Any]], meta: dict[str, str], schema: pa.Schema) -> None:
    """The study's rows into ``out`` with ``schema`` (the trials' columns, objective, feasible)."""
    table = rows_table(rows, schema)
    from mjrig.scenario.toml_writer import dumps

    meta = dict(meta, **{"mjrig.optimize": dumps({"optimize": sc.doc["optimize"]})})
    if sc.source is not None:
        meta["mjrig.scenario_path"] = str(Path(sc.source).resolve())
    table = table.replace_schema_metadata({k.encode(): v.encode() for k, v in meta.items()})
    with atomic_output(out, what="--out") as part:
        pq.write_table(table, part, compression="zstd")


def suggest(trial: Any, name: str, r: SearchRange) -> float | int:
    """Trial ``trial``'s value of param ``name`` searched over ``r``: a catalogue's value
    (``suggest_categorical``), a whole number or a value on a step's grid (``suggest_int``,
    ``suggest_float(step=)``), else any within the bounds (on a log scale when asked)."""
    if r.choices:
        chosen = trial.suggest_categorical(name, list(r.choices))
        return int(chosen) if r.whole else float(chosen)
    if r.step is not None and r.whole:
        return int(trial.suggest_int(name, int(r.low), int(r.high), step=int(r.step)))
    if r.step is not None:
        return float(trial.suggest_float(name, r.low, r.high, step=r.step))
    return float(trial.suggest_float(name, r.low, r.high, log=r.log))
