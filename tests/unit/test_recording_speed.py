"""A replay plays at the recorded speed, one pose a frame whatever the timestep (the pacer's time
due, straight away: ``ReplaySource.leap``; after a stalled frame, on from where it was), while a
live rig still steps every timestep; a replay reads what it shows of the file, not all of it; and a
stopped recording says "saving … MB" with its progress until its file exists, and "recording
stopped" only then. Through the session, as the app drives it, with the pacer on a clock the test
moves. Runs a 2 s and a 0.5 s scenario first (about 3 s in all)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from mjrig import commands as C
from mjrig.panel_state import job_text
from mjrig.runtime.telemetry.signals import SignalManager
from mjrig.session.run_control import LEAP_S

pytestmark = pytest.mark.unit

SPRING_MASS = Path(__file__).resolve().parents[2] / "models" / "spring_mass.toml"


class Clock:
    """A wall clock the test moves (s)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _on_clock(s) -> Clock:
    clock = Clock()
    s.run.pacer._clock = clock  # noqa: SLF001 - the wall clock, moved by the test
    s.run.pacer.restart()
    return clock


def test_a_replay_goes_to_the_time_due_in_one_frame_and_pauses_at_the_end(open_session, tmp_path) -> None:
    from mjrig.cli import main

    out = tmp_path / "rec.parquet"
    assert main(["run", "spring_mass", "--duration", "2.0", "--out", str(out)]) == 0
    s = open_session(out)
    try:
        replay = s.replayer.source.replay
        clock = _on_clock(s)
        s.run.play()
        t0 = s.data.time
        assert s.advance() == 0 or s.data.time == t0  # anchored: nothing due yet
        clock.now += 0.0617  # a frame: 30.85 timesteps due
        assert s.advance() == 1, "a replay shows the time due in one go, not timestep by timestep"
        assert s.data.time == pytest.approx(t0 + 0.0617, abs=1e-12)
        np.testing.assert_array_equal(s.data.qpos, replay.qpos_at(s.data.time))
        s.run.speed = 2.0  # twice the recorded speed: twice the time a wall second
        t1 = s.data.time
        s.advance()
        clock.now += 0.03
        s.advance()
        assert s.data.time == pytest.approx(t1 + 0.06, abs=1e-12)
        t2 = s.data.time
        clock.now += 3.0  # a stalled frame (the 3D view loading): no jump, on from where it was
        s.advance()
        assert s.data.time == pytest.approx(t2 + LEAP_S * 2.0, abs=1e-12)
        clock.now += 0.01
        s.advance()
        assert s.data.time == pytest.approx(t2 + LEAP_S * 2.0 + 0.02, abs=1e-12)
        for _ in range(100):  # on to the end: there, paused
            clock.now += 0.05
            s.advance()
        assert s.data.time == replay.end and s.run.state == C.RunState.PAUSED
    finally:
        s.close()


def test_a_live_rig_still_steps_every_timestep(open_session) -> None:
    s = open_session(SPRING_MASS)
    try:
        clock = _on_clock(s)
        s.run.play()
        s.advance()
        dt = s.model.opt.timestep
        clock.now += 25.5 * dt  # due: 25.5 timesteps; it steps until it is there, each one
        assert s.advance(budget_s=60.0) == 26  # a fresh machine compiles the rig's callbacks at its first step
        assert s.data.time == pytest.approx(26 * dt, abs=1e-12)
    finally:
        s.close()


def test_saving_is_said_with_its_progress_and_stopped_only_once_the_file_exists(open_session, tmp_path, monkeypatch):
    release, closing = threading.Event(), threading.Event()
    close = SignalManager.close

    def held_close(self: SignalManager):
        closing.set()
        assert release.wait(30)
        return close(self)

    monkeypatch.setattr(SignalManager, "close", held_close)
    s = open_session(SPRING_MASS)
    rec = tmp_path / "held.parquet"
    try:
        s.handle(C.StartRecording(str(rec)))
        for _ in range(300):
            s.run.step()
        s.handle(C.StopRecording())
        assert closing.wait(30)
        snap = s.publish()
        texts = [t for _, t in snap.messages]
        assert any(t == f"saving {rec}: 300 rows recorded" for t in texts), texts
        assert not any(t.startswith("recording stopped") for t in texts), texts
        assert not rec.exists()
        (saving,) = snap.outputs.saving
        assert saving.what == "saving held.parquet" and saving.note.endswith(" MB"), saving
        assert 0.0 <= saving.fraction <= 1.0, saving
        assert job_text(snap.outputs.saving) == f"saving held.parquet: {100 * saving.fraction:.0f} % ({saving.note})"
        release.set()
        s.outputs.jobs.join()
        snap = s.publish()
        assert rec.is_file() and not snap.outputs.saving
        size = rec.stat().st_size / 1e6
        stopped = [t for _, t in snap.messages if t.startswith("recording stopped")]
        assert stopped == [f"recording stopped: 300 rows saved to {rec} ({size:.1f} MB)"], stopped
    finally:
        release.set()
        s.close()


def test_a_replay_reads_the_joints_and_what_is_plotted_not_every_column(open_session, tmp_path) -> None:
    """A replay reads the recording's time axis, its joints and params when it opens, and a
    signal's rows when the plots tick it (a fill block of the file's own values, thinned as the
    plots get them): a 16,000-column recording is never read whole."""
    import pyarrow.parquet as pq

    from mjrig.cli import main
    from mjrig.session.plot_rows import FILL, is_fill

    out = tmp_path / "rec.parquet"
    assert main(["run", "spring_mass", "--duration", "0.5", "--out", str(out)]) == 0
    s = open_session(out)
    try:
        columns = s.replayer.source.replay.recording.columns
        read = set(columns._read)  # noqa: SLF001 - what was read from the file
        assert "time" in read and any(n.startswith("Joints/") for n in read), read
        assert not [n for n in read if n.startswith(("Bodies/", "Sensors/", "Loads/"))], read
        s.drain_rows()
        signal = next(n for n in columns if n.startswith("Bodies/") and n.endswith(":x"))
        s.handle(C.PlotSignals((signal,), 10.0))
        fills = [(cols, block) for cols, block in s.drain_rows() if is_fill(cols)]
        assert len(fills) == 1 and fills[0][0] == [FILL, "time", signal], fills
        block = fills[0][1]
        table = pq.read_table(out, columns=["time", signal])
        file_t, file_v = table["time"].to_numpy(), table[signal].to_numpy()
        index = np.searchsorted(file_t, block[:, 1])
        np.testing.assert_array_equal(file_t[index], block[:, 1])
        np.testing.assert_array_equal(file_v[index], block[:, 2])
        assert signal in columns._read  # noqa: SLF001 - read now, once
    finally:
        s.close()
