"""Operating points solved, not waited for: the nearest state at rest, and the actuator inputs
that hold one.

``solve_equilibrium`` looks for the joint positions, near the data's, at which the rig's
acceleration is zero with zero velocity: Newton's method on qacc(q) (the rig's forward dynamics
with all its loads, ``linearise.rates``), its Jacobian by central differences in the tangent
space (``mj_integratePos``: ball and free joints too), each step the least-norm solution of the
linear system (a direction with no stiffness is left alone), halved until the residual falls
(where it does not, at a corner of the rig's laws such as a spring at its stroke's end, each
side's one-sided slope is tried instead), and positions kept within the joints' limits. Unstable equilibria are found as readily as stable
ones: Newton does not care which way the rig would fall.

With ``trim`` the actuator controls are unknowns too: every control within its ``ctrlrange``,
least-norm (the smallest controls that hold the point), and only the degrees of freedom no
actuator acts on are free to move (an arm held by its motors stays where it is; a cart-pole's
pole is solved upright while the cart's force is trimmed). The controls enter through ``writes``
after the rig's own (a control's profile would otherwise overwrite them).

Units: positions m or rad, accelerations m/s² or rad/s², controls the actuator's own.
Threading: the stepping thread (it works on the rig's data and leaves the solved state in it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import mujoco
import numpy as np

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.forces.engine import LoadEngine

__all__ = ["Solved", "solve_equilibrium", "TOLERANCE", "EPS_Q"]

TOLERANCE = 1e-9
"""At rest: every |qacc| below this (m/s², rad/s²), or below it times the acceleration the
loads at the start gave, whichever is larger."""
EPS_Q = 1e-6
"""The central difference's half step in positions (m, rad) and controls (the control's unit,
times max(1, |ctrl|))."""
ITERATIONS = 60


@dataclass(frozen=True)
class Solved:
    """An operating point solved: the largest |qacc| left (m/s² or rad/s²), the Newton iterations
    it took, and the trimmed controls (one per actuator, MuJoCo's order; None without ``trim``)."""

    residual: float
    iterations: int
    ctrl: np.ndarray | None


def _limited_dofs(model: mujoco.MjModel) -> list[tuple[int, float, float]]:
    """(qpos address, low, high) of every limited hinge or slide joint."""
    out = []
    for j in range(model.njnt):
        if model.jnt_limited[j] and int(model.jnt_type[j]) in (2, 3):  # slide, hinge
            out.append((int(model.jnt_qposadr[j]), float(model.jnt_range[j, 0]), float(model.jnt_range[j, 1])))
    return out


def _actuated(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """Whether each degree of freedom is moved by some actuator (its moment arm there is not 0)."""
    mujoco.mj_forward(model, data)
    moment = np.zeros((model.nu, model.nv))
    if model.nu:
        mujoco.mju_sparse2dense(
            moment, data.actuator_moment, data.moment_rownnz, data.moment_rowadr, data.moment_colind
        )
    return np.abs(moment).max(axis=0) > 0 if model.nu else np.zeros(model.nv, dtype=bool)


def _joint_of_dof(model: mujoco.MjModel, i: int) -> str:
    j = int(model.dof_jntid[i])
    return mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint {j}"


def solve_equilibrium(
    engine: LoadEngine,
    *,
    writes: Callable[[], None],
    trim: bool = False,
    where: str = "--equilibrium",
) -> Solved:
    """Move ``engine``'s data to the nearest state at rest (module docstring) and, with ``trim``,
    set ``data.ctrl`` to the least controls within range that hold it; ``writes`` is what a step
    writes before its physics (``RigExtras.write_inputs``). ConfigError (one line, at ``where``):
    no equilibrium near (the residual acceleration and the joint it is largest at), no actuator
    to trim, or actuators that cannot hold the point (the joint and the force or torque missing)."""
    from mjrig.runtime.analysis.linearise import rates

    model, data = engine.model, engine.data
    nv, nu = model.nv, model.nu
    if trim and nu == 0:
        raise ConfigError(f"{where}: --trim-inputs: the model has no actuators to hold the point with")
    data.qvel[:] = 0.0
    ctrl = np.zeros(nu) if trim else None
    free = ~_actuated(model, data) if trim else np.ones(nv, dtype=bool)
    dofs = np.flatnonzero(free)
    low = np.where(model.actuator_ctrllimited > 0, model.actuator_ctrlrange[:, 0], -np.inf) if trim else None
    high = np.where(model.actuator_ctrllimited > 0, model.actuator_ctrlrange[:, 1], np.inf) if trim else None
    limits = _limited_dofs(model)
    q0 = data.qpos.copy()

    def write() -> None:
        writes()
        if ctrl is not None:
            data.ctrl[:] = ctrl

    def accel(q: np.ndarray, u: np.ndarray | None) -> np.ndarray:
        data.qpos[:] = q
        data.qvel[:] = 0.0
        if u is not None:
            data.ctrl[:] = u
        nonlocal ctrl
        kept, ctrl = ctrl, u
        try:
            return rates(engine, write, model, data)[nv : 2 * nv].copy()
        finally:
            ctrl = kept

    def moved(q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        out = q.copy()
        full = np.zeros(nv)
        full[dofs] = dq
        mujoco.mj_integratePos(model, out, full, 1.0)
        for adr, lo, hi in limits:
            out[adr] = min(max(out[adr], lo), hi)
        return out

    q, u = q0.copy(), ctrl
    a = accel(q, u)
    scale = max(1.0, float(np.abs(a).max()))
    tol = TOLERANCE * scale
    it = 0
    while float(np.abs(a).max()) > tol and it < ITERATIONS:
        it += 1
        better = False
        for side in (0, 1, -1):  # central differences; at a corner of the laws, each side's slope
            J = _jacobian(accel, moved, q, u, a, dofs.size, side)
            step = np.linalg.lstsq(J, -a, rcond=1e-12)[0]  # the least-norm step
            fraction = 1.0
            while fraction > 1e-4:
                q_try = moved(q, fraction * step[: dofs.size])
                u_try = None
                if u is not None:
                    assert low is not None and high is not None
                    u_try = np.clip(u + fraction * step[dofs.size :], low, high)
                a_try = accel(q_try, u_try)
                if float(np.abs(a_try).max()) < float(np.abs(a).max()):
                    q, u, a, better = q_try, u_try, a_try, True
                    break
                fraction /= 2
            if better:
                break
        if not better:
            break
    data.qpos[:] = q
    data.qvel[:] = 0.0
    if u is not None:
        data.ctrl[:] = u
    mujoco.mj_forward(model, data)
    worst = int(np.abs(a).argmax()) if nv else 0
    residual = float(np.abs(a).max()) if nv else 0.0
    if residual > tol:
        if trim and not free[worst]:
            mass = _effective_mass(model, data, worst)
            unit = "N·m" if int(model.jnt_type[model.dof_jntid[worst]]) == 3 else "N"
            raise ConfigError(
                f"{where}: the actuators cannot hold joint '{_joint_of_dof(model, worst)}' within their ctrlrange: "
                f"{abs(a[worst]) * mass:.4g} {unit} missing (residual acceleration {a[worst]:.3g})"
            )
        raise ConfigError(
            f"{where}: no equilibrium near the operating point: the acceleration stays at {a[worst]:.3g} "
            f"at joint '{_joint_of_dof(model, worst)}' (a body falling or driven has none; --settle waits for rest instead)"
        )
    return Solved(residual, it, None if u is None else u.copy())


def _jacobian(
    accel: Callable[[np.ndarray, np.ndarray | None], np.ndarray],
    moved: Callable[[np.ndarray, np.ndarray], np.ndarray],
    q: np.ndarray,
    u: np.ndarray | None,
    a: np.ndarray,
    n_free: int,
    side: int,
) -> np.ndarray:
    """d qacc / d (free dofs, controls) at (``q``, ``u``): central differences (``side`` 0), or
    one-sided ones (1 forward, -1 backward; ``a`` the acceleration at the point)."""
    cols = []
    for k in range(n_free):
        e = np.zeros(n_free)
        e[k] = EPS_Q
        plus = accel(moved(q, e), u) if side >= 0 else a
        minus = accel(moved(q, -e), u) if side <= 0 else a
        cols.append((plus - minus) / ((2 if side == 0 else 1) * EPS_Q))
    if u is not None:
        for i in range(u.size):
            h = EPS_Q * max(1.0, abs(u[i]))
            up, down = u.copy(), u.copy()
            up[i] += h
            down[i] -= h
            plus = accel(q, up) if side >= 0 else a
            minus = accel(q, down) if side <= 0 else a
            cols.append((plus - minus) / ((2 if side == 0 else 1) * h))
    return np.column_stack(cols) if cols else np.zeros((a.size, 0))


def _effective_mass(model: mujoco.MjModel, data: mujoco.MjData, dof: int) -> float:
    """The joint-space inertia's diagonal at ``dof`` (kg or kg·m²): force = it × acceleration."""
    full = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, full)
    return float(full[dof, dof])
