"""What a session hands out of its recordings: exports (CSV, MATLAB, MCAP), HTML reports and
pictures of the plots.

One feature of ``mjrig.session.kernel.Session`` (the contract: ``mjrig.session.context``). The
files are written by ``mjrig.exports`` (the code ``mjrig export``, ``mjrig report`` and
``mjrig plot`` run) on background jobs, off the simulation thread; the log says where each one
went, or why it did not.

Which recording: the one given (``source``), else the recording being replayed, else the last
recording this session finished (learned from the outputs feature's ``finished`` hook). A
recording stopped a moment ago whose file is still being finished is waited for: the command
runs when the file is complete. The recording being written is never exported (its file has no
footer yet): the last finished one is, or the log says to stop it first.

Names (CONTRACT: nothing the app writes silently replaces a file): with no ``path`` a command
writes beside its source under the next free name (``mjrig.runtime.files.paths.fresh_path``); a
``path`` given is the user's choice, asked about in the save dialog when it exists.

Threading: simulation thread only (jobs report back through ``BackgroundJobs``).
"""

from __future__ import annotations

import time
from pathlib import Path

from mjrig import commands as C
from mjrig.runtime.errors import ConfigError, MjrigError
from mjrig.runtime.files.paths import check_writable, fresh_path
from mjrig.session.context import RigContext
from mjrig.session.feature import Feature, Handler
from mjrig.session.jobs import BackgroundJobs, Cancelled, Job

__all__ = ["Reports", "NO_RECORDING", "REPORT_SUFFIXES"]

NO_RECORDING = "no recording to export yet: record one (Start recording, Ctrl+E in the 3D view) or open one"
"""The warning when there is nothing to export or report on."""
REPORT_SUFFIXES = (".html", ".htm")


class Reports(Feature):
    """ExportRecording, WriteReport (a recording's, results', or a comparison's) and SavePlot of one session."""

    def __init__(self, ctx: RigContext) -> None:
        self.ctx = ctx
        self.jobs: BackgroundJobs = BackgroundJobs()
        self.finished: Path | None = None
        """The last recording this session finished (complete on disk)."""
        self.closing: list[Path] = []
        """Recordings stopped whose files are being finished now."""
        self.waiting: list[C.Command] = []
        """Commands on "the last recording" that wait for ``closing`` to end."""
        ctx.finishing.append(self.recording_finishing)
        ctx.finished.append(self.recording_finished)

    def handlers(self) -> dict[type[C.Command], Handler]:
        """The commands this part carries out."""
        return {C.ExportRecording: self.export, C.WriteReport: self.report, C.SavePlot: self.save_plot}

    def rig_opened(self) -> None:
        """Nothing to forget: the last finished recording stays this session's."""

    def publish(self) -> C.ReportsPart:
        """Its part of the panel state: ``export_source``, the recording an export or report
        without a source would read now (None: none yet)."""
        src = self.replayed() or (self.closing[-1] if self.closing else self.finished)
        return C.ReportsPart(export_source=str(src) if src is not None else None)

    # --- which recording -------------------------------------------------------------------------
    def replayed(self) -> Path | None:
        """The recording the session replays now, else None."""
        info = self.ctx.source().info()
        return Path(info.recording) if info.replay and info.recording else None

    def writing(self) -> Path | None:
        """The recording being written now (its file is not complete), else None."""
        rm = self.ctx.runtime_or_none
        sm = rm.signal_manager if rm is not None else None
        return sm.export_path if sm is not None else None

    def recording_finishing(self, path: Path) -> None:
        """Hook: a recording stopped; its file is being finished."""
        self.closing.append(path)

    def recording_finished(self, path: Path, complete: bool) -> None:
        """Hook: that file is done; commands that waited for it run now."""
        self.closing = [p for p in self.closing if p != path]
        if complete:
            self.finished = path
        if self.closing:
            return
        waiting, self.waiting = self.waiting, []
        for cmd in waiting:
            try:
                self.handlers()[type(cmd)](cmd)
            except MjrigError as exc:
                self.ctx.log("error", str(exc))

    def source(self, cmd: C.ExportRecording | C.WriteReport, what: str) -> Path | None:
        """The file ``cmd`` reads; None when there is none (said in the log) or the command
        waits for a recording being finished."""
        given = Path(cmd.source).expanduser().resolve() if cmd.source else None
        if given is not None and given == self.writing():
            raise ConfigError(f"{what}: {given.name} is still being recorded: stop the recording first")
        if given is None and (replayed := self.replayed()) is not None:
            return replayed
        if self.closing and (given is None or given in self.closing):
            self.waiting.append(cmd)
            self.ctx.log("info", f"{what}: waiting for {self.closing[-1].name} to be finished")
            return None
        if given is not None:
            return given
        writing = self.writing()
        if self.finished is None:
            self.ctx.log(
                "warning",
                NO_RECORDING
                if writing is None
                else f"{what}: {writing.name} is still being recorded: stop the recording first",
            )
            return None
        if writing is not None:
            self.ctx.log(
                "info",
                f"{what}: {writing.name} is still being recorded (stop it to {what} it); "
                f"using the last finished one, {self.finished.name}",
            )
        return self.finished

    @staticmethod
    def target(path: str | None, default: Path, what: str) -> Path:
        """``path`` as given (the user chose it), else the next free name from ``default``."""
        out = Path(path).expanduser().resolve() if path else fresh_path(default)
        check_writable(out, f"{what} path")
        return out

    # --- the commands ------------------------------------------------------------------------------
    def export(self, cmd: C.ExportRecording) -> None:
        """Export a recording (see ``C.ExportRecording``); logs
        ``exported N rows of SOURCE to OUT``."""
        from mjrig.exports.export import FORMATS, default_output, export_recording

        suffix = Path(cmd.path).suffix.lower() if cmd.path else ""
        if cmd.fmt:
            fmt = cmd.fmt.strip().lower().lstrip(".")
            if fmt not in FORMATS:
                raise ConfigError(f"export: unknown format '{cmd.fmt}': choose {', '.join(FORMATS)}")
        else:
            fmt = next((f for f, s in FORMATS.items() if s == suffix), "") if cmd.path else "csv"
        if cmd.path and suffix != FORMATS.get(fmt):
            if not fmt:
                raise ConfigError(
                    f"export: name the file {', '.join(FORMATS.values())} for its format, got '{Path(cmd.path).name}'"
                )
            raise ConfigError(f"export: a {fmt} file is named {FORMATS[fmt]}, got '{Path(cmd.path).name}'")
        src = self.source(cmd, "export")
        if src is None:
            return
        out = self.target(cmd.path, default_output(src, fmt), "export")

        job = Job(f"an export to {fmt}")

        def done(rows: int | None, error: BaseException | None) -> None:
            if isinstance(error, Cancelled):
                self.ctx.log("info", f"export of {src.name} cancelled: {out.name} not written")
            elif error is not None:
                self.ctx.log("error", f"export of {src.name} failed: {error}")
            else:
                self.ctx.log("info", f"exported {rows} rows of {src.name} to {out}")

        def step(rows: int, total: int) -> None:
            job.step(rows / total if total else None, note=f"{rows} of {total} rows")

        self.ctx.log("info", f"exporting {src.name} to {out.name} ...")
        self.jobs.start("mjrig-export", lambda: export_recording(src, to=fmt, out=out, progress=step), done, job=job)

    def report(self, cmd: C.WriteReport) -> None:
        """Write an HTML report (see ``C.WriteReport``); logs ``report written: OUT``."""
        from mjrig.exports.report import default_report_path, write_report

        if cmd.path and Path(cmd.path).suffix.lower() not in REPORT_SUFFIXES:
            raise ConfigError(f"report: a report is HTML: name it .html, got '{Path(cmd.path).name}'")
        if cmd.compared is not None:
            self.comparison_report(cmd)
            return
        src = self.source(cmd, "report")
        if src is None:
            return
        out = self.target(cmd.path, default_report_path(src), "report")

        def done(result: Path | None, error: BaseException | None) -> None:
            if error is not None:
                self.ctx.log("error", f"report of {src.name} to {out} failed: {error}")
            else:
                self.ctx.log("info", f"report written: {out}")

        self.ctx.log("info", f"writing the report of {src.name} ...")
        self.jobs.start("mjrig-report", lambda: write_report(src, out=out), done)

    def comparison_report(self, cmd: C.WriteReport) -> None:
        """Write the comparison report of ``cmd.source`` (A: None as ExportRecording picks) and
        ``cmd.compared`` (B), default tolerances, as ``mjrig compare A B --report``; logs
        ``comparison report written: OUT``."""
        from mjrig.exports.compare_report import default_comparison_path, write_comparison_report
        from mjrig.runtime.files.out_lock import same_file

        if not cmd.compared:
            self.ctx.log("warning", "comparison report: compare with a recording first (Compare with...)")
            return
        idle = not (cmd.source or self.replayed() or self.finished or self.closing or self.writing())
        if idle:  # a live run compared with B: A is a recording of it, and there is none yet
            self.ctx.log(
                "warning",
                "comparison report: A is a recording of this run and there is none yet: record one "
                "(Start recording, Ctrl+E in the 3D view) or open one",
            )
            return
        src = self.source(cmd, "comparison report")
        if src is None:
            return
        other = Path(cmd.compared).expanduser().resolve()
        out = self.target(cmd.path, default_comparison_path(src, other), "comparison report")
        for what, given in (("A", src), ("B", other)):
            if same_file(out, given):
                raise ConfigError(f"comparison report: {out.name} is recording {what}; choose another name")

        job = Job("a comparison report")

        def done(result: Path | None, error: BaseException | None) -> None:
            if isinstance(error, Cancelled):
                self.ctx.log("info", f"comparison report cancelled: {out.name} not written")
            elif error is not None:
                self.ctx.log("error", f"comparison report of {src.name} and {other.name} to {out} failed: {error}")
            else:
                self.ctx.log("info", f"comparison report written: {out}")

        def step(done: int, total: int) -> None:
            job.step(done / total if total else None, note=f"{done} of {total} figures")

        self.ctx.log("info", f"writing the comparison report of {src.name} and {other.name} ...")
        work = lambda: write_comparison_report(src, other, out=out, progress=step)  # noqa: E731
        self.jobs.start("mjrig-report", work, done, job=job)

    def save_plot(self, cmd: C.SavePlot) -> None:
        """Draw the plotted signals to a picture (see ``C.SavePlot``); logs ``plot saved: OUT``."""
        from mjrig.exports import plotting

        if not cmd.traces:
            self.ctx.log("warning", "no signal is plotted: tick signals in the plots' tree first")
            return
        if cmd.path and Path(cmd.path).suffix.lower() not in plotting.FIGURE_SUFFIXES:
            raise ConfigError(f"plot: name the picture .png, .svg or .pdf, got '{Path(cmd.path).name}'")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        out = self.target(cmd.path, Path.cwd() / "runs" / f"plot-{stamp}.png", "plot")
        traces = list(cmd.traces)

        def done(result: None, error: BaseException | None) -> None:
            if error is not None:
                self.ctx.log("error", f"plot could not be saved: {error}")
            else:
                self.ctx.log("info", f"plot saved: {out} ({len(traces)} signal{'s' if len(traces) != 1 else ''})")

        self.jobs.start("mjrig-plot", lambda: plotting.save(plotting.signals_figure(traces), out), done)

    def close(self) -> None:
        """Wait for the files being written; safe twice."""
        self.jobs.join()
