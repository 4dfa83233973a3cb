"""The timeline under the plots: one slider over the kept history for the 3D view and the plots."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import dearpygui.dearpygui as dpg

from mjrig import commands as C
from mjrig.widgets.dialogs.file_dialog import FileDialog
from mjrig.widgets.kit.text_fit import available_width, fit_lines
from mjrig.widgets.plots.plot_panel import PlotPanel

__all__ = ["TimelineBar", "HEIGHT", "RECORDING_FILTERS"]

VALUES_H = 38
"""Pixels of the box of the values at the cursor (two lines; more scroll inside it, so that a long
readout never pushes the slider away mid-drag)."""
HEIGHT = 110 + VALUES_H - 20
"""Pixels the bar takes under the plots."""

RECORDING_FILTERS = ((".parquet", (".parquet",)), ("all files", ()))


class TimelineBar:
    """Dragging the slider (or clicking a plot) pauses the run and shows that instant in the 3D view
    (Scrub) with a cursor on every plot and the plotted signals' values there; ``<``/``>`` (and the
    Left/Right keys in the 3D view) step one kept instant. Play from a past instant branches. The
    history's length and memory limits are set here too (SetHistoryLimit). "Compare with..." picks a
    recording to draw over the run (OpenComparison): dashed on the plots, a ghost in the 3D view;
    its "Report" then writes the comparison's HTML report (WriteReport with ``compared``)."""

    def __init__(self, submit: Callable[[C.Command], None], *, plot: PlotPanel) -> None:
        self.submit = submit
        self.plot = plot
        plot.on_time_click = self._on_time
        self._slider: int | str = 0
        self._range: int | str = 0
        self._values: int | str = 0
        self._seconds: int | str = 0
        self._megabytes: int | str = 0
        self._limits: tuple[float, float] = (0.0, 0.0)
        self._stop: int | str = 0
        self._report: int | str = 0
        self._compared: tuple[str | None, str] = (None, "")
        """(A: the recording replayed, None for a live run; B: the recording compared), as shown."""
        self._folder = ""
        self._dialog = FileDialog(
            mode="open",
            title="Compare with a recording",
            filters=RECORDING_FILTERS,
            on_done=lambda path: self.submit(C.OpenComparison(path)),
        )

    def build(self, parent: int | str) -> None:
        # The values at the cursor come first: the tooltips of the controls below open under the
        # pointer and would cover them.
        box = dpg.add_child_window(parent=parent, height=VALUES_H, border=False)
        self._values = dpg.add_text("", parent=box, wrap=-1)
        row = dpg.add_group(parent=parent, horizontal=True)
        for label, direction, tip in (
            ("<", -1, "one kept instant back (Left in the 3D view)"),
            (">", +1, "one instant forward (Right in the 3D view)"),
        ):
            button = dpg.add_button(label=label, parent=row, callback=self._on_step, user_data=direction)
            with dpg.tooltip(button):
                dpg.add_text(tip)
        self._slider = dpg.add_slider_double(
            label="timeline", parent=row, width=-80, format="t = %.4f s", callback=self._on_drag
        )
        with dpg.tooltip(self._slider):
            dpg.add_text(
                "drag to go back in time: the run pauses and the 3D view and plots show that "
                "instant; Play goes on from there (a branch)",
                wrap=360,
            )
        self._range = dpg.add_text("", parent=parent, color=(150, 150, 150))
        row3 = dpg.add_group(parent=parent, horizontal=True)
        button = dpg.add_button(label="Compare with...", parent=row3, callback=self._on_compare)
        with dpg.tooltip(button):
            dpg.add_text(
                "draw a recording over this run: its signals dashed on the plots, and a ghost of "
                "its bodies in the 3D view when it is of the same model",
                wrap=360,
            )
        self._stop = dpg.add_button(
            label="Stop comparing", parent=row3, show=False, callback=lambda: self.submit(C.OpenComparison(""))
        )
        # "Report", not "Comparison report": beside "Stop comparing" it says as much, and the row
        # still fits a laptop's panel with the history limits of a live run after it
        self._report = dpg.add_button(label="Report", parent=row3, show=False, callback=self._on_report)
        with dpg.tooltip(self._report):
            dpg.add_text(
                "the comparison's HTML report, written beside the recording (as mjrig compare A B "
                "--report): each signal of both with A's tolerance band, their difference, the first "
                "time outside the band",
                wrap=360,
            )
        self._seconds = dpg.add_input_double(
            label="s", parent=row3, width=60, format="%.0f", step=0, on_enter=True, callback=self._on_limit
        )
        self._megabytes = dpg.add_input_double(
            label="MB kept", parent=row3, width=60, format="%.0f", step=0, on_enter=True, callback=self._on_limit
        )
        self._dialog.build()

    # --- callbacks -------------------------------------------------------------------------------
    def _on_drag(self, sender: int | str, value: float) -> None:
        self.submit(C.Scrub(float(value)))

    def _on_time(self, t: float) -> None:
        self.submit(C.Scrub(t))

    def _on_step(self, sender: int | str, app_data: object, direction: int) -> None:
        self.submit(C.StepHistory(direction))

    def _on_compare(self) -> None:
        self._dialog.show(self._folder or None)

    def _on_report(self) -> None:
        source, compared = self._compared
        self.submit(C.WriteReport(source=source, compared=compared))

    def _on_limit(self) -> None:
        seconds, mb = dpg.get_value(self._seconds), dpg.get_value(self._megabytes)
        if seconds > 0 and mb > 0:
            self.submit(C.SetHistoryLimit(seconds, mb))

    def update(self, snap: C.PanelState) -> None:
        tl = snap.timeline
        lo, hi = tl.start, max(tl.end, tl.start + 1e-9)
        dpg.configure_item(self._slider, min_value=lo, max_value=hi)
        if not dpg.is_item_active(self._slider):
            dpg.set_value(self._slider, tl.cursor)
        what = "recording" if tl.replay else f"{tl.rows} states, {tl.nbytes / 2**20:.1f} MB"
        if tl.compare:
            what += f"; compared with {Path(tl.compare).name}" + ("" if tl.ghost else " (signals only)")
        dpg.configure_item(self._stop, show=bool(tl.compare))
        dpg.configure_item(self._report, show=bool(tl.compare))
        self._compared = (tl.recording if tl.replay and tl.recording else None, tl.compare)
        self._folder = str(Path(tl.compare or tl.recording).parent) if (tl.compare or tl.recording) else ""
        dpg.set_value(self._range, f"{tl.start:.3f} ... {tl.end:.3f} s ({what})")
        if (tl.max_seconds, tl.max_megabytes) != self._limits:
            self._limits = (tl.max_seconds, tl.max_megabytes)
            dpg.set_value(self._seconds, tl.max_seconds)
            dpg.set_value(self._megabytes, tl.max_megabytes)
        dpg.configure_item(self._seconds, show=not tl.replay)
        dpg.configure_item(self._megabytes, show=not tl.replay)
        shown = tl.cursor if (tl.scrubbed or tl.replay) else None
        self.plot.set_cursor(shown)
        if shown is None:
            dpg.set_value(self._values, "live")
        else:
            parts = [f"at {shown:.6f} s:"]
            for n, v, others, unit in self.plot.values_at(shown):  # the compared run's (v), a bench's [entry v]
                compared = "".join(f" ({o:.6g})" for tag, o in others if not tag)
                parts.append(f"{n.split('/', 1)[-1]} {v:.6g}{compared}" + (f" {unit}" if unit else ""))
                parts += [f"[{tag} {o:.6g}]" for tag, o in others if tag]  # each its own: the lines wrap between them
            dpg.set_value(self._values, fit_lines(parts, width=available_width(self._values)))
