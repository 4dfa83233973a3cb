"""What a study leaves beside its results: ``STUDY-best.toml`` names the model as the scenario
did, relative to where it is written, and opens as a scenario."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

from mjrig.campaign.optimize import run_optimize
from mjrig.scenario.parse import load_scenario
from tests.sweep_util import bundled_spring_mass

MODELS = Path(__file__).resolve().parents[2] / "models"
TOP = (
    '\n[[metrics]]\nname = "top"\nsignal = "Joints/slide_x:qpos"\nkind = "max"\nstart = 0.3\n\n'
    '[optimize]\nminimize = "Metrics/top"\ntrials = 2\n[optimize.params]\n'
    "k = { low = 100.0, high = 400.0 }\n"
)
"""A study of the block's highest point after 0.3 s over k, two trials."""


def test_the_best_scenario_keeps_a_relative_model_path(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    shutil.copy(MODELS / "spring_mass.xml", tmp_path / "models" / "spring_mass.xml")
    scenario = bundled_spring_mass(tmp_path, TOP, duration=1.0, model="models/spring_mass.xml")
    outcome = run_optimize(load_scenario(scenario), out=tmp_path / "out" / "study.parquet", workers=1)
    best = outcome.best_path
    assert best is not None and best.parent == tmp_path / "out"
    doc = tomllib.loads(best.read_text(encoding="utf-8"))
    assert doc["model"] == "../models/spring_mass.xml", doc["model"]
    again = load_scenario(best)
    assert again.model.resolve() == (tmp_path / "models" / "spring_mass.xml").resolve()
    assert again.params["k"].value == outcome.best["Params/k:value"]


def test_a_trial_a_kill_interrupted_runs_again_under_its_number_with_its_params(tmp_path: Path) -> None:
    """A study stopped while a trial ran (asked, its param drawn, no result): started again, it
    runs that trial first, as number 2 with the same k, and the results have no hole."""
    import optuna
    import polars as pl

    from mjrig.campaign.optimize import study_paths
    from mjrig.campaign.study_db import STUDY

    scenario = bundled_spring_mass(tmp_path, TOP, duration=0.5)
    out = tmp_path / "study.parquet"
    run_optimize(load_scenario(scenario), out=out, workers=1)
    db, _ = study_paths(out)
    study = optuna.load_study(study_name=STUDY, storage=f"sqlite:///{db}")
    interrupted = study.ask()  # what a killed run leaves: RUNNING, k drawn
    k = interrupted.suggest_float("k", 100.0, 400.0)
    outcome = run_optimize(load_scenario(scenario), out=out, workers=1, trials=4)
    df = pl.read_parquet(outcome.path).sort("trial")
    assert df["trial"].to_list() == [0, 1, 2, 3]
    assert interrupted.number == 2 and df.filter(pl.col("trial") == 2)["Params/k:value"][0] == k
