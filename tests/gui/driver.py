"""Runs the real app in this process with a script that drives it through commands.

Usage: python -m tests.gui.driver SCRIPT OUTDIR. One app per process, as users run it; the
test (tests/gui/test_app.py) starts this under Xvfb and checks what the app left in OUTDIR.
Exit status 0 when the script's own checks passed; otherwise the failure is printed.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import traceback
from pathlib import Path

from mjrig import commands as C
from tests.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"


def run_app(scenario: Path, body, *, timeout: float = 120.0) -> dict:
    """Open the app, run ``body(session, app, sim)`` on a thread, return what it reported."""
    from mjrig.desktop.app import PanelApp, SessionClient
    from mjrig.desktop.sim_thread import SimThread
    from mjrig.session.kernel import Session

    session = Session()
    session.open(scenario)
    sim = SimThread(session)
    sim.start()
    app = PanelApp(SessionClient(session), exit_after=timeout)
    report: dict = {}
    failure: list[str] = []

    def script() -> None:
        try:
            report.update(body(session, app, sim) or {})
        except BaseException:
            failure.append(traceback.format_exc())
        finally:
            session.submit(C.Quit())

    threading.Thread(target=script, daemon=True).start()
    started = time.monotonic()
    app.run()
    session.submit(C.Quit())
    sim.stop()
    sim.join(10)
    session.close()
    if failure:
        raise AssertionError(failure[0])
    assert not sim.is_alive(), "simulation thread did not stop"
    assert time.monotonic() - started < timeout - 1, "the app ran into its time limit"
    report["viewer_closed"] = sim.viewer_closed
    report["panel_frames"] = app.frames
    report["sim_frames"] = sim.frames
    return report


def screenshot(name: str) -> None:
    import os
    import subprocess

    out = ROOT / "tests" / "artifacts" / f"{name}.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["import", "-display", os.environ["DISPLAY"], "-window", "root", str(out)], check=True, timeout=30)


def attach_tune_record(out: Path) -> dict:
    """Attach a spring, tune its param, record, open a broken model, reload, save the scenario."""
    rec, saved, broken = out / "run.parquet", out / "saved.toml", out / "broken.xml"
    broken.write_text("<mujoco><worldbody><body><geom type='nonsense'/></body></worldbody></mujoco>")

    def body(session, app, sim) -> dict:
        marks: dict = {}
        wait_for(lambda: session.latest().time > 0.3 and app.frames > 5, what="the app to run")
        assert session.latest().state == C.RunState.RUNNING
        session.submit(C.StartRecording(str(rec)))
        wait_for(lambda: session.latest().outputs.recording_rows > 50, what="the first recorded rows")
        session.submit(C.AddParam("k2", 100.0, 0.0, 2000.0, "N/m"))
        session.submit(
            C.PutEntry(
                "loads",
                {
                    "name": "extra",
                    "kind": "ideal_spring",
                    "at": "tip",
                    "to": "body:world@0,0.3,0",
                    "stiffness": "k2",
                    "rest_length": 0.1,
                },
            )
        )
        wait_for(lambda: any(ld.name == "extra" for ld in session.latest().loads), what="the attached spring")
        wait_for(lambda: session.latest().outputs.recording_rows > 300, what="recorded rows")
        marks["before"] = session.latest().time
        session.submit(C.SetParam("k2", 800.0))
        wait_for(lambda: any(p.name == "k2" and p.value == 800.0 for p in session.latest().entries.params), what="k2")
        marks["after"] = session.latest().time
        wait_for(lambda: session.latest().time > marks["after"] + 0.3, what="time after the change")
        # A model MuJoCo refuses: the error shows, the old model keeps running.
        t0 = session.latest().time
        session.submit(C.OpenModel(str(broken), discard=True))
        wait_for(lambda: any("broken.xml" in m for _, m in session.latest().messages), what="the error")
        level, text = next((lv, m) for lv, m in session.latest().messages if "broken.xml" in m)
        assert level == "error" and "MuJoCo refused" in text, (level, text)
        wait_for(lambda: session.latest().time > t0 + 0.2, what="the old model to keep running")
        assert session.latest().model.path.endswith("spring_mass.xml")
        # Reload keeps the rig.
        session.submit(C.Reload())
        wait_for(lambda: any("reloaded" in m for _, m in session.latest().messages), what="reload")
        assert {ld.name for ld in session.latest().loads} == {"main_spring", "extra"}
        session.submit(C.SaveScenario(str(saved)))
        wait_for(saved.exists, what="the saved scenario")
        time.sleep(0.3)
        app.request_screenshot(str(out / "panel.png"))
        wait_for((out / "panel.png").exists, what="the panel screenshot")
        screenshot("app_spring_mass")
        session.submit(C.ToggleRecording())  # off: the file is finalized
        wait_for(rec.exists, what="the finalized recording", timeout=30)
        return marks

    return run_app(MODELS / "spring_mass.toml", body)


def divergence(out: Path) -> dict:
    """An absurd spring diverges: the run pauses with a message; reset and play recover."""

    def body(session, app, sim) -> dict:
        wait_for(lambda: session.latest().time > 0.1, what="the app to run")
        session.submit(C.StartRecording(str(out / "diverged.parquet")))
        wait_for(lambda: session.latest().outputs.recording_rows > 100, what="recorded rows")
        session.submit(
            C.PutEntry(
                "loads",
                {
                    "name": "wild",
                    "kind": "ideal_spring",
                    "at": "tip",
                    "to": "base",
                    "stiffness": 1e13,
                    "rest_length": 0.0,
                },
            )
        )
        wait_for(lambda: session.latest().state == C.RunState.ERROR, what="the divergence")
        snap = session.latest()
        assert "diverged" in (snap.error or ""), snap.error
        assert any(lv == "error" and "diverged" in m for lv, m in snap.messages)
        screenshot("app_divergence")
        session.submit(C.RemoveEntry("loads", "wild"))
        session.submit(C.Reset())
        wait_for(lambda: session.latest().state == C.RunState.PAUSED, what="paused after reset")
        session.submit(C.Play())
        wait_for(
            lambda: session.latest().state == C.RunState.RUNNING and session.latest().time > 0.2, what="running again"
        )
        session.submit(C.StopRecording())
        wait_for((out / "diverged.parquet").exists, what="the recording", timeout=30)
        return {"error": snap.error, "rows_at_error": snap.outputs.recording_rows}

    return run_app(MODELS / "spring_mass.toml", body)


def close_viewer(out: Path) -> dict:
    """Closing the 3D viewer window closes the whole app."""

    def body(session, app, sim) -> dict:
        wait_for(
            lambda: sim.viewer is not None and session.latest().time > 0.1 and app.frames > 3, what="the app to run"
        )
        sim.viewer.close()
        return {}

    return run_app(MODELS / "bumper_drop.toml", body, timeout=60)


def viewer_features(out: Path) -> dict:
    """Pick a point in the viewer and attach there; T screenshot; keyframe; reload after a site vanished."""
    import shutil

    xml = out / "rig.xml"
    shutil.copy(MODELS / "spring_mass.xml", xml)
    text = xml.read_text()
    xml.write_text(text.replace('<site name="tip"', '<site name="temp_site" pos="0 0 0.05"/><site name="tip"', 1))
    toml = out / "rig.toml"
    toml.write_text((MODELS / "spring_mass.toml").read_text().replace('model = "spring_mass.xml"', 'model = "rig.xml"'))

    def body(session, app, sim) -> dict:
        import mujoco

        wait_for(lambda: sim.viewer is not None and session.latest().time > 0.2, what="the app to run")
        v = sim.viewer
        with v.lock():  # what a double-click on the block does
            v.perturb.select = mujoco.mj_name2id(session.model, mujoco.mjtObj.mjOBJ_BODY, "block")
            v.perturb.localpos[:] = [0.01, 0.02, 0.03]
        wait_for(lambda: session.latest().selection is not None, what="the selection")
        picked = session.latest().selection
        session.submit(
            C.PutEntry(
                "loads",
                {
                    "name": "picked",
                    "kind": "ideal_spring",
                    "at": picked,
                    "to": "temp_site",
                    "stiffness": 50.0,
                    "rest_length": 0.0,
                },
            )
        )
        wait_for(lambda: any(ld.name == "picked" for ld in session.latest().loads), what="the attached load")
        session.submit(C.Screenshot())  # what the screenshot key submits
        wait_for(lambda: any("screenshot saved" in m for _, m in session.latest().messages), what="screenshot")
        shot = next(m for _, m in session.latest().messages if "screenshot saved" in m).split(": ", 1)[1]
        session.submit(C.SaveKeyframe(str(out / "keyframe.xml")))
        wait_for((out / "keyframe.xml").exists, what="the keyframe copy")
        xml.write_text(text)  # the site the load hangs on is gone from the model file
        session.submit(C.Reload())
        wait_for(lambda: any("without load" in m for _, m in session.latest().messages), what="reload warning")
        names = {ld.name for ld in session.latest().loads}
        t_reload = session.latest().time
        wait_for(lambda: session.latest().time > t_reload + 0.1, what="running after reload")
        return {
            "selection": picked,
            "screenshot": shot,
            "loads_after_reload": sorted(names),
            "messages": [m for _, m in session.latest().messages],
        }

    return run_app(toml, body)


def video(out: Path) -> dict:
    """Record a few seconds of video in the app (panel button, then the V key) and a screenshot."""

    def body(session, app, sim) -> dict:
        wait_for(
            lambda: sim.viewer is not None and session.latest().time > 0.2 and app.frames > 5, what="the app to run"
        )
        session.submit(C.ToggleVideo(str(out / "app.mp4")))
        wait_for(lambda: session.latest().outputs.video_path is not None, what="video on")
        t0 = session.latest().time
        wait_for(lambda: session.latest().time > t0 + 1.0, what="a second of simulated time", timeout=60)
        time.sleep(0.3)
        screenshot("app_video")
        session.submit(C.ToggleVideo())  # what the video key submits: stops it
        wait_for(lambda: any("video saved" in m for _, m in session.latest().messages), what="video saved", timeout=60)
        session.submit(C.Screenshot())
        wait_for(lambda: any("screenshot saved" in m for _, m in session.latest().messages), what="screenshot")
        shot = next(m for _, m in session.latest().messages if "screenshot saved" in m).split(": ", 1)[1]
        saved = next(m for _, m in session.latest().messages if "video saved" in m)
        return {"video_message": saved, "screenshot": shot}

    return run_app(MODELS / "clearance.toml", body)


def recover_offer(out: Path) -> dict:
    """The app finds the recording a killed run left behind and recovers it on request."""

    def body(session, app, sim) -> dict:
        wait_for(lambda: app.frames > 5 and session.latest().time > 0.1, what="the app to run")
        target = str(out / "runs" / "killed.parquet")
        assert session.latest().outputs.interrupted == (target,), session.latest().outputs.interrupted
        assert any(lv == "warning" and "interrupted recording" in m for lv, m in session.latest().messages)
        time.sleep(0.3)
        screenshot("app_recover_offer")
        session.submit(C.RecoverRecording(target))
        wait_for(lambda: any("recovered" in m for _, m in session.latest().messages), what="recovery")
        msg = next(m for _, m in session.latest().messages if "recovered" in m)
        wait_for(lambda: session.latest().outputs.interrupted == (), what="the offer to go")
        return {"message": msg}

    return run_app(out / "spring_mass.toml", body)


SCRIPTS = {
    "recover_offer": recover_offer,
    "video": video,
    "viewer_features": viewer_features,
    "attach_tune_record": attach_tune_record,
    "divergence": divergence,
    "close_viewer": close_viewer,
}

if __name__ == "__main__":
    name, outdir = sys.argv[1], Path(sys.argv[2])
    result = SCRIPTS[name](outdir)
    (outdir / "report.json").write_text(json.dumps(result))
