"""load() with pandas DataFrames and Series."""

import numpy as np
import pytest

from dpglm.data import load
from dpglm.exceptions import (
    DataError,
    EmptyDataError,
    NonFiniteValueError,
    NonNumericColumnError,
    ShapeMismatchError,
    TargetError,
)

pd = pytest.importorskip("pandas")


def frame():
    return pd.DataFrame(
        {
            "age": [30, 40, 50],
            "smoker": [True, False, True],
            "income": [1.5, 2.5, 3.5],
            "label": ["no", "yes", "no"],
        }
    )


def test_target_column_by_name():
    ds = load(frame(), target="label", task="classification")
    assert ds.feature_names == ["age", "smoker", "income"]
    assert ds.target_name == "label"
    assert ds.source == "pandas DataFrame"
    assert ds.X.flags.f_contiguous
    assert ds.X.dtype == np.float64
    assert ds.X.tolist() == [[30.0, 1.0, 1.5], [40.0, 0.0, 2.5], [50.0, 1.0, 3.5]]
    assert ds.classes.tolist() == ["no", "yes"]
    assert ds.y.tolist() == [-1.0, 1.0, -1.0]


def test_y_as_series_or_array():
    df = frame()
    ds = load(df[["age", "income"]], df["income"] * 2)
    assert ds.y.tolist() == [3.0, 5.0, 7.0]
    assert ds.target_name == "income"
    ds = load(df[["age"]], np.array([1.0, 2.0, 3.0]))
    assert ds.target_name is None
    assert ds.y.tolist() == [1.0, 2.0, 3.0]


def test_series_as_single_feature():
    ds = load(pd.Series([1.0, 2.0], name="height"), [0.0, 1.0])
    assert ds.feature_names == ["height"]
    assert ds.X.shape == (2, 1)
    assert ds.source == "pandas Series"
    assert load(pd.Series([1, 2]), [0.0, 1.0]).feature_names == ["x0"]


def test_nullable_and_categorical_targets():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0]})
    ds = load(df, pd.Series(["b", "a", "b"], dtype="category"), task="classification")
    assert ds.classes.tolist() == ["a", "b"]
    assert ds.y.tolist() == [1.0, -1.0, 1.0]
    ds = load(df, pd.Series([1, 2, 3], dtype="Int64"))
    assert ds.y.tolist() == [1.0, 2.0, 3.0]


def test_nullable_integer_and_boolean_features():
    df = pd.DataFrame(
        {"a": pd.array([1, 2], dtype="Int64"), "b": pd.array([True, False], dtype="boolean")}
    )
    assert load(df, [0.0, 1.0]).X.tolist() == [[1.0, 1.0], [2.0, 0.0]]


def test_series_index_must_match():
    df = frame()
    y = pd.Series([1.0, 2.0, 3.0], index=[2, 1, 0])
    with pytest.raises(ShapeMismatchError, match="index of y differs from the index of X"):
        load(df[["age"]], y)


# Error paths


def test_missing_cell_names_row_label_and_column():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [1.0, np.nan, 3.0]}, index=["p", "q", "r"])
    with pytest.raises(
        NonFiniteValueError,
        match=r"feature column 'b' \(index 1\) has a missing value at row 1 \(index label 'q'\)",
    ):
        load(df, [0.0, 1.0, 2.0])


def test_pandas_na_in_nullable_column():
    df = pd.DataFrame({"a": pd.array([1, None, 3], dtype="Int64")})
    with pytest.raises(NonFiniteValueError, match=r"feature column 'a' \(index 0\).*row 1"):
        load(df, [0.0, 1.0, 2.0])


def test_infinite_cell():
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [np.inf, 0.0]})
    with pytest.raises(NonFiniteValueError, match=r"feature column 'b' .*inf at row 0"):
        load(df, [0.0, 1.0])


@pytest.mark.parametrize(
    ("column", "match"),
    [
        (
            pd.Series(["red", "blue"]),
            r"not numeric \(dtype (object|str|string)\): row 0 holds 'red'",
        ),
        (
            pd.Series(["red", "blue"], dtype="category"),
            r"not numeric \(dtype category\): row 0 holds 'red'",
        ),
        (pd.Series([1, 2], dtype="category"), r"not numeric \(dtype category\): row 0 holds 1"),
        (pd.Series([1.0, "x"], dtype=object), r"not numeric \(dtype object\)"),
        (pd.to_datetime(pd.Series(["2020-01-01", "2020-02-01"])), "holds dates or times"),
        (pd.Series([1 + 1j, 2]), "is complex"),
    ],
)
def test_non_numeric_column_names_column_and_example(column, match):
    df = pd.DataFrame({"ok": [1.0, 2.0], "colour": column})
    with pytest.raises(
        NonNumericColumnError, match=r"feature column 'colour' \(index 1\)"
    ) as info:
        load(df, [0.0, 1.0])
    assert info.match(match)
    if "dates" not in match and "complex" not in match:
        assert info.match("OneHotEncoder")


def test_missing_target_in_frame_names_the_row():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "y": ["u", None, "v"]})
    with pytest.raises(NonFiniteValueError, match="target 'y' has a missing value at row 1"):
        load(df, target="y", task="classification")


def test_unknown_target_lists_columns():
    with pytest.raises(
        TargetError, match=r"no column named 'price'.*\['age', 'smoker', 'income', 'label'\]"
    ):
        load(frame(), target="price")


def test_no_target_at_all():
    with pytest.raises(TargetError, match="y is None and target is None"):
        load(frame())


def test_target_given_twice():
    with pytest.raises(TargetError, match="either as y or as target="):
        load(frame(), [1, 2, 3], target="age")


def test_regression_target_must_be_numeric():
    with pytest.raises(TargetError, match=r"target 'label' is not numeric.*row 0 holds 'no'"):
        load(frame(), target="label")


def test_classification_needs_two_labels():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "y": ["u", "u", "u"]})
    with pytest.raises(TargetError, match=r"found 1: \['u'\]"):
        load(df, target="y", task="classification")
    three = load(df.assign(y=["w", "u", "v"]), target="y", task="classification")
    assert three.y.tolist() == [2.0, 0.0, 1.0]


def test_length_mismatch():
    with pytest.raises(ShapeMismatchError, match="X has 3 rows but y has 2 values"):
        load(frame()[["age"]], np.array([1.0, 2.0]))


def test_empty_frames():
    with pytest.raises(EmptyDataError, match="no rows"):
        load(pd.DataFrame({"a": [], "y": []}), target="y")
    with pytest.raises(EmptyDataError, match="no feature columns"):
        load(pd.DataFrame({"y": [1.0]}), target="y")


def test_duplicate_column_names():
    df = pd.DataFrame([[1.0, 2.0, 3.0]], columns=["a", "a", "y"])
    with pytest.raises(DataError, match="column name 'a' appears twice"):
        load(df, target="y")
