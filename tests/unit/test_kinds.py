"""The registry of kinds (mjrig.scenario.kinds) is the one declaration: the parser, the forms and the
manual (docs/scenario.md) all follow it, and a new kind is one entry."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.forces.loads import PointToPointForce, ScalarForce
from mjrig.runtime.values import Sine
from mjrig.scenario.fields import FieldReader
from mjrig.scenario.kinds import FIELD_TYPES, POINT_TYPES, REGISTRY, SPRING_KINDS, Field, Kind, name_field
from mjrig.scenario.kinds_table import kinds_markdown
from mjrig.scenario.locator import ScenarioLocator
from mjrig.scenario.parse import LOAD_KINDS, parse_scenario
from tests.unit.unit_util import manual_table

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"


def test_the_manual_shows_the_generated_load_kinds_table():
    assert manual_table("scenario.md", "load kinds") == kinds_markdown()


def test_every_field_type_is_read_and_every_kind_is_described():
    reader = FieldReader(ScenarioLocator("", None), MODELS)
    for section in REGISTRY.sections:
        assert section.kind(section.default_kind) is not None, section.key
        for kind in section.kinds:
            assert kind.doc and kind.fields[0].name == section.name_key, kind.name
            for f in kind.fields:
                assert f.type in FIELD_TYPES and f.help, (kind.name, f.name)
                assert not (f.required and f.default is not None), (kind.name, f.name)
    assert {"point", "site", "point_or_geom"} == POINT_TYPES
    with pytest.raises(TypeError, match="no reader"):
        reader.field(Field("x", "colour"), 1, ("x",))  # type: ignore[arg-type]


def test_load_kinds_keep_their_keys():
    springs = {"name", "kind", "at", "to", "stiffness", "damping"}
    assert LOAD_KINDS == {
        "force": {"name", "kind", "at", "vector", "frame", "to"},
        "torque": {"name", "kind", "at", "vector", "frame", "to"},
        "general": {"name", "kind", "at", "force", "torque", "frame", "to"},
        "scalar_force": {"name", "kind", "at", "magnitude", "to"},
        "scalar_torque": {"name", "kind", "at", "magnitude", "to"},
        "ideal_spring": springs | {"rest_length"},
        "compression_spring": springs | {"rest_length"},
        "tension_spring": springs | {"rest_length"},
        "stroke_compression_spring": springs | {"preload", "max_stroke"},
        "joint_torque": {"name", "kind", "joint", "magnitude"},
        "joint_friction": {
            "name",
            "kind",
            "joint",
            "coulomb",
            "breakaway",
            "stribeck_velocity",
            "viscous",
            "coulomb_velocity",
            "mu",
            "pin_radius",
        },
    }
    assert set(SPRING_KINDS) <= set(LOAD_KINDS)


def test_spring_defaults_are_the_spring_laws():
    text = (
        'model = "spring_mass.xml"\n[[loads]]\nname = "s"\nkind = "stroke_compression_spring"\n'
        'at = "tip"\nto = "base"\n'
    )
    (ld,) = parse_scenario(text, base=MODELS).loads
    assert isinstance(ld, PointToPointForce) and ld.kind == "stroke_compression_spring"
    assert (ld.law.stiffness, ld.law.damping, ld.law.preload, ld.law.max_stroke) == (0.0, 0.0, 0.0, 0.1)


# --- a new kind is one entry ----------------------------------------------------------------------


def _dummy(v: Mapping[str, Any]) -> ScalarForce:
    return ScalarForce(name=v["name"], action_site=v["at"], magnitude=v["push"])


DUMMY = Kind(
    "dummy_push",
    (
        name_field("load"),
        Field("at", "site", required=True, help="where it pushes"),
        Field("push", "profile", "N", 3.0, help="how hard", nonneg=True),
    ),
    _dummy,
    "a test-only kind",
)
EXTENDED = REGISTRY.with_kind("loads", DUMMY)
SCENARIO = (
    'model = "spring_mass.xml"\n[params]\nk = 5.0\n'
    '[[loads]]\nname = "d"\nkind = "dummy_push"\nat = "tip"\npush = {{ profile = "sine", amplitude = 1.0, '
    'frequency = 2.0 }}\n[[loads]]\nname = "e"\nkind = "dummy_push"\nat = "tip"\n{extra}\n'
)


def test_a_registered_kind_is_parsed():
    sc = parse_scenario(SCENARIO.format(extra='push = "k"'), base=MODELS, registry=EXTENDED)
    d, e = sc.loads
    assert isinstance(d.magnitude, Sine) and e.magnitude is sc.params["k"]
    assert parse_scenario(SCENARIO.format(extra=""), base=MODELS, registry=EXTENDED).loads[1].magnitude == 3.0
    with pytest.raises(ConfigError, match=r"^s\.toml:13: loads\[1\]\.psh: unknown field 'psh' \(closest: push"):
        parse_scenario(SCENARIO.format(extra="psh = 1.0"), source=Path("s.toml"), base=MODELS, registry=EXTENDED)
    with pytest.raises(
        ConfigError, match=r"^s\.toml:13: loads\[1\]\.stiffness: 'stiffness' goes with ideal_spring or "
    ):
        parse_scenario(SCENARIO.format(extra="stiffness = 1.0"), source=Path("s.toml"), base=MODELS, registry=EXTENDED)
    with pytest.raises(ConfigError, match=r"loads\[1\]\.push: must not be negative, got -1"):
        parse_scenario(SCENARIO.format(extra="push = -1"), base=MODELS, registry=EXTENDED)
    with pytest.raises(ConfigError, match=r"loads\[1\]\.at: 'body:block' must be a site name"):
        parse_scenario(
            SCENARIO.format(extra="").replace('at = "tip"\n\n', 'at = "body:block"\n'), base=MODELS, registry=EXTENDED
        )
    with pytest.raises(ConfigError, match=r"unknown load kind 'dummy_push' \(closest:"):  # the copy only
        parse_scenario(SCENARIO.format(extra=""), base=MODELS)


def test_a_registered_kind_is_offered_by_the_form_builder():
    forms = pytest.importorskip("mjrig.widgets.kit.forms")
    assert [f.name for f in forms.form_fields("loads", "dummy_push", registry=EXTENDED)] == ["at", "push"]
    assert "dummy_push" in EXTENDED.section("loads").kind_names
    assert "dummy_push" not in REGISTRY.section("loads").kind_names
    with pytest.raises(KeyError):
        forms.form_fields("loads", "dummy_push")
    assert [f.name for f in forms.form_fields("proximities", "proximity")] == ["a", "b", "threshold"]
