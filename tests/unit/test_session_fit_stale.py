"""A fit run in the app belongs to the model it was made on: after the model file is read again
(a reload) it stays shown, marked stale, and its estimate is no longer applied; another rig starts
without it. Through the session's commands (what the Fit section's buttons submit). Runs one fit
of k on a 2 s decay (about 3 s)."""

from __future__ import annotations

import pytest

from mjrig import commands as C
from mjrig.runtime.errors import ConfigError
from mjrig.session.kernel import Session
from tests.unit.test_measured import CSV_ENTRY, K, csv_bench, scenario
from tests.waiting import wait_for


def _fitted(s: Session) -> C.FitProgress:
    """The fit's progress once it has ended."""
    return wait_for(
        lambda: (fit := s.publish().bench.fit) is not None and not fit.running and fit,
        what="the fit to end",
        timeout=60,
    )


def test_a_reload_marks_the_fit_stale_and_its_estimate_is_not_applied(tmp_path, open_session):
    csv_bench(tmp_path)
    s = open_session(scenario(tmp_path, CSV_ENTRY, k=0.8 * K))  # the rig's spring softer than the bench's
    try:
        s.handle(C.RunFit((("k", 1.0, 5000.0, False),)))
        fit = _fitted(s)
        assert fit.error == "" and not fit.stale
        assert fit.summary["estimate"]["k"] == pytest.approx(K, rel=1e-3)
        s.handle(C.Reload(changed="model"))
        stale = s.publish().bench.fit
        assert stale is not None and stale.stale and stale.summary == fit.summary  # still shown
        with pytest.raises(ConfigError, match="before the model changed"):
            s.handle(C.UseEstimate())
        assert next(p.value for p in s.publish().entries.params if p.name == "k") == pytest.approx(0.8 * K)
        s.handle(C.OpenModel(str(scenario(tmp_path, CSV_ENTRY, k=K)), discard=True))
        assert s.publish().bench.fit is None
    finally:
        s.close()


def test_the_fit_section_starts_from_the_scenarios_fit_and_another_rig_from_its_own(tmp_path, open_session):
    """The scenario's ``[fit]`` params (bounds in the params' units, log scales) are what the Fit
    section starts from; a rig without ``[fit]`` offers none."""
    csv_bench(tmp_path)
    fit = "[fit]\nparams = { k = { low = 50.0, high = 2000.0 }, c = { low = 0.01, high = 50.0, log = true } }\n"
    s = open_session(scenario(tmp_path, CSV_ENTRY, extra=fit))
    try:
        assert s.publish().bench.planned == (("k", 50.0, 2000.0, False), ("c", 0.01, 50.0, True))
        plain = tmp_path / "plain"
        plain.mkdir()
        (plain / "bench.csv").write_text((tmp_path / "bench.csv").read_text())
        s.handle(C.OpenModel(str(scenario(plain, CSV_ENTRY)), discard=True))
        assert s.publish().bench.planned == ()
    finally:
        s.close()
