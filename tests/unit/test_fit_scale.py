"""A fit's scaling of its params: log-scaled params on their log, linear ones as they are, and a
linear param whose bounds straddle 0 scaled without a numpy warning reaching the terminal (it
used to take the log of its negative bound ratio). Instant."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from mjrig.campaign.fit_estimate import Scale

pytestmark = pytest.mark.unit


def test_a_linear_param_straddling_zero_beside_a_log_one_scales_quietly() -> None:
    scale = Scale(["offset", "k"], np.array([-1.0, 1.0]), np.array([2.0, 100.0]), np.array([False, True]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any RuntimeWarning fails the test
        slope = scale.slope({"offset": 0.5, "k": 10.0})
        mid = scale.values(np.array([0.5, 0.5]))
        back = scale.scaled({"offset": 0.5, "k": 10.0})
    assert slope[0] == 3.0  # d offset / d u: its range
    assert slope[1] == pytest.approx(10.0 * np.log(100.0), rel=1e-12)  # d k / d u = k ln(high / low)
    assert mid["offset"] == 0.5 and mid["k"] == pytest.approx(10.0, rel=1e-12)  # the geometric middle
    np.testing.assert_allclose(back, [0.5, 0.5], rtol=1e-12)
