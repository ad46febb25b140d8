"""DP-SGD's steps on the rows of sampled batches (row-major data, many steps per kernel call).

A DP-SGD step gathers the rows of its batch, clips each per-sample gradient
``s_i (x_i, 1)`` (a multinomial record's ``r_i (x_i, 1)^T``, all classes at
once: :mod:`dpglm._kernels.multinomial`) to L2 norm ``C`` and takes a
proximal step with the sum plus the step's noise
(:mod:`dpglm._kernels.stochastic`). :class:`BatchSteps` runs those steps on
the records in this process, as many per call as the caller drew batches and
noise for; a problem hands one out with
:meth:`Problem.batch_steps <dpglm.problem.Problem.batch_steps>`.

Examples
--------
>>> import numpy as np
>>> from dpglm.problem import Problem
>>> prob = Problem(np.array([[1.0], [2.0]]), np.array([1.0, 2.0]), "squared")
>>> theta = np.zeros(1)
>>> penalty = (np.zeros(1), np.zeros(1), np.full(1, -np.inf), np.full(1, np.inf))
>>> steps = BatchSteps(prob, theta, np.inf, 0.0, 0.5, 1.0, penalty)
>>> steps.run(np.array([1]), np.array([1]), np.zeros((1, 1)))  # row 1: gradient -4
>>> theta
array([2.])
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from dpglm import _kernels
from dpglm.clipping import record_norms

__all__ = ["BatchSteps", "sample_norms"]


def sample_norms(X, fit_intercept: bool) -> np.ndarray:
    """``||(x_i, 1)||`` of every row of the row-major ``X`` (the 1 only with an intercept).

    Exact to rounding for every finite record (:func:`~dpglm.clipping.record_norms`):
    the clipping of a per-sample gradient to norm ``C`` is only as good as its norm.

    Examples
    --------
    >>> sample_norms(np.array([[3.0, 4.0], [0.0, 0.0]]), True)
    array([5.09901951, 1.        ])
    """
    return record_norms(X, fit_intercept)


class BatchSteps:
    """Runs DP-SGD steps on the row-major data with the dense or CSR kernel.

    Parameters
    ----------
    problem : Problem
        An in-memory problem (read row-wise: C order or CSR).
    theta : ndarray of shape (n_coords,)
        The iterate, updated in place by :meth:`run`.
    clip : float
        ``C``, the L2 bound of every per-sample gradient (``inf``: no clipping).
    sigma : float
        Standard deviation of the noise on a step's clipped sum (0: none).
    step : float
        Step size.
    inv_b : float
        One over the batch size that divides the noisy sum.
    penalty_arrays : tuple of 4 ndarray of shape (n_coords,)
        ``(l1, l2, lo, hi)`` of every coordinate, for the prox.
    """

    def __init__(self, problem, theta, clip, sigma, step, inv_b, penalty_arrays):
        X = problem.rows
        self.sparse = sp.issparse(X)
        self.data = (X.data, X.indices, X.indptr) if self.sparse else (X,)
        self.y = np.ascontiguousarray(problem.y, dtype=float)
        self.row_norms = sample_norms(X, problem.fit_intercept)
        self.theta = theta
        self.grad = np.empty_like(theta)
        self.settings = (clip, step, inv_b, *penalty_arrays)
        self.sigma = sigma
        if problem.n_outputs > 1:
            # a multinomial record has one score per class (the kernels' scratch)
            self.scratch = (np.empty(problem.n_outputs),)
            width = (problem.n_features,) if self.sparse else ()
            self.tail = (*width, problem.fit_intercept)
            name = "multinomial_steps"
        else:
            self.scratch = ()
            self.tail = (problem.datafit.code, problem.datafit.param, problem.fit_intercept)
            name = "sgd_steps"
        self.kernel_name = f"{name}_{'csr' if self.sparse else 'dense'}"

    def run(self, counts, rows, noise):
        """Step ``t`` takes the next ``counts[t]`` entries of ``rows`` and ``noise[t]``."""
        kernel = getattr(_kernels, self.kernel_name)
        kernel(
            *self.data, self.y, self.row_norms, counts, rows, noise, self.theta, self.grad,
            *self.scratch, self.sigma, *self.settings, *self.tail,
        )  # fmt: skip
