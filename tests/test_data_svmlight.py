"""load() with LIBSVM / svmlight files written by the tests."""

import gzip
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from dpglm.data import load
from dpglm.exceptions import (
    EmptyDataError,
    NonFiniteValueError,
    ShapeMismatchError,
    TargetError,
    UnreadableFileError,
)

DENSE = np.array(
    [
        [0.0, 1.5, 0.0, 0.0, -2.0],
        [3.25, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0, 0.0],
        [1e-7, 0.0, 4.0, 0.0, 1e9],
    ]
)


def dump(path, X, y, *, zero_based=False, gz=False):
    if gz:
        with gzip.open(path, "wb") as f:
            dump_svmlight_file(X, y, f, zero_based=zero_based)
    else:
        dump_svmlight_file(X, y, str(path), zero_based=zero_based)
    return path


def write(path, raw):
    path.write_bytes(raw)
    return path


@pytest.mark.parametrize("name", ["d.svm", "d.svm.gz", "d.libsvm", "d.libsvm.gz", "D.SVM"])
def test_round_trip(tmp_path, name):
    y = np.array([1.5, -2.0, 0.0, 3.0])
    path = dump(tmp_path / name, DENSE, y, gz=name.lower().endswith(".gz"))
    ds = load(path, n_features=5)
    assert isinstance(ds.X, sp.csr_matrix)
    assert ds.X.dtype == np.float64
    assert ds.X.has_sorted_indices
    assert ds.X.has_canonical_format
    assert np.array_equal(ds.X.toarray(), DENSE)
    assert ds.y.tolist() == y.tolist()
    assert ds.feature_names == ["x0", "x1", "x2", "x3", "x4"]
    assert ds.source == name
    assert ds.target_name is None


def test_without_n_features_the_width_is_the_largest_index(tmp_path):
    path = dump(tmp_path / "d.svm", DENSE, np.zeros(4))
    assert load(path).X.shape == (4, 5)
    X = DENSE.copy()
    X[:, 4] = 0.0
    assert load(dump(tmp_path / "e.svm", X, np.zeros(4))).X.shape == (4, 3)
    assert load(dump(tmp_path / "f.svm", X, np.zeros(4)), n_features=5).X.shape == (4, 5)


@pytest.mark.parametrize("zero_based", [True, False])
def test_zero_based_choices(tmp_path, zero_based):
    path = dump(tmp_path / "d.svm", DENSE, np.zeros(4), zero_based=zero_based)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a base given is read without a word
        ds = load(path, n_features=5, zero_based=zero_based)
    assert np.array_equal(ds.X.toarray(), DENSE)
    # "auto" finds the same answer here because column 0 has a non-zero; read 0-based, it
    # says so, naming the first line with index 0
    if zero_based:
        with pytest.warns(UserWarning, match=r"0-based feature indices because row 1 \(line 2"):
            auto = load(path, n_features=5)
    else:
        auto = load(path, n_features=5)
    assert np.array_equal(auto.X.toarray(), DENSE)


def test_auto_says_when_a_stray_zero_index_shifts_the_columns(tmp_path):
    path = write(tmp_path / "d.svm", b"1 1:2 2:1\n-1 2:3\n1 0:7 1:1\n")
    with pytest.warns(UserWarning, match=r"d\.svm' is read with 0-based .* row 2 \(line 3 of"):
        shifted = load(path)
    assert shifted.X.toarray().tolist() == [[0, 2, 1], [0, 0, 3], [7, 1, 0]]
    with pytest.raises(
        UnreadableFileError, match=r"row 2 \(line 3 of d\.svm\) has feature index 0"
    ):
        load(path, zero_based=False)


def test_zero_based_true_keeps_an_empty_first_column(tmp_path):
    path = write(tmp_path / "d.svm", b"1 1:2\n-1 2:3\n")
    assert load(path, zero_based=True).X.toarray().tolist() == [[0, 2, 0], [0, 0, 3]]
    assert load(path).X.toarray().tolist() == [[2, 0], [0, 3]]


@pytest.mark.parametrize(
    ("labels", "classes"),
    [([-1, 1, 1, -1], [-1, 1]), ([0, 1, 1, 0], [0, 1]), ([1, 2, 2, 1], [1, 2])],
)
def test_label_mapping(tmp_path, labels, classes):
    path = dump(tmp_path / "d.svm", DENSE, np.array(labels))
    ds = load(path, task="classification")
    assert ds.classes.tolist() == classes
    assert ds.classes.dtype == np.int64
    assert ds.y.tolist() == [1.0 if v == classes[1] else -1.0 for v in labels]
    assert ds.decode(ds.y).tolist() == labels


def test_comments_and_blank_lines(tmp_path):
    raw = b"# a comment\n+1 1:0.5 3:1 # trailing\n\n-1 2:2\n"
    ds = load(write(tmp_path / "d.svm", raw), task="classification")
    assert ds.X.toarray().tolist() == [[0.5, 0.0, 1.0], [0.0, 2.0, 0.0]]
    assert ds.y.tolist() == [1.0, -1.0]


def test_explicit_zero_entries_are_kept_as_zero(tmp_path):
    ds = load(write(tmp_path / "d.svm", b"1 1:0 2:1\n"))
    assert ds.X.toarray().tolist() == [[0.0, 1.0]]


# Error paths


@pytest.mark.parametrize(
    ("line", "match"),
    [
        (b"1 1:2 x:4", r"line 3: token 'x:4': index 'x' is not a non-negative integer"),
        (b"1 1:2 3:abc", r"line 3: token '3:abc': value 'abc' is not a number"),
        (b"1 1:2 3", r"line 3: token '3' is not of the form index:value"),
        (b"1 1: 2", r"line 3: token '1:' is not of the form index:value"),
        (b"1 3:2 1:4", r"line 3: token '1:4': indices must increase along a line"),
        (b"1 1:2 1:4", r"line 3: token '1:4': indices must increase"),
        (b"1 -1:2", r"line 3: token '-1:2': index '-1' is not a non-negative integer"),
        (b"yes 1:2", r"line 3: label 'yes' is not a number"),
        (
            b"1,2 1:2",
            r"line 3: label '1,2' lists several labels; multi-label files are not supported",
        ),
    ],
)
def test_malformed_line_names_line_and_token(tmp_path, line, match):
    raw = b"1 1:1\n-1 2:1\n" + line + b"\n"
    with pytest.raises(UnreadableFileError, match=r"d.svm'?: " + match):
        load(write(tmp_path / "d.svm", raw))


def test_qid_files_are_refused(tmp_path):
    raw = b"1 qid:1 1:2\n0 qid:1 2:1\n"
    with pytest.raises(
        UnreadableFileError, match=r"line 1: token 'qid:1' is a query id; qid files"
    ):
        load(write(tmp_path / "d.svm", raw))


def test_qid_in_a_comment_is_fine(tmp_path):
    ds = load(write(tmp_path / "d.svm", b"1 1:2 # qid:1\n0 2:1\n"))
    assert ds.n_samples == 2


def test_index_beyond_n_features_names_the_line(tmp_path):
    raw = b"1 1:1\n# comment\n-1 2:1 7:1\n1 9:1\n"
    with pytest.raises(
        ShapeMismatchError,
        match=r"row 1 \(line 3 of d.svm\) has feature index 7, beyond n_features=6 "
        r"\(indices are 1-based, so the largest allowed is 6\)",
    ):
        load(write(tmp_path / "d.svm", raw), n_features=6)
    with pytest.raises(
        ShapeMismatchError, match=r"line 3 of d.svm\) has feature index 7.*0-based"
    ):
        load(write(tmp_path / "d.svm", raw), n_features=7, zero_based=True)


def test_index_zero_in_a_one_based_file(tmp_path):
    raw = b"1 1:1\n-1 0:1\n"
    with pytest.raises(
        UnreadableFileError, match=r"row 1 \(line 2 of d.svm\) has feature index 0"
    ):
        load(write(tmp_path / "d.svm", raw), zero_based=False)


def test_non_finite_value_names_row_line_and_column(tmp_path):
    raw = b"1 1:1\n\n-1 2:1 4:nan\n"
    with pytest.raises(
        NonFiniteValueError,
        match=r"feature column 3 has a non-finite value nan at row 1 \(line 3 of d.svm\)",
    ):
        load(write(tmp_path / "d.svm", raw))


def test_non_finite_label_names_the_line(tmp_path):
    raw = b"1 1:1\ninf 2:1\n"
    with pytest.raises(
        NonFiniteValueError, match=r"target has a non-finite value inf at row 1 \(line 2"
    ):
        load(write(tmp_path / "d.svm", raw))


def test_classification_needs_two_labels(tmp_path):
    with pytest.raises(TargetError, match=r"found 1: \[2\]"):
        load(write(tmp_path / "d.svm", b"2 1:1\n2 2:1\n"), task="classification")
    three = load(write(tmp_path / "e.svm", b"1 1:1\n2 2:1\n3 1:1\n"), task="classification")
    assert three.y.tolist() == [0.0, 1.0, 2.0]


def test_empty_files(tmp_path):
    with pytest.raises(EmptyDataError, match="no data lines"):
        load(write(tmp_path / "d.svm", b""))
    with pytest.raises(EmptyDataError, match="no data lines"):
        load(write(tmp_path / "c.svm", b"# only a comment\n\n"))
    with pytest.raises(EmptyDataError, match="no feature values, only labels; pass n_features"):
        load(write(tmp_path / "e.svm", b"1\n-1\n"))
    assert load(write(tmp_path / "f.svm", b"1\n-1\n"), n_features=2).X.nnz == 0


def test_target_name_does_not_apply(tmp_path):
    with pytest.raises(TargetError, match=r"target='y' does not apply to LIBSVM file d.svm"):
        load(write(tmp_path / "d.svm", b"1 1:1\n"), target="y")


def test_txt_extension_is_not_guessed(tmp_path):
    with pytest.raises(
        UnreadableFileError,
        match=r"d.txt'?: unknown file extension; supported extensions are .csv, .csv.gz, .svm",
    ):
        load(write(tmp_path / "d.txt", b"1 1:1\n"))
