"""Privacy curves of dominating pairs: ``delta(epsilon)`` of each mechanism, vectorised.

The hockey-stick divergence of the pair of output distributions that
dominates a mechanism, for the mechanisms the plans hold: the Gaussian, the
Laplace, randomized response (which dominates every pure-DP mechanism), and
the Poisson-subsampled Gaussian under either relation. Each curve is a numpy
expression of a whole array of epsilons, which is what lets
:mod:`dpglm.privacy.pld` build a distribution on a grid in microseconds per
point rather than one Python call per point.

Examples
--------
>>> import numpy as np
>>> from dpglm.privacy.loss_curves import gaussian_curve
>>> round(float(gaussian_curve(1.0).delta(np.array([1.0]))[0]), 6)
0.126937
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtr, ndtri


@dataclass(frozen=True)
class PrivacyCurve:
    """The hockey-stick curve ``delta(epsilon)`` of a dominating pair, and its reach.

    Attributes
    ----------
    delta : callable
        ``delta(epsilons) -> array``, vectorised over a numpy array.
    low, high : float
        The loss lies in ``[low, high]``: ``inf`` when unbounded above; ``-inf``
        when unbounded below only for a symmetric pair (the lower tail mirrors
        the upper one).
    """

    delta: object
    low: float
    high: float


def gaussian_curve(noise_multiplier: float) -> PrivacyCurve:
    """The curve of a Gaussian release with noise multiplier ``z`` (``mu = 1 / z``).

    ``delta(eps) = Phi(-eps / mu + mu / 2) - e**eps Phi(-eps / mu - mu / 2)``
    (Balle and Wang 2018); the pair is symmetric, so one direction covers both.

    Examples
    --------
    >>> round(float(gaussian_curve(1.0).delta(np.array([1.0]))[0]), 6)
    0.126937
    """
    mu = 1.0 / noise_multiplier

    def delta(eps):
        eps = np.asarray(eps, dtype=float)
        log_a = log_ndtr(-eps / mu + mu / 2)
        log_b = eps + log_ndtr(-eps / mu - mu / 2)
        with np.errstate(under="ignore"):
            return np.exp(log_a) * -np.expm1(np.minimum(log_b - log_a, 0.0))

    return PrivacyCurve(delta, -math.inf, math.inf)


def laplace_curve(noise_multiplier: float) -> PrivacyCurve:
    """The curve of a Laplace release with noise multiplier ``b`` (scale over sensitivity).

    With ``a = 1 / b``: ``delta = 1 - e**((eps - a) / 2)`` for ``|eps| <= a``, 0 above.

    Examples
    --------
    >>> float(laplace_curve(1.0).delta(np.array([1.0]))[0])
    0.0
    """
    a = 1.0 / noise_multiplier

    def delta(eps):
        eps = np.clip(np.asarray(eps, dtype=float), -a, a)
        return np.maximum(-np.expm1((eps - a) / 2), 0.0)

    return PrivacyCurve(delta, -a, a)


def randomized_response_curve(epsilon: float) -> PrivacyCurve:
    """The curve of binary randomized response at ``epsilon``, which dominates every
    ``epsilon``-DP mechanism under either relation (Kairouz, Oh and Viswanath 2015).

    ``delta(eps) = (e**epsilon - e**eps) / (1 + e**epsilon)`` for ``|eps| <= epsilon``.

    Examples
    --------
    >>> float(randomized_response_curve(1.0).delta(np.array([1.0]))[0])
    0.0
    """

    def delta(eps):
        eps = np.clip(np.asarray(eps, dtype=float), -epsilon, epsilon)
        # (e^E - e^eps) / (1 + e^E), written to stay accurate for large epsilon
        return np.maximum(-np.expm1(eps - epsilon) / (1.0 + math.exp(-epsilon)), 0.0)

    return PrivacyCurve(delta, -epsilon, epsilon)


def _phi(x):
    return ndtr(x)


def poisson_gaussian_curves(
    noise_multiplier: float, rate: float, neighbouring: str, tail_mass: float = 1e-18
) -> list:
    """The curves of a Poisson-subsampled Gaussian release (one per direction).

    The dominating pairs are dp-accounting's: under ``"replace_one"`` (the
    multiplier relative to the largest change of the sum, twice one record's
    contribution) ``P = (1 - q) N(0, z) + q N(-1/2, z)`` against
    ``Q = (1 - q) N(0, z) + q N(1/2, z)``, a symmetric pair; under
    ``"add_remove"`` the removal pair ``(1 - q) N(0) + q N(-1)`` against
    ``N(0)`` and the addition pair ``N(0)`` against ``(1 - q) N(0) + q N(1)``.
    The loss is decreasing in the outcome ``x``; each curve inverts it in
    closed form and reads ``delta = P(X <= x*) - e**eps Q(X <= x*)``. The
    addition pair's loss is unbounded below: its curve stops at the loss
    below which ``P`` has mass ``tail_mass``, which the grid lifts onto it.

    Examples
    --------
    >>> curves = poisson_gaussian_curves(1.0, 1.0, "replace_one")
    >>> bool(np.isclose(curves[0].delta(np.array([0.5]))[0], gaussian_curve(1.0).delta(0.5)))
    True
    """
    z, q = float(noise_multiplier), float(rate)
    var = z * z
    if neighbouring == "replace_one":
        s = 0.5
        c = math.exp(-s * s / (2 * var))

        def delta(eps):
            eps = np.asarray(eps, dtype=float)
            y = np.exp(eps)
            a = (1 - q) * -np.expm1(eps)  # (1 - q)(1 - y)
            # positive root u = exp(-s x / z^2) of q c u^2 + a u - y q c = 0, without cancellation
            disc = np.sqrt(a * a + 4 * (q * c) ** 2 * y)
            with np.errstate(divide="ignore", invalid="ignore"):
                u = np.where(a > 0, 2 * y * q * c / (a + disc), (disc - a) / (2 * q * c))
                x = -var / s * np.log(u)
            d = a * _phi(x / z) + q * (_phi((x + s) / z) - y * _phi((x - s) / z))
            return np.clip(d, 0.0, 1.0)

        return [PrivacyCurve(delta, -math.inf, math.inf)]
    if neighbouring != "add_remove":
        raise ValueError(f"unknown neighbouring relation {neighbouring!r}")
    log_keep = math.log1p(-q) if q < 1 else -math.inf

    def remove(eps):
        eps = np.asarray(eps, dtype=float)
        y = np.exp(eps)
        with np.errstate(divide="ignore", invalid="ignore"):
            x = -var * np.log((y - (1 - q)) / q) - 0.5
            d = (1 - q) * _phi(x / z) + q * _phi((x + 1) / z) - y * _phi(x / z)
        d = np.where(eps <= log_keep, -np.expm1(eps), d)
        return np.clip(np.nan_to_num(d, nan=0.0), 0.0, 1.0)

    def add(eps):
        eps = np.asarray(eps, dtype=float)
        y = np.exp(eps)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            x = var * np.log((np.exp(-eps) - (1 - q)) / q) + 0.5
            d = _phi(x / z) - y * ((1 - q) * _phi(x / z) + q * _phi((x - 1) / z))
        d = np.where(eps >= -log_keep, 0.0, d)
        return np.clip(np.nan_to_num(d, nan=0.0), 0.0, 1.0)

    # the addition pair: P(L < a) = P(X > x_a) = tail_mass at x_a = z * Phi^-1(1 - tail_mass)
    x_tail = -z * float(ndtri(tail_mass))
    low = -math.log((1 - q) + q * math.exp(min((2 * x_tail - 1) / (2 * var), 700.0)))
    return [PrivacyCurve(remove, log_keep, math.inf), PrivacyCurve(add, low, -log_keep)]
