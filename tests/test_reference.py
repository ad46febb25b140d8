"""The non-private reference optimum, checked against independent solvers.

Each case compares ``solve_reference`` with scikit-learn or skglm run at tight
tolerances (or an equivalent reformulation) and requires agreement of the
optimal objective to relative 1e-9, plus a duality-gap certificate where the
penalty admits one.
"""

import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import ElasticNet as SkElasticNet
from sklearn.linear_model import Lasso, LogisticRegression, Ridge
from sklearn.svm import SVC, LinearSVC

from dpglm.data import load
from dpglm.datafits import Huber, Logistic, Squared, SquaredHinge
from dpglm.penalties import L1, L2, Box, ElasticNet, L1Ball, NoPenalty
from dpglm.problem import Problem
from dpglm.solvers.reference import TARGET_RTOL, duality_gap, solve_reference

RTOL = TARGET_RTOL


def regression(n=80, p=12, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) * rng.uniform(0.5, 3.0, p)
    if sparse:
        X = sp.random(n, p, density=0.3, random_state=seed, format="csc") * 3.0
    w = np.where(rng.random(p) < 0.4, rng.standard_normal(p) * 2, 0.0)
    y = np.asarray(X @ w).ravel() + 0.5 * rng.standard_normal(n) + 1.0
    return X, y


def classification(n=120, p=8, seed=1, sparse=False):
    X, z = regression(n, p, seed, sparse)
    rng = np.random.default_rng(seed + 100)
    y = np.where(z - z.mean() + rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def assert_same_optimum(problem, sol, theta_other, certified=True):
    other = problem.objective(theta_other)
    assert sol.objective == pytest.approx(other, rel=RTOL)
    # the reference is never worse than the independent solver beyond rounding
    assert sol.objective <= other + 1e-12 * abs(other)
    if certified:
        assert sol.certified, f"gap {sol.gap} for objective {sol.objective} ({sol.method})"


@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_lasso_matches_scikit_learn(intercept, sparse):
    X, y = regression(sparse=sparse)
    alpha = 0.05
    prob = Problem(X, y, Squared(), L1(alpha), fit_intercept=intercept)
    sol = solve_reference(prob)
    sk = Lasso(alpha=alpha, fit_intercept=intercept, tol=1e-14, max_iter=10**6).fit(X, y)
    theta = np.append(sk.coef_, sk.intercept_) if intercept else sk.coef_
    assert_same_optimum(prob, sol, theta)


@pytest.mark.parametrize("intercept", [False, True])
def test_elastic_net_matches_scikit_learn(intercept):
    X, y = regression(seed=3)
    prob = Problem(X, y, Squared(), ElasticNet(0.1, 0.4), fit_intercept=intercept)
    sol = solve_reference(prob)
    sk = SkElasticNet(alpha=0.1, l1_ratio=0.4, fit_intercept=intercept, tol=1e-14, max_iter=10**6)
    sk.fit(X, y)
    theta = np.append(sk.coef_, sk.intercept_) if intercept else sk.coef_
    assert_same_optimum(prob, sol, theta)


@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_ridge_matches_scikit_learn(intercept, sparse):
    X, y = regression(seed=4, sparse=sparse)
    n, alpha = X.shape[0], 0.3
    prob = Problem(X, y, Squared(), L2(alpha), fit_intercept=intercept)
    sol = solve_reference(prob)
    # scikit-learn's Ridge minimises ||y - Xw||^2 + a ||w||^2, i.e. ours times 2n with a = n alpha
    sk = Ridge(alpha=n * alpha, fit_intercept=intercept, solver="auto", tol=1e-14).fit(X, y)
    theta = np.append(sk.coef_, sk.intercept_) if intercept else sk.coef_
    assert_same_optimum(prob, sol, theta)


def test_least_squares_without_penalty_reaches_the_normal_equations():
    X, y = regression(seed=5)
    prob = Problem(X, y, Squared(), NoPenalty(), fit_intercept=True)
    sol = solve_reference(prob)
    assert sol.violation <= 1e-10 * np.abs(y).max()
    theta = np.linalg.solve(
        np.column_stack([X, np.ones(len(y))]).T @ np.column_stack([X, np.ones(len(y))]),
        np.column_stack([X, np.ones(len(y))]).T @ y,
    )
    assert_same_optimum(prob, sol, theta, certified=False)


@pytest.mark.parametrize("intercept", [False, True])
def test_logistic_l2_matches_scikit_learn(intercept):
    X, y = classification()
    n, alpha = X.shape[0], 0.01
    prob = Problem(X, y, Logistic(), L2(alpha), fit_intercept=intercept)
    sol = solve_reference(prob)
    sk = LogisticRegression(
        C=1.0 / (n * alpha), fit_intercept=intercept, tol=1e-14, max_iter=10**5
    )
    sk.fit(X, y)
    theta = np.append(sk.coef_.ravel(), sk.intercept_) if intercept else sk.coef_.ravel()
    assert_same_optimum(prob, sol, theta)


@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_logistic_l1_matches_skglm(intercept, sparse):
    from skglm import GeneralizedLinearEstimator
    from skglm import penalties as skglm_penalties
    from skglm.datafits import Logistic as SkglmLogistic
    from skglm.solvers import ProxNewton

    X, y = classification(seed=2, sparse=sparse)
    alpha = 0.02
    prob = Problem(X, y, Logistic(), L1(alpha), fit_intercept=intercept)
    sol = solve_reference(prob)
    est = GeneralizedLinearEstimator(
        SkglmLogistic(),
        skglm_penalties.L1(alpha),
        ProxNewton(tol=1e-14, max_iter=200, fit_intercept=intercept),
    )
    est.fit(X, y)
    coef = np.ravel(est.coef_)
    theta = np.append(coef, est.intercept_) if intercept else coef
    assert_same_optimum(prob, sol, theta)


def best_liblinear(prob, loss, C, X, y):
    """Best of five seeded liblinear runs.

    liblinear's dual coordinate descent shuffles its order, and at a tolerance
    of 1e-14 a few seeds stop at its iteration cap far from the optimum.
    """
    best = np.inf
    for seed in range(5):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # liblinear's iteration cap
            sk = LinearSVC(C=C, loss=loss, fit_intercept=False, tol=1e-14, max_iter=10**6,
                           random_state=seed).fit(X, y)  # fmt: skip
        if prob.objective(sk.coef_.ravel()) < best:
            best, coef = prob.objective(sk.coef_.ravel()), sk.coef_.ravel()
    return coef


def test_squared_hinge_l2_matches_liblinear():
    X, y = classification(seed=6)
    n, alpha = X.shape[0], 0.05
    prob = Problem(X, y, SquaredHinge(), L2(alpha))
    sol = solve_reference(prob)
    assert_same_optimum(prob, sol, best_liblinear(prob, "squared_hinge", 1.0 / (n * alpha), X, y))


def test_hinge_l2_matches_liblinear():
    X, y = classification(n=90, seed=7)
    n, alpha = X.shape[0], 0.05
    prob = Problem(X, y, "hinge", L2(alpha))
    sol = solve_reference(prob)
    assert_same_optimum(prob, sol, best_liblinear(prob, "hinge", 1.0 / (n * alpha), X, y))


def test_hinge_l2_with_intercept_is_certified_and_beats_libsvm():
    """libsvm's intercept plateaus ~1e-7 above the optimum whatever its tolerance;
    the reference carries an exact duality-gap certificate instead."""
    X, y = classification(n=90, seed=7)
    n, alpha = X.shape[0], 0.05
    prob = Problem(X, y, "hinge", L2(alpha), fit_intercept=True)
    sol = solve_reference(prob)
    assert sol.certified and sol.gap <= 1e-11 * sol.objective
    sk = SVC(kernel="linear", C=1.0 / (n * alpha), tol=1e-12).fit(X, y)
    other = prob.objective(np.append(sk.coef_.ravel(), sk.intercept_))
    assert sol.objective <= other <= sol.objective * (1 + 1e-6)


@pytest.mark.parametrize("penalty", [NoPenalty(), L1(0.02), Box(-0.3, 0.3), L1Ball(1.0)], ids=repr)
def test_hinge_linear_programmes_are_certified(penalty):
    X, y = classification(n=100, seed=8)
    prob = Problem(X, y, "hinge", penalty, fit_intercept=True)
    sol = solve_reference(prob)
    assert sol.method.startswith("linear programme")
    assert sol.violation <= 1e-8 or np.isnan(sol.gap) or sol.certified
    # a perturbation never improves on the LP optimum
    rng = np.random.default_rng(0)
    for _ in range(20):
        theta = penalty.prox(sol.theta[:-1] + 1e-3 * rng.standard_normal(prob.n_features), 1.0)
        if penalty.value(theta) < np.inf:
            assert sol.objective <= prob.objective(np.append(theta, sol.theta[-1])) + 1e-12


@pytest.mark.parametrize("datafit", [Squared(), Logistic(), Huber(0.5)], ids=lambda d: d.name)
def test_l1_ball_optimum_equals_the_lasso_path_at_the_same_norm(datafit):
    """Constrained and penalised forms share their optimum at radius ||w_lambda||_1."""
    X, y = classification(seed=9) if datafit.binary_labels else regression(seed=9)
    penalised = solve_reference(Problem(X, y, datafit, L1(0.02)))
    radius = np.abs(penalised.theta).sum()
    prob = Problem(X, y, datafit, L1Ball(radius))
    sol = solve_reference(prob)
    assert sol.certified, f"gap {sol.gap}"
    data_value = Problem(X, y, datafit).objective(penalised.theta)
    assert sol.objective == pytest.approx(data_value, rel=RTOL)


def test_box_constrained_logistic_is_certified_and_respects_bounds():
    X, y = classification(seed=10)
    prob = Problem(X, y, Logistic(), Box(-0.2, 0.25), fit_intercept=False)
    sol = solve_reference(prob)
    assert sol.certified
    assert np.all(sol.theta >= -0.2) and np.all(sol.theta <= 0.25)
    # the constraint binds, so the test exercises the box and not an interior optimum
    assert np.any(np.isclose(sol.theta, -0.2) | np.isclose(sol.theta, 0.25))


def test_huber_l2_has_a_tight_gap():
    X, y = regression(seed=11)
    y[:5] += 50.0  # outliers that the linear part of the loss sees
    prob = Problem(X, y, Huber(1.0), L2(0.01), fit_intercept=True)
    sol = solve_reference(prob)
    assert sol.certified
    assert sol.violation <= 1e-8


def test_duality_gap_is_an_upper_bound_on_suboptimality():
    X, y = classification(seed=12)
    prob = Problem(X, y, Logistic(), ElasticNet(0.05, 0.5), fit_intercept=True)
    sol = solve_reference(prob)
    rng = np.random.default_rng(1)
    for _ in range(10):
        theta = sol.theta + 0.05 * rng.standard_normal(prob.n_coords)
        gap = duality_gap(prob, theta)
        assert gap >= prob.objective(theta) - sol.objective - 1e-12


DATA = Path(__file__).parent / "data"


def test_real_lasso_on_communities_matches_scikit_learn():
    ds = load(DATA / "communities_crime.csv.gz")
    prob = Problem(ds.X, ds.y, Squared(), L1(1e-3), fit_intercept=True)
    sol = solve_reference(prob)
    sk = Lasso(alpha=1e-3, tol=1e-14, max_iter=10**6).fit(ds.X, ds.y)
    assert_same_optimum(prob, sol, np.append(sk.coef_, sk.intercept_))


def test_real_sparse_logistic_l1_on_phishing_is_certified():
    ds = load(DATA / "phishing.svm.gz", task="classification")
    prob = Problem(ds.X, ds.y, Logistic(), L1(1e-3), fit_intercept=True)
    sol = solve_reference(prob)
    assert sol.certified and sol.gap <= 1e-12 * sol.objective
    assert sol.violation <= 1e-12


def test_data_dependent_smoothness_is_not_needed_by_the_reference():
    X, y = regression(seed=13)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        solve_reference(Problem(X, y, Squared(), L1(0.1)))
