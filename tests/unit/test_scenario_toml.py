"""A scenario document written by mjrig.scenario.toml_writer loads back identically, in the contract's layout."""

from __future__ import annotations

import copy
import math
import tomllib
from pathlib import Path

import pytest

from mjrig.scenario.parse import load_scenario, scenario_from_doc
from mjrig.scenario.toml_writer import dumps
from tests.sweep_util import MAIN_SPRING

MODEL = Path(__file__).resolve().parents[2] / "models" / "spring_mass.xml"

# Every kind of value a scenario holds: top-level scalars, tables, tables inside tables (params),
# arrays of tables, inline profile tables inside arrays and tables, arrays of floats and of
# strings, booleans, integers and non-ASCII units.
EVERYTHING = {
    "model": str(MODEL),
    "simulation": {"duration": 0.05, "timestep": 0.001, "speed": 1.0},
    "params": {
        "k": {"value": 200.0, "min": 0.0, "max": 5000.0, "unit": "N/m"},
        "c": {"value": 1.0, "min": 0.0, "max": 50.0, "unit": "N·s/m"},
        "scale": 2.5,
    },
    "loads": [
        dict(MAIN_SPRING),
        {
            "name": "kick",
            "kind": "force",
            "at": "body:block@0.01,0,0",
            "vector": [
                {"profile": "step", "time": 0.01, "before": 0.0, "after": 1.5},
                0.0,
                {"profile": "sine", "amplitude": 0.5, "frequency": 2.0, "phase": 0.0, "offset": 0.0},
            ],
        },
        {
            "name": "wobble",
            "kind": "general",
            "at": "tip",
            "force": [{"profile": "table", "time": [0.0, 0.02, 0.05], "value": [0.0, 1.0, -1.0]}, 0.0, 0.0],
            "torque": [0.0, {"profile": "ramp", "start": 0.0, "end": 0.05, "from": 0.0, "to": 0.1}, 0.0],
        },
        {"name": "shove", "kind": "scalar_force", "at": "tip", "magnitude": {"profile": "constant", "value": 3.0}},
    ],
    "proximities": [
        {"name": "gap", "a": "tip", "b": "stop", "threshold": 0.05},
        {"name": "clearance", "a": "geom:block_box", "b": "geom:stop_pad"},
    ],
    "recording": {
        "path": "runs/out.parquet",
        "rate": 500,
        "signals": ["joints", "bodies", "loads", "proximities", "params", "energy"],
    },
    "video": {
        "path": "runs/out.mp4",
        "camera": "track",
        "fps": 30,
        "width": 64,
        "height": 48,
        "show_loads": True,
        "show_proximities": False,
    },
}


def test_every_field_type_round_trips(tmp_path: Path):
    text = dumps(copy.deepcopy(EVERYTHING))
    assert tomllib.loads(text) == EVERYTHING, text
    path = tmp_path / "saved.toml"
    path.write_text(text, encoding="utf-8")
    sc = load_scenario(path)
    assert sc.doc == EVERYTHING
    assert [ld.name for ld in sc.loads] == ["main_spring", "kick", "wobble", "shove"]
    assert [p.name for p in sc.proximities] == ["gap", "clearance"]
    assert list(sc.params) == ["k", "c", "scale"]
    assert sc.video is not None and sc.video.camera == "track" and sc.video.show_proximities is False
    # what the app validates before saving is the same document
    assert scenario_from_doc(copy.deepcopy(EVERYTHING), base=tmp_path).doc == EVERYTHING


def test_layout_is_the_contracts(tmp_path: Path):
    """Profiles and params stay inline on their own line; no [loads.x] sub-tables; unicode kept as is."""
    text = dumps(EVERYTHING)
    lines = text.splitlines()
    assert lines[0] == f'model = "{MODEL}"'.replace("\\", "\\\\")
    assert 'c = {value = 1.0, min = 0.0, max = 50.0, unit = "N·s/m"}' in lines
    assert 'magnitude = {profile = "constant", value = 3.0}' in lines
    assert sum(line == "[[loads]]" for line in lines) == 4
    assert not [line for line in lines if line.startswith("[") and "." in line], text
    assert [line for line in lines if line.startswith("[") and not line.startswith("[[")] == [
        "[simulation]",
        "[params]",
        "[recording]",
        "[video]",
    ]


def test_values_the_hand_written_writer_escaped():
    """Floats TOML spells as words, signed zero, control characters, odd keys: tomlkit keeps them."""
    doc = {
        "x": {
            "inf": float("inf"),
            "minus": -float("inf"),
            "zero": -0.0,
            "tiny": 5e-324,
            "name": 'tab\tnewline\nbell\x07 quote" back\\ N·m',
            "two words": 1,
            "": True,
        }
    }
    back = tomllib.loads(dumps(doc))
    assert back == doc and str(back["x"]["zero"]) == "-0.0"
    assert math.isnan(tomllib.loads(dumps({"x": {"v": float("nan")}}))["x"]["v"])


def test_plots_section_is_read_and_checked(tmp_path):
    """CONTRACT 13: ``[plots] signals`` and ``window``; a bad value names its field."""
    from mjrig.runtime.errors import ConfigError
    from mjrig.scenario.parse import scenario_from_doc

    model = tmp_path / "m.xml"
    model.write_text(
        '<mujoco><worldbody><body><joint name="j" type="slide"/><geom size="0.1"/></body></worldbody></mujoco>'
    )
    doc = {"model": "m.xml", "plots": {"signals": ["Joints/j:qpos", "Joints/j:qpos", "Joints/j:qvel"], "window": 4}}
    plots = scenario_from_doc(doc, base=tmp_path, source=None).plots
    assert plots.signals == ("Joints/j:qpos", "Joints/j:qvel") and plots.window == 4.0
    for bad, field in (
        ({"signals": "Joints/j:qpos"}, "plots.signals"),
        ({"window": 0}, "plots.window"),
        ({"window": True}, "plots.window"),
        ({"sigals": []}, "plots.sigals"),
    ):
        with pytest.raises(ConfigError) as err:
            scenario_from_doc({"model": "m.xml", "plots": bad}, base=tmp_path, source=None)
        assert field in str(err.value), str(err.value)
