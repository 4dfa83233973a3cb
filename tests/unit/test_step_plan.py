"""One answer to "does anything run in Python between steps?" (``StepPlan.between_steps``): each
per-step feature of a rig is named there, ``mjrig run`` steps in plain blocks only when nothing
is, and a lock-step sweep refuses what ``mujoco.batch`` cannot do with the same words."""

from __future__ import annotations

import pytest

from mjrig.campaign import lockstep
from mjrig.campaign.trial import SweepJob, TrialRunner
from mjrig.headless import prepare, run
from mjrig.scenario.parse import load_scenario
from tests.sweep_util import BASE

PLAIN = BASE.split("[[requirements]]")[0]
FEATURES = {
    "": (),
    '[[requirements]]\nname = "r"\nsignal = "Joints/slide_x:qpos"\nmin = -1.0\n': ("requirements",),
    '[[metrics]]\nname = "low"\nsignal = "Joints/slide_x:qpos"\nkind = "min"\n': ("metrics",),
    '[[tracers]]\nname = "path"\nat = "tip"\nduration = 1.0\n': ("tracers",),
    # compiled: no Python between steps
    '[[loads]]\nname = "rub"\nkind = "joint_friction"\njoint = "slide_x"\ncoulomb = 0.5\n': (),
    # a pin's friction level follows the reaction of the step before: Python
    '[[loads]]\nname = "pin"\nkind = "joint_friction"\njoint = "slide_x"\nmu = 0.2\npin_radius = 0.01\n': (
        "loads",
        "pin reactions",
    ),
}


@pytest.mark.parametrize(
    "extra", list(FEATURES), ids=["plain", "requirements", "metrics", "tracers", "friction", "pin"]
)
def test_each_feature_is_named_once_and_both_callers_agree(tmp_path, extra):
    path = tmp_path / "rig.toml"
    path.write_text(PLAIN + extra, encoding="utf-8")
    setup = prepare(load_scenario(path), out=None, duration=0.05, record=False)
    run(setup)  # resolved as a run leaves it (the params' model fields written at its first step)
    work = setup.runtime.plan.between_steps()
    assert work == FEATURES[extra]
    assert setup.runtime.plan.between_steps(pacing=True, viewer=True) == (*FEATURES[extra], "pacing", "viewer")
    sc = load_scenario(path)
    refusal = lockstep.lockstep_refusal(TrialRunner(SweepJob(text=sc.text, source=str(path), base=str(tmp_path))))
    if not set(work) - {"requirements", "metrics", "loads"}:  # checks in the batch; loads: trial by trial
        assert refusal is None
    else:
        first = next(w for w in work if w != "loads")
        assert refusal == "the rig has " + lockstep.WORK[first]


def test_a_recorder_is_work_between_steps(tmp_path):
    path = tmp_path / "rig.toml"
    path.write_text(PLAIN, encoding="utf-8")
    setup = prepare(load_scenario(path), out=tmp_path / "rec.parquet", duration=0.05)
    run(setup)
    assert setup.runtime.plan.between_steps() == ("recording",)
