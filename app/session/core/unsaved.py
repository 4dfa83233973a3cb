"""Opening another file or quitting while the rig has unsaved edits (or a long job runs): the
questions asked first, and what each answer does.

``OpenModel`` of a scenario or model with the rig's edits unsaved waits (``pending_open``) for
the panel's question: save first (``SaveScenario``, which then opens it), open without saving
(``OpenModel(discard=True)``), or keep the rig (``KeepRig``). Bench data offered to the rig opens
nothing and asks nothing. The 3D view's close button (``CloseViewer``) quits at once, or raises
``quit_question`` when there are unsaved edits or a long job; ``Quit`` quits (``confirmed``: the
edits are given up), ``KeepWorking`` takes the question back. ``quit`` is what the app's loops
watch.

Threading: simulation thread (``quit`` is also read by the panel's client).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mjrig import commands as C
from mjrig.session.bench_guess import is_bench_file
from mjrig.session.document import RigDocument
from mjrig.session.feature import Handler
from mjrig.session.switch_gate import SwitchGate

__all__ = ["UnsavedQuestions"]


class UnsavedQuestions:
    """The unsaved-edits questions of a session (see the module). ``busy()``: a long job runs;
    ``open_file(path)`` opens a file; ``handle(cmd)`` carries out a command; ``save(cmd)`` writes
    the scenario (raises when it was not written); ``offer_bench(path)`` offers bench data."""

    def __init__(
        self,
        *,
        document: RigDocument,
        switch: SwitchGate,
        busy: Callable[[], bool],
        log: Callable[[str, str], None],
        open_file: Callable[[str], None],
        handle: Callable[[C.Command], None],
        save: Callable[[C.SaveScenario], None],
        offer_bench: Callable[[str], None],
    ) -> None:
        self.document, self.switch, self.busy, self.log = document, switch, busy, log
        self.open_file, self.handle, self.save, self.offer_bench = open_file, handle, save, offer_bench
        self.quit = False
        self.quit_question = False  # the viewer was closed with unsaved edits or a job under way: ask
        self.pending_open: str | None = None  # waits for the unsaved-edits answer

    def handlers(self) -> dict[type[C.Command], Handler]:
        """The commands it carries out."""
        return {
            C.OpenModel: self._open_model,
            C.KeepRig: self._keep_rig,
            C.SaveScenario: self._save_scenario,
            C.Quit: self._quit,
            C.CloseViewer: self._close_viewer,
            C.KeepWorking: self._keep_working,
        }

    def _keep_rig(self, cmd: C.KeepRig) -> None:
        self.pending_open = self.switch.pending = None

    def _open_model(self, cmd: C.OpenModel) -> None:
        if is_bench_file(cmd.path):  # bench data joins the rig: nothing is discarded, nothing to ask
            return self.offer_bench(cmd.path)
        self.pending_open = None if cmd.discard or not self.document.dirty else cmd.path
        if self.pending_open:  # the panel asks: save first, open without saving, or cancel
            self.log("warning", f"the rig has unsaved changes: answer the question to open {Path(cmd.path).name}")
            return
        self.open_file(cmd.path)
        for name, value in cmd.params:  # a trial's values (the results view): not the user's edits
            self.handle(C.SetParam(name, value))
        self.document.dirty = self.document.dirty and not cmd.params

    def _save_scenario(self, cmd: C.SaveScenario) -> None:
        self.save(cmd)  # raises when not written: no quitting, no opening
        self.quit = self.quit or cmd.then_quit
        if self.pending_open and not cmd.then_quit:  # saved on the way to opening another file: go on
            pending, self.pending_open = self.pending_open, None
            self.open_file(pending)

    def _quit(self, cmd: C.Quit) -> None:
        if cmd.confirmed and self.document.dirty:
            self.log("warning", "quitting without saving the rig's changes")
        self.quit = True  # long jobs are stopped as the session closes

    def _close_viewer(self, cmd: C.CloseViewer) -> None:
        """The 3D view's close button: quit, or ask first when the rig has unsaved edits or a
        long job runs."""
        if not self.document.dirty and not self.busy():
            self.quit = True
        elif not self.quit_question:
            self.quit_question = True
            self.log("warning", "answer the question to quit (unsaved changes, or a job under way)")

    def _keep_working(self, cmd: C.KeepWorking) -> None:
        self.quit_question = False
