"""The manual's table of a section's kinds (docs/scenario.md), generated from the registry
(``python -m mjrig.scenario.kinds_table`` prints the loads'; a test compares it with the manual)."""

from __future__ import annotations

import sys

from mjrig.scenario.kinds import REGISTRY, Field, Registry

__all__ = ["kinds_markdown"]


def _field_text(f: Field) -> str:
    text = f"`{f.name}`"
    if f.type == "vector":
        text += " [x, y, z]"
    elif f.type == "site":
        text += " (a site)"
    elif f.names == "joint":
        text += " (a hinge or slide joint)"
    if f.unit:
        text += f" ({f.unit})"
    if f.default is not None:
        d = f.default
        text += " = " + (f"[{', '.join(f'{x:g}' for x in d)}]" if isinstance(d, tuple) else f"{d:g}")
    return text


def kinds_markdown(section: str = "loads", *, registry: Registry = REGISTRY) -> str:
    """A section's kinds as a Markdown table (docs/scenario.md's copy is checked against this)."""
    sec = registry.section(section)
    lines = ["| kind | fields | does |", "| --- | --- | --- |"]
    for kind in sec.kinds:
        fields = [f for f in kind.fields if f.name != "name"]
        must = ", ".join(_field_text(f) for f in fields if f.required)
        rest = ", ".join(_field_text(f) for f in fields if not f.required)
        lines.append(f"| `{kind.name}` | {must}{'; optional ' + rest if rest else ''} | {kind.doc} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(kinds_markdown() + "\n")
