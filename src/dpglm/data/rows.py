"""Rows of the caller's data by position, kept in the caller's type.

A meta-estimator (:class:`~dpglm.tuning.PrivateSearchCV`) splits ``X`` and
``y`` into training and validation parts before an estimator reads each part
with :func:`dpglm.data.load`. The parts keep the type they were given in, so
that the estimator sees what it would have seen on the whole input (a
DataFrame's column names, a sparse matrix's format).

Examples
--------
>>> import numpy as np
>>> from dpglm.data.rows import take_rows
>>> take_rows(np.arange(6).reshape(3, 2), [2, 0])
array([[4, 5],
       [0, 1]])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from dpglm.data.frames import is_dataframe, is_series

__all__ = ["take_rows"]


def take_rows(data: Any, positions) -> Any:
    """The rows of ``data`` at the integer ``positions``, in the type of ``data``.

    Parameters
    ----------
    data : ndarray, sparse matrix, pandas DataFrame or Series, pyarrow Table or Array, or list
        Anything :func:`dpglm.data.load` reads from memory.
    positions : array-like of int
        Row positions (not labels: a pandas index is ignored), in the order wanted.

    Returns
    -------
    object
        The selected rows: an object of the type of ``data`` (a list for a list
        or a tuple).

    Raises
    ------
    TypeError
        ``positions`` is not a 1-D sequence of integers.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> take_rows(sp.csr_matrix(np.eye(3)), [1]).toarray()
    array([[0., 1., 0.]])
    >>> take_rows(["a", "b", "c"], np.array([2, 0]))
    ['c', 'a']
    """
    positions = np.asarray(positions)
    if positions.ndim != 1 or (positions.size and positions.dtype.kind not in "iu"):
        raise TypeError(f"positions must be a 1-D sequence of integers, got {positions!r}")
    positions = positions.astype(np.intp, copy=False)
    if is_dataframe(data) or is_series(data):
        # take() selects by position whatever the index, and returns a copy, never a
        # view that would warn (SettingWithCopyWarning) when the estimator writes to it
        return data.take(positions, axis=0)
    if type(data).__module__.split(".")[0] == "pyarrow":
        # a Table, RecordBatch, Array or ChunkedArray: indexing one picks a column
        return data.take(positions)
    if sp.issparse(data) or hasattr(data, "shape"):
        return data[positions]
    return [data[i] for i in positions.tolist()]
