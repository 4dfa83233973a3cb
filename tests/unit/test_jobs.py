"""Long jobs can be stopped: a fit stops at its next evaluation when cancelled, a job that never
looks is abandoned (its result dropped, its thread not waited for at exit), while a recording being
finished is always waited for. Through ``BackgroundJobs`` and the session's commands (what the run
bar's Cancel submits). The fit test runs a fit for about a second."""

from __future__ import annotations

import threading
import time

import pytest

from mjrig import commands as C
from mjrig.session.jobs import ABANDON_S, BackgroundJobs, Cancelled, Job, abandoned
from tests.unit.test_measured import CSV_ENTRY, K, csv_bench, scenario
from tests.waiting import wait_for

pytestmark = pytest.mark.unit


def _outcomes(jobs: BackgroundJobs, seen: list) -> list:
    """``seen`` once the jobs' ends (``finish``, as the session calls it) have added to it."""
    return wait_for(lambda: jobs.finish() or seen, what="a job's outcome", timeout=10)


def test_a_stepping_job_stops_at_its_next_step_and_says_cancelled():
    jobs, seen, steps = BackgroundJobs(), [], []
    job = Job("a loop")

    def work() -> int:
        for i in range(10_000):
            job.step(i / 10_000, note=f"{i} rounds")
            steps.append(i)
            time.sleep(0.001)
        return 1

    jobs.start("loop", work, lambda r, e: seen.append((r, e)), job=job)
    wait_for(lambda: len(steps) >= 5, what="five rounds of the loop", every=0.005)
    assert [j.what for j in jobs.running()] == ["a loop"] and job.note.endswith("rounds")
    jobs.cancel()
    assert jobs.running() == ()  # at once, before the work has noticed
    ((result, error),) = _outcomes(jobs, seen)
    assert result is None and isinstance(error, Cancelled) and len(steps) < 10_000


def test_a_job_that_never_looks_is_abandoned_and_a_plain_one_is_waited_for():
    jobs, seen = BackgroundJobs(), []
    release = threading.Event()
    jobs.start("deaf", lambda: release.wait(30) and 5, lambda r, e: seen.append(("deaf", r, e)), job=Job("deaf"))
    jobs.start("plain", lambda: time.sleep(0.3) or 7, lambda r, e: seen.append(("plain", r, e)))
    jobs.cancel()
    t0 = time.monotonic()
    jobs.join()
    waited = time.monotonic() - t0
    assert 0.3 <= waited < 0.3 + ABANDON_S + 1.0, waited  # the plain one in full, the deaf one not
    assert ("plain", 7, None) in seen and not any(s[0] == "deaf" for s in seen)
    assert abandoned()  # still running: the process is to end without teardown (mjrig.entry)
    release.set()
    deaf = wait_for(
        lambda: jobs.finish() or next((s for s in seen if s[0] == "deaf"), None),
        what="the deaf job's outcome",
        timeout=10,
    )
    assert deaf[1] is None and isinstance(deaf[2], Cancelled)  # its result is dropped
    wait_for(lambda: not abandoned(), what="the deaf job's thread to end")


def test_cancel_stops_a_fit_in_the_app_and_the_panel_stops_waiting(tmp_path, open_session):
    csv_bench(tmp_path, duration=20.0)  # a long bench: an evaluation simulates 20 s
    s = open_session(scenario(tmp_path, CSV_ENTRY, k=0.8 * K))
    try:
        s.handle(C.RunFit((("k", 1.0, 5000.0, False), ("c", 0.001, 100.0, False))))
        jobs = wait_for(lambda: s.publish().jobs, what="the fit under way", timeout=60)
        assert [j.what for j in jobs] == ["a fit"]
        wait_for(lambda: s.publish().jobs[0].note, what="an evaluation done", timeout=60)
        s.handle(C.CancelJobs())
        assert s.publish().jobs == ()
        wait_for(lambda: (f := s.publish().bench.fit) is None or not f.running, what="the fit to stop", timeout=30)
        fit = s.publish().bench.fit
        assert fit is not None and not fit.running and fit.error == "cancelled", fit
        assert any("fit cancelled after" in text for _, text in s.publish().messages)
    finally:
        s.close()
