"""A sweep's or study's results file opened in the app (File > Open, a drop, Recent, the command line).

The session opens what the results came from (the sweep's scenario, else its model, else the
default rig: ``SweepResults.start_target``) and publishes the results it read, which the panel
shows in its results view (table, scatter, a study's history, *Open best*) without reading the
file again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mjrig import commands as C
from mjrig.campaign.results import SweepResults, is_results
from mjrig.scenario.bundled import default_model
from mjrig.session.context import RigContext
from mjrig.session.feature import Feature

__all__ = ["ResultsFiles", "is_results"]


class ResultsFiles(Feature):
    """Opens results files; publishes the one shown (``results``) and how many were opened."""

    def __init__(self, ctx: RigContext, *, open_target: Callable[[Path], None]) -> None:
        self.ctx = ctx
        self._open_target = open_target
        self.results: C.OpenedResults | None = None
        """The results opened last, as the panel's results view reads them (None: none yet)."""
        self.opened = 0

    def open(self, path: Path) -> None:
        """Show the results at ``path`` over the rig they came from (ConfigError: unreadable)."""
        results = SweepResults.open(path).in_units()  # shown in the scenario's [units]
        start, notes = results.start_target()
        for note in notes:
            self.ctx.log("warning", note)
        self._open_target(start if start is not None else default_model().scenario)
        self.results, self.opened = results, self.opened + 1
        kind = "study" if results.is_study else "sweep"
        self.ctx.log("info", f"results of a {kind} of {results.table.height} trials: {path}")

    def publish(self) -> C.ResultsPart:
        """Its part of the panel state: the results opened last, and how many were opened."""
        return C.ResultsPart(shown=self.results, opened=self.opened)
