"""SIGKILL during a recording, then `mjrig recover`: the flushed rows come back as valid Parquet."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest
from e2e_util import MODELS, mjrig, mjrig_popen

from mjrig.runtime.files import _parquet_stream


def rows_on_disk(parts: Path) -> int:
    """Rows in the whole row groups of a recording's work folder (what a kill now keeps)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the last index record may be half written
        return sum(rows for stem in _parquet_stream.parts(parts) for _, rows in _parquet_stream.part_groups(stem)[1])


def test_sigkill_then_recover(tmp_path: Path):
    from mjrig.runtime.compiled.native_kernel import kernel

    kernel()  # the compiled callbacks made beforehand (the tests' cache): a first compile, 3 s, is not what is timed
    scen = MODELS / "spring_mass.toml"
    out = tmp_path / "killed.parquet"
    parts = out.with_name(out.name + ".parts")
    proc = mjrig_popen("run", scen, "--out", out, "--duration", 1e6, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        t_start = time.monotonic()
        t_seen = None  # when the recording was first seen on disk (it started no later)
        while rows_on_disk(parts) < 2000:
            if t_seen is None and parts.is_dir():
                t_seen = time.monotonic()
            assert proc.poll() is None, f"run ended early: rc={proc.returncode} {proc.stderr.read()!r}"
            assert time.monotonic() - t_start < 60, "no 2000 rows on disk after 60 s"
            time.sleep(0.02)
        t_seen = t_seen or time.monotonic()
        time.sleep(1.5)
        assert proc.poll() is None, "the run must still be going when it is killed (make --duration longer)"
        t_kill = time.monotonic()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    assert not out.exists(), "a killed run cannot have finished its file"
    at_kill = rows_on_disk(parts)
    assert at_kill >= 2000

    res = mjrig("recover", out)
    assert res.rc == 0, res
    assert "Traceback" not in res.stderr
    assert out.is_file()
    assert not parts.exists(), "the parts folder must be gone after a full recovery"

    table = pq.read_table(out)
    df = pl.read_parquet(out)
    assert len(pd.read_parquet(out)) == df.height == table.num_rows
    assert df.height >= 5000, f"only {df.height} rows recovered"
    assert df.columns[:2] == ["time", "wall_time"]
    t = df["time"].to_numpy()
    assert t[0] == pytest.approx(0.0, abs=1e-12)
    assert np.all(np.diff(t) > 0), "time must increase strictly"
    # no step skipped: spring_mass records every 1 ms step
    assert np.allclose(np.diff(t), 0.001, atol=1e-9)
    assert df.height == at_kill, f"recovered {df.height} rows, {at_kill} were whole on disk"
    # at most the last second of wall time is lost
    lost = (t_kill - t_seen) - float(df["wall_time"].max())
    assert lost <= 1.0, f"{lost:.2f} s of wall time lost"
    for col in ("Joints/slide_x:qpos", "Loads/main_spring:fx", "Loads/main_spring:length", "Params/k:value"):
        assert col in df.columns and df[col].null_count() == 0
    md = {k.decode(): v.decode() for k, v in table.schema.metadata.items()}
    model = MODELS / "spring_mass.xml"
    assert md.get("mjrig.model_sha256") == hashlib.sha256(model.read_bytes()).hexdigest()
    assert md.get("mjrig.scenario") == scen.read_text(encoding="utf-8")
    assert json.loads(md["mjrig.units"]).get("time") == "s"
    assert table.schema.field("Loads/main_spring:fx").metadata[b"unit"] == b"N"

    # a second recover has nothing left to do: exit 2, one line, the finished file untouched
    size = out.stat().st_size
    again = mjrig("recover", out)
    assert again.rc == 2, again
    assert len(again.stderr.strip("\n").splitlines()) == 1 and "Traceback" not in again.stderr
    assert out.stat().st_size == size
