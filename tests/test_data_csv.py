"""load() with CSV and CSV.gz files written by the tests."""

import gzip
import io
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpglm.data import csv_arrow, load
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


# Large files: Arrow reads them a piece at a time; every check still names the line.


@pytest.fixture(params=["default pieces", "small pieces"])
def pieces(request, monkeypatch):
    """Arrow's blocks as they are, or 4 KiB (pieces of 32 KiB), so that a file has many."""
    if request.param == "small pieces":
        monkeypatch.setattr(csv_arrow, "_BLOCK_SIZE", 1 << 12)
    return request.param


def big_matrix(n_rows, n_columns, seed=0):
    """Numbers of every kind a writer produces: full-precision floats, integers, exponents."""
    rng = np.random.default_rng(seed)
    values = rng.standard_normal((n_rows, n_columns)) * 10.0 ** rng.integers(-5, 6, n_columns)
    values[:, 0] = rng.integers(-1000, 1000, n_rows)
    return values


def big_csv(values, *, blank_every=0, newline="\n"):
    lines = [",".join(f"c{j}" for j in range(values.shape[1]))]
    for i, row in enumerate(values):
        lines.append(",".join(repr(float(v)) for v in row))
        if blank_every and i % blank_every == 0:
            lines.append("")
    return newline.join(lines) + newline


@pytest.mark.parametrize(
    ("gz", "newline"), [(False, "\n"), (True, "\n"), (False, "\r\n"), (False, "\r")]
)
def test_large_file_is_read_exactly_as_numpy_reads_it(tmp_path, pieces, gz, newline):
    values = big_matrix(60_000, 6)  # about 5 MB of text
    text = big_csv(values, newline=newline)
    path = write(tmp_path / ("big.csv.gz" if gz else "big.csv"), text, gz=gz)
    expected = np.loadtxt(io.StringIO(text, newline=None), delimiter=",", skiprows=1)
    ds = load(path)
    assert np.array_equal(expected, values)
    assert np.array_equal(ds.X, expected[:, :-1])
    assert np.array_equal(ds.y, expected[:, -1])
    assert ds.X.flags.f_contiguous
    assert ds.feature_names == [f"c{j}" for j in range(5)]


def test_more_rows_than_the_first_mebibyte_suggests(tmp_path, pieces):
    # Long lines first, then short ones: the matrix must grow past its estimate.
    cells = [f"0.{'1' * 300}"] * 4000 + [str(i % 7) for i in range(60_000)]
    ds = load(write(tmp_path / "d.csv", csv_text(["a", "b", "y"], [[c, 1, 2] for c in cells])))
    assert ds.X.shape == (64_000, 2)
    assert ds.X[:, 0].tolist() == [float(c) for c in cells]
    assert np.array_equal(ds.y, np.full(64_000, 2.0))


def test_a_row_longer_than_arrows_block(tmp_path, pieces):
    # Short rows fill the first MiB, from which the block size is chosen; then 300 KB.
    cells = [str(i % 10) for i in range(400_000)] + ["2." + "0" * 300_000 + "1", "3"]
    ds = load(write(tmp_path / "d.csv", csv_text(["x", "y"], [[cell, 1] for cell in cells])))
    assert ds.X[:, 0].tolist() == [float(cell) for cell in cells]
    assert ds.X[-2, 0] == 2.0


@pytest.mark.parametrize(
    ("cell", "error", "match"),
    [
        ("red", NonNumericColumnError, r"is not a number: row 50000 \(line {}"),
        ("", NonFiniteValueError, r"has a missing value \(''\) at row 50000 \(line {}"),
        ("inf", NonFiniteValueError, r"has a non-finite value inf at row 50000 \(line {}"),
    ],
)
def test_a_bad_cell_in_a_late_row_is_named_by_its_line(tmp_path, pieces, cell, error, match):
    values = big_matrix(60_000, 4)
    lines = big_csv(values, blank_every=1000).splitlines()
    # Row 50,000 follows 50 blank lines (one after rows 0, 1000, ..., 49,000) and the header.
    line = 50_000 + 50 + 2
    fields = lines[line - 1].split(",")
    assert float(fields[0]) == values[50_000, 0]
    fields[2] = cell
    lines[line - 1] = ",".join(fields)
    with pytest.raises(error, match=r"'c2' \(index 2\) " + match.format(line)):
        load(write(tmp_path / "d.csv", "\n".join(lines) + "\n"))


def test_a_ragged_late_row_is_named_by_its_line(tmp_path, pieces):
    lines = big_csv(big_matrix(60_000, 3)).splitlines()
    lines[50_001] += ",7"
    with pytest.raises(UnreadableFileError, match=r"line 50002 has 4 fields, expected 3"):
        load(write(tmp_path / "d.csv", "\n".join(lines) + "\n"))


def test_quoted_labels_with_commas_and_line_breaks_in_a_large_file(tmp_path, pieces):
    values = big_matrix(30_000, 2)
    labels = ['"New York, NY"', '"line\nbreak"', '"say ""hi"""']
    rows = [[repr(float(v)) for v in row] + [labels[i % 3]] for i, row in enumerate(values)]
    ds = load(write(tmp_path / "d.csv", csv_text(["a", "b", "y"], rows)), task="classification")
    assert np.array_equal(ds.X, values)
    assert ds.classes.tolist() == sorted(["New York, NY", "line\nbreak", 'say "hi"'])
    assert ds.decode(ds.y)[:3].tolist() == ["New York, NY", "line\nbreak", 'say "hi"']


@pytest.mark.parametrize("gz", [False, True])
def test_quoted_string_labels_and_numbers_of_a_large_file(tmp_path, pieces, gz):
    values = big_matrix(30_000, 3)
    labels = np.where(values[:, 1] > 0, '"yes"', "no")
    rows = [
        [repr(float(v)) for v in row] + [label] for row, label in zip(values, labels, strict=True)
    ]
    rows[7][0] = f'"{rows[7][0]}"'  # a quoted number, in a column of numbers
    text = csv_text(["a", "b", "c", "y"], rows)
    ds = load(
        write(tmp_path / ("d.csv.gz" if gz else "d.csv"), text, gz=gz), task="classification"
    )
    assert np.array_equal(ds.X, values)
    assert ds.classes.tolist() == ["no", "yes"]
    assert np.array_equal(ds.y, np.where(values[:, 1] > 0, 1.0, -1.0))


# What a fast parser might accept, the reader refuses, as the standard library's did.


@pytest.mark.parametrize(
    ("cell", "error"),
    [
        ("0x10", NonNumericColumnError),  # hexadecimal: Arrow's integers accept it
        ("nan(1)", NonNumericColumnError),  # Arrow's floats read it as NaN
        ('"1"5', UnreadableFileError),  # text after a closing quote
        ('"2', UnreadableFileError),  # a quote never closed
        ("1e", NonNumericColumnError),
    ],
)
def test_malformed_numbers_and_quotes_are_refused(tmp_path, cell, error):
    text = csv_text(["a", "b", "y"], [[1, 2, 3], [4, cell, 6], [7, 8, 9]])
    with pytest.raises(error, match=r"line 3"):
        load(write(tmp_path / "d.csv", text))


@pytest.mark.parametrize(
    ("cells", "expected"),
    [
        (['"1.5"', '"-2"'], [1.5, -2.0]),  # quoted numbers
        ([" 3 ", "\t4"], [3.0, 4.0]),  # spaces around a number
        (["1_000", "2"], [1000.0, 2.0]),  # as Python writes large numbers
        (["-0", "0"], [-0.0, 0.0]),  # the sign of zero is kept
        (["TRUE", "false"], [1.0, 0.0]),
    ],
)
def test_numbers_arrow_does_not_parse_itself(tmp_path, cells, expected):
    text = csv_text(["a", "b", "y"], [[1, cells[0], 3], [4, cells[1], 6]])
    ds = load(write(tmp_path / "d.csv", text))
    assert ds.X[:, 1].tolist() == expected
    assert np.array_equal(np.signbit(ds.X[:, 1]), np.signbit(expected))


def test_reading_a_csv_file_loads_pyarrow_but_import_does_not():
    code = (
        "import os, sys, tempfile\n"
        "import dpglm.data\n"
        "before = 'pyarrow' in sys.modules\n"
        "with tempfile.TemporaryDirectory() as tmp:\n"
        "    path = os.path.join(tmp, 'd.csv')\n"
        "    with open(path, 'w') as f:\n"
        "        f.write('a,y\\n1,2\\n3,4\\n')\n"
        "    dpglm.data.load(path)\n"
        "print(before, 'pyarrow.csv' in sys.modules, 'pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "False"]


def test_zeros_after_the_gzip_data_are_read_as_before(tmp_path):
    # Arrow's gzip reader refuses the padding that Python's skips: csv reads the file then.
    path = tmp_path / "d.csv.gz"
    path.write_bytes(gzip.compress(SIMPLE.encode()) + bytes(8))
    ds = load(path)
    assert ds.X.tolist() == [[1.5, -2.0], [3.0, 4e-3], [0.0, 7.0]]
    assert ds.y.tolist() == [0.25, 1.0, 2.5]


def test_a_file_with_every_field_quoted(tmp_path, pieces):
    values = big_matrix(20_000, 8)
    rows = [[f'"{float(v)!r}"' for v in row] for row in values]
    ds = load(write(tmp_path / "d.csv", csv_text([f'"c{j}"' for j in range(8)], rows)))
    assert np.array_equal(ds.X, values[:, :-1])
    assert np.array_equal(ds.y, values[:, -1])
    assert ds.feature_names == [f"c{j}" for j in range(7)]


@pytest.mark.parametrize(
    ("cell", "error", "match"),
    [
        ('"abc"', NonNumericColumnError, r"is not a number: row 15000 \(line 15002 .*'abc'"),
        ('" "', NonFiniteValueError, r"has a missing value \(' '\) at row 15000 \(line 15002 "),
        ('"inf"', NonFiniteValueError, r"has a non-finite value inf at row 15000 \(line 15002 "),
    ],
)  # fmt: skip
def test_a_bad_quoted_cell_in_a_file_of_quoted_fields(tmp_path, pieces, cell, error, match):
    rows = [[f'"{float(v)!r}"' for v in row] for row in big_matrix(20_000, 8)]
    rows[15_000][3] = cell
    text = csv_text([f'"c{j}"' for j in range(8)], rows)
    with pytest.raises(error, match=r"feature column 'c3' \(index 3\) " + match):
        load(write(tmp_path / "d.csv", text))
