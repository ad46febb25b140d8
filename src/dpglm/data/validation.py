"""Checks on whole feature matrices and on how inputs fit together."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from dpglm.data.columns import raise_nonfinite, refuse_column, to_float_column
from dpglm.data.layout import as_layout, nearest_layout, sparse_matrix
from dpglm.data.locations import RowNamer, feature_column, plain_row
from dpglm.exceptions import EmptyDataError, NonNumericColumnError, ShapeMismatchError


def check_2d(shape: tuple[int, ...], what: str = "X") -> None:
    """Refuse features that are not a 2-D table.

    Examples
    --------
    >>> check_2d((5,))
    Traceback (most recent call last):
    ...
    dpglm.exceptions.ShapeMismatchError: X must be 2-D of shape (n_samples, n_features), got shape (5,); use X.reshape(-1, 1) for a single feature
    """  # noqa: E501
    if len(shape) != 2:
        hint = "; use X.reshape(-1, 1) for a single feature" if len(shape) == 1 else ""
        raise ShapeMismatchError(
            f"{what} must be 2-D of shape (n_samples, n_features), got shape {shape}{hint}"
        )


def check_not_empty(shape: tuple[int, int], source: str) -> None:
    """Refuse data without rows or without feature columns.

    Examples
    --------
    >>> check_not_empty((0, 3), "numpy array")
    Traceback (most recent call last):
    ...
    dpglm.exceptions.EmptyDataError: numpy array has no rows (shape (0, 3)); expected at least one sample
    """  # noqa: E501
    n_samples, n_features = shape
    if n_samples == 0:
        raise EmptyDataError(f"{source} has no rows (shape {shape}); expected at least one sample")
    if n_features == 0:
        raise EmptyDataError(
            f"{source} has no feature columns (shape {shape}); expected at least one feature"
        )


def check_same_length(n_X: int, n_y: int) -> None:
    """Refuse X and y of different lengths.

    Examples
    --------
    >>> check_same_length(3, 4)
    Traceback (most recent call last):
    ...
    dpglm.exceptions.ShapeMismatchError: X has 3 rows but y has 4 values; expected the same number
    """
    if n_X != n_y:
        raise ShapeMismatchError(
            f"X has {n_X} rows but y has {n_y} values; expected the same number"
        )


def check_n_features_arg(n_features: Any) -> int | None:
    """Validate the ``n_features`` argument of :func:`dpglm.data.load`.

    Examples
    --------
    >>> check_n_features_arg(68), check_n_features_arg(None)
    (68, None)
    """
    if n_features is None:
        return None
    if isinstance(n_features, bool):
        raise TypeError("n_features must be a positive integer or None, got a bool")
    try:
        value = operator.index(n_features)
    except TypeError:
        raise TypeError(
            f"n_features must be a positive integer or None, got {n_features!r}"
        ) from None
    if value < 1:
        raise ValueError(f"n_features must be a positive integer or None, got {value}")
    return value


def check_n_features(actual: int, expected: int | None) -> None:
    """Refuse data whose number of columns is not the ``n_features`` asked for.

    Examples
    --------
    >>> check_n_features(3, 4)
    Traceback (most recent call last):
    ...
    dpglm.exceptions.ShapeMismatchError: the data has 3 feature columns but n_features=4
    """
    if expected is not None and actual != expected:
        raise ShapeMismatchError(
            f"the data has {actual} feature columns but n_features={expected}"
        )


def dense_features(
    X: np.ndarray,
    *,
    feature_names: Sequence[str] | None = None,
    describe_row: RowNamer = plain_row,
) -> np.ndarray:
    """Validate a 2-D array of features; return it as float64 in its nearest layout.

    C-ordered input stays C-ordered, anything else becomes Fortran-ordered
    (:func:`~dpglm.data.layout.nearest_layout`), so no layout is converted
    before a solver asks for the one it reads.

    Numeric and boolean dtypes are converted (booleans become 0.0 / 1.0);
    object arrays are accepted column by column when they hold real numbers
    only. Strings, dates, complex numbers and missing or non-finite values
    raise an error naming the row and column.

    Examples
    --------
    >>> import numpy as np
    >>> X = dense_features(np.array([[1, 2], [3, 4]]))
    >>> X.dtype, X.flags.c_contiguous
    (dtype('float64'), True)
    """
    check_2d(X.shape)
    kind = X.dtype.kind
    if kind in "biuf":
        out = as_layout(X, nearest_layout(X))
        check_finite_dense(out, feature_names=feature_names, describe_row=describe_row)
        return out
    if kind != "O":
        j = _first_complex_column(X) if kind == "c" else 0
        refuse_column(X[:, j], column=feature_column(feature_names, j), describe_row=describe_row)
    out = np.empty(X.shape, dtype=np.float64, order="F")
    for j in range(X.shape[1]):
        out[:, j] = to_float_column(
            X[:, j], column=feature_column(feature_names, j), describe_row=describe_row
        )
    return out


def sparse_features(
    X: Any, *, feature_names: Sequence[str] | None = None, describe_row: RowNamer = plain_row
) -> sp.csc_matrix | sp.csr_matrix:
    """Validate a SciPy sparse matrix or array; return a canonical float64 CSR or CSC matrix.

    Any sparse format is accepted: CSR stays CSR, every other format becomes
    CSC (:func:`~dpglm.data.layout.nearest_layout`). Duplicate entries are
    summed (that is what they mean in COO input) and indices are sorted.
    Stored entries are checked for NaN and infinity.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> X = sparse_features(sp.coo_array(([1, 2], ([0, 0], [1, 1])), shape=(2, 2)))
    >>> X.format, X.toarray().tolist()
    ('csc', [[0.0, 3.0], [0.0, 0.0]])
    >>> sparse_features(sp.csr_array(([1.0], ([1], [0])), shape=(2, 2))).format
    'csr'
    """
    if X.dtype.kind not in "biuf":
        j = 0
        if X.dtype.kind == "c":
            coo = sp.coo_matrix(X)
            has_imag = coo.data.imag != 0
            j = int(coo.col[np.argmax(has_imag)]) if has_imag.any() else 0
        raise NonNumericColumnError(
            f"{feature_column(feature_names, j)} is not numeric: the sparse matrix has "
            f"dtype {X.dtype}; expected real numbers (complex numbers are not supported)"
        )
    out = sparse_matrix(as_layout(X, nearest_layout(X)))
    check_finite_sparse(out, feature_names=feature_names, describe_row=describe_row)
    return out


def check_finite_dense(
    X: np.ndarray,
    *,
    feature_names: Sequence[str] | None = None,
    describe_row: RowNamer = plain_row,
) -> None:
    """Raise :class:`NonFiniteValueError` at the first NaN or infinity (by row, then column).

    Examples
    --------
    >>> import numpy as np
    >>> check_finite_dense(np.array([[1.0, 2.0], [np.nan, 4.0]]))
    Traceback (most recent call last):
    ...
    dpglm.exceptions.NonFiniteValueError: feature column 0 has a non-finite value nan at row 1; expected finite numbers (impute or drop such rows first)
    """  # noqa: E501
    if np.isfinite(X).all():
        return
    i, j = np.argwhere(~np.isfinite(X))[0]
    raise_nonfinite(feature_column(feature_names, int(j)), describe_row, int(i), X[i, j])


def check_finite_sparse(
    X: sp.csc_matrix | sp.csr_matrix,
    *,
    feature_names: Sequence[str] | None = None,
    describe_row: RowNamer = plain_row,
) -> None:
    """Raise :class:`NonFiniteValueError` at the first stored NaN or infinity (by row, then column).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> check_finite_sparse(sp.csc_matrix(np.array([[0.0, np.inf]])))
    Traceback (most recent call last):
    ...
    dpglm.exceptions.NonFiniteValueError: feature column 1 has a non-finite value inf at row 0; expected finite numbers (impute or drop such rows first)
    """  # noqa: E501
    bad = np.flatnonzero(~np.isfinite(X.data))
    if bad.size == 0:
        return
    # CSC stores row indices and points at columns; CSR the other way round
    inner = X.indices[bad]
    outer = np.searchsorted(X.indptr, bad, side="right") - 1
    rows, cols = (inner, outer) if X.format == "csc" else (outer, inner)
    k = np.lexsort((cols, rows))[0]
    raise_nonfinite(
        feature_column(feature_names, int(cols[k])), describe_row, int(rows[k]), X.data[bad[k]]
    )


def _first_complex_column(X: np.ndarray) -> int:
    has_imag = np.asarray(X.imag != 0)
    return int(np.argwhere(has_imag)[0][1]) if has_imag.any() else 0
