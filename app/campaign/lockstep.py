"""Trials of one sweep side by side: ``mujoco.batch`` steps them on MuJoCo's own C threads.

A sweep's trials usually differ only in a few numbers of the model. When every load of the rig
runs without Python (MuJoCo's tendon springs or the compiled laws) and nothing else acts between
steps (no controls, tracers, pins, recording), a trial is a plain ``mj_step`` loop on a model of
its own, and many of them can run in lock-step: ``LockStep`` sets each trial up with the very
code a trial runs on its own (``TrialRunner.begin``, the rig's resolve, the first step's model
writes), hands the prepared model and start state to one ``mujoco.batch.Batch``
(``set_models``, C threads, bit-identical to a loop) and steps them all. Requirements are
evaluated across the trials with arrays between steps (``lockstep_watch.BatchWatch``); a
requirement's window end and a ``stop_on`` are decided per trial by ``Requirement`` itself. The
rows are built by ``TrialRunner.row``, so they are the rows the one-by-one path gives -- bit for
bit (tested).

Whatever the lock-step cannot reproduce exactly runs one by one instead, in this process: a
trial whose loads need Python at its param values, and a trial in which MuJoCo warned of
anything (a divergence, a full contact buffer), which the one-by-one path reports its own way.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mujoco
import mujoco.batch
import numpy as np

from mjrig.campaign.lockstep_watch import BatchWatch
from mjrig.campaign.trial import Task, TrialRunner
from mjrig.runtime.analysis.metrics import MODE_KINDS
from mjrig.runtime.forces.spring_bank import WRITTEN as SPRING_FIELDS
from mjrig.runtime.model_fields import WRITTEN as BINDING_FIELDS
from mjrig.runtime.model_fields import needs_setconst
from mjrig.runtime.step_parts import WORK, Work
from mjrig.runtime.telemetry.signal_probe import column_catalog
from mjrig.scenario.studies.fit import INITIAL, apply_variables

if TYPE_CHECKING:
    from mjrig.runtime.forces.engine import LoadEngine
    from mjrig.runtime.manager import RuntimeManager
    from mjrig.runtime.step_plan import StepPlan

__all__ = ["LockStep", "lockstep_refusal", "BATCH", "BATCH_DOES"]

BATCH_DOES: frozenset[Work] = frozenset({"requirements", "metrics", "model fields"})
"""Work between steps (``StepPlan.between_steps``) that lock-step does itself: requirements and
metrics on the signals a batch records, params written into each simulation's model fields."""
BATCH = 256
"""Trials stepped side by side at most."""
ROWS_EVERY = 0.5
"""s: about how long a batch takes (its rows reach the sweep's log when it ends)."""
_RECORD_BYTES = 32 << 20
"""The requirements' signals are recorded for this much (bytes) of steps at a time."""
_CALL_SECONDS = 0.1
"""s: about how long one call into the batch steps (signals are handled between calls)."""
_KEEP_BYTES = 256 << 20
"""Metrics' signals are kept whole (every step of every trial of a batch) up to this many bytes."""

_STATE = (
    "time",
    "qpos",
    "qvel",
    "act",
    "history",
    "qacc_warmstart",
    "ctrl",
    "qfrc_applied",
    "xfrc_applied",
    "eq_active",
    "mocap_pos",
    "mocap_quat",
    "userdata",
    "plugin_state",
    "plastic",
)
"""The fields of ``mjSTATE_INTEGRATION`` (a batch's state rows), as MjData names them."""
_RK4 = int(mujoco.mjtIntegrator.mjINT_RK4)
_ACC = int(mujoco.mjtStage.mjSTAGE_ACC)


def _column_field(
    model: mujoco.MjModel, data: mujoco.MjData, source: Any, group: str, index: int
) -> tuple[str, bool] | None:
    """(MjData field, read before the step) of a model column, when the batch can give the value
    a one-by-one trial reads between ``mj_step1`` and ``mj_step2``; None otherwise. Under RK4 a
    field the step computes holds its last stage's values: only state fields then."""
    rk4 = int(model.opt.integrator) == _RK4
    if group == "joints" and source is data.qpos:
        return "qpos", True
    if group == "joints" and source is data.qvel:
        return "qvel", True
    if group == "actuators" and source is data.ctrl:
        return "ctrl", True
    if rk4:
        return None
    if group == "bodies" and isinstance(source, np.ndarray) and np.shares_memory(source, data.xpos):
        return "xpos", False
    if group == "sensors" and source is data.sensordata:
        s = int(np.searchsorted(model.sensor_adr, index, side="right")) - 1
        if int(model.sensor_needstage[s]) < _ACC:  # acceleration sensors are stale at that point
            return "sensordata", False
    return None  # actuator forces (computed after it), energy, contacts, the rig's own outputs


def _recorded(
    model: mujoco.MjModel, data: mujoco.MjData, cat: dict[str, Any], signal: str
) -> tuple[str, int, bool] | None:
    """(MjData field, index in it, read before the step) where the batch records telemetry column
    ``signal`` of the catalog ``cat`` (``column_catalog``); None when it cannot (``_column_field``)."""
    found = cat.get(signal)
    if found is None:
        return None
    where = _column_field(model, data, found[1], found[0], found[2])
    return None if where is None else (where[0], found[2], where[1])


def _recorded_at(model: mujoco.MjModel, data: mujoco.MjData, cat: dict[str, Any], signal: str) -> tuple[str, int, bool]:
    """``_recorded`` of a signal the batch records; ValueError when it cannot (``lockstep_refusal``
    refuses a rig that reads such a signal)."""
    where = _recorded(model, data, cat, signal)
    if where is None:
        raise ValueError(f"lock-step cannot record {signal} (lockstep_refusal refuses this rig)")
    return where


def _resolved(rm: RuntimeManager) -> tuple[StepPlan, LoadEngine]:
    """The step plan and the load engine of ``rm``'s last resolve; RuntimeError before any."""
    plan, eng = rm.plan, rm.engine
    if plan is None or eng is None:
        raise RuntimeError("the rig is not resolved on a model yet")
    return plan, eng


def lockstep_refusal(runner: TrialRunner) -> str | None:
    """Why ``runner``'s trials cannot run in lock-step, or None when they can."""
    rig, job = runner.rig, runner.job
    rm, m, d = rig.runtime, rig.model, rig.data
    if job.record_dir is not None:
        return "trials are recorded"
    if rm.plan is None:
        rm.resolve(m, d)
    plan, _ = _resolved(rm)
    work = [w for w in plan.between_steps() if w not in BATCH_DOES and w != "loads"]  # loads: trial by trial
    if work:
        return "the rig has " + ", ".join(WORK[w] for w in work)
    if any(getattr(ld, "uses_pin", False) for ld in rm.loads):
        return "the rig reads pin reactions"
    if any(b.field.kind == "opt" and b.field.attr == "timestep" for b in rm.bindings):
        return "a param sets the timestep"
    cat = column_catalog(m, d, [])
    for r in runner.scenario.requirements:
        if _recorded(m, d, cat, r.signal) is None:
            return f"requirement '{r.name}' reads {r.signal}"
    for mt in runner.scenario.metrics:
        if mt.kind in MODE_KINDS:
            return f"metric '{mt.name}' linearises the rig at each trial's start"
        if _recorded(m, d, cat, mt.signal) is None:
            return f"metric '{mt.name}' reads {mt.signal}"
    return None


def _values(start: np.ndarray | None, record: np.ndarray, index: int) -> np.ndarray:
    """A signal at each step of a block, (n, K), from the batch's ``record`` of its field
    (n, K, ...) and, for a state field (read before the step), its value ``start`` (n, ...)
    before the block."""
    v = record.reshape(record.shape[0], record.shape[1], -1)[:, :, index]
    if start is None:
        return v
    return np.concatenate([start.reshape(start.shape[0], -1)[:, index, None], v[:, :-1]], axis=1)


@dataclass
class _Prepared:
    trial: int
    seed: int
    values: dict[str, float]
    fields: dict[str, np.ndarray]
    state: dict[str, np.ndarray]
    warnings: list[str]
    laws: Any = None  # its copy of the compiled laws' table (named in its userdata), kept while it steps


@dataclass
class _Kept:
    """The metrics' signals of a batch's trials: ``x`` (n, steps, signals) and how many steps of
    each trial count (``count``: up to its stop)."""

    x: np.ndarray
    count: np.ndarray


class LockStep:
    """Runs trials of ``runner``'s sweep side by side on ``nthread`` C threads (see the module)."""

    def __init__(self, runner: TrialRunner, *, nthread: int) -> None:
        self.runner, self.nthread = runner, nthread
        rig = runner.rig
        self.steps = max(1, int(round(runner.duration / rig.model.opt.timestep)))
        rig.runtime.set_recorder(None)
        rig.runtime.resolve(rig.model, rig.data)  # once: trials only change params (see _prepare)
        self.fields = tuple(dict.fromkeys((*BINDING_FIELDS, *SPRING_FIELDS)))
        self.setconst = needs_setconst(rig.runtime.bindings)
        checks, m, d = rig.runtime.checks, rig.model, rig.data
        cat = column_catalog(m, d, [])
        self.logged: list[tuple[str, int, bool]] = [
            _recorded_at(m, d, cat, signal) for signal in (checks.metrics.signals if checks is not None else [])
        ]
        """(field, index, read before the step) of each signal the metrics log, in its order."""

    def run(self, trials: Iterable[Task], keep: Callable[[dict[str, Any]], None]) -> None:
        """Run ``trials`` a batch at a time, handing each row to ``keep`` as its batch ends: the
        first batch is one trial a thread, each next one as many as take about ``ROWS_EVERY``
        seconds at the pace so far (at most ``BATCH``), so rows reach the sweep's log (and its
        progress bar) steadily and a killed sweep loses little."""
        size, left = self.nthread, iter(trials)
        most = BATCH if not self.logged else max(1, _KEEP_BYTES // (8 * (self.steps + 1) * len(self.logged)))
        while part := list(itertools.islice(left, min(size, most))):  # made as they are taken
            t0 = time.perf_counter()
            for row in self._run(part):
                keep(row)
            per_trial = max(1e-9, (time.perf_counter() - t0) / len(part))
            size = int(min(BATCH, max(1, ROWS_EVERY / per_trial)))

    def _run(self, trials: list[Task]) -> list[dict[str, Any]]:
        runner = self.runner
        prepared: list[_Prepared] = []
        alone: list[Task] = []
        for i in trials:
            p = self._prepare(i)
            if p is None:
                alone.append(i)
            else:
                prepared.append(p)
        rows = [runner.run(i) for i in alone]
        if prepared:
            for p, (ok, states, log) in zip(prepared, self._step(prepared)):
                rows.append(self._row(p, states, log) if ok else runner.run((p.trial, p.values, p.seed)))
        return rows

    def _prepare(self, task: Task) -> _Prepared | None:
        """Set ``trial`` up as its own first step would -- the start state, its params written
        into the model -- and take the model fields a rig writes and the start state; None when
        it must run one by one. The rig stays resolved from trial to trial: a param's change
        reaches the model through the same bindings and spring bank as a resolve's."""
        runner = self.runner
        rig = runner.rig
        m, d, rm = rig.model, rig.data, rig.runtime
        trial, values, tseed = runner.task(task)
        runner.warnings.clear()
        if any(n.startswith(INITIAL) for n in values):
            return None  # a start position of its own: the rig is resolved from it, as alone
        try:
            rig.reset()
            for name, v in apply_variables(values, runner.scenario, data=None).items():
                runner.scenario.params[name].value = v
            plan, eng = _resolved(rm)
            plan.extras.write_inputs()
            if eng.dirty:
                eng.prepare()
        except Exception:  # the one-by-one path reports it as that trial's row
            return None
        if set(plan.between_steps()) - BATCH_DOES:  # this trial's loads need Python (a spring's damping...)
            return None
        state = {name: np.array(getattr(d, name), dtype=float).reshape(-1) for name in _STATE if hasattr(d, name)}
        fields = {f: np.array(_field(m, f)) for f in self.fields}
        laws = None
        if eng.table is not None:  # this trial's param values in a table of its own
            laws = eng.table.fork()
            words = laws.userdata(d.userdata)
            state["userdata"][-len(words) :] = words
        return _Prepared(trial, tseed, values, fields, state, list(runner.warnings), laws)

    def _step(self, prepared: list[_Prepared]) -> list[tuple[bool, dict[str, dict[str, Any]], Any]]:
        """Step every prepared trial to the end; for each, whether it ran as it would alone, its
        requirements' states by name and its metrics' log (step times s, values; None without)."""
        n, runner = len(prepared), self.runner
        base = runner.rig.model
        batch = mujoco.batch.Batch(base, nsim=n, nthread=self.nthread)
        for f in self.fields:
            values = np.stack([p.fields[f] for p in prepared])
            if not (values == np.asarray(_field(base, f))).all():
                batch.expand(f)[:] = values.reshape(batch.expand(f).shape)
        if self.setconst:
            batch.set_const()
        for name in prepared[0].state:
            if prepared[0].state[name].size:
                batch.bind(name).reshape(n, -1)[:] = np.stack([p.state[name] for p in prepared])
        watches = self._watches(n)
        t = self._times(float(prepared[0].state["time"][0]))
        if any(p.state["time"][0] != t[0] for p in prepared):
            return [(False, {}, None)] * n  # not one start time: each runs alone
        kept = _Kept(np.full((n, self.steps, len(self.logged)), np.nan), np.zeros(n, np.int64)) if self.logged else None
        end = self._watched(batch, watches, t, n, kept)
        # A rollout stops a simulation at its first MuJoCo warning (a divergence, a full buffer):
        # its time then falls short, and the trial runs alone, as it reports such things itself.
        time = batch.bind("time").reshape(-1)
        return [
            (
                bool(time[s] == end),
                {w.r.name: w.state(s) for w in watches},
                None if kept is None else (t[: kept.count[s]], kept.x[s, : kept.count[s]]),
            )
            for s in range(n)
        ]

    def _times(self, t0: float) -> np.ndarray:
        """The time (s) at each step and after the last, summed as ``mj_step`` advances it."""
        dt, t = self.runner.rig.model.opt.timestep, [t0]
        for _ in range(self.steps):
            t.append(t[-1] + dt)
        return np.array(t)

    def _watches(self, n: int) -> list[BatchWatch]:
        m, d = self.runner.rig.model, self.runner.rig.data
        cat = column_catalog(m, d, [])
        watches = []
        for r in self.runner.scenario.requirements:
            field, index, before = _recorded_at(m, d, cat, r.signal)
            watches.append(BatchWatch(r, n, field=field, index=index, before=before))
        return watches

    def _watched(
        self, batch: mujoco.batch.Batch, watches: list[BatchWatch], t: np.ndarray, n: int, kept: _Kept | None
    ) -> float:
        """Step in blocks, recording the requirements' and metrics' signals, observe the former
        a block at a time and keep the latter in ``kept``; the time (s) the trials ended at (all
        stopped, or the last step). A block is at
        most ``_RECORD_BYTES`` of records and about ``_CALL_SECONDS`` of stepping (a Ctrl+C or
        SIGTERM takes effect between blocks)."""
        fields = list(dict.fromkeys([*(w.field for w in watches), *(f for f, _, _ in self.logged)]))
        before = {w.field for w in watches if w.before} | {f for f, _, b in self.logged if b}
        starts = {f: batch.bind(f) for f in fields if f in before}
        width = sum(batch.bind(f)[0].size for f in fields)
        stops = any(r.stop_on for r in self.runner.scenario.requirements)
        most = 1 if stops else max(1, min(self.steps, _RECORD_BYTES // (8 * n * max(1, width))))
        live = np.ones(n, bool)
        k, block = 0, min(most, 100)
        while k < self.steps:
            size = min(block, self.steps - k)
            start = {f: a.copy() for f, a in starts.items()}
            t0 = time.perf_counter()
            record = batch.rollout(nstep=size, record=fields)
            per_step = max(1e-9, (time.perf_counter() - t0) / size)
            block = int(min(most, max(1, _CALL_SECONDS / per_step)))
            stop = np.zeros(n, bool)
            for w in watches:
                stop |= w.fold(
                    _values(start.get(w.field) if w.before else None, record[w.field], w.index), t[k : k + size], live
                )
            if kept is not None:
                for j, (f, index, is_state) in enumerate(self.logged):
                    kept.x[:, k : k + size, j] = _values(start[f] if is_state else None, record[f], index)
                kept.count[live] = k + size
            k += size
            live &= ~stop
            if not live.any():
                break
        return float(t[k])

    def _row(self, p: _Prepared, states: dict[str, dict[str, Any]], log: Any) -> dict[str, Any]:
        runner = self.runner
        if log is not None:  # a log is kept of the metrics' signals: the rig has metrics
            checks = runner.rig.runtime.checks
            if checks is None:
                raise RuntimeError("a metrics' log of a rig without metrics")
            checks.metrics.load(*log)
        for name, v in apply_variables(p.values, runner.scenario, data=None).items():
            runner.scenario.params[name].value = v
        for r in runner.scenario.requirements:
            r.restore(states[r.name])
        runner.warnings[:] = p.warnings
        return runner.row(p.trial, p.seed, "pass", None)


def _field(model: mujoco.MjModel, name: str) -> np.ndarray:
    """MjModel array ``name``, or MjOption's for ``opt.<name>``."""
    if name.startswith("opt."):
        return np.atleast_1d(getattr(model.opt, name[4:]))
    return getattr(model, name)
