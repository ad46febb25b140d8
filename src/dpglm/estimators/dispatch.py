"""How an estimator's fit reaches a solver: through the solver registry.

The estimators offer the registered solvers that have an estimator mapping
(:func:`~dpglm.solvers.registry.estimator_solvers`) and ``"auto"``
(:func:`~dpglm.solvers.registry.choose_solver`, explained in
:mod:`dpglm.estimators`). :class:`SolverDispatch`, a mixin of every
estimator, turns its hyperparameters into the arguments of that solver
(:meth:`Solver.arguments <dpglm.solvers.registry.Solver.arguments>`), fits
with it, or gives the plan a fit would charge without reading any data
(:meth:`SolverDispatch.fit_plan`); with ``epsilon=inf`` it runs the
non-private reference solver instead.

``SOLVERS`` (the values ``solver=`` takes) and ``DEFAULT_PASSES`` (the work
of a fit whose ``passes`` is None) are read from the registry on first use.
"""

from __future__ import annotations

import dataclasses

from dpglm.privacy.events import NonPrivateEvent, PrivacyPlan
from dpglm.privacy.report import PrivacyReport
from dpglm.solvers.registry import (
    Settings,
    choose_solver,
    default_batch_size,
    default_passes,
    estimator_solvers,
    get_solver,
)
from dpglm.solvers.smoothness import CLIPPED_TO_BOUNDS

__all__ = [
    "SolverDispatch",
    "choose_solver",
    "default_batch_size",
    "default_delta",
]


def __getattr__(name):
    # read from the registry on first use: finding the solvers imports them (and numba)
    if name == "SOLVERS":
        return ("auto", *estimator_solvers())
    if name == "DEFAULT_PASSES":
        return default_passes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def default_delta(n_samples: int) -> float:
    """The default ``delta``: ``1 / n**2``.

    Examples
    --------
    >>> default_delta(1000)
    1e-06
    """
    return 1.0 / float(n_samples) ** 2


class SolverDispatch:
    """Mixin of the estimators: the solver that fits them, found in the registry.

    It reads the estimator's hyperparameters (``solver``, ``clip``,
    ``passes``, ``step``, ``batch_size``, ``feature_bounds``, ``smoothness``,
    ``solver_options``, ``budget``, ``random_state``);
    :meth:`~dpglm.estimators.base.DPLinearModel.fit` validates them first.
    """

    def _settings(self) -> Settings:
        return Settings(
            clip=self.clip,
            passes=self.passes,
            step=self.step,
            batch_size=self.batch_size,
            feature_bounds=self.feature_bounds,
            smoothness=self.smoothness,
        )

    def _solver_for(self, shape) -> str:
        """The registered solver's name: ``solver``, or the ``"auto"`` rule's choice."""
        return choose_solver(shape) if self.solver == "auto" else self.solver

    def _fit_private(self, problem, solver, epsilon, delta, bounds=None):
        """Fit ``problem`` with ``solver``; ``bounds``: the validated ``feature_bounds``, if any.

        Public feature bounds are a fact about every record, which clipping
        makes true: DP-CD and DP-GCD clip to the bounds they are given; for
        the other solvers the features are clipped here, before the fit, so
        that the bounds hold for every record whatever the solver (an extreme
        record included) and the report says so. Without bounds the problem
        is fitted as it is.
        """
        spec = get_solver(solver)
        arguments = spec.arguments(self._settings(), problem, self.solver_options)
        clipped = bounds is not None and not spec.estimator.smoothness
        if clipped:
            problem = problem.clipped_to(bounds)
        result = spec.fit(
            problem,
            epsilon=epsilon,
            delta=delta,
            budget=self.budget,
            random_state=self.random_state,
            **arguments,
        )
        if clipped:
            assumptions = (*result.report.assumptions, CLIPPED_TO_BOUNDS)
            report = dataclasses.replace(result.report, assumptions=assumptions)
            result = dataclasses.replace(result, report=report)
        return result

    def _private_fit_plan(self, shape, epsilon, delta):
        """The :class:`~dpglm.solvers.registry.FitPlan` of a private fit of this shape."""
        spec = get_solver(self._solver_for(shape))
        arguments = spec.arguments(self._settings(), shape, self.solver_options)
        return spec.fit_plan(shape, epsilon=epsilon, delta=delta, **arguments)

    def _fit_non_private(self, problem, delta):
        from dpglm.solvers.reference import solve_reference

        plan = self._non_private_plan()
        if self.budget is not None:
            # a non-private release spends everything: only an infinite budget affords it
            self.budget.charge(plan, label=f"{type(self).__name__} with epsilon=inf")
        solution = solve_reference(problem)
        report = PrivacyReport.from_plan(
            plan,
            delta,
            assumptions=(f"epsilon = inf: no privacy, the exact optimum ({solution.method})",),
        )
        return solution.theta, 0, report

    def _non_private_plan(self) -> PrivacyPlan:
        relation = "replace_one"
        if self.budget is not None and self.budget.charges:
            relation = self.budget.charges[0].plan.neighbouring
        return PrivacyPlan(
            (NonPrivateEvent(label="non-private optimum (reference solver)"),), relation
        )
