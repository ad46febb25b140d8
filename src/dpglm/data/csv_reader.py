"""Reading CSV files with the standard library, so that pandas is not needed."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import numpy as np

from dpglm.data.columns import TARGET, parse_text_column, parse_text_labels
from dpglm.data.locations import feature_column, file_rows, target_column
from dpglm.data.table import Table, check_unique_names, feature_indices, find_target
from dpglm.exceptions import EmptyDataError, UnreadableFileError


def read_csv(text: str, path: str | os.PathLike[str], *, target: str | None, task: str) -> Table:
    """Parse CSV text (comma-separated, header row first) into a :class:`Table`.

    Blank lines are skipped; every other line must have as many fields as the
    header. The target is the column named ``target`` (default: the last one).
    Feature cells must be numbers (or ``True`` / ``False`` for a whole
    column); a classification target may also hold text labels.

    Parameters
    ----------
    text : str
        The decoded file content.
    path : str or os.PathLike
        The file, for messages.
    target : str or None
    task : {"regression", "classification"}

    Examples
    --------
    >>> table = read_csv(
    ...     "a,b,y\\n1,2,yes\\n3,4,no\\n", "t.csv", target=None, task="classification"
    ... )
    >>> table.X, table.y, table.feature_names
    (array([[1., 2.],
           [3., 4.]]), array(['yes', 'no'], dtype='<U3'), ['a', 'b'])
    """
    shown = repr(os.fspath(path))
    header, rows, lines = split_records(text, shown)
    check_unique_names(header, shown)
    t = find_target(header, target, shown)
    features = feature_indices(len(header), t, shown)
    cells = np.array(rows, dtype=str).reshape(len(rows), len(header))
    describe_row = file_rows(lines, Path(path).name)
    names = [header[j] for j in features]
    X = np.empty((len(rows), len(features)), dtype=np.float64, order="F")
    for k, j in enumerate(features):
        X[:, k] = parse_text_column(
            cells[:, j], column=feature_column(names, k), describe_row=describe_row
        )
    label = target_column(header[t])
    if task == "regression":
        y = parse_text_column(cells[:, t], column=label, describe_row=describe_row, role=TARGET)
    else:
        y = parse_text_labels(cells[:, t], column=label, describe_row=describe_row)
    return Table(X, y, names, header[t], Path(path).name, describe_row)


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
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    rows: list[list[str]] = []
    lines: list[int] = []
    # A quoted field may span lines; a record is named by the line it starts on.
    start = 1
    try:
        for record in reader:
            if not record:
                pass
            elif header is None:
                header = record
            elif len(record) != len(header):
                raise UnreadableFileError(
                    f"cannot read {shown}: line {start} has {len(record)} fields, "
                    f"expected {len(header)} as in the header"
                )
            else:
                rows.append(record)
                lines.append(start)
            start = reader.line_num + 1
    except csv.Error as err:
        raise UnreadableFileError(
            f"cannot read {shown}: line {start} is not valid CSV ({err})"
        ) from err
    if header is None:
        raise EmptyDataError(f"{shown} is empty; expected a header row and data rows")
    if not rows:
        raise EmptyDataError(f"{shown} has a header but no data rows")
    return header, rows, lines
