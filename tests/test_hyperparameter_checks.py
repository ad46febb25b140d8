"""Every hyperparameter of the estimators is checked once, at fit, the same way for every solver.

Each estimator is driven with each solver it accepts (the registry says which)
and each invalid value of each hyperparameter: the fit must raise a plain
``ValueError`` whose message starts with the parameter's name, before the data
is read (the data holds a NaN, which the loader would refuse with another
error) and before anything is charged. ``delta = 0`` with Gaussian noise is
refused, on every path, with one message that says why and what to do.
"""

import math

import numpy as np
import pytest

from dpglm.estimators import (
    DPElasticNet,
    DPLasso,
    DPLinearRegression,
    DPLinearSVC,
    DPLogisticRegression,
    DPRidge,
)
from dpglm.exceptions import CalibrationError
from dpglm.penalties import L2, NoPenalty
from dpglm.privacy.accounting import account
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.calibration import calibrate
from dpglm.privacy.events import (
    GaussianEvent,
    LaplaceEvent,
    NoisyMaxEvent,
    PrivacyPlan,
    SampledGaussianEvent,
)
from dpglm.privacy.spending import spend
from dpglm.solvers.registry import ProblemShape, estimator_solvers, get_solver

N, P = 40, 3
ESTIMATORS = (
    DPLinearRegression,
    DPRidge,
    DPLasso,
    DPElasticNet,
    DPLogisticRegression,
    DPLinearSVC,
)
CLASSIFIERS = (DPLogisticRegression, DPLinearSVC)
NAN, INF = math.nan, math.inf

#: the refusal of delta = 0, whichever path reaches it
ZERO_DELTA = r"^delta must be > 0 for a private fit: .*DP-FW.*give delta > 0.*leave delta=None"


def _settings(cls, solver):
    """The settings under which ``solver`` fits the estimator's problem, or None if none does."""
    if solver == "auto":
        return {"solver": "auto"}
    for intercept in (True, False):
        model = cls(fit_intercept=intercept)
        shape = ProblemShape(N, P, model._datafit(), model._penalty(), fit_intercept=intercept)
        if get_solver(solver).accepts(shape) is None:
            return {"solver": solver, "fit_intercept": intercept}
    return None


#: every estimator with every solver it accepts (with an intercept when it fits one)
PAIRS = [
    (cls, settings)
    for cls in ESTIMATORS
    for solver in ("auto", *estimator_solvers())
    if (settings := _settings(cls, solver)) is not None
]
PAIR_IDS = [f"{cls.__name__}-{settings['solver']}" for cls, settings in PAIRS]

#: invalid values every estimator refuses before it reads the data
COMMON = {
    "epsilon": [0, -1.0, NAN, "abc", None, True],
    "delta": [-1e-6, 1.0, NAN, INF, "abc", True],
    "solver": ["newton", "dp_cd", 1, None],
    "clip": [0, -1.0, NAN, INF, "abc", True],
    "passes": [0, -1.0, NAN, INF, "abc", True],
    "step": [0, -1.0, NAN, INF, "abc", True],
    "batch_size": [0, -1, 2.5, NAN, INF, "abc", True],
    "feature_bounds": [
        0, -1.0, NAN, INF, "abc", True, {"a": 1}, [1.0, -1.0, 1.0], [1.0, NAN, 1.0],
        [1.0, INF, 1.0], [1.0, 0.0, 1.0], [[1.0, 1.0, 1.0]], ["1", "1", "1"],
        [[2.0, 1.0]] * 3, [[0.0, INF]] * 3, [[NAN, 1.0]] * 3, "Data",
    ],
    "smoothness": ["guess", 1, None],
    "solver_options": [3, "abc", [("noise", "paper")], {1: "paper"}],
    "fit_intercept": ["abc", 1, 1.0, None],
    "random_state": [-1, 1.5, "abc", True],
    "budget": [1.0, "abc"],
}  # fmt: skip
#: invalid values of the hyperparameters some estimators have
SPECIFIC = {
    "alpha": [-1.0, NAN, INF, "abc", True, None],
    "l1_ratio": [-0.1, 1.5, NAN, "abc", None],
    "penalty": ["l3", None, 1],
    "loss": ["log", None],
    "target_bounds": [(1.0, 0.0), (NAN, 1.0), (0.0, INF), "abc", [1.0, 2.0, 3.0], 5.0, True],
}
#: feature bounds whose only fault is their length, known once the data is read
WRONG_LENGTH = [[1.0, 1.0], [1.0] * (P + 1), []]


def _data(cls, *, nan=False):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, (N, P))
    y = X @ np.array([1.0, -1.0, 0.5])
    if cls in CLASSIFIERS:
        y = (y > 0).astype(int)
    if nan:
        X[0, 0] = NAN  # the loader's refusal, should the data be read
    return X, y


def _parameters(cls):
    params = dict(COMMON)
    for name, values in SPECIFIC.items():
        if name in cls().get_params():
            params[name] = values
    return params


CASES = [
    pytest.param(cls, settings, name, values, id=f"{pair_id}-{name}")
    for (cls, settings), pair_id in zip(PAIRS, PAIR_IDS, strict=True)
    for name, values in _parameters(cls).items()
]


def test_every_estimator_and_every_solver_it_accepts_are_driven():
    pairs = {(cls.__name__, settings["solver"]) for cls, settings in PAIRS}
    for cls in ESTIMATORS:
        assert (cls.__name__, "auto") in pairs
        assert (cls.__name__, "dp-sgd") in pairs  # every problem of the estimators
    assert ("DPRidge", "dp-scd") in pairs and ("DPLogisticRegression", "dp-agd") in pairs
    assert ("DPLasso", "dp-scd") not in pairs  # DP-SCD takes L2 penalties only
    assert len(PAIRS) >= 25


@pytest.mark.parametrize("pair", PAIRS, ids=PAIR_IDS)
def test_the_valid_settings_plan_a_fit(pair):
    """The settings the cases start from are valid: each case's error is its value's."""
    cls, settings = pair
    if cls in CLASSIFIERS:
        # the public label set: 40 records are too few to select it privately
        settings = {**settings, "classes": [0, 1]}
    plan, _ = cls(**settings).planned_fit(N, P)
    assert plan.events
    per_feature = cls(feature_bounds=[1.0, 2.0, 0.5], **settings)
    assert per_feature.planned_fit(N, P)[0].events


@pytest.mark.parametrize(("cls", "settings", "name", "values"), CASES)
def test_an_invalid_hyperparameter_is_refused_by_name_before_the_data_is_read(
    cls, settings, name, values
):
    X, y = _data(cls, nan=True)
    for value in values:
        budget = PrivacyBudget(10.0, 1e-3)
        params = {"budget": budget, **settings, name: value}
        with pytest.raises(ValueError) as caught:
            cls(**params).fit(X, y)
        message = str(caught.value)
        assert caught.type is ValueError, f"{name}={value!r}: {caught.type.__name__}: {message}"
        assert message.startswith(name), f"{name}={value!r}: {message}"
        assert budget.charges == ()
        # the same check, the same words, for the plan of a search
        with pytest.raises(ValueError) as planned:
            cls(**params).planned_fit(N, P)
        assert str(planned.value) == message


@pytest.mark.parametrize("pair", PAIRS, ids=PAIR_IDS)
def test_feature_bounds_of_the_wrong_length_are_refused_before_the_charge(pair):
    cls, settings = pair
    X, y = _data(cls)
    for bounds in WRONG_LENGTH:
        budget = PrivacyBudget(10.0, 1e-3)
        model = cls(budget=budget, feature_bounds=bounds, **settings)
        expected = (
            rf"^feature_bounds has {len(bounds)} values; X has {P} features \(give one bound "
            r"for all, or one per feature\)$"
        )
        with pytest.raises(ValueError, match=expected) as caught:
            model.fit(X, y)
        assert caught.type is ValueError
        assert budget.charges == ()
        with pytest.raises(ValueError, match=expected):
            model.planned_fit(N, P)


@pytest.mark.parametrize("solver", ["dp-sgd", "dp-scd", "dp-agd"])
def test_every_solver_trains_on_the_features_clipped_to_their_bounds(solver):
    """DP-SGD, DP-SCD and DP-AGD take no bounds themselves: the estimator clips for them."""
    X, y = _data(DPLogisticRegression)
    extreme = X.copy()
    extreme[5] = [1e6, -3.0, 0.5]
    clipped = np.clip(extreme, -1.0, 1.0)
    settings = {"solver": solver, "fit_intercept": True, "passes": 1.0}
    # the public label set: 40 records are too few to select it privately
    settings |= {"random_state": 0, "budget": None, "classes": [0, 1]}

    def fit(X, **params):
        return DPLogisticRegression(**settings, **params).fit(X, y)

    bounded = fit(extreme, feature_bounds=1.0)
    np.testing.assert_array_equal(bounded.coef_, fit(clipped, feature_bounds=1.0).coef_)
    assert _user_bounds_lines(bounded) == 1
    # per-feature bounds clip each column to its own bound
    bounds = [2.0, 2.0, 0.25]
    per_feature = fit(extreme, feature_bounds=bounds)
    expected = fit(np.clip(extreme, -np.array(bounds), bounds), feature_bounds=bounds)
    np.testing.assert_array_equal(per_feature.coef_, expected.coef_)
    # without public bounds the ranges are released privately, and the report says so
    unbounded = fit(extreme)
    assert not np.array_equal(unbounded.coef_, bounded.coef_)
    assert _user_bounds_lines(unbounded) == 0
    assert any("released privately" in a for a in unbounded.privacy_report_.assumptions)


def _user_bounds_lines(model):
    return sum(
        a.startswith(("feature ranges (low, high) supplied", "target range (low, high) supplied"))
        for a in model.privacy_report_.assumptions
    )


def test_a_coordinate_solver_clips_once_and_says_so_once():
    X, y = _data(DPRidge)
    model = DPRidge(
        solver="dp-cd", feature_bounds=1.0, target_bounds=(-3, 3), passes=1.0, random_state=0
    ).fit(X, y)
    assert _user_bounds_lines(model) == 2  # the features' ranges, the target's


# -- delta = 0 ----------------------------------------------------------------------------


@pytest.mark.parametrize("pair", PAIRS, ids=PAIR_IDS)
def test_delta_zero_is_refused_with_what_to_do_before_the_charge(pair):
    """No solver the estimators offer, at its defaults, has a guarantee at delta = 0."""
    cls, settings = pair
    X, y = _data(cls)
    budget = PrivacyBudget(10.0, 1e-3)
    model = cls(delta=0.0, budget=budget, feature_bounds=1.0, **settings)
    with pytest.raises(ValueError, match=ZERO_DELTA):
        model.fit(X, y)
    assert budget.charges == ()
    with pytest.raises(ValueError, match=ZERO_DELTA):
        model.planned_fit(N, P)


def _accepted_shape(name):
    for datafit in ("squared", "logistic"):
        for intercept in (True, False):
            # enough records for the solvers' default batch sizes
            shape = ProblemShape(2000, P, datafit, L2(0.1), fit_intercept=intercept)
            if get_solver(name).accepts(shape) is None:
                return shape
    raise AssertionError(f"no shape for {name}")


@pytest.mark.parametrize("name", ["dp-cd", "dp-gcd", "dp-sgd", "dp-scd", "dp-agd", "dp-gd"])
def test_delta_zero_reaching_a_gaussian_plan_is_refused_on_every_path(name):
    shape = _accepted_shape(name)
    solver = get_solver(name)
    with pytest.raises(ValueError, match=ZERO_DELTA):
        solver.plan(shape, epsilon=1.0, delta=0.0)
    # the same target at delta > 0 is met
    assert solver.plan(shape, epsilon=1.0, delta=1e-6).events


def test_the_fits_the_message_names_do_take_delta_zero():
    # DP-FW (Gumbel selections) and DP-GCD with Laplace noise under basic composition
    shape = ProblemShape(N, P, "squared", NoPenalty())
    plan = get_solver("dp-fw").plan(shape, epsilon=1.0, delta=0.0, radius=1.0)
    assert account(plan, 0.0).epsilon <= 1.0
    model = DPLasso(
        solver="dp-gcd",
        delta=0.0,
        feature_bounds=1.0,
        target_bounds=(-3.0, 3.0),
        solver_options={"noise": "paper", "accountant": "basic"},
    )
    plan, leaks = model.planned_fit(N, P)
    assert leaks == ()
    assert {e.kind for e in plan.events} <= {"laplace", "noisy_max"}
    assert account(plan, 0.0, "basic").epsilon <= 1.0
    # its default noise is Gaussian
    with pytest.raises(ValueError, match=ZERO_DELTA):
        model.set_params(solver_options=None).planned_fit(N, P)


@pytest.mark.parametrize(
    "plan",
    [
        PrivacyPlan([GaussianEvent(noise_multiplier=1.0, count=10)]),
        PrivacyPlan([SampledGaussianEvent(noise_multiplier=1.0, sampling_rate=0.1, count=10)]),
        PrivacyPlan(
            [
                NoisyMaxEvent(noise_multiplier=1.0, noise="gumbel"),
                GaussianEvent(noise_multiplier=1),
            ]
        ),
    ],
    ids=["gaussian", "sampled gaussian", "gumbel and gaussian"],
)
def test_calibration_refuses_gaussian_noise_at_delta_zero(plan):
    with pytest.raises(CalibrationError, match=ZERO_DELTA) as caught:
        calibrate(plan, 1.0, 0.0)
    assert plan.events[-1].kind in str(caught.value)
    budget = PrivacyBudget(10.0, 1e-3)
    with pytest.raises(CalibrationError, match=ZERO_DELTA):
        spend(plan, epsilon=1.0, delta=0.0, budget=budget)
    assert budget.charges == ()
    # no privacy, no delta needed; and a positive delta is met (Renyi DP: the quickest)
    assert calibrate(plan, INF, 0.0).scale == 0.0
    assert calibrate(plan, 1.0, 1e-6, "rdp").epsilon <= 1.0


def test_an_accountant_without_a_guarantee_at_delta_zero_says_so():
    plan = PrivacyPlan([LaplaceEvent(noise_multiplier=1.0, count=5)])
    with pytest.raises(CalibrationError, match=r"^delta must be > 0.*'advanced' accountant"):
        calibrate(plan, 1.0, 0.0, "advanced")
    # the accountants that have one calibrate pure-DP noise at delta = 0
    for accountant in ("auto", "basic"):
        assert calibrate(plan, 1.0, 0.0, accountant).epsilon <= 1.0
