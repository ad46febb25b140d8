"""The columns seen block by block, with the margins shared by all blocks (Frank-Wolfe).

Private Frank-Wolfe (:mod:`dpglm.solvers.dp_fw`) splits the coordinates into
blocks, contiguous after a permutation of the columns. At each iteration it
reads the clipped gradient of the drawn blocks,
``g_j = (1/n) sum_i clip(l'(z_i, y_i) X_ij, C)``, at margins ``z = X theta``
kept up to date by the moves of the iterate: every block scaled at once
(``z *= factor``), one block's share added (``z += factor X_B theta_B``) or one
column (``z += a X_j``). :class:`MarginBlocks` holds those margins next to
the records; a problem hands one out with
:meth:`Problem.margin_blocks <dpglm.problem.Problem.margin_blocks>`.

Examples
--------
>>> import numpy as np
>>> from dpglm.problem import Problem
>>> prob = Problem(np.array([[1.0, 2.0], [3.0, 0.0]]), np.array([1.0, 1.0]), "squared")
>>> blocks = MarginBlocks(prob, np.arange(2), np.array([0, 1, 2]), clip=0.5)
>>> blocks.add_column(0, 1.0)  # theta_0 = 1: z = X[:, 0]
>>> blocks.derivatives()
>>> out = np.empty(1)
>>> blocks.gradient(0, out)  # block 0 is column 0: terms (0, 6) clipped to 0.5
>>> out
array([0.25])
"""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp

from dpglm import _kernels
from dpglm.data.layout import as_layout

__all__ = ["MarginBlocks"]


class MarginBlocks:
    """The data seen block by block, with the margins and derivatives shared by all blocks.

    Parameters
    ----------
    problem : Problem
        An in-memory problem.
    order : ndarray of int of shape (n_features,)
        Permuted column ``k`` is column ``order[k]``.
    bounds : ndarray of int of shape (n_blocks + 1,)
        Block ``b`` is ``bounds[b]:bounds[b + 1]`` of the permuted columns.
    clip : float
        ``C``, the bound of every per-sample gradient entry (``inf``: no clipping).

    Attributes
    ----------
    bounds : ndarray of int of shape (n_blocks + 1,)
        As given.
    z, s : ndarray of shape (n_samples,)
        The margins, and the derivatives at them as of the last :meth:`derivatives`.
    """

    def __init__(self, problem, order, bounds, clip):
        X = problem.X
        if not np.array_equal(order, np.arange(order.size)):
            X = as_layout(X[:, order], "columns")
        self.X = X
        self.sparse = sp.issparse(X)
        self.bounds = bounds
        self.n = problem.n_samples
        self.y = problem.y
        self.code, self.param = problem.datafit.code, problem.datafit.param
        self.clip = np.full(X.shape[1], clip)
        self.z = np.zeros(self.n)
        self.s = np.empty(self.n)
        ranges = list(itertools.pairwise(bounds))
        # views, made once: a block's columns are a slice of X (dense) or of indptr (CSC)
        if self.sparse:
            self.columns = [X.indptr[a : b + 1] for a, b in ranges]
        else:
            self.columns = [X[:, a:b] for a, b in ranges]

    def derivatives(self):
        """``s_i = l'(z_i, y_i)`` at the current margins, for the next gradients."""
        _kernels.derivatives(self.code, self.param, self.z, self.y, self.s)

    def scale_margins(self, factor):
        """``z *= factor``: every block moved towards its vertex (``X theta`` scales)."""
        self.z *= factor

    def gradient(self, b, out):
        """Clipped gradient of block ``b`` at the current margins, written to ``out``."""
        a, e = self.bounds[b], self.bounds[b + 1]
        if self.sparse:
            X = self.X
            _kernels.clipped_gradient_csc(
                X.data, X.indices, self.columns[b], self.n, self.s, self.clip[a:e], out
            )
        else:
            _kernels.clipped_gradient_dense(self.columns[b], self.s, self.clip[a:e], out)

    def add_block(self, a, e, theta, factor):
        """``z += factor * X[:, a:e] theta[a:e]`` (permuted columns)."""
        if self.sparse:
            X = self.X
            _kernels.block_margins_csc(X.data, X.indices, X.indptr, a, e, theta, factor, self.z)
        else:
            _kernels.block_margins_dense(self.X, a, e, theta, factor, self.z)

    def add_column(self, j, a):
        """``z += a * X_j`` (permuted column ``j``)."""
        if self.sparse:
            X = self.X
            _kernels.add_scaled_column_csc(X.data, X.indices, X.indptr, j, a, self.z)
        else:
            _kernels.add_scaled_column_dense(self.X, j, a, self.z)
