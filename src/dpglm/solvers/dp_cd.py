"""DP-CD: private randomized proximal coordinate descent (Mangold et al. 2022).

Algorithm 1 of the DP-CD paper. Starting from ``w = 0``, ``T`` rounds of ``K``
coordinate updates; update ``k`` draws ``j`` uniformly and sets

    ``w_j <- prox_{gamma_j psi_j}(w_j - gamma_j (g_j + eta_j))``,

where ``g_j = (1/n) sum_i clip(l'(x_i . w, y_i) X_ij, C_j)`` is the partial
derivative with each per-sample term clipped to ``C_j = C sqrt(M_j / tr M)``,
``gamma_j = gamma / M_j`` and ``eta_j ~ N(0, (z * 2 C_j / n)**2)``. Each round
starts from the average of the previous round's ``K`` iterates (outer
averaging); ``averaging=False`` returns the last iterate instead.

Privacy: replacing one record moves ``g_j`` by at most ``2 C_j / n``, so each
update is a Gaussian mechanism with noise multiplier ``z``. The plan is
``T K`` such releases, composed without any amplification (the uniformly
drawn coordinate is not used in the analysis), and ``z`` is calibrated by the
accountant to the target ``(epsilon, delta)``. ``M_j`` comes from public
bounds, from the paper's private estimate (charged to the same fit), or from
the data with a :class:`~dpglm.exceptions.PrivacyLeakWarning`
(:mod:`dpglm.solvers.smoothness`).

``epsilon = inf`` runs the same code with no noise and no clipping.

Examples
--------
>>> import numpy as np
>>> from dpglm.problem import Problem
>>> from dpglm.solvers.dp_cd import dp_cd
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, (2000, 5))
>>> y = X @ np.array([1.0, -2.0, 0.0, 0.5, 0.0]) + 0.1 * rng.standard_normal(2000)
>>> prob = Problem(X, y, "squared", "l2")
>>> fit = dp_cd(
...     prob, epsilon=1.0, delta=1e-6, passes=10, clip=2.0, feature_bounds=1.0, random_state=0
... )
>>> round(fit.report.epsilon, 3) <= 1.0, fit.n_iter
(True, 50)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dpglm import _kernels
from dpglm.privacy.events import GaussianEvent, PrivacyPlan
from dpglm.privacy.report import collect_privacy_warnings, neighbouring_assumptions
from dpglm.privacy.targets import check_privacy_target
from dpglm.solvers.coordinate_steps import check_coordinate_problem, coordinate_arrays
from dpglm.solvers.hyperparameters import (
    HYPERPARAMETER_ASSUMPTION,
    check_finite_clip,
    check_positive,
    check_single_output,
    log_inverse_delta,
    slope_scale,
)
from dpglm.solvers.registry import DEFAULT_CLIP, EstimatorMapping, FitPlan, Solver
from dpglm.solvers.result import FitResult, History
from dpglm.solvers.smoothness import DATA_LEAK, SmoothnessSpec

NEIGHBOURING = "replace_one"


def schedule(passes: float, n_coords: int, round_length=None) -> tuple[int, int]:
    """``(T, K)``: rounds and updates per round for ``passes`` passes over the coordinates.

    ``K`` defaults to ``n_coords`` (one pass per round); the total ``T K`` is
    the nearest multiple of ``K`` to ``passes * n_coords``, at least one update.

    Examples
    --------
    >>> schedule(2.5, 10)
    (2, 10)
    >>> schedule(0.001, 8)
    (1, 1)
    """
    passes = check_positive("passes", passes)
    total = max(1, round(passes * n_coords))
    if round_length is None:
        K = n_coords
    else:
        if isinstance(round_length, bool) or not isinstance(round_length, int | np.integer):
            raise TypeError(f"round_length must be a positive int, got {round_length!r}")
        if round_length < 1:
            raise ValueError(f"round_length must be a positive int, got {round_length!r}")
        K = int(round_length)
    K = min(K, total)
    T = max(1, round(total / K))
    return T, K


def average_iterates(start: np.ndarray, order: np.ndarray, trace: np.ndarray) -> np.ndarray:
    """Mean of the ``K`` iterates of a round, from its start and the values each step set.

    Iterate ``k`` (``1 <= k <= K``) is the state after step ``k``; step ``k``
    set coordinate ``order[k - 1]`` to ``trace[k - 1]``.

    Examples
    --------
    >>> average_iterates(np.zeros(2), np.array([0, 1, 0]), np.array([3.0, 6.0, 0.0]))
    array([2., 4.])
    """
    K = order.shape[0]
    perm = np.argsort(order, kind="stable")
    coords = order[perm]
    steps = perm + 1  # 1-based step that set the value
    # the value set at a step holds until the next step on the same coordinate
    following = np.full(K, K + 1)
    same = coords[1:] == coords[:-1]
    following[:-1][same] = steps[1:][same]
    total = start * K
    first = np.ones(K, dtype=bool)
    first[1:] = ~same
    # before its first update a coordinate keeps its start value for (first step - 1) iterates
    np.add.at(total, coords[first], -start[coords[first]] * (K - steps[first] + 1))
    np.add.at(total, coords, trace[perm] * (following - steps))
    return total / K


def check(problem) -> None:
    """Raise DP-CD's refusal of ``problem``, if it has one.

    DP-CD needs every record in this process (each step reads the residual
    the previous one left), a smooth loss (coordinate-wise smoothness
    constants) and a separable penalty (coordinate-wise proximal steps); it
    fits an intercept.

    Parameters
    ----------
    problem : Problem, ShardedProblem or ProblemShape
        Only its shape is read.

    Raises
    ------
    TypeError
        The records are in row chunks (a ShardedProblem).
    ValueError
        The loss is not smooth or the penalty is not separable.

    Examples
    --------
    >>> from dpglm.penalties import L1Ball
    >>> from dpglm.solvers.registry import ProblemShape
    >>> check(ProblemShape(10, 2, "logistic", "l1", fit_intercept=True))
    >>> check(ProblemShape(10, 2, "squared", L1Ball(1.0)))
    Traceback (most recent call last):
    ...
    ValueError: DP-CD needs a separable penalty; L1Ball(radius=1.0) is not (private Frank-Wolfe handles the L1-ball constraint)
    """  # noqa: E501
    check_single_output(problem, "DP-CD")
    problem.in_memory("DP-CD")
    check_coordinate_problem(problem, "DP-CD")


@dataclass(frozen=True)
class Setup:
    """A DP-CD fit as :func:`prepare` validated it: its plan and the settings it runs.

    Attributes
    ----------
    fit_plan : FitPlan
        The template plan (the private smoothness estimate, if any, then ``T K``
        Gaussian coordinate updates), the target and the accountant.
    step : float
        ``gamma``.
    clip : float
        ``C`` as given (finite for a private fit).
    rounds, round_length : int
        ``T`` and ``K``.
    spec : SmoothnessSpec
        The source of ``M_j``, with the feature bounds.
    """

    fit_plan: FitPlan
    step: float
    clip: float
    rounds: int
    round_length: int
    spec: SmoothnessSpec


def prepare(
    problem,
    *,
    epsilon: float,
    delta: float,
    passes: float,
    step: float,
    clip: float,
    round_length: int | None,
    smoothness: str,
    feature_bounds,
    smoothness_share: float,
    accountant: str,
) -> Setup:
    """The checks of :func:`dp_cd`, in its order, and the plan it charges; no record is read.

    Parameters
    ----------
    problem : Problem or ProblemShape
        Only its shape is read.
    epsilon, delta, passes, step, clip, round_length, smoothness, feature_bounds, \
smoothness_share, accountant
        As in :func:`dp_cd` (no defaults here: the fit function's are the ones).

    Returns
    -------
    Setup
        Its ``fit_plan.leaks`` holds the leak warning of ``M_j`` read from the
        data (``smoothness="data"``, or ``"auto"`` without bounds).

    Raises
    ------
    TypeError, ValueError
        What :func:`dp_cd` raises before its charge, with its message.

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> setup = prepare(
    ...     ProblemShape(1000, 4, "squared", "l2", fit_intercept=True),
    ...     epsilon=1.0,
    ...     delta=1e-6,
    ...     passes=2.0,
    ...     step=1.0,
    ...     clip=2.0,
    ...     round_length=None,
    ...     smoothness="auto",
    ...     feature_bounds=1.0,
    ...     smoothness_share=0.1,
    ...     accountant="auto",
    ... )
    >>> (event,) = setup.fit_plan.template.events
    >>> setup.rounds, setup.round_length, event.count, event.sensitivity, setup.fit_plan.leaks
    (2, 5, 10, 0.004, ())
    """
    check(problem)
    epsilon, delta = check_privacy_target(epsilon, delta)
    step = check_positive("step", step)
    clip = check_positive("clip", clip, allow_inf=True)
    n, n_coords = problem.n_samples, problem.n_coords
    T, K = schedule(passes, n_coords, round_length)
    private = not math.isinf(epsilon)
    check_finite_clip(clip, private=private)
    spec = SmoothnessSpec.create(
        problem,
        smoothness,
        feature_bounds=feature_bounds,
        epsilon=epsilon,
        delta=delta,
        share=smoothness_share,
        neighbouring=NEIGHBOURING,
    )
    training = GaussianEvent(
        noise_multiplier=1.0,
        count=T * K,
        sensitivity=2.0 * clip / n if private else None,
        label="clipped partial derivative (Gaussian; sensitivity 2 C_j / n, shown for C)",
    )
    template = spec.plan + PrivacyPlan((training,), NEIGHBOURING)
    # the constants read from the data are the only leak, and the mode says whether they are
    leaks = (DATA_LEAK,) if spec.mode == "data" else ()
    fit_plan = FitPlan(template, epsilon, delta, accountant, leaks)
    return Setup(fit_plan, step, clip, T, K, spec)


def _margins(problem, theta):
    coef, intercept = problem.split(theta)
    # an extreme record's margin may overflow: the kernels clip its terms
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(problem.X @ coef, dtype=float).ravel() + intercept


def dp_cd(
    problem,
    *,
    epsilon: float,
    delta: float,
    passes: float = 5.0,
    step: float = 1.0,
    clip: float = 1.0,
    round_length: int | None = None,
    averaging: bool = True,
    smoothness: str = "auto",
    feature_bounds=None,
    smoothness_share: float = 0.1,
    budget=None,
    accountant: str = "auto",
    random_state=None,
    secure: bool = False,
) -> FitResult:
    """Fit ``problem`` with DP-CD.

    Parameters
    ----------
    problem : Problem
        Smooth datafit, separable penalty (none, L2, L1, elastic net, box).
    epsilon, delta : float
        Target guarantee (replace-one neighbours); ``epsilon = inf`` is the
        non-private algorithm (no noise, no clipping).
    passes : float, default=5.0
        Coordinate updates in units of ``n_coords`` (coefficients plus intercept).
    step : float, default=1.0
        ``gamma``: coordinate ``j`` uses step size ``gamma / M_j``.
    clip : float, default=1.0
        ``C``, split into ``C_j = C sqrt(M_j / tr M)``; finite unless ``epsilon = inf``.
    round_length : int, optional
        ``K``, updates between two averagings (default ``n_coords``).
    averaging : bool, default=True
        Start each round from (and return) the average of the previous
        round's iterates, as in the paper; ``False`` keeps the last iterate.
    smoothness : {"auto", "bounds", "private", "data"}, default="auto"
        Source of ``M_j``, see :mod:`dpglm.solvers.smoothness`.
    feature_bounds : float or array_like of shape (n_features,), optional
        Public bounds ``B_j`` on ``|X_ij|``; every entry is clipped to
        ``[-B_j, B_j]`` (per record) before training.
    smoothness_share : float, default=0.1
        Share of ``(epsilon, delta)`` for the private estimate of ``M_j``.
    budget : PrivacyBudget, optional
        Charged before the data is read for training.
    accountant : str, default="auto"
    random_state : None, int, Generator or NoiseSource
        All randomness (coordinates and noise) comes from it, mixed with the
        budget charge (see :func:`~dpglm.privacy.spending.spend`). A fixed
        seed reproduces the fit; keep it secret if the fit is published.
    secure : bool, default=False
        Draw from the operating system's CSPRNG (no seed allowed).

    Returns
    -------
    FitResult
        ``history`` holds the iterate returned after each round (up to 100
        evenly spaced rounds).
    """
    setup = prepare(
        problem,
        epsilon=epsilon,
        delta=delta,
        passes=passes,
        step=step,
        clip=clip,
        round_length=round_length,
        smoothness=smoothness,
        feature_bounds=feature_bounds,
        smoothness_share=smoothness_share,
        accountant=accountant,
    )
    step, clip, T, K, spec = setup.step, setup.clip, setup.rounds, setup.round_length, setup.spec
    private = setup.fit_plan.private
    # every step needs the residual fresh from the previous one: the records stay in memory
    # (prepare refused row chunks; this is the access's in-memory view of its records)
    problem = problem.in_memory("DP-CD")
    n, n_coords = problem.n_samples, problem.n_coords
    # with public bounds, every entry is clipped to them before any kernel reads it
    problem = spec.bounded(problem)
    # public bounds or leaked data: no draw, so nothing random happens before the charge
    with collect_privacy_warnings() as leaks:
        M = None if spec.mode == "private" else spec.estimate(problem, source=None)
    spent = setup.fit_plan.spend(
        budget=budget,
        label=f"DP-CD on {problem!r}",
        assumptions=(
            *neighbouring_assumptions(NEIGHBOURING),
            *spec.assumptions,
            "coordinates drawn uniformly at random; no amplification claimed from it",
            HYPERPARAMETER_ASSUMPTION,
        ),
        warnings=leaks,
        random_state=random_state,
        secure=secure,
    )
    source = spent.source  # keyed to the charge: no two fits of one budget share noise
    if M is None:
        M = spec.estimate(problem, source=source)
    arrays = coordinate_arrays(
        M,
        step=step,
        clip=clip if private else math.inf,
        penalty=problem.penalty,
        n_features=problem.n_features,
    )
    training = spent.release(-1)
    # each update releases a mean of partial derivatives clipped to C_j: sensitivity 2 C_j / n
    noise_std = training.scale(2.0, arrays.clip, over=n)

    theta = np.zeros(n_coords)
    z = np.zeros(n)
    history = History.empty(n_coords)
    trace = np.empty(K)
    marks = History.checkpoints(T)
    X = problem.X
    code, param = problem.datafit.code, problem.datafit.param
    for t in range(T):
        order = np.asarray(source.integers(n_coords, size=K), dtype=np.int64)
        # drawn in a non-private fit too (scaled by 0), which keeps its coordinates on the
        # stream of a private fit with the same seed
        noise = training.unit(K, always=True) * noise_std[order]
        start = theta.copy()
        if sp.issparse(X):
            _kernels.coordinate_steps_csc(
                X.data, X.indices, X.indptr, problem.y, z, theta, order, noise,
                *arrays.kernel_args, code, param, problem.n_features, trace,
            )  # fmt: skip
        else:
            _kernels.coordinate_steps_dense(
                X, problem.y, z, theta, order, noise,
                *arrays.kernel_args, code, param, problem.n_features, trace,
            )  # fmt: skip
        if averaging:
            theta = average_iterates(start, order, trace)
            if t + 1 < T:
                z = _margins(problem, theta)
        if t + 1 in marks:
            history.record((t + 1) * K / n_coords, theta)
    return FitResult.from_theta(
        problem,
        theta,
        history=history,
        report=spent.report,
        n_iter=T * K,
        info={
            "solver": "dp-cd",
            "rounds": T,
            "round_length": K,
            "averaging": averaging,
            "smoothness": M,
            "smoothness_source": spec.mode,
            "step_sizes": arrays.step,
            "clip_thresholds": arrays.clip,
            "noise_std": noise_std,
        },
    )


def estimator_clip(shape, batch_size=None) -> float:
    """The estimators' DP-CD clip when ``clip=None``: 1 times the loss's :func:`slope_scale`.

    Each coordinate's clip ``C_j`` (a share of ``C``, see the module
    docstring) bounds the records' terms ``l'(z_i) x_ij``, whose size at the
    start is the loss's slope at the null margin: 1/2 for the logistic loss,
    2 for the squared hinge. Scaling the clip with it clips the same share
    of the terms whatever the loss: the logistic and squared losses keep the
    estimators' clip of 1, the squared hinge gets 4. At 1, the squared
    hinge's terms were cut to a quarter and DP-CD stayed at the majority
    class on adult (0.764 at epsilon 1 and 4). Measured (2 seeds, clips 0.5
    to 8, epsilon 1 and 4): the squared hinge at 4 scores 0.834 and 0.838 on
    adult, 0.930 and 0.927 on phishing (0.916 at clip 1), 0.750 and 0.743 on
    electricity (0.740 and 0.656), 0.522 and 0.595 on madelon (0.491 and
    0.480), within 0.8 point of the best clip everywhere; the logistic
    loss's best clip is 1 to 2 (within 1.2 points at 1). The squared loss
    keeps 1: communities (100 columns) loses 12 points of R^2 at 2.
    (``batch_size``: None, DP-CD has no batches.)

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> estimator_clip(ProblemShape(100, 8, "squared_hinge", "l2", fit_intercept=True))
    4.0
    >>> estimator_clip(ProblemShape(100, 8, "logistic", "l2"))
    1.0
    """
    return DEFAULT_CLIP * slope_scale(shape.datafit)


#: :func:`estimator_passes`'s constant, measured, and its range
PASSES_FACTOR = 0.07
MIN_ESTIMATOR_PASSES, MAX_ESTIMATOR_PASSES = 10.0, 320.0


def estimator_passes(shape, epsilon: float, delta: float) -> float:
    """The estimators' DP-CD passes when ``passes=None``: ``0.07 n epsilon / sqrt(8 log(1/delta))``
    within ``[10, 320]``.

    The convex bound of Mangold et al. (2022) after ``K`` coordinate updates,
    ``3 p R_M**2 / (2 K) + 12 K log(1/delta) ||L||**2 / (n**2 epsilon**2)``
    (``||L||`` in the norm of ``M**-1``), balances the optimisation error,
    falling like ``1 / K``, against the noise of ``K`` releases, whose
    variance grows like ``K`` (the shape of the accountant's calibration
    too). It is least at ``n epsilon / sqrt(8 p log(1/delta))`` passes times
    ``R_M / ||L||``, with ``||L||**2 = p C**2 / tr M`` at this solver's
    coordinate-wise clips: a factor unknown before the fit, which on real
    tables grows with ``p`` (the optimum spreads over correlated columns),
    and the measured best passes do not fall with ``p`` (madelon, 1,500 x
    500, wants 20 to 40 at epsilon 1 to 4; communities, 1,496 x 100, 10 to
    20). The rule keeps ``n epsilon / sqrt(8 log(1/delta))`` and measures the
    rest as one constant.

    Measured (``benchmarks/bench_defaults.py``'s tables and splits, private
    preprocessing; 0.5 to 5,120 passes, epsilon 0.5 / 1 / 2 / 4, 10 seeds):
    within 3.2 points of each row's best number of passes. Against the
    former fixed 20 passes, on 10 other seeds, it gains on 23 of 28 rows
    (mean +1.4 points): adult 0.834 / 0.839 / 0.844 against 0.815 / 0.825 /
    0.829 at epsilon 0.5 / 1 / 4, electricity +0.4 to +1.1, the raw
    California table R^2 +1.2 to +4.0, communities R^2 0.14 against -0.07 at
    0.5 (where 20 passes diverge); it loses 2.5 and 2.3 points of R^2 on
    communities at epsilon 1 and 4 and 2.2 points of accuracy on madelon at 1
    (within its seeds' spread of 3). The cap holds the work to 16 times the
    former (0.9 s on adult); California still gains up to 3 points of R^2
    from 320 to 2,560 passes at epsilon 4.

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> estimator_passes(ProblemShape(1496, 100, "squared", "l2"), 0.5, 1496**-2.0)
    10.0
    >>> round(estimator_passes(ProblemShape(8291, 68, "logistic", "l2"), 1.0, 8291**-2.0), 1)
    48.3
    """
    if not math.isfinite(epsilon):
        return MAX_ESTIMATOR_PASSES  # no noise: the most work
    n = shape.n_samples
    # no delta (which the fit refuses, with its own message): 1 / n^2 stands for it
    passes = PASSES_FACTOR * n * epsilon / math.sqrt(8.0 * log_inverse_delta(delta, n))
    return float(min(MAX_ESTIMATOR_PASSES, max(MIN_ESTIMATOR_PASSES, passes)))


SOLVER = Solver(
    name="dp-cd",
    summary="private randomized proximal coordinate descent (Mangold et al. 2022)",
    fit=dp_cd,
    prepare=prepare,
    check=check,
    estimator=EstimatorMapping(
        smoothness=True, default_clip=estimator_clip, default_work=estimator_passes
    ),
    order=10,
)
