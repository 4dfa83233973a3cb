"""The session's inbox: commands submitted from any thread, carried out in order on the
simulation thread.

``submit`` queues a command; ``run(handle, ...)`` carries out every queued command with
``handle``, a failing one reported as one error line (a command never takes the simulation
down). ``off_lock``: only the commands at the head of the queue that need no viewer lock (opening
a model compiles it while the 3D view goes on drawing), up to the first one that does, which is
kept for the next run.

Threading: ``submit`` and ``waiting`` on any thread; ``run`` on the simulation thread.
"""

from __future__ import annotations

import queue
from collections.abc import Callable

from mjrig import commands as C
from mjrig.runtime.errors import MjrigError

__all__ = ["Inbox"]


class Inbox:
    """Commands waiting to be carried out, oldest first."""

    def __init__(self, *, off_lock: tuple[type[C.Command], ...]) -> None:
        self._commands: queue.Queue[C.Command] = queue.Queue()
        self._held: C.Command | None = None  # taken from the queue by an off-lock pass, runs next
        self._off_lock = off_lock

    def submit(self, cmd: C.Command) -> None:
        """Queue ``cmd`` (any thread)."""
        self._commands.put(cmd)

    def waiting(self) -> bool:
        """Whether a command waits to be carried out."""
        return self._held is not None or not self._commands.empty()

    def run(
        self, handle: Callable[[C.Command], None], *, log: Callable[[str, str], None], off_lock: bool = False
    ) -> None:
        """Carry out the waiting commands in order with ``handle`` (``off_lock``: those at the
        head that need no viewer lock); a MjrigError, or any other exception, is one error line
        for ``log``."""
        while True:
            if self._held is not None:
                cmd, self._held = self._held, None
            else:
                try:
                    cmd = self._commands.get_nowait()
                except queue.Empty:
                    return
            if off_lock and not isinstance(cmd, self._off_lock):
                self._held = cmd
                return
            try:
                handle(cmd)
            except MjrigError as exc:
                log("error", str(exc))
            except Exception as exc:  # a command must never take the simulation down
                log("error", f"{type(cmd).__name__} failed: {type(exc).__name__}: {exc}")
