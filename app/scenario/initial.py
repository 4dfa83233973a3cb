"""A scenario's ``[initial]``: joint positions and velocities by joint name, applied after the
keyframe (``initial_key``) or snapshot (``initial_state``), so a run starts -- and the app's
Reset returns -- exactly there.

```toml
[initial]
qpos = { hinge = 0.3, rail = 0.05 }   # rad or m; ball: [w, x, y, z]; free: [x, y, z, qw, qx, qy, qz]
qvel = { hinge = 2.0 }                # rad/s or m/s; ball: 3 values; free: 6 values
```

``read_initial`` checks the table's shape and numbers (every value finite); ``InitialState.check``
checks joint names and value counts against a compiled model (ConfigError at FILE:LINE with the
closest joint names); ``InitialState.apply`` writes the values into MjData. GUI-free; any thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.points import find_id
from mjrig.scenario.fields import FieldReader

__all__ = ["InitialState", "read_initial", "SIZES"]

SIZES = {
    int(mujoco.mjtJoint.mjJNT_FREE): (7, 6),
    int(mujoco.mjtJoint.mjJNT_BALL): (4, 3),
    int(mujoco.mjtJoint.mjJNT_SLIDE): (1, 1),
    int(mujoco.mjtJoint.mjJNT_HINGE): (1, 1),
}
"""Values of a joint of each type: (in qpos, in qvel)."""
_KIND = {
    int(mujoco.mjtJoint.mjJNT_FREE): "free",
    int(mujoco.mjtJoint.mjJNT_BALL): "ball",
    int(mujoco.mjtJoint.mjJNT_SLIDE): "slide",
    int(mujoco.mjtJoint.mjJNT_HINGE): "hinge",
}


@dataclass(frozen=True)
class InitialState:
    """Values by joint name: ``qpos`` (rad or m; a ball's quaternion w x y z; a free joint's
    x y z and quaternion) and ``qvel`` (rad/s or m/s; a ball's 3, a free joint's 6)."""

    qpos: dict[str, tuple[float, ...]] = field(default_factory=dict)
    qvel: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.qpos or self.qvel)

    def check(self, model: mujoco.MjModel, where: Callable[..., str], *, at: tuple = ("initial",)) -> None:
        """ConfigError (one line at ``where(*at, "qpos", NAME)``) for a joint the model lacks
        (with the closest names) or the wrong number of values for its type."""
        for which, values, slot in (("qpos", self.qpos, 0), ("qvel", self.qvel, 1)):
            for name, vals in values.items():
                try:
                    j = find_id(model, mujoco.mjtObj.mjOBJ_JOINT, name, kind="joint", count=model.njnt)
                except ConfigError as exc:
                    raise ConfigError(f"{where(*at, which, name)}: {exc}") from None
                jt = int(model.jnt_type[j])
                want = SIZES[jt][slot]
                if len(vals) != want:
                    raise ConfigError(
                        f"{where(*at, which, name)}: a {_KIND[jt]} joint takes {want} "
                        f"{'value' if want == 1 else 'values'} in {which}, got {len(vals)}"
                    )

    def apply(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """Write the values into ``data`` (a ball's or free joint's quaternion normalised) and
        bring the derived quantities up to date (``mj_forward``)."""
        for values, adr_of, slot in ((self.qpos, model.jnt_qposadr, 0), (self.qvel, model.jnt_dofadr, 1)):
            target = data.qpos if slot == 0 else data.qvel
            for name, vals in values.items():
                j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
                adr = int(adr_of[j])
                target[adr : adr + len(vals)] = vals
                jt = int(model.jnt_type[j])
                if slot == 0 and jt in (int(mujoco.mjtJoint.mjJNT_BALL), int(mujoco.mjtJoint.mjJNT_FREE)):
                    q0 = adr + (3 if jt == int(mujoco.mjtJoint.mjJNT_FREE) else 0)
                    quat = target[q0 : q0 + 4]
                    quat /= np.linalg.norm(quat) or 1.0
        mujoco.mj_forward(model, data)


def read_initial(reader: FieldReader, table: Any, *, at: tuple = ("initial",)) -> InitialState:
    """``[initial]`` (or the table at ``at``, e.g. a measured entry's) read with ``reader`` (a
    ``FieldReader``): tables of joint name -> a number or a list of numbers, every one finite;
    ConfigError at the field otherwise."""
    table = reader.keys(table, {"qpos", "qvel"}, at)
    out: dict[str, dict[str, tuple[float, ...]]] = {"qpos": {}, "qvel": {}}
    for which in ("qpos", "qvel"):
        if which not in table:
            continue
        joints = reader.keys(table[which], set(table[which]) if isinstance(table[which], dict) else set(), (*at, which))
        for name, value in joints.items():
            path = (*at, which, name)
            if isinstance(value, list):
                if not value:
                    raise reader.fail(path, "must be a number or a list of numbers, got an empty list")
                out[which][name] = tuple(reader.number(v, path) for v in value)
            else:
                out[which][name] = (reader.number(value, path),)
    return InitialState(out["qpos"], out["qvel"])
