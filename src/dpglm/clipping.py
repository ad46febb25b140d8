"""Per-record clipping and norms that hold for every finite record.

A clipped sum is a bounded function of each record only if the clipping
bounds every term the record can produce. An extreme but finite record makes
terms overflow (``1e308 * 3`` is ``inf``, and ``inf * 0`` or ``inf - inf`` is
NaN) and norms overflow or underflow; the helpers here clip ``+-inf`` to the
bound, let a NaN term contribute nothing, compute norms exactly for every
finite record, and clip features to public bounds. They are the numpy
counterparts of the kernels' :func:`dpglm._kernels.elementwise.clip_value` and
:func:`dpglm._kernels.elementwise.l2_clip_coefficient`.

Examples
--------
>>> import numpy as np
>>> from dpglm.clipping import clip_terms, record_norms
>>> clip_terms(np.array([np.inf, np.nan, -0.5]), 1.0)
array([ 1. ,  0. , -0.5])
>>> record_norms(np.array([[1e300, 1e300]]))
array([1.41421356e+300])
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from dpglm import _kernels

#: a row whose sum of squares lies below this was summed with subnormal squares (or
#: underflowed to 0), so its square root may be off by far more than rounding
TINY_SQUARES = 2.0**-968


#: the smallest normal double and the spacing of the subnormal ones (the kernels' own,
#: :mod:`dpglm._kernels.elementwise`, which importing the estimators leaves unloaded)
SMALLEST_NORMAL = float(np.finfo(float).tiny)
SUBNORMAL_STEP = float(np.finfo(float).smallest_subnormal)


def clip_terms(values, c):
    """``values`` clipped to ``[-c, c]``, with NaN set to 0: every term lies in ``[-c, c]``.

    The numpy counterpart of :func:`dpglm._kernels.clip_value`, for per-record
    terms summed outside the kernels (an infinite term clips to ``+-c``, a NaN
    one, from an extreme record's overflowed margin, contributes nothing).

    Examples
    --------
    >>> clip_terms(np.array([3.0, -np.inf, np.nan, 0.5]), 1.0)
    array([ 1. , -1. ,  0. ,  0.5])
    """
    out = np.clip(values, -c, c)
    out[np.isnan(out)] = 0.0
    return out


def factors_below(factors):
    """Non-negative correctly rounded quotients, each made no larger than the exact one.

    The numpy counterpart of :func:`dpglm._kernels.elementwise.factor_below`: a
    subnormal quotient (a tiny clip over a huge row) may be rounded up to twice its
    value, and one subnormal step less is below it; normal ones are kept.

    Examples
    --------
    >>> factors_below(np.array([0.5, 5e-324, 1e-320])) < np.array([0.6, 5e-324, 1e-320])
    array([ True,  True,  True])
    """
    factors = np.asarray(factors, dtype=float)
    tiny = factors < SMALLEST_NORMAL
    if not tiny.any():
        return factors
    out = factors.copy()
    out[tiny] = np.maximum(factors[tiny] - SUBNORMAL_STEP, 0.0)
    return out


def toward_zero(values):
    """``values`` with each subnormal entry moved one subnormal step toward 0 (0 at most).

    A product rounded into the subnormal range may be off by half a step, which may be
    most of its value: one step less in magnitude is no larger than the exact product.

    Examples
    --------
    >>> out = toward_zero(np.array([0.5, -1e-320, 5e-324]))
    >>> bool(out[0] == 0.5), bool(-1e-320 < out[1] < 0.0), float(out[2])
    (True, True, 0.0)
    """
    values = np.asarray(values, dtype=float)
    tiny = np.abs(values) < SMALLEST_NORMAL
    if not tiny.any():
        return values
    out = values.copy()
    out[tiny] = np.sign(values[tiny]) * factors_below(np.abs(values[tiny]))
    return out


def l2_clip_coefficients(s, norms, c):
    """``f`` such that ``f_i x_i`` is ``s_i x_i`` clipped to L2 norm ``c``, given ``||x_i||``.

    The numpy counterpart of :func:`dpglm._kernels.elementwise.l2_clip_coefficient`
    (``s_i min(1, c / (|s_i| norms[i]))``), for every record: an infinite
    gradient norm gives ``+-c / norms[i]``, a NaN one (a NaN derivative, or an
    infinite one on a row of zeros) contributes nothing.

    Examples
    --------
    >>> l2_clip_coefficients(np.array([-3.0, 0.25, np.inf, np.nan]), np.full(4, 2.0), 1.0)
    array([-0.5 ,  0.25,  0.5 ,  0.  ])
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        grad_norms = np.abs(s) * norms
        # over the bound (an infinite gradient norm too) the coefficient is +-c / norm, as
        # in the kernel: s times a rounded factor could round up again where the product is
        # subnormal; on a subnormal row c / norm may overflow, and the largest double still
        # keeps every entry of f x under c
        over = (grad_norms > c) | np.isinf(grad_norms)
        coef = np.array(s, dtype=float, copy=True)
        top = factors_below(np.minimum(c / norms[over], np.finfo(float).max))
        coef[over] = np.where(s[over] > 0.0, top, -top)
        coef[np.isnan(grad_norms)] = 0.0
    return coef


def l2_clip_residuals(residuals, norms, c):
    """Each row of ``residuals`` scaled so that its outer product with ``x_i`` has norm <= ``c``.

    A multinomial record's gradient is ``r_i (x_i, 1)^T`` (``r_i`` the residual
    ``softmax(z_i) - e_y``), of Frobenius norm ``||r_i|| ||(x_i, 1)||``: row
    ``i`` is scaled by ``min(1, c / (||r_i|| norms[i]))``, for every record at
    once, so replacing a record moves the sum of the clipped gradients by at
    most ``2 c`` whatever the number of classes. A row that is not finite (a
    margin that overflowed) contributes nothing, as does a row over the bound
    whose record norm overflowed.

    Examples
    --------
    >>> r = np.array([[0.6, -0.8], [0.1, 0.0], [np.nan, 0.0]])
    >>> l2_clip_residuals(r, np.array([2.0, 1.0, 1.0]), 1.0)
    array([[ 0.3, -0.4],
           [ 0.1,  0. ],
           [ 0. ,  0. ]])
    """
    residuals = np.asarray(residuals, dtype=float)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        grad_norms = np.sqrt(np.einsum("ij,ij->i", residuals, residuals)) * norms
        factor = np.where(grad_norms > c, c / grad_norms, 1.0)
        # NaN norms fail both tests: those rows, and infinite ones, contribute nothing
        factor = np.where(np.isfinite(grad_norms), factors_below(factor), 0.0)
        out = residuals * factor[:, None]
    out[~np.isfinite(out).all(axis=1)] = 0.0
    scaled = factor < 1.0
    # each product rounded into the subnormals may be half a step over: one step back
    out[scaled] = toward_zero(out[scaled])
    return out


def _scaled_squares(rows, extra):
    """``(top, t)`` per row, with ``||(x, sqrt(extra))|| = top * sqrt(t)`` and ``top`` the
    largest entry: the squares of ``x / top`` neither overflow nor underflow."""
    if sp.issparse(rows):
        rows = sp.csr_matrix(rows)
        counts = np.diff(rows.indptr)
        owner = np.repeat(np.arange(rows.shape[0]), counts)
        top = np.zeros(rows.shape[0])
        np.maximum.at(top, owner, np.abs(rows.data))
    else:
        top = np.abs(rows).max(axis=1, initial=0.0)
    top = np.maximum(top, math.sqrt(extra))
    safe = np.where(top > 0.0, top, 1.0)
    if sp.issparse(rows):
        scaled = rows.data / np.repeat(safe, counts)
        t = np.bincount(owner, weights=scaled * scaled, minlength=rows.shape[0])
    else:
        scaled = rows / safe[:, None]
        t = np.einsum("ij,ij->i", scaled, scaled)
    # top >= sqrt(extra): the intercept's share is at most 1, and 0 without intercept
    share = math.sqrt(extra) / safe
    return top, t + share * share


def record_norms(X, fit_intercept: bool = False) -> np.ndarray:
    """L2 norm of every record's features ``(x_i, 1)`` (the 1 only with an intercept).

    Exact to rounding for every finite record: rows whose sum of squares
    overflowed, or (without intercept) fell below :data:`TINY_SQUARES`, are
    summed again scaled by their largest entry. A norm above the largest double
    is ``inf``. The other rows keep the plain sum of squares, bit for bit.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Any layout.
    fit_intercept : bool, default=False

    Returns
    -------
    ndarray of shape (n_samples,)

    Examples
    --------
    >>> record_norms(np.array([[3.0, 4.0], [1e300, 1e300], [3e-170, 4e-170]]))
    array([5.00000000e+000, 1.41421356e+300, 5.00000000e-170])
    """
    extra = 1.0 if fit_intercept else 0.0
    with np.errstate(over="ignore", under="ignore"):
        if sp.issparse(X):
            squares = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        else:
            squares = np.einsum("ij,ij->i", X, X)
        norms = np.sqrt(squares + extra)
        odd = np.isinf(squares)
        if not fit_intercept:
            odd |= squares < TINY_SQUARES
        rows = np.flatnonzero(odd)
        if rows.size:
            top, t = _scaled_squares(X[rows], extra)
            norms[rows] = top * np.sqrt(t)
    return norms


def normalised_rows(X):
    """``(X', scale)``: ``scale[i] X'[i]`` is the unit row ``x_i / ||x_i||`` (0 for a zero row).

    ``X'`` is ``X`` itself and ``scale`` the inverse norms, unless some non-zero
    row has a squared norm outside ``[TINY_SQUARES, 1 / TINY_SQUARES]``: ``X'``
    is then a copy (same layout) in which those rows are divided by their
    norm (after a division by their largest entry, so that nothing overflows)
    and get ``scale`` 1. Kernels that read ``scale[i] X'[i]`` then compute
    with squares that are normal doubles, whatever the records.

    Parameters
    ----------
    X : ndarray of shape (n, p), C order, or CSR matrix

    Returns
    -------
    X' : ndarray or CSR matrix
    scale : ndarray of shape (n,)

    Examples
    --------
    >>> rows, scale = normalised_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    >>> scale
    array([0.2, 0. ])
    >>> rows, scale = normalised_rows(np.array([[3e200, 4e200], [2.0, 0.0]]))
    >>> rows, scale
    (array([[0.6, 0.8],
           [2. , 0. ]]), array([1. , 0.5]))
    """
    norms = record_norms(X)
    scale = np.zeros(norms.shape[0])
    positive = norms > 0.0
    with np.errstate(over="ignore", divide="ignore"):
        scale[positive] = 1.0 / norms[positive]
        squares = norms * norms
    normal = (squares >= TINY_SQUARES) & (squares <= 1.0 / TINY_SQUARES)
    odd = np.flatnonzero(positive & ~normal)
    if odd.size == 0:
        return X, scale
    top, t = _scaled_squares(X[odd], 0.0)
    root = np.sqrt(t)
    X = X.copy()
    if sp.issparse(X):
        for k, i in enumerate(odd):
            entries = slice(X.indptr[i], X.indptr[i + 1])
            X.data[entries] = X.data[entries] / top[k] / root[k]
    else:
        X[odd] = X[odd] / top[:, None] / root[:, None]
    scale[odd] = 1.0
    return X, scale


def clip_features(X, bounds):
    """``X`` with every entry of column ``j`` clipped to ``[-bounds[j], bounds[j]]``.

    A per-record operation. Returns ``X`` itself when every entry already lies
    within its bound, else a clipped copy in the same layout (C or Fortran
    order, CSR or CSC) with the same stored entries: the result is the same
    either way, so looking releases nothing.

    Parameters
    ----------
    X : ndarray, CSC or CSR matrix of shape (n_samples, n_features)
    bounds : array_like of shape (n_features,)
        Non-negative and finite.

    Returns
    -------
    ndarray or sparse matrix

    Examples
    --------
    >>> X = np.array([[0.5, -3.0], [1e308, 0.0]])
    >>> clip_features(X, np.array([1.0, 2.0]))
    array([[ 0.5, -2. ],
           [ 1. ,  0. ]])
    >>> clip_features(X, np.array([1e308, 3.0])) is X
    True
    """
    bounds = np.asarray(bounds, dtype=float)
    if sp.issparse(X):
        if X.format == "csc":
            limit = np.repeat(bounds, np.diff(X.indptr))
        elif X.format == "csr":
            limit = bounds[X.indices]
        else:
            raise TypeError(f"clip_features takes CSC or CSR matrices, got {X.format!r}")
        if not (np.abs(X.data) > limit).any():
            return X
        X = X.copy()
        np.clip(X.data, -limit, limit, out=X.data)
        return X
    if X.flags.f_contiguous or X.flags.c_contiguous:
        # one read of X at memory speed, without a temporary of its size
        outside = _kernels.exceeds_bounds_dense(X, bounds, bool(X.flags.f_contiguous))
    else:
        outside = (X.max(axis=0, initial=-np.inf) > bounds).any() or (
            X.min(axis=0, initial=np.inf) < -bounds
        ).any()
    if not outside:
        return X
    # np.clip keeps the memory order of its input (C or Fortran)
    return np.clip(X, -bounds, bounds)
