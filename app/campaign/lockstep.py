"""Trials of one sweep side by side: ``mujoco.batch`` steps them on MuJoCo's own C threads.

A sweep's trials usually differ only in a few numbers of the model. When every load of the rig
is MuJoCo's own (springs as tendons: no Python force per step) and nothing else acts between
steps (no controls, tracers, pins, recording), a trial is a plain ``mj_step`` loop on a model of
its own, and many of them can run in lock-step: ``LockStep`` sets each trial up with the very
code a trial runs on its own (``TrialRunner.begin``, the rig's resolve, the first step's model
writes), hands the prepared model and start state to one ``mujoco.batch.Batch``
(``set_models``, C threads, bit-identical to a loop) and steps them all. Requirements are
evaluated across the trials with arrays between steps (``_Watch``); a requirement's window end
and a ``stop_on`` are decided per trial by ``Requirement`` itself. The rows are built by
``TrialRunner.row``, so they are the rows the one-by-one path gives -- bit for bit (tested).

Whatever the lock-step cannot reproduce exactly runs one by one instead, in this process: a
trial whose loads need Python at its param values, and a trial in which MuJoCo warned of
anything (a divergence, a full contact buffer), which the one-by-one path reports its own way.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import mujoco
import mujoco.batch
import numpy as np

from mjrig.campaign.trial import TrialRunner
from mjrig.runtime.model_fields import WRITTEN as BINDING_FIELDS, needs_setconst
from mjrig.runtime.requirements import FAILED, PASSED, Requirement
from mjrig.runtime.signal_probe import column_catalog
from mjrig.runtime.spring_bank import WRITTEN as SPRING_FIELDS

__all__ = ["LockStep", "lockstep_refusal", "BATCH"]

BATCH = 256
"""Trials stepped side by side at most (their rows reach the driver's log a batch at a time)."""

_STATE = tuple(mujoco.batch._STATE_FIELDS)  # the fields of mjSTATE_INTEGRATION, as MjData names them
_RK4 = int(mujoco.mjtIntegrator.mjINT_RK4)
_ACC = int(mujoco.mjtStage.mjSTAGE_ACC)


def _column_field(model: mujoco.MjModel, data: mujoco.MjData, source: Any, group: str, index: int
                  ) -> tuple[str, bool] | None:
    """(MjData field, read before the step) of a model column, when the batch can give the value
    a one-by-one trial reads between ``mj_step1`` and ``mj_step2``; None otherwise."""
    if group == "joints" and source is data.qpos:
        return "qpos", True
    if group == "joints" and source is data.qvel:
        return "qvel", True
    if group == "actuators" and source is data.ctrl:
        return "ctrl", True
    if group == "bodies" and np.shares_memory(source, data.xpos):
        return "xpos", False
    if group == "sensors" and source is data.sensordata:
        s = int(np.searchsorted(model.sensor_adr, index, side="right")) - 1
        if int(model.sensor_needstage[s]) < _ACC:  # acceleration sensors are stale at that point
            return "sensordata", False
    return None  # actuator forces (computed after it), energy, contacts, the rig's own outputs


def lockstep_refusal(runner: TrialRunner) -> str | None:
    """Why ``runner``'s trials cannot run in lock-step, or None when they can."""
    rig, job = runner.rig, runner.job
    rm, m, d = rig.runtime, rig.model, rig.data
    if job.record_dir is not None:
        return "trials are recorded"
    if rm.controls or rm.tracers or rm.video_recorders or rm.monitors:
        return "the rig has controls, tracers, videos or monitors"
    if rm.engine is None:
        rm.resolve(m, d)
    extras = rm._extras
    if extras is not None and (extras.pins or extras.controls is not None):
        return "the rig reads pin reactions"
    if any(b.field.kind == "opt" and b.field.attr == "timestep" for b in rm.bindings):
        return "a param sets the timestep"
    if runner.scenario.requirements and int(m.opt.integrator) == _RK4:
        return "requirements are read inside RK4's step"
    cat = column_catalog(m, d, [])
    for r in runner.scenario.requirements:
        found = cat.get(r.signal)
        if found is None or _column_field(m, d, found[1], found[0], found[2]) is None:
            return f"requirement '{r.name}' reads {r.signal}"
    return None


@dataclass
class _Prepared:
    trial: int
    seed: int
    values: dict[str, float]
    fields: dict[str, np.ndarray]
    state: dict[str, np.ndarray]
    warnings: list[str]


class _Watch:
    """One requirement observed over ``n`` trials at once: the arrays of ``Requirement.state``."""

    def __init__(self, r: Requirement, n: int, read: Callable[[], np.ndarray]) -> None:
        self.r, self.read = r, read
        self.t0, self.t1, self.last_from = r.window()
        self.passed = np.ones(n, bool)
        self.decided = np.zeros(n, bool)
        self.n = np.zeros(n, np.int64)
        self.lo, self.hi = np.full(n, math.inf), np.full(n, -math.inf)
        self.last, self.last_t = np.full(n, math.nan), np.full(n, math.nan)
        self.first_violation = [None] * n
        self.violation_value = [None] * n
        self.failed_bound = [""] * n

    def state(self, s: int) -> dict[str, Any]:
        n = int(self.n[s])
        return {"passed": bool(self.passed[s]), "decided": bool(self.decided[s]),
                "first_violation": self.first_violation[s], "violation_value": self.violation_value[s],
                "lo": float(self.lo[s]), "hi": float(self.hi[s]), "last": float(self.last[s]),
                "last_t": float(self.last_t[s]) if n else None, "n": n, "failed_bound": self.failed_bound[s]}

    def _adopt(self, s: int, state: dict[str, Any]) -> None:
        self.passed[s], self.decided[s] = state["passed"], state["decided"]
        self.first_violation[s], self.violation_value[s] = state["first_violation"], state["violation_value"]
        self.failed_bound[s] = state["failed_bound"]

    def update(self, t: float, live: np.ndarray) -> np.ndarray:
        """Observe the signal at time ``t`` (s) in the ``live`` trials (as ``Requirement.update``);
        returns the trials whose ``stop_on`` fired at this step."""
        stop = np.zeros_like(live)
        if t < self.t0 or t > self.t1:
            return stop
        live = live & ~self.decided
        if not live.any():
            return stop
        v, r = self.read(), self.r
        ok = live & (v == v)
        self.n += ok
        np.minimum(self.lo, v, out=self.lo, where=ok)
        np.maximum(self.hi, v, out=self.hi, where=ok)
        for bound, bad in (("min", None if r.min is None else ok & self.passed & (v < r.min)),
                           ("max", None if r.max is None else ok & self.passed & (v > r.max))):
            if bad is not None and bad.any():
                for s in np.flatnonzero(bad):
                    self.passed[s] = False
                    self.first_violation[s], self.violation_value[s] = t, float(v[s])
                    self.failed_bound[s] = bound
                    stop[s] |= r.stop_on == "fail"
        np.copyto(self.last, v, where=ok)
        np.copyto(self.last_t, t, where=ok)
        if t >= self.last_from:
            for s in np.flatnonzero(live):
                r.restore(self.state(s))
                event = r.finish()
                self._adopt(s, r.state())
                stop[s] |= (event == FAILED and r.stop_on == "fail") or (event == PASSED and r.stop_on == "pass")
        return stop


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

    def run(self, trials: list[int], keep: Callable[[dict[str, Any]], None]) -> None:
        """Run ``trials``, ``BATCH`` at a time, handing each row to ``keep``."""
        for k in range(0, len(trials), BATCH):
            for row in self._run(trials[k:k + BATCH]):
                keep(row)

    def _run(self, trials: list[int]) -> list[dict[str, Any]]:
        runner = self.runner
        prepared, alone = [], []
        for i in trials:
            p = self._prepare(i)
            (alone if p is None else prepared).append(p if p is not None else i)
        rows = [runner.run(i) for i in alone]
        if prepared:
            for p, (ok, states) in zip(prepared, self._step(prepared)):
                rows.append(self._row(p, states) if ok else runner.run(p.trial))
        return rows

    def _prepare(self, trial: int) -> _Prepared | None:
        """Set ``trial`` up as its own first step would -- the start state, its params written
        into the model -- and take the model fields a rig writes and the start state; None when
        it must run one by one. The rig stays resolved from trial to trial: a param's change
        reaches the model through the same bindings and spring bank as a resolve's."""
        runner = self.runner
        rig = runner.rig
        m, d, rm = rig.model, rig.data, rig.runtime
        values, tseed = runner.spec.trial(trial)
        runner.warnings.clear()
        try:
            rig.reset()
            for name, v in values.items():
                runner.scenario.params[name].value = v
            eng = rm.engine
            for fn in eng.before_step:
                fn()
            if eng.dirty:
                eng.prepare()
        except Exception:  # the one-by-one path reports it as that trial's row
            return None
        if eng.python or eng.dirty or eng.after_step:
            return None
        state = {name: np.array(getattr(d, name), dtype=float).reshape(-1) for name in _STATE}
        fields = {f: np.array(_field(m, f)) for f in self.fields}
        return _Prepared(trial, tseed, values, fields, state, list(runner.warnings))

    def _step(self, prepared: list[_Prepared]) -> list[tuple[bool, dict[str, dict[str, Any]]]]:
        """Step every prepared trial to the end; for each, whether it ran as it would alone and
        its requirements' states by name."""
        n, runner = len(prepared), self.runner
        base = runner.rig.model
        batch = mujoco.batch.Batch(base, nsim=n, nthread=self.nthread, persistent=True)
        for f in self.fields:
            values = np.stack([p.fields[f] for p in prepared])
            if not (values == np.asarray(_field(base, f))).all():
                batch.expand(f)[:] = values.reshape(batch.expand(f).shape)
        if self.setconst:
            batch.set_const()
        for name in _STATE:
            if prepared[0].state[name].size:
                batch.bind(name).reshape(n, -1)[:] = np.stack([p.state[name] for p in prepared])
        t = float(prepared[0].state["time"][0])
        ends = np.full(n, math.nan)
        watches = self._watches(batch, n)
        if not watches or any(p.state["time"][0] != t for p in prepared):
            batch.step(nstep=self.steps)
            for _ in range(self.steps):
                t += base.opt.timestep  # as mj_step advances time
            ends[:] = t
        else:
            ends = self._watched(batch, watches, t, n)
        time = batch.bind("time").reshape(-1)
        out, scratch = [], mujoco.MjData(base)
        for s in range(n):
            warned = batch.get_data(s, data=scratch).warning.number.any()
            out.append((not warned and time[s] == ends[s], {w.r.name: w.state(s) for w in watches}))
        return out

    def _watches(self, batch: mujoco.batch.Batch, n: int) -> list[_Watch]:
        m, d = self.runner.rig.model, self.runner.rig.data
        cat = column_catalog(m, d, [])
        self._before: list[tuple[np.ndarray, int, np.ndarray]] = []
        watches = []
        for r in self.runner.scenario.requirements:
            group, source, index = cat[r.signal]
            field, before = _column_field(m, d, source, group, index)  # type: ignore[misc]
            bound = batch.bind(field).reshape(n, -1)
            if before:  # a state field: read before the step, into a buffer of its own
                buf = np.empty(n)
                self._before.append((bound, index, buf))
                watches.append(_Watch(r, n, lambda buf=buf: buf))
            else:  # computed by the step, at the state it started from
                watches.append(_Watch(r, n, lambda bound=bound, index=index: bound[:, index]))
        return watches

    def _watched(self, batch: mujoco.batch.Batch, watches: list[_Watch], t: float, n: int) -> np.ndarray:
        """Step with the requirements observed between steps; each trial's end time (s)."""
        live = np.ones(n, bool)
        ends = np.full(n, math.nan)
        dt = self.runner.rig.model.opt.timestep
        ids = None
        for _ in range(self.steps):
            for bound, index, buf in self._before:
                np.copyto(buf, bound[:, index])
            batch.step(ids=ids)
            stop = np.zeros(n, bool)
            for w in watches:
                stop |= w.update(t, live)
            t += dt
            if stop.any():
                ends[stop & live] = t
                live &= ~stop
                if not live.any():
                    break
                ids = np.flatnonzero(live)
        ends[live] = t
        return ends

    def _row(self, p: _Prepared, states: dict[str, dict[str, Any]]) -> dict[str, Any]:
        runner = self.runner
        for name, v in p.values.items():
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
