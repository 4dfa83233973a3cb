"""A headless video with no camera named frames the whole rig as the app's first view does:
the spring_mass anchor (its yellow site on the post) and the block both in the picture, far
apart across it, neither at an edge. The first frame is saved to tests/artifacts/ to look at."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.e2e.e2e_util import REPO, copy_rig, mjrig, video_stream

FFMPEG = shutil.which("ffmpeg")
FFPROBE = shutil.which("ffprobe")
pytestmark = pytest.mark.skipif(not (FFMPEG and FFPROBE), reason="needs ffmpeg/ffprobe to read videos back")
ARTIFACTS = REPO / "tests" / "artifacts"


def first_frame(video: Path, name: str) -> np.ndarray:
    """The video's first frame (H, W, 3) uint8, also written to tests/artifacts/NAME.png."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    png = ARTIFACTS / f"{name}.png"
    subprocess.run([FFMPEG, "-v", "error", "-y", "-i", str(video), "-frames:v", "1", str(png)], check=True)
    w, h = video_stream(video, "width,height")
    out = subprocess.run(
        [FFMPEG, "-v", "error", "-i", str(video), "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        capture_output=True,
        check=True,
    ).stdout
    return np.frombuffer(out, np.uint8).reshape(h, w, 3)


def anchor_and_block_x(rgb: np.ndarray) -> tuple[float, float]:
    """Screen x (pixels) of the anchor (the leftmost yellow: the site ``base`` on the post, drawn
    (0.9, 0.9, 0.1)) and of the block (the columns where its blue (0.15, 0.45, 0.8) face stands
    tall; the rig's blue lines are only a few pixels high)."""
    r, g, b = (rgb[..., i].astype(int) for i in range(3))
    yellow = (r > 150) & (g > 150) & (b < 100) & (abs(r - g) < 50)
    blue = (b > 120) & (b > r + 70) & (b > g + 30)
    ys, xs = np.nonzero(yellow)
    assert xs.size >= 4, "no yellow site in the picture: the anchor is out of view"
    tall = np.flatnonzero(blue.sum(axis=0) >= 10)
    assert tall.size >= 4, "no blue block in the picture"
    return float(np.sort(xs)[:4].mean()), float(tall.mean())


def check_framed(rgb: np.ndarray) -> None:
    h, w, _ = rgb.shape
    anchor, block = anchor_and_block_x(rgb)
    assert 0.04 * w < anchor < block < 0.96 * w, (anchor, block, w)
    # near enough: the anchor-to-block stretch (0.375 of the rig's 0.8 m) spans a good part of
    # the width, as it does when the whole rig fills the view; a distant view leaves it short
    assert block - anchor > 0.33 * w, f"anchor at x={anchor:.0f}, block at x={block:.0f} of {w}"


def test_run_video_with_no_camera_frames_the_whole_rig(tmp_path):
    out = tmp_path / "out.mp4"
    r = mjrig("run", "spring_mass", "--duration", "0.2", "--out", tmp_path / "x.parquet", "--video", out)
    assert r.rc == 0, r
    check_framed(first_frame(out, "video_framing_spring_mass"))


def test_scenario_video_section_without_a_camera_frames_the_whole_rig(tmp_path):
    toml = copy_rig("spring_mass", tmp_path)
    toml.write_text(toml.read_text() + '\n[video]\npath = "v.mp4"\nwidth = 480\nheight = 360\n')
    r = mjrig("run", toml, "--duration", "0.2", "--out", tmp_path / "x.parquet")
    assert r.rc == 0, r
    check_framed(first_frame(tmp_path / "v.mp4", "video_framing_spring_mass_scenario"))
