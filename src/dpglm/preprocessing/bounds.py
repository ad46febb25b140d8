"""Public bounds, as the estimators and the transformers take them: checked once, one way.

``feature_bounds`` (the estimators) and ``bounds`` (the private transformers)
take a number ``B`` (the range ``[-B, B]`` for every column), one per column,
or ``(low, high)`` rows; a regressor's ``target_bounds`` takes ``(low, high)``.
Both also take ``"data"``, the ranges read from the data without privacy,
which the caller either refuses or reports as a leak. The estimators also take
``(low, high)`` rows of which some are ``(nan, nan)``: those columns' ranges are
estimated privately, the others' are public (:class:`PartialBounds`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["PartialBounds", "check_feature_bounds", "check_target_bounds"]


@dataclass(frozen=True)
class PartialBounds:
    """Public ranges for some columns; the others' are estimated (or read, without privacy).

    The one-hot columns of a categorical column are in ``[0, 1]`` by
    construction, whatever the data: their range is public, while the
    numeric columns beside them may have none.

    Attributes
    ----------
    low, high : ndarray
        One entry per column; NaN where ``unknown``.
    unknown : ndarray of bool
        The columns whose range is not public.
    public_line : str
        What the report says of the public ranges.

    Examples
    --------
    >>> bounds = PartialBounds.of([np.nan, 0.0], [np.nan, 1.0], "one-hot columns in [0, 1]")
    >>> bounds.unknown.tolist(), bounds.low.tolist()
    ([True, False], [nan, 0.0])
    """

    low: np.ndarray
    high: np.ndarray
    unknown: np.ndarray
    public_line: str

    @classmethod
    def of(cls, low, high, public_line: str) -> PartialBounds:
        """The bounds whose NaN entries (in ``low``) are unknown."""
        low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
        return cls(low, high, np.isnan(low), public_line)

    def columns_of(self, X):
        """The unknown columns of ``X`` (dense or sparse), in order."""
        index = np.flatnonzero(self.unknown)
        return X[:, index] if sp.issparse(X) else np.asarray(X)[:, index]

    def filled(self, low, high) -> tuple:
        """``(low, high)`` of every column: the public ones, and ``low``, ``high`` for the
        unknown ones."""
        full_low, full_high = self.low.copy(), self.high.copy()
        full_low[self.unknown], full_high[self.unknown] = low, high
        return full_low, full_high


def check_feature_bounds(feature_bounds, n_features=None, *, name="feature_bounds", partial=False):
    """Public ranges of the features, as ``(low, high)`` arrays, or a ``ValueError``.

    Parameters
    ----------
    feature_bounds : None, "data", float, array-like of shape (n_features,) or (n_features, 2)
        ``None``: no public ranges (the fit estimates them privately).
        ``"data"``: read them from the data, without privacy (a leak the
        report shows). A number ``B > 0`` or one per feature: the range
        ``[-B_j, B_j]``. Rows ``(low_j, high_j)`` with ``low_j <= high_j``:
        those ranges. Every value finite.
    n_features : int, optional
        The number of features, once the data is read: per-feature values
        must have that length, and the result has it.
    name : str, default="feature_bounds"
        The parameter's name, for the messages.
    partial : bool, default=False
        Whether ``(nan, nan)`` rows are taken (the estimators): the result is
        then a :class:`PartialBounds` when some row is.

    Returns
    -------
    None, "data" or tuple of two ndarrays
        ``(low, high)``, one entry per feature when ``n_features`` is given.

    Examples
    --------
    >>> check_feature_bounds(2, n_features=3)
    (array([-2., -2., -2.]), array([2., 2., 2.]))
    >>> check_feature_bounds([[0, 10], [-1, 1]], n_features=2)
    (array([ 0., -1.]), array([10.,  1.]))
    >>> check_feature_bounds([1.0, 0.0])
    Traceback (most recent call last):
    ...
    ValueError: feature_bounds must be finite and > 0; feature 1 has 0.0
    >>> check_feature_bounds([[0.0, 1.0], [3.0, 2.0]])
    Traceback (most recent call last):
    ...
    ValueError: feature_bounds must hold finite (low, high) rows with low <= high; feature 1 has (3.0, 2.0)
    >>> check_feature_bounds([1.0, 2.0], n_features=3)
    Traceback (most recent call last):
    ...
    ValueError: feature_bounds has 2 values; X has 3 features (give one bound for all, or one per feature)
    """  # noqa: E501
    if feature_bounds is None:
        return None
    if isinstance(feature_bounds, str) and feature_bounds == "data":
        return "data"
    expected = (
        f"{name} must be None, 'data', a number > 0 (a bound on |X_ij| for every feature), a "
        "1-D array-like of them (one per feature) or an (n_features, 2) array-like of "
        "(low, high) rows"
    )
    try:
        bounds = np.asarray(feature_bounds)
    except (TypeError, ValueError):  # ragged nesting and the like
        raise ValueError(f"{expected}, got {feature_bounds!r}") from None
    if (
        bounds.dtype.kind not in "iuf"
        or bounds.ndim > 2
        or (bounds.ndim == 2 and bounds.shape[1] != 2)
    ):
        raise ValueError(f"{expected}, got {feature_bounds!r}")
    bounds = bounds.astype(float)
    if bounds.ndim == 2:
        low, high = bounds[:, 0].copy(), bounds[:, 1].copy()
        unknown = np.isnan(low) & np.isnan(high) if partial else np.zeros(low.size, bool)
        bad = np.flatnonzero(~unknown & (~np.isfinite(low) | ~np.isfinite(high) | ~(low <= high)))
        if bad.size:
            j = int(bad[0])
            raise ValueError(
                f"{name} must hold finite (low, high) rows with low <= high"
                + (" (or (nan, nan): estimate it)" if partial else "")
                + f"; feature {j} has ({float(low[j])!r}, {float(high[j])!r})"
            )
    else:
        bad = np.flatnonzero(~np.isfinite(bounds) | ~(bounds > 0))
        if bad.size and bounds.ndim == 0:
            raise ValueError(f"{name} must be finite and > 0, got {float(bounds)!r}")
        if bad.size:
            j = int(bad[0])
            raise ValueError(
                f"{name} must be finite and > 0; feature {j} has {float(bounds[j])!r}"
            )
        low, high = -bounds, bounds.copy()
    if n_features is None:
        return low, high
    if low.ndim == 0:
        return np.full(n_features, float(low)), np.full(n_features, float(high))
    if low.size != n_features:
        what = "rows" if bounds.ndim == 2 else "values"
        raise ValueError(
            f"{name} has {low.size} {what}; X has {n_features} features (give one bound for "
            "all, or one per feature)"
        )
    if bounds.ndim == 2 and partial and np.isnan(low).any():
        known = int((~np.isnan(low)).sum())
        return PartialBounds.of(
            low, high, f"{known} feature ranges (low, high) supplied by the user"
        )
    return low, high


def check_target_bounds(target_bounds):
    """A regressor's public target range ``(low, high)``, ``"data"`` or None; else ``ValueError``.

    Examples
    --------
    >>> check_target_bounds((0, 5))
    (0.0, 5.0)
    >>> check_target_bounds((5, 0))
    Traceback (most recent call last):
    ...
    ValueError: target_bounds must be None, 'data' or a pair (low, high) of finite numbers with low <= high, got (5, 0)
    """  # noqa: E501
    if target_bounds is None:
        return None
    if isinstance(target_bounds, str) and target_bounds == "data":
        return "data"
    message = (
        "target_bounds must be None, 'data' or a pair (low, high) of finite numbers with "
        f"low <= high, got {target_bounds!r}"
    )
    try:
        pair = np.asarray(target_bounds)
    except (TypeError, ValueError):
        raise ValueError(message) from None
    if pair.dtype.kind not in "iuf" or pair.shape != (2,):
        raise ValueError(message)
    low, high = (float(v) for v in pair)
    if not (math.isfinite(low) and math.isfinite(high) and low <= high):
        raise ValueError(message)
    return low, high
