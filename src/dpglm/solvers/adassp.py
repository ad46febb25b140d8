"""AdaSSP: sufficient-statistics perturbation with an adaptive ridge (Wang 2018, Algorithm 2).

Yu-Xiang Wang, "Revisiting differentially private linear regression: optimal
and adaptive prediction & estimation in unbounded domain", UAI 2018. Least
squares is a function of two sufficient statistics, ``X^T X`` and ``X^T y``:
AdaSSP releases both with Gaussian noise, and a third, scalar release,
``lambda_min(X^T X)``, chooses how much ridge the noisy ``X^T X`` needs to
stay well conditioned. No iteration: the model is one linear solve of the
released statistics,

    ``theta = (noisy X^T X + Lambda)^{-1} noisy X^T y``,

with ``Lambda`` the adaptive ridge ``lambda`` plus the problem's own L2 penalty.

Records. Public bounds ``B_j`` on ``|X_ij|`` (``feature_bounds``, required) and
``Y`` on ``|y_i|`` (``target_bound``) hold for every record because every
record is clipped to them first (per record: ``X_ij`` to ``[-B_j, B_j]``,
``y_i`` to ``[-Y, Y]``). The statistics are those of the rows
``x~_i = (x_i, 1)`` (the 1 only with an intercept), whose L2 norms are then at
most

    ``X_b = sqrt(sum_j B_j**2 + [fit_intercept])``,

the intercept column counting with its bound 1. ``d`` is ``n_coords``.

Sensitivities (replace-one neighbours, ``n`` public: record ``(x, y)`` becomes
``(x', y')``, both within the bounds; ``M = x x^T - x' x'^T``):

1. ``lambda_min(X^T X)``: ``X'^T X' = X^T X - x x^T + x' x'^T``, where
   ``x x^T`` and ``x' x'^T`` are PSD of spectral norms ``||x||**2`` and
   ``||x'||**2``, so in the PSD order
   ``X^T X - ||x||**2 I <= X^T X - x x^T <= X'^T X' <= X^T X + x' x'^T
   <= X^T X + ||x'||**2 I``, and (Weyl) every eigenvalue, the smallest
   included, moves by at most ``max(||x||**2, ||x'||**2)``: sensitivity
   ``X_b**2``.
2. ``X^T X``, released as its upper triangle (diagonal included) ``u(X^T X)``,
   a vector of ``d (d + 1) / 2`` entries, with i.i.d. Gaussian noise, then
   mirrored: a symmetric noise matrix whose upper triangle is the Gaussian
   mechanism on ``u``. Its L2 sensitivity is that of ``u(M)``:
   ``||u(M)||**2 = sum_j M_jj**2 + sum_{j<k} M_jk**2
   = (||M||_F**2 + sum_j M_jj**2) / 2 <= ||M||_F**2``, and
   ``||M||_F**2 = tr(M**2) = ||x||**4 + ||x'||**4 - 2 (x . x')**2
   <= 2 X_b**4``: sensitivity ``sqrt(2) X_b**2``. It is attained: ``x`` and
   ``x'`` of norm ``X_b`` on disjoint coordinates (e.g. ``x = X_b e_1``,
   ``x' = X_b e_2``) give ``u(M) = (X_b**2, 0, ..., -X_b**2, ...)``, of norm
   ``sqrt(2) X_b**2``. (The triangle inequality,
   ``||u(x x^T)|| + ||u(x' x'^T)|| <= 2 X_b**2`` with
   ``||u(x x^T)||**2 = (||x||**4 + sum_j x_j**4) / 2 <= ||x||**4``, is valid
   but loose by ``sqrt(2)``.) The bound is the one for rows of norm at most
   ``X_b``; rows in the box of the feature bounds, a subset, may move ``u``
   less, which is not claimed here.
3. ``X^T y``: it moves by ``x' y' - x y``, of norm at most
   ``||x|| |y| + ||x'|| |y'| <= 2 X_b Y`` (attained by ``x' = x`` of norm
   ``X_b`` and ``y' = -y = Y``): sensitivity ``2 X_b Y``.

Privacy. The three releases are three :class:`~dpglm.privacy.events.GaussianEvent`
of one plan, each with its sensitivity above and **the same noise multiplier**
``z`` (noise std ``z`` times the sensitivity): the accountant (``"auto"``:
exact Gaussian DP, under which the three compose as one Gaussian mechanism of
``mu = sqrt(3) / z``) calibrates ``z`` so that the plan meets
``(epsilon, delta)``. Why equal: each release then takes an equal third of
the budget (``1 / z**2`` each, of ``mu**2`` or of zCDP's ``rho``), the
paper's ``epsilon / 3`` split, so that the adaptive ridge rule below is the
paper's, with its analysis; the composition is exact rather than the paper's
three ``(epsilon / 3, delta / 3)`` Gaussian calibrations, so each release gets
less noise than in the paper. (The eigenvalue release could take a smaller
share, its noise entering the ridge without the ``sqrt(d)`` of the matrix
bound; that refinement is not the paper's and is left out.) Everything after
the releases is post-processing: the ridge choice and the solve read the
released values only.

Adaptive ridge (Algorithm 2, steps 2-3, with the calibrated noise in place of
the paper's constants). With ``s_lambda`` and ``s_X`` the noise stds of
releases 1 and 2 and ``rho`` the failure probability (default 0.05):

* ``lambda~ = max(noisy lambda_min - s_lambda sqrt(2 log(1 / rho)), 0)``:
  the Gaussian tail ``P[Z > t] <= exp(-t**2 / 2)`` makes ``lambda~ <=
  lambda_min`` with probability at least ``1 - rho`` (the paper subtracts its
  std times ``sqrt(log(6 / delta))``, tying the same shift to ``delta``);
* ``lambda = max(0, s_X sqrt(d log(2 d**2 / rho)) - lambda~)``: the paper's
  high-probability bound on the spectral norm of the ``d x d`` noise matrix,
  less what ``X^T X`` already provides, so that ``noisy X^T X + lambda I``
  stays positive definite.

Penalties and intercept. The objective is ``(1/n) sum_i (x~_i . theta -
y_i)**2 / 2 + alpha / 2 ||w||**2``, whose minimiser solves ``(X~^T X~ + n
alpha D) theta = X~^T y`` with ``D`` the identity without its intercept entry:
the L2 penalty adds ``n alpha`` to the ridge of the coefficients. The
adaptive ``lambda`` too is applied to every coordinate but the intercept
(never penalised in dpglm); the intercept's diagonal entry is ``n`` plus noise,
which keeps its direction well conditioned. The paper has no intercept; with
one, ``lambda_min`` is that of the statistics with the constant column, as
released.

Problems: the squared loss with no penalty or an L2 penalty, dense or sparse
features in memory. Other losses, penalties with an L1 part or bounds, and
data in row chunks are refused.

``epsilon = inf`` runs the same code without noise: both stds are 0, so
``lambda = 0``, and the fit is the least-squares (ridge) solution of the
clipped records (the bounds are still required, and applied).

Examples
--------
>>> import numpy as np
>>> from dpglm.problem import Problem
>>> from dpglm.solvers.adassp import adassp
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, (5000, 3))
>>> y = X @ np.array([0.5, -0.3, 0.2]) + 0.1 * rng.standard_normal(5000)
>>> fit = adassp(
...     Problem(X, y, "squared"), epsilon=1.0, delta=1e-6, feature_bounds=1.0, random_state=0
... )
>>> [(e.label.split(" (")[0], e.sensitivity) for e in fit.report.mechanisms][0]
('lambda_min(X^T X)', 3.0)
>>> bool(fit.report.epsilon <= 1.0), bool(np.abs(fit.coef - [0.5, -0.3, 0.2]).max() < 0.1)
(True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from dpglm.datafits import Squared
from dpglm.privacy.events import GaussianEvent, PrivacyPlan
from dpglm.privacy.report import neighbouring_assumptions
from dpglm.privacy.targets import check_privacy_target
from dpglm.solvers.hyperparameters import (
    HYPERPARAMETER_ASSUMPTION,
    check_positive,
    check_single_output,
    ridge_weights,
)
from dpglm.solvers.registry import EstimatorMapping, FitPlan, Solver
from dpglm.solvers.result import FitResult, History
from dpglm.solvers.smoothness import CLIPPED_TO_BOUNDS, check_bound_values

__all__ = [
    "Released",
    "Setup",
    "Statistics",
    "adassp",
    "check",
    "choose_ridge",
    "clipped_statistics",
    "prepare",
    "release_statistics",
    "statistics_plan",
]

NEIGHBOURING = "replace_one"

#: the release that chooses the ridge, in the report's split of the budget
RIDGE_PART = "ridge selection"


def _refused_loss(datafit) -> str:
    return (
        f"AdaSSP fits the squared loss only (it releases the sufficient statistics X^T X and "
        f"X^T y of least squares); the {datafit.name} loss has none: use DP-CD, DP-GCD, "
        "DP-SGD, DP-AGD or DP-GD"
    )


def check(problem) -> None:
    """Raise AdaSSP's refusal of ``problem``, if it has one.

    AdaSSP needs the squared loss (its model is a function of ``X^T X`` and
    ``X^T y``), no penalty or an L2 penalty (a ridge on the statistics) and
    every record in this process.

    Parameters
    ----------
    problem : Problem, ShardedProblem or ProblemShape
        Only its shape is read.

    Raises
    ------
    TypeError
        The records are in row chunks (a ShardedProblem).
    ValueError
        Another loss, or a penalty with an L1 part, bounds or no separable form.

    Examples
    --------
    >>> from dpglm.penalties import L1, L2
    >>> from dpglm.solvers.registry import ProblemShape
    >>> check(ProblemShape(10, 2, "squared", L2(0.1), fit_intercept=True))
    >>> check(ProblemShape(10, 2, "logistic"))
    Traceback (most recent call last):
    ...
    ValueError: AdaSSP fits the squared loss only (it releases the sufficient statistics X^T X and X^T y of least squares); the logistic loss has none: use DP-CD, DP-GCD, DP-SGD, DP-AGD or DP-GD
    >>> check(ProblemShape(10, 2, "squared", L1(0.1)))
    Traceback (most recent call last):
    ...
    ValueError: AdaSSP takes no penalty or an L2 penalty; L1(alpha=0.1) has an L1 part, bounds or is not separable (use DP-CD, DP-GCD or DP-SGD, whose proximal steps handle it)
    """  # noqa: E501
    check_single_output(problem, "AdaSSP")
    problem.in_memory("AdaSSP")
    if not isinstance(problem.datafit, Squared):
        raise ValueError(_refused_loss(problem.datafit))
    if ridge_weights(problem) is None:
        raise ValueError(
            f"AdaSSP takes no penalty or an L2 penalty; {problem.penalty!r} has an L1 part, "
            "bounds or is not separable (use DP-CD, DP-GCD or DP-SGD, whose proximal steps "
            "handle it)"
        )


def _check_feature_bounds(feature_bounds, n_features: int) -> np.ndarray:
    if feature_bounds is None:
        raise ValueError(
            "feature_bounds is required: AdaSSP needs public feature bounds (a bound B_j on "
            "|X_ij| per column, or one for all), to which every record is clipped and from "
            "which the sensitivities of X^T X and X^T y follow; they cannot come from the data"
        )
    try:
        bounds = np.asarray(feature_bounds, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"feature_bounds must be a number or one number per column, got {feature_bounds!r}"
        ) from None
    return check_bound_values(bounds, n_features, positive=True)


def statistics_plan(squared_row_bound: float, target_bound: float) -> PrivacyPlan:
    """Template plan of AdaSSP's three releases (unit multipliers, the derived sensitivities).

    Parameters
    ----------
    squared_row_bound : float
        ``X_b**2``, the bound on every row's squared L2 norm (intercept column
        included): ``sum_j B_j**2 (+ 1)``, summed rather than squared from
        ``X_b``, so that the sensitivities are exact in floating point.
    target_bound : float
        ``Y``.

    Returns
    -------
    PrivacyPlan
        ``lambda_min(X^T X)`` (sensitivity ``X_b**2``), the upper triangle of
        ``X^T X`` (``sqrt(2) X_b**2``) and ``X^T y`` (``2 X_b Y``), one Gaussian
        event each, under replace-one neighbours (see the module docstring).

    Examples
    --------
    >>> plan = statistics_plan(4.0, 0.5)
    >>> [e.sensitivity for e in plan.events] == [4.0, 2**0.5 * 4.0, 2.0]
    True
    """
    squared = squared_row_bound
    row_bound = math.sqrt(squared_row_bound)
    events = (
        GaussianEvent(
            noise_multiplier=1.0,
            sensitivity=squared,
            label="lambda_min(X^T X) (Weyl: sensitivity X_b^2)",
            part=RIDGE_PART,
        ),
        GaussianEvent(
            noise_multiplier=1.0,
            sensitivity=math.sqrt(2.0) * squared,
            label="upper triangle of X^T X, mirrored (sensitivity sqrt(2) X_b^2)",
        ),
        GaussianEvent(
            noise_multiplier=1.0,
            sensitivity=2.0 * row_bound * target_bound,
            label="X^T y (sensitivity 2 X_b Y)",
        ),
    )
    return PrivacyPlan(events, NEIGHBOURING)


@dataclass(frozen=True)
class Setup:
    """An AdaSSP fit as :func:`prepare` validated it: its plan and the settings it runs.

    Attributes
    ----------
    fit_plan : FitPlan
        The three Gaussian releases (:func:`statistics_plan`), the target and the accountant.
    bounds : ndarray
        ``B_j``, one per column.
    target_bound : float
        ``Y``.
    row_bound : float
        ``X_b = sqrt(sum_j B_j**2 + [fit_intercept])``.
    failure_probability : float
        ``rho``.
    """

    fit_plan: FitPlan
    bounds: np.ndarray = field(compare=False, repr=False)
    target_bound: float
    row_bound: float
    failure_probability: float


def prepare(
    problem,
    *,
    epsilon: float,
    delta: float,
    feature_bounds,
    target_bound: float,
    failure_probability: float,
    accountant: str,
) -> Setup:
    """The checks of :func:`adassp`, in its order, and the plan it charges; no record is read.

    Parameters
    ----------
    problem : Problem or ProblemShape
        Only its shape is read.
    epsilon, delta, feature_bounds, target_bound, failure_probability, accountant
        As :func:`adassp` takes them (no defaults here: the fit function's are the ones).

    Returns
    -------
    Setup

    Raises
    ------
    TypeError, ValueError
        What :func:`adassp` raises before its charge, with its message.

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> setup = prepare(
    ...     ProblemShape(1000, 3, "squared", "l2", fit_intercept=True),
    ...     epsilon=1.0,
    ...     delta=1e-6,
    ...     feature_bounds=1.0,
    ...     target_bound=2.0,
    ...     failure_probability=0.05,
    ...     accountant="auto",
    ... )
    >>> setup.row_bound, [round(e.sensitivity, 4) for e in setup.fit_plan.template.events]
    (2.0, [4.0, 5.6569, 8.0])
    """
    check(problem)
    epsilon, delta = check_privacy_target(
        epsilon, delta, positive_delta="Gaussian noise gives no (epsilon, 0) guarantee"
    )
    bounds = _check_feature_bounds(feature_bounds, problem.n_features)
    target_bound = check_positive("target_bound", target_bound)
    rho = check_positive("failure_probability", failure_probability)
    if not rho < 1.0:
        raise ValueError(f"failure_probability must lie in (0, 1), got {failure_probability!r}")
    if not isinstance(accountant, str):
        raise ValueError(f"accountant must be a str, got {accountant!r}")
    squared_row_bound = float(np.sum(bounds * bounds)) + float(problem.fit_intercept)
    template = statistics_plan(squared_row_bound, target_bound)
    fit_plan = FitPlan(template, epsilon, delta, accountant)
    return Setup(fit_plan, bounds, target_bound, math.sqrt(squared_row_bound), rho)


# -- the statistics, their release, the ridge -------------------------------------------------


@dataclass(frozen=True)
class Statistics:
    """The sufficient statistics of least squares on the clipped records: not private.

    Attributes
    ----------
    gram : ndarray of shape (d, d)
        ``X~^T X~`` (with the constant column last when the problem has an intercept).
    moment : ndarray of shape (d,)
        ``X~^T y``.
    lambda_min : float
        The smallest eigenvalue of ``gram``.
    """

    gram: np.ndarray
    moment: np.ndarray
    lambda_min: float


def clipped_statistics(problem, bounds, target_bound: float) -> Statistics:
    """The statistics of ``problem``'s records, each clipped to the public bounds first.

    Parameters
    ----------
    problem : Problem
        In memory, squared loss.
    bounds : float or array_like of shape (n_features,)
        ``B_j``: column ``j`` is clipped to ``[-B_j, B_j]``.
    target_bound : float
        ``Y``: the targets are clipped to ``[-Y, Y]``.

    Returns
    -------
    Statistics

    Examples
    --------
    >>> from dpglm.problem import Problem
    >>> prob = Problem(np.array([[3.0, 0.0], [0.0, 1.0]]), np.array([5.0, -1.0]), "squared")
    >>> stats = clipped_statistics(prob, 1.0, 2.0)
    >>> stats.gram, stats.moment, stats.lambda_min
    (array([[1., 0.],
           [0., 1.]]), array([ 2., -1.]), 1.0)
    """
    problem = problem.in_memory("AdaSSP").clipped_to(bounds)
    X = problem.X
    y = np.clip(problem.y, -target_bound, target_bound)
    if sp.issparse(X):
        gram = np.asarray((X.T @ X).toarray(), dtype=float)
        sums = np.asarray(X.sum(axis=0), dtype=float).ravel()
    else:
        gram = np.asarray(X.T @ X, dtype=float)
        sums = np.asarray(X.sum(axis=0), dtype=float)
    moment = np.asarray(X.T @ y, dtype=float).ravel()
    if problem.fit_intercept:
        d = problem.n_coords
        full = np.empty((d, d))
        full[:-1, :-1] = gram
        full[:-1, -1] = sums
        full[-1, :-1] = sums
        full[-1, -1] = problem.n_samples
        gram = full
        moment = np.append(moment, y.sum())
    # exactly symmetric, so that eigvalsh reads what is released
    gram = 0.5 * (gram + gram.T)
    return Statistics(gram, moment, float(np.linalg.eigvalsh(gram)[0]))


@dataclass(frozen=True)
class Released:
    """AdaSSP's three releases, and the noise std of each.

    Attributes
    ----------
    lambda_min : float
        Noisy ``lambda_min(X^T X)``.
    gram : ndarray of shape (d, d)
        Noisy ``X^T X``, symmetric (noise drawn on the upper triangle, mirrored).
    moment : ndarray of shape (d,)
        Noisy ``X^T y``.
    stds : tuple of float
        The noise std of each release, in that order (0 without privacy).
    """

    lambda_min: float
    gram: np.ndarray
    moment: np.ndarray
    stds: tuple


def release_statistics(stats: Statistics, spent) -> Released:
    """Release ``stats`` through the three events of ``spent`` (its plan is AdaSSP's).

    Parameters
    ----------
    stats : Statistics
    spent : Spent
        The spent plan of :func:`statistics_plan`: each release draws from its
        source at its event's sensitivity.

    Returns
    -------
    Released

    Examples
    --------
    >>> from dpglm.privacy.spending import spend
    >>> stats = Statistics(np.eye(2), np.ones(2), 1.0)
    >>> spent = spend(statistics_plan(1.0, 1.0), epsilon=1.0, delta=1e-6, random_state=0)
    >>> released = release_statistics(stats, spent)
    >>> bool(np.array_equal(released.gram, released.gram.T)), len(released.stds)
    (True, 3)
    """
    eigenvalue, gram, moment = (spent.release(i) for i in range(3))
    noisy_lambda = eigenvalue.add(stats.lambda_min)
    d = stats.gram.shape[0]
    rows, cols = np.triu_indices(d)
    # one Gaussian mechanism on the upper triangle (the vector the sensitivity is of), mirrored
    upper = gram.add(stats.gram[rows, cols])
    noisy_gram = np.empty((d, d))
    noisy_gram[rows, cols] = upper
    noisy_gram[cols, rows] = upper
    noisy_moment = moment.add(stats.moment)
    stds = (float(eigenvalue.scale()), float(gram.scale()), float(moment.scale()))
    return Released(float(noisy_lambda), noisy_gram, np.asarray(noisy_moment), stds)


def choose_ridge(released: Released, failure_probability: float = 0.05) -> tuple:
    """``(lambda~, lambda)``: AdaSSP's lower bound on ``lambda_min`` and its ridge.

    ``lambda~ = max(noisy lambda_min - s_lambda sqrt(2 log(1 / rho)), 0)`` and
    ``lambda = max(0, s_X sqrt(d log(2 d**2 / rho)) - lambda~)``, with the noise
    stds ``s_lambda`` and ``s_X`` of the releases (see the module docstring).
    Post-processing of the releases only.

    Examples
    --------
    >>> released = Released(10.0, np.eye(4), np.zeros(4), (1.0, 2.0, 1.0))
    >>> [round(v, 3) for v in choose_ridge(released, 0.05)]
    [7.552, 2.616]
    >>> choose_ridge(Released(5.0, np.eye(4), np.zeros(4), (0.0, 0.0, 0.0)))
    (5.0, 0.0)
    """
    lambda_std, gram_std, _ = released.stds
    rho = failure_probability
    d = released.gram.shape[0]
    # the Gaussian tail: lambda~ <= lambda_min with probability >= 1 - rho
    shift = lambda_std * math.sqrt(2.0 * math.log(1.0 / rho))
    lower = max(released.lambda_min - shift, 0.0)
    # the paper's bound on the spectral norm of the noise matrix, less what X^T X provides
    noise_norm = gram_std * math.sqrt(d * math.log(2.0 * d * d / rho))
    return lower, max(0.0, noise_norm - lower)


def adassp(
    problem,
    *,
    epsilon: float,
    delta: float,
    feature_bounds=None,
    target_bound: float = 1.0,
    failure_probability: float = 0.05,
    budget=None,
    accountant: str = "auto",
    random_state=None,
    secure: bool = False,
) -> FitResult:
    """Fit ``problem`` with AdaSSP (Wang 2018, Algorithm 2).

    Parameters
    ----------
    problem : Problem
        Squared loss, no penalty or L2, in memory (see the module docstring).
    epsilon, delta : float
        Target guarantee (replace-one neighbours); ``epsilon = inf`` releases
        the statistics without noise (and the ridge is then 0).
    feature_bounds : float or array_like of shape (n_features,)
        Required: public bounds ``B_j > 0`` on ``|X_ij|``; every entry is
        clipped to ``[-B_j, B_j]`` (per record) before the statistics are
        computed. A ``ValueError`` says so when they are missing.
    target_bound : float, default=1.0
        Public bound ``Y`` on ``|y_i|``; every target is clipped to ``[-Y, Y]``.
    failure_probability : float, default=0.05
        ``rho`` in ``(0, 1)``: the adaptive ridge's lower bound on
        ``lambda_min`` and its bound on the noise matrix each hold with
        probability at least ``1 - rho``. It changes no noise, only the ridge.
    budget : PrivacyBudget, optional
        Charged with the calibrated plan before the data is read.
    accountant : str, default="auto"
        Accountant of the calibration and the report (``"auto"``: the
        tightest, exact Gaussian DP for this plan).
    random_state : None, int, Generator or NoiseSource
        All randomness (the noise) comes from it, mixed with the budget charge
        (see :func:`~dpglm.privacy.spending.spend`).
    secure : bool, default=False
        Draw from the operating system's CSPRNG (no seed allowed).

    Returns
    -------
    FitResult
        ``n_iter = 1`` (one solve), ``history`` holds the model once;
        ``info["ridge"]`` is the adaptive ``lambda``, ``info["lambda_min"]``
        the released lower bound ``lambda~``, ``info["noise_std"]`` the std of
        each release and ``info["noise_multiplier"]`` their common ``z``.

    Examples
    --------
    >>> import math
    >>> from dpglm.problem import Problem
    >>> X = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> prob = Problem(X, np.array([1.0, 2.0, 2.0]), "squared")
    >>> fit = adassp(prob, epsilon=math.inf, delta=0.0, feature_bounds=2.0, target_bound=2.0)
    >>> np.allclose(fit.coef, np.linalg.lstsq(X, [1.0, 2.0, 2.0], rcond=None)[0])
    True
    >>> fit.info["ridge"], fit.info["noise_std"]["X^T y"]
    (0.0, 0.0)
    """
    setup = prepare(
        problem,
        epsilon=epsilon,
        delta=delta,
        feature_bounds=feature_bounds,
        target_bound=target_bound,
        failure_probability=failure_probability,
        accountant=accountant,
    )
    Y, row_bound = setup.target_bound, setup.row_bound
    row, counted = "x_i", ""
    if problem.fit_intercept:
        row, counted = "(x_i, 1)", " (the intercept's constant column with bound 1)"
    assumptions = (
        *neighbouring_assumptions(NEIGHBOURING),
        CLIPPED_TO_BOUNDS,
        f"target bound Y = {Y:g} supplied by the user (public): every y_i is clipped to "
        "[-Y, Y] per record before the statistics are computed",
        f"rows {row} of L2 norm at most X_b = {row_bound:g} by the feature bounds{counted}: "
        "sensitivities X_b^2 (lambda_min of X^T X), sqrt(2) X_b^2 (upper triangle of X^T X), "
        "2 X_b Y (X^T y); one noise multiplier for the three releases",
        HYPERPARAMETER_ASSUMPTION,
    )
    spent = setup.fit_plan.spend(
        budget=budget,
        label=f"AdaSSP on {problem!r}",
        assumptions=assumptions,
        random_state=random_state,
        secure=secure,
    )
    stats = clipped_statistics(problem, setup.bounds, Y)
    released = release_statistics(stats, spent)
    lower, ridge = choose_ridge(released, setup.failure_probability)

    n, p = problem.n_samples, problem.n_features
    diagonal = np.zeros(problem.n_coords)
    # the objective's (1/n) scale puts its L2 penalty at n alpha on the statistics; neither
    # that nor the adaptive ridge touches the intercept, which dpglm never penalises
    diagonal[:p] = ridge + n * ridge_weights(problem)
    system = released.gram + np.diag(diagonal)
    # the noisy system may be singular (or near) when the ridge's bounds fail: the
    # least-norm solution of the released statistics, still post-processing
    theta = np.linalg.lstsq(system, released.moment, rcond=None)[0]

    history = History.empty(problem.n_coords)
    history.record(1.0, theta)
    names = ("lambda_min", "X^T X", "X^T y")
    return FitResult.from_theta(
        problem,
        theta,
        history=history,
        report=spent.report,
        n_iter=1,
        info={
            "solver": "adassp",
            "ridge": ridge,
            "lambda_min": lower,
            "row_bound": row_bound,
            "target_bound": Y,
            "failure_probability": setup.failure_probability,
            "sensitivities": {
                name: event.sensitivity
                for name, event in zip(names, setup.fit_plan.template.events, strict=True)
            },
            "noise_std": dict(zip(names, released.stds, strict=True)),
            "noise_multiplier": spent.release(0).multiplier,
        },
    )


SOLVER = Solver(
    name="adassp",
    summary=(
        "sufficient-statistics perturbation with an adaptive ridge, for least squares "
        "(AdaSSP, Wang 2018)"
    ),
    fit=adassp,
    prepare=prepare,
    check=check,
    estimator=EstimatorMapping(clip=None, step=False, bounds=True),
    order=90,
)
