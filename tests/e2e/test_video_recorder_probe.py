"""The video recorder in a process of its own with offscreen GL (EGL): frames due by simulated
time, and an encoder that fails is reported."""

from __future__ import annotations

from tests.e2e.e2e_util import REPO, cli_env, python
from tests.unit.test_video_recorder import XML

PROBE = """
import json, sys
import mujoco, mediapy
from mjrig.runtime import MjrigError
from mjrig.runtime.drawing.video import VideoRecorder
XML = sys.argv[1]; out = sys.argv[2]
m = mujoco.MjModel.from_xml_string(XML)
d = mujoco.MjData(m)
rec = VideoRecorder(path=out + "/v.mp4", fps=25, width=64, height=48)
captured_at = []
while d.time < 1.0:
    before = rec.frames_captured
    rec.capture_frame(m, d, [], [])
    if rec.frames_captured > before:
        captured_at.append(d.time)
    mujoco.mj_step(m, d)
rec.save()
rec.save()  # safe twice

class Broken(mediapy.VideoWriter):
    def add_image(self, image):
        raise OSError("disk full")

mediapy.VideoWriter = Broken
d2 = mujoco.MjData(m)
bad = VideoRecorder(path=out + "/bad.mp4", fps=25, width=64, height=48)
failure = None
try:
    while d2.time < 2.0:
        bad.capture_frame(m, d2, [], [])
        mujoco.mj_step(m, d2)
    bad.save()
except MjrigError as exc:
    failure = str(exc)
print(json.dumps({"captured_at": captured_at, "written": rec.frames_written, "failure": failure,
                  "error": bad.error}))
"""


def test_frames_are_due_by_simulated_time_and_encoding_failures_surface(tmp_path):
    # Offscreen GL in its own process: an EGL context and the GUI tests' GLX windows do not mix.
    import json

    env = cli_env()  # this checkout's mjrig
    env.pop("DISPLAY", None)
    env["MUJOCO_GL"] = "egl"
    proc = python("-c", PROBE, XML, tmp_path, cwd=REPO, env=env, timeout=120)
    assert proc.rc == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    captured_at = res["captured_at"]
    assert len(captured_at) == 25  # 1.0 s x 25 fps, whatever the 4 ms timestep
    assert all(abs(t - i / 25) < 0.004 + 1e-9 for i, t in enumerate(captured_at))
    assert res["written"] == 25 and (tmp_path / "v.mp4").stat().st_size > 0
    # An encoder that fails is reported, never silent.
    assert "disk full" in (res["failure"] or "") and "disk full" in (res["error"] or "")
