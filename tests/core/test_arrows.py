"""Arrows stay readable at every scale: never a flat disc, never longer than the model."""
from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

from mjrig.runtime.visuals import ArrowConfig, Color
from mjrig.scenario.parse import load_scenario

MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.mark.parametrize("force", [1e-3, 1.0, 87.0, 1e6])
@pytest.mark.parametrize("toml", sorted(MODELS.glob("*.toml")), ids=lambda p: p.stem)
def test_arrow_proportions_are_bounded(toml, force):
    model = mujoco.MjModel.from_xml_path(str(load_scenario(toml).model))
    scene = mujoco.MjvScene(model, 10)
    assert ArrowConfig(np.zeros(3), np.array([0.0, force, 0.0]), Color.ACTION).draw_in_scene(model, scene)
    width, _, length = scene.geoms[0].size
    assert length >= 6.0 * width, (width, length)
    assert length <= 1.5 * model.stat.extent + 1e-9, (length, model.stat.extent)
