"""Dual coordinate descent for the L2-regularised hinge loss (the linear SVM).

The dual of ``(1/n) sum_i max(0, 1 - y_i (x_i . w + b)) + alpha / 2 ||w||^2`` is a
box-constrained quadratic programme in ``gamma in [0, 1]^n`` with
``w = X^T (y gamma) / (alpha n)``; an unpenalised intercept adds the constraint
``sum_i y_i gamma_i = 0``, which callers handle by an augmented Lagrangian whose
multiplier is the intercept. One coordinate step is exact (Hsieh et al. 2008).
"""

from __future__ import annotations

import numpy as np

from dpglm._kernels.jit import kernel


@kernel
def svm_dual_epochs_csr(
    data, indices, indptr, y, sq_norms, gamma, w, order, alpha_n, intercept, rho, balance, n_epochs
):
    """Run ``n_epochs`` passes of exact dual coordinate steps, in place.

    Parameters
    ----------
    data, indices, indptr : ndarray
        The rows of X in CSR form.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    sq_norms : ndarray of shape (n,)
        ``||x_i||^2``.
    gamma : ndarray of shape (n,)
        Dual variables in ``[0, 1]``, updated in place.
    w : ndarray of shape (p,)
        ``X^T (y gamma) / alpha_n``, kept consistent in place.
    order : ndarray of int
        The sample order of each pass.
    alpha_n : float
        ``alpha * n``.
    intercept : float
        Current multiplier of ``sum_i y_i gamma_i = 0`` (0 without intercept).
    rho : float
        Augmented-Lagrangian weight (0 without intercept).
    balance : float
        ``sum_i y_i gamma_i`` on entry.

    Returns
    -------
    float
        ``sum_i y_i gamma_i`` on exit.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> X = sp.csr_matrix(np.array([[1.0], [-1.0]]))
    >>> y, gamma, w = np.array([1.0, -1.0]), np.zeros(2), np.zeros(1)
    >>> _ = svm_dual_epochs_csr(
    ...     X.data,
    ...     X.indices,
    ...     X.indptr,
    ...     y,
    ...     np.ones(2),
    ...     gamma,
    ...     w,
    ...     np.arange(2),
    ...     2.0,
    ...     0.0,
    ...     0.0,
    ...     0.0,
    ...     5,
    ... )
    >>> w
    array([1.])
    """
    for _ in range(n_epochs):
        for k in range(order.size):
            i = order[k]
            start, stop = np.uintp(indptr[i]), np.uintp(indptr[i + 1])
            margin = 0.0
            for q in range(start, stop):
                margin += data[q] * w[np.uintp(indices[q])]
            margin += intercept + rho * balance
            curvature = sq_norms[i] / alpha_n + rho
            slope = y[i] * margin - 1.0
            if curvature > 0.0:
                new = min(max(gamma[i] - slope / curvature, 0.0), 1.0)
            else:  # an all-zero row without intercept: the dual is linear in gamma_i
                new = 1.0 if slope < 0.0 else 0.0
            step = new - gamma[i]
            if step != 0.0:
                gamma[i] = new
                balance += step * y[i]
                scale = step * y[i] / alpha_n
                for q in range(start, stop):
                    w[np.uintp(indices[q])] += scale * data[q]
    return balance
