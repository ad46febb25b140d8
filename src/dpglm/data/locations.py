"""How error messages name rows, columns and lists of values.

Rows are counted from 0, as in NumPy; file lines are counted from 1, as in
editors. A *row namer* is a function ``i -> str`` that turns a row index into
the words used in a message, so that the code that finds a bad value does not
need to know where the data came from.

Examples
--------
>>> describe_row = file_rows([2, 3, 5], "data.csv")
>>> describe_row(2)
'row 2 (line 5 of data.csv)'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

RowNamer = Callable[[int], str]


def plain_row(i: int) -> str:
    """Name row ``i`` of an in-memory array.

    Examples
    --------
    >>> plain_row(3)
    'row 3'
    """
    return f"row {i}"


def file_rows(lines: Sequence[int], file_name: str) -> RowNamer:
    """Row namer that adds the file line on which each row starts.

    Parameters
    ----------
    lines : sequence of int
        ``lines[i]`` is the 1-based line number of row ``i``.
    file_name : str
        Name shown in the message.

    Examples
    --------
    >>> file_rows([2, 3], "a.csv")(1)
    'row 1 (line 3 of a.csv)'
    """

    def describe(i: int) -> str:
        return f"row {i} (line {int(lines[i])} of {file_name})"

    return describe


def lazy_file_rows(compute_lines: Callable[[], Sequence[int]], file_name: str) -> RowNamer:
    """Like :func:`file_rows`, but the line numbers are computed on first use.

    Mapping rows to lines means scanning the whole file again, which is only
    worth doing when an error message needs it.

    Examples
    --------
    >>> lazy_file_rows(lambda: [1, 4], "a.svm")(1)
    'row 1 (line 4 of a.svm)'
    """
    cache: list[Sequence[int]] = []

    def describe(i: int) -> str:
        if not cache:
            cache.append(compute_lines())
        return file_rows(cache[0], file_name)(i)

    return describe


def labelled_rows(labels: Sequence[Any]) -> RowNamer:
    """Row namer that adds the index label of each row (pandas input).

    Examples
    --------
    >>> labelled_rows(["a", "b"])(1)
    "row 1 (index label 'b')"
    """

    def describe(i: int) -> str:
        return f"row {i} (index label {labels[i]!r})"

    return describe


def feature_column(names: Sequence[str] | None, j: int) -> str:
    """Name feature column ``j``, with its name when the source has one.

    Examples
    --------
    >>> feature_column(["age", "income"], 1)
    "feature column 'income' (index 1)"
    >>> feature_column(None, 1)
    'feature column 1'
    """
    if names is None:
        return f"feature column {j}"
    return f"feature column {names[j]!r} (index {j})"


def target_column(name: str | None) -> str:
    """Name the target in a message.

    Examples
    --------
    >>> target_column("price")
    "target 'price'"
    >>> target_column(None)
    'target'
    """
    return "target" if name is None else f"target {name!r}"


def preview(values: Sequence[Any], limit: int = 5) -> str:
    """Show the first ``limit`` values of a list, and how many there are in all.

    Examples
    --------
    >>> preview(["a", "b"])
    "['a', 'b']"
    >>> preview(list(range(8)), limit=3)
    '[0, 1, 2, ...] (8 in total)'
    """
    shown = [_plain(v) for v in list(values)[:limit]]
    if len(values) <= limit:
        return repr(shown)
    return f"{repr(shown)[:-1]}, ...] ({len(values)} in total)"


def _plain(value: Any) -> Any:
    # NumPy scalars print as np.str_('a') / np.int64(3) under NumPy 2; messages
    # should show the value as the user wrote it.
    return value.item() if hasattr(value, "item") and hasattr(value, "dtype") else value


def show_value(value: Any) -> str:
    """Write one cell value for a message, as the user would write it.

    Examples
    --------
    >>> import numpy as np
    >>> show_value(np.str_("red")), show_value(np.float64("nan"))
    ("'red'", 'nan')
    """
    return repr(_plain(value))
