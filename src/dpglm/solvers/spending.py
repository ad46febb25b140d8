"""From a solver's template plan to calibrated noise, a budget charge and a report.

Every private solver goes through :func:`spend` before it reads the data for
training: the template plan (unit noise multipliers in the ratios the solver
wants) is calibrated to the target ``(epsilon, delta)``, charged to the shared
:class:`~dpglm.privacy.budget.PrivacyBudget` if one is given (which refuses
when the budget would be exceeded), and described in a
:class:`~dpglm.privacy.report.PrivacyReport`. The solver then runs exactly the
calibrated plan.

Calibrations are cached per ``(plan, epsilon, delta, accountant)``: they are
pure functions of those, and a hyperparameter search calibrates the same plan
many times.

Examples
--------
>>> from dpglm.privacy.events import GaussianEvent, PrivacyPlan
>>> from dpglm.solvers.spending import spend
>>> template = PrivacyPlan([GaussianEvent(noise_multiplier=1.0, count=100)])
>>> spent = spend(template, epsilon=1.0, delta=1e-6)
>>> round(spent.plan.events[0].noise_multiplier, 1), spent.report.accountant
(42.2, 'gdp')
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

from dpglm.privacy.calibration import CalibrationResult, calibrate
from dpglm.privacy.events import PrivacyPlan
from dpglm.privacy.report import MechanismRecord, PrivacyReport


def check_privacy_target(epsilon, delta) -> tuple[float, float]:
    """Validate a target: ``epsilon > 0`` (``inf`` allowed) and ``0 <= delta < 1``.

    Examples
    --------
    >>> check_privacy_target(1, 1e-6)
    (1.0, 1e-06)
    """
    try:
        epsilon = float(epsilon)
        delta = float(delta)
    except (TypeError, ValueError):
        raise TypeError(
            f"epsilon and delta must be numbers, got epsilon={epsilon!r}, delta={delta!r}"
        ) from None
    if not epsilon > 0:
        raise ValueError(f"epsilon must be positive (inf for a non-private fit), got {epsilon!r}")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}")
    return epsilon, delta


def _accounting_key(plan: PrivacyPlan) -> PrivacyPlan:
    """``plan`` without what accounting ignores (labels, sensitivities), for caching.

    Accountants read noise multipliers, counts, kinds, sampling and the
    relation only, so plans that differ in the clipping threshold alone (as
    the fits of a hyperparameter search do) share one calibration.
    """
    return PrivacyPlan(
        tuple(replace(e, label="", sensitivity=None) for e in plan.events), plan.neighbouring
    )


@functools.lru_cache(maxsize=512)
def _calibrated(key: PrivacyPlan, epsilon: float, delta: float, accountant: str):
    return calibrate(key, epsilon, delta, accountant)


@functools.lru_cache(maxsize=512)
def _accounted(key, delta, accountant):
    return PrivacyReport.from_plan(key, delta, accountant=accountant)


def _report(plan, delta, accountant, assumptions, warnings, secure):
    accounted = _accounted(_accounting_key(plan), delta, accountant)
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
    """

    plan: PrivacyPlan
    scale: float
    calibration: CalibrationResult
    report: PrivacyReport

    @property
    def private(self) -> bool:
        """Whether the fit adds noise (``epsilon < inf``)."""
        return self.scale > 0


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
    result = _calibrated(_accounting_key(plan), float(epsilon), float(delta), accountant)
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
    secure: bool = False,
) -> Spent:
    """Calibrate ``template`` to ``(epsilon, delta)``, charge ``budget``, build the report.

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
        For the report.
    secure : bool
        Whether the noise comes from the secure source (for the report).

    Returns
    -------
    Spent
    """
    epsilon, delta = check_privacy_target(epsilon, delta)
    calibration = calibrate_cached(template, epsilon, delta, accountant)
    if budget is not None:
        budget.charge(calibration.plan, label=label)
    report_accountant = "auto" if math.isinf(epsilon) else calibration.accountant
    report = _report(
        calibration.plan, delta, report_accountant, tuple(assumptions), tuple(warnings), secure
    )
    return Spent(calibration.plan, calibration.scale, calibration, report)
