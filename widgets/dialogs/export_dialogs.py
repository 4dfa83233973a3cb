"""The dialogs that hand a recording or a picture out of the app: File > Export recording...,
File > Report..., the plots' Save plot... and the results view's Report....

Each is a Save dialog (``FileDialog``) that proposes a free name beside what it writes about
(``NAME.csv``, ``NAME-2.csv`` when that exists...) and submits one session command
(``ExportRecording``, ``WriteReport``, ``SavePlot``); the session writes the file off the
simulation thread and its log says where. The export and picture dialogs choose the file's type
as desktop users know it: a filter per type (.csv .mat .mcap; .png .svg .pdf) that sets the
suffix, and a name typed with a type's suffix is of that type.

With no recording to read (none recorded or opened yet, or only the one being recorded) the
menu items open no dialog: they submit the command as it is and the session's log line says
what to do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from mjrig import commands as C
from mjrig.exports.export import FORMATS, default_output
from mjrig.exports.plotting import FIGURE_SUFFIXES, Trace
from mjrig.runtime.files.paths import default_report_path, fresh_path
from mjrig.widgets.dialogs.file_dialog import FileDialog, type_filters

__all__ = ["ExportDialogs"]

REPORT_FILTERS = ((".html", (".html",)), ("all files", ()))


class ExportDialogs:
    """The export, report and plot-picture dialogs; ``plotted()`` gives the plotted signals
    (called on the GUI thread, in ``update``, once Save plot's file is chosen)."""

    def __init__(
        self, submit: Callable[[C.Command], None], *, plotted: Callable[[], Sequence[Trace]] = lambda: ()
    ) -> None:
        self.submit = submit
        self.plotted = plotted
        self._export = FileDialog(
            mode="save",
            title="Export the recording",
            on_done=self._on_export,
            filters=type_filters(*FORMATS.values()),
            choose_type=True,
        )
        self._report = FileDialog(
            mode="save", title="Write a report", on_done=self._on_report, filters=REPORT_FILTERS, suffix=".html"
        )
        self._plot = FileDialog(
            mode="save",
            title="Save the plot",
            on_done=self._on_plot,
            filters=type_filters(*FIGURE_SUFFIXES),
            choose_type=True,
        )
        self._source: str | None = None  # PanelState.reports.export_source
        self._report_of: str | None = None  # the file the report dialog is about (None: the recording)
        self._chosen: Callable[[str], None] | None = None  # told the report's file when it is chosen
        self._plot_to: str | None = None  # a picture's file chosen: drawn at the next update
        self._folder: Path | None = None  # where the last picture went

    def build(self) -> None:
        for dialog in self.dialogs:
            dialog.build()

    @property
    def dialogs(self) -> tuple[FileDialog, ...]:
        return self._export, self._report, self._plot

    @property
    def shown(self) -> bool:
        """Whether one of these dialogs is up."""
        return any(d.shown for d in self.dialogs)

    def close_dialog(self) -> bool:
        """Close the dialog that is up as its Cancel does; False if none was."""
        for dialog in self.dialogs:
            if dialog.shown:
                dialog.cancel()
                return True
        return False

    # --- what the menus and buttons ask for ------------------------------------------------------
    def export_dialog(self) -> None:
        """File > Export recording...: the recording the session would export, as CSV by default."""
        if self._source is None:
            self.submit(C.ExportRecording())  # the session says why there is nothing to export
            return
        src = Path(self._source)
        self._export.show(src.parent, name=fresh_path(default_output(src, "csv")).name)

    def report_dialog(self, source: str | Path | None = None, *, chosen: Callable[[str], None] | None = None) -> None:
        """File > Report... (``source`` None: the recording), or a sweep's or study's results file;
        ``chosen(path)`` is told the file chosen (the results view's note follows it)."""
        self._report_of = str(source) if source is not None else None
        self._chosen = chosen
        of = self._report_of or self._source
        if of is None:
            self.submit(C.WriteReport())
            return
        self._report.show(Path(of).parent, name=fresh_path(default_report_path(Path(of))).name)

    def plot_dialog(self) -> None:
        """Save plot...: a PNG of the plotted signals, in the folder of the last one (else runs/,
        else the current folder)."""
        folder = self._folder or Path.cwd() / "runs"
        folder = folder if folder.is_dir() else Path.cwd()
        self._plot.show(folder, name=fresh_path(folder / "plot.png").name)

    # --- a file chosen -----------------------------------------------------------------------------
    def _on_export(self, path: str) -> None:
        fmt = next((f for f, s in FORMATS.items() if s == Path(path).suffix.lower()), None)
        self.submit(C.ExportRecording(path, fmt=fmt, source=self._source))

    def _on_report(self, path: str) -> None:
        self.submit(C.WriteReport(path, source=self._report_of or self._source))
        if self._chosen is not None:
            self._chosen(path)

    def _on_plot(self, path: str) -> None:
        self._folder = Path(path).parent
        self._plot_to = path

    def update(self, snap: C.PanelState) -> None:
        self._source = snap.reports.export_source
        if self._plot_to is not None:
            path, self._plot_to = self._plot_to, None
            self.submit(C.SavePlot(path, traces=tuple(self.plotted())))
