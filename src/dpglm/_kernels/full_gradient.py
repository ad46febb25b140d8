"""Kernels of full-batch gradient descent with a line search (DP-AGD).

One step of DP-AGD scores ``K + 1`` candidate step sizes ``a_k`` along a
direction ``d``, where ``z`` are the current margins and ``u = X d``: the
margins of every candidate are affine in ``a_k``, so one product with ``X``
serves all of them. Two scores:

* the paper's clipped objective ``sum_i min(l(z_i - a_k u_i, y_i), C)``;
* the change of the Huberised objective, ``sum_i h_i(z_i - a_k u_i) - h_i(z_i)``,
  where ``h_i`` is the loss with its slope capped at ``kappa_i``: the loss whose
  gradient is the record's clipped gradient when ``kappa_i = C / ||(x_i, 1)||``.

Each kernel reads each record once and updates the ``K + 1`` sums together,
without forming the ``(K + 1) x n`` array of candidate margins.
"""

from __future__ import annotations

import math

import numpy as np

from dpglm._kernels.elementwise import bounded_loss
from dpglm._kernels.jit import kernel
from dpglm._kernels.losses import loss_value
from dpglm.datafits import HUBER, LOGISTIC, SQUARED, SQUARED_HINGE


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
            out[j] += bounded_loss(loss_value(code, param, zi - steps[j] * ui, yi), clip)
    return out


@kernel
def slope_interval(code, param, y, kappa):
    """The margins ``(lo, hi)`` between which ``|l'(z, y)| <= kappa``, for a smooth datafit.

    ``l'`` is non-decreasing in ``z`` (the loss is convex), so the margins
    where the slope stays within ``kappa`` form an interval; an end the slope
    never reaches is infinite. ``kappa`` is positive.

    Parameters
    ----------
    code : int
        ``SQUARED``, ``LOGISTIC``, ``SQUARED_HINGE`` or ``HUBER``; NaN ends for
        any other code (the Python caller refuses them).
    param : float
        Huber's ``delta``; ignored by the others.
    y : float
        The target (``-1`` or ``+1`` for the classifiers' losses).
    kappa : float
        The largest slope kept, positive (``inf`` keeps the whole loss).

    Returns
    -------
    lo, hi : float

    Examples
    --------
    >>> from dpglm.datafits import LOGISTIC, SQUARED_HINGE
    >>> [round(float(v), 4) for v in slope_interval(LOGISTIC, 0.0, 1.0, 0.25)]
    [1.0986, inf]
    >>> [float(v) for v in slope_interval(SQUARED_HINGE, 0.0, -1.0, 0.5)]
    [-inf, -0.75]
    """
    if code == SQUARED or (code == HUBER and kappa < param):
        return y - kappa, y + kappa
    if code == HUBER:
        return -np.inf, np.inf
    # the classifiers' losses depend on y z alone: |l'| = kappa at y z = t
    if code == LOGISTIC:
        if kappa >= 1.0:  # |l'| < 1 everywhere
            return -np.inf, np.inf
        t = math.log((1.0 - kappa) / kappa)
    elif code == SQUARED_HINGE:
        t = 1.0 - 0.5 * kappa
    else:
        return np.nan, np.nan
    if y > 0.0:
        return t, np.inf
    return -np.inf, -t


@kernel
def huberised_loss(code, param, z, y, lo, hi, kappa):
    """The loss with its slope capped at ``kappa``: ``l`` on ``[lo, hi]``, linear beyond.

    ``(lo, hi)`` is :func:`slope_interval` of ``(y, kappa)``, where the slope
    is ``-kappa`` and ``kappa``: the result is convex, ``kappa``-Lipschitz and
    its derivative is ``clip(l'(z), -kappa, kappa)``.

    Examples
    --------
    >>> from dpglm.datafits import SQUARED
    >>> lo, hi = slope_interval(SQUARED, 0.0, 0.0, 1.0)
    >>> [float(huberised_loss(SQUARED, 0.0, z, 0.0, lo, hi, 1.0)) for z in (0.5, 3.0)]
    [0.125, 2.5]
    """
    if z < lo:
        return loss_value(code, param, lo, y) + kappa * (lo - z)
    if z > hi:
        return loss_value(code, param, hi, y) + kappa * (z - hi)
    return loss_value(code, param, z, y)


@kernel
def add_lipschitz_path(out, values, base, steps, slope):
    """Add one record's changes ``values - base`` to ``out``, built so that they are
    ``slope``-Lipschitz in the step whatever the rounding.

    ``values[j]`` is the record's loss at the ascending, non-negative
    ``steps[j]`` and ``base`` at the step 0. The change at ``steps[j]`` is the
    sum of the increments from 0, each clamped to ``slope`` times its step's
    length: in exact arithmetic the loss is ``slope``-Lipschitz and nothing
    is clamped, while differences of huge losses (margins near the overflow
    threshold) round to garbage of any size, which the clamp bounds. So any
    two candidates' changes differ by at most ``slope |a - b|`` (up to the
    rounding of a sum of bounded terms). A record whose changes are not all
    finite (a loss that overflowed, with no ``slope`` to clamp it) adds
    nothing. Returns whether the record was added.

    Examples
    --------
    >>> import numpy as np
    >>> out = np.zeros(3)
    >>> steps = np.array([0.0, 1.0, 2.0])
    >>> bool(add_lipschitz_path(out, np.array([5.0, 9.0, 4.0]), 5.0, steps, 2.0)), out
    (True, array([0., 2., 0.]))
    >>> bool(add_lipschitz_path(out, np.array([5.0, np.nan, 4.0]), 5.0, steps, 2.0))
    False
    """
    k = steps.shape[0]
    total, previous_value, previous_step = 0.0, base, 0.0
    for j in range(k):
        value = values[j]
        increment = value - previous_value
        if slope < math.inf:
            bound = (steps[j] - previous_step) * slope
            if increment > bound:
                increment = bound
            elif increment < -bound:
                increment = -bound
        total += increment
        values[j] = total  # values now holds the changes
        previous_value, previous_step = value, steps[j]
    for j in range(k):
        t = values[j]
        # not math.isfinite: under the kernels' fast-math flags LLVM may fold it to true for
        # a difference of two infinities; these comparisons are kept
        if not (t == t and abs(t) < math.inf):
            return False
    for j in range(k):
        out[j] += values[j]
    return True


@kernel
def lipschitz_candidate_changes(code, param, z, u, y, steps, kappa, out):
    """``out[k] = sum_i h_i(z_i - steps[k] u_i) - h_i(z_i)``, ``h_i`` capped at ``kappa[i]``.

    Record ``i``'s term moves by at most ``kappa[i] |u_i| |a - b|`` between the
    candidates ``a`` and ``b``: with ``kappa[i] = C / ||(x_i, 1)||`` and a unit
    direction, ``|u_i| <= ||(x_i, 1)||`` and every term is ``C``-Lipschitz in the
    step size, whatever the record; :func:`add_lipschitz_path` keeps it so
    under rounding, and leaves out a record whose changes are not finite.

    Parameters
    ----------
    code : int
        A smooth datafit's code (see :func:`slope_interval`).
    param : float
        The datafit's parameter.
    z, u, y : ndarray of shape (n,)
        Current margins, margins of the direction, targets.
    steps : ndarray of shape (k,)
        Candidate step sizes, ascending and non-negative.
    kappa : ndarray of shape (n,)
        Every record's slope cap, positive or ``inf`` (no cap); a record with
        ``kappa[i] = 0`` (a constant Huberised loss) adds nothing.
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
    >>> kappa = np.array([np.inf, 1.0])  # the second record's slope capped at 1
    >>> steps = np.array([0.0, 1.0, 2.0])
    >>> lipschitz_candidate_changes(SQUARED, 0.0, z, u, y, steps, kappa, np.empty(3))
    array([0. , 3. , 7.5])
    """
    k = steps.shape[0]
    values = np.empty(k)
    for j in range(k):
        out[j] = 0.0
    for i in range(z.shape[0]):
        cap = kappa[i]
        if not cap > 0.0:
            continue
        zi, ui, yi = z[i], u[i], y[i]
        lo, hi = slope_interval(code, param, yi, cap)
        for j in range(k):
            values[j] = huberised_loss(code, param, zi - steps[j] * ui, yi, lo, hi, cap)
        base = huberised_loss(code, param, zi, yi, lo, hi, cap)
        add_lipschitz_path(out, values, base, steps, cap * abs(ui))
    return out
