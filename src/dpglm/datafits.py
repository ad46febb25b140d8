"""Per-sample losses on the margin ``z = x . w + b``.

A datafit is the loss ``l(z, y)`` of one record, seen as a function of its margin.
The empirical risk of a linear model is ``(1/n) sum_i l(x_i . w + b, y_i)``. Each
datafit gives, elementwise over arrays of margins and targets:

* ``loss(z, y)`` and its derivative ``derivative(z, y)`` in ``z`` (a subgradient
  for the hinge loss), the quantity that per-sample clipping bounds;
* ``curvature``, an upper bound on ``l''(z)``: the coordinate-wise smoothness
  constants of the empirical risk are ``M_j = curvature * (1/n) sum_i X_ij**2``;
* where a dual exists, the convex conjugate ``conjugate(u, y) = sup_z u z - l(z, y)``
  and ``dual_step``, the coordinate update of dual (SDCA-type) solvers.

The integer ``code`` and scalar ``param`` identify the datafit inside the numba
kernels, which cannot take Python objects.

Examples
--------
>>> import numpy as np
>>> from dpglm.datafits import Logistic
>>> fit = Logistic()
>>> z, y = np.array([0.0, 2.0]), np.array([1.0, -1.0])
>>> np.round(fit.loss(z, y), 4)
array([0.6931, 2.1269])
>>> fit.curvature
0.25
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, xlogy

#: points this close (relative) to the conjugate's domain count as inside it, evaluated at
#: the nearest domain point, so that ``alpha + d`` rounded one ulp outside stays finite
DOMAIN_RTOL = 1e-12

# Codes shared with the numba kernels (dpglm._kernels); keep them stable.
SQUARED = 0
LOGISTIC = 1
HINGE = 2
SQUARED_HINGE = 3
HUBER = 4
MULTINOMIAL = 5


def _into_interval(v, lower, upper):
    """``(clipped v, inside)``: ``inside`` allows a rounding slack of ``DOMAIN_RTOL``."""
    v = np.asarray(v, dtype=float)
    slack_lo = DOMAIN_RTOL * (1.0 + np.abs(lower))
    slack_hi = DOMAIN_RTOL * (1.0 + np.abs(upper))
    inside = (v >= lower - slack_lo) & (v <= upper + slack_hi)
    return np.clip(v, lower, upper), inside


class Datafit:
    """Base class: a per-sample loss ``l(z, y)`` of the margin ``z``.

    Subclasses set the class attributes and implement the elementwise methods.

    Attributes
    ----------
    name : str
        Short name used in reports and error messages.
    code : int
        Identifier of the loss inside the numba kernels.
    binary_labels : bool
        Whether targets must be -1/+1 (classification losses).
    curvature : float
        Upper bound on the second derivative ``l''(z)``; ``inf`` when the loss
        is not smooth.
    n_outputs : int
        Margins per record: 1, or the number of classes of :class:`Multinomial`.
    """

    name = "datafit"
    code = -1
    binary_labels = False
    curvature = np.inf
    n_outputs = 1

    @property
    def param(self) -> float:
        """Scalar parameter passed to the kernels (0 when the loss has none)."""
        return 0.0

    @property
    def smooth(self) -> bool:
        """Whether ``l`` has a Lipschitz derivative (finite ``curvature``)."""
        return bool(np.isfinite(self.curvature))

    @property
    def has_dual(self) -> bool:
        """Whether ``conjugate`` and ``dual_step`` are available."""
        return True

    def loss(self, z, y):
        """Per-sample loss ``l(z_i, y_i)``."""
        raise NotImplementedError

    def derivative(self, z, y):
        """Per-sample derivative ``l'(z_i, y_i)`` in the margin (a subgradient at kinks)."""
        raise NotImplementedError

    def second_derivative(self, z, y):
        """Per-sample ``l''(z_i, y_i)`` (a generalised one where ``l'`` has kinks)."""
        raise NotImplementedError

    def conjugate(self, u, y):
        """Convex conjugate ``l*(u) = sup_z u z - l(z, y)``; ``inf`` outside its domain.

        Points within a relative ``DOMAIN_RTOL`` of the domain are evaluated at
        the nearest domain point (dual updates round).
        """
        raise NotImplementedError

    def dual_step(self, alpha, y, z, s):
        """Dual coordinate update of SDCA-type solvers.

        Returns the step ``d`` that minimises, over ``d``,
        ``l*(-(alpha + d)) + z * d + (s / 2) * d**2`` (exactly, or by one Newton
        step for the logistic loss), elementwise.

        In the notation of DP-SCD (Damaskinos et al. 2021, eq. 8) with ``N``
        records, ``L`` parallel updates and regulariser ``lambda``, ``alpha`` is
        the dual variable, ``z = x . v / (lambda N)`` is the margin of the current
        primal model and ``s = L ||x||**2 / (lambda N)``; the minimiser of (8)
        is this ``d``. At a fixed point ``alpha = -l'(z)``.

        Parameters
        ----------
        alpha, y, z : array_like
            Current dual variables, targets and margins.
        s : float or array_like
            Positive curvature of the quadratic term.

        Returns
        -------
        ndarray
            The update ``d``; ``alpha + d`` lies in the domain of ``l*(-.)``.
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.param == other.param

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.param))


class Squared(Datafit):
    """Least squares: ``l(z, y) = (z - y)**2 / 2``.

    Examples
    --------
    >>> import numpy as np
    >>> Squared().derivative(np.array([3.0]), np.array([1.0]))
    array([2.])
    """

    name = "squared"
    code = SQUARED
    curvature = 1.0

    def loss(self, z, y):
        r = np.asarray(z, dtype=float) - y
        return 0.5 * r * r

    def derivative(self, z, y):
        return np.asarray(z, dtype=float) - y

    def second_derivative(self, z, y):
        return np.ones(np.broadcast(np.asarray(z), np.asarray(y)).shape)

    def conjugate(self, u, y):
        u = np.asarray(u, dtype=float)
        return 0.5 * u * u + u * y

    def dual_step(self, alpha, y, z, s):
        return (y - z - alpha) / (1.0 + s)


class Logistic(Datafit):
    """Logistic loss for labels in {-1, +1}: ``l(z, y) = log(1 + exp(-y z))``.

    Parameters
    ----------
    dual_box : float, default=1e-4
        The one-Newton-step dual update keeps ``y * alpha`` inside
        ``[dual_box, 1 - dual_box]``, where the conjugate's curvature is finite
        (the DP-SCD authors' choice); it only affects ``dual_step``.

    Examples
    --------
    >>> import numpy as np
    >>> Logistic().derivative(np.array([0.0]), np.array([1.0]))
    array([-0.5])
    """

    name = "logistic"
    code = LOGISTIC
    binary_labels = True
    curvature = 0.25

    def __init__(self, dual_box: float = 1e-4):
        if not 0.0 < dual_box < 0.5:
            raise ValueError(f"dual_box must lie in (0, 0.5), got {dual_box!r}")
        self.dual_box = float(dual_box)

    def loss(self, z, y):
        return np.logaddexp(0.0, -y * np.asarray(z, dtype=float))

    def derivative(self, z, y):
        return -y * expit(-y * np.asarray(z, dtype=float))

    def second_derivative(self, z, y):
        p = expit(y * np.asarray(z, dtype=float))
        return p * (1.0 - p)

    def conjugate(self, u, y):
        b, inside = _into_interval(-np.asarray(u, dtype=float) * y, 0.0, 1.0)
        return np.where(inside, xlogy(b, b) + xlogy(1.0 - b, 1.0 - b), np.inf)

    def dual_step(self, alpha, y, z, s):
        lo, hi = self.dual_box, 1.0 - self.dual_box
        start = np.clip(y * np.asarray(alpha, dtype=float), lo, hi)
        # derivative and curvature of d -> l*(-(alpha + d)) + z d + s d^2 / 2 at d = 0
        grad = y * np.log(start / (1.0 - start)) + z
        hess = 1.0 / (start * (1.0 - start)) + s
        new = np.clip(start - y * grad / hess, lo, hi)
        return y * new - alpha

    def __repr__(self) -> str:
        return f"Logistic(dual_box={self.dual_box!r})"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.dual_box == other.dual_box

    def __hash__(self) -> int:
        return hash(("Logistic", self.dual_box))


class Hinge(Datafit):
    """Hinge loss of the linear SVM: ``l(z, y) = max(0, 1 - y z)``.

    Not smooth (``curvature`` is ``inf``); ``derivative`` returns the
    subgradient ``-y`` where ``y z < 1`` and 0 elsewhere (0 at the kink).

    Examples
    --------
    >>> import numpy as np
    >>> Hinge().loss(np.array([0.5, 2.0]), np.array([1.0, 1.0]))
    array([0.5, 0. ])
    """

    name = "hinge"
    code = HINGE
    binary_labels = True
    curvature = np.inf

    def loss(self, z, y):
        return np.maximum(0.0, 1.0 - y * np.asarray(z, dtype=float))

    def derivative(self, z, y):
        yz = y * np.asarray(z, dtype=float)
        return np.where(yz < 1.0, -y * np.ones_like(yz), 0.0)

    def second_derivative(self, z, y):
        return np.zeros(np.broadcast(np.asarray(z), np.asarray(y)).shape)

    def conjugate(self, u, y):
        uy, inside = _into_interval(np.asarray(u, dtype=float) * y, -1.0, 0.0)
        return np.where(inside, uy, np.inf)

    def dual_step(self, alpha, y, z, s):
        alpha = np.asarray(alpha, dtype=float)
        new = np.clip(y * alpha + (1.0 - y * z) / s, 0.0, 1.0)
        return y * new - alpha


class SquaredHinge(Datafit):
    """Squared hinge loss: ``l(z, y) = max(0, 1 - y z)**2``.

    Examples
    --------
    >>> import numpy as np
    >>> SquaredHinge().loss(np.array([0.5]), np.array([1.0]))
    array([0.25])
    """

    name = "squared_hinge"
    code = SQUARED_HINGE
    binary_labels = True
    curvature = 2.0

    def loss(self, z, y):
        m = np.maximum(0.0, 1.0 - y * np.asarray(z, dtype=float))
        return m * m

    def derivative(self, z, y):
        return -2.0 * y * np.maximum(0.0, 1.0 - y * np.asarray(z, dtype=float))

    def second_derivative(self, z, y):
        return np.where(y * np.asarray(z, dtype=float) < 1.0, 2.0, 0.0)

    def conjugate(self, u, y):
        uy, inside = _into_interval(np.asarray(u, dtype=float) * y, -np.inf, 0.0)
        return np.where(inside, uy + 0.25 * uy * uy, np.inf)

    def dual_step(self, alpha, y, z, s):
        alpha = np.asarray(alpha, dtype=float)
        step = (y - z - 0.5 * alpha) / (s + 0.5)
        return y * np.maximum(0.0, y * (alpha + step)) - alpha


class Huber(Datafit):
    """Huber loss of the residual ``r = z - y``.

    ``l = r**2 / 2`` when ``|r| <= delta`` and ``delta * (|r| - delta / 2)``
    otherwise: least squares that grows linearly on outliers, so its derivative
    is bounded by ``delta``.

    Parameters
    ----------
    delta : float, default=1.0
        Threshold between the quadratic and the linear part; must be positive.

    Examples
    --------
    >>> import numpy as np
    >>> Huber(delta=1.0).loss(np.array([3.0]), np.array([0.0]))
    array([2.5])
    """

    name = "huber"
    code = HUBER
    curvature = 1.0

    def __init__(self, delta: float = 1.0):
        if not (np.isfinite(delta) and delta > 0):
            raise ValueError(f"Huber delta must be a positive finite number, got {delta!r}")
        self.delta = float(delta)

    @property
    def param(self) -> float:
        return self.delta

    def loss(self, z, y):
        r = np.abs(np.asarray(z, dtype=float) - y)
        return np.where(r <= self.delta, 0.5 * r * r, self.delta * (r - 0.5 * self.delta))

    def derivative(self, z, y):
        return np.clip(np.asarray(z, dtype=float) - y, -self.delta, self.delta)

    def second_derivative(self, z, y):
        return np.where(np.abs(np.asarray(z, dtype=float) - y) <= self.delta, 1.0, 0.0)

    def conjugate(self, u, y):
        u, inside = _into_interval(u, -self.delta, self.delta)
        return np.where(inside, 0.5 * u * u + u * y, np.inf)

    def dual_step(self, alpha, y, z, s):
        alpha = np.asarray(alpha, dtype=float)
        new = np.clip(alpha + (y - z - alpha) / (1.0 + s), -self.delta, self.delta)
        return new - alpha

    def __repr__(self) -> str:
        return f"Huber(delta={self.delta!r})"


class Multinomial(Datafit):
    """Softmax cross-entropy of ``K`` classes: ``l(z, y) = logsumexp(z) - z_y``.

    The one datafit with a vector margin: a record's margins ``z`` are the
    ``K`` scores ``W x + b`` and its target the class code ``y`` in
    ``{0, ..., K-1}``. ``derivative`` is the residual ``softmax(z) - e_y``,
    so a record's gradient in the ``K x (p + 1)`` coefficients is the outer
    product of the residual with ``(x, 1)``, of Frobenius norm
    ``||softmax(z) - e_y|| ||(x, 1)||`` (at most ``sqrt(2) ||(x, 1)||``):
    clipping it over all ``K`` rows at once costs one sensitivity, whatever
    ``K``. The Hessian in ``z`` is ``diag(s) - s s^T``, of spectral norm at
    most 1/2, the ``curvature``. No dual is implemented.

    Parameters
    ----------
    n_classes : int
        ``K >= 2``.

    Examples
    --------
    >>> import numpy as np
    >>> fit = Multinomial(3)
    >>> z, y = np.array([[0.0, 0.0, 0.0]]), np.array([2.0])
    >>> np.round(fit.loss(z, y), 4), np.round(fit.derivative(z, y), 4)
    (array([1.0986]), array([[ 0.3333,  0.3333, -0.6667]]))
    """

    name = "multinomial"
    code = MULTINOMIAL
    curvature = 0.5

    def __init__(self, n_classes: int):
        if isinstance(n_classes, bool) or not isinstance(n_classes, int | np.integer):
            raise TypeError(f"n_classes must be an int, got {n_classes!r}")
        if n_classes < 2:
            raise ValueError(f"n_classes must be at least 2, got {n_classes!r}")
        self.n_outputs = int(n_classes)

    @property
    def param(self) -> float:
        return float(self.n_outputs)

    @property
    def has_dual(self) -> bool:
        return False

    def _scores(self, z):
        z = np.asarray(z, dtype=float)
        if z.ndim != 2 or z.shape[1] != self.n_outputs:
            raise ValueError(
                f"multinomial margins must have shape (n_samples, {self.n_outputs}), got {z.shape}"
            )
        return z

    def _picked(self, z, y):
        codes = np.asarray(y).astype(np.intp)
        return np.take_along_axis(z, codes[:, None], axis=1)[:, 0], codes

    def loss(self, z, y):
        z = self._scores(z)
        picked, _ = self._picked(z, y)
        top = z.max(axis=1)
        return top + np.log(np.exp(z - top[:, None]).sum(axis=1)) - picked

    def probabilities(self, z):
        """``softmax(z)`` of every record, computed without overflow."""
        z = self._scores(z)
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def derivative(self, z, y):
        residual = self.probabilities(z)
        codes = np.asarray(y).astype(np.intp)
        residual[np.arange(codes.shape[0]), codes] -= 1.0
        return residual

    def second_derivative(self, z, y):
        raise NotImplementedError("the multinomial loss has a K x K Hessian per record")

    def __repr__(self) -> str:
        return f"Multinomial(n_classes={self.n_outputs})"


_BY_NAME = {
    "squared": Squared,
    "logistic": Logistic,
    "hinge": Hinge,
    "squared_hinge": SquaredHinge,
    "huber": Huber,
}


def get_datafit(datafit) -> Datafit:
    """Return a datafit instance from an instance or one of its names.

    Parameters
    ----------
    datafit : Datafit or str
        ``"squared"``, ``"logistic"``, ``"hinge"``, ``"squared_hinge"``,
        ``"huber"``, or an instance (:class:`Multinomial` has no name alone: it
        needs its number of classes).

    Examples
    --------
    >>> get_datafit("logistic")
    Logistic(dual_box=0.0001)
    """
    if isinstance(datafit, Datafit):
        return datafit
    try:
        return _BY_NAME[datafit]()
    except (KeyError, TypeError):
        names = ", ".join(repr(k) for k in _BY_NAME)
        raise ValueError(f"unknown datafit {datafit!r}; expected one of {names}") from None
