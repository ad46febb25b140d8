"""Checks of the solvers' hyperparameters, and what the guarantee assumes of them.

Every solver validates its hyperparameters before anything is planned or
charged, with one message per kind of mistake, naming the parameter.

Examples
--------
>>> from dpglm.solvers.hyperparameters import check_positive, check_positive_int
>>> check_positive("clip", 0.5), check_positive_int("n_iter", 10)
(0.5, 10)
"""

from __future__ import annotations

import math
import numbers


def check_positive(name: str, value, *, allow_inf: bool = False) -> float:
    """``value`` as a positive float, or a ``ValueError`` naming ``name``.

    Examples
    --------
    >>> check_positive("step", 2)
    2.0
    """
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {value!r}") from None
    if not value > 0 or (math.isinf(value) and not allow_inf) or math.isnan(value):
        kind = "positive" if allow_inf else "positive and finite"
        raise ValueError(f"{name} must be {kind}, got {value!r}")
    return value


def check_positive_int(name: str, value) -> int:
    """``value`` as a positive int (bools refused), or a ``ValueError`` naming ``name``.

    Examples
    --------
    >>> check_positive_int("n_iter", 3)
    3
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


def check_finite_clip(clip: float, *, private: bool) -> None:
    """Refuse an infinite ``clip`` for a private fit: its sensitivity would be unbounded.

    ``epsilon = inf`` (no noise) is the only fit that may leave its records unclipped.

    Examples
    --------
    >>> check_finite_clip(float("inf"), private=False)
    >>> check_finite_clip(float("inf"), private=True)
    Traceback (most recent call last):
    ...
    ValueError: clip must be finite for a private fit (epsilon < inf), got inf
    """
    if private and math.isinf(clip):
        raise ValueError("clip must be finite for a private fit (epsilon < inf), got inf")


#: the assumption of every private fit: its hyperparameters are not chosen on the data
HYPERPARAMETER_ASSUMPTION = (
    "hyperparameters (clipping threshold, step size, number of passes) chosen independently of "
    "the data, or with their selection accounted separately"
)
