"""Dataset invariants and as_layout."""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from dpglm.data import BinaryLabels, Dataset, as_layout
from dpglm.exceptions import NonNumericColumnError, ShapeMismatchError


def test_defaults_and_properties():
    ds = Dataset(np.arange(6.0).reshape(3, 2), np.array([1.0, 2.0, 3.0]))
    assert ds.task == "regression"
    assert ds.classes is None
    assert ds.feature_names == ["x0", "x1"]
    assert (ds.n_samples, ds.n_features) == (3, 2)
    assert ds.X.flags.c_contiguous
    assert Dataset(np.zeros((3, 2), order="F"), np.zeros(3)).X.flags.f_contiguous
    assert ds.coef_true is None
    assert repr(ds) == (
        "Dataset(source='numpy array', task='regression', n_samples=3, n_features=2)"
    )


def test_fields_cannot_be_reassigned():
    ds = Dataset(np.eye(2), np.zeros(2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        ds.y = np.ones(2)


def test_decode_maps_codes_back():
    ds = Dataset(np.eye(2), np.array([1.0, -1.0]), "classification", BinaryLabels(["a", "b"]))
    assert ds.decode([1.0, 1.0, -1.0]).tolist() == ["b", "b", "a"]
    assert ds.classes.tolist() == ["a", "b"]


def test_decode_of_regression_dataset_is_refused():
    with pytest.raises(ValueError, match="regression"):
        Dataset(np.eye(2), np.zeros(2)).decode([1, -1])


def test_inconsistent_fields_are_refused():
    with pytest.raises(ShapeMismatchError, match=r"y must have shape \(2,\)"):
        Dataset(np.eye(2), np.zeros(3))
    with pytest.raises(ShapeMismatchError, match="3 feature names given for 2 features"):
        Dataset(np.eye(2), np.zeros(2), feature_names=["a", "b", "c"])
    with pytest.raises(ValueError, match="needs labels"):
        Dataset(np.eye(2), np.array([1.0, -1.0]), "classification")
    with pytest.raises(ValueError, match=r"y in \{-1, \+1\}"):
        Dataset(np.eye(2), np.array([1.0, 0.0]), "classification", BinaryLabels([0, 1]))
    with pytest.raises(ValueError, match="no labels"):
        Dataset(np.eye(2), np.zeros(2), labels=BinaryLabels([0, 1]))
    with pytest.raises(ValueError, match="task must be one of"):
        Dataset(np.eye(2), np.zeros(2), "ranking")
    with pytest.raises(ShapeMismatchError, match=r"coef_true must have shape \(2,\)"):
        Dataset(np.eye(2), np.zeros(2), coef_true=np.zeros(3))


def test_sparse_x_becomes_a_csr_or_csc_matrix():
    assert type(Dataset(sp.coo_array(np.eye(3)), np.zeros(3)).X) is sp.csc_matrix
    ds = Dataset(sp.csr_array(np.eye(3)), np.zeros(3))
    assert type(ds.X) is sp.csr_matrix
    assert ds.X.dtype == np.float64
    assert "sparse=True, nnz=3" in repr(ds)


def test_as_layout_dense_does_not_copy_when_already_in_layout():
    X = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    assert as_layout(X, "columns") is X
    rows = as_layout(X, "rows")
    assert rows.flags.c_contiguous
    assert np.array_equal(rows, X)
    assert as_layout(rows, "rows") is rows


def test_as_layout_converts_dtype():
    X = np.array([[1, 2], [3, 4]], dtype=np.int32)
    out = as_layout(X, "columns")
    assert out.dtype == np.float64
    assert out.flags.f_contiguous
    assert as_layout(np.array([[True, False]]), "rows").tolist() == [[1.0, 0.0]]


@pytest.mark.parametrize("fmt", ["coo", "csr", "csc", "dok", "lil", "bsr", "dia"])
@pytest.mark.parametrize("layout", ["columns", "rows"])
def test_as_layout_sparse_any_format(fmt, layout):
    dense = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, 3.0]])
    X = sp.csr_matrix(dense).asformat(fmt)
    out = as_layout(X, layout)
    assert out.format == {"columns": "csc", "rows": "csr"}[layout]
    assert out.dtype == np.float64
    assert out.has_sorted_indices
    assert np.array_equal(out.toarray(), dense)


def test_as_layout_sparse_no_copy_and_keeps_kind():
    X = sp.csc_array(np.eye(3))
    assert as_layout(X, "columns") is X
    assert isinstance(as_layout(X, "rows"), sp.csr_array)


def test_as_layout_sums_duplicates_without_touching_the_input():
    X = sp.csc_matrix(([1.0, 2.0], [0, 0], [0, 2]), shape=(1, 1))
    assert not X.has_canonical_format
    out = as_layout(X, "columns")
    assert out.nnz == 1
    assert out.toarray()[0, 0] == 3.0
    assert X.nnz == 2


def test_as_layout_refusals():
    with pytest.raises(ValueError, match="layout must be one of"):
        as_layout(np.eye(2), "diagonal")
    with pytest.raises(ShapeMismatchError, match=r"2-D.*got shape \(3,\)"):
        as_layout(np.zeros(3), "rows")
    with pytest.raises(NonNumericColumnError, match="dtype <U1"):
        as_layout(np.array([["1"]]), "rows")
    with pytest.raises(NonNumericColumnError, match="complex"):
        as_layout(sp.csr_matrix(np.array([[1j]])), "columns")
