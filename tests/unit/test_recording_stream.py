"""The recording's file is written as the run goes, a row group at a time, and its footer put
together at close from theirs: on every bundled rig it holds exactly what one row group written
at close holds -- the same schema, metadata and numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from mjrig.headless import prepare, run
from mjrig.runtime.files import _parquet_pace
from mjrig.scenario.bundled import bundled_models
from mjrig.scenario.targets import load_target

RIGS = [m for m in bundled_models() if m.scenario is not None]


def _record(toml: Path, out: Path) -> pq.ParquetFile:
    sc = load_target(toml)
    sc.video = None  # the recordings are compared: a rig's video (software-rendered, 3 s) is not
    setup = prepare(sc, out=out, duration=1.0)
    assert run(setup) >= 100  # steps
    return pq.ParquetFile(out)


@pytest.mark.parametrize("rig", RIGS, ids=[m.name for m in RIGS])
def test_streamed_recording_equals_the_merged_one(rig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    with monkeypatch.context() as m:  # a row group every 64 kB
        m.setattr(_parquet_pace, "ROW_GROUP_BYTES", 64 * 1024)
        m.setattr(_parquet_pace, "ROW_GROUP_ROWS", 1)
        streamed = _record(rig.scenario, tmp_path / "streamed.parquet")
    with monkeypatch.context() as m:  # every row in one row group at close
        m.setattr(_parquet_pace, "ROW_GROUP_BYTES", 2**40)
        merged = _record(rig.scenario, tmp_path / "merged.parquet")
    assert merged.metadata.num_row_groups == 1
    a, b = streamed.read(), merged.read()
    assert a.num_rows == b.num_rows >= 100
    assert a.column_names == b.column_names
    meta_a, meta_b = dict(a.schema.metadata), dict(b.schema.metadata)
    for key in (b"mjrig.start_time",):  # when each run started
        meta_a.pop(key, None), meta_b.pop(key, None)
    assert meta_a == meta_b
    assert [f.metadata for f in a.schema] == [f.metadata for f in b.schema]
    for name in a.column_names:
        if name == "wall_time":
            continue
        x, y = a.column(name), b.column(name)
        assert x.null_count == y.null_count, name
        np.testing.assert_array_equal(x.to_numpy(zero_copy_only=False), y.to_numpy(zero_copy_only=False), err_msg=name)
    assert sorted(p.name for p in tmp_path.iterdir() if p != work) == ["merged.parquet", "streamed.parquet"]
