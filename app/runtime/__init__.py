"""mjrig's GUI-free core: loads, springs, params, proximities, telemetry and stepping.

Imports only mujoco, numpy, pyarrow and the standard library, so it runs with no display.
"""
from mjrig.runtime.errors import ConfigError, DivergenceError, LoadError, MjrigError
from mjrig.runtime.loads import (GeneralLoad, Load, PointToPointForce, ScalarForce, ScalarTorque, SpringLaw,
                               VectorForce, VectorTorque)
from mjrig.runtime.manager import RuntimeManager, load_model_file
from mjrig.runtime.points import AnySite, Body, BodyPoint, Geom, Site, parse_point
from mjrig.runtime.proximity import Proximity
from mjrig.runtime.signals import SIGNAL_GROUPS, SignalCategory, SignalManager
from mjrig.runtime.values import Constant, NamedValue, Ramp, Sine, Step, Table
from mjrig.runtime.video import VideoRecorder
from mjrig.runtime.visuals import ArrowConfig, Color, LineConfig

__all__ = [
    "MjrigError", "ConfigError", "DivergenceError", "LoadError",
    "Load", "GeneralLoad", "VectorForce", "VectorTorque", "ScalarForce", "ScalarTorque",
    "PointToPointForce", "SpringLaw", "RuntimeManager", "load_model_file",
    "AnySite", "Site", "Body", "BodyPoint", "Geom", "parse_point", "Proximity",
    "SignalManager", "SignalCategory", "SIGNAL_GROUPS",
    "NamedValue", "Constant", "Step", "Ramp", "Sine", "Table",
    "ArrowConfig", "LineConfig", "Color", "VideoRecorder",
]
