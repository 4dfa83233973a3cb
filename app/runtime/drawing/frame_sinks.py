"""Pictures of the rig taken as it steps, behind one protocol: a video's frames (taken with the
telemetry samples, before the step integrates, when one is due) and a viewer's sync (after
every step). The step plan lists them and takes each when due.

Threading: taken on the stepping thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import mujoco

from mjrig.runtime.drawing.visuals import ArrowConfig, ArrowScale, Line

if TYPE_CHECKING:
    from mjrig.runtime.drawing.video import VideoRecorder

__all__ = ["Drawing", "FrameSink", "SyncHook", "VideoSink", "ViewerSync"]

SyncHook = Callable[[mujoco.MjModel, mujoco.MjData, list[ArrowConfig], list[Line]], None]
"""Called after every step with (model, data, arrows, lines), e.g. to sync a viewer."""


class Drawing(Protocol):
    """What a picture needs of the rig's drawing (``RigDrawing`` is one): its arrows and lines
    at a state, the net force on each body, and the arrows' lengths."""

    @property
    def arrow_scale(self) -> ArrowScale: ...

    def visuals(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> tuple[list[ArrowConfig], list[Line]]: ...

    def net_force_arrows(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> list[ArrowConfig]: ...


class FrameSink(Protocol):
    """Takes a picture of the rig at some steps."""

    after_step: bool
    """True: taken after every step (a viewer); False: with the samples, before the step's
    integration, when ``due``."""

    def due(self, sim_time: float) -> bool:
        """Whether a picture is wanted at simulated time ``sim_time`` (s)."""
        ...

    def take(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData, drawing: Drawing) -> None:
        """Take it at ``mj_data``'s state, with the rig's ``drawing``."""
        ...


class VideoSink:
    """A ``VideoRecorder`` (or any object with its ``capture_frame``) as a frame sink; a
    recorder without ``due`` is asked at every sample."""

    after_step = False

    def __init__(self, recorder: VideoRecorder) -> None:
        self.recorder = recorder

    def due(self, sim_time: float) -> bool:
        due = getattr(self.recorder, "due", None)
        return True if due is None else bool(due(sim_time))

    def take(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData, drawing: Drawing) -> None:
        rec = self.recorder
        arrows, lines = drawing.visuals(mj_model, mj_data)
        net = drawing.net_force_arrows(mj_model, mj_data) if getattr(rec, "show_net_force", False) else None
        more = {} if net is None else {"net_forces": net}
        rec.capture_frame(
            mj_model=mj_model,
            mj_data=mj_data,
            custom_arrows=arrows,
            custom_lines=lines,
            arrow_scale=drawing.arrow_scale,
            **more,
        )


class ViewerSync:
    """A ``SyncHook`` (a viewer's sync) as a frame sink: after every step."""

    after_step = True

    def __init__(self, hook: SyncHook) -> None:
        self.hook = hook

    def due(self, sim_time: float) -> bool:
        return True

    def take(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData, drawing: Drawing) -> None:
        arrows, lines = drawing.visuals(mj_model, mj_data)
        self.hook(mj_model, mj_data, arrows, lines)
