"""Kernels on sparse float64 matrices given as ``(data, indices, indptr)``.

Column kernels take CSC arrays, row kernels CSR arrays; index arrays may be
int32 or int64. Inside loops, bounds and indices are cast to ``np.uintp``:
numba then drops the negative-index wrap-around code from every access, which
doubles the speed of these memory-bound loops. Inputs are validated by the
Python callers: the kernels do no bounds checks.
"""

from __future__ import annotations

import numpy as np

from dpglm._kernels.elementwise import clip_value, l2_clip_coefficient
from dpglm._kernels.jit import kernel


@kernel
def clipped_coordinate_gradient_csc(data, indices, indptr, n_samples, j, s, c):
    """One coordinate of the per-sample clipped gradient, CSC ``X``.

    Zeros of column ``j`` contribute ``clip(0, c) = 0``, so only its stored
    entries are read.

    Parameters
    ----------
    data, indices, indptr : ndarray
        CSC arrays of ``X`` of shape (n_samples, p).
    n_samples : int
        Number of rows ``n``.
    j : int
        Column.
    s : ndarray of shape (n_samples,)
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
    >>> from scipy.sparse import csc_array
    >>> X = csc_array(np.array([[1.0, 0.0], [3.0, -4.0]]))
    >>> float(clipped_coordinate_gradient_csc(X.data, X.indices, X.indptr, 2, 1, np.ones(2), 3.0))
    -1.5
    """
    acc = 0.0
    for k in range(np.uintp(indptr[j]), np.uintp(indptr[j + 1])):
        acc += clip_value(s[np.uintp(indices[k])] * data[k], c)
    return acc / n_samples


@kernel
def clipped_gradient_csc(data, indices, indptr, n_samples, s, c, out):
    """Full per-sample, per-coordinate clipped gradient, CSC ``X``, one thread.

    Parameters
    ----------
    data, indices, indptr : ndarray
        CSC arrays of ``X`` of shape (n_samples, p).
    n_samples : int
        Number of rows ``n``.
    s : ndarray of shape (n_samples,)
        Per-sample derivatives ``l'(z_i, y_i)``.
    c : ndarray of shape (p,)
        Non-negative clipping bounds per column (``inf`` for none).
    out : ndarray of shape (p,)
        Output, overwritten with ``out[j] = (1/n) sum_i clip(s_i X[i, j], c[j])``.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.sparse import csc_array
    >>> X = csc_array(np.array([[1.0, 0.0], [3.0, -4.0]]))
    >>> out = np.empty(2)
    >>> clipped_gradient_csc(X.data, X.indices, X.indptr, 2, np.ones(2), np.array([2.0, 3.0]), out)
    >>> out
    array([ 1.5, -1.5])
    """
    inv_n = 1.0 / n_samples
    p = indptr.shape[0] - 1
    for j in range(p):
        cj = c[j]
        acc = 0.0
        for k in range(np.uintp(indptr[j]), np.uintp(indptr[j + 1])):
            acc += clip_value(s[np.uintp(indices[k])] * data[k], cj)
        out[j] = acc * inv_n


@kernel
def add_scaled_column_csc(data, indices, indptr, j, a, z):
    """Margin update after a coordinate step: ``z += a * X[:, j]``, CSC ``X``.

    Parameters
    ----------
    data, indices, indptr : ndarray
        CSC arrays of ``X``.
    j : int
        Column.
    a : float
        Scale (the change of ``w[j]``).
    z : ndarray of shape (n_samples,)
        Margins, updated in place.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.sparse import csc_array
    >>> X = csc_array(np.array([[1.0, 0.0], [3.0, -4.0]]))
    >>> z = np.zeros(2)
    >>> add_scaled_column_csc(X.data, X.indices, X.indptr, 1, 0.5, z)
    >>> z
    array([ 0., -2.])
    """
    for k in range(np.uintp(indptr[j]), np.uintp(indptr[j + 1])):
        z[np.uintp(indices[k])] += a * data[k]


@kernel
def clipped_row_gradient_sum_csr(data, indices, indptr, rows, s, row_norms, C, out):
    """Sum of L2-clipped per-sample gradients over a mini-batch, CSR ``X``.

    Same computation as
    :func:`~dpglm._kernels.dense.clipped_row_gradient_sum_dense`, reading only
    the stored entries of the batch rows.

    Parameters
    ----------
    data, indices, indptr : ndarray
        CSR arrays of ``X`` of shape (n, p).
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
        Overwritten with ``sum_k s_k f_k X[rows[k]]`` where
        ``f_k = min(1, C / (|s_k| row_norms[rows[k]]))``.

    Returns
    -------
    float
        ``sum_k s_k f_k``, the intercept component.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.sparse import csr_array
    >>> X = csr_array(np.array([[3.0, 4.0], [0.0, 1.0]]))
    >>> norms = np.array([5.0, 1.0])
    >>> out = np.empty(2)
    >>> b = clipped_row_gradient_sum_csr(
    ...     X.data, X.indices, X.indptr, np.array([0, 1]), np.ones(2), norms, 1.0, out
    ... )
    >>> out, float(b)
    (array([0.6, 1.8]), 1.2)
    """
    for j in range(out.shape[0]):
        out[j] = 0.0
    total = 0.0
    for k in range(rows.shape[0]):
        i = rows[k]
        coef = l2_clip_coefficient(s[k], row_norms[i], C)
        total += coef
        for kk in range(np.uintp(indptr[i]), np.uintp(indptr[i + 1])):
            out[np.uintp(indices[kk])] += coef * data[kk]
    return total
