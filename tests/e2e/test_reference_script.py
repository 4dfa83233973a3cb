"""The runtime API as the reference documents it, pasted into a fresh interpreter.

``REFERENCE_SCRIPT`` is what a user of the reference would paste (its imports, constructors,
methods and attributes); it runs in a fresh interpreter from an empty folder and reports what it
saw (the behaviour behind those names is checked in-process in tests/unit/test_reference_api.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

REFERENCE_SCRIPT = r'''
import json
from pathlib import Path

import mujoco
import numpy as np
import polars as pl

from mjrig.runtime import (AnySite, ArrowConfig, Body, BodyReactionForce, CameraName, Color, GeneralLoad,
                           LineConfig, Load, NamedValue, PointToPointForce, Proximity, RuntimeManager,
                           ScalarForce, ScalarTorque, SignalCategory, SignalManager, Site, SyncHook,
                           VectorForce, VectorTorque, VideoRecorder)

XML = """
<mujoco>
  <option timestep="0.002" gravity="0 0 0"/>
  <visual><global offwidth="160" offheight="120"/></visual>
  <worldbody>
    <light pos="0 0 3"/>
    <camera name="track" pos="0 -3 1" xyaxes="1 0 0 0 0.3 1"/>
    <site name="anchor" pos="0 0 1"/>
    <body name="mass" pos="0 0 0.5">
      <freejoint name="mass_free"/>
      <geom type="sphere" size="0.05" mass="1" contype="0" conaffinity="0"/>
      <site name="tip" pos="0 0 0"/>
    </body>
    <body name="cart" pos="1 0 0.5">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.1" mass="2" contype="0" conaffinity="0"/>
      <site name="nozzle" pos="0 0 0"/>
    </body>
  </worldbody>
</mujoco>
"""
Path("rig.xml").write_text(XML)
mj_model = mujoco.MjModel.from_xml_path("rig.xml")
mj_data = mujoco.MjData(mj_model)


class Thruster(Load):
    """A user load: a constant push along world x."""

    thrust: float = 0.5

    def calculate(self, mj_model, mj_data):
        return np.array([self.thrust, 0.0, 0.0]), np.zeros(3)


tip: AnySite = Site("tip")
anchor: AnySite = Site("anchor")
nozzle: AnySite = Site("nozzle")
stiffness = NamedValue("k", 50.0)
loads = [
    Thruster(name="thruster", action_site=tip),
    GeneralLoad(name="six_dof", action_site=nozzle, force=[0.0, 1.0, 0.0], torque=[0.0, 0.0, 0.02],
                xtion_body=Body("mass")),
    VectorForce(name="push", action_site=nozzle, vector=[0.0, 0.0, 0.3]),
    VectorTorque(name="twist", action_site=nozzle, vector=[0.01, 0.0, 0.0]),
    ScalarForce(name="jet", action_site=nozzle, scalar_func=lambda t, unit_vec, m, d: 0.2),
    ScalarTorque(name="spin", action_site=nozzle, scalar_func=lambda t, unit_vec, m, d: 0.01,
                 xtion_body=Body("mass")),
    PointToPointForce(name="custom", action_site=tip, xtion_site=anchor,
                      magnitude_func=lambda d, v, r0, m, dd: -10.0 * (d - r0)),
    PointToPointForce.ideal_spring("ideal", tip, anchor, stiffness=stiffness, damping=0.5, rest_length=0.4),
    PointToPointForce.compression_spring("bumper", tip, anchor, stiffness=100.0, damping=0.0, rest_length=0.3),
    PointToPointForce.tension_spring("cable", tip, anchor, stiffness=20.0, damping=0.1, rest_length=0.45),
    PointToPointForce.stroke_compression_spring("stroke", tip, anchor, stiffness=10.0, damping=0.0,
                                                preload=1.0, max_stroke=0.2),
]
loads[1].active = True
loads[8].rel_to_site = None

synced = []


def on_sync(mj_model, mj_data, arrows, lines):
    synced.append((len(arrows), len(lines), sorted({tuple(a.color) for a in arrows})))


hook: SyncHook = on_sync
camera: CameraName = "track"
signal_manager = SignalManager(export_path=Path("telemetry.parquet"), batch_size=50, record_decimation=2)
recorder = VideoRecorder(path=Path("run.mp4"), camera_name=camera, show_loads=True, show_net_force=True,
                         show_contacts=True, show_proximities=True, fps=30, width=160, height=120)
proximity = Proximity(name="gap", a="tip", b="nozzle", threshold=0.5)

with RuntimeManager(signal_manager=signal_manager, loads=loads, proximities=[proximity],
                    video_recorders=[recorder], playback_speed=0.0, sync_hook=hook) as runtime:
    runtime.resolve(mj_model, mj_data)
    for load in runtime.loads:
        load.resolve_ids(mj_model, mj_data)
    while mj_data.time < 0.2:
        signal_manager.post(float(mj_data.qvel[0]), SignalCategory.BODIES, ("mass", "qvel"), attr="x")
        signal_manager.post(9.81, "Sensors", ("IMU", "Accel"), attr="z")
        runtime.step(mj_model, mj_data)
    signal_manager.flush()
    visuals = [a for load in runtime.loads for a in load.get_visuals(mj_model, mj_data)]
    line = proximity.get_visuals(mj_model, mj_data)

# Drawing into any scene, the way the reference's recorder does it.
scene = mujoco.MjvScene(mj_model, maxgeom=100)
before = scene.ngeom
for arrow in visuals:
    arrow.draw_in_scene(mj_model, scene)
extra = ArrowConfig(pos=np.zeros(3), vec=np.array([0.0, 0.0, 1.0]), color=(0.2, 0.4, 0.6, 0.8), is_torque=False)
extra.draw_in_scene(mj_model, scene)
LineConfig(start=np.zeros(3), end=np.ones(3), color=Color.ROSE_500.rgba).draw_in_scene(scene)
line.draw_in_scene(scene)

# One load on its own: apply_load after mj_forward, then a step.
solo_data = mujoco.MjData(mj_model)
mujoco.mj_forward(mj_model, solo_data)
solo = VectorForce(name="solo", action_site="nozzle", vector=[4.0, 0.0, 0.0])
solo.resolve_ids(mj_model, solo_data)
force, torque = solo.calculate(mj_model, solo_data)
solo.apply_load(mj_model, solo_data)
mujoco.mj_step(mj_model, solo_data)

# A SignalManager on its own.
standalone = SignalManager(export_path=Path("standalone.parquet"), batch_size=3)
for _ in range(7):
    mujoco.mj_forward(mj_model, solo_data)
    standalone.record(mj_model, solo_data)
    mujoco.mj_step(mj_model, solo_data)
standalone.close()

table = pl.read_parquet("telemetry.parquet")
print(json.dumps({
    "columns": table.columns,
    "rows": table.height,
    "posted_x": table["Bodies/mass/qvel:x"].to_list(),
    "posted_z": table["Sensors/IMU/Accel:z"].to_list(),
    "standalone_rows": pl.read_parquet("standalone.parquet").height,
    "synced": len(synced),
    "colors": [list(c) for c in synced[-1][2]],
    "lines": synced[-1][1],
    "drawn": scene.ngeom - before,
    "extra_rgba": scene.geoms[before + len(visuals)].rgba.tolist(),
    "video_bytes": Path("run.mp4").stat().st_size,
    "solo_force": force.tolist(),
    "solo_qacc": solo_data.qacc[6:9].tolist(),
    "palette": {c: list(getattr(Color, c).rgba) for c in ("EMERALD_500", "AMBER_500", "ROSE_500")},
    "category": str(SignalCategory("Bodies")),
    "categories": [c.value for c in SignalCategory],
    "reaction_bases": sorted(type(ld).__name__ for ld in loads if isinstance(ld, BodyReactionForce)),
    "general_bases": [isinstance(loads[1], VectorForce), isinstance(loads[1], VectorTorque)],
}))
'''


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Run REFERENCE_SCRIPT once, from an empty folder, offscreen (EGL, no display)."""
    folder = tmp_path_factory.mktemp("reference")
    env = dict(os.environ, MUJOCO_GL="egl")
    env.pop("DISPLAY", None)
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [sys.executable, "-c", REFERENCE_SCRIPT], cwd=folder, env=env, capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    report["folder"] = folder
    return report


def test_reference_script_records_posts_and_draws(reference_run: dict) -> None:
    r = reference_run
    steps = 100  # 0.2 s at 2 ms
    assert r["rows"] == steps // 2  # record_decimation=2
    cols = set(r["columns"])
    assert {
        "time",
        "Bodies/mass/qvel:x",
        "Sensors/IMU/Accel:z",
        "Loads/thruster:fx",
        "Loads/stroke:length",
        "Proximities/gap:distance",
        "Params/k:value",
    } <= cols
    assert r["posted_z"] == [9.81] * r["rows"]
    # The thruster's 0.5 N (plus the springs, which pull along z only) accelerates the 1 kg mass along x.
    x_rates = r["posted_x"]
    assert x_rates[0] == 0.0 and x_rates[-1] > 0.0 and all(b >= a for a, b in zip(x_rates, x_rates[1:]))
    assert r["standalone_rows"] == 7
    assert r["synced"] == steps
    palette = {tuple(v) for v in r["palette"].values()}
    assert {tuple(c) for c in r["colors"]} == palette  # action, torque and reaction arrows
    assert r["lines"] == 1
    assert r["drawn"] >= 3 and r["video_bytes"] > 0
    np.testing.assert_allclose(r["extra_rgba"], [0.2, 0.4, 0.6, 0.8], rtol=1e-6)
    # The solo load: 4 N on the 2 kg cart.
    assert r["solo_force"] == [4.0, 0.0, 0.0]
    np.testing.assert_allclose(r["solo_qacc"], [2.0, 0.0, 0.0], atol=1e-12)
    assert r["category"] == "Bodies" and "Bodies" in r["categories"]
    assert r["reaction_bases"] == ["GeneralLoad", "ScalarForce", "ScalarTorque", "VectorForce", "VectorTorque"]
    assert r["general_bases"] == [True, True]
    assert sorted(p.name for p in reference_run["folder"].iterdir()) == [
        "rig.xml",
        "run.mp4",
        "standalone.parquet",
        "telemetry.parquet",
    ]
