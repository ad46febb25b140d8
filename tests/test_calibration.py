"""Calibration: the least noise that meets a target, never over it."""

import math

import pytest

from dpglm.exceptions import CalibrationError
from dpglm.privacy.accounting import account, valid_accountants
from dpglm.privacy.calibration import calibrate
from dpglm.privacy.events import (
    GaussianEvent,
    LaplaceEvent,
    NoisyMaxEvent,
    PrivacyPlan,
    PureDPEvent,
    SampledGaussianEvent,
    ZCDPEvent,
)

RTOL = 1e-4

PLANS = {
    "dp-cd: 2000 gaussian coordinate steps": PrivacyPlan(
        [GaussianEvent(noise_multiplier=1.0, count=2000)]
    ),
    "dp-gcd tight: gumbel selection + gaussian update": PrivacyPlan(
        [
            NoisyMaxEvent(noise_multiplier=2.0, count=30, noise="gumbel"),
            GaussianEvent(noise_multiplier=1.0, count=30),
        ]
    ),
    "dp-gcd paper: laplace selection + laplace update": PrivacyPlan(
        [
            NoisyMaxEvent(noise_multiplier=2.0, count=20, noise="laplace"),
            LaplaceEvent(noise_multiplier=1.0, count=20),
        ]
    ),
    "dp-sgd: poisson sampled": PrivacyPlan(
        [SampledGaussianEvent(noise_multiplier=1.0, sampling_rate=0.02, count=500)]
    ),
    "poisson sampled, add/remove": PrivacyPlan(
        [SampledGaussianEvent(noise_multiplier=1.0, sampling_rate=0.02, count=500)],
        neighbouring="add_remove",
    ),
    "dp-scd: without replacement": PrivacyPlan(
        [
            SampledGaussianEvent(
                noise_multiplier=1.0,
                sampling="without_replacement",
                dataset_size=5000,
                batch_size=100,
                count=300,
            )
        ]
    ),
    "with a fixed cost": PrivacyPlan(
        [
            PureDPEvent(epsilon=0.1, part="estimation"),
            GaussianEvent(noise_multiplier=1.0, count=50),
        ]
    ),
}
TARGETS = [(0.5, 1e-6), (1.0, 1e-5), (4.0, 1e-8)]


@pytest.mark.parametrize("name", list(PLANS))
@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_calibrated_plan_never_exceeds_the_target_and_is_minimal(name, target):
    plan = PLANS[name]
    eps, delta = target
    result = calibrate(plan, eps, delta, rtol=RTOL)
    # re-accounted independently, with the chosen accountant and with "auto"
    again = account(result.plan, delta, result.accountant).epsilon
    assert again == result.epsilon
    assert again <= eps
    assert account(result.plan, delta).epsilon <= eps
    # minimal: a little less noise (beyond the tolerance) breaks the target
    assert account(plan.scaled(result.scale / (1 + 2 * RTOL)), delta).epsilon > eps
    # the multipliers are the template's times one factor
    for old, new in zip(plan.events, result.plan.events, strict=True):
        if hasattr(old, "noise_multiplier"):
            assert new.noise_multiplier == pytest.approx(old.noise_multiplier * result.scale)
        else:
            assert new == old


@pytest.mark.parametrize("name", ["dp-gcd tight: gumbel selection + gaussian update"])
def test_auto_needs_no_more_noise_than_any_single_accountant(name):
    plan = PLANS[name]
    auto = calibrate(plan, 1.0, 1e-6)
    for accountant in valid_accountants(plan):
        single = calibrate(plan, 1.0, 1e-6, accountant)
        assert single.epsilon <= 1.0
        # each search stops within its relative tolerance (1e-4) of its own least noise
        assert auto.scale <= single.scale * (1 + 1e-4)


def test_epsilon_infinity_means_no_noise():
    result = calibrate(PLANS["dp-cd: 2000 gaussian coordinate steps"], math.inf, 1e-6)
    assert result.epsilon == math.inf and result.scale == 0.0
    assert all(e.noise_multiplier == 0.0 for e in result.plan.events)
    assert account(result.plan, 1e-6).epsilon == math.inf


def test_fixed_costs_over_the_target_cannot_be_calibrated():
    plan = PrivacyPlan([ZCDPEvent(rho=2.0), GaussianEvent(noise_multiplier=1.0, count=10)])
    with pytest.raises(CalibrationError, match="fixed costs exceed the target"):
        calibrate(plan, 1.0, 1e-6)
    with pytest.raises(CalibrationError, match="no noise to calibrate"):
        calibrate(PrivacyPlan([PureDPEvent(epsilon=2.0)]), 1.0, 1e-6)
    # one 0.5-DP release costs a little less than 0.5 at delta > 0 (randomized response's curve)
    exact = math.log(math.exp(0.5) - 1e-6 * (1 + math.exp(0.5)))
    fixed = calibrate(PrivacyPlan([PureDPEvent(epsilon=0.5)]), 1.0, 1e-6).epsilon
    assert exact <= fixed <= exact + 1e-9


def test_bad_targets_are_refused():
    plan = PLANS["dp-cd: 2000 gaussian coordinate steps"]
    with pytest.raises(ValueError, match="epsilon must be positive"):
        calibrate(plan, 0.0, 1e-6)
    with pytest.raises(ValueError, match=r"delta must lie in \[0, 1\)"):
        calibrate(plan, 1.0, 1.5)
    with pytest.raises(ValueError, match="unknown accountant"):
        calibrate(plan, 1.0, 1e-6, accountant="moments")


def test_calibration_matches_the_analytic_gaussian():
    """One release at epsilon 1, delta 1e-5: sigma = 3.7306 (Balle and Wang 2018)."""
    from dp_accounting import get_sigma_gaussian

    result = calibrate(PrivacyPlan([GaussianEvent(noise_multiplier=1.0)]), 1.0, 1e-5)
    sigma = get_sigma_gaussian(1.0, 1e-5)
    assert sigma <= result.scale <= sigma * (1 + RTOL)
