"""load() with CSV and CSV.gz files written by the tests."""

import gzip
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpglm.data import load
from dpglm.exceptions import (
    DataError,
    EmptyDataError,
    NonFiniteValueError,
    NonNumericColumnError,
    TargetError,
    UnreadableFileError,
)


def write(path, text, *, gz=False, encoding="utf-8"):
    raw = text.encode(encoding) if isinstance(text, str) else text
    path.write_bytes(gzip.compress(raw) if gz else raw)
    return path


def csv_text(header, rows):
    return "\n".join([",".join(header), *(",".join(map(str, r)) for r in rows)]) + "\n"


SIMPLE = csv_text(["a", "b", "y"], [[1.5, -2, 0.25], [3, 4e-3, 1], [0, 7, 2.5]])


@pytest.mark.parametrize("gz", [False, True])
def test_round_trip(tmp_path, gz):
    path = write(tmp_path / ("d.csv.gz" if gz else "d.csv"), SIMPLE, gz=gz)
    ds = load(path)
    assert ds.X.tolist() == [[1.5, -2.0], [3.0, 4e-3], [0.0, 7.0]]
    assert ds.X.flags.f_contiguous
    assert ds.X.dtype == np.float64
    assert ds.y.tolist() == [0.25, 1.0, 2.5]
    assert ds.feature_names == ["a", "b"]
    assert ds.target_name == "y"
    assert ds.source == path.name
    assert ds.task == "regression"


def test_path_as_str_and_named_target(tmp_path):
    path = write(tmp_path / "d.csv", SIMPLE)
    ds = load(str(path), target="a")
    assert ds.feature_names == ["b", "y"]
    assert ds.y.tolist() == [1.5, 3.0, 0.0]


@pytest.mark.parametrize(
    ("labels", "classes", "codes"),
    [
        (["no", "yes", "no"], ["no", "yes"], [-1, 1, -1]),
        (["0", "1", "1"], [0, 1], [-1, 1, 1]),
        (["-1", "1", "-1"], [-1, 1], [-1, 1, -1]),
        (["+1", "-1", "+1"], [-1, 1], [1, -1, 1]),
        (["1", "2", "2"], [1, 2], [-1, 1, 1]),
        (["2", "1", "1"], [1, 2], [1, -1, -1]),
        (["0.5", "1.5", "0.5"], [0.5, 1.5], [-1, 1, -1]),
    ],
)
def test_label_mapping(tmp_path, labels, classes, codes):
    path = write(tmp_path / "d.csv", csv_text(["a", "t"], zip([1, 2, 3], labels, strict=True)))
    ds = load(path, task="classification")
    assert ds.classes.tolist() == classes
    assert ds.y.tolist() == codes
    decoded = ds.decode(ds.y).tolist()
    assert decoded == [classes[(c + 1) // 2] for c in codes]
    assert [type(v) for v in decoded] == [type(classes[0])] * 3


def test_numeric_labels_sort_as_numbers(tmp_path):
    path = write(tmp_path / "d.csv", csv_text(["a", "t"], [[1, 10], [2, 9]]))
    ds = load(path, task="classification")
    assert ds.y.tolist() == [1.0, -1.0]


def test_boolean_words_quotes_blank_lines_crlf_and_bom(tmp_path):
    text = '\ufeff"a,1",flag,y\r\n"1.5",True,1\r\n\r\n2,false,2\r\n'
    ds = load(write(tmp_path / "d.csv", text))
    assert ds.feature_names == ["a,1", "flag"]
    assert ds.X.tolist() == [[1.5, 1.0], [2.0, 0.0]]
    assert ds.y.tolist() == [1.0, 2.0]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    X=arrays(
        np.float64,
        st.tuples(st.integers(1, 12), st.integers(1, 5)),
        elements=st.floats(allow_nan=False, allow_infinity=False),
    ),
)
def test_finite_floats_round_trip_exactly(tmp_path, X):
    y = X[::-1, 0].copy()
    header = [f"f{j}" for j in range(X.shape[1])] + ["target"]
    rows = [[repr(float(v)) for v in row] + [repr(float(t))] for row, t in zip(X, y, strict=True)]
    ds = load(write(tmp_path / "h.csv", csv_text(header, rows)))
    assert np.array_equal(ds.X, X)
    assert np.array_equal(np.signbit(ds.X), np.signbit(X))
    assert np.array_equal(ds.y, y)
    assert ds.feature_names == header[:-1]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    labels=st.lists(
        # Blank cells are missing values, not labels.
        st.text(alphabet="bcdeghjkm ,\"'", min_size=1, max_size=6).filter(str.strip),
        min_size=2,
        max_size=2,
        unique=True,
    ),
    picks=st.lists(st.integers(0, 1), min_size=2, max_size=20),
)
def test_text_labels_round_trip(tmp_path, labels, picks):
    picks = [0, 1, *picks]
    column = [labels[k] for k in picks]
    lines = ["x,label"] + [
        f'{i},"{lab.replace(chr(34), chr(34) * 2)}"' for i, lab in enumerate(column)
    ]
    ds = load(write(tmp_path / "l.csv", "\n".join(lines) + "\n"), task="classification")
    assert ds.classes.tolist() == sorted(labels)
    assert ds.decode(ds.y).tolist() == column


# Error paths


@pytest.mark.parametrize("cell", ["", "NA", "nan", "?", " null "])
def test_missing_feature_cell_names_row_line_and_column(tmp_path, cell):
    text = csv_text(["a", "b", "y"], [[1, 2, 3], [4, cell, 6]])
    with pytest.raises(
        NonFiniteValueError,
        match=re.escape("feature column 'b' (index 1) has a ")
        + ".*"
        + re.escape("at row 1 (line 3 of d.csv)"),
    ):
        load(write(tmp_path / "d.csv", text))


def test_infinite_feature_cell(tmp_path):
    text = csv_text(["a", "b", "y"], [[1, 2, 3], [4, 5, 6], ["-inf", 8, 9]])
    with pytest.raises(
        NonFiniteValueError, match=r"'a' \(index 0\) has a non-finite value -inf at row 2 \(line 4"
    ):
        load(write(tmp_path / "d.csv", text))


def test_non_numeric_feature_names_column_value_and_row(tmp_path):
    text = csv_text(["a", "colour", "y"], [[1, 2, 3], [4, "red", 6], [7, "", 9]])
    with pytest.raises(
        NonNumericColumnError,
        match=r"feature column 'colour' \(index 1\) is not a number: "
        r"row 1 \(line 3 of d.csv\) holds 'red'.*OneHotEncoder",
    ):
        load(write(tmp_path / "d.csv", text))


def test_blank_label_is_missing(tmp_path):
    text = csv_text(["a", "y"], [[1, "u"], [2, "  "], [3, "v"]])
    with pytest.raises(
        NonFiniteValueError, match=r"target 'y' has a missing value \('  '\) at row 1"
    ):
        load(write(tmp_path / "d.csv", text), task="classification")


def test_missing_target_cell(tmp_path):
    text = csv_text(["a", "y"], [[1, 3], [4, ""]])
    with pytest.raises(
        NonFiniteValueError, match=r"target 'y' has a missing value \(''\) at row 1 \(line 3"
    ):
        load(write(tmp_path / "d.csv", text))
    with pytest.raises(
        NonFiniteValueError, match=r"target 'y' has a missing value \(''\) at row 1 \(line 3"
    ):
        load(write(tmp_path / "d.csv", text), task="classification")


def test_regression_target_must_be_numeric(tmp_path):
    text = csv_text(["a", "y"], [[1, 3], [4, "high"]])
    with pytest.raises(
        TargetError, match=r"target 'y' is not a number: row 1 \(line 3 of d.csv\) holds 'high'"
    ):
        load(write(tmp_path / "d.csv", text))


def test_classification_needs_two_labels(tmp_path):
    text = csv_text(["a", "y"], [[1, "a"], [2, "a"], [3, "a"]])
    with pytest.raises(TargetError, match=r"at least two distinct labels.*found 1: \['a'\]"):
        load(write(tmp_path / "d.csv", text), task="classification")


def test_string_labels_of_three_classes(tmp_path):
    text = csv_text(["a", "y"], [[1, "b"], [2, "c"], [3, "a"]])
    data = load(write(tmp_path / "d.csv", text), task="classification")
    assert data.y.tolist() == [1.0, 2.0, 0.0]
    assert data.labels.classes.tolist() == ["a", "b", "c"]


def test_unknown_target_column_lists_the_columns(tmp_path):
    with pytest.raises(
        TargetError,
        match=r"no column named 'price' \(target=\); available columns: \['a', 'b', 'y'\]",
    ):
        load(write(tmp_path / "d.csv", SIMPLE), target="price")


def test_ragged_row_names_line_and_expected_count(tmp_path):
    text = "a,b,y\n1,2,3\n\n4,5\n"
    with pytest.raises(UnreadableFileError, match=r"d.csv'?: line 4 has 2 fields, expected 3"):
        load(write(tmp_path / "d.csv", text))


def test_unterminated_quote(tmp_path):
    with pytest.raises(UnreadableFileError, match=r"line 3 is not valid CSV"):
        load(write(tmp_path / "d.csv", 'a,y\n1,2\n"3,4\n'))


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "is empty"),
        ("\n\n", "is empty"),
        ("a,b,y\n", "no data rows"),
        ("y\n1\n2\n", "no feature columns"),
    ],
)
def test_empty_files(tmp_path, text, match):
    with pytest.raises(EmptyDataError, match=match):
        load(write(tmp_path / "d.csv", text))


def test_empty_gzip_file(tmp_path):
    with pytest.raises(EmptyDataError, match="is empty"):
        load(write(tmp_path / "d.csv.gz", "", gz=True))


def test_undecodable_bytes_name_the_line(tmp_path):
    raw = b"a,y\n1,2\n3,\xff\n"
    with pytest.raises(UnreadableFileError, match=r"d.csv'?: line 3 is not valid UTF-8"):
        load(write(tmp_path / "d.csv", raw))


def test_corrupt_gzip(tmp_path):
    raw = gzip.compress(SIMPLE.encode())
    with pytest.raises(UnreadableFileError, match=r"d.csv.gz'?: corrupt or truncated gzip"):
        load(write(tmp_path / "d.csv.gz", raw[: len(raw) // 2]))
    with pytest.raises(UnreadableFileError, match=r"e.csv.gz'?: corrupt or truncated gzip"):
        load(write(tmp_path / "e.csv.gz", SIMPLE))


def test_duplicate_header_names(tmp_path):
    with pytest.raises(DataError, match=r"column name 'a' appears twice \(columns 0 and 1\)"):
        load(write(tmp_path / "d.csv", "a,a,y\n1,2,3\n"))


def test_y_with_a_file_is_refused(tmp_path):
    with pytest.raises(TargetError, match="y must be None when data is a file"):
        load(write(tmp_path / "d.csv", SIMPLE), [1, 2, 3])


def test_n_features_must_match(tmp_path):
    with pytest.raises(DataError, match="2 feature columns but n_features=3"):
        load(write(tmp_path / "d.csv", SIMPLE), n_features=3)
