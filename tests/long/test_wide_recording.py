"""The recorder at any width, and a writer slower than the stepping: every row handed over is in
the file. Each test hands over 300-330 MB of rows (past the recorder's 256 MiB queue) to make its
case, so each takes a few seconds."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

from mjrig.runtime.files import _parquet_stream
from mjrig.runtime.files.parquet_sink import ParquetSink


def _columns(n: int) -> list[str]:
    return ["time", "wall_time", *(f"Bodies/b{i}:x" for i in range(n - 2))]


def _block(first: int, rows: int, width: int) -> np.ndarray:
    """Rows ``first``.. of ``width`` columns: time = row / 1000 s, signal j = j (compresses well)."""
    block = np.broadcast_to(np.arange(width, dtype=float), (rows, width)).copy()
    block[:, 0] = (first + np.arange(rows)) / 1000
    block[:, 1] = block[:, 0]
    return block


def _slow_appends(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Each row group takes ``seconds`` more to write (a slow disk)."""
    real = _parquet_stream.RowGroupFile.append

    def append(self, blocks):  # noqa: ANN001
        time.sleep(seconds)
        return real(self, blocks)

    monkeypatch.setattr(_parquet_stream.RowGroupFile, "append", append)


def _check_every_row(out: Path, rows: int, width: int) -> pq.FileMetaData:
    meta = pq.ParquetFile(out).metadata
    assert (meta.num_rows, meta.num_columns) == (rows, width)
    back = pl.read_parquet(out, columns=["time", "Bodies/b0:x", f"Bodies/b{width - 3}:x"])
    np.testing.assert_array_equal(back["time"].to_numpy(), np.arange(rows) / 1000)
    assert (back["Bodies/b0:x"] == 2.0).all() and (back[f"Bodies/b{width - 3}:x"] == width - 1.0).all()
    return meta


def test_a_10000_column_recording_keeps_every_row_in_small_row_groups(tmp_path: Path) -> None:
    """A 4,096-row group of 10,000 columns is 328 MB, past the queue's 256 MiB: the row groups'
    floor adapts to the width and the writer is never behind."""
    width, rows, per = 10_000, 3_600, 100
    cols = _columns(width)
    out = tmp_path / "wide.parquet"
    with ParquetSink(out, flush_seconds=0.5) as sink:
        for first in range(0, rows, per):
            sink.write_block(cols, _block(first, per, width))
            assert sink.error is None
    assert sink.error is None and sink.rows_written == rows
    meta = _check_every_row(out, rows, width)
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    assert meta.num_row_groups >= 4 and max(sizes) <= 1024, sizes


def test_a_slow_writer_makes_the_stepping_wait_and_loses_no_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer takes 0.3 s more per row group than its disk needs: ``write_block`` waits once
    the queue is full (the headless run steps at the disk's pace) and every row is written."""
    _slow_appends(monkeypatch, 0.3)
    width, rows, per = 1_000, 40_000, 100
    cols = _columns(width)
    out = tmp_path / "slow.parquet"
    with ParquetSink(out, flush_seconds=0.5) as sink:
        t0 = time.monotonic()
        for first in range(0, rows, per):
            sink.write_block(cols, _block(first, per, width))
            assert sink.error is None
        handed = time.monotonic() - t0
    assert sink.error is None and sink.rows_dropped == 0 and sink.rows_written == rows
    assert sink.backlog.waits > 0 and sink.backlog.waited_seconds > 0.3
    assert handed >= sink.backlog.waited_seconds
    _check_every_row(out, rows, width)


def test_a_recorder_that_keeps_real_time_says_it_is_behind_and_keeps_what_it_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app's recorder (``wait_when_behind=False``) never waits on a slow writer: it says
    "recording behind" while it is, and the file has every row handed over."""
    _slow_appends(monkeypatch, 0.3)
    width, rows, per = 1_000, 40_000, 100
    cols = _columns(width)
    out = tmp_path / "app.parquet"
    said: list[str] = []
    sink = ParquetSink(out, flush_seconds=0.5, wait_when_behind=False)
    slowest = 0.0
    for first in range(0, rows, per):
        t0 = time.perf_counter()
        sink.write_block(cols, _block(first, per, width))
        slowest = max(slowest, time.perf_counter() - t0)
        if sink.behind:
            said.append(sink.behind)
    assert said and said[-1].startswith("recording behind: ") and "every row kept" in said[-1], said[-1:]
    assert "np.float64" not in said[-1]
    assert slowest < 0.25  # never a row group's write (0.3 s and more)
    done = threading.Event()
    threading.Thread(target=lambda: (sink.close(), done.set()), daemon=True).start()
    assert done.wait(120)
    assert sink.error is None and sink.rows_dropped == 0 and sink.rows_written == rows
    assert sink.behind is None
    _check_every_row(out, rows, width)
