"""Epoch-level coordinate-step kernels equal a slow NumPy re-implementation."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dpglm._kernels import coordinate_steps_csc, coordinate_steps_dense
from dpglm.datafits import Hinge, Huber, Logistic, Squared, SquaredHinge

ALL = [Squared(), Logistic(), Hinge(), SquaredHinge(), Huber(0.7)]
IDS = [d.name for d in ALL]


def reference_steps(X, y, z, w, order, noise, step, c, l1, l2, lo, hi, datafit):
    """One coordinate step at a time, as in the docstring, on a dense X.

    Returns how close (relative) any margin came to a jump of the derivative
    (the hinge's kink at ``y z = 1``): there one ulp, e.g. a fused multiply-add
    in the kernel, flips the branch, and the two trajectories legitimately part.
    """
    n, p = X.shape
    closest = np.inf
    for k, j in enumerate(order):
        column = np.ones(n) if j == p else X[:, j]
        if isinstance(datafit, Hinge):
            closest = min(closest, float(np.min(np.abs(y * z - 1.0) / (1.0 + np.abs(z)))))
        s = datafit.derivative(z, y)
        g = np.clip(s * column, -c[j], c[j]).mean() + noise[k]
        x = w[j] - step[j] * g
        shrunk = np.sign(x) * max(abs(x) - step[j] * l1[j], 0.0) / (1.0 + step[j] * l2[j])
        w_new = min(max(shrunk, lo[j]), hi[j])
        d = w_new - w[j]
        if d != 0.0:
            z += d * column
        w[j] = w_new
    return closest


def make_problem(rng, n, p, datafit, intercept, order_kind, n_steps, density=1.0):
    X = rng.standard_normal((n, p)) * rng.choice([0.01, 1.0, 30.0], size=p)
    X[rng.random((n, p)) >= density] = 0.0
    if p > 1:
        X[:, rng.integers(p)] = 0.0  # an empty column
    y = rng.choice([-1.0, 1.0], size=n) if datafit.binary_labels else rng.standard_normal(n) * 3
    size = p + 1 if intercept else p
    w = rng.standard_normal(size) * (rng.random(size) < 0.5)
    M = np.append((X**2).mean(0), 1.0)[:size]
    step = 1.0 / np.maximum(M * datafit_curvature(datafit), 1e-3)
    c = rng.choice([0.0, 0.05, 1.0, 10.0, np.inf], size=size)
    l1 = rng.choice([0.0, 1e-3, 0.1], size=size)
    l2 = rng.choice([0.0, 0.5], size=size)
    lo = rng.choice([-np.inf, -0.3], size=size)
    hi = rng.choice([np.inf, 0.4], size=size)
    w = np.clip(w, lo, hi)
    z = X @ w[:p] + (w[p] if intercept else 0.0)
    if order_kind == "cyclic":
        order = np.resize(np.arange(size), n_steps)
    else:
        order = rng.integers(0, size, size=n_steps)
    noise = rng.standard_normal(n_steps) * rng.choice([0.0, 0.01])
    return X, y, z, w, order, noise, step, c, l1, l2, lo, hi


def datafit_curvature(datafit):
    return datafit.curvature if np.isfinite(datafit.curvature) else 1.0


def assert_state_close(got, want, scale):
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-11 * scale)


problems = st.fixed_dictionaries(
    {
        "n": st.integers(1, 40),
        "p": st.integers(1, 9),
        "intercept": st.booleans(),
        "order_kind": st.sampled_from(["cyclic", "random"]),
        "n_steps": st.integers(1, 30),
        "seed": st.integers(0, 2**32 - 1),
    }
)


@pytest.mark.parametrize("datafit", ALL, ids=IDS)
@settings(max_examples=40, deadline=None)
@given(problem=problems)
def test_coordinate_steps_dense_match_reference(datafit, problem):
    rng = np.random.default_rng(problem.pop("seed"))
    X, y, z, w, order, noise, step, c, l1, l2, lo, hi = make_problem(
        rng, datafit=datafit, **problem
    )
    p = X.shape[1]
    z_ref, w_ref = z.copy(), w.copy()
    closest = reference_steps(X, y, z_ref, w_ref, order, noise, step, c, l1, l2, lo, hi, datafit)
    assume(closest > 1e-9)
    XF = np.asfortranarray(X)
    coordinate_steps_dense(
        XF, y, z, w, order, noise, step, c, l1, l2, lo, hi, datafit.code, datafit.param, p,
        np.empty(order.shape[0]),
    )  # fmt: skip
    scale = 1.0 + np.abs(z_ref).max() + np.abs(w_ref).max()
    assert_state_close(w, w_ref, scale)
    assert_state_close(z, z_ref, scale)


@pytest.mark.parametrize("datafit", ALL, ids=IDS)
@settings(max_examples=40, deadline=None)
@given(
    problem=problems, density=st.sampled_from([0.0, 0.1, 0.5]), index=st.sampled_from(["32", "64"])
)
def test_coordinate_steps_csc_match_reference(datafit, problem, density, index):
    rng = np.random.default_rng(problem.pop("seed"))
    X, y, z, w, order, noise, step, c, l1, l2, lo, hi = make_problem(
        rng, datafit=datafit, density=density, **problem
    )
    p = X.shape[1]
    z_ref, w_ref = z.copy(), w.copy()
    closest = reference_steps(X, y, z_ref, w_ref, order, noise, step, c, l1, l2, lo, hi, datafit)
    assume(closest > 1e-9)
    A = sp.csc_array(X)
    dtype = np.int32 if index == "32" else np.int64
    z0 = z.copy()
    coordinate_steps_csc(
        A.data, A.indices.astype(dtype), A.indptr.astype(dtype), y, z, w, order, noise,
        step, c, l1, l2, lo, hi, datafit.code, datafit.param, p, np.empty(order.shape[0]),
    )  # fmt: skip
    scale = 1.0 + np.abs(z_ref).max() + np.abs(w_ref).max()
    assert_state_close(w, w_ref, scale)
    assert_state_close(z, z_ref, scale)
    if not (order == p).any():
        # only rows with a non-zero in an updated column may move
        touched = (X[:, np.unique(order)] != 0).any(1)
        assert np.array_equal(z[~touched], z0[~touched])


@pytest.mark.parametrize("datafit", ALL, ids=IDS)
@settings(max_examples=15, deadline=None)
@given(problem=problems)
def test_each_step_matches_reference(datafit, problem):
    rng = np.random.default_rng(problem.pop("seed"))
    X, y, z, w, order, noise, step, c, l1, l2, lo, hi = make_problem(
        rng, datafit=datafit, density=0.6, **problem
    )
    p = X.shape[1]
    XF, A = np.asfortranarray(X), sp.csc_array(X)
    z_ref, w_ref = z.copy(), w.copy()
    z_csc, w_csc = z.copy(), w.copy()
    penalty = (step, c, l1, l2, lo, hi, datafit.code, datafit.param, p, np.empty(1))
    for k in range(order.shape[0]):
        one, eta = order[k : k + 1], noise[k : k + 1]
        assume(reference_steps(X, y, z_ref, w_ref, one, eta, *penalty[:6], datafit) > 1e-9)
        coordinate_steps_dense(XF, y, z, w, one, eta, *penalty)
        coordinate_steps_csc(A.data, A.indices, A.indptr, y, z_csc, w_csc, one, eta, *penalty)
        scale = 1.0 + np.abs(z_ref).max() + np.abs(w_ref).max()
        for z_got, w_got in ((z, w), (z_csc, w_csc)):
            assert_state_close(w_got, w_ref, scale)
            assert_state_close(z_got, z_ref, scale)


@pytest.mark.parametrize("datafit", ALL, ids=IDS)
def test_dense_fused_equals_step_by_step(datafit):
    rng = np.random.default_rng(3)
    for intercept in (False, True):
        X, y, z, w, order, noise, step, c, l1, l2, lo, hi = make_problem(
            rng, 300, 7, datafit, intercept, "random", 60
        )
        X = np.asfortranarray(X)
        z1, w1 = z.copy(), w.copy()
        args = (step, c, l1, l2, lo, hi, datafit.code, datafit.param, 7)
        trace = np.empty(order.shape[0])
        coordinate_steps_dense(X, y, z1, w1, order, noise, *args, trace)
        for k in range(order.shape[0]):
            coordinate_steps_dense(
                X, y, z, w, order[k : k + 1], noise[k : k + 1], *args, np.empty(1)
            )
            assert trace[k] == w[order[k]] or np.isclose(trace[k], w[order[k]], atol=1e-12)
        scale = 1.0 + np.abs(z).max() + np.abs(w).max()
        assert_state_close(w1, w, scale)
        assert_state_close(z1, z, scale)
        assert not np.array_equal(w1, np.zeros_like(w1))


def test_dense_long_rows_use_the_chunked_loops():
    # n above the chunk and prefetch lengths, n not a multiple of the chunk
    rng = np.random.default_rng(4)
    for datafit in ALL:
        X, y, z, w, order, noise, step, c, l1, l2, lo, hi = make_problem(
            rng, 2500, 3, datafit, True, "random", 12
        )
        z_ref, w_ref = z.copy(), w.copy()
        reference_steps(X, y, z_ref, w_ref, order, noise, step, c, l1, l2, lo, hi, datafit)
        coordinate_steps_dense(
            np.asfortranarray(X), y, z, w, order, noise, step, c, l1, l2, lo, hi,
            datafit.code, datafit.param, 3, np.empty(order.shape[0]),
        )  # fmt: skip
        scale = 1.0 + np.abs(z_ref).max() + np.abs(w_ref).max()
        assert_state_close(w, w_ref, scale)
        assert_state_close(z, z_ref, scale)


@pytest.mark.nojit
@pytest.mark.parametrize("datafit", ALL, ids=IDS)
def test_coordinate_steps_small(datafit):
    rng = np.random.default_rng(5)
    X, y, z, w, order, noise, step, c, l1, l2, lo, hi = make_problem(
        rng, 6, 3, datafit, True, "random", 8, density=0.7
    )
    z_ref, w_ref = z.copy(), w.copy()
    closest = reference_steps(X, y, z_ref, w_ref, order, noise, step, c, l1, l2, lo, hi, datafit)
    assert closest > 1e-9  # this fixed example stays away from the hinge's kink
    zd, wd = z.copy(), w.copy()
    trace = np.empty(order.shape[0])
    args = (order, noise, step, c, l1, l2, lo, hi, datafit.code, datafit.param, 3, trace)
    coordinate_steps_dense(np.asfortranarray(X), y, zd, wd, *args)
    np.testing.assert_allclose(wd, w_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(zd, z_ref, rtol=1e-12, atol=1e-12)
    A = sp.csc_array(X)
    coordinate_steps_csc(A.data, A.indices, A.indptr, y, z, w, *args)
    np.testing.assert_allclose(w, w_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(z, z_ref, rtol=1e-12, atol=1e-12)


@pytest.mark.nojit
def test_unknown_code_leaves_state_unchanged():
    X = np.asfortranarray(np.ones((3, 2)))
    y, z, w = np.ones(3), np.zeros(3), np.zeros(2)
    ones = np.ones(2)
    args = (
        np.array([0, 1]), np.zeros(2), ones, ones, 0 * ones, 0 * ones, -ones, ones, 42, 0.0, 2,
        np.empty(2),
    )  # fmt: skip
    coordinate_steps_dense(X, y, z, w, *args)
    A = sp.csc_array(X)
    coordinate_steps_csc(A.data, A.indices, A.indptr, y, z, w, *args)
    assert not z.any() and not w.any()
