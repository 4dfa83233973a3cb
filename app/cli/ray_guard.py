"""A ``--ray`` command under a guard. Ray's client can block inside a call for 60 s, holding the
interpreter, when the head is lost (then it ends the process itself, exit 1, with its own log):
no thread of the command can act then. So ``mjrig sweep|optimize|fit --ray`` runs the command in
a child process, and this process, which never imports Ray, knocks at the head the child joined
(``campaign.ray_head``). The child's own watch ends it first with exit 5 when it can; when the
head has been silent for ``LOST_AFTER_S + EXIT_GRACE_S`` and the child still runs, the guard
kills it, says the one line (unless the child did) and exits 5. Everything finished is on disk
by then (results parts and study storage survive a kill); the same command resumes.

Signals: SIGTERM is passed on to the child (which stops as a command does: 143); a terminal's
Ctrl+C reaches both processes, so the guard leaves SIGINT to the child."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from mjrig.campaign.ray_head import EXIT_GRACE_S, GUARD_ENV, LOST_AFTER_S, PROBE_S, answers, lost_text
from mjrig.runtime.errors import OUTPUT_FAILED

__all__ = ["guarded", "is_guarded", "drop_ray_lines"]

MJRIG_STATUSES = frozenset({0, 2, 3, 4, 5, 130, 143})
"""The exit statuses mjrig's commands end with themselves (CONTRACT 1); any other (1, or death
by a signal) came from elsewhere: from Ray's client when its head went."""
RAY_LINE = re.compile(rb"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ [DIWEF] \d+ \d+\] \S+:\d+: ")
"""A line Ray's C++ client writes on file descriptor 2 (``[2026-12-07 03:45:10,276 E 5499 5521]
task_manager.cc:1545: Failed to push error to driver...``): its log files keep it."""


def is_guarded() -> bool:
    """Whether this process is a guarded command (the child)."""
    return bool(os.environ.get(GUARD_ENV))


def guarded(argv: Sequence[str], *, address: str) -> int:
    """Run ``mjrig argv`` (a command with ``--ray address``) in a child process under the guard;
    the child's exit status, or 5 when the head was lost and the child could not end itself."""
    with tempfile.TemporaryDirectory(prefix="mjrig-ray-guard-") as folder:
        note = Path(folder) / "head"
        child = subprocess.Popen([sys.executable, "-m", "mjrig", *argv], env={**os.environ, GUARD_ENV: str(note)})
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: child.send_signal(signal.SIGTERM))
        old_int = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            return _watch(child, note, address)
        finally:
            signal.signal(signal.SIGTERM, previous)
            signal.signal(signal.SIGINT, old_int)


def _watch(child: subprocess.Popen, note: Path, address: str) -> int:
    where: tuple[str, int] | None = None
    silent_since: float | None = None
    while True:
        try:
            status = child.wait(timeout=PROBE_S)
        except subprocess.TimeoutExpired:
            status = None
        if where is None:
            where = _joined(note)
        if status is not None:
            if status in MJRIG_STATUSES or where is None or not _silent(where):
                return status
            # Ray's client ended the child itself (exit 1, nothing said: its log is off) as the
            # head went: that is a lost head, said as one
            return _lost(note, address)
        if where is None:
            continue  # not joined yet
        if answers(where):
            silent_since = None
            continue
        silent_since = silent_since if silent_since is not None else time.monotonic()
        if time.monotonic() - silent_since < LOST_AFTER_S + EXIT_GRACE_S:
            continue
        child.kill()  # first: nothing the child writes as it fails follows the line
        child.wait()
        return _lost(note, address)


def _lost(note: Path, address: str) -> int:
    """The lost-head line, unless the child said it (``.said`` beside ``note``); exit 5."""
    if not Path(str(note) + ".said").exists():
        sys.stderr.write(f"mjrig: {lost_text(address)}\n")
        sys.stderr.flush()
    return OUTPUT_FAILED


def _joined(note: Path) -> tuple[str, int] | None:
    """The head's GCS (host, port) the child wrote into ``note`` once it joined, else None."""
    try:
        host, _, port = note.read_text(encoding="utf-8").strip().rpartition(":")
        return (host, int(port))
    except (OSError, ValueError):
        return None


def _silent(where: tuple[str, int]) -> bool:
    """Whether the head at ``where`` does not answer, twice half a second apart."""
    if answers(where):
        return False
    time.sleep(0.5)
    return not answers(where)


def drop_ray_lines() -> None:
    """In a guarded command (the child): Ray's C++ client writes its log lines straight onto file
    descriptor 2 (as its head goes: "Failed to push error to driver", before mjrig's one line).
    From here on Python's ``sys.stderr`` writes to the real stderr (a terminal stays one: bars
    are drawn), and descriptor 2 goes through a thread that drops Ray's lines and passes on the
    rest."""
    sys.stderr.flush()
    real = os.dup(2)
    read, write = os.pipe()
    os.dup2(write, 2)
    os.close(write)
    sys.stderr = open(real, "w", encoding="utf-8", errors="backslashreplace", buffering=1)  # noqa: SIM115 - for the process

    def passing() -> None:
        with open(read, "rb", buffering=0) as pipe:
            for line in pipe:
                if not RAY_LINE.match(line):
                    try:
                        os.write(real, line)
                    except OSError:
                        return

    threading.Thread(target=passing, name="mjrig-native-stderr", daemon=True).start()
