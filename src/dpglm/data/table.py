"""What every reader hands to :func:`dpglm.data.load`, and the column-name rules."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, NamedTuple

import numpy as np

from dpglm.data.locations import RowNamer, plain_row, preview
from dpglm.exceptions import DataError, EmptyDataError, TargetError


class Table(NamedTuple):
    """Validated features and the raw target column, before the target is encoded.

    Attributes
    ----------
    X : ndarray or scipy sparse matrix
        Finite float64 features (any layout; :class:`Dataset` fixes it).
    y : ndarray of shape (n_samples,)
        The target as read (numbers, strings, ...), not yet validated.
    feature_names : list of str or None
    target_name : str or None
    source : str
    describe_row : callable
        How messages name row ``i`` (with its file line when there is one).
    y_missing : ndarray of bool or None
        Target cells known to be missing (pandas NA, Parquet null).

    Examples
    --------
    >>> import numpy as np
    >>> Table(np.eye(2), np.array([1.0, 2.0]), None, None, "numpy array").describe_row(1)
    'row 1'
    """

    X: Any
    y: np.ndarray
    feature_names: list[str] | None
    target_name: str | None
    source: str
    describe_row: RowNamer = plain_row
    y_missing: np.ndarray | None = None


def check_unique_names(names: Sequence[Hashable], source: str) -> None:
    """Refuse duplicate column names, which would make ``target=`` ambiguous.

    Examples
    --------
    >>> check_unique_names(["a", "b", "a"], "data.csv")
    Traceback (most recent call last):
    ...
    dpglm.exceptions.DataError: data.csv: column name 'a' appears twice (columns 0 and 2); column names must be unique
    """  # noqa: E501
    seen: dict[Hashable, int] = {}
    for j, name in enumerate(names):
        if name in seen:
            raise DataError(
                f"{source}: column name {name!r} appears twice (columns {seen[name]} and {j}); "
                "column names must be unique"
            )
        seen[name] = j


def find_target(names: Sequence[Hashable], target: Hashable | None, source: str) -> int:
    """Index of the target column: the one named ``target``, else the last one.

    Raises
    ------
    TargetError
        No column has that name; the message lists the available columns.
    EmptyDataError
        There are no columns at all.

    Examples
    --------
    >>> find_target(["a", "b", "y"], None, "data.csv"), find_target(["a", "y", "b"], "y", "f")
    (2, 1)
    """
    if len(names) == 0:
        raise EmptyDataError(f"{source} has no columns")
    if target is None:
        return len(names) - 1
    for j, name in enumerate(names):
        if name == target:
            return j
    raise TargetError(
        f"{source} has no column named {target!r} (target=); "
        f"available columns: {preview(list(names), limit=20)}"
    )


def feature_indices(n_columns: int, target_index: int, source: str) -> list[int]:
    """All columns but the target; refuses a table whose only column is the target.

    Examples
    --------
    >>> feature_indices(3, 1, "data.csv")
    [0, 2]
    """
    indices = [j for j in range(n_columns) if j != target_index]
    if not indices:
        raise EmptyDataError(f"{source} has no feature columns: its only column is the target")
    return indices
