"""mjrig's GUI-free core: loads, springs, params, proximities, telemetry and stepping.

Imports only mujoco, numpy, pyarrow and the standard library, so it runs with no display.
"""

from mjrig.runtime.controls import Control
from mjrig.runtime.errors import ConfigError, DivergenceError, LoadError, MjrigError
from mjrig.runtime.joint_loads import JointFriction, JointTorque
from mjrig.runtime.load_base import BodyReactionForce, Load
from mjrig.runtime.loads import GeneralLoad, PointToPointForce, ScalarForce, ScalarTorque, VectorForce, VectorTorque
from mjrig.runtime.manager import RuntimeManager, SyncHook, load_model_file
from mjrig.runtime.model_fields import ModelBinding
from mjrig.runtime.points import AnySite, Body, BodyPoint, Geom, Site, parse_point
from mjrig.runtime.proximity import Proximity
from mjrig.runtime.requirements import Requirement
from mjrig.runtime.signals import SIGNAL_GROUPS, SignalCategory, SignalManager
from mjrig.runtime.snapshots import PhysicsState, load_snapshot, save_snapshot
from mjrig.runtime.springs import SpringLaw
from mjrig.runtime.tracers import Tracer
from mjrig.runtime.values import Chirp, Constant, NamedValue, Ramp, Sine, Step, Table
from mjrig.runtime.video import CameraName, VideoRecorder
from mjrig.runtime.visuals import RGBA, ArrowConfig, Color, LineConfig

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
