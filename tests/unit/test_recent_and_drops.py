"""What the panel lists and opens: Recent's short names tell files of one name apart; of files
dropped together one opens and the rest are named."""

from __future__ import annotations

from mjrig.desktop.sim_thread import pick_dropped
from mjrig.settings.recent import short_names


def test_short_names_grow_only_where_names_clash():
    assert short_names(["/w/a/spring_mass.toml", "/w/b/spring_mass.toml", "/m/spring_mass.xml"]) == [
        "a/spring_mass.toml",
        "b/spring_mass.toml",
        "spring_mass.xml",
    ]
    assert short_names(["/x/a/s.toml", "/y/a/s.toml", "/z/b/s.toml"]) == ["x/a/s.toml", "y/a/s.toml", "b/s.toml"]
    assert short_names(["/s.toml", "/a/s.toml"]) == ["/s.toml", "a/s.toml"]
    assert short_names([]) == []


def test_a_drop_opens_the_scenario_else_the_first_and_names_the_rest():
    assert pick_dropped(["/f/one.xml"]) == ("/f/one.xml", None)
    target, note = pick_dropped(["/f/one.xml", "/f/two.xml"])
    assert target == "/f/one.xml" and note is not None and "ignored two.xml" in note and "\n" not in note
    target, note = pick_dropped(["/f/one.xml", "/f/rig.toml", "/f/three.mjb"])
    assert target == "/f/rig.toml" and note is not None and "ignored one.xml, three.mjb" in note
