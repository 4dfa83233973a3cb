"""The history ring: restoring any recorded instant and stepping on repeats the run bit for bit
(a rig with springs, a controlled actuator, a pin friction and contacts), and the ring never
holds more than its bound (simulated seconds and bytes), dropping the oldest rows first."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.telemetry.history import ROW_OVERHEAD, History
from mjrig.runtime.telemetry.snapshots import STATE_SPEC
from tests.unit.unit_util import ARM_WORLD, arm_rig

XML = f'<mujoco model="histrig">{ARM_WORLD}</mujoco>'


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "RK4"])
def test_restoring_any_instant_and_stepping_on_repeats_the_run_bit_for_bit(rig, integrator):
    rm = arm_rig()
    model, data = rig.build(rm, XML, "native", integrator=integrator)
    rm.resolve(model, data)  # as every rig the app or the CLI builds: the pins' loads are known from t = 0
    hist = History(model, interval=model.opt.timestep)
    trajectory = []
    for _ in range(900):  # the ball lands at ~0.25 s: contacts and a warm-started solver
        hist.push(data, rm.rig_state())
        rm.step(model, data)
        trajectory.append(np.concatenate([[data.time], data.qpos, data.qvel]))
    trajectory = np.array(trajectory)
    assert len(hist) == 900 and data.ncon > 0
    assert rm.rig_state()  # the pin friction's load is part of the rig's state
    rng = np.random.default_rng(13)
    for i in sorted(rng.choice(900, size=6, replace=False)) + [0, 899]:
        rm.restore(data, hist.snapshot(int(i)))
        assert data.time == hist.time(int(i))
        again = []
        for _ in range(900 - i):
            rm.step(model, data)
            again.append(np.concatenate([[data.time], data.qpos, data.qvel]))
        assert np.array_equal(np.array(again), trajectory[i:]), f"row {i} did not repeat the run"


def _pushes(model: mujoco.MjModel, data: mujoco.MjData, hist: History, n: int) -> list[float]:
    seen = []
    for _ in range(n):
        hist.push(data)
        mujoco.mj_step(model, data)
        seen.append(hist.nbytes)
        assert hist.nbytes <= hist.max_bytes and hist.time(-1) - hist.time(0) <= hist.max_seconds
        assert hist.reserved_bytes <= hist.max_bytes
    return seen


def test_the_ring_never_exceeds_its_bound_and_drops_the_oldest_first():
    model = mujoco.MjModel.from_xml_string(XML)
    data = mujoco.MjData(model)
    width = mujoco.mj_stateSize(model, STATE_SPEC)
    # bytes bound the ring: 100 rows
    hist = History(model, interval=1e-3, max_seconds=60.0, max_bytes=100 * (8 * width + ROW_OVERHEAD) + 7)
    assert hist.capacity == 100
    _pushes(model, data, hist, 1234)
    assert len(hist) == 100 and hist.nbytes == 100 * hist.row_bytes
    times = hist.times()
    np.testing.assert_allclose(times, np.arange(1134, 1234) * 1e-3, atol=1e-12)  # the newest 100
    assert np.all(np.diff(times) > 0)
    # seconds bound the ring: 0.05 s at 1 ms -> 51 rows, also when the timestep shrinks later
    model2 = mujoco.MjModel.from_xml_string(XML)
    data2 = mujoco.MjData(model2)
    hist2 = History(model2, interval=1e-3, max_seconds=0.05)
    assert hist2.capacity == 51
    _pushes(model2, data2, hist2, 500)
    assert len(hist2) in (50, 51) and hist2.time(-1) - hist2.time(0) == pytest.approx(0.05, abs=1.5e-3)
    model2.opt.timestep = 2e-3
    _pushes(model2, data2, hist2, 500)
    assert hist2.time(-1) - hist2.time(0) <= 0.05 and len(hist2) in (25, 26)
    # a row's state is mj_getState's
    state = np.empty(width)
    mujoco.mj_getState(model2, data2, state, STATE_SPEC)
    hist2.push(data2)
    assert np.array_equal(hist2.state(-1), state)


def test_index_at_truncate_and_time_going_back():
    model = mujoco.MjModel.from_xml_string(XML)
    data = mujoco.MjData(model)
    hist = History(model, interval=1e-3, max_seconds=0.01)  # 11 rows: the ring wraps
    _pushes(model, data, hist, 25)
    times = hist.times()
    assert hist.index_at(times[0] - 1) == 0 and hist.index_at(times[-1] + 1) == len(hist) - 1
    for i, t in enumerate(times):
        assert hist.index_at(t) == i and hist.index_at(t + 0.4e-3) == i
    hist.truncate_after(4)
    assert len(hist) == 5 and hist.time(-1) == times[4]
    data.time = times[2]  # a restore (or reset) to an earlier time: the ring continues from there
    hist.push(data)
    assert len(hist) == 3 and np.array_equal(hist.times(), times[:3])
    with pytest.raises(ConfigError, match="positive"):
        History(model, interval=1e-3, max_seconds=0)


def test_the_ring_agrees_with_a_plain_list_over_random_pushes_resets_reads_and_rig_states():
    """Pushes only write rows and the bookkeeping waits for a read: whatever the order of pushes,
    reads, time going back, truncation and rig state, the ring holds what a plain list would."""
    model = mujoco.MjModel.from_xml_string(XML)
    data = mujoco.MjData(model)
    rng = np.random.default_rng(3)
    hist = History(model, interval=1e-3, max_seconds=0.05, max_bytes=10**9)  # 51 rows by time
    small = History(model, interval=1e-3, max_seconds=60.0, max_bytes=30 * hist.row_bytes)  # 30 by bytes
    for h in (hist, small):
        ref: list[tuple[float, dict | None]] = []
        t = 0.0
        for _ in range(3000):
            op = rng.random()
            if op < 0.9:
                t = round(t + 1e-3, 9)
                rig = {"pin": t} if rng.random() < 0.02 else None
                data.time, data.qpos[0] = t, t
                h.push(data, rig)
                ref = [r for r in ref if r[0] < t] + [(t, rig)]
                ref = ref[-h.capacity :]
                ref = [r for r in ref if t - r[0] <= h.max_seconds]
            elif op < 0.95 and ref:  # back in time (a reset or restore), then on from there
                t = float(rng.choice([r[0] for r in ref])) - 1e-3 * rng.integers(0, 3)
            elif op < 0.97 and ref:
                k = int(rng.integers(-1, len(ref)))
                h.truncate_after(k)
                ref = ref[: k + 1]
                t = ref[-1][0] if ref else t
            else:  # a read in the middle
                assert len(h) == len(ref)
            if rng.random() < 0.1:
                assert len(h) == len(ref) and np.array_equal(h.times(), [r[0] for r in ref])
                if ref:
                    i = int(rng.integers(0, len(ref)))
                    snap = h.snapshot(i)
                    assert snap.rig == (ref[i][1] or {}) and h.state(i)[0] == ref[i][0]
        assert len(h) <= h.capacity and h.nbytes <= h.max_bytes
