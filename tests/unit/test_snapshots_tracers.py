"""Snapshots (bit-exact restore, files, model identity, start states in the rig builder) and tracers."""

from __future__ import annotations

import io
from pathlib import Path

import mujoco
import numpy as np
import pytest

from mjrig.runtime import NamedValue, RuntimeManager, Sine
from mjrig.runtime.drawing.tracers import SAMPLES, Tracer
from mjrig.runtime.drawing.visuals import TRAIL_PX
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.forces.joint_loads import JointFriction
from mjrig.runtime.telemetry.snapshots import load_snapshot, save_snapshot
from mjrig.scenario.builder import build_rig
from mjrig.scenario.parse import parse_scenario
from tests.unit.unit_util import ARM_WORLD, arm_rig

INTEGRATORS = ("Euler", "implicitfast", "RK4")

RIG_XML = f"""<mujoco model="snaprig">{ARM_WORLD}
<keyframe><key name="launch" qpos="0.4 0.05 0.8 0 0.3 1 0 0 0"/></keyframe></mujoco>"""


def _trajectory(rm: RuntimeManager, model: mujoco.MjModel, data: mujoco.MjData, n: int) -> np.ndarray:
    rows = []
    for _ in range(n):
        rm.step(model, data)
        rows.append(np.concatenate([[data.time], data.qpos, data.qvel, data.qfrc_applied]))
    return np.array(rows)


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_restore_after_snapshot_repeats_the_run_bit_for_bit(rig, integrator, tmp_path):
    rm = arm_rig()
    model, data = rig.build(rm, RIG_XML, "native", integrator=integrator)
    _trajectory(rm, model, data, 400)  # the ball lands: contacts and a warm-started solver
    snap = rm.snapshot(data)
    original = _trajectory(rm, model, data, 300)
    rm.restore(data, snap)
    assert np.array_equal(_trajectory(rm, model, data, 300), original)
    # ... from a file, on a fresh rig and data of the same model
    path = save_snapshot(tmp_path / "snap", snap)
    assert path.suffix == ".npz"
    rm2 = arm_rig()
    model2, data2 = rig.build(rm2, RIG_XML, "native", integrator=integrator)
    rm2.step(model2, data2)
    rm2.restore(data2, load_snapshot(path, model=model2))
    assert np.array_equal(_trajectory(rm2, model2, data2, 300), original)


def test_a_snapshot_of_another_model_is_refused(rig, tmp_path):
    rm = arm_rig()
    model, data = rig.build(rm, RIG_XML, "native")
    rm.step(model, data)
    path = save_snapshot(tmp_path / "s.npz", rm.snapshot(data))
    other = mujoco.MjModel.from_xml_string(RIG_XML.replace('name="slide"', 'name="slider"'))
    # the same name and sizes: the one line says what differs, not the same description twice
    same = r"^snapshot s.npz belongs to another model 'snaprig' \(nq=9, nv=8, na=0, nu=1\): "
    rigs = model.nuserdata  # the rig's own state lives in MuJoCo's userdata; the bare model has none
    assert rigs > 0
    with pytest.raises(
        ConfigError,
        match=same + rf"nuserdata \(the rig's own state\) {rigs} in the snapshot, 0 here; the joints' names$",
    ):
        load_snapshot(path, model=other)
    userdata = mujoco.MjModel.from_xml_string(
        RIG_XML.replace('<mujoco model="snaprig">', '<mujoco model="snaprig"><size nuserdata="4"/>')
    )
    with pytest.raises(ConfigError, match=same + rf"nuserdata \(the rig's own state\) {rigs} in the snapshot, 4 here$"):
        load_snapshot(path, model=userdata)
    bigger = mujoco.MjModel.from_xml_string(RIG_XML.replace("<actuator>", '<actuator><motor joint="hinge"/>'))
    with pytest.raises(
        ConfigError,
        match=r"^snapshot s.npz belongs to model 'snaprig' \(nq=9, nv=8, na=0, nu=1\), not to model 'snaprig' \(nq=9, nv=8, na=0, nu=2\)$",
    ):
        load_snapshot(path, model=bigger)
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ConfigError, match="not a snapshot saved by mjrig"):
        load_snapshot(tmp_path / "junk.npz")


def test_a_snapshot_holding_a_pickle_is_refused_for_that_reason(rig, tmp_path):
    """numpy would run the pickle's code on load: the refusal says the file holds Python objects
    (not that an entry claims more data than it holds), and nothing in the pickle runs."""
    import pickle
    import zipfile

    rm = arm_rig()
    model, data = rig.build(rm, RIG_XML, "native")
    rm.step(model, data)
    path = save_snapshot(tmp_path / "s.npz", rm.snapshot(data))
    ran = tmp_path / "ran"
    evil = np.array([_Boom(str(ran))], dtype=object)
    raw = io.BytesIO()
    np.lib.format.write_array(raw, evil, allow_pickle=True)
    with zipfile.ZipFile(path) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    members["rig.npy"] = raw.getvalue()
    with zipfile.ZipFile(path, "w") as zf:
        for name, body in members.items():
            zf.writestr(name, body)
    assert pickle.loads(pickle.dumps(_Boom("x"))) is None  # the class does run on unpickling
    with pytest.raises(
        ConfigError,
        match=r"^.*s.npz: not a snapshot saved by mjrig \(.*entry 'rig' holds Python objects \(a pickle\); a snapshot holds plain arrays only\)$",
    ):
        load_snapshot(path, model=model)
    assert not ran.exists()


class _Boom:
    """Unpickling it writes the file named ``marker``."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (_touch, (self.marker,))


def _touch(marker: str) -> None:
    if marker != "x":
        Path(marker).write_text("ran")


def _scenario(folder: Path, simulation: str) -> Path:
    (folder / "rig.xml").write_text(RIG_XML, encoding="utf-8")
    scen = folder / "rig.toml"
    scen.write_text(
        f'model = "rig.xml"\n[simulation]\n{simulation}\n[params]\nu = 0.3\n'
        '[[loads]]\nname = "motor"\nkind = "joint_torque"\njoint = "hinge"\nmagnitude = 0.2\n'
        '[[controls]]\nactuator = "shoulder"\nvalue = "u"\n',
        encoding="utf-8",
    )
    return scen


def test_the_rig_builder_starts_from_a_keyframe_or_a_snapshot(tmp_path):
    from mjrig.scenario.parse import load_scenario

    r = build_rig(load_scenario(_scenario(tmp_path, 'initial_key = "launch"')))
    assert r.data.qpos[0] == 0.4 and r.data.qpos[4] == 0.3
    for _ in range(200):
        r.runtime.step(r.model, r.data)
    save_snapshot(tmp_path / "mid.npz", r.runtime.snapshot(r.data))
    following = _trajectory(r.runtime, r.model, r.data, 100)
    r.reset()  # the app's Reset: back to the keyframe
    assert r.data.time == 0.0 and r.data.qpos[0] == 0.4
    s = build_rig(load_scenario(_scenario(tmp_path, 'initial_state = "mid.npz"')))
    assert s.data.time == pytest.approx(0.2)
    assert np.array_equal(_trajectory(s.runtime, s.model, s.data, 100), following)
    s.reset()
    assert s.data.time == pytest.approx(0.2)


def test_initial_key_and_state_are_exclusive_and_checked(tmp_path):
    from mjrig.scenario.builder import check_names
    from mjrig.scenario.parse import load_scenario

    with pytest.raises(
        ConfigError,
        match=r"rig.toml:3: simulation.initial_key: unknown keyframe 'lanch' "
        r"\(closest: launch\)",
    ):
        load_scenario(_scenario(tmp_path, 'initial_key = "lanch"')).check_model(
            check_names(load_scenario(_scenario(tmp_path, "")))
        )
    with pytest.raises(ConfigError, match="initial_state: give 'initial_key' or 'initial_state', not both"):
        load_scenario(_scenario(tmp_path, 'initial_key = "launch"\ninitial_state = "x.npz"'))


def test_a_tracer_keeps_a_bounded_fading_trail(rig):
    tr = Tracer(name="trail", at="tip", duration=0.5, color=(1.0, 0.5, 0.0, 0.8))
    rm = arm_rig()
    rm.tracers = [tr]
    model, data = rig.build(rm, RIG_XML, "native")
    rig.run(rm, model, data, 2.0)
    times, pos = tr.samples()
    assert len(times) == SAMPLES + 1  # bounded, whatever the run's length
    assert np.all(np.diff(times) >= tr.interval - 1e-9) and times[-1] == pytest.approx(data.time - 2e-3, abs=2e-3)
    lines = tr.lines()
    assert 0 < len(lines) <= SAMPLES
    alphas = [ln.color[3] for ln in lines]
    assert alphas == sorted(alphas) and alphas[-1] <= 0.8 + 1e-6 and alphas[0] < 0.05  # fading with age
    _, drawn = rm.drawing.visuals(model, data)
    assert sum(len(t) for t in drawn) == len(lines)  # the viewer, videos and screenshots draw them
    assert np.allclose(drawn[0].points[-1], lines[-1].end) and np.allclose(drawn[0].rgba[:, 3], alphas)
    scene = mujoco.MjvScene(model, maxgeom=1000)
    assert rm.drawing.draw(scene, model, data) >= len(lines)
    ours = [scene.geoms[i] for i in range(scene.ngeom - len(lines), scene.ngeom)]
    assert all(g.type == mujoco.mjtGeom.mjGEOM_LINE and g.size[0] == TRAIL_PX for g in ours)  # flat lines
    ends = [g.pos + g.mat.reshape(3, 3)[:, 2] * g.size[2] for g in ours]
    assert np.allclose([g.pos for g in ours], [ln.start for ln in lines], atol=1e-6)
    assert np.allclose(ends, [ln.end for ln in lines], atol=1e-5)  # joining the samples in order
    assert np.allclose([g.rgba for g in ours], [ln.color for ln in lines], atol=1e-6)  # fading
    mujoco.mj_resetData(model, data)
    rm.step(model, data)
    assert len(tr.samples()[0]) <= 1  # time went back: a new trail


def test_scenario_sections_build_runtime_objects(tmp_path):
    text = (
        'model = "rig.xml"\n[params]\nm = { value = 1.0, model = "body:box.mass" }\n'
        '[[loads]]\nname = "f"\nkind = "joint_friction"\njoint = "slide"\nmu = 0.1\npin_radius = 0.01\n'
        '[[controls]]\nactuator = "shoulder"\nvalue = { profile = "sine", amplitude = 1.0, frequency = 1.0 }\n'
        '[[tracers]]\nname = "t"\nat = "body:box@0,0,0.1"\nduration = 1.0\n'
    )
    (tmp_path / "rig.xml").write_text(RIG_XML, encoding="utf-8")
    sc = parse_scenario(text, base=tmp_path)
    assert isinstance(sc.loads[0], JointFriction) and sc.loads[0].uses_pin
    assert isinstance(sc.controls[0].value, Sine) and sc.tracers[0].duration == 1.0
    assert str(sc.bindings[0].field) == "body:box.mass" and sc.bindings[0].param is sc.params["m"]
    with pytest.raises(ConfigError, match=r"controls\[1\].actuator: duplicate control actuator 'shoulder'"):
        parse_scenario(text + '[[controls]]\nactuator = "shoulder"\nvalue = 1.0\n', base=tmp_path)
    with pytest.raises(ConfigError, match=r"tracers\[1\].name: duplicate tracer name 't'"):
        parse_scenario(text + '[[tracers]]\nname = "t"\nat = "tip"\nduration = 1.0\n', base=tmp_path)
    assert isinstance(NamedValue("x", 1.0), NamedValue)
