"""Reading Parquet files through pyarrow, an optional dependency."""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from dpglm.data.columns import refuse_column, to_float_column
from dpglm.data.locations import RowNamer, feature_column, plain_row
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
        X[:, k] = _feature_values(pa, data.column(j), feature_column(names, k), plain_row)
    return X


def _feature_values(pa: Any, data: Any, column: str, describe_row: RowNamer) -> np.ndarray:
    """A pyarrow column of features as float64; ``column`` names it in messages."""
    if data.num_chunks == 1 and not data.null_count and pa.types.is_floating(data.type):
        # The common case, without a copy: Arrow's buffer seen by NumPy.
        values = data.chunk(0).to_numpy(zero_copy_only=True)
        return to_float_column(values, column=column, describe_row=describe_row)
    values, missing = _column_values(pa, data)
    if not _is_numeric(pa, data.type):
        refuse_column(
            values,
            column=column,
            describe_row=describe_row,
            missing=missing,
            dtype_name=str(data.type),
        )
    return to_float_column(values, column=column, describe_row=describe_row, missing=missing)


def parquet_columns(path: str | os.PathLike[str], shown: str) -> tuple[list[str], int]:
    """The column names of a Parquet file and its number of rows, read from its footer.

    The index of a DataFrame written by pandas is not among the names.

    Raises
    ------
    UnreadableFileError
        The file is not a valid Parquet file (e.g. truncated); the message
        names it.

    Examples
    --------
    >>> import tempfile
    >>> pa, pq = import_pyarrow()
    >>> path = Path(tempfile.mkdtemp(), "t.parquet")
    >>> pq.write_table(pa.table({"a": [1.5, 2.0], "y": [0, 1]}), path)
    >>> parquet_columns(path, "'t.parquet'")
    (['a', 'y'], 2)
    """
    _, pq = import_pyarrow()
    with _parquet_errors(shown):
        parquet = pq.ParquetFile(os.fspath(path))
        try:
            schema = parquet.schema_arrow
            index = set(_pandas_index_columns(schema))
            return [c for c in schema.names if c not in index], parquet.metadata.num_rows
        finally:
            parquet.close()


def read_parquet_rows(
    path: str | os.PathLike[str],
    shown: str,
    *,
    features: list[str],
    target: str | None,
    out: np.ndarray,
    describe_row: RowNamer = plain_row,
    batch_bytes: int = 1 << 23,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Read a Parquet file a batch at a time: features into ``out``, the target as it is.

    Only the columns named are read, a row group (the rows Parquet stores
    together) and a few of its columns at a time, about ``batch_bytes`` of
    float64 values (one column at least): the file is never held whole, and
    each batch's columns go straight to their places in ``out``. Measured on
    10 files of 125,000 rows of 20 numbers (benchmarks/bench_ingest.py), this
    holds half the memory of ``ParquetFile.iter_batches`` (which decodes every
    column of a row group at once) beside ``out``, and is faster.

    Parameters
    ----------
    path : str or os.PathLike
    shown : str
        How messages name the file.
    features : list of str
        The feature columns, in the order of ``out``'s columns.
    target : str or None
        The target column, or None to read none.
    out : ndarray of float64, shape (n_rows, len(features))
        Where the features go: ``n_rows`` is the file's number of rows.
    describe_row : callable
        How messages name row ``i`` of the file.
    batch_bytes : int
        About how many bytes of values a batch holds.

    Returns
    -------
    y : list of ndarray
        The target's values, row group after row group (empty when ``target``
        is None).
    y_missing : list of ndarray of bool
        Which of them are null.

    Raises
    ------
    UnreadableFileError
        The file is not valid Parquet (e.g. a corrupt page), or holds another
        number of rows than ``out``; the message names it.
    NonFiniteValueError, NonNumericColumnError
        A bad feature cell; the message names its column and its row.

    Examples
    --------
    >>> import tempfile
    >>> pa, pq = import_pyarrow()
    >>> path = Path(tempfile.mkdtemp(), "t.parquet")
    >>> pq.write_table(pa.table({"a": [1.5, 2.0], "b": [1, 0], "y": ["no", "yes"]}), path)
    >>> out = np.empty((2, 2), order="F")
    >>> y, _ = read_parquet_rows(path, "'t.parquet'", features=["b", "a"], target="y", out=out)
    >>> out, np.concatenate(y)
    (array([[1. , 1.5],
           [0. , 2. ]]), array(['no', 'yes'], dtype=object))
    """
    pa, pq = import_pyarrow()
    wanted = [*features, target] if target is not None else list(features)
    y: list[np.ndarray] = []
    y_missing: list[np.ndarray] = []
    with _parquet_errors(shown):
        parquet = pq.ParquetFile(os.fspath(path))
        try:
            metadata = parquet.metadata
            counts = [metadata.row_group(g).num_rows for g in range(metadata.num_row_groups)]
            if sum(counts) != out.shape[0]:
                raise UnreadableFileError(
                    f"cannot read {shown}: its row groups hold {sum(counts)} rows, not "
                    f"{out.shape[0]}; the file is corrupt or was changed while it was read"
                )
            starts = np.cumsum([0, *counts])
            for group, first, batch in _batches(parquet, counts, wanted, batch_bytes):
                start, end = int(starts[group]), int(starts[group + 1])
                rows_named = _shifted(describe_row, start)
                for k, data in enumerate(batch.columns, start=first):
                    if k < len(features):
                        column = feature_column(features, k)
                        out[start:end, k] = _feature_values(pa, data, column, rows_named)
                    else:  # the target
                        values, missing = _column_values(pa, data)
                        y.append(values)
                        y_missing.append(missing)
                batch = data = None  # freed before the one after the next is read
        finally:
            parquet.close()
    return y, y_missing


def _batches(
    parquet: Any, counts: list[int], wanted: list[str], batch_bytes: int
) -> Iterator[tuple[int, int, Any]]:
    """``(row group, first column, table)`` of a file's batches, in order.

    A batch is some columns of a row group, about ``batch_bytes`` of values;
    while one is converted, the next is read (pyarrow releases the GIL) by
    another thread: two batches are held at most.
    """
    steps = [max(1, batch_bytes // (8 * max(rows, 1))) for rows in counts]
    tasks = [(g, first) for g, step in enumerate(steps) for first in range(0, len(wanted), step)]

    def read(group: int, first: int) -> Any:
        columns = wanted[first : first + steps[group]]
        table = parquet.read_row_group(group, columns=columns)
        return table.select(columns)  # in the order asked for

    with ThreadPoolExecutor(1) as reader:
        ahead = reader.submit(read, *tasks[0]) if tasks else None
        for i, (group, first) in enumerate(tasks):
            batch = ahead.result()
            ahead = reader.submit(read, *tasks[i + 1]) if i + 1 < len(tasks) else None
            yield group, first, batch
            del batch


@contextmanager
def _parquet_errors(shown: str) -> Iterator[None]:
    """Turn pyarrow's errors on a bad file into :class:`UnreadableFileError` naming it."""
    pa, _ = import_pyarrow()
    try:
        yield
    except (pa.ArrowException, OSError, EOFError) as err:
        raise UnreadableFileError(
            f"cannot read {shown}: not a valid Parquet file ({err})"
        ) from err


def _shifted(describe_row: RowNamer, start: int) -> RowNamer:
    """Names row ``i`` of a batch as row ``start + i`` of its file."""
    return lambda i: describe_row(start + i)


def _pandas_index_columns(data: Any) -> list[str]:
    # A DataFrame written with a non-default index stores it as an extra column;
    # it labels the rows and is not a feature. ``data`` is a table or a schema.
    schema = getattr(data, "schema", data)
    metadata = schema.pandas_metadata or {}
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
