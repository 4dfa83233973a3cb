"""Rig editing over the registry: one command pair (PutEntry / RemoveEntry) edits every section,
and the panel state lists every entry the same way (EntryInfo), with what it does now."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mjrig import commands as C
from mjrig.scenario.bundled import MODELS_DIR
from mjrig.scenario.kinds import REGISTRY
from mjrig.scenario.parse import load_scenario
from mjrig.session.kernel import Session


@pytest.fixture()
def session(open_session) -> Session:
    return open_session(MODELS_DIR / "spring_mass.toml")


def errors(s: Session) -> list[str]:
    return [text for level, text in s.publish().messages if level == "error"]


def test_every_section_is_edited_with_the_same_commands(session: Session, tmp_path: Path) -> None:
    puts = {
        "loads": {"name": "push", "kind": "force", "at": "tip", "vector": [1.0, 0.0, 0.0]},
        "proximities": {"name": "gap2", "a": "tip", "b": "base"},
        "requirements": {"name": "clear", "signal": "Proximities/gap2:distance", "min": 0.0},
        "tracers": {"name": "path", "at": "tip", "duration": 1.0},
        "metrics": {"name": "swing", "signal": "Joints/slide_x:qpos", "kind": "peak_to_peak", "start": 0.1},
    }
    for section, spec in puts.items():
        session.handle(C.PutEntry(section, spec))
    state = session.publish()
    for section, spec in puts.items():
        assert spec["name"] in {e.name for e in state.section(section)}, section
    # saved, the scenario has them all, as a scenario file says them
    session.handle(C.SaveScenario(str(tmp_path / "edited.toml")))
    sc = load_scenario(tmp_path / "edited.toml")
    assert {ld.name for ld in sc.loads} == {"main_spring", "push"}
    assert {p.name for p in sc.proximities} == {"gap", "gap2"}
    assert [r.name for r in sc.requirements] == ["clear"]
    assert [(m.name, m.kind, m.start) for m in sc.metrics] == [("swing", "peak_to_peak", 0.1)]
    for section, spec in reversed(puts.items()):  # the requirement first: it reads gap2
        session.handle(C.RemoveEntry(section, spec["name"]))
    state = session.publish()
    assert {e.name for e in state.entries.items} == {"main_spring", "gap"}


def test_an_edit_replaces_the_entry_of_that_name(session: Session) -> None:
    session.handle(C.PutEntry("proximities", {"name": "gap", "a": "tip", "b": "base", "threshold": 0.5}, replace=True))
    (gap,) = session.publish().proximities
    assert gap.spec["b"] == "base" and gap.spec["threshold"] == 0.5
    with pytest.raises(Exception, match="already exists"):
        session.handle(C.PutEntry("proximities", {"name": "gap", "a": "tip", "b": "base"}))


def test_entries_say_what_they_do_now(session: Session) -> None:
    for _ in range(50):
        session.run.step_once(1)
        session.advance()
    state = session.publish()
    (spring,) = state.loads
    assert (spring.section, spring.kind, spring.active) == ("loads", "ideal_spring", True)
    ((magnitude, unit),) = spring.readout
    assert unit == "N" and magnitude > 0
    (gap,) = state.proximities
    ((distance, unit),) = gap.readout
    rm = session.rm
    tip = rm.proximities[0]
    assert unit == "m" and distance == pytest.approx(tip.distance) and gap.active is None
    # a proximity below its threshold raises the alarm the panel paints red
    session.handle(C.PutEntry("proximities", {"name": "gap", "a": "tip", "b": "stop", "threshold": 10.0}, replace=True))
    session.run.step_once(1)
    session.advance()
    assert session.publish().proximities[0].alarm


def test_switching_off_is_for_loads_only(session: Session) -> None:
    session.handle(C.SetEntryActive("loads", "main_spring", False))
    assert session.publish().loads[0].active is False
    session.submit(C.SetEntryActive("proximities", "gap", False))
    session.submit(C.PutEntry("nonsense", {"name": "x"}))
    session.process_commands()
    said = errors(session)
    assert said[-2] == "a proximity cannot be switched off; remove it instead"
    assert said[-1].startswith("no rig section 'nonsense' (one of loads, ")


def test_every_registry_section_can_be_listed(session: Session) -> None:
    """The panel state's entries follow the registry's sections in order."""
    order = [s.key for s in REGISTRY.sections]
    session.handle(C.PutEntry("tracers", {"name": "path", "at": "tip", "duration": 1.0}))
    keys = [e.section for e in session.publish().entries.items]
    assert keys == sorted(keys, key=order.index)
    assert np.isfinite(session.data.time)


def test_a_metric_added_in_the_app_shows_its_value_as_the_run_goes(session: Session, monkeypatch) -> None:
    monkeypatch.setattr("mjrig.session.tools.METRICS_EVERY", 0.0)  # worked out at every publish
    session.handle(C.PutEntry("metrics", {"name": "top", "signal": "Joints/slide_x:qpos", "kind": "min"}))
    (m,) = session.publish().tools.metrics
    assert (m.name, m.kind, m.window, m.value) == ("top", "min", "0..end s", None)  # no step yet
    seen = []
    for _ in range(300):
        session.run.step_once(1)
        session.advance()
        seen.append(session.data.qpos[0])
    (m,) = session.publish().tools.metrics
    assert m.unit == "m" and m.value == pytest.approx(min(seen[:-1]), abs=1e-12) and m.value < -0.1
