"""Clipped-gradient and margin-update kernels equal naive NumPy computations."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpglm._kernels import (
    add_scaled_column_csc,
    add_scaled_column_dense,
    clipped_coordinate_gradient_csc,
    clipped_coordinate_gradient_dense,
    clipped_gradient_csc,
    clipped_gradient_dense,
    clipped_row_gradient_sum_csr,
    clipped_row_gradient_sum_dense,
)

TINY = np.finfo(float).smallest_subnormal
EPS = np.finfo(float).eps
# Magnitudes up to 1e150, so that products stay below 1e300 and sums of
# clipped terms cannot overflow (that would make the order of summation matter).
SPECIAL = [0.0, -0.0, TINY, -3 * TINY, 1e-300, -2.5e-310, 1e-150, 1.0, -1.0, 1e150, -1e150]
values = st.one_of(st.floats(-10.0, 10.0), st.sampled_from(SPECIAL))
bounds = st.one_of(st.sampled_from([0.0, np.inf, 1e-300, 0.5, 1e150, 1e-8]), st.floats(0.0, 10.0))
index_types = st.sampled_from([np.int32, np.int64])


def assert_sums_close(got, want, scale, n_terms):
    """Equal up to reassociation: n * eps relative to the sum of |terms|."""
    got, want, scale = np.asarray(got), np.asarray(want), np.asarray(scale)
    tol = 1e-12 * np.abs(want) + 4 * n_terms * EPS * scale + 4 * TINY
    assert got.shape == want.shape
    assert np.all(np.abs(got - want) <= tol), (got, want, tol)


@st.composite
def dense_problems(draw, max_n=30, max_p=11):
    n = draw(st.integers(1, max_n))
    p = draw(st.integers(1, max_p))
    X = draw(arrays(np.float64, (n, p), elements=values))
    zero_cols = draw(arrays(np.bool_, p))
    X[:, zero_cols] = 0.0
    s = draw(arrays(np.float64, n, elements=values))
    c = draw(arrays(np.float64, p, elements=bounds))
    return np.asfortranarray(X), s, c


@st.composite
def sparse_problems(draw, max_n=30, max_p=11):
    X, s, c = draw(dense_problems(max_n, max_p))
    # Also drop random entries, so that columns have different supports.
    X[draw(arrays(np.bool_, X.shape))] = 0.0
    A = sp.csc_array(X)
    dtype = draw(index_types)
    return X, A.data, A.indices.astype(dtype), A.indptr.astype(dtype), s, c


def naive_clipped_gradient(X, s, c):
    terms = np.clip(s[:, None] * X, -c, c)
    return terms.mean(0), np.abs(terms).mean(0)


@settings(max_examples=150, deadline=None)
@given(problem=dense_problems())
def test_clipped_gradient_dense(problem):
    X, s, c = problem
    want, scale = naive_clipped_gradient(X, s, c)
    out = np.full(X.shape[1], np.nan)
    clipped_gradient_dense(X, s, c, out)
    assert_sums_close(out, want, scale, X.shape[0])
    zero = ~X.any(0)
    assert np.all(out[zero] == 0.0)
    for j in range(X.shape[1]):
        g = clipped_coordinate_gradient_dense(X, j, s, c[j])
        assert_sums_close(g, want[j], scale[j], X.shape[0])


@settings(max_examples=150, deadline=None)
@given(problem=sparse_problems())
def test_clipped_gradient_csc(problem):
    X, data, indices, indptr, s, c = problem
    n, p = X.shape
    want, scale = naive_clipped_gradient(X, s, c)
    out = np.full(p, np.nan)
    clipped_gradient_csc(data, indices, indptr, n, s, c, out)
    assert_sums_close(out, want, scale, n)
    empty = np.diff(indptr) == 0
    assert np.all(out[empty] == 0.0)
    for j in range(p):
        g = clipped_coordinate_gradient_csc(data, indices, indptr, n, j, s, c[j])
        assert_sums_close(g, want[j], scale[j], n)


def test_clipped_gradient_dense_blocks_and_tail():
    # p = 4k + r for every r, large enough for several blocks per thread
    rng = np.random.default_rng(1)
    for p in (4, 5, 6, 7, 8, 13):
        X = np.asfortranarray(rng.standard_normal((257, p)))
        s = rng.standard_normal(257) * 3
        c = rng.uniform(0.1, 2.0, p)
        out = np.empty(p)
        clipped_gradient_dense(X, s, c, out)
        want, scale = naive_clipped_gradient(X, s, c)
        assert_sums_close(out, want, scale, 257)


@settings(max_examples=100, deadline=None)
@given(
    problem=dense_problems(max_p=5),
    a=st.one_of(st.floats(-1e3, 1e3), st.sampled_from([0.0, 1e-300, -1e100])),
    data=st.data(),
)
def test_add_scaled_column(problem, a, data):
    X, s, _ = problem
    j = data.draw(st.integers(0, X.shape[1] - 1))
    # margins of the magnitude of the products, to test the update's rounding
    z0 = s.copy()
    want = z0 + a * X[:, j]
    # one rounding of the sum, and one of the product unless it is fused
    tol = 2 * EPS * (np.abs(want) + np.abs(a * X[:, j])) + 2 * TINY
    z = z0.copy()
    add_scaled_column_dense(X, j, a, z)
    assert np.all(np.abs(z - want) <= tol)
    A = sp.csc_array(X)
    z = z0.copy()
    add_scaled_column_csc(A.data, A.indices, A.indptr, j, a, z)
    assert np.all(np.abs(z - want) <= tol)
    untouched = X[:, j] == 0
    assert np.array_equal(z[untouched], z0[untouched])


@st.composite
def batch_problems(draw):
    n = draw(st.integers(1, 20))
    p = draw(st.integers(1, 9))
    X = draw(arrays(np.float64, (n, p), elements=values))
    X[:, draw(arrays(np.bool_, p))] = 0.0
    X[draw(arrays(np.bool_, (n, p)))] = 0.0
    batch = draw(st.integers(1, 12))
    rows = draw(arrays(np.int64, batch, elements=st.integers(0, n - 1)))
    s = draw(arrays(np.float64, batch, elements=values))
    intercept = draw(st.booleans())
    row_norms = np.sqrt((X**2).sum(1) + (1.0 if intercept else 0.0))
    C = draw(bounds)
    return X, rows, s, row_norms, C


def naive_row_gradient_sum(X, rows, s, row_norms, C):
    norms = np.abs(s) * row_norms[rows]
    big = norms > C
    # s * min(1, C / norm), evaluated as sign(s) C / row_norm when clipped:
    # C / norm alone underflows for C = 1e-300, norm = 1e150.
    coef = s.copy()
    coef[big] = np.sign(s[big]) * C / row_norms[rows][big]
    per_sample = coef[:, None] * X[rows]  # the B x p matrix the kernel avoids
    return per_sample.sum(0), coef.sum(), np.abs(per_sample).sum(0), np.abs(coef).sum()


@settings(max_examples=150, deadline=None)
@given(problem=batch_problems(), index_type=index_types)
def test_clipped_row_gradient_sum(problem, index_type):
    X, rows, s, row_norms, C = problem
    want, want_b, scale, scale_b = naive_row_gradient_sum(X, rows, s, row_norms, C)
    B = rows.shape[0]
    out = np.full(X.shape[1], np.nan)
    b = clipped_row_gradient_sum_dense(np.ascontiguousarray(X), rows, s, row_norms, C, out)
    assert_sums_close(out, want, scale, B)
    assert_sums_close(b, want_b, scale_b, B)
    A = sp.csr_array(X)
    out = np.full(X.shape[1], np.nan)
    b = clipped_row_gradient_sum_csr(
        A.data, A.indices.astype(index_type), A.indptr.astype(index_type), rows, s, row_norms,
        C, out,
    )  # fmt: skip
    assert_sums_close(out, want, scale, B)
    assert_sums_close(b, want_b, scale_b, B)


def test_row_gradient_clips_each_sample_to_the_bound():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((50, 6)) * 10
    row_norms = np.sqrt((X**2).sum(1) + 1.0)
    out = np.empty(6)
    for i in range(50):
        s = rng.standard_normal(1) * 10
        b = clipped_row_gradient_sum_dense(X, np.array([i]), s, row_norms, 0.3, out)
        # the clipped per-sample gradient (out, b) has norm min(|s| norm, C)
        norm = np.sqrt((out**2).sum() + b**2)
        assert norm == pytest.approx(min(abs(s[0]) * row_norms[i], 0.3), rel=1e-12)


@pytest.mark.nojit
def test_kernels_small():
    X = np.asfortranarray([[1.0, 0.0, -2.0, 0.0, 3.0], [4.0, 0.0, 0.5, -1.0, 0.0]])
    s = np.array([2.0, -0.5])
    c = np.array([1.5, 1.0, np.inf, 0.0, 2.0])
    want = np.clip(s[:, None] * X, -c, c).mean(0)
    out = np.empty(5)
    clipped_gradient_dense(X, s, c, out)
    np.testing.assert_allclose(out, want, rtol=1e-15)
    A = sp.csc_array(X)
    for idx in (np.int32, np.int64):
        indices, indptr = A.indices.astype(idx), A.indptr.astype(idx)
        out = np.empty(5)
        clipped_gradient_csc(A.data, indices, indptr, 2, s, c, out)
        np.testing.assert_allclose(out, want, rtol=1e-15)
        for j in range(5):
            assert clipped_coordinate_gradient_csc(
                A.data, indices, indptr, 2, j, s, c[j]
            ) == pytest.approx(want[j], rel=1e-15)
            assert clipped_coordinate_gradient_dense(X, j, s, c[j]) == pytest.approx(
                want[j], rel=1e-15
            )
    z = np.array([1.0, 2.0])
    add_scaled_column_dense(X, 2, 2.0, z)
    np.testing.assert_array_equal(z, [-3.0, 3.0])
    add_scaled_column_csc(A.data, A.indices, A.indptr, 3, 1.0, z)
    np.testing.assert_array_equal(z, [-3.0, 2.0])

    rows = np.array([1, 0, 1])
    sb = np.array([1.0, 0.1, -2.0])
    norms = np.sqrt((X**2).sum(1) + 1.0)
    want, want_b, _, _ = naive_row_gradient_sum(X, rows, sb, norms, 1.0)
    out = np.empty(5)
    b = clipped_row_gradient_sum_dense(np.ascontiguousarray(X), rows, sb, norms, 1.0, out)
    np.testing.assert_allclose(out, want, rtol=1e-15)
    assert b == pytest.approx(want_b, rel=1e-15)
    R = sp.csr_array(X)
    b = clipped_row_gradient_sum_csr(R.data, R.indices, R.indptr, rows, sb, norms, 1.0, out)
    np.testing.assert_allclose(out, want, rtol=1e-15)
    assert b == pytest.approx(want_b, rel=1e-15)
