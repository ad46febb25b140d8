"""BinaryLabels: the -1 / +1 mapping of two class labels."""

import pickle

import numpy as np
import pytest

from dpglm.data import BinaryLabels
from dpglm.exceptions import NonFiniteValueError, TargetError


@pytest.mark.parametrize(
    ("values", "classes"),
    [
        (["yes", "no", "yes"], ["no", "yes"]),
        ([0, 1, 1], [0, 1]),
        ([1, -1, -1], [-1, 1]),
        ([2, 1, 2], [1, 2]),
        ([10, 9, 9], [9, 10]),
        ([True, False], [False, True]),
        ([0.5, 2.5], [0.5, 2.5]),
    ],
)
def test_classes_are_sorted_and_first_is_minus_one(values, classes):
    labels = BinaryLabels.from_values(values)
    assert labels.classes.tolist() == classes
    codes = labels.encode(values)
    expected = [1.0 if v == classes[1] else -1.0 for v in values]
    assert codes.tolist() == expected
    assert codes.dtype == np.float64
    assert labels.decode(codes).tolist() == list(values)


def test_decode_keeps_the_original_dtype():
    labels = BinaryLabels.from_values(np.array([3, 7], dtype=np.int16))
    assert labels.decode([1, -1]).dtype == np.int16


@pytest.mark.parametrize(
    ("values", "match"),
    [
        ([1, 2, 3], r"found 3: \[1, 2, 3\]"),
        (["a", "a"], r"found 1: \['a'\]"),
        (list(range(10)), r"found 10: \[0, 1, 2, 3, 4, \.\.\.\] \(10 in total\)"),
    ],
)
def test_not_two_classes_says_how_many_and_which(values, match):
    with pytest.raises(TargetError, match=match):
        BinaryLabels.from_values(values)


def test_missing_label_names_the_row():
    with pytest.raises(NonFiniteValueError, match=r"missing value.*row 2"):
        BinaryLabels.from_values(np.array(["a", "b", None], dtype=object))
    with pytest.raises(NonFiniteValueError, match="nan at row 1"):
        BinaryLabels.from_values([1.0, np.nan, 0.0])


def test_mixed_label_types_are_refused():
    with pytest.raises(TargetError, match="mixes label types"):
        BinaryLabels.from_values(np.array(["a", 1], dtype=object))


def test_encode_unknown_label_names_the_row():
    labels = BinaryLabels([0, 1])
    with pytest.raises(TargetError, match=r"label 2 at row 1, which is neither"):
        labels.encode([0, 2, 1])
    with pytest.raises(TargetError, match="label 'x' at row 0"):
        labels.encode(["x"])


def test_decode_refuses_codes_other_than_plus_minus_one():
    with pytest.raises(ValueError, match="got 0 at position 2"):
        BinaryLabels(["a", "b"]).decode([1, -1, 0])


def test_constructor_needs_two_sorted_distinct_classes():
    with pytest.raises(ValueError, match="sorted order"):
        BinaryLabels(["yes", "no"])
    with pytest.raises(ValueError, match="exactly two"):
        BinaryLabels([1, 2, 3])


def test_equality_and_pickle():
    labels = BinaryLabels(["no", "yes"])
    assert labels == BinaryLabels.from_values(["yes", "no"])
    assert labels != BinaryLabels([0, 1])
    assert pickle.loads(pickle.dumps(labels)) == labels
    assert repr(labels) == "BinaryLabels(['no', 'yes'])"


def test_classes_cannot_be_modified():
    labels = BinaryLabels([0, 1])
    with pytest.raises(ValueError, match="read-only"):
        labels.classes[0] = 5
