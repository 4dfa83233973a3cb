"""A linearised rig's modes and frequency response (``mjrig modes``, ``mjrig bode``).

Modes: the eigenvalues s of the continuous-time A (of a ``discrete`` one, its eigenvalues z
converted as s = ln(z) / dt, exact for the step's own dynamics; a root at the step's Nyquist
frequency, z real and negative, is non-oscillatory), with A's eigenvectors as shapes. A complex
pair is one oscillatory mode: damped frequency |Im s| / 2π, undamped |s| / 2π (Hz), damping ratio
-Re s / |s|. A real s is non-oscillatory: decaying (time constant -1/Re s, s) or unstable (a
positive real root: the state grows by e in 1/Re s).

Rigid-body modes (frequency 0) are counted, not guessed from roots: as many as the null space of
the linearisation has dimensions (``rigid_count``: the position and activation directions that
change no acceleration or activation rate, with a tolerance scaled to the model's stiffest
direction; for a discrete A, of A - I), which is MuJoCo's own count, gravity or not (a free body
falling: six). The roots that belong to them are those below ``rigid_speed`` (and a zero root
that rounding split, ``SLOW``/``DEFECTIVE``); their shapes are the independent ones among those
roots' eigenvectors, completed from the null space.

Shapes: the eigenvector's joint coordinates (dq, tangent space), turned so its largest entry is
real and scaled so that it is 1; per joint the entry of its largest coordinate, signs kept.

Frequency response: H(f) = C (jω I - A)⁻¹ B + D (discrete: C (z I - A)⁻¹ B + D at z = exp(jω dt),
the step's own transfer function, whose phase lags the continuous one's by about ω dt / 2).
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from mjrig.runtime.analysis.linearise import Linear, linearise
from mjrig.runtime.analysis.metrics import Metric
from mjrig.runtime.forces.engine import LoadEngine

__all__ = [
    "Mode",
    "modes",
    "oscillatory",
    "response",
    "frequencies",
    "mode_metrics",
    "shape_text",
    "rigid_count",
    "rigid_speed",
    "RIGID",
]

RIGID = 1e-4
"""A root of a discrete A with |s| dt below this is a rigid-body root (frequency 0)."""
NULL = 1e-8
"""A direction whose stiffness (a singular value of the acceleration's derivative by position) is
below this fraction of the stiffest one's (and of 1 /s²) changes no acceleration: rigid."""
SLOW, DEFECTIVE = 1e-2, 1e5
"""A root with |s| dt below ``SLOW`` whose eigenvalue's condition number (1 / |yᴴx| of its unit
left and right eigenvectors) is above ``DEFECTIVE`` is a zero root split by rounding (a free
coordinate under a load that turns with it: a chain of k zero roots, which finite differences
split into roots of size ε^(1/k)): rigid too."""


@dataclass(frozen=True)
class Mode:
    """One mode: ``kind`` "oscillatory", "decaying", "unstable" or "rigid"; ``eigenvalue`` s (1/s);
    frequencies (Hz: 0 unless oscillatory), damping ratio (NaN for a rigid mode), time constant
    (s: 1/|Re s|; inf for a rigid mode); ``shape`` per joint and ``dofs`` (nv, largest 1)."""

    kind: str
    eigenvalue: complex
    frequency_hz: float
    undamped_frequency_hz: float
    damping_ratio: float
    time_constant_s: float
    shape: dict[str, float] = field(default_factory=dict)
    dofs: np.ndarray = field(default_factory=lambda: np.empty(0))

    def entry(self) -> dict[str, Any]:
        """Its JSON form (CONTRACT section 12), with ``kind`` and the eigenvalue besides."""

        def fin(v):
            return v if math.isfinite(v) else None

        return {
            "kind": self.kind,
            "frequency_hz": self.frequency_hz,
            "undamped_frequency_hz": self.undamped_frequency_hz,
            "damping_ratio": fin(self.damping_ratio),
            "time_constant_s": fin(self.time_constant_s),
            "eigenvalue": [self.eigenvalue.real, self.eigenvalue.imag],
            "shape": self.shape,
        }


def _shape(model: mujoco.MjModel, v: np.ndarray) -> tuple[dict[str, float], np.ndarray]:
    nv = model.nv
    p = v[:nv] if np.abs(v[:nv]).max(initial=0.0) > 1e-12 else v[nv : 2 * nv]
    if not p.size or np.abs(p).max() == 0:
        return {}, np.zeros(nv)
    p = (p / p[int(np.abs(p).argmax())]).real
    shape = {}
    for j in range(model.njnt):
        a, k = int(model.jnt_dofadr[j]), {0: 6, 1: 3, 2: 1, 3: 1}[int(model.jnt_type[j])]
        part = p[a : a + k]
        amp = float(part[int(np.abs(part).argmax())])
        if abs(amp) >= 1e-6:
            shape[mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint{j}"] = amp
    return shape, p


def modes(lin: Linear, model: mujoco.MjModel) -> list[Mode]:
    """Every mode of ``lin`` (a rig of ``model``): the oscillatory ones by undamped frequency,
    then the rigid, unstable and decaying ones (slowest first)."""
    if not lin.A.size:
        return []
    from scipy.linalg import eig

    z, left, vectors = eig(lin.A, left=True, right=True)
    dt = lin.dt
    if lin.discrete:
        roots = [cmath.log(zk) / dt if zk != 0 else complex(-math.inf, 0.0) for zk in z]
    else:
        roots = [complex(zk) for zk in z]
    cosine = np.abs(np.sum(left.conj() * vectors, axis=0)) / (
        np.linalg.norm(left, axis=0) * np.linalg.norm(vectors, axis=0)
    )
    split = [abs(s) * dt < SLOW and c * DEFECTIVE < 1 for s, c in zip(roots, cosine)]
    rigid = _rigid(lin)
    found = []
    for k, zk in enumerate(z):
        s = roots[k]
        nyquist = lin.discrete and abs(abs(s.imag) * dt - math.pi) < 1e-6 and abs(zk.imag) < 1e-9
        if abs(s) < rigid.speed or split[k]:
            mode = Mode("rigid", 0j, 0.0, 0.0, math.nan, math.inf)
        elif abs(s.imag) * dt > 1e-9 and not nyquist:
            if s.imag < 0:
                continue  # its conjugate stands for the pair
            wn = abs(s)
            zeta = -s.real / wn if abs(s.real / wn) > 1e-9 else 0.0  # below that: finite-difference noise
            mode = Mode(
                "oscillatory",
                s,
                s.imag / (2 * math.pi),
                wn / (2 * math.pi),
                zeta,
                1.0 / abs(s.real) if s.real else math.inf,
            )
        else:
            re = s.real
            mode = Mode(
                "unstable" if re > 0 else "decaying",
                complex(re, 0.0),
                0.0,
                0.0,
                math.nan,
                1.0 / abs(re) if re else math.inf,
            )
        shape, dofs = _shape(model, vectors[:, k])
        found.append(
            Mode(
                mode.kind,
                mode.eigenvalue,
                mode.frequency_hz,
                mode.undamped_frequency_hz,
                mode.damping_ratio,
                mode.time_constant_s,
                shape,
                dofs,
            )
        )
    found = _one_per_coordinate(found, rigid.count, rigid.dofs, model)
    order = {"oscillatory": 0, "rigid": 1, "unstable": 2, "decaying": 3}
    return sorted(
        found, key=lambda m: (order[m.kind], m.undamped_frequency_hz if m.kind == "oscillatory" else -m.time_constant_s)
    )


def _one_per_coordinate(found: list[Mode], count: int, null: np.ndarray, model: mujoco.MjModel) -> list[Mode]:
    """``count`` rigid modes: the rigid roots' independent shapes (a free coordinate has two zero
    roots, or one and a decaying one when damped), completed from the null space's directions
    ``null`` (nv x k) when they are fewer."""
    rigid = [m for m in found if m.kind == "rigid"]
    kept: list[Mode] = []
    basis: list[np.ndarray] = []

    def add(v: np.ndarray) -> bool:
        for b in basis:
            v = v - (v @ b) * b
        if len(kept) >= count or np.linalg.norm(v) <= 1e-3:
            return False
        basis.append(v / np.linalg.norm(v))
        return True

    for m in rigid:
        if add(m.dofs.astype(float)):
            kept.append(m)
    for v in null.T:
        if add(v.astype(float)):
            shape, dofs = _shape(model, np.concatenate([v, np.zeros(v.size)]).astype(complex))
            kept.append(Mode("rigid", 0j, 0.0, 0.0, math.nan, math.inf, shape, dofs))
    return [m for m in found if m.kind != "rigid"] + kept


def _stiffness(lin: Linear) -> np.ndarray:
    """The derivative of what a rigid direction leaves unchanged by the positions and
    activations: of (qacc, act_dot) by (dq, act) for a continuous A; A - I for a discrete one."""
    nv, n = lin.nv, lin.A.shape[0]
    if lin.discrete:
        return lin.A - np.eye(n)
    cols = np.r_[0:nv, 2 * nv : n]
    return lin.A[nv:, :][:, cols]


@dataclass(frozen=True)
class _Rigid:
    """The null space of ``_stiffness`` (one SVD): ``count`` rigid-body modes, their directions
    in joint coordinates ``dofs`` (nv x count), and the ``speed`` |s| (1/s) below which a root
    belongs to them: the frequency of the tolerance (continuous), or ``RIGID`` / dt (discrete)."""

    count: int
    dofs: np.ndarray
    speed: float


def _rigid(lin: Linear) -> _Rigid:
    m = _stiffness(lin)
    if not m.size:
        return _Rigid(0, np.empty((lin.nv, 0)), RIGID / lin.dt if lin.discrete else 0.0)
    _, sv, vt = np.linalg.svd(m)
    tol = NULL * max(1.0, float(sv[0]))
    rank = int(np.count_nonzero(sv > tol))
    speed = RIGID / lin.dt if lin.discrete else math.sqrt(tol)
    return _Rigid(m.shape[1] - rank, vt[rank:, : lin.nv].T, speed)


def rigid_count(lin: Linear) -> int:
    """The rigid-body modes of ``lin``: the dimension of the null space of its positions' and
    activations' effect (``_stiffness``), singular values below ``NULL`` times the largest."""
    return _rigid(lin).count


def rigid_speed(lin: Linear) -> float:
    """|s| (1/s) below which a root belongs to a rigid-body mode (``_Rigid.speed``)."""
    return _rigid(lin).speed


def shape_text(shape: Any) -> str:
    """The joints that move most in a mode's ``shape`` ({joint: amplitude} or its items), as
    "elbow +1, wrist +0.289, shoulder +0.0707"."""
    items = shape.items() if isinstance(shape, dict) else shape
    return ", ".join(f"{j} {a:+.3g}" for j, a in sorted(items, key=lambda kv: -abs(kv[1]))[:3])


def oscillatory(found: list[Mode]) -> list[Mode]:
    """The oscillatory modes of ``found``, lowest first."""
    return [m for m in found if m.kind == "oscillatory"]


def frequencies(found: list[Mode], dt: float, *, per_decade: int = 100) -> np.ndarray:
    """Log-spaced frequencies (Hz) around the modes: a decade below the slowest to a decade above
    the fastest (below a quarter of the step's rate), ``per_decade`` a decade, each oscillatory
    mode's damped and undamped frequency among them."""
    top = 0.25 / dt
    marks = [f for m in oscillatory(found) for f in (m.frequency_hz, m.undamped_frequency_hz)]
    marks += [
        1.0 / (2 * math.pi * m.time_constant_s)
        for m in found
        if m.kind in ("decaying", "unstable") and 0 < m.time_constant_s < math.inf
    ]
    marks = [f for f in marks if 0 < f < top]
    lo, hi = (min(marks) / 10, min(top, max(marks) * 10)) if marks else (0.1, min(top, 100.0))
    n = max(2, int(math.ceil(per_decade * math.log10(hi / lo))) + 1)
    return np.unique(
        np.concatenate(
            [
                np.logspace(math.log10(lo), math.log10(hi), n),
                [f for m in oscillatory(found) for f in (m.frequency_hz, m.undamped_frequency_hz) if lo <= f <= hi],
            ]
        )
    )


def response(lin: Linear, freqs: np.ndarray, *, output: int = 0, input: int = 0) -> np.ndarray:
    """H at ``freqs`` (Hz) from input ``input`` to output ``output`` (complex, the output's unit
    per the input's)."""
    n = lin.A.shape[0]
    b, c, d = lin.B[:, input], lin.C[output], lin.D[output, input]
    out = np.empty(freqs.size, complex)
    eye = np.eye(n)
    for k, f in enumerate(freqs):
        w = 2j * math.pi * f
        z = cmath.exp(w * lin.dt) if lin.discrete else w
        out[k] = c @ np.linalg.solve(z * eye - lin.A, b) + d
    return out


def mode_metrics(
    engine: LoadEngine, *, write_inputs: Callable[[], None], start: np.ndarray, metrics: Sequence[Metric]
) -> dict[str, float]:
    """Each mode metric's value (``mode_frequency``: undamped frequency Hz; ``mode_damping``:
    damping ratio) of the rig of ``engine`` (``write_inputs``: a step's writes before its physics)
    linearised at state ``start`` (``mjSTATE_INTEGRATION``); NaN for a mode the rig does not have.
    The engine's data is in its state as before when it returns."""
    model, data = engine.model, engine.data
    spec = int(mujoco.mjtState.mjSTATE_INTEGRATION)
    now = np.empty(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, data, now, spec)
    try:
        mujoco.mj_setState(model, data, start, spec)
        mujoco.mj_forward(model, data)
        osc = oscillatory(modes(linearise(engine, write_inputs=write_inputs), model))
    finally:
        mujoco.mj_setState(model, data, now, spec)
        mujoco.mj_forward(model, data)
    out = {}
    for m in metrics:
        n = m.mode or 0  # a mode metric has one (1 or more: Metric checks it when made)
        mode = osc[n - 1] if 1 <= n <= len(osc) else None
        out[m.name] = (
            math.nan
            if mode is None
            else (mode.undamped_frequency_hz if m.kind == "mode_frequency" else mode.damping_ratio)
        )
    return out
