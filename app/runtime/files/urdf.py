"""A URDF robot description as a model: what MuJoCo compiles, with its meshes found.

MuJoCo reads URDF itself, but a description as ROS packages write it names its meshes
``package://NAME/meshes/link.stl`` (or relative to its own file), and MuJoCo from 3.7 no longer
strips those paths to their file names: its meshes are not found. Here each ``<mesh filename=...>``
is resolved to a file before MuJoCo sees the description:

- ``package://NAME/REST``: NAME's folder in each of the package paths in turn -- those given with
  ``--package-path`` (``MJRIG_PACKAGE_PATH``), then ``ROS_PACKAGE_PATH`` (each entry is NAME's
  folder itself or holds it), then the description's own folder and its parents (a package whose
  ``urdf/`` holds the file: NAME is the folder above it);
- ``file://PATH`` and plain paths: as written, relative to the description's folder.

The description is then given to MuJoCo with every mesh at its absolute path and
``<compiler strippath="false" discardvisual="false"/>`` (the robot drawn as it looks; MuJoCo
otherwise drops URDF visuals). A mesh that is not found is one line naming it and where it was
looked for. GUI-free.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path

from mjrig.runtime.errors import ConfigError

__all__ = [
    "URDF_SUFFIX",
    "RECORDED_KEY",
    "urdf_text",
    "urdf_meshes",
    "package_paths",
    "package_path_metadata",
    "recorded_package_paths",
]

URDF_SUFFIX = ".urdf"
PACKAGE_PATH_ENV = "MJRIG_PACKAGE_PATH"
"""The folders ``--package-path`` gives (``os.pathsep``-joined), searched before ROS_PACKAGE_PATH."""
RECORDED_KEY = "mjrig.package_path"
"""A recording's file metadata: the package folders its URDF's meshes were looked for in when it was
recorded (``os.pathsep``-joined, absolute), so that a replay or an export finds them without them
being given again."""


def package_paths(*, also: Sequence[Path] = ()) -> list[Path]:
    """The folders ``package://`` names are looked for in, in order: ``--package-path``'s, then
    ``ROS_PACKAGE_PATH``'s, then ``also`` (a recording's, ``recorded_package_paths``)."""
    out: list[Path] = []
    for var in (PACKAGE_PATH_ENV, "ROS_PACKAGE_PATH"):
        out += [Path(p).expanduser() for p in os.environ.get(var, "").split(os.pathsep) if p]
    return list(dict.fromkeys([*out, *also]))


def package_path_metadata(model_path: Path) -> dict[str, str]:
    """``{RECORDED_KEY: folders}`` for a recording of the URDF at ``model_path`` made now (the
    package paths in force, absolute), or ``{}`` (not a URDF, or no package path given)."""
    if model_path.suffix.lower() != URDF_SUFFIX or not package_paths():
        return {}
    return {RECORDED_KEY: os.pathsep.join(str(p.resolve()) for p in package_paths())}


def recorded_package_paths(metadata: Mapping[str, str]) -> list[Path]:
    """The package folders a recording with file ``metadata`` was made with (``RECORDED_KEY``)."""
    return [Path(p) for p in metadata.get(RECORDED_KEY, "").split(os.pathsep) if p]


def _package_candidates(name: str, rest: str, description: Path, also: Sequence[Path]) -> list[Path]:
    """Where ``package://name/rest`` may be, in the order looked at."""
    out = []
    for folder in package_paths(also=also):
        out += [folder / rest, folder / name / rest] if folder.name == name else [folder / name / rest]
    for folder in [description.parent, *description.parent.parents][:4]:
        out += [folder / rest] if folder.name == name else [folder / name / rest]
    return list(dict.fromkeys(out))


def _resolve(filename: str, description: Path, also: Sequence[Path] = ()) -> tuple[Path | None, list[Path]]:
    """(the file ``filename`` names, or None; the paths looked at); ``also``: more package folders."""
    if filename.startswith("package://"):
        name, _, rest = filename[len("package://") :].partition("/")
        looked = _package_candidates(name, rest, description, also)
    else:
        plain = filename[len("file://") :] if filename.startswith("file://") else filename
        looked = [Path(plain) if Path(plain).is_absolute() else description.parent / plain]
    return next((p.resolve() for p in looked if p.is_file()), None), looked


def urdf_meshes(path: str | os.PathLike, *, also: Sequence[Path] = ()) -> list[Path]:
    """The mesh files the description at ``path`` names that exist (for inputs and hot reload);
    ``also``: package folders looked in after the usual ones."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return []
    found = (_resolve(m.get("filename", ""), path, also)[0] for m in root.iter("mesh") if m.get("filename"))
    return list(dict.fromkeys(p for p in found if p is not None))


def urdf_text(path: str | os.PathLike, *, also: Sequence[Path] = ()) -> str:
    """The description at ``path`` as MuJoCo is to read it: meshes at absolute paths, paths kept
    as given, visuals kept; ``also``: package folders looked in after the usual ones (a
    recording's). ConfigError (one line) for a file that is not URDF or a mesh not found."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise ConfigError(f"{path}: not readable URDF: {exc}") from None
    if root.tag != "robot":
        raise ConfigError(f"{path}: not a URDF robot description (its root element is <{root.tag}>, not <robot>)")
    for mesh in root.iter("mesh"):
        filename = mesh.get("filename", "")
        found, looked = _resolve(filename, path, also)
        if found is None:
            shown = ", ".join(str(p.parent) for p in looked[:4]) + (" ..." if len(looked) > 4 else "")
            hint = " (give --package-path or ROS_PACKAGE_PATH)" if filename.startswith("package://") else ""
            raise ConfigError(f"{path}: mesh '{filename}' not found (looked in {shown}){hint}")
        mesh.set("filename", str(found))
    extra = root.find("mujoco")
    if extra is None:
        extra = ET.SubElement(root, "mujoco")
    compiler = extra.find("compiler")
    if compiler is None:
        compiler = ET.SubElement(extra, "compiler")
    compiler.set("strippath", "false")
    compiler.attrib.setdefault("discardvisual", "false")
    return ET.tostring(root, encoding="unicode")
