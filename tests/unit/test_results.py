"""A sweep's results read back for the results view (``mjrig.campaign.results``), on a real small sweep of
the spring-mass rig: 2 stiffnesses x 2 dampings, recorded; the ``travel`` requirement (the
block stays above -0.15 m) holds only for the soft, damped trial."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mjrig import commands as C
from mjrig.campaign.results import SCENARIO_KEY, SweepResults, is_results
from mjrig.campaign.sweep import run_sweep
from mjrig.runtime.errors import ConfigError
from mjrig.scenario.parse import load_scenario
from tests.sweep_util import write_scenario

GRID = "[sweep]\n[sweep.params]\nk = { values = [100.0, 400.0] }\nc = { values = [0.0, 5.0] }\n"


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sweep")
    scenario = write_scenario(folder, GRID, record=True)
    run_sweep(load_scenario(scenario), out=folder / "RESULTS.parquet", workers=1, duration=0.5)
    return folder, scenario


def test_the_results_file_names_its_scenario_and_is_told_from_a_recording(sweep):
    folder, scenario = sweep
    res = SweepResults.open(folder / "RESULTS.parquet")
    assert res.scenario_path == scenario.resolve()
    assert (
        pq.read_schema(folder / "RESULTS.parquet").metadata[SCENARIO_KEY.encode()] == str(scenario.resolve()).encode()
    )
    assert is_results(folder / "RESULTS.parquet")
    assert not is_results(folder / "RESULTS" / "trial-0.parquet")  # a trial's recording stays a replay
    assert not is_results(folder / "nothing.parquet")
    assert res.params == ["Params/k:value", "Params/c:value", "Params/mass:value"]
    assert res.requirement_values == ["Requirements/travel:value"]
    assert res.trials == [0, 1, 2, 3]
    assert res.counts() == {"all": 4, "pass": 1, "fail": 3, "diverged": 0, "error": 0}
    assert res.start_target() == (scenario.resolve(), [])


def test_sorting_and_filtering(sweep):
    res = SweepResults.open(sweep[0] / "RESULTS.parquet")
    by_value = res.rows(sort_by="Requirements/travel:value")
    values = by_value["Requirements/travel:value"].to_list()
    assert values == sorted(values) and by_value["trial"].to_list() != [0, 1, 2, 3]
    down = res.rows(sort_by="Requirements/travel:value", descending=True)
    assert down["trial"].to_list() == by_value["trial"].to_list()[::-1]
    # ties (two trials per stiffness) keep the trial order
    assert res.rows(sort_by="Params/k:value", descending=True)["trial"].to_list() == [2, 3, 0, 1]
    assert res.rows(sort_by="trial", descending=True)["trial"].to_list() == [3, 2, 1, 0]
    assert res.rows(status="pass")["trial"].to_list() == [1]  # k = 100, c = 5
    assert res.rows(status="fail")["trial"].to_list() == [0, 2, 3]
    assert res.rows(status="error").height == 0
    with pytest.raises(ConfigError, match="no column 'Params/zeta:value'"):
        res.rows(sort_by="Params/zeta:value")
    with pytest.raises(ConfigError, match="unknown status filter 'broken'.*all, pass, fail, diverged, error"):
        res.rows(status="broken")


def test_scatter_arrays_are_grouped_by_status(sweep):
    res = SweepResults.open(sweep[0] / "RESULTS.parquet")
    sc = res.scatter("Params/k:value", "Requirements/travel:value")
    table = res.table
    assert sc.trials.tolist() == [0, 1, 2, 3]
    assert sc.x.tolist() == table["Params/k:value"].to_list()
    assert sc.y.tolist() == table["Requirements/travel:value"].to_list()
    assert sc.groups["pass"].tolist() == [False, True, False, False]
    assert sc.groups["fail"].tolist() == [True, False, True, True]
    assert not sc.groups["other"].any()
    assert sc.group("pass") == ([100.0], [table["Requirements/travel:value"][1]])
    only_fail = res.scatter("Params/c:value", "Requirements/travel:value", status="fail")
    assert only_fail.trials.tolist() == [0, 2, 3] and only_fail.x.tolist() == [0.0, 0.0, 5.0]
    with pytest.raises(ConfigError, match="no column 'Requirements/travel:pass'"):
        res.scatter("Params/k:value", "Requirements/travel:pass")


def test_a_trial_opens_as_its_recording_or_as_the_scenario_with_its_values(sweep):
    folder, scenario = sweep
    res = SweepResults.open(folder / "RESULTS.parquet")
    assert res.recording_path(2) == folder.resolve() / "RESULTS" / "trial-2.parquet" and res.has_recording(2)
    rec = pl.read_parquet(res.recording_path(2))
    assert rec["Params/k:value"][0] == 400.0 and rec["Params/c:value"][0] == 0.0
    assert res.param_values(2) == {"k": 400.0, "c": 0.0, "mass": 1.0}
    assert res.replay_commands(2) == [C.OpenModel(str(res.recording_path(2)))]
    assert res.scenario_commands(1, discard=True) == [
        C.OpenModel(str(scenario.resolve()), discard=True, params=(("k", 100.0), ("c", 5.0), ("mass", 1.0)))
    ]
    from mjrig.session.kernel import Session

    s = Session()  # a trial's set-up is the rig as the sweep ran it, not an unsaved edit of the user's
    try:
        for cmd in res.scenario_commands(1, discard=True):
            s.handle(cmd)
        snap = s.publish()
        assert not snap.dirty and {p.name: p.value for p in snap.entries.params}["k"] == 100.0
        assert s.document.doc["params"]["k"]["value"] == 100.0  # Save scenario... keeps them
    finally:
        s.close()
    with pytest.raises(ConfigError, match="no trial 9"):
        res.param_values(9)


def _copy(src, dst, *, drop=(), replace=None):
    table = pq.read_table(src)
    meta = {k: v for k, v in (table.schema.metadata or {}).items() if k.decode() not in drop}
    meta.update({k.encode(): v.encode() for k, v in (replace or {}).items()})
    pq.write_table(table.replace_schema_metadata(meta), dst)
    return dst


def test_a_missing_scenario_is_said_in_one_line_and_the_model_shown(sweep, tmp_path):
    folder, _ = sweep
    old = _copy(folder / "RESULTS.parquet", tmp_path / "old.parquet", drop=(SCENARIO_KEY,))
    res = SweepResults.open(old)
    target, notes = res.start_target()
    assert target == res.model_path and target.name == "spring_mass.xml"
    assert len(notes) == 1 and "names no scenario file" in notes[0] and "\n" not in notes[0]
    assert not res.has_recording(0)  # no old/ folder beside it
    with pytest.raises(ConfigError, match="trial 0 has no recording"):
        res.replay_commands(0)
    with pytest.raises(ConfigError, match="names no scenario file"):
        res.scenario_commands(0)
    gone = SweepResults.open(
        _copy(
            folder / "RESULTS.parquet", tmp_path / "gone.parquet", replace={SCENARIO_KEY: str(tmp_path / "moved.toml")}
        )
    )
    assert "moved.toml is missing" in gone.scenario_problem()
    nothing = SweepResults.open(
        _copy(
            folder / "RESULTS.parquet",
            tmp_path / "none.parquet",
            drop=(SCENARIO_KEY,),
            replace={"mjrig.model_path": str(tmp_path / "moved.xml")},
        )
    )
    target, notes = nothing.start_target()
    assert target is None and "moved.xml is missing" in notes[-1]


def test_a_file_that_is_not_a_sweeps_results_is_refused_in_one_line(sweep, tmp_path):
    folder, _ = sweep
    cases = {
        folder / "RESULTS" / "trial-0.parquet": "not a sweep's or study's results (no 'mjrig.sweep' metadata)",
        tmp_path / "missing.parquet": "file not found",
    }
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet at all")
    cases[junk] = "not a readable Parquet file"
    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"x": [1.0]}).replace_schema_metadata({"mjrig.sweep": "[sweep]"}), plain)
    cases[plain] = "no 'trial' column"
    for path, words in cases.items():
        with pytest.raises(ConfigError) as err:
            SweepResults.open(path)
        assert words in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_nulls_sort_last_and_stay_out_of_the_scatter_with_infinities(tmp_path):
    table = pa.table(
        {
            "trial": [0, 1, 2],
            "seed": [1, 2, 3],
            "Params/k:value": [1.0, 2.0, 3.0],
            "status": ["pass", "error", "diverged"],
            "message": [None, "boom", "NaN"],
            "Requirements/r:pass": [True, None, False],
            "Requirements/r:value": [0.5, None, math.inf],
        }
    )
    path = tmp_path / "r.parquet"
    pq.write_table(table.replace_schema_metadata({"mjrig.sweep": "[sweep]"}), path)
    res = SweepResults.open(path)
    assert res.rows(sort_by="Requirements/r:value", descending=True)["trial"].to_list() == [2, 0, 1]
    sc = res.scatter("Params/k:value", "Requirements/r:value")
    assert sc.trials.tolist() == [0] and sc.groups["other"].tolist() == [False]  # null and inf left out
    assert res.start_target()[0] is None  # no model named: the app shows its default rig


def test_the_app_opens_the_scenario_or_says_in_one_status_line_what_is_missing(sweep, tmp_path):
    """A results file opened in the session (the command line, File > Open, a drop): the sweep's
    scenario opens under the results view; an older file without it opens the model, with one
    warning; a trial's recording opens as a replay."""
    from mjrig.session.kernel import Session

    folder, scenario = sweep
    s = Session()
    try:
        s.open(folder / "RESULTS.parquet")
        snap = s.publish()
        assert snap.results.shown.path == (folder / "RESULTS.parquet").resolve() and snap.results.opened == 1
        assert (
            snap.results.shown.table.height == 4 and snap.results.shown.filters[0] == "all"
        )  # read once, by the session
        assert Path(snap.source) == scenario.resolve()
        assert not [m for m in snap.messages if m[0] == "warning"]
        old = _copy(folder / "RESULTS.parquet", tmp_path / "old.parquet", drop=(SCENARIO_KEY,))
        s.open(old)
        snap = s.publish()
        assert snap.results.shown.path == old.resolve() and snap.results.opened == 2
        assert Path(snap.model.path).name == "spring_mass.xml"
        warnings = [text for level, text in snap.messages if level == "warning"]
        assert len(warnings) == 1 and "names no scenario file" in warnings[0]
        s.open(folder / "RESULTS" / "trial-0.parquet")  # a recording stays a replay
        snap = s.publish()
        assert snap.timeline.replay and snap.results.opened == 2
    finally:
        s.close()


def test_a_study_opens_as_results(tmp_path):
    """``mjrig STUDY.parquet`` opens a study in the results view: its rows, params and metric
    columns read like a sweep's."""
    from mjrig.campaign.optimize import run_optimize
    from tests.sweep_util import BASE

    path = tmp_path / "opt.toml"
    base = BASE.split("[[requirements]]")[0].replace("duration = 1.0", "duration = 2.0")  # two periods at k = 100
    path.write_text(
        base + '\n[[metrics]]\nname = "f"\nsignal = "Joints/slide_x:qpos"\nkind = "frequency"\n\n'
        '[optimize]\nminimize = "Metrics/f"\ntrials = 3\n[optimize.params]\nk = { low = 100.0, high = 400.0 }\n',
        encoding="utf-8",
    )
    outcome = run_optimize(load_scenario(path), out=tmp_path / "study.parquet", workers=1)
    assert is_results(outcome.path)
    res = SweepResults.open(outcome.path)
    assert res.trials == [0, 1, 2] and "Params/k:value" in res.params and res.metric_values == ["Metrics/f:value"]
    assert res.scenario_path == path.resolve()
    assert res.is_study and res.values == ["Metrics/f:value", "objective"]
    trials, objective, best = res.history()
    df = pl.read_parquet(outcome.path).filter(pl.col("feasible"))
    assert trials.tolist() == df["trial"].to_list() and objective.tolist() == df["objective"].to_list()
    assert best.tolist() == np.minimum.accumulate(objective).tolist()
    assert res.best_trial() == outcome.best["trial"]
    pts = res.scatter("Params/k:value", "objective")
    assert pts.x.size == trials.size and set(pts.trials.tolist()) == set(trials.tolist())
