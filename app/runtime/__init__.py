"""mjrig's GUI-free core: loads, springs, params, proximities, telemetry and stepping.

Imports only mujoco, numpy, pyarrow and the standard library, so it runs with no display.
"""
from app.runtime.errors import ConfigError, DivergenceError, LoadError, MjrigError
from app.runtime.loads import (GeneralLoad, Load, PointToPointForce, ScalarForce, ScalarTorque, SpringLaw,
                               VectorForce, VectorTorque)
from app.runtime.manager import RuntimeManager, load_model_file
from app.runtime.points import AnySite, Body, BodyPoint, Geom, Site, parse_point
from app.runtime.proximity import Proximity
from app.runtime.signals import SIGNAL_GROUPS, SignalCategory, SignalManager
from app.runtime.values import Constant, NamedValue, Ramp, Sine, Step, Table
from app.runtime.video import VideoRecorder
from app.runtime.visuals import ArrowConfig, Color, LineConfig

__all__ = [
    "MjrigError", "ConfigError", "DivergenceError", "LoadError",
    "Load", "GeneralLoad", "VectorForce", "VectorTorque", "ScalarForce", "ScalarTorque",
    "PointToPointForce", "SpringLaw", "RuntimeManager", "load_model_file",
    "AnySite", "Site", "Body", "BodyPoint", "Geom", "parse_point", "Proximity",
    "SignalManager", "SignalCategory", "SIGNAL_GROUPS",
    "NamedValue", "Constant", "Step", "Ramp", "Sine", "Table",
    "ArrowConfig", "LineConfig", "Color", "VideoRecorder",
]
