"""The status area's messages and the plots' time-axis marks of a session.

``log(level, text)`` adds a message ('info', 'warning' or 'error') for the status area and hands
it to ``on_message`` (the app echoes it to its terminal); ``note_event(t, text)`` also marks
simulated time ``t`` (s) on the plots' time axis (``note_proximities``: each proximity's
threshold crossings). The newest ``KEEP`` of each are kept.

Threading: ``log`` and ``note_event`` on any thread (a deque append; ``on_message`` must be as
safe); MuJoCo's warnings reach ``log`` on whichever thread runs MuJoCo.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable

from mjrig.runtime.forces.proximity import Proximity

__all__ = ["StatusLog", "KEEP"]

KEEP = 200
"""Messages, and time-axis marks, kept (the oldest go first)."""


class StatusLog:
    """The messages and time-axis marks published with the panel state."""

    def __init__(self) -> None:
        self.messages: collections.deque[tuple[str, str]] = collections.deque(maxlen=KEEP)
        """(level, text), newest last."""
        self.events: collections.deque[tuple[float, str]] = collections.deque(maxlen=KEEP)
        """(simulated time s, text), newest last."""
        self.on_message: Callable[[str, str], None] | None = None

    def log(self, level: str, text: str) -> None:
        """Add a message for the status area ('info', 'warning' or 'error')."""
        self.messages.append((level, text))
        if self.on_message is not None:
            self.on_message(level, text)

    def note_event(self, t: float, text: str, *, level: str = "warning") -> None:
        """Mark simulated time ``t`` (s) on the plots' time axis with ``text``, and log it."""
        self.events.append((t, text))
        self.log(level, text)

    def note_proximities(self, proximities: Iterable[Proximity]) -> None:
        """Mark each proximity's events since the last call (``Proximity.events``: a clearance
        going below its threshold is a warning, coming back above an info)."""
        for p in proximities:
            while p.events:
                t, text = p.events.popleft()
                self.note_event(t, text, level="warning" if "below" in text else "info")
