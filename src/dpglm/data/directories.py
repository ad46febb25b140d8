"""Datasets of several files: a directory or a glob pattern of CSV or Parquet files.

:func:`dataset_files` lists a dataset's files in a fixed order;
:func:`scan_dataset` reads their headers (and, for Parquet, their row counts
from the footers) and checks that every file has the same columns;
:func:`read_scan` reads chosen columns of every file, one file (Parquet: a
few columns of a row group) at a time, into one float64 matrix; :func:`read_dataset` is
what :func:`dpglm.data.load` calls for a directory or a pattern.

Rows are the files' rows, file after file in the order of
:func:`dataset_files`. Messages about a bad cell name the file and the row
*within that file* (counted from 0, with its line for CSV), e.g.
``row 3 (line 5 of 'parts/b.csv')`` or ``row 3 of 'parts/b.parquet'``.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> folder = Path(tempfile.mkdtemp(), "parts")
>>> folder.mkdir()
>>> _ = (folder / "b.csv").write_text("x,y\\n3,1\\n")
>>> _ = (folder / "a.csv").write_text("x,y\\n1,0\\n2,1\\n")
>>> [path.name for path in dataset_files(folder)]
['a.csv', 'b.csv']
>>> table = read_dataset(folder, target=None, task="regression")
>>> table.X.ravel(), table.y, table.source
(array([1., 2., 3.]), array([0., 1., 1.]), 'parts (2 files)')
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from dpglm.data.csv_reader import read_csv_columns, read_header
from dpglm.data.files import guess_format
from dpglm.data.locations import RowNamer, plain_row, preview
from dpglm.data.table import Table, check_unique_names, feature_indices, find_target
from dpglm.exceptions import (
    ShapeMismatchError,
    TargetError,
    UnreadableFileError,
)

#: The characters that make a path a glob pattern (when no file has that name).
GLOB_CHARACTERS = "*?["

#: Names of directory entries that are not data, skipped: hidden files and folders, and
#: the bookkeeping files of Spark, Hadoop and pyarrow (``_SUCCESS``, ``_metadata``).
HIDDEN_PREFIXES = (".", "_")

#: The formats a dataset of several files may hold (one of them, in every file).
DATASET_FORMATS = ("csv", "parquet")

#: How messages name the formats of :data:`dpglm.data.files.FORMATS`.
_FORMAT_NAMES = {"csv": "CSV", "parquet": "Parquet", "svmlight": "LIBSVM"}

_EXPECTED = "CSV files (.csv, .csv.gz) or Parquet files (.parquet, .pq)"


def is_dataset_path(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a dataset of files: a directory, or a glob pattern.

    A pattern is a path with ``*``, ``?`` or ``[`` that is not the name of an
    existing file.

    Examples
    --------
    >>> import tempfile
    >>> is_dataset_path(tempfile.gettempdir()), is_dataset_path("data/*.parquet")
    (True, True)
    >>> is_dataset_path("train.csv")
    False
    """
    name = Path(path)
    if name.is_dir():
        return True
    return not name.exists() and any(c in os.fspath(path) for c in GLOB_CHARACTERS)


def dataset_files(path: str | os.PathLike[str]) -> list[Path]:
    """The data files of a directory or a glob pattern, in the order their rows are read.

    Parameters
    ----------
    path : str or os.PathLike
        - a directory: its files, and those of its folders, sorted by their
          path within it (as strings: ``part-10`` comes before ``part-2``,
          so number parts with leading zeros). Entries whose name starts
          with ``.`` or ``_`` (hidden files, ``_SUCCESS``, ``_metadata``)
          are skipped, and so are folders of that name;
        - a glob pattern (``*``, ``?``, ``[...]``; ``**`` matches folders at
          any depth): the files it matches, sorted; a directory it matches
          gives its files as above. A matched name starting with ``_`` or
          ``.`` is skipped unless the pattern's last part starts so too;
        - an existing file: ``[path]``, whatever its format.

    Returns
    -------
    list of pathlib.Path

    Raises
    ------
    UnreadableFileError
        The directory holds no data file, nothing matches the pattern, or
        the path does not exist; a file is
        not CSV or Parquet (LIBSVM files, whose feature indices and labels
        are each file's own, are read one file at a time); or the files mix
        CSV and Parquet. The message names the path and the file.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> for name in ("part-1.parquet", "part-0.parquet", "_SUCCESS", ".part-0.parquet.crc"):
    ...     _ = (folder / name).write_bytes(b"")
    >>> [path.name for path in dataset_files(folder)]
    ['part-0.parquet', 'part-1.parquet']
    >>> [path.name for path in dataset_files(folder / "*-1.parquet")]
    ['part-1.parquet']
    >>> _ = (folder / "notes.txt").write_text("about the data")
    >>> dataset_files(folder)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpglm.exceptions.UnreadableFileError: cannot read '...': file '.../notes.txt' is not a data file (unknown extension); expected CSV files (.csv, .csv.gz) or Parquet files (.parquet, .pq)
    """  # noqa: E501
    name = Path(path)
    shown = repr(os.fspath(path))
    if name.is_dir():
        files = _directory_files(name)
        if not files:
            raise UnreadableFileError(
                f"cannot read {shown}: Is a directory without data files; expected a file, or "
                f"a directory of {_EXPECTED} (entries whose name starts with '.' or '_' are "
                "skipped)"
            )
    elif name.exists():
        return [name]
    elif any(c in os.fspath(path) for c in GLOB_CHARACTERS):
        files = _pattern_files(os.fspath(path))
        if not files:
            raise UnreadableFileError(
                f"cannot read {shown}: no file matches this pattern; expected a pattern of "
                f"{_EXPECTED}"
            )
    else:
        raise UnreadableFileError(f"cannot read {shown}: No such file or directory")
    _check_formats(files, shown)
    return files


def _directory_files(folder: Path) -> list[Path]:
    found = []
    for root, folders, names in os.walk(folder):
        folders[:] = [f for f in folders if not f.startswith(HIDDEN_PREFIXES)]
        found += [Path(root, n) for n in names if not n.startswith(HIDDEN_PREFIXES)]
    return sorted(found, key=lambda p: p.relative_to(folder).parts)


def _pattern_files(pattern: str) -> list[Path]:
    last = os.path.basename(pattern)
    files = []
    for match in sorted(glob.glob(pattern, recursive=True)):
        path = Path(match)
        if path.name.startswith(HIDDEN_PREFIXES) and not last.startswith(path.name[0]):
            continue
        files += _directory_files(path) if path.is_dir() else [path]
    return files


def _check_formats(files: list[Path], shown: str) -> None:
    """Refuse files that are not CSV or Parquet, and a mix of the two."""
    first = None
    for path in files:
        try:
            fmt = guess_format(path)
        except UnreadableFileError:
            raise UnreadableFileError(
                f"cannot read {shown}: file {os.fspath(path)!r} is not a data file (unknown "
                f"extension); expected {_EXPECTED}"
            ) from None
        if fmt not in DATASET_FORMATS:
            raise UnreadableFileError(
                f"cannot read {shown}: file {os.fspath(path)!r} is a {_FORMAT_NAMES[fmt]} file; "
                f"a dataset of several files holds {_EXPECTED}; LIBSVM files, whose feature "
                "indices and labels are each file's own, are read one at a time"
            )
        if first is None:
            first = (path, fmt)
        elif fmt != first[1]:
            raise UnreadableFileError(
                f"cannot read {shown}: it mixes formats: {os.fspath(first[0])!r} is "
                f"{_FORMAT_NAMES[first[1]]} but {os.fspath(path)!r} is {_FORMAT_NAMES[fmt]}; "
                "expected files of one format"
            )


class DataFile(NamedTuple):
    """One file of a scanned dataset."""

    path: Path
    shown: str  # how messages name the file
    format: str  # "csv" or "parquet"
    skip: int | None  # CSV: lines before the data rows (None: no data rows)
    rows: int | None  # Parquet: rows, from the footer (CSV: None, known once read)


class Scan(NamedTuple):
    """The files of a dataset and the columns they all have, before any row is read.

    Attributes
    ----------
    shown : str
        How messages name the dataset (the path or pattern, quoted).
    source : str
        ``Dataset.source``: the file's name, or the directory's name or the
        pattern and the number of files.
    header : list of str
        The column names of every file.
    files : list of DataFile
    named : bool
        Whether messages about a row name its file (a dataset of several
        files, or of one file found in a directory or by a pattern).
    """

    shown: str
    source: str
    header: list[str]
    files: list[DataFile]
    named: bool


def scan_dataset(path: str | os.PathLike[str]) -> Scan:
    """The files of a CSV or Parquet file, directory or pattern, and their common columns.

    Each file's header is read (CSV: its first two records; Parquet: its
    footer, with its number of rows), not its data. A file of a directory or
    pattern may have a header and no rows; a single file may not.

    Raises
    ------
    ShapeMismatchError
        A file does not have the columns of the first file, in the same
        order; the message names both files and the differing columns.
    UnreadableFileError
        As :func:`dataset_files` raises it; a file that is not valid
        Parquet, gzip or CSV (e.g. truncated), or a single file of another
        format; the message names the file.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.csv").write_text("x,y\\n1,0\\n")
    >>> _ = (folder / "b.csv").write_text("x,z\\n3,1\\n")
    >>> scan_dataset(folder)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpglm.exceptions.ShapeMismatchError: '.../b.csv' does not have the columns of '.../a.csv', the first file of '...': it lacks ['y'] and has ['z'] more; every file of a dataset must have the same columns, in the same order
    """  # noqa: E501
    dataset = is_dataset_path(path)
    files = dataset_files(path)
    shown = repr(os.fspath(path))
    if not dataset:
        fmt = guess_format(files[0])
        if fmt not in DATASET_FORMATS:
            raise UnreadableFileError(
                f"cannot read {shown}: expected a CSV or Parquet file, got a "
                f"{_FORMAT_NAMES[fmt]} file"
            )
        source = files[0].name
    else:
        what = Path(path).name if Path(path).is_dir() else os.fspath(path)
        source = f"{what} ({len(files)} file{'s' if len(files) > 1 else ''})"
    scanned = [_scan_file(file, rows_required=not dataset) for file in files]
    header = scanned[0][0]
    check_unique_names(header, scanned[0][1].shown)
    for columns, file in scanned[1:]:
        if columns != header:
            raise _column_mismatch(file.shown, columns, scanned[0][1].shown, header, shown)
    return Scan(shown, source, header, [file for _, file in scanned], dataset)


def _scan_file(path: Path, *, rows_required: bool) -> tuple[list[str], DataFile]:
    shown = repr(os.fspath(path))
    if guess_format(path) == "csv":
        header, skip = read_header(path, shown, rows_required=rows_required)
        return header, DataFile(path, shown, "csv", skip, None)
    from dpglm.data.parquet import parquet_columns

    header, rows = parquet_columns(path, shown)
    return header, DataFile(path, shown, "parquet", 0, rows)


def _column_mismatch(
    shown: str, columns: list[str], first: str, header: list[str], dataset: str
) -> ShapeMismatchError:
    lacks = [c for c in header if c not in columns]
    more = [c for c in columns if c not in header]
    if lacks or more:
        parts = ([f"lacks {preview(lacks)}"] if lacks else []) + (
            [f"has {preview(more)} more"] if more else []
        )
        detail = "it " + " and ".join(parts)
    else:
        detail = f"its columns are {preview(columns)}, in another order than {preview(header)}"
    return ShapeMismatchError(
        f"{shown} does not have the columns of {first}, the first file of {dataset}: "
        f"{detail}; every file of a dataset must have the same columns, in the same order"
    )


class Columns(NamedTuple):
    """The columns :func:`read_scan` read from every file of a dataset, concatenated."""

    X: np.ndarray  # float64, Fortran-ordered
    y: np.ndarray | None  # the target as read (see read_scan), or None
    y_missing: np.ndarray | None  # Parquet: which target cells are null
    describe_row: RowNamer  # names row i of the whole dataset by its file and row there


def read_scan(scan: Scan, *, features: list[int], target: int | None, task: str) -> Columns:
    """Read the columns ``features`` (as float64) and ``target`` of every file of a dataset.

    The files are read one after the other, CSV files whole (by Arrow, in
    pieces), Parquet files a batch at a time (a few columns of a row group,
    see :func:`~dpglm.data.parquet.read_parquet_rows`) straight into a matrix
    made for every row at once (their number is in the footers). A CSV file's matrix
    is copied into the dataset's matrix once every file is read, and freed as
    soon as it is copied: the memory held is about the dataset's matrix and
    one file's (Parquet: one batch's).

    Parameters
    ----------
    scan : Scan
        From :func:`scan_dataset`.
    features : list of int
        The feature columns, by position in ``scan.header``, in the order of ``X``.
    target : int or None
        The target column, or None to read no target.
    task : {"regression", "classification"}
        CSV: a regression target is read as float64; a classification target
        as labels, the text of every file's cells typed together (integers if
        all are, else floats if all are numbers, else the text), so the labels
        are the union over the files. Parquet: the target's values as stored,
        with their nulls.

    Returns
    -------
    Columns

    Raises
    ------
    DataError
        A bad cell (the message names its file, its row in that file and its
        column), a file that cannot be read, or Parquet target columns of
        different kinds (numbers in one file, text in another).

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.csv").write_text("id,x,y\\nu,1,no\\n")
    >>> _ = (folder / "b.csv").write_text("id,x,y\\nv,2,yes\\nw,3,maybe\\n")
    >>> columns = read_scan(scan_dataset(folder), features=[1], target=2, task="classification")
    >>> columns.X.ravel(), columns.y
    (array([1., 2., 3.]), array(['no', 'yes', 'maybe'], dtype='<U5'))
    >>> columns.describe_row(2)  # doctest: +ELLIPSIS
    "row 1 (line 3 of '.../b.csv')"
    """
    names = [scan.header[j] for j in features]
    target_name = None if target is None else scan.header[target]
    if scan.files[0].format == "parquet":
        X, y, y_missing, namers, counts = _read_parquet_files(scan, names, target_name)
    else:
        X, y, namers, counts = _read_csv_files(scan, features, target, task)
        y_missing = None
    describe_row = namers[0] if len(namers) == 1 else _dataset_rows(namers, counts)
    if y is not None and scan.files[0].format == "csv" and task == "classification":
        from dpglm.data.columns import parse_text_labels
        from dpglm.data.locations import target_column

        y = parse_text_labels(y, column=target_column(target_name), describe_row=describe_row)
    return Columns(X, y, y_missing, describe_row)


def read_dataset(path: str | os.PathLike[str], *, target: str | None, task: str) -> Table:
    """A directory or glob pattern of CSV or Parquet files, read into one :class:`Table`.

    Every column but ``target`` (default: the last one) is a feature, as in
    one file; see :func:`read_scan` for how the files are read and
    :func:`dataset_files` for which files and in which order.

    Raises
    ------
    TargetError
        No column is named ``target``.
    DataError
        See :func:`scan_dataset` and :func:`read_scan`.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.csv").write_text("x,y\\n1,0\\n")
    >>> _ = (folder / "b.csv").write_text("x,y\\nNA,1\\n")
    >>> read_dataset(folder / "*.csv", target="y", task="regression")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpglm.exceptions.NonFiniteValueError: feature column 'x' (index 0) has a missing value ('NA') at row 0 (line 2 of '.../b.csv'); expected finite numbers (impute or drop incomplete rows first)
    """  # noqa: E501
    scan = scan_dataset(path)
    t = find_target(scan.header, target, scan.shown)
    features = feature_indices(len(scan.header), t, scan.shown)
    columns = read_scan(scan, features=features, target=t, task=task)
    names = [scan.header[j] for j in features]
    return Table(
        columns.X,
        columns.y,
        names,
        scan.header[t],
        scan.source,
        columns.describe_row,
        columns.y_missing,
    )


def _read_csv_files(
    scan: Scan, features: list[int], target: int | None, task: str
) -> tuple[np.ndarray, np.ndarray | None, list[RowNamer], list[int]]:
    blocks: list[Any] = []
    targets: list[np.ndarray] = []
    namers: list[RowNamer] = []
    for file in scan.files:
        if file.skip is None:  # a header and no rows
            blocks.append(np.empty((0, len(features)), order="F"))
            targets.append(np.empty(0, dtype=np.float64 if task == "regression" else str))
            namers.append(plain_row)
            continue
        X, y, describe_row = read_csv_columns(
            file.path,
            file.shown,
            header=scan.header,
            skip=file.skip,
            features=features,
            target=target,
            task=task,
            file_name=file.shown if scan.named else None,
        )
        blocks.append(X)
        if y is not None:
            # A regression target is a column of the file's matrix: a copy lets it go.
            targets.append(y.copy() if len(scan.files) > 1 else y)
        namers.append(describe_row)
    counts = [block.shape[0] for block in blocks]
    if len(blocks) == 1:
        X = blocks[0]
    else:
        X = np.empty((sum(counts), len(features)), order="F")
        start = 0
        for k, count in enumerate(counts):
            # Each file's matrix is freed once copied: the pages of X are touched as they
            # are filled, so the memory held grows by one file's matrix at most.
            X[start : start + count] = blocks[k]
            blocks[k] = None
            start += count
    y = None if target is None else _concatenate(targets)
    return X, y, namers, counts


def _read_parquet_files(
    scan: Scan, names: list[str], target: str | None
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, list[RowNamer], list[int]]:
    from dpglm.data.parquet import read_parquet_rows

    counts = [file.rows or 0 for file in scan.files]
    X = np.empty((sum(counts), len(names)), order="F")
    values: list[np.ndarray] = []
    missing: list[np.ndarray] = []
    namers: list[RowNamer] = []
    start = 0
    for file, count in zip(scan.files, counts, strict=True):
        describe_row = _parquet_rows(file.shown) if scan.named else plain_row
        y, y_missing = read_parquet_rows(
            file.path,
            file.shown,
            features=names,
            target=target,
            out=X[start : start + count],
            describe_row=describe_row,
        )
        if target is not None and count:
            file_values = _concatenate(y)
            _check_target_kind(file_values, file.shown, values, scan, target)
            values.append(file_values)
            missing.append(_concatenate(y_missing))
        namers.append(describe_row)
        start += count
    if target is None:
        return X, None, None, namers, counts
    if not values:
        return X, np.empty(0), np.empty(0, dtype=bool), namers, counts
    return X, _concatenate(values), _concatenate(missing), namers, counts


def _concatenate(arrays: list[np.ndarray]) -> np.ndarray:
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def _kind(values: np.ndarray) -> str:
    """What a Parquet target column holds: numbers, booleans or text (and others)."""
    kind = values.dtype.kind
    return "numbers" if kind in "iuf" else "booleans" if kind == "b" else "text"


def _check_target_kind(
    values: np.ndarray, shown: str, before: list[np.ndarray], scan: Scan, target: str
) -> None:
    """Refuse a target of numbers in one Parquet file and of text in another."""
    if before and _kind(values) != _kind(before[0]):
        first = next(f for f in scan.files if f.rows).shown
        raise TargetError(
            f"target {target!r} holds {_kind(values)} in {shown} but {_kind(before[0])} in "
            f"{first}; the files of a dataset must have targets of one kind"
        )


def _parquet_rows(shown: str) -> RowNamer:
    """Names row ``i`` of a Parquet file of a dataset, with the file."""
    return lambda i: f"row {i} of {shown}"


def _dataset_rows(namers: list[RowNamer], counts: list[int]) -> RowNamer:
    """Names row ``i`` of a dataset by its file's row namer, with its row in that file."""
    ends = np.cumsum(counts)

    def describe(i: int) -> str:
        k = int(np.searchsorted(ends, i, side="right"))
        return namers[k](i - int(ends[k] - counts[k]))

    return describe
