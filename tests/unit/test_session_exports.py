"""Exports, reports and plot pictures through the session's commands (what File > Export
recording..., File > Report..., the plots' Save plot... and the results view's Report... submit;
tests/gui/test_desktop_exports.py clicks the same): which recording they read (the replayed one,
else the last finished), where they write (a free name by default, the given name replaced), and
what the log says."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from mjrig import commands as C
from mjrig.exports.plotting import Trace
from mjrig.runtime.errors import ConfigError
from mjrig.session.kernel import Session
from mjrig.session.reports import NO_RECORDING
from tests.unit.unit_util import SHOULDER_ARM_XML

ARM = SHOULDER_ARM_XML.format(actuators="")


@pytest.fixture()
def session(tmp_path: Path, open_session) -> Session:
    (tmp_path / "arm.xml").write_text(ARM)
    s = open_session(tmp_path / "arm.xml")
    yield s
    s.close()


def steps(s: Session, n: int) -> None:
    for _ in range(n):
        s.handle(C.StepOnce())


def settle(s: Session) -> list[tuple[str, str]]:
    """Wait for every background job (recordings finished, exports written); the log then."""
    s.outputs.jobs.join()
    s.reports.jobs.join()
    return list(s.publish().messages)


def record(s: Session, path: Path, n: int = 150) -> pl.DataFrame:
    s.handle(C.StartRecording(str(path)))
    steps(s, n)
    s.handle(C.StopRecording())
    settle(s)
    return pl.read_parquet(path)


def said(messages: list[tuple[str, str]], text: str, level: str = "info") -> bool:
    return (level, text) in messages


def test_nothing_recorded_yet_says_so_and_writes_nothing(session: Session, tmp_path: Path) -> None:
    session.handle(C.ExportRecording())
    session.handle(C.WriteReport())
    log = settle(session)
    assert [m for m in log if m == ("warning", NO_RECORDING)] == [("warning", NO_RECORDING)] * 2
    assert session.publish().reports.export_source is None
    assert not list(tmp_path.rglob("*.csv")) and not list(tmp_path.rglob("*.html"))


def test_the_last_recording_exports_to_csv_that_reads_back_equal(session: Session, tmp_path: Path) -> None:
    rec = tmp_path / "runs" / "run.parquet"
    df = record(session, rec)
    assert session.publish().reports.export_source == str(rec)
    session.handle(C.ExportRecording())  # csv beside it
    log = settle(session)
    out = tmp_path / "runs" / "run.csv"
    assert said(log, f"exported {df.height} rows of run.parquet to {out}"), log
    back = pl.read_csv(out)
    back = back.rename({h: re.sub(r" \[[^\]]*\]$", "", h) for h in back.columns})  # "time [s]": units in the header
    assert back.columns == df.columns and back.height == df.height == 150
    assert_frame_equal(back, df, check_dtypes=False)
    # again: a free name, the first file stays
    before = out.read_bytes()
    session.handle(C.ExportRecording(fmt="csv"))
    log = settle(session)
    assert said(log, f"exported 150 rows of run.parquet to {tmp_path / 'runs' / 'run-2.csv'}"), log
    assert out.read_bytes() == before
    # a name the user chose (and confirmed in the dialog) is replaced; the format follows it
    mine = tmp_path / "mine.mat"
    mine.write_text("old")
    session.handle(C.ExportRecording(str(mine)))
    log = settle(session)
    assert said(log, f"exported 150 rows of run.parquet to {mine}"), log
    from scipy.io import loadmat

    data = loadmat(mine)["mjrig"]["data"][0, 0]
    assert data.shape == (150, df.width)
    np.testing.assert_array_equal(data[:, 0], df["time"].to_numpy())


def test_a_name_of_another_format_or_an_unknown_one_is_refused(session: Session, tmp_path: Path) -> None:
    record(session, tmp_path / "run.parquet", n=5)
    with pytest.raises(ConfigError, match=r"name the file \.csv, \.mat, \.mcap"):
        session.handle(C.ExportRecording(str(tmp_path / "out.txt")))
    with pytest.raises(ConfigError, match=r"a csv file is named \.csv, got 'out\.mat'"):
        session.handle(C.ExportRecording(str(tmp_path / "out.mat"), fmt="csv"))
    with pytest.raises(ConfigError, match="unknown format 'xlsx'"):
        session.handle(C.ExportRecording(fmt="xlsx"))
    with pytest.raises(ConfigError, match="name it .html"):
        session.handle(C.WriteReport(str(tmp_path / "r.pdf")))


def test_an_export_asked_for_right_after_stop_waits_for_the_file(session: Session, tmp_path: Path) -> None:
    rec = tmp_path / "run.parquet"
    session.handle(C.StartRecording(str(rec)))
    steps(session, 80)
    session.handle(C.StopRecording())  # its file is finished on a background job
    session.handle(C.ExportRecording(fmt="mcap"))  # not lost: it runs when the file is complete
    log = settle(session)
    assert said(log, f"exported 80 rows of run.parquet to {tmp_path / 'run.mcap'}"), log
    assert (tmp_path / "run.mcap").stat().st_size > 0
    # named (as the dialog names the recording it proposed): waits the same
    session.handle(C.StartRecording(str(tmp_path / "next.parquet")))
    steps(session, 20)
    session.handle(C.StopRecording())
    session.handle(C.WriteReport(str(tmp_path / "next report.html"), source=str(tmp_path / "next.parquet")))
    log = settle(session)
    assert said(log, f"report written: {tmp_path / 'next report.html'}"), log


def test_while_recording_the_last_finished_one_is_exported_or_the_log_says_stop_first(
    session: Session, tmp_path: Path
) -> None:
    session.handle(C.StartRecording(str(tmp_path / "first.parquet")))
    steps(session, 10)
    session.handle(C.ExportRecording())
    log = settle(session)
    assert said(log, "export: first.parquet is still being recorded: stop the recording first", "warning"), log
    assert not (tmp_path / "first.csv").exists()
    session.handle(C.StopRecording())
    settle(session)
    session.handle(C.StartRecording(str(tmp_path / "second.parquet")))
    steps(session, 10)
    session.handle(C.ExportRecording())
    log = settle(session)
    assert said(log, f"exported 10 rows of first.parquet to {tmp_path / 'first.csv'}"), log
    assert any("second.parquet is still being recorded" in text for _, text in log)
    with pytest.raises(ConfigError, match="still being recorded"):
        session.handle(C.ExportRecording(source=str(tmp_path / "second.parquet")))


def test_a_report_of_the_last_recording_and_of_the_one_replayed(session: Session, tmp_path: Path) -> None:
    first = tmp_path / "first.parquet"
    record(session, first, n=50)
    other = tmp_path / "other.parquet"
    record(session, other, n=30)
    session.handle(C.WriteReport())
    log = settle(session)
    assert said(log, f"report written: {tmp_path / 'other.html'}"), log
    assert "<html" in (tmp_path / "other.html").read_text()
    session.open(first)  # replayed: that one is "the current recording"
    assert session.publish().reports.export_source == str(first)
    session.handle(C.WriteReport())
    session.handle(C.ExportRecording())
    log = settle(session)
    assert said(log, f"report written: {tmp_path / 'first.html'}"), log
    assert said(log, f"exported 50 rows of first.parquet to {tmp_path / 'first.csv'}"), log


def test_the_plotted_signals_saved_as_a_picture(session: Session, tmp_path: Path) -> None:
    t = np.linspace(0.0, 1.0, 101)
    traces = (Trace("Joints/shoulder:qpos", "rad", t, np.sin(t)), Trace("Loads/f:fx", "N", t, np.cos(t)))
    session.handle(C.SavePlot(str(tmp_path / "plot.png"), traces=traces))
    session.handle(C.SavePlot(traces=traces[:1]))  # a timestamped PNG in runs/
    session.handle(C.SavePlot(str(tmp_path / "plot.svg"), traces=()))
    log = settle(session)
    assert said(log, f"plot saved: {tmp_path / 'plot.png'} (2 signals)"), log
    assert (tmp_path / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(list((tmp_path / "runs").glob("plot-*.png"))) == 1
    assert said(log, "no signal is plotted: tick signals in the plots' tree first", "warning")
    assert not (tmp_path / "plot.svg").exists()
    with pytest.raises(ConfigError, match=r"\.png, \.svg or \.pdf"):
        session.handle(C.SavePlot(str(tmp_path / "plot.jpg"), traces=traces))


def test_a_sweeps_results_report(session: Session, tmp_path: Path) -> None:
    from mjrig.campaign.sweep import run_sweep
    from mjrig.scenario.parse import load_scenario
    from tests.sweep_util import write_scenario

    grid = "[sweep]\n[sweep.params]\nk = { values = [100.0, 400.0] }\n"
    results = tmp_path / "sweep" / "RESULTS.parquet"
    results.parent.mkdir()
    run_sweep(load_scenario(write_scenario(results.parent, grid)), out=results, workers=1, duration=0.1)
    session.handle(C.WriteReport(source=str(results)))
    log = settle(session)
    assert said(log, f"report written: {results.with_suffix('.html')}"), log
    assert "RESULTS.parquet" in results.with_suffix(".html").read_text()
