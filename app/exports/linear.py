"""``mjrig modes`` and ``mjrig bode``: the rig linearised about its initial state (or the state
it settles to), its modes printed and written as JSON, a signal's frequency response to a param
plotted (CONTRACT section 12). The analysis is ``mjrig.runtime.analysis.linearise`` and ``modes``."""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.files.paths import check_writable, cli_path

__all__ = [
    "add_parsers",
    "analyse",
    "Analysis",
    "TooLarge",
    "bode",
    "modes_command",
    "bode_command",
    "bode_figure",
    "describe",
    "kink_text",
    "COMMANDS",
]

COMMANDS = ("modes", "bode")


def add_parsers(sub: Any) -> None:
    """Add ``modes`` and ``bode`` to ``sub``, the ``mjrig`` parser's subparsers."""
    m = sub.add_parser("modes", help="natural frequencies, damping ratios and mode shapes of the linearised rig")
    b = sub.add_parser("bode", help="frequency response of a signal to a param, from the linearised rig")
    for p in (m, b):
        p.add_argument("target", metavar="TARGET", help="a scenario .toml, a model .xml/.mjb or a bundled rig's name")
        p.add_argument("--json", type=cli_path, metavar="OUT.json", help="write the numbers as JSON")
        p.add_argument(
            "--equilibrium",
            action="store_true",
            help="linearise about the state the rig settles to (within its duration), not its initial state",
        )
    b.add_argument("--input", required=True, metavar="PARAM", help="a param a load or control uses")
    b.add_argument("--output", required=True, metavar="SIGNAL", help="a telemetry column, e.g. Joints/slide:qpos")
    b.add_argument("-o", dest="out", type=cli_path, metavar="OUT.png|svg|pdf", help="plot magnitude and phase")


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


def _state(an: Analysis) -> dict[str, Any]:
    lin = an.linear
    return {
        "time": lin.time,
        "equilibrium": an.settled_after is not None,
        "settled_after_s": an.settled_after,
        "qpos": lin.qpos.tolist(),
        "qvel": lin.qvel.tolist(),
    }


def _write_json(path: Path, doc: dict[str, Any]) -> None:
    from mjrig.runtime.files.atomic_output import atomic_output

    check_writable(path, "--json")
    with atomic_output(path, what="--json") as tmp:
        tmp.write_text(json.dumps(doc, indent=1, allow_nan=False), encoding="utf-8")


def _apart(outputs: dict[str, Path | None], sc: Any) -> None:
    """ConfigError (exit 2, one line) when an output is one of the scenario's inputs or another output."""
    from mjrig.runtime.files.out_lock import check_outputs_apart
    from mjrig.scenario.inputs import scenario_inputs

    check_outputs_apart(outputs, scenario_inputs(sc))


def modes_command(args: argparse.Namespace) -> int:
    """``mjrig modes TARGET [--json OUT] [--equilibrium]``."""
    from mjrig.scenario.targets import load_target

    sc = load_target(args.target)
    _apart({"--json": args.json}, sc)
    an = analyse(sc, equilibrium=args.equilibrium)
    if an.settled_after is not None:
        print(f"at rest after {an.settled_after:.4g} s; linearised there", file=sys.stderr)
    if an.linear.kinks:
        print(f"mjrig: warning: {kink_text(an.linear.kinks)}", file=sys.stderr)
    osc = [m for m in an.modes if m.kind == "oscillatory"]
    for k, mode in enumerate(osc, 1):
        print(describe(mode, k))
    for mode in an.modes:
        if mode.kind != "oscillatory":
            print(describe(mode, 0))
    if not osc:
        print(f"no oscillatory mode ({len(an.modes)} non-oscillatory)")
    if args.json is not None:
        _write_json(args.json, {"modes": [m.entry() for m in an.modes], "state": _state(an)})
        print(f"wrote {len(an.modes)} modes to {args.json}", file=sys.stderr)
    return 0


def bode_command(args: argparse.Namespace) -> int:
    """``mjrig bode TARGET --input PARAM --output SIGNAL [--json OUT] [-o PLOT]``."""
    from mjrig.scenario.targets import load_target

    sc = load_target(args.target)
    _apart({"--json": args.json, "-o": args.out}, sc)
    if args.out is not None and args.out.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise ConfigError(f"-o {args.out}: a plot is .png, .svg or .pdf")
    an = analyse(sc, equilibrium=args.equilibrium, inputs=(args.input,), outputs=(args.output,))
    doc = bode(an, sc, where="--input")
    f, mag, unit = np.array(doc["frequency_hz"]), np.array(doc["magnitude"]), doc["unit"]
    k = int(np.argmax(mag))
    print(
        f"bode: {args.output} / {args.input}: {f.size} frequencies {f[0]:.4g} ... {f[-1]:.4g} Hz; "
        f"lowest {mag[0]:.4g} {unit}, peak {mag[k]:.4g} {unit} at {f[k]:.4g} Hz"
    )
    if args.json is not None:
        _write_json(args.json, doc)
        print(f"wrote the response to {args.json}", file=sys.stderr)
    if args.out is not None:
        from mjrig.exports.plotting import save

        check_writable(args.out, "-o")
        save(bode_figure(doc), args.out)
        print(f"wrote the plot to {args.out}", file=sys.stderr)
    return 0


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
        "state": _state(an),
    }


def bode_figure(doc: dict[str, Any]) -> Any:
    """Magnitude (dB) and phase (deg) over log frequency, each mode's frequency a dotted line."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 6), layout="constrained")
    mag, ph = fig.subplots(2, 1, sharex=True)
    f = doc["frequency_hz"]
    mag.semilogx(f, doc["magnitude_db"], color="#1f77b4")
    ph.semilogx(f, doc["phase_deg"], color="#d62728")
    for ax in (mag, ph):
        for fm in doc["modes_hz"]:
            ax.axvline(fm, color="0.5", linestyle=":", linewidth=1)
        ax.grid(True, which="both", alpha=0.3)
    mag.set_ylabel(f"magnitude (dB re 1 {doc['unit']})")
    ph.set_ylabel("phase (deg)")
    ph.set_xlabel("frequency (Hz)")
    mag.set_title(f"{doc['output']} / {doc['input']}")
    return fig
