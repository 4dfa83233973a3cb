"""One scope per opened rig: a fit and a modes job of one rig, still running when rig after rig is
opened, reach none of the later rigs' panel state; each ends with its file and one line. Through
the session's commands, as the panel submits them. Runs a real fit and a modes job for a few
seconds (the fit is cancelled at the end)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mjrig import commands as C
from mjrig.bench_state import NO_MODES
from mjrig.scenario.bundled import MODELS_DIR
from mjrig.session.kernel import Session
from mjrig.session.scope import RigScope
from tests.unit.test_measured import CSV_ENTRY, K, csv_bench, scenario
from tests.waiting import wait_for

pytestmark = pytest.mark.unit

BOX = '<mujoco model="box"><worldbody><body><freejoint/><geom type="box" size=".1 .1 .1"/></body></worldbody></mujoco>'


def _fitting(tmp_path: Path, open_session) -> tuple[Session, Path, Path]:
    """A session on a spring-mass rig with 20 s of bench data whose fit of k and c has been asked
    for (long enough to be still running as other rigs open), the rig's file and a box model's."""
    csv_bench(tmp_path, duration=20.0)
    fitted = scenario(tmp_path, CSV_ENTRY, k=0.8 * K)
    s = open_session(fitted)
    box = tmp_path / "box.xml"
    box.write_text(BOX)
    s.handle(C.RunFit((("k", 1.0, 5000.0, False), ("c", 0.001, 100.0, False))))
    return s, fitted, box


def test_a_scope_keeps_each_owners_state_until_it_is_closed() -> None:
    scope, a, b = RigScope(1, source="a.toml"), object(), object()
    first = scope.state(a, list)
    first.append(1)
    assert scope.state(a, list) is first and scope.state(b, list) == [] and scope.current
    scope.close()
    assert not scope.current and scope.state(a, list) == [], "a closed scope keeps nothing of its rig"


def test_a_fit_and_modes_of_one_rig_reach_none_of_the_rigs_opened_after_it(tmp_path: Path, open_session) -> None:
    s, fitted, box = _fitting(tmp_path, open_session)
    try:
        s.handle(C.ComputeModes(at=300.0))  # the state 300 s into a run: still being worked out as rigs open
        # the fit has reported an evaluation: it is under way, with progress
        wait_for(lambda: (fit := s.publish().bench.fit) and fit.costs, what="the fit's first evaluation", timeout=60)
        state = s.publish()
        assert state.bench.fit is not None and state.bench.fit.running and state.part(C.ModesPart).running
        rigs = [MODELS_DIR / "robot_arm.toml", box, MODELS_DIR / "spring_mass.toml", box, fitted]
        rigs += [MODELS_DIR / f"{n}.toml" for n in ("shaker", "thruster", "clearance", "motor_pendulum", "bumper_drop")]
        for path in rigs:
            s.open(path)
            state = s.publish()
            assert state.bench.fit is None, f"{path.name}: the fit of the first rig is shown"
            assert state.part(C.ModesPart) == NO_MODES, (
                f"{path.name}: the modes of an earlier rig are shown: {state.part(C.ModesPart)}"
            )
        # the modes job ends (it finds its rig closed)
        wait_for(lambda: any("modes of" in t for _, t in s.publish().messages), what="the modes' line", timeout=60)
        s.handle(C.CancelJobs())  # the fit: stopped, and said so, on the rig of its own
        wait_for(lambda: any("a fit of" in t for _, t in s.publish().messages), what="the fit's line", timeout=60)
        state = s.publish()
        assert state.bench.fit is None and state.part(C.ModesPart) == NO_MODES, (
            "a job that ended late wrote on another rig"
        )
        lines = [text for _, text in state.messages]
        assert sum("a fit of" in t for t in lines) == 1 and sum(t.startswith("modes of") for t in lines) == 1, lines
        assert any(f"a fit of {fitted.name} ended" in t for t in lines), lines
    finally:
        s.close()


def test_opening_or_reloading_while_a_fit_runs_asks_and_each_answer_does_what_it_says(
    tmp_path: Path, open_session
) -> None:
    """Runs a real fit for a few seconds (cancelled by the last answer)."""
    s, fitted, box = _fitting(tmp_path, open_session)
    try:
        wait_for(lambda: s.publish().jobs, what="the fit under way", timeout=60)
        for ask in (C.OpenModel(str(box)), C.Reload(changed="model")):  # a drop, Open, Recent; hot reload
            opened = s.publish().opened
            s.handle(ask)
            state = s.publish()
            assert state.opened == opened and state.source == str(fitted), "it went ahead without asking"
            assert state.pending_switch is not None and state.pending_switch[1].startswith("a fit")
            assert state.pending_switch[0] == ("open box.xml" if isinstance(ask, C.OpenModel) else "reload the model")
            s.handle(C.KeepRig())  # Cancel: nothing happens, the fit runs on
            assert s.publish().pending_switch is None and s.publish().jobs
        s.handle(C.OpenModel(str(box)))
        s.handle(C.AnswerSwitch("keep"))  # keep it running and open
        state = s.publish()
        assert state.source == str(box) and state.jobs and state.pending_switch is None
        s.handle(C.OpenModel(str(fitted)))
        s.handle(C.AnswerSwitch("stop"))  # stop it and open
        assert s.publish().source == str(fitted)
        wait_for(lambda: any("a fit of" in t for _, t in s.publish().messages), what="the fit's line", timeout=60)
        assert not s.publish().jobs
        # no job: nothing to ask
        s.handle(C.OpenModel(str(box)))
        assert s.publish().source == str(box) and s.publish().pending_switch is None
    finally:
        s.close()
