"""A wide model recorded from the panel keeps every row.

1,500 bodies fixed in the world cost MuJoCo almost nothing to step, so the app keeps real time at
a 0.5 ms timestep while every row carries some 19,500 columns: about 160 MB a second of rows for
the recorder. A recorder whose queue holds a fixed number of rows, or whose row group is a fixed
number of rows (4,096 rows are 640 MB at this width), falls behind for good and keeps nothing. The
app's recorder sizes row groups by bytes and keeps every row it was handed; when the writer is
behind, the app keeps real time and says how many rows, from when to when, it could not hand over.
After Stop it says "saving" with its progress while the file is finished, "recording stopped" only
once the file is there.

Slower than most GUI tests (about 40 s): the model has 1,500 bodies and the file is some 1 GB of
values before compression.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np
import pytest

from tests.gui.desktop import App, Desktop, read_recording
from tests.waiting import wait_for

pytestmark = pytest.mark.gui

BODIES = 1500
TIMESTEP = 0.0005  # s


def _fixed_bodies(n: int) -> str:
    """MJCF of ``n`` bodies welded to the world (no joint: nothing to integrate), drawn as dots."""
    bodies = "".join(
        f'<body name="b{i}" pos="{0.05 * (i % 40)} {0.05 * (i // 40)} 0.5">'
        f'<geom type="sphere" size="0.01" contype="0" conaffinity="0"/></body>'
        for i in range(n)
    )
    return (
        f'<mujoco model="fixed_{n}"><option timestep="{TIMESTEP}"/>'
        f'<visual><global offwidth="640" offheight="480"/></visual>'
        f'<worldbody><light pos="0 0 5"/>{bodies}</worldbody></mujoco>'
    )


def test_a_wide_model_recorded_from_the_panel_keeps_every_row(tmp_path):
    model = tmp_path / "wide.xml"
    model.write_text(_fixed_bodies(BODIES))
    desktop = Desktop(1920, 1080)
    app = App(desktop, model, home=tmp_path)
    try:
        app.click("Start recording")
        wait_for(lambda: app.widget("Stop recording"), what="recording to start")
        app.run_for(3.0, timeout=90)  # 6,000 rows of ~24,000 columns
        stop_at = time.monotonic()
        app.click("Stop recording")
        # While the file is finished the panel says "saving NAME: N % (X MB)"; "recording stopped"
        # comes once the file is there, never before.
        saving, stopped = "", None
        while stopped is None and time.monotonic() < stop_at + 120:
            seen = app.text(r"saving [\w.-]+\.parquet: \d+ % \([\d.]+ MB\)", offscreen=True)
            saving = seen["text"] if seen is not None else saving
            stopped = app.text(r"info: recording stopped: \d+ rows saved to \S+\.parquet \([\d.]+ MB\)", offscreen=True)
        took = time.monotonic() - stop_at
        assert stopped is not None, app.output()
        assert Path(stopped["text"].split(" saved to ")[1].rsplit(" (", 1)[0]).is_file(), stopped
        assert saving or took < 1.0, f"{took:.1f} s from Stop to 'recording stopped' and no 'saving' line seen"
        wait_for(lambda: app.widget("Start recording"), what="recording to stop", timeout=60)
        files = wait_for(
            lambda: sorted(f for d in (tmp_path, tmp_path / "work" / "runs") for f in d.glob("*.parquet")) or None,
            what="the recording file",
            timeout=120,
        )
        assert len(files) == 1, files
        df = wait_for(lambda: read_recording(files[0]), what=f"{files[0].name} readable", timeout=120)
        assert df.width > 12 * BODIES, df.width  # 13 columns of each body's pose and motion, and more
        t = df["time"].to_numpy()
        assert t[-1] - t[0] >= 3.0 - TIMESTEP, (t[0], t[-1], len(t))
        # Every row handed to the recorder is in the file. The app keeps real time first: rows it
        # could not hand over while the writer was behind are missing, and the app says how many
        # and when (a slow machine); none missing otherwise.
        out = app.output()
        stopped = re.search(r"recording stopped: (\d+) rows", out)
        assert stopped, out
        behind = re.search(r"recording behind: (\d+) rows not recorded \(t = ([\d.]+) to ([\d.]+) s\)", out)
        missing, first, last = (int(behind[1]), float(behind[2]), float(behind[3])) if behind else (0, 0.0, 0.0)
        assert len(t) + missing == int(stopped[1]), (len(t), missing, out)
        gaps = np.flatnonzero(np.diff(t) > 1.5 * TIMESTEP)
        for i in gaps:  # each gap lies in the span the app named
            assert first - TIMESTEP / 2 <= t[i] + TIMESTEP and t[i + 1] - TIMESTEP <= last + TIMESTEP / 2, (
                t[i],
                t[i + 1],
                out,
            )
        assert len(t) > 0.5 * int(stopped[1]), f"{len(t)} of {stopped[1]} rows kept"
        desktop.screenshot("wide_recording_1920x1080")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
