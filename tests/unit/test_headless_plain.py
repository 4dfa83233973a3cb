"""``mjrig run`` without a recording: a rig whose loads are all MuJoCo's own is stepped a block
of steps per call into MuJoCo (``engine.step_plain``). The state it ends in is the state of a
step-by-step run, bit for bit; a divergence is reported at the same step with the same words;
the progress callback still sees the run advance."""

from __future__ import annotations

import numpy as np
import pytest

from mjrig.headless import prepare, run
from mjrig.runtime.errors import DivergenceError
from mjrig.runtime.forces import engine
from mjrig.scenario.parse import load_scenario
from tests.sweep_util import spring_mass

RIG = spring_mass(
    duration=3.0,
    timestep=0.001,
    params=(
        'k = { value = 200.0, min = 0.0, max = 1e13, unit = "N/m" }',
        'mass = { value = 1.3, min = 0.1, max = 5.0, unit = "kg", model = "body:block.mass" }',
    ),
    damping="0.7",
)


def setup(tmp_path, k: float):
    path = tmp_path / "rig.toml"
    path.write_text(RIG, encoding="utf-8")
    return prepare(load_scenario(path), record=False, params={"k": k})


def step_by_step(s) -> int:
    """What ``run`` did before blocks: ``RuntimeManager.step`` once a step."""
    n = int(round(s.duration / s.model.opt.timestep))
    with s.runtime:
        for _ in range(n):
            s.runtime.step(s.model, s.data)
    return n


def test_blocks_end_in_the_step_by_step_state_bit_for_bit(tmp_path, monkeypatch):
    calls = []
    real = engine.step_plain
    monkeypatch.setattr("mjrig.headless.step_plain", lambda eng, n: calls.append(n) or real(eng, n))
    a, b = setup(tmp_path, 200.0), setup(tmp_path, 200.0)
    seen: list[float] = []
    assert run(a, progress=seen.append) == step_by_step(b) == 3000
    assert sum(calls) == 2999 and len(calls) == 200  # the first step resolves the rig, one at a time
    assert a.data.time == b.data.time and np.array_equal(a.data.qpos, b.data.qpos)
    assert np.array_equal(a.data.qvel, b.data.qvel) and np.array_equal(a.data.qacc_warmstart, b.data.qacc_warmstart)
    assert seen[0] == 0.0 and seen[-1] == pytest.approx(3.0) and len(seen) >= 100 and seen == sorted(seen)


def test_a_divergence_in_a_block_is_reported_at_its_step_as_step_by_step(tmp_path, monkeypatch):
    # omega * dt = 2.02, just past the stability limit: the swing grows ~1.33x a step and MuJoCo
    # gives up after some 90 steps, in the sixth block of 15 steps
    k = (2.02 / 0.001) ** 2 * 1.3
    outcomes = []
    real = engine.step_plain
    monkeypatch.setattr("mjrig.headless.step_plain", lambda eng, n: outcomes.append(real(eng, n)) or outcomes[-1])
    a, b = setup(tmp_path, k), setup(tmp_path, k)
    with pytest.raises(DivergenceError) as blocks:
        run(a)
    assert outcomes.count(True) >= 3 and outcomes[-1] is False  # blocks ran, and one found it
    with pytest.raises(DivergenceError) as steps:
        step_by_step(b)
    assert str(blocks.value) == str(steps.value) and "diverged at t=" in str(blocks.value)
    assert a.data.time == b.data.time and np.array_equal(a.data.qpos, b.data.qpos)
