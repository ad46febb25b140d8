"""Scalar helpers shared by the kernels: clipping and the elastic-net + box prox.

They are numba functions meant to be called (and inlined by LLVM) inside other
kernels; from Python they work on plain floats too.
"""

from __future__ import annotations

from dpglm._kernels.jit import kernel


@kernel
def clip_value(v, c):
    """Clip ``v`` to ``[-c, c]``; a NaN ``v`` stays NaN.

    Parameters
    ----------
    v : float
        Value to clip.
    c : float
        Non-negative bound; ``inf`` means no clipping.

    Returns
    -------
    float
        ``min(max(v, -c), c)``.

    Examples
    --------
    >>> float(clip_value(3.0, 2.0)), float(clip_value(-3.0, 2.0))
    (2.0, -2.0)
    >>> float(clip_value(3.0, float("inf")))
    3.0
    """
    # Written as two selects that keep v when a comparison is false, so NaN
    # propagates like np.clip and LLVM turns both into vector min/max.
    v = -c if v < -c else v
    return c if v > c else v


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
