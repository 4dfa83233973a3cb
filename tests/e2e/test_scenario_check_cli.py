"""`mjrig check` on broken scenario files, as a process: exit 2 and one line naming the file, never a
traceback (the documents come from the fuzzers of tests/long/test_scenario_fuzz.py)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from tests.e2e.e2e_util import mjrig
from tests.long import test_scenario_fuzz
from tests.long.test_scenario_fuzz import (
    ANY,
    BUNDLED,
    FINITE,
    MODELS,
    NAME,
    NONNEG,
    ODD_POINTS,
    ROOT,
    dumps,
    fuzz,
)

tmp_dir = test_scenario_fuzz.tmp_dir
"""The fuzzers' module-scoped folder: a fixture the tests below take."""


def _breaks(draw: st.DrawFn) -> tuple[dict | None, bytes | None]:
    """A bundled scenario (model made absolute) with one edit that is certain to be rejected."""
    name = draw(st.sampled_from(sorted(BUNDLED)))
    doc = tomllib.loads(BUNDLED[name])
    doc["model"] = str(MODELS / doc["model"])
    how = draw(
        st.sampled_from(
            ["number", "kind", "key", "vector", "site", "camera", "syntax", "bytes", "model", "negative", "profile"]
        )
    )
    odd = draw(st.one_of(NAME, ODD_POINTS, st.sampled_from(["a\nb", "a\u2028b", "x\r\ny", "é\x1b[31m"])))
    if how == "number":
        doc.setdefault("simulation", {})["duration"] = draw(
            st.one_of(st.text(max_size=10), st.booleans(), st.lists(FINITE, max_size=2))
        )
    elif how == "kind":
        doc.setdefault("loads", [{"name": "x", "at": "s"}])[0]["kind"] = "nosuch " + odd
    elif how == "key":
        doc[f"nosuch {odd}"] = draw(ANY)
    elif how == "vector":
        doc["loads"] = [
            {"name": "v", "kind": "force", "at": "body:world", "vector": draw(st.lists(FINITE, max_size=2))}
        ]
    elif how == "site":  # rejected only against the compiled model (Scenario.check_model)
        doc["loads"] = [{"name": "s", "kind": "force", "at": "nosuch " + odd.replace("geom:", ""), "vector": [0, 0, 1]}]
    elif how == "camera":
        doc["video"] = {"path": "out.mp4", "camera": "nosuch " + odd}
    elif how == "syntax":
        return None, (
            dumps(doc) + draw(st.sampled_from(["[[loads]", "x = ", "= 1", "a = [1,", '"\n', "[video]\n"]))
        ).encode()
    elif how == "bytes":
        return None, dumps(doc).encode() + draw(st.sampled_from([b"\xff", b"\xc3(", b"\x80abc"]))
    elif how == "model":
        doc["model"] = "nosuch/" + odd + ".xml"
    elif how == "negative":
        doc.setdefault("simulation", {})["duration"] = -draw(NONNEG)
    else:
        doc["loads"] = [{"name": "p", "kind": "scalar_force", "at": "s", "magnitude": {"profile": odd}}]
    return doc, None


@fuzz(10)
@given(st.data())
def test_mjrig_check_on_broken_files(tmp_dir: Path, data: st.DataObject) -> None:
    doc, raw = _breaks(data.draw)
    path = tmp_dir / "broken.toml"
    path.write_bytes(raw if raw is not None else dumps(doc).encode("utf-8"))
    proc = mjrig("check", path, cwd=ROOT, timeout=60)
    note(proc.stderr)
    assert proc.rc == 2, (proc.rc, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and proc.stderr.endswith("\n"), proc.stderr
    assert lines[0].startswith(f"mjrig: {path}"), lines[0]


@pytest.mark.parametrize(
    "table, stem",
    [("recording", "a" * 300), ("video", "a" * 300), ("recording", "x\n" + "a" * 300)],
    ids=["recording", "video", "recording-with-newline"],
)
def test_mjrig_check_with_an_over_long_output_name(tmp_dir: Path, table: str, stem: str) -> None:
    doc = {
        "model": str(MODELS / "spring_mass.xml"),
        table: {"path": stem + (".parquet" if table == "recording" else ".mp4")},
    }
    path = tmp_dir / f"long-{table}.toml"
    path.write_text(dumps(doc), encoding="utf-8")
    proc = mjrig("check", path, cwd=ROOT, timeout=60)
    assert proc.rc == 2 and "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1, proc.stderr
