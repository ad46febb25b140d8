"""The scikit-learn estimators: solver choice, privacy report, budget, labels, errors.

scikit-learn's own conformance checks are in ``test_estimator_checks.py`` and
saving / loading in ``test_persistence.py``.
"""

import copy
import math
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import DataConversionWarning, NotFittedError
from sklearn.linear_model import ElasticNet, Lasso, LinearRegression, LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.utils.validation import check_is_fitted

import dpglm
from dpglm.estimators import (
    SOLVERS,
    DPElasticNet,
    DPLasso,
    DPLinearRegression,
    DPLinearSVC,
    DPLogisticRegression,
    DPRidge,
    choose_solver,
    default_delta,
)
from dpglm.exceptions import BudgetExceededError, DataError, PrivacyLeakWarning
from dpglm.penalties import L1, L2
from dpglm.penalties import ElasticNet as ElasticNetPenalty
from dpglm.preprocessing.label_sets import LabelSelection
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.report import PrivacyReport
from dpglm.problem import Problem
from dpglm.solvers.reference import solve_reference

REGRESSORS = (DPLinearRegression, DPRidge, DPLasso, DPElasticNet)
CLASSIFIERS = (DPLogisticRegression, DPLinearSVC)
INF = math.inf


def _regression(n=400, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    coef = np.linspace(1.0, -1.0, p)
    return X, X @ coef + 0.3 + 0.1 * rng.standard_normal(n)


def _classification(n=400, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    return X, (X[:, 0] - 0.5 * X[:, 1] > 0).astype(int)


def _data(cls, **kwargs):
    return _classification(**kwargs) if cls in CLASSIFIERS else _regression(**kwargs)


def _quiet_fit(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return model.fit(X, y)


# -- lazy top-level exports -------------------------------------------------------------


def test_top_level_exports_are_the_estimators():
    assert dpglm.DPRidge is DPRidge
    assert dpglm.DPLinearSVC is DPLinearSVC
    from dpglm.estimators import load_model

    assert dpglm.load_model is load_model


# -- solver="auto" ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "shape", "expected"),
    [
        (DPLinearSVC(loss="hinge"), (200, 3), "dp-sgd"),
        (DPLinearSVC(loss="hinge", penalty="l1", alpha=0.01), (200, 3), "dp-sgd"),
        (DPLasso(alpha=0.01), (200, 3), "dp-gcd"),
        (DPElasticNet(alpha=0.01), (200, 3), "dp-gcd"),
        (DPLogisticRegression(penalty="l1"), (200, 3), "dp-gcd"),
        (DPLogisticRegression(penalty="elasticnet"), (200, 3), "dp-gcd"),
        (DPRidge(alpha=0.01), (20, 30), "dp-gcd"),
        (DPLinearRegression(), (20, 20), "dp-gcd"),
        (DPRidge(alpha=0.01), (200, 3), "dp-sgd"),
        (DPLinearRegression(), (200, 3), "dp-sgd"),
        (DPElasticNet(alpha=0.01, l1_ratio=0.0), (200, 3), "dp-sgd"),
        (DPLogisticRegression(), (200, 3), "dp-sgd"),
        (DPLogisticRegression(penalty="none"), (200, 3), "dp-sgd"),
        (DPLinearSVC(), (200, 3), "dp-sgd"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_auto_solver_follows_the_documented_rule(model, shape, expected):
    X, y = _data(type(model), n=shape[0], p=shape[1])
    model.set_params(feature_bounds=1.0, random_state=0, passes=2)
    if isinstance(model, CLASSIFIERS):
        # public: a private selection on 200 records (threshold 96) may keep one label
        model.set_params(classes=[0, 1])
    model.fit(X, y)
    assert model.solver_ == expected


def test_choose_solver_reads_only_loss_penalty_and_shape():
    X, y = _regression(n=51, p=5)
    assert choose_solver(Problem(X, y, "squared", "l2")) == "dp-sgd"
    assert choose_solver(Problem(X, y, "squared", L1(0.1))) == "dp-gcd"
    assert choose_solver(Problem(X, y, "squared", ElasticNetPenalty(0.1, 0.5))) == "dp-gcd"
    assert choose_solver(Problem(X, y, "squared", L1(0.0))) == "dp-sgd"  # no L1 part
    # p >= n / 10: greedy from the ratio of the DP-GCD paper's experiments
    assert choose_solver(Problem(X[:50], y[:50], "squared", L2(0.1))) == "dp-gcd"
    assert choose_solver(Problem(X, np.sign(y), "hinge", L1(0.1))) == "dp-sgd"


@pytest.mark.parametrize("solver", ["dp-cd", "dp-gcd", "dp-sgd"])
def test_explicit_solver_is_used(solver):
    X, y = _regression(n=300)
    model = DPRidge(alpha=0.01, solver=solver, feature_bounds=1.0, random_state=0, passes=2)
    assert model.fit(X, y).solver_ == solver


def test_hinge_loss_refuses_a_coordinate_solver():
    X, y = _classification(n=100)
    with pytest.raises(ValueError, match=r"(?i)smooth|hinge"):
        DPLinearSVC(loss="hinge", solver="dp-cd", feature_bounds=1.0).fit(X, y)


# -- feature scaling is never silent ----------------------------------------------------


COORDINATE_MODELS = [
    DPRidge(alpha=0.01, solver="dp-cd"),
    DPLasso(alpha=0.01, solver="dp-gcd"),
    DPLogisticRegression(solver="dp-cd"),
    DPLinearSVC(solver="dp-gcd"),
]


@pytest.mark.parametrize("model", COORDINATE_MODELS, ids=repr)
def test_no_feature_bounds_estimates_the_ranges_privately(model):
    X, y = _data(type(model))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        model = clone(model).set_params(random_state=0, passes=2).fit(X, y)
    report = model.privacy_report_
    assert report.warnings == () and report.guarantee is True
    assert report.epsilon <= 1.0 + 1e-9
    parts = {m.part for m in report.mechanisms}
    assert "preprocessing" in parts and "training" in parts
    assert any("feature ranges released privately" in a for a in report.assumptions)


@pytest.mark.parametrize("model", COORDINATE_MODELS, ids=repr)
def test_ranges_read_from_the_data_warn_and_the_report_records_it(model):
    X, y = _data(type(model))
    with pytest.warns(PrivacyLeakWarning, match="ranges read from the data"):
        model = clone(model).set_params(feature_bounds="data", random_state=0, passes=2)
        model.fit(X, y)
    report = model.privacy_report_
    assert report.warnings and "ranges read from the data" in report.warnings[0]
    assert report.guarantee is False
    assert not report.non_private
    assert "does NOT hold" in str(report)


@pytest.mark.parametrize("model", COORDINATE_MODELS, ids=repr)
def test_smoothness_read_from_the_data_warns(model):
    X, y = _data(type(model))
    with pytest.warns(PrivacyLeakWarning, match="smoothness"):
        model = clone(model).set_params(smoothness="data", random_state=0, passes=2).fit(X, y)
    assert model.privacy_report_.guarantee is False


@pytest.mark.parametrize("model", COORDINATE_MODELS, ids=repr)
def test_feature_bounds_give_a_guarantee_without_warning(model):
    X, y = _data(type(model))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        model.set_params(feature_bounds=1.0, random_state=0, passes=2).fit(X, y)
    report = model.privacy_report_
    assert report.warnings == ()
    assert report.guarantee is True
    assert report.epsilon <= 1.0 + 1e-9
    assert any("supplied by the user" in a for a in report.assumptions)


def test_dp_sgd_needs_no_feature_bounds():
    X, y = _classification()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        model = DPLinearSVC(loss="hinge", random_state=0).fit(X, y)
    assert model.solver_ == "dp-sgd"
    assert model.privacy_report_.guarantee


@pytest.mark.parametrize("solver", ["dp-cd", "dp-gcd"])
def test_private_smoothness_is_a_visible_charged_part(solver):
    X, y = _regression()
    model = DPRidge(
        alpha=0.01, solver=solver, smoothness="private", feature_bounds=1.0, target_bounds=(-3, 3)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        model.set_params(random_state=0, passes=2).fit(X, y)
    report = model.privacy_report_
    assert set(report.parts) == {"smoothness estimation", "training"}
    assert 0 < report.parts["smoothness estimation"] < report.parts["training"]
    assert report.epsilon <= 1.0 + 1e-9
    assert report.guarantee
    assert any(m.part == "smoothness estimation" for m in report.mechanisms)
    assert "smoothness estimation" in str(report)


def test_private_smoothness_without_public_bounds_follows_the_private_ranges():
    X, y = _regression()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        model = DPRidge(solver="dp-cd", smoothness="private", random_state=0).fit(X, y)
    report = model.privacy_report_
    assert set(report.parts) == {"preprocessing", "smoothness estimation", "training"}
    assert report.guarantee and report.epsilon <= 1.0 + 1e-9


# -- epsilon = inf: the non-private optimum -----------------------------------------------


def _reference_theta(model, X, y):
    """The reference optimum on the records as the fitted model scaled them, on the raw scale."""
    scaling = model.scaling_
    Z, t = scaling.transform(X), scaling.transform_target(y)
    problem = Problem(Z, t, model._datafit(), model._penalty(), model.fit_intercept)
    coef, intercept = problem.split(solve_reference(problem).theta)
    coef, intercept = scaling.raw_model(coef, intercept)
    return np.append(coef, intercept) if model.fit_intercept else coef


def _on_scaled_data(model, reference, X, y):
    """``reference`` (a scikit-learn estimator) fitted on ``model``'s scaled records, raw scale."""
    scaling = model.scaling_
    reference.fit(scaling.transform(X), scaling.transform_target(y) if y.dtype.kind == "f" else y)
    return scaling.raw_model(np.ravel(reference.coef_), np.ravel(reference.intercept_)[0])


@pytest.mark.parametrize(
    "model",
    [
        DPLinearRegression(epsilon=INF),
        DPRidge(alpha=0.1, epsilon=INF),
        DPLasso(alpha=0.05, epsilon=INF),
        DPElasticNet(alpha=0.05, l1_ratio=0.3, epsilon=INF),
        DPRidge(alpha=0.1, epsilon=INF, fit_intercept=False),
    ],
    ids=repr,
)
def test_infinite_epsilon_regressors_match_the_reference_solver(model):
    X, y = _regression(p=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no privacy-leak warning: nothing claims privacy
        model.fit(X, y)
    theta = _reference_theta(model, X, y)
    fitted = np.append(model.coef_, model.intercept_) if model.fit_intercept else model.coef_
    np.testing.assert_allclose(fitted, theta, rtol=1e-10, atol=1e-12)
    # the exact ranges of the data: clipping changes nothing, and predictions are X coef + b
    np.testing.assert_allclose(model.predict(X), X @ model.coef_ + model.intercept_)
    assert model.solver_ == "reference"
    assert model.n_iter_ == 0
    report = model.privacy_report_
    assert report.non_private is True
    assert report.guarantee is False
    assert math.isinf(report.epsilon)
    assert str(report).startswith("NOT PRIVATE")


def test_infinite_epsilon_matches_scikit_learn_on_the_same_objective():
    X, y = _regression(n=300, p=4)
    n = X.shape[0]
    alpha = 0.1
    pairs = [
        (DPLinearRegression(epsilon=INF), LinearRegression()),
        # ours: (1/2n)||Xw + b - y||^2 + alpha/2 ||w||^2; sklearn: ||Xw + b - y||^2 + a ||w||^2
        (DPRidge(alpha=alpha, epsilon=INF), Ridge(alpha=n * alpha, solver="cholesky")),
        (DPLasso(alpha=0.05, epsilon=INF), Lasso(alpha=0.05, tol=1e-12, max_iter=100_000)),
        (
            DPElasticNet(alpha=0.05, l1_ratio=0.3, epsilon=INF),
            ElasticNet(alpha=0.05, l1_ratio=0.3, tol=1e-12, max_iter=100_000),
        ),
    ]
    for ours, theirs in pairs:
        # alpha applies on the scale the solvers see: records mapped into [-1, 1]
        ours.fit(X, y)
        coef, intercept = _on_scaled_data(ours, theirs, X, y)
        np.testing.assert_allclose(ours.coef_, coef, atol=1e-7, err_msg=repr(ours))
        assert ours.intercept_ == pytest.approx(intercept, abs=1e-7)
    plain = LinearRegression().fit(X, y)  # least squares does not depend on the scale
    np.testing.assert_allclose(pairs[0][0].coef_, plain.coef_, atol=1e-9)


def test_infinite_epsilon_logistic_matches_scikit_learn():
    X, y = _classification(n=300)
    y_flip = y.copy()
    y_flip[:30] = 1 - y_flip[:30]  # not separable: a finite optimum
    n, alpha = X.shape[0], 0.01
    ours = DPLogisticRegression(alpha=alpha, epsilon=INF).fit(X, y_flip)
    # (1/n) sum log-loss + alpha/2 ||w||^2 = alpha (C sum log-loss + 1/2 ||w||^2), C = 1/(n alpha)
    theirs = LogisticRegression(C=1.0 / (n * alpha), tol=1e-12, max_iter=10_000)
    coef, intercept = _on_scaled_data(ours, theirs, X, y_flip)
    np.testing.assert_allclose(ours.coef_, [coef], atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, [intercept], atol=1e-5)
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    expected = theirs.predict_proba(ours.scaling_.transform(X))
    np.testing.assert_allclose(ours.predict_proba(X), expected, atol=1e-5)


@pytest.mark.parametrize("model", [DPLogisticRegression(epsilon=INF), DPLinearSVC(epsilon=INF)])
def test_infinite_epsilon_classifiers_match_the_reference_solver(model):
    X, y = _classification(n=200)
    y[:20] = 1 - y[:20]
    model.fit(X, y)
    theta = _reference_theta(model, X, np.where(y == 1, 1.0, -1.0))
    np.testing.assert_allclose(np.append(model.coef_, model.intercept_), theta, rtol=1e-10)
    assert model.privacy_report_.non_private


def test_infinite_epsilon_is_charged_to_the_budget():
    X, y = _regression(n=100)
    finite = PrivacyBudget(10.0, 1e-5)
    with pytest.raises(BudgetExceededError):
        DPRidge(epsilon=INF, budget=finite).fit(X, y)
    assert finite.charges == ()
    unlimited = PrivacyBudget(INF, 1e-5)
    DPRidge(epsilon=INF, budget=unlimited).fit(X, y)
    assert len(unlimited.charges) == 1
    assert math.isinf(unlimited.spent())


# -- learned attributes ---------------------------------------------------------------------


@pytest.mark.parametrize("cls", REGRESSORS + CLASSIFIERS)
def test_learned_attributes(cls):
    X, y = _data(cls)
    model = cls(feature_bounds=1.0, random_state=0, passes=2)
    if "alpha" in model.get_params() and cls in REGRESSORS:
        model.set_params(alpha=0.01)
    for attribute in ("coef_", "intercept_", "n_iter_", "privacy_report_", "solver_"):
        assert not hasattr(model, attribute)
    with pytest.raises(NotFittedError):
        model.predict(X)
    model.fit(X, y)
    if cls in REGRESSORS:
        assert model.coef_.shape == (3,) and model.coef_.dtype == np.float64
        assert isinstance(model.intercept_, float)
    else:  # scikit-learn's shapes: one row for two classes
        assert model.coef_.shape == (1, 3) and model.coef_.dtype == np.float64
        assert model.intercept_.shape == (1,) and model.intercept_.dtype == np.float64
    assert isinstance(model.n_iter_, int) and model.n_iter_ >= 1
    assert isinstance(model.privacy_report_, PrivacyReport)
    assert model.solver_ in SOLVERS[1:]
    assert model.delta_ == default_delta(len(y))
    assert model.n_features_in_ == 3
    assert not hasattr(model, "feature_names_in_")
    if cls in CLASSIFIERS:
        np.testing.assert_array_equal(model.classes_, [0, 1])
    else:
        assert not hasattr(model, "classes_")


def test_n_iter_counts_the_planned_updates():
    X, y = _regression(n=300, p=3)
    model = DPRidge(alpha=0.01, solver="dp-cd", feature_bounds=1.0, random_state=0).fit(X, y)
    # the rule's fewest passes at n = 300 (dp_cd.estimator_passes) x (3 coefficients + intercept)
    assert model.n_iter_ == 10 * 4
    greedy = DPLasso(alpha=0.01, solver="dp-gcd", feature_bounds=1.0, random_state=0, passes=7)
    greedy.fit(X, y)
    assert greedy.n_iter_ == 7


def test_without_intercept():
    X, y = _regression()
    model = DPRidge(alpha=0.01, fit_intercept=False, feature_bounds=1.0, random_state=0)
    model.fit(X, y)
    assert model.intercept_ == 0.0
    np.testing.assert_allclose(model.predict(X), X @ model.coef_, rtol=1e-12)


def test_fits_are_reproducible_with_a_seed_and_differ_without():
    X, y = _regression()
    a = DPRidge(alpha=0.01, feature_bounds=1.0, random_state=3).fit(X, y)
    b = DPRidge(alpha=0.01, feature_bounds=1.0, random_state=3).fit(X, y)
    c = DPRidge(alpha=0.01, feature_bounds=1.0, random_state=4).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)


def test_private_fit_is_accurate_enough():
    X, y = _regression(n=5000, p=3)
    model = DPRidge(alpha=1e-4, solver="dp-cd", feature_bounds=1.0, clip=2.0, random_state=0)
    assert model.fit(X, y).score(X, y) > 0.9
    np.testing.assert_allclose(model.coef_, [1.0, 0.0, -1.0], atol=0.15)


# -- delta ------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "delta"), [(2, 1e-5), (100, 1e-5), (316, 1e-5), (317, 1 / 317**2),
                                          (1000, 1e-6)])  # fmt: skip
def test_default_delta_is_one_over_n_squared_at_most_1e_5(n, delta):
    """1 / n**2 alone would be 0.25 for two records: far from the 1 / n at which a release
    of one record at random fails it."""
    assert default_delta(n) == delta
    if n >= 100:
        X, y = _regression(n=n)
        model = DPRidge(feature_bounds=1.0, random_state=0, passes=2).fit(X, y)
        assert model.delta_ == delta
        assert model.privacy_report_.delta == model.delta_


def test_given_delta_is_used():
    X, y = _regression()
    model = DPRidge(delta=1e-7, feature_bounds=1.0, random_state=0, passes=2).fit(X, y)
    assert model.delta_ == 1e-7 == model.privacy_report_.delta
    sgd = DPLinearSVC(loss="hinge", delta=1e-8, classes=[0, 1], random_state=0)
    sgd.fit(*_classification())
    assert sgd.delta_ == 1e-8 == sgd.privacy_report_.delta


# -- the shared budget -------------------------------------------------------------------


def test_budget_survives_clone_copy_and_get_params():
    budget = PrivacyBudget(5.0, 1e-5)
    model = DPRidge(budget=budget)
    assert clone(model).budget is budget
    assert copy.deepcopy(model).budget is budget
    assert model.get_params()["budget"] is budget


def test_each_fit_charges_the_budget_once():
    X, y = _regression()
    budget = PrivacyBudget(10.0, default_delta(len(y)))  # the fit's delta: same epsilon
    model = DPRidge(epsilon=0.5, budget=budget, feature_bounds=1.0, random_state=0, passes=2)
    model.fit(X, y)
    assert len(budget.charges) == 1
    assert budget.spent() == pytest.approx(model.privacy_report_.epsilon, rel=1e-3)
    clone(model).fit(X, y)
    assert len(budget.charges) == 2


def _grid_search(budget, **kwargs):
    model = DPRidge(epsilon=0.5, budget=budget, feature_bounds=1.0, random_state=0, passes=2)
    grid = {"alpha": [1e-3, 1e-2, 1e-1, 1.0, 10.0]}
    return GridSearchCV(model, grid, cv=2, **kwargs)


def test_grid_search_charges_once_per_fit():
    budget = PrivacyBudget(100.0, 1e-5)
    X, y = _regression()
    search = _grid_search(budget).fit(X, y)
    assert len(budget.charges) == 5 * 2 + 1  # 5 candidates x 2 folds + the refit
    assert search.best_estimator_.budget is budget
    assert np.isfinite(search.best_score_)


@pytest.mark.parametrize("error_score", [np.nan, "raise"])
def test_grid_search_stops_when_the_budget_runs_out(error_score):
    budget = PrivacyBudget(1.0, 1e-5)  # affords 3 fits at epsilon 0.5, not 11
    X, y = _regression()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # FitFailedWarning with error_score=nan
        with pytest.raises(BudgetExceededError, match="over the budget"):
            _grid_search(budget, error_score=error_score).fit(X, y)
    assert 0 < len(budget.charges) < 11
    assert budget.spent() <= 1.0


def test_failed_fit_changes_nothing():
    X, y = _regression()
    budget = PrivacyBudget(0.5, 1e-5)
    model = DPRidge(epsilon=1.0, budget=budget, feature_bounds=1.0)
    with pytest.raises(BudgetExceededError):
        model.fit(X, y)
    with pytest.raises(NotFittedError):
        check_is_fitted(model)
    assert budget.charges == ()
    # a fitted model keeps its fit when a later fit is refused
    model.set_params(epsilon=0.3, random_state=0)
    model.fit(X, y)
    coef = model.coef_.copy()
    model.set_params(epsilon=0.5)
    with pytest.raises(BudgetExceededError):
        model.fit(X[:, :2], y)
    np.testing.assert_array_equal(model.coef_, coef)
    assert model.n_features_in_ == 3


def test_pickle_keeps_the_budget_object():
    budget = PrivacyBudget(5.0, 1e-5)
    X, y = _classification()
    model = DPLogisticRegression(budget=budget, classes=[0, 1], feature_bounds=1.0, random_state=0)
    model.fit(X, y)
    again = pickle.loads(pickle.dumps(model))
    assert again.budget is budget
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
    again.fit(X, y)
    assert len(budget.charges) == 2


# -- prediction and labels -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("negative", "positive"),
    [("no", "yes"), (False, True), (0, 1), (-1, 1), (0.0, 1.0), ("b", "a"), (3, 7)],
)
@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_label_decoding(cls, negative, positive):
    X, codes = _classification()
    y = np.where(codes == 1, positive, negative)
    model = cls(epsilon=5.0, feature_bounds=1.0, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.classes_, np.unique(y))
    assert model.classes_.dtype == y.dtype
    predicted = model.predict(X)
    assert predicted.shape == (len(y),) and predicted.dtype == y.dtype
    assert set(predicted.tolist()) <= set(y.tolist())
    assert model.score(X, y) > 0.9
    margins = model.decision_function(X)
    assert margins.shape == (len(y),)
    np.testing.assert_array_equal(predicted, model.classes_[(margins > 0).astype(int)])


def test_labels_given_as_a_list_and_a_pandas_series():
    pd = pytest.importorskip("pandas")
    X, codes = _classification()
    labels = ["spam" if c else "ham" for c in codes]
    a = DPLogisticRegression(feature_bounds=1.0, random_state=0).fit(X, labels)
    b = DPLogisticRegression(feature_bounds=1.0, random_state=0).fit(X, pd.Series(labels))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.classes_.tolist() == ["ham", "spam"]


def test_predict_proba():
    X, y = _classification()
    model = DPLogisticRegression(epsilon=2.0, feature_bounds=1.0, random_state=0).fit(X, y)
    proba = model.predict_proba(X)
    assert proba.shape == (len(y), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert ((proba >= 0) & (proba <= 1)).all()
    margins = model.decision_function(X)
    np.testing.assert_allclose(proba[:, 1], 1.0 / (1.0 + np.exp(-margins)), rtol=1e-12)
    np.testing.assert_array_equal(model.predict(X), model.classes_[proba.argmax(axis=1)])
    np.testing.assert_allclose(model.predict_log_proba(X), np.log(proba), atol=1e-12)
    # extreme margins: no overflow, no log(0)
    big = DPLogisticRegression(epsilon=INF, alpha=0.0)
    big.fit(X, y)  # separable: large coefficients
    assert np.isfinite(big.predict_log_proba(X * 1e6)).all()
    assert not hasattr(DPLinearSVC(), "predict_proba")


@pytest.mark.parametrize("cls", REGRESSORS)
def test_regressor_predictions_and_score(cls):
    X, y = _regression(n=2000)
    model = cls(epsilon=2.0, feature_bounds=1.0, clip=2.0, random_state=0)
    if cls is not DPLinearRegression:
        model.set_params(alpha=1e-3)
    model.fit(X, y)
    predicted = model.predict(X)
    assert predicted.shape == (len(y),) and predicted.dtype == np.float64
    np.testing.assert_allclose(predicted, X @ model.coef_ + model.intercept_)
    assert model.score(X, y) > 0.8
    assert not hasattr(model, "decision_function")


def test_single_sample_prediction():
    X, y = _classification()
    model = DPLinearSVC(feature_bounds=1.0, random_state=0).fit(X, y)
    assert model.predict(X[:1]).shape == (1,)
    assert model.predict(X[:1].tolist()).shape == (1,)


def test_sparse_input_fits_the_same_model_as_dense():
    X, y = _regression()
    X[np.abs(X) < 0.5] = 0.0
    model = DPRidge(alpha=0.01, solver="dp-cd", feature_bounds=1.0, random_state=0)
    dense = clone(model).fit(X, y)
    for container in (sp.csr_matrix, sp.csc_matrix, sp.csr_array):
        sparse = clone(model).fit(container(X), y)
        np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(sparse.predict(container(X)), dense.predict(X), atol=1e-10)


# -- classifiers are binary -----------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_one_class_and_continuous_targets_are_refused(cls):
    X, _ = _classification(n=90)
    with pytest.raises(ValueError, match=r"only one class \[1\.0\]"):
        cls(feature_bounds=1.0).fit(X, np.ones(90))
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        cls(feature_bounds=1.0).fit(X, X[:, 0])


def test_tags():
    from sklearn.utils import get_tags

    for cls in CLASSIFIERS:
        tags = get_tags(cls())
        assert tags.classifier_tags.multi_class is True
        assert tags.input_tags.sparse is True
    for cls in REGRESSORS:
        assert get_tags(cls()).input_tags.sparse is True


# -- input validation ---------------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("cls", [DPRidge, DPLogisticRegression])
def test_non_finite_input_is_a_value_error(cls, bad):
    X, y = _data(cls, n=50)
    X_bad = X.copy()
    X_bad[7, 1] = bad
    with pytest.raises(ValueError, match=r"(NaN|inf).*row 7"):
        cls(feature_bounds=1.0).fit(X_bad, y)
    # public labels: 50 records are too few to select them privately
    labels = {"classes": [0, 1]} if cls in CLASSIFIERS else {}
    model = cls(feature_bounds=1.0, random_state=0, passes=2, **labels).fit(X, y)
    with pytest.raises(ValueError, match=r"(NaN|inf).*row 7"):
        model.predict(X_bad)
    y_bad = y.astype(float)
    y_bad[3] = bad
    with pytest.raises(DataError, match="row 3"):
        cls(feature_bounds=1.0).fit(X, y_bad)


def test_wrong_number_of_features_at_predict():
    X, y = _classification()
    model = DPLogisticRegression(feature_bounds=1.0, random_state=0, passes=2).fit(X, y)
    message = "X has 2 features, but DPLogisticRegression is expecting 3 features as input"
    for method in (model.predict, model.decision_function, model.predict_proba):
        with pytest.raises(ValueError, match=message):
            method(X[:, :2])
    with pytest.raises(ValueError, match=message):
        model.score(X[:, :2], y)
    with pytest.raises(ValueError, match="Reshape your data"):
        model.predict(X[0])


def test_shape_errors_at_fit():
    X, y = _regression(n=20)
    with pytest.raises(ValueError, match=r"(?i)length|rows|match"):
        DPRidge().fit(X, y[:-1])
    with pytest.raises(ValueError, match="Reshape your data"):
        DPRidge().fit(X[:, 0], y)
    with pytest.raises(ValueError, match=r"0 feature\(s\)"):
        DPRidge().fit(X[:, :0], y)
    with pytest.raises(ValueError, match="requires y"):
        DPRidge().fit(X, None)
    with pytest.raises(ValueError, match="n_samples=1"):
        DPRidge(feature_bounds=1.0).fit(X[:1], y[:1])
    with pytest.raises(ValueError, match="Complex data not supported"):
        DPRidge().fit(X + 1j, y)


def test_column_vector_y_warns_and_is_raveled():
    X, y = _regression()
    flat = DPRidge(feature_bounds=1.0, random_state=0, passes=2).fit(X, y)
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        column = DPRidge(feature_bounds=1.0, random_state=0, passes=2).fit(X, y[:, None])
    np.testing.assert_array_equal(flat.coef_, column.coef_)


@pytest.mark.parametrize("cls", [DPRidge, DPLogisticRegression, DPLinearSVC])
def test_inputs_are_not_modified(cls):
    X, y = _data(cls)
    X = np.asfortranarray(X)
    for features in (X, np.ascontiguousarray(X), sp.csr_matrix(X)):
        before = features.copy()
        y_before = y.copy()
        model = cls(feature_bounds=1.0, random_state=0, passes=2).fit(features, y)
        model.predict(features)
        model.score(features, y)
        if sp.issparse(features):
            assert (features != before).nnz == 0
        else:
            np.testing.assert_array_equal(features, before)
        np.testing.assert_array_equal(y, y_before)


def test_feature_names():
    pd = pytest.importorskip("pandas")
    X, y = _regression()
    frame = pd.DataFrame(X, columns=["age", "income", "height"])
    model = DPRidge(feature_bounds=1.0, random_state=0, passes=2).fit(frame, y)
    assert model.feature_names_in_.dtype == object
    assert model.feature_names_in_.tolist() == ["age", "income", "height"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        by_frame = model.predict(frame)
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        by_array = model.predict(X)
    # the frame arrives column-major and the array row-major: the same sums, in another order
    np.testing.assert_allclose(by_frame, by_array, rtol=1e-13, atol=0)
    with pytest.raises(ValueError, match="must be in the same order"):
        model.predict(frame[["income", "age", "height"]])
    with pytest.raises(ValueError, match="unseen at fit time:\n- weight"):
        model.predict(frame.rename(columns={"height": "weight"}))
    # refitting without names forgets them, and then names at predict time warn
    model.fit(X, y)
    assert not hasattr(model, "feature_names_in_")
    with pytest.warns(UserWarning, match="X has feature names, but DPRidge was fitted without"):
        model.predict(frame)
    # non-string column names are not feature names; mixed ones are refused
    numbered = DPRidge(feature_bounds=1.0, random_state=0, passes=2).fit(pd.DataFrame(X), y)
    assert not hasattr(numbered, "feature_names_in_")
    with pytest.raises(TypeError, match="string names"):
        DPRidge().fit(pd.DataFrame(X, columns=["a", 1, "c"]), y)


# -- hyperparameters --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "params", "match"),
    [
        (DPRidge, {"epsilon": 0}, "epsilon"),
        (DPRidge, {"epsilon": -1.0}, "epsilon"),
        (DPRidge, {"epsilon": "1"}, "epsilon"),
        (DPRidge, {"epsilon": np.nan}, "epsilon"),
        (DPRidge, {"delta": 1.0}, "delta"),
        (DPRidge, {"delta": -1e-6}, "delta"),
        (DPRidge, {"delta": "small"}, "delta"),
        (DPRidge, {"solver": "newton"}, "solver"),
        (DPRidge, {"alpha": -0.1}, "alpha"),
        (DPRidge, {"alpha": np.inf}, "alpha"),
        (DPLasso, {"alpha": -1}, "alpha"),
        (DPElasticNet, {"alpha": -1}, "alpha"),
        (DPElasticNet, {"l1_ratio": 1.5}, "l1_ratio"),
        (DPLogisticRegression, {"alpha": -1}, "alpha"),
        (DPLogisticRegression, {"penalty": "l3"}, "penalty"),
        (DPLinearSVC, {"penalty": "ridge"}, "penalty"),
        (DPLinearSVC, {"loss": "log"}, "loss"),
        (DPRidge, {"clip": 0.0}, "clip"),
        (DPRidge, {"step": -1.0}, "step"),
        (DPRidge, {"passes": 0}, "passes"),
        (DPRidge, {"batch_size": 0}, "batch_size"),
        (DPRidge, {"batch_size": 2.5}, "batch_size"),
        (DPRidge, {"smoothness": "guess"}, "smoothness"),
        (DPRidge, {"solver_options": 3}, "solver_options"),
    ],
)
def test_bad_hyperparameters_name_the_parameter(cls, params, match):
    X, y = _data(cls, n=30)
    X[0, 0] = np.nan  # the parameter is checked before the data is read
    budget = PrivacyBudget(10.0, 1e-5)
    with pytest.raises(ValueError, match=match):
        cls(budget=budget, **params).fit(X, y)
    assert budget.charges == ()


def test_unknown_solver_option_is_refused():
    X, y = _regression(n=50)
    with pytest.raises(TypeError, match="no_such_option"):
        DPRidge(feature_bounds=1.0, solver_options={"no_such_option": 1}).fit(X, y)


def test_solver_options_reach_the_solver():
    X, y = _regression()
    a = DPRidge(solver="dp-cd", feature_bounds=1.0, random_state=0, passes=2)
    b = clone(a).set_params(solver_options={"averaging": False})
    assert not np.array_equal(a.fit(X, y).coef_, b.fit(X, y).coef_)


@pytest.mark.parametrize("solver", ["dp-cd", "dp-gcd"])
def test_auto_smoothness_with_bounds_is_estimated_privately(solver):
    X, y = _regression()
    model = DPRidge(solver=solver, feature_bounds=1.0, random_state=0, passes=2).fit(X, y)
    report = model.privacy_report_
    assert "smoothness estimation" in report.parts
    assert report.guarantee and report.epsilon <= 1.0


def test_bounds_smoothness_spends_nothing_on_estimation():
    X, y = _regression()
    model = DPRidge(
        solver="dp-cd",
        feature_bounds=1.0,
        target_bounds=(-3, 3),
        smoothness="bounds",
        random_state=0,
        passes=2,
    ).fit(X, y)
    assert list(model.privacy_report_.parts) == ["training"]


def test_estimators_fit_and_predict_with_dp_agd():
    X, y = _classification(n=4000, seed=3)
    model = DPLogisticRegression(
        alpha=1e-3, solver="dp-agd", epsilon=1.0, classes=[0, 1], feature_bounds=1, random_state=0
    )
    model.fit(X, y)
    report = model.privacy_report_
    assert model.solver_ == "dp-agd" and report.accountant == "zcdp"
    assert report.epsilon <= 1.0 + 1e-9 and model.score(X, y) > 0.9
    # passes caps the gradient steps; the budget is spent all the same
    capped = DPLogisticRegression(solver="dp-agd", passes=3, random_state=0).fit(X, y)
    assert capped.n_iter_ <= 3 and capped.privacy_report_.epsilon <= 1.0 + 1e-9
    Xr, yr = _regression(n=2000)
    ridge = DPRidge(
        alpha=1e-3,
        solver="dp-agd",
        epsilon=2.0,
        feature_bounds=1,
        target_bounds=(-2.5, 2.5),
        random_state=0,
    ).fit(Xr, yr)
    assert ridge.score(Xr, yr) > 0.8
    with pytest.raises(ValueError, match="step"):
        DPRidge(solver="dp-agd", step=0.1).fit(Xr, yr)
    with pytest.raises(ValueError, match="L1"):
        DPLasso(solver="dp-agd").fit(Xr, yr)


# -- the label set: public (classes=) or read from the data ------------------------------


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_public_classes_fit_a_training_set_that_lacks_one(cls):
    X, _ = _classification(n=200)
    model = cls(classes=["yes", "no"], feature_bounds=1.0, random_state=0)
    model.fit(X, np.full(200, "yes"))  # one class: no data-dependent refusal
    assert model.classes_.tolist() == ["no", "yes"]  # the given set, sorted
    assert set(model.predict(X)) <= {"no", "yes"}
    assert any(
        "label set ['no', 'yes'] given as classes (public" in a
        for a in model.privacy_report_.assumptions
    )
    # both classes present: public labels cost nothing, and the model takes the whole
    # target; without them the label set is selected privately at its share first, and the
    # model is the fit with public labels at the rest of (epsilon, delta)
    X, y = _classification(n=400)
    given = cls(classes=[1, 0], feature_bounds=1.0, random_state=0).fit(X, y)
    selected = cls(feature_bounds=1.0, random_state=0).fit(X, y)
    assert given.classes_.tolist() == selected.classes_.tolist() == [0, 1]
    assert list(given.privacy_report_.parts) == ["training"]
    assert list(selected.privacy_report_.parts) == ["label selection", "training"]
    epsilon, delta = LabelSelection.create(400, 1.0, default_delta(400)).rest
    rest = cls(classes=[1, 0], epsilon=epsilon, delta=delta, feature_bounds=1.0, random_state=0)
    rest.fit(X, y)
    np.testing.assert_array_equal(rest.coef_, selected.coef_)
    assert rest.intercept_ == selected.intercept_


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_labels_read_from_the_data_are_stated_in_the_report(cls):
    # a private fit selects its label set privately, as its report says
    X, y = _classification(n=400)
    model = cls(feature_bounds=1.0, random_state=0).fit(X, np.where(y == 1, "b", "a"))
    (line,) = [a for a in model.privacy_report_.assumptions if a.startswith("label set")]
    assert line.startswith("label set ['a', 'b'] selected privately (25% of epsilon and delta)")
    assert "read from the data" not in line
    # a non-private fit (epsilon=inf) reads them from the data, as it reads everything
    X, y = _classification(n=200)
    model = cls(epsilon=INF, feature_bounds=1.0, random_state=0)
    model.fit(X, np.where(y == 1, "b", "a"))
    (line,) = [a for a in model.privacy_report_.assumptions if a.startswith("label set")]
    assert "['a', 'b'] read from the data and released" in line
    assert "only if it is public" in line


def test_a_label_outside_the_public_classes_names_its_row():
    X, _ = _classification(n=50)
    y = np.array(["no"] * 50, dtype=object)
    y[13] = "maybe"
    with pytest.raises(DataError, match=r"label 'maybe' at row 13.*\['no', 'yes'\]"):
        DPLogisticRegression(classes=["no", "yes"], feature_bounds=1.0).fit(X, y)
    with pytest.raises(DataError, match="label 2 at row 0"):
        DPLinearSVC(classes=[0, 1], feature_bounds=1.0).fit(X, np.full(50, 2))


@pytest.mark.parametrize(
    ("classes", "match"),
    [
        (["a"], "at least two distinct labels"),
        ([1, 1], "at least two distinct labels, each once"),
        ([0, 1, 0], "at least two distinct labels, each once"),
        ("ab", "a list of labels"),
        ([[0, 1]], "1-D list of labels"),
        ([np.nan, 1.0], "nan at position 0"),
    ],
)
def test_bad_classes_are_refused_before_the_data_is_read(classes, match):
    budget = PrivacyBudget(1.0, 1e-6)
    model = DPLogisticRegression(classes=classes, budget=budget)
    with pytest.raises(ValueError, match=match):
        model.fit(*_classification(n=50))
    assert budget.charges == ()


def test_classes_is_a_scikit_learn_parameter():
    model = DPLinearSVC(classes=("n", "p"))
    assert model.get_params()["classes"] == ("n", "p")
    assert clone(model).get_params()["classes"] == ("n", "p")
    assert model.set_params(classes=None).classes is None
    assert DPLogisticRegression().get_params()["classes"] is None
    X, y = _classification(n=400)
    search = GridSearchCV(
        DPLogisticRegression(classes=[0, 1], feature_bounds=1.0, random_state=0),
        {"alpha": [1e-3, 1e-2]},
        cv=2,
    ).fit(X, y)
    assert search.best_estimator_.classes_.tolist() == [0, 1]
