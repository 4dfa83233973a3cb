"""Shared helpers and MJCF models of the unit tests that are not fixtures (those live in
conftest.py); a few end-to-end tests use the models too.

A plain module, imported as ``tests.unit.unit_util`` like ``tests/e2e/e2e_util.py``, so its name
cannot clash with a conftest.py.
"""

from __future__ import annotations

from pathlib import Path

from mjrig.runtime import PointToPointForce, RuntimeManager, Sine
from mjrig.runtime.controls import Control
from mjrig.runtime.forces.joint_loads import JointFriction, JointTorque
from tests import mjcf

DOCS = Path(__file__).resolve().parents[2] / "docs"


def manual_table(page: str, name: str) -> str:
    """The generated table ``name`` as the manual page ``docs/<page>`` shows it: the lines between
    its ``<!-- <name> table: ...`` and ``<!-- end <name> table -->`` comments, stripped."""
    text = (DOCS / page).read_text(encoding="utf-8")
    start = text.index(f"<!-- {name} table")
    return text[text.index("\n", start) + 1 : text.index(f"<!-- end {name} table -->")].strip()


ARM_WORLD = """<option timestep="1e-3"/><worldbody>
  <geom name="floor" type="plane" size="2 2 .1"/>
  <site name="anchor" pos="0 0 1"/>
  <body name="arm" pos="0 0 1"><joint name="hinge" type="hinge" axis="0 1 0" damping="0.01"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="1"/><site name="tip" pos="0.3 0 0"/>
    <body name="box" pos="0.3 0 0"><joint name="slide" type="slide" axis="1 0 0"/>
      <geom type="box" size=".04 .04 .04" mass="0.5"/></body></body>
  <body name="ball" pos="0.8 0 0.3"><freejoint/><geom size="0.05" mass="0.2"/></body>
</worldbody>
<actuator><motor name="shoulder" joint="hinge" gear="2" ctrlrange="-1 1" ctrllimited="true"/></actuator>"""
"""The inside of an MJCF ``<mujoco>`` (1 ms steps): a 1 kg arm (0.3 m) on the ``hinge`` with a
0.5 kg box on a ``slide`` at its end, the sites ``tip`` (on the arm) and ``anchor`` (fixed, 1 m
up), a free 0.2 kg ball over a floor (contacts) and a motor ``shoulder`` on the hinge (gear 2)."""


def arm_rig() -> RuntimeManager:
    """The loads and control of a rig on ARM_WORLD with state of every kind: a damped spring from
    ``tip`` to ``anchor`` (50 N/m, 0.5 N·s/m, rest 0.2 m), a sine torque on the hinge (0.3 N·m at
    2 Hz), a pin friction on the hinge (μ 0.2, pin radius 0.01 m), a rail friction on the slide
    (Coulomb 0.05 N, breakaway 0.08 N, viscous 0.1 N·s/m) and a sine control of the motor
    (amplitude 0.5 in its control units, 1 Hz); not paced (``playback_speed=0``)."""
    return RuntimeManager(
        loads=[
            PointToPointForce.ideal_spring("spring", "tip", "anchor", stiffness=50.0, damping=0.5, rest_length=0.2),
            JointTorque(name="motor", joint="hinge", magnitude=Sine(0.3, 2.0)),
            JointFriction(name="pin", joint="hinge", mu=0.2, pin_radius=0.01),
            JointFriction(name="rail", joint="slide", coulomb=0.05, breakaway=0.08, viscous=0.1),
        ],
        controls=[Control("shoulder", value=Sine(0.5, 1.0))],
        playback_speed=0,
    )


CONTRACT_METADATA = frozenset(
    {
        "mjrig.model_path",
        "mjrig.model_sha256",
        "mjrig.scenario",
        "mjrig.mujoco_version",
        "mjrig.version",
        "mjrig.start_time",
    }
)
"""The file metadata every recording carries (the contract's): the model's path and SHA-256, the
scenario's text, the MuJoCo and mjrig versions, and when the run started."""


def point_mass_xml(
    *,
    dt: float,
    mass: float,
    integrator: str = "Euler",
    inertia: float = 0.01,
    joint: str = "x",
    axis: str = "1 0 0",
    gravity: str = "0 0 0",
) -> str:
    """A point mass of ``mass`` kg (``inertia`` kg·m² about each axis) at the world origin on a
    slide joint ``joint`` along ``axis``, under ``gravity`` (m/s²), steps of ``dt`` s with
    ``integrator``. The site ``tip`` rides on it and ``base`` stays at the origin, so a spring
    between them is exactly as long as the joint is far from 0 (m)."""
    return f"""
<mujoco>
  <option timestep="{dt}" gravity="{gravity}" integrator="{integrator}"/>
  <worldbody>
    <site name="base" pos="0 0 0"/>
    <body name="mass" pos="0 0 0">
      <joint name="{joint}" type="slide" axis="{axis}"/>
      <inertial pos="0 0 0" mass="{mass}" diaginertia="{inertia} {inertia} {inertia}"/>
      <site name="tip" pos="0 0 0"/>
    </body>
  </worldbody>
</mujoco>
"""


SLIDER_WORLD = (
    '  <worldbody>\n    <site name="anchor" pos="0 0 0"/>\n'
    + mjcf.slider(
        "block", joint="slide", pos="0.5 0 0", geom='type="box" size="0.02 0.02 0.02" mass="{mass}"', site="tip"
    )
    + "\n  </worldbody>\n"
)
"""The ``<worldbody>`` of a slider: a 4 cm box of ``{mass}`` kg (a format field) on a slide joint
``slide`` along x, starting 0.5 m from the fixed site ``anchor``; the site ``tip`` rides on it."""


SHOULDER_ARM_XML = """
<mujoco model="arm">
  <option timestep="0.002"/>
  <worldbody>
    <body name="upper" pos="0 0 0.5">
      <joint name="shoulder" type="hinge" axis="0 1 0" damping="0.5"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="1"/>
    </body>
  </worldbody>
{actuators}</mujoco>
"""
"""A 1 kg arm (a 0.3 m capsule) on a damped hinge ``shoulder`` (0.5 N·m·s/rad), 2 ms steps;
``{actuators}`` (a format field) is the MJCF of its ``<actuator>`` element, or empty."""
