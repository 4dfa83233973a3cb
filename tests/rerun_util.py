"""A Rerun receiver for the streaming tests: ``rerun --port PORT --save FILE`` (rerun-sdk's own
viewer binary, with no window) takes what a stream sends and writes it to an ``.rrd`` file, which
the tests read back with rerun-sdk's ``RrdReader``."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


@contextlib.contextmanager
def rerun_saver(out: Path, *, timeout: float = 30.0) -> Iterator[int]:
    """A receiver saving to ``out`` while the block runs; yields its port. On leaving, waits until
    ``out`` stops growing (what was sent is written), then stops the receiver with Ctrl+C."""
    port = free_port()
    exe = Path(sys.executable).parent / "rerun"
    proc = subprocess.Popen(
        [str(exe), "--port", str(port), "--save", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        end = time.monotonic() + timeout
        while not _answers(port):
            if proc.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"the Rerun receiver did not start on port {port}")
            time.sleep(0.1)
        yield port
        size, still = -1, 0
        while still < 3 and time.monotonic() < end + timeout:
            now = out.stat().st_size if out.exists() else 0
            still = still + 1 if now == size else 0
            size = now
            time.sleep(0.3)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
