"""`mjrig run` whose output folder turns unwritable before its last rename, and `mjrig recover`
of parts whose index or data is damaged: the line says where the rows are, recover gets them,
and nothing it found is lost."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from e2e_util import MODELS, mjrig, mjrig_popen

from mjrig.runtime.files.parquet_sink import ParquetSink, segment_dir
from tests.unit.test_parquet_sink import make_block
from tests.waiting import wait_for


def _immutable(folder: Path, on: bool) -> bool:
    """``chattr +i``/``-i`` on ``folder``: nothing in it can be created, renamed or removed,
    even by root (for whom a chmod 555 changes nothing); False where the file system cannot."""
    done = subprocess.run(["chattr", "+i" if on else "-i", str(folder)], capture_output=True)
    return done.returncode == 0


def test_a_run_whose_folder_turns_unwritable_says_where_its_rows_are(tmp_path: Path) -> None:
    """Takes about 6 s on a loaded 2-core machine: a real `mjrig run`, then `mjrig recover` twice."""
    if shutil.which("chattr") is None:
        pytest.skip("no chattr here")
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "x.parquet"
    proc = mjrig_popen(
        "run",
        MODELS / "spring_mass.toml",
        "--out",
        out,
        "--duration",
        5,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(
            lambda: segment_dir(out).is_dir() or proc.poll() is not None,
            what="the run's work folder (or its end)",
            timeout=60,
        )
        assert proc.poll() is None, "the run ended before its folder could be made unwritable"
        if not _immutable(folder, True):
            pytest.skip("chattr +i is not supported on this file system")
        try:
            _, err = proc.communicate(timeout=120)
            early = mjrig("recover", out)  # the advice followed too soon: nothing changes
            parts_then = _snapshot(segment_dir(out))
        finally:
            _immutable(folder, False)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    whole = segment_dir(out) / "part-0001.whole"
    assert proc.returncode == 5, err
    assert early.rc == 5 and early.stderr.strip() == (
        f"mjrig: cannot write {out}: operation not permitted (permissions or an immutable folder); nothing in "
        f"{segment_dir(out)} was changed: make the folder writable and `mjrig recover {out}` again"
    ), early
    assert parts_then == _snapshot(segment_dir(out)) and "part-0001.whole" in parts_then
    lines = err.decode().strip().splitlines()
    rows = pq.read_metadata(whole).num_rows
    assert rows == 5000  # 5 s of 1 ms steps
    assert lines[-1] == (
        f"mjrig: cannot write {out}: operation not permitted (permissions or an immutable folder); "
        f"kept {rows} rows in {whole}, a valid Parquet file; `mjrig recover {out}` once the "
        "folder is writable"
    ), lines
    assert "Traceback" not in err.decode() and "free space" not in err.decode()
    assert not out.exists()
    res = mjrig("recover", out)
    assert res.rc == 0, res
    assert res.stderr.strip() == f"recovered {rows} rows into {out}"
    table = pq.read_table(out)
    assert table.num_rows == rows
    assert np.allclose(np.diff(table.column("time").to_numpy()), 0.001)
    assert not segment_dir(out).exists()


def _snapshot(folder: Path) -> dict[str, str]:
    """Each file of ``folder`` but the lock of the process holding it: its SHA-256."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.is_file() and p.name != "holder"
    }


def test_recover_of_a_damaged_index_and_of_garbage_in_the_data(tmp_path: Path) -> None:
    """Takes about 4 s on a loaded 2-core machine (two `mjrig recover` processes)."""
    live = tmp_path / "live.parquet"
    sink = ParquetSink(live, flush_seconds=0.01)
    cols = ["time", "wall_time", "a"]
    for i in range(4):
        sink.write_block(cols, make_block(i * 30000, 30000, 1))
        wait_for(lambda: sink.rows_written == (i + 1) * 30000, what="the rows handed over written")
    copies = {name: tmp_path / f"{name}.parquet" for name in ("garbage-index", "garbage-data")}
    for path in copies.values():
        shutil.copytree(segment_dir(live), segment_dir(path))
        (segment_dir(path) / "holder").unlink(missing_ok=True)
    sink.close()
    third = pq.read_metadata(live).row_group(2).column(0).data_page_offset
    expected = make_block(0, 120000, 1)

    index = segment_dir(copies["garbage-index"]) / "part-0001.index"
    index.write_bytes(os.urandom(index.stat().st_size))
    data = segment_dir(copies["garbage-data"]) / "part-0001.data"
    with open(data, "r+b") as fh:
        fh.seek(third + 10)
        fh.write(b"\x00garbage\xff" * 8)
    before = _snapshot(segment_dir(copies["garbage-data"]))

    res = mjrig("recover", copies["garbage-index"])
    assert res.rc == 0, res
    assert res.stderr.strip().splitlines() == [
        "mjrig: warning: part-0001.data: 4 row groups (120000 rows) found from its pages",
        f"recovered 120000 rows into {copies['garbage-index']}",
    ]
    table = pq.read_table(copies["garbage-index"])
    np.testing.assert_array_equal(np.column_stack([table.column(c).to_numpy() for c in cols]), expected)
    assert not segment_dir(copies["garbage-index"]).exists()

    res = mjrig("recover", copies["garbage-data"])
    assert res.rc == 2, res  # the rows that could be read and verified recovered; the parts kept aside
    warning, done = res.stderr.strip().splitlines()
    aside = tmp_path / "garbage-data.parquet.parts.damaged"
    assert warning.startswith("mjrig: warning: part-0001.data: the ") and f"from byte {third} " in warning
    assert f"60000 rows before it recovered; the parts are kept in {aside}" in warning
    assert done == f"recovered 60000 rows into {copies['garbage-data']}"
    assert pq.read_table(copies["garbage-data"]).column("a").to_numpy().tolist() == (expected[:60000, 2]).tolist()
    assert _snapshot(aside) == before  # the damaged part as it was, byte for byte
