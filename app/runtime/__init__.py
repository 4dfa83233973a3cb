"""mjrig's GUI-free core: loads, springs, params, proximities, telemetry and stepping.

Imports only mujoco, numpy, pyarrow and the standard library, so it runs with no display. Its
rooms: ``forces`` (loads, springs, points, the engine), ``telemetry`` (signals, probes, units,
histories), ``files`` (the recorder's Parquet, outputs), ``compiled`` (the callbacks MuJoCo calls
without Python), ``analysis`` (requirements, metrics, linearisation, modes), ``drawing`` (arrows,
cameras, tracers, videos); the rig itself (``manager``, ``step_plan``) and what every room shares
(``errors``, ``values``) sit here. The public names below are imported on first use (PEP 562), so
importing one module of the runtime loads that module and what it imports, nothing more.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "Control": "mjrig.runtime.controls",
    "ConfigError": "mjrig.runtime.errors",
    "DivergenceError": "mjrig.runtime.errors",
    "LoadError": "mjrig.runtime.errors",
    "MjrigError": "mjrig.runtime.errors",
    "JointFriction": "mjrig.runtime.forces.joint_loads",
    "JointTorque": "mjrig.runtime.forces.joint_loads",
    "BodyReactionForce": "mjrig.runtime.forces.load_base",
    "Load": "mjrig.runtime.forces.load_base",
    "GeneralLoad": "mjrig.runtime.forces.loads",
    "PointToPointForce": "mjrig.runtime.forces.loads",
    "ScalarForce": "mjrig.runtime.forces.loads",
    "ScalarTorque": "mjrig.runtime.forces.loads",
    "VectorForce": "mjrig.runtime.forces.loads",
    "VectorTorque": "mjrig.runtime.forces.loads",
    "RuntimeManager": "mjrig.runtime.manager",
    "SyncHook": "mjrig.runtime.manager",
    "load_model_file": "mjrig.runtime.manager",
    "ModelBinding": "mjrig.runtime.model_fields",
    "AnySite": "mjrig.runtime.points",
    "Body": "mjrig.runtime.points",
    "BodyPoint": "mjrig.runtime.points",
    "Geom": "mjrig.runtime.points",
    "Site": "mjrig.runtime.points",
    "parse_point": "mjrig.runtime.points",
    "Proximity": "mjrig.runtime.forces.proximity",
    "Requirement": "mjrig.runtime.analysis.requirements",
    "SIGNAL_GROUPS": "mjrig.runtime.telemetry.signals",
    "SignalCategory": "mjrig.runtime.telemetry.signals",
    "SignalManager": "mjrig.runtime.telemetry.signals",
    "PhysicsState": "mjrig.runtime.telemetry.snapshots",
    "load_snapshot": "mjrig.runtime.telemetry.snapshots",
    "save_snapshot": "mjrig.runtime.telemetry.snapshots",
    "SpringLaw": "mjrig.runtime.forces.springs",
    "Tracer": "mjrig.runtime.drawing.tracers",
    "Chirp": "mjrig.runtime.values",
    "Constant": "mjrig.runtime.values",
    "NamedValue": "mjrig.runtime.values",
    "Ramp": "mjrig.runtime.values",
    "Sine": "mjrig.runtime.values",
    "Step": "mjrig.runtime.values",
    "Table": "mjrig.runtime.values",
    "CameraName": "mjrig.runtime.drawing.video",
    "VideoRecorder": "mjrig.runtime.drawing.video",
    "RGBA": "mjrig.runtime.drawing.visuals",
    "ArrowConfig": "mjrig.runtime.drawing.visuals",
    "Color": "mjrig.runtime.drawing.visuals",
    "LineConfig": "mjrig.runtime.drawing.visuals",
}
"""Each public name and the module it lives in."""

if TYPE_CHECKING:
    from mjrig.runtime.analysis.requirements import Requirement
    from mjrig.runtime.controls import Control
    from mjrig.runtime.drawing.tracers import Tracer
    from mjrig.runtime.drawing.video import CameraName, VideoRecorder
    from mjrig.runtime.drawing.visuals import RGBA, ArrowConfig, Color, LineConfig
    from mjrig.runtime.errors import ConfigError, DivergenceError, LoadError, MjrigError
    from mjrig.runtime.forces.joint_loads import JointFriction, JointTorque
    from mjrig.runtime.forces.load_base import BodyReactionForce, Load
    from mjrig.runtime.forces.loads import (
        GeneralLoad,
        PointToPointForce,
        ScalarForce,
        ScalarTorque,
        VectorForce,
        VectorTorque,
    )
    from mjrig.runtime.forces.proximity import Proximity
    from mjrig.runtime.forces.springs import SpringLaw
    from mjrig.runtime.manager import RuntimeManager, SyncHook, load_model_file
    from mjrig.runtime.model_fields import ModelBinding
    from mjrig.runtime.points import AnySite, Body, BodyPoint, Geom, Site, parse_point
    from mjrig.runtime.telemetry.signals import SIGNAL_GROUPS, SignalCategory, SignalManager
    from mjrig.runtime.telemetry.snapshots import PhysicsState, load_snapshot, save_snapshot
    from mjrig.runtime.values import Chirp, Constant, NamedValue, Ramp, Sine, Step, Table

__all__ = [
    "MjrigError",
    "ConfigError",
    "DivergenceError",
    "LoadError",
    "Load",
    "BodyReactionForce",
    "GeneralLoad",
    "VectorForce",
    "VectorTorque",
    "ScalarForce",
    "ScalarTorque",
    "PointToPointForce",
    "SpringLaw",
    "RuntimeManager",
    "SyncHook",
    "load_model_file",
    "AnySite",
    "Site",
    "Body",
    "BodyPoint",
    "Geom",
    "parse_point",
    "Proximity",
    "SignalManager",
    "SignalCategory",
    "SIGNAL_GROUPS",
    "NamedValue",
    "Constant",
    "Step",
    "Ramp",
    "Sine",
    "Table",
    "Chirp",
    "ArrowConfig",
    "LineConfig",
    "Color",
    "RGBA",
    "VideoRecorder",
    "CameraName",
    "JointTorque",
    "JointFriction",
    "Control",
    "ModelBinding",
    "Tracer",
    "Requirement",
    "PhysicsState",
    "save_snapshot",
    "load_snapshot",
]


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'mjrig.runtime' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
