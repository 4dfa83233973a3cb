"""Knocking at a Ray head, without Ray: how often, how long silence means lost, and the one line
said then; shared by the head watch inside a ``--ray`` command (``ray_cluster``) and the guard
process around it (``mjrig.cli.ray_guard``). Imports nothing heavy."""

from __future__ import annotations

import os
import socket
from pathlib import Path

__all__ = [
    "PROBE_S",
    "LOST_AFTER_S",
    "EXIT_GRACE_S",
    "GUARD_ENV",
    "answers",
    "lost_text",
    "tell_guard",
]

PROBE_S = 1.0
"""How often the head is knocked at while trials run (s)."""
LOST_AFTER_S = 5.0
"""How long the head may stay silent before the command stops with exit 5 (s)."""
EXIT_GRACE_S = 3.0
"""How long the command may take to end after the head was lost before it is ended (s)."""
GUARD_ENV = "MJRIG_RAY_GUARD"
"""Set in a guarded command's environment: the file it writes the head's GCS address (HOST:PORT)
into, and beside which (``.said``) it marks that it said the lost-head line itself."""


def answers(where: tuple[str, int]) -> bool:
    """Whether the head's GCS port (host, port) takes a connection within PROBE_S."""
    try:
        socket.create_connection(where, timeout=PROBE_S).close()
        return True
    except OSError:
        return False


def lost_text(address: str) -> str:
    """The one line of a lost head (after ``mjrig: ``)."""
    return (
        f"--ray {address}: the Ray head stopped answering; every finished trial is kept: start the cluster again "
        "and run the same command to go on"
    )


def tell_guard(*, gcs: str | None = None, said: bool = False) -> None:
    """Tell the guard process, if this command has one, the head's GCS address or that the
    lost-head line was said here."""
    note = os.environ.get(GUARD_ENV)
    if not note:
        return
    try:
        if gcs is not None:
            Path(note).write_text(gcs, encoding="utf-8")
        if said:
            Path(note + ".said").touch()
    except OSError:
        pass
