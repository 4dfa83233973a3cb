"""Faults and stress on a headless Session: command floods from several threads while recording,
an exception inside a user load function, and the recording folder vanishing mid-run.

Every thread is joined with a timeout and checked, so a deadlock fails the test instead of hanging
it. No display is needed: the Session is driven by ``run_headless_frames`` on its own thread.
"""

from __future__ import annotations

import math
import random
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import mujoco
import numpy as np
import polars as pl
import pytest

from mjrig import commands as C
from mjrig.desktop.sim_thread import run_headless_frames
from mjrig.runtime import LoadError, PointToPointForce, RuntimeManager, ScalarForce
from mjrig.runtime.files.parquet_sink import segment_dir
from mjrig.session.kernel import Session
from tests.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "models" / "spring_mass.toml"
MODEL = ROOT / "models" / "spring_mass.xml"
DT = 0.001  # s, the scenario's timestep
HAMMER_S = 6.0  # wall seconds of command flooding
JOIN_S = 30.0  # a thread still alive after this is a deadlock
K_RANGE = (0.0, 5000.0)  # the scenario's [min, max] of k (N/m)
C_RANGE = (0.0, 50.0)  # ... and of c (N*s/m)


# --- helpers -----------------------------------------------------------------------------------


class Messages:
    """Every message the session logs, with the simulated time and step count when it was logged.

    The snapshot keeps only the last 200 messages; a flood of commands logs thousands, so the
    test listens through ``status.on_message`` instead (called on the simulation thread, and on the
    recording-close thread for the final "recording stopped" line).
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self.items: list[tuple[str, str, float, int]] = []
        self._lock = threading.Lock()
        session.status.on_message = self._add

    def _add(self, level: str, text: str) -> None:
        s = self.session
        t = float(s.data.time) if s.data is not None else math.nan
        with self._lock:
            self.items.append((level, text, t, s.steps))

    def snapshot(self) -> list[tuple[str, str, float, int]]:
        with self._lock:
            return list(self.items)

    def errors(self) -> list[str]:
        return [text for level, text, _, _ in self.snapshot() if level == "error"]

    def find(self, prefix: str) -> list[tuple[str, float, int]]:
        return [(text, t, n) for _, text, t, n in self.snapshot() if text.startswith(prefix)]


class Worker:
    """A thread that keeps any exception it raised, for the test to assert on."""

    def __init__(self, name: str, fn: Callable[[], object]) -> None:
        self.failure: BaseException | None = None
        self._fn = fn
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self._fn()
        except BaseException as exc:  # noqa: BLE001 - reported by join()
            self.failure = exc

    def join(self, timeout: float = JOIN_S) -> None:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"thread {self.thread.name} still running after {timeout} s (deadlock?)"
        assert self.failure is None, f"thread {self.thread.name} raised {self.failure!r}"


def start_stepping(session: Session) -> Worker:
    """The simulation thread: commands, steps, snapshots, until Quit."""
    return Worker("stepper", lambda: run_headless_frames(session, seconds=120.0))


def leftover_threads(before: set[threading.Thread]) -> list[str]:
    """Threads started since ``before`` that are still running (writers, finalizers) after a grace time."""
    deadline = time.monotonic() + 5.0
    while True:
        alive = [t.name for t in threading.enumerate() if t not in before and t.is_alive()]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.02)


def close_with_timeout(session: Session) -> None:
    """``session.close()`` (joins the recording finalizer) must neither raise nor hang."""
    Worker("close", session.close).join()


@pytest.fixture
def session():
    """A Session on spring_mass.toml; quit and closed at teardown even when the test failed
    (so a failing test leaves no stepping thread or writer behind)."""
    s = Session()
    s.open(SCENARIO)
    yield s
    s.unsaved.quit = True
    closer = threading.Thread(target=s.close, name="teardown-close", daemon=True)
    closer.start()
    closer.join(JOIN_S)


def spring_spec(name: str, rng: random.Random) -> dict:
    return {
        "name": name,
        "kind": "ideal_spring",
        "at": "tip",
        "to": "base",
        "stiffness": round(rng.uniform(0.0, 400.0), 3),
        "damping": round(rng.uniform(0.0, 3.0), 3),
        "rest_length": 0.25,
    }


def clamp(v: float, lo_hi: tuple[float, float]) -> float:
    return min(max(v, lo_hi[0]), lo_hi[1])


# --- 1. hammering ------------------------------------------------------------------------------

# Commands that must fail, each with a part of the error message it must log.
DELIBERATE = [
    (C.RemoveEntry("loads", "no_such_load"), "no load named 'no_such_load'"),
    (C.SetEntryActive("loads", "no_such_load", True), "no load named 'no_such_load'"),
    (C.SetParam("no_such_param", 1.0), "no param named 'no_such_param'"),
    (C.SetParam("k", math.nan), "param 'k': value must be finite"),
    (C.PutEntry("loads", {"name": "lost", "kind": "ideal_spring", "at": "nowhere", "to": "base"}), "'nowhere'"),
    (
        C.PutEntry("loads", {"name": "main_spring", "kind": "ideal_spring", "at": "tip", "to": "base"}),
        "a load named 'main_spring' already exists",
    ),
]


def expected_error(text: str) -> bool:
    return "\n" not in text and any(part in text for _, part in DELIBERATE)


def test_command_flood_from_two_threads_while_recording(session: Session, tmp_path: Path) -> None:
    before = set(threading.enumerate())
    log = Messages(session)
    out = tmp_path / "stress.parquet"
    session.submit(C.SetSpeed(0))
    session.submit(C.StartRecording(str(out)))  # runs before the first step: every step is recorded
    stepper = start_stepping(session)

    deadline = time.monotonic() + HAMMER_S
    sent_k: list[float] = []
    sent_c: list[float] = []
    counts = {"params": 0, "loads": 0, "deliberate": 0}

    def params_thread() -> None:
        rng = random.Random(1)
        i = 0
        while time.monotonic() < deadline:
            i += 1
            k = rng.uniform(-500.0, 6000.0)  # some out of range: must be clamped
            sent_k.append(k)
            session.submit(C.SetParam("k", k))
            if i % 3 == 0:
                c = rng.uniform(-2.0, 60.0)
                sent_c.append(c)
                session.submit(C.SetParam("c", c))
            if i % 7 == 0:
                session.submit(C.SetEntryActive("loads", "main_spring", rng.random() < 0.7))
            if i % 400 == 0:
                cmd, _ = DELIBERATE[(i // 400) % len(DELIBERATE)]
                session.submit(cmd)
                counts["deliberate"] += 1
            counts["params"] += 1
            time.sleep(0.0005 if i % 4 == 0 else 0)

    def loads_thread() -> None:
        rng = random.Random(2)
        i = 0
        while time.monotonic() < deadline:
            name = f"extra{i}"
            session.submit(C.PutEntry("loads", spring_spec(name, rng)))
            for _ in range(20):  # the load lives for a while, toggled
                session.submit(C.SetEntryActive("loads", name, rng.random() < 0.5))
                time.sleep(0.004)
            session.submit(C.SetEntryActive("loads", name, True))
            session.submit(C.RemoveEntry("loads", name))
            counts["loads"] += 23
            i += 1
            if i % 3 == 0:  # sometimes an instant add + remove (same batch)
                name = f"flash{i}"
                session.submit(C.PutEntry("loads", spring_spec(name, rng)))
                session.submit(C.RemoveEntry("loads", name))
                counts["loads"] += 2

    submitters = [Worker("params", params_thread), Worker("loads", loads_thread)]
    for w in submitters:
        w.join(HAMMER_S + JOIN_S)
    session.submit(C.SetEntryActive("loads", "main_spring", True))
    session.submit(C.StopRecording())
    wait_for(lambda: log.find("saving "), what="StopRecording to be processed")
    steps_after_stop = session.steps
    wait_for(lambda: session.steps > steps_after_stop + 100, what="stepping to go on after StopRecording")
    session.submit(C.Quit())
    stepper.join()
    close_with_timeout(session)

    total = counts["params"] + counts["loads"]
    assert total > 3000, f"only {total} commands were sent"
    assert session.state == C.RunState.RUNNING and session.error is None, session.error

    # Only the deliberate errors, each with its own message.
    errors = log.errors()
    assert len(errors) == counts["deliberate"], errors[:10]
    unexpected = [e for e in errors if not expected_error(e)]
    assert not unexpected, unexpected[:5]
    snap = session.publish()
    assert all(level != "error" or expected_error(text) for level, text in snap.messages)
    assert not leftover_threads(before), leftover_threads(before)
    # "recording stopped" only once the file is there (its rows counted), "saving" at Stop
    assert [t for t, _, _ in log.find("recording stopped")], log.snapshot()[-5:]

    # The recording: one row per step, no gap, time strictly increasing by exactly one timestep.
    saving, _, steps_at_stop = log.find("saving ")[0]
    stopped = log.find("recording stopped")[0][0]
    df = pl.read_parquet(out)
    t = df["time"].to_numpy()
    assert len(t) == steps_at_stop, (len(t), steps_at_stop)
    assert saving.endswith(f": {len(t)} rows recorded"), saving
    assert stopped.startswith(f"recording stopped: {len(t)} rows saved to {out}"), stopped
    assert t[0] == 0.0
    steps = np.diff(t)
    assert steps.min() > 0
    assert np.abs(steps - DT).max() < 1e-9, f"gap or repeat: dt in [{steps.min()}, {steps.max()}]"
    assert len(t) == round(t[-1] / DT) + 1

    # Params only take submitted values (clamped), or their initial value.
    for name, sent, lo_hi, initial in (("k", sent_k, K_RANGE, 200.0), ("c", sent_c, C_RANGE, 1.0)):
        col = df[f"Params/{name}:value"]
        assert col.null_count() == 0
        allowed = {clamp(v, lo_hi) for v in sent} | {initial}
        seen = set(col.unique().to_list())
        assert seen <= allowed, sorted(seen - allowed)[:5]
        assert len(seen) > 20, f"Params/{name}:value took only {len(seen)} values"

    # Loads attached mid-run: null before they were attached and after they were removed,
    # present (0 while switched off) in between.
    attached = {text.split("'")[1]: (ts, n) for text, ts, n in log.find("attached load '")}
    removed = {text.split("'")[1]: (ts, n) for text, ts, n in log.find("removed load '")}
    assert set(attached) == set(removed) and len(attached) >= 20, (len(attached), len(removed))
    checked = 0
    for name, (_t_on, n_on) in attached.items():
        t_off, n_off = removed[name]
        assert n_on <= n_off
        col = f"Loads/{name}:fx"
        if col not in df.columns:
            assert n_on == n_off, f"{name} lived {n_off - n_on} steps but has no column"
            continue
        if n_on >= steps_at_stop:
            continue
        fx = df[col].to_numpy()  # nulls become NaN
        assert np.isnan(fx[:n_on]).all(), f"{col} has values before the load was attached"
        assert np.isnan(fx[n_off:]).all(), f"{col} has values after the load was removed"
        assert not np.isnan(fx[n_on : min(n_off, steps_at_stop)]).any(), f"{col} has nulls while attached"
        checked += 1
    assert checked >= 10
    print(
        f"\n{total} commands ({counts['deliberate']} deliberate errors), {len(attached)} loads attached and "
        f"removed, {len(t)} rows x {len(df.columns)} columns, {t[-1]:.1f} s simulated"
    )


def test_switched_off_load_stays_off_across_rig_edits(session: Session) -> None:
    """SetEntryActive(False), then attaching or removing another load, keeps it off."""
    session.submit(C.SetEntryActive("loads", "main_spring", False))
    session.submit(C.PutEntry("loads", spring_spec("other", random.Random(0))))
    session.submit(C.StepOnce(5))
    session.submit(C.RemoveEntry("loads", "other"))
    session.submit(C.StepOnce(5))
    session.process_commands()
    snap = session.publish()
    assert [(ld.name, ld.active) for ld in snap.loads] == [("main_spring", False)]
    assert snap.loads[0].readout == ((0.0, "N"),)
    assert not [m for m in snap.messages if m[0] == "error"]
    session.close()


# --- 2. an exception inside a user load function -------------------------------------------------


def _bad_scalar() -> ScalarForce:
    return ScalarForce(name="bad", action_site="tip", scalar_func=lambda t, ax, m, d: 1 / 0 if t > 0.1 else 1.0)


def _bad_tension() -> PointToPointForce:
    # A custom point-to-point law: on a rig-compiled model it is evaluated in the tendon bank.
    return PointToPointForce(
        name="bad",
        action_site="tip",
        xtion_site="base",
        magnitude_func=lambda d, v, r0, m, dd: 1 / 0 if dd.time > 0.1 else -1.0,
    )


BAD_LOADS = {"scalar_func": _bad_scalar, "magnitude_func": _bad_tension}


def _rig(bad: Callable[[], object], integrator: str, compiled: str = "rig", **kw: object):
    """A bad load and a good spring; ``compiled`` 'rig' (springs in the tendon bank) or 'self'
    (every load on the general per-load path)."""
    good = PointToPointForce.ideal_spring("good", "tip", "base", stiffness=200.0, rest_length=0.25)
    rm = RuntimeManager(loads=[bad(), good], playback_speed=0, **kw)
    if compiled == "rig":
        model, data = rm.load_model(MODEL)
    else:
        model = mujoco.MjModel.from_xml_path(str(MODEL))
        data = mujoco.MjData(model)
    model.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator}")
    return rm, model, data


@pytest.mark.parametrize("compiled", ["rig", "self"])
@pytest.mark.parametrize("integrator", ["IMPLICITFAST", "RK4"])
@pytest.mark.parametrize("kind", sorted(BAD_LOADS))
def test_raising_load_is_disabled_and_named(kind: str, integrator: str, compiled: str) -> None:
    seen: list[tuple[str, BaseException]] = []
    rm, model, data = _rig(
        BAD_LOADS[kind], integrator, compiled, on_load_error=lambda ld, exc: seen.append((ld.name, exc))
    )
    bad, good = rm.loads
    x0 = data.qpos[0]
    while data.time < 0.5 - DT / 2:
        rm.step(model, data)
    assert data.time == pytest.approx(0.5)
    assert [(n, type(e)) for n, e in seen] == [("bad", ZeroDivisionError)]
    assert not bad.active and good.active
    eng = rm.engine
    eng.update_outputs()
    assert np.all(eng.wrench[0] == 0.0)
    # The good spring still acts: its force is k * stretch along the rail, and the block moves.
    length = float(eng.lv[1, 0])
    assert eng.wrench[1, 0] == pytest.approx(-200.0 * (length - 0.25), rel=1e-6, abs=1e-9)
    assert abs(data.qpos[0] - x0) > 0.01
    assert np.isfinite(data.qpos).all()


@pytest.mark.parametrize("compiled", ["rig", "self"])
@pytest.mark.parametrize("kind", sorted(BAD_LOADS))
def test_raising_load_without_handler_raises_load_error(kind: str, compiled: str) -> None:
    rm, model, data = _rig(BAD_LOADS[kind], "IMPLICITFAST", compiled)
    with pytest.raises(LoadError, match=r"load 'bad' failed and was disabled: ZeroDivisionError"):
        while data.time < 0.5:
            rm.step(model, data)
    assert 0.1 < data.time < 0.1 + 3 * DT
    assert not rm.loads[0].active
    for _ in range(100):  # the run can go on without it
        rm.step(model, data)


def test_raising_load_in_a_session_is_logged_and_stays_off(session: Session) -> None:
    log = Messages(session)
    # A load from the panel (so in the scenario doc) whose live function then starts to raise.
    session.submit(C.PutEntry("loads", {"name": "pusher", "kind": "scalar_force", "at": "tip", "magnitude": 1.0}))
    session.process_commands()
    pusher = next(ld for ld in session.rm.loads if ld.name == "pusher")
    pusher.scalar_func = lambda t, ax, m, d: 1 / 0 if t > 0.1 else 1.0
    session.submit(C.StepOnce(300))
    session.process_commands()
    assert session.data.time == pytest.approx(0.3)
    assert session.state == C.RunState.PAUSED and session.error is None
    assert log.errors() == ["load 'pusher' raised ZeroDivisionError: division by zero; it was disabled"]
    # Editing the rig afterwards still works, and the failed load stays off.
    session.submit(C.PutEntry("loads", spring_spec("later", random.Random(3))))
    session.submit(C.SetParam("k", 300.0))
    session.submit(C.StepOnce(10))
    session.process_commands()
    assert len(log.errors()) == 1, log.errors()
    snap = session.publish()
    state = {ld.name: ld.active for ld in snap.loads}
    assert state == {"main_spring": True, "pusher": False, "later": True}
    ((magnitude, unit),) = dict((ld.name, ld.readout) for ld in snap.loads)["main_spring"]
    assert magnitude > 0 and unit == "N"
    session.close()


# --- 3. the disk goes away mid-recording ---------------------------------------------------------


def test_segment_folder_replaced_by_a_file_mid_recording(session: Session, tmp_path: Path) -> None:
    before = set(threading.enumerate())
    log = Messages(session)
    out = tmp_path / "run" / "out.parquet"
    session.submit(C.SetSpeed(0))
    session.submit(C.StartRecording(str(out)))
    stepper = start_stepping(session)
    wait_for(lambda: session.latest().outputs.recording_bytes > 0, what="the first segment on disk")
    parts = segment_dir(out)
    for _ in range(100):  # the writer may be adding a segment while the folder goes
        try:
            shutil.rmtree(parts)
            break
        except OSError:
            time.sleep(0.01)
    parts.write_text("not a folder any more\n")
    wait_for(lambda: session.latest().outputs.recording_error is not None, what="the recording error", timeout=10)
    err = session.latest().outputs.recording_error
    t_err = session.latest().time
    wait_for(lambda: session.latest().time > t_err + 1.0, what="the simulation to go on after the error")
    assert "\n" not in err and len(err) < 300, err
    assert "Error" in err and str(parts) in err, err
    assert session.latest().state == C.RunState.RUNNING

    session.submit(C.StopRecording())
    session.submit(C.StopRecording())  # a second stop is harmless
    wait_for(lambda: log.find("saving "), what="StopRecording to be processed")
    session.submit(C.Quit())
    stepper.join()
    close_with_timeout(session)
    close_with_timeout(session)  # close is safe twice
    assert stepper.failure is None
    errs = log.errors()
    assert len(errs) == 1 and errs[0].startswith("recording"), errs
    assert "\n" not in errs[0]
    assert parts.is_file()  # nothing tried to write through the file
    assert not leftover_threads(before), leftover_threads(before)


def test_a_published_snapshots_units_never_change_under_the_panel(session: Session) -> None:
    """The panel reads a snapshot's units while the simulation thread adds columns: each snapshot
    holds its own copy, which pickles (the panel may run in a process of its own)."""
    before = session.publish()
    n = len(before.units)
    session.submit(C.PutEntry("loads", {"name": "pusher", "kind": "scalar_force", "at": "tip", "magnitude": 1.0}))
    session.submit(C.StepOnce(3))
    session.process_commands()
    after = session.publish()
    assert "Loads/pusher:fx" in after.units and after.units["Loads/pusher:fx"] == "N"
    assert len(before.units) == n and "Loads/pusher:fx" not in before.units
    assert session.publish().units is after.units  # nothing added: the same copy, no new one per frame
    import pickle

    assert pickle.loads(pickle.dumps(after)).units == after.units  # crosses to a panel process


def test_reset_counts_steps_from_zero_again(session: Session) -> None:
    session.submit(C.StepOnce(25))
    session.process_commands()
    assert session.publish().steps == 25
    session.submit(C.Reset())
    session.process_commands()
    snap = session.publish()
    assert snap.steps == 0 and snap.time == 0.0
