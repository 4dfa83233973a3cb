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
    rm.pacer.speed = 1000.0  # paced (fast): the same pacer the plan steps with
    rm.sync_hook = lambda m, d, arrows, lines: drawn.append(d.time)
    rm.resolve(setup.model, setup.data)
    rm.step(setup.model, setup.data)  # the first step writes what a resolve leaves to do (model fields)
    assert rm.plan.between_steps() == (*FEATURES[extra], "viewer", "pacing")
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


RIG_XML = """<mujoco>
  <option timestep="0.001"/>
  <worldbody>
    <body name="block" pos="0.3 0 0.5">
      <joint name="slide_x" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.05 0.05 0.05" mass="1"/>
      <site name="tip"/>
    </body>
  </worldbody>
  <actuator><motor name="push" joint="slide_x"/></actuator>
</mujoco>
"""

EVERY_PART = """model = "rig.xml"
[simulation]
duration = 1.0
[params]
mass = { value = 1.0, min = 0.1, max = 5.0, unit = "kg", model = "body:block.mass" }
u = { value = 2.0, min = -5.0, max = 5.0, unit = "N" }
[[loads]]
name = "pin"
kind = "joint_friction"
joint = "slide_x"
mu = 0.2
pin_radius = 0.01
[[controls]]
actuator = "push"
value = "u"
[[metrics]]
name = "low"
signal = "Joints/slide_x:qpos"
kind = "min"
[[tracers]]
name = "path"
at = "tip"
duration = 0.01
"""
REQUIREMENT = '[[requirements]]\nname = "r"\nsignal = "Joints/slide_x:qpos"\nmax = -1.0\n'


def _every_part(tmp_path, *, with_requirement: bool):
    """A rig with every kind of work between steps, resolved, and what shows each was done."""
    from mjrig.runtime.pacing import Pacer
    from mjrig.runtime.telemetry.signals import SignalManager

    (tmp_path / "rig.xml").write_text(RIG_XML, encoding="utf-8")
    (tmp_path / "rig.toml").write_text(EVERY_PART + (REQUIREMENT if with_requirement else ""), encoding="utf-8")
    sc = load_scenario(tmp_path / "rig.toml")
    setup = prepare(sc, out=None, duration=1.0, record=False)
    rm, m, d = setup.runtime, setup.model, setup.data
    clock_calls = []
    rm.pacer = Pacer(speed=1000.0, clock=lambda: clock_calls.append(1) or 0.0)
    monitor = SignalManager(None, groups=["joints"])
    rm.monitors.append(monitor)
    frames, synced = _Frames(), []
    rm.video_recorders.append(frames)
    rm.sync_hook = lambda model, data, arrows, lines: synced.append(data.time)
    rm.resolve(m, d)
    pin = next(ld for ld in rm.loads if ld.name == "pin")
    pin.pin_load = -1.0  # a mark the pins' reactions overwrite
    sc.params["mass"].value = 2.0  # moved after the resolve: written at the next step
    sc.params["u"].value = 3.0  # held from the next step (a resolve writes the input it had)
    for _ in range(5):
        rm.step(m, d)
    checks, tracer = rm.checks, rm.tracers[0]
    done = {
        "loads": d.qfrc_applied[0] != 0.0,  # the pin's friction, in Python
        "model fields": m.body_mass[1] == 2.0,
        "actuator inputs": d.ctrl[0] == 3.0,
        "recording": monitor.rows_recorded > 0,
        "video": len(frames.times) > 0,
        "pin reactions": pin.pin_load != -1.0,
        "tracers": tracer.trail() is not None,
        "viewer": len(synced) == 5,
        "pacing": len(clock_calls) > 0,
    }
    if with_requirement:
        done["requirements"] = not checks.items[0].passed  # fails at once: max -1 m
    else:
        done["metrics"] = checks.metrics.n > 0
    return rm, done


@pytest.mark.parametrize("with_requirement", [True, False], ids=["requirements", "metrics"])
def test_the_step_runs_exactly_its_parts(tmp_path, with_requirement):
    """Each part of the tuple is listed and its work is done: a part made but left out of
    ``_make_parts``'s tuple would be neither (the next test)."""
    rm, done = _every_part(tmp_path, with_requirement=with_requirement)
    assert {w for w, did in done.items() if not did} == set()
    # listed as the rig is now: the model fields were written (nothing left to write)
    assert set(rm.plan.between_steps()) == set(done) - {"model fields"}


@pytest.mark.parametrize(
    "left_out",
    [
        "loads",
        "requirements",
        "recording",
        "video",
        "model fields",
        "actuator inputs",
        "pin reactions",
        "tracers",
        "viewer",
        "pacing",
    ],
)
def test_a_part_left_out_of_the_tuple_is_neither_listed_nor_done(tmp_path, monkeypatch, left_out):
    from mjrig.runtime.step_plan import StepPlan

    made = StepPlan._make_parts
    monkeypatch.setattr(StepPlan, "_make_parts", lambda self: tuple(p for p in made(self) if p.work != left_out))
    rm, done = _every_part(tmp_path, with_requirement=True)
    assert {w for w, did in done.items() if not did} == {left_out}
    assert left_out not in rm.plan.between_steps()
