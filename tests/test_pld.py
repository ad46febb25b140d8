"""Grid privacy loss distributions: upper bounds, tight against exact values and dp-accounting."""

import math

import numpy as np
import pytest
from scipy.special import comb

from dpglm.privacy.accounting import compute_epsilon, gdp_epsilon
from dpglm.privacy.events import (
    GaussianEvent,
    LaplaceEvent,
    NoisyMaxEvent,
    PrivacyPlan,
    SampledGaussianEvent,
)
from dpglm.privacy.loss_curves import gaussian_curve, poisson_gaussian_curves
from dpglm.privacy.pld import GridPLD, plan_epsilon, randomized_response_composed, step_for
from dpglm.privacy.rdp_curves import wor_gaussian_rdp


def dp_accounting_pld(plan, delta, pessimistic=True):
    """dp-accounting's PLD at its default grid (1e-4): the value calibration had before."""
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as pld

    relation = (
        NeighboringRelation.REPLACE_ONE
        if plan.neighbouring == "replace_one"
        else NeighboringRelation.ADD_OR_REMOVE_ONE
    )
    total = None
    for e in plan.events:
        if isinstance(e, SampledGaussianEvent):
            one = pld.from_gaussian_mechanism(
                e.noise_multiplier,
                sensitivity=0.5 if plan.neighbouring == "replace_one" else 1.0,
                sampling_prob=e.sampling_rate,
                value_discretization_interval=1e-4,
                neighboring_relation=relation,
                pessimistic_estimate=pessimistic,
                use_connect_dots=pessimistic,
            )
        elif isinstance(e, GaussianEvent):
            one = pld.from_gaussian_mechanism(
                e.noise_multiplier,
                value_discretization_interval=1e-4,
                pessimistic_estimate=pessimistic,
                use_connect_dots=pessimistic,
            )
        else:
            one = pld.from_laplace_mechanism(
                e.noise_multiplier,
                value_discretization_interval=1e-4,
                pessimistic_estimate=pessimistic,
            )
        one = one.self_compose(e.count) if e.count > 1 else one
        total = one if total is None else total.compose(one)
    return total.get_epsilon_for_delta(delta)


PLANS = {
    "dp-sgd on adult": (
        PrivacyPlan(
            [
                GaussianEvent(noise_multiplier=30.0, count=2),
                SampledGaussianEvent(noise_multiplier=1.2, sampling_rate=0.00786, count=1272),
            ]
        ),
        1e-9,
    ),
    "dp-sgd, add/remove": (
        PrivacyPlan(
            [SampledGaussianEvent(noise_multiplier=2.0, sampling_rate=0.01, count=1000)],
            neighbouring="add_remove",
        ),
        1e-6,
    ),
    "large sampling rate": (
        PrivacyPlan([SampledGaussianEvent(noise_multiplier=0.6, sampling_rate=0.05, count=200)]),
        1e-5,
    ),
    "laplace smoothness with gaussian steps": (
        PrivacyPlan(
            [
                LaplaceEvent(noise_multiplier=40.0, count=123),
                GaussianEvent(noise_multiplier=60.0, count=2480),
            ]
        ),
        1e-9,
    ),
}


@pytest.mark.parametrize("name", list(PLANS))
def test_within_one_percent_of_dp_accounting_and_above_its_lower_bound(name):
    plan, delta = PLANS[name]
    ours = compute_epsilon(plan, delta, "pld")
    today = dp_accounting_pld(plan, delta)
    lower = dp_accounting_pld(plan, delta, pessimistic=False)
    assert lower <= ours <= 1.01 * today
    # and closer than that: the grid's rule aims at 0.2%
    assert ours <= 1.004 * today


def test_randomized_response_composes_exactly():
    epsilon, count, delta = 0.3, 40, 1e-6
    j = np.arange(count + 1)
    keep = math.exp(epsilon) / (1 + math.exp(epsilon))
    probs = comb(count, j) * keep ** (count - j) * (1 - keep) ** j
    losses = epsilon * (count - 2 * j)

    def curve(eps):
        above = losses > eps
        return float(np.sum(probs[above] * -np.expm1(eps - losses[above])))

    # the exact epsilon by bisection on the exact curve
    lo, hi = 0.0, epsilon * count
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if curve(mid) > delta else (lo, mid)
    grid = randomized_response_composed(epsilon, count, 2e-3)
    assert hi <= grid.epsilon(delta) <= hi + 1e-9
    event = NoisyMaxEvent(noise_multiplier=2 / epsilon, count=count, noise="laplace")
    assert hi <= compute_epsilon(PrivacyPlan([event]), delta, "pld") <= hi + 1e-9


@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_gaussian_composition_is_tight_and_above_the_exact_curve(delta):
    events = [GaussianEvent(noise_multiplier=4.0, count=3), GaussianEvent(noise_multiplier=2.0)]
    exact = gdp_epsilon(math.sqrt(3 / 16 + 1 / 4), delta)
    ours = plan_epsilon(events, "replace_one", delta)
    assert exact <= ours <= exact * (1 + 1e-4)


def test_laplace_at_delta_zero_is_the_sum_of_epsilons():
    plan = PrivacyPlan([LaplaceEvent(noise_multiplier=2.0, count=30)])
    assert 15.0 <= compute_epsilon(plan, 0.0, "pld") <= 15.0 + 1e-9


@pytest.mark.parametrize(
    "curve",
    [
        gaussian_curve(0.7),
        poisson_gaussian_curves(1.1, 0.02, "replace_one")[0],
        *poisson_gaussian_curves(1.1, 0.02, "add_remove"),
    ],
)
def test_the_grid_curve_lies_above_the_true_curve_everywhere(curve):
    step = 3e-3
    grid = GridPLD.from_curve(curve, step, tail_mass=1e-14)
    rng = np.random.default_rng(0)
    points = rng.uniform(max(grid.losses[0], -1.0), min(grid.losses[-1], 2.0), 300)
    true = curve.delta(points)
    ours = np.array([grid.delta(x) for x in points])
    assert np.all(ours >= true - 1e-13)
    # and touches it at the grid points
    on_grid = grid.losses[(grid.losses > -1) & (grid.losses < 2)][::25]
    assert np.allclose([grid.delta(x) for x in on_grid], curve.delta(on_grid), atol=1e-8)


def test_a_million_rows_and_a_hundred_thousand_steps_at_tiny_delta():
    # FFT rounding is of the order of 1e-17 per entry: without the tilt, the ~1e5 entries of
    # this composition added up to more than delta, and epsilon came out above Renyi DP's
    plan = PrivacyPlan(
        [SampledGaussianEvent(noise_multiplier=0.8, sampling_rate=0.001, count=100_000)]
    )
    ours = compute_epsilon(plan, 1e-12, "pld")
    assert ours < compute_epsilon(plan, 1e-12, "rdp")
    # a finer grid moves it by less than the rule's 0.2%
    finer = plan_epsilon(plan.events, "replace_one", 1e-12, step_for(ours, 100_000) / 2)
    assert finer <= ours <= finer * 1.003


@pytest.mark.parametrize(
    ("q", "z"), [(0.02, 1.0), (0.001, 0.5), (0.1, 3.0), (0.5, 0.8), (0.003, 20.0)]
)
def test_sampling_without_replacement_has_dp_accounting_renyi_curve(q, z):
    from dp_accounting.rdp.rdp_privacy_accountant import (
        DEFAULT_RDP_ORDERS,
        _compute_rdp_sample_wor_gaussian,
    )

    orders = np.array(DEFAULT_RDP_ORDERS)
    ours = wor_gaussian_rdp(q, z, orders)
    theirs = _compute_rdp_sample_wor_gaussian(q, z, orders)
    assert np.array_equal(np.isfinite(ours), np.isfinite(theirs))
    finite = np.isfinite(theirs)
    assert np.allclose(ours[finite], theirs[finite], rtol=1e-9, atol=0)


def test_the_tilt_agrees_with_an_extended_precision_fft_where_float64_fails():
    """DP-SGD on 1e6 rows at delta = 1e-12: the tilted float64 composition against the
    plain one in long double (rounding 2000 times smaller), the reference here; the
    plain float64 one is far off, and so is dp-accounting's (below it)."""
    import scipy.fft

    from dpglm.privacy.pld import compose_all

    z, q, count, delta, step = 0.4333, 0.000256, 19_531, 1e-12, 2e-4
    one = GridPLD.from_curve(poisson_gaussian_curves(z, q, "replace_one")[0], step, 1e-25)
    tail = 1e-4 * delta
    tilted = compose_all([(one, count)], tail, delta).epsilon(delta)
    # the composition on the circle of losses [-12, 3.4): what lies below -12 (at most
    # e**-12 times what lies above 12 by the pair's symmetry) and above 3.4 folds in
    size, lo = 77_000, -60_000
    folded = np.zeros(size, dtype=np.longdouble)
    np.add.at(folded, (one.offset + np.arange(one.probs.size)) % size, one.probs)
    out = scipy.fft.irfft(scipy.fft.rfft(folded) ** count, size)
    out = np.roll(np.maximum(out, 0).astype(float), -(lo % size))
    reference = GridPLD(step, lo, out, 1 - (1 - one.infinity) ** count + tail).epsilon(delta)
    assert reference == pytest.approx(tilted, rel=1e-3)
    plain = compose_all([(one, count)], tail, 0.0).epsilon(delta)
    assert plain > 1.2 * reference


def _random_pld(seed, size=5000, step=1e-3):
    """A distribution on the grid with mass spread over many orders of magnitude."""
    rng = np.random.default_rng(seed)
    probs = np.exp(rng.uniform(-300, 0, size))
    return GridPLD(step, -size // 3, probs / probs.sum(), 1e-13)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_moment_generating_function_by_blocks_equals_the_direct_sum(seed):
    from dpglm.privacy.pld import _log_mgf

    pld = _random_pld(seed, size=4099)  # not a multiple of the block
    t = np.concatenate([-np.geomspace(1e-3, 2e3, 24)[::-1], [0.0], np.geomspace(1e-3, 2e3, 24)])
    exponents = np.outer(t, pld.losses) + np.log(pld.probs)
    top = exponents.max(axis=1, keepdims=True)
    direct = top[:, 0] + np.log(np.exp(exponents - top).sum(axis=1))
    np.testing.assert_allclose(_log_mgf(pld, t), direct, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("delta", [1e-3, 1e-8, 1e-12])
def test_epsilon_read_on_a_suffix_equals_the_whole_grid(delta):
    # the last grid point over delta found on the whole grid, and delta interpolated there
    for seed in range(3):
        pld = _random_pld(seed)
        curve, above, weighted = pld.deltas()
        j = int(np.flatnonzero(curve > delta)[-1])
        loss_j = (pld.offset + j) * pld.step
        whole = loss_j + math.log((above[j] + pld.infinity - delta) / weighted[j])
        assert pld.epsilon(delta) == pytest.approx(min(whole, loss_j + pld.step), rel=1e-11)


def test_leaving_out_a_negligible_spectrum_keeps_the_composition():
    # the composition's spectrum of 19,531 releases is mostly below e**-700; against the
    # same composition with the spectrum whole, every entry agrees to far below delta
    from dpglm.privacy import pld as module

    curves = poisson_gaussian_curves(0.4334, 0.000256, "replace_one")
    one = GridPLD.from_curve(curves[0], 4e-4, tail_mass=1e-17)
    kept = module.compose_all([(one, 19531)], 1e-16, 1e-12)
    saved = module._NEGLIGIBLE_LOG
    try:
        module._NEGLIGIBLE_LOG = -math.inf
        whole = module.compose_all([(one, 19531)], 1e-16, 1e-12)
    finally:
        module._NEGLIGIBLE_LOG = saved
    assert kept.offset == whole.offset and kept.probs.size == whole.probs.size
    assert np.all(kept.probs >= whole.probs - 1e-15)
    assert kept.epsilon(1e-12) == pytest.approx(whole.epsilon(1e-12), rel=1e-9)
    assert kept.epsilon(1e-12) >= whole.epsilon(1e-12)


def test_the_window_about_a_tilt_is_bounded_by_exponents_close_to_it():
    # 19,531 steps at q = 2.56e-4 and small noise (a plan near epsilon 5 at delta 1e-12):
    # with the grid's next exponent a factor 1.88 above the tilt, the tilted upper tail was
    # bounded at a loss of 20,069 (10 million grid points); the composed loss above 40 has
    # mass far below delta
    from dpglm.privacy.pld import compose_all

    curve = poisson_gaussian_curves(0.2992, 0.000256, "replace_one")[0]
    one = GridPLD.from_curve(curve, 0.002, tail_mass=1e-16 / 19531)
    composed = compose_all([(one, 19531)], 1e-16, 1e-12)
    assert (composed.offset + composed.probs.size) * composed.step < 40.0
    assert composed.epsilon(1e-12) == pytest.approx(5.0, abs=0.05)
