"""The solver registry: every private solver declared once, and found by name.

Each solver module declares its solvers in a module-level ``SOLVER`` (a
:class:`Solver`, or a tuple of them for a module with several): the name
(``"dp-cd"``), a one-line summary, the fit function, the problems it accepts
(:meth:`Solver.accepts`), its hyperparameters and their defaults (those of the
fit function, read from its signature), the plan a fit will charge
(:meth:`Solver.plan`, from public facts only) and how the estimators' common
settings become its keyword arguments (:class:`EstimatorMapping`). The
registry finds them on first use: every module of :mod:`dpglm.solvers` that
defines ``SOLVER`` is registered, so adding a solver is adding one module.

The fit function and :meth:`Solver.plan` build the fit's template plan with
the same function of the solver module (its ``prepare``), from the problem's
public shape (:class:`ProblemShape`) and the hyperparameters: the plan a
hyperparameter search accounts before it reads the data is, by construction,
the plan the fit charges.

The estimators (``solver=``), :class:`~dpglm.tuning.PrivateSearchCV`, the
command line (``dpglm demo``, ``dpglm compare``) and the benchmarks find their
solvers here. The estimators offer the solvers with an estimator mapping
(DP-CD, DP-GCD, DP-SGD, DP-SCD, DP-AGD, AdaSSP, DP-Direction, and ``"auto"``,
:func:`choose_solver`);
DP-GD, DP-FW and DP-BCFW are registered for the command line, the benchmarks
and direct use. The vertical Frank-Wolfe of :mod:`dpglm.distributed` takes
parties rather than a problem and is not registered.

Examples
--------
>>> import numpy as np
>>> from dpglm.penalties import L2
>>> from dpglm.solvers.registry import ProblemShape, get_solver
>>> shape = ProblemShape(1000, 5, "logistic", L2(0.01), fit_intercept=True)
>>> solver = get_solver("dp-cd")
>>> solver.summary
'private randomized proximal coordinate descent (Mangold et al. 2022)'
>>> solver.accepts(shape) is None, solver.defaults["passes"]
(True, 5.0)
>>> plan = solver.plan(
...     shape, epsilon=1.0, delta=1e-6, passes=2, feature_bounds=1.0, smoothness="private"
... )
>>> [(e.kind, e.count) for e in plan.events], plan.neighbouring
([('laplace', 5), ('gaussian', 12)], 'replace_one')
>>> get_solver("dp-scd").accepts(shape) is None
True
>>> get_solver("dp-scd").accepts(ProblemShape(1000, 5, "logistic", "l1")).split(";")[0]
'DP-SCD needs an L2 penalty (its dual is defined through lambda/2 ||w||^2)'
"""

from __future__ import annotations

import contextvars
import functools
import importlib
import inspect
import math
import pkgutil
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from dpglm.access import in_memory_refusal
from dpglm.datafits import Datafit, get_datafit
from dpglm.exceptions import PlanError
from dpglm.penalties import NoPenalty, Penalty, get_penalty
from dpglm.privacy.events import PrivacyPlan
from dpglm.privacy.spending import Spent, calibrate_cached, spend

__all__ = [
    "DEFAULT_CLIP",
    "EstimatorMapping",
    "FitPlan",
    "ProblemShape",
    "Settings",
    "Solver",
    "choose_solver",
    "default_batch_size",
    "default_passes",
    "estimator_solvers",
    "get_solver",
    "registered_solvers",
    "smoothness_source",
]

#: arguments of a fit function that are not hyperparameters: where the fit runs and is
#: charged, not what it releases (they never change its plan)
RUNTIME = ("budget", "random_state", "secure")


# -- the problem, as the solvers may see it before reading the data ------------------------


@dataclass(frozen=True)
class ProblemShape:
    """The public facts of a problem: what a solver may read before its budget is charged.

    Sizes, datafit, penalty, intercept, whether the features are sparse, and
    whether the records are in this process or in row chunks. A solver's
    checks and its plan read nothing else of a problem, so they run on a
    shape as on the :class:`~dpglm.problem.Problem` itself.

    Parameters
    ----------
    n_samples, n_features : int
        ``n_samples`` is public (replace-one neighbours).
    datafit : Datafit or str
    penalty : Penalty or str or None, default=None
    fit_intercept : bool, default=False
    sparse : bool, default=False
        Whether the features are a sparse matrix.
    chunked : bool, default=False
        Whether the records live in row chunks
        (a :class:`~dpglm.distributed.data_parallel.ShardedProblem`), which
        the solvers that need every record in this process refuse.

    Examples
    --------
    >>> shape = ProblemShape(100, 3, "squared", "l2", fit_intercept=True)
    >>> shape.n_coords, shape.penalty, shape.in_memory("DP-CD") is shape
    (4, L2(alpha=0.0), True)
    >>> ProblemShape(100, 3, "squared", chunked=True).in_memory("DP-CD")
    Traceback (most recent call last):
    ...
    TypeError: DP-CD needs an in-memory Problem: each of its steps needs state fresh from the previous one, a round trip to the row chunks per step; use a data-parallel solver (dp_gcd, dp_agd, dp_gd, dp_fw, dp_bcfw, dp_sgd) on a ShardedProblem (see dpglm.distributed.data_parallel)
    """  # noqa: E501

    n_samples: int
    n_features: int
    datafit: Datafit
    penalty: Penalty = None
    fit_intercept: bool = False
    sparse: bool = False
    chunked: bool = False

    def __post_init__(self):
        for name in ("n_samples", "n_features"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an int >= 0, got {value!r}")
        # the names and instances a Problem takes, normalised as it normalises them
        object.__setattr__(self, "datafit", get_datafit(self.datafit))
        penalty = NoPenalty() if self.penalty is None else get_penalty(self.penalty)
        object.__setattr__(self, "penalty", penalty)
        for name in ("fit_intercept", "sparse", "chunked"):
            object.__setattr__(self, name, bool(getattr(self, name)))

    @classmethod
    def of(cls, problem) -> ProblemShape:
        """The shape of ``problem`` (a Problem, a ShardedProblem or a shape), without its data.

        Examples
        --------
        >>> import numpy as np
        >>> from dpglm.problem import Problem
        >>> ProblemShape.of(Problem(np.eye(3), np.zeros(3), "squared"))
        ProblemShape(3x3 dense, datafit=Squared(), penalty=NoPenalty(), fit_intercept=False)
        """
        if isinstance(problem, cls):
            return problem
        # the problem's own answer to the question the solvers ask (no record is read)
        try:
            problem.in_memory("ProblemShape")
        except TypeError:
            chunked = True
        else:
            chunked = False
        return cls(
            int(problem.n_samples),
            int(problem.n_features),
            problem.datafit,
            problem.penalty,
            fit_intercept=problem.fit_intercept,
            sparse=problem.sparse,
            chunked=chunked,
        )

    @property
    def n_outputs(self) -> int:
        """Margins per record: 1, or the classes of a multinomial datafit."""
        return self.datafit.n_outputs

    @property
    def n_coords(self) -> int:
        """Coefficients plus the intercept, when fitted (per class of a multinomial datafit)."""
        return self.n_outputs * (self.n_features + int(self.fit_intercept))

    def in_memory(self, solver: str) -> ProblemShape:
        """Itself when every record is in this process; else the refusal of a ShardedProblem."""
        if self.chunked:
            raise TypeError(in_memory_refusal(solver))
        return self

    def __repr__(self) -> str:
        kind = "sparse" if self.sparse else "dense"
        where = " in row chunks" if self.chunked else ""
        return (
            f"ProblemShape({self.n_samples}x{self.n_features} {kind}{where}, "
            f"datafit={self.datafit!r}, penalty={self.penalty!r}, "
            f"fit_intercept={self.fit_intercept})"
        )


# -- what a fit will charge ----------------------------------------------------------------


@dataclass(frozen=True)
class FitPlan:
    """A fit's template plan and how it is calibrated: what :func:`spend` will charge.

    Built by a solver module's ``prepare`` from the problem's shape and the
    hyperparameters, before any record is read; the fit function spends it
    (:meth:`spend`) and :meth:`Solver.plan` calibrates it (:meth:`calibrated`),
    the same calibration.

    Attributes
    ----------
    template : PrivacyPlan
        The solver's events, with template noise multipliers.
    epsilon, delta : float
        The fit's target, validated.
    accountant : str
        The accountant of the calibration and of the report.
    leaks : tuple of str
        The :class:`~dpglm.exceptions.PrivacyLeakWarning` messages the fit
        issues before its charge (e.g. smoothness constants read from the data),
        known from the settings alone.

    Examples
    --------
    >>> from dpglm.privacy.events import GaussianEvent
    >>> template = PrivacyPlan([GaussianEvent(noise_multiplier=1.0, count=100)])
    >>> plan = FitPlan(template, 1.0, 1e-6, "auto").calibrated()
    >>> round(plan.events[0].noise_multiplier, 1)
    42.2
    """

    template: PrivacyPlan
    epsilon: float
    delta: float
    accountant: str = "auto"
    leaks: tuple = ()

    @property
    def private(self) -> bool:
        """Whether the fit adds noise and clips (``epsilon < inf``)."""
        return not math.isinf(self.epsilon)

    def calibrated(self) -> PrivacyPlan:
        """The calibrated plan, as :func:`spend` calibrates it (the plan the fit charges)."""
        return calibrate_cached(self.template, self.epsilon, self.delta, self.accountant).plan

    def spend(self, **kwargs) -> Spent:
        """:func:`~dpglm.privacy.spending.spend` of this plan (``budget``, ``label``, ...).

        Inside :meth:`Solver.fit_spent`, the plan was spent before the fit
        began (with the release that precedes it): the spent plan's events
        are handed over instead, after a check that they are this plan's.
        """
        prespent = _PRESPENT.get()
        if prespent is not None:
            return prespent.take(self, kwargs.get("assumptions", ()), kwargs.get("warnings", ()))
        return spend(
            self.template,
            epsilon=self.epsilon,
            delta=self.delta,
            accountant=self.accountant,
            **kwargs,
        )


@dataclass
class _Prespent:
    """A solver's plan spent before its fit, handed once to the fit's :meth:`FitPlan.spend`."""

    plan: FitPlan
    spent: Spent
    taken: bool = False

    def take(self, plan: FitPlan, assumptions, warnings) -> Spent:
        if self.taken:
            raise PlanError("a fit spent its plan twice; a spent plan is handed over once")
        expected = self.plan
        if (plan.epsilon, plan.delta, plan.accountant) != (
            expected.epsilon,
            expected.delta,
            expected.accountant,
        ):
            raise PlanError(
                f"the fit's target ({plan.epsilon}, {plan.delta}, {plan.accountant}) is not "
                f"the one its plan was spent for ({expected.epsilon}, {expected.delta}, "
                f"{expected.accountant})"
            )
        self.taken = True
        # the fit describes its releases with what it read (e.g. sensitivities from its
        # constants): the same accounting, checked, with the fit's labels in the report
        spent = self.spent.described_as(plan.template)
        return spent.after(0, assumptions=tuple(assumptions), warnings=tuple(warnings))


#: the plan spent before the running fit, if any (see Solver.fit_spent)
_PRESPENT: contextvars.ContextVar = contextvars.ContextVar("dpglm_prespent", default=None)


# -- the estimators' settings --------------------------------------------------------------


#: the estimators' clip when ``clip=None`` and the solver has no default of its own. With
#: DP-SGD (what "auto" takes on every dense table of benchmarks/bench_defaults.py) on the
#: estimators' [-1, 1] scale, clips 0.25 to 4 at epsilon 1 and 4 (3 seeds, 7 tables, 14
#: rows): 1 is the best in 7 rows, within 0.2 point of the best in 6 (phishing and the raw
#: California table prefer 2, electricity 0.25 to 0.5), 0.7 point below 2 on communities at
#: epsilon 4; 0.25 and 4 lose up to 8 and 25 points (madelon, communities)
DEFAULT_CLIP = 1.0


def default_batch_size(n_samples: int) -> int:
    """The estimators' batch size when ``batch_size=None``: ``min(256, max(1, n // 20))``.

    Why a constant, not a law of ``epsilon``: with Poisson sampling at rate
    ``q = b / n`` and ``T`` steps, the noise multiplier is about
    ``q sqrt(T) / epsilon`` (up to the accountant's factor, for small ``q``),
    so a step's noise on the mean gradient has std about
    ``C sqrt(T) / (n epsilon)`` and the noise a run of ``T`` steps of size
    ``eta`` leaves, ``eta sqrt(T)`` times that, is ``eta T C / (n epsilon)``:
    it depends on ``eta T`` alone. At a fixed distance travelled, the batch and
    the number of passes change the noise only through the accountant's
    small-``q`` regime. Measured with DP-SGD (3 seeds, epsilon 1 and 4, the
    seven dense tables of ``benchmarks/bench_defaults.py``, batches 32 to
    512): flat within 0.5 point for the logistic loss (whose step is
    noise-matched); the squared loss, whose step is fixed, gains from smaller
    batches where ``n`` is large (California: 1.6 and 1.9 points of R^2 at
    32 against 256) and loses where it is small (communities: 12 points at
    32 against its default 74 at epsilon 1), so the default stays.

    Examples
    --------
    >>> default_batch_size(569), default_batch_size(100_000)
    (28, 256)
    """
    return min(256, max(1, n_samples // 20))


def smoothness_source(smoothness: str, feature_bounds) -> str:
    """The estimators' ``smoothness``: ``"auto"`` is the private estimate where it is
    informative, else the bounds (``"private-or-bounds"``); without bounds, data.

    Public bounds alone give ``M_j = curvature * B_j**2``, an upper bound that is
    loose for sparse or skewed columns (steps too small by the column's
    density); the estimate of the DP-CD paper costs a share of the budget and
    recovers the actual constants, where its noise is small enough to
    (:data:`~dpglm.solvers.smoothness.INFORMATIVE_NOISE`). (The solvers' own
    ``"auto"`` uses the bounds alone.)

    Examples
    --------
    >>> smoothness_source("auto", 1.0), smoothness_source("auto", None)
    ('private-or-bounds', 'data')
    >>> smoothness_source("bounds", 1.0)
    'bounds'
    """
    if smoothness != "auto":
        return smoothness
    return "data" if feature_bounds is None else "private-or-bounds"


@dataclass(frozen=True)
class Settings:
    """The estimators' common solver settings, their hyperparameters of the same names.

    ``None`` leaves the choice to the solver's :class:`EstimatorMapping`:
    ``clip`` its ``default_clip`` (:data:`DEFAULT_CLIP` unless it has one),
    ``passes`` its default work, ``batch_size`` :func:`default_batch_size`,
    ``step`` the solver's default.

    Examples
    --------
    >>> settings = Settings(clip=2.0, passes=3)
    >>> settings.passes, settings.step, settings.smoothness
    (3, None, 'auto')
    """

    clip: float | None = None
    passes: float | None = None
    step: float | None = None
    batch_size: int | None = None
    feature_bounds: object = None
    smoothness: str = "auto"


@dataclass(frozen=True)
class EstimatorMapping:
    """How the estimators' :class:`Settings` become a solver's keyword arguments.

    Parameters
    ----------
    passes : float, optional
        The work when ``passes=None`` (:data:`~dpglm.estimators.DEFAULT_PASSES`);
        None: the solver decides (DP-AGD runs until its budget is spent).
    work : {"passes", "n_iter", "max_iter"}, default="passes"
        The keyword that takes the work: ``passes`` as it is, or a number of
        steps ``max(1, round(passes))``.
    unit : str, default="passes"
        What the work counts, for descriptions (``"greedy steps"``).
    clip : str or None, default="clip"
        The keyword that takes ``clip``; None: the solver clips nothing the
        estimators set (e.g. AdaSSP, whose records are bounded by the scaling).
    step : bool, default=True
        Whether the solver takes ``step``; if not, a given ``step`` is refused.
    batch_size : bool, default=False
        Whether it takes ``batch_size`` (capped at ``n_samples``).
    smoothness : bool, default=False
        Whether it takes ``smoothness`` (the estimators' rule,
        :func:`smoothness_source`) and ``feature_bounds``.
    bounds : bool, default=False
        Whether it takes ``feature_bounds`` alone.
    default_clip : callable, optional
        ``default_clip(shape, batch_size)``: the clip when ``clip=None``, from
        the shape and the batch the fit will take (None for a solver without
        batches) alone; None: :data:`DEFAULT_CLIP`.
    default_work : callable, optional
        ``default_work(shape, epsilon, delta)``: the work when ``passes=None``,
        from the shape and the fit's target (DP-CD's and DP-SCD's passes,
        DP-GCD's greedy steps); in place of ``passes``.

    Examples
    --------
    >>> EstimatorMapping(passes=20, work="n_iter", unit="greedy steps", smoothness=True).unit
    'greedy steps'
    """

    passes: float | None = None
    work: str = "passes"
    unit: str = "passes"
    clip: str | None = "clip"
    step: bool = True
    batch_size: bool = False
    smoothness: bool = False
    bounds: bool = False
    default_clip: Callable | None = None
    default_work: Callable | None = None

    def __post_init__(self):
        if self.work not in ("passes", "n_iter", "max_iter"):
            raise ValueError(f"work must be 'passes', 'n_iter' or 'max_iter', got {self.work!r}")
        if self.default_work is not None and self.passes is not None:
            raise ValueError("give passes or default_work, not both")


# -- a solver ------------------------------------------------------------------------------


def _keyword_parameters(function) -> dict:
    return {
        name: parameter
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    }


@dataclass(frozen=True)
class Solver:
    """One private solver, as the registry knows it.

    Parameters
    ----------
    name : str
        E.g. ``"dp-cd"``; what ``solver=`` and the command line take.
    summary : str
        One line.
    fit : callable
        The solver function, ``fit(problem, *, epsilon, delta, <hyperparameters>,
        budget=None, accountant=..., random_state=None, secure=False) -> FitResult``.
    prepare : callable
        ``prepare(problem, *, epsilon, delta, <hyperparameters>)``: the fit's
        checks, in its order, and its setup, whose ``fit_plan`` is a
        :class:`FitPlan`; it reads the problem's shape only, and the fit
        function calls it before anything else.
    check : callable
        ``check(problem)``: raises the fit's refusal of a problem (loss,
        penalty, intercept, in-memory records) with the fit's message.
    estimator : EstimatorMapping, optional
        How the estimators' settings map to its keyword arguments; None: the
        estimators do not offer it.
    order : int, default=100
        Position in :func:`registered_solvers` (then by name).
    row_normalised : bool, default=False
        The model is fitted on, and applies to, rows normalised to unit L2
        norm (DP-SCD): predictions normalise rows too.

    Examples
    --------
    >>> solver = get_solver("dp-sgd")
    >>> solver.hyperparameters[:3], solver.estimator.passes
    (('passes', 'step', 'clip'), 10.0)
    """

    name: str
    summary: str
    fit: Callable = field(repr=False)
    prepare: Callable = field(repr=False)
    check: Callable = field(repr=False)
    estimator: EstimatorMapping | None = None
    order: int = 100
    row_normalised: bool = False

    # -- hyperparameters ------------------------------------------------------------------

    @functools.cached_property
    def hyperparameters(self) -> tuple:
        """Names of the fit function's hyperparameters (keyword-only, ``accountant`` included)."""
        return tuple(
            name
            for name in _keyword_parameters(self.fit)
            if name not in ("epsilon", "delta", *RUNTIME)
        )

    @functools.cached_property
    def defaults(self) -> Mapping:
        """The hyperparameters with a default, and their defaults: the fit function's own."""
        parameters = _keyword_parameters(self.fit)
        return MappingProxyType(
            {
                name: parameters[name].default
                for name in self.hyperparameters
                if parameters[name].default is not inspect.Parameter.empty
            }
        )

    # -- problems -------------------------------------------------------------------------

    def accepts(self, shape) -> str | None:
        """``None`` if the solver fits problems of this shape, else the fit's refusal.

        Parameters
        ----------
        shape : ProblemShape or Problem

        Returns
        -------
        str or None
            The message the fit raises on such a problem.

        Examples
        --------
        >>> from dpglm.penalties import L1
        >>> print(get_solver("dp-gd").accepts(ProblemShape(10, 2, "squared", L1(1.0))))
        DP-GD takes no penalty or an L2 penalty; L1(alpha=1.0) has an L1 part, bounds or is not separable (use DP-CD, DP-GCD or DP-SGD, whose proximal steps handle it)
        """  # noqa: E501
        try:
            self.check(ProblemShape.of(shape))
        except (TypeError, ValueError) as err:
            return str(err)
        return None

    # -- plans ----------------------------------------------------------------------------

    def _setup(self, shape, epsilon, delta, params):
        fit = self.fit.__name__
        for name in params:
            if name in RUNTIME:
                raise TypeError(
                    f"{name!r} is an argument of {fit}() that does not change its plan; "
                    "give the hyperparameters only"
                )
            if name not in self.hyperparameters:
                raise TypeError(f"{fit}() got an unexpected keyword argument {name!r}")
        values = {**self.defaults, **params}
        missing = [name for name in self.hyperparameters if name not in values]
        if missing:
            raise TypeError(f"{fit}() missing 1 required keyword-only argument: {missing[0]!r}")
        # the hyperparameters that change nothing before the charge (e.g. DP-CD's
        # averaging) are not the plan's
        wanted = _keyword_parameters(self.prepare)
        return self.prepare(
            ProblemShape.of(shape),
            epsilon=epsilon,
            delta=delta,
            **{name: value for name, value in values.items() if name in wanted},
        )

    def fit_plan(self, shape, *, epsilon: float, delta: float, **params) -> FitPlan:
        """The :class:`FitPlan` of a fit of a problem of this shape (nothing is read or drawn).

        Raises what the fit raises before its charge (a refused problem, a bad
        hyperparameter), with the fit's message.
        """
        return self._setup(shape, epsilon, delta, params).fit_plan

    def fit_spent(self, problem, spent: Spent, plan: FitPlan, **kwargs):
        """Fit ``problem`` with a plan already spent, as part of a larger one.

        An estimator that releases something before the solver runs (its
        private preprocessing) spends one plan for both: the release's events,
        then the solver's (``plan``, its :meth:`fit_plan` on the problem's
        shape and these hyperparameters), calibrated together to the fit's
        target and charged once. The fit runs as usual, but its
        :meth:`FitPlan.spend` hands over ``spent`` instead of charging again,
        after checking that the fit's own plan is ``plan``; the fit draws from
        ``spent``'s source and its report is the whole plan's.

        Parameters
        ----------
        problem : Problem
        spent : Spent
            The solver's part of the spent plan (:meth:`Spent.after
            <dpglm.privacy.spending.Spent.after>` the preceding release).
        plan : FitPlan
            The solver's plan, as :meth:`fit_plan` gave it.
        **kwargs
            The fit function's arguments: ``epsilon``, ``delta``, the
            hyperparameters; no ``budget`` (already charged) or
            ``random_state`` (the noise is ``spent``'s).

        Returns
        -------
        FitResult

        Raises
        ------
        PlanError
            The fit's plan is not ``plan``, or the fit did not spend it.
        """
        for name in ("budget", "random_state"):
            if kwargs.get(name) is not None:
                raise TypeError(f"fit_spent takes no {name}: the plan was spent with its own")
        prespent = _Prespent(plan, spent)
        token = _PRESPENT.set(prespent)
        try:
            result = self.fit(problem, **kwargs)
        finally:
            _PRESPENT.reset(token)
        if not prespent.taken:
            raise PlanError(f"{self.name} did not spend the plan spent for it")
        return result

    def plan(self, shape, *, epsilon: float, delta: float, **params) -> PrivacyPlan:
        """The calibrated plan a fit will charge, from public facts only.

        Parameters
        ----------
        shape : ProblemShape or Problem
            Only its shape is read.
        epsilon, delta : float
            The fit's target.
        **params
            Hyperparameters of the fit function (``accountant`` included);
            the others take the fit function's defaults.

        Returns
        -------
        PrivacyPlan
            Event for event the plan the fit charges to its budget.

        Examples
        --------
        >>> shape = ProblemShape(2000, 5, "squared", "l2")
        >>> plan = get_solver("dp-sgd").plan(shape, epsilon=1.0, delta=1e-6, batch_size=100)
        >>> (event,) = plan.events
        >>> event.kind, event.count, event.rate
        ('sampled_gaussian', 100, 0.05)
        """
        return self.fit_plan(shape, epsilon=epsilon, delta=delta, **params).calibrated()

    def leaks(self, shape, *, epsilon: float, delta: float, **params) -> tuple:
        """The privacy leaks a fit reports before its charge, known from its settings.

        Examples
        --------
        >>> shape = ProblemShape(2000, 5, "squared", "l2")
        >>> get_solver("dp-cd").leaks(shape, epsilon=1.0, delta=1e-6)[0][:52]
        'coordinate-wise smoothness constants M_j computed fr'
        >>> get_solver("dp-cd").leaks(shape, epsilon=1.0, delta=1e-6, feature_bounds=1.0)
        ()
        """
        return self.fit_plan(shape, epsilon=epsilon, delta=delta, **params).leaks

    # -- the estimators -------------------------------------------------------------------

    def arguments(self, settings: Settings, shape, options=None, *, epsilon=None, delta=None):
        """The keyword arguments of an estimator's fit: its settings, then ``solver_options``.

        ``epsilon``, ``delta``, ``budget`` and ``random_state`` are the
        estimator's own and not included; an option that sets any of them, or
        a keyword the settings set, is refused as the fit function refuses it.
        ``epsilon`` and ``delta`` (the fit's target) are read by a solver whose
        default work depends on them (DP-CD's and DP-SCD's passes, DP-GCD's
        greedy steps), and required then.

        Examples
        --------
        >>> shape = ProblemShape(569, 30, "logistic", "l2")
        >>> get_solver("dp-sgd").arguments(Settings(passes=5), shape)
        {'clip': 1.0, 'passes': 5, 'batch_size': 28}
        >>> get_solver("dp-agd").arguments(Settings(passes=40.4), shape, {"splits": 20})
        {'clip_grad': 1.0, 'max_iter': 40, 'splits': 20}
        """
        mapping = self.estimator
        if mapping is None:
            raise ValueError(f"{self.name} is not available to the estimators")
        if settings.step is not None and not mapping.step:
            raise ValueError(
                f"step={settings.step!r}: {self.name.upper()} has no step size to set (DP-SCD's "
                "hyperparameters are batch_size and clip, DP-AGD chooses its steps "
                "privately, AdaSSP solves in closed form, DP-Direction fits a line); leave "
                "step=None"
            )
        if settings.passes is not None and mapping.work not in self.hyperparameters:
            raise ValueError(
                f"passes={settings.passes!r}: {self.name.upper()} makes no passes to set (AdaSSP "
                "and DP-Direction release their statistics once); leave passes=None"
            )
        n, batch = shape.n_samples, None
        if mapping.batch_size:
            batch = min(settings.batch_size or default_batch_size(n), n)
        clip = settings.clip
        if clip is None and mapping.default_clip is not None:
            clip = mapping.default_clip(shape, batch)
        elif clip is None:
            clip = DEFAULT_CLIP
        arguments = {} if mapping.clip is None else {mapping.clip: clip}
        if settings.step is not None:
            arguments["step"] = settings.step
        passes = mapping.passes if settings.passes is None else settings.passes
        if passes is None and mapping.default_work is not None:
            if epsilon is None or delta is None:
                raise ValueError(
                    f"{self.name.upper()}'s default work is a function of the fit's target: "
                    "give epsilon and delta (or passes)"
                )
            passes = mapping.default_work(shape, epsilon, delta)
        if passes is not None:
            arguments[mapping.work] = passes if mapping.work == "passes" else max(1, round(passes))
        if batch is not None:
            arguments["batch_size"] = batch
        if mapping.smoothness:
            arguments["smoothness"] = smoothness_source(
                settings.smoothness, settings.feature_bounds
            )
            arguments["feature_bounds"] = settings.feature_bounds
        if mapping.bounds:
            arguments["feature_bounds"] = settings.feature_bounds
        for name in options or {}:
            if name in arguments or name in ("epsilon", "delta", "budget", "random_state"):
                # the message of a fit function given the same keyword twice
                raise TypeError(
                    f"{self.fit.__module__}.{self.fit.__qualname__}() got multiple values for "
                    f"keyword argument {name!r}"
                )
        return {**arguments, **(options or {})}


# -- the registry --------------------------------------------------------------------------

_LOCK = threading.Lock()
_REGISTRY: dict = {}


def _discover() -> dict:
    """Every ``SOLVER`` of the modules of :mod:`dpglm.solvers`, by name (imported once)."""
    if _REGISTRY:
        return _REGISTRY
    with _LOCK:
        if _REGISTRY:
            return _REGISTRY
        package = importlib.import_module("dpglm.solvers")
        found = {}
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith("_") or info.name == "registry":
                continue
            module = importlib.import_module(f"dpglm.solvers.{info.name}")
            declared = getattr(module, "SOLVER", ())
            for solver in declared if isinstance(declared, tuple) else (declared,):
                if not isinstance(solver, Solver):
                    raise TypeError(f"{module.__name__}.SOLVER must hold Solver objects")
                if solver.name in found:
                    raise ValueError(f"two solvers are named {solver.name!r}")
                found[solver.name] = solver
        _REGISTRY.update(sorted(found.items(), key=lambda item: (item[1].order, item[0])))
    return _REGISTRY


def registered_solvers() -> Mapping:
    """Every registered solver, by name, in listing order.

    Examples
    --------
    >>> list(registered_solvers())
    ['dp-cd', 'dp-gcd', 'dp-sgd', 'dp-scd', 'dp-agd', 'dp-gd', 'dp-fw', 'dp-bcfw', 'adassp', 'dp-direction']
    """  # noqa: E501
    return MappingProxyType(_discover())


def get_solver(name: str) -> Solver:
    """The registered solver called ``name``.

    Examples
    --------
    >>> get_solver("dp-gcd").fit.__name__
    'dp_gcd'
    >>> get_solver("dp_gcd")
    Traceback (most recent call last):
    ...
    ValueError: unknown solver 'dp_gcd'; registered: dp-cd, dp-gcd, dp-sgd, dp-scd, dp-agd, dp-gd, dp-fw, dp-bcfw, adassp, dp-direction
    """  # noqa: E501
    found = _discover()
    try:
        return found[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown solver {name!r}; registered: {', '.join(found)}") from None


def estimator_solvers() -> tuple:
    """The names of the solvers the estimators offer (those with an estimator mapping).

    Examples
    --------
    >>> estimator_solvers()
    ('dp-cd', 'dp-gcd', 'dp-sgd', 'dp-scd', 'dp-agd', 'adassp', 'dp-direction')
    """
    return tuple(name for name, solver in _discover().items() if solver.estimator is not None)


def default_passes() -> dict:
    """The estimators' work per solver when ``passes=None`` (the solvers that have one).

    Passes over the data for DP-SGD; DP-CD's and DP-SCD's passes and
    DP-GCD's greedy steps follow ``(n, epsilon, delta)`` (their
    ``estimator_passes`` and :func:`~dpglm.solvers.dp_gcd.estimator_steps`,
    the mappings' ``default_work``) and DP-AGD runs until its budget is
    spent, so none of those is listed.
    DP-SGD's 10, measured against 2.5 to 40 (3 seeds, epsilon 1 and 4, the
    seven dense tables of ``benchmarks/bench_defaults.py``): within 1.3
    points of the best on every row, where the best ranges from 5 (madelon)
    to 40 (California, phishing) and 40 loses 15 points of R^2 on
    communities at epsilon 1 (see :func:`default_batch_size` for why the
    work matters less than the step).

    Examples
    --------
    >>> default_passes()
    {'dp-sgd': 10.0}
    """
    return {
        name: solver.estimator.passes
        for name, solver in _discover().items()
        if solver.estimator is not None and solver.estimator.passes is not None
    }


#: ``solver="auto"`` takes DP-GCD from ``p >= GREEDY_RATIO n`` (see :func:`choose_solver`)
GREEDY_RATIO = 0.1


def choose_solver(shape, iterative: bool = False) -> str:
    """The solver ``solver="auto"`` uses, from the loss, the penalty and the shape only.

    ``"dp-gcd"`` when the loss is smooth and the penalty has an L1 part or
    ``p >= GREEDY_RATIO n`` (greedy steps find the few coordinates that
    matter, and each costs one selection); ``"dp-sgd"`` otherwise, the hinge
    loss included (not smooth: no coordinate-wise steps). The ratio is that of
    the experiments of Mangold et al. (2023, section 5): DP-GCD beats DP-SGD and
    DP-CD from ``p / n = 0.1`` (their log1 and log2, ``1,000 x 100``; madelon,
    ``p / n = 0.25``) and is no better at ``p / n = 0.045`` (mtp) and below
    (california); DP-SGD's error grows like ``sqrt(p) / (n epsilon)``, DP-GCD's
    like ``log(p)`` times that of the few coordinates that matter. Measured on
    madelon (1,500 x 500) by ``benchmarks/bench_defaults.py``: 0.57 at epsilon 1
    against 0.55 for DP-SGD.

    Parameters
    ----------
    shape : ProblemShape or Problem
    iterative : bool, default=False
        Whether a step or a number of passes was set: DP-Direction, which
        has neither, is not chosen.

    Examples
    --------
    >>> from dpglm.penalties import L1, L2
    >>> choose_solver(ProblemShape(10, 3, "squared", L1(0.1)))
    'dp-gcd'
    >>> choose_solver(ProblemShape(100, 3, "squared", L2(0.1)))
    'dp-sgd'

    A binary logistic or squared hinge fit of sparse features with ``p >= n``,
    an intercept and no L1 part (text, one-hot codes) is DP-Direction's
    (:mod:`dpglm.solvers.dp_direction`): one private gradient and a line fit,
    where every iterative solver ends at the majority class. On sms spam TF-IDF
    (4,180 x 14,993) at epsilon 1: 0.906 (5 seeds) against 0.873, the
    majority, for DP-GCD and DP-SGD (``benchmarks/bench_defaults.py``).

    >>> shape = ProblemShape(4000, 15000, "logistic", L2(1e-4), fit_intercept=True, sparse=True)
    >>> choose_solver(shape)
    'dp-direction'

    ``iterative=True`` (the estimators pass it when a step or a number of
    passes is set, as a search over them does) leaves DP-Direction out: it
    has neither.

    >>> choose_solver(shape, iterative=True)
    'dp-gcd'

    A multinomial loss (one margin per class) is always DP-SGD's: its
    proximal step takes any separable penalty, and the coordinate methods fit
    one margin per record.

    On records in row chunks (``shape.chunked``), DP-AGD takes DP-SGD's place
    for a smooth loss: each step of either is a round trip to every chunk,
    and DP-AGD takes a few dozen steps (up to about 240 for the squared loss
    on many records, :func:`~dpglm.solvers.dp_agd.default_splits`), each a
    full pass or two over the chunks, where DP-SGD takes ``passes n / b``
    (millions, for a dataset that needs a cluster) of ``b`` records each.

    >>> choose_solver(ProblemShape(10**7, 30, "logistic", L2(1e-4), chunked=True))
    'dp-agd'
    """
    if shape.datafit.n_outputs > 1 or not math.isfinite(shape.datafit.curvature):
        return "dp-sgd"
    l1 = shape.penalty.prox_params(1)[0][0] if shape.penalty.separable else 0.0
    shape = ProblemShape.of(shape)
    if (
        not iterative
        and shape.sparse
        and not shape.chunked
        and shape.n_features >= shape.n_samples
        and get_solver("dp-direction").accepts(shape) is None
    ):
        return "dp-direction"
    if l1 > 0 or shape.n_features >= GREEDY_RATIO * shape.n_samples:
        return "dp-gcd"
    if shape.chunked:
        return "dp-agd"
    return "dp-sgd"
