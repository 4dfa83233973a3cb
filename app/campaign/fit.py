"""``mjrig fit``: estimate a scenario's ``[fit]`` params from its ``[[measured]]`` data.

Method: scipy's bounded ``least_squares`` (trust-region reflective) over the params scaled to
[0, 1] within their bounds (on a log scale where ``log = true``), from the params' values, then
from ``[fit] starts - 1`` more points of a Sobol sequence over the bounds; the lowest cost wins.
The Jacobian is forward differences whose points are evaluated as trials side by side: every
experiment of every point (``fit_problem``) in lock-step on ``workers`` C threads of this process
where the experiment's rig allows (``mjrig.campaign.lockstep``: the same residuals, bit for bit),
else on ``workers`` local processes (the sweep's pool, ``local_pool``: each builds each
experiment's rig once), or as Ray tasks (``fit_evals``).

At the solution (``fit_estimate``): the residual variance s² = Σr² / (m − n), the covariance s² (JᵀJ)⁻¹ with J in
the params' own units, standard errors, 95 % intervals from Student's t (for a log-scale param,
symmetric in log space), correlations, and the RMS error per experiment and signal before and
after. Converged: least_squares ended on a tolerance and every sample was reached.

Resume: every evaluated point's residual is appended at once to ``FIT.parquet.parts/evals.jsonl``
(exact floats; ``fit_evals``); the same command run again replays the fit from it, evaluating only points not
there (the method is deterministic), and a folder of another fit is refused.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mjrig.campaign.fit_estimate import Scale, starts, summary_at
from mjrig.campaign.fit_evals import EVALS_LOG, Evaluations, read_evaluations
from mjrig.campaign.fit_problem import Experiment, experiments, per_signal, series
from mjrig.campaign.fit_solve import solve_mujoco, solve_trf
from mjrig.campaign.fit_verdict import verdict
from mjrig.campaign.local_pool import default_workers
from mjrig.campaign.sweep import parts_dir
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.files.atomic_output import atomic_output
from mjrig.runtime.files.out_lock import hold
from mjrig.runtime.files.paths import RECORDING_SUFFIXES, check_suffix, check_writable
from mjrig.scenario.studies.best import write_with_values
from mjrig.scenario.studies.fit import OFFSET, check_joints, is_variable, start_value, variable_unit

__all__ = ["FitOutcome", "run_fit", "FIT_KEY"]

FIT_KEY = "mjrig.fit"


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
        with open(parts / EVALS_LOG, "a", encoding="utf-8") as log:
            ev = Evaluations(
                exps,
                log,
                workers or default_workers(),
                ray,
                known=read_evaluations(parts / EVALS_LOG),
                progress=progress,
                lockstep=lockstep,
            )
            try:
                solve = solve_mujoco if method == "mujoco" else solve_trf
                with np.errstate(divide="ignore", invalid="ignore"):  # a step onto a bound (0): no warning printed
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
    (``mjrig.scenario.studies.fit.start_value``); ConfigError (one line) for a variable's start outside its
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

    ev = Evaluations(checks, io.StringIO(), 1, None, lockstep=lockstep)
    try:
        (before, _), (after, _) = ev.many([start, estimate], 0)
    finally:
        ev.close()
    return {
        "rms_before": per_signal(checks, before),
        "rms": per_signal(checks, after),
        "series": series(checks, before, after),
    }


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
    with atomic_output(stamp, what="--out") as part:
        part.write_text(json.dumps({"fingerprint": fingerprint}), encoding="utf-8")


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
    with atomic_output(out, what="--out") as part:
        pq.write_table(table, part, compression="zstd")
