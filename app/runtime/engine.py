"""The stepping engine: evaluates every load and writes the sum into ``qfrc_applied``.

Point-to-point loads that have a rig tendon (see ``rigmodel``) form the *bank*: their lengths,
rates and Jacobians come from MuJoCo, their tensions from ``spring_tension`` over arrays, and
``qfrc_applied = Jᵀ·tension`` is one matrix product. Every other load (vector/scalar loads, loads
attached after compilation, user callables) goes through its own ``calculate`` and
``mj_applyFT``. Mouse perturbations live in ``xfrc_applied`` and are never touched.

Integrators: Euler/implicit use ``mj_step1`` → loads → ``mj_step2`` (one physics pass). RK4
evaluates loads at each of its stages through MuJoCo's passive-force callback. ``before_step``
and ``after_step`` hooks run at the step boundary, outside the physics, on every path.

Threading: an engine belongs to the stepping thread. Params and loads may be changed from other
threads; they only flag the engine, which re-reads them at the next step.
"""
from __future__ import annotations

import math
from typing import Callable

import mujoco
import numpy as np

from mjrig.runtime.errors import DivergenceError, LoadError
from mjrig.runtime.loads import Load, PointToPointForce
from mjrig.runtime.springs import spring_tension
from mjrig.runtime.values import is_time_varying

__all__ = ["LoadEngine", "step_with_loads"]

_FAR = 1e10
"""m: the open end of a tension- or compression-only spring's dead band (no model is this big)."""


class _Bank:
    """Array state of the tendon-backed point-to-point loads (n springs)."""

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, loads: list[PointToPointForce],
                 tendons: list[int], *, native: bool = True) -> None:
        n = len(loads)
        self.loads = loads
        self.tendons = np.array(tendons, dtype=int)
        order = np.argsort(self.tendons)
        assert np.all(np.diff(self.tendons[order]) == 1) or n <= 1, "rig tendons must be contiguous"
        self.t0 = int(self.tendons.min()) if n else 0
        self.pos = self.tendons - self.t0  # row of each load within the tendon slice
        self.n = n
        self.ref, self.p, self.k, self.c = (np.zeros(n) for _ in range(4))
        self.tmin, self.lo, self.hi = (np.zeros(n) for _ in range(3))
        self.s, self.tension, self.tmp = np.zeros(n), np.zeros(n), np.zeros(n)
        self.mask, self.mask2 = np.zeros(n, bool), np.zeros(n, bool)
        self.custom = [i for i, ld in enumerate(loads) if ld.magnitude_func is not None]
        self.custom_rows = np.array([self.pos[i] for i in self.custom], dtype=int)
        self.allow_native = native
        self.native = np.zeros(n, bool)       # rows MuJoCo evaluates as tendon springs
        self.apply_lo, self.apply_hi = np.full(n, math.inf), np.full(n, -math.inf)
        self.python = True                    # whether any row needs apply() every step
        self.plain = False                    # all rows ideal: forces() takes its shortcut
        self.pull = np.zeros(n)               # -tension (N) in that shortcut
        self.on_error: Callable[[Load, BaseException], None] = lambda ld, exc: None  # set by LoadEngine
        self.bind(model, data)

    def bind(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """Cache views of ``data`` (valid for the life of that MjData)."""
        n, nv = self.n, model.nv
        sl = slice(self.t0, self.t0 + n)
        self.length = data.ten_length[sl]
        self.rate = data.ten_velocity[sl]
        adr0 = int(model.ten_J_rowadr[self.t0])
        last = self.t0 + n - 1
        adr1 = int(model.ten_J_rowadr[last] + model.ten_J_rownnz[last])
        self.jvals = data.ten_J[adr0:adr1]
        rows = np.repeat(np.arange(n), model.ten_J_rownnz[sl])
        self.jflat_idx = rows * nv + model.ten_J_colind[adr0:adr1]
        self.jdense = np.zeros((n, nv))
        self.jflat = self.jdense.reshape(-1)
        # The tendon path points (two per rig tendon) give each spring's direction for telemetry.
        self.wrap = data.wrap_xpos.reshape(-1, 3)
        self.wrapadr = data.ten_wrapadr
        self.delta, self.force = np.zeros((n, 3)), np.zeros((n, 3))
        self.torque = np.zeros((n, 3))
        self.scale, self.safe_len = np.zeros((n, 1)), np.zeros(n)

    def refresh(self, model: mujoco.MjModel, t: float) -> None:
        """Re-read each law's numbers (after a param or field changed, or every step if profiled),
        and hand every spring MuJoCo can evaluate exactly to it as a tendon spring-damper."""
        springs_on = not model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_SPRING
        dampers_on = not model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_DAMPER
        bands: dict[int, tuple[float, float]] = {}  # row -> MuJoCo's dead band, for native rows
        for i, ld in enumerate(self.loads):
            row = self.pos[i]
            if ld.magnitude_func is not None or ld.law is None:
                self.lo[row], self.hi[row] = -math.inf, math.inf
                self.native[row] = False
                continue
            (self.ref[row], self.p[row], self.k[row], self.c[row], self.tmin[row],
             self.lo[row], self.hi[row]) = ld.law.coefficients(ld.r0, t)
            if not ld.active:  # an empty window switches the spring off at no per-step cost
                self.lo[row], self.hi[row] = math.inf, -math.inf
            band = ld.law.native_band(t) if self.allow_native else None
            self.native[row] = (band is not None and (springs_on or self.k[row] == 0.0)
                                and (dampers_on or self.c[row] == 0.0))
            if self.native[row]:
                bands[row] = band  # type: ignore[assignment]
        self.python = bool(self.custom) or not bool(self.native.all())
        # Telemetry's shortcut: every spring two-sided, no preload or floor (ideal springs).
        self.plain = (not self.custom and bool(np.all(self.p == 0.0)) and bool(np.all(np.isneginf(self.tmin)))
                      and bool(np.all(np.isneginf(self.lo))) and bool(np.all(np.isposinf(self.hi))))
        # Native rows: MuJoCo's tendon spring (dead band lengthspring) and damper; nothing in Python.
        tendons = self.tendons[np.argsort(self.pos)]
        on = self.native & (self.lo <= self.hi)
        model.tendon_stiffness[tendons] = np.where(on, self.k, 0.0)
        model.tendon_damping[tendons] = np.where(on, self.c, 0.0)
        for row, (low, high) in bands.items():
            model.tendon_lengthspring[tendons[row]] = (max(0.0, self.ref[row] + low), min(_FAR, self.ref[row] + high))
        self.apply_lo = np.where(self.native, math.inf, self.lo)
        self.apply_hi = np.where(self.native, -math.inf, self.hi)

    def release(self, model: mujoco.MjModel) -> None:
        """Hand the tendons back switched off (the engine is being replaced)."""
        model.tendon_stiffness[self.tendons] = 0.0
        model.tendon_damping[self.tendons] = 0.0

    def apply(self, model: mujoco.MjModel, data: mujoco.MjData, qfrc: np.ndarray) -> None:
        """Overwrite ``qfrc`` with Jᵀ·tension of every spring."""
        np.subtract(self.length, self.ref, out=self.s)
        spring_tension(self.s, self.rate, self.k, self.c, self.p, self.tmin, self.apply_lo, self.apply_hi,
                       out=self.tension, tmp=self.tmp, mask=self.mask, mask2=self.mask2)
        for i in self.custom:
            ld = self.loads[i]
            row = self.pos[i]
            self.tension[row] = 0.0
            if not ld.active:
                continue
            try:  # a user callable must not take the simulation down (as on the general path)
                tension = ld.tension(float(self.length[row]), float(self.rate[row]), model, data)
                if not math.isfinite(tension):
                    raise ValueError("non-finite tension")
            except Exception as exc:
                self.on_error(ld, exc)
                continue
            self.tension[row] = tension
        np.put(self.jflat, self.jflat_idx, self.jvals)
        np.dot(self.tension, self.jdense, out=qfrc)

    def forces(self) -> np.ndarray:
        """World force on each spring's `at` point, (n, 3) in tendon order: tension · (a − b)/|a − b|."""
        adr = int(self.wrapadr[self.t0])
        pts = self.wrap[adr: adr + 2 * self.n]
        np.maximum(self.length, 1e-12, out=self.safe_len)
        np.subtract(self.length, self.ref, out=self.s)
        if self.plain:  # two-sided springs only: -tension = k·s + c·v, with the sign in (b − a)
            np.multiply(self.k, self.s, out=self.pull)
            np.multiply(self.c, self.rate, out=self.tmp)
            np.add(self.pull, self.tmp, out=self.pull)
            np.subtract(pts[1::2], pts[0::2], out=self.delta)
            np.divide(self.pull, self.safe_len, out=self.scale[:, 0])
        else:
            custom = self.tension[self.custom_rows] if self.custom else None  # the user callables' tension
            spring_tension(self.s, self.rate, self.k, self.c, self.p, self.tmin, self.lo, self.hi,
                           out=self.tension, tmp=self.tmp, mask=self.mask, mask2=self.mask2)
            if custom is not None:
                self.tension[self.custom_rows] = custom
            np.subtract(pts[0::2], pts[1::2], out=self.delta)
            np.divide(self.tension, self.safe_len, out=self.scale[:, 0])
        np.multiply(self.delta, self.scale, out=self.force)
        return self.force


class LoadEngine:
    """Evaluates a rig's loads on one (model, data) pair and applies them.

    ``tendon_of`` maps load names to their rig tendon ids (from ``compile_rig``); loads without
    one use the general path. Outputs for telemetry and drawing live in ``wrench`` (nloads, 6:
    fx fy fz tx ty tz, world frame, on the `at` point) and ``lv`` (nloads, 2: length m,
    rate m/s; NaN for loads that are not point-to-point), refreshed by ``update_outputs``.
    """

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, loads: list[Load], *,
                 tendon_of: dict[str, int] | None = None,
                 on_load_error: Callable[[Load, BaseException], None] | None = None,
                 native: bool = True) -> None:
        self.model = model
        self.data = data
        self.loads = list(loads)
        self.on_load_error = on_load_error
        tendon_of = tendon_of or {}
        bank_loads = [ld for ld in self.loads if isinstance(ld, PointToPointForce) and ld.name in tendon_of]
        self.bank = (_Bank(model, data, bank_loads, [tendon_of[ld.name] for ld in bank_loads], native=native)
                     if bank_loads else None)
        if self.bank is not None:
            self.bank.on_error = self._disable
        bank_ids = {id(ld) for ld in bank_loads}
        self.general = [ld for ld in self.loads if id(ld) not in bank_ids]
        self.index = {id(ld): i for i, ld in enumerate(self.loads)}
        self._bank_rows = np.array([self.index[id(ld)] for ld in bank_loads], dtype=int)
        self.wrench = np.zeros((len(self.loads), 6))
        self.lv = np.full((len(self.loads), 2), np.nan)
        self._bank_force = np.zeros((len(bank_loads), 3))
        for i, ld in enumerate(self.loads):
            ld.report_into(self.wrench[i, 0:3], self.wrench[i, 3:6])
        self._dirty = True
        self._varying = False
        self.before_step: list[Callable[[], None]] = []  # e.g. actuator inputs, model-field writes
        self.after_step: list[Callable[[], None]] = []   # e.g. joint reactions, tracer samples
        self.qfrc = data.qfrc_applied
        self.opt = model.opt  # a live view of the model's options (timestep, integrator)
        self._point = np.zeros(3)
        for ld in self.loads:
            ld.resolve_ids(model, data)
            ld.subscribe(self.invalidate)
            for p in ld.params():
                p.subscribe(self.invalidate)

    def invalidate(self, *_: object) -> None:
        """Re-read the loads' numbers before the next step (a load, param or r0 changed)."""
        self._dirty = True

    def detach(self) -> None:
        """Stop listening to the loads and params and switch the native springs off (call when
        the engine is dropped)."""
        for ld in self.loads:
            ld.unsubscribe(self.invalidate)
            for p in ld.params():
                p.unsubscribe(self.invalidate)
        if self.bank is not None:
            self.bank.release(self.model)

    @property
    def needs_python(self) -> bool:
        """Whether a step must call :meth:`apply` (False: MuJoCo evaluates every load natively)."""
        return bool(self.general) or (self.bank is not None and self.bank.python)

    def prepare(self) -> None:
        """Re-read the loads' numbers if something changed (or they vary in time); once a step."""
        if not (self._dirty or self._varying):
            return
        self._dirty = False
        if self.bank is not None:
            self.bank.refresh(self.model, self.data.time)
            self._varying = any(ld.law is not None and any(is_time_varying(x) for x in (
                ld.law.stiffness, ld.law.damping, ld.law.rest_length, ld.law.preload, ld.law.max_stroke))
                for ld in self.bank.loads)
        if not self.needs_python:
            self.qfrc.fill(0.0)  # nothing overwrites it each step any more

    def apply(self) -> None:
        """Compute every load at the current kinematics and write ``qfrc_applied``."""
        self.prepare()
        m, d, qfrc = self.model, self.data, self.qfrc
        if self.bank is not None and self.bank.python:
            self.bank.apply(m, d, qfrc)
        else:
            qfrc.fill(0.0)
        for ld in self.general:
            # Its force and torque land in its row of `wrench` (the load's last_force/last_torque views);
            # switched off, it applies nothing and reports nothing.
            try:
                ld.apply_load(m, d, qfrc=qfrc)
            except Exception as exc:  # a user load must not take the simulation down
                self._disable(ld, exc)
                continue
            if ld.active and isinstance(ld, PointToPointForce):
                i = self.index[id(ld)]
                self.lv[i, 0], self.lv[i, 1] = ld.last_length, ld.last_velocity

    def _disable(self, ld: Load, exc: BaseException) -> None:
        ld.active = False
        i = self.index[id(ld)]
        self.wrench[i] = 0.0
        if self.on_load_error is not None:
            self.on_load_error(ld, exc)
        else:
            raise LoadError(f"load '{ld.name}' failed and was disabled: {type(exc).__name__}: {exc}") from exc

    def update_outputs(self) -> None:
        """Bring every load's ``last_force`` (rows of ``wrench``) and ``lv`` up to date, for drawing."""
        b = self.bank
        if b is None:
            return
        force = b.forces()
        rows = self._bank_rows
        self.wrench[rows, 0:3] = force[b.pos]
        self.lv[rows, 0] = b.length[b.pos]
        self.lv[rows, 1] = b.rate[b.pos]

    def telemetry_sources(self) -> tuple[Callable[[], None], list[tuple[np.ndarray, list[tuple[str, int, str]]]]]:
        """(prepare, sources) for the recorder: call ``prepare()`` before gathering a row; each source
        is (flat array, [(column, index, unit)]). Bank loads are read straight from their arrays."""
        sources: list[tuple[np.ndarray, list[tuple[str, int, str]]]] = []
        b = self.bank
        if b is not None:
            order = sorted(range(b.n), key=lambda i: b.pos[i])  # bank index by tendon row
            names = [b.loads[i].name for i in order]
            sources.append((b.force.reshape(-1), [(f"Loads/{n}:{a}", 3 * r + k, "N") for r, n in enumerate(names)
                                                  for k, a in enumerate(("fx", "fy", "fz"))]))
            sources.append((b.torque.reshape(-1), [(f"Loads/{n}:{a}", 3 * r + k, "N*m") for r, n in enumerate(names)
                                                   for k, a in enumerate(("tx", "ty", "tz"))]))
            sources.append((b.length, [(f"Loads/{n}:length", r, "m") for r, n in enumerate(names)]))
            sources.append((b.rate, [(f"Loads/{n}:velocity", r, "m/s") for r, n in enumerate(names)]))
        wrench, lv = self.wrench.reshape(-1), self.lv.reshape(-1)
        units = ("N", "N", "N", "N*m", "N*m", "N*m")
        gen = [(self.index[id(ld)], ld) for ld in self.general if ld.reports_wrench]
        sources.extend(src for ld in self.general for src in ld.signals())
        sources.append((wrench, [(f"Loads/{ld.name}:{a}", 6 * i + k, units[k]) for i, ld in gen
                                 for k, a in enumerate(("fx", "fy", "fz", "tx", "ty", "tz"))]))
        sources.append((lv, [(f"Loads/{ld.name}:{a}", 2 * i + k, u) for i, ld in gen if ld.is_point_to_point
                             for k, (a, u) in enumerate((("length", "m"), ("velocity", "m/s")))]))
        prepare = b.forces if b is not None else (lambda: None)
        return prepare, sources  # type: ignore[return-value]


def step_with_loads(engine: LoadEngine, *, before_integrate: Callable[[], None] | None = None) -> None:
    """Advance ``engine.data`` by one timestep with every load applied.

    ``before_integrate`` runs when the state, kinematics and loads all describe the current time
    (the moment to record telemetry). Raises DivergenceError if MuJoCo found a NaN/Inf or a bad
    acceleration (it then resets the state; the caller decides what to keep).
    """
    m, d, opt = engine.model, engine.data, engine.opt
    t_before = d.time
    # MuJoCo resets the state (time 0) and steps on when it finds a bad value, so a divergence
    # shows as time going back -- except in the first two steps, where the reset state steps to
    # the same time: there the warning counters tell.
    early = _bad_count(d) if t_before <= opt.timestep else -1
    for fn in engine.before_step:
        fn()
    engine.prepare()
    python = engine.needs_python
    if opt.integrator == _RK4:
        if python:
            _step_rk4(engine, before_integrate)
        else:
            if before_integrate is not None:
                mujoco.mj_forward(m, d)  # kinematics at the current time, for the recorder
                before_integrate()
            mujoco.mj_step(m, d)
    elif python or before_integrate is not None:
        mujoco.mj_step1(m, d)
        if python:
            engine.apply()
        if before_integrate is not None:
            before_integrate()
        mujoco.mj_step2(m, d)
    else:  # every load is MuJoCo's own: a plain step
        mujoco.mj_step(m, d)
    if (d.time < t_before or not math.isfinite(d.time)
            or (early >= 0 and _bad_count(d) != early)):
        raise DivergenceError(_divergence_message(m, d, t_before))
    for fn in engine.after_step:
        fn()


_RK4 = int(mujoco.mjtIntegrator.mjINT_RK4)
_BAD_WARNINGS = [int(mujoco.mjtWarning.mjWARN_BADQACC), int(mujoco.mjtWarning.mjWARN_BADQVEL),
                 int(mujoco.mjtWarning.mjWARN_BADQPOS)]


def _bad_count(d: mujoco.MjData) -> int:
    """How often MuJoCo has reset ``d`` for a NaN/Inf/huge position, velocity or acceleration."""
    return int(d.warning.number[_BAD_WARNINGS].sum())


def _step_rk4(engine: LoadEngine, before_integrate: Callable[[], None] | None) -> None:
    m, d = engine.model, engine.data
    failure: list[BaseException] = []

    def passive(_m: mujoco.MjModel, _d: mujoco.MjData) -> None:
        try:
            engine.apply()
        except BaseException as exc:  # re-raised after the step: never across the C boundary
            failure.append(exc)

    previous = mujoco.get_mjcb_passive()
    mujoco.set_mjcb_passive(passive)
    try:
        if before_integrate is not None:
            mujoco.mj_forward(m, d)  # loads and kinematics at the current time, for the recorder
            before_integrate()
        mujoco.mj_step(m, d)
    finally:
        mujoco.set_mjcb_passive(previous)
    if failure:
        raise failure[0]


def _divergence_message(m: mujoco.MjModel, d: mujoco.MjData, t_before: float) -> str:
    names = {mujoco.mjtWarning.mjWARN_BADQACC: "acceleration", mujoco.mjtWarning.mjWARN_BADQVEL: "velocity",
             mujoco.mjtWarning.mjWARN_BADQPOS: "position"}
    where = ""
    for w, label in names.items():
        info = d.warning[int(w)]
        if info.number > 0:
            dof = int(info.lastinfo)
            jnt = int(m.dof_jntid[dof]) if 0 <= dof < m.nv else -1
            jname = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, jnt) if jnt >= 0 else None
            where = f": bad {label} at dof {dof}" + (f" (joint '{jname}')" if jname else "")
            break
    return f"physics diverged at t={t_before:.6g} s{where}"
