"""The mapping between class labels and the codes the solvers use (-1 / +1 for two classes)."""

from __future__ import annotations

from typing import Any

import numpy as np

from dpglm.data.columns import (
    check_finite_column,
    is_missing_scalar,
    raise_missing,
    raise_nonfinite,
)
from dpglm.data.locations import RowNamer, plain_row, preview, show_value
from dpglm.exceptions import TargetError


def _distinct_labels(values: np.ndarray, name: str, error: type) -> np.ndarray:
    """The sorted distinct labels of ``values``, or ``error`` saying why they are not labels."""
    if values.dtype.kind == "c":
        raise error(f"{name} holds complex numbers, which cannot be class labels")
    try:
        return np.unique(values)
    except TypeError as err:
        raise error(
            f"{name} mixes label types that cannot be sorted together ({err}); "
            "use labels of one type"
        ) from err


class ClassLabels:
    """Class labels in sorted order, encoded as their positions ``0, ..., K-1``.

    The codes of a multinomial fit (:class:`~dpglm.datafits.Multinomial`) and
    of one-vs-rest. The labels are kept in the order ``numpy.unique`` sorts
    them, so the codes do not depend on the order of the data.
    :meth:`of` gives :class:`BinaryLabels` (codes -1 / +1) for two classes.

    Parameters
    ----------
    classes : array-like of length K >= 2
        Distinct labels in sorted order (as ``numpy.unique`` returns them).

    Examples
    --------
    >>> labels = ClassLabels(["a", "b", "c"])
    >>> labels.encode(["c", "a", "c"])
    array([2., 0., 2.])
    >>> labels.decode([1, 2]).tolist(), labels.n_classes
    (['b', 'c'], 3)
    """

    __slots__ = ("_classes",)
    #: the number of classes the class takes (None: any number from 2 on)
    _exact = None

    def __init__(self, classes: Any) -> None:
        classes = np.array(classes)
        name = type(self).__name__
        if self._exact is not None and classes.shape != (self._exact,):
            raise ValueError(f"{name} needs exactly two classes, got shape {classes.shape}")
        if classes.ndim != 1 or classes.shape[0] < 2:
            raise ValueError(f"{name} needs at least two classes, got shape {classes.shape}")
        if not np.array_equal(np.unique(classes), classes):
            raise ValueError(
                f"{name} needs distinct classes in sorted order, got {preview(classes)}; use "
                f"{name}.from_values(y) to find them"
            )
        classes.flags.writeable = False
        self._classes = classes

    @staticmethod
    def of(classes: Any) -> ClassLabels:
        """:class:`BinaryLabels` for two sorted classes, :class:`ClassLabels` for more.

        Examples
        --------
        >>> ClassLabels.of([0, 1]), ClassLabels.of([0, 1, 2])
        (BinaryLabels([0, 1]), ClassLabels([0, 1, 2]))
        """
        classes = np.asarray(classes)
        return BinaryLabels(classes) if classes.shape == (2,) else ClassLabels(classes)

    @classmethod
    def from_values(
        cls,
        values: Any,
        *,
        name: str = "target",
        describe_row: RowNamer = plain_row,
        missing: np.ndarray | None = None,
    ) -> ClassLabels:
        """Find the classes of a label vector (:class:`BinaryLabels` when there are two).

        Parameters
        ----------
        values : array-like of shape (n_samples,)
            Labels of any sortable type (numbers, strings, booleans).
        name : str
            How messages name the labels.
        describe_row : callable
            Row namer used in messages (see :mod:`dpglm.data.locations`).
        missing : ndarray of bool, optional
            Cells known to be missing (pandas NA, Parquet null).

        Raises
        ------
        NonFiniteValueError
            A label is missing, NaN or infinite; the message names the row.
        TargetError
            Fewer than two distinct labels (:class:`BinaryLabels`: not exactly
            two); the message says how many and which.

        Examples
        --------
        >>> ClassLabels.from_values([2, 1, 3, 1])
        ClassLabels([1, 2, 3])
        >>> BinaryLabels.from_values([2, 1, 1]).classes
        array([1, 2])
        """
        values = np.asarray(values)
        if values.ndim != 1:
            raise TargetError(f"{name} must be 1-D, got shape {values.shape}")
        _check_present(values, name=name, describe_row=describe_row, missing=missing)
        classes = _distinct_labels(values, name, TargetError)
        if cls._exact is not None and len(classes) != cls._exact:
            raise TargetError(
                f"classification needs exactly two distinct labels in the {name}, "
                f"found {len(classes)}: {preview(classes)}"
            )
        if len(classes) < 2:
            raise TargetError(
                f"classification needs at least two distinct labels in the {name}, found "
                f"{len(classes)}: {preview(classes)} (give the public label set as classes= "
                "to fit a training set that lacks the others)"
            )
        return cls(classes) if cls._exact is not None else ClassLabels.of(classes)

    @classmethod
    def from_classes(cls, classes: Any, *, name: str = "classes") -> ClassLabels:
        """The public label set given by the user, in sorted order.

        Unlike :meth:`from_values`, nothing is read from the data: the data
        must hold only these labels, and may lack some of them.
        :class:`ClassLabels` gives :class:`BinaryLabels` for two labels.

        Parameters
        ----------
        classes : array-like
            Distinct labels (two for :class:`BinaryLabels`, at least two
            otherwise), in any order.
        name : str
            How messages name the label set.

        Raises
        ------
        ValueError
            ``classes`` is not a 1-D list of distinct, present, sortable
            labels of the right number.

        Examples
        --------
        >>> BinaryLabels.from_classes(["yes", "no"]).classes
        array(['no', 'yes'], dtype='<U3')
        >>> ClassLabels.from_classes([2, 0, 1])
        ClassLabels([0, 1, 2])
        >>> BinaryLabels.from_classes([0, 1, 2])
        Traceback (most recent call last):
        ...
        ValueError: classes must hold exactly two distinct labels (binary classification), got [0, 1, 2]
        """  # noqa: E501
        what = "two labels" if cls._exact is not None else "labels"
        if isinstance(classes, str | bytes):
            raise ValueError(f"{name} must be a list of {what}, got the string {classes!r}")
        try:
            values = np.asarray(classes)
        except ValueError as err:
            raise ValueError(f"{name} must be a 1-D list of {what} ({err})") from err
        if values.ndim != 1:
            raise ValueError(f"{name} must be a 1-D list of {what}, got shape {values.shape}")
        for i, value in enumerate(values):
            if is_missing_scalar(value) or (
                isinstance(value, float | np.floating) and np.isinf(value)
            ):
                raise ValueError(f"{name} has {show_value(value)} at position {i}, not a label")
        unique = _distinct_labels(values, name, ValueError)
        if cls._exact is not None and (len(values) != 2 or len(unique) != 2):
            raise ValueError(
                f"{name} must hold exactly two distinct labels (binary classification), got "
                f"{preview(values)}"
            )
        if len(unique) != len(values) or len(unique) < 2:
            raise ValueError(
                f"{name} must hold at least two distinct labels, each once, got {preview(values)}"
            )
        return cls(unique) if cls._exact is not None else ClassLabels.of(unique)

    @property
    def classes(self) -> np.ndarray:
        """The original labels, sorted; label ``classes[k]`` has code ``k``."""
        return self._classes

    @property
    def n_classes(self) -> int:
        """``K``, the number of classes."""
        return int(self._classes.shape[0])

    def _positions(self, values, name, describe_row, missing) -> np.ndarray:
        """The position of each value in ``classes``, or a TargetError naming the first row."""
        values = np.asarray(values)
        if values.ndim != 1:
            raise TargetError(f"{name} must be a 1-D array of labels, got shape {values.shape}")
        codes = np.full(values.shape[0], -1, dtype=np.intp)
        for k, label in enumerate(self._classes):
            codes[_equals(values, label)] = k
        if (codes < 0).any():
            i = int(np.argmax(codes < 0))
            # a missing value is named as such (the check raises for row i, or passes)
            _check_present(
                values[i : i + 1],
                name=name,
                describe_row=lambda _: describe_row(i),
                missing=None if missing is None else np.asarray(missing)[i : i + 1],
            )
            which = "neither of the two" if self.n_classes == 2 else "none of the"
            raise TargetError(
                f"{name} has label {show_value(values[i])} at {describe_row(i)}, which is "
                f"{which} classes {preview(self._classes)}"
            )
        return codes

    def encode(
        self,
        values: Any,
        *,
        name: str = "target",
        describe_row: RowNamer = plain_row,
        missing: np.ndarray | None = None,
    ) -> np.ndarray:
        """Map labels to their codes (float64): positions, or -1 / +1 for two classes.

        Parameters
        ----------
        values : array-like of shape (n_samples,)
        name : str
            How messages name the labels.
        describe_row : callable
            Row namer used in messages.
        missing : ndarray of bool, optional
            Cells known to be missing (pandas NA, Parquet null).

        Raises
        ------
        TargetError
            A value is none of the classes; the message names its first row.
        NonFiniteValueError
            That first value is missing, NaN or infinite.

        Examples
        --------
        >>> BinaryLabels([0, 1]).encode([1, 0, 0])
        array([ 1., -1., -1.])
        """
        return self._codes(self._positions(values, name, describe_row, missing))

    def _codes(self, positions: np.ndarray) -> np.ndarray:
        """The codes of the classes at ``positions`` in ``classes``."""
        return positions.astype(float)

    def decode(self, codes: Any) -> np.ndarray:
        """Map codes (e.g. predictions) back to the original labels.

        Raises
        ------
        ValueError
            A value is not a code.

        Examples
        --------
        >>> ClassLabels(["a", "b", "c"]).decode([2.0, 0.0]).tolist()
        ['c', 'a']
        """
        codes = np.asarray(codes)
        valid = np.isin(codes, np.arange(self.n_classes))
        if not np.all(valid):
            i = int(np.argmin(np.ravel(valid)))
            raise ValueError(
                f"decode expects codes 0 to {self.n_classes - 1}, got "
                f"{show_value(np.ravel(codes)[i])} at position {i}"
            )
        return self._classes[codes.astype(np.intp)]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClassLabels) or type(self) is not type(other):
            return NotImplemented
        return (
            self._classes.dtype.kind == other._classes.dtype.kind
            and self._classes.shape == other._classes.shape
            and bool(np.all(self._classes == other._classes))
        )

    def __hash__(self) -> int:
        return hash(tuple(self._classes.tolist()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({preview(self._classes)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self._classes.copy(),))


class BinaryLabels(ClassLabels):
    """Two class labels, encoded as -1 (the first) and +1 (the second).

    The labels are kept in the order ``numpy.unique`` sorts them, so the
    mapping does not depend on which label comes first in the data:
    ``classes[0]`` is encoded as -1 and ``classes[1]`` as +1.

    Parameters
    ----------
    classes : array-like of length 2
        The two labels, distinct and in sorted order (as ``numpy.unique``
        returns them). Use :meth:`from_values` to find them from data.

    Attributes
    ----------
    classes : ndarray of shape (2,)
        The original labels (read-only), with their original dtype.

    Examples
    --------
    >>> labels = BinaryLabels.from_values(["yes", "no", "yes"])
    >>> labels.classes
    array(['no', 'yes'], dtype='<U3')
    >>> labels.encode(["yes", "no", "yes"])
    array([ 1., -1.,  1.])
    >>> labels.decode([1, -1])
    array(['yes', 'no'], dtype='<U3')
    """

    __slots__ = ()
    _exact = 2

    def _codes(self, positions: np.ndarray) -> np.ndarray:
        return 2.0 * positions - 1.0  # -1 for classes[0], +1 for classes[1]

    def decode(self, codes: Any) -> np.ndarray:
        """Map -1 / +1 codes (e.g. predictions) back to the original labels.

        Raises
        ------
        ValueError
            A value is neither -1 nor +1.

        Examples
        --------
        >>> BinaryLabels(["cat", "dog"]).decode([-1.0, 1.0, 1.0])
        array(['cat', 'dog', 'dog'], dtype='<U3')
        """
        codes = np.asarray(codes)
        positive = codes == 1
        valid = positive | (codes == -1)
        if not np.all(valid):
            i = int(np.argmin(np.ravel(valid)))
            raise ValueError(
                f"decode expects -1 / +1 codes, got {show_value(np.ravel(codes)[i])} "
                f"at position {i}"
            )
        return self._classes[positive.astype(np.intp)]


def _equals(values: np.ndarray, label: Any) -> np.ndarray:
    # Comparing e.g. strings with numbers gives a scalar False (or raises) instead
    # of an elementwise result; either way no element equals the label.
    try:
        result = np.asarray(values == label, dtype=bool)
    except (TypeError, ValueError):
        result = np.zeros(0, dtype=bool)
    return result if result.shape == values.shape else np.zeros(values.shape, dtype=bool)


def _check_present(
    values: np.ndarray, *, name: str, describe_row: RowNamer, missing: np.ndarray | None
) -> None:
    if missing is not None and missing.any():
        raise_missing(name, describe_row, int(np.argmax(missing)))
    kind = values.dtype.kind
    if kind == "f":
        check_finite_column(values, column=name, describe_row=describe_row)
    elif kind in "Mm":
        nat = np.isnat(values)
        if nat.any():
            raise_missing(name, describe_row, int(np.argmax(nat)), values)
    elif kind == "O":
        for i, value in enumerate(values):
            if is_missing_scalar(value):
                raise_missing(name, describe_row, i, values)
            if isinstance(value, float | np.floating) and np.isinf(value):
                raise_nonfinite(name, describe_row, i, value)
