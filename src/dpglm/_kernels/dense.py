"""Kernels on dense float64 matrices.

Column kernels read ``X`` in Fortran order (one column is contiguous), row
kernels read it in C order. Inputs are validated by the Python callers: the
kernels do no bounds or shape checks.
"""

from __future__ import annotations

import numba

from dpglm._kernels.elementwise import clip_value, l2_clip_coefficient
from dpglm._kernels.jit import kernel, prefetch


@kernel
def clipped_coordinate_gradient_dense(X, j, s, c):
    """One coordinate of the per-sample clipped gradient, dense ``X``.

    Parameters
    ----------
    X : ndarray of shape (n, p), Fortran order
        Features.
    j : int
        Column.
    s : ndarray of shape (n,)
        Per-sample derivatives ``l'(z_i, y_i)``.
    c : float
        Non-negative clipping bound (``inf`` for none).

    Returns
    -------
    float
        ``(1/n) * sum_i clip(s_i * X[i, j], c)``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.asfortranarray([[1.0, 2.0], [3.0, -4.0]])
    >>> float(clipped_coordinate_gradient_dense(X, 1, np.array([1.0, 1.0]), 3.0))
    -0.5
    """
    n = X.shape[0]
    acc = 0.0
    for i in range(n):
        acc += clip_value(s[i] * X[i, j], c)
    return acc / n


@kernel(parallel=True)
def clipped_gradient_dense(X, s, c, out):
    """Full per-sample, per-coordinate clipped gradient, dense ``X``.

    Never builds the ``n x p`` matrix of products. Columns are processed in
    blocks of four, in parallel over blocks (``numba.set_num_threads`` sets the
    number of threads).

    Parameters
    ----------
    X : ndarray of shape (n, p), Fortran order
        Features.
    s : ndarray of shape (n,)
        Per-sample derivatives ``l'(z_i, y_i)``.
    c : ndarray of shape (p,)
        Non-negative clipping bounds per column (``inf`` for none).
    out : ndarray of shape (p,)
        Output, overwritten with ``out[j] = (1/n) sum_i clip(s_i X[i, j], c[j])``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.asfortranarray([[1.0, 2.0], [3.0, -4.0]])
    >>> out = np.empty(2)
    >>> clipped_gradient_dense(X, np.array([1.0, 1.0]), np.array([2.0, 3.0]), out)
    >>> out
    array([ 1.5, -0.5])
    """
    n, p = X.shape
    inv_n = 1.0 / n
    n_blocks = (p + 3) // 4
    for b in numba.prange(n_blocks):
        j0 = 4 * b
        if j0 + 4 <= p:
            # Four independent accumulators and one load of s_i for four
            # columns: the loop then runs at memory speed (1 column: 2x slower).
            c0 = c[j0]
            c1 = c[j0 + 1]
            c2 = c[j0 + 2]
            c3 = c[j0 + 3]
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            for i in range(n):
                si = s[i]
                a0 += clip_value(si * X[i, j0], c0)
                a1 += clip_value(si * X[i, j0 + 1], c1)
                a2 += clip_value(si * X[i, j0 + 2], c2)
                a3 += clip_value(si * X[i, j0 + 3], c3)
            out[j0] = a0 * inv_n
            out[j0 + 1] = a1 * inv_n
            out[j0 + 2] = a2 * inv_n
            out[j0 + 3] = a3 * inv_n
        else:
            for j in range(j0, p):
                cj = c[j]
                acc = 0.0
                for i in range(n):
                    acc += clip_value(s[i] * X[i, j], cj)
                out[j] = acc * inv_n


@kernel
def exceeds_bounds_dense(X, bounds, by_columns):
    """Whether some entry has ``|X[i, j]| > bounds[j]``, in one read of ``X``.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Features, Fortran order (``by_columns=True``) or C order (``False``).
    bounds : ndarray of shape (p,)
        Non-negative bounds.
    by_columns : bool
        Read column by column (Fortran order) or row by row (C order); the
        read stops at the first column (row) with an entry out of bounds.

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, -5.0], [-3.0, 2.0]])
    >>> bool(exceeds_bounds_dense(X, np.array([3.0, 5.0]), False))
    False
    >>> bool(exceeds_bounds_dense(X, np.array([3.0, 4.0]), False))
    True
    """
    n, p = X.shape
    # counts rather than a flag and an early exit per entry: the loops vectorise, and
    # the check runs at the speed of a read of X
    if by_columns:
        for j in range(p):
            b = bounds[j]
            count = 0
            for i in range(n):
                count += abs(X[i, j]) > b
            if count:
                return True
        return False
    for i in range(n):
        count = 0
        for j in range(p):
            count += abs(X[i, j]) > bounds[j]
        if count:
            return True
    return False


@kernel
def add_scaled_column_dense(X, j, a, z):
    """Margin update after a coordinate step: ``z += a * X[:, j]``.

    Parameters
    ----------
    X : ndarray of shape (n, p), Fortran order
        Features.
    j : int
        Column.
    a : float
        Scale (the change of ``w[j]``).
    z : ndarray of shape (n,)
        Margins, updated in place.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.asfortranarray([[1.0, 2.0], [3.0, -4.0]])
    >>> z = np.zeros(2)
    >>> add_scaled_column_dense(X, 1, 0.5, z)
    >>> z
    array([ 1., -2.])
    """
    for i in range(X.shape[0]):
        z[i] += a * X[i, j]


@kernel
def clipped_row_gradient_sum_dense(X, rows, s, row_norms, C, out):
    """Sum of L2-clipped per-sample gradients over a mini-batch, dense C-order ``X``.

    For a linear model the gradient of sample ``i`` is ``s_i * (x_i, 1)``, whose
    norm is ``|s_i| * row_norms[i]``; each is scaled by
    ``min(1, C / (|s_i| row_norms[i]))`` (by 1 when that norm is 0) without
    forming it; a gradient whose norm is NaN (an overflowed margin) contributes
    nothing (:func:`~dpglm._kernels.elementwise.l2_clip_coefficient`).

    Parameters
    ----------
    X : ndarray of shape (n, p), C order
        Features.
    rows : ndarray of int of shape (B,)
        Batch rows; may repeat.
    s : ndarray of shape (B,)
        Derivative for each batch position (``s[k]`` belongs to ``rows[k]``).
    row_norms : ndarray of shape (n,)
        L2 norm of each sample's feature vector, including the intercept's 1
        when the model has one.
    C : float
        Non-negative clipping bound (``inf`` for none).
    out : ndarray of shape (p,)
        Overwritten with ``sum_k s_k f_k X[rows[k]]``.

    Returns
    -------
    float
        ``sum_k s_k f_k``, the intercept component.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[3.0, 4.0], [0.0, 1.0]])
    >>> norms = np.sqrt((X**2).sum(1))
    >>> out = np.empty(2)
    >>> rows, s = np.array([0, 1]), np.array([1.0, 1.0])
    >>> b = clipped_row_gradient_sum_dense(X, rows, s, norms, 1.0, out)
    >>> out, float(b)
    (array([0.6, 1.8]), 1.2)
    """
    p = X.shape[1]
    n_rows = rows.shape[0]
    for j in range(p):
        out[j] = 0.0
    total = 0.0
    for k in range(n_rows):
        i = rows[k]
        # Random rows are latency-bound: start loading the next one now.
        if k + 1 < n_rows:
            following = X[rows[k + 1]]
            for q in range(0, p, 8):
                prefetch(following, q)
        coef = l2_clip_coefficient(s[k], row_norms[i], C)
        total += coef
        for j in range(p):
            out[j] += coef * X[i, j]
    return total
