"""Every solver's seeded fit gives back its recorded coefficients and report (see MAX_ULP)."""

import json
import warnings

import numpy as np
import pytest

from dpglm.exceptions import PrivacyLeakWarning
from golden_fits import CASES, FIXTURES, outcome

RECORDED = json.loads(FIXTURES.read_text())
#: units in the last place a coefficient may differ by (seen: up to 12)
MAX_ULP = 64


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fit_is_bit_identical_to_the_recorded_one(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        got = outcome(CASES[name]())
    want = RECORDED[name]
    # the same arithmetic, to the last bits that numba's compilation decides: a kernel
    # compiled fresh and one loaded from its cache may contract a multiply-add differently
    # (a few units in the last place); any change of what a fit computes moves far more
    got_theta = np.array([float.fromhex(v) for v in got["theta"]])
    want_theta = np.array([float.fromhex(v) for v in want["theta"]])
    np.testing.assert_array_max_ulp(got_theta, want_theta, maxulp=MAX_ULP)
    assert got["report"] == want["report"]
