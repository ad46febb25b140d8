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

import math

from dpglm.estimators.multiclass import repeated
from dpglm.exceptions import CalibrationError
from dpglm.privacy.events import NonPrivateEvent, PrivacyPlan
from dpglm.privacy.report import PrivacyReport
from dpglm.privacy.targets import default_delta
from dpglm.solvers.registry import (
    Settings,
    choose_solver,
    default_batch_size,
    default_passes,
    estimator_solvers,
    get_solver,
)

#: the bound on every entry the solvers read: the records are mapped into [-1, 1]
SCALED_BOUND = 1.0

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


def target_after(prior, plan_for, epsilon, delta, accountant, steps=40) -> float:
    """The largest ``epsilon'`` whose plan, after the events ``prior``, costs at most ``epsilon``.

    By bisection on ``epsilon'`` in ``(0, epsilon]``: ``plan_for(epsilon')``
    is the solver's :class:`~dpglm.solvers.registry.FitPlan` for that target,
    and the composition of ``prior`` with its template is accounted at
    ``delta``. The result's composition never exceeds ``epsilon``.

    Examples
    --------
    >>> from dpglm.privacy.events import GaussianEvent, ZCDPEvent
    >>> from dpglm.solvers.registry import FitPlan
    >>> def plan_for(e):  # rho = e**2 / 40: a fixed cost that grows with the target
    ...     return FitPlan(PrivacyPlan((ZCDPEvent(rho=e**2 / 40),)), e, 1e-6)
    >>> prior = (GaussianEvent(noise_multiplier=20.0, fixed=True),)
    >>> 0.9 < target_after(prior, plan_for, 1.0, 1e-6, "auto") < 1.0
    True
    """
    from dpglm.privacy.accounting import account

    def cost(target):
        template = plan_for(target).template
        return account(PrivacyPlan((*prior, *template.events), template.neighbouring), delta,
                       accountant).epsilon  # fmt: skip

    low, high = 0.0, float(epsilon)
    for _ in range(steps):
        middle = (low + high) / 2.0
        if cost(middle) <= epsilon:
            low = middle
        else:
            high = middle
    if low == 0.0:
        raise CalibrationError(
            f"the preprocessing's release alone costs more than epsilon={epsilon}: nothing is "
            "left for the solver"
        )
    return low


#: DP-SGD's binary logistic step on the estimators' scale (records in [-1, 1], clip 1) is
#: noise-matched (dpglm.solvers.dp_sgd.noise_matched_step): the noise a step moves the
#: p + 1 coefficients by held at BINARY_STEP_NOISE, within [LOGISTIC_STEP, LOGISTIC_MAX_STEP].
#: The best fixed step of a sweep (0.125 to 8, 3 seeds, benchmarks/bench_defaults.py's
#: tables) grows as the noise falls on phishing (0.25, 1, 2, 4 at epsilon 0.5, 1, 2, 4) and
#: electricity, and this law grows with it (phishing's steps 0.5, 0.53, 1.0, 1.9 at 0.1;
#: the sweep's scores are flat within 0.3 point around each best). Against the fixed 0.5
#: it gains 0.4 and 0.8 points of accuracy on phishing at epsilon 2 and 4, up to 0.1 point
#: on adult and electricity, and loses nowhere (5 seeds)
BINARY_STEP_NOISE = 0.1
#: the smallest binary logistic step: the best fixed one where the noise is large (a
#: clipped step may be five times DP-SGD's generic 0.1 on the Lipschitz, quarter-smooth
#: logistic loss: 1.1 points of accuracy on adult at epsilon 0.5 to 2, 0.3 on phishing)
LOGISTIC_STEP = 0.5
#: the largest: electricity, whose records have the smallest norms, loses 0.5 point at 8
LOGISTIC_MAX_STEP = 4.0
#: DP-SGD's default step for the squared loss is at most its generic 0.1 and shrinks like
#: SQUARED_STEP / sqrt(p) beyond 25 features: a record's curvature x x^T on the [-1, 1]
#: scale grows with its squared norm, up to p, and the step that keeps the noisy iterates
#: stable with it. Measured (5 seeds, benchmarks/bench_defaults.py): communities (100
#: features) R^2 0.499 -> 0.557 at epsilon 1 and -0.50 -> 0.19 at 0.5 with step 0.05;
#: the California tables (8 features) keep 0.1, which 0.05 would cost 0.7-1.4 points
SQUARED_STEP = 0.5


def _loss_name(problem) -> str:
    # a Problem holds its Datafit, a ProblemShape may hold its name
    return getattr(problem.datafit, "name", problem.datafit)


def _step_given(step, options) -> bool:
    return step is not None or "step" in (options or {})


def matched_step_applies(solver, problem, step, options) -> bool:
    """Whether a fit takes the noise-matched step: DP-SGD on the logistic loss (binary or
    multinomial), no step given."""
    if solver != "dp-sgd" or _step_given(step, options):
        return False
    return problem.n_outputs > 1 or _loss_name(problem) == "logistic"


def default_step(solver, problem, step, options):
    """The estimators' default step when it is not DP-SGD's own nor noise-matched, with no
    step given: ``min(0.1, SQUARED_STEP / sqrt(p))`` for the squared loss; else None.

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> from dpglm.penalties import L2
    >>> default_step("dp-sgd", ProblemShape(100, 3, "squared", L2(1e-4)), None, None)
    0.1
    >>> default_step("dp-sgd", ProblemShape(100, 100, "squared", L2(1e-4)), None, None)
    0.05
    >>> default_step("dp-sgd", ProblemShape(100, 3, "hinge", L2(1e-4)), None, None) is None
    True
    """
    if solver != "dp-sgd" or _step_given(step, options):
        return None
    if _loss_name(problem) == "squared":
        return min(0.1, SQUARED_STEP / math.sqrt(problem.n_features))
    return None


def matched_step(spent, arguments, problem) -> float:
    """DP-SGD's noise-matched step for the calibrated plan ``spent`` (its first release).

    Multinomial: the noise held at :data:`~dpglm.solvers.dp_sgd.STEP_NOISE`;
    binary: at :data:`BINARY_STEP_NOISE`, within ``[LOGISTIC_STEP, LOGISTIC_MAX_STEP]``.
    """
    from dpglm.solvers.dp_sgd import noise_matched_step

    # the noise on a step's clipped sum, as the release will draw it (sensitivity 2 C)
    noise_std = spent.release(0).scale() if spent.private else 0.0
    if problem.n_outputs > 1:
        return noise_matched_step(noise_std, arguments["batch_size"], problem.n_coords)
    return noise_matched_step(
        noise_std,
        arguments["batch_size"],
        problem.n_coords,
        step_noise=BINARY_STEP_NOISE,
        smallest=LOGISTIC_STEP,
        largest=LOGISTIC_MAX_STEP,
    )


class SolverDispatch:
    """Mixin of the estimators: the solver that fits them, found in the registry.

    It reads the estimator's hyperparameters (``solver``, ``clip``,
    ``passes``, ``step``, ``batch_size``, ``feature_bounds``, ``smoothness``,
    ``solver_options``, ``budget``, ``random_state``);
    :meth:`~dpglm.estimators.base.DPLinearModel.fit` validates them first.
    """

    def _settings(self) -> Settings:
        # the solver trains on records clipped to their ranges and mapped into [-1, 1]
        # (dpglm.estimators.preprocessing): its feature bounds are 1
        return Settings(
            clip=self.clip,
            passes=self.passes,
            step=self.step,
            batch_size=self.batch_size,
            feature_bounds=SCALED_BOUND,
            smoothness=self.smoothness,
        )

    def _solver_for(self, shape) -> str:
        """The registered solver's name: ``solver``, or the ``"auto"`` rule's choice.

        A step or a number of passes set (as a search over them sets them)
        keeps ``"auto"`` from DP-Direction, which has neither.
        """
        if self.solver != "auto":
            return self.solver
        options = self.solver_options or {}
        iterative = _step_given(self.step, options) or self.passes is not None
        return choose_solver(shape, iterative=iterative)

    def _fit_spent(self, problem, solver, spent, plan, scaling):
        """Fit the scaled ``problem`` with ``solver``, under the plan the estimator spent.

        ``spent`` is the solver's part of the fit's plan (after the
        preprocessing's release), ``plan`` the solver's :class:`FitPlan`
        (:meth:`_private_fit_plan`): the solver checks that its own plan is
        this one and draws from ``spent``. ``scaling``: the released (or given)
        ranges, whose non-negative columns a solver that takes ``nonnegative``
        (DP-Direction) is told of.
        """
        spec = get_solver(solver)
        arguments = spec.arguments(
            self._settings(), problem, self.solver_options, epsilon=plan.epsilon, delta=plan.delta
        )
        if "nonnegative" in spec.hyperparameters and "nonnegative" not in arguments:
            arguments["nonnegative"] = scaling.nonnegative()
        if matched_step_applies(solver, problem, self.step, self.solver_options):
            arguments["step"] = matched_step(spent, arguments, problem)
        elif (step := default_step(solver, problem, self.step, self.solver_options)) is not None:
            arguments["step"] = step
        # the solver's own target: the fit's, or less when its cost is fixed (target_after)
        return spec.fit_spent(
            problem, spent, plan, epsilon=plan.epsilon, delta=plan.delta, **arguments
        )

    def _private_fit_plan(self, shape, epsilon, delta, prior=(), copies=1):
        """The solver's :class:`~dpglm.solvers.registry.FitPlan` for this shape, after ``prior``.

        ``prior``: the events of the release that precedes the solver in the
        fit's plan (fixed noise). A solver whose plan has noise to calibrate
        is planned for the fit's target, and the calibration of the whole plan
        makes room for ``prior``. A solver that spends a fixed cost instead
        (DP-AGD's zCDP budget) is planned for the largest target that, composed
        with ``prior``, stays within the fit's (:func:`target_after`).
        ``copies``: the number of such fits the plan holds (one-vs-rest: one
        per class), all after ``prior``.
        """
        spec = get_solver(self._solver_for(shape))

        def single(target):
            # the plan's own target sets the work that depends on it (DP-CD's and DP-SCD's
            # passes, DP-GCD's steps), as in _fit_spent, which reads it back from the plan
            arguments = spec.arguments(
                self._settings(), shape, self.solver_options, epsilon=target, delta=delta
            )
            return spec.fit_plan(shape, epsilon=target, delta=delta, **arguments)

        def plan_for(target):
            plan = single(target)
            return plan if copies == 1 else repeated(plan, [str(c) for c in range(copies)])

        plan = single(epsilon)
        if (not prior and copies == 1) or any(event.scalable for event in plan.template.events):
            return plan
        return single(target_after(prior, plan_for, epsilon, delta, plan.accountant))

    def _fit_non_private(self, problem, delta):
        (theta,), report = self._solve_non_private([problem], delta)
        return theta, 0, report

    def _solve_non_private(self, problems, delta):
        """The exact optima of ``problems`` and the report: one non-private release, charged."""
        from dpglm.solvers.reference import solve_reference

        plan = self._non_private_plan()
        if self.budget is not None:
            # a non-private release spends everything: only an infinite budget affords it
            self.budget.charge(plan, label=f"{type(self).__name__} with epsilon=inf")
        solutions = [solve_reference(problem) for problem in problems]
        report = PrivacyReport.from_plan(
            plan,
            delta,
            assumptions=(f"epsilon = inf: no privacy, the exact optimum ({solutions[0].method})",),
        )
        return [solution.theta for solution in solutions], report

    def _non_private_plan(self) -> PrivacyPlan:
        relation = "replace_one"
        if self.budget is not None and self.budget.charges:
            relation = self.budget.charges[0].plan.neighbouring
        return PrivacyPlan(
            (NonPrivateEvent(label="non-private optimum (reference solver)"),), relation
        )
