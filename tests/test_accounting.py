"""Accountants: exact values, cross-checks against dp-accounting, monotonicity."""

import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpglm.exceptions import PlanError, UnsupportedPlanError
from dpglm.privacy.accounting import (
    ACCOUNTANTS,
    RDPAccountant,
    account,
    advanced_composition_epsilon,
    compute_epsilon,
    gdp_epsilon,
    get_accountant,
    valid_accountants,
    zcdp_epsilon_bun_steinke,
    zcdp_epsilon_cks,
)
from dpglm.privacy.events import (
    GaussianEvent,
    LaplaceEvent,
    NoisyMaxEvent,
    NonPrivateEvent,
    PrivacyPlan,
    PureDPEvent,
    SampledGaussianEvent,
    ZCDPEvent,
)

FAST = ["gdp", "rdp", "zcdp", "zcdp-bun-steinke"]


def gaussian(z, count=1):
    return PrivacyPlan([GaussianEvent(noise_multiplier=z, count=count)])


def test_the_plan_of_the_closing_note_side_by_side():
    """10,000 Gaussian coordinate releases at multiplier 50, delta 1e-6."""
    plan = gaussian(50.0, 10_000)
    values = {name: get_accountant(name).epsilon(plan, 1e-6) for name in valid_accountants(plan)}
    assert set(values) == {"gdp", "pld", "rdp", "zcdp", "zcdp-bun-steinke"}
    # mu = sqrt(10000) / 50 = 2: the exact curve, then ever looser bounds
    assert values["gdp"] == pytest.approx(gdp_epsilon(2.0, 1e-6), rel=1e-12)
    assert values["gdp"] == pytest.approx(10.9972, abs=1e-4)
    assert values["gdp"] <= values["pld"] <= values["gdp"] * 1.01
    assert values["pld"] < values["zcdp"] <= values["rdp"] + 1e-3
    assert values["zcdp"] < values["zcdp-bun-steinke"]
    # rho = 10000 / (2 * 50^2) = 2: the DP-AGD paper's conversion in closed form
    assert values["zcdp-bun-steinke"] == pytest.approx(2 + 2 * math.sqrt(2 * math.log(1e6)))
    assert account(plan, 1e-6).accountant == "gdp"


@settings(max_examples=12, deadline=None)
@given(
    mu=st.floats(0.05, 5.0),
    count=st.integers(1, 5000),
    delta=st.sampled_from([1e-3, 1e-5, 1e-8]),
)
def test_exact_gaussian_composition_agrees_with_dp_accounting_pld(mu, count, delta):
    from dp_accounting import GaussianDpEvent, SelfComposedDpEvent
    from dp_accounting.pld import PLDAccountant

    z = math.sqrt(count) / mu
    exact = compute_epsilon(gaussian(z, count), delta, "gdp")
    reference = PLDAccountant(value_discretization_interval=1e-4)
    reference.compose(SelfComposedDpEvent(GaussianDpEvent(z), count))
    assert exact == pytest.approx(reference.get_epsilon(delta), rel=0.01, abs=2e-4)


@settings(max_examples=200, deadline=None)
@given(
    z=st.floats(0.05, 1e4),
    count=st.integers(1, 10**6),
    delta=st.floats(1e-12, 0.5),
)
def test_rdp_and_zcdp_are_never_below_the_exact_value(z, count, delta):
    plan = gaussian(z, count)
    exact = compute_epsilon(plan, delta, "gdp")
    assert compute_epsilon(plan, delta, "rdp") >= exact * (1 - 1e-9) - 1e-12
    assert compute_epsilon(plan, delta, "zcdp") >= exact * (1 - 1e-9) - 1e-12
    assert (
        compute_epsilon(plan, delta, "zcdp-bun-steinke")
        >= compute_epsilon(plan, delta, "zcdp") - 1e-12
    )


@pytest.mark.parametrize("name", FAST)
@settings(max_examples=60, deadline=None)
@given(
    z=st.floats(0.2, 500.0),
    count=st.integers(1, 10**5),
    more=st.integers(1, 100),
    factor=st.floats(1.0, 3.0),
    delta=st.floats(1e-10, 1e-2),
)
def test_epsilon_grows_with_steps_and_shrinks_with_noise(name, z, count, more, factor, delta):
    base = compute_epsilon(gaussian(z, count), delta, name)
    assert compute_epsilon(gaussian(z, count + more), delta, name) >= base - 1e-12
    assert compute_epsilon(gaussian(z * factor, count), delta, name) <= base + 1e-12
    assert compute_epsilon(gaussian(z, count), delta * 0.5, name) >= base - 1e-12


@settings(max_examples=8, deadline=None)
@given(z=st.floats(1.0, 50.0), count=st.integers(1, 300), more=st.integers(1, 300))
def test_pld_monotone_in_steps_and_noise(z, count, more):
    plan = PrivacyPlan([NoisyMaxEvent(noise_multiplier=z, count=count, noise="laplace")])
    longer = PrivacyPlan([NoisyMaxEvent(noise_multiplier=z, count=count + more, noise="laplace")])
    noisier = plan.scaled(1.5)
    base = compute_epsilon(plan, 1e-6, "pld")
    assert compute_epsilon(longer, 1e-6, "pld") >= base - 1e-9
    assert compute_epsilon(noisier, 1e-6, "pld") <= base + 1e-9


def test_poisson_sampling_matches_dp_accounting_add_remove():
    """Our mapping (REPLACE_SPECIAL inside) equals dp-accounting's own add/remove analysis."""
    from dp_accounting import (
        GaussianDpEvent,
        NeighboringRelation,
        PoissonSampledDpEvent,
        SelfComposedDpEvent,
    )
    from dp_accounting.pld import PLDAccountant
    from dp_accounting.rdp import RdpAccountant

    plan = PrivacyPlan(
        [SampledGaussianEvent(noise_multiplier=1.1, sampling_rate=0.01, count=3000)],
        neighbouring="add_remove",
    )
    event = SelfComposedDpEvent(PoissonSampledDpEvent(0.01, GaussianDpEvent(1.1)), 3000)
    rdp = RdpAccountant(neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE)
    rdp.compose(event)
    assert compute_epsilon(plan, 1e-5, "rdp") == pytest.approx(rdp.get_epsilon(1e-5), rel=1e-12)
    pld = PLDAccountant(NeighboringRelation.ADD_OR_REMOVE_ONE)
    pld.compose(event)
    # our grid is not dp-accounting's: within a fraction of a percent of it
    assert compute_epsilon(plan, 1e-5, "pld") == pytest.approx(pld.get_epsilon(1e-5), rel=3e-3)


def test_golden_value_of_opacus():
    """Opacus' accountant test: sigma 1.5, q 0.04, 2250 steps, delta 1e-5 on its order grid.

    Opacus pins 7.32911117143; dp-accounting's RDP of the subsampled Gaussian
    differs from Opacus' in the fifth significant digit.
    """
    orders = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
    plan = PrivacyPlan(
        [SampledGaussianEvent(noise_multiplier=1.5, sampling_rate=0.04, count=2250)],
        neighbouring="add_remove",
    )
    assert RDPAccountant(orders).epsilon(plan, 1e-5) == pytest.approx(7.32911117143, rel=1e-4)


def test_sampling_without_replacement_is_rdp_only_and_replace_one():
    plan = PrivacyPlan(
        [
            SampledGaussianEvent(
                noise_multiplier=2.0,
                sampling="without_replacement",
                dataset_size=1000,
                batch_size=50,
                count=200,
            )
        ],
        neighbouring="replace_one",
    )
    assert valid_accountants(plan) == ["rdp"]
    eps = compute_epsilon(plan, 1e-5)
    # amplification: far below the same releases without sampling
    assert 0 < eps < compute_epsilon(gaussian(2.0, 200), 1e-5) / 3
    with pytest.raises(UnsupportedPlanError, match="without replacement"):
        compute_epsilon(plan, 1e-5, "pld")
    with pytest.raises(PlanError, match="without replacement is analysed for replace_one"):
        PrivacyPlan(
            [
                SampledGaussianEvent(
                    noise_multiplier=1.0,
                    sampling="without_replacement",
                    dataset_size=10,
                    batch_size=2,
                )
            ],
            "add_remove",
        )


def test_advanced_composition_is_formula_2_of_the_dp_gcd_paper():
    T, eps1, delta = 50, 0.02, 1e-6
    plan = PrivacyPlan(
        [
            NoisyMaxEvent(noise_multiplier=2 / eps1, noise="laplace", count=T),
            LaplaceEvent(noise_multiplier=1 / eps1, count=T),
        ]
    )
    expected = math.sqrt(4 * T * math.log(1 / delta)) * eps1 + 2 * T * eps1 * math.expm1(eps1)
    assert compute_epsilon(plan, delta, "advanced") == pytest.approx(expected, rel=1e-12)
    assert advanced_composition_epsilon([eps1, eps1], [T, T], delta) == pytest.approx(expected)
    # PLD, through the randomized response that dominates pure DP, is tighter still
    assert compute_epsilon(plan, delta, "pld") < expected
    assert compute_epsilon(plan, 0.0, "basic") == pytest.approx(2 * T * eps1)


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_pure_dp_events_are_accounted_as_randomized_response(eps):
    """A single eps-DP event costs exactly eps at delta ~ 0, under PLD and RDP alike."""
    plan = PrivacyPlan([PureDPEvent(epsilon=eps)])
    assert compute_epsilon(plan, 1e-12, "pld") == pytest.approx(eps, abs=2e-3)
    assert compute_epsilon(plan, 1e-12, "rdp") <= eps + 0.1 * eps + 0.05
    assert compute_epsilon(plan, 1e-12, "pld") <= eps + 2e-3


def test_noisy_max_costs():
    gumbel = NoisyMaxEvent(noise_multiplier=4.0, noise="gumbel", count=10)
    laplace = NoisyMaxEvent(noise_multiplier=4.0, noise="laplace", count=10)
    assert gumbel.epsilon == laplace.epsilon == 0.5
    assert NoisyMaxEvent(noise_multiplier=4.0, monotone=True).epsilon == 0.25
    # bounded range: the exponential mechanism is eps^2/8-zCDP, Laplace noise only eps^2/2
    assert gumbel.rho == pytest.approx(10 * 0.5**2 / 8 / 10)
    zg = compute_epsilon(PrivacyPlan([gumbel]), 1e-6, "zcdp")
    zl = compute_epsilon(PrivacyPlan([laplace]), 1e-6, "zcdp")
    assert zg == pytest.approx(zcdp_epsilon_cks(10 * 0.25 / 8, 1e-6))
    assert zl == pytest.approx(zcdp_epsilon_cks(10 * 0.25 / 2, 1e-6))
    assert zg < zl


@pytest.mark.parametrize("sigma", [0.3, 1.0, 4.0, 25.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-9])
def test_gdp_equals_dp_accounting_analytic_gaussian(sigma, delta):
    from dp_accounting import get_epsilon_gaussian

    assert gdp_epsilon(1.0 / sigma, delta) == pytest.approx(
        get_epsilon_gaussian(sigma, delta), rel=1e-9, abs=1e-12
    )


@pytest.mark.parametrize("rho", [0.001, 0.1, 2.0])
def test_cks_conversion_equals_rdp_on_a_fine_grid_of_orders(rho):
    """dp-accounting converts RDP with the same bound; on a fine grid it finds our minimum."""
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    centre = 1 + math.sqrt(math.log(1e5) / rho)
    orders = [1 + (centre - 1) * math.exp(t / 2000) for t in range(-4000, 4001)]
    rdp = RdpAccountant(orders)
    rdp.compose(dp_accounting.ZCDpEvent(rho))
    assert zcdp_epsilon_cks(rho, 1e-5) == pytest.approx(rdp.get_epsilon(1e-5), rel=1e-6)
    assert zcdp_epsilon_cks(rho, 1e-5) <= rdp.get_epsilon(1e-5) + 1e-9


def test_zcdp_conversions():
    for rho in (1e-4, 0.01, 0.5, 4.0):
        for delta in (1e-3, 1e-6, 1e-10):
            cks = zcdp_epsilon_cks(rho, delta)
            bs = zcdp_epsilon_bun_steinke(rho, delta)
            assert cks <= bs
            # the exact curve of a Gaussian with that rho (mu = sqrt(2 rho)) lies below
            assert gdp_epsilon(math.sqrt(2 * rho), delta) <= cks + 1e-9
    assert zcdp_epsilon_bun_steinke(0.1, 1e-5) == pytest.approx(
        0.1 + 2 * math.sqrt(0.1 * math.log(1e5))
    )


def test_zcdp_events_and_mixed_plans():
    plan = PrivacyPlan([ZCDPEvent(rho=0.05), GaussianEvent(noise_multiplier=10.0, count=20)])
    assert valid_accountants(plan) == ["rdp", "zcdp", "zcdp-bun-steinke"]
    rho = 0.05 + 20 / 200
    assert compute_epsilon(plan, 1e-6, "zcdp") == pytest.approx(zcdp_epsilon_cks(rho, 1e-6))
    result = account(plan, 1e-6)
    assert result.epsilon == min(result.by_accountant.values())


def test_degenerate_plans():
    assert compute_epsilon(gaussian(5.0, 0), 1e-6) == 0.0
    assert compute_epsilon(gaussian(math.inf, 100), 1e-6) == 0.0
    assert compute_epsilon(gaussian(0.0, 1), 1e-6) == math.inf
    assert compute_epsilon(PrivacyPlan([]), 1e-6) == 0.0
    result = account(PrivacyPlan([NonPrivateEvent(label="fit")]), 1e-6)
    assert result.epsilon == math.inf and result.accountant == "none"
    for name in ACCOUNTANTS:
        assert get_accountant(name).epsilon(PrivacyPlan([NonPrivateEvent()]), 1e-6) == math.inf


def test_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match="unknown accountant 'moments'"):
        compute_epsilon(gaussian(1.0), 1e-6, "moments")
    with pytest.raises(ValueError, match=r"delta must lie in \[0, 1\)"):
        compute_epsilon(gaussian(1.0), 1.0)
    with pytest.raises(UnsupportedPlanError, match="'gdp' accountant only composes"):
        compute_epsilon(PrivacyPlan([LaplaceEvent(noise_multiplier=1.0)]), 1e-6, "gdp")
    with pytest.raises(UnsupportedPlanError, match="no subsampling amplification"):
        compute_epsilon(
            PrivacyPlan(
                [SampledGaussianEvent(noise_multiplier=1.0, sampling_rate=0.1)], "add_remove"
            ),
            1e-6,
            "zcdp",
        )
    with pytest.raises(UnsupportedPlanError, match="'advanced' accountant only composes pure"):
        compute_epsilon(gaussian(1.0), 1e-6, "advanced")
    with pytest.raises(PlanError, match="noise_multiplier"):
        GaussianEvent(noise_multiplier=-1.0)
    with pytest.raises(PlanError, match="noise must be one of"):
        NoisyMaxEvent(noise_multiplier=1.0, noise="uniform")


def test_importing_dpglm_does_not_import_dp_accounting():
    code = (
        "import sys, dpglm, dpglm.privacy.accounting, dpglm.privacy.calibration, "
        "dpglm.privacy.budget, dpglm.privacy.report, dpglm.privacy.events\n"
        "from dpglm.privacy.accounting import compute_epsilon\n"
        "from dpglm.privacy.events import GaussianEvent, PrivacyPlan\n"
        "compute_epsilon(PrivacyPlan([GaussianEvent(noise_multiplier=3.0)]), 1e-6)\n"
        "sys.exit(1 if 'dp_accounting' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_plans_convert_to_dp_accounting_events():
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    plan = PrivacyPlan(
        [
            GaussianEvent(noise_multiplier=10.0, count=20),
            NoisyMaxEvent(noise_multiplier=50.0, count=20, noise="gumbel"),
            NoisyMaxEvent(noise_multiplier=50.0, count=5, noise="laplace"),
            LaplaceEvent(noise_multiplier=30.0),
            ZCDPEvent(rho=0.01),
        ]
    )
    event = plan.to_dp_event()
    assert isinstance(event, dp_accounting.ComposedDpEvent)
    first = event.events[0]
    assert isinstance(first, dp_accounting.SelfComposedDpEvent) and first.count == 20
    assert first.event == dp_accounting.GaussianDpEvent(10.0)
    rr = event.events[2].event
    assert isinstance(rr, dp_accounting.RandomizedResponseDpEvent)
    assert rr.num_buckets == 2
    # binary randomized response with this parameter is exactly (2/50)-DP
    p = rr.noise_parameter
    assert math.log((1 - p / 2) / (p / 2)) == pytest.approx(2 / 50)
    direct = RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    direct.compose(event)
    # the same, except that the Gumbel selections also take the bound of their pure DP
    # where it is smaller than their zCDP bound
    assert compute_epsilon(plan, 1e-6, "rdp") <= direct.get_epsilon(1e-6) * (1 + 1e-12)
    assert compute_epsilon(plan, 1e-6, "rdp") == pytest.approx(direct.get_epsilon(1e-6), rel=0.05)
