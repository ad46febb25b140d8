"""Turning the target column into the ``y`` the solvers read."""

from __future__ import annotations

from typing import Any

import numpy as np

from dpglm.data.columns import TARGET, to_float_column
from dpglm.data.labels import ClassLabels
from dpglm.data.locations import RowNamer, plain_row, target_column
from dpglm.exceptions import ShapeMismatchError

TASKS = ("regression", "classification")


def check_task(task: str) -> None:
    """Refuse an unknown task name.

    Examples
    --------
    >>> check_task("classification")
    >>> check_task("ranking")
    Traceback (most recent call last):
    ...
    ValueError: task must be one of ('regression', 'classification'), got 'ranking'
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")


def check_target_shape(values: np.ndarray) -> None:
    """Refuse a target that is not 1-D (a column vector is not silently flattened).

    Examples
    --------
    >>> import numpy as np
    >>> check_target_shape(np.zeros((3, 1)))
    Traceback (most recent call last):
    ...
    dpglm.exceptions.ShapeMismatchError: y must be 1-D of shape (n_samples,), got shape (3, 1); pass y.ravel()
    """  # noqa: E501
    if values.ndim != 1:
        hint = "; pass y.ravel()" if values.ndim == 2 and values.shape[1] == 1 else ""
        raise ShapeMismatchError(
            f"y must be 1-D of shape (n_samples,), got shape {values.shape}{hint}"
        )


def make_target(
    values: np.ndarray,
    task: str,
    *,
    name: str | None = None,
    describe_row: RowNamer = plain_row,
    missing: np.ndarray | None = None,
    classes: Any = None,
) -> tuple[np.ndarray, ClassLabels | None]:
    """Validate a target column and encode it for ``task``.

    Parameters
    ----------
    values : ndarray of shape (n_samples,)
        The target as read: numbers for regression; numbers, strings or
        booleans for classification.
    task : {"regression", "classification"}
    name : str, optional
        Name of the target column, used in messages.
    describe_row : callable
        Row namer used in messages.
    missing : ndarray of bool, optional
        Cells known to be missing (pandas NA, Parquet null).
    classes : array-like of labels, optional
        Classification: the public label set (see
        :meth:`ClassLabels.from_classes`); the target must hold only these
        labels and may lack some. None: the labels are read from the target.

    Returns
    -------
    y : ndarray of float64
        The target itself (regression) or its codes (classification: -1 / +1
        for two classes, ``0, ..., K-1`` for more).
    labels : ClassLabels or None
        The label mapping, for classification (:class:`BinaryLabels` for two
        classes).

    Examples
    --------
    >>> import numpy as np
    >>> y, labels = make_target(np.array(["no", "yes", "no"]), "classification")
    >>> y, labels
    (array([-1.,  1., -1.]), BinaryLabels(['no', 'yes']))
    >>> make_target(np.array([1, 1]), "classification", classes=[1, 0])
    (array([1., 1.]), BinaryLabels([0, 1]))
    >>> make_target(np.array(["b", "c", "a"]), "classification")
    (array([1., 2., 0.]), ClassLabels(['a', 'b', 'c']))
    """
    check_task(task)
    check_target_shape(values)
    label = target_column(name)
    if classes is not None:
        if task == "regression":
            raise ValueError("classes applies to classification, not to regression")
        labels = ClassLabels.from_classes(classes)
        y = labels.encode(values, name=label, describe_row=describe_row, missing=missing)
        return y, labels
    if task == "regression":
        y = to_float_column(
            values, column=label, describe_row=describe_row, missing=missing, role=TARGET
        )
        return y, None
    labels = ClassLabels.from_values(
        values, name=label, describe_row=describe_row, missing=missing
    )
    return labels.encode(values, name=label, describe_row=describe_row), labels
