"""Reading a saved model's feature columns from a data file, for ``predict`` and ``score``.

Unlike :func:`dpglm.data.load`, which reads every column but the target as a
feature, :func:`read_features` reads only the columns a model was fitted on:
by the model's feature names when it has them (whatever else the file holds),
else every column but ``--target``. :func:`read_scored` reads the same
columns and the target beside them. Both read a CSV or Parquet file, or a
directory or glob pattern of them, as :func:`dpglm.data.load` does (through
:mod:`dpglm.data.directories`: Arrow parses only the columns used), and a
LIBSVM file through :func:`dpglm.data.load`.
"""

from __future__ import annotations

import numpy as np

from dpglm.exceptions import DataError, ShapeMismatchError, TargetError


def read_features(path, *, names=None, n_features, target=None) -> np.ndarray:
    """The feature matrix of a data file (or directory, or pattern), for a model's predictions.

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
    from dpglm.data.directories import read_scan, scan_dataset

    if is_libsvm_file(path):
        from dpglm.data import load

        return load(path, n_features=n_features).X
    scan = scan_dataset(path)
    columns, _ = _select_columns(
        scan.header, names=names, target=target, n_features=n_features, shown=scan.shown
    )
    return read_scan(scan, features=columns, target=None, task="regression").X


def read_scored(path, *, names=None, n_features, target=None, task, classes=None):
    """The features and the target of a data file, for scoring a model on it.

    The features are the columns :func:`read_features` reads; the target is
    the column named ``target`` (default: the last one), which must not be one
    of the model's features. LIBSVM files carry their labels.

    Parameters
    ----------
    path : str or os.PathLike
        A CSV, LIBSVM or Parquet file, or a directory or glob pattern of CSV
        or Parquet files (see :func:`dpglm.data.dataset_files`).
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
    from dpglm.data.directories import read_scan, scan_dataset
    from dpglm.data.target import make_target

    if is_libsvm_file(path):
        from dpglm.data import load

        data = load(path, target=target, task=task, n_features=n_features, classes=classes)
        return data.X, data.y, None
    scan = scan_dataset(path)
    t = _target_index(scan.header, target, names, scan.shown)
    name = scan.header[t]
    columns, _ = _select_columns(
        scan.header, names=names, target=name, n_features=n_features, shown=scan.shown
    )
    read = read_scan(scan, features=columns, target=t, task=task)
    y, _ = make_target(
        read.y,
        task,
        name=name,
        describe_row=read.describe_row,
        missing=read.y_missing,
        classes=classes,
    )
    return read.X, y, name


def read_raw_scored(path, *, numeric, text, target=None, task, classes=None):
    """The columns of a model fitted on a raw table, and the target, for scoring it.

    The columns are read by name, typed as the model has them (see
    :func:`dpglm.cli.raw_tables.read_raw_columns`); the target is the column
    named ``target`` (default: the last one), which must not be one of the
    model's columns.

    Parameters
    ----------
    path : str or os.PathLike
        A CSV or Parquet file, or a directory or glob pattern of them.
    numeric, text : sequence of str
        The model's numeric and text columns (its ``encoding_``).
    target : str, optional
    task : {"regression", "classification"}
    classes : array-like of labels, optional
        Classification: the model's classes.

    Returns
    -------
    X : pyarrow.Table
    y : ndarray of float64
        The target, or its class codes (as :func:`read_scored` gives them).
    target_name : str

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "new.csv")
    >>> _ = open(path, "w").write("job,age,y\\ncook,31,no\\nvet,45,yes\\n")
    >>> X, y, name = read_raw_scored(
    ...     path, numeric=["age"], text=["job"], task="classification", classes=["no", "yes"]
    ... )
    >>> X.column_names, y.tolist(), name
    (['age', 'job'], [-1.0, 1.0], 'y')
    """
    from dpglm.cli.raw_tables import read_raw_columns
    from dpglm.data.directories import scan_dataset

    if is_libsvm_file(path):
        raise DataError(
            f"{str(path)!r} is a LIBSVM file; the model was fitted on a table with text "
            "columns: score it on a CSV or Parquet file with its columns"
        )
    scan = scan_dataset(path)
    names = [*numeric, *text]
    name = scan.header[_target_index(scan.header, target, names, scan.shown)]
    raw = read_raw_columns(
        path, numeric=numeric, text=text, target=name, task=task, classes=classes
    )
    return raw.features, raw.y, name


def is_libsvm_file(path):
    """Whether ``path`` is one LIBSVM file (not a directory or a pattern of files).

    Examples
    --------
    >>> is_libsvm_file("train.svm.gz"), is_libsvm_file("train.csv")
    (True, False)
    """
    from dpglm.data.directories import is_dataset_path
    from dpglm.data.files import guess_format

    return not is_dataset_path(path) and guess_format(path) == "svmlight"


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
