"""Calibration: the least noise for which a plan meets a target ``(epsilon, delta)``.

A solver builds its plan with unit-free template noise multipliers; calibration
scales every multiplier by one factor ``s`` (fixed costs such as a
:class:`~dpglm.privacy.events.PureDPEvent` are not scaled), brackets the
smallest ``s`` whose accounted epsilon is at most the target by doubling and
halving, and narrows it with Brent's method on ``log s`` to relative
tolerance ``rtol``. It returns a
scale whose epsilon was computed and found within the target, so the
calibrated plan never exceeds it.

Examples
--------
>>> from dpglm.privacy.calibration import calibrate
>>> from dpglm.privacy.events import GaussianEvent, PrivacyPlan
>>> result = calibrate(PrivacyPlan([GaussianEvent(noise_multiplier=1.0, count=100)]), 1.0, 1e-5)
>>> bool(result.epsilon <= 1.0), result.accountant
(True, 'gdp')
>>> round(result.plan.events[0].noise_multiplier, 2)
37.31
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.optimize import brentq

from dpglm.exceptions import CalibrationError
from dpglm.privacy.accounting import (
    EXPENSIVE,
    EXPENSIVE_EPSILON_LIMIT,
    auto_accountants,
    get_accountant,
)
from dpglm.privacy.events import (
    GaussianEvent,
    PrivacyPlan,
    RepeatAndSelectEvent,
    SampledGaussianEvent,
    ZCDPEvent,
)
from dpglm.privacy.targets import check_privacy_target, zero_delta_message

#: the factor is searched in [1 / MAX_FACTOR, MAX_FACTOR] times the template's noise
MAX_FACTOR = 1e12
#: the first bracket below the scale of a cheaper accountant, on log(scale): a factor 1.25
NARROW_STEP = math.log(1.25)


@dataclass(frozen=True)
class CalibrationResult:
    """A calibrated plan and what it costs.

    Attributes
    ----------
    plan : PrivacyPlan
        The template with every noise multiplier times ``scale``.
    scale : float
        The factor applied to the template.
    epsilon : float
        The plan's epsilon at ``delta`` (at most the target).
    delta : float
    accountant : str
        The accountant that gave ``epsilon``.
    """

    plan: PrivacyPlan
    scale: float
    epsilon: float
    delta: float
    accountant: str


def calibrate(
    plan: PrivacyPlan, epsilon: float, delta: float, accountant="auto", rtol: float = 1e-4
) -> CalibrationResult:
    """Scale the noise of ``plan`` to the least level that meets ``(epsilon, delta)``.

    With ``accountant="auto"`` each valid accountant is calibrated on its own
    and the least noise wins: every accountant's epsilon decreases with the
    noise, so the least scale at which the tightest of them meets the target is
    the least of their individual scales.

    Parameters
    ----------
    plan : PrivacyPlan
        Template plan; only the ratios of its noise multipliers matter.
    epsilon : float
        Target epsilon, positive; ``inf`` returns the plan without noise
        (every multiplier 0, a non-private fit).
    delta : float
        Target delta in ``[0, 1)``.
    accountant : str, default="auto"
        Accountant name (see :mod:`dpglm.privacy.accounting`).
    rtol : float, default=1e-4
        Relative width of the final bracket on the scale.

    Returns
    -------
    CalibrationResult

    Raises
    ------
    CalibrationError
        If no noise level meets the target: the plan's fixed costs alone exceed
        it, or it has no noise to scale; or ``delta = 0`` with a finite
        ``epsilon`` and Gaussian-family events in the plan (Gaussian, sampled
        Gaussian, zCDP), which have no ``(epsilon, 0)`` guarantee at any noise
        level, or with an accountant that gives none (e.g. ``"advanced"``).
        The message then names ``delta``, says which fits take ``delta = 0``
        and what to do (:func:`~dpglm.privacy.targets.zero_delta_message`).

    Examples
    --------
    >>> from dpglm.privacy.events import GaussianEvent, LaplaceEvent
    >>> calibrate(PrivacyPlan([LaplaceEvent(noise_multiplier=1.0, count=4)]), 2.0, 0.0).epsilon
    2.0
    >>> gaussian = PrivacyPlan([GaussianEvent(noise_multiplier=1.0)])
    >>> calibrate(gaussian, 1.0, 0.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpglm.exceptions.CalibrationError: delta must be > 0 for a private fit: ...
    """
    epsilon, delta = check_privacy_target(epsilon, delta)
    if not rtol > 0:
        raise ValueError(f"rtol must be positive, got {rtol!r}")
    if math.isinf(epsilon):
        return CalibrationResult(plan.scaled(0.0), 0.0, math.inf, delta, "none")
    if delta == 0.0:
        kinds = _gaussian_kinds(plan)
        if kinds:
            # every accountant would search up to MAX_FACTOR and fail with words about its
            # own search; no noise level helps, so say why and what does
            reason = (
                f"the plan adds Gaussian-family noise ({', '.join(kinds)} events), which has "
                "no (epsilon, 0) guarantee at any noise level"
            )
            raise CalibrationError(zero_delta_message(reason))
    names = auto_accountants(plan) if accountant == "auto" else [get_accountant(accountant).name]
    # cheap closed forms first: their scale starts the numerical accountants' search,
    # and an accountant that already exceeds the target there cannot win
    names = sorted(names, key=lambda name: name in EXPENSIVE)
    best, errors = None, []
    for name in names:
        if name in EXPENSIVE and best is not None and epsilon > EXPENSIVE_EPSILON_LIMIT:
            continue
        try:
            result = _calibrate_with(plan, epsilon, delta, name, rtol, best)
        except CalibrationError as err:
            errors.append(err)
            continue
        # least noise first; among equal noise (e.g. nothing to scale) the tightest epsilon
        if result is not None and (
            best is None or (result.scale, result.epsilon) < (best.scale, best.epsilon)
        ):
            best = result
    if best is None:
        raise errors[0]
    return best


def _gaussian_kinds(plan) -> list:
    """The kinds of the events of ``plan`` (in order, once each) that need ``delta > 0``."""
    kinds = []
    for event in plan.events:
        if event.count == 0:
            continue
        if isinstance(event, RepeatAndSelectEvent):
            found = _gaussian_kinds(event.inner)
        elif isinstance(event, GaussianEvent | SampledGaussianEvent | ZCDPEvent):
            found = [event.kind]
        else:
            found = []
        kinds += [kind for kind in found if kind not in kinds]
    return kinds


def _calibrate_with(plan, epsilon, delta, name, rtol, best=None):
    """Calibrate with one accountant: bracket, then Brent's method on ``log(scale)``.

    Returns None when ``best`` is given and this accountant cannot beat it.
    """
    acc = get_accountant(name)

    def cost(log_scale):
        return acc.epsilon(plan.scaled(math.exp(log_scale)), delta)

    def result(log_scale, eps):
        scale = math.exp(log_scale)
        return CalibrationResult(plan.scaled(scale), scale, eps, delta, name)

    if not plan.scalable:
        eps = cost(0.0)
        if eps > epsilon:
            raise CalibrationError(
                f"the plan has no noise to calibrate and costs epsilon={eps:.6g} > {epsilon:g}"
            )
        return result(0.0, eps)
    step, limit = math.log(2.0), math.log(MAX_FACTOR)
    # bracket [lo, hi] on log(scale) with cost(lo) > epsilon >= cost(hi)
    if best is not None:
        hi = math.log(best.scale)
        eps_hi = cost(hi)
        if eps_hi > epsilon:
            return None
    else:
        hi, eps_hi = 0.0, cost(0.0)
        while eps_hi > epsilon:
            hi += step
            if hi > limit:
                if delta == 0.0 and math.isinf(eps_hi):
                    raise CalibrationError(
                        zero_delta_message(
                            f"the {name!r} accountant gives no guarantee at delta = 0 (account "
                            "a plan of pure-DP noise with 'basic' or 'pld', which 'auto' "
                            "includes)"
                        )
                    )
                raise CalibrationError(
                    f"no noise level meets epsilon={epsilon:g} at delta={delta:g} with the "
                    f"{name!r} accountant: even {MAX_FACTOR:g} times the template's noise costs "
                    f"epsilon={eps_hi:.6g} (the plan's fixed costs exceed the target)"
                )
            eps_hi = cost(hi)
    # a cheaper accountant's scale (best) is an upper bound close to the root: a narrow
    # first bracket below it saves an expensive accountant (PLD) several of Brent's steps
    lo = hi - (NARROW_STEP if best is not None and name in EXPENSIVE else step)
    while (eps_lo := cost(lo)) <= epsilon:
        hi, eps_hi, lo = lo, eps_lo, lo - step
        if lo < -limit:
            return result(hi, eps_hi)
    root = brentq(lambda t: cost(t) - epsilon, lo, hi, xtol=rtol / 4, rtol=1e-15)
    # return a point whose cost was computed and found within the target
    candidate = min(hi, root + rtol / 2)
    eps = cost(candidate)
    while eps > epsilon:
        candidate = min(hi, candidate + rtol / 2)
        eps = cost(candidate)
    return result(candidate, eps)
