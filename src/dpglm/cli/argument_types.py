"""Argument types of the ``dpglm`` options: text to checked values, or a usage error.

Each function takes the text of one option and returns its value, or raises
:class:`argparse.ArgumentTypeError` with a message that argparse prints after
the option's name (exit status 2).
"""

from __future__ import annotations

import argparse
import math

from dpglm.cli.experiments import SOLVERS
from dpglm.privacy.targets import check_delta, check_epsilon


def _float(text):
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def positive_float(text):
    """A finite number > 0.

    Examples
    --------
    >>> positive_float("0.5")
    0.5
    >>> positive_float("inf")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a positive number, got 'inf'
    """
    value = _float(text)
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def nonnegative_float(text):
    """A finite number >= 0.

    Examples
    --------
    >>> nonnegative_float("0")
    0.0
    """
    value = _float(text)
    if not (value >= 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text!r}")
    return value


def epsilon_value(text):
    """A number > 0, or ``inf`` (no privacy).

    Examples
    --------
    >>> epsilon_value("1"), epsilon_value("inf")
    (1.0, inf)
    """
    try:
        return check_epsilon(_float(text))
    except ValueError as err:  # the privacy layer's own check and message
        raise argparse.ArgumentTypeError(str(err)) from None


def delta_value(text):
    """A number in [0, 1).

    Examples
    --------
    >>> delta_value("1e-6")
    1e-06
    """
    try:
        return check_delta(_float(text))
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def fraction(text):
    """A number in (0, 1).

    Examples
    --------
    >>> fraction("0.25")
    0.25
    """
    value = _float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, got {text!r}")
    return value


def positive_int(text):
    """An integer >= 1.

    Examples
    --------
    >>> positive_int("3")
    3
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def epsilon_list(text):
    """Comma-separated epsilons, e.g. ``0.1,0.5,1,inf``; sorted, without repeats.

    Examples
    --------
    >>> epsilon_list("inf,1,0.5,1")
    [0.5, 1.0, inf]
    """
    values = [epsilon_value(part.strip()) for part in text.split(",") if part.strip()]
    if not values:
        raise argparse.ArgumentTypeError("expected comma-separated epsilons, e.g. 0.5,1,inf")
    return sorted(set(values))


def solver_list(text):
    """Comma-separated solver names, in the order given, without repeats.

    Examples
    --------
    >>> solver_list("dp-sgd,dp-cd,dp-sgd")
    ['dp-sgd', 'dp-cd']
    """
    values = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [v for v in values if v not in SOLVERS]
    if unknown or not values:
        raise argparse.ArgumentTypeError(
            f"unknown solver {unknown[0] if unknown else text!r}; choose from "
            f"{', '.join(SOLVERS)} (comma-separated)"
        )
    return list(dict.fromkeys(values))


def class_labels(text):
    """The public class labels, two or more, comma-separated, typed as a file's labels are read.

    The labels are integers if all are, else floats if all are numbers, else
    text: the rule by which the readers type a classification target, so that
    ``0,1`` matches a column of integers and ``no,yes`` one of text.

    Examples
    --------
    >>> class_labels("no,yes"), class_labels("1, 0"), class_labels("0.5,1")
    (['no', 'yes'], [1, 0], [0.5, 1.0])
    >>> class_labels("cat, dog, bird")
    ['cat', 'dog', 'bird']
    >>> class_labels("a")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected at least two distinct comma-separated labels, got 'a'
    >>> class_labels("a,b,a")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected distinct labels, got 'a,b,a' ('a' twice)
    """
    import numpy as np

    from dpglm.data.columns import parse_text_labels
    from dpglm.data.locations import plain_row

    parts = [part.strip() for part in text.split(",")]
    if len(parts) < 2 or not all(parts):
        raise argparse.ArgumentTypeError(
            f"expected at least two distinct comma-separated labels, got {text!r}"
        )
    for i, part in enumerate(parts):
        if part in parts[:i]:
            raise argparse.ArgumentTypeError(
                f"expected distinct labels, got {text!r} ({part!r} twice)"
            )
    try:
        labels = parse_text_labels(np.array(parts), column="--classes", describe_row=plain_row)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    values = labels.tolist()
    for i, value in enumerate(values):
        first = values.index(value)
        if first < i:
            raise argparse.ArgumentTypeError(
                f"the labels {parts[first]} and {parts[i]} are the same number, got {text!r}"
            )
    return values


def feature_bounds_value(text):
    """One public bound on ``|X_ij|`` for every feature, one per feature, or ``data``.

    ``data`` reads the ranges from the data, without privacy (the fit's report
    then says its guarantee does not hold).

    Examples
    --------
    >>> feature_bounds_value("1"), feature_bounds_value("1,2.5"), feature_bounds_value("data")
    (1.0, [1.0, 2.5], 'data')
    """
    if text.strip() == "data":
        return "data"
    values = [positive_float(part.strip()) for part in text.split(",")]
    return values[0] if len(values) == 1 else values


def target_bounds_value(text):
    """A public range ``LOW,HIGH`` of the target, ``LOW <= HIGH``, both finite.

    Examples
    --------
    >>> target_bounds_value("0,5.5")
    (0.0, 5.5)
    """
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"expected LOW,HIGH (two numbers), got {text!r}")
    try:
        low, high = (float(part.strip()) for part in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected LOW,HIGH (two numbers), got {text!r}"
        ) from None
    if not (math.isfinite(low) and math.isfinite(high) and low <= high):
        raise argparse.ArgumentTypeError(f"expected finite LOW <= HIGH, got {text!r}")
    return low, high


def missing_value_list(text):
    """The missing-value markers of one ``--missing-values``: comma-separated, none empty.

    Examples
    --------
    >>> missing_value_list("?"), missing_value_list("?,unknown")
    (['?'], ['?', 'unknown'])
    >>> missing_value_list("?,")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected markers separated by commas, got an empty one in '?,' (an empty text cell is missing already)
    """  # noqa: E501
    markers = text.split(",")
    if any(marker == "" for marker in markers):
        raise argparse.ArgumentTypeError(
            f"expected markers separated by commas, got an empty one in {text!r} (an empty "
            "text cell is missing already)"
        )
    return markers
