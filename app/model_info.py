"""What the panel shows about a model: its named parts (the rig's own hidden ones left out)."""
from __future__ import annotations

from pathlib import Path

import mujoco

from mjrig import commands as C
from mjrig.camera import camera_choices
from mjrig.runtime.points import model_names
from mjrig.runtime.rigmodel import is_rig_name

__all__ = ["describe_model"]


def describe_model(m: mujoco.MjModel, *, path: Path | None) -> C.ModelInfo:
    """Names of bodies, joints, sites, geoms and sensors, the view choices, sizes and timestep (s)."""
    def names(obj: mujoco.mjtObj, n: int) -> tuple[str, ...]:
        return tuple(x for x in model_names(m, obj, n) if not is_rig_name(x))

    return C.ModelInfo(
        path=str(path or ""), bodies=names(mujoco.mjtObj.mjOBJ_BODY, m.nbody),
        joints=names(mujoco.mjtObj.mjOBJ_JOINT, m.njnt), sites=names(mujoco.mjtObj.mjOBJ_SITE, m.nsite),
        geoms=names(mujoco.mjtObj.mjOBJ_GEOM, m.ngeom), sensors=names(mujoco.mjtObj.mjOBJ_SENSOR, m.nsensor),
        cameras=tuple(camera_choices(m)), timestep=float(m.opt.timestep), nq=m.nq, nv=m.nv, nu=m.nu)
