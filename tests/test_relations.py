"""Neighbouring relations: replace-one Poisson sampling, and pure DP under either relation."""

import math

import mpmath
import numpy as np
import pytest

from dpglm.exceptions import BudgetExceededError
from dpglm.privacy.accounting import account, compute_epsilon
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.events import (
    LaplaceEvent,
    NoisyMaxEvent,
    PrivacyPlan,
    PureDPEvent,
    RepeatAndSelectEvent,
    SampledGaussianEvent,
)
from dpglm.privacy.rdp_curves import poisson_replace_one_rdp, pure_dp_rdp


def poisson(z, q, count, relation="replace_one"):
    event = SampledGaussianEvent(noise_multiplier=z, sampling_rate=q, count=count)
    return PrivacyPlan([event], relation)


def pld_replace_one(std, q, count, delta):
    """dp-accounting's own PLD of the replace-one Poisson Gaussian, per-record shift 1."""
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as pld

    one = pld.from_gaussian_mechanism(
        std,
        sensitivity=1.0,
        sampling_prob=q,
        value_discretization_interval=1e-4,
        neighboring_relation=NeighboringRelation.REPLACE_ONE,
    )
    return one.self_compose(count).get_epsilon_for_delta(delta)


def test_the_default_dp_sgd_noise_under_add_remove_is_worth_two_under_replace_one():
    """The issue's numbers: noise calibrated to (1, 4e-8) for add/remove neighbours.

    z = 3.65 per record (add/remove sensitivity C), q = 0.05, 200 steps: the
    same noise is z / 2 relative to the replace-one sensitivity 2 C, and gives
    about 1.96 for replace-one neighbours, the relation under which n is public.
    """
    add_remove = compute_epsilon(poisson(3.65, 0.05, 200, "add_remove"), 4e-8, "pld")
    replace_one = compute_epsilon(poisson(3.65 / 2, 0.05, 200), 4e-8, "pld")
    assert add_remove == pytest.approx(1.0, abs=0.01)
    assert replace_one == pytest.approx(1.96, abs=0.01)
    # the PLD is dp-accounting's REPLACE_ONE analysis with a per-record contribution C,
    # on its own grid: within a fraction of a percent of dp-accounting's
    assert replace_one == pytest.approx(pld_replace_one(3.65, 0.05, 200, 4e-8), rel=3e-3)


@pytest.mark.parametrize(("z", "q", "count"), [(1.55, 0.0079, 1272), (2.0, 0.05, 200)])
def test_replace_one_poisson_is_accounted_by_pld_and_rdp(z, q, count):
    plan = poisson(z, q, count)
    pld, rdp = (compute_epsilon(plan, 1e-9, name) for name in ("pld", "rdp"))
    # Renyi DP converts to (epsilon, delta) with a loss: above the PLD, not far above
    assert pld <= rdp <= 1.25 * pld
    # which is why "auto" does not compute it when the PLD applies
    result = account(plan, 1e-9)
    assert set(result.by_accountant) == {"pld"}
    assert result.epsilon == pld


@pytest.mark.parametrize(
    ("q", "z", "order"),
    [(0.01, 1.0, 2.0), (0.0079, 1.55, 2.5), (0.05, 0.6, 12.0), (1e-4, 3.0, 64.0), (0.3, 0.3, 3)],
)
def test_replace_one_poisson_rdp_matches_arbitrary_precision_quadrature(q, z, order):
    mpmath.mp.dps = 40
    a = mpmath.mpf(1) / (2 * z)
    q_ = mpmath.mpf(q)

    def phi(x):
        return mpmath.exp(-x * x / 2) / mpmath.sqrt(2 * mpmath.pi)

    def integrand(x):
        p = (1 - q_) * phi(x) + q_ * phi(x + a)
        r = (1 - q_) * phi(x) + q_ * phi(x - a)
        return p**order * r ** (1 - order)

    mass = mpmath.quad(integrand, [-mpmath.inf, -order * a - 5, -order * a, 0, mpmath.inf])
    expected = float(mpmath.log(mass) / (order - 1))
    got = float(poisson_replace_one_rdp(q, z, np.array([order]))[0])
    assert got == pytest.approx(expected, rel=1e-10)


def test_replace_one_poisson_rdp_limits():
    orders = np.array([1.5, 2.0, 10.0, 100.0])
    # q = 1: the unsampled Gaussian, a / (2 z^2); q = 0: nothing
    assert np.allclose(poisson_replace_one_rdp(1.0, 2.0, orders), orders / 8.0, rtol=1e-15)
    nearly = poisson_replace_one_rdp(1 - 1e-9, 2.0, orders)
    assert np.all(nearly <= orders / 8.0) and np.allclose(nearly, orders / 8.0, rtol=1e-4)
    assert np.all(poisson_replace_one_rdp(0.0, 2.0, orders) == 0.0)
    # never above joint convexity's bound, and increasing in q and in the order
    curve = poisson_replace_one_rdp(0.1, 1.0, orders)
    bound = np.logaddexp(np.log(0.9), np.log(0.1) + (orders - 1) * orders / 2.0) / (orders - 1)
    assert np.all(curve <= bound) and np.all(np.diff(curve) > 0)
    assert np.all(poisson_replace_one_rdp(0.05, 1.0, orders) < curve)
    # tiny noise: finite, from the closed-form bound where the grid would be too long
    assert np.all(np.isfinite(poisson_replace_one_rdp(0.01, 0.02, np.array([2.0, 1024.0]))))


def test_a_search_over_replace_one_poisson_fits_is_accounted():
    base = PrivacyPlan(
        [
            *poisson(2.0, 0.02, 100).events,
            LaplaceEvent(noise_multiplier=5.0, sensitivity=0.01, label="score"),
        ]
    )
    search = PrivacyPlan([RepeatAndSelectEvent(inner=base, mean=5.0, shape=1.0)])
    result = account(search, 1e-6)
    assert result.accountant == "rdp" and math.isfinite(result.epsilon)
    assert result.epsilon > account(base, 1e-6, "rdp").epsilon


@pytest.mark.parametrize("epsilon_one", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("relation", ["replace_one", "add_remove"])
def test_pure_dp_events_are_never_under_counted(epsilon_one, relation):
    """k pure eps-DP events: at least the exact composition of randomized response."""
    for k in (1, 2, 5, 8):
        plan = PrivacyPlan([PureDPEvent(epsilon=epsilon_one, count=k)], relation)
        costs = account(plan, 1e-6).by_accountant
        # the PLD of randomized response is tight (pessimistic to ~1e-4)
        floor = costs["pld"] - 1e-3
        assert all(value >= floor for value in costs.values()), costs
        # and a lone event costs its epsilon under every accountant
        if k == 1:
            assert account(plan, 1e-6).epsilon == pytest.approx(epsilon_one, abs=1e-3)


@pytest.mark.parametrize("relation", ["replace_one", "add_remove"])
def test_a_budget_refuses_pure_dp_charges_where_basic_composition_and_pld_do(relation):
    """Budget (5, 1e-6): five pure 1-DP charges fit, the sixth is refused (it accepted eight)."""
    budget = PrivacyBudget(5.0, 1e-6)
    accepted = 0
    for _ in range(10):
        try:
            budget.charge(PrivacyPlan([PureDPEvent(epsilon=1.0)], relation), label="query")
        except BudgetExceededError:
            break
        accepted += 1
    six = PrivacyPlan([PureDPEvent(epsilon=1.0, count=6)], relation)
    assert compute_epsilon(six, 1e-6, "basic") == 6.0 and compute_epsilon(six, 1e-6, "pld") > 5.0
    assert accepted == 5
    assert budget.spent() == pytest.approx(5.0, abs=1e-3)


def test_randomized_response_curve():
    orders = np.array([2.0, 10.0, math.inf])
    eps = 0.7
    p = 1.0 / (1.0 + math.exp(eps))
    direct = [
        math.log((1 - p) ** a * p ** (1 - a) + p**a * (1 - p) ** (1 - a)) / (a - 1)
        for a in orders[:2]
    ]
    assert np.allclose(pure_dp_rdp(eps, orders), [*direct, eps], rtol=1e-13)
    # Gumbel selections take the smaller of their zCDP and pure-DP bounds at each order
    gumbel = PrivacyPlan([NoisyMaxEvent(noise_multiplier=0.5, noise="gumbel", count=3)])
    laplace = PrivacyPlan([NoisyMaxEvent(noise_multiplier=0.5, noise="laplace", count=3)])
    assert compute_epsilon(gumbel, 1e-6, "rdp") <= compute_epsilon(laplace, 1e-6, "rdp")
