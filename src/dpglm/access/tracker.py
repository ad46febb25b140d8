"""The coordinate-wise clipped gradient, kept up to date as coordinates move (DP-GCD).

A greedy coordinate step compares every coordinate's clipped partial
derivative ``g_j = (1/n) sum_i clip(l'(z_i, y_i) X_ij, C_j)`` and then moves
one coordinate. :class:`ClippedGradientTracker` keeps the margins
``z = X theta`` and ``g`` of the records in this process from one step to the
next: on dense data a move adds one column to the margins and recomputes
``g``; on sparse data it patches ``g`` from the rows the moved column
touches, and recomputes it in full once the patches have read as many
entries as one pass (which bounds the rounding drift).

A problem hands one out with
:meth:`Problem.clipped_gradient_tracker <dpglm.problem.Problem.clipped_gradient_tracker>`;
a :class:`~dpglm.distributed.data_parallel.ShardedProblem` hands out one with
the same two methods whose margins stay on its row chunks.

Examples
--------
>>> import numpy as np
>>> from dpglm.problem import Problem
>>> prob = Problem(np.array([[1.0, 2.0], [3.0, 0.0]]), np.array([1.0, 1.0]), "squared")
>>> tracker = ClippedGradientTracker(prob, np.array([0.5, 0.5]))
>>> tracker.gradient(0)  # each term -y_i X_ij clipped to [-0.5, 0.5]
array([-0.5 , -0.25])
>>> tracker.move(0, 1.0)  # theta_0 += 1: the margins become X[:, 0]
>>> tracker.gradient(1)
array([0.25, 0.  ])
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from dpglm import _kernels
from dpglm.clipping import clip_terms

__all__ = ["ClippedGradientTracker"]


class ClippedGradientTracker:
    """The clipped gradient at the current iterate, kept up to date step after step.

    Parameters
    ----------
    problem : Problem
        An in-memory problem; the iterate starts at ``theta = 0``.
    clip : ndarray of shape (n_coords,)
        The thresholds ``C_j``.

    Attributes
    ----------
    G : ndarray of shape (n_coords,)
        The clipped gradient at the current iterate.
    z, s : ndarray of shape (n_samples,)
        The margins and the per-sample derivatives at the current iterate.
    work : int
        Entries read by the sparse patches since the last full recomputation.
    """

    def __init__(self, problem, clip):
        self.problem = problem
        self.clip = clip
        self.n = problem.n_samples
        self.p = problem.n_features
        self.sparse = sp.issparse(problem.X)
        self.z = np.zeros(self.n)
        self.s = np.empty(self.n)
        self.G = np.empty(problem.n_coords)
        if self.sparse:
            X = problem.X
            self.rows = X.tocsr()
            self.nnz = X.nnz
        self.work = 0
        self.refresh()

    def gradient(self, t: int):
        """The clipped gradient at the start of step ``t`` (kept up to date by :meth:`move`)."""
        return self.G

    def refresh(self):
        """Recompute derivatives and the clipped gradient from the margins."""
        prob = self.problem
        _kernels.derivatives(prob.datafit.code, prob.datafit.param, self.z, prob.y, self.s)
        head = self.G[: self.p]
        if self.sparse:
            X = prob.X
            _kernels.clipped_gradient_csc(
                X.data, X.indices, X.indptr, self.n, self.s, self.clip[: self.p], head
            )
        else:
            _kernels.clipped_gradient_dense(prob.X, self.s, self.clip[: self.p], head)
        if prob.fit_intercept:
            c = self.clip[self.p]
            self.G[self.p] = np.mean(clip_terms(self.s, c))
        self.work = 0

    def move(self, j: int, d: float):
        """Coordinate ``j`` moved by ``d``: update margins and the clipped gradient."""
        prob = self.problem
        if j == self.p:
            self.z += d
            self.refresh()
        elif self.sparse:
            X, R = prob.X, self.rows
            self.work += _kernels.patch_clipped_gradient(
                X.data, X.indices, X.indptr, R.data, R.indices, R.indptr,
                j, d, prob.y, self.z, self.s, self.clip, self.G,
                prob.datafit.code, prob.datafit.param, self.p, prob.fit_intercept,
            )  # fmt: skip
            if self.work >= self.nnz:
                self.refresh()
        else:
            _kernels.add_scaled_column_dense(prob.X, j, d, self.z)
            self.refresh()
