"""Real-time factor of the desktop app on a humanoid-sized model (needs a display, e.g. Xvfb).

Opens the app (viewer + panel) on dm_control's humanoid with 10 springs, a proximity, four
signals plotted live and recording on, runs it at speed 1.0 and then "as fast as possible", and prints the real-time
factor of each, measured from `time` and `wall_time` in the recorded Parquet.
Usage: DISPLAY=:99 python benchmarks/app_realtime.py [--seconds 10]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mjrig import commands as C  # noqa: E402
from mjrig.desktop.app import PanelApp, SessionClient  # noqa: E402
from mjrig.desktop.sim_thread import SimThread  # noqa: E402
from mjrig.session.kernel import Session  # noqa: E402


def scenario(folder: Path) -> Path:
    import dm_control

    model = Path(dm_control.__file__).parent / "suite" / "humanoid.xml"
    bodies = [
        "torso",
        "head",
        "lower_waist",
        "pelvis",
        "right_thigh",
        "right_shin",
        "left_thigh",
        "left_shin",
        "right_upper_arm",
        "left_upper_arm",
    ]
    lines = [f'model = "{model}"', "", "[params]", 'k = { value = 60.0, min = 0.0, max = 500.0, unit = "N/m" }']
    for i, b in enumerate(bodies):
        lines += [
            "",
            "[[loads]]",
            f'name = "spring{i}"',
            'kind = "ideal_spring"',
            f'at = "body:{b}@0.02,0,0"',
            f'to = "body:world@{0.1 * i:.1f},0,2.5"',
            'stiffness = "k"',
            "damping = 2.0",
            "rest_length = 1.0",
        ]
    lines += ["", "[[proximities]]", 'name = "head_floor"', 'a = "body:head"', 'b = "body:world"']
    path = folder / "humanoid_rig.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def rtf(parquet: Path, skip_s: float = 1.0) -> float:
    df = pl.read_parquet(parquet, columns=["time", "wall_time"])
    df = df.filter(pl.col("wall_time") >= skip_s)
    return float((df["time"][-1] - df["time"][0]) / (df["wall_time"][-1] - df["wall_time"][0]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=10.0, help="wall seconds per phase")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp())
    session = Session()
    session.open(scenario(folder))
    sim = SimThread(session)
    sim.start()
    app = PanelApp(SessionClient(session), exit_after=4 * args.seconds + 30)
    results: dict[str, float] = {}

    def script() -> None:
        try:
            while app.frames < 5 or not session.latest().signals:
                time.sleep(0.05)
            for name in (
                "Joints/abdomen_z:qpos",
                "Loads/spring0:fx",
                "Loads/spring5:length",
                "Proximities/head_floor:distance",
            ):
                app.plot.set_checked(name, True)  # live plots on, as a user would have them
            for label, speed in (("speed 1.0", 1.0), ("as fast as possible", 0.0)):
                out = folder / f"{speed}.parquet"
                session.submit(C.SetSpeed(speed))
                session.submit(C.StartRecording(str(out)))
                f0 = sim.frames
                time.sleep(args.seconds)
                frames = sim.frames - f0
                session.submit(C.StopRecording())
                deadline = time.time() + 60
                while not out.exists() and time.time() < deadline:
                    time.sleep(0.1)
                results[label] = rtf(out)
                results[label + " viewer Hz"] = frames / args.seconds
        finally:
            session.submit(C.Quit())

    threading.Thread(target=script, daemon=True).start()
    app.run()
    sim.stop()
    sim.join(10)
    session.close()
    for label in ("speed 1.0", "as fast as possible"):
        print(
            f"{label:>20}: real-time factor {results[label]:7.3f}   viewer frames {results[label + ' viewer Hz']:5.1f} Hz"
        )


if __name__ == "__main__":
    main()
