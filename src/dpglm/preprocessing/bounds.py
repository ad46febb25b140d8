"""Public bounds, as the estimators and the transformers take them: checked once, one way.

``feature_bounds`` (the estimators) and ``bounds`` (the private transformers)
take a number ``B`` (the range ``[-B, B]`` for every column), one per column,
or ``(low, high)`` rows; a regressor's ``target_bounds`` takes ``(low, high)``.
Both also take ``"data"``, the ranges read from the data without privacy,
which the caller either refuses or reports as a leak.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["check_feature_bounds", "check_target_bounds"]


def check_feature_bounds(feature_bounds, n_features=None, *, name="feature_bounds"):
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
        bad = np.flatnonzero(~np.isfinite(low) | ~np.isfinite(high) | ~(low <= high))
        if bad.size:
            j = int(bad[0])
            raise ValueError(
                f"{name} must hold finite (low, high) rows with low <= high; feature {j} has "
                f"({float(low[j])!r}, {float(high[j])!r})"
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
