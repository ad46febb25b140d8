"""The privacy report: contents, JSON round trip, readable text, leak collection."""

import json
import math
import warnings

import pytest

from dpglm.exceptions import PrivacyLeakWarning
from dpglm.privacy.accounting import account
from dpglm.privacy.events import (
    GaussianEvent,
    LaplaceEvent,
    NoisyMaxEvent,
    NonPrivateEvent,
    PrivacyPlan,
    SampledGaussianEvent,
)
from dpglm.privacy.leaks import warn_privacy_leak
from dpglm.privacy.report import PrivacyReport, collect_privacy_warnings

PLAN = PrivacyPlan(
    [
        LaplaceEvent(
            noise_multiplier=20.0, count=5, sensitivity=0.01, part="smoothness estimation",
            label="clipped squared features",
        ),
        NoisyMaxEvent(
            noise_multiplier=300.0, count=40, noise="gumbel", sensitivity=0.002,
            label="coordinate selection",
        ),
        GaussianEvent(
            noise_multiplier=25.0, count=40, sensitivity=0.002, label="coordinate update"
        ),
    ]
)  # fmt: skip


def test_report_states_the_guarantee_and_each_mechanism():
    report = PrivacyReport.from_plan(
        PLAN, 1e-6, assumptions=["feature bounds supplied by the user"], secure=True
    )
    total = account(PLAN, 1e-6)
    assert report.epsilon == total.epsilon and report.accountant == total.accountant
    assert report.epsilon_by_accountant == total.by_accountant
    assert report.neighbouring == "replace_one" and report.delta == 1e-6
    assert [m.count for m in report.mechanisms] == [5, 40, 40]
    laplace, selection, update = report.mechanisms
    assert laplace.noise_scale == pytest.approx(20.0 * 0.01)
    assert selection.details["noise"] == "gumbel"
    assert selection.details["epsilon"] == pytest.approx(2 / 300)
    assert update.noise_scale == pytest.approx(25.0 * 0.002)
    # each part on its own, the whole composed
    assert set(report.parts) == {"smoothness estimation", "training"}
    assert report.parts["smoothness estimation"] == pytest.approx(5 / 20.0, rel=1e-3)
    assert max(report.parts.values()) < report.epsilon < sum(report.parts.values()) + 1e-9
    assert report.guarantee and not report.non_private and report.secure


def test_json_round_trip_is_standard_json():
    report = PrivacyReport.from_plan(PLAN, 1e-6, assumptions=["a"], warnings=["b"])
    text = report.to_json()
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard constant {c}"))
    assert PrivacyReport.from_json(text) == report
    assert PrivacyReport.from_dict(report.to_dict()) == report


def test_non_private_report_round_trips_and_says_so():
    plan = PrivacyPlan([NonPrivateEvent(label="non-private fit (epsilon=inf)"), LaplaceEvent(
        noise_multiplier=1.0, label="inf")])  # fmt: skip
    report = PrivacyReport.from_plan(plan, 1e-6)
    assert report.epsilon == math.inf and report.non_private and not report.guarantee
    assert report.accountant == "none"
    back = PrivacyReport.from_json(report.to_json())
    assert back == report
    # a label that reads "inf" stays a string
    assert back.mechanisms[1].label == "inf"
    assert str(report).startswith("NOT PRIVATE")


def test_readable_text_names_the_essentials():
    report = PrivacyReport.from_plan(
        PLAN, 1e-6, assumptions=["feature bounds supplied by the user"], warnings=["M_j leaked"]
    )
    text = str(report)
    assert f"({report.epsilon:.4g}, 1e-06)-differentially private" in text
    assert "replace-one neighbours" in text
    assert "does NOT hold" in text
    assert "smoothness estimation: epsilon" in text
    assert "40 x noisy_max [coordinate selection]" in text
    assert "feature bounds supplied by the user" in text and "M_j leaked" in text


def test_sampling_details_are_reported():
    plan = PrivacyPlan(
        [
            SampledGaussianEvent(
                noise_multiplier=1.0,
                sampling="without_replacement",
                dataset_size=1000,
                batch_size=10,
                count=5,
            )
        ]
    )
    details = PrivacyReport.from_plan(plan, 1e-5).mechanisms[0].details
    assert details == {
        "sampling": "without_replacement",
        "sampling_rate": 0.01,
        "batch_size": 10,
        "dataset_size": 1000,
    }


def test_leaks_are_collected_and_still_shown():
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with collect_privacy_warnings() as leaks:
            warn_privacy_leak("smoothness from raw data")
            warnings.warn("unrelated", UserWarning, stacklevel=1)
    assert leaks == ["smoothness from raw data"]
    assert [str(w.message) for w in shown] == ["smoothness from raw data", "unrelated"]
    assert shown[0].category is PrivacyLeakWarning


def test_leaks_are_collected_whatever_the_warning_filters():
    # the record does not go through the warnings module: "ignore" hides, never loses
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("ignore")
        with collect_privacy_warnings() as outer:
            with collect_privacy_warnings(show=False) as inner:
                warn_privacy_leak("inner")
            warn_privacy_leak("outer")
    assert inner == ["inner"] and outer == ["inner", "outer"] and shown == []
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with collect_privacy_warnings(show=False) as quiet:
            warn_privacy_leak("quiet")
        warn_privacy_leak("no collector")
    assert quiet == ["quiet"] and [str(w.message) for w in shown] == ["no collector"]
