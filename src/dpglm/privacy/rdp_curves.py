"""Renyi DP curves that dp-accounting does not provide for dpglm's relations.

Two mechanisms need a Renyi divergence that dp-accounting's RDP accountant
either lacks or computes for a relation that is not a worst case:

* **Any pure ``epsilon``-DP mechanism, under either relation.** Binary
  randomized response dominates every ``epsilon``-DP pair of distributions
  (Kairouz, Oh and Viswanath 2015), so every Renyi divergence of such a pair
  is at most randomized response's,

  ``D_a = log((e^(a eps) + e^((1 - a) eps)) / (1 + e^eps)) / (a - 1)``,

  whichever records the two datasets differ in. (dp-accounting's
  ``REPLACE_SPECIAL`` formula compares randomized response to a fixed
  "special" output instead, which is smaller and not a bound for a generic
  mechanism under add/remove neighbours.)
* **The Poisson-subsampled Gaussian under replace-one neighbours.** Each
  record joins the batch with probability ``q`` and contributes at most
  ``Delta / 2`` in L2 norm to the released sum (``Delta``, the replace-one
  sensitivity, is the largest change of the sum); the noise has standard
  deviation ``z Delta``. The pair that dominates it is the one of
  dp-accounting's privacy loss distributions for ``REPLACE_ONE``,
  ``P = (1 - q) N(0, 1) + q N(-a, 1)`` and ``Q = (1 - q) N(0, 1) + q N(a, 1)``
  in units of the noise, with ``a = 1 / (2 z)``. Its divergence
  ``D_a(P || Q) = D_a(Q || P)`` has no closed form; it is computed as
  ``log(1 + I) / (a - 1)`` with
  ``I = int Q ((1 + D)^a - 1 - a D)``, ``D = P / Q - 1`` (the subtracted
  term integrates to 0, and what remains is non-negative and never cancels),
  by the trapezoidal rule on a grid fine against the integrand's unit scale
  and wide enough that the neglected tails are below ``1e-300`` of it. The
  integrand is analytic, so the rule converges geometrically; a test checks
  it against arbitrary-precision quadrature. Orders whose grid would be too
  long (tiny noise and huge orders, never the useful ones) take the bound
  that joint convexity gives instead,
  ``log(1 - q + q exp((a - 1) a / (2 z^2))) / (a - 1)``, which holds at
  every order: the pair is a ``q``-mixture of the unsampled Gaussian pair.

Examples
--------
>>> import numpy as np
>>> from dpglm.privacy.rdp_curves import pure_dp_rdp, poisson_replace_one_rdp
>>> round(float(pure_dp_rdp(1.0, np.array([np.inf]))[0]), 6)
1.0
>>> # without subsampling, the Gaussian's a / (2 z**2)
>>> float(poisson_replace_one_rdp(1.0, 2.0, np.array([3.0]))[0])
0.375
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp

__all__ = ["poisson_replace_one_rdp", "pure_dp_rdp", "wor_gaussian_rdp"]

#: the grid reaches this many noise standard deviations past the integrand's mass
_TAIL_SDS = 40.0
#: grid step in noise standard deviations (and a tenth of the mixture's scale 1 / a)
_STEP = 0.1
#: beyond this many grid points an order gets the closed-form bound instead
_MAX_POINTS = 20_000
#: below this |a D| the Taylor series of (1 + D)^a - 1 - a D is used (no cancellation)
_SERIES_LIMIT = 0.1
_SERIES_TERMS = 30


def pure_dp_rdp(epsilon: float, orders: np.ndarray) -> np.ndarray:
    """Renyi DP of any ``epsilon``-DP mechanism at each order, under either relation.

    Parameters
    ----------
    epsilon : float
        Pure-DP epsilon of one application (``>= 0``, ``inf`` allowed).
    orders : ndarray of float
        Renyi orders ``> 1`` (``inf`` allowed).

    Returns
    -------
    ndarray of float
        The divergence of binary randomized response with parameter ``epsilon``.

    Examples
    --------
    >>> import numpy as np
    >>> np.round(pure_dp_rdp(1.0, np.array([2.0, 10.0])), 4)
    array([0.7353, 0.9652])
    """
    orders = np.asarray(orders, dtype=float)
    if epsilon == 0:
        return np.zeros_like(orders)
    if math.isinf(epsilon):
        return np.full_like(orders, math.inf)
    out = np.empty_like(orders)
    finite = np.isfinite(orders)
    a = orders[finite]
    log_mass = np.logaddexp(a * epsilon, (1.0 - a) * epsilon) - np.logaddexp(0.0, epsilon)
    out[finite] = log_mass / (a - 1.0)
    out[~finite] = epsilon
    return out


def _log_excess(ell: np.ndarray, order: float) -> np.ndarray:
    """``log((1 + d)^order - 1 - order d)`` with ``ell = log(1 + d)`` (``-inf`` where it is 0).

    Taking ``log(1 + d)`` rather than ``d`` keeps every branch finite: ``d``
    itself overflows far in the tail, where only its logarithm matters.
    """
    out = np.empty_like(ell)
    t = order * ell
    big = t > 30.0
    if np.any(big):
        # (1 + d)^order dominates: its log, less the remainder (1 + order d) / (1 + d)^order
        e = ell[big]
        log_d = e + np.log(-np.expm1(-e))
        log_rest = np.logaddexp(0.0, math.log(order) + log_d)
        out[big] = t[big] + np.log1p(-np.exp(log_rest - t[big]))
    d = np.expm1(np.where(big, 0.0, ell))
    small = ~big & (np.abs(order * d) < _SERIES_LIMIT)
    if np.any(small):
        # the Taylor series of (1 + d)^order - 1 - order d: no cancellation for small d
        x = d[small]
        coefficient = order * (order - 1.0) / 2.0
        power = x * x
        total = coefficient * power
        for k in range(2, _SERIES_TERMS):
            coefficient *= (order - k) / (k + 1.0)
            power = power * x
            total = total + coefficient * power
        with np.errstate(divide="ignore"):
            out[small] = np.log(np.maximum(total, 0.0))
    rest = ~big & ~small
    if np.any(rest):
        excess = np.expm1(t[rest]) - order * d[rest]
        with np.errstate(divide="ignore"):
            out[rest] = np.log(np.maximum(excess, 0.0))
    return out


def _grid(q: float, a: float, order: float):
    """Trapezoid nodes covering the integrand's mass, or None when too many are needed."""
    step = min(_STEP, _STEP / a)
    # the mass sits near 0, and for large orders near -order * a, once the shifted
    # component dominates (left of -log(1/q) / a)
    left = -(order * a + math.log(1.0 / q) / a + a + _TAIL_SDS)
    right = a + _TAIL_SDS
    if (right - left) / step > _MAX_POINTS:
        return None
    return np.arange(left, right + step, step), step


def _log_integral(q: float, a: float, x: np.ndarray, step: float, order: float) -> float:
    """``log I`` with ``I = A_order - 1`` for the replace-one pair (see the module docstring)."""
    log_q, log_1mq = math.log(q), math.log1p(-q)
    # P / phi and Q / phi, with phi the standard normal density
    log_p_ratio = np.logaddexp(log_1mq, log_q - a * x - a * a / 2.0)
    log_q_ratio = np.logaddexp(log_1mq, log_q + a * x - a * a / 2.0)
    log_phi = -0.5 * x * x - 0.5 * math.log(2.0 * math.pi)
    log_f = log_phi + log_q_ratio + _log_excess(log_p_ratio - log_q_ratio, order)
    return float(logsumexp(log_f) + math.log(step))


def poisson_replace_one_rdp(q: float, noise_multiplier: float, orders: np.ndarray) -> np.ndarray:
    """Renyi DP of the Poisson-subsampled Gaussian under replace-one neighbours.

    Parameters
    ----------
    q : float
        Sampling rate in ``[0, 1]``.
    noise_multiplier : float
        ``z``: noise standard deviation over the replace-one sensitivity
        ``Delta`` (twice the largest contribution of one record).
    orders : ndarray of float
        Renyi orders ``> 1`` (``inf`` gives ``inf`` unless ``q = 0``).

    Returns
    -------
    ndarray of float

    Examples
    --------
    >>> import numpy as np
    >>> rdp = poisson_replace_one_rdp(0.01, 1.0, np.array([2.0, 8.0, 32.0]))
    >>> bool(np.all(np.diff(rdp) > 0)), bool(rdp[0] < 2.0 / 2.0)
    (True, True)
    """
    orders = np.asarray(orders, dtype=float)
    if q == 0 or math.isinf(noise_multiplier):
        return np.zeros_like(orders)
    if noise_multiplier == 0:
        return np.full_like(orders, math.inf)
    a = 0.5 / noise_multiplier
    if q == 1:
        # no subsampling: a Gaussian of shift 2 a = 1 / z
        return orders / (2.0 * noise_multiplier**2)
    out = np.empty_like(orders)
    for i, order in enumerate(orders):
        if math.isinf(order):
            out[i] = math.inf
            continue
        grid = _grid(q, a, order)
        if grid is None:
            gaussian = order * (order - 1.0) * 2.0 * a * a
            log_mass = np.logaddexp(math.log1p(-q), math.log(q) + gaussian)
        else:
            log_mass = np.logaddexp(0.0, _log_integral(q, a, *grid, order))
        out[i] = log_mass / (order - 1.0)
    return out


#: orders up to this one take the forward-difference bound; larger ones the plain one
_WOR_EXACT_ORDERS = 256


def _signed_log_differences(log_values: np.ndarray, count: int):
    """``log |Delta^(i + 1) f(0)|`` and its sign for ``i < count``, from ``log f(j)``.

    Each pass replaces ``f`` by its forward difference ``f(j + 1) - f(j)``, in
    logarithms with signs, over the whole vector at once.
    """
    logs = log_values.astype(float).copy()
    signs = np.ones(logs.size, dtype=bool)
    out_logs = np.empty(count)
    out_signs = np.empty(count, dtype=bool)
    with np.errstate(all="ignore"):
        for i in range(count):
            a, b = logs[:-1], logs[1:]
            sa, sb = signs[:-1], signs[1:]
            same = sa == sb
            # |b - a| for equal signs, |b| + |a| for opposite ones, from the larger magnitude
            ratio = np.exp(-np.abs(a - b))
            ratio[same] *= -1.0
            logs = np.maximum(a, b) + np.log1p(ratio)
            logs[np.isnan(logs)] = -np.inf  # both zero
            # the difference takes b's sign, flipped when equal signs and |a| > |b|
            signs = sb ^ (same & (a > b))
            out_logs[i], out_signs[i] = logs[0], signs[0]
    return out_logs, out_signs


def wor_gaussian_rdp(q: float, noise_multiplier: float, orders: np.ndarray) -> np.ndarray:
    """Renyi DP of the Gaussian on a batch sampled without replacement (replace-one).

    The bound of Wang, Balle and Kasiviswanathan (2019, Theorem 27), as
    dp-accounting computes it (forward differences of ``exp`` of the
    Gaussian's cumulant up to order 256, the plain bound above, and linear
    interpolation of ``(a - 1) D_a`` between integer orders), computed here for
    all orders at once: the forward differences once for the largest order
    rather than once per order.

    Examples
    --------
    >>> round(float(wor_gaussian_rdp(0.02, 1.0, np.array([2.0]))[0]), 8)
    0.00217226
    """
    orders = np.asarray(orders, dtype=float)
    if q == 0:
        return np.zeros(orders.size)
    sigma = float(noise_multiplier)
    if q == 1.0:
        return orders / (2 * sigma**2)
    finite = orders[np.isfinite(orders)]
    integers = np.unique(np.concatenate([np.floor(finite), np.ceil(finite)])).astype(int)
    exact_top = int(min(integers.max(initial=2), _WOR_EXACT_ORDERS))
    cgf = np.arange(exact_top + 3, dtype=float)
    cgf = cgf * (cgf + 1) / (2 * sigma**2)
    # f(x) = exp(cgf(x)) at x = 0, 1, ...: its forward differences at 0
    deltas, _ = _signed_log_differences(
        np.concatenate([[0.0], cgf[: exact_top + 2]]), exact_top + 2
    )
    log_q = math.log(q)
    f2 = 2.0 / (2 * sigma**2)
    second = min(math.log(4) + f2 + math.log1p(-math.exp(-f2)), f2 + math.log(2))
    log_factorial = gammaln(np.arange(integers.max(initial=2) + 2, dtype=float) + 1)
    i_all = np.arange(3, integers.max(initial=2) + 1)
    plain_all = math.log(2) + (i_all - 1) * i_all / (2 * sigma**2)
    exact_i = i_all[i_all <= exact_top]
    paired = 0.5 * (
        deltas[(2 * np.floor(exact_i / 2.0)).astype(int) - 1]
        + deltas[(2 * np.ceil(exact_i / 2.0)).astype(int) - 1]
    )
    exact_all = plain_all.copy()
    exact_all[: exact_i.size] = np.minimum(math.log(4) + paired, plain_all[: exact_i.size])
    log_a = {}
    for alpha in integers:
        if alpha <= 1:
            log_a[alpha] = 0.0
            continue
        i = i_all[: alpha - 2]
        bound = (exact_all if alpha <= _WOR_EXACT_ORDERS else plain_all)[: alpha - 2]
        choose = log_factorial[alpha] - log_factorial[i] - log_factorial[alpha - i]
        terms = bound + i * log_q + choose
        first = 2 * log_q + log_factorial[alpha] - log_factorial[2] - log_factorial[alpha - 2]
        top = max(0.0, first, float(terms.max(initial=-np.inf)))
        total = math.exp(-top) + math.exp(first + second - top) + float(np.exp(terms - top).sum())
        log_a[alpha] = top + math.log(total)
    out = np.empty(orders.size)
    for k, alpha in enumerate(orders):
        if not math.isfinite(alpha):
            out[k] = math.inf
        elif float(alpha).is_integer():
            out[k] = log_a[int(alpha)] / (alpha - 1) if alpha > 1 else 0.0
        else:
            floor, ceil = math.floor(alpha), math.ceil(alpha)
            t = alpha - floor
            out[k] = ((1 - t) * log_a[floor] + t * log_a[ceil]) / (alpha - 1)
    return out
