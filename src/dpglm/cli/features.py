"""Reading a saved model's feature columns from a data file, for ``dpglm predict``.

Unlike :func:`dpglm.data.load`, which reads features *and* a target,
:func:`read_features` reads only the columns a model was fitted on: by the
model's feature names when it has them (whatever else the file holds), else
every column but ``--target``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from dpglm.exceptions import DataError, ShapeMismatchError


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
    from dpglm.data.columns import parse_text_column
    from dpglm.data.csv_reader import split_records
    from dpglm.data.files import decode_text, read_bytes
    from dpglm.data.locations import feature_column, file_rows
    from dpglm.data.table import check_unique_names

    header, rows, lines = split_records(decode_text(read_bytes(path), path), shown)
    check_unique_names(header, shown)
    columns, used = _select_columns(
        header, names=names, target=target, n_features=n_features, shown=shown
    )
    cells = np.array(rows, dtype=str).reshape(len(rows), len(header))
    describe_row = file_rows(lines, Path(path).name)
    X = np.empty((len(rows), len(columns)), dtype=np.float64, order="F")
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
