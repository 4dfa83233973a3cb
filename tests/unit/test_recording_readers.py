"""A recording (LZ4 pages of byte-stream-split floats) reads back the same in polars, pyarrow and
DuckDB, every value and null where it was written: as the recorder closes it, and as ``recover``
makes it from the parts a killed run left."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

from mjrig.runtime.files.parquet_sink import ParquetSink, recover, segment_dir
from tests.waiting import wait_for

COLUMNS = ["time", "wall_time", "Joints/hinge:qpos", "Bodies/a/b:x", "Loads/pull:fx"]


def blocks() -> list[np.ndarray]:
    """Rows of physics-like signals (smooth, a NaN, a column that is NaN in one block)."""
    rng = np.random.default_rng(7)
    out, t0 = [], 0.0
    for i in range(6):
        n = 500 + 37 * i
        t = t0 + 0.002 * np.arange(n)
        block = np.column_stack(
            [t, t * 1.01, np.sin(3.0 * t), 0.2 + 1e-3 * np.cumsum(rng.normal(size=n)), 40.0 * np.cos(t)]
        )
        out.append(block)
        t0 = t[-1] + 0.002
    out[2][10, 2] = np.nan
    out[4][:, 4] = np.nan
    return out


def read_three(path: Path) -> dict[str, np.ndarray]:
    """The file's columns as (rows x columns) arrays, NaN for null, by each reader."""
    polars = pl.read_parquet(path).select(COLUMNS).to_numpy().astype(float)
    table = pq.read_table(path, columns=COLUMNS)
    arrow = np.column_stack([table.column(c).to_numpy(zero_copy_only=False) for c in COLUMNS]).astype(float)
    names = ", ".join(f'"{c}"' for c in COLUMNS)
    rows = duckdb.sql(f"SELECT {names} FROM read_parquet('{path}')").fetchall()
    duck = np.array([[np.nan if v is None else v for v in row] for row in rows], dtype=float)
    return {"polars": polars, "pyarrow": arrow, "duckdb": duck}


@pytest.mark.parametrize("how", ["closed", "recovered"])
def test_every_reader_reads_every_value(tmp_path: Path, how: str) -> None:
    out = tmp_path / "run.parquet"
    written = blocks()
    sink = ParquetSink(out, flush_seconds=0.01)
    for i, block in enumerate(written):
        sink.write_block(COLUMNS, block.copy())
        wait_for(lambda: sink.rows_written == sum(len(b) for b in written[: i + 1]), what="the rows written")
    if how == "recovered":
        killed = tmp_path / "killed.parquet"
        shutil.copytree(segment_dir(out), segment_dir(killed))
        sink.close()
        out, _rows = recover(killed)
    else:
        sink.close()
    meta = pq.ParquetFile(out).metadata.row_group(0).column(3)
    assert (meta.compression, "BYTE_STREAM_SPLIT" in meta.encodings) == ("LZ4", True)
    expected = np.concatenate(written)
    for reader, got in read_three(out).items():
        np.testing.assert_array_equal(got, expected, err_msg=reader)  # NaN where null
