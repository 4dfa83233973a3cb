"""Every edit of the rig can be taken back: Undo puts the document as it was before the edit back
(a removed load returns with its values and its telemetry column), Redo does it again, a slider's
drag is one step, at least 100 steps are kept, another rig starts a fresh history, and an edit
whose target has gone is one line. Through the session's commands, as the panel and keys submit
them. Fast (about 2 s)."""

from __future__ import annotations

import pytest

from mjrig import commands as C
from mjrig.scenario.bundled import MODELS_DIR

pytestmark = pytest.mark.unit

TWO = """<mujoco><worldbody><body name="m" pos="0 0 1"><freejoint/><geom size=".1"/><site name="a"/></body>
{site}</worldbody></mujoco>"""

EXTRA = {"name": "extra", "kind": "ideal_spring", "at": "tip", "to": "base", "stiffness": 200.0, "rest_length": 0.25}


def _loads(s) -> dict[str, dict]:
    return {e.name: e.spec for e in s.publish().entries.items if e.section == "loads"}


def test_a_removed_load_comes_back_with_its_values_and_redo_removes_it_again(open_session) -> None:
    s = open_session(MODELS_DIR / "spring_mass.toml")
    try:
        s.handle(C.PutEntry("loads", EXTRA))
        assert s.publish().entries.undo == "add load 'extra'"
        s.handle(C.RemoveEntry("loads", "extra"))
        assert "extra" not in _loads(s) and s.publish().entries.undo == "remove load 'extra'"
        s.handle(C.Undo())
        assert _loads(s)["extra"] == EXTRA, "the load came back otherwise"
        assert any(c.startswith("Loads/extra:") for c in s.rig.runtime.signal_units()), "its telemetry did not return"
        assert s.publish().entries.redo == "remove load 'extra'"
        s.handle(C.Redo())
        assert "extra" not in _loads(s)
        s.handle(C.Undo())
        s.handle(C.Undo())  # and the add itself
        assert "extra" not in _loads(s) and s.publish().entries.undo == ""
        with pytest.raises(Exception, match="nothing to undo"):
            s.handle(C.Undo())
    finally:
        s.close()


def test_a_drag_is_one_step_the_value_comes_back_and_a_hundred_steps_are_kept(open_session) -> None:
    s = open_session(MODELS_DIR / "spring_mass.toml")
    try:
        k = lambda: next(p.value for p in s.publish().entries.params if p.name == "k")  # noqa: E731
        assert k() == 200.0
        for v in (210.0, 250.0, 300.0):  # one drag of the slider
            s.handle(C.SetParam("k", v))
        s.handle(C.SetParam("c", 2.0))
        s.handle(C.Undo())
        assert next(p.value for p in s.publish().entries.params if p.name == "c") == 1.0 and k() == 300.0
        s.handle(C.Undo())
        assert k() == 200.0 and next(p for p in s.rig.runtime.params if p.name == "k").value == 200.0
        assert s.document.doc["params"]["k"]["value"] == 200.0
        for i in range(120):  # 120 separate edits
            s.handle(C.PutEntry("loads", {**EXTRA, "name": f"s{i}"}))
        for _ in range(110):
            s.handle(C.Undo())
        assert len([n for n in _loads(s) if n.startswith("s")]) == 10
    finally:
        s.close()


def test_another_rig_starts_a_fresh_history_and_a_gone_target_is_one_line(open_session, tmp_path) -> None:
    s = open_session(MODELS_DIR / "spring_mass.toml")
    try:
        s.handle(C.PutEntry("loads", EXTRA))
        s.open(MODELS_DIR / "robot_arm.toml")
        assert s.publish().entries.undo == "", "an edit of the last rig is offered for undo"
        model = tmp_path / "two.xml"
        model.write_text(TWO.format(site='<site name="b" pos="0 0 .5"/>'))
        rig = tmp_path / "two.toml"
        rig.write_text(
            'model = "two.xml"\n[[loads]]\nname = "pull"\nkind = "ideal_spring"\nat = "a"\nto = "b"\nstiffness = 10.0\n'
        )
        s.open(rig)
        s.handle(C.RemoveEntry("loads", "pull"))
        model.write_text(TWO.format(site=""))  # the model edited on disk: site b is gone
        s.handle(C.Reload())
        s.handle(C.Undo())  # the load came back would name b
        errors = [t for lv, t in s.publish().messages if lv == "error" and "cannot undo" in t]
        assert len(errors) == 1 and "'b'" in errors[0], errors
        assert s.publish().entries.undo == "", "the step that cannot be taken back any more stays offered"
        s.handle(C.PutEntry("loads", {**EXTRA, "at": "a", "to": "body:world@0,0,0"}))  # and the history goes on
        s.handle(C.Undo())
        assert "extra" not in _loads(s)
    finally:
        s.close()
