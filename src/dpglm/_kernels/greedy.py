"""Kernels of private greedy coordinate descent (DP-GCD).

Scores of the greedy rules, in units where replacing one record moves every
score by at most ``2 C / (n sqrt(tr M))`` (the clipped partial derivative
``g_j`` moves by ``2 C_j / n`` and each score is 1-Lipschitz in
``g_j / sqrt(M_j)``):

* ``GS_S``: ``min_{xi in d psi_j(w_j)} |g_j + xi| / sqrt(M_j)``, the distance of
  ``-g_j`` to the subdifferential (Algorithm 1's ``|g_j| / sqrt(M_j)`` when
  there is no penalty);
* ``GS_R``: ``sqrt(M_j) |prox_{psi_j / M_j}(w_j - g_j / M_j) - w_j|``, the
  length of the proximal step;
* ``GS_Q``: ``sqrt(2 q_j)`` where ``q_j = -min_a (g_j a + M_j a**2 / 2 +
  psi_j(w_j + a) - psi_j(w_j))`` is the decrease of the quadratic model (the
  square root makes the score 1-Lipschitz, since ``q_j >= M_j a*^2 / 2``).

A coordinate with ``M_j = 0`` (a column of zeros) scores 0. After a step on
coordinate ``j`` only the margins of the rows where column ``j`` is non-zero
change, so on sparse data the clipped gradient is patched from those rows
(CSR) instead of recomputed. Every patched term is clipped by
:func:`~dpglm._kernels.elementwise.clip_value`, so it stays in ``[-c_k, c_k]``
(0 for NaN) when an extreme record's margin overflows.
"""

from __future__ import annotations

import math

import numpy as np

from dpglm._kernels.elementwise import clip_value, prox_elastic_net_box
from dpglm._kernels.jit import kernel
from dpglm._kernels.losses import derivative_value

GS_S = 0
GS_R = 1
GS_Q = 2


@kernel
def greedy_score(rule, g, w, M, l1, l2, lo, hi):
    """Score of one coordinate under ``rule`` (see the module docstring).

    Examples
    --------
    >>> float(greedy_score(GS_S, -3.0, 0.0, 4.0, 1.0, 0.0, -np.inf, np.inf))
    1.0
    >>> float(greedy_score(GS_R, -3.0, 0.0, 4.0, 1.0, 0.0, -np.inf, np.inf))
    1.0
    """
    if not M > 0.0:
        return 0.0
    if rule == GS_S:
        base = l2 * w
        lower = base + (l1 if w > 0.0 else -l1)
        upper = base + (-l1 if w < 0.0 else l1)
        if w <= lo:
            lower = -np.inf
        if w >= hi:
            upper = np.inf
        dist = max(lower + g, -g - upper, 0.0)
        return dist / math.sqrt(M)
    alpha = prox_elastic_net_box(w - g / M, 1.0 / M, l1, l2, lo, hi) - w
    if rule == GS_R:
        return math.sqrt(M) * abs(alpha)
    moved = w + alpha
    dpsi = l1 * (abs(moved) - abs(w)) + 0.5 * l2 * (moved * moved - w * w)
    q = -(g * alpha + 0.5 * M * alpha * alpha + dpsi)
    return math.sqrt(2.0 * max(q, 0.0))


@kernel
def greedy_scores(rule, g, w, M, l1, l2, lo, hi, out):
    """Scores of every coordinate, written to ``out``.

    Examples
    --------
    >>> out = np.empty(2)
    >>> inf = np.full(2, np.inf)
    >>> greedy_scores(
    ...     GS_S,
    ...     np.array([2.0, -1.0]),
    ...     np.zeros(2),
    ...     np.ones(2),
    ...     np.zeros(2),
    ...     np.zeros(2),
    ...     -inf,
    ...     inf,
    ...     out,
    ... )
    >>> out
    array([2., 1.])
    """
    for j in range(g.shape[0]):
        out[j] = greedy_score(rule, g[j], w[j], M[j], l1[j], l2[j], lo[j], hi[j])


@kernel
def greedy_select(rule, g, w, M, l1, l2, lo, hi, noise, scale):
    """``argmax_j (score_j + scale * noise[j])``: report-noisy-max over the rule's scores.

    ``noise`` holds standard draws (Gumbel for the exponential mechanism,
    Laplace for the classic report-noisy-max); ``scale = 0`` is the exact
    greedy choice (the first maximiser).

    Examples
    --------
    >>> inf = np.full(3, np.inf)
    >>> int(
    ...     greedy_select(
    ...         GS_S,
    ...         np.array([1.0, -5.0, 2.0]),
    ...         np.zeros(3),
    ...         np.ones(3),
    ...         np.zeros(3),
    ...         np.zeros(3),
    ...         -inf,
    ...         inf,
    ...         np.zeros(3),
    ...         0.0,
    ...     )
    ... )
    1
    """
    best = -np.inf
    chosen = 0
    for j in range(g.shape[0]):
        value = greedy_score(rule, g[j], w[j], M[j], l1[j], l2[j], lo[j], hi[j])
        value += scale * noise[j]
        if value > best:
            best = value
            chosen = j
    return chosen


@kernel
def patch_clipped_gradient(
    col_data, col_indices, col_indptr, row_data, row_indices, row_indptr,
    j, d, y, z, s, c, G, code, param, n_features, fit_intercept,
):  # fmt: skip
    """Move coordinate ``j`` by ``d`` and patch margins, derivatives and clipped gradient.

    For every row ``i`` with ``X_ij != 0``: ``z_i += d X_ij``, the derivative
    ``s_i`` is recomputed, and each entry ``k`` of row ``i`` changes
    ``G_k`` by ``(clip(s_new X_ik, c_k) - clip(s_old X_ik, c_k)) / n`` (the
    intercept, when fitted, by the clipped derivative's change). The result
    equals recomputing ``G`` from the new margins, up to rounding.

    Parameters
    ----------
    col_data, col_indices, col_indptr : ndarray
        CSC arrays of ``X`` (n, n_features).
    row_data, row_indices, row_indptr : ndarray
        CSR arrays of the same ``X``.
    j : int
        Updated column (not the intercept: an intercept step moves every row).
    d : float
        Change of ``w_j``.
    y, z, s : ndarray of shape (n,)
        Targets, margins and derivatives ``l'(z_i, y_i)``; ``z`` and ``s`` are
        updated in place.
    c : ndarray of shape (n_coords,)
        Clipping thresholds.
    G : ndarray of shape (n_coords,)
        Clipped gradient, updated in place.
    code, param : int, float
        Datafit.
    n_features : int
    fit_intercept : bool

    Returns
    -------
    int
        Number of stored entries read in the rows (the work done).

    Examples
    --------
    >>> from scipy.sparse import csc_array
    >>> from dpglm.datafits import SQUARED
    >>> X = csc_array(np.array([[1.0, 2.0], [0.0, 1.0]]))
    >>> R = X.tocsr()
    >>> y, z, s = np.zeros(2), np.zeros(2), np.zeros(2)
    >>> G, c = np.zeros(2), np.full(2, np.inf)
    >>> int(
    ...     patch_clipped_gradient(
    ...         X.data,
    ...         X.indices,
    ...         X.indptr,
    ...         R.data,
    ...         R.indices,
    ...         R.indptr,
    ...         0,
    ...         1.0,
    ...         y,
    ...         z,
    ...         s,
    ...         c,
    ...         G,
    ...         SQUARED,
    ...         0.0,
    ...         2,
    ...         False,
    ...     )
    ... )
    2
    >>> z, G
    (array([1., 0.]), array([0.5, 1. ]))
    """
    n = y.shape[0]
    inv_n = 1.0 / n
    work = 0
    c_int = c[n_features] if fit_intercept else 0.0
    for kk in range(np.uintp(col_indptr[j]), np.uintp(col_indptr[j + 1])):
        i = np.uintp(col_indices[kk])
        z[i] += d * col_data[kk]
        s_new = derivative_value(code, param, z[i], y[i])
        s_old = s[i]
        first = np.uintp(row_indptr[i])
        last = np.uintp(row_indptr[i + 1])
        work += last - first
        if s_new == s_old:
            continue
        for q in range(first, last):
            k = np.uintp(row_indices[q])
            x = row_data[q]
            ck = c[k]
            G[k] += (clip_value(s_new * x, ck) - clip_value(s_old * x, ck)) * inv_n
        if fit_intercept:
            G[n_features] += (clip_value(s_new, c_int) - clip_value(s_old, c_int)) * inv_n
        s[i] = s_new
    return work
