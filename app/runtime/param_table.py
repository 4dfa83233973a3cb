"""The rig's params as one table: every NamedValue the rig records (the scenario's params, each
load's and control's numbers, the params bound to model fields), their values in one array that
follows every edit (``Params/<name>:value`` columns read it).

Threading: values change from any thread (a slider); the array is written by the value's
subscription and read on the stepping thread (a float write is atomic enough for telemetry).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from mjrig.runtime.values import NamedValue

__all__ = ["ParamTable"]


class ParamTable:
    """The distinct params of ``values`` (first of each name wins) and ``array`` of their values,
    kept current by subscription until ``detach``."""

    def __init__(self, values: Iterable[NamedValue]) -> None:
        seen: dict[str, NamedValue] = {}
        for nv in values:
            seen.setdefault(nv.name, nv)
        self.params = list(seen.values())
        self.array = np.array([nv.value for nv in self.params], dtype=float)
        for nv in self.params:
            nv.subscribe(self._changed)

    def columns(self) -> list[tuple[str, int, str]]:
        """Each param's telemetry column: (name, index into ``array``, unit)."""
        return [(f"Params/{nv.name}:value", i, nv.unit) for i, nv in enumerate(self.params)]

    def detach(self) -> None:
        """Stop following the values (the table is being replaced)."""
        for nv in self.params:
            nv.unsubscribe(self._changed)

    def _changed(self, nv: NamedValue) -> None:
        for i, p in enumerate(self.params):
            if p is nv:
                self.array[i] = nv.value
