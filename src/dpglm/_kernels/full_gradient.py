"""Kernels of full-batch gradient descent with a line search (DP-AGD).

One step of DP-AGD scores ``K + 1`` candidate step sizes ``a_k`` along a
direction ``d`` by the clipped objective ``sum_i min(l(z_i - a_k u_i, y_i), C)``,
where ``z`` are the current margins and ``u = X d``: the margins of every
candidate are affine in ``a_k``, so one product with ``X`` serves all of them.
The kernel reads each record once and updates the ``K + 1`` sums together,
without forming the ``(K + 1) x n`` array of candidate margins.
"""

from __future__ import annotations

from dpglm._kernels.jit import kernel
from dpglm._kernels.losses import loss_value


@kernel
def clipped_candidate_losses(code, param, z, u, y, steps, clip, out):
    """``out[k] = sum_i min(l(z_i - steps[k] u_i, y_i), clip)`` for every candidate ``k``.

    Parameters
    ----------
    code : int
        Datafit code (``dpglm.datafits.SQUARED``, ``LOGISTIC``, ...).
    param : float
        Datafit parameter (Huber's ``delta``; ignored by the others).
    z, u, y : ndarray of shape (n,)
        Current margins, margins of the direction, targets.
    steps : ndarray of shape (k,)
        Candidate step sizes.
    clip : float
        Bound of every per-sample loss (``inf`` for none); losses are
        non-negative, so each term lies in ``[0, clip]``.
    out : ndarray of shape (k,)
        Output, overwritten.

    Returns
    -------
    ndarray
        ``out``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.datafits import SQUARED
    >>> z, u, y = np.zeros(2), np.array([1.0, -2.0]), np.array([1.0, 0.0])
    >>> clipped_candidate_losses(SQUARED, 0.0, z, u, y, np.array([0.0, 1.0]), 1.5, np.empty(2))
    array([0.5, 3. ])
    """
    n = z.shape[0]
    k = steps.shape[0]
    for j in range(k):
        out[j] = 0.0
    for i in range(n):
        zi, ui, yi = z[i], u[i], y[i]
        for j in range(k):
            v = loss_value(code, param, zi - steps[j] * ui, yi)
            # a NaN loss counts as the bound too (the comparison is false)
            out[j] += v if v < clip else clip
    return out
