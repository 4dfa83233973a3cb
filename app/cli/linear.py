"""``mjrig modes`` and ``mjrig bode``: the rig linearised (``mjrig.linear_analysis``), its modes
printed and written as JSON, a signal's frequency response to a param printed, written and
plotted (CONTRACT section 12)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.files.paths import check_writable, cli_path

__all__ = ["COMMANDS", "add_parsers", "modes", "bode"]

COMMANDS = ("modes", "bode")


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add ``modes`` and ``bode`` to ``sub``, the ``mjrig`` parser's subparsers; their handlers."""
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
    return {"modes": modes, "bode": bode}


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


def modes(args: argparse.Namespace) -> int:
    """``mjrig modes TARGET [--json OUT] [--equilibrium]``."""
    from mjrig.linear_analysis import analyse, describe, kink_text, state_entry
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
        _write_json(args.json, {"modes": [m.entry() for m in an.modes], "state": state_entry(an)})
        print(f"wrote {len(an.modes)} modes to {args.json}", file=sys.stderr)
    return 0


def bode(args: argparse.Namespace) -> int:
    """``mjrig bode TARGET --input PARAM --output SIGNAL [--json OUT] [-o PLOT]``."""
    import numpy as np

    from mjrig import linear_analysis
    from mjrig.scenario.targets import load_target

    sc = load_target(args.target)
    _apart({"--json": args.json, "-o": args.out}, sc)
    if args.out is not None and args.out.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise ConfigError(f"-o {args.out}: a plot is .png, .svg or .pdf")
    an = linear_analysis.analyse(sc, equilibrium=args.equilibrium, inputs=(args.input,), outputs=(args.output,))
    doc = linear_analysis.bode(an, sc, where="--input")
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
        from mjrig.exports.plotting import bode_figure, save

        check_writable(args.out, "-o")
        save(bode_figure(doc), args.out)
        print(f"wrote the plot to {args.out}", file=sys.stderr)
    return 0
