"""Checks of what an estimator is given: data, feature names and hyperparameters.

The loader (:func:`dpglm.data.load`) validates the data and names the row or
column at fault; the checks here come first for the few cases where
scikit-learn's conventions fix the wording (its estimator checks match on it),
and keep the loader's details. Feature names follow scikit-learn's rules
(:func:`feature_names_of`, :func:`check_feature_names`). The checks of the
estimators' own hyperparameters raise a ``ValueError`` that names the
parameter.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import DataConversionWarning

from dpglm.data import load as load_data
from dpglm.data.frames import is_dataframe, is_series
from dpglm.data.locations import preview
from dpglm.exceptions import (
    EmptyDataError,
    NonFiniteValueError,
    NonNumericColumnError,
    ShapeMismatchError,
    TargetError,
)
from dpglm.solvers.hyperparameters import check_positive

# -- hyperparameters -----------------------------------------------------------------------


def check_alpha(alpha):
    """``alpha``, the strength of a penalty, as a finite float ``>= 0``, or a ``ValueError``."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not alpha >= 0:
        raise ValueError(f"alpha must be a number >= 0, got {alpha!r}")
    if math.isinf(alpha):
        raise ValueError("alpha must be finite, got inf")
    return float(alpha)


def check_passes(passes):
    """``passes`` as None or a positive finite float, or a ``ValueError``."""
    if passes is None:
        return None
    if isinstance(passes, bool) or not isinstance(passes, numbers.Real):
        raise ValueError(f"passes must be None or a positive number, got {passes!r}")
    return check_positive("passes", passes)


def check_batch_size(batch_size):
    """``batch_size`` as None or a positive int (bools refused), or a ``ValueError``."""
    if batch_size is None:
        return None
    if (
        isinstance(batch_size, bool)
        or not isinstance(batch_size, numbers.Integral)
        or batch_size < 1
    ):
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    return int(batch_size)


# -- input checks that scikit-learn words in its own way -----------------------------------


def check_features(X):
    """``X`` as an array when it is array-like; raise on complex, 1-D or featureless input."""
    if is_dataframe(X) or is_series(X):
        return X
    if sp.issparse(X):
        array = X
    else:
        try:
            array = np.asarray(X)
        except (TypeError, ValueError):
            return X  # ragged and the like: the loader says what is wrong
    if array.dtype.kind == "c":
        raise NonNumericColumnError(
            f"Complex data not supported: X has dtype {array.dtype}; dpglm fits real features"
        )
    if array.ndim == 0:
        raise ShapeMismatchError(
            "Expected a 2-D array, got a scalar instead: X must have shape (n_samples, n_features)"
        )
    if array.ndim == 1:
        raise ShapeMismatchError(
            f"Expected a 2-D array, got a 1-D array of shape {array.shape} instead. Reshape "
            "your data either using X.reshape(-1, 1) if your data has a single feature or "
            "X.reshape(1, -1) if it contains a single sample."
        )
    if array.ndim == 2 and array.shape[0] > 0 and array.shape[1] == 0:
        raise EmptyDataError(
            f"Found array with 0 feature(s) (shape={array.shape}) while a minimum of 1 is "
            "required."
        )
    return array


def check_target(y, name):
    """``y`` as an array when it is array-like; raise when it is None.

    A column vector is flattened with scikit-learn's ``DataConversionWarning``,
    which points at the caller of ``fit`` (the estimator ``name``'s method
    that calls this one).
    """
    if y is None:
        raise TargetError(f"{name} requires y to be passed, but the target y is None")
    if is_series(y) or is_dataframe(y) or sp.issparse(y):
        return y
    try:
        array = np.asarray(y)
    except (TypeError, ValueError):
        return y
    if array.ndim == 2 and array.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the "
            "shape of y to (n_samples,), for example using ravel().",
            DataConversionWarning,
            stacklevel=3,
        )
        return array.ravel()
    return array


def load_checked(X, y, **kwargs):
    """:func:`dpglm.data.load`, with scikit-learn's words for NaN and infinity added."""
    try:
        return load_data(X, y, **kwargs)
    except NonFiniteValueError as err:
        raise NonFiniteValueError(f"Input contains NaN or infinity: {err}") from err


def labels_error(name, y, err):
    """A clearer error than the loader's when ``y`` does not hold exactly two labels."""
    try:
        values = np.asarray(y.to_numpy() if is_series(y) else y)
        classes = np.unique(values)
    except Exception:  # the loader's message stands
        return err
    if values.ndim != 1 or len(classes) == 2:
        return err
    if len(classes) < 2:
        return TargetError(
            f"{name} is a binary classifier, but y has only one class "
            f"{preview(classes)}; it needs two, or the public label set given as classes"
        )
    if values.dtype.kind == "f" and not np.all(np.mod(classes, 1) == 0):
        return TargetError(
            f"Unknown label type: continuous. {name} is a binary classifier and y holds "
            f"{len(classes)} distinct non-integer values {preview(classes)}; use a regressor "
            "or encode two classes"
        )
    return TargetError(
        f"Only binary classification is supported: {name} needs exactly two classes, y has "
        f"{len(classes)}: {preview(classes)}"
    )


def feature_names_of(X):
    """The column names of a DataFrame when all are strings (as scikit-learn reads them)."""
    columns = getattr(X, "columns", None) if is_dataframe(X) else None
    if columns is None:
        return None
    kinds = {isinstance(c, str) for c in columns}
    if kinds == {True}:
        return np.asarray([str(c) for c in columns], dtype=object)
    if kinds == {True, False}:
        types = sorted({type(c).__name__ for c in columns})
        raise TypeError(
            "Feature names are only supported if all input features have string names, but "
            f"X has {types} as column name types; convert them all to strings, e.g. "
            "X.columns = X.columns.astype(str)"
        )
    return None


def column_count(X):
    """The number of columns of ``X``, or None when it has no 2-D shape (the loader says)."""
    if is_series(X):
        return 1
    shape = getattr(X, "shape", None)
    return shape[1] if shape is not None and len(shape) == 2 else None


def check_feature_names(estimator, X):
    """Check the feature names of ``X`` against those ``estimator`` was fitted with.

    scikit-learn's rules: the same names in the same order, else a
    ``ValueError`` that lists the unseen and the missing ones; a
    ``UserWarning`` when only one of the two has names. Called by the
    estimators' prediction methods, through the helper they share (the
    warnings' ``stacklevel`` counts both calls).
    """
    fitted = getattr(estimator, "feature_names_in_", None)
    names = feature_names_of(X)
    name = type(estimator).__name__
    if fitted is None and names is None:
        return
    if fitted is None:
        warnings.warn(
            f"X has feature names, but {name} was fitted without feature names",
            UserWarning,
            stacklevel=4,
        )
        return
    if names is None:
        warnings.warn(
            f"X does not have valid feature names, but {name} was fitted with feature names",
            UserWarning,
            stacklevel=4,
        )
        return
    if len(fitted) == len(names) and np.all(fitted == names):
        return
    message = "The feature names should match those that were passed during fit.\n"
    unexpected = sorted(set(names) - set(fitted))
    missing = sorted(set(fitted) - set(names))
    if unexpected:
        message += "Feature names unseen at fit time:\n" + _name_list(unexpected)
    if missing:
        message += "Feature names seen at fit time, yet now missing:\n" + _name_list(missing)
    if not unexpected and not missing:
        message += "Feature names must be in the same order as they were in fit.\n"
    raise ValueError(message)


def _name_list(names, limit=5):
    lines = [f"- {n}\n" for n in names[:limit]]
    if len(names) > limit:
        lines.append("- ...\n")
    return "".join(lines)
