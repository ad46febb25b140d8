"""The SVM dual coordinate-descent kernel equals a plain re-implementation."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dpglm._kernels import svm_dual_epochs_csr


def naive_epochs(X, y, gamma, w, order, alpha_n, intercept, rho, n_epochs):
    X = X.toarray()
    balance = float(y @ gamma)
    for _ in range(n_epochs):
        for i in order:
            margin = X[i] @ w + intercept + rho * balance
            curvature = X[i] @ X[i] / alpha_n + rho
            slope = y[i] * margin - 1.0
            if curvature > 0:
                new = np.clip(gamma[i] - slope / curvature, 0.0, 1.0)
            else:
                new = 1.0 if slope < 0 else 0.0
            step = new - gamma[i]
            gamma[i] = new
            balance += step * y[i]
            w += step * y[i] * X[i] / alpha_n
    return balance


@pytest.mark.nojit
@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(1, 12),
    p=st.integers(1, 5),
    density=st.floats(0.0, 1.0),
    alpha_n=st.floats(0.05, 20.0),
    rho=st.sampled_from([0.0, 0.3, 2.0]),
    intercept=st.floats(-1.0, 1.0),
)
def test_dual_epochs_match_naive(seed, n, p, density, alpha_n, rho, intercept):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=density, random_state=seed, format="csr")
    X.data = rng.standard_normal(X.nnz)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    gamma0 = rng.random(n)
    w0 = np.asarray(X.T @ (y * gamma0)).ravel() / alpha_n
    order = rng.permutation(n)
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    gamma, w = gamma0.copy(), w0.copy()
    balance = svm_dual_epochs_csr(
        X.data,
        X.indices,
        X.indptr,
        y,
        sq,
        gamma,
        w,
        order,
        alpha_n,
        intercept,
        rho,
        float(y @ gamma0),
        3,
    )
    g2, w2 = gamma0.copy(), w0.copy()
    expected = naive_epochs(X, y, g2, w2, order, alpha_n, intercept, rho, 3)
    np.testing.assert_allclose(gamma, g2, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w, w2, rtol=1e-10, atol=1e-12)
    assert balance == pytest.approx(expected, rel=1e-10, abs=1e-12)
    assert np.all((gamma >= 0) & (gamma <= 1))
    # w stays X^T (y gamma) / (alpha n), the invariant the solver relies on
    np.testing.assert_allclose(w, X.T @ (y * gamma) / alpha_n, rtol=1e-9, atol=1e-12)
