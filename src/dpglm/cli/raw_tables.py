"""Raw tables: data files whose feature columns mix numbers and text, read as Arrow tables.

``dpglm fit`` reads such a CSV or Parquet file (or a directory or pattern of
them) with :func:`read_raw_table`, and ``predict`` and ``score`` read the
columns of a model fitted on one with :func:`read_raw_columns`; the
estimators one-hot encode the text columns themselves
(:mod:`dpglm.estimators.tables`). Nothing is coerced: a numeric column is
checked as :func:`dpglm.data.load` checks it (a missing or non-finite value
is an error naming the file, column and row), and a text column is read as
it is written, an empty CSV cell or a Parquet null being a missing value.

A CSV column is text when a cell of it is neither a number nor a
missing-value marker. A column of numbers with a few words is refused rather
than one-hot encoded, so that a typo does not turn a numeric column into
categories. A Parquet column is text when its type is a string type.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpglm.data.columns import (
    TARGET,
    cell_kind,
    parse_text_column,
    parse_text_labels,
    raise_missing,
    refuse_column,
    to_float_column,
)
from dpglm.data.locations import (
    feature_column,
    lazy_file_rows,
    plain_row,
    preview,
    show_value,
    target_column,
)
from dpglm.data.target import make_target
from dpglm.exceptions import DataError, NonNumericColumnError, UnreadableFileError

__all__ = ["RawTable", "read_raw_columns", "read_raw_table"]


@dataclass(frozen=True, eq=False)
class RawTable:
    """The feature columns of a raw table, its target, and what ``fit`` prints of them.

    Attributes
    ----------
    features : pyarrow.Table
        The feature columns, in the file's order: numbers as float64 (checked
        finite), text as strings (missing cells null).
    y : ndarray of float64 or None
        The target, or its class codes (see :func:`dpglm.data.target.make_target`).
    labels : ClassLabels or None
        Classification: the label mapping.
    task : {"regression", "classification"}
    numeric, text : tuple of str
        The numeric and the text feature columns.
    target_name : str or None
    source : str
        How ``fit`` names the data (the file's name, or the folder and its files).
    shown : str
        How messages name the path.
    """

    features: Any
    y: np.ndarray | None
    labels: Any
    task: str
    numeric: tuple
    text: tuple
    target_name: str | None
    source: str
    shown: str

    @property
    def n_samples(self) -> int:
        return int(self.features.num_rows)

    @property
    def n_features(self) -> int:
        """The number of feature columns (before the text ones are one-hot encoded)."""
        return int(self.features.num_columns)

    def decode(self, codes):
        """Class codes as the labels they stand for (classification)."""
        return self.labels.decode(codes)


def read_raw_table(path, *, target=None, task, classes=None, missing_values=None) -> RawTable:
    """A CSV or Parquet file (or a directory or pattern of them) with text feature columns.

    Every column but ``target`` (default: the last one) is a feature, typed
    by its cells (CSV) or its type (Parquet), as the module says.

    Parameters
    ----------
    path : str or os.PathLike
    target : str, optional
    task : {"regression", "classification"}
    classes : array-like of labels, optional
        Classification: the public label set.
    missing_values : list of str, optional
        Cells that mark a missing value: in a text column they are a level
        of their own (the estimator's ``missing_values``); in a CSV column
        of numbers they are refused as missing values, as ``NA`` is.

    Raises
    ------
    DataError
        A bad cell or column (the message names the file, column and row),
        or files that cannot be read.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp(), "t.csv")
    >>> _ = path.write_text("age,job,y\\n31,cook,no\\n45,,yes\\n")
    >>> raw = read_raw_table(path, task="classification")
    >>> raw.numeric, raw.text, raw.features.column("job").to_pylist(), raw.y.tolist()
    (('age',), ('job',), ['cook', None], [-1.0, 1.0])
    """
    from dpglm.data.directories import scan_dataset
    from dpglm.data.table import feature_indices, find_target

    scan = scan_dataset(path)
    t = find_target(scan.header, target, scan.shown)
    names = [scan.header[j] for j in feature_indices(len(scan.header), t, scan.shown)]
    cells, describe_row = _read_cells(scan, [*names, scan.header[t]])
    csv = scan.files[0].format == "csv"
    markers = set(missing_values or ())
    columns, numeric, text = {}, [], []
    for j, name in enumerate(names):
        label = feature_column(names, j)
        values = _typed(cells.column(name), label, describe_row, markers, text=None, csv=csv)
        (text if values.type.equals(_string_type()) else numeric).append(name)
        columns[name] = values
    y, labels = _target(
        cells.column(scan.header[t]), task, scan.header[t], describe_row, classes, csv=csv
    )
    return RawTable(
        _table(columns, names),
        y,
        labels,
        task,
        tuple(numeric),
        tuple(text),
        scan.header[t],
        scan.source,
        scan.shown,
    )


def read_raw_columns(
    path, *, numeric, text, target=None, task="regression", classes=None
) -> RawTable:
    """The columns a model fitted on a raw table reads, typed as the model has them.

    Parameters
    ----------
    path : str or os.PathLike
    numeric, text : sequence of str
        The model's numeric and text columns (its ``encoding_``).
    target : str, optional
        The target column to read too (``score``), or None.
    task : {"regression", "classification"}
    classes : array-like of labels, optional
        Classification: the model's classes.

    Raises
    ------
    DataError
        A column is missing (the message lists the file's columns), a
        numeric column holds a word or a missing value, or a text column of
        a Parquet file holds numbers; the message names the file, column
        and row.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp(), "t.csv")
    >>> _ = path.write_text("id,job,age\\na,7,31\\nb,cook,45\\n")
    >>> raw = read_raw_columns(path, numeric=["age"], text=["job"])
    >>> raw.features.column_names, raw.features.column("job").to_pylist()
    (['age', 'job'], ['7', 'cook'])
    """
    from dpglm.data.directories import scan_dataset

    scan = scan_dataset(path)
    names = [*numeric, *text]
    absent = [name for name in names if name not in scan.header]
    if absent:
        raise DataError(
            f"{scan.shown} has no column {absent[0]!r}, a column of the model "
            f"({len(absent)} of its {len(names)} columns are missing); the file's columns: "
            f"{preview(list(scan.header), limit=20)}"
        )
    cells, describe_row = _read_cells(scan, names + ([] if target is None else [target]))
    csv = scan.files[0].format == "csv"
    columns, texts = {}, set(text)
    for j, name in enumerate(names):
        label = feature_column(names, j)
        kind = name in texts
        columns[name] = _typed(cells.column(name), label, describe_row, set(), text=kind, csv=csv)
    y = labels = None
    if target is not None:
        y, labels = _target(cells.column(target), task, target, describe_row, classes, csv=csv)
    return RawTable(
        _table(columns, names),
        y,
        labels,
        task,
        tuple(numeric),
        tuple(text),
        target,
        scan.source,
        scan.shown,
    )


# -- reading the cells ---------------------------------------------------------------------


def _string_type():
    import pyarrow as pa

    return pa.string()


def _read_cells(scan, names):
    """Columns ``names`` of every file, concatenated: CSV cells as text, Parquet as stored;
    and a row namer that names each row's file (and line) as the numeric loader does."""
    import pyarrow as pa

    tables, namers, counts = [], [], []
    for file in scan.files:
        if file.format == "csv":
            if file.skip is None:  # a header and no rows
                continue
            table = _csv_cells(file, names)
            namers.append(_csv_rows(file, scan.named))
        else:
            table = _parquet_cells(file, names)
            namers.append((lambda shown: lambda i: f"row {i} of {shown}")(file.shown))
            if not scan.named:
                namers[-1] = plain_row
        tables.append(table)
        counts.append(table.num_rows)
    if not tables:
        raise DataError(f"{scan.shown} has no data rows")
    try:
        cells = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
        raise DataError(
            f"cannot read {scan.shown}: its files' columns do not have the same types ({err})"
        ) from err
    return cells, namers[0] if len(namers) == 1 else _dataset_rows(namers, counts)


def _csv_cells(file, names):
    """The cells of columns ``names`` of a CSV file, every one as text (none null)."""
    import pyarrow as pa
    import pyarrow.csv as csv

    from dpglm.data.csv_reader import check_records
    from dpglm.data.files import is_gzip

    convert = csv.ConvertOptions(
        column_types=dict.fromkeys(names, pa.string()),
        include_columns=names,
        null_values=[],
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    try:
        stream = pa.input_stream(
            os.fspath(file.path), compression="gzip" if is_gzip(file.path) else None
        )
        with stream:
            return csv.read_csv(
                stream,
                parse_options=csv.ParseOptions(newlines_in_values=True),
                convert_options=convert,
            )
    except (pa.ArrowInvalid, OSError) as err:
        check_records(file.path, file.shown)  # the error of an invalid file, with its line
        raise UnreadableFileError(f"cannot read {file.shown}: {err}") from err


def _csv_rows(file, named):
    """Names row ``i`` of a CSV file with its line, found only when a message asks."""
    from dpglm.data.csv_reader import split_records
    from dpglm.data.files import decode_text, read_bytes

    def lines():
        return split_records(decode_text(read_bytes(file.path), file.path), file.shown)[2]

    return lazy_file_rows(lines, file.shown if named else Path(file.path).name)


def _parquet_cells(file, names):
    import pyarrow as pa

    from dpglm.data.parquet import import_pyarrow

    _, pq = import_pyarrow()
    try:
        return pq.read_table(os.fspath(file.path), columns=names)
    except (pa.ArrowInvalid, OSError) as err:
        raise UnreadableFileError(f"cannot read {file.shown}: {err}") from err


def _dataset_rows(namers, counts):
    """Names row ``i`` of several files by its file's namer and its row in that file."""
    ends = np.cumsum(counts)

    def describe(i):
        k = int(np.searchsorted(ends, i, side="right"))
        return namers[k](i - int(ends[k] - counts[k]))

    return describe


# -- typing the columns --------------------------------------------------------------------


def _typed(column, label, describe_row, markers, *, text, csv):
    """Column of a raw table as float64 (numbers) or strings (text).

    ``text`` says which it is (the model's), or None: from its cells (``csv``)
    or its type (Parquet).
    """
    import pyarrow as pa

    if csv:
        cells = np.asarray(column.to_numpy(zero_copy_only=False), dtype=str)
        values = None if text else _csv_numbers(cells, label, describe_row, markers, text)
        if values is None:
            return pa.array(cells, type=pa.string(), mask=cells == "")
        return pa.array(values, type=pa.float64())
    return _parquet_column(column, label, describe_row, text)


def _csv_numbers(cells, label, describe_row, markers, text):
    """A CSV column's numbers, or None when it is a text column."""
    if text is False:
        return parse_text_column(cells, column=label, describe_row=describe_row)
    try:
        return parse_text_column(cells, column=label, describe_row=describe_row)
    except NonNumericColumnError:
        pass
    uniques, inverse = np.unique(cells, return_inverse=True)
    kinds = np.array([cell_kind(str(u), markers) for u in uniques], dtype=object)
    kind = kinds[inverse.reshape(-1)]
    numbers = int(np.count_nonzero(kind == "number"))
    words = kind == "word"
    if not words.any():  # numbers and --missing-values markers
        raise_missing(label, describe_row, int(np.argmax(kind == "missing")), cells)
    if numbers > np.count_nonzero(words):
        i = int(np.argmax(words))
        raise NonNumericColumnError(
            f"{label} holds numbers ({numbers} of its cells) and words, e.g. "
            f"{show_value(cells[i])} at {describe_row(i)}; a column of numbers must hold "
            "numbers only (fix that cell), and a column of categories is one-hot encoded "
            "when its values are words"
        )
    return None


def _parquet_column(column, label, describe_row, text):
    """A Parquet column: numbers as float64 (finite), strings as they are."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_dictionary(kind):
        column = pc.cast(column, pa.string())
        kind = column.type
    missing = np.asarray(pc.is_null(column), dtype=bool)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        if text is False:
            values = np.asarray(column.to_pylist(), dtype=object)
            refuse_column(
                values, column=label, describe_row=describe_row, missing=missing,
                dtype_name=str(kind),
            )  # fmt: skip
        return pc.cast(column.combine_chunks(), pa.string())
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind):
        if text:
            raise NonNumericColumnError(
                f"{label} holds numbers (type {kind}); the model one-hot encodes it as text: "
                "store its values as strings"
            )
        filled = pc.fill_null(column, False if pa.types.is_boolean(kind) else 0)
        values = to_float_column(
            np.asarray(filled.to_numpy()), column=label, describe_row=describe_row,
            missing=missing,
        )  # fmt: skip
        return pa.array(values, type=pa.float64())
    values = np.asarray(column.to_pylist(), dtype=object)
    refuse_column(
        values, column=label, describe_row=describe_row, missing=missing, dtype_name=str(kind)
    )


def _target(column, task, name, describe_row, classes, *, csv):
    """The target's values or class codes, and the label mapping."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if csv:
        cells = np.asarray(column.to_numpy(zero_copy_only=False), dtype=str)
        if task == "classification":
            values = parse_text_labels(
                cells, column=target_column(name), describe_row=describe_row
            )
        else:
            values = parse_text_column(
                cells, column=target_column(name), describe_row=describe_row, role=TARGET
            )
        return make_target(values, task, name=name, describe_row=describe_row, classes=classes)
    missing = np.asarray(pc.is_null(column), dtype=bool)
    if pa.types.is_dictionary(column.type):
        column = pc.cast(column, pa.string())
    if column.null_count and (
        pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
    ):
        column = pc.fill_null(column, 0)
    values = np.asarray(column.to_numpy(zero_copy_only=False))
    return make_target(
        values, task, name=name, describe_row=describe_row, missing=missing, classes=classes
    )


def _table(columns, names):
    import pyarrow as pa

    return pa.table({name: columns[name] for name in names})
