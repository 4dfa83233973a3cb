"""Compile a user's model with the rig's hidden helpers: a site at each end of a point-to-point load.

The spring bank reads the ends' positions from MuJoCo (``site_xpos``) and works each spring's
length, rate and generalized force out itself (``spring_bank``, the compiled laws). Under the
implicit integrators, which integrate a tendon's damping implicitly (more stable for stiff
dampers), each point-to-point load also gets a spatial tendon between its sites, and MuJoCo
evaluates the springs it can as tendon spring-dampers. A tendon costs MuJoCo its length and
Jacobian every step, a tenth of a humanoid's step for ten of them; the other integrators treat
tendon damping explicitly anyway, so they get sites alone. The helpers are named with the
``__mjrig_`` prefix, sit in group 5 (hidden by default in every viewer) and carry no stiffness,
damping or limits, so they change nothing physical; telemetry skips them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mujoco

from mjrig.runtime.errors import ConfigError, exception_text
from mjrig.runtime.files.model_files import check_model_files
from mjrig.runtime.files.urdf import URDF_SUFFIX, urdf_text
from mjrig.runtime.forces.loads import Load
from mjrig.runtime.forces.spring_bank import Helper
from mjrig.runtime.mjwarnings import compiler_notes
from mjrig.runtime.points import RIG_PREFIX, BodyPoint, Geom, Point, Site, is_rig_name

__all__ = ["RigLayout", "CompiledRig", "load_spec", "compile_rig", "load_model_file"]

_HIDDEN_GROUP = 5


_IMPLICIT = (int(mujoco.mjtIntegrator.mjINT_IMPLICIT), int(mujoco.mjtIntegrator.mjINT_IMPLICITFAST))


@dataclass
class RigLayout:
    """Which helper carries which load in a rig-compiled model (see ``Helper``)."""

    helper_of: dict[str, Helper] = field(default_factory=dict)


@dataclass(frozen=True)
class CompiledRig:
    """A model ``compile_rig`` made, and each load's helper with the points (``points_key``) it
    was made for: a later rig on the same model reuses the helpers of the loads it still has."""

    model: mujoco.MjModel
    helpers: dict[str, tuple[Helper, tuple[str, ...]]]

    @classmethod
    def of(cls, model: mujoco.MjModel, layout: RigLayout, loads: list[Load]) -> CompiledRig:
        helper_of = layout.helper_of
        return cls(model, {ld.name: (helper_of[ld.name], ld.points_key()) for ld in loads if ld.name in helper_of})

    def helpers_of(self, model: mujoco.MjModel, loads: list[Load]) -> dict[str, Helper]:
        """The helper of each of ``loads`` that still joins the points it was made for, on
        ``model``; none when ``model`` is another one."""
        if model is not self.model:
            return {}
        return {
            ld.name: self.helpers[ld.name][0]
            for ld in loads
            if ld.name in self.helpers and self.helpers[ld.name][1] == ld.points_key()
        }


def load_spec(path: str | os.PathLike) -> mujoco.MjSpec:
    """Parse an MJCF file (or a URDF description: ``files.urdf``) into an MjSpec; ConfigError
    with MuJoCo's one-line reason if refused."""
    path = Path(path)
    check_model_files(path)
    urdf = urdf_text(path) if path.suffix.lower() == URDF_SUFFIX else None  # its own one-line errors
    try:
        with compiler_notes():
            if urdf is not None:
                return mujoco.MjSpec.from_string(urdf)
            return mujoco.MjSpec.from_file(str(path))
    except Exception as exc:  # MuJoCo raises ValueError with its parser message
        raise ConfigError(f"{path}: MuJoCo refused the model: {exception_text(exc)}") from None


def _site_for(spec: mujoco.MjSpec, point: Point, cache: dict[str, str]) -> str:
    """Name of a spec site at ``point``, adding a hidden one for body points."""
    if isinstance(point, Site):
        return point.name
    key = str(point)
    if key in cache:
        return cache[key]
    if isinstance(point, Geom):
        raise ConfigError(f"'{point}': a geom cannot carry a load")
    body = spec.body(point.name) if point.name != "world" else spec.worldbody
    if body is None:
        names = [b.name for b in spec.bodies if b.name]
        from mjrig.runtime.points import closest_names

        raise ConfigError(f"unknown body '{point.name}'{closest_names(point.name, names)}")
    offset = list(point.offset) if isinstance(point, BodyPoint) else [0.0, 0.0, 0.0]
    name = f"{RIG_PREFIX}site{len(cache)}"
    body.add_site(name=name, pos=offset, group=_HIDDEN_GROUP, size=[0.001, 0, 0], rgba=[0, 0, 0, 0])
    cache[key] = name
    return name


def compile_rig(
    spec: mujoco.MjSpec, loads: list[Load], *, skip_unknown: bool = False, tendons: bool | None = None
) -> tuple[mujoco.MjModel, RigLayout]:
    """Compile ``spec`` with hidden helpers for every point-to-point load (see the module).

    The spec is modified in place only in a copy; the caller's spec keeps no rig elements.
    ``skip_unknown``: a load naming a site or body the spec lacks gets no helper (instead of a
    ConfigError), so a caller that checks every name against the compiled model afterwards
    reports it at its own field with one compile. ``tendons``: whether the helpers include
    tendons (default: under the implicit integrators only).
    """
    spec = spec.copy()
    if tendons is None:
        tendons = int(spec.option.integrator) in _IMPLICIT
    cache: dict[str, str] = {}
    helpers: list[tuple[str, str, str, str]] = []  # load, tendon ("" without), site at, site to
    for load in loads:
        if not load.is_point_to_point:
            continue
        if skip_unknown and not all(_known(spec, p) for p in (load.action_site, load.reaction)):
            continue
        a = _site_for(spec, load.action_site, cache)
        b = _site_for(spec, load.reaction, cache)  # type: ignore[arg-type]
        if spec.site(a) is None:
            raise ConfigError(f"load '{load.name}': unknown site '{a}'{_closest_site(spec, a)}")
        if spec.site(b) is None:
            raise ConfigError(f"load '{load.name}': unknown site '{b}'{_closest_site(spec, b)}")
        tname = ""
        if tendons:
            tname = f"{RIG_PREFIX}tendon{len(helpers)}"
            tendon = spec.add_tendon(name=tname, group=_HIDDEN_GROUP, rgba=[0, 0, 0, 0])
            tendon.wrap_site(a)
            tendon.wrap_site(b)
        helpers.append((load.name, tname, a, b))
    # Six userdata words for the compiled callbacks' tables (see ``native_kernel``), named by a
    # numeric element (where they start, then the table pool's address and size).
    spec.add_numeric(name=f"{RIG_PREFIX}userdata", data=[float(spec.nuserdata), 0.0, 0.0])
    spec.nuserdata += 6
    try:
        with compiler_notes():
            model = spec.compile()
    except Exception as exc:
        raise ConfigError(f"MuJoCo refused the model: {exception_text(exc)}") from None

    def helper(tname: str, a: str, b: str) -> Helper:
        if tname:
            return mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_TENDON, tname)
        site = mujoco.mjtObj.mjOBJ_SITE
        return mujoco.mj_name2id(model, site, a), mujoco.mj_name2id(model, site, b)

    return model, RigLayout({ln: helper(tn, a, b) for ln, tn, a, b in helpers})


def _known(spec: mujoco.MjSpec, point: Any) -> bool:
    """Whether ``point`` names a site or body ``spec`` has (a geom carries no load)."""
    if isinstance(point, Site):
        return spec.site(point.name) is not None
    if isinstance(point, Geom):
        return False
    return point.name == "world" or spec.body(point.name) is not None


def _closest_site(spec: mujoco.MjSpec, name: str) -> str:
    from mjrig.runtime.points import closest_names

    return closest_names(name, [s.name for s in spec.sites if s.name and not is_rig_name(s.name)])


def load_model_file(path: str | os.PathLike, *, package_path: Sequence[Path] = ()) -> mujoco.MjModel:
    """Load an .xml, .urdf or .mjb model as is (ConfigError with MuJoCo's reason if refused);
    ``package_path``: folders a URDF's ``package://`` meshes are also looked for in (a recording's,
    ``urdf.recorded_package_paths``)."""
    path = Path(path)
    check_model_files(path)
    urdf = urdf_text(path, also=package_path) if path.suffix.lower() == URDF_SUFFIX else None
    try:
        if path.suffix.lower() == ".mjb":
            return mujoco.MjModel.from_binary_path(str(path))
        with compiler_notes():
            if urdf is not None:
                return mujoco.MjModel.from_xml_string(urdf)
            return mujoco.MjModel.from_xml_path(str(path))
    except Exception as exc:
        raise ConfigError(f"{path}: MuJoCo refused the model: {exception_text(exc)}") from None
