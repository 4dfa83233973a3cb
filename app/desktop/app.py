"""The desktop app: a Dear PyGui control panel (main thread) over a Session driven by the
simulation thread and MuJoCo's passive viewer.

The panel talks to the simulation only through a *client*: ``submit(command)``, ``latest()``
snapshot, ``drain_rows()`` for the live plots, and ``closed``. In one process the client is the
Session itself; in a panel process of its own (``desktop/launch.py``) it is a pair of queues.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mjrig import commands as C
from mjrig.desktop import x_errors
from mjrig.desktop.panel_client import Client, QueueClient, SessionClient
from mjrig.desktop.widget_map import MapRequests

if TYPE_CHECKING:
    from mjrig.widgets.dialogs.switch_question import SwitchQuestion
    from mjrig.widgets.kit.sections import PanelSection

__all__ = ["PanelApp", "Client", "QueueClient", "SessionClient"]

PANEL_FPS = 30.0
"""Frames a second of the panel, and snapshots a second sent to a panel in its own process."""
STATUS_HEIGHT = 117
"""Height (px) of the Status area under the plots in a narrow panel: its title row and four lines."""
PLOTS_LEAST = 120
"""Height (px) the plots themselves keep at least in a narrow panel, however the splitter is set."""


def controls_width(width: int) -> int:
    """The controls' default width (px) beside the plots in a panel ``width`` px wide: half of it,
    380 to 460 px (every label of the sections whole); in the panel a wide screen gives (1,056 px
    at 1920x1080) the plots themselves, their signal tree aside, get more than a third."""
    return max(380, min(460, width // 2))


def narrow_split(height: int) -> tuple[int, int, int]:
    """The controls' least, most and default height (px) in a narrow panel ``height`` px high: at
    least 120 px of controls, and room under them for the plots' bar, ``PLOTS_LEAST`` of plots
    (a third of the panel by default), the timeline and the Status area (a saved split outside
    this is brought back inside)."""
    from mjrig.widgets.plots.timeline_bar import HEIGHT as TIMELINE
    from mjrig.widgets.run_bar import HEIGHT as RUN_BAR

    rest = height - (20 + RUN_BAR + 10 + 34 + TIMELINE + STATUS_HEIGHT + 32)  # menu, run bar, grip, plots' bar, spacing
    most = max(120, rest - PLOTS_LEAST)
    return 120, most, min(most, max(120, rest - int(0.3 * height) - 12))


class PanelApp:
    """The control panel window. ``run()`` blocks on the calling (main) thread until the window
    is closed, the simulation side closes, or ``exit_after`` seconds of wall time pass."""

    def __init__(
        self,
        client: Client,
        *,
        exit_after: float | None = None,
        title: str = "mjrig",
        geometry: tuple[int, int, int, int] = (980, 30, 930, 1000),
    ) -> None:
        self.client = client
        self.exit_after = exit_after
        self.title = title
        self.geometry = geometry
        """Requested client area (x, y, width, height); ``placement`` is where it ended up."""
        self.placement: tuple[int, int, int, int] | None = None
        self._requests = MapRequests(os.environ.get("MJRIG_WIDGET_MAP"))
        self._quit = False
        self._question: Any = None  # the QuitQuestion
        self._switch: SwitchQuestion | None = None
        self._model_panel: Any = None
        self._main: int | str = 0
        self._dirty = False
        self._jobs: tuple[C.JobInfo, ...] = ()  # long jobs under way (the quit question says so)
        self._recording: str | None = None  # the file being recorded (the quit question says so)
        self._asked_for_viewer = False
        self.panels: list[Any] = []
        self.plot: Any = None
        self.frames = 0
        self._screenshot: str | None = None
        self.on_frame: Callable[[PanelApp], None] | None = None
        self.frame_seconds = 0.0  # the last panel frame's work (s): snapshot, panels, drawing
        self.shown: C.PanelState | None = None  # the snapshot the last frame drew

    def request_screenshot(self, path: str) -> None:
        """Save the panel's frame buffer as PNG at the next frame (thread-safe)."""
        self._screenshot = path

    def _build(self) -> None:
        import dearpygui.dearpygui as dpg

        from mjrig.settings.keys import load_keymap
        from mjrig.settings.recent import RecentFiles
        from mjrig.widgets.actuators_panel import ActuatorsPanel
        from mjrig.widgets.analysis.fit_panel import FitPanel
        from mjrig.widgets.analysis.metrics_panel import MetricsPanel
        from mjrig.widgets.analysis.requirements_panel import RequirementsPanel
        from mjrig.widgets.analysis.results_slot import ResultsSlot
        from mjrig.widgets.dialogs.export_dialogs import ExportDialogs
        from mjrig.widgets.dialogs.quit_question import QuitQuestion
        from mjrig.widgets.edit_menu import EditMenu
        from mjrig.widgets.help_panel import HelpPanel
        from mjrig.widgets.jobs_line import JobsLine
        from mjrig.widgets.kit.sections import SectionKit, placed, registered_sections
        from mjrig.widgets.kit.splitter import PanelLayout, Splitter
        from mjrig.widgets.log_panel import LogPanel
        from mjrig.widgets.model_panel import ModelPanel
        from mjrig.widgets.params_panel import ParamsPanel
        from mjrig.widgets.plots.plot_panel import PlotPanel
        from mjrig.widgets.plots.timeline_bar import HEIGHT as TIMELINE_HEIGHT
        from mjrig.widgets.plots.timeline_bar import TimelineBar
        from mjrig.widgets.recording_panel import RecordingPanel
        from mjrig.widgets.rig_panel import RigPanel
        from mjrig.widgets.run_bar import RunBar
        from mjrig.widgets.shortcuts import Shortcuts
        from mjrig.widgets.sim_panel import SimPanel
        from mjrig.widgets.units_menu import UnitsMenu

        submit = self.client.submit
        self.plot, log = PlotPanel(below=TIMELINE_HEIGHT, submit=submit), LogPanel()
        exports = ExportDialogs(submit, plotted=self.plot.traces)  # File > Export..., Save plot...
        self.plot.on_save = exports.plot_dialog
        self._model_panel = model_panel = ModelPanel(submit, recent=RecentFiles(), exports=exports)
        timeline = TimelineBar(submit, plot=self.plot)
        self._fit_panel = fit_panel = FitPanel(submit)
        fixed: list[tuple[str, PanelSection, bool]] = [
            ("Model", model_panel, True),
            ("Simulation", SimPanel(submit), True),
            ("Loads", RigPanel(submit, what="loads"), True),
            ("Proximities", RigPanel(submit, what="proximities"), False),
            ("Params", ParamsPanel(submit), True),
            ("Controls", ActuatorsPanel(submit), False),
            ("Requirements", RequirementsPanel(submit, ticked=self.plot.checked), False),
            ("Recording", RecordingPanel(submit), True),
            ("Fit", fit_panel, False),
            ("Metrics", MetricsPanel(submit, ticked=self.plot.checked), False),
            ("Keys", HelpPanel(load_keymap()), False),
        ]  # and the analysis windows' sections, registered where they are defined (Modes after Fit)
        sections = placed(fixed, SectionKit(submit, ticked=self.plot.checked), registered_sections())
        x, y, w, h = self.geometry
        with dpg.window(label=self.title) as self._main:
            with dpg.menu_bar() as menu_bar:
                model_panel.build_menu(on_quit=self._on_close_request)
                edit_menu = EditMenu(submit)
                edit_menu.build_menu()
                self.panels.append(edit_menu)
                units_menu = UnitsMenu(submit)
                units_menu.build_menu()
                self.panels.append(units_menu)
            run_bar = RunBar(submit)  # never scrolls away: above both panes
            run_bar.build(self._main)
            self.panels.append(run_bar)
            # A splitter after the controls gives the plots more or less room; the panel keeps it.
            layout = PanelLayout.load()
            if w >= 780:  # controls beside plots
                with dpg.group(horizontal=True) as row:
                    left = dpg.add_child_window(width=layout.controls_width or controls_width(w))
                    Splitter(
                        left,
                        vertical=True,
                        least=220,
                        most=max(240, w - 320),
                        on_release=lambda px: self._keep_layout(layout, width=px),
                    ).build(row)
                    right = dpg.add_child_window()
                plot_area = dpg.add_child_window(parent=right, height=-230)
                log_area = dpg.add_child_window(parent=right)
            else:  # a narrow panel (laptop screens): controls above plots, each full width
                least, most, first = narrow_split(h)
                saved = int(h * layout.controls_height) if layout.controls_height else first
                left = dpg.add_child_window(height=min(most, max(least, saved)))
                Splitter(
                    left,
                    vertical=False,
                    least=least,
                    most=most,
                    on_release=lambda px: self._keep_layout(
                        layout, height=px / (dpg.get_viewport_client_height() or h)
                    ),
                ).build(self._main)
                plot_area = dpg.add_child_window(height=-STATUS_HEIGHT)
                log_area = dpg.add_child_window()
            for label, panel, open_ in sections:
                header = dpg.add_collapsing_header(label=label, parent=left, default_open=open_)
                panel.build(header)
                self.panels.append(panel)
            self.plot.build(plot_area)
            timeline.build(plot_area)
            log.build(log_area, title="Status")
            jobs_line = JobsLine(submit)  # beside the Status title: in view however the panes scroll
            jobs_line.build(log.title_row)
            self.panels.append(jobs_line)
            self.panels += [self.plot, timeline, log]
        dpg.set_primary_window(self._main, True)
        self.panels.append(ResultsSlot(submit, menu_bar=menu_bar, on_report=exports.report_dialog))
        self._question = QuitQuestion(
            on_save=self._on_save_then_quit, on_quit=self._on_quit_anyway, on_keep=self._on_keep_open
        )
        self._question.build()
        from mjrig.widgets.dialogs.switch_question import SwitchQuestion

        switch = self._switch = SwitchQuestion(submit)
        switch.build()
        self.panels.append(switch)
        from mjrig.widgets.dialogs.measured_dialog import MeasuredDialog

        bench = MeasuredDialog(submit)
        bench.build()
        self.panels.append(bench)
        self.panels.append(
            Shortcuts(
                {
                    "open": model_panel.open_dialog,
                    "save": model_panel.save_dialog,
                    "quit": self._on_close_request,
                    "undo": lambda: submit(C.Undo()),
                    "redo": lambda: submit(C.Redo()),
                    "close": self._on_escape,
                },
                dialog_up=self._dialog_up,
            )
        )

    def _on_close_request(self, *, held: bool = False) -> None:
        """The window's close button, File > Quit, Ctrl+Q: quit, or ask first when the rig has
        unsaved edits or a long job runs (a fit, modes, an export). ``held``: the session asks (the
        3D view's close button): the question stays after Keep working until the session no longer
        asks, so that it goes once the answer is taken."""
        from mjrig.panel_state import job_text

        if not self._dirty and not self._jobs:
            self._quit = True
        else:
            self._question.show(recording=self._recording, unsaved=self._dirty, jobs=job_text(self._jobs), held=held)

    def _on_quit_anyway(self) -> None:
        self.client.submit(C.Quit(confirmed=True))
        self._quit = True

    def _on_keep_open(self) -> None:
        self.client.submit(C.KeepWorking())

    def _on_save_then_quit(self) -> None:
        self.client.submit(C.KeepWorking())  # until the file is written; a cancelled save keeps working
        self._model_panel.save_dialog(then_quit=True)

    def _dialog_up(self) -> bool:
        return self._question.shown or bool(self._switch and self._switch.shown) or self._model_panel.dialog_shown

    def _on_escape(self) -> None:
        """Escape closes the dialog that is up, as its Cancel; else the open menu (focusing the
        window closes the menus over it: ImGui's FocusWindow)."""
        import dearpygui.dearpygui as dpg

        if self._question.shown:
            self._question.keep()
        elif self._switch is not None and self._switch.shown:
            self._switch.cancel()
        elif self._fit_panel.dialog.shown:
            self._fit_panel.dialog.cancel()
        elif not self._model_panel.close_dialog():
            dpg.focus_item(self._main)

    @staticmethod
    def _keep_layout(layout: Any, *, width: int | None = None, height: float | None = None) -> None:
        """A splitter was let go: remember its place for the next start (``PanelLayout``)."""
        if width is not None:
            layout.controls_width = width
        if height is not None:
            layout.controls_height = height
        layout.save()

    def _note_placement(self, dpg: Any) -> None:
        """Remember where the window is (saved at exit)."""
        x, y = dpg.get_viewport_pos()
        self.placement = (int(x), int(y), int(dpg.get_viewport_client_width()), int(dpg.get_viewport_client_height()))

    def run(self) -> int:
        """Show the panel and pump snapshots until it should close; returns 0."""
        import dearpygui.dearpygui as dpg

        from mjrig.widgets.kit.fonts import PanelFonts

        dpg.create_context()
        dpg.configure_app(keyboard_navigation=True)  # Tab, arrows, Space and Enter drive the panel
        x, y, w, h = self.geometry
        dpg.create_viewport(title=self.title, width=w, height=h, x_pos=x, y_pos=y, disable_close=True)
        dpg.set_exit_callback(self._on_close_request)
        dpg.setup_dearpygui()
        fonts = PanelFonts(dpg, warn=lambda text: print(f"mjrig: warning: {text}", file=sys.stderr))
        fonts.start()
        self._build()
        from mjrig.widgets.kit.themes import keyboard_focus_theme

        dpg.bind_theme(keyboard_focus_theme())
        dpg.show_viewport()
        # a window that went (a drop's source answered late) is one line, never the end of the app
        x_errors.forgive_gone(x_errors.current_glx_display(), lambda text: echo("warning", text))
        start = time.perf_counter()
        shown: tuple[Any, Any] = (None, None)
        try:
            while dpg.is_dearpygui_running() and not self.client.closed and not self._quit:
                t0 = time.perf_counter()
                asked = self._requests.asked()
                snap = self.client.latest()
                if snap.model is not shown[0] or snap.signals is not shown[1]:  # names a font may lack
                    shown = (snap.model, snap.signals)
                    fonts.cover(
                        (
                            snap.source,
                            *snap.model.bodies,
                            *snap.model.joints,
                            *snap.model.sites,
                            *snap.model.geoms,
                            *snap.model.sensors,
                            *snap.model.cameras,
                            *snap.signals,
                        )
                    )
                self._dirty, self._recording, self._jobs = snap.dirty, snap.outputs.recording_path, snap.jobs
                if snap.quit_question and not self._asked_for_viewer:  # the 3D view's close button
                    self._on_close_request(held=True)
                elif self._asked_for_viewer and not snap.quit_question:  # the session has taken the answer
                    self._question.hide()
                self._asked_for_viewer = snap.quit_question
                for cols, block in self.client.drain_rows():
                    self.plot.add_rows(cols, block)
                for panel in self.panels:
                    panel.update(snap)
                dpg.render_dearpygui_frame()
                self.frames += 1
                self.frame_seconds, self.shown = time.perf_counter() - t0, snap
                if self._screenshot:
                    dpg.output_frame_buffer(file=self._screenshot)
                    self._screenshot = None
                if self.on_frame is not None:
                    self.on_frame(self)
                self._requests.answer(dpg, asked, self.frames)
                if self.frames % 5 == 0:
                    self._note_placement(dpg)
                if self.exit_after is not None and t0 - start >= self.exit_after:
                    break
                spare = 1.0 / PANEL_FPS - (time.perf_counter() - t0)
                # the panel must not spin a core (no vsync on Xvfb); a map or frame asked for
                # meanwhile is drawn at once (whoever asked is waiting for it)
                if spare > 0 and not self._requests.waiting():
                    time.sleep(spare)
        finally:
            try:
                self._note_placement(dpg)  # where it is as it closes, not up to five frames before
            except Exception:  # noqa: BLE001 - a viewport already gone: the last noted place stands
                pass
            self.client.submit(C.Quit())
            dpg.destroy_context()
        return 0


def echo(level: str, text: str) -> None:
    """One line per status message on stderr (warnings and errors; info too with MJRIG_VERBOSE=1)."""
    if level != "info" or os.environ.get("MJRIG_VERBOSE") == "1":
        try:
            sys.stderr.write(f"mjrig: {level}: {' '.join(text.split())}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
