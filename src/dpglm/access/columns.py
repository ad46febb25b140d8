"""Column statistics of the records: the data behind the smoothness constants ``M_j``.

Both are means over the records of per-record quantities, so a row chunk can
compute its part as a sum and a coordinator add the parts
(:mod:`dpglm.distributed.data_parallel`). They read the raw data and are **not
private**: :mod:`dpglm.solvers.smoothness` decides what may be released.

Examples
--------
>>> import numpy as np
>>> from dpglm.access.columns import clipped_column_mean_squares, column_mean_squares
>>> X = np.array([[3.0, 1.0], [1.0, 1.0]])
>>> column_mean_squares(X), clipped_column_mean_squares(X, np.array([4.0, 4.0]))
(array([5., 1.]), array([2.5, 1. ]))
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["clipped_column_mean_squares", "column_mean_squares"]


def column_mean_squares(X):
    """``(1/n) sum_i X_ij**2`` of every column, dense or sparse (computed from the data).

    Examples
    --------
    >>> column_mean_squares(np.array([[1.0, 0.0], [3.0, 2.0]]))
    array([5., 2.])
    """
    # an extreme entry's square overflows to inf: the mean is then inf, without a warning
    with np.errstate(over="ignore", under="ignore"):
        if sp.issparse(X):
            return np.asarray(X.multiply(X).mean(axis=0)).ravel()
        return np.einsum("ij,ij->j", X, X) / X.shape[0]


def clipped_column_mean_squares(X, ceilings) -> np.ndarray:
    """``(1/n) sum_i min(X_ij**2, ceilings_j)`` per column (each record clipped on its own).

    Examples
    --------
    >>> clipped_column_mean_squares(np.array([[3.0, 1.0], [1.0, 1.0]]), np.array([4.0, 4.0]))
    array([2.5, 1. ])
    """
    n = X.shape[0]
    # an extreme entry's square overflows to inf, which the ceiling clips
    with np.errstate(over="ignore", under="ignore"):
        if sp.issparse(X):
            X = sp.csc_matrix(X)
            cols = np.repeat(np.arange(X.shape[1]), np.diff(X.indptr))
            squares = np.minimum(X.data * X.data, ceilings[cols])
            return np.bincount(cols, weights=squares, minlength=X.shape[1]) / n
        return np.minimum(X * X, ceilings[None, :]).sum(axis=0) / n
