"""load() with NumPy arrays and SciPy sparse matrices."""

import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dpglm.data import load
from dpglm.exceptions import (
    EmptyDataError,
    NonFiniteValueError,
    NonNumericColumnError,
    ShapeMismatchError,
    TargetError,
)

X3 = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


def test_float_array_is_fortran_float64_without_copy():
    X = np.asfortranarray(X3)
    ds = load(X, [0.5, 1.5])
    assert ds.X is X
    assert ds.y.tolist() == [0.5, 1.5]
    assert ds.y.dtype == np.float64
    assert ds.source == "numpy array"
    assert ds.feature_names == ["x0", "x1", "x2"]
    assert ds.target_name is None


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int8, np.uint16, np.float16])
def test_numeric_dtypes_are_converted_exactly(dtype):
    X = np.array([[1, 2], [3, 4]], dtype=dtype)
    ds = load(X, [0, 1])
    assert ds.X.dtype == np.float64
    # a C-ordered array keeps its layout (rows); a Fortran-ordered one too
    assert ds.X.flags.c_contiguous and not ds.X.flags.f_contiguous
    assert ds.X.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert load(np.asfortranarray(X), [0, 1]).X.flags.f_contiguous


def test_boolean_features_are_zero_and_one():
    ds = load(np.array([[True, False], [False, True]]), [1.0, 2.0])
    assert ds.X.tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_nested_lists_and_object_arrays_of_numbers():
    assert load([[1, 2], [3, 4]], [0, 1]).X.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    X = np.array([[1, 2.5], [3, 4]], dtype=object)
    assert load(X, [0, 1]).X.tolist() == [[1.0, 2.5], [3.0, 4.0]]


def test_classification_labels_from_arrays():
    ds = load(X3, np.array([1, 2]), task="classification")
    assert ds.classes.tolist() == [1, 2]
    assert ds.y.tolist() == [-1.0, 1.0]
    assert ds.decode(ds.y).tolist() == [1, 2]


SPARSE_KINDS = [
    sp.coo_matrix,
    sp.csr_matrix,
    sp.csc_matrix,
    sp.dok_matrix,
    sp.lil_matrix,
    sp.bsr_matrix,
    sp.dia_matrix,
    sp.coo_array,
    sp.csr_array,
    sp.csc_array,
    sp.dok_array,
    sp.lil_array,
    sp.bsr_array,
    sp.dia_array,
]


@pytest.mark.parametrize("kind", SPARSE_KINDS, ids=lambda k: k.__name__)
def test_every_sparse_kind_becomes_canonical_float64_rows_or_columns(kind):
    dense = np.array([[0, 2, 0], [1, 0, 3], [0, 0, 4]], dtype=np.int32)
    ds = load(kind(dense), [1.0, 2.0, 3.0])
    # CSR keeps its rows; every other format becomes columns
    wanted = sp.csr_matrix if kind(dense).format == "csr" else sp.csc_matrix
    assert type(ds.X) is wanted
    assert ds.X.dtype == np.float64
    assert ds.X.has_sorted_indices
    assert ds.X.has_canonical_format
    assert np.array_equal(ds.X.toarray(), dense)
    assert ds.source == f"scipy.sparse {kind.__name__}"


@settings(max_examples=50, deadline=None)
@given(
    entries=st.lists(
        st.tuples(
            st.integers(0, 4),
            st.integers(0, 3),
            st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
        ),
        max_size=30,
    )
)
def test_coo_duplicates_are_summed(entries):
    rows = [e[0] for e in entries]
    cols = [e[1] for e in entries]
    vals = [e[2] for e in entries]
    coo = sp.coo_matrix((vals, (rows, cols)), shape=(5, 4))
    ds = load(coo, np.zeros(5))
    assert ds.X.has_canonical_format
    dense = np.zeros((5, 4))
    np.add.at(dense, (rows, cols), vals)
    assert np.allclose(ds.X.toarray(), dense, rtol=1e-12, atol=1e-6)


def test_sparse_input_is_not_modified():
    X = sp.csc_matrix(([1.0, 2.0], [0, 0], [0, 2]), shape=(1, 1))
    ds = load(X, [0.0])
    assert ds.X.toarray()[0, 0] == 3.0
    assert X.nnz == 2


def test_n_features_must_match_for_arrays():
    assert load(X3, [0, 1], n_features=3).n_features == 3
    with pytest.raises(ShapeMismatchError, match="3 feature columns but n_features=4"):
        load(X3, [0, 1], n_features=4)


# Error paths


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_feature_names_row_and_column(bad):
    X = X3.copy()
    X[1, 2] = bad
    with pytest.raises(
        NonFiniteValueError, match=r"feature column 2 has a non-finite value .* at row 1"
    ):
        load(X, [0, 1])


def test_first_non_finite_cell_is_reported_in_row_order():
    X = np.ones((3, 3))
    X[2, 0] = np.nan
    X[1, 2] = np.inf
    with pytest.raises(NonFiniteValueError, match=r"feature column 2 .* at row 1"):
        load(X, np.zeros(3))


def test_non_finite_sparse_entry_is_located():
    X = sp.lil_matrix((4, 5))
    X[0, 1] = 1.0
    X[3, 4] = np.nan
    with pytest.raises(
        NonFiniteValueError, match="feature column 4 has a non-finite value nan at row 3"
    ):
        load(X, np.zeros(4))


def test_missing_object_cell_names_row_and_column():
    X = np.array([[1.0, 2.0], [3.0, None]], dtype=object)
    with pytest.raises(
        NonFiniteValueError, match=r"feature column 1 has a missing value.*at row 1"
    ):
        load(X, [0, 1])


def test_non_finite_target_names_the_row():
    with pytest.raises(NonFiniteValueError, match="target has a non-finite value nan at row 1"):
        load(X3, [0.0, np.nan])


def test_string_features_are_refused_with_an_example():
    X = np.array([[1.0, "a"], [2.0, "b"]], dtype=object)
    with pytest.raises(
        NonNumericColumnError,
        match=r"feature column 1 is not numeric.*row 0 holds 'a'.*OneHotEncoder",
    ):
        load(X, [0, 1])
    with pytest.raises(NonNumericColumnError, match=r"feature column 0 .*row 0 holds '1'"):
        load(np.array([["1", "2"]]), [0])


def test_complex_features_are_refused():
    X = np.array([[1.0, 2.0 + 0j], [3.0, 4.0 + 1j]])
    with pytest.raises(NonNumericColumnError, match="feature column 1 is complex"):
        load(X, [0, 1])
    with pytest.raises(NonNumericColumnError, match="complex"):
        load(sp.csr_matrix(X), [0, 1])


def test_datetime_features_are_refused():
    X = np.array([["2020-01-01"], ["2021-01-01"]], dtype="datetime64[D]")
    with pytest.raises(NonNumericColumnError, match="feature column 0 holds dates"):
        load(X, [0, 1])


@pytest.mark.parametrize("shape", [(3,), (2, 2, 2)])
def test_x_must_be_2d(shape):
    with pytest.raises(
        ShapeMismatchError,
        match=re.escape(f"must be 2-D of shape (n_samples, n_features), got shape {shape}"),
    ):
        load(np.zeros(shape), np.zeros(shape[0]))


def test_ragged_nested_lists_are_refused():
    with pytest.raises(ShapeMismatchError, match="2-D array"):
        load([[1.0, 2.0], [3.0]], [0, 1])


def test_y_missing_for_an_array():
    with pytest.raises(TargetError, match="y is None"):
        load(X3)


def test_target_name_with_an_array_is_refused():
    with pytest.raises(TargetError, match="target='y'"):
        load(X3, target="y")


def test_length_mismatch_gives_both_lengths():
    with pytest.raises(ShapeMismatchError, match="X has 2 rows but y has 3 values"):
        load(X3, [0, 1, 2])
    with pytest.raises(ShapeMismatchError, match="X has 2 rows but y has 3 values"):
        load(sp.csr_matrix(X3), [0, 1, 2])


def test_y_must_be_1d():
    with pytest.raises(
        ShapeMismatchError, match=r"y must be 1-D.*got shape \(2, 1\); pass y.ravel"
    ):
        load(X3, np.zeros((2, 1)))
    with pytest.raises(ShapeMismatchError, match="y must be a dense 1-D array"):
        load(X3, sp.csr_matrix(np.zeros((2, 1))))


@pytest.mark.parametrize(
    ("X", "match"),
    [(np.zeros((0, 3)), "no rows"), (np.zeros((3, 0)), "no feature columns")],
)
def test_empty_arrays(X, match):
    with pytest.raises(EmptyDataError, match=match):
        load(X, np.zeros(X.shape[0]))
    with pytest.raises(EmptyDataError, match=match):
        load(sp.csr_matrix(X), np.zeros(X.shape[0]))


def test_classification_needs_two_classes():
    with pytest.raises(TargetError, match=r"at least two distinct labels.*found 1: \[7\]"):
        load(np.ones((3, 1)), [7, 7, 7], task="classification")


def test_more_than_two_classes_are_coded_by_position():
    data = load(np.ones((4, 1)), ["c", "a", "b", "c"], task="classification")
    assert data.y.tolist() == [2.0, 0.0, 1.0, 2.0]
    assert data.labels.classes.tolist() == ["a", "b", "c"]
    assert type(data.labels).__name__ == "ClassLabels"


def test_regression_target_must_be_numeric():
    with pytest.raises(
        TargetError, match=r"target is not numeric.*row 0 holds 'a'.*task='classification'"
    ):
        load(X3, np.array(["a", "b"]))
    with pytest.raises(TargetError, match=r"row 1 holds 'b'"):
        load(X3, np.array([1.0, "b"], dtype=object))


def test_bad_arguments():
    with pytest.raises(ValueError, match="task must be one of"):
        load(X3, [0, 1], task="ranking")
    with pytest.raises(ValueError, match="zero_based must be one of"):
        load(X3, [0, 1], zero_based="yes")
    with pytest.raises(ValueError, match="n_features must be a positive integer"):
        load(X3, [0, 1], n_features=0)
    with pytest.raises(TypeError, match="n_features must be a positive integer"):
        load(X3, [0, 1], n_features=2.5)
