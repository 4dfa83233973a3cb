"""``choices`` and ``step`` in ``[optimize.params]`` (CONTRACT 7) with each of Optuna's samplers:
every trial's value is on the catalogue or the grid (whole numbers stay whole), and so is the
best trial's scenario. The spring_mass rig, 0.3 s runs; 12 trials a sampler (about 2 s)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mjrig.campaign.optimize import run_optimize
from mjrig.runtime.errors import ConfigError
from mjrig.scenario.parse import load_scenario
from tests.sweep_util import bundled_spring_mass


def study(folder: Path, params: str, *, sampler: str = "tpe", trials: int = 12) -> Path:
    return bundled_spring_mass(
        folder,
        '\n[[metrics]]\nname = "low"\nsignal = "Joints/slide_x:qpos"\nkind = "min"\n\n'
        f'[optimize]\nmaximize = "Metrics/low"\ntrials = {trials}\nseed = 4\nsampler = "{sampler}"\n'
        f"[optimize.params]\n{params}",
        duration=0.3,
    )


@pytest.mark.parametrize("sampler", ["tpe", "cmaes", "random"])
def test_a_catalogue_and_a_stepped_range_are_searched_on_their_values(tmp_path, sampler):
    """k from a catalogue, c on the grid 1, 2 ... 10 (whole): every trial on them, and the best
    trial's scenario too."""
    path = study(
        tmp_path, "k = { choices = [150.0, 400.0, 1200.0] }\nc = { low = 1, high = 10, step = 1 }\n", sampler=sampler
    )
    outcome = run_optimize(load_scenario(path), out=tmp_path / "study.parquet", workers=1)
    frame = pl.read_parquet(outcome.path)
    assert frame.height == 12
    assert set(frame["Params/k:value"]) <= {150.0, 400.0, 1200.0}
    assert set(frame["Params/c:value"]) <= set(range(1, 11)) and frame["Params/c:value"].dtype == pl.Int64
    assert frame["Params/k:value"].dtype == pl.Float64  # a catalogue of 150.0, 400.0...: not whole
    best = load_scenario(outcome.best_path).params
    assert best["k"].value in (150.0, 400.0, 1200.0) and best["c"].value in range(1, 11)


def test_bad_choices_and_steps_are_one_line(tmp_path):
    for params, words in (
        ("k = { choices = [] }\n", "optimize.params.k.choices: must be a non-empty list"),
        ("k = { low = 100.0, high = 400.0, step = -1.0 }\n", "optimize.params.k.step: must be"),
        ("k = { low = 100.0, high = 400.0, step = 10.0, log = true }\n", "optimize.params.k.step: a step goes with"),
    ):
        with pytest.raises(ConfigError) as err:
            load_scenario(study(tmp_path, params))
        assert words in str(err.value) and "\n" not in str(err.value), err.value


def test_the_app_snaps_a_catalogue_or_stepped_param_to_its_values(tmp_path):
    """The panel's params carry the study's (else the sweep's) catalogue or grid; ``snap`` moves a
    slider's value to the nearest allowed one, within the grid's ends."""
    from mjrig.panel_state import ParamInfo
    from mjrig.session.entries import _snaps

    path = study(tmp_path, "k = { choices = [400.0, 150.0, 1200.0] }\nc = { low = 1, high = 10, step = 3 }\n")
    doc = load_scenario(path).doc
    doc["sweep"] = {"params": {"k": {"choices": [1.0]}, "c": {"values": [1.0, 2.0]}}}
    snaps = _snaps(doc)
    assert snaps == {"k": {"choices": (150.0, 400.0, 1200.0)}, "c": {"grid": (1.0, 3.0, 10.0)}}
    k, c = (ParamInfo(n, 0.0, 0.0, 5000.0, "", **snaps[n]) for n in ("k", "c"))
    assert [k.snap(v) for v in (0.0, 270.0, 280.0, 799.0, 801.0, 9e9)] == [150.0, 150.0, 400.0, 400.0, 1200.0, 1200.0]
    assert [c.snap(v) for v in (-5.0, 2.4, 2.6, 8.4, 9.9, 50.0)] == [1.0, 1.0, 4.0, 7.0, 10.0, 10.0]
    assert k.whole and c.whole and not ParamInfo("d", 0.0, 0.0, 1.0, "", grid=(0.1, 0.25, 1.0)).whole
    assert ParamInfo("m", 1.5, 0.0, 9.0, "").snap(1.2345) == 1.2345
