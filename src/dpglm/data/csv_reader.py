"""Reading CSV files: Arrow parses the data, whole columns are checked, :mod:`csv` names lines.

The standard library's :mod:`csv` module is the reference for what a valid
file is. It reads the header and the first data row, so that an empty file, a
header without data or an unknown ``target=`` is refused before the data is
parsed, and the rest of the file only when a message needs a line number or
Arrow cannot split the rows. :mod:`dpglm.data.csv_arrow` parses the data rows
with pyarrow: features and a regression target as float64, which leaves only
their finiteness to check; a classification target, and any column with a
cell Arrow does not read as a number, as text.

Text cells, and the cells of a float64 column holding NaN or an infinity, go
through :mod:`dpglm.data.columns` as when the standard library read every
cell: numbers in other spellings (``" 1_000"``), ``True`` / ``False``
columns, missing-value markers, and the errors naming a bad cell's column,
row and line. When Arrow cannot split the rows with quoting off (a ragged
row, or a quoted field holding a comma or a line break), :mod:`csv` reads the
whole file: an invalid one raises its error there, with the line; a valid one
is parsed by Arrow again, with quoting on, or, should Arrow still refuse it,
read cell by cell by :mod:`csv` as it was before Arrow.
"""

from __future__ import annotations

import csv
import io
import os
import zlib
from collections.abc import Iterable, Iterator
from contextlib import closing
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from dpglm.data.columns import FEATURE, TARGET, parse_text_column, parse_text_labels
from dpglm.data.csv_arrow import ArrowParseError, Layout, read_columns
from dpglm.data.files import decode_text, open_text, read_bytes
from dpglm.data.locations import RowNamer, feature_column, file_rows, target_column
from dpglm.data.table import Table, check_unique_names, feature_indices, find_target
from dpglm.exceptions import EmptyDataError, UnreadableFileError


def read_csv(path: str | os.PathLike[str], *, target: str | None, task: str) -> Table:
    """Read a CSV file (comma-separated, UTF-8, header row first) into a :class:`Table`.

    Blank lines are skipped; every other line must have as many fields as the
    header. The target is the column named ``target`` (default: the last one).
    Feature cells must be numbers (or ``True`` / ``False`` for a whole
    column); a classification target may also hold text labels. A name
    ending in ``.gz`` (any case) is read as gzip.

    Parameters
    ----------
    path : str or os.PathLike
    target : str or None
    task : {"regression", "classification"}

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "t.csv")
    ...     _ = path.write_text("a,b,y\\n1,2,yes\\n3,4,no\\n")
    ...     table = read_csv(path, target=None, task="classification")
    >>> table.X, table.y, table.feature_names
    (array([[1., 2.],
           [3., 4.]]), array(['yes', 'no'], dtype='<U3'), ['a', 'b'])
    """
    shown = repr(os.fspath(path))
    header, skip = read_header(path, shown)
    check_unique_names(header, shown)
    t = find_target(header, target, shown)
    features = feature_indices(len(header), t, shown)
    X, y, describe_row = read_csv_columns(
        path,
        shown,
        header=header,
        skip=skip,
        features=features,
        target=t,
        task=task,
    )
    names = [header[j] for j in features]
    if task == "classification":
        y = parse_text_labels(y, column=target_column(header[t]), describe_row=describe_row)
    return Table(X, y, names, header[t], Path(path).name, describe_row)


def read_csv_columns(
    path: str | os.PathLike[str],
    shown: str,
    *,
    header: list[str],
    skip: int,
    features: list[int],
    target: int | None,
    task: str,
    file_name: str | None = None,
) -> tuple[np.ndarray, np.ndarray | None, RowNamer]:
    """Some columns of the data rows of a CSV file: features as float64, the target as asked.

    Only the columns asked for are parsed (by Arrow, as :func:`read_csv`
    reads them): a file may hold other columns (identifiers, text) that are
    not read. Errors name the column, the row and its line, as
    :func:`read_csv`'s do.

    Parameters
    ----------
    path : str or os.PathLike
    shown : str
        How messages name the file, e.g. ``repr(os.fspath(path))``.
    header : list of str
        The file's column names (from :func:`read_header`).
    skip : int
        Lines before the first data row (from :func:`read_header`).
    features : list of int
        The feature columns, by position in the file, in the order of ``X``.
    target : int or None
        The target column, or None to read no target.
    task : {"regression", "classification"}
        Regression: the target is read as finite float64; classification: as
        its text cells, for :func:`~dpglm.data.columns.parse_text_labels`.
    file_name : str, optional
        How row messages name the file (default: its name, without folders).

    Returns
    -------
    X : ndarray of float64, Fortran-ordered, shape (n_rows, len(features))
    y : ndarray of float64 or of str, or None
    describe_row : callable
        How messages name row ``i`` of the file (with its line).

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp(), "t.csv")
    >>> _ = path.write_text("id,a,b,y\\nx,1,2,yes\\nz,3,4,no\\n")
    >>> X, y, describe_row = read_csv_columns(
    ...     path,
    ...     "'t.csv'",
    ...     header=["id", "a", "b", "y"],
    ...     skip=1,
    ...     features=[2, 1],
    ...     target=3,
    ...     task="classification",
    ... )
    >>> X, y, describe_row(1)
    (array([[2., 1.],
           [4., 3.]]), array(['yes', 'no'], dtype='<U3'), 'row 1 (line 3 of t.csv)')
    """
    names = [header[j] for j in features]
    # The matrix read holds the features, then a regression target: X and y are its parts.
    regression = target is not None and task == "regression"
    numbers = [*features, target] if regression else list(features)
    text = {target} if target is not None and not regression else set()
    layout = Layout.of(path, shown, skip, len(header))
    try:
        matrix, strings = read_columns(layout, numbers, text)
    except ArrowParseError:
        check_records(path, shown)  # the error of an invalid file, with its line
        # Valid: its quoted fields hold commas or line breaks, which Arrow reads with quotes on.
        layout = layout._replace(quoted=True)
        try:
            matrix, strings = read_columns(layout, numbers, text)
        except ArrowParseError:
            # What Arrow cannot read (e.g. zeros after gzip data), every cell read by csv.
            matrix, strings = _csv_module_columns(path, shown, len(numbers))
    describe_row = _row_namer(path, shown, file_name)
    X = matrix[:, : len(features)]
    for k, j in enumerate(features):
        if j in strings or not np.isfinite(X[:, k]).all():
            column = feature_column(names, k)
            X[:, k] = _parsed(layout, strings, j, column, describe_row, FEATURE)
    if target is None:
        return X, None, describe_row
    if not regression:
        return X, strings[target], describe_row
    y = matrix[:, -1]
    if target in strings or not np.isfinite(y).all():
        label = target_column(header[target])
        y = _parsed(layout, strings, target, label, describe_row, TARGET)
    return X, y, describe_row


def read_header(
    path: str | os.PathLike[str], shown: str, *, rows_required: bool = True
) -> tuple[list[str], int | None]:
    """The header of a CSV file, and how many lines come before its data rows.

    The first data row is read too: a file without one is refused here, unless
    ``rows_required`` is False (a part of a dataset may be empty): then the
    number of lines is None.

    Raises
    ------
    EmptyDataError
        No header, or a header and no data rows.
    UnreadableFileError
        The file cannot be read, or its first records are not valid CSV.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp(), "t.csv")
    >>> _ = path.write_text('\\n"a\\nb",y\\n\\n1,2\\n')  # a blank line, a header of 2 lines
    >>> read_header(path, "'t.csv'")
    (['a\\nb', 'y'], 4)
    """
    with closing(_file_records(path, shown)) as records:
        first = list(islice(records, 2))
    if first and len(first) < 2 and not rows_required:
        return first[0][1], None
    _require_data(first, shown)
    return first[0][1], first[1][0] - 1


def check_records(path: str | os.PathLike[str], shown: str) -> None:
    """Read a whole CSV file with :mod:`csv`; raise the error of its first bad record.

    Raises
    ------
    UnreadableFileError
        The file is not valid gzip, UTF-8 or CSV, or has a ragged row; the
        message names the line.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".csv") as f:
    ...     _ = f.write("a,y\\n1,2\\n3\\n")
    ...     f.flush()
    ...     check_records(f.name, "'t.csv'")
    Traceback (most recent call last):
    ...
    dpglm.exceptions.UnreadableFileError: cannot read 't.csv': line 3 has 1 fields, expected 2 as in the header
    """  # noqa: E501
    for _ in _file_records(path, shown):
        pass


def split_records(text: str, shown: str) -> tuple[list[str], list[list[str]], list[int]]:
    """Split CSV text into its header, its data rows and the file line of each row.

    Blank lines are skipped; a quoted field may span lines, and a record is
    numbered by the line it starts on. No cell is parsed: every cell stays a
    string.

    Parameters
    ----------
    text : str
        The decoded file content (comma-separated, header row first).
    shown : str
        How messages name the file, e.g. ``repr(os.fspath(path))``.

    Returns
    -------
    header : list of str
        The column names.
    rows : list of list of str
        The data rows, each as long as the header.
    lines : list of int
        The file line (from 1) each row starts on, for messages.

    Raises
    ------
    UnreadableFileError
        A row has more or fewer fields than the header, or the text is not
        valid CSV; the message names the line.
    EmptyDataError
        No header, or a header and no data rows.

    Examples
    --------
    >>> split_records("a,b\\n1,2\\n\\n3,4\\n", "'t.csv'")
    (['a', 'b'], [['1', '2'], ['3', '4']], [2, 4])
    """
    records = list(_records(io.StringIO(text, newline=""), shown))
    _require_data(records, shown)
    return records[0][1], [r for _, r in records[1:]], [line for line, _ in records[1:]]


def _records(lines: Iterable[str], shown: str) -> Iterator[tuple[int, list[str]]]:
    """``(line, fields)`` of every record, header first, each as long as the header."""
    reader = csv.reader(lines, strict=True)
    width = None
    # A quoted field may span lines; a record is named by the line it starts on.
    start = 1
    try:
        for record in reader:
            if record and width is None:
                width = len(record)
            if record and len(record) != width:
                raise UnreadableFileError(
                    f"cannot read {shown}: line {start} has {len(record)} fields, "
                    f"expected {width} as in the header"
                )
            if record:
                yield start, record
            start = reader.line_num + 1
    except csv.Error as err:
        raise UnreadableFileError(
            f"cannot read {shown}: line {start} is not valid CSV ({err})"
        ) from err


def _file_records(path: str | os.PathLike[str], shown: str) -> Iterator[tuple[int, list[str]]]:
    """:func:`_records` of a file, read as it goes; bad bytes or gzip data name their place."""
    with open_text(path) as lines:
        try:
            yield from _records(lines, shown)
        except (OSError, EOFError, zlib.error, UnicodeDecodeError) as err:
            # Reading it all again gives the message with the line or the gzip error.
            decode_text(read_bytes(path), path)
            raise UnreadableFileError(f"cannot read {shown}: {err}") from err


def _require_data(records: list[tuple[int, list[str]]], shown: str) -> None:
    if not records:
        raise EmptyDataError(f"{shown} is empty; expected a header row and data rows")
    if len(records) < 2:
        raise EmptyDataError(f"{shown} has a header but no data rows")


def _row_namer(path: str | os.PathLike[str], shown: str, file_name: str | None = None) -> RowNamer:
    """Names row ``i`` with its line, found by reading the file up to it with :mod:`csv`.

    Only error messages ask, once each, so the lines are not stored.
    """
    name = Path(path).name if file_name is None else file_name

    def describe(i: int) -> str:
        with closing(_file_records(path, shown)) as records:
            line, _ = next(islice(records, i + 1, None))
        return file_rows({i: line}, name)(i)

    return describe


def _parsed(
    layout: Layout,
    strings: dict[int, Any],
    j: int,
    column: str,
    describe_row: RowNamer,
    role: str,
) -> np.ndarray:
    """Column ``j`` parsed from its text by the rules of :func:`parse_text_column`.

    A column read as float64 comes here when it holds NaN or an infinity: it is
    read again as text, so that the error shows the cell as written (and
    ``nan(1)``, which Arrow reads as NaN, is not a number).
    """
    if j not in strings:
        strings = read_columns(layout, [], {j})[1]
    return parse_text_column(strings[j], column=column, describe_row=describe_row, role=role)


def _csv_module_columns(
    path: str | os.PathLike[str], shown: str, n_numbers: int
) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """:func:`read_columns`' result with every column as text, read by :mod:`csv`."""
    header, rows, _ = split_records(decode_text(read_bytes(path), path), shown)
    cells = np.array(rows, dtype=str).reshape(len(rows), len(header))
    return np.empty((len(rows), n_numbers), order="F"), dict(enumerate(cells.T))
