"""verification.stats.weighted_slope: the estimator behind a trend on a fitted slope (Prop.
III.2's RMS deviation in ln D): exact on a line, its standard error the WLS one, bad input named."""

from __future__ import annotations

import numpy as np
import pytest

from verification.stats import NaNInEvidence, weighted_slope


def test_exact_on_a_line_and_its_standard_error_scales_with_the_errors():
    x = np.log([100, 200, 400, 800])
    slope, se = weighted_slope(x, 2.0 - 0.5 * x, [0.1] * 4)
    assert slope == pytest.approx(-0.5) and se > 0
    assert weighted_slope(x, 2.0 - 0.5 * x, [0.2] * 4)[1] == pytest.approx(2 * se)


def test_matches_numpy_polyfit_with_weights():
    rng = np.random.default_rng(0)
    x, se = np.linspace(0, 3, 6), rng.uniform(0.05, 0.2, 6)
    y = 1 + 0.3 * x + rng.normal(0, se)
    want = np.polyfit(x, y, 1, w=1 / se)[0]
    assert weighted_slope(x, y, se)[0] == pytest.approx(want, rel=1e-10)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="weighted_slope: needs ≥ 2 points"):
        weighted_slope([1.0], [1.0], [0.1])
    with pytest.raises(ValueError, match="weighted_slope: needs ≥ 2 points"):
        weighted_slope([1.0, 2.0], [1.0, 2.0], [0.1, 0.0])
    with pytest.raises(NaNInEvidence):
        weighted_slope([1.0, 2.0], [1.0, np.nan], [0.1, 0.1])
