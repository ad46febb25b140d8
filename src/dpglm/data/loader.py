"""The one entry point: :func:`load`."""

from __future__ import annotations

import os
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from dpglm.data.csv_reader import read_csv
from dpglm.data.dataset import Dataset
from dpglm.data.directories import is_dataset_path, read_dataset
from dpglm.data.files import guess_format, read_bytes
from dpglm.data.frames import frame_table, is_dataframe, is_series
from dpglm.data.locations import RowNamer, plain_row
from dpglm.data.parquet import read_parquet
from dpglm.data.svmlight import check_zero_based, read_svmlight
from dpglm.data.table import Table
from dpglm.data.target import check_target_shape, check_task, make_target
from dpglm.data.validation import (
    check_2d,
    check_n_features,
    check_n_features_arg,
    check_not_empty,
    check_same_length,
    dense_features,
    sparse_features,
)
from dpglm.exceptions import ShapeMismatchError, TargetError


def load(
    data: Any,
    y: Any = None,
    *,
    target: Hashable | None = None,
    task: str = "regression",
    n_features: int | None = None,
    zero_based: bool | str = "auto",
    classes: Any = None,
) -> Dataset:
    """Read and validate a dataset from a file, an array or a data frame.

    Parameters
    ----------
    data : str, os.PathLike, ndarray, scipy sparse matrix / array, pandas DataFrame or Series
        Where the data is:

        - a path to a file, whose format comes from its extension:
          CSV (``.csv``, ``.csv.gz``; comma-separated, UTF-8, header row
          required; parsed by pyarrow), LIBSVM / svmlight (``.svm``,
          ``.svm.gz``, ``.libsvm``, ``.libsvm.gz``) or Parquet (``.parquet``,
          ``.pq``);
        - a directory, or a glob pattern such as ``"data/*.parquet"``, of CSV
          (plain or gzip) or Parquet files, all of one format and with the
          same columns in the same order: one dataset whose rows are the
          files' rows, file after file in the order of
          :func:`~dpglm.data.directories.dataset_files` (sorted by name;
          names starting with ``.`` or ``_`` are skipped). The files are read
          one at a time (Parquet: a few columns of a row group at a time), so
          memory holds about the dataset's matrix and one file or batch. Classification
          labels are those of all the files together;
        - a 2-D NumPy array (or nested lists) of features, with ``y``;
        - a SciPy sparse matrix or array in any format, with ``y``;
        - a pandas DataFrame, with ``target=`` naming the target column or
          ``y`` given; or a Series as a single feature, with ``y``.
    y : array-like or pandas Series, optional
        The target, for in-memory ``data``; must be None for files.
    target : str, optional
        The target column of a CSV / Parquet file (default: the last column)
        or of a DataFrame. LIBSVM files carry their labels in the first field.
    task : {"regression", "classification"}
        For ``"classification"`` the target must hold at least two distinct
        labels (numbers, strings or booleans); two are encoded as -1 / +1,
        ``K > 2`` as their positions ``0, ..., K-1`` in sorted order, and the
        mapping is kept in ``Dataset.labels``.
    n_features : int, optional
        The number of features the data must have. For LIBSVM files it also
        sets the width of ``X`` (columns beyond the largest index in the file
        are all zero), as with ``sklearn.datasets.load_svmlight_file``.
    zero_based : {"auto", True, False}
        Whether LIBSVM feature indices start at 0; ``"auto"`` reads the file
        as 1-based unless some index is 0, and then warns naming its line.
    classes : array-like of labels, optional
        Classification: the public label set, fixed without the data. The
        target must hold only these labels (compared as the target is read:
        a file's labels are integers, floats or text, see the Notes), and may
        lack some of them; ``Dataset.classes`` is this set, sorted. None: the
        labels are read from the target.

    Returns
    -------
    Dataset
        ``X`` is float64 in the layout closest to the input: C-ordered arrays
        stay C-ordered and CSR matrices CSR (the rows sample-based solvers
        read); other arrays become Fortran-ordered and other sparse formats
        ``scipy.sparse.csc_matrix`` (the columns coordinate methods read).
        Files give Fortran-ordered arrays (CSV, Parquet) or the sparse
        layout of their reader (LIBSVM). Sparse results have sorted indices
        and no duplicates. ``X`` may share memory with the input array when
        no conversion was needed; each solver converts it once to the layout
        it reads.

    Raises
    ------
    NonFiniteValueError
        A feature or target value is NaN, infinite or missing (empty CSV cell,
        ``NA``, None, pandas NA, Parquet null). The message names the row (and
        the file line), the column name when known and its index.
    NonNumericColumnError
        A feature column holds strings, categories, dates or complex numbers;
        the message gives an example value and its row. Boolean columns are
        accepted as 0 / 1.
    TargetError
        No target (unknown ``target=`` column, or ``y`` missing for an
        array); a non-numeric regression target; or a classification target
        with fewer than two distinct labels, or, with ``classes``, with a
        label outside them (the message names its row).
    EmptyDataError
        No rows, or no feature columns.
    ShapeMismatchError
        X is not 2-D, y is not 1-D, their lengths differ, or the number of
        features is not ``n_features``; a file of a directory or pattern does
        not have the columns of the first (the message names both and the
        differing columns).
    UnreadableFileError
        The file is missing, not readable, not valid gzip, UTF-8, CSV or
        Parquet (e.g. truncated), has a ragged row or a malformed LIBSVM
        token, or has an unknown extension; a directory holds no data files
        or a pattern matches nothing; a directory or pattern holds a file
        that is not CSV or Parquet, or mixes the two. The message names the
        path and, where it applies, the file and the line.
    MissingDependencyError
        A Parquet file is given and pyarrow, a dependency, is missing.

    Notes
    -----
    Nothing is dropped, truncated or coerced silently; what is converted
    loses no information:

    - integer, unsigned and float32 features become float64 (exactly, for
      integers up to 2**53 in magnitude); boolean
      features (NumPy, pandas, Parquet, or a CSV column of ``True`` /
      ``False``) become 0.0 / 1.0;
    - CSV cells are parsed as Python's ``float`` parses them; an empty cell or
      ``NA``, ``N/A``, ``nan``, ``null``, ``None``, ``?`` (any case) is a
      missing value. A CSV classification target is read as integers if
      every cell is one, else as floats if every cell is a number, else as
      text, so ``"10"`` sorts after ``"9"``;
    - LIBSVM labels that are all whole numbers become integers; blank lines
      and ``#`` comments are skipped, as are blank lines in CSV files;
    - the index of a DataFrame written to Parquet by pandas is not a feature.

    Messages count rows from 0, as NumPy does, and file lines from 1; for a
    DataFrame whose index is not the default one they also give the index
    label. For a directory or pattern they name the file and count the row
    within that file, e.g. ``row 3 (line 5 of 'parts/b.csv')`` or
    ``row 3 of 'parts/b.parquet'``.

    Examples
    --------
    >>> import numpy as np
    >>> ds = load(
    ...     np.array([[0.5, 1.0], [2.0, 0.0], [1.0, 1.0]]),
    ...     ["no", "yes", "no"],
    ...     task="classification",
    ... )
    >>> ds.X.flags.c_contiguous, ds.y, ds.classes
    (True, array([-1.,  1., -1.]), array(['no', 'yes'], dtype='<U3'))
    >>> load(np.array([[1.0, np.inf]]), [0.0])
    Traceback (most recent call last):
    ...
    dpglm.exceptions.NonFiniteValueError: feature column 1 has a non-finite value inf at row 0; expected finite numbers (impute or drop such rows first)
    """  # noqa: E501
    check_task(task)
    check_zero_based(zero_based)
    n_features = check_n_features_arg(n_features)
    if isinstance(data, str | os.PathLike):
        if y is not None:
            raise TargetError(
                "y must be None when data is a file: the target is read from the file "
                "(choose its column with target=)"
            )
        if is_dataset_path(data):
            table = read_dataset(data, target=_column_name(target), task=task)
            check_not_empty(table.X.shape, repr(os.fspath(data)))
        else:
            table = _read_file(
                data, target=target, task=task, n_features=n_features, zero_based=zero_based
            )
    else:
        table = _read_memory(data, y, target=target)
    check_n_features(table.X.shape[1], n_features)
    return _dataset(table, task, classes)


def load_rows(
    X: Any, y: Any, *, first_row: int, task: str = "regression", classes: Any = None
) -> Dataset:
    """:func:`load` of arrays that are rows ``first_row, first_row + 1, ...`` of a larger set.

    What a row chunk of a Dask array or of an array cut into chunks reads:
    the same checks as :func:`load`, whose messages name the rows by their
    place in the whole set, not in the chunk.

    Examples
    --------
    >>> load_rows(np.array([[1.0], [np.nan]]), [0.0, 1.0], first_row=200)
    Traceback (most recent call last):
    ...
    dpglm.exceptions.NonFiniteValueError: feature column 0 has a non-finite value nan at row 201; expected finite numbers (impute or drop such rows first)
    """  # noqa: E501
    check_task(task)
    if isinstance(X, str | os.PathLike) or is_dataframe(X) or is_series(X):
        raise TypeError(f"load_rows reads arrays, got {type(X).__name__}; use load")
    first = int(first_row)
    table = _read_memory(X, y, target=None, describe_row=lambda i: plain_row(first + i))
    return _dataset(table, task, classes)


def _dataset(table: Table, task: str, classes: Any) -> Dataset:
    y_codes, labels = make_target(
        table.y,
        task,
        name=table.target_name,
        describe_row=table.describe_row,
        missing=table.y_missing,
        classes=classes,
    )
    return Dataset(
        table.X,
        y_codes,
        task,
        labels=labels,
        feature_names=table.feature_names,
        target_name=table.target_name,
        source=table.source,
    )


def _read_file(
    path: str | os.PathLike[str],
    *,
    target: Hashable | None,
    task: str,
    n_features: int | None,
    zero_based: bool | str,
) -> Table:
    fmt = guess_format(path)
    if fmt == "csv":
        # Arrow reads the file itself, in parallel blocks, never all of it at once.
        table = read_csv(path, target=_column_name(target), task=task)
    elif fmt == "svmlight":
        if target is not None:
            raise TargetError(
                f"target={target!r} does not apply to LIBSVM file {Path(path).name}: "
                "the label is the first field of each line"
            )
        table = read_svmlight(read_bytes(path), path, n_features=n_features, zero_based=zero_based)
    else:
        table = read_parquet(read_bytes(path), path, target=_column_name(target))
    check_not_empty(table.X.shape, repr(os.fspath(path)))
    return table


def _read_memory(
    data: Any, y: Any, *, target: Hashable | None, describe_row: RowNamer = plain_row
) -> Table:
    if is_dataframe(data) or is_series(data):
        return frame_table(data, y, target=target)
    if target is not None:
        raise TargetError(
            f"target={target!r} names a column, which only files and DataFrames have; "
            "pass the target as y"
        )
    if sp.issparse(data):
        source = f"scipy.sparse {type(data).__name__}"
        check_2d(data.shape)
        X = data
    else:
        source = "numpy array"
        X = _as_array(data)
        check_2d(X.shape)
    check_not_empty(X.shape, source)
    if y is None:
        raise TargetError(
            f"no target: y is None; a {source} holds only features, pass the target as y"
        )
    y_values, y_missing, y_name = _target_input(y)
    check_target_shape(y_values)
    check_same_length(X.shape[0], len(y_values))
    if sp.issparse(X):
        X = sparse_features(X, describe_row=describe_row)
    else:
        X = dense_features(X, describe_row=describe_row)
    return Table(X, y_values, None, y_name, source, describe_row, y_missing=y_missing)


def _as_array(data: Any) -> np.ndarray:
    try:
        return np.asarray(data)
    except ValueError as err:
        raise ShapeMismatchError(
            f"X must be a 2-D array of shape (n_samples, n_features); "
            f"it could not be read as one ({err})"
        ) from err


def _target_input(y: Any) -> tuple[np.ndarray, np.ndarray | None, str | None]:
    if sp.issparse(y):
        raise ShapeMismatchError("y must be a dense 1-D array, got a sparse matrix")
    if is_series(y):
        from dpglm.data.frames import series_values

        values, missing = series_values(y)
        return values, missing, None if y.name is None else str(y.name)
    try:
        return np.asarray(y), None, None
    except ValueError as err:
        raise ShapeMismatchError(
            f"y must be a 1-D array; it could not be read as one ({err})"
        ) from err


def _column_name(target: Hashable | None) -> str | None:
    if target is None or isinstance(target, str):
        return target
    raise TypeError(f"target must be a column name (str) for a file, got {target!r}")
