"""Videos from `mjrig run`: frame count by simulated time, size, the arrows in the pixels, GIF,
and the one-line errors for bad video input."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests import mjcf
from tests.e2e.e2e_util import MODELS, mjrig, video_stream

FFPROBE = shutil.which("ffprobe")
FFMPEG = shutil.which("ffmpeg")
pytestmark = pytest.mark.skipif(not (FFPROBE and FFMPEG), reason="needs ffmpeg/ffprobe to read videos back")


def probe(path: Path) -> tuple[int, int, int]:
    """(frames, width, height) as ffprobe counts them."""
    w, h, n = video_stream(path, "nb_read_frames,width,height", count_frames=True)
    return n, w, h


def frames(path: Path, width: int, height: int) -> np.ndarray:
    """Every frame as uint8 RGB, shape (n, height, width, 3)."""
    raw = subprocess.run(
        [FFMPEG, "-v", "error", "-i", str(path), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        capture_output=True,
        check=True,
    ).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, height, width, 3)


def test_mp4_has_one_frame_per_1_over_fps_of_simulated_time(tmp_path):
    out = tmp_path / "v.mp4"
    r = mjrig("run", MODELS / "clearance.toml", "--duration", "1.0", "--out", tmp_path / "x.parquet", "--video", out)
    assert r.rc == 0, r
    n, w, h = probe(out)
    assert (w, h) == (640, 480)
    assert abs(n - 30) <= 1  # 1.0 s x 30 fps


def test_gif_works(tmp_path):
    out = tmp_path / "v.gif"
    r = mjrig("run", MODELS / "clearance.toml", "--duration", "0.5", "--out", tmp_path / "x.parquet", "--video", out)
    assert r.rc == 0, r
    n, w, h = probe(out)
    assert (w, h) == (640, 480) and abs(n - 15) <= 1


_SCENE = '    <light pos="0 0 3" dir="0 0 -1"/>\n    <geom type="plane" size="2 2 0.1" rgba="0.5 0.5 0.5 1"/>\n'
"""A light above and a grey floor: what a camera shows the block on."""

_BLOCK = 'type="box" size="0.05 0.05 0.05" rgba="0.8 0.1 0.1 1" mass="1"'
_SIDE = '    <camera name="side" pos="0 -1.2 0.3" xyaxes="1 0 0 0 0.25 1"/>'
RIG_XML = mjcf.model(
    mjcf.slider("block", joint="x", pos="0 0 0.2", damping=50, geom=_BLOCK, site="face", site_pos="0.05 0 0"),
    option='gravity="0 0 0" timestep="0.002"',
    before='  <visual><map force="0.03"/><scale forcewidth="0.3"/></visual>\n',
    world=_SCENE + _SIDE,
)
RIG_TOML = """model = "rig.xml"
[simulation]
duration = 1.0
[[loads]]
name = "push"
kind = "force"
at = "face"
vector = [{ profile = "step", time = 0.5, before = 0.0, after = 30.0 }, 0.0, 0.0]
[video]
path = "v.mp4"
camera = "side"
fps = 30
width = 320
height = 240
show_loads = true
[view]
force_scale = 0.03   # m per N: what the model's <map force="0.03"> gives its own arrows (mean mass 1 kg)
"""


def test_arrow_colour_appears_only_while_the_load_acts(tmp_path):
    (tmp_path / "rig.xml").write_text(RIG_XML)
    (tmp_path / "rig.toml").write_text(RIG_TOML)
    r = mjrig("run", tmp_path / "rig.toml", "--out", tmp_path / "x.parquet")
    assert r.rc == 0, r
    video = frames(tmp_path / "v.mp4", 320, 240).astype(int)
    assert abs(len(video) - 30) <= 1
    red, green, blue = video[..., 0], video[..., 1], video[..., 2]
    action_green = (green > 110) & (green > red + 50) & (green > blue + 15)  # the action arrow's emerald
    per_frame = action_green.reshape(len(video), -1).sum(axis=1)
    before, after = per_frame[:14], per_frame[16:]  # the step is at frame 15 (t = 0.5 s)
    assert before.max() < 15, before
    assert after.min() > 150, after


def test_video_size_beyond_the_offscreen_buffer_is_one_line(tmp_path):
    (tmp_path / "rig.xml").write_text(RIG_XML)
    (tmp_path / "rig.toml").write_text(RIG_TOML.replace("width = 320", "width = 5000"))
    for cmd in ("run", "check"):
        r = mjrig(cmd, tmp_path / "rig.toml")
        assert r.rc == 2, r
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in r.stderr
        assert "5000x240" in lines[0] and "offscreen" in lines[0] and "rig.toml" in lines[0]


@pytest.mark.parametrize("target", ["/proc/nope/v.mp4", "v.avi"])
def test_bad_video_path_is_one_line(tmp_path, target):
    (tmp_path / "rig.xml").write_text(RIG_XML)
    (tmp_path / "rig.toml").write_text(RIG_TOML)
    r = mjrig("run", tmp_path / "rig.toml", "--video", target)
    assert r.rc == 2, r
    assert len(r.stderr.strip().splitlines()) == 1 and "--video" in r.stderr
