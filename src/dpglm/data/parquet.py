"""Reading Parquet files through pyarrow, an optional dependency."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from dpglm.data.columns import refuse_column, to_float_column
from dpglm.data.locations import feature_column, plain_row
from dpglm.data.table import Table, check_unique_names, feature_indices, find_target
from dpglm.exceptions import MissingDependencyError, UnreadableFileError


def import_pyarrow() -> tuple[Any, Any]:
    """Import ``pyarrow`` and ``pyarrow.parquet``, or say how to install them.

    Raises
    ------
    MissingDependencyError
        pyarrow is not installed.

    Examples
    --------
    >>> pa, pq = import_pyarrow()
    >>> pq.__name__
    'pyarrow.parquet'
    """
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as err:
        raise MissingDependencyError(
            "reading Parquet files needs pyarrow, which is not installed; install it with "
            "`pip install pyarrow` (or `pip install dpglm[parquet]`)"
        ) from err
    return pyarrow, pyarrow.parquet


def read_parquet(raw: bytes, path: str | os.PathLike[str], *, target: str | None) -> Table:
    """Read Parquet content into a :class:`Table`.

    Feature columns must have an integer, floating-point or boolean type
    without nulls; the target is the column named ``target`` (default: the
    last one) and may hold strings for classification. The index of a
    DataFrame written by pandas (stored as an extra column) is not a feature.

    Examples
    --------
    >>> import io
    >>> pa, pq = import_pyarrow()
    >>> buffer = io.BytesIO()
    >>> pq.write_table(pa.table({"a": [1.5, 2.0], "y": ["no", "yes"]}), buffer)
    >>> table = read_parquet(buffer.getvalue(), "t.parquet", target=None)
    >>> table.X.ravel(), table.y, table.feature_names
    (array([1.5, 2. ]), array(['no', 'yes'], dtype=object), ['a'])
    """
    pa, _ = import_pyarrow()
    shown = repr(os.fspath(path))
    data = open_table(raw, shown)
    header = list(data.column_names)
    check_unique_names(header, shown)
    t = find_target(header, target, shown)
    features = feature_indices(len(header), t, shown)
    names = [header[j] for j in features]
    X = feature_matrix(data, features, names)
    y, y_missing = _column_values(pa, data.column(t))
    return Table(X, y, names, header[t], Path(path).name, plain_row, y_missing)


def open_table(raw: bytes, shown: str) -> Any:
    """The pyarrow table of Parquet content, without a pandas index column.

    Examples
    --------
    >>> import io
    >>> pa, pq = import_pyarrow()
    >>> buffer = io.BytesIO()
    >>> pq.write_table(pa.table({"a": [1.0]}), buffer)
    >>> open_table(buffer.getvalue(), "'t.parquet'").column_names
    ['a']
    """
    pa, pq = import_pyarrow()
    try:
        data = pq.read_table(pa.BufferReader(raw))
    except (pa.ArrowException, OSError, ValueError) as err:
        raise UnreadableFileError(
            f"cannot read {shown}: not a valid Parquet file ({err})"
        ) from err
    return data.drop_columns(_pandas_index_columns(data))


def feature_matrix(data: Any, columns: list[int], names: list[str]) -> np.ndarray:
    """Columns ``columns`` of a pyarrow table as a float64 Fortran-order matrix.

    ``names`` are the features' names, for errors that name the column and
    row of a non-numeric or missing value.

    Examples
    --------
    >>> pa, _ = import_pyarrow()
    >>> feature_matrix(pa.table({"a": [1, 2], "b": [0.5, 1.5]}), [1, 0], ["b", "a"])
    array([[0.5, 1. ],
           [1.5, 2. ]])
    """
    pa, _ = import_pyarrow()
    X = np.empty((data.num_rows, len(columns)), dtype=np.float64, order="F")
    for k, j in enumerate(columns):
        values, missing = _column_values(pa, data.column(j))
        column = feature_column(names, k)
        if not _is_numeric(pa, data.column(j).type):
            refuse_column(
                values,
                column=column,
                describe_row=plain_row,
                missing=missing,
                dtype_name=str(data.column(j).type),
            )
        X[:, k] = to_float_column(values, column=column, describe_row=plain_row, missing=missing)
    return X


def _pandas_index_columns(data: Any) -> list[str]:
    # A DataFrame written with a non-default index stores it as an extra column;
    # it labels the rows and is not a feature.
    metadata = data.schema.pandas_metadata or {}
    return [c for c in metadata.get("index_columns", []) if isinstance(c, str)]


def _is_numeric(pa: Any, arrow_type: Any) -> bool:
    types = pa.types
    return bool(
        types.is_integer(arrow_type)
        or types.is_floating(arrow_type)
        or types.is_boolean(arrow_type)
    )


def _column_values(pa: Any, column: Any) -> tuple[np.ndarray, np.ndarray]:
    """The column as a NumPy array, and which cells are null."""
    import pyarrow.compute as pc

    missing = np.asarray(pc.is_null(column), dtype=bool)
    if column.null_count and _is_numeric(pa, column.type):
        # Nulls would turn integers into floats and booleans into objects.
        column = pc.fill_null(column, False if pa.types.is_boolean(column.type) else 0)
    return np.asarray(column.to_numpy()), missing
