"""What a feature of the session sees: the current rig and the session's services.

The session kernel (``mjrig.session.kernel``) owns the rig, the run state and the document; it
hands each feature (``mjrig.session.feature``: what a feature owes) one ``RigContext`` and no
sibling. Features talk to each other only through the context's hooks (``branched``,
``finishing``, ``finished``), never directly.

Threading: simulation thread only, like the kernel's stepping.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mujoco

from mjrig.runtime.errors import MjrigError
from mjrig.runtime.manager import RuntimeManager
from mjrig.runtime.telemetry.plot_history import HistoryFetch
from mjrig.scenario.builder import Rig
from mjrig.session.document import RigDocument
from mjrig.session.run_control import RunControl
from mjrig.session.scope import RigScope

__all__ = ["RigContext"]


@dataclass
class RigContext:
    """The current rig and the session's services, as a feature may use them.

    ``rig()`` is the rig now (None before a model is open); ``rebuild(doc)`` makes ``doc`` the rig
    on the current model and state (ConfigError: refused, nothing changed); ``load(doc, base=,
    source=, reload=)`` builds ``doc`` on a freshly compiled model; ``log(level, text)`` and
    ``note_event(t, text, level=)`` reach the status area and the plots' time axis;
    ``push_rows(columns, block)`` feeds the live plots; ``scope()`` is the opened rig's
    ``RigScope``, where a feature keeps what belongs to that rig (and a job the rig it ran for); ``camera()`` is the 3D view's camera
    (videos follow it); ``source()`` is the step source now and ``use_source(src)`` swaps one in
    (a replay; any load swaps the live one back); ``plotted()`` names the signals the live plots
    show; ``plot_history(fetch)`` names where the plots get the history of a signal ticked that
    they did not get rows of (a replay: its recording; ``PlotFeed.history_from``), until another
    rig opens; ``branched`` hooks run when the timeline
    branches at a simulated time (s) and return the file they went on recording into, or None.
    ``finishing`` hooks run when a recording stops and its file starts being finished off the
    simulation thread, ``finished`` hooks when that is over: ``(path, complete)``, ``complete``
    False when the file could not be finished.
    """

    rig: Callable[[], Rig | None]
    document: RigDocument
    run: RunControl
    log: Callable[[str, str], None]
    note_event: Callable[..., None]
    rebuild: Callable[[dict], None]
    load: Callable[..., None]
    push_rows: Callable[[list[str], Any], None]
    camera: Callable[[], mujoco.MjvCamera | None]
    source: Callable[[], Any]
    use_source: Callable[[Any], None]
    plotted: Callable[[], tuple[str, ...]]
    plot_history: Callable[[HistoryFetch], None]
    scope: Callable[[], RigScope]
    branched: list[Callable[[float], Path | None]] = field(default_factory=list)
    finishing: list[Callable[[Path], None]] = field(default_factory=list)
    finished: list[Callable[[Path, bool], None]] = field(default_factory=list)

    def _current(self) -> Rig:
        rig = self.rig()
        if rig is None:
            raise MjrigError("no model is open")
        return rig

    @property
    def model(self) -> mujoco.MjModel:
        return self._current().model

    @property
    def data(self) -> mujoco.MjData:
        return self._current().data

    @property
    def runtime(self) -> RuntimeManager:
        return self._current().runtime

    @property
    def runtime_or_none(self) -> RuntimeManager | None:
        rig = self.rig()
        return rig.runtime if rig is not None else None

    def warn(self, text: str) -> None:
        """A one-line warning (a control clamped to its ctrlrange)."""
        self.log("warning", text)
