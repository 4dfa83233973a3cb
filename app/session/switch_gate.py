"""The question before a rig is left while its long jobs run: opening another rig (a drop, File >
Open, Recent, a bundled rig) or reading this one again (Reload, a file changed on disk) waits for
"stop them" or "keep them running" (``AnswerSwitch``), or is dropped (``KeepRig``), as quitting
waits for its own answer. GUI-free; used by the session on the simulation thread."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mjrig import commands as C
from mjrig.panel_state import job_text
from mjrig.session import jobs
from mjrig.session.bench_guess import is_bench_file

__all__ = ["SwitchGate"]

Leaving = C.OpenModel | C.Reload


class SwitchGate:
    """Holds the open or reload that waits for the answer; ``owners`` are the session's features
    (whose ``jobs`` run the long jobs), ``log(level, text)`` its Status."""

    def __init__(self, owners: Iterable[Any], log: Callable[[str, str], None]) -> None:
        self._owners = owners
        self._log = log
        self.pending: Leaving | None = None

    def allows(self, cmd: C.Command) -> bool:
        """Whether ``cmd`` goes ahead now: it leaves nothing (not an open or reload, bench data
        joining the rig), no long job runs, or ``cmd.jobs`` answers for them ("stop": cancelled
        first; "keep": they run on and report to Status only). Else it waits (``pending``)."""
        if not isinstance(cmd, (C.OpenModel, C.Reload)):
            return True
        running = jobs.running(self._owners)
        if not running or (isinstance(cmd, C.OpenModel) and is_bench_file(cmd.path)) or cmd.jobs == "keep":
            return True
        if cmd.jobs == "stop":
            jobs.cancel(self._owners)
            return True
        self.pending = cmd
        what = " and ".join(j.what for j in running)
        self._log("warning", f"{what} is running: answer the question to {_words(cmd)}")
        return False

    def answer(self, cmd: C.AnswerSwitch, *, then: Callable[[C.Command], None]) -> None:
        """Carry out the waiting open or reload (by ``then``, the session's ``handle``) with the
        answer in it; nothing when none waits."""
        pending, self.pending = self.pending, None
        if pending is not None:
            then(dataclasses.replace(pending, jobs=cmd.jobs))

    def question(self) -> tuple[str, str] | None:
        """(what waits, the jobs under way) while it waits: ``PanelState.pending_switch``."""
        return (_words(self.pending), job_text(jobs.infos(self._owners))) if self.pending is not None else None


def _words(cmd: Leaving) -> str:
    """What waits for the answer: "open NAME" or "reload the model"."""
    return f"open {Path(cmd.path).name}" if isinstance(cmd, C.OpenModel) else "reload the model"
