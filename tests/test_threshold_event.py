"""The threshold event: a fixed delta per application, taken off the plan's delta.

A plan of Gaussian releases plus threshold events costs, under every
accountant, the Gaussian releases' epsilon at ``delta`` minus the thresholds'
fixed delta (basic composition of approximate DP), and ``inf`` when nothing
remains; calibration never scales the event and gives the Gaussian part the
rest of delta; the event round-trips through JSON, the budget composes it, and
the report lists it with its delta and recomputes with dp-accounting.
"""

import json
import math

import pytest

from dpglm.exceptions import BudgetExceededError, CalibrationError, PlanError
from dpglm.privacy.accounting import account, compute_epsilon, fixed_delta
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.calibration import calibrate
from dpglm.privacy.events import (
    GaussianEvent,
    LaplaceEvent,
    PrivacyPlan,
    RepeatAndSelectEvent,
    ThresholdEvent,
    event_from_dict,
)
from dpglm.privacy.report import PrivacyReport

GAUSSIAN = GaussianEvent(noise_multiplier=3.0, count=5, sensitivity=2.0, part="preprocessing")
THRESHOLD = ThresholdEvent(delta=2e-7, count=2, label="rare values", part="preprocessing")
DELTA = 1e-6
#: the accountants that support a plan of non-subsampled Gaussian releases
GAUSSIAN_ACCOUNTANTS = ("gdp", "pld", "rdp", "zcdp", "auto")


@pytest.mark.parametrize("accountant", GAUSSIAN_ACCOUNTANTS)
def test_epsilon_is_the_gaussian_part_at_delta_minus_the_fixed_part(accountant):
    plan = PrivacyPlan([GAUSSIAN, THRESHOLD])
    alone = PrivacyPlan([GAUSSIAN])
    rest = DELTA - 2 * 2e-7
    assert fixed_delta(plan) == pytest.approx(4e-7, rel=1e-15)
    eps = compute_epsilon(plan, DELTA, accountant)
    assert eps == pytest.approx(compute_epsilon(alone, rest, accountant), rel=1e-12)
    # the fixed part is paid: less delta is left, so epsilon is larger than without it
    assert eps > compute_epsilon(alone, DELTA, accountant) * 1.001


@pytest.mark.parametrize("accountant", GAUSSIAN_ACCOUNTANTS)
def test_delta_at_or_below_the_fixed_part_gives_infinite_epsilon(accountant):
    plan = PrivacyPlan([GAUSSIAN, THRESHOLD])
    assert compute_epsilon(plan, 4e-7, accountant) == math.inf
    assert compute_epsilon(plan, 1e-7, accountant) == math.inf
    assert math.isfinite(compute_epsilon(plan, 5e-7, accountant))


def test_threshold_events_alone_cost_no_epsilon_above_their_delta():
    plan = PrivacyPlan([THRESHOLD])
    assert compute_epsilon(plan, DELTA) == 0.0
    assert compute_epsilon(plan, 4e-7) == math.inf
    assert compute_epsilon(plan, 0.0) == math.inf
    # an event applied zero times, or of delta 0, costs nothing
    free = PrivacyPlan([ThresholdEvent(delta=0.1, count=0), ThresholdEvent(delta=0.0)])
    assert fixed_delta(free) == 0.0 and compute_epsilon(free, 0.0) == 0.0


def test_pure_dp_accountants_compose_the_fixed_delta_too():
    plan = PrivacyPlan([LaplaceEvent(noise_multiplier=2.0, count=3), THRESHOLD])
    assert compute_epsilon(plan, DELTA, "basic") == pytest.approx(1.5)
    assert compute_epsilon(plan, 4e-7, "basic") == math.inf
    advanced = compute_epsilon(plan, DELTA, "advanced")
    assert advanced == pytest.approx(
        compute_epsilon(PrivacyPlan(plan.events[:1]), DELTA - 4e-7, "advanced"), rel=1e-12
    )


def test_the_event_is_never_scaled():
    plan = PrivacyPlan([GAUSSIAN, THRESHOLD])
    assert not THRESHOLD.scalable and THRESHOLD.scaled(7.0) == THRESHOLD
    assert plan.scaled(7.0).events[1] == THRESHOLD
    assert plan.scaled(7.0).events[0].noise_multiplier == 21.0
    assert not PrivacyPlan([THRESHOLD]).scalable


@pytest.mark.parametrize("accountant", ["gdp", "zcdp", "auto"])
def test_calibration_gives_the_gaussian_part_the_rest_of_delta(accountant):
    threshold = ThresholdEvent(delta=5e-7, part="preprocessing")
    template = PrivacyPlan([GaussianEvent(noise_multiplier=1.0, count=10), threshold])
    result = calibrate(template, 1.0, 1e-6, accountant)
    gaussian, kept = result.plan.events
    assert kept == threshold
    assert result.delta == 1e-6
    assert result.epsilon <= 1.0
    own = compute_epsilon(PrivacyPlan([gaussian]), 5e-7, accountant)
    assert own <= 1.0 and own == pytest.approx(1.0, rel=1e-3)
    assert compute_epsilon(result.plan, 1e-6, accountant) == pytest.approx(own, rel=1e-12)
    # calibrated at the full delta it would have needed less noise: the fixed part is paid
    plain = calibrate(PrivacyPlan(template.events[:1]), 1.0, 1e-6, accountant)
    assert plain.plan.events[0].noise_multiplier < gaussian.noise_multiplier / 1.001


def test_calibration_refuses_a_delta_the_threshold_takes_whole():
    template = PrivacyPlan([GaussianEvent(noise_multiplier=1.0), ThresholdEvent(delta=1e-6)])
    with pytest.raises(CalibrationError, match=r"threshold events cost delta=1e-06"):
        calibrate(template, 1.0, 1e-6)
    with pytest.raises(CalibrationError, match="delta must be > 0"):
        calibrate(template, 1.0, 0.0)
    # infinite epsilon: no noise at all, whatever the delta
    assert calibrate(template, math.inf, 1e-6).plan.events[0].noise_multiplier == 0.0


def test_json_round_trip():
    plan = PrivacyPlan([GAUSSIAN, THRESHOLD])
    text = json.dumps(plan.to_dict())
    assert PrivacyPlan.from_dict(json.loads(text)) == plan
    data = THRESHOLD.to_dict()
    assert data["kind"] == "threshold" and data["delta"] == 2e-7 and data["count"] == 2
    assert event_from_dict(data) == THRESHOLD
    assert isinstance(event_from_dict({"kind": "threshold", "delta": 0}).delta, float)


@pytest.mark.parametrize("bad", [1.0, -1e-9, float("nan"), "1e-6", True, None])
def test_a_delta_outside_zero_one_is_refused(bad):
    with pytest.raises(PlanError, match="delta must be a number in"):
        ThresholdEvent(delta=bad)


def test_dp_accounting_has_no_event_for_it():
    with pytest.raises(NotImplementedError, match="fixed delta"):
        THRESHOLD.to_dp_event()


def test_a_repeat_and_select_search_cannot_hold_one():
    with pytest.raises(PlanError, match="threshold event"):
        RepeatAndSelectEvent(inner=PrivacyPlan([GAUSSIAN, THRESHOLD]), mean=3.0)


def test_the_budget_composes_the_fixed_delta():
    budget = PrivacyBudget(6.0, 1e-6)
    plan = PrivacyPlan([GAUSSIAN, THRESHOLD])
    budget.charge(plan, label="selection")
    assert budget.spent() == pytest.approx(compute_epsilon(plan, 1e-6))
    # a second charge leaves 2e-7 of delta for the Gaussian releases: allowed only if it fits
    second = PrivacyPlan([GaussianEvent(noise_multiplier=300.0), THRESHOLD])
    budget.charge(second)
    assert budget.spent() == pytest.approx(compute_epsilon(plan + second, 1e-6))
    with pytest.raises(BudgetExceededError):
        budget.charge(PrivacyPlan([ThresholdEvent(delta=2e-7)]))
    assert len(budget.charges) == 2


def test_the_report_lists_it_with_its_delta_and_recomputes():
    from dp_accounting.pld import privacy_loss_distribution as pld

    plan = PrivacyPlan([GAUSSIAN, THRESHOLD])
    report = PrivacyReport.from_plan(plan, DELTA)
    (record,) = [m for m in report.mechanisms if m.kind == "threshold"]
    assert record.details == {"delta": 2e-7} and record.count == 2
    assert record.noise_multiplier is None and record.part == "preprocessing"
    text = str(report)
    assert "2 x threshold [rare values]; delta 2e-07" in text
    assert PrivacyReport.from_json(report.to_json()) == report
    # dp-accounting, from the report alone: the Gaussian releases at delta minus the
    # thresholds' delta
    gaussian = next(m for m in report.mechanisms if m.kind == "gaussian")
    composed = pld.from_gaussian_mechanism(gaussian.noise_scale / gaussian.sensitivity)
    composed = composed.self_compose(gaussian.count)
    fixed = sum(m.details["delta"] * m.count for m in report.mechanisms if m.kind == "threshold")
    recomputed = composed.get_epsilon_for_delta(report.delta - fixed)
    assert report.epsilon == pytest.approx(recomputed, rel=2e-3)
    assert report.parts == {"preprocessing": report.epsilon}
    # accounted at the full delta, as if the threshold were free, the figure would be lower
    assert composed.get_epsilon_for_delta(report.delta) < report.epsilon / 1.001


def test_auto_accounting_of_a_threshold_plan_names_the_accountant():
    result = account(PrivacyPlan([GAUSSIAN, THRESHOLD]), DELTA)
    assert result.accountant == "gdp" and result.by_accountant == {"gdp": result.epsilon}
    assert account(PrivacyPlan([GAUSSIAN, THRESHOLD]), 4e-7).epsilon == math.inf
