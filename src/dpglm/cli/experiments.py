"""The experiments of ``dpglm demo`` and ``dpglm compare``: solvers over a grid of epsilons.

:func:`run_grid` fits every solver at every epsilon several times with
:func:`run_solver` and measures each fit (held-out score, relative
suboptimality, time, epsilon spent); :class:`SolverSettings` holds a solver's
hyperparameters and :func:`split_rows` the train / test split.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from dpglm.solvers.registry import Settings, get_solver

#: the private solvers ``compare`` and ``demo`` run
SOLVERS = ("dp-cd", "dp-gcd", "dp-sgd")
#: the solvers ``fit --solver`` offers besides "auto": the estimators' own
#: (:func:`~dpglm.solvers.registry.estimator_solvers`, which a test keeps this equal to;
#: spelled out so that building the parser imports no solver)
FIT_SOLVERS = ("dp-cd", "dp-gcd", "dp-sgd", "dp-scd", "dp-agd", "adassp", "dp-direction")


@dataclass(frozen=True)
class SolverSettings:
    """Hyperparameters of one solver in an experiment (``None``: the solver's default).

    ``passes`` is passes over the data for DP-CD and DP-SGD and greedy steps
    for DP-GCD (default: DP-SGD's work in the registry,
    :func:`~dpglm.solvers.registry.default_passes`, and DP-CD's and DP-GCD's
    from ``n`` and the run's epsilon, the mappings' ``default_work``);
    ``step`` is the step-size factor of the coordinate solvers and the step
    size of DP-SGD.
    """

    passes: float | None = None
    clip: float = 1.0
    step: float | None = None
    batch_size: int = 256
    feature_bounds: object = None

    def describe(self, solver: str) -> str:
        """Short description, e.g. ``"20 passes, clip 1"``.

        Examples
        --------
        >>> SolverSettings(passes=10, step=0.5).describe("dp-gcd")
        '10 greedy steps, step 0.5, clip 1'
        """
        mapping = get_solver(solver).estimator
        passes = mapping.passes if self.passes is None else self.passes
        if passes is None:  # DP-CD's, DP-SCD's and DP-GCD's work follow n and the target
            parts = [f"{mapping.unit} from n and epsilon"]
        else:
            parts = [f"{passes:g} {mapping.unit}"]
        if mapping.batch_size:
            parts.append(f"batch {self.batch_size}")
        if self.step is not None:
            parts.append(f"step {self.step:g}")
        parts.append(f"clip {self.clip:g}")
        return ", ".join(parts)

    def solver_settings(self) -> Settings:
        """The registry's :class:`~dpglm.solvers.registry.Settings` of these hyperparameters.

        Unlike the estimators, the commands take the smoothness constants from
        the bounds when given (no share of the budget for their estimate).
        """
        return Settings(
            clip=self.clip,
            passes=self.passes,
            step=self.step,
            batch_size=self.batch_size,
            feature_bounds=self.feature_bounds,
            smoothness="data" if self.feature_bounds is None else "bounds",
        )


def run_solver(problem, solver, *, epsilon, delta, settings, random_state=None):
    """Fit ``problem`` with one registered private solver, as the estimators do.

    Unlike the estimators, ``epsilon=inf`` runs the same solver without noise
    or clipping (the estimators return the exact optimum instead).

    Returns
    -------
    dpglm.solvers.result.FitResult

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.problem import Problem
    >>> X = np.random.default_rng(0).uniform(-1, 1, (500, 2))
    >>> prob = Problem(X, X[:, 0], "squared", fit_intercept=True)
    >>> settings = SolverSettings(feature_bounds=1.0)
    >>> fit = run_solver(prob, "dp-cd", epsilon=1.0, delta=1e-6, settings=settings, random_state=0)
    >>> round(fit.report.epsilon, 2)
    1.0
    """
    spec = get_solver(solver)
    arguments = spec.arguments(settings.solver_settings(), problem, epsilon=epsilon, delta=delta)
    return spec.fit(problem, epsilon=epsilon, delta=delta, random_state=random_state, **arguments)


def held_out_score(task, coef, intercept, X, y) -> float:
    """Accuracy (classification, -1/+1 labels) or mean squared error (regression).

    Examples
    --------
    >>> import numpy as np
    >>> held_out_score("classification", np.array([1.0]), 0.0, np.array([[1.0], [-2.0]]), [1, 1])
    0.5
    """
    margins = np.asarray(X @ coef, dtype=float).ravel() + intercept
    y = np.asarray(y, dtype=float)
    if task == "classification":
        return float(np.mean(np.where(margins > 0, 1.0, -1.0) == y))
    return float(np.mean((margins - y) ** 2))


def metric_name(task: str) -> str:
    """``"test accuracy"`` or ``"test MSE"``.

    Examples
    --------
    >>> metric_name("classification"), metric_name("regression")
    ('test accuracy', 'test MSE')
    """
    return "test accuracy" if task == "classification" else "test MSE"


def run_grid(
    problem,
    X_test,
    y_test,
    task,
    *,
    solvers,
    epsilons,
    delta,
    settings,
    repeats,
    seed,
    progress=None,
):
    """Fit every solver at every epsilon ``repeats`` times; measure each fit.

    The test score and the relative suboptimality read the data without
    privacy: they measure the solvers, they are not private releases.

    Parameters
    ----------
    problem : dpglm.problem.Problem
        The training problem.
    X_test, y_test : held-out features and -1/+1 labels or targets.
    task : {"classification", "regression"}
    solvers : sequence of str
    epsilons : sequence of float
    delta : float
    settings : dict of str to SolverSettings
    repeats : int
    seed : int
        Run ``r`` draws its noise from seed ``1000 * seed + r``.
    progress : Progress, optional

    Returns
    -------
    trials : list of dict
        One row per fit: ``solver``, ``epsilon``, ``repeat``, ``metric_name``,
        ``metric``, ``relative_suboptimality``, ``seconds``, ``epsilon_spent``,
        ``delta``, ``guarantee``.
    reference : dict
        ``objective`` and ``metric`` of the non-private optimum.

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.problem import Problem
    >>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2))
    >>> y = np.where(X[:, 0] > 0, 1.0, -1.0)
    >>> prob = Problem(X, y, "logistic", "l2", fit_intercept=True)
    >>> trials, ref = run_grid(
    ...     prob,
    ...     X,
    ...     y,
    ...     "classification",
    ...     solvers=["dp-cd"],
    ...     epsilons=[1.0, float("inf")],
    ...     delta=1e-5,
    ...     settings={"dp-cd": SolverSettings(feature_bounds=1.0)},
    ...     repeats=2,
    ...     seed=0,
    ... )
    >>> len(trials), ref["metric"] > 0.9
    (4, True)
    """
    from dpglm.solvers.reference import solve_reference

    reference = solve_reference(problem)
    coef, intercept = problem.split(reference.theta)
    optimum = {
        "objective": reference.objective,
        "metric": held_out_score(task, coef, intercept, X_test, y_test),
    }
    if progress is not None:
        progress.advance()
    floor = max(abs(reference.objective), 1e-300)
    trials = []
    for solver in solvers:
        for epsilon in epsilons:
            for r in range(repeats):
                start = time.perf_counter()
                fit = run_solver(
                    problem,
                    solver,
                    epsilon=epsilon,
                    delta=delta,
                    settings=settings.get(solver, SolverSettings()),
                    random_state=1000 * seed + r,
                )
                seconds = time.perf_counter() - start
                gap = problem.objective(fit.theta) - reference.objective
                trials.append(
                    {
                        "solver": solver,
                        "epsilon": float(epsilon),
                        "repeat": r,
                        "metric_name": metric_name(task),
                        "metric": held_out_score(task, fit.coef, fit.intercept, X_test, y_test),
                        "relative_suboptimality": max(gap, 0.0) / floor,
                        "seconds": seconds,
                        "epsilon_spent": fit.report.epsilon,
                        "delta": delta,
                        "guarantee": fit.report.guarantee,
                    }
                )
                if progress is not None:
                    progress.advance()
    return trials, optimum


def split_rows(n: int, test_size: float, seed: int):
    """A random train / test split of ``range(n)`` (public randomness, not the data).

    Examples
    --------
    >>> train, test = split_rows(8, 0.25, seed=0)
    >>> len(train), len(test), sorted([*train, *test]) == list(range(8))
    (6, 2, True)
    """
    order = np.random.default_rng(seed).permutation(n)
    n_test = min(n - 1, max(1, round(test_size * n)))
    return np.sort(order[n_test:]), np.sort(order[:n_test])
