"""Scenarios: TOML text <-> rig description, the registry of kinds, validation with its
one-line messages, and the one rig builder.

``parse`` reads and checks a scenario (``load_scenario``), ``kinds`` is the registry every
section and kind is declared in, ``fields`` reads one field as its kind says, ``toml_writer``
writes a document back in the layout a person expects, ``builder`` turns a scenario into a
running rig (``build_rig``, ``runtime_of``), ``targets``/``bundled`` resolve what ``mjrig
run|check|open`` are given; ``studies`` holds the sections that ask for many runs (``[sweep]``,
``[optimize]``, ``[fit]``) and ``best``, a scenario written again with a study's values. GUI-free. The public names below are imported on first use (PEP 562),
so importing one module of the package (a widget's form reads ``kinds``) loads that module and
what it imports, not the parser.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "Scenario": "mjrig.scenario.parse",
    "load_scenario": "mjrig.scenario.parse",
    "parse_scenario": "mjrig.scenario.parse",
    "scenario_from_doc": "mjrig.scenario.parse",
}
"""Each public name and the module it lives in."""

if TYPE_CHECKING:
    from mjrig.scenario.parse import Scenario, load_scenario, parse_scenario, scenario_from_doc

__all__ = ["Scenario", "load_scenario", "parse_scenario", "scenario_from_doc"]


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'mjrig.scenario' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
