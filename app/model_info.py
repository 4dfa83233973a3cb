"""What the panel shows about a model: its named parts (the rig's own hidden ones left out)."""

from __future__ import annotations

from pathlib import Path

import mujoco

from mjrig import commands as C
from mjrig.runtime.drawing.camera import camera_choices
from mjrig.runtime.points import is_rig_name, model_names

__all__ = ["describe_model", "summary"]


def describe_model(m: mujoco.MjModel, *, path: Path | None) -> C.ModelInfo:
    """Names of bodies, joints, sites, geoms and sensors, the view choices, sizes and timestep (s)."""

    def names(obj: mujoco.mjtObj, n: int) -> tuple[str, ...]:
        return tuple(x for x in model_names(m, obj, n) if not is_rig_name(x))

    return C.ModelInfo(
        path=str(path or ""),
        bodies=names(mujoco.mjtObj.mjOBJ_BODY, m.nbody),
        joints=names(mujoco.mjtObj.mjOBJ_JOINT, m.njnt),
        sites=names(mujoco.mjtObj.mjOBJ_SITE, m.nsite),
        geoms=names(mujoco.mjtObj.mjOBJ_GEOM, m.ngeom),
        sensors=names(mujoco.mjtObj.mjOBJ_SENSOR, m.nsensor),
        cameras=tuple(camera_choices(m)),
        timestep=float(m.opt.timestep),
        nq=m.nq,
        nv=m.nv,
        nu=m.nu,
    )


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def summary(info: C.ModelInfo, *, sep: str = ", ") -> str:
    """A model's size, the same in ``mjrig check`` and the panel: its bodies (the world not
    counted), joints, sites, sensors, actuators, then ``sep`` and its timestep (the panel puts
    that on a line of its own, so a narrow panel never wraps inside a number)."""
    bodies = sum(1 for b in info.bodies if b != "world")
    return (
        f"{_count(bodies, 'body', 'bodies')}, {_count(len(info.joints), 'joint', 'joints')}, "
        f"{_count(len(info.sites), 'site', 'sites')}, {_count(len(info.sensors), 'sensor', 'sensors')}, "
        f"{_count(info.nu, 'actuator', 'actuators')}{sep}timestep {info.timestep:g} s"
    )
