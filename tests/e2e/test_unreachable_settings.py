"""Settings that can never act are named in one warning line (the run still goes)."""

from __future__ import annotations

import shutil

from tests.e2e.e2e_util import MODELS, mjrig


def test_a_negative_threshold_between_two_points_is_warned(tmp_path):
    shutil.copy(MODELS / "spring_mass.xml", tmp_path / "spring_mass.xml")
    scenario = tmp_path / "rig.toml"
    scenario.write_text(
        'model = "spring_mass.xml"\n\n[[proximities]]\nname = "gap"\na = "tip"\nb = "stop"\nthreshold = -0.01\n',
        encoding="utf-8",
    )
    result = mjrig("check", scenario, cwd=tmp_path)
    assert result.rc == 0, result
    (line,) = [ln for ln in result.err_lines if "warning" in ln]
    assert line.startswith(f"mjrig: warning: {scenario}:7: proximities[0].threshold: -0.01 m can never be reached")


def test_a_negative_threshold_between_two_geoms_is_a_penetration_and_fine(tmp_path):
    shutil.copy(MODELS / "clearance.xml", tmp_path / "clearance.xml")
    scenario = tmp_path / "rig.toml"
    scenario.write_text(
        'model = "clearance.xml"\n\n[[proximities]]\nname = "bite"\na = "geom:paddle"\n'
        'b = "geom:wall"\nthreshold = -0.001\n',
        encoding="utf-8",
    )
    result = mjrig("check", scenario, cwd=tmp_path)
    assert result.rc == 0 and not [ln for ln in result.err_lines if "warning" in ln], result
