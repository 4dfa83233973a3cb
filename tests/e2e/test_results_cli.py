"""`mjrig RESULTS.parquet`: a sweep's results open the results view (checked before any window
opens: a bad one exits 2 with one line); a trial's recording beside it stays a replay; `--compare`
goes with recordings only."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from e2e_util import mjrig
from test_replay_cli import one_line, open_app

from tests.sweep_util import write_scenario

GRID = "[sweep]\n[sweep.params]\nk = { values = [100.0, 400.0] }\n"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sweep")
    scenario = write_scenario(folder, GRID, record=True)
    res = mjrig(
        "sweep", scenario, "--out", folder / "RESULTS.parquet", "--workers", "1", "--duration", "0.05", cwd=folder
    )
    assert res.rc == 0, res
    meta = pq.read_schema(folder / "RESULTS.parquet").metadata
    assert meta[b"mjrig.scenario_path"] == str(scenario.resolve()).encode()
    return folder / "RESULTS.parquet"


def test_a_sweeps_results_pass_validation_and_its_trials_stay_recordings(results: Path, tmp_path: Path) -> None:
    assert "no display" in one_line(open_app(results, cwd=tmp_path))  # accepted; only the screen is missing
    trial = results.with_suffix("") / "trial-1.parquet"
    assert "no display" in one_line(open_app(trial, cwd=tmp_path))
    assert "no display" in one_line(
        open_app(trial, "--compare", results.with_suffix("") / "trial-0.parquet", cwd=tmp_path)
    )


def test_compare_with_a_results_file_and_a_broken_results_file_exit_2_with_one_line(
    results: Path, tmp_path: Path
) -> None:
    trial = results.with_suffix("") / "trial-0.parquet"
    line = one_line(open_app(results, "--compare", trial, cwd=tmp_path))
    assert "a sweep's results, not a recording: --compare goes with a recording" in line
    broken = tmp_path / "broken.parquet"
    pq.write_table(pa.table({"seed": [1]}).replace_schema_metadata({"mjrig.sweep": "[sweep]"}), broken)
    assert "not a sweep's results (no 'trial' column)" in one_line(open_app(broken, cwd=tmp_path))


def test_a_results_file_opened_as_a_recording_is_refused_in_one_line(results: Path) -> None:
    from mjrig.recordings.replay import Replay
    from mjrig.runtime.errors import ConfigError

    with pytest.raises(ConfigError, match="a sweep's results, not a recording: browse them with `mjrig .*RESULTS"):
        Replay.open(results)  # what File > Open or a drop of the file on the 3D view does
