"""The recorder's writer thread keeps off the core the stepping thread runs on (Linux, 2+ cores)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from mjrig.runtime.files.cpu_apart import Apart, here
from mjrig.runtime.files.parquet_sink import ParquetSink

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs thread affinity and two cores",
)


def _allowed(tid: int) -> set[int]:
    """The cores thread ``tid`` of this process may run on, as the kernel says."""
    text = Path(f"/proc/self/task/{tid}/status").read_text()
    spec = next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Cpus_allowed_list"))
    cores: set[int] = set()
    for part in spec.split(","):
        a, _, b = part.partition("-")
        cores.update(range(int(a), int(b or a) + 1))
    return cores


def _on(core: int, fn) -> None:
    """Run ``fn`` in a thread pinned to ``core``."""

    def body():
        os.sched_setaffinity(0, {core})
        fn()

    t = threading.Thread(target=body)
    t.start()
    t.join()


def test_a_thread_keeps_off_a_core_and_takes_any_when_behind() -> None:
    cores = set(os.sched_getaffinity(0))
    seen = {}

    def body():
        apart = Apart()
        tid = threading.get_native_id()
        apart.keep_off(min(cores))
        seen["off"] = _allowed(tid)
        apart.keep_off(min(cores), behind=True)
        seen["behind"] = _allowed(tid)
        apart.keep_off(-1)
        seen["unknown"] = _allowed(tid)

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert seen["off"] == cores - {min(cores)}
    assert seen["behind"] == cores and seen["unknown"] == cores
    assert here() in cores


def test_the_writer_thread_runs_off_the_stepping_threads_core(tmp_path: Path) -> None:
    """Blocks written from a thread on the first core: the writer thread may then run on every
    core but that one, and the rows are all in the file."""
    first = min(os.sched_getaffinity(0))
    sink = ParquetSink(tmp_path / "rec.parquet", flush_seconds=0.01)
    cols = ["time", "wall_time", "a"]
    t = np.arange(5000, dtype=float)
    _on(first, lambda: sink.write_block(cols, np.column_stack([t, t, 2 * t])))
    writer = sink._thread  # this sink's writer thread (another test's may run in this process)
    deadline = 100
    while sink.rows_written < 5000 and deadline:
        threading.Event().wait(0.05)
        deadline -= 1
    assert first not in _allowed(writer.native_id)
    sink.close()
    df = pl.read_parquet(tmp_path / "rec.parquet")
    assert df.shape == (5000, 3) and df["a"].to_list() == (2 * t).tolist()
