"""``mjrig [PATH]``: the desktop app opened on a model, scenario, bundled rig, recording to replay
(``--compare`` another over it) or a sweep's or study's results; a bad file refused with one line
before any window opens."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from mjrig.cli.arguments import ArgumentParser, frame_rate, seconds
from mjrig.runtime.errors import ConfigError, MjrigError
from mjrig.runtime.files.paths import cli_path

__all__ = ["app_parser", "open_app", "check_replay"]


def app_parser(commands: tuple[str, ...]) -> argparse.ArgumentParser:
    """The parser of ``mjrig`` with no command (its description lists ``commands``)."""
    p = ArgumentParser(prog="mjrig", description="Open the mjrig desktop app (commands: " + ", ".join(commands) + ").")
    p.add_argument(
        "path",
        nargs="?",
        help="an MJCF .xml, a URDF .urdf, binary .mjb, scenario .toml, a bundled rig's name, "
        "a .parquet recording to replay, or a sweep's RESULTS.parquet to browse",
    )
    p.add_argument(
        "--compare",
        type=cli_path,
        metavar="OTHER.parquet",
        help="with a recording: overlay a second recording's signals (and a ghost of the same model)",
    )
    p.add_argument("--record", type=cli_path, metavar="OUT.parquet", help="record telemetry from the first step")
    p.add_argument("--exit-after", type=seconds, metavar="SECONDS", help="close cleanly after SECONDS of wall time")
    p.add_argument(
        "--view-fps",
        type=frame_rate,
        metavar="FPS",
        help="draw the 3D view at most FPS frames a second (where no vsync limits it: a software "
        "renderer, a virtual or remote display; default: as often as it can)",
    )
    p.add_argument(
        "--panel-process", action="store_true", help="run the control panel in its own process (always so on macOS)"
    )
    from mjrig.cli.arguments import add_package_path

    add_package_path(p)
    return p


def check_replay(path: Path, compare: Path | None) -> None:
    """``mjrig RECORDING.parquet [--compare OTHER.parquet]``: refuse a bad recording or comparison
    with one line (ConfigError) before any window opens (the app repeats the model's SHA check)."""
    from mjrig.recordings.replay import OverlaidRecording, Replay

    base = Replay.open(path)
    if compare is not None:
        OverlaidRecording.open(compare, model=base.model, sha256=base.recording.metadata.get("mjrig.model_sha256", ""))


def open_app(args: argparse.Namespace) -> int:
    """Open the app as ``args`` (of ``app_parser``) ask; its exit status."""
    from mjrig.campaign.results import SweepResults, is_results
    from mjrig.runtime.files.paths import RECORDING_SUFFIXES
    from mjrig.scenario.targets import resolve_target

    path = resolve_target(args.path, recording=True) if args.path is not None else None  # one line, screen or not
    recording = path if path is not None and path.suffix.lower() in RECORDING_SUFFIXES else None
    replaying = recording is not None
    results = recording is not None and is_results(recording)  # a sweep's results: the results view, not a replay
    if args.compare is not None and results:
        raise ConfigError(
            f"{path}: a sweep's results, not a recording: --compare goes with a recording "
            "(open a trial's recording from the results view)"
        )
    if args.compare is not None and not replaying:
        raise ConfigError("--compare goes with a recording: mjrig RECORDING.parquet --compare OTHER.parquet")
    if recording is not None:
        if results:
            SweepResults.open(recording)
        else:
            check_replay(recording, args.compare)
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise ConfigError(
            "no display: the desktop app needs a screen (set DISPLAY, e.g. under Xvfb); "
            "`mjrig run TARGET` runs headless"
        )
    try:
        from mjrig.desktop.launch import open_app as open_desktop
    except ImportError as exc:
        raise MjrigError(f"the desktop app cannot start: {exc}") from None
    return open_desktop(
        path,
        record=args.record,
        exit_after=args.exit_after,
        view_fps=args.view_fps,
        panel_process=True if args.panel_process else None,
        compare=args.compare,
    )
