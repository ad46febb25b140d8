"""Reading a saved model's feature columns from a data file, for ``predict`` and ``score``.

Unlike :func:`dpglm.data.load`, which reads every column but the target as a
feature, :func:`read_features` reads only the columns a model was fitted on:
by the model's feature names when it has them (whatever else the file holds),
else every column but ``--target``. :func:`read_scored` reads the same
columns and the target beside them.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from dpglm.exceptions import DataError, ShapeMismatchError, TargetError


def read_features(path, *, names=None, n_features, target=None) -> np.ndarray:
    """The feature matrix of a data file, for a model's predictions.

    CSV and Parquet: the columns named ``names`` (the model's feature names),
    in that order, whatever else the file holds (the target, identifiers);
    without names, every column but ``target``. LIBSVM: the features by
    index, the labels ignored.

    Raises
    ------
    DataError
        A feature column is missing or not numeric, or the width differs
        from ``n_features``; the message names the file and column.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "new.csv")
    >>> _ = open(path, "w").write("id,b,a\\nx,1,2\\ny,3,4\\n")
    >>> read_features(path, names=["a", "b"], n_features=2)
    array([[2., 1.],
           [4., 3.]])
    """
    from dpglm.data import load
    from dpglm.data.files import guess_format

    fmt = guess_format(path)
    shown = repr(os.fspath(path))
    if fmt == "svmlight":
        return load(path, n_features=n_features).X
    if fmt == "csv":
        return _csv_features(path, shown, names=names, n_features=n_features, target=target)
    return _parquet_features(path, shown, names=names, n_features=n_features, target=target)


def read_scored(path, *, names=None, n_features, target=None, task, classes=None):
    """The features and the target of a data file, for scoring a model on it.

    The features are the columns :func:`read_features` reads; the target is
    the column named ``target`` (default: the last one), which must not be one
    of the model's features. LIBSVM files carry their labels.

    Parameters
    ----------
    path : str or os.PathLike
        A CSV, LIBSVM or Parquet file.
    names : list of str, optional
        The model's feature names.
    n_features : int
        The model's number of features.
    target : str, optional
        The target column of a CSV / Parquet file.
    task : {"regression", "classification"}
    classes : array-like of labels, optional
        Classification: the model's classes (two or more, sorted); every
        label of the file must be one of them, and it may lack some.

    Returns
    -------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    y : ndarray of float64
        The target, or its class codes as
        :class:`~dpglm.data.labels.ClassLabels` encodes them: -1 / +1 for two
        classes (``classes[0]`` is -1), the position ``0, ..., K-1`` of each
        label in ``classes`` for more.
    target_name : str or None
        The target column (None for LIBSVM files).

    Raises
    ------
    DataError
        A feature or the target column is missing or not numeric, the target
        is one of the model's features, or a label is not one of
        ``classes``; the message names the file, column and row.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "new.csv")
    >>> _ = open(path, "w").write("b,a,y\\n1,2,yes\\n3,4,no\\n")
    >>> X, y, name = read_scored(
    ...     path, names=["a", "b"], n_features=2, task="classification", classes=["no", "yes"]
    ... )
    >>> X.tolist(), y.tolist(), name
    ([[2.0, 1.0], [4.0, 3.0]], [1.0, -1.0], 'y')
    >>> read_scored(
    ...     path, names=["a", "b"], n_features=2, task="classification", classes=["no", "x", "yes"]
    ... )[1].tolist()
    [2.0, 0.0]
    """
    from dpglm.data import load
    from dpglm.data.files import guess_format

    fmt = guess_format(path)
    shown = repr(os.fspath(path))
    if fmt == "svmlight":
        data = load(path, target=target, task=task, n_features=n_features, classes=classes)
        return data.X, data.y, None
    if fmt == "csv":
        header, cells, describe_row = _csv_cells(path, shown)
    else:
        from dpglm.data.files import read_bytes
        from dpglm.data.parquet import open_table

        table = open_table(read_bytes(path), shown)
        header, cells, describe_row = list(table.column_names), None, None
    t = _target_index(header, target, names, shown)
    columns, used = _select_columns(
        header, names=names, target=header[t], n_features=n_features, shown=shown
    )
    if fmt == "csv":
        X = _csv_matrix(cells, columns, used, describe_row)
        y = _csv_target(cells[:, t], header[t], task, classes, describe_row)
    else:
        from dpglm.data.parquet import feature_matrix

        X = feature_matrix(table, columns, used)
        y = _parquet_target(table.column(t), header[t], task, classes)
    return X, y, header[t]


def _target_index(header, target, names, shown):
    """The target column's index: ``target``, else the last column; never a model feature."""
    from dpglm.data.table import check_unique_names, find_target

    check_unique_names(header, shown)
    t = find_target(header, target, shown)
    if names is not None and header[t] in names:
        if target is not None:
            raise TargetError(
                f"--target {target!r} is a feature of the model, not a target ({shown})"
            )
        raise TargetError(
            f"the target of {shown} is by default its last column, {header[t]!r}, which is a "
            "feature of the model; name the target column with --target"
        )
    return t


def _csv_target(cells, name, task, classes, describe_row):
    """The target of a CSV file: numbers (regression) or the class codes of ``classes``."""
    from dpglm.data.columns import TARGET, parse_text_column, parse_text_labels
    from dpglm.data.locations import target_column
    from dpglm.data.target import make_target

    label = target_column(name)
    if task == "classification":
        values = parse_text_labels(cells, column=label, describe_row=describe_row)
    else:
        values = parse_text_column(cells, column=label, describe_row=describe_row, role=TARGET)
    y, _ = make_target(values, task, name=name, describe_row=describe_row, classes=classes)
    return y


def _parquet_target(column, name, task, classes):
    """The target of a Parquet column, its nulls reported as missing values."""
    import pyarrow.compute as pc

    from dpglm.data.target import make_target

    missing = np.asarray(pc.is_null(column), dtype=bool)
    # with nulls, a list of objects keeps each null as None, which the checks name as missing
    values = (
        np.asarray(column.to_pylist(), dtype=object) if column.null_count else column.to_numpy()
    )
    y, _ = make_target(values, task, name=name, missing=missing, classes=classes)
    return y


def _select_columns(header, *, names, target, n_features, shown):
    """Indices of the feature columns of a file, by the model's feature names if any."""
    from dpglm.data.locations import preview

    if names is not None:
        position = {name: j for j, name in enumerate(header)}
        missing = [name for name in names if name not in position]
        if missing:
            raise DataError(
                f"{shown} has no column {missing[0]!r}, a feature of the model "
                f"({len(missing)} of its {len(names)} features are missing); "
                f"the file's columns: {preview(list(header), limit=20)}"
            )
        return [position[name] for name in names], list(names)
    columns = [j for j, name in enumerate(header) if name != target]
    if len(columns) != n_features:
        raise ShapeMismatchError(
            f"{shown} has {len(columns)} feature columns"
            + (f" (all but --target {target!r})" if target is not None else "")
            + f"; the model has {n_features} features and records no feature names, so "
            "every column but --target is a feature"
        )
    return columns, [header[j] for j in columns]


def _csv_features(path, shown, *, names, n_features, target):
    from dpglm.data.table import check_unique_names

    header, cells, describe_row = _csv_cells(path, shown)
    check_unique_names(header, shown)
    columns, used = _select_columns(
        header, names=names, target=target, n_features=n_features, shown=shown
    )
    return _csv_matrix(cells, columns, used, describe_row)


def _csv_cells(path, shown):
    """The header of a CSV file, its cells as text, and how messages name its rows."""
    from dpglm.data.csv_reader import split_records
    from dpglm.data.files import decode_text, read_bytes
    from dpglm.data.locations import file_rows

    header, rows, lines = split_records(decode_text(read_bytes(path), path), shown)
    cells = np.array(rows, dtype=str).reshape(len(rows), len(header))
    return header, cells, file_rows(lines, Path(path).name)


def _csv_matrix(cells, columns, used, describe_row):
    """Columns ``columns`` of CSV cells, named ``used``, as float64 features."""
    from dpglm.data.columns import parse_text_column
    from dpglm.data.locations import feature_column

    X = np.empty((cells.shape[0], len(columns)), dtype=np.float64, order="F")
    for k, j in enumerate(columns):
        X[:, k] = parse_text_column(
            cells[:, j], column=feature_column(used, k), describe_row=describe_row
        )
    return X


def _parquet_features(path, shown, *, names, n_features, target):
    from dpglm.data.files import read_bytes
    from dpglm.data.parquet import feature_matrix, open_table

    data = open_table(read_bytes(path), shown)
    columns, used = _select_columns(
        list(data.column_names), names=names, target=target, n_features=n_features, shown=shown
    )
    return feature_matrix(data, columns, used)
