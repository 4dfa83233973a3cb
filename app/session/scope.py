"""One scope per opened rig: what belongs to a rig lives in it and is dropped with it.

An opened rig is a document, as a drawing is in a CAD tool: what is worked out for it (a fit, its
modes, a frequency response) belongs to it. The kernel makes a ``RigScope`` each time another rig
opens (not on a reload: the rig is kept and its results are marked stale) and hands it out through
``RigContext.scope()``. A feature keeps its per-rig state in the scope (``scope.state(owner,
make)``) rather than on itself, so opening another rig drops it whole by construction, not by a
list of resets that a new field can be missing from. A background job carries the scope it was
started for; when it ends, ``scope.current`` tells whether its rig is still the one shown: if not,
its files stay written and it says one line, and nothing of it reaches the new rig's panels.

Threading: made and read on the simulation thread; a job's thread only holds a reference to it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

__all__ = ["RigScope"]

T = TypeVar("T")


class RigScope:
    """The per-rig state of every feature of one opened rig (``number``: the rigs opened before
    it, 1 for the first)."""

    def __init__(self, number: int, *, source: str = "") -> None:
        self.number = number
        self.source = source
        """The file the rig was opened from ("" for none), for the lines a late job says."""
        self.closed = False
        """True once another rig opened: what a job of this scope brings goes to files and a line."""
        self._states: dict[int, object] = {}

    @property
    def current(self) -> bool:
        """Whether this is still the rig shown."""
        return not self.closed

    def state(self, owner: object, make: Callable[[], T]) -> T:
        """``owner``'s state in this scope, made by ``make()`` the first time it is asked for."""
        key = id(owner)
        if key not in self._states:
            self._states[key] = make()
        return cast(T, self._states[key])  # made by this owner's make(): its T

    def close(self) -> None:
        """Another rig opened: this one's state is dropped (a job still running keeps its reference)."""
        self.closed = True
        self._states.clear()
