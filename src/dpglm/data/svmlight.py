"""Reading LIBSVM / svmlight files.

scikit-learn's parser does the work when the file is valid. When it is not,
its message says what but not where, so the file is scanned again here to
name the line and the token at fault. Two things scikit-learn would accept
are refused: ``qid:`` tokens (ranking files) and indices beyond
``n_features``.
"""

from __future__ import annotations

import io
import os
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from dpglm.data.layout import as_layout, sparse_matrix
from dpglm.data.locations import RowNamer, lazy_file_rows
from dpglm.data.table import Table
from dpglm.data.validation import check_finite_sparse
from dpglm.exceptions import EmptyDataError, ShapeMismatchError, UnreadableFileError

ZERO_BASED_CHOICES = ("auto", True, False)


def read_svmlight(
    raw: bytes,
    path: str | os.PathLike[str],
    *,
    n_features: int | None = None,
    zero_based: bool | str = "auto",
) -> Table:
    """Parse LIBSVM content (``label index:value ...`` per line) into a :class:`Table`.

    Blank lines and ``#`` comments are skipped. The labels become the target
    (``y``), as integers when they are all whole numbers; features become a
    CSC matrix.

    Parameters
    ----------
    raw : bytes
        The (decompressed) file content.
    path : str or os.PathLike
        The file, for messages.
    n_features : int, optional
        Number of columns; columns beyond the largest index in the file are
        all zero. An index beyond it raises :class:`ShapeMismatchError`
        naming the line.
    zero_based : {"auto", True, False}
        Whether indices start at 0. ``"auto"`` (scikit-learn's rule) reads the
        file as 1-based unless some index is 0, and then warns (naming the
        first line with index 0): a single stray ``0:`` would otherwise shift
        every column of a 1-based file without a word.

    Examples
    --------
    >>> table = read_svmlight(b"1 1:0.5 3:2\\n-1 2:1\\n", "t.svm", n_features=4)
    >>> table.X.toarray(), table.y
    (array([[0.5, 0. , 2. , 0. ],
           [0. , 1. , 0. , 0. ]]), array([ 1, -1]))
    """
    check_zero_based(zero_based)
    shown = repr(os.fspath(path))
    X, y = _parse(raw, shown)
    if X.shape[0] == 0:
        raise EmptyDataError(f"{shown} has no data lines")
    describe_row = lazy_file_rows(lambda: data_lines(raw), Path(path).name)
    offset = _index_offset(X, zero_based, shown, describe_row)
    X = _shift_columns(X, offset)
    if n_features is not None:
        _check_width(X, n_features, offset, shown, describe_row)
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
    if X.shape[1] == 0:
        raise EmptyDataError(
            f"{shown} has no feature values, only labels; pass n_features to read "
            "all-zero features"
        )
    # the parser builds rows: kept as CSR, canonical (sorted, duplicates summed)
    X = sparse_matrix(as_layout(X, "rows"))
    check_finite_sparse(X, describe_row=describe_row)
    return Table(X, integral_labels(y), None, None, Path(path).name, describe_row)


def integral_labels(y: np.ndarray) -> np.ndarray:
    """Labels as int64 when they are all whole numbers, as CSV labels are read.

    The parser returns floats; class labels written ``+1`` / ``-1`` should
    come back as integers, exactly.

    Examples
    --------
    >>> integral_labels(np.array([1.0, -1.0])), integral_labels(np.array([0.5, 1.0]))
    (array([ 1, -1]), array([0.5, 1. ]))
    """
    whole = np.isfinite(y).all() and np.all(y == np.round(y)) and np.all(np.abs(y) < 2.0**53)
    return y.astype(np.int64) if whole else y


def check_zero_based(zero_based: object) -> None:
    """Refuse a ``zero_based`` argument other than ``"auto"``, True or False.

    Examples
    --------
    >>> check_zero_based("auto")
    >>> check_zero_based(1)
    Traceback (most recent call last):
    ...
    ValueError: zero_based must be one of ('auto', True, False), got 1
    """
    if not (zero_based is True or zero_based is False or zero_based == "auto"):
        raise ValueError(f"zero_based must be one of {ZERO_BASED_CHOICES}, got {zero_based!r}")


def data_lines(raw: bytes) -> np.ndarray:
    """1-based numbers of the lines that hold a sample (not blank, not only a comment).

    Examples
    --------
    >>> data_lines(b"# header\\n1 1:2\\n\\n-1 2:1 # note\\n")
    array([2, 4])
    """
    numbers = [
        number
        for number, line in enumerate(raw.split(b"\n"), start=1)
        if line.split(b"#", 1)[0].split()
    ]
    return np.asarray(numbers, dtype=np.int64)


def find_problem(raw: bytes) -> str | None:
    """The first malformed line of LIBSVM content, described; None if all are valid.

    Examples
    --------
    >>> find_problem(b"1 1:2\\n-1 2:x\\n")
    "line 2: token '2:x': value 'x' is not a number"
    >>> find_problem(b"1,2 1:2\\n")
    "line 1: label '1,2' lists several labels; multi-label files are not supported"
    """
    for number, line in enumerate(raw.split(b"\n"), start=1):
        tokens = line.split(b"#", 1)[0].split()
        if tokens:
            problem = _line_problem(tokens)
            if problem is not None:
                return f"line {number}: {problem}"
    return None


def _parse(raw: bytes, shown: str) -> tuple[sp.csr_matrix, np.ndarray]:
    from sklearn.datasets import load_svmlight_file

    try:
        # Read indices as they are written; which base they use is decided here.
        X, y = load_svmlight_file(io.BytesIO(raw), zero_based=True, dtype=np.float64)
    except (ValueError, TypeError, OverflowError) as err:
        problem = find_problem(raw)
        raise UnreadableFileError(f"cannot read {shown}: {problem or err}") from err
    if b"qid:" in raw:
        # scikit-learn drops query ids silently unless asked for them.
        problem = find_problem(raw)
        if problem is not None:
            raise UnreadableFileError(f"cannot read {shown}: {problem}")
    return X, y


def _index_offset(
    X: sp.csr_matrix, zero_based: bool | str, shown: str, describe_row: RowNamer
) -> int:
    has_zero = X.nnz > 0 and int(X.indices.min()) == 0
    if zero_based is True:
        return 0
    if not has_zero:
        return 1
    row = _row_of_entry(X, int(np.argmax(X.indices == 0)))
    if zero_based == "auto":
        # one stray "0:" would shift every column of a 1-based file: said, not silent
        warnings.warn(
            f"{shown} is read with 0-based feature indices because {describe_row(row)} has "
            "index 0 (LIBSVM files are usually 1-based); pass zero_based=True to read it "
            "0-based without this warning, or zero_based=False to refuse index 0",
            UserWarning,
            stacklevel=5,
        )
        return 0
    raise UnreadableFileError(
        f"cannot read {shown}: {describe_row(row)} has feature index 0, but the file is read "
        "1-based (zero_based=False, or 'auto' for a list of files); pass zero_based=True if "
        "its indices start at 0"
    )


def _shift_columns(X: sp.csr_matrix, offset: int) -> sp.csr_matrix:
    width = int(X.indices.max()) + 1 - offset if X.nnz else 0
    return sp.csr_matrix((X.data, X.indices - offset, X.indptr), shape=(X.shape[0], width))


def _check_width(
    X: sp.csr_matrix, n_features: int, offset: int, shown: str, describe_row: RowNamer
) -> None:
    if X.shape[1] <= n_features:
        return
    k = int(np.argmax(X.indices >= n_features))
    raise ShapeMismatchError(
        f"{shown}: {describe_row(_row_of_entry(X, k))} has feature index "
        f"{int(X.indices[k]) + offset}, beyond n_features={n_features} "
        f"(indices are {offset}-based, so the largest allowed is {n_features - 1 + offset})"
    )


def _row_of_entry(X: sp.csr_matrix, k: int) -> int:
    return int(np.searchsorted(X.indptr, k, side="right")) - 1


def _line_problem(tokens: list[bytes]) -> str | None:
    label = tokens[0]
    if b"," in label:
        return f"label {_show(label)} lists several labels; multi-label files are not supported"
    if not _is_float(label):
        return f"label {_show(label)} is not a number"
    previous = -1
    for token in tokens[1:]:
        if token.startswith(b"qid:"):
            return f"token {_show(token)} is a query id; qid files (for ranking) are not supported"
        index, sep, value = token.partition(b":")
        if not sep or not index or not value:
            return f"token {_show(token)} is not of the form index:value"
        if not index.isdigit():
            return f"token {_show(token)}: index {_show(index)} is not a non-negative integer"
        if not _is_float(value):
            return f"token {_show(token)}: value {_show(value)} is not a number"
        if int(index) <= previous:
            return (
                f"token {_show(token)}: indices must increase along a line "
                f"(index {int(index)} comes after {previous})"
            )
        previous = int(index)
    return None


def _is_float(text: bytes) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _show(token: bytes) -> str:
    return repr(token.decode("utf-8", errors="replace"))
