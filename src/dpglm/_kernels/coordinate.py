"""Epoch-level kernels of private coordinate descent (DP-CD).

One call runs a whole sequence of coordinate steps, with the order and the
Gaussian noise drawn in advance by the solver. Step ``k`` updates coordinate
``j = order[k]``:

* ``g = (1/n) sum_i clip(l'(z_i, y_i) * X[i, j], c[j]) + noise[k]``, the noisy
  per-sample clipped partial derivative (every term in ``[-c[j], c[j]]``, also
  when an extreme record's margin overflowed: ``clip`` is
  :func:`~dpglm._kernels.elementwise.clip_value`, which maps ``+-inf`` to
  ``+-c[j]`` and NaN to 0; a NaN margin stays NaN and its record contributes
  nothing);
* ``w_new = min(max(soft_threshold(w[j] - step[j] g, step[j] l1[j])
  / (1 + step[j] l2[j]), lo[j]), hi[j])``, the exact prox of any separable
  elastic-net + box penalty;
* ``z += (w_new - w[j]) * X[:, j]`` and ``w[j] = w_new``.

Coordinate ``j == n_features`` is the intercept, a virtual column of ones. The
derivative ``l'`` is computed from the margins ``z`` on the fly, so one kernel
serves every datafit code.
"""

from __future__ import annotations

import numpy as np

from dpglm._kernels.elementwise import clip_value, prox_elastic_net_box
from dpglm._kernels.jit import kernel, prefetch
from dpglm._kernels.losses import derivative_value
from dpglm.datafits import HINGE, HUBER, LOGISTIC, SQUARED, SQUARED_HINGE

# Dense inner loops walk the rows in chunks of _CHUNK and prefetch the column
# _AHEAD rows ahead, running on into the next step's column: the hardware
# prefetcher alone leaves the loop at twice the time of a plain read of X.
_CHUNK = 128
_AHEAD = 1024
_LINE = 8  # float64 values per 64-byte cache line


@kernel
def _prefetch_chunk(b, nxt, t, n):
    # Prefetch _CHUNK rows from row t of b followed by nxt (t may run past b).
    if t < n:
        for q in range(0, _CHUNK, _LINE):
            prefetch(b, min(t + q, n - 1))
    else:
        for q in range(0, _CHUNK, _LINE):
            prefetch(nxt, min(t - n + q, n - 1))


@kernel
def _residual_form(code):
    # Losses of the residual z - y only: iterate on u = z - y, which saves
    # reading y at every step.
    return code in (SQUARED, HUBER)


@kernel
def _derivative_u(code, param, u, y, i):
    # l'(z_i, y_i) from u_i, which is z_i - y_i in residual form and z_i otherwise.
    if code == SQUARED:
        return u
    if code == HUBER:
        return clip_value(u, param)
    return derivative_value(code, param, u, y[i])


# The public kernels dispatch on the datafit code to one compiled epoch per
# code. Inside each, ``code`` is a closure constant, so the branches of the
# derivative fold away and the inner loops vectorise (with ``code`` as a
# run-time value they stay scalar and run 6x slower). A closure over an int
# keeps numba's cache key stable across processes.
def _make_steps_dense(code):
    @kernel
    def steps(X, y, z, w, order, noise, step, c, l1, l2, lo, hi, param, n_features, trace):
        n = y.shape[0]
        inv_n = 1.0 / n
        n_chunks = n // _CHUNK
        tail = n_chunks * _CHUNK
        residual = _residual_form(code)
        u = z - y if residual else z
        # The intercept's virtual column, with the layout of a column of X.
        ones = np.asfortranarray(np.ones((n, 1)))[:, 0]
        # The margin update of a step is deferred and fused with the gradient
        # of the next one, so u is read and written once per step.
        pending = False
        a = ones
        dp = 0.0
        n_steps = order.shape[0]
        for k in range(n_steps):
            j = order[k]
            b = ones if j == n_features else X[:, j]
            nxt = b
            if k + 1 < n_steps:
                nxt = ones if order[k + 1] == n_features else X[:, order[k + 1]]
            cj = c[j]
            acc = 0.0
            if pending:
                for ch in range(n_chunks):
                    i0 = ch * _CHUNK
                    _prefetch_chunk(b, nxt, i0 + _AHEAD, n)
                    for i in range(i0, i0 + _CHUNK):
                        ui = u[i] + dp * a[i]
                        u[i] = ui
                        acc += clip_value(_derivative_u(code, param, ui, y, i) * b[i], cj)
                for i in range(tail, n):
                    ui = u[i] + dp * a[i]
                    u[i] = ui
                    acc += clip_value(_derivative_u(code, param, ui, y, i) * b[i], cj)
            else:
                for ch in range(n_chunks):
                    i0 = ch * _CHUNK
                    _prefetch_chunk(b, nxt, i0 + _AHEAD, n)
                    for i in range(i0, i0 + _CHUNK):
                        acc += clip_value(_derivative_u(code, param, u[i], y, i) * b[i], cj)
                for i in range(tail, n):
                    acc += clip_value(_derivative_u(code, param, u[i], y, i) * b[i], cj)
            g = acc * inv_n + noise[k]
            wj = w[j]
            w_new = prox_elastic_net_box(wj - step[j] * g, step[j], l1[j], l2[j], lo[j], hi[j])
            d = w_new - wj
            w[j] = w_new
            trace[k] = w_new
            pending = d != 0.0
            if pending:
                a = b
                dp = d
        if pending:
            for i in range(n):
                u[i] += dp * a[i]
        if residual:
            for i in range(n):
                z[i] = u[i] + y[i]

    return steps


def _make_steps_csc(code):
    @kernel
    def steps(
        data, indices, indptr, y, z, w, order, noise, step, c, l1, l2, lo, hi, param, n_features,
        trace,
    ):  # fmt: skip
        n = y.shape[0]
        inv_n = 1.0 / n
        n_steps = order.shape[0]
        for k in range(n_steps):
            j = order[k]
            # A step is short (about 100 non-zeros): load the next column's
            # entries, and the pointer of the one after, while this one runs.
            # In random order this halves the time per step.
            if k + 2 < n_steps:
                prefetch(indptr, order[k + 2])
            if k + 1 < n_steps and order[k + 1] != n_features:
                following = order[k + 1]
                first = np.uintp(indptr[following])
                last = np.uintp(indptr[following + 1])
                for q in range(first, last, _LINE):
                    prefetch(data, q)
                    prefetch(indices, q)
            cj = c[j]
            acc = 0.0
            start = np.uintp(0)
            stop = np.uintp(0)
            if j == n_features:
                for i in range(n):
                    acc += clip_value(derivative_value(code, param, z[i], y[i]), cj)
            else:
                start = np.uintp(indptr[j])
                stop = np.uintp(indptr[j + 1])
                for kk in range(start, stop):
                    i = np.uintp(indices[kk])
                    acc += clip_value(derivative_value(code, param, z[i], y[i]) * data[kk], cj)
            g = acc * inv_n + noise[k]
            wj = w[j]
            w_new = prox_elastic_net_box(wj - step[j] * g, step[j], l1[j], l2[j], lo[j], hi[j])
            d = w_new - wj
            w[j] = w_new
            trace[k] = w_new
            if d != 0.0:
                if j == n_features:
                    for i in range(n):
                        z[i] += d
                else:
                    for kk in range(start, stop):
                        z[np.uintp(indices[kk])] += d * data[kk]

    return steps


_steps_dense_squared = _make_steps_dense(SQUARED)
_steps_dense_logistic = _make_steps_dense(LOGISTIC)
_steps_dense_hinge = _make_steps_dense(HINGE)
_steps_dense_squared_hinge = _make_steps_dense(SQUARED_HINGE)
_steps_dense_huber = _make_steps_dense(HUBER)
_steps_csc_squared = _make_steps_csc(SQUARED)
_steps_csc_logistic = _make_steps_csc(LOGISTIC)
_steps_csc_hinge = _make_steps_csc(HINGE)
_steps_csc_squared_hinge = _make_steps_csc(SQUARED_HINGE)
_steps_csc_huber = _make_steps_csc(HUBER)


@kernel
def coordinate_steps_dense(
    X, y, z, w, order, noise, step, c, l1, l2, lo, hi, code, param, n_features, trace
):
    """Run ``len(order)`` noisy proximal coordinate steps, dense ``X``.

    The margin update of each step is fused with the gradient of the next one
    (one pass over the rows per step instead of two); the result equals the
    step-by-step computation up to rounding.

    Parameters
    ----------
    X : ndarray of shape (n, n_features), Fortran order
        Features.
    y : ndarray of shape (n,)
        Targets.
    z : ndarray of shape (n,)
        Margins ``X w (+ intercept)``, updated in place.
    w : ndarray of shape (n_features,) or (n_features + 1,)
        Coefficients, updated in place; ``w[n_features]`` is the intercept.
    order : ndarray of int
        Coordinates to update, in order; ``n_features`` means the intercept.
    noise : ndarray of shape (len(order),)
        Noise added to each partial derivative.
    step, c, l1, l2, lo, hi : ndarray, same length as ``w``
        Per-coordinate step size, clipping bound, L1 and L2 strengths and box.
    code : int
        Datafit code (``dpglm.datafits.SQUARED``, ...); an unknown code
        leaves ``w`` and ``z`` unchanged.
    param : float
        Datafit parameter.
    n_features : int
        Number of columns of ``X``.
    trace : ndarray of shape (len(order),)
        Overwritten with ``w[order[k]]`` just after step ``k`` (what averaging
        over the iterates needs, without storing them).

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.datafits import SQUARED
    >>> X = np.asfortranarray([[1.0, 0.0], [0.0, 1.0]])
    >>> y, z, w = np.array([2.0, 4.0]), np.zeros(2), np.zeros(3)
    >>> ones, inf = np.ones(3), np.full(3, np.inf)
    >>> order, noise = np.array([0, 1]), np.zeros(2)
    >>> penalty = (ones, inf, 0 * ones, 0 * ones, -inf, inf)
    >>> trace = np.empty(2)
    >>> coordinate_steps_dense(X, y, z, w, order, noise, *penalty, SQUARED, 0.0, 2, trace)
    >>> w, z, trace
    (array([1., 2., 0.]), array([1., 2.]), array([1., 2.]))
    """
    args = (X, y, z, w, order, noise, step, c, l1, l2, lo, hi, param, n_features, trace)
    if code == SQUARED:
        _steps_dense_squared(*args)
    elif code == LOGISTIC:
        _steps_dense_logistic(*args)
    elif code == HINGE:
        _steps_dense_hinge(*args)
    elif code == SQUARED_HINGE:
        _steps_dense_squared_hinge(*args)
    elif code == HUBER:
        _steps_dense_huber(*args)


@kernel
def coordinate_steps_csc(
    data, indices, indptr, y, z, w, order, noise, step, c, l1, l2, lo, hi, code, param, n_features,
    trace,
):  # fmt: skip
    """Run ``len(order)`` noisy proximal coordinate steps, CSC ``X``.

    A step on column ``j`` touches only the rows where ``X[:, j]`` is non-zero
    (the others contribute ``clip(0) = 0`` to the gradient and do not move);
    an intercept step touches every row.

    Parameters
    ----------
    data, indices, indptr : ndarray
        CSC arrays of ``X`` of shape (n, n_features).
    y : ndarray of shape (n,)
        Targets.
    z : ndarray of shape (n,)
        Margins ``X w (+ intercept)``, updated in place.
    w : ndarray of shape (n_features,) or (n_features + 1,)
        Coefficients, updated in place; ``w[n_features]`` is the intercept.
    order : ndarray of int
        Coordinates to update, in order; ``n_features`` means the intercept.
    noise : ndarray of shape (len(order),)
        Noise added to each partial derivative.
    step, c, l1, l2, lo, hi : ndarray, same length as ``w``
        Per-coordinate step size, clipping bound, L1 and L2 strengths and box.
    code : int
        Datafit code (``dpglm.datafits.SQUARED``, ...); an unknown code
        leaves ``w`` and ``z`` unchanged.
    param : float
        Datafit parameter.
    n_features : int
        Number of columns of ``X``.
    trace : ndarray of shape (len(order),)
        Overwritten with ``w[order[k]]`` just after step ``k``.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.sparse import csc_array
    >>> from dpglm.datafits import SQUARED
    >>> X = csc_array(np.array([[1.0, 0.0], [0.0, 1.0]]))
    >>> y, z, w = np.array([2.0, 4.0]), np.zeros(2), np.zeros(3)
    >>> ones, inf = np.ones(3), np.full(3, np.inf)
    >>> order, noise = np.array([0, 1]), np.zeros(2)
    >>> penalty = (ones, inf, 0 * ones, 0 * ones, -inf, inf)
    >>> coordinate_steps_csc(
    ...     X.data,
    ...     X.indices,
    ...     X.indptr,
    ...     y,
    ...     z,
    ...     w,
    ...     order,
    ...     noise,
    ...     *penalty,
    ...     SQUARED,
    ...     0.0,
    ...     2,
    ...     np.empty(2),
    ... )
    >>> w, z
    (array([1., 2., 0.]), array([1., 2.]))
    """
    args = (data, indices, indptr, y, z, w, order, noise, step, c, l1, l2, lo, hi)
    if code == SQUARED:
        _steps_csc_squared(*args, param, n_features, trace)
    elif code == LOGISTIC:
        _steps_csc_logistic(*args, param, n_features, trace)
    elif code == HINGE:
        _steps_csc_hinge(*args, param, n_features, trace)
    elif code == SQUARED_HINGE:
        _steps_csc_squared_hinge(*args, param, n_features, trace)
    elif code == HUBER:
        _steps_csc_huber(*args, param, n_features, trace)
