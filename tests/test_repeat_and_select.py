"""Repeat-and-select events: dp-accounting agreement, refusals, round trips, the report."""

import json
import math

import pytest

from dpglm.exceptions import BudgetExceededError, PlanError, UnsupportedPlanError
from dpglm.privacy.accounting import ACCOUNTANTS, account, get_accountant, valid_accountants
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.calibration import calibrate
from dpglm.privacy.events import (
    GaussianEvent,
    LaplaceEvent,
    NoisyMaxEvent,
    NonPrivateEvent,
    PrivacyPlan,
    RepeatAndSelectEvent,
    SampledGaussianEvent,
    event_from_dict,
)
from dpglm.privacy.report import PrivacyReport

BASE = PrivacyPlan(
    [
        GaussianEvent(noise_multiplier=40.0, count=200, sensitivity=0.001, label="fit"),
        LaplaceEvent(noise_multiplier=5.0, sensitivity=0.002, label="score"),
    ]
)


def search(base=BASE, mean=10.0, shape=math.inf, count=1):
    return PrivacyPlan(
        [RepeatAndSelectEvent(inner=base, mean=mean, shape=shape, count=count)],
        base.neighbouring,
    )


def dp_accounting_epsilon(events, delta, relation):
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    accountant = RdpAccountant(
        neighboring_relation=getattr(dp_accounting.NeighboringRelation, relation)
    )
    for event in events:
        accountant.compose(event)
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize("shape", [math.inf, 0.0, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("mean", [1.0, 5.0, 40.0])
def test_accounting_agrees_with_dp_accounting(mean, shape):
    from dp_accounting import ComposedDpEvent, GaussianDpEvent, LaplaceDpEvent, dp_event

    plan = search(mean=mean, shape=shape)
    direct = dp_event.RepeatAndSelectDpEvent(
        ComposedDpEvent(
            [dp_event.SelfComposedDpEvent(GaussianDpEvent(40.0), 200), LaplaceDpEvent(5.0)]
        ),
        mean,
        shape,
    )
    expected = dp_accounting_epsilon([direct], 1e-6, "REPLACE_ONE")
    result = account(plan, 1e-6)
    assert result.accountant == "rdp" and result.by_accountant == {"rdp": result.epsilon}
    assert result.epsilon == pytest.approx(expected, rel=1e-12)
    # and the event converts to exactly that dp-accounting event
    assert plan.events[0].to_dp_event().mean == mean
    assert plan.events[0].to_dp_event().shape == shape


def test_the_search_costs_more_than_one_run_and_grows_with_the_mean():
    one = account(BASE, 1e-6, "rdp").epsilon
    costs = [account(search(mean=m), 1e-6).epsilon for m in (1.0, 3.0, 10.0, 100.0)]
    assert one < costs[0] and costs == sorted(costs)


def test_composes_with_other_events_and_with_itself():
    from dp_accounting import GaussianDpEvent

    other = GaussianEvent(noise_multiplier=20.0, count=50)
    plan = PrivacyPlan([other, *search(count=2).events])
    direct = [
        other.to_dp_event(),
        search().events[0].to_dp_event(),
        search().events[0].to_dp_event(),
    ]
    assert account(plan, 1e-6).epsilon == pytest.approx(
        dp_accounting_epsilon(direct, 1e-6, "REPLACE_ONE"), rel=1e-12
    )
    assert direct[0].event == GaussianDpEvent(20.0)


def test_add_remove_base_with_poisson_sampling():
    base = PrivacyPlan(
        [SampledGaussianEvent(noise_multiplier=1.1, sampling_rate=0.01, count=500)],
        "add_remove",
    )
    plan = search(base, mean=5.0, shape=1.0)
    expected = dp_accounting_epsilon([plan.events[0].to_dp_event()], 1e-6, "ADD_OR_REMOVE_ONE")
    assert account(plan, 1e-6).epsilon == pytest.approx(expected, rel=1e-12)
    with pytest.raises(PlanError, match="add_remove base plan cannot be part of a replace_one"):
        PrivacyPlan([RepeatAndSelectEvent(inner=base, mean=5.0)], "replace_one")


def test_only_the_rdp_accountant_accounts_it():
    plan = search()
    assert valid_accountants(plan) == ["rdp"]
    for name in ACCOUNTANTS:
        if name == "rdp":
            continue
        assert not get_accountant(name).supports(plan)
        with pytest.raises(UnsupportedPlanError, match="only the 'rdp' accountant"):
            account(plan, 1e-6, name)
    # even a base plan that other accountants handle, e.g. pure DP
    pure = search(PrivacyPlan([LaplaceEvent(noise_multiplier=10.0, count=3)]))
    assert valid_accountants(pure) == ["rdp"]
    # a budget composing with another accountant refuses to charge it
    budget = PrivacyBudget(10.0, 1e-6, accountant="gdp")
    with pytest.raises(UnsupportedPlanError):
        budget.charge(plan, label="search")
    assert budget.charges == ()


def test_budget_charges_it_with_the_rdp_accountant():
    budget = PrivacyBudget(10.0, 1e-6)
    budget.charge(search(), label="search")
    assert budget.spent() == pytest.approx(account(search(), 1e-6).epsilon)
    small = PrivacyBudget(0.5, 1e-6)
    with pytest.raises(BudgetExceededError):
        small.charge(search(), label="search")


def test_degenerate_base_plans():
    free = PrivacyPlan([GaussianEvent(noise_multiplier=math.inf, count=10)])
    assert account(search(free), 1e-6).epsilon == 0.0
    leaky = PrivacyPlan([NonPrivateEvent(label="raw"), LaplaceEvent(noise_multiplier=1.0)])
    assert account(search(leaky), 1e-6).epsilon == math.inf
    # an inactive part of the base plan does not change the bound
    mixed = PrivacyPlan([*BASE.events, GaussianEvent(noise_multiplier=math.inf, count=5)])
    assert account(search(mixed), 1e-6).epsilon == pytest.approx(account(search(), 1e-6).epsilon)


def test_scaling_and_calibration_scale_the_base_plan():
    event = search().events[0]
    assert event.scaled(2.0).inner == BASE.scaled(2.0)
    assert search().scalable
    fixed = PrivacyPlan([LaplaceEvent(noise_multiplier=5.0, fixed=True)])
    assert not search(fixed).scalable
    result = calibrate(search(), 2.0, 1e-6)
    assert result.accountant == "rdp"
    assert 2.0 * (1 - 1e-3) <= result.epsilon <= 2.0
    assert result.plan.events[0].inner.events[0].noise_multiplier > 40.0


def test_dict_round_trip():
    event = RepeatAndSelectEvent(inner=BASE, mean=7.5, shape=0.5, label="search")
    data = event.to_dict()
    assert data["kind"] == "repeat_and_select" and data["inner"] == BASE.to_dict()
    assert event_from_dict(data) == event
    poisson = search()
    assert PrivacyPlan.from_dict(json.loads(json.dumps(poisson.to_dict()))) == poisson
    # "inf" written as a string is read back
    data = poisson.events[0].to_dict()
    data["shape"] = "inf"
    assert event_from_dict(data) == poisson.events[0]
    # a sequence of events becomes a replace-one base plan
    assert RepeatAndSelectEvent(inner=list(BASE.events), mean=2.0).inner == BASE


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"mean": 0.5}, "mean must be a finite number >= 1"),
        ({"mean": math.inf}, "mean must be a finite number >= 1"),
        ({"mean": math.nan}, "mean must be a finite number >= 1"),
        ({"mean": 2.0, "shape": -1.0}, "shape must be a number >= 0"),
        ({"mean": 2.0, "shape": math.nan}, "shape must be a number >= 0"),
        ({"mean": "ten"}, "mean must be a number"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(PlanError, match=match):
        RepeatAndSelectEvent(inner=BASE, **kwargs)


def test_bad_base_plan():
    with pytest.raises(PlanError, match="inner must be a PrivacyPlan"):
        RepeatAndSelectEvent(inner=3, mean=2.0)
    with pytest.raises(PlanError, match="a plan holds Event objects"):
        RepeatAndSelectEvent(inner=["gaussian"], mean=2.0)


def test_distribution_names():
    names = [
        RepeatAndSelectEvent(inner=BASE, mean=3.0, shape=s).distribution
        for s in (math.inf, 0.0, 1.0, 2.5)
    ]
    assert names == ["poisson", "logarithmic", "geometric", "truncated negative binomial"]


def test_report_shows_the_search_and_round_trips():
    base = PrivacyPlan([*BASE.events, NoisyMaxEvent(noise_multiplier=80.0, count=3)])
    plan = PrivacyPlan(
        [RepeatAndSelectEvent(inner=base, mean=10.0, label="hyperparameter search")]
    )
    report = PrivacyReport.from_plan(plan, 1e-6, assumptions=["only the best run released"])
    assert report.accountant == "rdp" and report.epsilon == account(plan, 1e-6).epsilon
    assert report.parts == {"hyperparameter search": report.epsilon}
    (record,) = report.mechanisms
    assert record.kind == "repeat_and_select" and record.noise_multiplier is None
    details = record.details
    assert details["distribution"] == "poisson"
    assert details["mean"] == 10.0 and details["shape"] == math.inf
    inner = details["inner"]
    assert [m["kind"] for m in inner] == ["gaussian", "laplace", "noisy_max"]
    assert inner[0]["count"] == 200 and inner[0]["noise_scale"] == pytest.approx(0.04)
    assert inner[1]["details"]["epsilon"] == pytest.approx(0.2)
    text = report.to_json()
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard constant {c}"))
    assert PrivacyReport.from_json(text) == report
    shown = str(report)
    assert "repeat_and_select [hyperparameter search]; distribution poisson" in shown
    assert "each run, of which only the best is released:" in shown
    assert "200 x gaussian [fit], noise multiplier 40" in shown
