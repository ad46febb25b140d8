"""Per-sample losses and their derivatives inside numba kernels.

A datafit is identified by its integer ``code`` and scalar ``param``
(see :mod:`dpglm.datafits`); the functions here are the numba counterparts of
``Datafit.loss`` and ``Datafit.derivative``. Codes are validated by Python
callers: an unknown code gives NaN.
"""

from __future__ import annotations

import math

import numpy as np

from dpglm._kernels.elementwise import clip_value
from dpglm._kernels.jit import kernel
from dpglm.datafits import HINGE, HUBER, LOGISTIC, SQUARED, SQUARED_HINGE

_LOG2E = 1.4426950408889634
# ln 2 split so that k * _LN2_HI is exact for |k| < 2**11 (Cody and Waite).
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
# Beyond these arguments exp underflows to 0 or overflows to inf; clamping keeps
# the exponent arithmetic below in range.
_EXP_ARG_MAX = 1000.0


# Without "reassoc": reassociation would merge the two halves of ln 2 and lose
# about 7 digits. The function is small enough for LLVM to inline it, so loops
# calling it still vectorise (numba's own exp is a scalar libm call).
@kernel(fastmath={"contract"})
def fast_exp(t):
    """Exponential that LLVM can vectorise inside loops.

    Range reduction ``t = k ln 2 + r`` with ``|r| <= ln 2 / 2``, a degree-13
    Taylor polynomial for ``exp(r)``, and a scaling by ``2**k`` built from the
    exponent bits. The relative error is below ``3e-16`` for normal results;
    subnormal results, 0, ``inf`` and NaN are handled like ``np.exp``.

    Parameters
    ----------
    t : float
        Argument.

    Returns
    -------
    float
        ``exp(t)``.

    Examples
    --------
    >>> import math
    >>> abs(fast_exp(1.0) - math.e) < 1e-15
    True
    >>> float(fast_exp(-1e300)), float(fast_exp(float("-inf")))
    (0.0, 0.0)
    """
    tc = t if t > -_EXP_ARG_MAX else -_EXP_ARG_MAX
    tc = tc if tc < _EXP_ARG_MAX else _EXP_ARG_MAX
    kf = np.floor(tc * _LOG2E + 0.5)
    r = tc - kf * _LN2_HI
    r = r - kf * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    # 2**k as two normal powers of two, so that subnormal and overflowing
    # results are rounded once, by the last product.
    k = np.int64(kf)
    k1 = k >> 1
    k2 = k - k1
    s1 = np.int64((k1 + 1023) << 52).view(np.float64)
    s2 = np.int64((k2 + 1023) << 52).view(np.float64)
    res = p * s1 * s2
    return res if t == t else t


@kernel
def logistic_derivative(z, y):
    """Derivative ``-y / (1 + exp(y z))`` of the logistic loss, overflow-safe.

    Parameters
    ----------
    z, y : float
        Margin and label (``-1`` or ``+1``).

    Returns
    -------
    float
        ``-y * expit(-y z)``; finite for every finite ``z``.

    Examples
    --------
    >>> float(logistic_derivative(0.0, 1.0))
    -0.5
    >>> float(logistic_derivative(-1e300, 1.0)), float(logistic_derivative(1e300, 1.0))
    (-1.0, -0.0)
    """
    yz = y * z
    # exp only of a non-positive number: no overflow, and the expit of a large
    # positive y z keeps its full relative accuracy.
    e = fast_exp(-abs(yz))
    num = e if yz > 0.0 else 1.0
    return -y * num / (1.0 + e)


@kernel
def derivative_value(code, param, z, y):
    """Derivative ``l'(z, y)`` in the margin of the datafit ``code``.

    Parameters
    ----------
    code : int
        Datafit code (``dpglm.datafits.SQUARED``, ``LOGISTIC``, ...).
    param : float
        Datafit parameter (Huber's ``delta``; ignored by the others).
    z, y : float
        Margin and target.

    Returns
    -------
    float
        The derivative (the subgradient of ``Datafit.derivative`` at kinks);
        NaN for an unknown code. Huber's is ``clip_value(z - y, delta)``, 0 for a
        NaN margin.

    Examples
    --------
    >>> from dpglm.datafits import HUBER, SQUARED
    >>> float(derivative_value(SQUARED, 0.0, 3.0, 1.0))
    2.0
    >>> float(derivative_value(HUBER, 1.5, 3.0, 1.0))
    1.5
    """
    if code == SQUARED:
        return z - y
    if code == LOGISTIC:
        return logistic_derivative(z, y)
    if code == HINGE:
        return -y if y * z < 1.0 else 0.0
    if code == SQUARED_HINGE:
        m = 1.0 - y * z
        m = 0.0 if m < 0.0 else m
        return -2.0 * y * m
    if code == HUBER:
        return clip_value(z - y, param)
    return np.nan


@kernel
def loss_value(code, param, z, y):
    """Loss ``l(z, y)`` of the datafit ``code``.

    Parameters
    ----------
    code : int
        Datafit code (``dpglm.datafits.SQUARED``, ``LOGISTIC``, ...).
    param : float
        Datafit parameter (Huber's ``delta``; ignored by the others).
    z, y : float
        Margin and target.

    Returns
    -------
    float
        The loss; NaN for an unknown code.

    Examples
    --------
    >>> from dpglm.datafits import HINGE, LOGISTIC
    >>> round(float(loss_value(LOGISTIC, 0.0, 0.0, 1.0)), 4)
    0.6931
    >>> float(loss_value(HINGE, 0.0, 0.5, 1.0))
    0.5
    """
    if code == SQUARED:
        r = z - y
        return 0.5 * r * r
    if code == LOGISTIC:
        # log(1 + exp(t)) = max(t, 0) + log1p(exp(-|t|)) never overflows.
        t = -y * z
        head = 0.0 if t < 0.0 else t
        return head + math.log1p(math.exp(-abs(t)))
    if code == HINGE:
        m = 1.0 - y * z
        return 0.0 if m < 0.0 else m
    if code == SQUARED_HINGE:
        m = 1.0 - y * z
        m = 0.0 if m < 0.0 else m
        return m * m
    if code == HUBER:
        r = abs(z - y)
        if r <= param:
            return 0.5 * r * r
        return param * (r - 0.5 * param)
    return np.nan


@kernel
def derivatives(code, param, z, y, out):
    """Per-sample derivatives ``out[i] = l'(z[i], y[i])``.

    Parameters
    ----------
    code : int
        Datafit code.
    param : float
        Datafit parameter.
    z, y : ndarray of shape (n,)
        Margins and targets (float64).
    out : ndarray of shape (n,)
        Output, overwritten (may be ``z`` itself).

    Returns
    -------
    ndarray
        ``out``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.datafits import LOGISTIC
    >>> z, y = np.array([0.0, 1e300]), np.array([1.0, -1.0])
    >>> derivatives(LOGISTIC, 0.0, z, y, np.empty(2))
    array([-0.5,  1. ])
    """
    n = z.shape[0]
    # One loop per datafit so that each one is vectorised on its own.
    if code == SQUARED:
        for i in range(n):
            out[i] = z[i] - y[i]
    elif code == LOGISTIC:
        for i in range(n):
            out[i] = logistic_derivative(z[i], y[i])
    elif code == HINGE:
        for i in range(n):
            out[i] = derivative_value(HINGE, param, z[i], y[i])
    elif code == SQUARED_HINGE:
        for i in range(n):
            out[i] = derivative_value(SQUARED_HINGE, param, z[i], y[i])
    elif code == HUBER:
        for i in range(n):
            out[i] = clip_value(z[i] - y[i], param)
    else:
        for i in range(n):
            out[i] = np.nan
    return out
