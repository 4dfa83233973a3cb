"""Linear analysis of a rig, the service behind ``mjrig modes``, ``mjrig bode``, the app's Modes
section and a report's modes: the rig built as ``mjrig run`` builds it, linearised about its
initial state, a given state or the state it settles to (``mjrig.runtime.analysis.linearise``),
its modes (``mjrig.runtime.analysis.modes``) and a signal's frequency response to a param
(CONTRACT section 12). The command lines are ``mjrig.cli.linear``'s."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mjrig.runtime.errors import ConfigError

__all__ = ["analyse", "Analysis", "TooLarge", "bode", "describe", "kink_text", "state_entry"]


@dataclass
class Analysis:
    """A rig linearised: its setup (``mjrig.headless.RunSetup``), ``Linear``, modes, and the
    simulated time (s) it took to settle (None: about its initial state)."""

    setup: Any
    linear: Any
    modes: list
    settled_after: float | None


class TooLarge(ConfigError):
    """A rig with more degrees of freedom than ``analyse`` was told to linearise."""


def analyse(
    sc: Any,
    *,
    equilibrium: bool = False,
    inputs: tuple[str, ...] = (),
    outputs: tuple[str, ...] = (),
    where_input: str = "--input",
    where_output: str = "--output",
    state: np.ndarray | None = None,
    most_dofs: int | None = None,
) -> Analysis:
    """Linearise scenario ``sc``'s rig about its initial state, or ``state`` (``mjSTATE_FULLPHYSICS``
    of its model: a run's state now) (``equilibrium``: the state it settles to from there) with
    params ``inputs`` and telemetry columns ``outputs``. ConfigError (one line) for an unknown
    name or a rig that does not settle; ``TooLarge`` for one of more than ``most_dofs`` degrees
    of freedom (found once the model is compiled, before any step)."""
    from mjrig.headless import prepare
    from mjrig.runtime.analysis.linearise import equilibrium as settle
    from mjrig.runtime.analysis.linearise import linearise
    from mjrig.runtime.analysis.modes import modes
    from mjrig.runtime.points import closest_names

    for name in inputs:
        if name not in sc.params:
            raise ConfigError(
                f"{where_input} '{name}': unknown param{closest_names(name, sorted(sc.params))}"
                + ("" if sc.params else " (the scenario has no [params])")
            )
    setup = prepare(sc, out=None, record=False)
    rm, m, d = setup.runtime, setup.model, setup.data
    if most_dofs is not None and m.nv > most_dofs:
        raise TooLarge(f"{m.nv} degrees of freedom: the modes were not worked out (run mjrig modes)")
    if state is not None:
        import mujoco

        mujoco.mj_setState(m, d, state, int(mujoco.mjtState.mjSTATE_FULLPHYSICS))
        mujoco.mj_forward(m, d)
    rm.resolve(m, d)
    plan = rm.plan
    assert plan is not None  # built by resolve
    for name in outputs:
        try:
            rm.probe([name])
        except KeyError:  # every column the rig has, with units: its model's and its own
            raise ConfigError(
                f"{where_output} '{name}': unknown signal{closest_names(name, sorted(rm.signal_units()))}"
            ) from None
    after = (
        settle(plan, duration=setup.duration, where="--equilibrium" if state is None else "at equilibrium")
        if equilibrium
        else None
    )
    lin = linearise(plan, inputs=[sc.params[n] for n in inputs], outputs=list(outputs))
    return Analysis(setup, lin, modes(lin, m), after)


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
        "equilibrium": an.settled_after is not None,
        "settled_after_s": an.settled_after,
        "qpos": lin.qpos.tolist(),
        "qvel": lin.qvel.tolist(),
    }


def bode(an: Analysis, sc: Any, *, where: str) -> dict[str, Any]:
    """The response of ``an``'s one output to its one input (a param of scenario ``sc``) as
    ``--json`` writes it. ConfigError (one line, at ``where``) when neither the motion nor the
    output depends on the input at this state."""
    from mjrig.runtime.analysis.modes import frequencies, response

    lin = an.linear
    name, output = lin.inputs[0], lin.outputs[0]
    if not np.any(lin.B[:, 0]) and not np.any(lin.D[:, 0]):
        raise ConfigError(
            f"{where} '{name}': neither the motion nor {output} depends on it at this state "
            "(no load or control uses it, or what it scales is zero here)"
        )
    f = frequencies(an.modes, lin.dt)
    h = response(lin, f)
    unit_out = an.setup.runtime.signal_units().get(output, "")
    return {
        "input": name,
        "output": output,
        "unit": f"{unit_out or '1'}/{sc.params[name].unit or '1'}",
        "frequency_hz": f.tolist(),
        "magnitude": np.abs(h).tolist(),
        "magnitude_db": (20 * np.log10(np.abs(h))).tolist(),
        "phase_deg": np.degrees(np.unwrap(np.angle(h))).tolist(),
        "modes_hz": [m.frequency_hz for m in an.modes if m.kind == "oscillatory"],
        "state": state_entry(an),
    }
