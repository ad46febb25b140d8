"""AdaSSP: the non-private solution, the plan and its sensitivities (checked against the worst
replacements of a record), the noise of each release (a seeded statistical test that a correct
release passes with probability above 1 - 1e-6 and a release with half its noise fails), the
adaptive ridge, accuracy at epsilon = 1, the registry, and the refusals.
"""

import importlib
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dpglm.penalties import L1, L2, ElasticNet
from dpglm.privacy.accounting import account
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.events import GaussianEvent, PrivacyPlan
from dpglm.problem import Problem
from dpglm.solvers.adassp import (
    Released,
    adassp,
    choose_ridge,
    clipped_statistics,
    prepare,
    release_statistics,
)
from dpglm.solvers.registry import ProblemShape, Settings, get_solver
from solver_problems import make_data, seed_of, with_less_noise

# the module, not the solver function the package may export under the same name
adassp_module = importlib.import_module("dpglm.solvers.adassp")

DELTA = 1e-6


def _setup(shape, feature_bounds, target_bound, epsilon=1.0, delta=DELTA, rho=0.05):
    return prepare(
        shape,
        epsilon=epsilon,
        delta=delta,
        feature_bounds=feature_bounds,
        target_bound=target_bound,
        failure_probability=rho,
        accountant="auto",
    )


def _upper(matrix):
    return matrix[np.triu_indices(matrix.shape[0])]


# --- epsilon = inf: least squares (ridge) on the clipped records --------------------------


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
@pytest.mark.parametrize("intercept", [False, True], ids=["no-intercept", "intercept"])
@pytest.mark.parametrize("penalty", [None, L2(0.05)], ids=["none", "l2"])
def test_non_private_fit_is_numpys_solution_on_the_clipped_records(sparse, intercept, penalty):
    rng = np.random.default_rng(seed_of("non-private", sparse, intercept, repr(penalty)))
    n, p = 400, 4
    bounds = np.array([1.0, 0.5, 2.0, 1.0])
    X = rng.uniform(-1.5, 1.5, (n, p)) * np.array([1.0, 1.0, 2.0, 0.5])
    if sparse:
        X[rng.random((n, p)) > 0.5] = 0.0
    y = X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.3 + 0.2 * rng.standard_normal(n)
    Y = 1.5
    assert (np.abs(X) > bounds).any() and (np.abs(y) > Y).any()  # clipping matters
    prob = Problem(sp.csc_matrix(X) if sparse else X, y, "squared", penalty, intercept)
    fit = adassp(prob, epsilon=math.inf, delta=0.0, feature_bounds=bounds, target_bound=Y)

    F = np.clip(X, -bounds, bounds)
    yc = np.clip(y, -Y, Y)
    if intercept:
        F = np.hstack([F, np.ones((n, 1))])
    alpha = 0.0 if penalty is None else penalty.alpha
    ridge = np.diag(np.r_[np.full(p, n * alpha), np.zeros(int(intercept))])
    expected = np.linalg.solve(F.T @ F + ridge, F.T @ yc)
    np.testing.assert_allclose(fit.theta, expected, rtol=1e-9, atol=1e-12)
    # and it is the minimiser of dpglm's objective on the clipped problem: the risk's
    # gradient plus the penalty's (alpha w, none on the intercept) vanishes
    clipped = Problem(np.clip(X, -bounds, bounds), yc, "squared", penalty, intercept)
    stationarity = clipped.gradient(fit.theta)
    stationarity[:p] += alpha * fit.coef
    np.testing.assert_allclose(stationarity, 0.0, atol=1e-10)
    # not the solution on the raw records: the clipping is applied
    raw = np.hstack([X, np.ones((n, 1))]) if intercept else X
    assert not np.allclose(expected, np.linalg.solve(raw.T @ raw + ridge, raw.T @ y))
    assert fit.info["ridge"] == 0.0
    assert fit.info["noise_std"] == {"lambda_min": 0.0, "X^T X": 0.0, "X^T y": 0.0}
    assert fit.report.non_private and not fit.report.guarantee
    assert fit.n_iter == 1
    np.testing.assert_array_equal(fit.history.thetas[-1], fit.theta)


# --- the plan: three Gaussian releases, their sensitivities, the accounted epsilon ---------


@pytest.mark.parametrize("intercept", [False, True], ids=["no-intercept", "intercept"])
def test_the_plan_has_the_derived_sensitivities_and_meets_the_target(intercept):
    bounds, Y = [1.0, 2.0, 0.5], 3.0
    # X_b**2 = sum_j B_j**2, plus 1 for the intercept's constant column
    squared = 1.0 + 4.0 + 0.25 + float(intercept)
    row = math.sqrt(squared)
    shape = ProblemShape(1000, 3, "squared", L2(0.1), fit_intercept=intercept)
    for epsilon in (0.3, 1.0, 4.0):
        plan = get_solver("adassp").plan(
            shape, epsilon=epsilon, delta=DELTA, feature_bounds=bounds, target_bound=Y
        )
        assert plan.neighbouring == "replace_one"
        assert [e.kind for e in plan.events] == ["gaussian"] * 3
        assert [e.count for e in plan.events] == [1, 1, 1]
        sensitivities = [e.sensitivity for e in plan.events]
        np.testing.assert_allclose(
            sensitivities, [squared, math.sqrt(2.0) * squared, 2.0 * row * Y], rtol=1e-15
        )
        assert sensitivities[0] == squared  # exact, not squared from a square root
        # one multiplier for the three releases, calibrated to the target and no further
        multipliers = {e.noise_multiplier for e in plan.events}
        assert len(multipliers) == 1 and 0.0 < multipliers.pop() < math.inf
        spent = account(plan, DELTA).epsilon
        assert spent <= epsilon
        assert spent >= 0.99 * epsilon
        # equal multipliers compose like one Gaussian release of sqrt(3) times less noise
        z = plan.events[0].noise_multiplier
        assert math.isclose(account(plan, DELTA, "gdp").epsilon, spent, rel_tol=1e-9)
        single = PrivacyPlan([GaussianEvent(noise_multiplier=z / math.sqrt(3.0))])
        assert math.isclose(account(single, DELTA, "gdp").epsilon, spent, rel_tol=1e-6)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
def test_the_plan_is_the_plan_the_fit_charges(sparse):
    X, y = make_data(seed_of("charged", sparse), n=300, p=6, sparse=sparse)
    prob = Problem(X, y, "squared", L2(0.01), fit_intercept=True)
    solver = get_solver("adassp")
    params = {"feature_bounds": 1.0, "target_bound": 2.0}
    budget = PrivacyBudget(epsilon=10.0, delta=1e-3)
    fit = solver.fit(prob, epsilon=0.7, delta=DELTA, budget=budget, random_state=1, **params)
    charged = budget.charges[-1].plan
    assert solver.plan(prob, epsilon=0.7, delta=DELTA, **params) == charged
    assert solver.plan(ProblemShape.of(prob), epsilon=0.7, delta=DELTA, **params) == charged
    assert solver.plan(ProblemShape.of(prob), epsilon=0.3, delta=DELTA, **params) != charged
    assert fit.report.epsilon <= 0.7
    assert [m.sensitivity for m in fit.report.mechanisms] == [
        e.sensitivity for e in charged.events
    ]
    # the failure probability moves the ridge only, never the plan
    other = solver.plan(prob, epsilon=0.7, delta=DELTA, failure_probability=0.2, **params)
    assert other == charged


# --- the sensitivities bound every replacement of one record --------------------------------


def _corners(bounds, rng, count):
    """Records on the corners of the box (the largest rows), random signs."""
    return rng.choice([-1.0, 1.0], size=(count, len(bounds))) * bounds


def test_no_replacement_of_a_record_moves_a_statistic_beyond_its_sensitivity():
    """The worst replacements of one record, on the statistics the solver computes."""
    rng = np.random.default_rng(seed_of("sensitivities"))
    bounds, Y = np.array([1.0, 0.5, 2.0]), 1.5
    for intercept in (False, True):
        setup = _setup(ProblemShape(8, 3, "squared", fit_intercept=intercept), bounds, Y)
        limit = [e.sensitivity for e in setup.fit_plan.template.events]
        worst = np.zeros(3)
        for trial in range(300):
            X = rng.uniform(-1, 1, (8, 3)) * bounds
            y = rng.uniform(-Y, Y, 8)
            # the replaced and the new record: corners (extreme rows), scaled or unclipped
            old, new = _corners(bounds, rng, 2) * rng.choice([1.0, 3.0, 0.3], size=(2, 1))
            targets = rng.choice([-1.0, 1.0, 5.0], size=2) * Y
            if trial == 0:  # the replacement that moves X^T y the most: a corner, y flipped
                new, targets = old, np.array([Y, -Y])
            X[0], X2 = old, X.copy()
            X2[0] = new
            y2 = y.copy()
            y[0], y2[0] = targets
            a = clipped_statistics(Problem(X, y, "squared", None, intercept), bounds, Y)
            b = clipped_statistics(Problem(X2, y2, "squared", None, intercept), bounds, Y)
            moved = [
                abs(a.lambda_min - b.lambda_min),
                np.linalg.norm(_upper(a.gram) - _upper(b.gram)),
                np.linalg.norm(a.moment - b.moment),
            ]
            worst = np.maximum(worst, moved)
        assert (worst <= np.array(limit) * (1.0 + 1e-12)).all(), (worst, limit)
        # X^T y reaches its sensitivity: the bound is not loose there
        assert worst[2] >= (1.0 - 1e-12) * limit[2], (worst, limit)


def test_the_sensitivities_are_attained_by_rows_of_norm_x_b():
    """The docstring's derivation holds for any rows of norm <= X_b, and is tight there: no
    smaller sensitivity is valid for them (the box of the feature bounds lies inside)."""
    bounds, Y = [1.0, 0.5, 2.0], 1.5
    setup = _setup(ProblemShape(8, 3, "squared"), bounds, Y)
    eigenvalue, gram, moment = (e.sensitivity for e in setup.fit_plan.template.events)
    row = setup.row_bound
    assert row == pytest.approx(math.sqrt(1.0 + 0.25 + 4.0))
    e1, e2 = np.eye(3)[0], np.eye(3)[1]

    def lambda_min(rows):
        return np.linalg.eigvalsh(rows.T @ rows)[0]

    # lambda_min: the one row along e1 replaced by one along e2 (Weyl's bound, attained)
    others = np.array([[0.0, 10.0, 0.0], [0.0, 0.0, 10.0]])
    before = lambda_min(np.vstack([others, row * e1]))
    after = lambda_min(np.vstack([others, row * e2]))
    assert before - after == pytest.approx(eigenvalue, rel=1e-12)
    # the upper triangle of X^T X: two rows of norm X_b on disjoint coordinates
    change = _upper(np.outer(row * e1, row * e1)) - _upper(np.outer(row * e2, row * e2))
    assert np.linalg.norm(change) == pytest.approx(gram, rel=1e-12)
    # X^T y: a row and its opposite, the same extreme target
    assert np.linalg.norm(row * e1 * Y - (-row * e1) * Y) == pytest.approx(moment, rel=1e-12)

    # and no replacement between rows of norm <= X_b and targets in [-Y, Y] goes beyond
    rng = np.random.default_rng(seed_of("row norm"))
    pairs = rng.standard_normal((5000, 2, 3))
    pairs *= (
        row * rng.uniform(0.5, 1.0, (5000, 2, 1)) / np.linalg.norm(pairs, axis=2, keepdims=True)
    )
    targets = rng.uniform(-Y, Y, (5000, 2))
    a, b = pairs[:, 0], pairs[:, 1]
    rows, cols = np.triu_indices(3)
    moves = a[:, rows] * a[:, cols] - b[:, rows] * b[:, cols]
    assert np.linalg.norm(moves, axis=1).max() <= gram * (1 + 1e-12)
    shifts = a * targets[:, :1] - b * targets[:, 1:]
    assert np.linalg.norm(shifts, axis=1).max() <= moment * (1 + 1e-12)
    base = rng.standard_normal((6, 3))
    for x, x2 in zip(a[:500], b[:500], strict=True):
        moved = lambda_min(np.vstack([base, x])) - lambda_min(np.vstack([base, x2]))
        assert abs(moved) <= eigenvalue * (1 + 1e-12)


# --- the noise of each release: std = calibrated multiplier x derived sensitivity ----------

#: draws of each release in the statistical test
DRAWS = 2000
#: probability that a correct release fails the test (split over its three releases)
ALPHA = 1e-6


def _variance_band(k, alpha):
    """``[lo, hi]`` holding ``chi2(k) / k`` with probability ``1 - alpha``."""
    return stats.chi2.ppf(alpha / 2, k) / k, stats.chi2.isf(alpha / 2, k) / k


def _noise(seed):
    """Each release's mean squared noise over the variance the docstring derives, the number
    of draws behind it, and the stds the releases report against the derived ones."""
    bounds, Y = np.array([1.0, 0.5, 2.0]), 1.5
    X, y = make_data(seed, n=50, p=3)
    prob = Problem(X, y, "squared", None, fit_intercept=True)
    setup = _setup(ProblemShape.of(prob), bounds, Y)
    spent = setup.fit_plan.spend(random_state=seed)
    z = spent.plan.events[0].noise_multiplier
    # the stds the module docstring derives, recomputed by hand: X_b**2 = 1 + 1/4 + 4 + 1
    squared = 1.0 + 0.25 + 4.0 + 1.0
    derived = [z * squared, z * math.sqrt(2.0) * squared, z * 2.0 * math.sqrt(squared) * Y]
    exact = clipped_statistics(prob, bounds, Y)
    noise = [[], [], []]
    for _ in range(DRAWS):
        released = release_statistics(exact, spent)
        np.testing.assert_array_equal(released.gram, released.gram.T)
        noise[0].append(released.lambda_min - exact.lambda_min)
        noise[1].append(_upper(released.gram) - _upper(exact.gram))
        noise[2].append(released.moment - exact.moment)
    draws = [np.ravel(values) for values in noise]
    ratios = [np.mean(d**2) / s**2 for d, s in zip(draws, derived, strict=True)]
    return ratios, [d.size for d in draws], (released.stds, derived)


def test_each_release_draws_the_noise_of_its_calibrated_multiplier_and_sensitivity():
    # DRAWS x (1, 10, 4) draws of unit variance when the std is right: the mean square is
    # chi2(k) / k, inside its band with probability 1 - ALPHA / 3 for each release
    ratios, counts, (reported, derived) = _noise(seed_of("noise std"))
    np.testing.assert_allclose(reported, derived, rtol=1e-12)
    for ratio, k in zip(ratios, counts, strict=True):
        lo, hi = _variance_band(k, ALPHA / 3)
        assert lo <= ratio <= hi, (ratios, counts)
        assert lo > 0.5  # power: half the noise (a ratio of 1/4) cannot pass


def test_a_release_with_half_its_noise_fails_the_noise_test(monkeypatch):
    with_less_noise(monkeypatch, factor=0.5)
    ratios, counts, (reported, derived) = _noise(seed_of("half noise"))
    # the draws alone refute it, release by release; and so do the stds it reports
    for ratio, k in zip(ratios, counts, strict=True):
        assert ratio < _variance_band(k, ALPHA / 3)[0], ratios
    np.testing.assert_allclose(reported, 0.5 * np.array(derived), rtol=1e-12)


# --- the adaptive ridge -----------------------------------------------------------------------


def test_the_ridge_follows_the_papers_rule_with_the_calibrated_stds():
    d, rho = 6, 0.05
    released = Released(40.0, np.eye(d), np.zeros(d), (3.0, 5.0, 1.0))
    lower, ridge = choose_ridge(released, rho)
    assert lower == pytest.approx(40.0 - 3.0 * math.sqrt(2.0 * math.log(1.0 / rho)))
    assert ridge == pytest.approx(5.0 * math.sqrt(d * math.log(2.0 * d * d / rho)) - lower)
    # a larger lambda_min needs no ridge; a negative bound is floored at 0
    assert choose_ridge(Released(1e6, np.eye(d), np.zeros(d), (3.0, 5.0, 1.0)), rho)[1] == 0
    assert choose_ridge(Released(-10.0, np.eye(d), np.zeros(d), (3.0, 5.0, 1.0)), rho)[0] == 0


def test_the_lower_bound_on_lambda_min_holds_with_the_failure_probability():
    """lambda~ <= lambda_min except with probability exp(-t**2 / 2) = rho at most."""
    bounds, Y, rho = 1.0, 1.0, 0.05
    X, y = make_data(seed_of("lower bound"), n=200, p=3)
    prob = Problem(X, y, "squared")
    setup = _setup(ProblemShape.of(prob), bounds, Y, rho=rho)
    spent = setup.fit_plan.spend(random_state=seed_of("lower bound"))
    exact = clipped_statistics(prob, bounds, Y)
    above = sum(
        choose_ridge(release_statistics(exact, spent), rho)[0] > exact.lambda_min
        for _ in range(DRAWS)
    )
    # each draw exceeds with probability P[Z > sqrt(2 log 20)] = 0.0072 <= rho; the band
    # holds with probability > 1 - 1e-6 (a shift 10 times too large would leave none above,
    # one too small, or none, would exceed rho)
    rate = stats.norm.sf(math.sqrt(2.0 * math.log(1.0 / rho)))
    assert rate <= rho
    assert stats.binom.cdf(0, DRAWS, rate) + stats.binom.sf(0.02 * DRAWS, DRAWS, rate) < 1e-6
    assert 1 <= above <= 0.02 * DRAWS, above


def test_the_ridge_leaves_the_intercept_unpenalised(monkeypatch):
    rng = np.random.default_rng(seed_of("intercept"))
    X = rng.uniform(-1, 1, (300, 3))
    y = X @ np.array([0.5, -0.5, 0.2]) + 0.4
    prob = Problem(X, y, "squared", fit_intercept=True)
    monkeypatch.setattr(adassp_module, "choose_ridge", lambda released, rho: (0.0, 1e12))
    fit = adassp(prob, epsilon=math.inf, delta=0.0, feature_bounds=1.0, target_bound=2.0)
    np.testing.assert_allclose(fit.coef, 0.0, atol=1e-8)
    assert fit.intercept == pytest.approx(y.mean(), rel=1e-6)
    assert fit.info["ridge"] == 1e12


# --- accuracy -------------------------------------------------------------------------------


def _r2(X, y, coef, intercept):
    residual = y - X @ coef - intercept
    return 1.0 - residual @ residual / np.sum((y - y.mean()) ** 2)


@pytest.mark.parametrize("intercept", [False, True], ids=["no-intercept", "intercept"])
def test_private_r2_is_close_to_the_non_private_one_at_epsilon_one(intercept):
    rng = np.random.default_rng(seed_of("accuracy", intercept))
    n, p = 20_000, 5
    X = rng.uniform(-1, 1, (n, p))
    y = X @ np.array([0.4, -0.3, 0.2, 0.1, -0.2]) + 0.1 + 0.1 * rng.standard_normal(n)
    F = np.hstack([X, np.ones((n, 1))]) if intercept else X
    theta = np.linalg.lstsq(F, y, rcond=None)[0]
    reference = _r2(X, y, theta[:p], theta[p] if intercept else 0.0)
    prob = Problem(X, y, "squared", fit_intercept=intercept)
    fit = adassp(
        prob,
        epsilon=1.0,
        delta=1.0 / n**2,
        feature_bounds=1.0,
        target_bound=1.5,
        random_state=seed_of("accuracy fit", intercept),
    )
    private = _r2(X, y, fit.coef, fit.intercept)
    assert reference > 0.8
    assert reference - 0.01 <= private <= reference + 1e-12, (private, reference)
    assert fit.report.epsilon <= 1.0 and fit.report.guarantee
    assert min(fit.info["noise_std"].values()) > 0.0


def test_a_seed_reproduces_the_fit_and_the_noise_depends_on_it():
    X, y = make_data(seed_of("seed"), n=500, p=3)
    prob = Problem(X, y, "squared", fit_intercept=True)
    fits = [
        adassp(prob, epsilon=1.0, delta=DELTA, feature_bounds=1.0, random_state=seed)
        for seed in (3, 3, 4)
    ]
    np.testing.assert_array_equal(fits[0].theta, fits[1].theta)
    assert not np.array_equal(fits[0].theta, fits[2].theta)


# --- the registry ---------------------------------------------------------------------------


def test_adassp_is_registered_for_the_estimators():
    solver = get_solver("adassp")
    assert solver.fit is adassp
    # the estimators give it their scaled records' bound 1, and nothing to clip or step
    mapping = solver.estimator
    assert mapping.bounds and mapping.clip is None and not mapping.step and mapping.passes is None
    assert solver.hyperparameters == (
        "feature_bounds",
        "target_bound",
        "failure_probability",
        "accountant",
    )
    assert dict(solver.defaults) == {
        "feature_bounds": None,
        "target_bound": 1.0,
        "failure_probability": 0.05,
        "accountant": "auto",
    }
    shape = ProblemShape(100, 3, "squared", L2(0.1))
    assert solver.arguments(Settings(feature_bounds=1.0), shape) == {"feature_bounds": 1.0}
    assert solver.accepts(shape) is None
    assert solver.accepts(ProblemShape(100, 3, "squared", ElasticNet(0.1, l1_ratio=0.0))) is None


# --- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("datafit", "penalty", "message"),
    [
        ("logistic", None, r"AdaSSP fits the squared loss only .* use DP-CD, DP-GCD, DP-SGD"),
        ("huber", L2(0.1), r"the huber loss has none: use DP-CD"),
        ("squared", L1(0.1), r"AdaSSP takes no penalty or an L2 penalty; L1\(alpha=0.1\)"),
        ("squared", ElasticNet(0.1, 0.5), r"has an L1 part, bounds or is not separable"),
    ],
)
def test_a_refused_problem_is_refused_with_its_reason_before_the_charge(datafit, penalty, message):
    X, y = make_data(seed_of("refused", datafit), n=50, p=3, classification=datafit == "logistic")
    prob = Problem(X, y, datafit, penalty)
    budget = PrivacyBudget(10.0, 1e-3)
    with pytest.raises(ValueError, match=message) as caught:
        adassp(prob, epsilon=1.0, delta=DELTA, feature_bounds=1.0, budget=budget)
    assert budget.charges == ()
    assert get_solver("adassp").accepts(ProblemShape.of(prob)) == str(caught.value)


def test_missing_feature_bounds_are_refused_with_what_to_give():
    X, y = make_data(seed_of("no bounds"), n=50, p=3)
    budget = PrivacyBudget(10.0, 1e-3)
    with pytest.raises(ValueError, match=r"^feature_bounds is required: AdaSSP needs public"):
        adassp(Problem(X, y, "squared"), epsilon=1.0, delta=DELTA, budget=budget)
    assert budget.charges == ()
    # even without privacy: the solver is defined on the bounded records
    with pytest.raises(ValueError, match="AdaSSP needs public feature bounds"):
        get_solver("adassp").plan(ProblemShape(50, 3, "squared"), epsilon=math.inf, delta=0.0)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"feature_bounds": [1.0, 1.0]}, r"^feature_bounds has shape \(2,\); expected a scalar"),
        ({"feature_bounds": [1.0, 0.0, 1.0]}, r"^feature_bounds must be finite and > 0; column 1"),
        ({"feature_bounds": math.inf}, r"^feature_bounds must be finite and > 0"),
        ({"feature_bounds": "abc"}, r"^feature_bounds must be a number"),
        ({"target_bound": 0.0}, r"^target_bound must be positive and finite"),
        ({"target_bound": math.inf}, r"^target_bound must be positive and finite"),
        ({"failure_probability": 1.0}, r"^failure_probability must lie in \(0, 1\)"),
        ({"failure_probability": 0.0}, r"^failure_probability must be positive"),
        ({"delta": 0.0}, r"^delta must be > 0 for a private fit: Gaussian noise"),
    ],
)
def test_invalid_settings_are_refused_by_name(params, message):
    shape = ProblemShape(50, 3, "squared")
    arguments = {"epsilon": 1.0, "delta": DELTA, "feature_bounds": 1.0, **params}
    epsilon, delta = arguments.pop("epsilon"), arguments.pop("delta")
    with pytest.raises(ValueError, match=message):
        get_solver("adassp").plan(shape, epsilon=epsilon, delta=delta, **arguments)


def test_records_in_row_chunks_are_refused():
    reason = get_solver("adassp").accepts(ProblemShape(50, 3, "squared", chunked=True))
    assert reason.startswith("AdaSSP needs an in-memory Problem")
