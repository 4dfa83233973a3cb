"""VideoRecorder without a screen: frames due by simulated time, errors never silent."""

from __future__ import annotations

import mujoco
import pytest

from mjrig.runtime import ConfigError
from mjrig.runtime.drawing import video as video_mod
from mjrig.runtime.drawing.video import VideoRecorder

XML = """<mujoco><option timestep="0.004"/><worldbody><light pos="0 0 2"/><geom type="plane" size="1 1 .1"/>
<body name="b" pos="0 0 .2"><freejoint/><geom size=".05"/></body></worldbody></mujoco>"""


def test_missing_encoder_is_a_config_error(monkeypatch, tmp_path):
    monkeypatch.setattr(video_mod.shutil, "which", lambda name: None)
    import builtins

    real_import = builtins.__import__

    def no_imageio(name, *a, **k):
        if name == "imageio_ffmpeg":
            raise ImportError("not installed")
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_imageio)
    rec = VideoRecorder(path=tmp_path / "v.mp4")
    with pytest.raises(ConfigError, match="no video encoder"):
        rec.check(mujoco.MjModel.from_xml_string(XML))


def test_bad_extension_and_fps_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match=r"\.mp4 or \.gif"):
        VideoRecorder(path=tmp_path / "v.avi")
    with pytest.raises(ConfigError, match="fps"):
        VideoRecorder(path=tmp_path / "v.mp4", fps=0)
