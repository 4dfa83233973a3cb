"""Sweeps in lock-step (``mjrig.campaign.lockstep``): the same rows, bit for bit, as every trial
run on its own -- requirements of every kind (min, max, final, windows, NaN-free and stop_on),
signals read before the step (joints) and computed by it (sensors, bodies), params written into
tendons (a spring's stiffness) and masses (``mj_setConst``), and trials that must run alone (a
divergence) -- and it really runs in lock-step."""

from __future__ import annotations

import polars as pl
import pytest

from mjrig.campaign import lockstep
from mjrig.campaign.sweep import run_sweep
from mjrig.campaign.trial import SweepJob, TrialRunner
from mjrig.scenario.parse import load_scenario
from tests.sweep_util import MASS_PARAM, spring_mass

RIG = (
    spring_mass(
        duration=0.6,
        timestep=0.001,
        params=(
            'k = { value = 200.0, min = 0.0, max = 1e13, unit = "N/m" }',
            "c = { value = 0.5, min = 0.0, max = 50.0 }",
            MASS_PARAM,
        ),
        damping='"c"',
    )
    + """
[[requirements]]
name = "travel"
signal = "Joints/slide_x:qpos"
min = -0.12

[[requirements]]
name = "speed_late"
signal = "Joints/slide_x:qvel"
max = 1.2
start = 0.2
end = 0.45

[[requirements]]
name = "settles"
signal = "Sensors/block_x:0"
final = 0.0
tolerance = 0.08

[[requirements]]
name = "block_height"
signal = "Bodies/block:x"
max = 0.3
start = 0.3
{extra}
[sweep]
seed = 3
trials = 3
[sweep.params]
k = { values = [60.0, 250.0, 900.0, 1e12] }
mass = { distribution = "normal", mean = 1.0, std = 0.2 }
c = { range = [0.0, 4.0], steps = 2 }
"""
)

STOPS = """
[[requirements]]
name = "quick_fail"
signal = "Joints/slide_x:qpos"
min = -0.05
stop_on = "fail"

[[requirements]]
name = "early_pass"
signal = "Joints/slide_x:qvel"
max = 5.0
end = 0.1
stop_on = "pass"
"""


MIXED = """
[[loads]]
name = "cable"
kind = "tension_spring"
at = "tip"
to = "base"
stiffness = "k"
damping = "c"
rest_length = 0.3

[[loads]]
name = "stop"
kind = "stroke_compression_spring"
at = "tip"
to = "base"
stiffness = 150.0
damping = "c"
preload = 2.0
max_stroke = 0.05

[[loads]]
name = "shake"
kind = "force"
at = "tip"
vector = [{ profile = "sine", amplitude = 3.0, frequency = 4.0 }, 0.0, 0.0]

[[loads]]
name = "rub"
kind = "joint_friction"
joint = "slide_x"
coulomb = 0.3
"""
"""Laws MuJoCo's tendon springs do not compute (damping on one side, a stroke window with
preload, a profile, joint friction), with the swept params: the compiled laws, in lock-step."""

METRICS = (
    STOPS
    + """
[[metrics]]
name = "swing"
signal = "Joints/slide_x:qpos"
kind = "peak_to_peak"

[[metrics]]
name = "late_speed"
signal = "Joints/slide_x:qvel"
kind = "rms"
start = 0.02

[[metrics]]
name = "height"
signal = "Bodies/block:x"
kind = "integral"

[[metrics]]
name = "sensed"
signal = "Sensors/block_x:0"
kind = "time_of_min"
"""
)
"""Metrics on signals read before the step (joints) and computed by it (bodies, sensors), with
trials that end early (``stop_on``): each trial's log is its own, up to its stop."""


@pytest.fixture
def alone(monkeypatch):
    """The trials that ran on their own (``TrialRunner.run``) while the fixture is in use."""
    ran: list[int] = []
    real = TrialRunner.run

    def run(self, task):
        ran.append(task if isinstance(task, int) else task[0])  # a number, or (number, values, seed)
        return real(self, task)

    monkeypatch.setattr(TrialRunner, "run", run)
    return ran


@pytest.mark.parametrize("extra", ["", STOPS, MIXED, METRICS], ids=["blocks", "stop_on", "mixed_loads", "metrics"])
def test_lockstep_rows_equal_the_one_by_one_rows(tmp_path, alone, extra):
    path = tmp_path / "rig.toml"
    path.write_text(RIG.replace("{extra}", extra), encoding="utf-8")
    one = pl.read_parquet(run_sweep(load_scenario(path), out=tmp_path / "one.parquet", workers=1, lockstep=False).path)
    assert sorted(alone) == list(range(24))
    alone.clear()
    both = pl.read_parquet(run_sweep(load_scenario(path), out=tmp_path / "both.parquet", workers=2).path)
    assert both.equals(one)
    diverged = one.filter(pl.col("status") == "diverged")["trial"].to_list()
    assert diverged and sorted(alone) == diverged  # only those ran alone: the rest in lock-step
    # the rows say different things, so equal rows mean something
    varied = (
        ["Requirements/quick_fail:pass"]
        if extra in (STOPS, METRICS)
        else ["Requirements/travel:pass", "Requirements/settles:pass", "Requirements/block_height:pass"]
    )
    for col in ["status", *varied]:
        assert one[col].n_unique() > 1, col
    assert one["Requirements/travel:value"].n_unique() > 10
    if extra == METRICS:
        for name in ("swing", "late_speed", "height", "sensed"):
            assert one[f"Metrics/{name}:value"].drop_nulls().n_unique() > 5, name
    if extra in (STOPS, METRICS):  # early_pass ends every trial at 0.1 s: the window of speed_late never opened
        assert one.filter(pl.col("status") != "diverged")["Requirements/early_pass:pass"].all()
        assert one["Requirements/speed_late:value"].is_null().all()


def test_lockstep_refuses_what_it_cannot_reproduce(tmp_path):
    def refusal(text: str, record_dir: str | None = None) -> str | None:
        path = tmp_path / "rig.toml"
        path.write_text(text, encoding="utf-8")
        sc = load_scenario(path)
        job = SweepJob(text=sc.text, source=str(path), base=str(tmp_path), record_dir=record_dir)
        return lockstep.lockstep_refusal(TrialRunner(job))

    rig = RIG.replace("{extra}", "")
    assert refusal(rig) is None
    assert (
        refusal(rig.replace("Sensors/block_x:0", "Sensors/block_acc:0"))
        == "requirement 'settles' reads Sensors/block_acc:0"
    )
    assert (
        refusal(rig.replace("Bodies/block:x", "Loads/main_spring:fx"))
        == "requirement 'block_height' reads Loads/main_spring:fx"
    )
    assert refusal(rig, record_dir=str(tmp_path / "trials")) == "trials are recorded"
    metric = '\n[[metrics]]\nname = "pull"\nsignal = "Loads/main_spring:fx"\nkind = "max"\n'
    assert refusal(rig.replace("[sweep]", metric + "\n[sweep]")) == "metric 'pull' reads Loads/main_spring:fx"
