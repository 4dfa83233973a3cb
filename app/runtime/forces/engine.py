"""The stepping engine: evaluates every load and writes the sum into ``qfrc_applied``.

Point-to-point loads that have a rig tendon (see ``rigmodel``) form the *bank*: their lengths,
rates and Jacobians come from MuJoCo, their tensions from ``spring_tension`` over arrays, and
``qfrc_applied = Jᵀ·tension`` is one matrix product. Every other load (vector/scalar loads, loads
attached after compilation, user callables) goes through its own ``calculate`` and
``mj_applyFT``. Mouse perturbations live in ``xfrc_applied`` and are never touched.

Integrators: Euler/implicit use ``mj_step1`` → loads → ``mj_step2`` (one physics pass). RK4
evaluates loads at each of its stages through MuJoCo's passive-force callback. What a rig does
at the step boundary besides its loads (actuator inputs, tracers...) is the step plan's.

Threading: an engine belongs to the stepping thread. Params and loads may be changed from other
threads; they only flag the engine, which re-reads them at the next step.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mujoco
import numpy as np

from mjrig.runtime.compiled import passive_route
from mjrig.runtime.errors import DivergenceError, LoadError
from mjrig.runtime.forces.loads import Load, PointToPointForce
from mjrig.runtime.forces.native_table import LawTable
from mjrig.runtime.forces.spring_bank import Helper, SpringBank
from mjrig.runtime.forces.wrench_bank import WrenchBank, batchable
from mjrig.runtime.telemetry.signal_sources import Derived, Source

__all__ = ["LoadEngine", "step_with_loads", "step_plain"]


class LoadEngine:
    """Evaluates a rig's loads on one (model, data) pair and applies them.

    ``helper_of`` maps load names to their helpers (a tendon id or two site ids, from
    ``compile_rig``); loads without one use the general path. Outputs for telemetry and drawing
    live in ``wrench`` (nloads, 6: fx fy fz tx ty tz, world frame, on the `at` point) and ``lv``
    (nloads, 3: length m, rate m/s, tension N pulling the points together; NaN for loads that are
    not point-to-point), refreshed by ``update_outputs``.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        data: mujoco.MjData,
        loads: list[Load],
        *,
        helper_of: dict[str, Helper] | None = None,
        on_load_error: Callable[[Load, BaseException], None] | None = None,
        native: bool = True,
        compiled: bool = True,
    ) -> None:
        self.model = model
        self.data = data
        self.loads = list(loads)
        self.on_load_error = on_load_error
        helper_of = helper_of or {}
        bank_loads = [ld for ld in self.loads if isinstance(ld, PointToPointForce) and ld.name in helper_of]
        self.bank = (
            SpringBank(model, data, bank_loads, [helper_of[ld.name] for ld in bank_loads], native=native)
            if bank_loads
            else None
        )
        if self.bank is not None:
            self.bank.on_error = self._disable
        bank_ids = {id(ld) for ld in bank_loads}
        self.general = [ld for ld in self.loads if id(ld) not in bank_ids]
        self.index = {id(ld): i for i, ld in enumerate(self.loads)}
        self._bank_rows = np.array([self.index[id(ld)] for ld in bank_loads], dtype=int)
        self.wrench = np.zeros((len(self.loads), 6))
        self.lv = np.full((len(self.loads), 3), np.nan)
        for i, ld in enumerate(self.loads):
            ld.report_into(self.wrench[i, 0:3], self.wrench[i, 3:6])
        batch = [ld for ld in self.general if batchable(ld)]  # they report from the bank's rows instead
        self.wrenches = WrenchBank(model, data, batch, on_error=self._disable) if batch else None
        self.slow = [ld for ld in self.general if not batchable(ld)]  # each through its own apply_load
        self._wrench_rows = np.array([self.index[id(ld)] for ld in batch], dtype=int)
        self._dirty = True
        self._varying = False
        self.python = True  # needs_python as of the last prepare (read once a step)
        self.qfrc = data.qfrc_applied
        self.opt = model.opt  # a live view of the model's options (timestep, integrator)
        self.stepped_to = math.nan
        """``data.time`` (s) after this engine's last step: a step from another time starts a run
        (a new engine, a reset, a restored state), whose first row needs its own acceleration stage."""
        self._evaluated_at = math.nan  # data.time (s) of the last ``evaluate``
        for ld in self.loads:
            ld.resolve_ids(model, data)
            ld.subscribe(self.invalidate)
            for p in ld.params():
                p.subscribe(self.invalidate)
        # The compiled laws (``native_table``): MuJoCo evaluates every load in its passive-force
        # callback, without Python; None keeps the Python path (a user callable, a pin friction).
        # Packed at the first ``prepare`` (the engine starts dirty).
        self.table: LawTable | None = LawTable.make(self) if compiled and self.loads else None

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
        if self.table is not None:
            self.table.release()
            self.table = None

    @property
    def needs_python(self) -> bool:
        """Whether a step must call :meth:`apply` (False: MuJoCo evaluates every load natively,
        as tendon springs or in the compiled laws)."""
        if self.table is not None:
            return False
        return bool(self.general) or (self.bank is not None and self.bank.python)

    @property
    def dirty(self) -> bool:
        """Whether :meth:`prepare` has work to do (something changed, or numbers vary in time)."""
        return self._dirty or self._varying

    def prepare(self) -> None:
        """Re-read the loads' numbers if something changed (or they vary in time); once a step."""
        if not (self._dirty or self._varying):
            return
        self._dirty = False
        t = self.data.time
        if self.bank is not None:
            self.bank.refresh(self.model, t)
            self._varying = any(ld.law is not None and ld.law.varies_in_time() for ld in self.bank.loads)
        if self.wrenches is not None:
            self.wrenches.refresh(t)
        if self.table is not None:
            if self.table.pack():
                self._varying = False  # profiles are evaluated in the callback
                self.table.stamp()
            else:  # a law can no longer be compiled (a callable was set): back to Python
                self.table.release()
                self.table = None
        self.python = self.needs_python
        if not self.python:
            self.qfrc.fill(0.0)  # nothing overwrites it each step any more

    def apply(self) -> None:
        """Compute every load at the current kinematics and write ``qfrc_applied``."""
        self.prepare()
        m, d, qfrc = self.model, self.data, self.qfrc
        if self.bank is not None and self.bank.python:
            self.bank.apply(m, d, qfrc)
        else:
            qfrc.fill(0.0)
        if self.wrenches is not None:
            self.wrenches.apply(m, d, qfrc)
        for ld in self.slow:
            # Its force and torque land in its row of `wrench` (the load's last_force/last_torque views);
            # switched off, it applies nothing and reports nothing.
            try:
                ld.apply_load(m, d, qfrc=qfrc)
            except Exception as exc:  # a user load must not take the simulation down
                self._disable(ld, exc)
                continue
            if ld.active and isinstance(ld, PointToPointForce):
                i = self.index[id(ld)]
                self.lv[i] = ld.last_length, ld.last_velocity, ld.last_tension

    def _disable(self, ld: Load, exc: BaseException) -> None:
        ld.active = False
        self.wrench[self.index[id(ld)]] = 0.0
        ld.last_force[...] = 0.0  # also where a bank keeps it
        ld.last_torque[...] = 0.0
        if self.on_load_error is not None:
            self.on_load_error(ld, exc)
        else:
            raise LoadError(f"load '{ld.name}' failed and was disabled: {type(exc).__name__}: {exc}") from exc

    def evaluate(self) -> None:
        """Work every load out at the current state without stepping, for its readout and arrow:
        after a reset, a restored state, a rig just opened or an edit while paused, where the
        outputs are still those of the last step (or none: a push on a rig never stepped drew no
        arrow and read 0 N). ``qfrc_applied`` and the derived quantities become what the next
        step computes anyway; the state and ``stepped_to`` are untouched."""
        self.prepare()
        d = self.data
        if self.table is not None:
            if not self.table.stamped():  # a reset clears userdata
                self.table.stamp()
            mujoco.mj_forward(self.model, d)  # the compiled laws run in the passive-force callback
        elif self.python:
            self.apply()
        self._evaluated_at = d.time

    def update_outputs(self) -> None:
        """Bring every load's ``last_force`` (rows of ``wrench``) and ``lv`` up to date with the
        current state, for drawing (worked out first where no step has: ``evaluate``)."""
        t = self.data.time
        if self._dirty or (t != self.stepped_to and t != self._evaluated_at):
            self.evaluate()
        w = self.wrenches
        if w is not None:
            self.wrench[self._wrench_rows] = w.values
        b = self.bank
        if b is None:
            return
        force = b.forces()
        rows = self._bank_rows
        self.wrench[rows, 0:3] = force[b.pos]
        self.lv[rows, 0] = b.length[b.pos]
        self.lv[rows, 1] = b.rate[b.pos]

    def telemetry_sources(self) -> tuple[Callable[[], None] | None, list[Source | Derived]]:
        """(prepare, sources) for the recorder: call ``prepare()`` (if not None) before gathering a
        row; each source is (flat array, [(column, index, unit)]) or ``Derived`` columns. The
        springs' forces are worked out per block from their raw state (see ``SpringBank.raw``)."""
        sources: list[Source | Derived] = []
        b = self.bank
        if b is not None:
            order = sorted(range(b.n), key=lambda i: b.pos[i])  # bank index by tendon row
            names = [b.loads[i].name for i in order]
            columns = [(f"Loads/{n}:{a}", "N") for n in names for a in ("fx", "fy", "fz")]
            columns += [(f"Loads/{n}:{a}", "N*m") for n in names for a in ("tx", "ty", "tz")]
            columns += [(f"Loads/{n}:length", "m") for n in names] + [(f"Loads/{n}:velocity", "m/s") for n in names]
            columns += [(f"Loads/{n}:tension", "N") for n in names]
            sources.append(Derived("loads", b.raw(), columns, b.block_outputs, current=b.current_outputs))
        wrench, lv = self.wrench.reshape(-1), self.lv.reshape(-1)
        units = ("N", "N", "N", "N*m", "N*m", "N*m")
        w = self.wrenches
        if w is not None:
            sources.append(
                (
                    w.values.reshape(-1),
                    [
                        (f"Loads/{ld.name}:{a}", 6 * i + k, units[k])
                        for i, ld in enumerate(w.loads)
                        for k, a in enumerate(("fx", "fy", "fz", "tx", "ty", "tz"))
                    ],
                )
            )
        gen = [(self.index[id(ld)], ld) for ld in self.slow if ld.reports_wrench]
        sources.extend(src for ld in self.general for src in ld.signals())
        sources.append(
            (
                wrench,
                [
                    (f"Loads/{ld.name}:{a}", 6 * i + k, units[k])
                    for i, ld in gen
                    for k, a in enumerate(("fx", "fy", "fz", "tx", "ty", "tz"))
                ],
            )
        )
        sources.append(
            (
                lv,
                [
                    (f"Loads/{ld.name}:{a}", 3 * i + k, u)
                    for i, ld in gen
                    if ld.is_point_to_point
                    for k, (a, u) in enumerate((("length", "m"), ("velocity", "m/s"), ("tension", "N")))
                ],
            )
        )
        prepare = b.copy_points if b is not None and not b.fixed_points else None
        return prepare, sources


def step_with_loads(
    engine: LoadEngine, *, before_integrate: Callable[[], object] | None = None, loads: bool = True
) -> None:
    """Advance ``engine.data`` by one timestep with every load applied.

    ``before_integrate`` runs when the state, kinematics and loads all describe the current time
    (the moment to record telemetry); what it returns is not used. ``loads`` False: the loads'
    numbers are not re-read and no Python load is applied (a step plan without its ``loads``
    part: every load is MuJoCo's own and unchanged). Raises DivergenceError if MuJoCo found a
    NaN/Inf or a bad acceleration (it then resets the state; the caller decides what to keep).
    """
    m, d, opt = engine.model, engine.data, engine.opt
    t_before = d.time
    # MuJoCo resets the state (time 0) and steps on when it finds a bad value, so a divergence
    # shows as time going back -- except in the first two steps, where the reset state steps to
    # the same time: there the warning counters tell.
    early = _bad_count(d) if t_before <= opt.timestep else -1
    table = engine.table
    if table is not None and not table.stamped():  # a reset clears userdata
        table.stamp()
    if loads and engine.dirty:
        engine.prepare()
    python = loads and engine.python
    if opt.integrator == _RK4:
        if python:
            _step_rk4(engine, before_integrate)
        elif before_integrate is not None:
            _rk4_step_with(m, d, before_integrate)
        else:
            mujoco.mj_step(m, d)
    elif python or before_integrate is not None:
        mujoco.mj_step1(m, d)
        if python:
            engine.apply()
        if before_integrate is not None:
            if t_before != engine.stepped_to:
                # A row describes the step's start, but mj_step1 leaves the acceleration stage
                # (accelerometers, forces, qacc, contact forces, actuator forces) as the last
                # mj_step2 or mj_forward made it: at a run's first row that was a reset's, or
                # another trial's, with other params in the model. Computed here from this state,
                # model and loads, with the same inputs mj_step2 uses (the warm start is only
                # written by the integrator), so the step itself is unchanged, bit for bit.
                mujoco.mj_forwardSkip(m, d, _VEL, 0)
            before_integrate()
        mujoco.mj_step2(m, d)
    else:  # every load is MuJoCo's own: a plain step
        mujoco.mj_step(m, d)
    t_after = engine.stepped_to = d.time
    if t_after < t_before or not math.isfinite(t_after) or (early >= 0 and _bad_count(d) != early):
        raise DivergenceError(_divergence_message(m, d, t_before))


def step_plain(engine: LoadEngine, n: int) -> bool:
    """Advance ``engine.data`` by ``n`` timesteps in one call into MuJoCo (``mj_step``'s
    ``nstep``), for a rig with nothing to do between steps (``StepPlan.between_steps``): bit
    for bit what ``n`` calls of ``step_with_loads`` give. False when MuJoCo found a divergence on the way: the state and
    MuJoCo's warning counters are then as before the call, and the caller steps again one step
    at a time, which raises the DivergenceError at the step it happened."""
    m, d = engine.model, engine.data
    if engine.table is not None and not engine.table.stamped():
        engine.table.stamp()
    state = np.empty(mujoco.mj_stateSize(m, _INTEGRATION))
    mujoco.mj_getState(m, d, state, _INTEGRATION)
    counts, infos = d.warning.number.copy(), d.warning.lastinfo.copy()
    bad, t_before = _bad_count(d), d.time
    mujoco.mj_step(m, d, nstep=n)
    if _bad_count(d) == bad and d.time > t_before and math.isfinite(d.time):
        engine.stepped_to = d.time
        return True
    mujoco.mj_setState(m, d, state, _INTEGRATION)
    d.warning.number[:], d.warning.lastinfo[:] = counts, infos
    return False


_INTEGRATION = mujoco.mjtState.mjSTATE_INTEGRATION
_VEL = int(mujoco.mjtStage.mjSTAGE_VEL)
_RK4 = int(mujoco.mjtIntegrator.mjINT_RK4)
_BAD_WARNINGS = [
    int(mujoco.mjtWarning.mjWARN_BADQACC),
    int(mujoco.mjtWarning.mjWARN_BADQVEL),
    int(mujoco.mjtWarning.mjWARN_BADQPOS),
]


def _bad_count(d: mujoco.MjData) -> int:
    """How often MuJoCo has reset ``d`` for a NaN/Inf/huge position, velocity or acceleration."""
    return int(d.warning.number[_BAD_WARNINGS].sum())


def _step_rk4(engine: LoadEngine, before_integrate: Callable[[], object] | None) -> None:
    m, d = engine.model, engine.data
    failure: list[BaseException] = []

    def passive() -> None:
        try:
            engine.apply()
        except BaseException as exc:  # re-raised after the step: never across the C boundary
            failure.append(exc)

    with passive_route.routed(d, passive):  # MuJoCo's callback is process-wide: routed by the data
        if before_integrate is not None:
            _rk4_step_with(m, d, before_integrate)
        else:
            mujoco.mj_step(m, d)
    if failure:
        raise failure[0]


_FWDINV = int(mujoco.mjtEnableBit.mjENBL_FWDINV)


def _rk4_step_with(m: mujoco.MjModel, d: mujoco.MjData, before_integrate: Callable[[], object]) -> None:
    """An RK4 ``mj_step`` with ``before_integrate`` called once the state at the current time is
    fully computed: ``mj_step``'s own sequence (checks, forward, RK4), not a second forward pass."""
    if m.opt.enableflags & _FWDINV:  # mj_step then also compares with inverse dynamics
        mujoco.mj_forward(m, d)
        before_integrate()
        mujoco.mj_step(m, d)
        return
    mujoco.mj_checkPos(m, d)
    mujoco.mj_checkVel(m, d)
    mujoco.mj_forward(m, d)
    mujoco.mj_checkAcc(m, d)
    before_integrate()
    mujoco.mj_RungeKutta(m, d, 4)


def _divergence_message(m: mujoco.MjModel, d: mujoco.MjData, t_before: float) -> str:
    names = {
        mujoco.mjtWarning.mjWARN_BADQACC: "acceleration",
        mujoco.mjtWarning.mjWARN_BADQVEL: "velocity",
        mujoco.mjtWarning.mjWARN_BADQPOS: "position",
    }
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
