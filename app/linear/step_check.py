"""The linear model checked against the rig itself: a small step of each input from the operating
point, answered by the linearisation and by the rig's own nonlinear run.

From the state the rig was linearised about, each input is stepped by ``STEP`` of its size (its
value's magnitude, at least 1 in its unit) and the rig is run on, every step as a run steps it
(its loads, its inputs' writes, the stepped input held). The linear model answers the same step
exactly for a piecewise-constant input: x[k+1] = Φ x[k] + Γ δ, Φ = exp(A dt), Γ = ∫₀^dt exp(A τ) dτ
B (one matrix exponential of the augmented matrix), y = C x + D δ (the step's own model with
``discrete``: x[k+1] = A x[k] + B δ), with the point's own motion added to B δ where the point is
not at rest (the rig's rate there: an affine model, exact for a linear rig). Both are compared as
changes from the point's outputs; the
difference is the largest |y_rig − y_linear| over the run, relative to the rig's peak change, per
output. The run lasts long enough for the slowest stable mode to settle (4 time constants) or for
an unstable one to grow e-fold twice, within the scenario's duration.

Units: times s, outputs in their own units. Threading: the caller's (it steps the analysis's own
data and puts its state back after).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

if TYPE_CHECKING:
    from mjrig.linear.analysis import Analysis

__all__ = ["step_checks", "STEP", "MOST_STEPS"]

STEP = 0.01
"""The input step, a fraction of the input's size (its value's magnitude, at least 1)."""
MOST_STEPS = 20_000
"""Steps of the rig at most per input."""


def _seconds(an: Analysis, duration: float) -> float:
    """How long to compare: 4 time constants of the slowest stable mode, or 2 e-folds of the
    fastest unstable one, within ``duration`` (s)."""
    roots = (
        np.linalg.eigvals(an.linear.A)
        if not an.linear.discrete
        else np.log(np.linalg.eigvals(an.linear.A) + 0j) / an.linear.dt
    )
    unstable = [r.real for r in roots if r.real > 1e-9]
    if unstable:
        return min(duration, 2.0 / max(unstable))
    stable = [-r.real for r in roots if r.real < -1e-9]
    return min(duration, 4.0 / min(stable)) if stable else 0.2 * duration


def _linear_response(an: Analysis, j: int, delta: float, steps: int, drift: np.ndarray) -> np.ndarray:
    """The linear model's outputs' changes (steps x outputs) after each step of input ``j``
    stepped by ``delta``, the point's own motion ``drift`` (dx/dt there; per step with
    ``discrete``) included: zero at an equilibrium."""
    from scipy.linalg import expm

    lin = an.linear
    n = lin.A.shape[0]
    b = lin.B[:, j] * delta + drift
    if lin.discrete:
        phi, gamma = lin.A, b
    else:
        aug = np.zeros((n + 1, n + 1))
        aug[:n, :n], aug[:n, n] = lin.A, b
        e = expm(aug * lin.dt)
        phi, gamma = e[:n, :n], e[:n, n]
    x = np.zeros(n)
    out = np.empty((steps, len(lin.outputs)))
    for k in range(steps):
        x = phi @ x + gamma
        out[k] = lin.C @ x + lin.D[:, j] * delta
    return out


def _drift(an: Analysis) -> np.ndarray:
    """The point's own motion in the tangent state: dx/dt = (qvel, qacc, act_dot) there
    (``discrete``: the change over one step), with the analysis's inputs written."""
    from mjrig.runtime.analysis.linearise import rates
    from mjrig.runtime.forces.engine import step_with_loads

    setup, lin = an.setup, an.linear
    model, data, engine = setup.model, setup.data, setup.runtime.plan.engine
    if not lin.discrete:
        return rates(engine, an.writes, model, data).copy()
    spec = int(mujoco.mjtState.mjSTATE_FULLPHYSICS)
    saved = np.empty(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, data, saved, spec)
    q0, v0, a0 = data.qpos.copy(), data.qvel.copy(), data.act.copy()
    an.writes()
    step_with_loads(engine)
    dq = np.empty(model.nv)
    mujoco.mj_differentiatePos(model, dq, 1.0, q0, data.qpos)
    out = np.concatenate([dq, data.qvel - v0, data.act - a0])
    mujoco.mj_setState(model, data, saved, spec)
    return out


def step_checks(an: Analysis, *, duration: float) -> list[dict[str, Any]]:
    """Per input of ``an``: ``{"input", "unit", "step", "time": [...], "outputs": [{"output",
    "unit", "rig": [...], "linear": [...], "difference": relative}]}`` (changes from the point;
    ``duration``: the scenario's, s)."""
    from mjrig.runtime.forces.engine import step_with_loads

    lin, setup = an.linear, an.setup
    if not lin.outputs:
        return []
    model, data = setup.model, setup.data
    plan = setup.runtime.plan
    engine = plan.engine
    seconds = _seconds(an, duration)
    steps = max(1, min(MOST_STEPS, int(round(seconds / model.opt.timestep))))
    spec = int(mujoco.mjtState.mjSTATE_FULLPHYSICS)
    saved = np.empty(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, data, saved, spec)
    probe = plan.probe(list(lin.outputs))
    units = setup.runtime.signal_units()
    checks = []
    try:
        an.writes()
        mujoco.mj_forward(model, data)
        y0 = probe.read().copy()
        drift = _drift(an)
        for j, value in enumerate(an.values):
            v0 = float(value.value)
            delta = STEP * max(1.0, abs(v0))
            rig = np.empty((steps, len(lin.outputs)))
            mujoco.mj_setState(model, data, saved, spec)
            value.value = v0 + delta
            try:
                for k in range(steps):
                    an.writes()
                    if engine.dirty:
                        engine.prepare()
                    step_with_loads(engine)
                    rig[k] = probe.read() - y0
            finally:
                value.value = v0
            linear = _linear_response(an, j, delta, steps, drift)
            t = (np.arange(steps) + 1) * model.opt.timestep
            outputs = []
            for i, name in enumerate(lin.outputs):
                peak = float(np.abs(rig[:, i]).max())
                gap = float(np.abs(rig[:, i] - linear[:, i]).max())
                outputs.append(
                    {
                        "output": name,
                        "unit": units.get(name, ""),
                        "rig": rig[:, i].tolist(),
                        "linear": linear[:, i].tolist(),
                        "difference": gap / peak if peak > 0 else (0.0 if gap == 0 else float("inf")),
                    }
                )
            checks.append(
                {
                    "input": lin.inputs[j],
                    "unit": an.input_units[j],
                    "step": delta,
                    "time": t.tolist(),
                    "outputs": outputs,
                }
            )
    finally:
        mujoco.mj_setState(model, data, saved, spec)
        an.writes()
        if engine.dirty:
            engine.prepare()
        mujoco.mj_forward(model, data)
    return checks
