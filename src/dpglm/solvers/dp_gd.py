"""DP-GD: private full-batch gradient descent with a fixed budget split, the baseline of DP-AGD.

Starting from ``w = 0``, each of ``T = n_iter`` steps releases the sum of the
per-sample gradients ``g_i = l'(z_i, y_i) (x_i, 1)`` (the 1 only with an
intercept), each clipped to L2 norm ``C``, with Gaussian noise, and moves with
a constant step size ``gamma``:

    ``w <- w - gamma ((sum_i clip_C(g_i) + N(0, sigma**2 I)) / n + lambda w)``

(the intercept is not penalised). This is the "pre-specified number of
iterations, fixed allocation of the privacy budget" method that Lee and Kifer
(2018) improve on with DP-AGD (:mod:`dpglm.solvers.dp_agd`): every release
gets the same share of the budget, whatever the iterate.

Privacy (replace-one neighbours, ``n`` public). Replacing one record moves the
clipped sum by at most ``2 C`` in L2, so each release is a Gaussian mechanism
of sensitivity ``2 C`` and noise ``sigma = z 2 C``; the ``T`` releases are one
plan of ``T`` Gaussian events with the same multiplier ``z``, the smallest for
which the accountant (``"auto"``: exact Gaussian DP) says they meet
``(epsilon, delta)``. Every iterate is a post-processing of the releases. The
per-sample clipping is a per-record operation; the clipped sum is computed
without an ``n x p`` array by :func:`~dpglm.access.sums.clipped_gradient_sum`,
the same code as DP-AGD's gradient release, asked of the problem
(:meth:`~dpglm.problem.Problem.gradient_sums`): in memory, or summed over the
row chunks of a :class:`~dpglm.distributed.data_parallel.ShardedProblem`.

Problems: any datafit (the hinge loss uses its subgradient; a constant step
converges to the optimum only for a smooth loss, with ``gamma <= 1 / L``), with
or without intercept, and no penalty or L2 (including an elastic net with
``l1_ratio = 0``). Penalties with an L1 part, bounds or no separable form are
refused: DP-CD, DP-GCD and DP-SGD take proximal steps for them.

``epsilon = inf`` runs the same code without noise or clipping: plain gradient
descent with a constant step.

Examples
--------
>>> import numpy as np
>>> from dpglm.penalties import L2
>>> from dpglm.problem import Problem
>>> from dpglm.solvers.dp_gd import dp_gd
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, (2000, 5))
>>> y = np.where(X @ np.array([2.0, -1.0, 0.0, 1.0, 0.5]) > 0, 1.0, -1.0)
>>> fit = dp_gd(
...     Problem(X, y, "logistic", L2(0.01)),
...     epsilon=1.0,
...     delta=1e-6,
...     n_iter=50,
...     step=2.0,
...     random_state=0,
... )
>>> fit.n_iter, fit.report.accountant, bool(fit.report.epsilon <= 1.0)
(50, 'gdp', True)
>>> float(np.mean(np.sign(X @ fit.coef) == y)) > 0.9
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dpglm.privacy.events import GaussianEvent, PrivacyPlan
from dpglm.privacy.report import neighbouring_assumptions
from dpglm.privacy.targets import check_privacy_target
from dpglm.solvers.dp_agd import gradient_step_l2
from dpglm.solvers.hyperparameters import (
    HYPERPARAMETER_ASSUMPTION,
    check_finite_clip,
    check_in_memory_outputs,
    check_positive,
    check_positive_int,
)
from dpglm.solvers.registry import FitPlan, Solver
from dpglm.solvers.result import FitResult, History

NEIGHBOURING = "replace_one"


def gradient_plan(n_iter: int, clip: float) -> PrivacyPlan:
    """Template plan of ``n_iter`` gradient releases (unit noise multiplier, sensitivity ``2 C``).

    Parameters
    ----------
    n_iter : int
        ``T``, the number of releases.
    clip : float
        ``C``; ``inf`` (a non-private fit) leaves the sensitivity unset.

    Returns
    -------
    PrivacyPlan

    Examples
    --------
    >>> (event,) = gradient_plan(100, 0.5).events
    >>> event.kind, event.count, event.sensitivity, event.noise_multiplier
    ('gaussian', 100, 1.0, 1.0)
    """
    event = GaussianEvent(
        noise_multiplier=1.0,
        count=n_iter,
        sensitivity=None if math.isinf(clip) else 2.0 * clip,
        label="noisy sum of L2-clipped per-sample gradients (full batch)",
    )
    return PrivacyPlan((event,), NEIGHBOURING)


def check(problem) -> None:
    """Refuse the penalties a plain gradient step cannot take, with the fit's message.

    Reads the problem's shape only (penalty, ``n_features``): a
    :class:`~dpglm.problem.Problem`, a
    :class:`~dpglm.distributed.data_parallel.ShardedProblem` (DP-GD runs on row
    chunks) or a :class:`~dpglm.solvers.registry.ProblemShape`. Every datafit is
    taken (the hinge loss by its subgradient).

    Raises
    ------
    ValueError
        A penalty with an L1 part, bounds or no separable form.

    Examples
    --------
    >>> from dpglm.penalties import L1, L2
    >>> from dpglm.solvers.registry import ProblemShape
    >>> check(ProblemShape(10, 2, "hinge", L2(0.1))) is None
    True
    >>> check(ProblemShape(10, 2, "squared", L1(0.1)))
    Traceback (most recent call last):
    ...
    ValueError: DP-GD takes no penalty or an L2 penalty; L1(alpha=0.1) has an L1 part, bounds or is not separable (use DP-CD, DP-GCD or DP-SGD, whose proximal steps handle it)
    """  # noqa: E501
    check_in_memory_outputs(problem, "DP-GD")
    if gradient_step_l2(problem) is None:
        raise ValueError(
            f"DP-GD takes no penalty or an L2 penalty; {problem.penalty!r} has an L1 part, "
            "bounds or is not separable (use DP-CD, DP-GCD or DP-SGD, whose proximal steps "
            "handle it)"
        )


@dataclass(frozen=True)
class Setup:
    """A DP-GD fit's validated settings and the plan it charges, from the problem's shape.

    Attributes
    ----------
    fit_plan : FitPlan
        ``T`` Gaussian releases of one multiplier (:func:`gradient_plan`).
    n_iter : int
        ``T``.
    step : float
    clip : float
        ``C``; inf without privacy (no clipping).
    l2 : ndarray
        ``lambda_j`` of every coefficient.
    """

    fit_plan: FitPlan
    n_iter: int
    step: float
    clip: float
    l2: np.ndarray = field(compare=False, repr=False)


def prepare(
    problem,
    *,
    epsilon: float,
    delta: float,
    n_iter: int,
    step: float,
    clip: float,
    accountant: str,
) -> Setup:
    """The checks of :func:`dp_gd`, in its order, and the plan it charges; no record is read.

    Parameters
    ----------
    problem : Problem, ShardedProblem or ProblemShape
        Only its shape is read.
    epsilon, delta : float
    n_iter, step, clip
    accountant : str
        As :func:`dp_gd` takes them; no defaults here, the fit's are the defaults
        (:meth:`~dpglm.solvers.registry.Solver.plan` passes them).

    Returns
    -------
    Setup

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> shape = ProblemShape(2000, 5, "logistic", "l2")
    >>> setup = prepare(
    ...     shape, epsilon=1.0, delta=1e-6, n_iter=50, step=1.0, clip=0.5, accountant="auto"
    ... )
    >>> (event,) = setup.fit_plan.calibrated().events
    >>> event.kind, event.count, event.sensitivity, event.noise_multiplier > 1
    ('gaussian', 50, 1.0, True)
    """
    epsilon, delta = check_privacy_target(
        epsilon, delta, positive_delta="Gaussian noise gives no (epsilon, 0) guarantee"
    )
    T = check_positive_int("n_iter", n_iter)
    step = check_positive("step", step)
    clip = check_positive("clip", clip, allow_inf=True)
    private = not math.isinf(epsilon)
    check_finite_clip(clip, private=private)
    if not isinstance(accountant, str):
        raise ValueError(f"accountant must be a str, got {accountant!r}")
    clip = clip if private else math.inf
    check(problem)
    return Setup(
        fit_plan=FitPlan(gradient_plan(T, clip), epsilon, delta, accountant),
        n_iter=T,
        step=step,
        clip=clip,
        l2=gradient_step_l2(problem),
    )


def dp_gd(
    problem,
    *,
    epsilon: float,
    delta: float,
    n_iter: int = 50,
    step: float = 1.0,
    clip: float = 1.0,
    budget=None,
    accountant: str = "auto",
    random_state=None,
    secure: bool = False,
) -> FitResult:
    """Fit ``problem`` with DP-GD (fixed budget split).

    Parameters
    ----------
    problem : Problem
        Any datafit; no penalty or L2 (see the module docstring).
    epsilon, delta : float
        Target guarantee (replace-one neighbours); ``epsilon = inf`` is
        non-private gradient descent (no noise, no clipping).
    n_iter : int, default=50
        ``T``, the number of steps, each one noisy release of the full
        clipped gradient sum with ``1 / T`` of the budget (in the
        accountant's sense: all ``T`` share one noise multiplier).
    step : float, default=1.0
        Constant step size ``gamma`` on the mean gradient. For an
        ``L``-smooth objective, ``gamma <= 1 / L`` converges without noise;
        for the logistic loss with L2 strength ``lambda``,
        ``L <= max_i ||(x_i, 1)||**2 / 4 + lambda`` (``1.25 + lambda`` on
        rows of unit norm with an intercept).
    clip : float, default=1.0
        ``C``, the L2 bound of every per-sample gradient; finite unless
        ``epsilon = inf``.
    budget : PrivacyBudget, optional
        Charged with the calibrated plan before the data is read for training.
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
        ``n_iter = T``; ``history`` holds the iterate at up to 100 evenly
        spaced steps (``passes`` counts steps: each reads the data once);
        ``info["noise_multiplier"]`` is ``z`` and ``info["noise_std"]`` the
        std ``z 2 C`` of the noise on each gradient sum.

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.problem import Problem
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5]])
    >>> fit = dp_gd(
    ...     Problem(X, np.array([1.0, -1.0, -1.0]), "logistic"),
    ...     epsilon=2.0,
    ...     delta=1e-5,
    ...     n_iter=10,
    ...     clip=0.5,
    ...     random_state=0,
    ... )
    >>> fit.info["noise_std"] == fit.info["noise_multiplier"] * 2 * 0.5
    True
    """
    setup = prepare(
        problem,
        epsilon=epsilon,
        delta=delta,
        n_iter=n_iter,
        step=step,
        clip=clip,
        accountant=accountant,
    )
    private = setup.fit_plan.private
    T, step, clip, l2 = setup.n_iter, setup.step, setup.clip, setup.l2
    assumptions = (*neighbouring_assumptions(NEIGHBOURING),)
    if private:
        assumptions += (
            f"per-sample gradients clipped to L2 norm C = {clip:g} (sensitivity 2 C of the "
            f"gradient sum); the same noise on each of the T = {T} releases (fixed budget split)",
        )
    spent = setup.fit_plan.spend(
        budget=budget,
        label=f"DP-GD on {problem!r}",
        assumptions=(*assumptions, HYPERPARAMETER_ASSUMPTION),
        random_state=random_state,
        secure=secure,
    )
    # noise keyed to the charge (no two fits of one budget share it), at the event's
    # sensitivity 2 C: a clipped gradient replaced in the sum
    release = spent.release(0)

    n, p = problem.n_samples, l2.shape[0]  # p: the penalised coordinates, every class's
    sums = problem.gradient_sums(clip)  # the row norms are read once, when clipping needs them
    theta = np.zeros(problem.n_coords)
    history = History.empty(problem.n_coords)
    marks = History.checkpoints(T)
    for t in range(1, T + 1):
        total, _ = sums.gradient_sum(theta)
        if private:
            total = release.add(total)
        gradient = total / n
        gradient[:p] += l2 * theta[:p]
        theta = theta - step * gradient
        if t in marks:
            history.record(t, theta)
    return FitResult.from_theta(
        problem,
        theta,
        history=history,
        report=spent.report,
        n_iter=T,
        info={
            "solver": "dp-gd",
            "step_size": step,
            "clip": clip,
            "noise_multiplier": release.multiplier,
            "noise_std": release.scale(),
        },
    )


SOLVER = Solver(
    name="dp-gd",
    summary=(
        "private full-batch gradient descent with a fixed budget split, the baseline of "
        "DP-AGD (Lee and Kifer 2018)"
    ),
    fit=dp_gd,
    prepare=prepare,
    check=check,
    estimator=None,
    order=60,
)
