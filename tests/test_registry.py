"""The solver registry: one declaration per solver, and every caller dispatches through it."""

import ast
import inspect
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

import dpglm
from dpglm.estimators import DPLasso, DPLinearSVC, DPLogisticRegression, DPRidge
from dpglm.exceptions import PrivacyLeakWarning
from dpglm.penalties import L1, L2, L1Ball
from dpglm.privacy.budget import PrivacyBudget
from dpglm.problem import Problem
from dpglm.solvers.registry import (
    ProblemShape,
    Settings,
    choose_solver,
    estimator_solvers,
    get_solver,
    registered_solvers,
)
from dpglm.tuning import PrivateSearchCV
from solver_problems import make_data

SRC = Path(dpglm.__file__).parent

#: a problem each solver fits, and hyperparameters that keep the fit small
CASES = {
    "dp-cd": ("squared", L1(0.01), True, {"passes": 2, "feature_bounds": 1.0}),
    "dp-gcd": ("logistic", L1(0.01), True, {"n_iter": 5, "feature_bounds": 1.0}),
    "dp-sgd": ("logistic", L2(0.01), True, {"passes": 1, "batch_size": 30}),
    "dp-scd": ("hinge", L2(0.1), False, {"passes": 1, "batch_size": 10}),
    "dp-agd": ("logistic", L2(0.01), True, {"max_iter": 5}),
    "dp-gd": ("logistic", L2(0.01), False, {"n_iter": 5}),
    "dp-fw": ("squared", L1Ball(2.0), False, {"n_iter": 5}),
    "dp-bcfw": ("squared", None, False, {"n_iter": 5, "blocks": 2, "radius": 2.0}),
    "adassp": ("squared", L2(0.01), True, {"feature_bounds": 1.0}),
    "dp-direction": ("logistic", L2(0.01), True, {}),
}


def _problem(name, sparse=False):
    datafit, penalty, intercept, _ = CASES[name]
    X, y = make_data(7, n=300, p=6, classification=datafit != "squared", sparse=sparse)
    return Problem(X, y, datafit, penalty, intercept)


def test_every_solver_is_registered_once_in_order():
    assert list(registered_solvers()) == list(CASES)
    assert estimator_solvers() == (
        "dp-cd",
        "dp-gcd",
        "dp-sgd",
        "dp-scd",
        "dp-agd",
        "adassp",
        "dp-direction",
    )
    for name, solver in registered_solvers().items():
        assert solver.name == name and solver.summary and "\n" not in solver.summary
        assert get_solver(name) is solver


def test_a_solvers_defaults_are_its_fit_functions():
    for solver in registered_solvers().values():
        signature = inspect.signature(solver.fit).parameters
        for name, value in solver.defaults.items():
            assert signature[name].default == value or (
                isinstance(value, float) and math.isnan(value)
            )
        assert "budget" not in solver.hyperparameters
        assert "random_state" not in solver.hyperparameters


def test_an_unknown_solver_names_the_registered_ones():
    with pytest.raises(ValueError, match="unknown solver 'dp-xyz'; registered: dp-cd, dp-gcd"):
        get_solver("dp-xyz")


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("name", list(CASES))
def test_the_plan_is_the_plan_the_fit_charges(name, sparse):
    solver = get_solver(name)
    problem = _problem(name, sparse)
    params = CASES[name][3]
    budget = PrivacyBudget(epsilon=10.0, delta=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        solver.fit(problem, epsilon=0.7, delta=1e-6, budget=budget, random_state=1, **params)
    charged = budget.charges[-1].plan
    assert solver.plan(problem, epsilon=0.7, delta=1e-6, **params) == charged
    shape = ProblemShape.of(problem)
    assert shape.sparse is sparse
    assert solver.plan(shape, epsilon=0.7, delta=1e-6, **params) == charged
    # another target gives another plan: the plan is not a constant
    assert solver.plan(shape, epsilon=0.3, delta=1e-6, **params) != charged


def test_plan_refuses_what_the_fit_refuses_with_its_message():
    shape = ProblemShape(300, 6, "hinge", L2(0.1), fit_intercept=True)
    reason = get_solver("dp-cd").accepts(shape)
    assert "needs a smooth loss" in reason
    problem = Problem(*make_data(3, classification=True), "hinge", L2(0.1), True)
    with pytest.raises(ValueError) as raised:
        get_solver("dp-cd").fit(problem, epsilon=1.0, delta=1e-6, feature_bounds=1.0)
    assert str(raised.value) == reason
    with pytest.raises(ValueError, match="needs a smooth loss"):
        get_solver("dp-cd").plan(shape, epsilon=1.0, delta=1e-6, feature_bounds=1.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'radius'"):
        get_solver("dp-cd").plan(shape, epsilon=1.0, delta=1e-6, radius=1.0)
    with pytest.raises(TypeError, match="does not change its plan"):
        get_solver("dp-cd").plan(shape, epsilon=1.0, delta=1e-6, random_state=0)


def test_chunked_data_is_refused_by_the_in_memory_solvers_only():
    shape = ProblemShape(300, 6, "logistic", L2(0.1), chunked=True)
    assert "needs an in-memory Problem" in get_solver("dp-cd").accepts(shape)
    assert "needs an in-memory Problem" in get_solver("dp-scd").accepts(shape)
    assert get_solver("dp-sgd").accepts(shape) is None
    assert get_solver("dp-gcd").accepts(shape) is None


def test_auto_picks_by_loss_penalty_and_shape():
    assert choose_solver(ProblemShape(100, 3, "squared", L1(0.1))) == "dp-gcd"
    assert choose_solver(ProblemShape(100, 300, "squared", L2(0.1))) == "dp-gcd"
    assert choose_solver(ProblemShape(100, 3, "squared", L2(0.1))) == "dp-sgd"
    assert choose_solver(ProblemShape(100, 3, "hinge", L1(0.1))) == "dp-sgd"


def test_settings_become_each_solvers_arguments():
    shape = ProblemShape(569, 30, "logistic", L2(0.1))
    settings = Settings(clip=2.0, passes=3.4, feature_bounds=1.0)
    assert get_solver("dp-gcd").arguments(settings, shape) == {
        "clip": 2.0,
        "n_iter": 3,
        "smoothness": "private-or-bounds",
        "feature_bounds": 1.0,
    }
    assert get_solver("dp-sgd").arguments(Settings(batch_size=10_000), shape)["batch_size"] == 569
    with pytest.raises(ValueError, match="DP-SCD has no step size"):
        get_solver("dp-scd").arguments(Settings(step=0.5), shape)
    with pytest.raises(TypeError, match="multiple values for keyword argument 'clip'"):
        get_solver("dp-cd").arguments(Settings(passes=5), shape, {"clip": 3.0})
    with pytest.raises(ValueError, match="not available to the estimators"):
        get_solver("dp-fw").arguments(Settings(), shape)


#: the classifiers' public label set: the data's minority class (22 % of 400 records) is
#: too small to pass a private label selection, which would be charged apart
LABELS = [-1.0, 1.0]


@pytest.mark.parametrize(
    "model",
    [
        DPLogisticRegression(epsilon=0.8, classes=LABELS, random_state=0),
        DPLasso(epsilon=0.8, alpha=0.01, feature_bounds=1.0, random_state=0),
        DPRidge(epsilon=0.8, solver="dp-cd", feature_bounds=1.0, random_state=0),
        DPLinearSVC(
            epsilon=0.8, solver="dp-scd", fit_intercept=False, classes=LABELS, random_state=0
        ),
        DPLogisticRegression(
            epsilon=0.8, solver="dp-agd", passes=4, classes=LABELS, random_state=0
        ),
    ],
    ids=lambda model: f"{type(model).__name__}-{model.solver}",
)
def test_an_estimators_planned_fit_is_what_its_fit_charges(model):
    classification = not isinstance(model, (DPLasso, DPRidge))
    X, y = make_data(11, n=400, p=5, classification=classification)
    plan, leaks = model.planned_fit(400, 5)
    budget = PrivacyBudget(epsilon=5.0, delta=1e-3)
    model.set_params(budget=budget).fit(X, y)
    assert plan == budget.charges[-1].plan
    assert leaks == ()


def test_a_planned_leak_is_the_warning_the_fit_gives():
    model = DPLasso(epsilon=1.0, alpha=0.01, solver="dp-cd", smoothness="data", random_state=0)
    _, leaks = model.planned_fit(400, 5)
    assert leaks
    X, y = make_data(11, n=400, p=5)
    with pytest.warns(PrivacyLeakWarning) as caught:
        model.fit(X, y)
    assert list(leaks) == [str(w.message) for w in caught]


def test_a_search_is_planned_without_fitting_anything(monkeypatch):
    from dpglm.estimators.base import DPLinearModel

    fits = []
    real_fit = DPLinearModel.fit

    def counting_fit(self, X, y):
        fits.append(self.budget)
        return real_fit(self, X, y)

    monkeypatch.setattr(DPLinearModel, "fit", counting_fit)
    X, y = make_data(5, n=2000, p=4, classification=True)
    search = PrivateSearchCV(
        DPLogisticRegression(),
        {"alpha": [1e-3, 1e-2], "passes": [2, 4]},
        epsilon=1.0,
        mean_repetitions=2,
        shape=1.0,
        random_state=0,
    ).fit(X, y)
    # every fit is a run of the search, under the guard of its accounted plan: none planned
    assert fits and all(type(budget).__name__ == "PlanGuard" for budget in fits)
    assert search.privacy_report_.epsilon <= 1.0


def _imported_names(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                yield node.module, alias.name


def test_callers_dispatch_through_the_registry():
    """No estimator, search or command imports a solver function: they ask the registry."""
    fits = {
        (solver.fit.__module__, solver.fit.__name__) for solver in registered_solvers().values()
    }
    callers = [
        *sorted((SRC / "estimators").rglob("*.py")),
        *sorted((SRC / "tuning").rglob("*.py")),
        *sorted((SRC / "cli").rglob("*.py")),
    ]
    assert len(callers) > 10
    found = [
        f"{path.relative_to(SRC)}: {module}.{name}"
        for path in callers
        for module, name in _imported_names(path)
        if (module, name) in fits
    ]
    assert found == []


def test_the_estimators_offer_the_registered_solvers():
    from dpglm.estimators import DEFAULT_PASSES, SOLVERS

    assert ("auto", *estimator_solvers()) == SOLVERS
    assert DEFAULT_PASSES == {"dp-sgd": 10.0}
    with pytest.raises(ValueError, match=r"solver must be one of \('auto', 'dp-cd'"):
        DPRidge(solver="dp-fw").fit(np.eye(3), np.ones(3))


def test_dp_gcd_default_steps_follow_n_and_epsilon():
    """DP-GCD's greedy steps when passes is None: 0.4 (n epsilon)^(2/3) / log(1/delta)^(1/3)
    (dp_gcd.estimator_steps), from 10 to 1,000; a given passes wins, and the estimators'
    fits take the law's steps."""
    spec = get_solver("dp-gcd")

    def steps(n, epsilon, delta, passes=None):
        shape = ProblemShape(n, 30, "logistic", L1(1e-3), True)
        return spec.arguments(Settings(passes=passes), shape, epsilon=epsilon, delta=delta)[
            "n_iter"
        ]

    assert steps(32561, 1.0, 32561**-2.0) == 148
    assert steps(1500, 1.0, 1500**-2.0) == 21
    assert steps(1500, 4.0, 1500**-2.0) == 54
    assert steps(200, 0.1, 1e-6) == 10 and steps(10**9, 10.0, 1e-9) == 1000
    assert steps(10**6, math.inf, 0.0) == 1000
    assert steps(32561, 1.0, 0.0) == 148  # no delta: 1 / n^2 stands for it
    assert steps(32561, 1.0, 1e-10, passes=7) == 7
    with pytest.raises(ValueError, match="give epsilon and delta"):
        spec.arguments(Settings(), ProblemShape(100, 3, "logistic", L1(0.1), True))
    X = np.random.default_rng(0).uniform(-1, 1, (3000, 4))
    model = DPLasso(alpha=1e-3, feature_bounds=1.0, epsilon=2.0, random_state=0)
    model.fit(X, X[:, 0])
    assert model.solver_ == "dp-gcd" and model.n_iter_ == steps(3000, 2.0, 3000**-2.0)


@pytest.mark.parametrize(
    "solver, base", [("dp-cd", 1.0), ("dp-gcd", 1.5)], ids=["dp-cd", "dp-gcd"]
)
def test_the_coordinate_solvers_default_clip_scales_with_the_loss_slope(solver, base):
    # 8 features and an intercept: DP-GCD's shape rule gives sqrt(9) / 2 = 1.5
    spec = get_solver(solver)
    target = {"epsilon": 1.0, "delta": 1e-6}
    clips = {
        loss: spec.arguments(Settings(), ProblemShape(500, 8, loss, L2(1e-3), True), **target)[
            "clip"
        ]
        for loss in ("logistic", "squared_hinge", "squared")
    }
    assert clips == {"logistic": base, "squared_hinge": 4 * base, "squared": base}
    given, shape = Settings(clip=0.3), ProblemShape(500, 8, "squared_hinge", L2(1e-3))
    assert spec.arguments(given, shape, **target)["clip"] == 0.3


def test_dp_cd_and_dp_scd_default_passes_follow_n_and_epsilon():
    """DP-CD's passes when passes is None: 0.07 n epsilon / sqrt(8 log(1/delta)) from 10 to
    320; DP-SCD's: c (max(L, lambda N) epsilon)^(2/3) / (lambda N log(1/delta))^(1/3) from 1
    to 40, c = 1.25 (0.25 for the squared loss); a given passes wins."""

    def passes(solver, shape, epsilon, delta, given=None):
        settings = Settings(passes=given)
        return get_solver(solver).arguments(settings, shape, epsilon=epsilon, delta=delta)[
            "passes"
        ]

    adult = ProblemShape(32561, 123, "logistic", L2(1e-4), True)
    assert passes("dp-cd", adult, 1.0, 32561**-2.0) == pytest.approx(
        0.07 * 32561 / math.sqrt(8 * math.log(32561**2))
    )
    assert passes("dp-cd", adult, 1.0, 32561**-2.0) == pytest.approx(176.8, abs=0.1)
    assert passes("dp-cd", adult, 0.1, 1e-6) == pytest.approx(21.7, abs=0.1)
    assert passes("dp-cd", adult, 4.0, 1e-6) == 320.0
    small = ProblemShape(300, 3, "squared", L2(1e-2), True)
    assert passes("dp-cd", small, 1.0, 1e-5) == 10.0
    assert passes("dp-cd", adult, math.inf, 0.0) == 320.0
    assert passes("dp-cd", adult, 1.0, 1e-6, given=3) == 3
    # DP-SCD: lambda N = 3.26 < L = 256, so max(L, lambda N) = 256
    lam_n, log_d = 1e-4 * 32561, math.log(32561**2)
    expected = 1.25 * (256 * 1.0) ** (2 / 3) / (lam_n * log_d) ** (1 / 3)
    assert passes("dp-scd", adult, 1.0, 32561**-2.0) == pytest.approx(expected)
    assert 12 < expected < 13
    ridge = ProblemShape(15480, 8, "squared", L2(1e-3), True)
    assert passes("dp-scd", ridge, 1.0, 1e-8) == pytest.approx(1.5, abs=0.05)
    assert passes("dp-scd", adult, 0.01, 1e-6) == 1.0 and passes("dp-scd", adult, 1e6, 1e-6) == 40
    assert passes("dp-scd", adult, 1.0, 1e-6, given=2.5) == 2.5
    with pytest.raises(ValueError, match="give epsilon and delta"):
        get_solver("dp-cd").arguments(Settings(), small)


def test_dp_agd_default_splits_follow_the_squared_loss_law():
    """DP-AGD's splits when None: 0.9 n sqrt(rho / d) within [10, 240] for the squared loss,
    60 for the others; a given splits wins."""
    from dpglm.solvers.dp_agd import default_splits

    communities = ProblemShape(1496, 100, "squared", None, True)  # d = 101 coordinates
    assert default_splits(communities, 0.02) == pytest.approx(0.9 * 1496 * math.sqrt(0.02 / 101))
    assert default_splits(communities, 1e-5) == 10.0
    assert default_splits(ProblemShape(15480, 8, "squared", None, True), 0.1) == 240.0
    assert default_splits(ProblemShape(15480, 8, "logistic", "l2", True), 0.1) == 60.0
    from dpglm.solvers.dp_agd import dp_agd

    X, y = make_data(5, n=400, p=6)
    problem = Problem(X, y, "squared", fit_intercept=True)
    fit = dp_agd(problem, epsilon=1.0, delta=1e-6, max_iter=3, random_state=0)
    assert fit.info["splits"] == pytest.approx(default_splits(problem, fit.info["rho"]))
    given = dp_agd(problem, epsilon=1.0, delta=1e-6, splits=33.0, max_iter=3, random_state=0)
    assert given.info["splits"] == 33.0
