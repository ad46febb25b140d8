"""The number of runs of a repeat-and-select search, and its distributions.

The search runs its base mechanism ``K`` times, ``K`` drawn from a Poisson
distribution or from the truncated negative binomial of Papernot and Steinke
(2022, Definition 1): the distributions that
:class:`~dpglm.privacy.events.RepeatAndSelectEvent` accounts.
"""

from __future__ import annotations

import math

#: largest mean number of runs (the Poisson sampler works in floating point)
MAX_MEAN_REPETITIONS = 500.0


def repetitions_mean(gamma: float, shape: float) -> float:
    """Mean of the truncated negative binomial of the paper's Definition 1.

    ``shape = 0`` is the logarithmic distribution, ``shape = 1`` the geometric.

    Examples
    --------
    >>> repetitions_mean(0.25, 1.0)
    4.0
    >>> round(repetitions_mean(0.1, 2.0), 4)
    18.1818
    """
    if not 0.0 < gamma <= 1.0:
        raise ValueError(f"gamma must lie in (0, 1], got {gamma!r}")
    if gamma == 1.0:
        return 1.0
    if shape == 0.0:
        return (1.0 - gamma) / (gamma * -math.log(gamma))
    if shape == 1.0:
        return 1.0 / gamma
    return shape * (1.0 - gamma) / (gamma * -math.expm1(shape * math.log(gamma)))


def repetitions_gamma(mean: float, shape: float) -> float:
    """The ``gamma`` of the truncated negative binomial of mean at most ``mean``.

    The mean decreases with ``gamma``; this returns a ``gamma`` at least the
    exact one (within ``1e-12`` relative), so the distribution drawn from has
    a mean at most ``mean`` and a ``gamma`` at least dp-accounting's (which
    rounds the other way): the accounted bound holds for it.

    Examples
    --------
    >>> repetitions_gamma(4.0, 1.0)
    0.25
    >>> round(repetitions_mean(repetitions_gamma(10.0, 0.5), 0.5), 9)
    10.0
    """
    if mean <= 1.0:
        return 1.0
    if shape == 1.0:
        return 1.0 / mean
    lo, hi = 0.0, 1.0
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        if repetitions_mean(mid, shape) <= mean:
            hi = mid
        else:
            lo = mid
    return hi


def draw_repetitions(mean: float, shape: float, source) -> int:
    """Draw the number of runs ``K`` of a repeat-and-select search.

    Inverse-CDF sampling from one uniform of ``source`` (a
    :class:`~dpglm.privacy.mechanisms.NoiseSource`): Poisson of mean ``mean``
    when ``shape = inf`` (``K = 0`` possible), else the truncated negative
    binomial of :func:`repetitions_gamma` (``K >= 1``), exactly the
    distributions :class:`~dpglm.privacy.events.RepeatAndSelectEvent` accounts.

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.privacy.mechanisms import make_noise_source
    >>> source = make_noise_source(0)
    >>> draws = [draw_repetitions(5.0, math.inf, source) for _ in range(2000)]
    >>> bool(abs(np.mean(draws) - 5.0) < 0.2)
    True
    >>> min(draw_repetitions(3.0, 1.0, source) for _ in range(200))
    1
    """
    u = float(source.uniform())
    if math.isinf(shape):
        p = math.exp(-mean)
        k, cdf = 0, p
        while u >= cdf and p > 0.0:
            k += 1
            p *= mean / k
            cdf += p
        return k
    gamma = repetitions_gamma(mean, shape)
    if gamma >= 1.0:
        return 1
    if shape == 0.0:
        p = (1.0 - gamma) / -math.log(gamma)
    else:
        p = shape * (1.0 - gamma) / math.expm1(-shape * math.log(gamma))
    k, cdf = 1, p
    # stop when the tail is negligible: only reached when u lies within rounding of 1
    while u >= cdf and p > 0.0 and not (k > mean and p < 1e-18 * gamma):
        p *= (1.0 - gamma) * (k + shape) / (k + 1)
        k += 1
        cdf += p
    return k
