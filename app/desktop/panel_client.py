"""How the control panel reaches the simulation: a *client* with ``submit(command)``, the
``latest()`` snapshot, ``drain_rows()`` for the live plots and ``closed``. In one process the
client is the Session itself (``SessionClient``); with the panel in its own process (macOS's
``mjpython``, or ``--panel-process``) it is a pair of queues (``QueueClient``).
"""

from __future__ import annotations

import queue
from typing import Any, Protocol

import numpy as np

from mjrig import commands as C

__all__ = ["Client", "SessionClient", "QueueClient"]


class Client(Protocol):
    """What the panel needs from the simulation side."""

    def submit(self, cmd: C.Command) -> None: ...
    def latest(self) -> C.PanelState: ...
    def drain_rows(self) -> list[tuple[list[str], np.ndarray]]: ...
    @property
    def closed(self) -> bool: ...


class SessionClient:
    """In-process client: the Session itself (closed once it wants to quit)."""

    def __init__(self, session: Any) -> None:
        self.session = session

    def submit(self, cmd: C.Command) -> None:
        self.session.submit(cmd)

    def latest(self) -> C.PanelState:
        return self.session.latest()

    def drain_rows(self) -> list[tuple[list[str], np.ndarray]]:
        return self.session.drain_rows()

    @property
    def closed(self) -> bool:
        return bool(self.session.unsaved.quit)


class QueueClient:
    """Panel-process client: commands go out on one queue, snapshots and rows come in on another.

    Threading: used from the panel's main thread only.
    """

    def __init__(self, commands: Any, updates: Any) -> None:
        self._commands = commands
        self._updates = updates
        self._snapshot = C.PanelState()
        self._rows: list[tuple[list[str], np.ndarray]] = []
        self._closed = False

    def _pump(self) -> None:
        while True:
            try:
                kind, payload = self._updates.get_nowait()
            except queue.Empty:
                return
            except (EOFError, OSError):
                self._closed = True
                return
            if kind == "snapshot":
                self._snapshot = payload
            elif kind == "rows":
                self._rows.extend(payload)
            elif kind == "closed":
                self._closed = True

    def submit(self, cmd: C.Command) -> None:
        try:
            self._commands.put(cmd)
        except (EOFError, OSError, ValueError):
            self._closed = True

    def latest(self) -> C.PanelState:
        self._pump()
        return self._snapshot

    def drain_rows(self) -> list[tuple[list[str], np.ndarray]]:
        self._pump()
        rows, self._rows = self._rows, []
        return rows

    @property
    def closed(self) -> bool:
        return self._closed
