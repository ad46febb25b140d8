"""Every solver's seeded fit gives back its recorded coefficients and report (see RELATIVE)."""

import json
import warnings

import numpy as np
import pytest

from dpglm.exceptions import PrivacyLeakWarning
from golden_fits import CASES, FIXTURES, outcome

RECORDED = json.loads(FIXTURES.read_text())
#: relative difference a coefficient or a reported number may show: the accountants'
#: numerics (dp-accounting's, SciPy's root finders) move a calibrated noise scale, and with
#: it the coefficients, by up to a few hundred units in the last place from one release
#: of those libraries to the next (seen: 418 ULP, 2e-14); any change of what a fit
#: computes moves far more
RELATIVE = 1e-10


def assert_close(got, want, where="report"):
    """``got == want``, floats within :data:`RELATIVE` of each other, everything else equal."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), where
        for key in want:
            assert_close(got[key], want[key], f"{where}[{key!r}]")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            assert_close(a, b, f"{where}[{i}]")
    elif isinstance(want, float) and not isinstance(got, bool):
        assert got == pytest.approx(want, rel=RELATIVE, abs=0.0, nan_ok=True), where
    else:
        assert got == want, where


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fit_gives_back_the_recorded_one(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        got = outcome(CASES[name]())
    want = RECORDED[name]
    # the same arithmetic, to the last bits that numba's compilation and the accountants'
    # numerics decide (a kernel compiled fresh and one loaded from its cache may contract a
    # multiply-add differently)
    got_theta = np.array([float.fromhex(v) for v in got["theta"]])
    want_theta = np.array([float.fromhex(v) for v in want["theta"]])
    scale = RELATIVE * max(np.abs(want_theta).max(initial=0.0), 1e-300)
    np.testing.assert_allclose(got_theta, want_theta, rtol=RELATIVE, atol=scale)
    assert_close(got["report"], want["report"])
