"""What a feature of the session sees and owes: the feature contract.

The session kernel (``mjrig.session.kernel``) owns the rig, the run state and the document; it
hands each feature (rig entries, outputs, tools, timeline, replay, reports, results, bench data,
modes) one ``RigContext`` and no sibling, and keeps them in one tuple that it loops over. A
feature is a ``Feature``:

- ``handlers() -> {command type: handler}``: the commands it carries out (a command type two
  features claim is refused when the session starts);
- ``rig_opened()``: another rig was opened (not a reload): forget what belonged to the old one
  (state kept in the rig's ``RigScope``, ``ctx.scope()``, needs no forgetting: it goes with it);
- ``model_changed()``: the rig's model was read again (a reload, the rig kept): what it worked out
  on the old model is stale (shown as such, not as current);
- ``publish() -> C.PanelPart | None``: its part of the panel state, a frozen dataclass the
  ``PanelState`` nests under the part's name (``state.outputs.recording_path``);
- ``close()``: finish its files and jobs (safe twice).

Each has a do-nothing default. Features talk to each other only through the context's hooks
(``branched``, ``finishing``, ``finished``), never directly.

Threading: simulation thread only, like the kernel's stepping.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mujoco

from mjrig import commands as C
from mjrig.runtime.errors import MjrigError
from mjrig.runtime.manager import RuntimeManager
from mjrig.scenario.builder import Rig
from mjrig.session.document import RigDocument
from mjrig.session.jobs import BackgroundJobs
from mjrig.session.plot_rows import HistoryFetch
from mjrig.session.run_control import RunControl
from mjrig.session.scope import RigScope

__all__ = ["RigContext", "Feature", "Handler", "handler_table"]


Handler = Callable[[Any], None]
"""A command's handler: takes the command (of the type it is registered for), returns nothing."""


class Feature:
    """A part of the session with one job (see the module docstring)."""

    jobs: BackgroundJobs | None = None
    """Its background work, if it has any: long jobs are shown and cancelled through it."""

    def handlers(self) -> dict[type[C.Command], Handler]:
        """The commands this feature carries out (none by default)."""
        return {}

    def rig_opened(self) -> None:
        """Another rig was opened (not a reload): forget what belonged to the old one."""

    def model_changed(self) -> None:
        """The rig's model was read again (a reload): mark what was worked out on the old one stale."""

    def publish(self) -> C.PanelPart | None:
        """Its part of the panel state (None: it shows nothing of its own)."""
        return None

    def close(self) -> None:
        """Finish its files and background jobs; safe twice."""


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


def handler_table(own: dict[type[C.Command], Handler], features: tuple[Feature, ...]) -> dict[type[C.Command], Handler]:
    """The kernel's ``own`` handlers and every feature's, in one table; a command type claimed
    twice is a mistake in the code, refused here (RuntimeError naming both) rather than one
    handler silently winning."""
    table = dict(own)
    owner = dict.fromkeys(own, "the session kernel")
    for feature in features:
        for kind, handler in feature.handlers().items():
            if kind in table:
                raise RuntimeError(f"{kind.__name__} is handled by both {owner[kind]} and {type(feature).__name__}")
            table[kind], owner[kind] = handler, type(feature).__name__
    return table
