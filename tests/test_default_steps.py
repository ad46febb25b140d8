"""The estimators' solver defaults: DP-SGD's noise-matched steps, DP-GCD's clip."""

import math

import numpy as np
import pytest

from dpglm import DPLinearRegression, DPLogisticRegression
from dpglm.estimators.dispatch import BINARY_STEP_NOISE, LOGISTIC_MAX_STEP, LOGISTIC_STEP
from dpglm.solvers.dp_sgd import noise_matched_step


def test_the_noise_matched_step_holds_the_noise_per_step_within_its_bounds():
    # the noise a step moves d coefficients by: step * sigma * sqrt(d) / b
    step = noise_matched_step(3.0, 100, 16, step_noise=0.1, smallest=0.5, largest=4.0)
    assert step * 3.0 * math.sqrt(16) / 100 == pytest.approx(0.1)
    assert noise_matched_step(300.0, 100, 16, step_noise=0.1, smallest=0.5, largest=4.0) == 0.5
    assert noise_matched_step(0.01, 100, 16, step_noise=0.1, smallest=0.5, largest=4.0) == 4.0
    assert noise_matched_step(0.0, 100, 16, step_noise=0.1, smallest=0.5, largest=4.0) == 4.0


def _data(n=2000, p=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (X @ rng.normal(size=p) + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def test_a_binary_logistic_fit_takes_the_step_matched_to_its_calibrated_noise():
    X, y = _data()
    bounds = 4.0  # public: no preprocessing release, the plan is the solver's alone
    # the public label set: no label selection either
    options = {
        "epsilon": 2.0,
        "solver": "dp-sgd",
        "feature_bounds": bounds,
        "classes": [0, 1],
        "random_state": 3,
    }
    fit = DPLogisticRegression(**options).fit(X, y)
    (training,) = fit.privacy_report_.mechanisms
    batch = training.details["sampling_rate"] * X.shape[0]
    expected = BINARY_STEP_NOISE * batch / (training.noise_scale * math.sqrt(X.shape[1] + 1))
    assert LOGISTIC_STEP < expected < LOGISTIC_MAX_STEP  # inside the bounds: the law itself
    given = DPLogisticRegression(**options, step=expected).fit(X, y)
    np.testing.assert_allclose(fit.coef_, given.coef_, rtol=1e-12)
    assert fit.intercept_ == pytest.approx(given.intercept_, rel=1e-12)
    # the fixed step it replaced draws the same noise and moves elsewhere
    fixed = DPLogisticRegression(**options, step=LOGISTIC_STEP).fit(X, y)
    assert not np.allclose(fit.coef_, fixed.coef_, rtol=1e-3)


def test_a_given_step_and_the_squared_loss_are_not_matched():
    X, y = _data()
    options = {
        "epsilon": 2.0,
        "solver": "dp-sgd",
        "feature_bounds": 4.0,
        "random_state": 3,
    }
    given = DPLogisticRegression(**options, step=0.7).fit(X, y)
    same = DPLogisticRegression(**options, solver_options={"step": 0.7}).fit(X, y)
    np.testing.assert_allclose(given.coef_, same.coef_, rtol=1e-12)
    matched = DPLogisticRegression(**options).fit(X, y)  # its step is not 0.7 (see above)
    assert not np.allclose(given.coef_, matched.coef_, rtol=1e-3)
    # the squared loss keeps min(0.1, 0.5 / sqrt(p)): 0.1 at p = 5
    target = X @ np.arange(1.0, 6.0)
    bounds = {"feature_bounds": 4.0, "target_bounds": (-30.0, 30.0)}
    default = DPLinearRegression(epsilon=2.0, solver="dp-sgd", random_state=1, **bounds)
    fixed = DPLinearRegression(epsilon=2.0, solver="dp-sgd", random_state=1, step=0.1, **bounds)
    np.testing.assert_allclose(default.fit(X, target).coef_, fixed.fit(X, target).coef_)


def test_a_greedy_fit_without_a_clip_takes_half_the_largest_gradient_norm_at_most_4():
    from dpglm.solvers.dp_gcd import estimator_clip
    from dpglm.solvers.registry import ProblemShape

    assert estimator_clip(ProblemShape(10, 15, "logistic", "l1", fit_intercept=True)) == 2.0
    assert estimator_clip(ProblemShape(10, 99, "logistic", "l1", fit_intercept=True)) == 4.0
    X, y = _data(p=15)
    options = {"epsilon": 2.0, "solver": "dp-gcd", "feature_bounds": 4.0, "random_state": 3}
    default = DPLogisticRegression(**options).fit(X, y)
    given = DPLogisticRegression(**options, clip=2.0).fit(X, y)  # sqrt(15 + 1) / 2
    np.testing.assert_allclose(default.coef_, given.coef_, rtol=1e-12)
    assert not np.allclose(
        default.coef_, DPLogisticRegression(**options, clip=1.0).fit(X, y).coef_
    )
    # the other solvers keep 1
    cd = {**options, "solver": "dp-cd"}
    np.testing.assert_allclose(
        DPLogisticRegression(**cd).fit(X, y).coef_,
        DPLogisticRegression(**cd, clip=1.0).fit(X, y).coef_,
        rtol=1e-12,
    )
