"""What the coordinate solvers (DP-CD, DP-GCD) share: their problems and per-coordinate steps.

They fit smooth datafits with separable penalties (:func:`check_coordinate_problem`).

Given the smoothness constants ``M_j``, a step-size factor ``gamma`` and one
clipping threshold ``C``, a coordinate solver uses

* step sizes ``gamma / M_j`` (0 for a coordinate with ``M_j = 0``, a column of
  zeros, which then never moves);
* clipping thresholds ``C_j = C sqrt(M_j / tr M)`` (Mangold et al. 2022), so
  that replacing one record moves partial derivative ``j`` of the clipped
  gradient by at most ``2 C_j / n``;
* the penalty's kernel description ``(l1, l2, lo, hi)``, with the intercept
  (last coordinate, when fitted) unpenalised.

Examples
--------
>>> import numpy as np
>>> from dpglm.solvers.coordinate_steps import coordinate_arrays
>>> arrays = coordinate_arrays(np.array([1.0, 3.0, 0.0]), step=0.5, clip=2.0)
>>> arrays.step, arrays.clip
(array([0.5       , 0.16666667, 0.        ]), array([1.        , 1.73205081, 0.        ]))
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def check_coordinate_problem(problem, solver: str) -> None:
    """Refuse problems a coordinate solver cannot handle, saying what to use instead."""
    if not math.isfinite(problem.datafit.curvature):
        raise ValueError(
            f"{solver} needs a smooth loss; the {problem.datafit.name} loss has no "
            "coordinate-wise smoothness constant (use 'squared_hinge', or DP-SGD for the "
            "hinge loss)"
        )
    if not problem.penalty.separable:
        raise ValueError(
            f"{solver} needs a separable penalty; {problem.penalty!r} is not (private "
            "Frank-Wolfe handles the L1-ball constraint)"
        )


@dataclass(frozen=True)
class CoordinateArrays:
    """Step sizes, clipping thresholds and penalty description, one entry per coordinate."""

    smoothness: np.ndarray
    step: np.ndarray
    clip: np.ndarray
    l1: np.ndarray
    l2: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    @property
    def kernel_args(self) -> tuple:
        """``(step, clip, l1, l2, lo, hi)`` in the order the kernels take them."""
        return (self.step, self.clip, self.l1, self.l2, self.lo, self.hi)


def coordinate_arrays(smoothness, *, step: float, clip: float, penalty=None, n_features=None):
    """Build the :class:`CoordinateArrays` of a fit.

    Parameters
    ----------
    smoothness : ndarray of shape (n_coords,)
        ``M_j``, intercept last when fitted.
    step : float
        ``gamma``; coordinate ``j`` moves by ``gamma / M_j`` times its noisy
        partial derivative.
    clip : float
        ``C`` (``inf``: no clipping).
    penalty : Penalty, optional
        Separable penalty on the first ``n_features`` coordinates.
    n_features : int, optional
        Number of coefficients; the coordinates after them (the intercept)
        are unpenalised. Defaults to all coordinates.
    """
    M = np.asarray(smoothness, dtype=float)
    n_coords = M.shape[0]
    p = n_coords if n_features is None else n_features
    total = M.sum()
    if not total > 0:
        raise ValueError(
            "every coordinate has smoothness 0 (all columns are zero): there is nothing to fit"
        )
    moving = M > 0
    steps = np.zeros(n_coords)
    steps[moving] = step / M[moving]
    # an extreme record may overflow M_j computed from the data (a leak mode): the
    # infinite coordinates then share the clipping budget and, with step 0, never move
    infinite = np.isinf(M)
    share = infinite / np.count_nonzero(infinite) if math.isinf(total) else M / total
    clips = np.full(n_coords, math.inf) if math.isinf(clip) else clip * np.sqrt(share)
    l1, l2 = np.zeros(n_coords), np.zeros(n_coords)
    lo, hi = np.full(n_coords, -math.inf), np.full(n_coords, math.inf)
    if penalty is not None:
        l1[:p], l2[:p], lo[:p], hi[:p] = penalty.prox_params(p)
    return CoordinateArrays(M, steps, clips, l1, l2, lo, hi)
