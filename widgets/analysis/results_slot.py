"""Where the results view lives: the results the session opened last (``PanelState.results.shown``),
however the file was opened (the command line, File > Open, Recent, a drop). Each opening makes
the view again over the panel; the Results menu appears with the first one."""

from __future__ import annotations

from collections.abc import Callable

import dearpygui.dearpygui as dpg

from mjrig import commands as C
from mjrig.widgets.analysis.results_view import ResultsView

__all__ = ["ResultsSlot"]


class ResultsSlot:
    """Builds the ``ResultsView`` of each results file opened; ``menu_bar``: where its menu goes."""

    def __init__(
        self, submit: Callable[[C.Command], None], *, menu_bar: int | str, on_report: Callable[..., None] | None = None
    ) -> None:
        self.submit, self.menu_bar, self.on_report = submit, menu_bar, on_report
        self.view: ResultsView | None = None
        self._opened = 0
        self._menu: int | str = 0

    def build(self, parent: int | str) -> None:
        """Nothing until a results file is opened."""

    def update(self, snap: C.PanelState) -> None:
        if snap.results.shown is not None and snap.results.opened != self._opened:
            self._opened = snap.results.opened
            if self.view is not None:
                self.view.close()
            area = (dpg.get_viewport_client_width(), dpg.get_viewport_client_height())
            self.view = ResultsView(self.submit, results=snap.results.shown, area=area, on_report=self.on_report)
            self.view.build()
            if not self._menu:
                with dpg.menu(label="Results", parent=self.menu_bar) as self._menu:
                    dpg.add_menu_item(label="Show results window", callback=self._show_view)
        if self.view is not None:
            self.view.update(snap)

    def _show_view(self) -> None:
        """Results > Show results window: bring the last results' window back."""
        if self.view is not None:
            self.view.show()
