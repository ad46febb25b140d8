"""Real datasets shipped in tests/data (see tests/data/README.md)."""

import hashlib
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from dpglm.data import load

DATA = Path(__file__).parent / "data"

SHA256 = {
    "phishing.svm.gz": "1a20416f070d36d077e0d35229e72a143134ee86e96f1b86d6ddb6347c2080de",
    "communities_crime.csv.gz": "a92c7e77f2e8c40f76a1a65869cf42c510a2fec21e13242d4a6797a8dd268a6b",
}


@pytest.mark.parametrize("name", sorted(SHA256))
def test_files_are_the_documented_ones(name):
    digest = hashlib.sha256((DATA / name).read_bytes()).hexdigest()
    assert digest == SHA256[name]
    assert name in (DATA / "README.md").read_text()


def test_phishing():
    ds = load(DATA / "phishing.svm.gz", task="classification", n_features=68)
    assert (ds.n_samples, ds.n_features) == (11055, 68)
    assert isinstance(ds.X, sp.csr_matrix)
    assert ds.classes.tolist() == [-1, 1]
    assert int((ds.y == 1).sum()) == 6157
    assert int((ds.y == -1).sum()) == 4898
    # One-hot encoding of 30 categorical attributes: 30 ones per row.
    row_counts = np.diff(ds.X.tocsr().indptr)
    assert np.all(row_counts == 30)
    assert np.all(ds.X.data == 1.0)
    # Every column is used, so the width is right without n_features too.
    assert load(DATA / "phishing.svm.gz").n_features == 68


def test_communities_and_crime():
    ds = load(DATA / "communities_crime.csv.gz")
    assert (ds.n_samples, ds.n_features) == (1994, 100)
    # The last column, named "target", is ViolentCrimesPerPop.
    assert ds.target_name == "target"
    assert ds.feature_names[:3] == ["population", "householdsize", "racepctblack"]
    assert ds.X.flags.f_contiguous
    # UCI normalised every predictor and the target to [0, 1].
    assert ds.X.min() >= 0.0
    assert ds.X.max() <= 1.0
    assert 0.0 <= ds.y.min() < ds.y.max() <= 1.0
