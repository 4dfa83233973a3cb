"""Proximities: point-to-point distance and geom clearance against hand-computed geometry."""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import pytest

from mjrig.runtime import ConfigError, Proximity, RuntimeManager, SignalManager

POINTS_XML = """
<mujoco>
  <option timestep="1e-3" gravity="0 0 0"/>
  <worldbody>
    <site name="p1" pos="0.1 0.2 0.3"/>
    <body name="turned" pos="1 0 0" euler="0 0 90">
      <site name="p2" pos="0.5 0 0.25"/>
    </body>
    <body name="cart" pos="0 0 0">
      <joint name="x" type="slide" axis="1 0 0"/>
      <geom type="sphere" size="0.05" mass="1" contype="0" conaffinity="0"/>
      <site name="c" pos="0 0.4 0"/>
    </body>
  </worldbody>
</mujoco>
"""
# p2 in the world: body origin (1,0,0) + Rz(90)·(0.5,0,0.25) = (1, 0.5, 0.25)
P1, P2 = np.array([0.1, 0.2, 0.3]), np.array([1.0, 0.5, 0.25])


def _proximity_rig(rig, path: str, xml: str, prox: Proximity, out: Path):
    """(runtime, model, data) of ``xml`` compiled the ``path`` way with the one proximity ``prox``,
    recording the Proximities group into ``out``."""
    rm = RuntimeManager(
        proximities=[prox], signal_manager=SignalManager(out, groups=("proximities",)), playback_speed=0
    )
    model, data = rig.build(rm, xml, path)
    return rm, model, data


@pytest.mark.parametrize(
    "a,b",
    [
        ("p1", "p2"),
        ("body:world@0.1,0.2,0.3", "body:turned@0.5,0,0.25"),
        ("p2", "body:world@0.1,0.2,0.3"),
    ],
)
def test_distance_between_points(rig, path: str, tmp_path: Path, a: str, b: str) -> None:
    out = tmp_path / "d.parquet"
    prox = Proximity(name="gap", a=a, b=b)
    rm, model, data = _proximity_rig(rig, path, POINTS_XML, prox, out)
    with rm:
        for _ in range(3):
            rm.step(model, data)
        expected = float(np.linalg.norm(P2 - P1))
        assert prox.measure(model, data) == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(rig.read(out)["Proximities/gap:distance"].to_numpy(), expected, rtol=1e-12)


def test_distance_follows_motion(rig, path: str, tmp_path: Path) -> None:
    """A cart coasting at v along x: the recorded distance matches the closed-form track."""
    out = tmp_path / "m.parquet"
    rm, model, data = _proximity_rig(rig, path, POINTS_XML, Proximity(name="gap", a="c", b="p1"), out)
    v = 0.8
    data.qvel[0] = v
    with rm:
        rig.run(rm, model, data, 0.5)
    df = rig.read(out)
    t = df["time"].to_numpy()
    cart = np.column_stack([v * t, np.full_like(t, 0.4), np.zeros_like(t)])
    np.testing.assert_allclose(df["Proximities/gap:distance"].to_numpy(), np.linalg.norm(cart - P1, axis=1), rtol=1e-9)


GEOMS_XML = """
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1" pos="0 0 0"/>
    <body name="b1" pos="0 0 2">
      <geom name="ball1" type="sphere" size="{r1}" contype="0" conaffinity="0"/>
    </body>
    <body name="b2" pos="{x2} {y2} 2">
      <geom name="ball2" type="sphere" size="{r2}" contype="0" conaffinity="0"/>
    </body>
    <body name="crate" pos="3 3 {zbox}" euler="{tilt} 0 0">
      <geom name="box" type="box" size="{hx} {hy} {hz}" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>
"""


def _geom_xml(**kw: float) -> str:
    base = dict(r1=0.1, r2=0.2, x2=0.3, y2=0.4, zbox=1.0, tilt=0.0, hx=0.1, hy=0.2, hz=0.3)
    base.update(kw)
    return GEOMS_XML.format(**base)


def _measure(rig, path: str, tmp_path: Path, xml: str, a: str, b: str) -> tuple[float, float]:
    """(Proximity.measure, recorded Proximities/clear:distance of the first row)."""
    out = tmp_path / "g.parquet"
    prox = Proximity(name="clear", a=a, b=b)
    rm, model, data = _proximity_rig(rig, path, xml, prox, out)
    with rm:
        rm.step(model, data)
        rm.step(model, data)
        direct = prox.measure(model, data)
    col = rig.read(out)["Proximities/clear:distance"].to_numpy()
    assert col[0] == pytest.approx(col[1], abs=1e-12)  # nothing moves
    return direct, float(col[0])


@pytest.mark.parametrize(
    "x2,y2", [(0.3, 0.4), (0.6, 0.0), (0.2, 0.1), (0.0, 0.15)], ids=["apart", "apart-x", "penetrating", "deep"]
)
def test_sphere_sphere_clearance(rig, path: str, tmp_path: Path, x2: float, y2: float) -> None:
    r1, r2 = 0.1, 0.2
    expected = math.hypot(x2, y2) - r1 - r2  # 0.2, 0.3, -0.0764, -0.15
    direct, recorded = _measure(rig, path, tmp_path, _geom_xml(r1=r1, r2=r2, x2=x2, y2=y2), "geom:ball1", "geom:ball2")
    assert direct == pytest.approx(expected, rel=1e-6, abs=1e-9)
    assert recorded == pytest.approx(expected, rel=1e-6, abs=1e-9)
    assert (recorded < 0) == (math.hypot(x2, y2) < r1 + r2)


@pytest.mark.parametrize("zbox,tilt", [(1.0, 0.0), (0.25, 0.0), (1.0, 45.0), (0.3, 45.0), (0.5, 90.0)])
def test_box_plane_clearance(rig, path: str, tmp_path: Path, zbox: float, tilt: float) -> None:
    hx, hy, hz = 0.1, 0.2, 0.3
    a = math.radians(tilt)
    # the lowest corner of a box turned by `tilt` about x sits hy·sin + hz·cos below its centre
    expected = zbox - (hy * abs(math.sin(a)) + hz * abs(math.cos(a)))
    xml = _geom_xml(zbox=zbox, tilt=tilt, hx=hx, hy=hy, hz=hz)
    for a_, b_ in (("geom:box", "geom:floor"), ("geom:floor", "geom:box")):
        direct, recorded = _measure(rig, path, tmp_path, xml, a_, b_)
        assert direct == pytest.approx(expected, rel=1e-6, abs=1e-9)
        assert recorded == pytest.approx(expected, rel=1e-6, abs=1e-9)


def test_proximity_mixing_geom_and_point_is_refused() -> None:
    with pytest.raises(ConfigError, match="geom:ball1"):
        Proximity(name="bad", a="geom:ball1", b="p1")


def test_unknown_geom_names_closest(tmp_path: Path) -> None:
    rm = RuntimeManager(proximities=[Proximity(name="c", a="geom:bal1", b="geom:box")], playback_speed=0)
    model = mujoco.MjModel.from_xml_string(_geom_xml())
    data = mujoco.MjData(model)
    with pytest.raises(ConfigError) as info:
        rm.step(model, data)
    msg = str(info.value)
    assert "bal1" in msg and "ball1" in msg
