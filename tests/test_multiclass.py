"""More than two classes: the multinomial loss, its solvers and audit, one-vs-rest, the estimators.

The multinomial fit (DP-SGD, DP-GD, DP-AGD) clips each record's gradient over all
``K`` rows at once, so its plan is the binary fit's whatever ``K``; one-vs-rest
(DP-CD, DP-GCD, DP-SCD, every linear SVC) puts ``K`` binary plans in a row,
calibrated together to the one ``epsilon``. The estimators choose, fit, predict,
plan, save and search either way.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from dpglm import PrivacyBudget
from dpglm.audit import mu_lower_bound
from dpglm.datafits import Multinomial
from dpglm.estimators import DPLinearSVC, DPLogisticRegression, load_model
from dpglm.exceptions import TargetError
from dpglm.penalties import L2
from dpglm.preprocessing.label_sets import LabelSelection, label_share
from dpglm.privacy.accounting import account
from dpglm.problem import Problem
from dpglm.solvers.dp_agd import dp_agd
from dpglm.solvers.dp_fw import dp_fw
from dpglm.solvers.dp_gd import dp_gd
from dpglm.solvers.dp_sgd import dp_sgd
from dpglm.solvers.reference import solve_reference
from dpglm.tuning import PrivateSearchCV
from solver_problems import seed_of, with_less_noise

LABELS = np.array(["ant", "bee", "cat", "dog"])


def blobs(n=3000, k=4, p=3, seed=0, spread=0.35):
    """``k`` well separated clusters in ``[-1, 1]^p`` with string labels."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-0.7, 0.7, (k, p))
    codes = rng.integers(k, size=n)
    X = np.clip(centres[codes] + spread * rng.standard_normal((n, p)) / np.sqrt(p), -1, 1)
    return X, LABELS[:k][codes], codes.astype(float)


# -- the datafit and the problem -----------------------------------------------------------


def test_multinomial_loss_and_residual_match_their_definitions():
    rng = np.random.default_rng(0)
    z, y = rng.normal(0, 3, (50, 4)), rng.integers(4, size=50).astype(float)
    fit = Multinomial(4)
    softmax = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    assert np.allclose(fit.loss(z, y), -np.log(softmax[np.arange(50), y.astype(int)]))
    expected = softmax - np.eye(4)[y.astype(int)]
    assert np.allclose(fit.derivative(z, y), expected)
    # no overflow at extreme margins
    assert np.all(np.isfinite(fit.loss(np.array([[1e300, -1e300, 0.0, 0.0]]), np.array([1.0]))))


def test_the_gradient_of_a_multinomial_problem_is_the_finite_difference_of_its_objective():
    X, _, codes = blobs(n=200)
    prob = Problem(X, codes, Multinomial(4), L2(0.05), fit_intercept=True)
    theta = np.random.default_rng(1).normal(0, 0.5, prob.n_coords)
    h = 1e-6
    numeric = [
        (prob.objective(theta + h * e) - prob.objective(theta - h * e)) / (2 * h)
        for e in np.eye(prob.n_coords)
    ]
    grad = prob.gradient(theta)
    grad[: 4 * 3] += prob.penalty.alpha * theta[: 4 * 3]
    assert np.allclose(grad, numeric, atol=1e-7)
    W, b = prob.split(theta)
    assert W.shape == (4, 3) and b.shape == (4,)


def test_a_multinomial_problem_refuses_labels_that_are_not_class_codes():
    X, _, codes = blobs(n=20)
    codes[7] = 4.0
    with pytest.raises(TargetError, match=r"class codes 0, \.\.\., 3, but row 7 has y=4\.0"):
        Problem(X, codes, Multinomial(4))


@pytest.mark.parametrize("solver", [dp_fw])
def test_solvers_of_one_margin_per_record_refuse_the_multinomial_loss(solver):
    X, _, codes = blobs(n=50)
    with pytest.raises(ValueError, match=r"fits one margin per record.*DP-SGD, DP-GD or DP-AGD"):
        solver(Problem(X, codes, Multinomial(4)), epsilon=1.0, delta=1e-6, radius=1.0)


# -- the solvers ---------------------------------------------------------------------------


def test_non_private_multinomial_sgd_reaches_the_reference_optimum():
    X, _, codes = blobs(n=2000)
    prob = Problem(X, codes, Multinomial(4), L2(0.01), fit_intercept=True)
    best = solve_reference(prob).objective
    fit = dp_sgd(prob, epsilon=math.inf, delta=0.0, passes=100, step=0.5, batch_size=100)
    assert fit.coef.shape == (4, 3) and fit.intercept.shape == (4,)
    # a constant step leaves SGD in a neighbourhood of the optimum, of its step's size
    assert prob.objective(fit.theta) - best < 5e-3 * best


def test_the_reference_solver_matches_scikit_learn_on_the_multinomial_loss():
    from sklearn.linear_model import LogisticRegression

    X, _, codes = blobs(n=1000, spread=0.8)
    alpha = 0.01
    prob = Problem(X, codes, Multinomial(4), L2(alpha), fit_intercept=True)
    solution = solve_reference(prob)
    sk = LogisticRegression(C=1.0 / (alpha * 1000), tol=1e-12, max_iter=10_000).fit(X, codes)
    W, b = prob.split(solution.theta)
    assert np.abs(W - sk.coef_).max() < 1e-6 and np.abs(b - sk.intercept_).max() < 1e-6


def test_multinomial_sgd_gives_the_same_bits_on_dense_and_csr_rows():
    X, _, codes = blobs(n=500)
    X[X < -0.2] = 0.0
    kwargs = {"epsilon": 1.0, "delta": 1e-6, "passes": 3, "batch_size": 50, "random_state": 3}
    dense = dp_sgd(Problem(X, codes, Multinomial(4), "l1", fit_intercept=True), **kwargs)
    csr = dp_sgd(
        Problem(sp.csr_matrix(X), codes, Multinomial(4), "l1", fit_intercept=True), **kwargs
    )
    assert np.allclose(dense.theta, csr.theta, rtol=0, atol=1e-12)


@pytest.mark.parametrize("k", [3, 26])
def test_the_multinomial_plan_is_the_binary_plan_whatever_the_number_of_classes(k):
    X, _, codes = blobs(n=600, k=3)
    kwargs = {"epsilon": 1.0, "delta": 1e-6, "passes": 2, "batch_size": 60, "random_state": 0}
    binary = dp_sgd(Problem(X, np.where(codes == 0, 1.0, -1.0), "logistic"), **kwargs)
    joint = dp_sgd(Problem(X, codes, Multinomial(k)), **kwargs)
    assert joint.report.mechanisms == binary.report.mechanisms
    assert joint.info["noise_std"] == binary.info["noise_std"]


@pytest.mark.parametrize("solver", [dp_gd, dp_agd])
def test_full_batch_solvers_fit_the_multinomial_loss(solver):
    X, _, codes = blobs(n=3000)
    fit = solver(Problem(X, codes, Multinomial(4), "l2", fit_intercept=True), epsilon=1.0,
                 delta=1e-6, random_state=0)  # fmt: skip
    accuracy = np.mean(np.argmax(X @ fit.coef.T + fit.intercept, axis=1) == codes)
    assert fit.coef.shape == (4, 3) and accuracy > 0.9


@pytest.mark.nojit
def test_tiny_multinomial_fits_without_jit():
    """The pure-Python kernels (CI also runs this with NUMBA_DISABLE_JIT=1)."""
    X, _, codes = blobs(n=40, k=3)
    for data in (X, sp.csr_matrix(X)):
        prob = Problem(data, codes, Multinomial(3), L2(0.01), fit_intercept=True)
        fit = dp_sgd(prob, epsilon=1.0, delta=1e-4, passes=2, batch_size=10, random_state=3)
        assert fit.n_iter == 8 and np.isfinite(fit.theta).all()
        agd = dp_agd(prob, epsilon=1.0, delta=1e-4, max_iter=3, random_state=3)
        assert np.isfinite(agd.theta).all()


# -- the per-record clipping, audited --------------------------------------------------------

N_RUNS = 4_000  # runs per side (epsilon 4: half the noise is a large gap in mu)


def _extreme_neighbours():
    """Record 0 is the canary: x = +1e308 in D, -1e308 in D', class 0; the others x = 0."""
    problems = {}
    for key, value in (("D", 1e308), ("D'", -1e308)):
        X = np.zeros((10, 1))
        X[0, 0] = value
        problems[key] = Problem(X, np.zeros(10), Multinomial(3))
    return problems


@pytest.mark.parametrize("variant", ["correct", "half noise"])
def test_multinomial_dp_sgd_one_step_audit_with_an_extreme_canary(variant, monkeypatch, request):
    """One full batch: the canary's gradient ``r x^T`` (``r = (-2/3, 1/3, 1/3)`` at ``W = 0``)
    clipped over all classes to norm C is ``+-C r / ||r||``; the released coefficients
    projected on ``r / ||r||`` are a Gaussian mechanism of sensitivity 2 C."""
    if variant == "half noise":
        with_less_noise(monkeypatch)
    problems = _extreme_neighbours()
    kwargs = {"epsilon": 4.0, "delta": 1e-5, "passes": 1.0, "batch_size": 10, "step": 1.0,
              "clip": 1.0, "sampling": "without_replacement"}  # fmt: skip
    fit = dp_sgd(problems["D"], random_state=0, **kwargs)
    # a batch of every record: a Gaussian release of sensitivity 2 C and std z 2 C, which
    # is exactly 1 / z-GDP (the report's (epsilon, delta) follows from it)
    mu_claim = 1.0 / fit.info["noise_multiplier"]
    direction = np.array([-2.0, 1.0, 1.0]) / math.sqrt(6.0)
    rng = np.random.default_rng(seed_of(request.node.name))

    def sample(key):
        # theta = -(sum + noise) / 10: the projection is centred at -C/10 in D, +C/10 in D'
        return np.array(
            [dp_sgd(problems[key], random_state=rng, **kwargs).theta @ direction
             for _ in range(N_RUNS)]
        )  # fmt: skip

    bound = mu_lower_bound(sample("D"), sample("D'"), 0.0)
    if variant == "correct":
        assert not bound.exceeds(mu_claim), f"correct solver refuted: {bound} > {mu_claim}"
        assert bound.mu > 0.5 * mu_claim, f"audit without power: {bound}"
    else:
        assert bound.exceeds(mu_claim), f"half noise not caught: {bound} <= {mu_claim}"


# -- the estimators ---------------------------------------------------------------------------


def test_logistic_regression_fits_one_multinomial_model_by_default():
    X, y, _ = blobs()
    # the public label set: the multinomial fit alone, at the whole epsilon
    model = DPLogisticRegression(epsilon=1.0, classes=LABELS, random_state=0).fit(X, y)
    assert model.multi_class_ == "multinomial" and model.solver_ == "dp-sgd"
    assert model.classes_.tolist() == LABELS.tolist()
    assert model.coef_.shape == (4, 3) and model.intercept_.shape == (4,)
    proba = model.predict_proba(X[:100])
    assert proba.shape == (100, 4) and np.allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(model.predict(X[:100]), model.classes_[proba.argmax(axis=1)])
    assert np.allclose(np.log(proba), model.predict_log_proba(X[:100]))
    assert model.score(X, y) > 0.9
    # the multinomial plan costs what a binary fit of the same shape costs
    parts = model.privacy_report_.parts
    assert set(parts) == {"preprocessing", "training"}
    assert model.privacy_report_.epsilon <= 1.0


@pytest.mark.parametrize(
    ("cls", "solver"),
    [
        (DPLogisticRegression, "dp-cd"),
        (DPLogisticRegression, "dp-gcd"),
        (DPLinearSVC, "dp-scd"),
        (DPLinearSVC, "dp-agd"),
        (DPLinearSVC, "auto"),
        (DPLinearSVC, "dp-cd"),
    ],
)
def test_one_vs_rest_composes_its_classes_into_the_one_epsilon(cls, solver):
    X, y, _ = blobs(n=4000, k=3)
    model = cls(epsilon=2.0, solver=solver, random_state=0).fit(X, y)
    report = model.privacy_report_
    assert model.multi_class_ == "ovr" and model.coef_.shape == (3, 3)
    # the label set is selected first, at its share of (epsilon, delta); the model is
    # planned for the labels kept and calibrated at the rest
    assert list(report.parts)[:2] == ["label selection", "preprocessing"]
    share = label_share(4000, 2.0, model.delta_)
    assert 0.99 * share * 2.0 <= report.parts["label selection"] <= share * 2.0 * (1 + 1e-9)
    rest, rest_delta = (1.0 - share) * 2.0, (1.0 - share) * model.delta_
    # each class is a part of its own (with the solver's own parts inside it, if any)
    assert [p for p in report.parts if p.startswith("class") and "(" not in p] == [
        "class ant", "class bee", "class cat"
    ]  # fmt: skip
    # one calibration for the whole plan: it meets the model's target, which K fits at its
    # epsilon / K each would undershoot (composition is sub-additive), and each class is
    # charged alike
    plan_epsilon = account(model.planned_fit(4000, 3, n_classes=3)[0], rest_delta).epsilon
    assert 1.98 <= report.epsilon <= 2.0 and plan_epsilon <= rest * (1 + 1e-9)
    per_class = [report.parts[f"class {c}"] for c in ("ant", "bee", "cat")]
    assert per_class[0] == per_class[1] == per_class[2] > rest / 3
    assert any("one-vs-rest: 3 binary fits" in line for line in report.assumptions)
    assert model.score(X, y) > 0.8


def test_a_multiclass_fit_charges_exactly_its_planned_fit():
    X, y, _ = blobs(n=2000, k=3)
    # one-vs-rest names its parts by the labels: public, they are known before the data
    public = ["ant", "bee", "cat"]
    for model in (DPLogisticRegression(epsilon=1.0), DPLinearSVC(epsilon=1.0, classes=public)):
        budget = PrivacyBudget(10.0, 1e-3)
        model.set_params(budget=budget, random_state=0).fit(X, y)
        planned, _ = model.planned_fit(2000, 3, n_classes=3)
        if model.classes is None:
            # the label selection is charged first, apart; the planned fit is the model's
            selection, fit = budget.charges
            assert selection.plan == LabelSelection.create(2000, 1.0, 1.0 / 2000**2).plan.plan
            assert {e.part for e in selection.plan.events} == {"label selection"}
        else:
            (fit,) = budget.charges
        assert fit.plan == planned


def test_planned_fits_say_what_the_number_of_classes_costs():
    multinomial = DPLogisticRegression(epsilon=1.0)
    a, _ = multinomial.planned_fit(5000, 10, n_classes=3)
    b, _ = multinomial.planned_fit(5000, 10, n_classes=26)
    binary, _ = multinomial.planned_fit(5000, 10)
    assert a == b == binary
    ovr, _ = DPLogisticRegression(epsilon=1.0, solver="dp-cd").planned_fit(5000, 10, n_classes=5)
    classes = [p for p in ovr.parts if p.startswith("class") and "(" not in p]
    assert classes == [f"class {c}" for c in range(5)]
    with pytest.raises(ValueError, match="n_classes must be an int >= 2"):
        multinomial.planned_fit(5000, 10, n_classes=1)
    with pytest.raises(ValueError, match="n_classes=4 but classes= gives 3 labels"):
        DPLogisticRegression(classes=["a", "b", "c"]).planned_fit(5000, 10, n_classes=4)


def test_public_classes_fit_a_training_set_that_lacks_some():
    X, y, _ = blobs(n=2000, k=3)
    model = DPLogisticRegression(classes=["ant", "bee", "cat", "eel"], random_state=0)
    model.fit(X, y)
    assert model.classes_.tolist() == ["ant", "bee", "cat", "eel"]
    assert model.coef_.shape == (4, 3)
    assert np.mean(model.predict(X) == "eel") < 0.01 and model.score(X, y) > 0.8
    assert any("given as classes" in line for line in model.privacy_report_.assumptions)


def test_unseen_labels_at_score_time_count_as_errors():
    X, y, _ = blobs(n=2000, k=3)
    model = DPLogisticRegression(random_state=0).fit(X, y)
    y_new = y.copy()
    y_new[:100] = "yak"
    # as scikit-learn scores: the accuracy, every unseen label an error
    score = model.score(X, y_new)
    assert score == np.mean(model.predict(X) == y_new) < model.score(X, y)


def test_bad_multiclass_targets_are_refused_with_the_classes_named():
    X, _, _ = blobs(n=10, k=4)
    with pytest.raises(TargetError, match=r"4 classes \['ant', 'bee', 'cat', 'dog'\] for 7 rows"):
        DPLogisticRegression().fit(
            X[:7], np.array(["ant", "bee", "cat", "dog", "ant", "bee", "ant"])
        )
    with pytest.raises(TargetError, match=r"only one class \['ant'\]"):
        DPLinearSVC().fit(X, np.full(10, "ant"))


@pytest.mark.parametrize(
    "model",
    [
        DPLogisticRegression(epsilon=1.0, random_state=0),
        DPLogisticRegression(epsilon=1.0, solver="dp-scd", random_state=0),
        DPLinearSVC(epsilon=1.0, random_state=0),
    ],
)
def test_multiclass_models_survive_their_model_file(model, tmp_path):
    X, y, _ = blobs(n=2000, k=3)
    model.fit(X, y)
    copy = load_model(model.save(tmp_path / "m.json"))
    assert copy.multi_class_ == model.multi_class_
    assert np.array_equal(copy.coef_, model.coef_)
    assert np.array_equal(copy.intercept_, model.intercept_)
    assert np.array_equal(copy.decision_function(X), model.decision_function(X))
    assert np.array_equal(copy.predict(X), model.predict(X))


def test_the_non_private_multiclass_fits_are_the_exact_optima():
    X, y, _ = blobs(n=1500, k=3)
    joint = DPLogisticRegression(epsilon=math.inf).fit(X, y)
    ovr = DPLogisticRegression(epsilon=math.inf, solver="dp-cd").fit(X, y)
    assert joint.multi_class_ == "multinomial" and ovr.multi_class_ == "ovr"
    assert joint.solver_ == ovr.solver_ == "reference"
    assert joint.score(X, y) > 0.8 and ovr.score(X, y) > 0.8


def test_a_search_plans_and_fits_more_than_two_classes():
    X, y, _ = blobs(n=3000, k=3)
    search = PrivateSearchCV(
        DPLogisticRegression(solver="dp-cd"),
        {"alpha": [1e-4, 1e-3]},
        epsilon=2.0,
        random_state=0,
    ).fit(X, y)
    assert search.best_estimator_.multi_class_ == "ovr"
    assert search.classes_.tolist() == ["ant", "bee", "cat"]
    assert search.best_estimator_.get_params()["classes"] is None
    report = search.privacy_report_
    lines = report.assumptions
    # the search selects the label set once, privately, before its runs
    assert any(
        line.startswith("label set ['ant', 'bee', 'cat'] selected privately (") for line in lines
    )
    assert not any("read from the data and released" in line for line in lines)
    assert not any("given as classes" in line for line in lines)
    assert list(report.parts) == ["label selection", "hyperparameter search"]
    assert [m.part for m in report.mechanisms][:2] == ["label selection"] * 2
    share = label_share(3000, 2.0, search.delta_)
    assert 0.99 * share * 2.0 <= report.parts["label selection"] <= share * 2.0 * (1 + 1e-9)
    assert report.epsilon <= 2.0 and report.delta <= search.delta_ * (1 + 1e-12)
    assert search.score(X, y) > 0.7
