"""The commands that write what a run makes: recordings (start, stop, plan, recover), exports,
reports, plot pictures, screenshots, video and keyframes, the stream to Rerun and its part of the
panel state (``RerunPart``) (``mjrig.commands`` re-exports them). The same frozen, picklable
objects cross a thread queue or a process pipe."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from mjrig.panel_parts import panel_part
from mjrig.rig_edits import Command

__all__ = [
    "PathCommand",
    "StartRecording",
    "StopRecording",
    "ToggleRecording",
    "PlanRecording",
    "RecoverRecording",
    "ExportRecording",
    "WriteReport",
    "SavePlot",
    "SaveKeyframe",
    "Screenshot",
    "ToggleVideo",
    "StreamToRerun",
    "RerunPart",
]


@dataclass(frozen=True)
class PathCommand(Command):
    """A command that writes or reads one file: ``path`` (None: the command's own default)."""

    path: str | None = None


@dataclass(frozen=True)
class StartRecording(Command):
    """Record to ``path`` (.parquet); ``rate`` samples per simulated second (None: every step)."""

    path: str
    rate: float | None = None
    signals: tuple[str, ...] | None = None


@dataclass(frozen=True)
class StopRecording(Command):
    """Finish the recording: every row so far in a valid file."""


@dataclass(frozen=True)
class ToggleRecording(Command):
    """Stop recording, or start as the Recording form reads now (``PlanRecording``; the rig's [recording] until edited)."""


@dataclass(frozen=True)
class PlanRecording(Command):
    """The Recording form as it reads now (sent at every edit): what ToggleRecording (Ctrl+E) starts.
    ``path`` .parquet (relative: to the current folder), ``rate`` per simulated second (None: every
    step), ``signals`` groups (None: all). Opening another rig replaces them with its own."""

    path: str
    rate: float | None = None
    signals: tuple[str, ...] | None = None


@dataclass(frozen=True)
class RecoverRecording(Command):
    """Turn an interrupted recording's segments into a valid Parquet file."""

    path: str


@dataclass(frozen=True)
class ExportRecording(PathCommand):
    """Write a recording as CSV, MATLAB or MCAP off the simulation thread. ``fmt`` "csv", "mat", "mcap"
    (None: by ``path``'s suffix, else csv); ``path`` None: a free name beside the recording (a path
    given is replaced: the dialog asked); ``source`` None: the one replayed, else the last finished."""

    fmt: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class WriteReport(PathCommand):
    """Write the HTML report of ``source`` (a recording, RESULTS or STUDY .parquet; None: as
    ExportRecording picks) to ``path`` (None: a free SOURCE.html beside it), off the simulation thread;
    with ``compared``: ``mjrig compare SOURCE COMPARED --report``'s (None: a free A-vs-B.html beside A)."""

    source: str | None = None
    compared: str | None = None


@dataclass(frozen=True)
class SavePlot(PathCommand):
    """Draw ``traces`` (the plotted signals, each a ``mjrig.exports.plotting.Trace``: not imported
    here, as campaigns below the exports read the commands) as one figure, a panel per unit, to
    ``path`` (.png, .svg or .pdf; None: a timestamped PNG in runs/), off the simulation thread."""

    traces: tuple[Any, ...] = ()


@dataclass(frozen=True)
class SaveKeyframe(PathCommand):
    """Write a copy of the MJCF with the current state as a keyframe (``path``: None = next to it)."""


@dataclass(frozen=True)
class Screenshot(PathCommand):
    """Save a PNG of the current view (``path``: None = a timestamped file in the runs folder)."""


@dataclass(frozen=True)
class ToggleVideo(PathCommand):
    """Start (``path``: None = a timestamped .mp4 in runs/) or stop recording video of the view."""


@dataclass(frozen=True)
class StreamToRerun(Command):
    """Send the running rig's rows to a Rerun viewer (``on``) or stop. ``address``: ``host:port``,
    a port or a ``rerun+http://`` URL of a running viewer; "" starts one."""

    on: bool = True
    address: str = ""


@panel_part
@dataclass(frozen=True)
class RerunPart:
    """The stream to Rerun (``session.rerun_live``): ``address`` where it goes ("": not
    streaming), the ``rows`` sent and ``dropped`` (a viewer that fell behind), ``error`` (one line)."""

    name: ClassVar[str] = "rerun"

    address: str = ""
    rows: int = 0
    dropped: int = 0
    error: str = ""
