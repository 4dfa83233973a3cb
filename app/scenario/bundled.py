"""The rigs bundled in ``models/``: each an MJCF plus a scenario whose first line describes it."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

__all__ = ["BundledModel", "bundled_models", "default_model", "MODELS_DIR"]

MODELS_DIR = Path(str(resources.files("mjrig.models"))).resolve()
DEFAULT = "shaker"


@dataclass(frozen=True)
class BundledModel:
    """One bundled rig: ``scenario`` (.toml) drives ``model`` (.xml)."""

    name: str
    scenario: Path
    description: str


def bundled_models() -> list[BundledModel]:
    """Every bundled rig, the default first, then by name."""
    out = []
    for toml in sorted(MODELS_DIR.glob("*.toml")):
        first = toml.read_text(encoding="utf-8").splitlines()[:1]
        desc = first[0].lstrip("#").strip() if first and first[0].startswith("#") else ""
        out.append(BundledModel(toml.stem, toml, desc))
    out.sort(key=lambda m: (m.name != DEFAULT, m.name))
    return out


def default_model() -> BundledModel:
    """The rig the app opens when given no path."""
    return next(m for m in bundled_models() if m.name == DEFAULT)
