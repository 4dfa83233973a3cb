"""A recording process killed mid-write: what the crash-safe segments keep is a readable prefix."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from mjrig.runtime.errors import MjrigError
from mjrig.runtime.files.parquet_sink import recover, segment_dir
from tests.unit.test_parquet_sink import REPO_ROOT
from tests.waiting import wait_for

CHILD = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    import numpy as np
    from mjrig.runtime.files.parquet_sink import ParquetSink

    sink = ParquetSink({path!r}, metadata={{"who": "child"}}, units={{"time": "s"}},
                       flush_seconds=0.2)
    cols = ["time", "wall_time", "a"]
    n, t0 = 0, time.monotonic()
    print("start", 0, t0, flush=True)
    while True:
        if n >= 2000 and len(cols) == 3:
            cols = cols + ["b"]
        t = np.arange(n, n + 50, dtype=np.float64)
        extra = [t * 3] if len(cols) == 4 else []
        sink.write_block(cols, np.column_stack([t, np.full(50, time.monotonic() - t0), t * 2] + extra))
        n += 50
        print("rows", n, time.monotonic(), flush=True)
        time.sleep(0.005)
""")


def test_crash_then_recover_keeps_a_prefix(tmp_path: Path) -> None:
    out = tmp_path / "crash.parquet"
    code = CHILD.format(root=str(REPO_ROOT), path=str(out))
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path
    )
    reports: list[tuple[int, float]] = []
    started = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            kind, count, stamp = line.split()
            reports.append((int(count), float(stamp)))
            started.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not started.wait(60):
            proc.kill()
            pytest.fail(f"child did not start: {proc.communicate()[1]}")
        # killed once rows past the new column (2000) were handed over a second before: the
        # writer's flush interval (0.2 s) has surely passed for them
        wait_for(
            lambda: any(c >= 2000 and stamp <= time.monotonic() - 1.0 for c, stamp in list(reports)),
            what="rows past the new column handed over a second ago",
            timeout=60,
        )
        kill_time = time.monotonic()  # CLOCK_MONOTONIC is shared by all processes
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(10)
    reader.join(10)
    assert proc.returncode == -signal.SIGKILL
    assert not out.exists()

    handed = max(c for c, _ in reports)
    safe = max(c for c, stamp in reports if stamp <= kill_time - 1.0)
    assert safe >= 2000  # the test really ran past the new column

    path, rows = recover(out)
    assert path == out
    table = pq.read_table(out)
    assert table.num_rows == rows
    # a contiguous prefix: the kill may fall between write_block and the print (+50 rows)
    assert safe <= rows <= handed + 50, (safe, rows, handed)
    t = np.arange(rows, dtype=np.float64)
    np.testing.assert_array_equal(table.column("time").to_numpy(), t)
    np.testing.assert_array_equal(table.column("a").to_numpy(), t * 2)
    b = table.column("b").to_numpy(zero_copy_only=False)
    np.testing.assert_array_equal(b, np.where(t >= 2000, t * 3, np.nan))
    assert table.column_names == ["time", "wall_time", "a", "b"]
    schema = pq.read_schema(out)
    assert schema.metadata[b"who"] == b"child"
    assert schema.field("time").metadata == {b"unit": b"s"}
    assert not segment_dir(out).exists()
    with pytest.raises(MjrigError):
        recover(out)  # already recovered
