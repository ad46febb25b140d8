"""The privacy layer's spending seam: releases, the zCDP filter, targets and shares."""

import math

import numpy as np
import pytest

from dpglm.exceptions import BudgetExceededError
from dpglm.privacy.events import (
    GaussianEvent,
    LaplaceEvent,
    NoisyMaxEvent,
    PrivacyPlan,
    SampledGaussianEvent,
    ZCDPEvent,
)
from dpglm.privacy.filters import FilterRole, ZCDPFilter
from dpglm.privacy.mechanisms import (
    gaussian_mechanism,
    laplace_mechanism,
    make_noise_source,
    noisy_min,
    report_noisy_max,
)
from dpglm.privacy.releases import Release
from dpglm.privacy.spending import spend
from dpglm.privacy.targets import Share, check_delta, check_epsilon, check_privacy_target

# -- Release: the scale -------------------------------------------------------------------


def test_scale_multiplies_left_to_right_as_the_sensitivity_is_derived():
    z, clip, n = 0.7, np.array([0.3, 1.1, 2.9]), 3.0
    scale = Release(GaussianEvent(noise_multiplier=z)).scale(2.0, clip, over=n)
    # ((z * 2) * C_j) / n, bit for bit: the order the solvers always used
    assert scale.tobytes() == (z * 2.0 * clip / n).tobytes()


def test_scale_defaults_to_the_events_sensitivity():
    release = Release(LaplaceEvent(noise_multiplier=3.0, sensitivity=0.25))
    assert release.scale() == 0.75
    assert release.scale(0.5) == 1.5
    with pytest.raises(ValueError, match="records no sensitivity"):
        Release(LaplaceEvent(noise_multiplier=3.0)).scale()


def test_a_private_scale_must_be_finite():
    with pytest.raises(ValueError, match="finite"):
        Release(GaussianEvent(noise_multiplier=1.0)).scale(2.0, math.inf, over=10.0)


def test_a_non_private_release_has_scale_zero_and_draws_nothing():
    release = Release(GaussianEvent(noise_multiplier=0.0), make_noise_source(0))
    assert not release.private and release.generator is None
    assert release.scale(2.0, math.inf) == 0.0  # an unclipped fit: no noise at all
    np.testing.assert_array_equal(release.scale(2.0, np.ones(3), over=5.0), np.zeros(3))
    np.testing.assert_array_equal(release.unit((2, 2)), np.zeros((2, 2)))
    assert release.noise() == 0.0
    assert release.add(2.5) == 2.5
    # nothing was drawn: the stream is where a fresh one starts
    fresh = make_noise_source(0)
    assert release.source.uniform() == fresh.uniform()
    # unless asked (DP-CD keeps its coordinates on the private fit's stream)
    np.testing.assert_array_equal(release.unit(4, always=True), fresh.standard_normal(4))


def test_non_private_selections_are_exact():
    release = Release(NoisyMaxEvent(noise_multiplier=0.0), make_noise_source(0))
    assert release.noisy_max([0.0, 3.0, 1.0]) == 1
    assert release.noisy_min([0.0, 3.0, -1.0]) == 2


# -- Release: the draws are those of the mechanisms ---------------------------------------


@pytest.mark.parametrize(
    ("event", "draw"),
    [
        (GaussianEvent(noise_multiplier=2.0), lambda s, size: s.standard_normal(size)),
        (
            SampledGaussianEvent(noise_multiplier=2.0, sampling_rate=0.1),
            lambda s, size: s.standard_normal(size),
        ),
        (LaplaceEvent(noise_multiplier=2.0), lambda s, size: s.laplace(1.0, size)),
        (NoisyMaxEvent(noise_multiplier=2.0), lambda s, size: s.gumbel(1.0, size)),
        (
            NoisyMaxEvent(noise_multiplier=2.0, noise="laplace"),
            lambda s, size: s.laplace(1.0, size),
        ),
        (
            NoisyMaxEvent(noise_multiplier=2.0, noise="exponential"),
            lambda s, size: s.exponential(1.0, size),
        ),
    ],
)
def test_unit_draws_are_the_events_noise_at_scale_one(event, draw):
    got = Release(event, make_noise_source(3)).unit((4, 5))
    np.testing.assert_array_equal(got, draw(make_noise_source(3), (4, 5)))


def test_add_is_the_gaussian_and_laplace_mechanisms():
    values = np.linspace(-1.0, 1.0, 7)
    gaussian = Release(GaussianEvent(noise_multiplier=1.3, sensitivity=0.4), make_noise_source(1))
    want = gaussian_mechanism(
        values, sensitivity=0.4, noise_multiplier=1.3, source=make_noise_source(1)
    )
    np.testing.assert_array_equal(gaussian.add(values), want)
    laplace = Release(LaplaceEvent(noise_multiplier=1.3), make_noise_source(2))
    want = laplace_mechanism(
        3.0, sensitivity=0.2, noise_multiplier=1.3, source=make_noise_source(2)
    )
    assert laplace.add(3.0, sensitivity=0.2) == want


def test_selections_are_report_noisy_max_and_noisy_min():
    scores = np.random.default_rng(0).standard_normal((50, 6))
    event = NoisyMaxEvent(noise_multiplier=0.8, sensitivity=0.3, noise="exponential")
    kwargs = {"sensitivity": 0.3, "noise_multiplier": 0.8, "noise": "exponential"}
    got = Release(event, make_noise_source(4)).noisy_max(scores)
    want = report_noisy_max(scores, source=make_noise_source(4), **kwargs)
    np.testing.assert_array_equal(got, want)
    got = Release(event, make_noise_source(5)).noisy_min(scores)
    np.testing.assert_array_equal(got, noisy_min(scores, source=make_noise_source(5), **kwargs))


def test_noise_has_the_scale_of_the_release():
    release = Release(GaussianEvent(noise_multiplier=2.0, sensitivity=1.5), make_noise_source(6))
    want = 3.0 * make_noise_source(6).standard_normal(1000)
    np.testing.assert_array_equal(release.noise(1000), want)


def test_releases_refuse_what_they_cannot_do():
    with pytest.raises(TypeError, match="needs an event with noise"):
        Release(ZCDPEvent(rho=0.1))
    with pytest.raises(ValueError, match="not bound"):
        Release(GaussianEvent(noise_multiplier=1.0)).unit(3)
    with pytest.raises(TypeError, match="selects"):
        Release(NoisyMaxEvent(noise_multiplier=1.0), make_noise_source(0)).add(1.0, sensitivity=1)
    with pytest.raises(TypeError, match="does not select"):
        Release(GaussianEvent(noise_multiplier=1.0), make_noise_source(0)).noisy_max([1.0])
    with pytest.raises(TypeError, match="Gaussian noise only"):
        _ = Release(LaplaceEvent(noise_multiplier=1.0), make_noise_source(0)).generator
    with pytest.raises(ValueError, match="finite"):
        Release(GaussianEvent(noise_multiplier=1.0), make_noise_source(0)).add(
            [math.nan], sensitivity=1
        )


def test_a_bound_release_draws_from_its_own_stream():
    release = Release(LaplaceEvent(noise_multiplier=1.0))
    a, b = release.bind(make_noise_source(7)), release.bind(make_noise_source(7))
    np.testing.assert_array_equal(a.unit(5), b.unit(5))
    assert release.source is None  # binding makes a new release


def test_spent_releases_are_the_calibrated_events_on_the_fits_source():
    template = PrivacyPlan(
        (GaussianEvent(noise_multiplier=1.0, sensitivity=0.5), LaplaceEvent(noise_multiplier=2.0))
    )
    spent = spend(template, epsilon=1.0, delta=1e-6, random_state=0)
    first, last = spent.release(0), spent.release(-1)
    assert first.event is spent.plan.events[0] and last.event is spent.plan.events[1]
    assert first.source is spent.source
    assert first.scale() == spent.plan.events[0].noise_multiplier * 0.5
    assert first.generator is spent.source.generator


# -- the zCDP filter ----------------------------------------------------------------------

ROLES = {
    "sum": FilterRole("gaussian", 2.0, "noisy sum"),
    "pick": FilterRole("gumbel", 3.0, "selection"),
}


def test_the_filter_hands_out_releases_at_the_budget_asked_for():
    spending = ZCDPFilter(1.0, make_noise_source(0), ROLES)
    (gaussian, gumbel), rhos = spending.take([("sum", 0.125), ("pick", 0.02)], step=1)
    assert (gaussian.family, gumbel.family) == ("gaussian", "gumbel")
    assert gaussian.multiplier == 1.0 / math.sqrt(0.25) and rhos[0] == 0.125
    assert (
        gaussian.scale() == gaussian.multiplier * 2.0 and gumbel.scale() == gumbel.multiplier * 3
    )
    assert rhos[1] == pytest.approx(0.02, rel=1e-15)
    assert spending.remaining == pytest.approx(1.0 - 0.145, rel=1e-14)
    spending.take([("sum", 0.125)], step=2)  # same level: grouped with step 1's
    events = spending.plan().events
    assert [e.count for e in events] == [2, 1]
    assert "steps 1-2" in events[0].label and events[0].fixed


def test_the_filter_never_goes_above_its_total():
    spending = ZCDPFilter(0.5, make_noise_source(0), ROLES)
    spending.take([("sum", 0.3)], step=1)
    with pytest.raises(BudgetExceededError, match="would exceed"):
        spending.take([("sum", 0.1), ("pick", 0.15)], step=2)
    assert spending.remaining == pytest.approx(0.2, rel=1e-14)  # nothing handed out
    releases, rhos = spending.take_rest([("sum", 3.0), ("pick", 1.0)], step=2)
    assert len(releases) == 2 and rhos[0] == pytest.approx(3 * rhos[1], rel=1e-9)
    assert 0.0 <= spending.remaining < 1e-12
    assert spending.spent() <= spending.total


def test_a_filter_needs_a_positive_finite_total():
    for total in (0.0, -1.0, math.inf):
        with pytest.raises(ValueError, match="positive finite"):
            ZCDPFilter(total, make_noise_source(0), ROLES)
    with pytest.raises(ValueError, match="noise must be one of"):
        FilterRole("laplace", 1.0, "")


# -- targets and shares -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("epsilon", "delta", "match"),
    [
        (0.0, 1e-6, "epsilon must be positive"),
        (-1.0, 1e-6, "epsilon must be positive"),
        (math.nan, 1e-6, "epsilon must be positive"),
        ("1", 1e-6, "epsilon must be a number"),
        (True, 1e-6, "epsilon must be a number"),
        (1.0, 1.0, r"delta must lie in \[0, 1\)"),
        (1.0, -1e-9, r"delta must lie in \[0, 1\)"),
        (1.0, None, r"delta must lie in \[0, 1\)"),
    ],
)
def test_bad_targets_are_refused_with_one_message(epsilon, delta, match):
    with pytest.raises(ValueError, match=match):
        check_privacy_target(epsilon, delta)


def test_target_options():
    assert check_privacy_target(math.inf, 0.0) == (math.inf, 0.0)
    assert check_privacy_target(np.float32(0.5), None, optional_delta=True) == (0.5, None)
    with pytest.raises(ValueError, match="delta must be None or lie in"):
        check_privacy_target(1.0, 2.0, optional_delta=True)
    with pytest.raises(ValueError, match="budget epsilon"):
        check_privacy_target(0.0, 0.0, owner="budget")
    with pytest.raises(ValueError, match="> 0 for a private search: why"):
        check_privacy_target(1.0, 0.0, positive_delta="why", what="search")
    assert check_privacy_target(math.inf, 0.0, positive_delta="why") == (math.inf, 0.0)
    assert check_epsilon(3) == 3.0 and check_delta(0) == 0.0


def test_shares_split_exactly():
    share = Share(0.3, "selection_share")
    assert (share.value, share.rest) == (0.3, 1.0 - 0.3)
    assert share.of(2.0) == 0.3 * 2.0 and share.rest_of(2.0) == (1.0 - 0.3) * 2.0
    assert share.matching(0.6) == 0.6 * (1.0 - 0.3) / 0.3
    (eps1, delta1), (eps2, delta2) = share.split(1.0, 1e-6)
    assert (eps1 + eps2, delta1 + delta2) == (1.0, 1e-6)


@pytest.mark.parametrize("value", [0.0, 1.0, -0.5, math.nan, "half", True, None])
def test_bad_shares_are_refused_by_name(value):
    with pytest.raises(ValueError, match="score_share must lie in"):
        Share(value, "score_share")
