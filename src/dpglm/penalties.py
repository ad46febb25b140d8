"""Penalties and constraints on the coefficients.

A penalty ``psi(w)`` is added to the empirical risk. Separable penalties
(``psi(w) = sum_j psi_j(w_j)``) give, elementwise:

* ``value(w)``, the penalty of the whole vector;
* ``prox(x, step)``, the 1-D proximal operator
  ``argmin_u (u - x_j)**2 / 2 + step_j * psi_j(u)`` of each coordinate;
* ``subdiff_distance(w, g)``, the distance ``min_{xi in d psi_j(w_j)} |g_j + xi|``
  of a gradient entry to the subdifferential, which is zero exactly at a
  coordinate-wise optimum (the quantity ranked by the greedy GS-s rule);
* ``prox_params(p)``, the arrays ``(l1, l2, lo, hi)`` that describe the penalty
  to the numba kernels: every separable penalty here is
  ``l1 |u| + l2 u**2 / 2`` restricted to ``[lo, hi]``, whose 1-D prox is
  ``clip(soft_threshold(x, step * l1) / (1 + step * l2), lo, hi)``
  (in one dimension the constrained minimiser of a convex function is the
  projection of the unconstrained one).

The L1-ball constraint is not separable: its ``prox`` is the Euclidean
projection onto the ball, ``coordinate_prox`` moves one coordinate with the
others fixed, and ``lmo`` is the linear minimisation oracle of Frank-Wolfe.

Examples
--------
>>> import numpy as np
>>> from dpglm.penalties import L1
>>> pen = L1(alpha=0.5)
>>> pen.prox(np.array([2.0, -0.2]), 1.0)
array([ 1.5, -0. ])
>>> pen.value(np.array([1.0, -2.0]))
1.5
"""

from __future__ import annotations

import numpy as np


def soft_threshold(x, threshold):
    """Elementwise ``sign(x) * max(|x| - threshold, 0)``.

    Examples
    --------
    >>> soft_threshold(np.array([3.0, -0.5]), 1.0)
    array([ 2., -0.])
    """
    x = np.asarray(x, dtype=float)
    return np.sign(x) * np.maximum(np.abs(x) - threshold, 0.0)


def _check_nonnegative(name: str, value) -> float:
    value = float(value)
    if not (np.isfinite(value) and value >= 0.0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return value


class Penalty:
    """Base class of separable penalties ``psi(w) = sum_j psi_j(w_j)``.

    Attributes
    ----------
    name : str
        Short name used in reports and error messages.
    separable : bool
        Whether ``psi`` is a sum of 1-D functions of the coordinates.
    """

    name = "penalty"
    separable = True

    def value(self, w) -> float:
        """Penalty of the coefficient vector ``w`` (``inf`` when infeasible)."""
        l1, l2, lo, hi = self.prox_params(np.size(w))
        w = np.asarray(w, dtype=float)
        if np.any(w < lo) or np.any(w > hi):
            return np.inf
        return float(np.sum(l1 * np.abs(w)) + 0.5 * np.sum(l2 * w * w))

    def prox(self, x, step):
        """Elementwise 1-D prox of ``step * psi_j`` at ``x``.

        Parameters
        ----------
        x : array_like of shape (p,)
            Points at which to evaluate the prox.
        step : float or array_like of shape (p,)
            Positive step sizes, one per coordinate or shared.
        """
        x = np.asarray(x, dtype=float)
        l1, l2, lo, hi = self.prox_params(x.size)
        return np.clip(soft_threshold(x, step * l1) / (1.0 + step * l2), lo, hi)

    def subdiff_distance(self, w, g):
        """Elementwise ``min_{xi in d psi_j(w_j)} |g_j + xi|``.

        Zero exactly when ``w_j`` minimises ``g_j u + psi_j(u)`` locally, i.e.
        when coordinate ``j`` satisfies its optimality condition.
        """
        w = np.asarray(w, dtype=float)
        g = np.asarray(g, dtype=float)
        l1, l2, lo, hi = self.prox_params(w.size)
        # d psi_j(w_j) = l2 w_j + l1 d|w_j| + normal cone of [lo_j, hi_j]: an interval
        sign = np.sign(w)
        lower = np.where(w == 0.0, -l1, l1 * sign)
        upper = np.where(w == 0.0, l1, l1 * sign)
        return _distance_to_interval(-(g + l2 * w), lower, upper, w <= lo, w >= hi)

    def prox_params(self, p: int):
        """Kernel description ``(l1, l2, lo, hi)``, four float64 arrays of length ``p``."""
        raise NotImplementedError

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(self)))


def _distance_to_interval(v, lower, upper, open_below, open_above):
    """Distance from ``v`` to ``[lower, upper]``, unbounded below/above where flagged."""
    lower = np.where(open_below, -np.inf, lower)
    upper = np.where(open_above, np.inf, upper)
    return np.maximum(np.maximum(lower - v, v - upper), 0.0)


def _constant(p: int, value: float) -> np.ndarray:
    return np.full(p, value, dtype=float)


class NoPenalty(Penalty):
    """No penalty: ``psi = 0``.

    Examples
    --------
    >>> NoPenalty().prox(np.array([1.5]), 2.0)
    array([1.5])
    """

    name = "none"

    def prox_params(self, p):
        return _constant(p, 0.0), _constant(p, 0.0), _constant(p, -np.inf), _constant(p, np.inf)

    def __repr__(self) -> str:
        return "NoPenalty()"


class L2(Penalty):
    """Ridge penalty ``psi(w) = alpha / 2 * ||w||_2**2``.

    Parameters
    ----------
    alpha : float
        Non-negative regularisation strength.

    Examples
    --------
    >>> L2(alpha=1.0).prox(np.array([2.0]), 1.0)
    array([1.])
    """

    name = "l2"

    def __init__(self, alpha: float):
        self.alpha = _check_nonnegative("alpha", alpha)

    def prox_params(self, p):
        return (
            _constant(p, 0.0),
            _constant(p, self.alpha),
            _constant(p, -np.inf),
            _constant(p, np.inf),
        )

    def __repr__(self) -> str:
        return f"L2(alpha={self.alpha!r})"


class L1(Penalty):
    """LASSO penalty ``psi(w) = alpha * ||w||_1``.

    Parameters
    ----------
    alpha : float
        Non-negative regularisation strength.

    Examples
    --------
    >>> L1(alpha=1.0).subdiff_distance(np.array([0.0, 0.0]), np.array([0.5, 3.0]))
    array([0., 2.])
    """

    name = "l1"

    def __init__(self, alpha: float):
        self.alpha = _check_nonnegative("alpha", alpha)

    def prox_params(self, p):
        return (
            _constant(p, self.alpha),
            _constant(p, 0.0),
            _constant(p, -np.inf),
            _constant(p, np.inf),
        )

    def __repr__(self) -> str:
        return f"L1(alpha={self.alpha!r})"


class ElasticNet(Penalty):
    """Elastic net ``alpha * (l1_ratio ||w||_1 + (1 - l1_ratio) / 2 ||w||_2**2)``.

    The parametrisation of scikit-learn's ``ElasticNet``.

    Parameters
    ----------
    alpha : float
        Non-negative overall strength.
    l1_ratio : float
        Share of the L1 term, in ``[0, 1]``.

    Examples
    --------
    >>> ElasticNet(alpha=2.0, l1_ratio=0.5).prox(np.array([3.0]), 1.0)
    array([1.])
    """

    name = "elasticnet"

    def __init__(self, alpha: float, l1_ratio: float = 0.5):
        self.alpha = _check_nonnegative("alpha", alpha)
        l1_ratio = float(l1_ratio)
        if not 0.0 <= l1_ratio <= 1.0:
            raise ValueError(f"l1_ratio must lie in [0, 1], got {l1_ratio!r}")
        self.l1_ratio = l1_ratio

    def prox_params(self, p):
        return (
            _constant(p, self.alpha * self.l1_ratio),
            _constant(p, self.alpha * (1.0 - self.l1_ratio)),
            _constant(p, -np.inf),
            _constant(p, np.inf),
        )

    def __repr__(self) -> str:
        return f"ElasticNet(alpha={self.alpha!r}, l1_ratio={self.l1_ratio!r})"


class Box(Penalty):
    """Box constraint ``lower_j <= w_j <= upper_j`` (``psi`` is 0 inside, ``inf`` outside).

    Parameters
    ----------
    lower, upper : float or array_like of shape (p,)
        Bounds, with ``lower <= upper``; infinite bounds are allowed.

    Examples
    --------
    >>> Box(-1.0, 1.0).prox(np.array([-3.0, 0.5]), 1.0)
    array([-1. ,  0.5])
    """

    name = "box"

    def __init__(self, lower=-np.inf, upper=np.inf):
        lower = np.asarray(lower, dtype=float)
        upper = np.asarray(upper, dtype=float)
        if np.any(np.isnan(lower)) or np.any(np.isnan(upper)):
            raise ValueError("Box bounds must not be NaN")
        if np.any(lower > upper):
            j = int(np.argmax(np.broadcast_to(lower > upper, np.broadcast(lower, upper).shape)))
            raise ValueError(f"Box bounds need lower <= upper; coordinate {j} violates it")
        self.lower = lower
        self.upper = upper

    def prox_params(self, p):
        try:
            lo = np.broadcast_to(self.lower, (p,)).astype(float)
            hi = np.broadcast_to(self.upper, (p,)).astype(float)
        except ValueError:
            raise ValueError(
                f"Box bounds have shape {self.lower.shape} / {self.upper.shape}; "
                f"expected scalars or arrays of length {p}"
            ) from None
        return _constant(p, 0.0), _constant(p, 0.0), lo, hi

    def __eq__(self, other) -> bool:
        return (
            type(other) is Box
            and np.array_equal(self.lower, other.lower)
            and np.array_equal(self.upper, other.upper)
        )

    def __hash__(self) -> int:
        return hash(("Box", self.lower.tobytes(), self.upper.tobytes()))

    def __repr__(self) -> str:
        return f"Box(lower={self.lower.tolist()!r}, upper={self.upper.tolist()!r})"


class L1Ball(Penalty):
    """Constraint ``||w||_1 <= radius`` (the domain of private Frank-Wolfe).

    Not separable. ``prox`` is the Euclidean projection onto the ball (the prox
    of an indicator does not depend on the step); ``coordinate_prox`` and
    ``subdiff_distance`` treat one coordinate at a time with the others fixed,
    so coordinate ``j`` lives in ``[-b_j, b_j]`` with
    ``b_j = radius - sum_{k != j} |w_k|``.

    Parameters
    ----------
    radius : float
        Positive radius of the ball.

    Examples
    --------
    >>> ball = L1Ball(radius=1.0)
    >>> ball.prox(np.array([2.0, 0.0]), 1.0)
    array([1., 0.])
    >>> ball.lmo(np.array([0.5, -2.0]))
    (1, 1.0)
    """

    name = "l1ball"
    separable = False

    #: relative slack allowed on ``||w||_1 <= radius`` before ``value`` says infeasible,
    #: so that convex combinations of vertices computed in floating point count as inside
    FEASIBILITY_RTOL = 1e-12

    def __init__(self, radius: float):
        radius = float(radius)
        if not (np.isfinite(radius) and radius > 0.0):
            raise ValueError(f"L1Ball radius must be a positive finite number, got {radius!r}")
        self.radius = radius

    def value(self, w) -> float:
        inside = np.sum(np.abs(w)) <= self.radius * (1.0 + self.FEASIBILITY_RTOL)
        return 0.0 if inside else np.inf

    def prox(self, x, step=None):
        """Euclidean projection of ``x`` onto the ball (``step`` is ignored)."""
        x = np.asarray(x, dtype=float)
        a = np.abs(x)
        if a.sum() <= self.radius:
            return x.copy()
        # sort-based projection onto the simplex of the absolute values
        u = np.sort(a)[::-1]
        cumulative = np.cumsum(u) - self.radius
        k = np.arange(1, u.size + 1)
        rho = np.nonzero(u * k > cumulative)[0][-1]
        theta = cumulative[rho] / (rho + 1.0)
        return np.sign(x) * np.maximum(a - theta, 0.0)

    def _coordinate_bounds(self, w):
        a = np.abs(np.asarray(w, dtype=float))
        return np.maximum(self.radius - (a.sum() - a), 0.0)

    def coordinate_prox(self, w, j: int, x: float) -> float:
        """Best feasible value of coordinate ``j`` near ``x`` with the others fixed."""
        b = self._coordinate_bounds(w)[j]
        return float(np.clip(x, -b, b))

    def subdiff_distance(self, w, g):
        w = np.asarray(w, dtype=float)
        g = np.asarray(g, dtype=float)
        b = self._coordinate_bounds(w)
        # rounding is at the scale of the radius, not of the (possibly tiny) b_j
        tight = np.abs(w) >= b - self.FEASIBILITY_RTOL * self.radius
        zero = np.zeros_like(w)
        return _distance_to_interval(-g, zero, zero, tight & (w <= 0), tight & (w >= 0))

    def lmo(self, g):
        """Vertex ``value * e_j`` of the ball minimising ``<g, s>``.

        Returns
        -------
        j : int
            Index of the largest ``|g_j|`` (the first one on ties).
        value : float
            ``-radius * sign(g_j)`` (``+radius`` when ``g`` is zero).
        """
        g = np.asarray(g, dtype=float)
        j = int(np.argmax(np.abs(g)))
        return j, (-self.radius if g[j] > 0 else self.radius)

    def prox_params(self, p):
        raise TypeError("the L1-ball constraint is not separable; it has no kernel description")

    def __repr__(self) -> str:
        return f"L1Ball(radius={self.radius!r})"


def get_penalty(penalty="none", alpha: float = 0.0, l1_ratio: float = 0.5) -> Penalty:
    """Return a penalty from an instance or a scikit-learn-style name.

    Parameters
    ----------
    penalty : Penalty or {"none", "l2", "l1", "elasticnet"}
        The penalty or its name (``None`` means ``"none"``).
    alpha, l1_ratio : float
        Strength and L1 share, used when ``penalty`` is a name.

    Examples
    --------
    >>> get_penalty("elasticnet", alpha=0.1, l1_ratio=0.3)
    ElasticNet(alpha=0.1, l1_ratio=0.3)
    """
    if isinstance(penalty, Penalty):
        return penalty
    if penalty is None or penalty == "none":
        return NoPenalty()
    if penalty == "l2":
        return L2(alpha)
    if penalty == "l1":
        return L1(alpha)
    if penalty == "elasticnet":
        return ElasticNet(alpha, l1_ratio)
    raise ValueError(
        f"unknown penalty {penalty!r}; expected 'none', 'l2', 'l1', 'elasticnet' or a Penalty"
    )
