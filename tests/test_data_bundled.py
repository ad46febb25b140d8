"""Datasets bundled with scikit-learn."""

import numpy as np
import pytest

from dpglm.data import BUNDLED_DATASETS, load_bundled


def test_names():
    assert BUNDLED_DATASETS == ("breast_cancer", "diabetes")


def test_breast_cancer():
    ds = load_bundled("breast_cancer")
    assert (ds.n_samples, ds.n_features) == (569, 30)
    assert ds.task == "classification"
    assert ds.classes.tolist() == ["benign", "malignant"]
    assert int((ds.y == 1).sum()) == 212
    assert int((ds.y == -1).sum()) == 357
    assert ds.feature_names[0] == "mean radius"
    assert ds.target_name == "diagnosis"
    # kept in scikit-learn's C order: the rows layout
    assert ds.X.flags.c_contiguous


def test_diabetes():
    ds = load_bundled("diabetes")
    assert (ds.n_samples, ds.n_features) == (442, 10)
    assert ds.task == "regression"
    assert ds.classes is None
    assert ds.feature_names == ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]
    assert ds.y.dtype == np.float64
    assert ds.source == "scikit-learn diabetes"


def test_unknown_name_lists_the_available_ones():
    with pytest.raises(
        ValueError,
        match=r"unknown bundled dataset 'iris'; available: \('breast_cancer', 'diabetes'\)",
    ):
        load_bundled("iris")
