"""The ``mjrig`` command: open the app, or run / check / recover / list models headless.

Bad input exits 2 with one line on stderr; a diverging headless run exits 3. No traceback
reaches the user for either.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import Sequence

# With no display, MuJoCo's offscreen rendering must use EGL; it is picked when mujoco is first
# imported, so this comes before any import of the core.
if sys.platform.startswith("linux") and not os.environ.get("DISPLAY") and "MUJOCO_GL" not in os.environ:
    os.environ["MUJOCO_GL"] = "egl"

from app.runtime.errors import ConfigError, DivergenceError, MjrigError

__all__ = ["main"]

SUBCOMMANDS = ("run", "check", "recover", "models")


class _ArgumentParser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        prog = self.prog.removeprefix("mjrig").strip()
        raise ConfigError(f"{prog}: {message}" if prog else message)


def _seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: '{text}'") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got '{text}'")
    return v


def _parser() -> argparse.ArgumentParser:
    p = _ArgumentParser(prog="mjrig", description="A test rig for MuJoCo models.")
    sub = p.add_subparsers(dest="command", parser_class=_ArgumentParser)
    r = sub.add_parser("run", help="run a scenario headless and record it")
    r.add_argument("scenario", type=Path)
    r.add_argument("--duration", type=_seconds, help="simulated seconds (overrides the scenario)")
    r.add_argument("--out", type=Path, help="Parquet output (overrides the scenario)")
    r.add_argument("--video", type=Path, help="video output, .mp4 or .gif (overrides the scenario)")
    c = sub.add_parser("check", help="validate a scenario without running it")
    c.add_argument("scenario", type=Path)
    rc = sub.add_parser("recover", help="rebuild a recording interrupted by a crash or kill")
    rc.add_argument("out", type=Path)
    sub.add_parser("models", help="list the bundled models")
    return p


def _app_parser() -> argparse.ArgumentParser:
    p = _ArgumentParser(prog="mjrig", description="Open the mjrig desktop app (commands: "
                        + ", ".join(SUBCOMMANDS) + ").")
    p.add_argument("path", nargs="?", type=Path, help="an MJCF .xml, binary .mjb or scenario .toml")
    p.add_argument("--record", type=Path, metavar="OUT.parquet", help="record telemetry from the first step")
    p.add_argument("--exit-after", type=_seconds, metavar="SECONDS", help="close cleanly after SECONDS of wall time")
    p.add_argument("--panel-process", action="store_true",
                   help="run the control panel in its own process (always so on macOS)")
    return p


def _progress_bar(total_seconds: float):
    """A tqdm bar on stderr when it is a terminal, else None."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm
    return tqdm(total=1000, unit="‰", desc="simulating", file=sys.stderr, leave=True,
                bar_format="{desc} {percentage:3.0f}%|{bar}| {elapsed}<{remaining}")


def cmd_run(args: argparse.Namespace) -> int:
    from app.headless import prepare, run
    from app.scenario import load_scenario
    sc = load_scenario(args.scenario)
    setup = prepare(sc, out=args.out.resolve() if args.out else None, duration=args.duration,
                    video=args.video.resolve() if args.video else None)
    bar = _progress_bar(setup.duration)
    last = [0]

    def progress(frac: float) -> None:
        if bar is not None:
            n = int(frac * 1000)
            bar.update(n - last[0])
            last[0] = n

    for rec in setup.runtime.video_recorders:
        rec.on_progress = _encoding_bar() if sys.stderr.isatty() else None
    try:
        run(setup, progress=progress)
    finally:
        if bar is not None:
            bar.close()
    sm = setup.runtime.signal_manager
    if sm is not None and sm.error:
        print(f"mjrig: recording stopped: {sm.error}", file=sys.stderr)
        return 1
    if setup.out is not None:
        print(f"wrote {sm.rows_recorded if sm else 0} rows to {setup.out}", file=sys.stderr)
    for rec in setup.runtime.video_recorders:
        print(f"wrote {rec.frames_written} frames to {rec.path}", file=sys.stderr)
    return 0


def _encoding_bar():
    """A progress callback (frames encoded, frames captured) drawing a tqdm bar on stderr."""
    from tqdm import tqdm
    state: dict = {}

    def update(done: int, total: int) -> None:
        bar = state.get("bar")
        if bar is None:
            bar = state["bar"] = tqdm(total=total, desc="encoding video", unit="frame", file=sys.stderr)
        bar.total = total
        bar.update(done - bar.n)
        if done >= total:
            bar.close()
    return update


def cmd_check(args: argparse.Namespace) -> int:
    from app.headless import prepare
    from app.scenario import load_scenario
    sc = load_scenario(args.scenario)
    setup = prepare(sc, record=False)
    print(f"{args.scenario}: ok ({len(sc.loads)} loads, {len(sc.proximities)} proximities, "
          f"{len(sc.params)} params; model {sc.model.name}: {setup.model.nbody - 1} bodies, "
          f"{setup.model.njnt} joints, timestep {setup.model.opt.timestep:g} s)")
    return 0


def cmd_recover(args: argparse.Namespace) -> int:
    from app.runtime.parquet_sink import recover
    path, rows = recover(args.out)
    print(f"recovered {rows} rows into {path}", file=sys.stderr)
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    from app.bundled import bundled_models
    rows = bundled_models()
    width = max((len(m.name) for m in rows), default=0)
    for m in rows:
        print(f"{m.name:<{width}}  {m.description}")
    return 0


def cmd_open(args: argparse.Namespace) -> int:
    try:
        from app.gui import open_app
    except ImportError as exc:
        raise MjrigError(f"the desktop app cannot start: {exc}") from None
    return open_app(args.path, record=args.record, exit_after=args.exit_after,
                    panel_process=True if args.panel_process else None)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mjrig`` console command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in SUBCOMMANDS:
            args = _parser().parse_args(argv)
            return {"run": cmd_run, "check": cmd_check, "recover": cmd_recover, "models": cmd_models}[args.command](args)
        return cmd_open(_app_parser().parse_args(argv))
    except ConfigError as exc:
        print(f"mjrig: {exc}", file=sys.stderr)
        return 2
    except DivergenceError as exc:
        print(f"mjrig: {exc} (rows before it are kept)", file=sys.stderr)
        return 3
    except MjrigError as exc:
        print(f"mjrig: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mjrig: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
