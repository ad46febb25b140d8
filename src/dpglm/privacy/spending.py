"""From a solver's template plan to calibrated noise, a budget charge and a report.

Every private solver goes through :func:`spend` before it reads the data for
training: the template plan (unit noise multipliers in the ratios the solver
wants) is calibrated to the target ``(epsilon, delta)``, charged to the shared
:class:`~dpglm.privacy.budget.PrivacyBudget` if one is given (which refuses
when the budget would be exceeded), and described in a
:class:`~dpglm.privacy.report.PrivacyReport`. The solver then runs exactly the
calibrated plan: each of its events through the :class:`~dpglm.privacy.releases.Release`
that :meth:`Spent.release` binds to the noise source :func:`spend` returns.

The noise source is made after the charge, from the fit's ``random_state`` and
the charge itself (:attr:`~dpglm.privacy.budget.Charge.noise_key`): a seed
reproduces a script's fits from a fresh budget, but no two charges to one
budget (or one ledger) share noise. Otherwise two fits with one seed that
differ in a single hyperparameter (say the clipping threshold, which scales
the noise) would let anyone combine them to cancel the noise, while the budget
composes them as independent. A fit without a budget (or with a stand-in that
returns no charge) keeps the seed's own stream.

Calibrations are cached per ``(plan, epsilon, delta, accountant)``: they are
pure functions of those, and a hyperparameter search calibrates the same plan
many times.

Examples
--------
>>> from dpglm.privacy.events import GaussianEvent, PrivacyPlan
>>> from dpglm.privacy.spending import spend
>>> template = PrivacyPlan([GaussianEvent(noise_multiplier=1.0, count=100)])
>>> spent = spend(template, epsilon=1.0, delta=1e-6)
>>> round(spent.plan.events[0].noise_multiplier, 1), spent.report.accountant
(42.2, 'gdp')
>>> from dpglm.privacy.budget import PrivacyBudget
>>> budget = PrivacyBudget(3.0, 1e-6)
>>> a, b = (
...     spend(template, epsilon=1.0, delta=1e-6, budget=budget, random_state=0) for _ in range(2)
... )
>>> a.charge.index, b.charge.index, a.source.standard_normal() == b.source.standard_normal()
(0, 1, False)
>>> round(a.release(0).scale(0.5), 2)  # the calibrated multiplier times a sensitivity of 0.5
21.12
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass, replace

import numpy as np

from dpglm.exceptions import PlanError
from dpglm.privacy.budget import Charge
from dpglm.privacy.calibration import CalibrationResult, calibrate
from dpglm.privacy.events import PrivacyPlan
from dpglm.privacy.mechanisms import NoiseSource, make_noise_source
from dpglm.privacy.releases import Release
from dpglm.privacy.report import MechanismRecord, PrivacyReport
from dpglm.privacy.targets import check_privacy_target

#: in the report of a fit whose random_state fixes its noise
SEED_ASSUMPTION = (
    "random_state fixes the noise: it is a function of the seed and of the budget charge, so "
    "the seed must stay secret (anyone who knows it can recompute the noise), and two fits made "
    "with the same seed on the same data and published outside one shared budget have "
    "identical noise, which voids the guarantee; fits charged to one budget draw independent "
    "streams keyed to their charges"
)
#: in the report of a fit given a NoiseSource, which is used as is
SOURCE_ASSUMPTION = (
    "the noise comes from the NoiseSource given as random_state, used as is (not keyed to the "
    "budget charge): its stream must be secret and serve no other release"
)


def seed_assumptions(random_state, secure: bool = False) -> tuple:
    """What the guarantee assumes about ``random_state`` (nothing when it is ``None``).

    Examples
    --------
    >>> seed_assumptions(None), seed_assumptions(None, secure=True)
    ((), ())
    >>> seed_assumptions(0) == (SEED_ASSUMPTION,)
    True
    """
    if random_state is None or secure:
        return ()
    if isinstance(random_state, NoiseSource):
        return () if random_state.secure else (SOURCE_ASSUMPTION,)
    if isinstance(random_state, np.random.Generator | np.random.SeedSequence) or (
        isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool)
    ):
        return (SEED_ASSUMPTION,)
    return ()


def accounting_key(plan: PrivacyPlan, *, parts: bool = True) -> PrivacyPlan:
    """``plan`` without what accounting ignores (labels, sensitivities; parts unless asked).

    Accountants read noise multipliers, counts, kinds, sampling and the
    relation only, so plans that differ in the clipping threshold alone (as
    the fits of a hyperparameter search do) share one calibration, and two
    plans with the same key cost the same. The parts are kept by default:
    a report accounts each part on its own.

    Examples
    --------
    >>> from dpglm.privacy.events import GaussianEvent
    >>> a = PrivacyPlan([GaussianEvent(noise_multiplier=2.0, sensitivity=1.0, label="a")])
    >>> b = PrivacyPlan([GaussianEvent(noise_multiplier=2.0, sensitivity=3.0, part="other")])
    >>> (
    ...     accounting_key(a) == accounting_key(b),
    ...     accounting_key(a, parts=False) == accounting_key(b, parts=False),
    ... )
    (False, True)
    """
    return PrivacyPlan(
        tuple(
            replace(e, label="", sensitivity=None, **({} if parts else {"part": ""}))
            for e in plan.events
        ),
        plan.neighbouring,
    )


@functools.lru_cache(maxsize=512)
def _calibrated(key: PrivacyPlan, epsilon: float, delta: float, accountant: str):
    return calibrate(key, epsilon, delta, accountant)


@functools.lru_cache(maxsize=512)
def _accounted(key, delta, accountant):
    return PrivacyReport.from_plan(key, delta, accountant=accountant)


def _report(plan, delta, accountant, assumptions, warnings, secure):
    accounted = _accounted(accounting_key(plan), delta, accountant)
    return replace(
        accounted,
        mechanisms=tuple(MechanismRecord.from_event(e) for e in plan.events),
        assumptions=tuple(assumptions),
        warnings=tuple(warnings),
        secure=secure,
    )


@dataclass(frozen=True)
class Spent:
    """A calibrated, charged plan.

    Attributes
    ----------
    plan : PrivacyPlan
        The plan the solver must run: the template with calibrated noise.
    scale : float
        Factor applied to the template's noise multipliers (0 when
        ``epsilon = inf``).
    calibration : CalibrationResult
    report : PrivacyReport
    source : NoiseSource
        Where every random draw of the fit comes from, made after the charge
        and keyed to it.
    charge : Charge or None
        The budget's record of this fit; None without a budget (or with a
        stand-in budget that returns no :class:`~dpglm.privacy.budget.Charge`).
    prior : tuple of Event
        The events of the same charge released before ``plan``'s (see :meth:`after`).
    """

    plan: PrivacyPlan
    scale: float
    calibration: CalibrationResult
    report: PrivacyReport
    source: NoiseSource | None = None
    charge: Charge | None = None
    prior: tuple = ()

    @property
    def private(self) -> bool:
        """Whether the fit adds noise (``epsilon < inf``)."""
        return self.scale > 0

    def release(self, index: int) -> Release:
        """Event ``index`` of the calibrated plan (negative: from the end), bound to ``source``.

        Examples
        --------
        >>> from dpglm.privacy.events import LaplaceEvent, PrivacyPlan
        >>> template = PrivacyPlan([LaplaceEvent(noise_multiplier=1.0, sensitivity=0.1)])
        >>> spent = spend(template, epsilon=2.0, delta=0.0, random_state=0)
        >>> round(spent.release(-1).scale(), 6)  # multiplier 1 / 2 times the sensitivity
        0.05
        """
        return Release(self.plan.events[index], self.source)

    def after(self, offset: int, stop=None, *, assumptions=(), warnings=()) -> Spent:
        """The events from ``offset`` on (to ``stop``), drawn from the same source, one charge.

        What a fit whose plan begins with another release (e.g. the private
        preprocessing of an estimator) hands to the part that runs the rest:
        its :meth:`release` counts from ``offset``, and its report is the
        whole plan's, with ``assumptions`` and ``warnings`` added. ``stop``
        ends the part before the plan does, for a plan of several fits in a
        row (one-vs-rest: one binary fit per class).

        Examples
        --------
        >>> from dpglm.privacy.events import GaussianEvent, LaplaceEvent, PrivacyPlan
        >>> template = PrivacyPlan(
        ...     [LaplaceEvent(noise_multiplier=1.0), GaussianEvent(noise_multiplier=1.0)]
        ... )
        >>> spent = spend(template, epsilon=1.0, delta=1e-6, random_state=0)
        >>> rest = spent.after(1)
        >>> rest.release(0).family, len(rest.plan.events), len(rest.report.mechanisms)
        ('gaussian', 1, 2)
        """
        plan = PrivacyPlan(self.plan.events[offset:stop], self.plan.neighbouring)
        prior = (*self.prior, *self.plan.events[:offset])
        report = replace(
            self.report,
            assumptions=(*self.report.assumptions, *assumptions),
            warnings=(*self.report.warnings, *warnings),
        )
        return replace(self, plan=plan, report=report, prior=prior)

    def described_as(self, template: PrivacyPlan) -> Spent:
        """This spent plan with the labels, parts and sensitivities of ``template``.

        ``template`` is the plan of the same releases as their fit describes
        them once it has read what they depend on (e.g. sensitivities set by
        constants it computed); its accounting must be this plan's (same
        kinds, counts and relation; its multipliers are the template's
        ratios, which calibration scaled by :attr:`scale`).

        Raises
        ------
        PlanError
            ``template`` is not accounted as this plan is.
        """
        events = self.plan.events
        # parts are descriptions too: a plan spent as one part of a larger one (a class of
        # one-vs-rest) is described by its fit under the fit's own parts
        if len(template.events) != len(events) or accounting_key(
            template.scaled(self.scale), parts=False
        ) != accounting_key(self.plan, parts=False):
            raise PlanError(
                "the fit's plan is not the plan spent before it: its hyperparameters or its "
                "problem's shape changed in between"
            )
        described = tuple(
            replace(e, label=t.label, part=t.part, sensitivity=t.sensitivity)
            for e, t in zip(events, template.events, strict=True)
        )
        records = tuple(MechanismRecord.from_event(e) for e in described)
        # the report lists the whole plan: these events follow the prior ones in it
        start = len(self.prior)
        mechanisms = self.report.mechanisms
        before, after = mechanisms[:start], mechanisms[start + len(events) :]
        report = replace(self.report, mechanisms=(*before, *records, *after))
        plan = PrivacyPlan(described, self.plan.neighbouring)
        return replace(self, plan=plan, report=report)


def calibrate_cached(
    plan: PrivacyPlan, epsilon: float, delta: float, accountant: str = "auto"
) -> CalibrationResult:
    """:func:`~dpglm.privacy.calibration.calibrate`, cached.

    Examples
    --------
    >>> from dpglm.privacy.events import LaplaceEvent, PrivacyPlan
    >>> plan = PrivacyPlan([LaplaceEvent(noise_multiplier=1.0, count=4)])
    >>> calibrate_cached(plan, 2.0, 0.0, "basic").epsilon <= 2.0
    True
    """
    result = _calibrated(accounting_key(plan), float(epsilon), float(delta), accountant)
    return replace(result, plan=plan.scaled(result.scale))


def spend(
    template: PrivacyPlan,
    *,
    epsilon: float,
    delta: float,
    accountant: str = "auto",
    budget=None,
    label: str = "",
    assumptions=(),
    warnings=(),
    random_state=None,
    secure: bool = False,
) -> Spent:
    """Calibrate ``template``, charge ``budget``, make the noise source, build the report.

    Parameters
    ----------
    template : PrivacyPlan
        The solver's events with template noise multipliers (only their
        ratios matter; events marked ``fixed`` keep their noise).
    epsilon, delta : float
        Target guarantee of the fit; ``epsilon = inf`` gives a noiseless plan
        and a report that says the fit is not private.
    accountant : str, default="auto"
        Accountant used for calibration and for the report.
    budget : PrivacyBudget, optional
        Charged with the calibrated plan before anything else happens; raises
        :class:`~dpglm.exceptions.BudgetExceededError` when it cannot afford it.
    label : str
        What is being fitted, for the ledger.
    assumptions, warnings : sequence of str
        For the report; a seeded ``random_state`` adds :data:`SEED_ASSUMPTION`.
    random_state : None, int, SeedSequence, Generator or NoiseSource
        The fit's randomness, checked before the charge. An int, a
        SeedSequence or a Generator is mixed with the charge's
        :attr:`~dpglm.privacy.budget.Charge.noise_key` (see
        :func:`~dpglm.privacy.mechanisms.make_noise_source`), so that the same
        seed gives every charge of one budget its own stream and a fresh budget
        the same streams again; without a charge it seeds the stream as it
        always has. ``None`` (fresh entropy), the secure source and a
        NoiseSource are used as they are.
    secure : bool
        Draw from the operating system's CSPRNG (refuses a seed).

    Returns
    -------
    Spent
        With ``source``, the fit's noise source, and ``charge``.

    Notes
    -----
    Solvers draw nothing before calling :func:`spend`, and everything from
    ``spent.source`` after it: their noise through :meth:`Spent.release`.
    """
    epsilon, delta = check_privacy_target(epsilon, delta)
    # a random_state that cannot make a source must fail before the charge, not after
    unkeyed = make_noise_source(random_state, secure=secure)
    calibration = calibrate_cached(template, epsilon, delta, accountant)
    charge = None
    if budget is not None:
        charge = budget.charge(calibration.plan, label=label)
        if not isinstance(charge, Charge):
            charge = None  # a stand-in budget (e.g. a search's guard) records nothing
    source = unkeyed
    if charge is not None:
        source = make_noise_source(random_state, secure=secure, key=charge.noise_key)
    report_accountant = "auto" if math.isinf(epsilon) else calibration.accountant
    if not math.isinf(epsilon):  # a non-private fit has no guarantee for a seed to void
        assumptions = (*assumptions, *seed_assumptions(random_state, source.secure))
    report = _report(
        calibration.plan,
        delta,
        report_accountant,
        tuple(assumptions),
        tuple(warnings),
        source.secure,
    )
    return Spent(calibration.plan, calibration.scale, calibration, report, source, charge)
