"""``mjrig sweep``: run a scenario's ``[sweep]`` as many trials, locally or on Ray, resumably.

Results. Each finished trial is appended at once as one JSON line to
``RESULTS.parquet.parts/trials.jsonl`` (floats written exactly: JSON keeps a float64's shortest
repr), next to a ``sweep.json`` that fingerprints the sweep (scenario text, model SHA-256, seed,
trials per point, duration). When every trial is there they are merged, sorted by trial, into
RESULTS.parquet and the folder is removed. A sweep killed at any moment (even SIGKILL: at worst
the last line is cut short, and is dropped) and started again with the same command finds the
folder, keeps the trials it holds and runs only the missing ones; a folder of a *different*
sweep is refused (one line, exit 2) rather than mixed in. (One Parquet file per trial was tried
first: writing and re-reading it cost the driver 11 ms a trial, more than a 1 s spring-mass trial.)

A Saltelli sweep (``sensitivity = "sobol"``) also gets, at the merge, each value's Sobol
indices in the metadata (``mjrig.sensitivity``: ``mjrig.campaign.sobol``), worked out from the
merged rows alone, so a resumed sweep gives the same.

The rows hold no wall time, so the same scenario and seed give the same file contents whatever
the number of workers, their scheduling, or Ray.

Execution: on Ray (``mjrig.campaign.ray_cluster``) or on this machine
(``mjrig.campaign.local_pool``: in lock-step in this process where the rig allows, else on a pool
of worker processes that end with this process). On Ctrl+C, SIGTERM or an error the rows already
logged are kept, and a resumed sweep runs the rest.

Threads: the caller's; the results folder is written by it alone (one sweep at a time on an
``--out``: ``mjrig.runtime.files.out_lock``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from mjrig.campaign.local_pool import default_workers, run_local
from mjrig.campaign.trial import STATUSES, SweepJob, TrialRunner
from mjrig.runtime.bounds import check_memory, check_work, step_seconds
from mjrig.runtime.errors import ConfigError, MjrigError
from mjrig.runtime.files.atomic_output import PART_PATTERN, atomic_output
from mjrig.runtime.files.out_lock import HOLDER, hold
from mjrig.runtime.files.paths import RECORDING_SUFFIXES, check_suffix, check_writable
from mjrig.runtime.files.paths import work_dir as parts_dir
from mjrig.scenario.parse import Scenario
from mjrig.scenario.studies.sweep import SweepSpec, saltelli_trials_problem

__all__ = [
    "SweepOutcome",
    "run_sweep",
    "row_schema",
    "rows_table",
    "value_units",
    "whole_params",
    "parts_dir",
]

FINGERPRINT = "sweep.json"
LOG = "trials.jsonl"


@dataclass
class SweepOutcome:
    """What a sweep did: the results file, trials in all, how many ran now (the rest were
    already done), and the count of each status over the whole file."""

    path: Path
    total: int
    ran: Collection[int]
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def resumed(self) -> int:
        return self.total - len(self.ran)


class Todo(Collection[int]):
    """The trials of a sweep not done yet, ``0 .. total - 1`` but ``done``, in order, each made
    when it is asked for: a sweep of 2^40 trials builds no list of them (CONTRACT 14)."""

    def __init__(self, total: int, done: Collection[int]) -> None:
        self.total = total
        self._done = done
        self._left = total - sum(1 for i in done if 0 <= i < total)

    def __len__(self) -> int:
        return self._left

    def __iter__(self) -> Iterator[int]:
        return (i for i in range(self.total) if i not in self._done)

    def __contains__(self, trial: object) -> bool:
        return isinstance(trial, int) and 0 <= trial < self.total and trial not in self._done


def whole_params(sc: Scenario) -> set[str]:
    """The params whose every value a sweep draws or a study searches is a whole number: a
    catalogue of whole numbers, or whole low, high and step (CONTRACT 5: integers stay integers)."""
    out = set()
    if sc.sweep is not None:
        for name, dist in sc.sweep.distributions:
            if dist.values and all(isinstance(v, int) and not isinstance(v, bool) for v in dist.values):
                out.add(name)
    if sc.optimize is not None:
        out |= {name for name, r in sc.optimize.params.items() if r.whole}
    return out


def row_schema(sc: Scenario, units: Mapping[str, str] | None = None) -> pa.Schema:
    """The results' columns: trial, seed, every param's value (int64 for a ``whole_params`` one,
    else float64), status, message, each requirement's pass and value, and each metric's value;
    a column with a unit (a param's own, else ``units``: ``RequirementSet.value_units``) carries
    it as the field's ``unit``."""
    units = dict(units or {})
    units.update({f"Params/{n}:value": nv.unit for n, nv in sc.params.items() if nv.unit})
    whole = whole_params(sc)

    def value(name: str, kind: pa.DataType | None = None) -> pa.Field:
        unit = units.get(name, "")
        return pa.field(name, kind or pa.float64(), metadata={"unit": unit} if unit else None)

    fields = [pa.field("trial", pa.int64()), pa.field("seed", pa.int64())]
    fields += [value(f"Params/{n}:value", pa.int64() if n in whole else pa.float64()) for n in sc.params]
    fields += [pa.field("status", pa.string()), pa.field("message", pa.string())]
    for r in sc.requirements:
        fields += [pa.field(f"Requirements/{r.name}:pass", pa.bool_()), value(f"Requirements/{r.name}:value")]
    fields += [value(f"Metrics/{m.name}:value") for m in sc.metrics]
    return pa.schema(fields)


def value_units(rig: Any) -> dict[str, str]:
    """The SI unit of each requirement's and metric's value column of built ``rig``'s results."""
    checks = rig.runtime.checks
    return checks.value_units() if checks is not None else {}


def run_sweep(
    sc: Scenario,
    *,
    out: Path,
    workers: int | None = None,
    ray: str | None = None,
    trials: int | None = None,
    seed: int | None = None,
    duration: float | None = None,
    progress: Callable[[dict[str, Any]], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
    lockstep: bool = True,
) -> SweepOutcome:
    """Run ``sc``'s sweep into ``out`` (RESULTS.parquet); resume what an earlier run of the same
    sweep left. ``trials`` (per grid point) and ``seed`` override the scenario's; ``ray``
    (``"auto"`` or an address) runs the trials as Ray tasks instead of local processes;
    ``on_start(total, already_done)`` is told before trials run, ``progress(row)`` after each;
    ``lockstep=False`` runs every trial on its own even where lock-step could (the results are
    the same: see ``mjrig.campaign.lockstep``).
    ConfigError (one line) for bad input, before any trial runs."""
    if sc.sweep is None:
        raise ConfigError(f"{sc.where()}: no [sweep] section: nothing to sweep (see docs/campaigns.md)")
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {workers}")
    spec = sc.sweep.with_overrides(trials=trials, seed=seed)
    if spec.saltelli and (problem := saltelli_trials_problem(spec.trials)):
        raise ConfigError(f"--trials: {problem}")
    out = Path(out)
    check_suffix(out, RECORDING_SUFFIXES, where="--out")
    check_writable(out, "--out")
    from mjrig.recordings.recorder import recording_metadata

    meta = recording_metadata(sc.model, sc.toml())
    job = SweepJob(
        text=sc.toml(),
        source=str(sc.source) if sc.source else None,
        base=str(sc.source.resolve().parent if sc.source else Path.cwd()),
        trials=trials,
        seed=seed,
        duration=duration,
        record_dir=str(out.with_suffix("")) if "recording" in sc.doc else None,
        metadata=json.dumps(meta),
    )
    # Every name is checked here (one line, exit 2) before any worker starts, by building the
    # rig: on Ray from the scenario; locally as the runner this process may run trials on.
    runner = TrialRunner(job) if ray is None else None
    if runner is None:
        from mjrig.scenario.builder import build_rig

        rig = build_rig(sc)
    schema = row_schema(sc, value_units(runner.rig if runner is not None else rig))
    built = runner.rig if runner is not None else rig
    check_work(  # before the first trial: what cannot finish is refused with its estimate
        what="trials",
        count=spec.total,
        each_s=step_seconds(built.model, built.data) * (duration or sc.duration) / built.model.opt.timestep,
        workers=workers or default_workers(),
        where="--trials" if trials is not None else f"{sc.where()}: [sweep]",
    )
    check_memory(  # a grid point's (a Saltelli design's) sample and the results file's rows
        what=f"{spec.total:,} trials",
        nbytes=8 * (spec.trials * 2 * len(spec.distributions) + 3 * spec.total * len(schema)),
        where="--trials" if trials is not None else f"{sc.where()}: [sweep]",
    )
    out_hold = hold(out, what="--out")  # one sweep at a time on this --out
    try:
        parts = parts_dir(out)
        done = _open_parts(parts, _fingerprint(meta, spec, duration or sc.duration, schema))
        todo = Todo(spec.total, done)
        log = open(parts / LOG, "a", encoding="utf-8")
        if on_start is not None:
            on_start(spec.total, spec.total - len(todo))
        if job.record_dir is not None:
            Path(job.record_dir).mkdir(parents=True, exist_ok=True)

        def keep(row: dict[str, Any]) -> None:
            log.write(json.dumps(row) + "\n")
            log.flush()  # in the kernel's hands: a SIGKILL of this process loses nothing written
            if progress is not None:
                progress(row)

        try:
            if ray is not None:
                from mjrig.campaign.ray_cluster import run_on_ray

                run_on_ray(job, todo, keep, address=ray)
            else:
                run_local(job, todo, keep, workers=workers or default_workers(), lockstep=lockstep, runner=runner)
        finally:
            log.close()
        meta["mjrig.sweep"] = _sweep_toml(sc, spec)
        if sc.source is not None:  # the results view opens a trial's set-up from it
            meta["mjrig.scenario_path"] = str(Path(sc.source).resolve())
        counts = _merge(parts, out, schema, meta, spec.total, spec=spec)
        return SweepOutcome(out, spec.total, todo, counts)
    finally:
        out_hold.release()


def _fingerprint(meta: dict[str, str], spec: Any, duration: float, schema: pa.Schema) -> dict[str, Any]:
    text = json.dumps(
        [meta["mjrig.scenario"], meta["mjrig.model_sha256"], spec.seed, spec.trials, spec.total, duration, schema.names]
    )
    return {"sweep": hashlib.sha256(text.encode()).hexdigest(), "trials": spec.total, "seed": spec.seed}


def _open_parts(parts: Path, fingerprint: dict[str, Any]) -> set[int]:
    """The trials already done in ``parts`` (creating it for a new sweep); ConfigError when it
    holds another sweep's trials."""
    stamp = parts / FINGERPRINT
    if parts.is_dir() and any(p.name != HOLDER and not PART_PATTERN.match(p.name) for p in parts.iterdir()):
        try:
            found = json.loads(stamp.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            found = None
        if found != fingerprint:
            raise ConfigError(
                f"{parts} holds the unfinished results of a different sweep (other scenario, seed "
                f"or trials): run that sweep's command to finish it, or delete the folder"
            )
        return set(_read_log(parts, repair=True))
    try:
        parts.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--out: cannot create {parts}: {exc.strerror or exc}") from None
    with atomic_output(stamp, what="--out") as part:
        part.write_text(json.dumps(fingerprint), encoding="utf-8")
    return set()


def _read_log(parts: Path, *, repair: bool = False) -> dict[int, dict[str, Any]]:
    """The rows in ``parts``' log by trial. ``repair`` cuts a last line a kill left unfinished
    (so the next row starts on a line of its own)."""
    log = parts / LOG
    try:
        text = log.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    rows: dict[int, dict[str, Any]] = {}
    good = 0
    for line in text.splitlines(keepends=True):
        try:
            if not line.endswith("\n"):
                raise ValueError("cut short")
            row = json.loads(line)
        except ValueError:
            break
        rows[int(row["trial"])] = row
        good += len(line.encode("utf-8"))
    if repair and good < len(text.encode("utf-8")):
        with open(log, "r+b") as f:
            f.truncate(good)
    return rows


def _merge(
    parts: Path, out: Path, schema: pa.Schema, meta: dict[str, str], total: int, *, spec: SweepSpec | None = None
) -> dict[str, int]:
    """Every part, sorted by trial, into ``out`` with ``meta``; the parts folder goes. A Saltelli
    ``spec`` (``sensitivity = "sobol"``) adds its Sobol indices (``mjrig.sensitivity``)."""
    rows = _read_log(parts)
    missing = [i for i in range(total) if i not in rows]
    if missing:
        raise MjrigError(f"trial {missing[0]} of {total} has no result in {parts}; run the same command again")
    table = rows_table([rows[i] for i in range(total)], schema)
    if spec is not None and spec.saltelli:
        from mjrig.campaign.sobol import SENSITIVITY_KEY, sensitivity

        meta = {**meta, SENSITIVITY_KEY: json.dumps(sensitivity(table, spec=spec))}
    table = table.replace_schema_metadata({k.encode(): v.encode() for k, v in meta.items()})
    with atomic_output(out, what="--out") as part:
        pq.write_table(table, part, compression="zstd")
    shutil.rmtree(parts, ignore_errors=True)
    statuses = table.column("status").to_pylist()
    return {s: statuses.count(s) for s in STATUSES}


def _sweep_toml(sc: Scenario, spec: Any) -> str:
    """The ``[sweep]`` section as run (trials per point and seed as used) as TOML text."""
    from mjrig.scenario.toml_writer import dumps

    section = dict(sc.doc.get("sweep", {}))
    section["trials"], section["seed"] = spec.trials, spec.seed
    return dumps({"sweep": section})


def rows_table(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """``rows`` (one dict per trial) as a table of ``schema``: an int64 param column is read as
    numbers first and cast whole (a value 8.0 becomes 8; one with a fraction is an error, never
    silently cut)."""
    loose = pa.schema([f.with_type(pa.float64()) if f.name.startswith("Params/") else f for f in schema])
    return pa.Table.from_pylist(rows, schema=loose).cast(schema, safe=True)
