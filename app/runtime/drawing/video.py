"""VideoRecorder: offscreen frames at a fixed simulated frame rate, streamed to ffmpeg.

Frames are due by simulated time (one every 1/fps s), not by step. Rendering happens on the
stepping thread (an OpenGL context belongs to the thread that made it); encoding happens on a
writer thread fed through a bounded queue, so memory stays bounded however long the video.
Headless machines render through EGL or OSMesa (``MUJOCO_GL``), picked before mujoco loads.
"""

from __future__ import annotations

import os
import queue
import shutil
import threading
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from mjrig.runtime.drawing.framing import frame_free_camera
from mjrig.runtime.drawing.visuals import ArrowConfig, ArrowScale, Color, Line, draw_all
from mjrig.runtime.errors import ConfigError, MjrigError
from mjrig.runtime.points import find_id

__all__ = ["VideoRecorder", "CameraName", "find_ffmpeg", "NET_FORCE_COLOR"]

NET_FORCE_COLOR = Color.NET_FORCE.rgba  # violet: net rig force on a body
CameraName = str
"""The name of a camera of the model (``<camera name=...>``)."""
_QUEUE_FRAMES = 32


def find_ffmpeg() -> str:
    """An ffmpeg binary: on PATH, else the one the imageio-ffmpeg package ships."""
    exe = shutil.which("ffmpeg")
    if exe:
        return exe
    try:
        import imageio_ffmpeg

        return imageio_ffmpeg.get_ffmpeg_exe()
    except Exception:  # noqa: BLE001 - any failure means: no encoder
        raise ConfigError("no video encoder: install ffmpeg or the imageio-ffmpeg package") from None


@dataclass(eq=False)
class VideoRecorder:
    """Records a video of a run to ``path`` (``.mp4`` or ``.gif``) from a model camera or the free camera.

    ``camera_name`` None uses a free camera framing the model (and ``frame_points``) as it is at the
    first frame, from the model's default direction (``mjrig.runtime.drawing.framing``). ``show_loads`` draws the rig's
    arrows, ``show_proximities`` its lines, ``show_contacts`` MuJoCo's contact points and forces,
    ``show_net_force`` the net rig force on each loaded body (violet, at its centre of mass).
    ``fps`` is frames per simulated second; ``width``/``height`` in pixels must fit the model's
    offscreen buffer (``<visual><global offwidth offheight>``).

    Threading: ``capture_frame`` runs on the stepping thread; a writer thread encodes.
    """

    path: Path
    _: KW_ONLY
    camera_name: CameraName | None = None
    show_loads: bool = False
    show_net_force: bool = False
    show_contacts: bool = False
    show_proximities: bool = False
    fps: int = 30
    width: int = 640
    height: int = 480
    on_progress: Callable[[int, int], None] | None = None
    camera: mujoco.MjvCamera | None = None
    """A live camera to follow instead of ``camera_name`` (e.g. the viewer's, in the app)."""
    frame_points: Callable[[mujoco.MjModel, mujoco.MjData], np.ndarray] | None = None
    """Without ``camera``/``camera_name``: extra world points (m, (n, 3)) the free camera frames
    besides the model, e.g. the rig's (``mjrig.runtime.drawing.framing.rig_points``)."""
    _frames: list = field(default_factory=list)  # the reference's field; frames are streamed instead

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        if self.path.suffix.lower() not in (".mp4", ".gif"):
            raise ConfigError(f"video path must end in .mp4 or .gif, got '{self.path.name}'")
        if not (isinstance(self.fps, int) and self.fps > 0):
            raise ConfigError(f"video fps must be a positive whole number, got {self.fps!r}")
        self._renderer: mujoco.Renderer | None = None
        self._model: mujoco.MjModel | None = None
        self._next_time: float | None = None
        self._queue: queue.Queue[np.ndarray | None] = queue.Queue(maxsize=_QUEUE_FRAMES)
        self._thread: threading.Thread | None = None
        self.error: str | None = None
        self.frames_captured = 0
        self.frames_written = 0
        self._closed = False
        self._vopt = mujoco.MjvOption()
        self._camera: mujoco.MjvCamera | int | str = -1

    # --- set-up ------------------------------------------------------------------------------
    def check(self, model: mujoco.MjModel) -> None:
        """Validate camera, size, path and encoder against ``model`` (ConfigError, one line)."""
        if self.camera_name is not None:
            find_id(model, mujoco.mjtObj.mjOBJ_CAMERA, self.camera_name, kind="camera", count=model.ncam)
        ow, oh = int(model.vis.global_.offwidth), int(model.vis.global_.offheight)
        if not (0 < self.width <= ow and 0 < self.height <= oh):
            raise ConfigError(
                f"video size {self.width}x{self.height} exceeds the model's offscreen buffer {ow}x{oh}"
                f' (raise it with <visual><global offwidth="{self.width}" '
                f'offheight="{self.height}"/></visual>)'
            )
        parent = self.path.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot write video to {self.path}: {exc.strerror or exc}") from None
        if not os.access(parent, os.W_OK) or self.path.is_dir():
            raise ConfigError(f"cannot write video to {self.path}")
        find_ffmpeg()

    def _open(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        self.check(model)
        import mediapy

        mediapy.set_ffmpeg(find_ffmpeg())
        try:
            self._renderer = mujoco.Renderer(model, self.height, self.width)
        except Exception as exc:
            raise MjrigError(
                f"cannot render offscreen (MUJOCO_GL={os.environ.get('MUJOCO_GL', 'default')}): "
                f"{' '.join(str(exc).split())}"
            ) from None
        self._model = model
        if self.camera is not None:
            self._camera = self.camera
        elif self.camera_name is not None:
            self._camera = self.camera_name
        else:  # framed once, on the first frame, as the app's first view is
            cam = mujoco.MjvCamera()
            points = self.frame_points(model, data) if self.frame_points is not None else None
            frame_free_camera(model, data, cam, aspect=self.width / self.height, points=points)
            self._camera = cam
        self._vopt.flags[mujoco.mjtVisFlag.mjVIS_CONTACTPOINT] = self.show_contacts
        self._vopt.flags[mujoco.mjtVisFlag.mjVIS_CONTACTFORCE] = self.show_contacts
        codec = "gif" if self.path.suffix.lower() == ".gif" else "h264"
        writer = mediapy.VideoWriter(self.path, (self.height, self.width), fps=self.fps, codec=codec)
        writer.__enter__()
        self._thread = threading.Thread(target=self._encode, args=(writer,), name="mjrig-video", daemon=True)
        self._thread.start()

    # --- per step ----------------------------------------------------------------------------
    def due(self, sim_time: float) -> bool:
        """Whether a frame is due at simulated time ``sim_time`` (s). If time went back (a
        reset), frames start again from there."""
        if self._next_time is not None and sim_time + 2.0 / self.fps < self._next_time:
            self._next_time = None
        return not self._closed and (self._next_time is None or sim_time + 1e-9 >= self._next_time)

    def capture_frame(
        self,
        mj_model: mujoco.MjModel,
        mj_data: mujoco.MjData,
        custom_arrows: list[ArrowConfig],
        custom_lines: Sequence[Line],
        net_forces: list[ArrowConfig] | None = None,
        arrow_scale: ArrowScale | None = None,
    ) -> None:
        """Render and queue a frame if one is due (blocks only if the encoder is far behind)."""
        if not self.due(mj_data.time):
            return
        if self.error is not None:
            raise MjrigError(f"video {self.path}: {self.error}")
        if self._renderer is None or self._model is not mj_model:
            if self._renderer is not None:
                raise MjrigError("a VideoRecorder records one model; start another for a new model")
            self._open(mj_model, mj_data)
        assert self._renderer is not None
        arrows = [*(custom_arrows if self.show_loads else []), *((net_forces or []) if self.show_net_force else [])]
        frame = render_with_rig(
            self._renderer,
            mj_model,
            mj_data,
            camera=self._camera,
            option=self._vopt,
            arrows=arrows,
            lines=custom_lines if self.show_proximities else [],
            scale=arrow_scale,
        ).copy()
        self._put(frame)
        self.frames_captured += 1
        start = self._next_time if self._next_time is not None else mj_data.time
        self._next_time = start + 1.0 / self.fps

    def _put(self, item: np.ndarray | None) -> None:
        while True:
            try:
                self._queue.put(item, timeout=0.5)
                return
            except queue.Full:
                if self._thread is None or not self._thread.is_alive():
                    raise MjrigError(f"video {self.path}: the encoder stopped: {self.error}") from None

    def _encode(self, writer) -> None:
        try:
            while True:
                frame = self._queue.get()
                if frame is None:
                    break
                if self.error is None:
                    writer.add_image(frame)
                    self.frames_written += 1
        except Exception as exc:  # noqa: BLE001 - reported by capture_frame/save, never silent
            self.error = " ".join(str(exc).split()) or type(exc).__name__
            while self._queue.get() is not None:  # drain so the producer never blocks
                pass
        finally:
            try:
                writer.__exit__(None, None, None)
            except Exception as exc:  # noqa: BLE001
                self.error = self.error or " ".join(str(exc).split())

    # --- end ---------------------------------------------------------------------------------
    def save(self) -> Path | None:
        """Finish encoding and close the file; safe twice. Raises MjrigError if encoding failed."""
        if self._closed:
            return self.path if self.frames_written else None
        self._closed = True
        if self._thread is not None:
            self._put(None)
            if self.on_progress is not None:
                while self._thread.is_alive():
                    self.on_progress(self.frames_written, self.frames_captured)
                    self._thread.join(0.1)
                self.on_progress(self.frames_written, self.frames_captured)
            self._thread.join()
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        if self.error is not None:
            raise MjrigError(f"video {self.path} failed: {self.error}")
        return self.path if self.frames_written else None

    close = save


def render_with_rig(
    renderer: mujoco.Renderer,
    mj_model: mujoco.MjModel,
    mj_data: mujoco.MjData,
    *,
    camera: mujoco.MjvCamera | int | str,
    option: mujoco.MjvOption,
    arrows: list[ArrowConfig],
    lines: Sequence[Line],
    extra: Callable[[mujoco.MjvScene], Any] | None = None,
    scale: ArrowScale | None = None,
) -> np.ndarray:
    """One offscreen picture (height, width, 3 uint8) of ``mj_data`` seen from ``camera``, with the
    rig's ``arrows`` and ``lines`` drawn in (videos and screenshots alike); ``extra`` adds more
    to the scene before it is rendered (a compared recording's ghost)."""
    renderer.update_scene(mj_data, camera=camera, scene_option=option)
    draw_all(mj_model, renderer.scene, arrows, lines, scale=scale)
    if extra is not None:
        extra(renderer.scene)
    return renderer.render()
