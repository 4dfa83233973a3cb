"""Linear analysis of a rig, the service behind ``mjrig modes``, ``mjrig bode``, ``mjrig
linearise``, the app's Modes section and a report's modes: the rig built as ``mjrig run`` builds
it, linearised (``mjrig.runtime.analysis.linearise``: continuous-time unless ``discrete``) about
an operating point -- its initial state, the state a run reaches at a time (``at``), a saved
snapshot, a given state, or the state it settles to from any of them -- its modes
(``mjrig.runtime.analysis.modes``), each signal's frequency response to each param, and the
state-space model with its names and units (CONTRACT section 12). The command lines are
``mjrig.cli.linear``'s."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mjrig.runtime.errors import ConfigError

__all__ = [
    "analyse",
    "Analysis",
    "TooLarge",
    "bode",
    "responses",
    "state_space",
    "describe",
    "kink_text",
    "state_entry",
    "solved_text",
]


def _nothing() -> None:
    """No writes (an analysis made without a rig's)."""


@dataclass
class Analysis:
    """A rig linearised: its setup (``mjrig.headless.RunSetup``), ``Linear``, modes, the
    simulated time (s) it took to settle (``settle``; else None), and the equilibrium solved
    (``equilibrium``: ``operating_point.Solved``, its trimmed controls with ``trim``; else None)."""

    setup: Any
    linear: Any
    modes: list
    settled_after: float | None
    point: str = "initial state"
    """Where it was linearised, in words: "initial state", "t = 1.5 s", "snapshot s.npz", "the
    run's state now", each followed by ", at rest after T s" with ``settle`` or ", at the
    equilibrium solved" with ``equilibrium``."""
    solved: Any = None
    input_units: tuple[str, ...] = ()
    """The inputs' units (a param's, or the actuator's for ``Actuators/<name>:ctrl``)."""
    ctrl: np.ndarray = field(default_factory=lambda: np.empty(0))
    """The actuator controls at the point (trimmed with ``trim``), one per actuator."""
    values: list[Any] = field(default_factory=list)
    """The inputs' values (``NamedValue``: a param's own, or one an actuator's control follows)."""
    writes: Callable[[], None] = _nothing
    """What a step writes before its physics with these inputs (the rig's writes, then the
    trimmed controls and the control inputs)."""

    @property
    def at_rest(self) -> bool:
        """Whether the point is an equilibrium (settled to or solved)."""
        return self.settled_after is not None or self.solved is not None


class TooLarge(ConfigError):
    """A rig with more degrees of freedom than ``analyse`` was told to linearise."""


def analyse(
    sc: Any,
    *,
    equilibrium: bool = False,
    settle: bool = False,
    trim: bool = False,
    inputs: tuple[str, ...] | None = (),
    outputs: tuple[str, ...] | None = (),
    where_input: str = "--input",
    where_output: str = "--output",
    state: np.ndarray | None = None,
    most_dofs: int | None = None,
    discrete: bool = False,
    at: float | None = None,
    snapshot: Path | None = None,
) -> Analysis:
    """Linearise scenario ``sc``'s rig about its initial state, or ``state`` (``mjSTATE_FULLPHYSICS``
    of its model: a run's state now) -- ``equilibrium``: the nearest state at rest, solved from
    there (``trim``: with the actuator controls that hold it); ``settle``: the state a run comes to
    rest at -- with ``inputs`` (params, or ``Actuators/<name>:ctrl``) and telemetry columns
    ``outputs``. ConfigError (one line) for an unknown name, no equilibrium or a rig that does not
    settle; ``TooLarge`` for one of more than ``most_dofs`` degrees of freedom (found once the
    model is compiled, before any step)."""
    from mjrig.headless import prepare
    from mjrig.linear.inputs import check_inputs, default_inputs, default_outputs, input_values
    from mjrig.runtime.analysis.linearise import equilibrium as settle_to
    from mjrig.runtime.analysis.linearise import linearise
    from mjrig.runtime.analysis.modes import modes
    from mjrig.runtime.analysis.operating_point import solve_equilibrium
    from mjrig.runtime.points import closest_names

    if equilibrium and settle:
        raise ConfigError("--equilibrium and --settle: choose one (solve for the state at rest, or run until it rests)")
    check_inputs(sc, inputs, where=where_input)
    setup = prepare(sc, out=None, record=False)
    rm, m, d = setup.runtime, setup.model, setup.data
    if most_dofs is not None and m.nv > most_dofs:
        raise TooLarge(f"{m.nv} degrees of freedom: the modes were not worked out (run mjrig modes)")
    point = "initial state"
    if state is not None:
        import mujoco

        mujoco.mj_setState(m, d, state, int(mujoco.mjtState.mjSTATE_FULLPHYSICS))
        mujoco.mj_forward(m, d)
        point = "state shown"  # live or replayed: the state in the 3D view
    elif snapshot is not None:
        import mujoco

        from mjrig.runtime.telemetry.snapshots import load_snapshot, put_snapshot

        try:
            put_snapshot(m, d, load_snapshot(snapshot, model=m))
        except ConfigError as exc:
            raise ConfigError(f"--snapshot: {exc}") from None
        mujoco.mj_forward(m, d)
        point = f"snapshot {Path(snapshot).name}"
    rm.resolve(m, d)
    plan = rm.plan
    assert plan is not None  # built by resolve
    if at is not None:
        from mjrig.runtime.analysis.linearise import advance

        if not at >= 0:
            raise ConfigError(f"--at {at:g}: a time from the run's start, s (0 or more)")
        advance(plan.step, m, seconds=at, where=f"--at {at:g}")
        point = f"t = {at:g} s"
    known = rm.signal_units()
    inputs = default_inputs(sc, m) if inputs is None else inputs
    outputs = default_outputs(sc, m, known) if outputs is None else outputs
    for name in outputs:
        try:
            rm.probe([name])
        except KeyError:  # every column the rig has, with units: its model's and its own
            raise ConfigError(
                f"{where_output} '{name}': unknown signal{closest_names(name, sorted(rm.signal_units()))}"
            ) from None
    after = (
        settle_to(plan.step, m, d, duration=setup.duration, where="--settle" if state is None else "at rest")
        if settle
        else None
    )
    solved = None
    if equilibrium or trim:
        where = "--trim-inputs" if trim else "--equilibrium"
        solved = solve_equilibrium(plan.engine, writes=plan.extras.write_inputs, trim=trim, where=where)
    values, units, writes = input_values(
        sc,
        inputs,
        plan.extras.write_inputs,
        m,
        d,
        units=known,
        where=where_input,
        ctrl=None if solved is None else solved.ctrl,
    )
    ctrl = d.ctrl.copy()
    lin = linearise(
        plan.engine,
        write_inputs=writes,
        inputs=values,
        outputs=list(outputs),
        probe=plan.probe,
        discrete=discrete,
    )
    if after is not None:
        point += f", at rest after {after:.4g} s"
    if solved is not None:
        point += f", at the equilibrium solved{' with trimmed inputs' if trim else ''}"
    return Analysis(setup, lin, modes(lin, m), after, point, solved, tuple(units), ctrl, values, writes)


def solved_text(an: Analysis) -> str:
    """One line on the equilibrium solved: its residual acceleration (m/s² or rad/s²), and the
    trimmed controls by actuator with their units."""
    from mjrig.linear.inputs import actuator_names

    solved = an.solved
    text = f"at rest (solved: residual acceleration {solved.residual:.3g}, {solved.iterations} iterations)"
    if solved.ctrl is not None:
        units = an.setup.runtime.signal_units()
        names = actuator_names(an.setup.model)
        parts = []
        for n, v in zip(names, solved.ctrl):
            unit = units.get(f"Actuators/{n}:ctrl", "").replace("*", "·")
            parts.append(f"{n} = {v:.6g}{f' {unit}' if unit else ''}")
        text += "; trimmed inputs: " + ", ".join(parts)
    return text


def kink_text(kinks: tuple[str, ...]) -> str:
    """One line on joints at a corner of the rig's laws (``Linear.kinks``)."""
    return (
        f"the rig's laws have a corner at this state in {', '.join(repr(k) for k in kinks[:3])}"
        f"{' and more' if len(kinks) > 3 else ''} (a spring at its stroke's end, a contact, friction at rest): "
        "the modes average its two sides; --equilibrium or another initial state may sit clear of it"
    )


def describe(mode: Any, k: int) -> str:
    """One line of ``mjrig modes``: mode ``k``'s frequencies, damping and the joints moving most."""
    from mjrig.runtime.analysis.modes import shape_text

    joints = shape_text(mode.shape) or "no joint"
    if mode.kind == "oscillatory":
        return (
            f"mode {k}: {mode.frequency_hz:.6g} Hz (undamped {mode.undamped_frequency_hz:.6g} Hz), "
            f"damping ratio {mode.damping_ratio:.4g}: {joints}"
        )
    if mode.kind == "rigid":
        return f"rigid-body mode (0 Hz): {joints}"
    if mode.kind == "unstable":
        return f"unstable: grows e-fold in {mode.time_constant_s:.4g} s (root +{1 / mode.time_constant_s:.4g} /s): {joints}"
    tau = f"{mode.time_constant_s:.4g} s" if math.isfinite(mode.time_constant_s) else "inf"
    return f"non-oscillatory: time constant {tau}: {joints}"


def state_entry(an: Analysis) -> dict[str, Any]:
    """The state ``an`` was linearised about, as ``--json`` writes it (s, rad or m, rad/s or m/s)."""
    lin = an.linear
    return {
        "time": lin.time,
        "point": an.point,
        "linearisation": lin.kind,
        "equilibrium": an.at_rest,
        "settled_after_s": an.settled_after,
        "residual_acceleration": None if an.solved is None else an.solved.residual,
        "trimmed": an.solved is not None and an.solved.ctrl is not None,
        "qpos": lin.qpos.tolist(),
        "qvel": lin.qvel.tolist(),
        "act": lin.act.tolist(),
        "ctrl": an.ctrl.tolist(),
    }


def bode(an: Analysis, sc: Any, *, where: str, pair: tuple[int, int] = (0, 0)) -> dict[str, Any]:
    """The response of ``an``'s output ``pair[0]`` to its input ``pair[1]`` (a param of scenario
    ``sc``) as ``--json`` writes it. ConfigError (one line, at ``where``) when neither the motion
    nor any output depends on the input at this state."""
    from mjrig.runtime.analysis.modes import frequencies, response

    lin = an.linear
    out, inp = pair
    name, output = lin.inputs[inp], lin.outputs[out]
    if not np.any(lin.B[:, inp]) and not np.any(lin.D[:, inp]):
        raise ConfigError(
            f"{where} '{name}': neither the motion nor {output} depends on it at this state "
            "(no load or control uses it, or what it scales is zero here)"
        )
    f = frequencies(an.modes, lin.dt)
    h = response(lin, f, output=out, input=inp)
    unit_out = an.setup.runtime.signal_units().get(output, "")
    return {
        "input": name,
        "output": output,
        "unit": f"{unit_out or '1'}/{an.input_units[inp] or '1'}",
        "frequency_hz": f.tolist(),
        "magnitude": np.abs(h).tolist(),
        "magnitude_db": (20 * np.log10(np.maximum(np.abs(h), 1e-300))).tolist(),
        "phase_deg": np.degrees(np.unwrap(np.angle(h))).tolist(),
        "modes_hz": [m.frequency_hz for m in an.modes if m.kind == "oscillatory"],
        "state": state_entry(an),
    }


def responses(an: Analysis, sc: Any, *, where: str) -> dict[str, Any]:
    """Every (input, output) pair's response, as ``mjrig bode --json`` writes them: one pair's
    document as ``bode`` gives it, several as ``{"responses": [...], "state": ...}`` (inputs
    outer, outputs inner)."""
    docs = [
        bode(an, sc, where=where, pair=(o, i))
        for i in range(len(an.linear.inputs))
        for o in range(len(an.linear.outputs))
    ]
    if len(docs) == 1:
        return docs[0]
    return {"responses": docs, "state": state_entry(an)}


def state_space(an: Analysis, sc: Any) -> dict[str, Any]:
    """``an``'s linearisation as ``mjrig linearise`` writes it: A, B, C, D (``discrete``: with
    ``dt``), the state's, inputs' and outputs' names and units (SI), and the operating point."""
    import mujoco

    lin, m = an.linear, an.setup.model
    names, units = _state_names(m)
    known = an.setup.runtime.signal_units()
    return {
        "kind": lin.kind,
        "A": lin.A,
        "B": lin.B,
        "C": lin.C,
        "D": lin.D,
        **({"dt": lin.dt} if lin.discrete else {}),
        "state_names": names,
        "state_units": units,
        "input_names": list(lin.inputs),
        "input_units": list(an.input_units),
        "output_names": list(lin.outputs),
        "output_units": [known.get(o, "") for o in lin.outputs],
        "point": an.point,
        "time": lin.time,
        "qpos": lin.qpos,
        "qvel": lin.qvel,
        "act": lin.act,
        "ctrl": an.ctrl,
        "actuator_names": [
            mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, i) or f"actuator{i}" for i in range(m.nu)
        ],
    }


def _state_names(model: Any) -> tuple[list[str], list[str]]:
    """The tangent state's coordinates: ``<joint>:q<i>``, ``<joint>:v<i>``, ``<actuator>:act``,
    and their units (m, rad; m/s, rad/s; the activation's own: "")."""
    import mujoco

    lin_ang = {0: ["m"] * 3 + ["rad"] * 3, 1: ["rad"] * 3, 2: ["m"], 3: ["rad"]}
    q, v, qu, vu = [], [], [], []
    for j in range(model.njnt):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint{j}"
        for i, unit in enumerate(lin_ang[int(model.jnt_type[j])]):
            q.append(f"{name}:q{i}")
            v.append(f"{name}:v{i}")
            qu.append(unit)
            vu.append(f"{unit}/s")
    acts = [
        f"{mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, i) or f'actuator{i}'}:act"
        for i in range(model.nu)
        if model.actuator_actadr[i] >= 0
        for _ in range(int(model.actuator_actnum[i]))
    ]
    return q + v + acts, qu + vu + [""] * len(acts)
