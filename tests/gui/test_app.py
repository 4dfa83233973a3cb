"""The real app (control panel + MuJoCo's passive viewer) under Xvfb, driven by commands.

Each test starts the app in its own process (``tests/gui/driver.py``), where a script submits
the same commands the widgets submit and checks the snapshots; this side then checks what the
app left behind: the recorded Parquet, the saved scenario, the exit status. Screenshots of both
windows go to tests/artifacts/.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from mjrig.runtime.files.parquet_sink import part_groups, parts
from tests.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"


def drive(script: str, out: Path, display: str, *, timeout: float = 180.0) -> dict:
    env = dict(
        os.environ, DISPLAY=display, PYTHONPATH=os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))
    )
    env.pop("MUJOCO_GL", None)
    proc = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-m", "tests.gui.driver", script, str(out)],
        cwd=out,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, f"driver {script} failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads((out / "report.json").read_text())


def test_attach_tune_record_reload_save(xdisplay, tmp_path):
    marks = drive("attach_tune_record", tmp_path, xdisplay)
    assert marks["panel_frames"] > 30 and marks["sim_frames"] > 30
    df = pl.read_parquet(tmp_path / "run.parquet")
    assert df["time"].is_sorted() and df.height > 300
    before = df.filter(pl.col("time") < marks["before"])
    after = df.filter(pl.col("time") >= marks["after"])
    assert set(before["Params/k2:value"].drop_nulls().to_list()) == {100.0}
    assert set(after["Params/k2:value"].drop_nulls().to_list()) == {800.0}
    # The recorded force is k * stretch along the spring: 100 N/m before the change, 800 after.
    for part, stiffness in ((before, 100.0), (after, 800.0)):
        part = part.drop_nulls("Loads/extra:fx")
        assert part.height > 10
        f = np.linalg.norm(part.select(["Loads/extra:fx", "Loads/extra:fy", "Loads/extra:fz"]).to_numpy(), axis=1)
        expected = stiffness * np.abs(part["Loads/extra:length"].to_numpy() - 0.1)
        np.testing.assert_allclose(f, expected, rtol=1e-6, atol=1e-9)
    # The spring appeared mid-recording: null before it existed.
    assert df["Loads/extra:fx"].null_count() >= 1
    assert (tmp_path / "panel.png").stat().st_size > 10_000

    from mjrig.scenario.parse import load_scenario

    sc = load_scenario(tmp_path / "saved.toml")
    assert {ld.name for ld in sc.loads} == {"main_spring", "extra"}
    assert sc.params["k2"].value == 800.0
    check = subprocess.run(
        [sys.executable, "-m", "mjrig", "check", str(tmp_path / "saved.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode == 0, check.stderr


def test_divergence_pauses_and_reset_recovers(xdisplay, tmp_path):
    report = drive("divergence", tmp_path, xdisplay)
    assert "diverged at t=" in report["error"]
    # The rows recorded before the divergence are kept, finite, in a valid file.
    df = pl.read_parquet(tmp_path / "diverged.parquet")
    assert df.height >= report["rows_at_error"] > 100
    before = df.head(report["rows_at_error"])
    assert np.isfinite(before["Joints/slide_x:qpos"].to_numpy()).all()


def test_closing_the_viewer_closes_the_app(xdisplay, tmp_path):
    report = drive("close_viewer", tmp_path, xdisplay)
    assert report["viewer_closed"] is True


@pytest.mark.parametrize("mode", ["in-process", "panel-process"])
def test_cli_opens_records_and_exits_cleanly(xdisplay, tmp_path, mode):
    from tests.gui.conftest import screenshot

    out = tmp_path / "cli.parquet"
    args = [
        sys.executable,
        "-m",
        "mjrig",
        str(MODELS / "gas_spring_door.toml"),
        "--record",
        str(out),
        "--exit-after",
        "6",
    ]
    if mode == "panel-process":
        args.append("--panel-process")
    env = dict(
        os.environ,
        DISPLAY=xdisplay,
        PYTHONPATH=os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
    )
    env.pop("MUJOCO_GL", None)
    started = time.monotonic()
    proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(4.5)
    screenshot(xdisplay, f"app_{mode}")
    stdout, stderr = proc.communicate(timeout=60)
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert elapsed < 6 + 15, f"took {elapsed:.1f} s to close"
    df = pl.read_parquet(out)
    assert df.height > 100 and df["time"].is_sorted()
    assert any(c.startswith("Loads/") for c in df.columns)


def test_pick_attach_screenshot_keyframe_reload(xdisplay, tmp_path):
    import mujoco

    report = drive("viewer_features", tmp_path, xdisplay)
    assert report["selection"] == "body:block@0.01,0.02,0.03"
    shot = Path(report["screenshot"])
    assert shot.exists() and shot.stat().st_size > 5_000
    shot.unlink()
    # The keyframe copy loads in MuJoCo and holds the state that was saved.
    m = mujoco.MjModel.from_xml_path(str(tmp_path / "keyframe.xml"))
    assert m.nkey == 1 and m.key_time[0] > 0.2
    # The load whose site vanished was dropped with a warning; the rest of the rig stayed.
    assert report["loads_after_reload"] == ["main_spring"]
    assert any("picked" in msg and "without load" in msg for msg in report["messages"])


def test_video_and_screenshot_in_the_app(xdisplay, tmp_path):
    import shutil
    import subprocess as sp

    report = drive("video", tmp_path, xdisplay)
    video = tmp_path / "app.mp4"
    assert video.exists() and "video saved" in report["video_message"]
    ffprobe = shutil.which("ffprobe")
    if ffprobe:
        out = sp.run(
            [
                ffprobe,
                "-v",
                "error",
                "-count_frames",
                "-select_streams",
                "v:0",
                "-show_entries",
                "stream=nb_read_frames,width,height",
                "-of",
                "csv=p=0",
                str(video),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        w, h, n = (int(x) for x in out.split(","))
        assert (w, h) == (640, 480) and n >= 25  # at least ~1 s of simulated time at 30 fps
    shot = Path(report["screenshot"])
    assert shot.exists() and shot.stat().st_size > 5_000
    shutil.copy(shot, ROOT / "tests" / "artifacts" / "app_screenshot_key.png")
    shot.unlink()


def test_killed_app_recording_is_recovered_and_offered_on_next_start(xdisplay, tmp_path):
    import shutil
    import signal

    for name in ("spring_mass.xml", "spring_mass.toml"):
        shutil.copy(MODELS / name, tmp_path / name)
    target = tmp_path / "runs" / "killed.parquet"
    env = dict(
        os.environ,
        DISPLAY=xdisplay,
        PYTHONPATH=os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
    )
    env.pop("MUJOCO_GL", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "mjrig", str(tmp_path / "spring_mass.toml"), "--record", str(target)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    folder = target.with_name("killed.parquet.parts")

    def groups_on_disk() -> list[int]:
        """The rows of each whole row group of the recording on disk (what a kill now keeps)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the last index record may be half written
            try:
                return [n for stem in parts(folder) for _, n in part_groups(stem)[1]]
            except (OSError, ValueError):  # a part's files half made
                return []

    def recording() -> bool:
        assert proc.poll() is None, "the app ended before it was killed"
        return len(groups_on_disk()) >= 2

    wait_for(recording, what="two row groups of the app's recording on disk", timeout=60)
    proc.send_signal(signal.SIGKILL)  # while it records on
    proc.wait(10)
    assert not target.exists()
    kept = sum(groups_on_disk())
    report = drive("recover_offer", tmp_path, xdisplay)
    df = pl.read_parquet(target)
    assert f"recovered {df.height} rows" in report["message"]
    assert df.height >= kept > 500 and df["time"].is_sorted(), (df.height, kept)
    assert not folder.exists()
