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

import numpy as np


def check_positive(name: str, value, *, allow_inf: bool = False) -> float:
    """``value`` as a positive float, or an error naming ``name``.

    A ``TypeError`` for what is not a number (a string or a bool too, which
    ``float`` would read), a ``ValueError`` for a number that is not positive
    (or is infinite, unless ``allow_inf``).

    Examples
    --------
    >>> check_positive("step", 2)
    2.0
    >>> check_positive("step", "2")
    Traceback (most recent call last):
    ...
    TypeError: step must be a number, got '2'
    """
    if isinstance(value, (str, bytes, bool)):  # float() would read them: nothing is coerced
        raise TypeError(f"{name} must be a number, got {value!r}")
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


def ridge_weights(problem):
    """``alpha_j`` of every coefficient for no penalty or an L2 penalty; None for any other.

    None for a penalty with an L1 part, bounds, or no separable form: what the
    solvers that fit only a ridge (AdaSSP, DP-Direction) refuse. Only the
    problem's shape is read.

    Examples
    --------
    >>> from dpglm.penalties import L1, L2
    >>> from dpglm.solvers.registry import ProblemShape
    >>> ridge_weights(ProblemShape(10, 2, "squared", L2(0.5))).tolist()
    [0.5, 0.5]
    >>> ridge_weights(ProblemShape(10, 2, "squared", L1(0.5))) is None
    True
    """
    penalty = problem.penalty
    if not penalty.separable:
        return None
    l1, l2, lo, hi = penalty.prox_params(problem.n_features)
    if np.any(l1) or not (np.isinf(lo).all() and np.isinf(hi).all()):
        return None
    return np.asarray(l2, dtype=float)


def slope_scale(datafit) -> float:
    """How much larger a classifier's loss slope is at the null margin than the logistic's.

    ``2 |l'(0, 1)|`` for a loss of binary labels (1 for the logistic loss,
    whose slope there is 1/2; 4 for the squared hinge, whose slope is 2); 1
    for any other loss (the squared loss's slope is the scaled target's
    residual). The estimators scale the coordinate solvers' clips by it, so
    that a clip measured on the logistic loss clips the same share of the
    terms ``l'(z_i) x_ij`` under another loss.

    Examples
    --------
    >>> from dpglm.datafits import get_datafit
    >>> [slope_scale(get_datafit(name)) for name in ("logistic", "squared_hinge", "squared")]
    [1.0, 4.0, 1.0]
    """
    if not datafit.binary_labels:
        return 1.0
    return 2.0 * abs(float(datafit.derivative(0.0, 1.0)))


#: the assumption of every private fit: its hyperparameters are not chosen on the data
HYPERPARAMETER_ASSUMPTION = (
    "hyperparameters (clipping threshold, step size, number of passes) chosen independently of "
    "the data, or with their selection accounted separately"
)


#: the solvers that fit a multinomial datafit (one margin per class)
MULTINOMIAL_SOLVERS = ("DP-SGD", "DP-GD", "DP-AGD")


def check_single_output(problem, solver: str) -> None:
    """Refuse a multinomial problem in a solver that fits one margin per record.

    Examples
    --------
    >>> from dpglm.datafits import Multinomial
    >>> from dpglm.solvers.registry import ProblemShape
    >>> check_single_output(ProblemShape(10, 2, "logistic"), "DP-CD")
    >>> check_single_output(ProblemShape(10, 2, Multinomial(3)), "DP-CD")
    Traceback (most recent call last):
    ...
    ValueError: DP-CD fits one margin per record; the multinomial loss has 3 (fit it with DP-SGD, DP-GD or DP-AGD, or fit one binary problem per class: the estimators' one-vs-rest)
    """  # noqa: E501
    outputs = problem.datafit.n_outputs
    if outputs > 1:
        raise ValueError(
            f"{solver} fits one margin per record; the {problem.datafit.name} loss has "
            f"{outputs} (fit it with {', '.join(MULTINOMIAL_SOLVERS[:-1])} or "
            f"{MULTINOMIAL_SOLVERS[-1]}, or fit one binary problem per class: the estimators' "
            "one-vs-rest)"
        )


def check_in_memory_outputs(problem, solver: str) -> None:
    """Refuse a multinomial problem in row chunks: the chunks compute one margin per record.

    Examples
    --------
    >>> from dpglm.datafits import Multinomial
    >>> from dpglm.solvers.registry import ProblemShape
    >>> check_in_memory_outputs(ProblemShape(10, 2, Multinomial(3)), "DP-SGD")
    >>> check_in_memory_outputs(ProblemShape(10, 2, Multinomial(3), chunked=True), "DP-SGD")
    Traceback (most recent call last):
    ...
    ValueError: DP-SGD fits the multinomial loss on records in memory only, not in row chunks
    """
    if problem.datafit.n_outputs > 1:
        try:
            problem.in_memory(solver)
        except TypeError:
            raise ValueError(
                f"{solver} fits the {problem.datafit.name} loss on records in memory only, "
                "not in row chunks"
            ) from None


def log_inverse_delta(delta: float, n_samples: int) -> float:
    """``log(1 / delta)`` for a rule of the estimators' work; without a ``delta`` in
    ``(0, 1)`` (a pure-DP plan, or one the fit refuses), ``1 / n**2`` stands for it.

    Examples
    --------
    >>> round(log_inverse_delta(1e-6, 100), 2), round(log_inverse_delta(0.0, 100), 2)
    (13.82, 9.21)
    """
    if 0 < delta < 1:
        return math.log(1.0 / delta)
    return 2.0 * math.log(max(n_samples, 2))
