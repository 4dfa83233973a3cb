"""The comparison report (``mjrig compare A B --report``) on two synthetic recordings whose
difference is known: B follows A until t0 = 0.37 s and then drifts away linearly. The first time
outside A's band (rtol·|A| + atol) is worked out here with numpy, independently of the module,
and read back from the page and from the values it was drawn from; a B within the band shows
"within"; the verdict follows A's band (not B's); A's ``[[measured]]`` series get their own
section, compared at the measured samples' times."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mjrig.exports import compare_report
from mjrig.exports.compare_report import comparison_context, write_comparison_report
from mjrig.recordings.compare import compare_recordings
from mjrig.scenario.measured import MEASURED_KEY

pytestmark = pytest.mark.unit

T = np.round(np.arange(0.0, 1.0, 0.001), 9)  # A's time base, s
T0 = 0.37
Q, H = "Joints/slide:qpos", "Joints/hinge:qpos"
RTOL, ATOL = 1e-3, 1e-6


def motion(t: np.ndarray) -> np.ndarray:
    """A's position (m): a slow swing about 5 cm."""
    return 0.05 + 0.1 * np.sin(2 * np.pi * t)


def drift(t: np.ndarray, rate: float = 0.02) -> np.ndarray:
    """B - A (m): nothing until T0, then ``rate`` m/s."""
    return np.where(t >= T0, (t - T0) * rate, 0.0)


def recording(path: Path, t: np.ndarray, columns: dict[str, np.ndarray], **metadata: str) -> Path:
    """An mjrig-like recording: ``time``, the columns, their units and the given metadata."""
    meta = {"mjrig.units": json.dumps({Q: "m", H: "rad"}), "mjrig.model_path": "/rigs/slide.xml", **metadata}
    table = pa.table({"time": t, **columns}).replace_schema_metadata(meta)
    pq.write_table(table, path)
    return path


def first_outside(t: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """The contract's first time outside A's band, worked out here."""
    return float(t[np.flatnonzero(np.abs(b - a) > RTOL * np.abs(a) + ATOL)[0]])


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    a = motion(T)
    rec_a = recording(tmp_path / "run_a.parquet", T, {Q: a, H: 3 * T}, **{"mjrig.model_sha256": "aa11"})
    # B on its own, coarser time base (2 ms), interpolated at A's times: the ramp H exactly
    tb = np.round(np.arange(0.0, 1.0 + 1e-9, 0.002), 9)
    rec_b = recording(tmp_path / "run_b.parquet", tb, {Q: motion(tb) + drift(tb), H: 3 * tb})
    return rec_a, rec_b


def test_the_first_time_outside_the_band_is_the_first_sample_numpy_finds(pair, tmp_path):
    rec_a, rec_b = pair
    tb = np.round(np.arange(0.0, 1.0 + 1e-9, 0.002), 9)
    b_at_a = np.interp(T, tb, motion(tb) + drift(tb))
    expected = first_outside(T, motion(T), b_at_a)
    assert T0 < expected < T0 + 0.05  # the drift needs a few samples to leave a band of ~1e-4 m
    out = write_comparison_report(rec_a, rec_b, out=tmp_path / "cmp.html", rtol=RTOL, atol=ATOL)
    html = out.read_text(encoding="utf-8")
    ctx = comparison_context(rec_a, rec_b, rtol=RTOL, atol=ATOL)
    row = next(r for r in ctx["rows"] if r["name"] == Q)
    assert row["first_outside"] == expected and not row["within"]
    d = np.abs(b_at_a - motion(T))
    assert row["max_abs"] == pytest.approx(d.max(), rel=1e-12) and row["time"] == T[d.argmax()]
    # the table row and the figure's caption, as a reader sees them
    cells = re.search(rf"<td class=\"mono\">{re.escape(Q)}</td>(.*?)</tr>", html, re.S)
    assert cells is not None and f">{expected:.6g}</td>" in cells.group(1) and "FAIL" in cells.group(1)
    assert f"first outside the band at t = {expected:.6g} s" in html
    # the other signal is the same in both: within, drawn after the failing one
    other = next(r for r in ctx["rows"] if r["name"] == H)
    assert other["within"] and other["first_outside"] is None and other["max_abs"] < 1e-12
    assert [r["name"] for r in ctx["rows"]] == [Q, H] and [f["row"]["name"] for f in ctx["figures"]] == [Q, H]
    assert "run_a.parquet" in html and "run_b.parquet" in html and "aa11" in html
    assert html.count("data:image/png;base64,") == 2 and "<script" not in html
    # the verdict mjrig compare prints is the report's
    verdict = compare_recordings(rec_a, rec_b, rtol=RTOL, atol=ATOL)
    assert {s.name: s.first_outside for s in verdict.signals} == {Q: expected, H: None}


def test_a_b_inside_the_band_is_within(tmp_path):
    a = motion(T)
    wiggle = 0.5 * (RTOL * np.abs(a) + ATOL) * np.sin(40 * T)  # half the band at most
    rec_a = recording(tmp_path / "a.parquet", T, {Q: a})
    rec_b = recording(tmp_path / "b.parquet", T, {Q: a + wiggle})
    out = write_comparison_report(rec_a, rec_b, out=tmp_path / "r.html", rtol=RTOL, atol=ATOL)
    html = out.read_text(encoding="utf-8")
    (row,) = comparison_context(rec_a, rec_b, rtol=RTOL, atol=ATOL)["rows"]
    assert row["within"] and row["first_outside"] is None
    assert row["max_abs"] == pytest.approx(np.abs(wiggle).max(), rel=1e-9)
    cells = re.search(rf"<td class=\"mono\">{re.escape(Q)}</td>(.*?)</tr>", html, re.S)
    assert cells is not None and ">within</td>" in cells.group(1) and ">ok<" in cells.group(1)
    assert (
        "within the band everywhere" in html and "first outside the band at" not in html and "within tolerance" in html
    )


def test_the_band_is_a_s_magnitude_not_b_s(tmp_path):
    """rtol 0.5, atol 0: A = 1 and B = 1.6 differ by 0.6, past A's band (0.5) and inside B's (0.8)."""
    t = np.array([0.0, 0.1, 0.2])
    one = recording(tmp_path / "one.parquet", t, {Q: np.ones(3)})
    more = recording(tmp_path / "more.parquet", t, {Q: np.array([1.0, 1.0, 1.6])})
    forward = compare_recordings(one, more, rtol=0.5, atol=0.0)
    backward = compare_recordings(more, one, rtol=0.5, atol=0.0)
    assert not forward.within and forward.signals[0].first_outside == 0.2
    assert backward.within  # |1 - 1.6| = 0.6 <= 0.5 * 1.6
    (row,) = comparison_context(one, more, rtol=0.5, atol=0.0)["rows"]
    assert row["first_outside"] == 0.2


def test_many_signals_draw_the_failing_ones_first_and_say_how_many_more(tmp_path, monkeypatch):
    monkeypatch.setattr(compare_report, "MAX_FIGURES", 3)  # the cap, small: 3 figures, not 40
    a = motion(T)
    names = [f"Joints/j{i:02d}:qpos" for i in range(8)]
    bad = {names[-1], names[-3]}  # the last columns: drawn first all the same
    rec_a = recording(tmp_path / "a.parquet", T, {n: a for n in names})
    rec_b = recording(tmp_path / "b.parquet", T, {n: a + drift(T) if n in bad else a for n in names})
    ticks: list[tuple[int, int]] = []
    ctx = comparison_context(rec_a, rec_b, rtol=RTOL, atol=ATOL, progress=lambda d, n: ticks.append((d, n)))
    drawn = [f["row"]["name"] for f in ctx["figures"]]
    assert drawn == [names[-3], names[-1], names[0]] and ctx["more"] == 5
    assert [r["name"] for r in ctx["rows"]] == drawn[:2] + names[:-3] + [names[-2]]
    assert ticks == [(1, 3), (2, 3), (3, 3)]
    html = write_comparison_report(rec_a, rec_b, out=tmp_path / "r.html", rtol=RTOL, atol=ATOL).read_text()
    assert "5 more signals are in the table only" in html and html.count("data:image/png;base64,") == 3


def test_measured_entries_of_a_are_compared_with_a_in_their_own_section(pair, tmp_path):
    rec_a, rec_b = pair
    # the bench: every 3 ms from 0.5 ms (between A's samples), a missing sample, off A after 0.6 s
    tm = np.round(np.arange(0.0005, 1.2, 0.003), 9)
    xm = motion(tm) + np.where(tm >= 0.6, (tm - 0.6) * 0.05, 0.0)
    xm[10] = np.nan
    kept = [{"name": "bench", "file": "bench.csv", "signals": {Q: {"column": "x", "unit": "m", "scale": 1.0}}}]
    kept[0]["signals"][Q].update(t=tm.tolist(), x=[None if np.isnan(v) else v for v in xm])
    a = motion(T)
    with_bench = recording(tmp_path / "bench_run.parquet", T, {Q: a, H: 3 * T}, **{MEASURED_KEY: json.dumps(kept)})
    ctx = comparison_context(with_bench, rec_b, rtol=RTOL, atol=ATOL)
    (row,) = ctx["measured_rows"]
    # independently: the samples inside A's span with a value, A interpolated there
    keep = np.isfinite(xm) & (tm <= T[-1])
    at, ref = tm[keep], np.interp(tm[keep], T, a)
    assert row["samples"] == keep.sum() and row["entry"] == "bench"
    assert row["first_outside"] == first_outside(at, ref, xm[keep])
    assert row["max_abs"] == pytest.approx(np.abs(xm[keep] - ref).max(), rel=1e-9)
    html = write_comparison_report(with_bench, rec_b, out=tmp_path / "m.html", rtol=RTOL, atol=ATOL).read_text()
    section = html[html.index('<section id="measured">') :]
    assert "bench" in section and f"first outside the band at t = {row['first_outside']:.6g} s" in section
    assert section.count("data:image/png;base64,") == 1
    # A without bench data: no such section
    assert 'id="measured"' not in write_comparison_report(rec_a, rec_b, out=tmp_path / "n.html").read_text()


def test_the_session_writes_the_comparison_report_under_a_free_name(open_session, tmp_path, monkeypatch):
    """What the timeline's "Report" submits (WriteReport with ``compared``): the report of A and B
    beside A under a free name, off the simulation thread, the log naming the file."""
    from mjrig import commands as C

    monkeypatch.setattr(compare_report, "MAX_FIGURES", 2)  # the slider's signal first (failing, in file order)
    s = open_session(Path(__file__).resolve().parents[2] / "models" / "spring_mass.toml")
    try:
        s.handle(C.WriteReport(compared=str(tmp_path / "B.parquet")))  # live, nothing recorded: no A yet
        assert any(lvl == "warning" and "A is a recording of this run" in m for lvl, m in s.publish().messages)
        recs = {}
        for name, k in (("A", 200.0), ("B", 120.0)):
            s.handle(C.Reset())
            s.handle(C.SetParam("k", k))
            s.handle(C.StartRecording(str(tmp_path / f"{name}.parquet")))
            s.handle(C.StepOnce(400))
            s.handle(C.StopRecording())
            s.outputs.jobs.join()
            recs[name] = pq.read_table(tmp_path / f"{name}.parquet", columns=["time", "Joints/slide_x:qpos"])
        (tmp_path / "A-vs-B.html").write_text("an older report", encoding="utf-8")
        s.handle(C.WriteReport(source=str(tmp_path / "A.parquet"), compared=str(tmp_path / "B.parquet")))
        s.reports.jobs.join()
        out = tmp_path / "A-vs-B-2.html"
        assert ("info", f"comparison report written: {out}") in s.publish().messages
    finally:
        s.close()
    assert (tmp_path / "A-vs-B.html").read_text(encoding="utf-8") == "an older report"
    (ta, xa), (tb, xb) = ([c.to_numpy() for c in recs[n].columns] for n in ("A", "B"))
    html = out.read_text(encoding="utf-8")
    expected = float(ta[np.flatnonzero(np.abs(np.interp(ta, tb, xb) - xa) > 1e-6 * np.abs(xa) + 1e-9)[0]])
    assert f"first outside the band at t = {expected:.6g} s" in html and "B.parquet" in html


def test_only_the_times_both_cover_are_compared_and_the_rest_is_shaded(tmp_path):
    """B stops at 0.6 s where A runs on to 1 s, and follows A exactly while it runs: within
    tolerance (held at its last value, B would be outside from 0.6 s on), the rest said in one
    line and shaded grey in the report; a B that leaves A's band before it stops is outside."""
    rec_a = recording(tmp_path / "long.parquet", T, {Q: motion(T), H: 3 * T})
    tb = T[T <= 0.6 + 1e-9]
    rec_b = recording(tmp_path / "short.parquet", tb, {Q: motion(tb), H: 3 * tb})
    diff = compare_recordings(rec_a, rec_b, rtol=RTOL, atol=ATOL)
    assert diff.within and diff.compared == (0.0, 0.6)
    assert diff.coverage == "not compared: 0.6..0.999 s (only in long.parquet); compared on 0..0.6 s"
    assert all(d.first_outside is None for d in diff.signals)
    swapped = compare_recordings(rec_b, rec_a, rtol=RTOL, atol=ATOL)  # B the longer one: the same overlap
    assert (
        swapped.within and swapped.coverage == "not compared: 0.6..0.999 s (only in long.parquet); compared on 0..0.6 s"
    )
    out = write_comparison_report(rec_a, rec_b, out=tmp_path / "cmp.html", rtol=RTOL, atol=ATOL)
    page = out.read_text(encoding="utf-8")
    assert "within tolerance" in page and "not compared: 0.6..0.999 s" in page and "shaded grey" in page
    late = recording(tmp_path / "late.parquet", tb, {Q: motion(tb) + drift(tb), H: 3 * tb})
    off = compare_recordings(rec_a, late, rtol=RTOL, atol=ATOL)
    by_name = {d.name: d for d in off.signals}
    assert not off.within and by_name[Q].first_outside == pytest.approx(
        first_outside(tb, motion(tb), motion(tb) + drift(tb))
    )
    with pytest.raises(Exception, match="no time in common"):
        apart = recording(tmp_path / "apart.parquet", T + 5.0, {Q: motion(T), H: 3 * T})
        compare_recordings(rec_a, apart)
