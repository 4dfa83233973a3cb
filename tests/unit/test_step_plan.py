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
    rm, drawn = setup.runtime, []
    rm.playback_speed = 1000.0  # paced (fast): the same pacer the plan steps with
    rm.sync_hook = lambda m, d, arrows, lines: drawn.append(d.time)
    rm.resolve(setup.model, setup.data)
    rm.step(setup.model, setup.data)  # the first step writes what a resolve leaves to do (model fields)
    assert rm.plan.between_steps() == (*FEATURES[extra], "pacing", "viewer")
    assert drawn == [setup.data.time]  # the viewer's sync ran after the step, as listed
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


class _Frames:
    """A video recorder's face (no ``due``: asked at every sample): counts the frames taken."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.arrows = 0

    def capture_frame(self, *, mj_model, mj_data, custom_arrows, custom_lines, arrow_scale) -> None:
        self.times.append(mj_data.time)
        self.arrows = len(custom_arrows)

    def save(self) -> None:
        pass


def test_a_video_added_and_removed_is_listed_and_taken_as_long_as_it_is_there(tmp_path):
    path = tmp_path / "rig.toml"
    path.write_text(PLAIN + '[[loads]]\nname = "push"\nkind = "force"\nat = "body:block"\nvector = [1.0, 0, 0]\n')
    setup = prepare(load_scenario(path), out=None, duration=0.05, record=False)
    rm, m, d = setup.runtime, setup.model, setup.data
    rm.step(m, d)
    assert "video" not in rm.plan.between_steps()
    frames = _Frames()
    rm.add_video(frames)
    assert "video" in rm.plan.between_steps()
    for _ in range(3):
        rm.step(m, d)
    assert (
        len(frames.times) == 3
        and frames.times[0] < frames.times[-1]
        and frames.arrows == len(rm.drawing.visuals(m, d)[0]) > 0
    )
    rm.remove_video(frames)
    assert "video" not in rm.plan.between_steps()
    rm.step(m, d)
    assert len(frames.times) == 3
