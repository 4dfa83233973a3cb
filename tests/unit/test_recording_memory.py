"""A recording's memory stays flat however many row groups it writes: the writer keeps a few
bytes of footer per column chunk, not pyarrow's metadata objects (about 860 bytes each, 70 kB a
row group of 80 columns: a 26-minute recording grew 280 MB). About 5 s: 700 row groups encoded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from mjrig.runtime.files import _parquet_stream
from mjrig.runtime.files._parquet_stream import RowGroupFile


def _rss_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def test_row_groups_do_not_grow_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_parquet_stream, "_datasync", lambda fd: None)  # memory is the matter, not the disk
    cols = ("time", "wall_time", *(f"Joints/j{i}:qpos" for i in range(78)))
    part = RowGroupFile(tmp_path, 1, cols, {"who": "test"}, {"time": "s"})
    block = np.tile(np.arange(80, dtype=float), (50, 1))
    for _ in range(100):  # the allocator's and pyarrow's pools warmed up
        part.append([block])
    before, groups = _rss_kib(), 600
    for _ in range(groups):
        part.append([block])
    grown = (_rss_kib() - before) * 1024 / groups
    assert grown < 10_000, f"{grown:.0f} bytes a row group of 80 columns"
    assert part.finish(tmp_path / "out.parquet", {"who": "test"}, {"time": "s"}) == 700 * 50
    f = pq.ParquetFile(tmp_path / "out.parquet")
    assert f.metadata.num_row_groups == 700 and f.metadata.num_rows == 35_000
    assert f.schema_arrow.metadata[b"who"] == b"test" and f.schema_arrow.field("time").metadata == {b"unit": b"s"}
    np.testing.assert_array_equal(f.read_row_group(699).column("Joints/j77:qpos").to_numpy(), np.full(50, 79.0))
