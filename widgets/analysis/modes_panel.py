"""Modes: the rig's natural frequencies, damping and mode shapes, one animated in the 3D view,
and a signal's frequency response to a param (Bode).

*Work out modes* linearises the rig's continuous-time dynamics on a background job
(``ComputeModes``) about an operating point: the run's state now (pause, or drag the timeline
to any instant of the run first), or with *at t = ... s from the start* the state a run from the
start reaches at that time; *at equilibrium* then solves for the nearest state at rest (an
unstable one too: an upright pendulum), *trim inputs* with the actuator inputs that hold it (shown
in the status line), and *let it settle* runs it to rest from there instead. The table lists the oscillatory
modes, lowest first (frequency, undamped frequency, damping ratio, the joints that move most),
then the others. *show N* pauses the run and animates mode N in the 3D view (``ShowMode``),
*amplitude* scales its swing, *arrows* keeps the loads' arrows drawn; *stop* puts the run's
state back. *Bode* works out the response of the chosen signal (a ticked one at first), or with
*every plotted signal* of each signal the plots show, to the chosen input — a param, a load's
magnitude or force component, an actuator's input: magnitude (dB) and phase over frequency, a
line per signal, each mode's frequency marked.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import dearpygui.dearpygui as dpg

from mjrig import commands as C
from mjrig.runtime.analysis.inputs import input_names
from mjrig.widgets.kit.sections import SectionKit, section
from mjrig.widgets.kit.themes import PLOT_INPUT, disabled_button_theme

__all__ = ["ModesPanel"]


def _number(x: float, fmt: str = ".4g") -> str:
    return format(x, fmt) if math.isfinite(x) else "–"


class ModesPanel:
    """Work out modes, the modes table, the animation's controls, the Bode plot."""

    def __init__(self, submit: Callable[[C.Command], None], *, ticked: Callable[[], list[str]] = list) -> None:
        self.submit = submit
        self._ticked = ticked  # the plotted signals: the output offered first
        self._part: C.ModesPart | None = None
        self._inputs: tuple[str, ...] = ()
        self._outputs: tuple[str, ...] = ()

    def build(self, parent: int | str) -> None:
        row = dpg.add_group(parent=parent, horizontal=True)  # the operating point, then the action
        self._at = dpg.add_checkbox(label="at t =", parent=row)
        self._time = dpg.add_input_float(
            label="s from the start", parent=row, default_value=1.0, width=140, step=0.0, format="%.4g"
        )  # wider than its label: a click on its middle lands in the field
        row = dpg.add_group(parent=parent, horizontal=True)
        dpg.add_button(label="Work out modes", parent=row, callback=lambda: self._compute(None))
        self._equilibrium = dpg.add_checkbox(label="at equilibrium", parent=row)  # solved (unstable ones too)
        self._trim = dpg.add_checkbox(label="trim inputs", parent=row)  # with the actuator inputs that hold it
        self._settle = dpg.add_checkbox(label="let it settle", parent=row)  # a run from there, to rest
        self._status = dpg.add_text(
            "the run's state now, linearised: press Work out modes", parent=parent, wrap=0, color=(170, 170, 170)
        )
        self._table = dpg.add_table(parent=parent, header_row=True, policy=dpg.mvTable_SizingStretchProp)
        for label, weight in (("mode", 0.7), ("Hz", 0.8), ("undamped Hz", 0.9), ("damping", 0.8), ("shape", 2.0)):
            dpg.add_table_column(label=label, parent=self._table, width_stretch=True, init_width_or_weight=weight)
        row = dpg.add_group(parent=parent, horizontal=True)
        self._amplitude = dpg.add_slider_double(
            label="amplitude",
            parent=row,
            default_value=1.0,
            min_value=0.0,
            max_value=3.0,
            width=160,
            callback=self._restate,
        )
        self._arrows = dpg.add_checkbox(label="arrows", parent=row, callback=self._restate)
        # a line each: a load's or signal's full name fits ("Loads/drive:magnitude")
        self._input = dpg.add_combo([], label="input", parent=parent, width=-60)
        self._output = dpg.add_combo([], label="output", parent=parent, width=-60)
        row = dpg.add_group(parent=parent, horizontal=True)
        dpg.add_button(label="Bode", parent=row, callback=self._bode)
        self._every = dpg.add_checkbox(label="every plotted signal", parent=row)
        self._bode_status = dpg.add_text("", parent=parent, wrap=0, color=(170, 170, 170))
        self._plots = []
        for label in ("magnitude (dB)", "phase (deg)"):
            with dpg.plot(
                parent=parent, height=170, width=-1, no_title=True, label=label, show=False, **PLOT_INPUT
            ) as plot:
                x = dpg.add_plot_axis(
                    dpg.mvXAxis, label="frequency (Hz)" if "phase" in label else "", scale=dpg.mvPlotScale_Log10
                )
                dpg.add_plot_legend(location=dpg.mvPlot_Location_North, horizontal=True, outside=True)
                with dpg.plot_axis(dpg.mvYAxis, label=label) as y:
                    marks = dpg.add_inf_line_series([], label="modes")
            self._plots.append((plot, x, y, marks))
        self._lines: list[list[int | str]] = [[], []]  # each plot's line per response

    def update(self, snap: C.PanelState) -> None:
        inputs = tuple(  # forces and actuators first: what a frequency response is usually to
            input_names(
                ((e.name, e.kind, e.spec) for e in snap.entries.items if e.section == "loads"),
                (a.name for a in snap.tools.actuators),
            )
        ) + tuple(p.name for p in snap.entries.params)
        if inputs != self._inputs:
            self._inputs = inputs
            dpg.configure_item(self._input, items=list(inputs))
            if dpg.get_value(self._input) not in inputs:
                dpg.set_value(self._input, inputs[0] if inputs else "")
        signals = tuple(snap.signals)
        if signals != self._outputs:
            self._outputs = signals
            dpg.configure_item(self._output, items=list(signals))
            if dpg.get_value(self._output) not in signals:
                ticked = [s for s in self._ticked() if s in signals]
                first = next((s for s in signals if s.endswith(":qpos")), signals[0] if signals else "")
                dpg.set_value(self._output, ticked[0] if ticked else first)
        part = snap.part(C.ModesPart)
        if part == self._part:
            return
        old, self._part = self._part, part
        if part.running:
            dpg.set_value(self._status, "working out the modes ...")
        elif part.error:
            dpg.set_value(self._status, f"modes: {part.error}")
        elif part.stale:
            dpg.set_value(self._status, "made before the model changed: work them out again")
        elif part.at is None:  # nothing worked out for this rig (another rig opened): no line of the last
            dpg.set_value(self._status, "")
        else:
            osc = sum(m.kind == "oscillatory" for m in part.modes)
            rest = part.solved or "at rest (equilibrium)"
            where = (rest if part.equilibrium else "at the state shown") + f", t = {part.at:.4g} s"
            if part.point.startswith("t = "):  # a time of a run from the start
                where = f"at {part.point.split(',')[0]} of a run from the start" + (
                    f", then at rest (t = {part.at:.4g} s)" if part.equilibrium else ""
                )
            dpg.set_value(
                self._status,
                f"{osc} oscillatory mode{'s' if osc != 1 else ''} of {len(part.modes)}, {where}"
                + (f"; showing mode {part.shown + 1}" if part.shown is not None else ""),
            )
        if old is None or old.modes != part.modes or old.shown != part.shown or old.stale != part.stale:
            self._rows(part)
        if old is None or old.bode != part.bode:
            self._draw_bode(part)

    def _rows(self, part: C.ModesPart) -> None:
        dpg.delete_item(self._table, children_only=True, slot=1)
        k = 0
        for m in part.modes:
            shape = ", ".join(f"{j} {a:+.3g}" for j, a in m.shape[:3])
            with dpg.table_row(parent=self._table):
                if m.kind == "oscillatory":
                    index = k
                    shown = part.shown == index
                    button = dpg.add_button(
                        label=f"stop {k + 1}" if shown else f"show {k + 1}",
                        callback=lambda *_, i=index, on=shown: self._show(None if on else i),
                        enabled=not part.stale,  # a stale shape is of the old model's joints
                    )
                    dpg.bind_item_theme(button, disabled_button_theme())
                    k += 1
                    cells = (_number(m.frequency_hz), _number(m.undamped_hz), _number(m.damping_ratio, ".3g"), shape)
                else:
                    dpg.add_text(m.kind)
                    tau = f"τ {_number(m.time_constant_s)} s" if m.kind != "rigid" else "0 Hz"
                    cells = (tau, "", "", shape)
                for cell in cells:
                    dpg.add_text(cell)

    def _show(self, index: int | None) -> None:
        self.submit(C.ShowMode(index, float(dpg.get_value(self._amplitude)), bool(dpg.get_value(self._arrows))))

    def _restate(self) -> None:
        if self._part is not None and self._part.shown is not None:
            self._show(self._part.shown)

    def _compute(self, bode: tuple[str, tuple[str, ...]] | None) -> None:
        at = max(0.0, float(dpg.get_value(self._time))) if dpg.get_value(self._at) else None
        trim, settle = bool(dpg.get_value(self._trim)), bool(dpg.get_value(self._settle))
        solve = (bool(dpg.get_value(self._equilibrium)) or trim) and not settle
        self.submit(C.ComputeModes(equilibrium=solve, bode=bode, at=at, settle=settle, trim=trim and not settle))

    def _bode(self) -> None:
        source, output = str(dpg.get_value(self._input)), str(dpg.get_value(self._output))
        plotted = [s for s in self._ticked() if s in self._outputs] if dpg.get_value(self._every) else []
        outputs = tuple(plotted) or ((output,) if output else ())
        if not source or not outputs:
            dpg.set_value(
                self._bode_status, "choose an input (a param, a load, an actuator) and a signal (output) first"
            )
            return
        self._compute((source, outputs))

    def _draw_bode(self, part: C.ModesPart) -> None:
        curves = part.bode
        if not curves:
            return
        modes = [m.frequency_hz for m in part.modes if m.kind == "oscillatory"]
        for k, (plot, _x, y, marks) in enumerate(self._plots):
            dpg.configure_item(plot, show=True)  # hidden until there is a response to draw
            for line in self._lines[k]:
                dpg.delete_item(line)
            self._lines[k] = [
                dpg.add_line_series(
                    list(c.frequency_hz),
                    list(c.magnitude_db if k == 0 else c.phase_deg),
                    label=c.output,
                    parent=y,
                )
                for c in curves
            ]
            dpg.set_value(marks, [modes])
            for axis in dpg.get_item_children(plot, 1):
                dpg.fit_axis_data(axis)
        texts = []
        for c in curves:
            f, db = c.frequency_hz, c.magnitude_db
            texts.append(
                f"{c.output} / {c.input} ({c.unit.replace('*', '·')}): "
                f"{len(f)} frequencies, {f[0]:.3g} ... {f[-1]:.3g} Hz; largest "
                f"{max(db):.3g} dB at {f[db.index(max(db))]:.4g} Hz"
            )
        dpg.set_value(self._bode_status, "\n".join(texts))


@section("Modes", after="Fit")
def _modes_section(kit: SectionKit) -> ModesPanel:
    """The Modes section of the controls, after Fit."""
    return ModesPanel(kit.submit, ticked=kit.ticked)
