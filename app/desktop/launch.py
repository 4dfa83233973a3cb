"""Launching the desktop app: a session on the model, the simulation thread with its 3D view, and
the control panel on this (main) thread or, with ``panel_process=True`` (forced on macOS, where
``mjpython`` keeps the main thread for the viewer), in its own process fed through a pair of queues.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mjrig import commands as C
from mjrig.desktop.app import PANEL_FPS, PanelApp, echo
from mjrig.desktop.panel_client import QueueClient, SessionClient

if TYPE_CHECKING:
    from mjrig.desktop.sim_thread import SimThread
    from mjrig.session.kernel import Session

__all__ = ["open_app"]


def _panel_process_main(
    commands: Any, updates: Any, exit_after: float | None, geometry: tuple[int, int, int, int]
) -> None:
    """Entry point of the separate panel process."""
    PanelApp(QueueClient(commands, updates), exit_after=exit_after, geometry=geometry).run()


def _forward(session: Session, commands: Any, updates: Any, stop: threading.Event) -> None:
    """Simulation side of the panel process: commands in, snapshots and rows out (~60 Hz)."""
    while not stop.is_set():
        try:
            while True:
                session.submit(commands.get_nowait())
        except queue.Empty:
            pass
        except (EOFError, OSError):
            session.submit(C.Quit())
            return
        rows = session.drain_rows()
        try:  # a slow panel loses plot rows and stale snapshots, never blocks the simulation
            if rows:
                updates.put_nowait(("rows", rows))
            updates.put_nowait(("snapshot", session.latest()))
        except queue.Full:
            pass
        except (EOFError, OSError, ValueError):
            return
        time.sleep(1.0 / PANEL_FPS)


def open_app(
    path: Path | None,
    *,
    record: Path | None = None,
    exit_after: float | None = None,
    view_fps: float | None = None,
    panel_process: bool | None = None,
    show_viewer: bool = True,
    compare: Path | None = None,
) -> int:
    """Open the desktop app on ``path`` (default: the bundled default rig; a ``.parquet``: replay it,
    ``compare``: with a second recording over it; a sweep's results: the results view over the
    sweep's scenario; ``view_fps``: the 3D view's frame-rate ceiling, frames/s, see ``ViewHold``);
    returns the exit status."""
    from mjrig.desktop.sim_thread import SimThread
    from mjrig.desktop.windows import plan_layout, save_layout
    from mjrig.runtime import mjwarnings
    from mjrig.runtime.errors import ConfigError
    from mjrig.scenario.bundled import default_model
    from mjrig.session.kernel import Session

    if panel_process is None:
        panel_process = sys.platform == "darwin" or os.environ.get("MJRIG_PANEL_PROCESS") == "1"
    session = Session(watch_files=True)
    session.status.on_message = echo  # the status log also goes to the terminal the app runs in
    # MuJoCo's warnings go to the status log (and so to the terminal), never to MUJOCO_LOG.TXT
    with mjwarnings.route(mjwarnings.status_sink(session.log)):
        session.open(path if path is not None else default_model().scenario)  # ConfigError: exit 2
        if compare is not None:
            session.handle(C.OpenComparison(str(Path(compare).resolve())))
        if record is not None:
            session.handle(C.StartRecording(str(Path(record).resolve())))
        session.publish()  # the panel's first frame shows the model opened, not "no model"
        layout = plan_layout()
        sim = SimThread(session, show_viewer=show_viewer, geometry=layout.viewer, view_fps=view_fps)
        sim.start()
        status = 0
        panel_at: tuple[int, int, int, int] | None = None
        try:
            if panel_process:
                status = _run_panel_process(session, sim, exit_after, layout.panel)
            else:
                panel = PanelApp(SessionClient(session), exit_after=exit_after, geometry=layout.panel)
                status = panel.run()
                panel_at = panel.placement
        finally:
            viewer_at = sim.window.geometry
            session.submit(C.Quit())
            sim.stop()
            sim.join(10)
            session.close()
            save_layout(layout, viewer=viewer_at, panel=panel_at)
    if sim.failure is not None:
        raise ConfigError(f"the simulation stopped: {sim.failure}")
    return status


def _panel_python() -> str:
    """The interpreter for the panel process: a plain python next to ``mjpython`` (which would
    take the child's main thread for a viewer it does not have), else this one."""
    exe = Path(sys.executable)
    if "mjpython" in exe.name:
        for name in ("python3", "python"):
            if (exe.parent / name).exists():
                return str(exe.parent / name)
    return sys.executable


def _run_panel_process(
    session: Session, sim: SimThread, exit_after: float | None, geometry: tuple[int, int, int, int]
) -> int:
    ctx = mp.get_context("spawn")
    ctx.set_executable(_panel_python())
    commands, updates = ctx.Queue(), ctx.Queue(maxsize=240)
    proc = ctx.Process(target=_panel_process_main, args=(commands, updates, exit_after, geometry), name="mjrig-panel")
    proc.start()
    stop = threading.Event()
    pump = threading.Thread(target=_forward, args=(session, commands, updates, stop), daemon=True)
    pump.start()
    start = time.perf_counter()
    try:
        while proc.is_alive() and not session.unsaved.quit:
            if exit_after is not None and time.perf_counter() - start > exit_after + 5.0:
                break
            time.sleep(0.05)
    finally:
        stop.set()
        try:
            updates.put_nowait(("closed", None))
        except (queue.Full, ValueError, OSError):
            pass
        proc.join(5)
        if proc.is_alive():
            proc.terminate()
            proc.join(2)
    return 0
