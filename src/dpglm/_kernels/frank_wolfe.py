"""Kernels of private Frank-Wolfe on L1 balls (centralized and block-coordinate).

A block is a contiguous range ``[start, stop)`` of columns constrained to the
L1 ball of radius ``r``; its vertices are ``+r e_j`` and ``-r e_j``. Candidate
``2 (j - start)`` is ``+r e_j`` and candidate ``2 (j - start) + 1`` is ``-r e_j``,
so that without noise the first maximiser is the vertex of the first largest
``|g_j|``, as in :meth:`dpglm.penalties.L1Ball.lmo`.

A Frank-Wolfe step towards vertex ``v e_j`` with step size ``gamma`` sets the
block to ``(1 - gamma) theta_block + gamma v e_j``; the margins ``z = X theta``
move by ``X_block (theta_new - theta_old)``, read from the block's columns
where ``theta`` is non-zero and from column ``j``.
"""

from __future__ import annotations

import numpy as np

from dpglm._kernels.jit import kernel


@kernel
def noisy_vertex(g, radius, noise, scale):
    """Report-noisy-max over the vertices ``+-radius e_j`` of scores ``-<g, s>``.

    Parameters
    ----------
    g : ndarray of shape (k,)
        (Clipped) gradient of the block.
    radius : float
        Radius of the block's L1 ball.
    noise : ndarray of shape (2 k,)
        Standard draws (Gumbel for the exponential mechanism, Laplace for the
        classic report-noisy-max), ``noise[2 j]`` for ``+radius e_j`` and
        ``noise[2 j + 1]`` for ``-radius e_j``.
    scale : float
        Noise scale; 0 is the exact linear minimisation oracle.

    Returns
    -------
    int
        The chosen candidate ``c``: vertex ``+radius e_{c // 2}`` for even
        ``c``, ``-radius e_{c // 2}`` for odd ``c``.

    Examples
    --------
    >>> int(noisy_vertex(np.array([0.5, -2.0]), 1.0, np.zeros(4), 0.0))
    2
    >>> int(noisy_vertex(np.array([0.5, -2.0]), 1.0, np.array([9.0, 0, 0, 0]), 1.0))
    0
    """
    best = -np.inf
    chosen = 0
    for j in range(g.shape[0]):
        score = radius * g[j]
        plus = -score + scale * noise[2 * j]
        if plus > best:
            best = plus
            chosen = 2 * j
        minus = score + scale * noise[2 * j + 1]
        if minus > best:
            best = minus
            chosen = 2 * j + 1
    return chosen


@kernel
def block_margins_dense(X, start, stop, theta, a, z):
    """``z += a * X[:, start:stop] @ theta[start:stop]``, reading the non-zero ``theta`` only.

    Examples
    --------
    >>> X = np.asfortranarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> z = np.zeros(2)
    >>> block_margins_dense(X, 1, 3, np.array([9.0, 1.0, 0.0]), 2.0, z)
    >>> z
    array([ 4., 10.])
    """
    n = X.shape[0]
    for k in range(start, stop):
        coef = a * theta[k]
        if coef != 0.0:
            for i in range(n):
                z[i] += coef * X[i, k]


@kernel
def block_margins_csc(data, indices, indptr, start, stop, theta, a, z):
    """``z += a * X[:, start:stop] @ theta[start:stop]`` for CSC ``X``.

    Examples
    --------
    >>> from scipy.sparse import csc_array
    >>> X = csc_array(np.array([[1.0, 2.0, 3.0], [0.0, 5.0, 0.0]]))
    >>> z = np.zeros(2)
    >>> block_margins_csc(X.data, X.indices, X.indptr, 1, 3, np.array([9.0, 1.0, 1.0]), 2.0, z)
    >>> z
    array([10., 10.])
    """
    for k in range(start, stop):
        coef = a * theta[k]
        if coef != 0.0:
            for q in range(np.uintp(indptr[k]), np.uintp(indptr[k + 1])):
                z[np.uintp(indices[q])] += coef * data[q]
