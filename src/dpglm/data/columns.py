"""Turning one column of input into float64, or saying exactly what is wrong.

Two kinds of columns arrive here: *typed* columns (NumPy arrays, pandas
columns, Parquet columns) whose dtype already says whether they hold numbers,
and *text* columns (CSV cells) that must be parsed. In both cases the result
is a float64 array with finite values only; anything else raises a
:class:`~dpglm.exceptions.DataError` naming the column, the row and the value.

Booleans are accepted and become 0.0 / 1.0, which loses nothing. Complex
numbers, strings, categories and dates are refused: turning them into numbers
is a modelling choice (one-hot encoding, ordinal codes, timestamps) that the
caller must make.
"""

from __future__ import annotations

import numbers
from typing import NoReturn

import numpy as np

from dpglm.data.locations import RowNamer, show_value
from dpglm.exceptions import NonFiniteValueError, NonNumericColumnError, TargetError

FEATURE = "feature"
TARGET = "target"

#: Cell texts read as a missing value (compared after stripping and lower-casing).
MISSING_MARKERS = frozenset({"", "na", "n/a", "nan", "-nan", "null", "none", "?", "#n/a"})

_BOOL_WORDS = {"true": 1.0, "false": 0.0}


def cell_kind(text: str, markers=frozenset()) -> str:
    """``"missing"``, ``"number"`` or ``"word"``: what the text of one cell is.

    Missing when it is one of ``markers`` or, stripped and lower-cased, one of
    :data:`MISSING_MARKERS`; a number when ``float`` reads it; a word otherwise.

    Examples
    --------
    >>> [cell_kind(t, {"-"}) for t in ("1.5", " NA", "-", "abc", "True")]
    ['number', 'missing', 'missing', 'word', 'word']
    """
    if text in markers or text.strip().lower() in MISSING_MARKERS:
        return "missing"
    try:
        float(text)
    except ValueError:
        return "word"
    return "number"


_ENCODE_HINT = (
    "pass the whole table to a dpglm estimator, which one-hot encodes its string columns on "
    "privately selected categories, or encode them with "
    "dpglm.preprocessing.PrivateOneHotEncoder (scikit-learn's OneHotEncoder reads the "
    "categories without privacy)"
)


def to_float_column(
    values: np.ndarray,
    *,
    column: str,
    describe_row: RowNamer,
    missing: np.ndarray | None = None,
    role: str = FEATURE,
) -> np.ndarray:
    """Convert a typed 1-D column to float64 and check it holds finite numbers.

    Parameters
    ----------
    values : ndarray
        The column. Numeric and boolean dtypes are converted; object arrays are
        accepted when every non-missing element is a real number.
    column : str
        How messages name the column, e.g. ``"feature column 'age' (index 0)"``.
    describe_row : callable
        Row namer (see :mod:`dpglm.data.locations`).
    missing : ndarray of bool, optional
        Cells known to be missing (pandas NA, Parquet null). Others are found
        from the values (NaN, None).
    role : {"feature", "target"}
        Which error a non-numeric column raises: ``NonNumericColumnError`` for
        a feature, ``TargetError`` for a regression target.

    Returns
    -------
    ndarray of float64

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.data.locations import plain_row
    >>> to_float_column(np.array([True, False]), column="c", describe_row=plain_row)
    array([1., 0.])
    """
    kind = values.dtype.kind
    if kind in "biuf":
        out = values.astype(np.float64, copy=False)
    elif kind == "O":
        out = _objects_to_float(values, column=column, describe_row=describe_row, role=role)
    else:
        refuse_column(values, column=column, describe_row=describe_row, role=role, missing=missing)
    if missing is not None and missing.any():
        raise_missing(column, describe_row, int(np.argmax(missing)))
    check_finite_column(out, column=column, describe_row=describe_row)
    return out


def parse_text_column(
    cells: np.ndarray, *, column: str, describe_row: RowNamer, role: str = FEATURE
) -> np.ndarray:
    """Parse a column of text cells (from a CSV file) into finite float64.

    Numbers are parsed as Python's ``float`` does. A column whose cells are all
    ``True`` / ``False`` (any case) is read as 1.0 / 0.0. Empty cells and the
    usual missing-value markers (``NA``, ``N/A``, ``nan``, ``null``, ``None``,
    ``?``) raise :class:`NonFiniteValueError`; any other text raises
    :class:`NonNumericColumnError` (or :class:`TargetError` for a target).

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.data.locations import plain_row
    >>> parse_text_column(np.array(["1.5", " 2", "1e3"]), column="c", describe_row=plain_row)
    array([   1.5,    2. , 1000. ])
    """
    values = _try_float(cells)
    if values is None:
        missing = text_missing_mask(cells)
        values = _try_float(np.where(missing, "nan", cells))
        if values is None:
            values = _try_bool_words(cells)
        if values is None:
            bad = _first_unparsable(cells, missing)
            raise _non_numeric_error(
                column, describe_row, bad, cells[bad], role, reason="is not a number"
            )
        if missing.any():
            raise_missing(column, describe_row, int(np.argmax(missing)), cells)
    check_finite_column(values, column=column, describe_row=describe_row)
    return values


def parse_text_labels(cells: np.ndarray, *, column: str, describe_row: RowNamer) -> np.ndarray:
    """Read class labels from text cells: integers, else floats, else the strings.

    Numbers are recognised so that labels sort as numbers (``"10"`` after
    ``"9"``) and ``"1"`` and ``"1.0"`` are the same class.

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.data.locations import plain_row
    >>> parse_text_labels(np.array(["1", "-1"]), column="y", describe_row=plain_row)
    array([ 1, -1])
    >>> parse_text_labels(np.array(["no", "yes"]), column="y", describe_row=plain_row)
    array(['no', 'yes'], dtype='<U3')
    """
    missing = text_missing_mask(cells)
    if missing.any():
        raise_missing(column, describe_row, int(np.argmax(missing)), cells)
    for dtype in (np.int64, np.float64):
        try:
            return cells.astype(dtype)
        except (ValueError, OverflowError):
            continue
    return cells


def text_missing_mask(cells: np.ndarray) -> np.ndarray:
    """Which text cells are empty or a missing-value marker.

    Examples
    --------
    >>> import numpy as np
    >>> text_missing_mask(np.array(["1", "", " NA ", "x"]))
    array([False,  True,  True, False])
    """
    uniques, inverse = np.unique(cells, return_inverse=True)
    is_marker = np.array([str(u).strip().lower() in MISSING_MARKERS for u in uniques], dtype=bool)
    return is_marker[inverse.reshape(-1)]


def check_finite_column(values: np.ndarray, *, column: str, describe_row: RowNamer) -> None:
    """Raise :class:`NonFiniteValueError` at the first NaN or infinity.

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.data.locations import plain_row
    >>> check_finite_column(np.array([1.0, np.inf]), column="c", describe_row=plain_row)
    Traceback (most recent call last):
    ...
    dpglm.exceptions.NonFiniteValueError: c has a non-finite value inf at row 1; expected finite numbers (impute or drop such rows first)
    """  # noqa: E501
    finite = np.isfinite(values)
    if not finite.all():
        i = int(np.argmin(finite))
        raise_nonfinite(column, describe_row, i, values[i])


def raise_nonfinite(column: str, describe_row: RowNamer, i: int, value: object) -> NoReturn:
    """Raise :class:`NonFiniteValueError` for a NaN or infinite value at row ``i``."""
    raise NonFiniteValueError(
        f"{column} has a non-finite value {show_value(value)} at {describe_row(i)}; "
        "expected finite numbers (impute or drop such rows first)"
    )


def raise_missing(
    column: str, describe_row: RowNamer, i: int, cells: np.ndarray | None = None
) -> NoReturn:
    """Raise :class:`NonFiniteValueError` for a missing value at row ``i``."""
    shown = "" if cells is None else f" ({show_value(cells[i])})"
    raise NonFiniteValueError(
        f"{column} has a missing value{shown} at {describe_row(i)}; "
        "expected finite numbers (impute or drop incomplete rows first)"
    )


def refuse_column(
    values: np.ndarray,
    *,
    column: str,
    describe_row: RowNamer,
    role: str = FEATURE,
    missing: np.ndarray | None = None,
    dtype_name: str | None = None,
) -> NoReturn:
    """Raise the error for a column whose dtype is not numeric, with an example cell.

    Parameters
    ----------
    dtype_name : str, optional
        The dtype as the user knows it (e.g. pandas ``category``), when it is
        not the NumPy dtype of ``values``.
    """
    dtype_name = dtype_name or str(values.dtype)
    present = np.ones(len(values), dtype=bool) if missing is None else ~missing
    i = int(np.argmax(present)) if present.any() else 0
    kind = values.dtype.kind
    if kind == "c" or "complex" in dtype_name:
        reason = f"is complex (dtype {dtype_name}); complex numbers are not supported"
    elif kind in "Mm" or "date" in dtype_name or "time" in dtype_name:
        reason = (
            f"holds dates or times (dtype {dtype_name}); convert them to numbers "
            "first, e.g. seconds since an epoch"
        )
    else:
        reason = f"is not numeric (dtype {dtype_name})"
    example = values[i] if len(values) else None
    raise _non_numeric_error(column, describe_row, i, example, role, reason=reason)


def _non_numeric_error(
    column: str, describe_row: RowNamer, i: int, value: object, role: str, *, reason: str
) -> Exception:
    where = f"{describe_row(i)} holds {show_value(value)}"
    if role == TARGET:
        return TargetError(
            f"{column} {reason}: {where}; a regression target must be numeric "
            "(for class labels use task='classification')"
        )
    return NonNumericColumnError(f"{column} {reason}: {where}; {_ENCODE_HINT}")


def _objects_to_float(
    values: np.ndarray, *, column: str, describe_row: RowNamer, role: str
) -> np.ndarray:
    missing = np.fromiter((is_missing_scalar(v) for v in values), dtype=bool, count=len(values))
    for i, v in enumerate(values):
        if not missing[i] and not _is_real_number(v):
            raise _non_numeric_error(
                column, describe_row, i, v, role, reason="is not numeric (dtype object)"
            )
    if missing.any():
        raise_missing(column, describe_row, int(np.argmax(missing)), values)
    return values.astype(np.float64)


def is_missing_scalar(value: object) -> bool:
    """Whether one Python/NumPy/pandas value means "missing".

    Examples
    --------
    >>> import numpy as np
    >>> [is_missing_scalar(v) for v in (None, np.nan, 0.0, "")]
    [True, True, False, False]
    """
    if value is None:
        return True
    if isinstance(value, float | np.floating):
        return bool(np.isnan(value))
    # pandas.NA and pandas.NaT, recognised without importing pandas.
    return type(value).__name__ in ("NAType", "NaTType")


def _is_real_number(value: object) -> bool:
    return isinstance(value, numbers.Real | np.bool_) and not isinstance(value, str | bytes)


def _try_float(cells: np.ndarray) -> np.ndarray | None:
    try:
        return cells.astype(np.float64)
    except (ValueError, OverflowError):
        return None


def _try_bool_words(cells: np.ndarray) -> np.ndarray | None:
    uniques, inverse = np.unique(cells, return_inverse=True)
    codes = []
    for u in uniques:
        word = str(u).strip().lower()
        if word in _BOOL_WORDS:
            codes.append(_BOOL_WORDS[word])
        elif word in MISSING_MARKERS:
            codes.append(np.nan)
        else:
            return None
    return np.asarray(codes, dtype=np.float64)[inverse.reshape(-1)]


def _first_unparsable(cells: np.ndarray, missing: np.ndarray) -> int:
    for i in np.flatnonzero(~missing):
        try:
            float(cells[i])
        except (ValueError, OverflowError):
            return int(i)
    raise AssertionError("every cell parsed, yet the column did not")  # pragma: no cover


def object_array(values) -> np.ndarray:
    """``values`` as a 1-D object array, element by element (``np.asarray`` would make a
    2-D array of equal-length tuples, and strings of a fixed width).

    Examples
    --------
    >>> object_array([("a", 1), ("b", 2)]).shape
    (2,)
    """
    values = list(values)
    return np.fromiter(values, dtype=object, count=len(values))
