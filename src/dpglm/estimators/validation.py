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
from dpglm.data.frames import is_arrow_table, is_dataframe, is_series
from dpglm.data.locations import preview
from dpglm.exceptions import (
    EmptyDataError,
    NonFiniteValueError,
    NonNumericColumnError,
    ShapeMismatchError,
    TargetError,
)
from dpglm.privacy.mechanisms import NoiseSource
from dpglm.solvers.hyperparameters import check_finite_clip
from dpglm.solvers.smoothness import SMOOTHNESS_MODES

# -- hyperparameters -----------------------------------------------------------------------
#
# One check per hyperparameter, with one message per kind of mistake (the parameter, what it
# takes, what it got), whatever the solver: a fit runs them all before it reads the data,
# and the length of feature_bounds as soon as the number of features is known, so that
# nothing is charged to a budget for a fit a hyperparameter would stop.

#: what ``random_state`` takes (what :func:`~dpglm.privacy.mechanisms.make_noise_source` takes)
RANDOM_STATE_TYPES = "None, an int >= 0, a numpy SeedSequence, a numpy Generator or a NoiseSource"


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_positive_number(name, value, *, optional=False, allow_inf=False):
    """``value`` as a float ``> 0`` (finite unless ``allow_inf``), or a ``ValueError`` naming it.

    Parameters
    ----------
    name : str
        The parameter, for the message.
    value : object
    optional : bool, default=False
        Whether ``None`` (the solver's default) is allowed; it is returned as is.
    allow_inf : bool, default=False

    Returns
    -------
    float or None

    Examples
    --------
    >>> check_positive_number("step", 2), check_positive_number("step", None, optional=True)
    (2.0, None)
    >>> check_positive_number("passes", "3", optional=True)
    Traceback (most recent call last):
    ...
    ValueError: passes must be None or a positive finite number, got '3'
    """
    if value is None and optional:
        return None
    if not _is_real(value) or not value > 0 or (math.isinf(value) and not allow_inf):
        either = "None or " if optional else ""
        kind = "a positive number" if allow_inf else "a positive finite number"
        raise ValueError(f"{name} must be {either}{kind}, got {value!r}")
    return float(value)


def check_alpha(alpha):
    """``alpha``, the strength of a penalty, as a finite float ``>= 0``, or a ``ValueError``."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not alpha >= 0:
        raise ValueError(f"alpha must be a number >= 0, got {alpha!r}")
    if math.isinf(alpha):
        raise ValueError("alpha must be finite, got inf")
    return float(alpha)


def check_l1_ratio(l1_ratio):
    """``l1_ratio`` as a float in ``[0, 1]``, or a ``ValueError``.

    Checked whatever the penalty, as every hyperparameter is.

    Examples
    --------
    >>> check_l1_ratio(1)
    1.0
    """
    if not _is_real(l1_ratio) or not 0.0 <= l1_ratio <= 1.0:
        raise ValueError(f"l1_ratio must be a number in [0, 1], got {l1_ratio!r}")
    return float(l1_ratio)


def check_clip(clip, *, private: bool):
    """``clip`` as a float ``> 0``; ``inf`` (no clipping) only for a non-private fit.

    Examples
    --------
    >>> check_clip(float("inf"), private=False)
    inf
    >>> check_clip(float("inf"), private=True)
    Traceback (most recent call last):
    ...
    ValueError: clip must be finite for a private fit (epsilon < inf), got inf
    """
    clip = check_positive_number("clip", clip, allow_inf=True)
    check_finite_clip(clip, private=private)
    return clip


def check_passes(passes):
    """``passes`` as None or a positive finite float, or a ``ValueError``."""
    return check_positive_number("passes", passes, optional=True)


def check_step(step):
    """``step`` as None (the solver's default) or a positive finite float, or a ``ValueError``."""
    return check_positive_number("step", step, optional=True)


def check_batch_size(batch_size):
    """``batch_size`` as None or a positive int (bools refused), or a ``ValueError``."""
    if batch_size is None:
        return None
    if (
        isinstance(batch_size, bool)
        or not isinstance(batch_size, numbers.Integral)
        or batch_size < 1
    ):
        raise ValueError(f"batch_size must be None or a positive int, got {batch_size!r}")
    return int(batch_size)


def check_choice(name, value, choices):
    """``value`` if it is one of ``choices`` (strings), else a ``ValueError`` naming ``name``.

    Examples
    --------
    >>> check_choice("smoothness", "data", ("auto", "data"))
    'data'
    """
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def check_smoothness(smoothness):
    """``smoothness`` if it is one of the modes, else a ``ValueError`` naming it.

    Every fit trains on features clipped to ranges and mapped into
    ``[-1, 1]``, so the modes that read ``M_j`` from bounds always have them.

    Examples
    --------
    >>> check_smoothness("private")
    'private'
    """
    return check_choice("smoothness", smoothness, SMOOTHNESS_MODES)


def check_solver_options(solver_options):
    """``solver_options`` as None or a dict keyed by keyword names, or a ``ValueError``.

    Whether the solver takes each keyword, and its value, is the solver's
    own check, made before its charge.
    """
    if solver_options is None:
        return None
    if not isinstance(solver_options, dict) or not all(
        isinstance(name, str) for name in solver_options
    ):
        raise ValueError(
            "solver_options must be None or a dict of the solver's keyword arguments, got "
            f"{solver_options!r}"
        )
    return solver_options


def check_fit_intercept(fit_intercept):
    """``fit_intercept`` as a bool (numpy's too), or a ``ValueError``."""
    if not isinstance(fit_intercept, bool | np.bool_):
        raise ValueError(f"fit_intercept must be a bool, got {fit_intercept!r}")
    return bool(fit_intercept)


def check_random_state(random_state):
    """``random_state`` if a noise source can be made from it, else a ``ValueError``.

    Examples
    --------
    >>> check_random_state(-1)
    Traceback (most recent call last):
    ...
    ValueError: random_state must be None, an int >= 0, a numpy SeedSequence, a numpy Generator or a NoiseSource, got -1
    """  # noqa: E501
    if random_state is None or isinstance(
        random_state, np.random.Generator | np.random.SeedSequence | NoiseSource
    ):
        return random_state
    if (
        isinstance(random_state, numbers.Integral)
        and not isinstance(random_state, bool)
        and random_state >= 0
    ):
        return random_state
    raise ValueError(f"random_state must be {RANDOM_STATE_TYPES}, got {random_state!r}")


def check_budget(budget):
    """``budget`` if it is None or can be charged (a PrivacyBudget), else a ``ValueError``."""
    if budget is not None and not callable(getattr(budget, "charge", None)):
        raise ValueError(f"budget must be None or a PrivacyBudget, got {budget!r}")
    return budget


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


def check_class_labels(y) -> None:
    """Refuse a continuous target in a classifier, with scikit-learn's words.

    A float target holding a finite non-integer value is a regression target:
    read as class labels it would make a class of (almost) every row.

    Examples
    --------
    >>> check_class_labels(np.array([0.0, 1.0, 2.0]))
    >>> check_class_labels(np.array([0.0, 0.5]))
    Traceback (most recent call last):
    ...
    dpglm.exceptions.TargetError: Unknown label type: continuous (row 1 holds 0.5); a classifier takes class labels, not a regression target (use a regressor such as DPLinearRegression)
    """  # noqa: E501
    values = y.to_numpy() if is_series(y) else y
    if sp.issparse(values):
        return
    try:
        values = np.asarray(values)
    except (TypeError, ValueError):
        return
    if values.dtype.kind != "f":
        return
    with np.errstate(invalid="ignore"):
        fractional = np.isfinite(values) & (values != np.round(values))
    if fractional.any():
        i = int(np.flatnonzero(fractional.ravel())[0])
        raise TargetError(
            f"Unknown label type: continuous (row {i} holds {float(values.ravel()[i])!r}); a "
            "classifier "
            "takes class labels, not a regression target (use a regressor such as "
            "DPLinearRegression)"
        )


def load_checked(X, y, **kwargs):
    """:func:`dpglm.data.load`, with scikit-learn's words for NaN and infinity added."""
    try:
        return load_data(X, y, **kwargs)
    except NonFiniteValueError as err:
        raise NonFiniteValueError(f"Input contains NaN or infinity: {err}") from err


def labels_error(name, y, err):
    """A clearer error than the loader's when ``y`` holds fewer than two labels."""
    try:
        values = np.asarray(y.to_numpy() if is_series(y) else y)
        classes = np.unique(values)
    except Exception:  # the loader's message stands
        return err
    if values.ndim != 1 or len(classes) != 1:
        return err
    return TargetError(
        f"{name} is a classifier, but y has only one class {preview(classes)}; it needs at "
        "least two, or the public label set given as classes"
    )


def feature_names_of(X):
    """The column names of a DataFrame when all are strings (as scikit-learn reads them), or
    of a pyarrow Table (always strings)."""
    if is_arrow_table(X):
        return np.asarray([str(c) for c in X.column_names], dtype=object)
    framed = is_dataframe(X) or is_dask_frame(X)
    columns = getattr(X, "columns", None) if framed else None
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


def is_dask(value) -> bool:
    """Whether ``value`` is a Dask collection (dask's, or dask-expr's in the versions that
    name their collections so), from its type alone, without importing Dask.

    Examples
    --------
    >>> is_dask(np.eye(2))
    False
    """
    return type(value).__module__.split(".")[0] in {"dask", "dask_expr"}


def is_dask_frame(X) -> bool:
    """Whether ``X`` is a Dask DataFrame (its columns are a pandas Index), without importing
    Dask."""
    return is_dask(X) and hasattr(X, "dtypes") and hasattr(X, "columns")


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
