"""A small TOML writer for scenario documents (tables, arrays of tables, inline tables, scalars)."""
from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["dumps"]

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else _string(k)


_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _string(s: str) -> str:
    out = s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    # TOML basic strings may not hold the other control characters raw: write them as \uXXXX
    out = _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04X}", out)
    return f'"{out}"'


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def dumps(doc: dict) -> str:
    """TOML text for ``doc``: top-level scalars first, then [tables], then [[arrays of tables]].

    Nested tables inside a table are written inline (``k = { value = 1.0 }``), as scenarios do.
    """
    lines: list[str] = []
    for k, v in doc.items():
        if not isinstance(v, dict) and not _is_table_array(v):
            lines.append(f"{_key(k)} = {_value(v)}")
    for k, v in doc.items():
        if isinstance(v, dict):
            lines += ["", f"[{_key(k)}]"] + [f"{_key(kk)} = {_value(vv)}" for kk, vv in v.items()]
    for k, v in doc.items():
        if _is_table_array(v):
            for item in v:
                lines += ["", f"[[{_key(k)}]]"] + [f"{_key(kk)} = {_value(vv)}" for kk, vv in item.items()]
    return "\n".join(lines).lstrip("\n") + "\n"
