"""Kernels of DP-SGD: uniform batches of distinct rows, and many noisy clipped steps per call.

:func:`distinct_subsets` turns pre-drawn uniforms into uniformly random
subsets of rows (Floyd's algorithm). :func:`sgd_steps_dense` and
:func:`sgd_steps_csr` then run a sequence of steps on a row-major ``X`` with
those batches and pre-drawn Gaussian noise. Step ``t`` reads batch ``B_t`` (the
next ``counts[t]`` entries of ``rows``) and does

* ``s_i = l'(x_i . w + b, y_i)`` for ``i`` in ``B_t``, at the step's starting
  point, and ``f_i = min(1, C / (|s_i| row_norms[i]))`` (1 for a zero
  gradient), which clips the per-sample gradient ``s_i (x_i, 1)`` to L2 norm ``C``
  (:func:`~dpglm._kernels.elementwise.l2_clip_coefficient`: also when an extreme
  record's margin overflowed, a NaN gradient contributing nothing);
* ``g = (sum_i f_i s_i (x_i, 1) + sigma * noise[t]) * inv_b``;
* ``theta_j <- min(max(soft_threshold(theta_j - step g_j, step l1_j)
  / (1 + step l2_j), lo_j), hi_j)`` for every coordinate ``j`` (the prox of
  ``step`` times any separable elastic-net + box penalty).

``theta`` holds the coefficients followed, when ``fit_intercept``, by the
intercept, whose feature is the constant 1 (``row_norms`` then includes it).
Inputs are validated by the Python caller; the kernels do no bounds checks.
"""

from __future__ import annotations

import numpy as np

from dpglm._kernels.elementwise import l2_clip_coefficient, prox_elastic_net_box
from dpglm._kernels.jit import kernel, prefetch
from dpglm._kernels.losses import derivative_value

_LINE = 8  # float64 values per 64-byte cache line


@kernel
def distinct_subsets(n, counts, uniforms, marker, out):
    """Uniformly random subsets of ``range(n)``, one per entry of ``counts``.

    Floyd's algorithm: for ``j = n - k, ..., n - 1`` draw ``t`` uniformly in
    ``[0, j]`` and add ``t``, or ``j`` when ``t`` is already in the subset.
    Every ``k``-subset comes out with probability ``1 / binom(n, k)`` and each
    subset costs ``k`` uniforms whatever ``n``. ``t = floor(u (j + 1))``, so
    the subset is uniform up to the rounding of ``u`` to a multiple of
    ``2**-53`` (a relative bias below ``n * 2**-53`` per row).

    Parameters
    ----------
    n : int
        Number of rows to choose from.
    counts : ndarray of int of shape (S,)
        Size of each subset, each in ``[0, n]``.
    uniforms : ndarray of shape (counts.sum(),)
        Draws of the uniform distribution on ``[0, 1)``, ``counts[t]`` per subset.
    marker : ndarray of bool of shape (n,)
        All ``False`` on entry, and again on return (scratch membership flags).
    out : ndarray of int of shape (counts.sum(),)
        Overwritten with the subsets one after the other (in no particular
        order within a subset).

    Examples
    --------
    >>> import numpy as np
    >>> out = np.empty(5, dtype=np.int64)
    >>> u = np.array([0.9, 0.9, 0.1, 0.5, 0.0])
    >>> distinct_subsets(4, np.array([2, 3]), u, np.zeros(4, dtype=bool), out)
    >>> out[:2], np.sort(out[2:])
    (array([2, 3]), array([0, 1, 3]))
    """
    pos = 0
    for t in range(counts.shape[0]):
        start = pos
        for j in range(n - counts[t], n):
            pick = np.int64(uniforms[pos] * (j + 1))
            # u * (j + 1) may round up to j + 1 when u is the largest double below 1
            pick = j if pick > j else pick
            if marker[pick]:
                pick = j
            marker[pick] = True
            out[pos] = pick
            pos += 1
        # clear only what this subset set: the next one starts from an empty marker
        for k in range(start, pos):
            marker[out[k]] = False


@kernel
def prox_update(theta, grad, noise_t, sigma, step, inv_b, l1, l2, lo, hi):
    """One DP-SGD step from a clipped sum: ``theta <- prox(theta - step g)`` in place.

    ``g = (grad + sigma * noise_t) * inv_b``, and the prox is that of ``step``
    times the elastic-net + box penalty ``(l1, l2, lo, hi)``, coordinate-wise:
    the end of every step of :func:`sgd_steps_dense` and :func:`sgd_steps_csr`,
    and of a data-parallel step whose clipped sum came from row chunks.

    Examples
    --------
    >>> import numpy as np
    >>> theta, free = np.zeros(2), np.zeros(2)
    >>> box = (np.full(2, -np.inf), np.array([np.inf, 0.5]))
    >>> prox_update(theta, np.array([-2.0, -2.0]), np.zeros(2), 0.0, 1.0, 0.5, free, free, *box)
    >>> theta
    array([1. , 0.5])
    """
    for j in range(theta.shape[0]):
        g = (grad[j] + sigma * noise_t[j]) * inv_b
        theta[j] = prox_elastic_net_box(theta[j] - step * g, step, l1[j], l2[j], lo[j], hi[j])


@kernel
def sgd_steps_dense(
    X, y, row_norms, counts, rows, noise, theta, grad,
    sigma, clip, step, inv_b, l1, l2, lo, hi, code, param, fit_intercept,
):  # fmt: skip
    """Run ``counts.shape[0]`` DP-SGD steps on a dense C-order ``X`` (see the module docstring).

    Parameters
    ----------
    X : ndarray of shape (n, p), C order
        Features.
    y : ndarray of shape (n,)
        Targets.
    row_norms : ndarray of shape (n,)
        ``||(x_i, 1)||`` with an intercept, ``||x_i||`` without.
    counts : ndarray of int of shape (S,)
        Batch size of each step.
    rows : ndarray of int of shape (counts.sum(),)
        The batches, one after the other.
    noise : ndarray of shape (S, n_coords)
        Standard normal draws, one row per step.
    theta : ndarray of shape (n_coords,)
        Iterate, updated in place; ``n_coords = p + fit_intercept``.
    grad : ndarray of shape (n_coords,)
        Scratch.
    sigma : float
        Noise standard deviation on the clipped sum (0 for none).
    clip : float
        ``C`` (``inf`` for no clipping).
    step : float
        Step size.
    inv_b : float
        One over the normalising batch size.
    l1, l2, lo, hi : ndarray of shape (n_coords,)
        Penalty of each coordinate (the intercept's: ``0, 0, -inf, inf``).
    code : int
        Datafit code.
    param : float
        Datafit parameter.
    fit_intercept : bool
        Whether ``theta`` ends with an intercept.

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.datafits import SQUARED
    >>> X, y = np.array([[3.0, 4.0], [1.0, 0.0]]), np.array([1.0, 0.0])
    >>> theta, zeros, inf = np.zeros(2), np.zeros(2), np.full(2, np.inf)
    >>> sgd_steps_dense(
    ...     X, y, np.array([5.0, 1.0]), np.array([1]), np.array([0]), np.zeros((1, 2)),
    ...     theta, np.empty(2), 0.0, 1.0, 1.0, 1.0, zeros, zeros, -inf, inf, SQUARED, 0.0, False,
    ... )  # fmt: skip
    >>> theta  # gradient -1 * (3, 4), clipped to norm 1
    array([0.6, 0.8])
    """
    p = X.shape[1]
    n_coords = theta.shape[0]
    pos = 0
    for t in range(counts.shape[0]):
        for j in range(n_coords):
            grad[j] = 0.0
        intercept = theta[p] if fit_intercept else 0.0
        total = 0.0
        stop = pos + counts[t]
        # Four rows at a time: one load of theta serves four margins and one
        # load-store of grad four rows (one row at a time: 1.5x slower).
        quads = pos + 4 * ((stop - pos) // 4)
        for k in range(pos, quads, 4):
            # start loading the next four rows (they may belong to the next step,
            # whose rows are already known): random rows are latency-bound
            for a in range(k + 4, min(k + 8, rows.shape[0])):
                following = X[rows[a]]
                for q in range(0, p, _LINE):
                    prefetch(following, q)
            i0, i1, i2, i3 = rows[k], rows[k + 1], rows[k + 2], rows[k + 3]
            r0, r1, r2, r3 = X[i0], X[i1], X[i2], X[i3]
            z0 = intercept
            z1 = intercept
            z2 = intercept
            z3 = intercept
            for j in range(p):
                tj = theta[j]
                z0 += r0[j] * tj
                z1 += r1[j] * tj
                z2 += r2[j] * tj
                z3 += r3[j] * tj
            c0 = l2_clip_coefficient(derivative_value(code, param, z0, y[i0]), row_norms[i0], clip)
            c1 = l2_clip_coefficient(derivative_value(code, param, z1, y[i1]), row_norms[i1], clip)
            c2 = l2_clip_coefficient(derivative_value(code, param, z2, y[i2]), row_norms[i2], clip)
            c3 = l2_clip_coefficient(derivative_value(code, param, z3, y[i3]), row_norms[i3], clip)
            total += (c0 + c1) + (c2 + c3)
            for j in range(p):
                grad[j] += (c0 * r0[j] + c1 * r1[j]) + (c2 * r2[j] + c3 * r3[j])
        for k in range(quads, stop):
            i = rows[k]
            row = X[i]
            z = intercept
            for j in range(p):
                z += row[j] * theta[j]
            coef = l2_clip_coefficient(derivative_value(code, param, z, y[i]), row_norms[i], clip)
            total += coef
            for j in range(p):
                grad[j] += coef * row[j]
        pos = stop
        if fit_intercept:
            grad[p] = total
        prox_update(theta, grad, noise[t], sigma, step, inv_b, l1, l2, lo, hi)


@kernel
def sgd_steps_csr(
    data, indices, indptr, y, row_norms, counts, rows, noise, theta, grad,
    sigma, clip, step, inv_b, l1, l2, lo, hi, code, param, fit_intercept,
):  # fmt: skip
    """Run ``counts.shape[0]`` DP-SGD steps on a CSR ``X`` (see the module docstring).

    Same parameters as :func:`sgd_steps_dense`, with ``X`` given by its CSR
    arrays ``data, indices, indptr`` (sorted or not, no duplicates needed);
    only the stored entries of the batch rows are read.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.sparse import csr_array
    >>> from dpglm.datafits import SQUARED
    >>> A, y = csr_array(np.array([[3.0, 4.0], [1.0, 0.0]])), np.array([1.0, 0.0])
    >>> theta, zeros, inf = np.zeros(2), np.zeros(2), np.full(2, np.inf)
    >>> sgd_steps_csr(
    ...     A.data, A.indices, A.indptr, y, np.array([5.0, 1.0]), np.array([1]), np.array([0]),
    ...     np.zeros((1, 2)), theta, np.empty(2), 0.0, 1.0, 1.0, 1.0, zeros, zeros, -inf, inf,
    ...     SQUARED, 0.0, False,
    ... )  # fmt: skip
    >>> theta
    array([0.6, 0.8])
    """
    n_coords = theta.shape[0]
    p = n_coords - 1 if fit_intercept else n_coords
    pos = 0
    for t in range(counts.shape[0]):
        for j in range(n_coords):
            grad[j] = 0.0
        intercept = theta[p] if fit_intercept else 0.0
        total = 0.0
        stop = pos + counts[t]
        for k in range(pos, stop):
            i = rows[k]
            lo_k, hi_k = np.uintp(indptr[i]), np.uintp(indptr[i + 1])
            z = intercept
            for kk in range(lo_k, hi_k):
                z += data[kk] * theta[np.uintp(indices[kk])]
            coef = l2_clip_coefficient(derivative_value(code, param, z, y[i]), row_norms[i], clip)
            total += coef
            for kk in range(lo_k, hi_k):
                grad[np.uintp(indices[kk])] += coef * data[kk]
        pos = stop
        if fit_intercept:
            grad[p] = total
        prox_update(theta, grad, noise[t], sigma, step, inv_b, l1, l2, lo, hi)
