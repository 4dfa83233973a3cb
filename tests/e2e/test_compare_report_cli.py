"""`mjrig compare A B --report OUT.html` as a user runs it, on real recordings of the bundled
spring-mass (k = 200 N/m against k = 201 N/m, 0.5 s; its joints only: the report draws a figure
per signal, and the 37 of every group took over the 120 s allowed on a slow machine): exit 4
with the report written all the same (an explicit OUT already there is replaced), the stdout
lines as without it, one line naming the report; the first time outside A's band in the page is
the one numpy finds in the two files; A made from a scenario with `[[measured]]` bench data gets
the measured section; an OUT naming A or B is bad input (exit 2, one line, A untouched)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from e2e_util import copy_rig, mjrig

Q = "Joints/slide_x:qpos"
RTOL, ATOL = 1e-6, 1e-9  # mjrig compare's defaults
T1 = 0.3
"""s: the bench departs from A from here on."""


def first_outside(t: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """The contract's first time outside A's band (rtol·|A| + atol), worked out here."""
    return float(t[np.flatnonzero(np.abs(b - a) > RTOL * np.abs(a) + ATOL)[0]])


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """A (k = 200, with a bench entry of its own motion, off by 10 mm/s after T1) and B (k = 201)."""
    folder = tmp_path_factory.mktemp("compare_report")
    rig = copy_rig("spring_mass", folder / "rig")
    head, recording = rig.read_text(encoding="utf-8").split("[recording]")
    recording, n = re.subn(r"(?m)^signals = \[.*\]$", 'signals = ["joints"]', recording, count=1)
    assert n == 1, "the bundled rig's [recording] changed"
    rig.write_text(f"{head}[recording]{recording}", encoding="utf-8")
    plain, b = folder / "plain.parquet", folder / "B.parquet"
    for out, extra in ((plain, ()), (b, ("--set", "k=201"))):
        r = mjrig("run", rig, "--duration", 0.5, "--out", out, *extra)
        assert r.rc == 0, r
    own = pl.read_parquet(plain, columns=["time", Q])[::3]  # every third sample, each exactly A's
    t, x = own["time"].to_numpy(), own[Q].to_numpy()
    bench = x + np.where(t >= T1, (t - T1) * 0.01, 0.0)
    (rig.parent / "bench.csv").write_text(
        "t,x\n" + "".join(f"{ti!r},{xi!r}\n" for ti, xi in zip(t.tolist(), bench.tolist())), encoding="utf-8"
    )
    entry = '\n[[measured]]\nname = "bench"\nfile = "bench.csv"\ntime = "t"\n[measured.signals]\n'
    rig.write_text(rig.read_text(encoding="utf-8") + entry + f'"{Q}" = {{ column = "x", unit = "m" }}\n')
    a = folder / "A.parquet"
    r = mjrig("run", rig, "--duration", 0.5, "--out", a)
    assert r.rc == 0, r
    return {"a": a, "b": b, "bench_t": t, "bench_x": bench}


def test_a_difference_exits_4_with_the_report_written(runs, tmp_path: Path):
    out = tmp_path / "cmp.html"
    out.write_text("an older report", encoding="utf-8")  # explicit: replaced
    r = mjrig("compare", runs["a"], runs["b"], "--report", out)
    assert r.rc == 4, r
    plain = mjrig("compare", runs["a"], runs["b"])
    assert r.stdout == plain.stdout  # the lines a script reads, as without --report
    assert r.err_lines[-1] == f"wrote the comparison report of A.parquet and B.parquet to {out}", r
    html = out.read_text(encoding="utf-8")
    assert "A.parquet" in html and "B.parquet" in html and "Traceback" not in r.stderr
    a, b = pl.read_parquet(runs["a"]), pl.read_parquet(runs["b"])
    assert a["time"].to_list() == b["time"].to_list()  # one time base: no interpolation
    expected = first_outside(a["time"].to_numpy(), a[Q].to_numpy(), b[Q].to_numpy())
    row = re.search(rf"<td class=\"mono\">{re.escape(Q)}</td>(.*?)</tr>", html, re.S)
    assert row is not None and f">{expected:.6g}</td>" in row.group(1) and "FAIL" in row.group(1)
    assert f"first outside the band at t = {expected:.6g} s" in html
    # A's bench entry: compared with A at the bench's times, in its own section
    section = html[html.index('<section id="measured">') :]
    t, x = runs["bench_t"], runs["bench_x"]
    measured = first_outside(t, np.interp(t, a["time"].to_numpy(), a[Q].to_numpy()), x)
    assert T1 <= measured < T1 + 0.01
    assert "bench" in section and f"first outside the band at t = {measured:.6g} s" in section


def test_a_report_naming_a_or_b_is_bad_input(runs):
    before = runs["a"].read_bytes()
    for given, what in ((runs["a"], "recording A"), (runs["b"], "recording B")):
        r = mjrig("compare", runs["a"], runs["b"], "--report", given)
        assert r.rc == 2 and len(r.err_lines) == 1 and "Traceback" not in r.stderr + r.stdout, r
        assert what in r.err_lines[0] and str(given) in r.err_lines[0] and r.stdout == "", r
    assert runs["a"].read_bytes() == before
    r = mjrig("compare", runs["a"], runs["b"], "--report", runs["a"].with_suffix(".txt"))
    assert r.rc == 2 and len(r.err_lines) == 1 and "name it .html" in r.stderr, r
