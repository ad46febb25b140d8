"""Every solver's seeded fit gives back its recorded coefficients and report, bit for bit."""

import json
import warnings

import pytest

from dpglm.exceptions import PrivacyLeakWarning
from golden_fits import CASES, FIXTURES, outcome

RECORDED = json.loads(FIXTURES.read_text())


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fit_is_bit_identical_to_the_recorded_one(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        got = outcome(CASES[name]())
    want = RECORDED[name]
    assert got["theta"] == want["theta"]
    assert got["report"] == want["report"]
