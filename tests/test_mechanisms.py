"""Noise sources and mechanisms: seeding, secure mode, distributions, validation.

Distribution tests run at a false-failure probability of about 1e-6 each and
check their own power: the same test must reject draws whose scale is 10% off.
The privacy audits of the mechanisms are in ``test_audit.py``.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dpglm.privacy.mechanisms import (
    NoiseSource,
    gaussian_mechanism,
    laplace_mechanism,
    make_noise_source,
    noisy_min,
    report_noisy_max,
)

ALPHA = 1e-6
N_DRAWS = 50_000
# a sample variance is close to normal at this size; z = 6 leaves room for its
# skewness beyond the two-sided 1e-6 quantile (4.89)
Z_VARIANCE = 6.0

SOURCES = ["numpy", "secure"]


def source_of(kind, seed=0):
    return make_noise_source(secure=True) if kind == "secure" else make_noise_source(seed)


# distribution name -> (draw n samples of scale 2, scipy distribution, kurtosis)
SCALE = 2.0
DISTRIBUTIONS = {
    "normal": (lambda s, n: SCALE * s.standard_normal(n), stats.norm(0, SCALE), 3.0),
    "laplace": (lambda s, n: s.laplace(SCALE, n), stats.laplace(0, SCALE), 6.0),
    "gumbel": (lambda s, n: s.gumbel(SCALE, n), stats.gumbel_r(0, SCALE), 5.4),
    "exponential": (lambda s, n: s.exponential(SCALE, n), stats.expon(0, SCALE), 9.0),
}


def variance_tolerance(kurtosis, n):
    """Largest |s^2 / sigma^2 - 1| accepted: z times the std of the variance ratio."""
    return Z_VARIANCE * math.sqrt((kurtosis - 1.0) / n)


def passes_distribution_tests(x, dist, kurtosis):
    ks = stats.kstest(x, dist.cdf).pvalue > ALPHA
    ratio = np.var(x, ddof=1) / dist.var()
    return ks and abs(ratio - 1.0) <= variance_tolerance(kurtosis, x.size)


# --- sources ------------------------------------------------------------------------------

DRAWS = {
    "standard_normal": lambda s: s.standard_normal(7),
    "laplace": lambda s: s.laplace(1.5, 7),
    "gumbel": lambda s: s.gumbel(1.5, 7),
    "exponential": lambda s: s.exponential(1.5, 7),
    "uniform": lambda s: s.uniform(7),
    "integers": lambda s: s.integers(1000, 7),
    "permutation": lambda s: s.permutation(50),
}


@pytest.mark.parametrize("method", DRAWS)
def test_seeded_sources_reproduce_and_different_seeds_differ(method):
    draw = DRAWS[method]
    a, b, c = draw(make_noise_source(7)), draw(make_noise_source(7)), draw(make_noise_source(8))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_unseeded_sources_differ():
    assert not np.array_equal(
        make_noise_source().standard_normal(5), make_noise_source().standard_normal(5)
    )


def test_a_generator_is_used_as_is_and_advances():
    generator = np.random.default_rng(3)
    source = make_noise_source(generator)
    assert source.generator is generator
    before = generator.bit_generator.state["state"]["state"]
    first = source.standard_normal(4)
    assert generator.bit_generator.state["state"]["state"] != before
    # the draws are the Generator's own stream, continued by the next draw
    reference = np.random.default_rng(3)
    np.testing.assert_array_equal(first, reference.standard_normal(4))
    np.testing.assert_array_equal(source.uniform(3), reference.random(3))
    # Laplace and Gumbel draws are built from the same stream's exponentials
    e1, e2 = reference.standard_exponential(3), reference.standard_exponential(3)
    np.testing.assert_array_equal(source.laplace(2.0, 3), 2.0 * (e1 - e2))
    np.testing.assert_array_equal(
        source.gumbel(0.5, 3), -0.5 * np.log(reference.standard_exponential(3))
    )


def test_a_noise_source_is_returned_unchanged():
    source = make_noise_source(1)
    assert make_noise_source(source) is source
    secure = make_noise_source(secure=True)
    assert make_noise_source(secure, secure=True) is secure
    with pytest.raises(ValueError, match="secure"):
        make_noise_source(source, secure=True)


@pytest.mark.parametrize(
    "random_state",
    [0, 12345, np.int64(5), np.random.SeedSequence(1), np.random.default_rng(0)],
    ids=["0", "int", "numpy int", "SeedSequence", "Generator"],
)
def test_secure_source_refuses_seeds_and_generators(random_state):
    with pytest.raises(ValueError, match="seed"):
        make_noise_source(random_state, secure=True)


def test_secure_source_is_unseeded_and_has_no_generator():
    a, b = make_noise_source(secure=True), make_noise_source(secure=True)
    assert a.secure and a.generator is None
    assert not make_noise_source(0).secure
    assert not np.array_equal(a.standard_normal(5), b.standard_normal(5))
    assert not np.array_equal(a.standard_normal(5), a.standard_normal(5))


@pytest.mark.parametrize("random_state", ["0", 1.5, True, np.random.RandomState(0)])
def test_unsupported_random_state_types_are_refused(random_state):
    with pytest.raises(TypeError, match="random_state"):
        make_noise_source(random_state)


@pytest.mark.parametrize("kind", SOURCES)
@pytest.mark.parametrize("method", ["standard_normal", "laplace", "gumbel", "exponential"])
def test_size_none_int_and_tuple(kind, method):
    source = source_of(kind)
    draw = getattr(source, method)
    args = () if method == "standard_normal" else (1.0,)
    assert isinstance(draw(*args), float)
    assert draw(*args, size=5).shape == (5,)
    assert draw(*args, size=(2, 3)).shape == (2, 3)
    assert draw(*args, size=0).shape == (0,)
    assert isinstance(source.integers(4), int)
    assert source.integers(4, (2, 2)).shape == (2, 2)
    assert isinstance(source.uniform(), float)


@pytest.mark.parametrize("kind", SOURCES)
def test_negative_or_infinite_scales_are_refused(kind):
    source = source_of(kind)
    for scale in (-1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="scale"):
            source.laplace(scale, 3)


# --- distributions ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", SOURCES)
@pytest.mark.parametrize("name", DISTRIBUTIONS)
def test_noise_distribution(kind, name):
    draw, dist, kurtosis = DISTRIBUTIONS[name]
    x = draw(source_of(kind, seed=11), N_DRAWS)
    assert x.shape == (N_DRAWS,)
    p_value = stats.kstest(x, dist.cdf).pvalue
    assert p_value > ALPHA, f"KS p-value {p_value:.3g}"
    ratio = np.var(x, ddof=1) / dist.var()
    assert abs(ratio - 1.0) <= variance_tolerance(kurtosis, N_DRAWS), ratio
    if name == "exponential":
        assert x.min() >= 0.0


@pytest.mark.parametrize("name", DISTRIBUTIONS)
def test_distribution_tests_catch_a_scale_off_by_ten_percent(name):
    draw, dist, kurtosis = DISTRIBUTIONS[name]
    # a 10% error in the std moves the variance by about 20%
    assert variance_tolerance(kurtosis, N_DRAWS) < 0.19
    x = draw(make_noise_source(12), N_DRAWS)
    assert passes_distribution_tests(x, dist, kurtosis)
    for factor in (0.9, 1.1):
        assert stats.kstest(factor * x, dist.cdf).pvalue < ALPHA
        assert not passes_distribution_tests(factor * x, dist, kurtosis)


@pytest.mark.parametrize("kind", SOURCES)
def test_uniform_distribution(kind):
    u = source_of(kind, seed=13).uniform(N_DRAWS)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert stats.kstest(u, "uniform").pvalue > ALPHA


def chi_square_p_value(observed):
    expected = np.full(observed.size, observed.sum() / observed.size)
    return stats.chisquare(observed, expected).pvalue


@pytest.mark.parametrize("kind", SOURCES)
@pytest.mark.parametrize("high", [7, 3 * 2**61])
def test_integers_are_uniform(kind, high):
    x = source_of(kind, seed=14).integers(high, N_DRAWS)
    assert x.min() >= 0 and x.max() < high
    # for the huge range, the top bits; 3 * 2**61 also makes the secure source reject
    # more than half of its 64-bit words
    cells, n_cells = (x, 7) if high == 7 else (x // 2**61, 3)
    observed = np.bincount(cells)
    assert observed.size == n_cells
    assert chi_square_p_value(observed) > ALPHA


@pytest.mark.parametrize("kind", SOURCES)
def test_permutations_are_uniform(kind):
    source = source_of(kind, seed=15)
    perms = np.array([source.permutation(3) for _ in range(12_000)])
    assert (np.sort(perms, axis=1) == np.arange(3)).all()
    codes = perms @ np.array([9, 3, 1])
    _, observed = np.unique(codes, return_counts=True)
    assert observed.size == 6
    assert chi_square_p_value(observed) > ALPHA
    assert source.permutation(0).size == 0


# --- mechanisms ---------------------------------------------------------------------------


def test_gaussian_mechanism_adds_scaled_draws_of_the_source():
    values = np.arange(6.0).reshape(2, 3)
    out = gaussian_mechanism(
        values, sensitivity=0.5, noise_multiplier=3.0, source=make_noise_source(0)
    )
    expected = values + 1.5 * make_noise_source(0).standard_normal((2, 3))
    np.testing.assert_array_equal(out, expected)


def test_laplace_mechanism_adds_scaled_draws_of_the_source():
    values = np.array([1.0, -2.0, 4.0])
    out = laplace_mechanism(
        values, sensitivity=2.0, noise_multiplier=0.25, source=make_noise_source(0)
    )
    np.testing.assert_array_equal(out, values + make_noise_source(0).laplace(0.5, 3))


NOISE_DRAWS = {"laplace": "laplace", "gumbel": "gumbel", "exponential": "exponential"}


@pytest.mark.parametrize("noise", NOISE_DRAWS)
def test_report_noisy_max_adds_the_noise_and_takes_the_last_axis(noise):
    scores = np.random.default_rng(1).normal(size=(50, 4, 6))
    picked = report_noisy_max(
        scores, sensitivity=0.5, noise_multiplier=2.0, noise=noise, source=make_noise_source(2)
    )
    draws = getattr(make_noise_source(2), NOISE_DRAWS[noise])(1.0, scores.shape)
    assert picked.shape == (50, 4)
    np.testing.assert_array_equal(picked, np.argmax(scores + draws, axis=-1))
    # subtracting one-sided noise would select differently
    if noise == "exponential":
        assert not np.array_equal(picked, np.argmax(scores - draws, axis=-1))


@pytest.mark.parametrize("noise", NOISE_DRAWS)
def test_noisy_min_is_noisy_max_of_the_negated_values(noise):
    values = np.random.default_rng(3).normal(size=(40, 5))
    kwargs = {"sensitivity": 1.0, "noise_multiplier": 1.0, "noise": noise}
    a = noisy_min(values, source=make_noise_source(4), **kwargs)
    b = report_noisy_max(-values, source=make_noise_source(4), **kwargs)
    np.testing.assert_array_equal(a, b)


def test_selections_follow_a_large_lead():
    source = make_noise_source(5)
    scores = np.zeros((200, 8))
    scores[:, 3] = 100.0
    for noise in NOISE_DRAWS:
        kwargs = {"sensitivity": 1.0, "noise_multiplier": 1.0, "noise": noise, "source": source}
        assert (report_noisy_max(scores, **kwargs) == 3).all()
        assert (noisy_min(-scores, **kwargs) == 3).all()


def test_output_types_and_shapes():
    source = make_noise_source(6)
    kwargs = {"sensitivity": 1.0, "noise_multiplier": 1.0, "source": source}
    assert isinstance(gaussian_mechanism(2.0, **kwargs), float)
    assert isinstance(laplace_mechanism(np.float64(2.0), **kwargs), float)
    assert gaussian_mechanism([[1.0, 2.0]], **kwargs).shape == (1, 2)
    assert isinstance(report_noisy_max([1.0, 2.0, 3.0], **kwargs), int)
    assert isinstance(noisy_min([1.0, 2.0, 3.0], **kwargs), int)
    assert report_noisy_max(np.zeros((3, 2, 5)), **kwargs).shape == (3, 2)
    assert report_noisy_max([7.0], **kwargs) == 0


def test_zero_sensitivity_releases_the_exact_value():
    values = np.array([1.0, 2.0])
    kwargs = {"sensitivity": 0.0, "noise_multiplier": 1.0, "source": make_noise_source(0)}
    np.testing.assert_array_equal(gaussian_mechanism(values, **kwargs), values)
    np.testing.assert_array_equal(laplace_mechanism(values, **kwargs), values)


@pytest.mark.parametrize("kind", SOURCES)
def test_every_mechanism_runs_on_both_sources(kind):
    source = source_of(kind)
    kwargs = {"sensitivity": 1.0, "noise_multiplier": 1.0, "source": source}
    assert gaussian_mechanism(np.zeros(4), **kwargs).shape == (4,)
    assert laplace_mechanism(np.zeros(4), **kwargs).shape == (4,)
    for noise in NOISE_DRAWS:
        assert report_noisy_max(np.zeros((3, 4)), noise=noise, **kwargs).shape == (3,)
        assert noisy_min(np.zeros((3, 4)), noise=noise, **kwargs).shape == (3,)


MECHANISMS = {
    "gaussian": lambda **kw: gaussian_mechanism([0.0, 1.0], **kw),
    "laplace": lambda **kw: laplace_mechanism([0.0, 1.0], **kw),
    "report_noisy_max": lambda **kw: report_noisy_max([0.0, 1.0], **kw),
    "noisy_min": lambda **kw: noisy_min([0.0, 1.0], **kw),
}


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("noise_multiplier", [0.0, -1.0, math.inf, math.nan])
def test_noise_multiplier_must_be_positive_and_finite(mechanism, noise_multiplier):
    with pytest.raises(ValueError, match="noise_multiplier"):
        MECHANISMS[mechanism](
            sensitivity=1.0, noise_multiplier=noise_multiplier, source=make_noise_source(0)
        )


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("sensitivity", [-1.0, math.inf, math.nan])
def test_sensitivity_must_be_finite_and_non_negative(mechanism, sensitivity):
    with pytest.raises(ValueError, match="sensitivity"):
        MECHANISMS[mechanism](
            sensitivity=sensitivity, noise_multiplier=1.0, source=make_noise_source(0)
        )


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_source_must_be_a_noise_source(mechanism):
    with pytest.raises(TypeError, match="NoiseSource"):
        MECHANISMS[mechanism](
            sensitivity=1.0, noise_multiplier=1.0, source=np.random.default_rng(0)
        )


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_inputs_are_refused(bad):
    kwargs = {"sensitivity": 1.0, "noise_multiplier": 1.0, "source": make_noise_source(0)}
    with pytest.raises(ValueError, match="values must be finite"):
        gaussian_mechanism([0.0, bad], **kwargs)
    with pytest.raises(ValueError, match="values must be finite"):
        laplace_mechanism(bad, **kwargs)
    with pytest.raises(ValueError, match="scores must be finite"):
        report_noisy_max([0.0, bad], **kwargs)
    with pytest.raises(ValueError, match="values must be finite"):
        noisy_min([0.0, bad], **kwargs)


def test_noisy_max_refuses_unknown_noise_and_empty_candidates():
    kwargs = {"sensitivity": 1.0, "noise_multiplier": 1.0, "source": make_noise_source(0)}
    with pytest.raises(ValueError, match="noise must be one of"):
        report_noisy_max([0.0, 1.0], noise="normal", **kwargs)
    with pytest.raises(ValueError, match="at least one candidate"):
        report_noisy_max(np.zeros((3, 0)), **kwargs)
    with pytest.raises(ValueError, match="at least one candidate"):
        noisy_min(5.0, **kwargs)


def test_noise_source_is_the_public_type():
    assert isinstance(make_noise_source(0), NoiseSource)
    assert isinstance(make_noise_source(secure=True), NoiseSource)
