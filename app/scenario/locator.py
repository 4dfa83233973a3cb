"""Where a field of a scenario is in its TOML text: the file and line an error message names.

``tomllib`` keeps no positions, so the text is scanned once for table headers, arrays of tables
and keys; a field is found at the deepest known prefix of its path (``loads``, 2, ``at``).
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["ScenarioLocator", "dotted"]


def dotted(path: tuple) -> str:
    """A field path as a person writes it: ``loads[2].at``."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


class ScenarioLocator:
    """Finds the line of a field in the TOML text, for error messages."""

    _header = re.compile(r"^\s*\[\[\s*([A-Za-z0-9_.\"-]+)\s*\]\]")
    _table = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\"-]+)\s*\]")
    _key = re.compile(r"^\s*\"?([A-Za-z0-9_-]+)\"?\s*=")

    def __init__(self, text: str, source: Path | None) -> None:
        self.source = source
        self.lines: dict[tuple, int] = {}
        table: tuple = ()
        counters: dict[str, int] = {}
        for n, line in enumerate(text.splitlines(), start=1):
            m = self._header.match(line)
            if m:
                name = m.group(1)
                counters[name] = counters.get(name, -1) + 1
                table = (name, counters[name])
                self.lines.setdefault(table, n)
                continue
            m = self._table.match(line)
            if m:
                table = tuple(m.group(1).split("."))
                self.lines.setdefault(table, n)
                continue
            m = self._key.match(line)
            if m:
                self.lines.setdefault((*table, m.group(1)), n)

    def line(self, *path: str | int) -> int | None:
        """Line of the deepest known prefix of ``path``."""
        for k in range(len(path), 0, -1):
            n = self.lines.get(tuple(path[:k]))
            if n is not None:
                return n
        return None

    def where(self, *path: str | int) -> str:
        if self.source is None and not self.lines:
            return dotted(path) if path else "scenario"
        name = str(self.source) if self.source else "<scenario>"
        n = self.line(*path)
        loc = f"{name}:{n}" if n else name
        return f"{loc}: {dotted(path)}" if path else loc
