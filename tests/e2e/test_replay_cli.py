"""`mjrig RECORDING.parquet [--compare OTHER.parquet]`: a bad recording or comparison exits 2 with one
line before any window opens; a good one gets as far as the screen check (no display here)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from e2e_util import MODELS, Result, mjrig, no_screen_env, require_rig


def open_app(*args: object, cwd: Path) -> Result:
    """``mjrig ARGS`` (the app) with no screen."""
    return mjrig(*args, cwd=cwd, env=no_screen_env())


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_rig("spring_mass")
    folder = tmp_path_factory.mktemp("rec")
    res = mjrig("run", "spring_mass", "--duration", "0.05", "--out", folder / "rec.parquet", cwd=folder)
    assert res.rc == 0, res
    return folder / "rec.parquet"


def one_line(proc: Result) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.rc == 2 and len(lines) == 1, (proc.rc, proc.stderr)
    assert "Traceback" not in proc.stderr
    return lines[0]


def test_missing_garbage_and_jointless_recordings_exit_2_with_one_line(tmp_path: Path) -> None:
    assert "recording not found" in one_line(open_app(tmp_path / "missing.parquet", cwd=tmp_path))
    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"PAR1 but not really")
    assert "not a readable Parquet recording" in one_line(open_app(garbage, cwd=tmp_path))
    jointless = tmp_path / "jointless.parquet"
    table = pa.table({"time": [0.0, 0.001], "wall_time": [0.0, 0.0], "Bodies/mass:x": [0.1, 0.2]})
    table = table.replace_schema_metadata({"mjrig.model_path": str(MODELS / "spring_mass.xml")})
    pq.write_table(table, jointless)
    assert "no joint positions" in one_line(open_app(jointless, cwd=tmp_path))


def test_a_good_recording_passes_validation_and_compare_is_checked(recording: Path, tmp_path: Path) -> None:
    line = one_line(open_app(recording, cwd=tmp_path))
    assert "no display" in line  # the recording was accepted; only the missing screen stops it
    line = one_line(open_app(recording, "--compare", tmp_path / "nope.parquet", cwd=tmp_path))
    assert "nope.parquet: recording not found" in line
    assert "no display" in one_line(open_app(recording, "--compare", recording, cwd=tmp_path))
    assert "--compare goes with a recording" in one_line(open_app("spring_mass", "--compare", recording, cwd=tmp_path))
    res = mjrig("run", recording, cwd=tmp_path)
    assert res.rc == 2 and len(res.err_lines) == 1 and "a recording" in res.err_lines[0], res
