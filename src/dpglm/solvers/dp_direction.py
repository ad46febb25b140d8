"""DP-Direction: one private gradient at the intercept-only model, then a private line fit.

A binary classifier (logistic or squared hinge loss) for many sparse features
and few records (``p >= n``: text, one-hot codes), where every iterative
private solver spends its budget on steps that each see noise on all ``p``
coordinates, and ends at the majority class. It takes the first step of
gradient descent once, with all of the noise it can afford, and fits the rest
along it:

1. **Class counts**: the number ``n_+`` of positive records, with Gaussian
   noise (``n`` is public, so ``n_- = n - n_+``).
2. **Class sums**: ``u = sum_{y_i = +1} c(x_i)`` and ``v = sum_{y_i = -1} c(x_i)``
   with Gaussian noise, where ``c`` clips each record's row to L2 norm ``C``
   (``clip``). The direction is ``S = u - (n_+ / n_-) v``: the negative
   gradient of the logistic loss at ``w = 0`` with the intercept at the class
   prior, up to the factor ``n_- / n`` (each record's term is
   ``(y_i - p) x_i``, ``p = n_+ / n``); of the squared hinge loss too, at
   its intercept-only optimum (:data:`LOSSES`).
3. **Score histograms**: each record's score ``z_i = x_i . d`` (``d`` the
   released direction, denoised below) falls in one of ``bins`` public bins;
   the counts of each bin among positives and among negatives, with Gaussian
   noise. The model is then the minimiser of the problem's loss over
   ``w = a d`` and the intercept ``b``, on the released counts (scores at
   their bins' centres): a two-parameter fit, post-processing.

Denoising. On ``p`` coordinates with noise of std ``sigma`` each, a record's
score carries noise ``sigma ||x||`` whatever its few non-zeros, against a
signal from the handful of coordinates that separate the classes. On
columns known to be non-negative (``nonnegative``: word weights, counts,
one-hot codes), the positive and the negative entries of ``S`` are each
shrunk by a James-Stein factor of their side (:func:`side_weights`): with
imbalanced classes the majority's side is scaled down by ``n_+ / n_-`` and
is mostly noise, and its weight falls to 0. Columns of either sign keep
``S``.

Privacy (replace-one neighbours, ``n`` public). Record ``(x, y)`` becomes
``(x', y')``:

* counts: ``n_+`` moves by at most 1: sensitivity 1;
* sums: the released vector holds, for each class, the sums of the positive
  parts ``max(c(x), 0)`` and, for columns not declared non-negative, of the
  negative parts ``max(-c(x), 0)``; a record's two parts form one
  non-negative vector of norm ``||c(x)|| <= C``. Two such vectors ``e, e'``
  have ``e . e' >= 0``, so ``||e - e'||**2 <= ||e||**2 + ||e'||**2 <= 2 C**2``
  within a class, and across classes the change is ``(-e, e')``, of the same
  bound: sensitivity ``sqrt(2) C``. A declared non-negative column has its
  entries clipped at 0 first (per record), so its negative part is 0 for
  every input and is not released. (Without the split, a row's sum would move
  by ``2 C`` when ``x' = -x``: the split costs nothing on signed columns, whose
  coefficient is the difference of two released sums, and saves ``sqrt(2)``
  of noise on non-negative ones.)
* histograms: the record moves from one (class, bin) cell to one other:
  sensitivity ``sqrt(2)``. The scores use ``d``, a function of releases 1 and
  2 only, and the record's unclipped row: only its bin is released, so its
  norm does not matter.

The three releases are one plan of three Gaussian events whose noise
multipliers keep fixed ratios (:data:`COUNT_MULTIPLIER`,
:data:`HISTOGRAM_MULTIPLIER` to the sums' 1), calibrated together by the
accountant to ``(epsilon, delta)``. Everything else is post-processing.

Bins. ``bins`` bins uniform in ``asinh(z / s)`` on
``[-asinh(R), asinh(R)]`` with ``R`` = :data:`SCORE_RANGE` (or on one side of 0), where
``s = C ||d|| / sqrt(p)`` (the root mean square score of a row of norm
``C`` in a random direction): linear near 0, logarithmic beyond ``s``; scores beyond
``R s`` count in the end bins. Every bound is public (a function of ``d``).

Problems: the logistic or the squared hinge loss with labels in ``{-1, +1}``,
no penalty or an L2 penalty, with an intercept, records in memory. The model is
``w = a d``: a multiple of the released direction. An L2 penalty is taken
and **not applied**: the line fit has two free parameters, which need no
regularisation, and ``alpha / 2 ||a d||**2`` would weigh the noise on every
coordinate of ``d``, which makes most of its norm (about ``sigma sqrt(p / 2)``
on ``p`` non-negative columns): on sms spam at epsilon 1 the estimators'
default ``alpha = 1e-4`` shrinks ``a`` until every record gets the majority
class. An L1 penalty (which asks for a sparse model) is refused.

Examples
--------
>>> import numpy as np
>>> from dpglm.problem import Problem
>>> from dpglm.solvers.dp_direction import dp_direction
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(0.0, 1.0, (4000, 50))
>>> y = np.where(X[:, 0] + X[:, 1] > 1.0 + rng.normal(0.0, 0.2, 4000), 1.0, -1.0)
>>> fit = dp_direction(
...     Problem(X, y, "logistic", fit_intercept=True),
...     epsilon=1.0,
...     delta=1e-6,
...     nonnegative=True,
...     random_state=0,
... )
>>> bool(np.mean(np.sign(X @ fit.coef + fit.intercept) == y) > 0.7)
True
>>> [e.sensitivity for e in fit.report.mechanisms]
[1.0, 1.4142135623730951, 1.4142135623730951]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dpglm.clipping import factors_below, record_norms
from dpglm.datafits import Logistic, SquaredHinge
from dpglm.privacy.events import GaussianEvent, PrivacyPlan
from dpglm.privacy.report import neighbouring_assumptions
from dpglm.privacy.targets import check_privacy_target
from dpglm.solvers.hyperparameters import (
    HYPERPARAMETER_ASSUMPTION,
    check_positive,
    check_positive_int,
    check_single_output,
    ridge_weights,
)
from dpglm.solvers.registry import EstimatorMapping, FitPlan, Solver
from dpglm.solvers.result import FitResult, History

__all__ = [
    "COUNT_MULTIPLIER",
    "HISTOGRAM_MULTIPLIER",
    "LOSSES",
    "SCORE_RANGE",
    "Setup",
    "check",
    "class_sums",
    "direction_plan",
    "dp_direction",
    "line_fit",
    "noisy_direction",
    "prepare",
    "score_edges",
    "score_side",
    "shrunk_direction",
    "side_weights",
]

NEIGHBOURING = "replace_one"

#: the losses whose gradient at the intercept-only optimum is along ``u - (n_+ / n_-) v``:
#: the logistic loss's optimum is the log-odds ``log(n_+ / n_-)``, the squared hinge's
#: ``(n_+ - n_-) / n``, where ``(1 + b) / (1 - b) = n_+ / n_-`` weighs the classes alike (the
#: hinge's sits on the majority's margin, where its gradient is not defined)
LOSSES = (Logistic, SquaredHinge)

#: noise multiplier of the class count, relative to the class sums' (1): the count needs
#: little precision (a prior), and a multiplier of 8 costs it 1/64 of the sums' share.
#: Measured on sms spam at epsilon 1 (20 seeds), each release's noise taken off in turn:
#: the count's gives nothing (0.895 against 0.896), the histograms' 0.002, the sums' 0.078:
#: the budget goes to the sums
COUNT_MULTIPLIER = 8.0

#: noise multiplier of the score histograms, relative to the class sums': 3 gives them a
#: ninth of the sums' share (the sums carry the direction, where the noise is spread over
#: every coordinate; the line fit has two parameters to fit from the histograms). With the
#: count's 8, the sums' share of the plan goes from 76 % to 89 %: sms spam 0.901 against
#: 0.899 at epsilon 1 (5 seeds), 0.941 against 0.937 at 2, 0.876 against 0.875 at 0.5
HISTOGRAM_MULTIPLIER = 3.0

#: the line fit's ridge on ``a``, in units of ``1 / s**2``: a margin ``a z`` of 10 at a
#: score of ``s`` costs 0.005 per record, of 100 costs 0.5, so that separated histograms
#: give margins in the tens, not an arbitrarily large slope
SEPARABLE_RIDGE = 1e-4

#: the bins reach ``asinh(SCORE_RANGE)`` in ``asinh(z / s)``: scores up to 32 ``s``. The
#: scores read the unclipped rows, which may be longer than ``C`` (a column scaled by its
#: own range): on sms spam at epsilon 1, bins to 8 ``s`` gave 0.81 with exact public ranges
#: (the spam scores piled into the end bin) and 0.91 with the private ones; to 32 ``s``,
#: 0.91 and 0.91; to 128 ``s`` the 16 bins spread too thin (0.90 and 0.91)
SCORE_RANGE = 32.0


def _alpha(problem):
    """The L2 penalty's ``alpha`` (0 for none); None unless one L2 penalty weighs every
    coefficient alike."""
    weights = ridge_weights(problem)
    if weights is None or (weights.size and not np.all(weights == weights[0])):
        return None
    return float(weights[0]) if weights.size else 0.0


def check(problem) -> None:
    """Raise DP-Direction's refusal of ``problem``, if it has one.

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> check(ProblemShape(10, 2, "logistic", "l2", fit_intercept=True))
    >>> check(ProblemShape(10, 2, "squared"))
    Traceback (most recent call last):
    ...
    ValueError: DP-Direction fits the logistic and the squared hinge losses only (at their intercept-only optimum both point to u - (n_+ / n_-) v), not the squared loss: use DP-CD, DP-GCD, DP-SGD or AdaSSP
    """  # noqa: E501
    check_single_output(problem, "DP-Direction")
    problem.in_memory("DP-Direction")
    if not isinstance(problem.datafit, LOSSES):
        raise ValueError(
            "DP-Direction fits the logistic and the squared hinge losses only (at their "
            f"intercept-only optimum both point to u - (n_+ / n_-) v), not the "
            f"{problem.datafit.name} loss: use DP-CD, DP-GCD, DP-SGD or AdaSSP"
        )
    if _alpha(problem) is None:
        raise ValueError(
            f"DP-Direction takes no penalty or one L2 penalty on every coefficient; "
            f"{problem.penalty!r} is not (use DP-CD, DP-GCD or DP-SGD)"
        )
    if not problem.fit_intercept:
        raise ValueError(
            "DP-Direction needs an intercept (fit_intercept=True): its direction is the "
            "gradient at the intercept-only model, and its line fit moves the threshold along "
            "it; without one every record with a score of one sign gets one class"
        )


def direction_plan(clip: float) -> PrivacyPlan:
    """Template plan of the three releases (see the module docstring).

    Examples
    --------
    >>> plan = direction_plan(2.0)
    >>> [(e.noise_multiplier, round(e.sensitivity, 4)) for e in plan.events]
    [(8.0, 1.0), (1.0, 2.8284), (3.0, 1.4142)]
    """
    root2 = math.sqrt(2.0)
    events = (
        GaussianEvent(
            noise_multiplier=COUNT_MULTIPLIER,
            sensitivity=1.0,
            label="number of positive records (sensitivity 1)",
        ),
        GaussianEvent(
            noise_multiplier=1.0,
            sensitivity=root2 * clip,
            label=(
                "class sums of the rows clipped to norm C, positive and negative parts "
                "(sensitivity sqrt(2) C)"
            ),
        ),
        GaussianEvent(
            noise_multiplier=HISTOGRAM_MULTIPLIER,
            sensitivity=root2,
            label="histograms of the scores x . d by class (sensitivity sqrt(2))",
        ),
    )
    return PrivacyPlan(events, NEIGHBOURING)


@dataclass(frozen=True)
class Setup:
    """A DP-Direction fit as :func:`prepare` validated it.

    Attributes
    ----------
    fit_plan : FitPlan
    clip : float
        ``C``.
    bins : int
    """

    fit_plan: FitPlan
    clip: float
    bins: int


def prepare(problem, *, epsilon: float, delta: float, clip: float, bins: int, accountant: str):
    """The checks of :func:`dp_direction`, in its order, and its plan; no record is read.

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> setup = prepare(
    ...     ProblemShape(100, 3, "logistic", fit_intercept=True),
    ...     epsilon=1.0,
    ...     delta=1e-6,
    ...     clip=1.0,
    ...     bins=32,
    ...     accountant="auto",
    ... )
    >>> len(setup.fit_plan.template.events), setup.bins
    (3, 32)
    """
    check(problem)
    epsilon, delta = check_privacy_target(
        epsilon, delta, positive_delta="Gaussian noise gives no (epsilon, 0) guarantee"
    )
    clip = check_positive("clip", clip)
    bins = check_positive_int("bins", bins)
    if bins < 2:
        raise ValueError(f"bins must be at least 2, got {bins}")
    if not isinstance(accountant, str):
        raise ValueError(f"accountant must be a str, got {accountant!r}")
    return Setup(FitPlan(direction_plan(clip), epsilon, delta, accountant), clip, bins)


# -- the releases -----------------------------------------------------------------------


def _nonnegative_mask(nonnegative, n_features: int) -> np.ndarray:
    if nonnegative is None or nonnegative is False:
        return np.zeros(n_features, dtype=bool)
    if nonnegative is True:
        return np.ones(n_features, dtype=bool)
    mask = np.asarray(nonnegative)
    if mask.dtype != bool or mask.shape != (n_features,):
        raise ValueError(
            f"nonnegative must be None, a bool or a boolean array of {n_features} entries (one "
            f"per feature), got {nonnegative!r}"
        )
    return mask


def _nonnegative_rows(X, nonnegative: np.ndarray):
    """``X`` with the declared non-negative columns clipped at 0: ``X`` itself when none of
    their entries is negative (the estimators' scaled records), else a copy."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        below = nonnegative[X.indices] & (X.data < 0.0)
        if not below.any():
            return X
        X = X.astype(float, copy=True)
        X.data[below] = 0.0
        return X
    columns = np.asarray(X)[:, nonnegative]
    if not (columns < 0.0).any():
        return X
    X = np.array(X, dtype=float)
    X[:, nonnegative] = np.maximum(columns, 0.0)
    return X


def _clipped_rows(X, nonnegative: np.ndarray, clip: float):
    """``X`` with the declared non-negative columns clipped at 0, each row to norm ``clip``."""
    X = _nonnegative_rows(X, nonnegative)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        norms = record_norms(X)
        factor = np.where(norms > clip, clip / norms, 1.0)
    # a row with a non-finite entry (or whose norm overflowed) contributes nothing: no
    # non-finite term passes the clip; a subnormal factor is rounded down
    factor[~np.isfinite(factor) | ~np.isfinite(norms)] = 0.0
    factor = factors_below(factor)
    with np.errstate(invalid="ignore"):
        rows = sp.csr_matrix(sp.diags(factor) @ X) if sp.issparse(X) else X * factor[:, None]
    values = rows.data if sp.issparse(rows) else rows
    values[~np.isfinite(values)] = 0.0
    return rows


def class_sums(X, positive, clip: float, nonnegative) -> tuple:
    """Per class, the sums of the clipped rows' positive and negative parts: not private.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    positive : ndarray of bool, shape (n_samples,)
    clip : float
        ``C``: each row is scaled to L2 norm at most ``C``.
    nonnegative : ndarray of bool, shape (n_features,)
        Columns clipped at 0 first (their negative parts are 0).

    Returns
    -------
    tuple of ndarray
        ``(u_plus, u_minus, v_plus, v_minus)``: the positives' sums of
        ``max(c(x), 0)`` and ``max(-c(x), 0)``, then the negatives'.

    Examples
    --------
    >>> X = np.array([[3.0, -4.0], [1.0, 0.0], [0.0, 2.0]])
    >>> sums = class_sums(X, np.array([True, True, False]), 1.0, np.zeros(2, dtype=bool))
    >>> [s.tolist() for s in sums]
    [[1.6, 0.0], [0.0, 0.8], [0.0, 1.0], [0.0, 0.0]]
    """
    rows = _clipped_rows(X, nonnegative, clip)
    out = []
    for mask in (positive, ~positive):
        block = rows[mask]
        if sp.issparse(block):
            plus = np.asarray(block.maximum(0.0).sum(axis=0)).ravel()
            minus = np.asarray((-block).maximum(0.0).sum(axis=0)).ravel()
        else:
            plus = np.maximum(block, 0.0).sum(axis=0)
            minus = np.maximum(-block, 0.0).sum(axis=0)
        out.extend([plus, minus])
    return tuple(out)


def side_weights(S, noise_std: float) -> tuple:
    """``(f_plus, f_minus)``: the shrinkage of the positive and the negative entries of ``S``.

    ``S`` holds the noisy coordinates of non-negative columns, each with
    Gaussian noise of std ``noise_std``. On a side where no coordinate has
    signal, ``max(S_j, 0)`` (or ``min``) is ``noise_std`` times a half-normal
    part, of mean square ``noise_std**2 / 2`` per column. The weight of each
    side is ``max(0, 1 - k noise_std**2 / 2 / E)``, with ``E`` the side's
    observed sum of squares over ``k`` columns: the James-Stein factor of a
    side's energy against what noise alone would give it. With imbalanced
    classes the majority's side of ``S = u - (n_+ / n_-) v`` is scaled down by
    the ratio and drowns in the noise: on sms spam TF-IDF (13 % spam) its
    weight is 0, and the test AUC of the scores rises from 0.85 to 0.90.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> S = rng.normal(0.0, 1.0, 10_000)
    >>> S[:20] += 30.0  # signal on the positive side only
    >>> [round(f, 2) for f in side_weights(S, 1.0)]
    [0.78, 0.0]
    """
    k = S.size
    if k == 0:
        return 1.0, 1.0
    noise = k * noise_std**2 / 2.0
    weights = []
    for part in (np.maximum(S, 0.0), np.minimum(S, 0.0)):
        energy = float(part @ part)
        weights.append(max(0.0, 1.0 - noise / energy) if energy > 0.0 else 0.0)
    return tuple(weights)


def noisy_direction(sums, count_positive: float, n: int, nonnegative, release) -> tuple:
    """``S = u - (n_+ / n_-) v`` from the class sums released through ``release``.

    Parameters
    ----------
    sums : tuple of ndarray
        :func:`class_sums`.
    count_positive : float
        The released ``n_+`` (kept within ``[0.5, n - 0.5]``).
    n : int
    nonnegative : ndarray of bool
        Columns whose negative parts are 0 for every input: not released.
    release : Release
        The sums' event: one Gaussian release of the vector of every block.

    Returns
    -------
    S : ndarray
        On a non-negative column, Gaussian noise of variance
        ``s**2 (1 + ratio**2)`` around the exact ``S`` (``s`` the release's
        std); ``2 s**2 (1 + ratio**2)`` on the others (two blocks each).
    ratio : float
        ``n_+ / n_-`` from the released count.

    Examples
    --------
    >>> from dpglm.privacy.events import GaussianEvent
    >>> from dpglm.privacy.releases import Release
    >>> sums = (np.array([3.0, 1.0]), np.zeros(2), np.array([2.0, 2.0]), np.zeros(2))
    >>> quiet = Release(GaussianEvent(noise_multiplier=0.0, sensitivity=1.0))
    >>> S, ratio = noisy_direction(sums, 1.0, 3, np.ones(2, dtype=bool), quiet)
    >>> S.tolist(), ratio
    ([2.0, 0.0], 0.5)
    """
    u_plus, u_minus, v_plus, v_minus = sums
    signed = ~np.asarray(nonnegative, dtype=bool)
    noisy_u_plus, noisy_v_plus = release.add(u_plus), release.add(v_plus)
    noisy_u_minus, noisy_v_minus = np.zeros_like(u_minus), np.zeros_like(v_minus)
    if signed.any():
        noisy_u_minus[signed] = release.add(u_minus[signed])
        noisy_v_minus[signed] = release.add(v_minus[signed])
    # the positives' share, kept inside (0, 1) so that the ratio stays finite
    positives = min(max(count_positive, 0.5), n - 0.5)
    ratio = positives / (n - positives)
    return (noisy_u_plus - noisy_u_minus) - ratio * (noisy_v_plus - noisy_v_minus), ratio


def shrunk_direction(S, nonnegative, noise_std: float) -> np.ndarray:
    """``S`` with each side of its non-negative columns shrunk by :func:`side_weights`.

    ``noise_std``: the std of ``S``'s noise on a non-negative column (0: no
    noise, nothing shrunk).

    Examples
    --------
    >>> S = np.array([5.0, -0.1, 3.0, -0.2])
    >>> shrunk_direction(S, np.array([True, True, True, False]), 1.0).round(3).tolist()
    [4.779, -0.0, 2.868, -0.2]
    """
    nonnegative = np.asarray(nonnegative, dtype=bool)
    if not nonnegative.any() or not noise_std > 0.0:
        return S
    f_plus, f_minus = side_weights(S[nonnegative], noise_std)
    return np.where(nonnegative, np.where(S > 0.0, f_plus * S, f_minus * S), S)


def score_side(direction, nonnegative) -> int:
    """The sign every score ``x . d`` has for every record, if public: 1, -1, or 0 (either).

    When every column is declared non-negative (the scores read the rows with
    those columns clipped at 0) and ``d`` has one sign, so has every score.

    Examples
    --------
    >>> score_side(np.array([0.0, 2.0]), np.ones(2, dtype=bool))
    1
    >>> score_side(np.array([-1.0, 2.0]), np.ones(2, dtype=bool))
    0
    """
    if not np.all(nonnegative):
        return 0
    if np.all(direction >= 0.0):
        return 1
    return -1 if np.all(direction <= 0.0) else 0


def score_edges(direction, clip: float, bins: int, side: int = 0) -> np.ndarray:
    """The ``bins + 1`` public bin edges of the scores ``x . d`` (see the module docstring).

    ``side``: the scores' public sign (:func:`score_side`); 0 spreads the
    bins over both signs, half on each.

    Examples
    --------
    >>> score_edges(np.full(4, 1.0), 1.0, 4).round(2).tolist()
    [-32.0, -3.94, 0.0, 3.94, 32.0]
    >>> score_edges(np.full(4, 1.0), 1.0, 2, side=1).round(2).tolist()
    [0.0, 3.94, 32.0]
    """
    p = direction.size
    s = clip * float(np.linalg.norm(direction)) / math.sqrt(p)
    if not s > 0.0:
        s = 1.0  # d = 0: every score is 0, any bins will do
    top = math.asinh(SCORE_RANGE)
    if side == 0:
        return s * np.sinh(np.linspace(-top, top, bins + 1))
    return side * s * np.sinh(np.linspace(0.0, top, bins + 1))[::side]


def score_histograms(rows, direction, positive, edges) -> np.ndarray:
    """The number of positives, then of negatives, whose score ``x . d`` falls in each bin.

    ``rows``: the records (unclipped: only each one's bin is counted, so its
    norm does not matter; the declared non-negative columns clipped at 0).
    A NaN score counts in the first bin, an infinite one in an end bin:
    every record counts once, in one (class, bin) cell, whatever its entries.

    Examples
    --------
    >>> rows = np.array([[1.0, 0.0], [0.0, 3.0], [np.nan, 1.0]])
    >>> edges = np.array([-1.0, 0.5, 2.0, 4.0])
    >>> score_histograms(rows, np.ones(2), np.array([True, False, True]), edges).tolist()
    [1.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    """
    bins = edges.size - 1
    with np.errstate(invalid="ignore", over="ignore"):
        scores = np.asarray(rows @ direction, dtype=float).ravel()
    index = _bin_of(scores, edges)
    return np.concatenate(
        [
            np.bincount(index[positive], minlength=bins),
            np.bincount(index[~positive], minlength=bins),
        ]
    ).astype(float)


def _bin_of(scores, edges) -> np.ndarray:
    inner = edges[1:-1]
    index = np.searchsorted(inner, scores, side="right")
    # a NaN score (a non-finite row) counts in the first bin: only its bin is released
    index[np.isnan(scores)] = 0
    return index


# -- the line fit ----------------------------------------------------------------------------


def line_fit(centres, positives, negatives, n: int, penalty: float = 0.0, datafit=None):
    """``(a, b)`` minimising the loss of ``a z + b`` on binned counts, plus ``penalty a**2 / 2``.

    ``positives[k]`` and ``negatives[k]`` are the (noisy) numbers of records
    of each class whose score falls in bin ``k`` of centre ``centres[k]``;
    negative counts are taken as 0. The objective is
    ``(1 / n) sum_k [P_k l(a z_k + b, 1) + N_k l(a z_k + b, -1)] + penalty a**2 / 2``
    with ``l`` the binary loss of ``datafit`` (default: logistic): convex,
    minimised by Newton's method with a backtracking line search. When every
    count sits in one bin, ``a = 0`` and ``b`` minimises the loss alone (the
    log-odds of the counts, for the logistic loss; when one class has no
    count at all the logistic loss has no minimiser, and ``b`` stops where
    Newton's tolerance does, about 29 in size).

    Examples
    --------
    >>> a, b = line_fit(np.array([-1.0, 1.0]), np.array([10.0, 90.0]), np.array([90.0, 10.0]), 200)
    >>> round(a, 3), abs(round(b, 3))
    (2.197, 0.0)
    """
    datafit = Logistic() if datafit is None else datafit
    z = np.asarray(centres, dtype=float)
    weights = np.concatenate([positives, negatives]).astype(float)
    weights = np.maximum(weights, 0.0) / n
    labels = np.repeat([1.0, -1.0], z.size)
    occupied = weights > 0.0
    if not occupied.any():
        return 0.0, 0.0
    scores = np.concatenate([z, z])
    # one score for every record: no slope to fit, only the intercept
    slope = np.unique(scores[occupied]).size > 1
    features = (
        np.column_stack([scores, np.ones_like(scores)]) if slope else np.ones((z.size * 2, 1))
    )
    ridge = np.array([penalty, 0.0]) if slope else np.zeros(1)

    def objective(theta):
        loss = datafit.loss(features @ theta, labels)
        return float(weights @ loss) + 0.5 * float(ridge @ theta**2)

    theta = np.zeros(features.shape[1])
    value = objective(theta)
    for _ in range(100):
        m = features @ theta
        grad = features.T @ (weights * datafit.derivative(m, labels)) + ridge * theta
        curvature = weights * datafit.second_derivative(m, labels)
        hess = features.T @ (features * curvature[:, None]) + np.diag(ridge)
        hess += 1e-12 * np.eye(theta.size)
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            step = grad
        t = 1.0
        while t > 1e-10:
            candidate = theta - t * step
            new = objective(candidate)
            if new <= value - 1e-4 * t * float(grad @ step):
                break
            t *= 0.5
        else:
            break
        done = value - new < 1e-14 * max(1.0, abs(value))
        theta, value = candidate, new
        if done:
            break
    return (float(theta[0]), float(theta[1])) if slope else (0.0, float(theta[0]))


# -- the fit ---------------------------------------------------------------------------------


def dp_direction(
    problem,
    *,
    epsilon: float,
    delta: float,
    clip: float = 1.0,
    bins: int = 16,
    nonnegative=None,
    budget=None,
    accountant: str = "auto",
    random_state=None,
    secure: bool = False,
) -> FitResult:
    """Fit ``problem`` with DP-Direction (see the module docstring).

    Parameters
    ----------
    problem : Problem
        Logistic or squared hinge loss, no penalty or L2, an intercept, in memory.
    epsilon, delta : float
        Target guarantee (replace-one neighbours); ``epsilon = inf`` releases
        everything without noise.
    clip : float, default=1.0
        ``C``: every row is scaled to L2 norm at most ``C`` in the class sums.
    bins : int, default=16
        Number of score bins of the line fit.
    nonnegative : None, bool or array of bool of shape (n_features,), default=None
        Columns whose public range is non-negative (True: all). Their entries
        are clipped at 0 in the sums, which then release their positive parts
        only, and the direction's positive and negative entries on them are
        shrunk side by side (:func:`side_weights`). It changes no noise
        multiplier, so it may be decided after the plan (e.g. from released
        ranges), but never from the data themselves: which columns are
        declared is part of the report and shapes the model.
    budget : PrivacyBudget, optional
        Charged with the calibrated plan before the data is read.
    accountant : str, default="auto"
    random_state : None, int, Generator or NoiseSource
    secure : bool, default=False

    Returns
    -------
    FitResult
        ``n_iter = 1``; ``info["scale"]`` is ``a``, ``info["noise_std"]``
        the std of each release, ``info["positives"]`` the released count.

    Examples
    --------
    >>> from dpglm.problem import Problem
    >>> X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.8]])
    >>> fit = dp_direction(
    ...     Problem(X, np.array([1.0, 1.0, -1.0, -1.0]), "logistic", fit_intercept=True),
    ...     epsilon=math.inf,
    ...     delta=0.0,
    ...     nonnegative=True,
    ... )
    >>> np.sign(X @ fit.coef + fit.intercept).tolist()
    [1.0, 1.0, -1.0, -1.0]
    """
    setup = prepare(
        problem, epsilon=epsilon, delta=delta, clip=clip, bins=bins, accountant=accountant
    )
    problem = problem.in_memory("DP-Direction")
    n, p = problem.n_samples, problem.n_features
    mask = _nonnegative_mask(nonnegative, p)
    alpha = _alpha(problem)
    assumptions = (
        *neighbouring_assumptions(NEIGHBOURING),
        f"rows clipped to L2 norm C = {setup.clip:g} per record for the class sums; "
        f"{int(mask.sum())} of {p} columns declared non-negative (public), clipped at 0 per "
        "record",
        HYPERPARAMETER_ASSUMPTION,
        *(
            (
                f"the L2 penalty (alpha = {alpha:g}) is not applied: the model is a multiple "
                "of the released direction, fitted along it",
            )
            if alpha > 0.0
            else ()
        ),
    )
    spent = setup.fit_plan.spend(
        budget=budget,
        label=f"DP-Direction on {problem!r}",
        assumptions=assumptions,
        random_state=random_state,
        secure=secure,
    )
    # C order or CSR (the clip scales each record's row), the declared columns clipped at 0
    # once for both passes
    X = _nonnegative_rows(problem.rows, mask)
    positive = np.asarray(problem.y) > 0.0
    releases = [spent.release(i) for i in range(3)]

    noisy_count = float(releases[0].add(float(positive.sum())))
    sums = class_sums(X, positive, setup.clip, mask)
    S, ratio = noisy_direction(sums, noisy_count, n, mask, releases[1])
    d = shrunk_direction(S, mask, float(releases[1].scale()) * math.hypot(1.0, ratio))

    edges = score_edges(d, setup.clip, setup.bins, score_side(d, mask))
    counts = score_histograms(X, d, positive, edges)
    # one std off every bin, then clipped at 0: an empty bin's noise would otherwise add
    # 0.4 of a std of phantom records, far from the scores; a full bin loses 1 std of its
    # hundreds
    noisy = np.maximum(releases[2].add(counts) - releases[2].scale(), 0.0)
    # each bin's midpoint in asinh(z / s); the end bins also hold every score beyond
    unit = float(np.max(np.abs(edges))) / SCORE_RANGE
    centres = unit * np.sinh(0.5 * (np.arcsinh(edges[:-1] / unit) + np.arcsinh(edges[1:] / unit)))
    positives, negatives = noisy[: setup.bins], noisy[setup.bins :]
    # not the problem's penalty (see the module docstring): a ridge of SEPARABLE_RIDGE on a z,
    # at the scores' scale, keeps the fit finite when the released histograms separate the
    # classes (the logistic loss then has no minimiser)
    a, b = line_fit(centres, positives, negatives, n, SEPARABLE_RIDGE * unit**2, problem.datafit)
    theta = np.append(a * d, b)
    history = History.empty(problem.n_coords)
    history.record(1.0, theta)
    stds = tuple(float(r.scale()) for r in releases)
    return FitResult.from_theta(
        problem,
        theta,
        history=history,
        report=spent.report,
        n_iter=1,
        info={
            "solver": "dp-direction",
            "scale": a,
            "positives": float(noisy_count),
            "nonnegative": int(mask.sum()),
            "penalty_applied": False,
            "noise_std": dict(zip(("count", "sums", "histograms"), stds, strict=True)),
        },
    )


SOLVER = Solver(
    name="dp-direction",
    summary=(
        "one private gradient at the intercept-only model, then a private line fit along it "
        "(binary logistic or squared hinge, many sparse features)"
    ),
    fit=dp_direction,
    prepare=prepare,
    check=check,
    estimator=EstimatorMapping(step=False),
    order=95,
)
