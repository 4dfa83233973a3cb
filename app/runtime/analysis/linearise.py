"""A rig linearised about a state, by central finite differences of its own dynamics.

The state is MuJoCo's tangent state x = [dq (nv), qvel (nv), act (na)] (positions as velocities
integrate them, so ball and free joints have 3 and 6 coordinates, as ``mjd_transitionFD`` gives
them); the inputs u are params. By default the continuous-time dynamics: dx/dt = [qvel, qacc,
act_dot] = A x + B u (a ball's or free joint's orientation turning with the body: ``_turning``),
differentiated through the rig's forward dynamics (``rates``: the
actuator inputs and model fields at the params (``write_inputs``: the step plan's writes), ``mj_forward`` with the compiled loads, the
Python loads at that state, and the acceleration again with them), so frequencies and damping
do not depend on the timestep or integrator. ``discrete=True``: the rig's whole step instead
(``step_with_loads``), x_{k+1} = A x_k + B u_k, MuJoCo's ``mjd_transitionFD`` with the rig's
loads part of it. A telemetry signal read at the state is y = C x + D u either way.

It takes the rig's engine (its model, data and loads) and what a step writes before its physics,
not a step plan: the plan works its mode metrics out through here. ``equilibrium`` and ``advance``
step the rig with the step they are given (a plan's) until it comes to rest, or for a time. ``modes`` and ``response``
(``mjrig.runtime.analysis.modes``) turn a ``Linear`` into modes and a frequency response.

Threading: the stepping thread (it steps the rig's own data and puts its state back after).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.forces.engine import LoadEngine, step_with_loads
from mjrig.runtime.telemetry.signal_probe import SignalProbe
from mjrig.runtime.values import NamedValue

__all__ = ["Linear", "linearise", "rates", "equilibrium", "advance", "EPS", "REST", "KINK"]

EPS = 1e-6
"""The central difference's half step: tangent state units (m, rad, m/s, rad/s), and relative
for an input (times max(1, |value|))."""
KINK = 1e-3
"""A coordinate whose forward and backward differences part by more than this (relative) is at a
corner of the rig's laws: a spring at its stroke's end, a contact, friction at rest."""
REST = (1e-5, 1e-4)
"""At rest: every |qvel| below the first (m/s, rad/s) and every |qacc| below the second (/s²)."""
_STATE = int(mujoco.mjtState.mjSTATE_INTEGRATION)


@dataclass(frozen=True)
class Linear:
    """dx/dt = A x + B u (``discrete``: x_{k+1} = A x_k + B u_k over one timestep ``dt``, s),
    y = C x + D u, about the state ``qpos``/``qvel``/``act`` at ``time`` (s); ``inputs``/``outputs``
    name the columns of B and rows of C; ``dt`` is the model's timestep either way."""

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    dt: float
    nv: int
    na: int
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    qpos: np.ndarray
    qvel: np.ndarray
    time: float
    kinks: tuple[str, ...] = ()
    """Joints whose coordinates sit at a corner of the rig's laws here (``KINK``): the central
    difference averages the two sides of it."""
    discrete: bool = False
    act: np.ndarray = field(default_factory=lambda: np.empty(0))

    @property
    def kind(self) -> str:
        """ "continuous" or "discrete" (the step's own)."""
        return "discrete" if self.discrete else "continuous"


def _nothing() -> None:
    """No writes before a step (a rig without actuator inputs or model fields)."""


def _ready(eng: LoadEngine, write_inputs: Callable[[], None]) -> LoadEngine:
    """The rig's engine with this step's writes made (actuator inputs, model fields)."""
    write_inputs()
    if eng.dirty:
        eng.prepare()
    return eng


def _state(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    out = np.empty(mujoco.mj_stateSize(model, _STATE))
    mujoco.mj_getState(model, data, out, _STATE)
    return out


def _set(model: mujoco.MjModel, data: mujoco.MjData, saved: np.ndarray, i: int, h: float) -> None:
    """The saved state with tangent coordinate ``i`` moved by ``h``."""
    mujoco.mj_setState(model, data, saved, _STATE)
    nv = model.nv
    if i < 0:
        return
    if i < nv:
        dq = np.zeros(nv)
        dq[i] = h
        mujoco.mj_integratePos(model, data.qpos, dq, 1.0)
    elif i < 2 * nv:
        data.qvel[i - nv] += h
    else:
        data.act[i - 2 * nv] += h


def _step_after(
    eng: LoadEngine, write_inputs: Callable[[], None], model: mujoco.MjModel, data: mujoco.MjData
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The state one step of the rig later (its writes made, its loads applied; no pin reaction
    or tracer sample from the perturbed step)."""
    write_inputs()
    step_with_loads(eng)
    return data.qpos.copy(), data.qvel.copy(), data.act.copy()


def rates(eng: LoadEngine, write_inputs: Callable[[], None], model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """dx/dt = [qvel, qacc, act_dot] at the data's state with every load of the rig: the actuator
    inputs and model fields at the params, the compiled loads (MuJoCo's passive callback) in
    ``mj_forward``, then the Python loads at that state and the acceleration again with them."""
    if eng.table is not None and not eng.table.stamped():
        eng.table.stamp()
    write_inputs()
    if eng.dirty:
        eng.prepare()
    mujoco.mj_forward(model, data)
    if eng.python:
        eng.apply()
        mujoco.mj_forwardSkip(model, data, int(mujoco.mjtStage.mjSTAGE_VEL), 0)
    return np.concatenate([data.qvel, data.qacc, data.act_dot])


def _difference(model: mujoco.MjModel, plus: Any, minus: Any, h: float) -> np.ndarray:
    """(plus - minus) / 2h in tangent coordinates: of two states (qpos, qvel, act) a step on,
    or of two rates (arrays)."""
    if isinstance(plus, np.ndarray) and isinstance(minus, np.ndarray):
        return (plus - minus) / (2 * h)
    dq = np.empty(model.nv)
    mujoco.mj_differentiatePos(model, dq, 1.0, minus[0], plus[0])
    return np.concatenate([dq, plus[1] - minus[1], plus[2] - minus[2]]) / (2 * h)


def linearise(
    engine: LoadEngine,
    *,
    write_inputs: Callable[[], None] = _nothing,
    inputs: Sequence[NamedValue] = (),
    outputs: Sequence[str] = (),
    probe: Callable[[list[str]], SignalProbe] | None = None,
    eps: float = EPS,
    discrete: bool = False,
) -> Linear:
    """The rig of ``engine`` (its loads on its model and data) linearised about its data's state
    (continuous-time; ``discrete``: its step); ``write_inputs``: what a step writes before its
    physics (actuator inputs, model fields: ``RigExtras.write_inputs``); ``inputs`` are params
    (NamedValues: a load's or control's number), ``outputs`` telemetry columns read through a
    probe ``probe(outputs)`` makes (``StepPlan.probe``). The state, and every input's value, are
    as before when it returns. KeyError(name) for an unknown output."""
    model, data = engine.model, engine.data
    step: Callable[[LoadEngine, Callable[[], None], mujoco.MjModel, mujoco.MjData], Any] = (
        _step_after if discrete else rates
    )
    eng = _ready(engine, write_inputs)
    saved = _state(model, data)
    if outputs and probe is None:
        raise ValueError("outputs need a probe to read them")
    reader = probe(list(outputs)) if outputs and probe is not None else None
    nv, na = model.nv, model.na
    n = 2 * nv + na
    A, B = np.empty((n, n)), np.empty((n, len(inputs)))
    C, D = np.empty((len(outputs), n)), np.empty((len(outputs), len(inputs)))

    def read(i: int = -1, h: float = 0.0) -> np.ndarray:
        """The outputs at the saved state with tangent coordinate ``i`` moved by ``h``: every
        stage as the run records it (``rates``: the Python loads' forces in the acceleration too)."""
        _set(model, data, saved, i, h)
        rates(eng, write_inputs, model, data)
        assert reader is not None  # read only with outputs to read
        return reader.read().copy()

    stepped_to = eng.stepped_to  # the run goes on from the saved state as if never perturbed
    gaps: list[tuple[int, float, float]] = []  # (coordinate, one-sided slopes' gap, their size)
    try:
        _set(model, data, saved, -1, 0.0)
        base = step(eng, write_inputs, model, data)
        for i in range(n):
            ends = []
            for h in (eps, -eps):
                _set(model, data, saved, i, h)
                ends.append(step(eng, write_inputs, model, data))
            A[:, i] = _difference(model, ends[0], ends[1], eps)
            ahead, behind = _difference(model, ends[0], base, eps / 2), _difference(model, base, ends[1], eps / 2)
            gaps.append(
                (i, float(np.linalg.norm(ahead - behind)), float(max(np.linalg.norm(ahead), np.linalg.norm(behind))))
            )
            if reader is not None:
                C[:, i] = (read(i, eps) - read(i, -eps)) / (2 * eps)
        for j, nvalue in enumerate(inputs):
            v0 = float(nvalue.value)
            h = eps * max(1.0, abs(v0))
            ends, ys = [], []
            for dv in (h, -h):
                nvalue.value = v0 + dv
                eng = _ready(engine, write_inputs)
                if reader is not None:
                    ys.append(read())
                _set(model, data, saved, -1, 0.0)
                ends.append(step(eng, write_inputs, model, data))
            nvalue.value = v0
            B[:, j] = _difference(model, ends[0], ends[1], h)
            if reader is not None:
                D[:, j] = (ys[0] - ys[1]) / (2 * h)
    finally:
        settled = _ready(engine, write_inputs)
        mujoco.mj_setState(model, data, saved, _STATE)
        mujoco.mj_forward(model, data)
        settled.stepped_to = stepped_to
    # a corner: the one-sided slopes part by more than KINK of their size, or of the system's own
    # scale where they are ~0 (a level arm's gravity torque: a smooth maximum, not a corner)
    scale = float(np.abs(A).max()) if A.size else 0.0
    kinks = [_joint_of(model, i) for i, gap, size in gaps if gap > KINK * max(size, scale, 1e-12)]
    if not discrete:
        _turning(model, data.qvel, A)
    return Linear(
        A,
        B,
        C,
        D,
        float(model.opt.timestep),
        nv,
        na,
        tuple(x.name for x in inputs),
        tuple(outputs),
        data.qpos.copy(),
        data.qvel.copy(),
        float(data.time),
        tuple(dict.fromkeys(kinks)),
        discrete,
        data.act.copy(),
    )


def _turning(model: mujoco.MjModel, qvel: np.ndarray, A: np.ndarray) -> None:
    """The rate of a ball's or free joint's orientation coordinates (tangent, in the body's frame)
    about a turning state: d(dq)/dt = dω - ω × dq, so their block of A is -[ω×] (zero about a
    state at rest; MuJoCo's ``mjd_transitionFD`` has it, over one step)."""
    for j in range(model.njnt):
        kind = int(model.jnt_type[j])
        if kind not in (int(mujoco.mjtJoint.mjJNT_BALL), int(mujoco.mjtJoint.mjJNT_FREE)):
            continue
        a = int(model.jnt_dofadr[j]) + (3 if kind == int(mujoco.mjtJoint.mjJNT_FREE) else 0)
        w = qvel[a : a + 3]
        A[a : a + 3, a : a + 3] = -np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _joint_of(model: mujoco.MjModel, i: int) -> str:
    """The joint (or actuator activation) tangent coordinate ``i`` belongs to."""
    if i >= 2 * model.nv:
        return f"activation {i - 2 * model.nv}"
    j = int(model.dof_jntid[i % model.nv])
    return mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint {j}"


def equilibrium(
    step: Callable[[], None], model: mujoco.MjModel, data: mujoco.MjData, *, duration: float, where: str
) -> float:
    """Step the rig with ``step`` (a step plan's: its loads, inputs and their profiles) from
    ``data``'s state until it is at rest (``REST``), within ``duration`` (s of simulated time);
    the time (s) it took. ConfigError (one line, at ``where``) when it is still moving then."""
    t0, steps = data.time, max(1, int(round(duration / model.opt.timestep)))
    vel, acc = REST
    for _ in range(steps):
        step()
        if model.nv == 0 or (np.abs(data.qvel).max() < vel and np.abs(data.qacc).max() < acc):
            return float(data.time - t0)
    k = int(np.abs(data.qvel).argmax())
    raise ConfigError(
        f"{where}: the rig did not come to rest within {duration:g} s (joint '{_joint_of(model, k)}' still moves "
        f"at {abs(data.qvel[k]):.3g}): add damping or a longer [simulation] duration"
    )


def advance(step: Callable[[], None], model: mujoco.MjModel, *, seconds: float, where: str) -> None:
    """Step the rig on with ``step`` (a step plan's, as a run does: its loads, controls and
    their profiles) for ``seconds`` of simulated time; ConfigError (one line, at ``where``) when
    it diverges on the way."""
    from mjrig.runtime.errors import DivergenceError

    steps = int(round(seconds / model.opt.timestep))
    try:
        for _ in range(steps):
            step()
    except DivergenceError as exc:
        raise ConfigError(f"{where}: the run diverged before it got there: {exc}") from None
