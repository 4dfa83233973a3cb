"""TOML text for a scenario document, written by tomlkit in the layout of docs/scenario.md.

tomlkit does the writing (quoting, escapes, floats such as ``inf``/``nan``, unicode such as
``"N·s/m"``); this module only chooses the layout a person expects in a scenario file:
top-level scalars first, then ``[tables]``, then ``[[arrays of tables]]``, and anything nested
deeper written inline (``k = { value = 800.0, unit = "N/m" }``,
``magnitude = { profile = "sine", ... }``) rather than as ``[params.k]`` sub-tables.
"""

from __future__ import annotations

from typing import Any

import tomlkit
from tomlkit.items import AoT, Array, InlineTable, Table

__all__ = ["dumps"]


def dumps(doc: dict[str, Any]) -> str:
    """TOML text for ``doc`` (a mapping as ``tomllib`` returns it); ``tomllib.loads`` of it equals ``doc``.

    Raises TypeError for a value TOML cannot hold (e.g. None or an object).
    """
    out = tomlkit.document()
    is_aot = {k: _is_table_array(v) for k, v in doc.items()}
    # TOML needs bare keys before the first [table]: write scalars, then tables, then arrays of tables
    for k, v in doc.items():
        if not isinstance(v, dict) and not is_aot[k]:
            out.add(k, _inline(v))
    for k, v in doc.items():
        if isinstance(v, dict):
            out.add(k, _table(v))
    for k, v in doc.items():
        if is_aot[k]:
            out.add(k, AoT([_table(item) for item in v]))
    return out.as_string()


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def _table(d: dict[str, Any]) -> Table:
    t = tomlkit.table()
    for k, v in d.items():
        t.add(k, _inline(v))
    return t


def _inline(v: Any) -> Any:
    """``v`` with every dict made an inline table and every list a one-line array."""
    if isinstance(v, dict):
        t: InlineTable = tomlkit.inline_table()
        for k, x in v.items():
            t.append(k, _inline(x))
        return t
    if isinstance(v, (list, tuple)):
        a: Array = tomlkit.array()
        a.extend(_inline(x) for x in v)
        return a
    if v is None or not isinstance(v, (str, int, float, bool)):
        raise TypeError(f"cannot write {type(v).__name__} to TOML")
    return v
