"""pandas input (and Arrow tables), recognised without importing pandas.

pandas is optional: these functions run only when the caller already passed a
pandas object, so pandas is already imported by then.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from dpglm.data.columns import refuse_column, to_float_column
from dpglm.data.locations import RowNamer, feature_column, labelled_rows, plain_row
from dpglm.data.table import Table, check_unique_names, find_target
from dpglm.data.target import check_target_shape
from dpglm.data.validation import check_not_empty, check_same_length
from dpglm.exceptions import ShapeMismatchError, TargetError


def is_dataframe(obj: Any) -> bool:
    """Whether ``obj`` is a pandas DataFrame (or subclass), without importing pandas.

    Examples
    --------
    >>> import numpy as np
    >>> is_dataframe(np.zeros((2, 2)))
    False
    """
    return _is_pandas(obj, "DataFrame")


def is_series(obj: Any) -> bool:
    """Whether ``obj`` is a pandas Series (or subclass), without importing pandas.

    Examples
    --------
    >>> is_series([1, 2])
    False
    """
    return _is_pandas(obj, "Series")


def is_arrow_table(obj: Any) -> bool:
    """Whether ``obj`` is a pyarrow Table (or subclass), without importing pyarrow.

    Examples
    --------
    >>> import numpy as np
    >>> is_arrow_table(np.zeros((2, 2)))
    False
    """
    return any(
        cls.__name__ == "Table" and cls.__module__.split(".")[0] == "pyarrow"
        for cls in type(obj).__mro__
    )


def _is_pandas(obj: Any, class_name: str) -> bool:
    return any(
        cls.__name__ == class_name and cls.__module__.split(".")[0] == "pandas"
        for cls in type(obj).__mro__
    )


def frame_table(data: Any, y: Any, *, target: Hashable | None) -> Table:
    """Split a DataFrame (or a Series of one feature) into validated features and a target.

    Parameters
    ----------
    data : pandas.DataFrame or pandas.Series
    y : array-like or pandas.Series, optional
        The target, when it is not a column of ``data``.
    target : hashable, optional
        Name of the target column of ``data``.

    Examples
    --------
    >>> import pandas as pd
    >>> table = frame_table(
    ...     pd.DataFrame({"a": [1, 2], "b": [True, False], "y": [3, 4]}), None, target="y"
    ... )
    >>> table.X, table.feature_names, table.target_name
    (array([[1., 1.],
           [2., 0.]]), ['a', 'b'], 'y')
    """
    frame = (
        data.to_frame(name="x0" if data.name is None else data.name) if is_series(data) else data
    )
    source = f"pandas {type(data).__name__}"
    describe_row = _row_namer(frame.index)
    check_unique_names(list(frame.columns), source)
    if target is not None:
        if y is not None:
            raise TargetError("give the target either as y or as target=, not both")
        t = find_target(list(frame.columns), target, source)
        y, frame = frame.iloc[:, t], frame.drop(columns=frame.columns[t])
    elif y is None:
        raise TargetError(
            f"no target: y is None and target is None; name the target column of the "
            f"{source} with target=... or pass y"
        )
    check_not_empty(frame.shape, source)
    y_values, y_missing = _target_values(y, frame.index)
    check_target_shape(y_values)
    check_same_length(frame.shape[0], len(y_values))
    X = _features(frame, describe_row)
    y_name = str(y.name) if is_series(y) and y.name is not None else None
    return Table(
        X, y_values, [str(c) for c in frame.columns], y_name, source, describe_row, y_missing
    )


def series_values(series: Any) -> tuple[np.ndarray, np.ndarray]:
    """A Series as a NumPy array (float64 when numeric) and its missing-value mask.

    Examples
    --------
    >>> import pandas as pd
    >>> series_values(pd.Series([1, None], dtype="Int64"))
    (array([ 1., nan]), array([False,  True]))
    """
    from pandas.api import types

    missing = np.asarray(series.isna(), dtype=bool)
    if is_real_dtype(series.dtype):
        return series.to_numpy(dtype=np.float64, na_value=np.nan), missing
    if types.is_complex_dtype(series.dtype):
        return series.to_numpy(), missing
    return series.to_numpy(dtype=object), missing


def is_real_dtype(dtype: Any) -> bool:
    """Whether a pandas dtype holds real numbers (booleans included), as dpglm reads them.

    Examples
    --------
    >>> import pandas as pd
    >>> is_real_dtype(pd.Series([True]).dtype), is_real_dtype(pd.Series(["a"]).dtype)
    (True, False)
    """
    from pandas.api import types

    return bool(
        types.is_bool_dtype(dtype)
        or (types.is_numeric_dtype(dtype) and not types.is_complex_dtype(dtype))
    )


def _features(frame: Any, describe_row: RowNamer) -> np.ndarray:
    names = [str(c) for c in frame.columns]
    X = np.empty(frame.shape, dtype=np.float64, order="F")
    for j in range(frame.shape[1]):
        series = frame.iloc[:, j]
        values, missing = series_values(series)
        column = feature_column(names, j)
        if not is_real_dtype(series.dtype):
            refuse_column(
                values,
                column=column,
                describe_row=describe_row,
                missing=missing,
                dtype_name=str(series.dtype),
            )
        X[:, j] = to_float_column(
            values, column=column, describe_row=describe_row, missing=missing
        )
    return X


def _target_values(y: Any, index: Any) -> tuple[np.ndarray, np.ndarray | None]:
    if is_dataframe(y):
        if y.shape[1] != 1:
            raise ShapeMismatchError(f"y must be 1-D, got a DataFrame with {y.shape[1]} columns")
        y = y.iloc[:, 0]
    if is_series(y):
        if len(y) == len(index) and not y.index.equals(index):
            raise ShapeMismatchError(
                "the index of y differs from the index of X, so rows would be paired "
                "by position while pandas pairs them by label; align them (or pass "
                "y.to_numpy())"
            )
        return series_values(y)
    return np.asarray(y), None


def _row_namer(index: Any) -> RowNamer:
    # A default RangeIndex says nothing beyond the position.
    if type(index).__name__ == "RangeIndex" and index.start == 0 and index.step == 1:
        return plain_row
    return labelled_rows(index)
