"""The Problem: objective, gradients, smoothness constants, clipping, errors."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dpglm.datafits import Hinge, Huber, Logistic, Squared, SquaredHinge
from dpglm.exceptions import (
    NonFiniteValueError,
    PrivacyLeakWarning,
    ShapeMismatchError,
    TargetError,
)
from dpglm.penalties import L1, L2, ElasticNet
from dpglm.problem import Problem

SMOOTH = [Squared(), Logistic(), SquaredHinge(), Huber(0.8)]


def make(datafit, n, p, seed, sparse=False, intercept=False, penalty=None):
    rng = np.random.default_rng(seed)
    if sparse:
        X = sp.random(n, p, density=0.4, random_state=seed, format="csc")
        X.data = rng.standard_normal(X.nnz)
    else:
        X = rng.standard_normal((n, p))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0) if datafit.binary_labels else rng.normal(size=n)
    return Problem(X, y, datafit, penalty, fit_intercept=intercept)


@pytest.mark.parametrize("datafit", SMOOTH, ids=lambda d: d.name)
@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(1, 30),
    p=st.integers(1, 6),
    sparse=st.booleans(),
    intercept=st.booleans(),
)
def test_gradient_matches_finite_differences(datafit, seed, n, p, sparse, intercept):
    prob = make(datafit, n, p, seed, sparse, intercept)
    theta = np.random.default_rng(seed + 1).normal(size=prob.n_coords)
    grad = prob.gradient(theta)
    h = 1e-6
    for j in range(prob.n_coords):
        e = np.zeros(prob.n_coords)
        e[j] = h
        fd = (prob.datafit_value(theta + e) - prob.datafit_value(theta - e)) / (2 * h)
        assert grad[j] == pytest.approx(fd, rel=1e-5, abs=1e-7)
        assert prob.coordinate_gradient(theta, j) == pytest.approx(grad[j], rel=1e-12, abs=1e-15)


def test_objective_is_mean_loss_plus_penalty_of_coefficients_only():
    X = np.array([[1.0, 2.0], [3.0, -1.0], [0.0, 1.0]])
    y = np.array([1.0, -1.0, 1.0])
    prob = Problem(X, y, Logistic(), L1(0.3), fit_intercept=True)
    theta = np.array([0.5, -0.25, 2.0])
    z = X @ theta[:2] + 2.0
    expected = np.mean(np.log1p(np.exp(-y * z))) + 0.3 * 0.75
    assert prob.objective(theta) == pytest.approx(expected, rel=1e-14)
    assert prob.split(theta)[1] == 2.0


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("intercept", [False, True])
def test_clipped_gradient_matches_a_naive_computation(sparse, intercept):
    prob = make(Logistic(), 40, 7, 3, sparse, intercept)
    theta = np.random.default_rng(0).normal(size=prob.n_coords)
    clip = np.linspace(0.01, 0.5, prob.n_coords)
    s = prob.derivatives(theta)
    Xd = prob.X.toarray() if sparse else prob.X
    if intercept:
        Xd = np.column_stack([Xd, np.ones(prob.n_samples)])
    naive = np.clip(s[:, None] * Xd, -clip, clip).mean(axis=0)
    np.testing.assert_allclose(prob.clipped_gradient(theta, clip), naive, rtol=1e-12, atol=1e-15)
    # no clipping gives back the gradient
    np.testing.assert_allclose(
        prob.clipped_gradient(theta, np.inf), prob.gradient(theta), rtol=1e-12, atol=1e-15
    )


def test_clipped_gradient_sensitivity_is_two_clip_over_n():
    """Replacing one record moves each coordinate by at most 2 C_j / n."""
    prob = make(Squared(), 30, 4, 5)
    theta = np.ones(4) * 3.0
    clip = np.array([0.1, 0.2, 0.3, 0.4])
    X2, y2 = prob.X.copy(), prob.y.copy()
    X2[0] = 1e6
    y2[0] = -1e6
    other = Problem(X2, y2, Squared())
    diff = np.abs(prob.clipped_gradient(theta, clip) - other.clipped_gradient(theta, clip))
    assert np.all(diff <= 2 * clip / 30 * (1 + 1e-12))
    assert np.any(diff > clip / 30)  # the bound is nearly attained by this extreme record


def test_smoothness_from_data_warns_and_matches_the_definition():
    prob = make(Logistic(), 50, 3, 7, intercept=True)
    with pytest.warns(PrivacyLeakWarning, match="without privacy"):
        M = prob.coordinate_smoothness()
    expected = 0.25 * np.mean(prob.X**2, axis=0)
    np.testing.assert_allclose(M, np.append(expected, 0.25), rtol=1e-13)


def test_smoothness_from_sparse_data_matches_dense():
    dense = make(Squared(), 50, 6, 8, sparse=True)
    same = Problem(dense.X.toarray(), dense.y, Squared())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        np.testing.assert_allclose(dense.coordinate_smoothness(), same.coordinate_smoothness())


def test_smoothness_from_public_bounds_does_not_warn():
    prob = make(SquaredHinge(), 20, 3, 9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        M = prob.coordinate_smoothness(feature_bounds=[1.0, 2.0, 0.5])
    np.testing.assert_allclose(M, 2.0 * np.array([1.0, 4.0, 0.25]))


def test_smoothness_errors():
    with pytest.raises(ValueError, match="hinge loss is not smooth"):
        make(Hinge(), 10, 2, 0).coordinate_smoothness(feature_bounds=1.0)
    prob = make(Squared(), 10, 3, 0)
    with pytest.raises(
        ShapeMismatchError, match=r"feature_bounds has shape \(2,\).*one per column"
    ):
        prob.coordinate_smoothness(feature_bounds=[1.0, 2.0])
    with pytest.raises(ValueError, match="column 1"):
        prob.coordinate_smoothness(feature_bounds=[1.0, -2.0, 1.0])


def test_coordinate_clipping_splits_the_threshold():
    C = Problem.coordinate_clipping(2.0, [1.0, 4.0, 4.0])
    np.testing.assert_allclose(C, 2.0 * np.sqrt(np.array([1.0, 4.0, 4.0]) / 9.0))
    assert np.sum(C**2) == pytest.approx(4.0)
    with pytest.raises(ValueError, match="positive sum"):
        Problem.coordinate_clipping(1.0, [0.0, 0.0])


def test_prox_leaves_the_intercept_alone():
    prob = make(Squared(), 10, 2, 1, intercept=True, penalty=L1(1.0))
    out = prob.prox(np.array([0.5, -3.0, 0.2]), 1.0)
    np.testing.assert_allclose(out, [0.0, -2.0, 0.2])


def test_optimality_violation_is_zero_at_the_optimum_only():
    X = np.eye(3)
    y = np.array([3.0, 0.1, -2.0])
    prob = Problem(X, y, Squared(), ElasticNet(1.0, 1.0))
    # least squares with identity design: w = soft_threshold(y, n alpha) / 1, n = 3
    theta = np.sign(y) * np.maximum(np.abs(y) - 3.0, 0.0)
    assert prob.optimality_violation(theta) == pytest.approx(0.0, abs=1e-15)
    assert prob.optimality_violation(theta + 0.1) > 0.01


def test_binary_datafits_require_signed_labels():
    X = np.ones((3, 1))
    with pytest.raises(TargetError, match=r"row 1 has y=0\.0.*task='classification'"):
        Problem(X, np.array([1.0, 0.0, 1.0]), "logistic")


def test_bad_data_is_refused_with_its_location():
    X = np.ones((3, 2))
    X[2, 1] = np.nan
    with pytest.raises(NonFiniteValueError, match="row 2"):
        Problem(X, np.zeros(3), "squared")
    with pytest.raises(ShapeMismatchError):
        Problem(np.ones((3, 2)), np.zeros(4), "squared")


def test_theta_shape_and_clip_are_checked():
    prob = make(Squared(), 5, 2, 0, intercept=True, penalty=L2(1.0))
    with pytest.raises(ShapeMismatchError, match=r"expected \(3,\) = n_features 2 \+ 1 intercept"):
        prob.objective(np.zeros(2))
    with pytest.raises(ValueError, match="coordinate 1"):
        prob.clipped_gradient(np.zeros(3), [1.0, -1.0, 1.0])
    with pytest.raises(IndexError, match="out of range"):
        prob.coordinate_gradient(np.zeros(3), 3)
    with pytest.raises(ShapeMismatchError, match=r"clip has shape \(2,\).*one per coordinate"):
        prob.clipped_gradient(np.zeros(3), [1.0, 1.0])
    with pytest.raises(ShapeMismatchError, match=r"derivatives has shape \(4,\); expected \(5,\)"):
        prob.clipped_gradient(np.zeros(3), 1.0, derivatives=np.zeros(4))
    with pytest.raises(ShapeMismatchError, match=r"step has shape \(2,\)"):
        prob.prox(np.zeros(3), [1.0, 1.0])


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_problem_holds_the_given_layout_and_converts_once(sparse):
    rng = np.random.default_rng(0)
    X = np.ascontiguousarray(rng.normal(size=(6, 3)))
    X = sp.csr_matrix(X) if sparse else X
    prob = Problem(X, rng.normal(size=6), "squared")
    # row-major input is held as is: a row solver reads it without a copy
    assert prob.rows is X and prob.layouts == ("rows",)
    # evaluating the objective reads the held layout, and makes no other
    prob.objective(np.ones(3))
    prob.gradient(np.ones(3))
    assert prob.layouts == ("rows",)
    columns = prob.X
    assert prob.layouts == ("rows", "columns") and prob.X is columns
    if sparse:
        assert type(columns) is sp.csc_matrix
    else:
        assert columns.flags.f_contiguous
    np.testing.assert_array_equal(
        columns.toarray() if sparse else columns, X.toarray() if sparse else X
    )
    # column-major input is held as is too
    F = sp.csc_matrix(X) if sparse else np.asfortranarray(X)
    assert Problem(F, np.zeros(6), "squared").X is F
