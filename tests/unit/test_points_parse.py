"""Attachment-point strings: every syntax, every way to get one wrong, and unknown names."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from mjrig.runtime import (
    Body,
    BodyPoint,
    ConfigError,
    Geom,
    PointToPointForce,
    RuntimeManager,
    ScalarForce,
    Site,
    VectorForce,
    parse_point,
)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("tip", Site("tip")),
        ("  tip  ", Site("tip")),
        ("arm/tip", Site("arm/tip")),  # MuJoCo names may contain '/'
        ("body:arm", Body("arm")),
        ("body:world", Body("world")),
        ("body:arm@0.1,-2,3e-1", BodyPoint("arm", (0.1, -2.0, 0.3))),
        ("body:arm@ 1 , 2 , 3 ", BodyPoint("arm", (1.0, 2.0, 3.0))),
        ("body:a@b@0,0,1", BodyPoint("a@b", (0.0, 0.0, 1.0))),  # the last '@' starts the offset
    ],
)
def test_parse_each_syntax(text: str, expected) -> None:
    got = parse_point(text)
    assert got == expected
    assert type(got) is type(expected)


def test_parse_geom_only_for_proximities() -> None:
    assert parse_point("geom:paddle", allow_geom=True) == Geom("paddle")
    with pytest.raises(ConfigError, match="geom:paddle"):
        parse_point("geom:paddle")


def test_parse_point_objects_pass_through() -> None:
    p = BodyPoint("arm", (1.0, 0.0, 0.0))
    assert parse_point(p) is p
    with pytest.raises(ConfigError):
        parse_point(Geom("g"))


def test_body_point_round_trips_through_str() -> None:
    p = parse_point("body:arm@0.25,-1,0")
    assert parse_point(str(p)) == p
    assert str(parse_point("body:arm")) == "body:arm"


@pytest.mark.parametrize(
    "text",
    [
        "body:",
        "body:@1,2,3",
        "body:arm@",
        "body:arm@1,2",
        "body:arm@1,2,3,4",
        "body:arm@a,b,c",
        "body:arm@1,2,nan",
        "body:arm@1,inf,0",
        "body:arm@1;2;3",
    ],
)
def test_parse_bad_strings(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_point(text)
    msg = str(info.value)
    assert text in msg
    assert "\n" not in msg  # one line for the user


def test_parse_bad_geom_and_empty() -> None:
    with pytest.raises(ConfigError, match="geom:"):
        parse_point("geom:", allow_geom=True)
    for bad in ("", "   "):
        with pytest.raises(ConfigError, match="non-empty"):
            parse_point(bad)
    with pytest.raises(ConfigError, match="42"):
        parse_point(42)  # type: ignore[arg-type]


def test_bad_point_in_a_load_is_refused_at_construction() -> None:
    with pytest.raises(ConfigError, match=r"body:arm@1,2"):
        VectorForce(name="f", action_site="body:arm@1,2", vector=[1, 0, 0])
    with pytest.raises(ConfigError, match="geom:g"):
        ScalarForce(name="f", action_site="geom:g", magnitude=1.0)


# --- unknown names, against a real model ----------------------------------------------------------

XML = """
<mujoco>
  <worldbody>
    <site name="base"/>
    <body name="mass" pos="0.3 0 0">
      <joint name="x" type="slide" axis="1 0 0"/>
      <geom type="sphere" size="0.05" mass="1"/>
      <site name="tip"/>
      <site name="tip_left" pos="0 0.1 0"/>
    </body>
  </worldbody>
</mujoco>
"""


def _rig_or_self(path: str, load) -> None:
    """Load and take one step the way ``path`` says; the error must come from one of them."""
    rm = RuntimeManager(loads=[load], playback_speed=0)
    spec = mujoco.MjSpec.from_string(XML)
    if path != "self":
        model, data = rm.load_model(spec)
    else:
        model = spec.compile()
        data = mujoco.MjData(model)
    rm.step(model, data)


@pytest.mark.parametrize(
    "make,bad,close",
    [
        (lambda: ScalarForce(name="f", action_site="tpi", magnitude=1.0), "tpi", "tip"),
        (lambda: PointToPointForce.ideal_spring("s", "tip", "bsae", stiffness=1.0), "bsae", "base"),
        (lambda: PointToPointForce.ideal_spring("s", "tip_lef", "base", stiffness=1.0), "tip_lef", "tip_left"),
        (lambda: PointToPointForce.ideal_spring("s", "body:mas", "base", stiffness=1.0), "mas", "mass"),
        (lambda: VectorForce(name="f", action_site="body:masss@0,0,1", vector=[1, 0, 0]), "masss", "mass"),
        (lambda: ScalarForce(name="f", action_site="tip", rel_to_site="bass", magnitude=1.0), "bass", "base"),
    ],
    ids=["site", "spring-to", "spring-at", "spring-body", "body-point", "frame"],
)
def test_unknown_names_mention_closest(path: str, make, bad: str, close: str) -> None:
    with pytest.raises(ConfigError) as info:
        _rig_or_self(path, make())
    msg = str(info.value)
    assert f"'{bad}'" in msg
    assert "closest" in msg and close in msg
    assert "__mjrig_" not in msg  # the rig's hidden helpers are never suggested


def test_known_names_resolve_to_the_right_place(path: str) -> None:
    """Sanity for the above: the same loads with correct names resolve and act where expected."""
    load = VectorForce(name="f", action_site="body:mass@0,0.1,0", vector=[0.0, 0.0, 0.0])
    rm = RuntimeManager(loads=[load], playback_speed=0)
    spec = mujoco.MjSpec.from_string(XML)
    model, data = rm.load_model(spec) if path != "self" else (lambda m: (m, mujoco.MjData(m)))(spec.compile())
    rm.step(model, data)
    np.testing.assert_allclose(load.action_site.rt_pos(model, data), [0.3, 0.1, 0.0], atol=1e-12)
    np.testing.assert_allclose(
        load.action_site.rt_pos(model, data),
        data.site_xpos[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, "tip_left")],
        atol=1e-12,
    )
