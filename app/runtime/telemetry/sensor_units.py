"""The SI unit of a MuJoCo sensor's values, from its type and, where the type alone does not say
(a joint's position is an angle on a hinge and a length on a slide), from the object it reads.
"" for what has no unit (quaternions, axes, normals, counts) or none mjrig can tell (user and
plugin sensors, a magnetometer in the model's own field units)."""

from __future__ import annotations

import mujoco

__all__ = ["sensor_unit", "angular_transmission"]

S = mujoco.mjtSensor

_BY_TYPE: dict[int, str] = {
    S.mjSENS_ACCELEROMETER: "m/s^2",
    S.mjSENS_VELOCIMETER: "m/s",
    S.mjSENS_GYRO: "rad/s",
    S.mjSENS_FORCE: "N",
    S.mjSENS_TORQUE: "N*m",
    S.mjSENS_TOUCH: "N",
    S.mjSENS_RANGEFINDER: "m",
    S.mjSENS_FRAMEPOS: "m",
    S.mjSENS_FRAMELINVEL: "m/s",
    S.mjSENS_FRAMEANGVEL: "rad/s",
    S.mjSENS_FRAMELINACC: "m/s^2",
    S.mjSENS_FRAMEANGACC: "rad/s^2",
    S.mjSENS_SUBTREECOM: "m",
    S.mjSENS_SUBTREELINVEL: "m/s",
    S.mjSENS_SUBTREEANGMOM: "kg*m^2/s",
    S.mjSENS_BALLANGVEL: "rad/s",
    S.mjSENS_CLOCK: "s",
    S.mjSENS_E_KINETIC: "J",
    S.mjSENS_E_POTENTIAL: "J",
    S.mjSENS_GEOMDIST: "m",
    S.mjSENS_GEOMFROMTO: "m",
}
"""Sensor types whose unit does not depend on what they read."""

_JOINT = {
    S.mjSENS_JOINTPOS: ("rad", "m"),
    S.mjSENS_JOINTVEL: ("rad/s", "m/s"),
    S.mjSENS_JOINTACTFRC: ("N*m", "N"),
    S.mjSENS_JOINTLIMITPOS: ("rad", "m"),
    S.mjSENS_JOINTLIMITVEL: ("rad/s", "m/s"),
    S.mjSENS_JOINTLIMITFRC: ("N*m", "N"),
}
"""Sensors of a joint: (on a hinge or ball, on a slide)."""

_TENDON = {
    S.mjSENS_TENDONPOS: ("rad", "m"),
    S.mjSENS_TENDONVEL: ("rad/s", "m/s"),
    S.mjSENS_TENDONACTFRC: ("N*m", "N"),
    S.mjSENS_TENDONLIMITPOS: ("rad", "m"),
    S.mjSENS_TENDONLIMITVEL: ("rad/s", "m/s"),
    S.mjSENS_TENDONLIMITFRC: ("N*m", "N"),
}
"""Sensors of a tendon: (a fixed tendon over hinges only, any other)."""

_ACTUATOR = {
    S.mjSENS_ACTUATORPOS: ("rad", "m"),
    S.mjSENS_ACTUATORVEL: ("rad/s", "m/s"),
    S.mjSENS_ACTUATORFRC: ("N*m", "N"),
}
"""Sensors of an actuator, in its transmission's space: (angular, linear); a gear scales them
(the length is gear times the joint's, the force the joint gets is gear times this one)."""


def _hinge_tendon(model: mujoco.MjModel, t: int) -> bool:
    """A fixed tendon made of hinge joints only: its length is an angle."""
    adr, num = int(model.tendon_adr[t]), int(model.tendon_num[t])
    return num > 0 and all(
        int(model.wrap_type[w]) == mujoco.mjtWrap.mjWRAP_JOINT
        and int(model.jnt_type[model.wrap_objid[w]]) == mujoco.mjtJoint.mjJNT_HINGE
        for w in range(adr, adr + num)
    )


def angular_transmission(model: mujoco.MjModel, a: int) -> bool:
    """True when actuator ``a`` drives an angle: a hinge or ball joint, or a fixed tendon over
    hinges only; its force is then a torque (N*m) and its length an angle (rad)."""
    trn, target = int(model.actuator_trntype[a]), int(model.actuator_trnid[a, 0])
    if trn in (mujoco.mjtTrn.mjTRN_JOINT, mujoco.mjtTrn.mjTRN_JOINTINPARENT):
        return int(model.jnt_type[target]) in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_BALL)
    return trn == mujoco.mjtTrn.mjTRN_TENDON and _hinge_tendon(model, target)


def sensor_unit(model: mujoco.MjModel, s: int) -> str:
    """The SI unit of sensor ``s``'s values ("" where it has none)."""
    kind, obj = int(model.sensor_type[s]), int(model.sensor_objid[s])
    if kind in _BY_TYPE:
        return _BY_TYPE[kind]
    if kind in _JOINT:
        angular = int(model.jnt_type[obj]) in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_BALL)
        return _JOINT[kind][0 if angular else 1]
    if kind in _TENDON:
        return _TENDON[kind][0 if _hinge_tendon(model, obj) else 1]
    if kind in _ACTUATOR:
        return _ACTUATOR[kind][0 if angular_transmission(model, obj) else 1]
    return ""
