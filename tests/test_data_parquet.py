"""load() with Parquet files written by the tests (pyarrow is optional)."""

import sys

import numpy as np
import pytest

from dpglm.data import load
from dpglm.exceptions import (
    MissingDependencyError,
    NonFiniteValueError,
    NonNumericColumnError,
    TargetError,
    UnreadableFileError,
)

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def write(path, columns):
    pq.write_table(pa.table(columns), path)
    return path


@pytest.mark.parametrize("name", ["d.parquet", "d.pq"])
def test_round_trip(tmp_path, name):
    path = write(
        tmp_path / name,
        {
            "f32": pa.array([1.5, -2.0, 0.25], type=pa.float32()),
            "i64": pa.array([1, 2, 2**40]),
            "flag": pa.array([True, False, True]),
            "y": pa.array([0.5, 1.5, 2.5]),
        },
    )
    ds = load(path)
    assert ds.X.tolist() == [[1.5, 1.0, 1.0], [-2.0, 2.0, 0.0], [0.25, 2.0**40, 1.0]]
    assert ds.X.flags.f_contiguous
    assert ds.X.dtype == np.float64
    assert ds.y.tolist() == [0.5, 1.5, 2.5]
    assert ds.feature_names == ["f32", "i64", "flag"]
    assert ds.target_name == "y"
    assert ds.source == name


@pytest.mark.parametrize(
    ("labels", "classes"),
    [
        (["no", "yes", "no"], ["no", "yes"]),
        ([0, 1, 1], [0, 1]),
        ([-1, 1, -1], [-1, 1]),
        ([1, 2, 1], [1, 2]),
    ],
)
def test_label_mapping_and_named_target(tmp_path, labels, classes):
    path = write(tmp_path / "d.parquet", {"label": labels, "a": [1.0, 2.0, 3.0]})
    ds = load(path, target="label", task="classification")
    assert ds.classes.tolist() == classes
    assert ds.feature_names == ["a"]
    assert ds.decode(ds.y).tolist() == labels
    assert ds.y.tolist() == [1.0 if v == classes[1] else -1.0 for v in labels]


def test_pandas_index_is_not_a_feature(tmp_path):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1.0, 2.0], "y": [3.0, 4.0]}, index=["r1", "r2"])
    df.to_parquet(tmp_path / "d.parquet")
    ds = load(tmp_path / "d.parquet")
    assert ds.feature_names == ["a"]
    assert ds.y.tolist() == [3.0, 4.0]


# Error paths


@pytest.mark.parametrize("values", [[1.0, None, 3.0], [1, None, 3], [True, None, False]])
def test_null_feature_names_row_and_column(tmp_path, values):
    path = write(tmp_path / "d.parquet", {"a": [1.0, 2.0, 3.0], "b": values, "y": [0.0, 1.0, 2.0]})
    with pytest.raises(
        NonFiniteValueError, match=r"feature column 'b' \(index 1\) has a missing value at row 1"
    ):
        load(path)


def test_nan_feature(tmp_path):
    path = write(tmp_path / "d.parquet", {"a": [1.0, float("nan")], "y": [0.0, 1.0]})
    with pytest.raises(
        NonFiniteValueError, match=r"'a' \(index 0\) has a non-finite value nan at row 1"
    ):
        load(path)


@pytest.mark.parametrize(
    ("column", "match"),
    [
        (
            pa.array(["red", "blue"]),
            r"is not numeric \(dtype string\): row 0 holds 'red'.*OneHotEncoder",
        ),
        (
            pa.array(["red", "blue"]).dictionary_encode(),
            r"is not numeric \(dtype dictionary.*row 0 holds 'red'",
        ),
        (pa.array([None, "blue"]), r"row 1 holds 'blue'"),
        (
            pa.array(np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[s]")),
            "holds dates or times",
        ),
    ],
)
def test_non_numeric_column(tmp_path, column, match):
    path = write(tmp_path / "d.parquet", {"ok": [1.0, 2.0], "colour": column, "y": [0.0, 1.0]})
    with pytest.raises(
        NonNumericColumnError, match=r"feature column 'colour' \(index 1\)"
    ) as info:
        load(path)
    assert info.match(match)


def test_null_target(tmp_path):
    path = write(tmp_path / "d.parquet", {"a": [1.0, 2.0], "y": ["u", None]})
    with pytest.raises(NonFiniteValueError, match="target 'y' has a missing value at row 1"):
        load(path, task="classification")


def test_unknown_target(tmp_path):
    path = write(tmp_path / "d.parquet", {"a": [1.0], "y": [2.0]})
    with pytest.raises(TargetError, match=r"no column named 'z'.*\['a', 'y'\]"):
        load(path, target="z")


def test_regression_target_must_be_numeric(tmp_path):
    path = write(tmp_path / "d.parquet", {"a": [1.0, 2.0], "y": ["u", "v"]})
    with pytest.raises(TargetError, match=r"target 'y' is not numeric.*row 0 holds 'u'"):
        load(path)


def test_corrupt_file(tmp_path):
    path = tmp_path / "d.parquet"
    path.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(UnreadableFileError, match=r"d.parquet'?: not a valid Parquet file"):
        load(path)


def test_missing_pyarrow_names_it_and_the_install_command(tmp_path, monkeypatch):
    path = write(tmp_path / "d.parquet", {"a": [1.0], "y": [2.0]})
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(MissingDependencyError, match=r"needs pyarrow.*pip install pyarrow"):
        load(path)
    assert issubclass(MissingDependencyError, ImportError)
