"""From raw records to the solver's scale, and from the solver's model back to raw units.

A :class:`Scaling` holds, for every feature, a range ``[low_j, high_j]``
(public, or released by :mod:`dpglm.preprocessing.ranges`), a centre ``c_j``
and a half-width ``h_j``; a regression's target has its own. A record is
clipped to the ranges (a per-record operation: the bounds then hold for every
record, an extreme one included) and mapped to

    z_j = (clip(x_j, low_j, high_j) - c_j) / h_j,   t = (clip(y, low, high) - c) / h,

so that ``|z_j| <= 1`` and ``|t| <= 1``: the solvers train with feature bounds
1 and a target in ``[-1, 1]``. Dense features are centred (``c_j`` the middle
of the range); sparse features keep their zeros (``c_j = 0``, ``h_j`` the
largest magnitude of the range, which is widened to contain 0). A model
``t ~ z w + b`` on that scale is, on the raw one,

    y ~ clip(x) coef + intercept,   coef_j = h w_j / h_j,
    intercept = c + h (b - sum_j w_j c_j / h_j),

the same predictions: :meth:`Scaling.raw_model` and :meth:`Scaling.scaled_model`
go from one to the other. A column whose range is a single value carries no
information once clipped: its ``z_j`` is 0 and its coefficient 0.

Examples
--------
>>> import numpy as np
>>> scaling = Scaling.from_ranges([0.0, -2.0], [10.0, 2.0], target=(100.0, 300.0))
>>> scaling.transform(np.array([[5.0, 4.0], [20.0, -1.0]]))
array([[ 0. ,  1. ],
       [ 1. , -0.5]])
>>> coef, intercept = scaling.raw_model(np.array([0.5, 1.0]), 0.0)
>>> coef, intercept
(array([10., 50.]), 150.0)
>>> scaling.scaled_model(coef, intercept)
(array([0.5, 1. ]), 0.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["Scaling"]


def _centre_and_scale(low, high, centred):
    if centred:
        return (low + high) / 2.0, (high - low) / 2.0
    return np.zeros_like(low), np.maximum(np.abs(low), np.abs(high))


@dataclass(frozen=True)
class Scaling:
    """Clip to ranges, centre and scale; for the features and a regression's target.

    Attributes
    ----------
    low, high : ndarray of shape (p,)
        The features' ranges (``low <= high``; for sparse data ``low <= 0 <= high``).
    centred : bool
        Dense data: centred on the middle of each range; sparse: not centred.
    target_low, target_high : float or None
        The target's range; None for a classifier (its -1/+1 codes stay as they are).
    target_centred : bool
        Whether the target is centred on the middle of its range; a model
        without intercept is fitted on an uncentred target (scaled by its
        largest magnitude), so that it stays a model through the origin.
    """

    low: np.ndarray
    high: np.ndarray
    centred: bool = True
    target_low: float | None = None
    target_high: float | None = None
    target_centred: bool = True

    @classmethod
    def from_ranges(
        cls, low, high, *, centred: bool = True, target=None, target_centred: bool = True
    ) -> Scaling:
        """A scaling from the features' ranges and, for a regression, the target's.

        Parameters
        ----------
        low, high : array_like of shape (p,)
            Finite, ``low <= high``.
        centred : bool, default=True
            False for sparse data: the ranges are widened to contain 0 and the
            features only scaled, so that their zeros stay zeros.
        target : (float, float), optional
            The target's ``(low, high)``.
        target_centred : bool, default=True
            False: the target is only scaled (by its range's largest
            magnitude), as for a model without intercept.

        Examples
        --------
        >>> Scaling.from_ranges([1.0], [3.0], centred=False).low
        array([0.])
        """
        low = np.array(low, dtype=float, ndmin=1)
        high = np.array(high, dtype=float, ndmin=1)
        if low.shape != high.shape or not (np.isfinite(low).all() and np.isfinite(high).all()):
            raise ValueError("feature ranges must be finite (low, high) pairs, one per feature")
        if (low > high).any():
            j = int(np.flatnonzero(low > high)[0])
            raise ValueError(
                f"feature {j} has low {float(low[j])!r} above high {float(high[j])!r}: give "
                "(low, high)"
            )
        if not centred:
            low, high = np.minimum(low, 0.0), np.maximum(high, 0.0)
        target_low = target_high = None
        if target is not None:
            target_low, target_high = (float(v) for v in target)
        return cls(low, high, bool(centred), target_low, target_high, bool(target_centred))

    @property
    def n_features(self) -> int:
        return self.low.size

    @property
    def centre(self) -> np.ndarray:
        """``c_j``."""
        return _centre_and_scale(self.low, self.high, self.centred)[0]

    @property
    def scale(self) -> np.ndarray:
        """``h_j`` (0 for a column whose range is a single value)."""
        return _centre_and_scale(self.low, self.high, self.centred)[1]

    @property
    def target_centre(self) -> float:
        """``c``: 0 for a classifier or an uncentred target."""
        if self.target_low is None or not self.target_centred:
            return 0.0
        return (self.target_low + self.target_high) / 2.0

    @property
    def target_scale(self) -> float:
        """``h``: 1 for a classifier; 0 for a target range of a single value (or of 0 alone)."""
        if self.target_low is None:
            return 1.0
        if not self.target_centred:
            return max(abs(self.target_low), abs(self.target_high))
        return (self.target_high - self.target_low) / 2.0

    def _divisor(self):
        # a column of zero width is constant once clipped: z = 0 whatever the divisor
        scale = self.scale
        return np.where(scale > 0, scale, 1.0)

    def clip(self, X):
        """``X`` with every entry clipped to its column's range (a copy; sparse stays sparse)."""
        if sp.issparse(X):
            X = sp.csr_array(X, dtype=float, copy=True)
            # the ranges contain 0 for sparse data, so implicit zeros need no clipping
            columns = X.indices
            X.data = np.clip(X.data, self.low[columns], self.high[columns])
            return X
        return np.clip(np.asarray(X, dtype=float), self.low, self.high)

    def nonnegative(self) -> np.ndarray:
        """Whether each column of :meth:`transform`'s output is non-negative for every record.

        A public fact of the ranges (released or given): a column is clipped to
        ``[low, high]`` and shifted by its centre, so it stays non-negative when
        ``low >= centre`` (a range starting at 0 that is scaled, not centred).

        Examples
        --------
        >>> Scaling.from_ranges([0.0, -1.0], [2.0, 1.0], centred=False).nonnegative()
        array([ True, False])
        """
        return np.asarray(self.low - self.centre >= 0.0)

    def transform(self, X, out=None):
        """``z``: the features clipped to their ranges, centred and scaled into ``[-1, 1]``.

        ``out``: a dense float64 array of ``X``'s shape to write ``z`` to (it may
        be ``X`` itself); by default a new array.
        """
        if out is not None and not sp.issparse(X):
            np.clip(X, self.low, self.high, out=out)
            out -= self.centre
            out /= self._divisor()
            return out
        clipped = self.clip(X)
        if sp.issparse(clipped):
            return sp.csr_array(clipped.multiply(1.0 / self._divisor()))
        # in place on the clipped copy: one array the size of X, not three
        clipped -= self.centre
        clipped /= self._divisor()
        return clipped

    def transform_target(self, y) -> np.ndarray:
        """``t``: the target clipped to its range, mapped into ``[-1, 1]`` (classifiers: ``y``)."""
        y = np.asarray(y, dtype=float)
        if self.target_low is None:
            return y
        scale = self.target_scale
        clipped = np.clip(y, self.target_low, self.target_high)
        return (clipped - self.target_centre) / (scale if scale > 0 else 1.0)

    def raw_model(self, w, b):
        """``(coef, intercept)`` on the raw scale of the model ``(w, b)`` fitted on ``z``.

        ``w`` may be one row per class (``(K, p)``, with ``b`` of shape
        ``(K,)``): each row is mapped alike.
        """
        w = np.asarray(w, dtype=float)
        weights = np.where(self.scale > 0, w / self._divisor(), 0.0)
        h, c = self.target_scale, self.target_centre
        coef = h * weights
        intercept = c + h * (np.asarray(b, dtype=float) - weights @ self.centre)
        return coef, _scalar_or_array(intercept)

    def scaled_model(self, coef, intercept):
        """The inverse of :meth:`raw_model`: ``(w, b)`` on the solver's scale.

        Columns of zero width get ``w_j = 0``; a target range of a single value
        gives ``w = 0``, ``b = 0``.
        """
        coef = np.asarray(coef, dtype=float)
        intercept = np.asarray(intercept, dtype=float)
        h, c = self.target_scale, self.target_centre
        if h == 0:
            return np.zeros_like(coef), _scalar_or_array(np.zeros_like(intercept))
        weights = coef / h
        w = np.where(self.scale > 0, weights * self.scale, 0.0)
        b = (intercept - c) / h + weights @ self.centre
        return w, _scalar_or_array(b)

    def to_dict(self) -> dict:
        """JSON-ready fields (floats are written exactly by ``repr``)."""
        return {
            "low": self.low.tolist(),
            "high": self.high.tolist(),
            "centred": self.centred,
            "target_low": self.target_low,
            "target_high": self.target_high,
            "target_centred": self.target_centred,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Scaling:
        """The scaling :meth:`to_dict` described."""
        return cls(
            np.asarray(data["low"], dtype=float),
            np.asarray(data["high"], dtype=float),
            bool(data["centred"]),
            data["target_low"],
            data["target_high"],
            bool(data["target_centred"]),
        )


def _scalar_or_array(values):
    """A float for one model's intercept, the array for one per class."""
    values = np.asarray(values, dtype=float)
    return float(values) if values.ndim == 0 else values
