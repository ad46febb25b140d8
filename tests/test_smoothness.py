"""Where the coordinate solvers' smoothness constants come from, and what each source costs.

``"bounds"`` is public and free, ``"data"`` leaks (and says so in the report),
``"private"`` is the DP-CD paper's Laplace estimate of clipped column means,
charged to the fit. Its noise is checked against the calibrated Laplace law
(Kolmogorov-Smirnov at level 1e-6, seeded from the test name).
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dpglm.access.columns import clipped_column_mean_squares
from dpglm.exceptions import PrivacyLeakWarning
from dpglm.privacy.mechanisms import make_noise_source
from dpglm.problem import Problem
from dpglm.solvers.dp_cd import dp_cd
from dpglm.solvers.dp_gcd import dp_gcd
from dpglm.solvers.smoothness import PART, SmoothnessSpec
from solver_problems import seed_of

DELTA = 1e-6
SOLVERS = {
    "dp-cd": lambda prob, **kw: dp_cd(prob, passes=1, **kw),
    "dp-gcd": lambda prob, **kw: dp_gcd(prob, n_iter=3, **kw),
}


def data(seed, n=400, p=5, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-scale, scale, (n, p))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    return X, y


# --- public bounds ----------------------------------------------------------------------------


@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize(("datafit", "curvature"), [("squared", 1.0), ("logistic", 0.25)])
def test_bounds_give_curvature_times_squared_bounds(datafit, curvature, intercept):
    X, y = data(seed_of("bounds", datafit))
    prob = Problem(X, y, datafit, fit_intercept=intercept)
    bounds = np.array([0.5, 1.0, 2.0, 0.0, 3.0])  # a zero bound: a coordinate that never moves
    expected = curvature * bounds**2
    if intercept:
        expected = np.append(expected, curvature)  # the intercept's column of ones
    spec = SmoothnessSpec.create(prob, "bounds", feature_bounds=bounds)
    assert spec.mode == "bounds" and not spec.plan.events
    np.testing.assert_array_equal(spec.estimate(prob, source=None), expected)
    # a scalar bound serves every column; "auto" with bounds is "bounds"
    auto = SmoothnessSpec.create(prob, "auto", feature_bounds=2.0)
    assert auto.mode == "bounds"
    np.testing.assert_array_equal(auto.estimate(prob, source=None)[:5], curvature * 4.0)
    for name, solver in SOLVERS.items():
        fit = solver(prob, epsilon=1.0, delta=DELTA, feature_bounds=bounds, random_state=0)
        np.testing.assert_array_equal(fit.info["smoothness"], expected, err_msg=name)
        assert fit.info["smoothness_source"] == "bounds"
        assert fit.report.guarantee and not fit.report.warnings
        assert any("feature bounds" in a for a in fit.report.assumptions)
        # the column bounded by 0 has step 0 and clip 0, and never moves
        assert fit.info["step_sizes"][3] == 0 and fit.info["clip_thresholds"][3] == 0
        assert fit.coef[3] == 0


# --- from the data, with a warning ------------------------------------------------------------


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("mode", ["data", "auto"])
def test_data_smoothness_warns_and_voids_the_guarantee(mode, solver):
    X, y = data(seed_of("data", mode, solver))
    X[:, 2] *= 3.0
    prob = Problem(sp.csc_matrix(X), y, "logistic", fit_intercept=True)
    with pytest.warns(PrivacyLeakWarning, match="raw data") as record:
        fit = SOLVERS[solver](prob, epsilon=1.0, delta=DELTA, smoothness=mode, random_state=0)
    leaks = [str(w.message) for w in record if issubclass(w.category, PrivacyLeakWarning)]
    assert fit.report.warnings == tuple(leaks)
    assert not fit.report.guarantee
    assert "does NOT hold" in str(fit.report)
    assert fit.info["smoothness_source"] == "data"
    expected = np.append(0.25 * (X**2).mean(axis=0), 0.25)
    np.testing.assert_allclose(fit.info["smoothness"], expected, rtol=1e-14)


# --- the private estimate -----------------------------------------------------------------------


def test_private_estimate_needs_bounds():
    X, y = data(seed_of("needs bounds"))
    prob = Problem(X, y, "squared")
    for solver in SOLVERS.values():
        with pytest.raises(ValueError, match="feature_bounds"):
            solver(prob, epsilon=1.0, delta=DELTA, smoothness="private")
    with pytest.raises(ValueError, match="smoothness_share"):
        SmoothnessSpec.create(prob, "private", feature_bounds=1.0, epsilon=1.0, share=0.0)
    # a zero bound is a public fact for "bounds", but nothing to estimate against
    with pytest.raises(ValueError, match=r"> 0; column 1"):
        SmoothnessSpec.create(prob, "private", feature_bounds=[1, 0, 1, 1, 1], epsilon=1.0)


@pytest.mark.parametrize("solver", SOLVERS)
def test_private_estimate_spends_its_share(solver):
    X, y = data(seed_of("share", solver), n=1000)
    prob = Problem(X, y, "squared")
    fit = SOLVERS[solver](
        prob,
        epsilon=1.0,
        delta=DELTA,
        smoothness="private",
        feature_bounds=1.0,
        smoothness_share=0.25,
        random_state=0,
    )
    report = fit.report
    smooth = report.mechanisms[0]
    assert (smooth.kind, smooth.part, smooth.count) == ("laplace", PART, 5)
    # each column mean of clipped X^2 / B^2 moves by 1/n between neighbours
    assert smooth.sensitivity == pytest.approx(1 / 1000)
    # the five releases cost the share (basic composition), and the report shows both parts
    # (each accounted like the whole plan: RDP, say, is a little looser for pure-DP events)
    assert 5 * smooth.details["epsilon"] <= 0.25 * (1 + 1e-9)
    assert 5 * smooth.details["epsilon"] == pytest.approx(0.25, rel=1e-3)
    assert report.parts[PART] == pytest.approx(0.25, rel=0.02)
    assert 0 < report.parts["training"] < 1.0
    assert report.epsilon <= 1.0 and report.epsilon == pytest.approx(1.0, rel=1e-3)
    assert report.guarantee
    assert any("estimated privately" in a for a in report.assumptions)
    assert "smoothness estimation: epsilon" in str(report)


def private_spec(prob, epsilon=1.0, share=0.1, bounds=1.0):
    return SmoothnessSpec.create(
        prob, "private", feature_bounds=bounds, epsilon=epsilon, delta=DELTA, share=share
    )


def test_private_estimate_is_the_clipped_mean_plus_calibrated_laplace_noise():
    # columns with values up to 2 B: clipping X^2 at B^2 changes their mean a lot
    rng = np.random.default_rng(seed_of("laplace law"))
    n, p, B = 2000, 4, 1.0
    X = rng.uniform(-1.0, 1.0, (n, p)) * np.array([0.6, 1.6, 2.0, 1.0])
    X[:, 3] = np.where(rng.random(n) < 0.5, 2.0, 0.4)
    y = rng.standard_normal(n)
    prob = Problem(X, y, "squared", fit_intercept=True)
    spec = private_spec(prob, epsilon=4.0)
    (event,) = spec.plan.events
    assert event.fixed and event.part == PART and event.count == p
    scale = event.noise_multiplier * event.sensitivity  # Laplace scale on the fractions
    truth = np.minimum(X**2, B**2).mean(axis=0)
    assert np.all(np.abs((X**2).mean(axis=0) - truth)[1:] > 40 * scale)  # clipping matters
    assert np.all(truth > 1 / n + 20 * scale)  # far from the floor
    draws = np.array(
        [spec.estimate(prob, source=make_noise_source(seed))[:p] for seed in range(1500)]
    )
    residuals = (draws - truth) / B**2  # curvature 1
    # within the expected noise (|Laplace| > 25 b has probability e^-25) ...
    assert np.abs(residuals).max() < 25 * scale
    # ... and distributed as the calibrated Laplace law, for every column
    for j in range(p):
        result = stats.kstest(residuals[:, j], stats.laplace(scale=scale).cdf)
        assert result.pvalue > 1e-6, (j, result)
    # half the noise would be refuted by the same test
    half = stats.kstest(residuals[:, 0], stats.laplace(scale=scale / 2).cdf)
    assert half.pvalue < 1e-6
    # the intercept's constant is public
    assert spec.estimate(prob, source=make_noise_source(0))[-1] == 1.0


def test_private_estimate_of_a_fit_is_close_to_the_clipped_truth():
    rng = np.random.default_rng(seed_of("fit estimate"))
    n = 5000
    X = rng.uniform(-1.5, 1.5, (n, 3))
    y = rng.standard_normal(n)
    prob = Problem(sp.csc_matrix(X), y, "squared")
    fit = dp_cd(
        prob,
        epsilon=1.0,
        delta=DELTA,
        passes=1,
        smoothness="private",
        feature_bounds=1.0,
        random_state=0,
    )
    smooth = fit.report.mechanisms[0]
    scale = smooth.noise_multiplier * smooth.sensitivity
    truth = np.minimum(X**2, 1.0).mean(axis=0)
    assert np.all(np.abs(fit.info["smoothness"] - truth) < 25 * scale)
    assert fit.info["smoothness_source"] == "private"


def test_private_estimate_is_floored_at_three_noise_scales_and_capped_at_the_bound():
    rng = np.random.default_rng(seed_of("floor"))
    n, p = 4000, 20
    X = np.zeros((n, p))
    X[:, 0] = rng.uniform(-2, 2, n)  # one informative column (fraction 1/3), the others zero
    prob = Problem(sp.csc_matrix(X), rng.standard_normal(n), "squared")
    bounds = np.full(p, 2.0)
    spec = private_spec(prob, epsilon=4.0, bounds=bounds)
    scale = spec.plan.events[0].noise_multiplier / n  # the Laplace scale on each fraction
    assert 1.0 / n < 3 * scale < 1.0 / 6  # the floor is the noise's, far below column 0's
    M = spec.estimate(prob, source=make_noise_source(1))
    floor = bounds**2 * 3 * scale
    assert np.all(floor * (1 - 1e-12) <= M) and np.all(bounds**2 >= M)
    # a zero column's estimate is its noise, above three scales with odds e^-3 / 2: floored
    hits = np.isclose(M[1:], floor[1:], rtol=1e-12)
    assert hits.sum() >= p - 1 - 7  # more than 7 of 19 above it: odds about 1e-8
    # the informative column keeps its estimate (1/3 of B^2, within 25 noise scales)
    assert abs(M[0] / bounds[0] ** 2 - 1 / 3) < 25 * scale
    # noise so large that three scales exceed the bound: every M_j is the bound's
    huge = private_spec(prob, epsilon=1e-3, bounds=bounds)
    huge = huge.estimate(prob, source=make_noise_source(2))
    np.testing.assert_array_equal(huge, bounds**2)


def test_private_with_infinite_epsilon_falls_back():
    X, y = data(seed_of("fallback"))
    prob = Problem(X, y, "squared")
    spec = SmoothnessSpec.create(
        prob, "private", feature_bounds=1.0, epsilon=math.inf, delta=0.0, share=0.1
    )
    assert spec.mode == "bounds" and not spec.plan.events
    fit = dp_cd(
        prob, epsilon=math.inf, delta=0.0, smoothness="private", feature_bounds=1.0, passes=1
    )
    assert fit.info["smoothness_source"] == "bounds"
    np.testing.assert_array_equal(fit.info["smoothness"], np.ones(5))
    assert PART not in fit.report.parts
    with pytest.warns(PrivacyLeakWarning):
        fit = dp_gcd(prob, epsilon=math.inf, delta=0.0, smoothness="private", n_iter=2)
    assert fit.info["smoothness_source"] == "data"


# --- validation -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["bounds", "private"])
@pytest.mark.parametrize(
    ("bounds", "match"),
    [
        ([1.0, 1.0, -0.5, 1.0, 1.0], r"column 2 has -0\.5"),
        ([1.0, np.nan, 1.0, 1.0, 1.0], "column 1 has nan"),
        ([1.0, 1.0, 1.0, 1.0, np.inf], "column 4 has inf"),
        (-1.0, "column 0 has -1"),
        ([1.0, 1.0], r"shape \(2,\); expected a scalar or \(5,\), one per column"),
        (np.ones((5, 1)), r"shape \(5, 1\)"),
    ],
)
def test_bad_feature_bounds_are_refused(mode, bounds, match):
    X, y = data(seed_of("bad bounds"))
    prob = Problem(X, y, "squared")
    with pytest.raises(ValueError, match=match):
        SmoothnessSpec.create(prob, mode, feature_bounds=bounds, epsilon=1.0, delta=DELTA)
    for solver in SOLVERS.values():
        with pytest.raises(ValueError, match=match):
            solver(prob, epsilon=1.0, delta=DELTA, smoothness=mode, feature_bounds=bounds)


def test_unknown_modes_and_non_smooth_losses_are_refused():
    X, y = data(seed_of("modes"))
    prob = Problem(X, y, "squared")
    with pytest.raises(ValueError, match="smoothness must be one of"):
        SmoothnessSpec.create(prob, "estimate")
    hinge = Problem(X, y, "hinge")
    spec = SmoothnessSpec.create(hinge, "bounds", feature_bounds=1.0)
    with pytest.raises(ValueError, match="not smooth"):
        spec.estimate(hinge, source=None)


@pytest.mark.parametrize("sparse", [False, True])
def test_clipped_column_mean_squares(sparse):
    rng = np.random.default_rng(seed_of("clipped squares", sparse))
    X = rng.standard_normal((60, 4)) * 2
    X[rng.random((60, 4)) < 0.5] = 0.0
    ceilings = np.array([0.5, 1.0, 4.0, np.inf])
    expected = np.minimum(X**2, ceilings).mean(axis=0)
    got = clipped_column_mean_squares(sp.csr_matrix(X) if sparse else X, ceilings)
    np.testing.assert_allclose(got, expected, rtol=1e-14)


def test_private_or_bounds_estimates_only_where_the_noise_can_inform_the_steps():
    # the decision reads n, p and the target only: the per-column Laplace scale against
    # INFORMATIVE_NOISE, before any record is read
    from dpglm.solvers.smoothness import INFORMATIVE_NOISE

    for n, p, epsilon in ((1500, 500, 1.0), (1496, 100, 1.0), (30000, 100, 1.0), (1496, 100, 4.0)):
        prob = Problem(np.zeros((n, p)), np.zeros(n), "squared")
        private = private_spec(prob, epsilon=epsilon)
        scale = private.plan.events[0].noise_multiplier / n
        chosen = SmoothnessSpec.create(
            prob, "private-or-bounds", feature_bounds=1.0, epsilon=epsilon, delta=DELTA
        )
        if scale > INFORMATIVE_NOISE:
            assert chosen.mode == "bounds" and chosen.plan.events == ()
        else:
            assert chosen.mode == "private" and chosen.plan.events == private.plan.events
    # both outcomes occur among these shapes: madelon's and communities' at epsilon 1 take
    # the bounds, the larger table and communities at epsilon 4 the estimate
    modes = [
        SmoothnessSpec.create(
            Problem(np.zeros((n, p)), np.zeros(n), "squared"), "private-or-bounds",
            feature_bounds=1.0, epsilon=e, delta=DELTA,
        ).mode
        for n, p, e in ((1500, 500, 1.0), (30000, 100, 1.0))
    ]  # fmt: skip
    assert modes == ["bounds", "private"]
