"""Scenarios: TOML text <-> rig description, the registry of kinds, validation with its
one-line messages, and the one rig builder.

``parse`` reads and checks a scenario (``load_scenario``), ``kinds`` is the registry every
section and kind is declared in, ``fields`` reads one field as its kind says, ``toml_writer``
writes a document back in the layout a person expects, ``builder`` turns a scenario into a
running rig, ``targets``/``bundled`` resolve what ``mjrig run|check|open`` are given.
GUI-free.
"""

from mjrig.scenario.parse import Scenario, load_scenario, parse_scenario, scenario_from_doc

__all__ = ["Scenario", "load_scenario", "parse_scenario", "scenario_from_doc"]
