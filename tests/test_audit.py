"""Audits of every mechanism (correct passes, broken variants fail) and of the harness itself.

Each audit holds with probability at least 1 - 1e-6 for a correct
implementation, whatever the seed; the seeds are fixed (from the test name) so
results are reproducible. Claims come from the library: ``event.epsilon`` for
pure-DP events, the accountant and calibration for the Gaussian mechanism.

Neighbouring inputs are worst cases for each claim: a scalar query at 0 and at
``Delta``; for report-noisy-max a non-monotone pair (the target score up by
``Delta`` and every other score down by ``Delta``), since ``epsilon = 2 / z``
is claimed for arbitrary scores.

The broken variants are those that audits exist to catch: half the noise
multiplier, and the noise calibrated to half the sensitivity (what happens when
replace-one neighbours are analysed as add/remove ones).
"""

import functools
import math
import zlib

import numpy as np
import pytest
from scipy import stats

from dpglm.audit import (
    EpsilonBound,
    ThresholdPlan,
    audit_epsilon,
    audit_event,
    choose_thresholds,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
    mu_lower_bound,
)
from dpglm.privacy.events import GaussianEvent, LaplaceEvent, NoisyMaxEvent, PrivacyPlan
from dpglm.privacy.mechanisms import (
    gaussian_mechanism,
    laplace_mechanism,
    make_noise_source,
    noisy_min,
    report_noisy_max,
)

DELTA_GAUSSIAN = 1e-5
SENSITIVITY = 1.0
N_SCALAR = 1_100_000  # per side, 10% of it pilot
N_SELECTION = 400_000
N_GDP = 1_000_000
N_CANDIDATES = 10
EPSILONS = [1.0, 2.0]

# variant -> (factor on the noise multiplier, factor on the sensitivity given to the mechanism)
VARIANTS = {
    "correct": (1.0, 1.0),
    "half noise multiplier": (0.5, 1.0),
    "half sensitivity": (1.0, 0.5),
}


def seed_of(*parts):
    return zlib.crc32(repr(parts).encode())


def check_claim(bound, claim, variant):
    if variant == "correct":
        assert not bound.exceeds(claim), f"correct mechanism refuted: {bound} > {claim:.4f}"
    else:
        assert bound.exceeds(claim), f"{variant} not caught: {bound} <= {claim:.4f}"


def scalar_sampler(mechanism, noise_multiplier, sensitivity, *, secure=False):
    def sample(value, n, rng):
        source = make_noise_source(secure=True) if secure else make_noise_source(rng)
        return mechanism(
            np.full(n, value),
            sensitivity=sensitivity,
            noise_multiplier=noise_multiplier,
            source=source,
        )

    return sample


# --- Gaussian mechanism -------------------------------------------------------------------


@functools.cache
def gaussian_claim(target):
    """(noise multiplier, claimed epsilon at DELTA_GAUSSIAN) from the library's calibration."""
    from dpglm.privacy.accounting import compute_epsilon
    from dpglm.privacy.calibration import calibrate

    template = PrivacyPlan([GaussianEvent(noise_multiplier=1.0)], neighbouring="replace_one")
    result = calibrate(template, epsilon=target, delta=DELTA_GAUSSIAN)
    claim = compute_epsilon(result.plan, DELTA_GAUSSIAN)
    assert claim <= target
    assert claim == pytest.approx(result.epsilon)
    return result.plan.events[0].noise_multiplier, claim


def gaussian_bound(target, variant, *, secure=False):
    z, claim = gaussian_claim(target)
    z_factor, sensitivity_factor = VARIANTS[variant]
    sample = scalar_sampler(
        gaussian_mechanism, z * z_factor, SENSITIVITY * sensitivity_factor, secure=secure
    )
    bound = audit_epsilon(
        sample,
        0.0,
        SENSITIVITY,
        n=N_SCALAR,
        delta=DELTA_GAUSSIAN,
        rng=seed_of("gaussian", target, variant, secure),
    )
    return bound, claim


def gaussian_mu_bound(target, variant, *, secure=False):
    z, _ = gaussian_claim(target)
    z_factor, sensitivity_factor = VARIANTS[variant]
    sample = scalar_sampler(
        gaussian_mechanism, z * z_factor, SENSITIVITY * sensitivity_factor, secure=secure
    )
    rng = np.random.default_rng(seed_of("gaussian gdp", target, variant, secure))
    stat0 = sample(0.0, N_GDP, rng)
    stat1 = sample(SENSITIVITY, N_GDP, rng)
    # the midpoint of the two means, fixed in advance
    return mu_lower_bound(stat0, stat1, SENSITIVITY / 2), 1.0 / z


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("target", EPSILONS)
def test_gaussian_mechanism_epsilon_delta_audit(target, variant):
    bound, claim = gaussian_bound(target, variant)
    check_claim(bound, claim, variant)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("target", EPSILONS)
def test_gaussian_mechanism_gdp_audit(target, variant):
    bound, mu = gaussian_mu_bound(target, variant)
    check_claim(bound, mu, variant)


# --- Laplace mechanism --------------------------------------------------------------------


def laplace_bound(target, variant, *, secure=False):
    event = LaplaceEvent(noise_multiplier=1.0 / target)
    z_factor, sensitivity_factor = VARIANTS[variant]
    sample = scalar_sampler(
        laplace_mechanism,
        event.noise_multiplier * z_factor,
        SENSITIVITY * sensitivity_factor,
        secure=secure,
    )
    bound = audit_epsilon(
        sample, 0.0, SENSITIVITY, n=N_SCALAR, delta=0.0, rng=seed_of("laplace", target, variant)
    )
    return bound, event.epsilon


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("target", EPSILONS)
def test_laplace_mechanism_audit(target, variant):
    bound, claim = laplace_bound(target, variant)
    assert claim == pytest.approx(target)
    check_claim(bound, claim, variant)


# --- report-noisy-max and noisy-min -------------------------------------------------------


def selection_pair(selection):
    """Non-monotone neighbours: candidate 0 up by Delta and all others down by Delta."""
    favoured = np.zeros(N_CANDIDATES)
    favoured[0] = SENSITIVITY
    other = np.full(N_CANDIDATES, SENSITIVITY)
    other[0] = 0.0
    if selection == "noisy_min":
        # smaller is better: the same pair with the roles of the values reversed
        return other, favoured
    return favoured, other


def selection_sampler(selection, noise, noise_multiplier, sensitivity, *, secure=False):
    mechanism = report_noisy_max if selection == "report_noisy_max" else noisy_min

    def sample(scores, n, rng):
        source = make_noise_source(secure=True) if secure else make_noise_source(rng)
        return mechanism(
            np.broadcast_to(scores, (n, N_CANDIDATES)),
            sensitivity=sensitivity,
            noise_multiplier=noise_multiplier,
            noise=noise,
            source=source,
        )

    return sample


def selection_bound(selection, noise, target, variant, *, secure=False):
    event = NoisyMaxEvent(noise_multiplier=2.0 / target, noise=noise)
    z_factor, sensitivity_factor = VARIANTS[variant]
    sample = selection_sampler(
        selection,
        noise,
        event.noise_multiplier * z_factor,
        SENSITIVITY * sensitivity_factor,
        secure=secure,
    )
    favoured, other = selection_pair(selection)
    bound = audit_event(
        sample,
        other,
        favoured,
        n=N_SELECTION,
        delta=0.0,
        rng=seed_of(selection, noise, target, variant, secure),
    )
    return bound, event.epsilon


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("target", EPSILONS)
@pytest.mark.parametrize("noise", ["laplace", "gumbel", "exponential"])
@pytest.mark.parametrize("selection", ["report_noisy_max", "noisy_min"])
def test_selection_audit(selection, noise, target, variant):
    bound, claim = selection_bound(selection, noise, target, variant)
    assert claim == pytest.approx(target)
    check_claim(bound, claim, variant)


def subtracted_exponential_noise_bound(target):
    """A broken permute-and-flip that subtracts its one-sided noise."""
    scale = 2.0 / target * SENSITIVITY

    def sample(scores, n, rng):
        noise = rng.exponential(scale, (n, N_CANDIDATES))
        return np.argmax(scores - noise, axis=-1)

    favoured, other = selection_pair("report_noisy_max")
    bound = audit_event(
        sample, other, favoured, n=N_SELECTION, delta=0.0, rng=seed_of("subtracted", target)
    )
    return bound, NoisyMaxEvent(noise_multiplier=2.0 / target, noise="exponential").epsilon


@pytest.mark.parametrize("target", EPSILONS)
def test_subtracting_one_sided_noise_fails_the_audit(target):
    bound, claim = subtracted_exponential_noise_bound(target)
    assert bound.exceeds(claim), f"{bound} <= {claim}"


# --- secure source ------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["correct", "half noise multiplier"])
def test_secure_source_audits(variant):
    # unseeded by design, so not bit-reproducible; the correct variant still fails with
    # probability at most 4e-6, and the broken one passes the four audits by margins of
    # many standard errors
    bound, claim = gaussian_bound(1.0, variant, secure=True)
    check_claim(bound, claim, variant)
    bound, mu = gaussian_mu_bound(1.0, variant, secure=True)
    check_claim(bound, mu, variant)
    bound, claim = laplace_bound(1.0, variant, secure=True)
    check_claim(bound, claim, variant)
    bound, claim = selection_bound("report_noisy_max", "gumbel", 1.0, variant, secure=True)
    check_claim(bound, claim, variant)


# --- Clopper-Pearson ----------------------------------------------------------------------


def test_clopper_pearson_known_values():
    # the classic two-sided 95% interval for 5 successes out of 10
    assert clopper_pearson_lower(5, 10, 0.025) == pytest.approx(0.187086, abs=1e-6)
    assert clopper_pearson_upper(5, 10, 0.025) == pytest.approx(0.812914, abs=1e-6)
    # and for 0 out of 10, whose upper bound is the "rule of three" region
    assert clopper_pearson_upper(0, 10, 0.025) == pytest.approx(0.308497, abs=1e-6)


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_clopper_pearson_edge_cases(n):
    alpha = 1e-3
    assert clopper_pearson_lower(0, n, alpha) == 0.0
    assert clopper_pearson_upper(n, n, alpha) == 1.0
    assert clopper_pearson_upper(0, n, alpha) == pytest.approx(1.0 - alpha ** (1.0 / n))
    assert clopper_pearson_lower(n, n, alpha) == pytest.approx(alpha ** (1.0 / n))


@pytest.mark.parametrize("n", [1, 12, 400])
@pytest.mark.parametrize("alpha", [1e-6, 0.05])
def test_clopper_pearson_solves_its_defining_equations(n, alpha):
    k = np.arange(n + 1)
    upper = clopper_pearson_upper(k, n, alpha)
    lower = clopper_pearson_lower(k, n, alpha)
    assert (lower < upper).all()
    # P[Binomial(n, upper) <= k] = alpha and P[Binomial(n, lower) >= k] = alpha
    np.testing.assert_allclose(stats.binom.cdf(k[:-1], n, upper[:-1]), alpha, rtol=1e-6)
    np.testing.assert_allclose(stats.binom.sf(k[1:] - 1, n, lower[1:]), alpha, rtol=1e-6)
    # scalar and vector calls agree
    assert clopper_pearson_upper(int(k[n // 2]), n, alpha) == upper[n // 2]


@pytest.mark.parametrize("p", [0.003, 0.2, 0.5, 0.9])
def test_clopper_pearson_coverage_is_at_least_one_minus_alpha(p):
    n, alpha = 60, 0.05
    k = np.arange(n + 1)
    pmf = stats.binom.pmf(k, n, p)
    assert pmf[clopper_pearson_upper(k, n, alpha) < p].sum() <= alpha
    assert pmf[clopper_pearson_lower(k, n, alpha) > p].sum() <= alpha


@pytest.mark.parametrize(
    ("k", "n", "alpha"),
    [(-1, 5, 0.1), (6, 5, 0.1), (0, 0, 0.1), (1, 5, 0.0), (1, 5, 1.0)],
)
def test_clopper_pearson_refuses_invalid_arguments(k, n, alpha):
    with pytest.raises(ValueError):
        clopper_pearson_upper(k, n, alpha)
    with pytest.raises(ValueError):
        clopper_pearson_lower(k, n, alpha)


def test_clopper_pearson_needs_integer_counts():
    with pytest.raises(TypeError):
        clopper_pearson_upper(1.5, 10, 0.1)


# --- epsilon and mu lower bounds ----------------------------------------------------------


def test_identical_inputs_give_a_zero_bound():
    rng = np.random.default_rng(seed_of("identical"))
    stat0, stat1 = rng.normal(size=1_000_000), rng.normal(size=1_000_000)
    bound = epsilon_lower_bound(stat0, stat1, np.linspace(-1.0, 3.0, 12), delta=1e-5)
    assert bound.epsilon == 0.0
    assert bound.p1_lower < bound.p0_upper
    mu = mu_lower_bound(stat0, stat1, 0.0)
    assert mu.mu == 0.0


def test_bounds_on_identical_inputs_are_positive_at_most_alpha_of_the_time():
    alpha, repeats = 0.1, 1000
    rng = np.random.default_rng(seed_of("identical repeats"))
    positive = sum(
        epsilon_lower_bound(rng.normal(size=500), rng.normal(size=500), [0.0], alpha=alpha).epsilon
        > 0
        for _ in range(repeats)
    )
    assert positive <= repeats * alpha + 5 * math.sqrt(repeats * alpha)


def test_bounds_exceed_the_true_epsilon_at_most_alpha_of_the_time():
    # Laplace(b = 1) shifted by 1: every set {x > t} with t >= 1 has ratio exactly e,
    # so the bound is as close to the true epsilon = 1 as the counts allow
    alpha, repeats, n = 0.2, 1000, 2000
    rng = np.random.default_rng(seed_of("exact ratio"))
    bounds = np.array(
        [
            epsilon_lower_bound(
                rng.laplace(0.0, 1.0, n), rng.laplace(1.0, 1.0, n), [1.2], alpha=alpha
            ).epsilon
            for _ in range(repeats)
        ]
    )
    assert (bounds > 1.0).mean() <= alpha + 5 * math.sqrt(alpha * (1 - alpha) / repeats)
    # and the bounds are informative: the typical one is well above half the truth
    assert np.median(bounds) > 0.6


def test_epsilon_lower_bound_formula():
    stat0 = np.r_[np.zeros(900), np.ones(100)]
    stat1 = np.r_[np.zeros(500), np.ones(500)]
    bound = epsilon_lower_bound(stat0, stat1, [0.5], delta=0.01, alpha=0.01)
    p0_up = clopper_pearson_upper(100, 1000, 0.005)
    p1_lo = clopper_pearson_lower(500, 1000, 0.005)
    assert bound.epsilon == pytest.approx(math.log((p1_lo - 0.01) / p0_up))
    assert (bound.k0, bound.n0, bound.k1, bound.n1) == (100, 1000, 500, 1000)
    assert (bound.p0_upper, bound.p1_lower) == (p0_up, p1_lo)
    # delta at or above p1_lo leaves nothing to bound
    assert epsilon_lower_bound(stat0, stat1, [0.5], delta=0.6, alpha=0.01).epsilon == 0.0


def test_more_thresholds_split_alpha():
    rng = np.random.default_rng(seed_of("bonferroni"))
    stat0, stat1 = rng.laplace(0.0, 1.0, 100_000), rng.laplace(1.0, 1.0, 100_000)
    one = epsilon_lower_bound(stat0, stat1, [1.5])
    many = epsilon_lower_bound(stat0, stat1, [1.5, 40.0, 41.0, 42.0])
    assert many.n_tests == 4 and many.threshold == 1.5
    assert many.epsilon < one.epsilon
    assert many.p0_upper > one.p0_upper and many.p1_lower < one.p1_lower


def test_delta_lowers_the_bound():
    rng = np.random.default_rng(seed_of("delta"))
    stat0, stat1 = rng.normal(0.0, 1.0, 100_000), rng.normal(1.0, 1.0, 100_000)
    grid = [1.0, 2.0, 3.0]
    assert epsilon_lower_bound(stat0, stat1, grid, delta=0.01).epsilon < (
        epsilon_lower_bound(stat0, stat1, grid).epsilon
    )


def test_mu_lower_bound_of_a_known_gaussian_shift():
    rng = np.random.default_rng(seed_of("mu"))
    stat0, stat1 = rng.normal(0.0, 2.0, 1_000_000), rng.normal(1.0, 2.0, 1_000_000)
    bound = mu_lower_bound(stat0, stat1, 0.5)
    assert 0.47 < bound.mu <= 0.5
    fpr_up = clopper_pearson_upper(bound.k0, bound.n0, 0.5e-6)
    fnr_up = clopper_pearson_upper(bound.n1 - bound.k1, bound.n1, 0.5e-6)
    assert bound.mu == pytest.approx(stats.norm.isf(fpr_up) - stats.norm.ppf(fnr_up))
    # a threshold beyond every sample leaves no evidence
    assert mu_lower_bound(stat0, stat1, 100.0).mu == 0.0
    assert mu_lower_bound(stat0, stat1, -100.0).mu == 0.0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"thresholds": []},
        {"thresholds": [math.nan]},
        {"delta": 1.0},
        {"delta": -0.1},
        {"alpha": 0.0},
        {"stat0": [0.0, math.nan]},
        {"stat1": np.zeros((2, 2))},
    ],
)
def test_epsilon_lower_bound_refuses_invalid_arguments(kwargs):
    arguments = {"stat0": [0.0, 1.0], "stat1": [0.0, 1.0], "thresholds": [0.5], **kwargs}
    thresholds = arguments.pop("thresholds")
    with pytest.raises(ValueError):
        epsilon_lower_bound(
            arguments.pop("stat0"), arguments.pop("stat1"), thresholds, **arguments
        )


# --- pilot-based audits -------------------------------------------------------------------


class RecordingSampler:
    """Pilot runs uniform on [0, 1]; evaluation runs (every later call) on [10, 11]."""

    def __init__(self):
        self.calls = []

    def __call__(self, value, n, rng):
        self.calls.append((value, n))
        offset = 0.0 if len(self.calls) <= 2 else 10.0
        return offset + value * 0.5 + rng.random(n)


def test_thresholds_come_from_the_pilot_only():
    sampler = RecordingSampler()
    bound = audit_epsilon(sampler, 0.0, 1.0, n=10_000, delta=0.0, pilot_fraction=0.1, rng=0)
    assert sampler.calls == [(0.0, 1000), (1.0, 1000), (0.0, 9000), (1.0, 9000)]
    # a threshold taken from the evaluation runs would lie in [10, 11.5]
    assert 0.0 <= bound.threshold <= 1.5
    assert (bound.n0, bound.n1) == (9000, 9000)


def test_choose_thresholds_sees_only_pilot_samples():
    rng = np.random.default_rng(seed_of("plan"))
    pilot0, pilot1 = rng.normal(0.0, 1.0, 20_000), rng.normal(1.0, 1.0, 20_000)
    plan = choose_thresholds(pilot0, pilot1, n_eval=200_000, n_thresholds=12)
    assert isinstance(plan, ThresholdPlan)
    pooled = np.r_[pilot0, pilot1]
    assert set(plan.thresholds) <= set(pooled.tolist())
    assert len(plan.thresholds) == 12
    # tail probabilities from 0.2 down to 30 / n_eval, on side 1's pilot
    side1 = pilot0 if plan.swapped else pilot1
    oriented = side1 if plan.tail == "upper" else -side1
    sign = 1.0 if plan.tail == "upper" else -1.0
    tails = [np.mean(oriented > sign * t) for t in plan.thresholds]
    assert max(tails) == pytest.approx(0.2, abs=1e-3)
    assert min(tails) == pytest.approx(30 / 200_000, abs=1e-4)


def test_audit_event_chooses_its_event_from_the_pilot_only():
    calls = []

    def sample(value, n, rng):
        calls.append(n)
        if len(calls) <= 2:
            return np.where(rng.random(n) < 0.75, value, 1 - value)
        # evaluation runs show an output the pilot never saw
        return np.full(n, 7 if value else 0)

    bound = audit_event(sample, 0, 1, n=10_000, delta=0.0, rng=0)
    assert calls == [1000, 1000, 9000, 9000]
    assert bound.threshold in (0.0, 1.0)
    assert bound.n_tests == 1


def test_audit_epsilon_orients_itself():
    event = LaplaceEvent(noise_multiplier=1.0)
    sample = scalar_sampler(laplace_mechanism, 0.5, SENSITIVITY)  # half the noise
    forward = audit_epsilon(sample, 0.0, SENSITIVITY, n=200_000, delta=0.0, rng=1)
    backward = audit_epsilon(sample, SENSITIVITY, 0.0, n=200_000, delta=0.0, rng=1)
    assert forward.exceeds(event.epsilon) and backward.exceeds(event.epsilon)
    # input1 larger: side 1 is input1 on the upper tail, or input0 on the lower one
    assert forward.swapped == ("<" in forward.event)
    assert backward.swapped == (">" in backward.event)


def test_audit_epsilon_finds_the_informative_tail():
    # value + Exp(1): the upper tails differ by a factor e, but input 1 never falls
    # below 1, so the lower tail of input 0 (side 1 after a swap) shows an
    # unbounded epsilon
    def sample(value, n, rng):
        return value + rng.exponential(1.0, n)

    bound = audit_epsilon(sample, 0.0, 1.0, n=100_000, delta=0.0, rng=2)
    assert "<" in bound.event and bound.swapped
    assert bound.k0 == 0 and bound.epsilon > 5.0


def test_audit_event_on_randomized_response():
    def randomized_response(p):
        def sample(bit, n, rng):
            return np.where(rng.random(n) < p, bit, 1 - bit)

        return sample

    claim = math.log(3.0)  # truthful with probability 3/4
    ok = audit_event(randomized_response(0.75), 0, 1, n=200_000, delta=0.0, rng=3)
    assert 0.9 * claim < ok.epsilon <= claim
    broken = audit_event(randomized_response(0.9), 0, 1, n=200_000, delta=0.0, rng=3)
    assert broken.exceeds(claim)


def test_audit_event_refuses_continuous_outputs():
    with pytest.raises(ValueError, match="audit_epsilon"):
        audit_event(lambda v, n, rng: rng.random(n), 0, 1, n=20_000, delta=0.0, rng=0)


def test_pilot_audits_rarely_exceed_the_true_epsilon():
    # the whole pilot-then-evaluate procedure, repeated, at a large alpha: the true
    # epsilon of Laplace(b = 1) on 0 vs 1 is 1, and the bound may exceed it at most
    # alpha of the time
    alpha, repeats = 0.2, 200
    sample = scalar_sampler(laplace_mechanism, 1.0, SENSITIVITY)
    rng = np.random.default_rng(seed_of("pilot repeats"))
    bounds = np.array(
        [
            audit_epsilon(
                sample, 0.0, SENSITIVITY, n=4000, delta=0.0, alpha=alpha, rng=rng
            ).epsilon
            for _ in range(repeats)
        ]
    )
    assert (bounds > 1.0).mean() <= alpha + 5 * math.sqrt(alpha * (1 - alpha) / repeats)
    assert np.median(bounds) > 0.5


def test_audits_check_what_the_sampler_returns():
    with pytest.raises(ValueError, match="expected"):
        audit_epsilon(lambda v, n, rng: rng.random(n + 1), 0, 1, n=10_000, delta=0.0, rng=0)
    with pytest.raises(ValueError, match="NaN"):
        audit_epsilon(lambda v, n, rng: np.full(n, np.nan), 0, 1, n=10_000, delta=0.0, rng=0)
    with pytest.raises(ValueError, match="too small"):
        audit_epsilon(lambda v, n, rng: rng.random(n), 0, 1, n=100, delta=0.0, rng=0)
    with pytest.raises(TypeError, match="rng"):
        audit_epsilon(lambda v, n, rng: rng.random(n), 0, 1, n=10_000, delta=0.0, rng=None)


def test_bound_report_names_the_event_and_counts():
    bound = EpsilonBound(
        epsilon=1.5,
        event="statistic > 2",
        threshold=2.0,
        k0=10,
        n0=100,
        k1=50,
        n1=100,
        p0_upper=0.2,
        p1_lower=0.3,
        delta=0.0,
        alpha=1e-6,
        n_tests=3,
    )
    text = str(bound)
    assert "eps_lb=1.5000" in text and "statistic > 2" in text and "10/100" in text
    assert bound.exceeds(1.4) and not bound.exceeds(1.5)
