"""`mjrig run` of a bare 600-body model (9,606 columns, every signal group): every row recorded
and exit 0. A 4,096-row group of that width (315 MB) once overfilled the writer's 256 MiB queue
before the first row group was written: exit 5, "kept 0 rows". About 12 s: the model steps at
some 1,000 steps/s and 4,000 rows (300 MB) must pass the queue's bound to make the case."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
from e2e_util import mjrig

from mjrig.models.scale import many_bodies


def test_a_600_body_model_records_every_row(tmp_path: Path) -> None:
    model = tmp_path / "curtain.xml"
    model.write_text(many_bodies(600))
    out = tmp_path / "wide.parquet"
    r = mjrig("run", model, "--duration", 8, "--out", out, timeout=300)
    assert r.rc == 0, r
    assert r.err_lines[-1] == f"wrote 4000 rows to {out}", r
    assert "np.float64" not in r.stderr
    meta = pq.ParquetFile(out).metadata
    assert meta.num_rows == 4000 and meta.num_columns == 9606
    time = pl.read_parquet(out, columns=["time"])["time"].to_numpy()
    np.testing.assert_allclose(np.diff(time), 0.002, atol=1e-9)  # no row left out
    assert not (tmp_path / "wide.parquet.parts").exists()
