"""``mjrig.exports.junit`` on rows a sweep cannot easily be made to give in a test (a trial that
diverged or ended in an error, a window that saw nothing): what each case holds and the counts a
CI server reads (``junitparser``)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from junitparser import Error, Failure, JUnitXml, Properties

from mjrig.exports.junit import junit_element, requirement_cases, sweep_cases
from mjrig.runtime.analysis.requirements import Requirement


def _row(trial: int, status: str, verdict: bool | None, value: float | None, message: str | None = None) -> dict:
    return {
        "trial": trial,
        "seed": 7,
        "Params/k:value": 100.0 * (trial + 1),
        "Params/n:value": trial,
        "status": status,
        "message": message,
        "Requirements/travel:pass": verdict,
        "Requirements/travel:value": value,
    }


def test_sweep_rows_of_every_status():
    travel = Requirement(name="travel", signal="Joints/slide_x:qpos", min=-0.15)
    rows = [
        _row(0, "pass", True, -0.1),
        _row(1, "fail", False, -0.2),
        _row(2, "fail", False, None),
        _row(3, "diverged", True, -0.1, "physics diverged at t=0.3 s"),
        _row(4, "error", None, None, "recording: disk\nfull"),
    ]
    cases = sweep_cases(rows, [travel], classname="rig", units={"Requirements/travel:value": "m"})
    assert [c.name for c in cases] == [f"trial {i}: travel" for i in range(5)]
    assert cases[0].failure is None and cases[0].error is None
    assert cases[0].properties == (("k", "100.0"), ("n", "0"))
    assert cases[1].failure == "failed: Joints/slide_x:qpos reached -0.2 m, below its min -0.15 m"
    assert cases[2].failure == "Joints/slide_x:qpos: nothing observed in its window"
    assert cases[3].error == "trial 3 diverged: physics diverged at t=0.3 s"
    assert cases[4].error == "trial 4 ended in an error: recording: disk full"
    xml = JUnitXml.fromstring(ET.tostring(junit_element(cases, suite="mjrig sweep rig", seconds=5.0)))
    (suite,) = list(xml)
    assert (suite.tests, suite.failures, suite.errors, suite.time) == (5, 2, 2, 5.0)
    kinds = [type(c.result[0]).__name__ if c.result else "passed" for c in suite]
    assert kinds == ["passed", "Failure", "Failure", "Error", "Error"]
    assert all(c.time == 1.0 for c in suite)
    assert [(p.name, p.value) for p in next(iter(suite)).child(Properties)] == [("k", "100.0"), ("n", "0")]


def test_a_run_that_stopped_errs_only_where_the_window_was_open():
    """``early`` closed at 0.2 s and passed; ``late`` was open when the run stopped at 0.3 s;
    ``low`` failed at 0.1 s (its failure stands)."""
    early = Requirement(name="early", signal="x", max=1.0, end=0.2)
    late = Requirement(name="late", signal="x", max=1.0)
    low = Requirement(name="low", signal="x", min=0.0)
    for r in (early, late, low):
        r.arm(0.1)
        for i, v in enumerate((0.5, -0.25, 0.5, 0.75)):
            r.update(round(0.1 * i, 9), v)
    assert early.decided and not late.decided and not low.passed
    cases = requirement_cases([early, late, low], classname="rig", unfinished="diverged", undecided={"late", "low"})
    assert cases[0].failure is None and cases[0].error is None
    assert cases[1].error == "not decided: diverged"
    assert cases[2].failure == "x = -0.25 at t = 0.1 s, below its min 0"
    root = junit_element(cases, suite="s", seconds=0.3)
    (suite,) = list(JUnitXml.fromstring(ET.tostring(root)))
    results = [c.result for c in suite]
    assert results[0] == [] and isinstance(results[1][0], Error) and isinstance(results[2][0], Failure)
    assert results[2][0].type == "requirement"
