"""Scenario text for tests: the entries many tests write alike, built from their fields."""

from __future__ import annotations

__all__ = ["spring"]


def spring(name: str = "spring", *, at: str = "tip", to: str = "anchor", **fields: str | float) -> str:
    """A ``[[loads]]`` entry: an ideal spring ``name`` from site ``at`` to site ``to``, with
    ``fields`` (``stiffness`` N/m, ``damping`` N·s/m, ``rest_length`` m; a string is a param's
    name), ending in a newline."""
    lines = ["[[loads]]", f'name = "{name}"', 'kind = "ideal_spring"', f'at = "{at}"', f'to = "{to}"']
    lines += [f'{key} = "{value}"' if isinstance(value, str) else f"{key} = {value!r}" for key, value in fields.items()]
    return "\n".join(lines) + "\n"
