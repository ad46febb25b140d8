"""Scalar root finding and minimisation for the accountants, without scipy.optimize.

The accountants solve one-dimensional problems (the epsilon of a delta, the
noise of a target, the order of a conversion) in pure Python floats; importing
scipy.optimize for them would cost a third of a second at start-up, more than
all of dpglm's own modules.

Examples
--------
>>> import math
>>> round(find_root(lambda x: x * x - 2.0, 0.0, 2.0), 12)
1.414213562373
>>> round(minimize_bounded(lambda x: (x - 1.0) ** 2, -3.0, 4.0), 6)
1.0
"""

from __future__ import annotations

import math

_MACHINE_EPSILON = 2.220446049250313e-16
_GOLDEN = (3.0 - math.sqrt(5.0)) / 2.0


def find_root(
    f,
    lo: float,
    hi: float,
    xtol: float = 1e-12,
    rtol: float = 4 * _MACHINE_EPSILON,
    f_lo: float | None = None,
    f_hi: float | None = None,
):
    """A root of ``f`` in ``[lo, hi]``, where ``f(lo)`` and ``f(hi)`` differ in sign.

    Brent's method (inverse quadratic interpolation, secant and bisection
    steps, never slower than bisection), stopped when the bracket is narrower
    than ``xtol + rtol |x|``. ``f_lo`` and ``f_hi``, when known, save two calls.

    Raises
    ------
    ValueError
        If ``f(lo)`` and ``f(hi)`` have the same sign.
    """
    a, b = float(lo), float(hi)
    fa = f(a) if f_lo is None else f_lo
    fb = f(b) if f_hi is None else f_hi
    if fa == 0:
        return a
    if fb == 0:
        return b
    if (fa > 0) == (fb > 0):
        raise ValueError(f"f(lo) = {fa!r} and f(hi) = {fb!r} must differ in sign")
    c, fc = a, fa
    d = e = b - a
    for _ in range(200):
        if (fb > 0) == (fc > 0):
            c, fc = a, fa
            d = e = b - a
        if abs(fc) < abs(fb):
            a, b, c = b, c, b
            fa, fb, fc = fb, fc, fb
        tol = 2 * _MACHINE_EPSILON * abs(b) + 0.5 * (xtol + rtol * abs(b))
        m = 0.5 * (c - b)
        if abs(m) <= tol or fb == 0:
            return b
        if abs(e) >= tol and abs(fa) > abs(fb):
            s = fb / fa
            if a == c:  # secant
                p, q = 2 * m * s, 1 - s
            else:  # inverse quadratic interpolation
                q, r = fa / fc, fb / fc
                p = s * (2 * m * q * (q - r) - (b - a) * (r - 1))
                q = (q - 1) * (r - 1) * (s - 1)
            if p > 0:
                q = -q
            p = abs(p)
            if 2 * p < min(3 * m * q - abs(tol * q), abs(e * q)):
                e, d = d, p / q
            else:
                d = e = m
        else:
            d = e = m
        a, fa = b, fb
        b += d if abs(d) > tol else math.copysign(tol, m)
        fb = f(b)
    return b


def minimize_bounded(f, lo: float, hi: float, xtol: float = 1e-10) -> float:
    """The minimiser of a unimodal ``f`` on ``[lo, hi]`` by golden-section search.

    Returns the best point evaluated, to within ``xtol``.
    """
    a, b = float(lo), float(hi)
    x1 = a + _GOLDEN * (b - a)
    x2 = b - _GOLDEN * (b - a)
    f1, f2 = f(x1), f(x2)
    while b - a > xtol:
        if f1 <= f2:
            b, x2, f2 = x2, x1, f1
            x1 = a + _GOLDEN * (b - a)
            f1 = f(x1)
        else:
            a, x1, f1 = x1, x2, f2
            x2 = b - _GOLDEN * (b - a)
            f2 = f(x2)
    return x1 if f1 <= f2 else x2
