"""``mjrig modes``, ``mjrig bode`` and ``mjrig linearise``: the rig linearised
(``mjrig.linear.analysis``) about one or more operating points, its modes printed and written as
JSON, each signal's frequency response to each param printed, written and plotted, and its
state-space model written for other tools (CONTRACT section 12)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mjrig.cli.arguments import instant
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.files.paths import check_writable, cli_path

__all__ = ["COMMANDS", "add_parsers", "modes", "bode", "linearise"]

COMMANDS = ("modes", "bode", "linearise")

LONG_AT = 10.0
"""An ``--at`` past this many times the scenario's duration is refused without ``--long``: the rig
runs all that time to get there."""


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add ``modes``, ``bode`` and ``linearise`` to ``sub``, the ``mjrig`` parser's subparsers;
    their handlers."""
    m = sub.add_parser("modes", help="natural frequencies, damping ratios and mode shapes of the linearised rig")
    b = sub.add_parser("bode", help="frequency response of signals to params, from the linearised rig")
    lz = sub.add_parser("linearise", help="the linearised rig's state-space model (A, B, C, D) for other tools")
    for p in (m, b, lz):
        p.add_argument(
            "target",
            metavar="TARGET",
            help="a scenario .toml, a model .xml/.urdf/.mjb, a bundled rig's name or a recording .parquet (the rig it ran)",
        )
        p.add_argument(
            "--equilibrium",
            action="store_true",
            help="linearise about the nearest state at rest, solved from the operating point (unstable ones too)",
        )
        p.add_argument(
            "--settle",
            action="store_true",
            help="linearise about the state a run from the operating point comes to rest at (within its duration)",
        )
        p.add_argument(
            "--trim-inputs",
            action="store_true",
            help="with --equilibrium: also solve the least actuator controls within ctrlrange that hold the point",
        )
        p.add_argument(
            "--input",
            action="append",
            metavar="PARAM|Actuators/NAME:ctrl",
            help="an input: a param or an actuator's control (repeatable)"
            + ("" if p is not lz else "; default: the params loads and controls use, else every actuator"),
        )
        p.add_argument(
            "--at",
            action="append",
            type=instant,
            metavar="S",
            help="linearise about the state a run reaches at S seconds (repeatable: one result each)",
        )
        p.add_argument(
            "--long",
            action="store_true",
            help=f"allow an --at past {LONG_AT:g} times the scenario's duration (the rig runs all that time)",
        )
        p.add_argument("--snapshot", type=cli_path, metavar="FILE.npz", help="linearise about a saved state")
        p.add_argument(
            "--discrete",
            action="store_true",
            help="the step's own linearisation (as mjd_transitionFD) instead of the continuous-time one",
        )
    for p in (m, b):
        p.add_argument("--json", type=cli_path, metavar="OUT.json", help="write the numbers as JSON")
    b.add_argument(
        "--output",
        required=True,
        action="append",
        metavar="SIGNAL",
        help="a telemetry column, e.g. Joints/slide:qpos (repeatable)",
    )
    b.add_argument("-o", dest="out", type=cli_path, metavar="OUT.png|svg|pdf", help="plot magnitude and phase")
    b.add_argument(
        "--sigma",
        action="store_true",
        help="with several inputs and outputs: the singular values of the response (plotted with -o, in --json)",
    )
    lz.add_argument(
        "--output",
        action="append",
        metavar="SIGNAL",
        help="an output signal (repeatable; default: the [plots] signals, else the sensors, else the joints' positions)",
    )
    lz.add_argument(
        "--report",
        type=cli_path,
        metavar="OUT.html",
        help="an HTML page: the point, the modes, and each input's small step answered by the linear model and the rig",
    )
    lz.add_argument(
        "--tf",
        action="store_true",
        help="add each input/output pair's transfer function: num, den, poles, zeros, gain",
    )
    lz.add_argument(
        "-o", dest="out", type=cli_path, required=True, metavar="LIN.mat|npz|json", help="where to write it"
    )
    return {"modes": modes, "bode": bode, "linearise": linearise}


def _write_json(path: Path, doc: dict[str, Any]) -> None:
    from mjrig.runtime.files.atomic_output import atomic_output

    check_writable(path, "--json")
    with atomic_output(path, what="--json") as tmp:
        tmp.write_text(json.dumps(doc, indent=1, allow_nan=False), encoding="utf-8")


def _apart(outputs: dict[str, Path | None], sc: Any, args: argparse.Namespace) -> None:
    """ConfigError (exit 2, one line) when an output is one of the inputs (the scenario's, the
    ``--snapshot`` state) or another output."""
    from mjrig.runtime.files.out_lock import check_outputs_apart
    from mjrig.scenario.inputs import scenario_inputs

    inputs = [*dict(scenario_inputs(sc)).items(), ("the --snapshot state", args.snapshot)]
    check_outputs_apart(outputs, inputs)


def _points(args: argparse.Namespace, sc: Any) -> list[dict[str, Any]]:
    """The operating points asked for, as ``analyse``'s keywords: one per ``--at`` (else one:
    the snapshot, or the initial state); ConfigError for ``--at`` with ``--snapshot``, and for an
    ``--at`` past ``LONG_AT`` times the duration without ``--long`` or one that cannot finish."""
    if args.at and args.snapshot is not None:
        raise ConfigError("--at and --snapshot: choose one operating point's source (a run's time, or a saved state)")
    if args.trim_inputs and args.settle:
        raise ConfigError(
            "--trim-inputs solves the controls at a solved equilibrium: give it with --equilibrium, not --settle"
        )
    common = {
        "equilibrium": args.equilibrium,
        "settle": args.settle,
        "trim": args.trim_inputs,
        "discrete": args.discrete,
    }
    if not args.at:
        return [{**common, "snapshot": args.snapshot}]
    for t in args.at:
        if t > LONG_AT * sc.duration and not args.long:
            raise ConfigError(
                f"--at {t:g}: {t / sc.duration:.3g} times the scenario's duration ({sc.duration:g} s); the rig "
                f"would run {t:g} s to get there: add --long if that is meant"
            )
    if args.long:
        from mjrig.runtime.bounds import check_work, step_seconds
        from mjrig.scenario.builder import build_rig

        rig = build_rig(sc)
        each = step_seconds(rig.model, rig.data)
        check_work(what="steps", count=round(max(args.at) / rig.model.opt.timestep), each_s=each, where="--at")
    return [{**common, "at": t} for t in args.at]


def _analyses(args: argparse.Namespace, sc: Any, **names: Any) -> list[Any]:
    from mjrig.linear.analysis import analyse, solved_text

    found = []
    for point in _points(args, sc):
        an = analyse(sc, **point, **names)
        if an.settled_after is not None:
            print(f"{an.point}: at rest after {an.settled_after:.4g} s; linearised there", file=sys.stderr)
        if an.solved is not None:
            print(f"{an.point}: {solved_text(an)}; linearised there", file=sys.stderr)
        found.append(an)
    return found


def modes(args: argparse.Namespace) -> int:
    """``mjrig modes TARGET [--json OUT] [--equilibrium] [--at S]... [--snapshot F] [--discrete]``."""
    from mjrig.linear.analysis import describe, kink_text, state_entry
    from mjrig.scenario.targets import load_target

    sc = load_target(args.target, recording=True)
    _apart({"--json": args.json}, sc, args)
    found = _analyses(args, sc, inputs=tuple(args.input or ()))
    for an in found:
        if len(found) > 1:
            print(f"{an.point} ({an.linear.kind}):")
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
        entries = [{"modes": [m.entry() for m in an.modes], "state": state_entry(an)} for an in found]
        _write_json(args.json, {**entries[0], "points": entries})
        print(f"wrote the modes of {len(found)} operating point(s) to {args.json}", file=sys.stderr)
    return 0


def bode(args: argparse.Namespace) -> int:
    """``mjrig bode TARGET --input PARAM... --output SIGNAL... [--json OUT] [-o PLOT]``."""
    import numpy as np

    from mjrig.linear import analysis as linear_analysis
    from mjrig.scenario.targets import load_target

    sc = load_target(args.target, recording=True)
    _apart({"--json": args.json, "-o": args.out}, sc, args)
    if args.out is not None and args.out.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise ConfigError(f"-o {args.out}: a plot is .png, .svg or .pdf")
    if not args.input:
        raise ConfigError("bode needs --input: a param or an actuator's control (Actuators/NAME:ctrl)")
    if args.at and len(args.at) > 1:
        raise ConfigError("--at: a frequency response is of one operating point (give one --at)")
    (an,) = _analyses(args, sc, inputs=tuple(args.input), outputs=tuple(args.output))
    doc = linear_analysis.responses(an, sc, where="--input")
    if args.sigma:
        from mjrig.linear.transfer import singular_values

        if len(an.linear.inputs) * len(an.linear.outputs) < 2:
            raise ConfigError("--sigma: singular values are of a response with several inputs or outputs")
        doc["sigma"] = singular_values(an)
    for one in doc.get("responses", [doc]):
        f, mag, unit = np.array(one["frequency_hz"]), np.array(one["magnitude"]), one["unit"]
        k = int(np.argmax(mag))
        print(
            f"bode: {one['output']} / {one['input']}: {f.size} frequencies {f[0]:.4g} ... {f[-1]:.4g} Hz; "
            f"lowest {mag[0]:.4g} {unit}, peak {mag[k]:.4g} {unit} at {f[k]:.4g} Hz"
        )
    if args.json is not None:
        _write_json(args.json, doc)
        print(f"wrote the response(s) to {args.json}", file=sys.stderr)
    if args.out is not None:
        from mjrig.exports.plotting import bode_figure, save, sigma_figure

        check_writable(args.out, "-o")
        save(sigma_figure(doc["sigma"]) if args.sigma else bode_figure(doc), args.out)
        print(f"wrote the plot to {args.out}", file=sys.stderr)
    return 0


def _report(args: argparse.Namespace, sc: Any, an: Any, model: dict[str, Any]) -> None:
    """Write ``--report``: the first point's modes and each input's step, linear against the rig."""
    from mjrig.exports.linear_report import write_linear_report
    from mjrig.linear.analysis import solved_text
    from mjrig.linear.step_check import step_checks

    checks = step_checks(an, duration=sc.duration)
    doc = {
        "target": str(args.target),
        "model": str(sc.model),
        "kind": an.linear.kind,
        "point": an.point,
        "solved": solved_text(an) if an.solved is not None else "",
        "states": len(model["state_names"]),
        "inputs": model["input_names"],
        "outputs": model["output_names"],
        "modes": [m.entry() for m in an.modes],
        "checks": checks,
    }
    write_linear_report(doc, args.report)
    gaps = [o["difference"] for c in checks for o in c["outputs"]]
    said = f": the linear model is within {100 * max(gaps):.3g} % of the rig's own step response" if gaps else ""
    print(f"wrote the report to {args.report}{said}", file=sys.stderr)


def linearise(args: argparse.Namespace) -> int:
    """``mjrig linearise TARGET [--input PARAM]... [--output SIGNAL]... -o LIN.mat|npz|json``."""
    from mjrig.exports.state_space import SUFFIXES, write_state_space
    from mjrig.linear import analysis as linear_analysis
    from mjrig.scenario.targets import load_target

    sc = load_target(args.target, recording=True)
    if args.out.suffix.lower() not in SUFFIXES:
        raise ConfigError(f"-o {args.out}: a state-space model is written as {', '.join(SUFFIXES)}")
    _apart({"-o": args.out, "--report": args.report}, sc, args)
    check_writable(args.out, "-o")
    if args.report is not None:
        if args.report.suffix.lower() != ".html":
            raise ConfigError(f"--report {args.report}: a report is .html")
        check_writable(args.report, "--report")
    inputs = tuple(args.input) if args.input else None
    outputs = tuple(args.output) if args.output else None
    found = _analyses(args, sc, inputs=inputs, outputs=outputs)
    models = [linear_analysis.state_space(an, sc) for an in found]
    if args.tf:
        from mjrig.linear.transfer import transfer_functions

        for model, an in zip(models, found):
            model["tf"] = transfer_functions(
                an.linear, warn=lambda line: print(f"mjrig: warning: {line}", file=sys.stderr)
            )
    write_state_space(models, args.out)
    if args.report is not None:
        _report(args, sc, found[0], models[0])
    first = models[0]
    if not first["input_names"] and not first["output_names"]:
        print("mjrig: the model has no params, actuators, sensors or joints to be inputs and outputs", file=sys.stderr)
    print(
        f"linearise: {len(first['state_names'])} states, {len(first['input_names'])} inputs, "
        f"{len(first['output_names'])} outputs ({first['kind']}) at {', '.join(m['point'] for m in models)}: "
        f"wrote {args.out}"
    )
    return 0
