"""Scalar helpers shared by the kernels: clipping and the elastic-net + box prox.

They are numba functions meant to be called (and inlined by LLVM) inside other
kernels; from Python they work on plain floats too.

The two clipping helpers bound a per-record term for *every* finite record:
the term of an extreme record may overflow (``1e308 * 3`` is ``inf``, and
``inf * 0`` or ``inf - inf`` is NaN), and a clipped sum is only a bounded
function of each record if such a term is clipped too. So ``+-inf`` clips to
``+-c`` and a NaN term contributes nothing (0), never NaN.
"""

from __future__ import annotations

from dpglm._kernels.jit import kernel

_LARGEST = 1.7976931348623157e308  # the largest finite double
#: the smallest normal double; below it a quotient is rounded to a multiple of
#: ``SUBNORMAL_STEP``, possibly up by half of one, which may be most of its value
SMALLEST_NORMAL = 2.2250738585072014e-308
#: the spacing of the subnormal doubles: a correctly rounded subnormal quotient less one
#: step is below the exact quotient
SUBNORMAL_STEP = 5e-324


@kernel
def factor_below(f):
    """``f``, a correctly rounded non-negative quotient, made no larger than the exact one.

    A normal quotient is off by a relative 1.1e-16 at most (rounding); a subnormal
    one by half of :data:`SUBNORMAL_STEP`, which may double it (a clip of 3e-16 over a
    row of norm 1.2e308): one step less is below the exact value.

    Examples
    --------
    >>> factor_below(0.5), factor_below(1e-320) < 1e-320, factor_below(5e-324)
    (0.5, True, 0.0)
    """
    if f >= SMALLEST_NORMAL:
        return f
    return f - SUBNORMAL_STEP if f > SUBNORMAL_STEP else 0.0


@kernel
def bounded_loss(v, c):
    """A per-sample loss kept in ``[0, c]``: ``c`` when it is above (or NaN, a loss whose
    margin overflowed), 0 when rounding took it below (a loss is never negative).

    Examples
    --------
    >>> bounded_loss(5.0, 3.0), bounded_loss(float("nan"), 3.0), bounded_loss(-6.0, 3.0)
    (3.0, 3.0, 0.0)
    """
    # the comparison is false for NaN: it counts as the bound
    v = v if v < c else c
    return v if v > 0.0 else 0.0


@kernel
def clip_value(v, c):
    """Clip ``v`` to ``[-c, c]``; ``+-inf`` gives ``+-c`` and NaN gives 0.

    Parameters
    ----------
    v : float
        Value to clip.
    c : float
        Non-negative bound; ``inf`` means no clipping.

    Returns
    -------
    float
        ``min(max(v, -c), c)``, or 0 for a NaN ``v``: the result lies in
        ``[-c, c]`` whatever ``v`` is.

    Examples
    --------
    >>> float(clip_value(3.0, 2.0)), float(clip_value(-3.0, 2.0))
    (2.0, -2.0)
    >>> float(clip_value(3.0, float("inf")))
    3.0
    >>> float(clip_value(float("-inf"), 2.0)), float(clip_value(float("nan"), 2.0))
    (-2.0, 0.0)
    """
    # Three selects, which LLVM turns into vector min/max and one masked blend: the
    # loops that sum clipped terms still vectorise. Without "nnan" in the kernels'
    # fast-math flags, v == v is kept and is false only for NaN.
    v = -c if v < -c else v
    v = c if v > c else v
    return v if v == v else 0.0


@kernel
def l2_clip_coefficient(s, norm, c):
    """``f`` such that ``f x`` is ``s x`` clipped to L2 norm ``c``, given ``norm = ||x||``.

    The per-sample gradient of a linear model is ``s (x, 1)`` (``s`` the loss's
    derivative): clipping it to norm ``c`` scales ``s`` by
    ``min(1, c / (|s| norm))``. Each entry of ``f x`` is then at most ``c`` in
    absolute value, for every finite ``x`` and every ``s``:

    * a gradient over the bound gets ``+-c / norm`` (0 when ``norm`` overflowed
      to ``inf``), also when ``s`` is infinite;
    * a gradient of NaN norm (a NaN ``s``, or an infinite ``s`` on a row of
      zeros) contributes nothing: ``f = 0``.

    Parameters
    ----------
    s : float
        Derivative of the loss at the record's margin.
    norm : float
        L2 norm of the record's feature vector (with the intercept's 1 when fitted).
    c : float
        Non-negative bound (``inf`` for none).

    Returns
    -------
    float

    Examples
    --------
    >>> float(l2_clip_coefficient(-3.0, 2.0, 1.0)), float(l2_clip_coefficient(0.25, 2.0, 1.0))
    (-0.5, 0.25)
    >>> float(l2_clip_coefficient(float("inf"), 4.0, 1.0))
    0.25
    >>> float(l2_clip_coefficient(float("nan"), 4.0, 1.0))
    0.0
    """
    g = abs(s) * norm
    # The clipped value is +-c / norm: with reassociation allowed, s * (c / g) may
    # become (s * c) / g and underflow. The first test is false for a zero gradient
    # (c >= 0), for c = inf and for NaN; the second only for NaN.
    if g > c:
        # on a subnormal row c / norm may overflow; the largest double still keeps
        # every entry of f x under c, since |x_j| <= norm
        f = c / norm
        f = f if f <= _LARGEST else _LARGEST
        f = factor_below(f)
        return f if s > 0.0 else -f
    return s if g == g else 0.0


@kernel
def soft_threshold(x, t):
    """Soft-thresholding ``sign(x) * max(|x| - t, 0)``, the prox of ``t * |.|``.

    Parameters
    ----------
    x : float
        Point.
    t : float
        Non-negative threshold.

    Returns
    -------
    float
        The shrunk value; NaN when ``x`` is NaN.

    Examples
    --------
    >>> float(soft_threshold(3.0, 1.0)), float(soft_threshold(0.5, 1.0))
    (2.0, 0.0)
    """
    if x > t:
        return x - t
    if x < -t:
        return x + t
    # x * 0.0 is 0 for |x| <= t and NaN for NaN.
    return x * 0.0


@kernel
def prox_elastic_net_box(x, step, l1, l2, lo, hi):
    """Prox of ``step * (l1 |w| + l2 w**2 / 2)`` restricted to ``[lo, hi]``.

    For a separable penalty made of an elastic net and a box constraint (with
    ``lo <= 0 <= hi``) the prox is the soft-thresholded point, shrunk by the ridge
    factor, then projected on the box.

    Parameters
    ----------
    x : float
        Point (a coordinate after its gradient step).
    step : float
        Positive step size.
    l1, l2 : float
        Non-negative L1 and L2 strengths.
    lo, hi : float
        Box bounds, possibly infinite.

    Returns
    -------
    float
        ``min(max(soft_threshold(x, step * l1) / (1 + step * l2), lo), hi)``.

    Examples
    --------
    >>> float(prox_elastic_net_box(3.0, 1.0, 1.0, 1.0, -1.5, 1.5))
    1.0
    >>> float(prox_elastic_net_box(9.0, 1.0, 1.0, 1.0, -1.5, 1.5))
    1.5
    """
    v = soft_threshold(x, step * l1) / (1.0 + step * l2)
    v = lo if v < lo else v
    return hi if v > hi else v
