"""Memory layouts: columns for coordinate methods, rows for sample-based methods.

Data is kept in the layout it arrives in when that is one of the two
(:func:`nearest_layout`), and each solver converts it once to the layout it
reads (:func:`as_layout`), so a fit with one solver never holds two copies
of the features.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from dpglm.exceptions import NonNumericColumnError, ShapeMismatchError

LAYOUTS = ("columns", "rows")

_SPARSE_FORMAT = {"columns": "csc", "rows": "csr"}


def as_layout(X: Any, layout: str) -> Any:
    """Return ``X`` as float64 in the memory layout a solver reads.

    ``"columns"`` gives a Fortran-ordered array (dense) or a CSC matrix
    (sparse): what coordinate descent reads, one column at a time.
    ``"rows"`` gives a C-ordered array or a CSR matrix: what DP-SGD and
    DP-SCD read, one sample at a time. Sparse results have sorted indices and
    no duplicate entries. Nothing is copied when ``X`` already has the
    requested layout and dtype, so the result may share memory with ``X``.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix / array of shape (n_samples, n_features)
        Numeric or boolean data, already validated (e.g. ``Dataset.X``).
    layout : {"columns", "rows"}

    Returns
    -------
    ndarray or scipy sparse matrix / array
        Sparse input keeps its kind (``spmatrix`` or ``sparray``).

    Raises
    ------
    ValueError
        ``layout`` is not one of the two layouts.
    ShapeMismatchError
        ``X`` is not 2-D.
    NonNumericColumnError
        ``X`` does not hold real numbers (strings, objects or complex
        numbers are never converted silently; use :func:`dpglm.data.load`).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(6.0).reshape(2, 3)
    >>> as_layout(X, "columns").flags.f_contiguous
    True
    >>> as_layout(X, "rows") is X
    True
    >>> import scipy.sparse as sp
    >>> as_layout(sp.coo_matrix(X), "columns").format
    'csc'
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    if sp.issparse(X):
        return _sparse_layout(X, _SPARSE_FORMAT[layout])
    X = np.asarray(X)
    if X.ndim != 2:
        raise ShapeMismatchError(
            f"X must be 2-D of shape (n_samples, n_features), got shape {X.shape}"
        )
    _check_real_dtype(X.dtype)
    if layout == "columns":
        return np.asfortranarray(X, dtype=np.float64)
    return np.ascontiguousarray(X, dtype=np.float64)


def _sparse_layout(X: Any, fmt: str) -> Any:
    _check_real_dtype(X.dtype)
    original = X
    if X.format != fmt:
        X = X.asformat(fmt)
    if X.dtype != np.float64:
        X = X.astype(np.float64)
    if not X.has_canonical_format:
        if X is original:
            # sum_duplicates works in place; the caller's matrix stays untouched.
            X = X.copy()
        X.sum_duplicates()
    return X


def _check_real_dtype(dtype: np.dtype) -> None:
    if dtype.kind not in "biuf":
        raise NonNumericColumnError(
            f"X has dtype {dtype}, expected real numbers (float, int or bool); "
            "dpglm.data.load validates and converts other input"
        )


def nearest_layout(X: Any) -> str:
    """The layout ``X`` is stored in, or the default ``"columns"`` when it is in neither.

    C-ordered arrays and CSR matrices are ``"rows"``; Fortran-ordered arrays,
    CSC matrices and every other format are ``"columns"`` (an array that is
    both, such as a single column, counts as columns).

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> nearest_layout(np.zeros((3, 2))), nearest_layout(np.zeros((3, 2), order="F"))
    ('rows', 'columns')
    >>> nearest_layout(sp.csr_matrix((3, 2))), nearest_layout(sp.coo_matrix((3, 2)))
    ('rows', 'columns')
    """
    if sp.issparse(X):
        return "rows" if X.format == "csr" else "columns"
    X = np.asarray(X)
    if X.ndim == 2 and X.flags.c_contiguous and not X.flags.f_contiguous:
        return "rows"
    return "columns"


def sparse_matrix(X: Any) -> sp.csc_matrix | sp.csr_matrix:
    """A CSR or CSC sparse array as the matching ``spmatrix`` (shares its arrays).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> type(sparse_matrix(sp.csr_array((2, 2)))).__name__
    'csr_matrix'
    """
    kind = sp.csr_matrix if X.format == "csr" else sp.csc_matrix
    return X if isinstance(X, kind) else kind(X)
