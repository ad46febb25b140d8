"""Rows of the caller's data by position, in the caller's type (dpglm.data.rows)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dpglm.data.rows import take_rows

X = np.arange(15.0).reshape(5, 3)
POSITIONS = np.array([3, 0, 2])


@pytest.mark.parametrize("make", [np.asarray, np.asfortranarray, sp.csr_matrix, sp.csc_array])
def test_arrays_and_sparse_matrices_keep_their_type(make):
    rows = take_rows(make(X), POSITIONS)
    assert type(rows) is type(make(X))
    dense = rows.toarray() if sp.issparse(rows) else rows
    np.testing.assert_array_equal(dense, X[POSITIONS])


def test_lists_and_tuples_give_lists():
    assert take_rows(X.tolist(), POSITIONS) == X[POSITIONS].tolist()
    assert take_rows(("a", "b", "c", "d"), [3, 0]) == ["d", "a"]


def test_pandas_rows_are_taken_by_position_as_copies():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["a", "b", "c"], index=[40, 30, 20, 10, 0])
    rows = take_rows(frame, POSITIONS)
    assert list(rows.index) == [10, 40, 20] and list(rows.columns) == ["a", "b", "c"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a view would warn (SettingWithCopyWarning)
        rows["a"] = 0.0
    assert frame["a"].tolist() == X[:, 0].tolist()
    series = pd.Series(X[:, 1], index=list("vwxyz"), name="t")
    assert take_rows(series, POSITIONS).to_dict() == {"y": 10.0, "v": 1.0, "x": 7.0}


def test_pyarrow_rows_are_rows_not_columns():
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"a": X[:, 0], "b": X[:, 1]})
    assert take_rows(table, POSITIONS).column("a").to_pylist() == X[POSITIONS, 0].tolist()
    assert take_rows(pa.array(X[:, 2]), POSITIONS).to_pylist() == X[POSITIONS, 2].tolist()


@pytest.mark.parametrize("positions", [[0.5, 1.0], [[0, 1]], ["a"]])
def test_positions_must_be_integers(positions):
    with pytest.raises(TypeError, match="positions must be a 1-D sequence of integers"):
        take_rows(X, positions)


def test_no_positions_give_no_rows():
    assert take_rows(X, []).shape == (0, 3)
    assert take_rows([1, 2], []) == []
