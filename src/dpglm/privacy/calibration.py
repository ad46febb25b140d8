"""Calibration: the least noise for which a plan meets a target ``(epsilon, delta)``.

A solver builds its plan with unit-free template noise multipliers; calibration
scales every multiplier by one factor ``s`` (fixed costs such as a
:class:`~dpglm.privacy.events.PureDPEvent` are not scaled) and looks for the
smallest ``s`` whose accounted epsilon is at most the target. The closed forms
(microseconds) bracket it by doubling and halving and narrow it with Brent's
method on ``log s`` to relative tolerance ``rtol``; the accountants that take
milliseconds (privacy loss distributions, Renyi DP) start from a cheaper
accountant's scale or from the plan's Gaussian approximation and take steps on
``log epsilon`` against ``log s`` along that approximation plus a linear
residual fitted to the points computed (inside the bracket of the target once
there is one) until epsilon lies within ``[target (1 - rtol), target]``. A
privacy loss distribution reads epsilon to about its grid step, so its window
is at least ``GRID_JITTER_STEPS`` steps wide, and its search starts on a grid
``COARSE_FACTOR`` times coarser. Either way it returns a scale whose epsilon
was computed and found within the target, so the
calibrated plan never exceeds it. Threshold events cost a fixed delta that no
noise changes (:func:`~dpglm.privacy.accounting.fixed_delta`): the other events
are calibrated to ``epsilon`` at ``delta`` minus it.

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
from dataclasses import dataclass, replace

from dpglm.exceptions import CalibrationError
from dpglm.privacy.accounting import (
    EXPENSIVE,
    EXPENSIVE_EPSILON_LIMIT,
    PLDAccountant,
    active_events,
    auto_accountants,
    fixed_delta,
    gdp_epsilon,
    get_accountant,
    large_epsilon_accountants,
)
from dpglm.privacy.events import (
    GaussianEvent,
    PrivacyPlan,
    RepeatAndSelectEvent,
    SampledGaussianEvent,
    ThresholdEvent,
    ZCDPEvent,
)
from dpglm.privacy.pld import COARSE_STEP, approximate_mu, composition_count, grid_step
from dpglm.privacy.roots import find_root
from dpglm.privacy.targets import check_privacy_target, zero_delta_message

#: the factor is searched in [1 / MAX_FACTOR, MAX_FACTOR] times the template's noise
MAX_FACTOR = 1e12
#: the first bracket below the scale of a cheaper accountant, on log(scale): a factor 1.25
NARROW_STEP = math.log(1.25)
#: the coarse grid's search stops at this relative width
COARSE_RTOL = 3e-3
#: accountants whose evaluation takes milliseconds: their search starts from a rough guess
SLOW = ("pld", "rdp")
#: the largest secant step on log(scale): a factor 1.5 (less noise costs more than it
#: gains, and a PLD at little noise is wide and slow)
MAX_SECANT_MOVE = math.log(1.5)
#: secant steps on the fine grid after the coarse search
SECANT_STEPS = 8
#: the coarse grid of a PLD calibration is this many times the fine one
COARSE_FACTOR = 4
#: the epsilon a PLD of many releases reads jitters by about its grid step from one
#: scale to a close one (measured at epsilon 1 on Poisson-subsampled Gaussians: at most
#: 1.2e-5 of epsilon up to 5,000 releases, 4.4e-4 at 19,531 and delta 1e-12): from
#: ``MANY_RELEASES`` releases on, a point within this many steps of the target (relative
#: to it) is taken after the first secant step
GRID_JITTER_STEPS = 2
MANY_RELEASES = 10_000


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
        Relative width of the final bracket on the scale (closed forms), or of
        the band below the target the epsilon is brought into (secant steps;
        after ``SECANT_STEPS`` of them the least noise found within the target).

    Returns
    -------
    CalibrationResult

    Raises
    ------
    CalibrationError
        If no noise level meets the target: the plan's fixed costs alone exceed
        it (its threshold events' delta at least ``delta``, say), or it has no
        noise to scale; or ``delta = 0`` with a finite
        ``epsilon`` and Gaussian-family events in the plan (Gaussian, sampled
        Gaussian, zCDP), which have no ``(epsilon, 0)`` guarantee at any noise
        level, or with an accountant that gives none (e.g. ``"advanced"``).
        The message then names ``delta``, says which fits take ``delta = 0``
        and what to do (:func:`~dpglm.privacy.targets.zero_delta_message`).

    Examples
    --------
    >>> from dpglm.privacy.events import GaussianEvent, LaplaceEvent
    >>> laplace = PrivacyPlan([LaplaceEvent(noise_multiplier=1.0, count=4)])
    >>> round(calibrate(laplace, 2.0, 0.0).epsilon, 12)
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
    fixed = fixed_delta(plan)
    if fixed > 0.0:
        return _calibrate_rest(plan, epsilon, delta, fixed, accountant, rtol)
    names = auto_accountants(plan) if accountant == "auto" else [get_accountant(accountant).name]
    if accountant == "auto" and epsilon > EXPENSIVE_EPSILON_LIMIT:
        names = large_epsilon_accountants(plan, names)
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


def _calibrate_rest(plan, epsilon, delta, fixed, accountant, rtol):
    """Calibrate the events of ``plan`` other than its threshold events, at ``delta - fixed``.

    Every accountant accounts the others at that delta (basic composition with
    the threshold events' ``(0, fixed)``), so the least noise for them is the
    least noise for the plan, and its epsilon the plan's.
    """
    if delta <= fixed:
        raise CalibrationError(
            f"no noise level meets epsilon={epsilon:g} at delta={delta:g}: the plan's threshold "
            f"events cost delta={fixed:g} whatever the noise, which leaves nothing for its "
            "other events; give a larger delta or a smaller threshold delta"
        )
    rest = PrivacyPlan(
        tuple(e for e in plan.events if not isinstance(e, ThresholdEvent)), plan.neighbouring
    )
    result = calibrate(rest, epsilon, delta - fixed, accountant, rtol)
    return replace(result, plan=plan.scaled(result.scale), delta=delta)


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


def _no_level(name, epsilon, delta, eps_hi):
    """The error of a search that found no noise level within the target."""
    if delta == 0.0 and math.isinf(eps_hi):
        return CalibrationError(
            zero_delta_message(
                f"the {name!r} accountant gives no guarantee at delta = 0 (account a plan of "
                "pure-DP noise with 'basic' or 'pld', which 'auto' includes)"
            )
        )
    return CalibrationError(
        f"no noise level meets epsilon={epsilon:g} at delta={delta:g} with the {name!r} "
        f"accountant: even {MAX_FACTOR:g} times the template's noise costs "
        f"epsilon={eps_hi:.6g} (the plan's fixed costs exceed the target)"
    )


def _calibrate_with(plan, epsilon, delta, name, rtol, best=None):
    """Calibrate with one accountant; None when ``best`` is given and it cannot beat it.

    The closed forms bracket and narrow (:func:`_search`). The slow accountants
    take checked secant steps (:func:`_secant`) from ``best``'s scale when a
    cheaper accountant gave one (and give up at once if they cost more there),
    else from the plan's Gaussian approximation; the privacy loss distributions
    first on a grid ``COARSE_FACTOR`` times as coarse as the plan's, then on the
    plan's within a window no narrower than its resolution.
    """
    acc = get_accountant(name)
    if name not in SLOW or not plan.scalable:
        return _search(plan, epsilon, delta, acc, rtol, None if best is None else best.scale)
    known = None
    if best is not None:
        known = acc.epsilon(plan.scaled(best.scale), delta)
        if known > epsilon:
            return None  # a cheaper accountant needs less noise already
        point = math.log(best.scale)
    else:
        point = _rough_log_scale(plan, epsilon, delta)
        if point is None and name != "pld":
            return _search(plan, epsilon, delta, acc, rtol)
    if point is None:  # no Gaussian approximation: a loose search on the coarsest grid
        point = math.log(_search(plan, epsilon, delta, PLDAccountant(COARSE_STEP), 0.1).scale)
    resolution, drift = rtol, None
    if name == "pld":
        point, known, drift = _coarse_pld_point(plan, epsilon, delta, point, known)
        # the grid of many releases resolves epsilon to about its step: a window narrower
        # may not be hit
        events = active_events(plan.scaled(math.exp(point))) or []
        if composition_count(events) >= MANY_RELEASES:
            resolution = max(rtol, GRID_JITTER_STEPS * grid_step(events, delta) / epsilon)
    return _secant(plan, epsilon, delta, acc, rtol, point, known, resolution, drift)[0]


def _coarse_pld_point(plan, epsilon, delta, point, known):
    """``(point, known, drift)`` moved by secant steps on a grid ``COARSE_FACTOR`` times
    as coarse as the one the plan is computed on at ``point``, when that is finer than the
    coarsest grid; else as given (``drift`` None)."""
    fine = grid_step(active_events(plan.scaled(math.exp(point))) or [], delta)
    if fine >= COARSE_STEP:
        return point, known, None
    step = min(COARSE_STEP, COARSE_FACTOR * fine)
    result, drift = _secant(plan, epsilon, delta, PLDAccountant(step), COARSE_RTOL, point)
    # the plan's own grid where the search ended may be the coarse one (the spacing grows
    # with the plan's epsilon): its epsilon there is already known
    point = math.log(result.scale)
    own = grid_step(active_events(result.plan) or [], delta)
    same = own == step and math.exp(point) == result.scale  # the very plan computed
    return point, (result.epsilon if same else None), drift


def _secant(plan, epsilon, delta, acc, rtol, point, known=None, resolution=None, drift=None):
    """Checked steps on ``log epsilon`` against ``log scale`` from ``point``: the
    least-noise point found whose epsilon lies in ``[epsilon (1 - rtol), epsilon]``
    (after one step, ``resolution`` in place of ``rtol``, aimed at its middle), or the
    least within the target after ``SECANT_STEPS`` steps; and the last drift of the
    residual (see below), which a finer grid's search may start from.

    ``known`` is the epsilon at ``point`` when already computed with ``acc``.
    Epsilon is far from inversely proportional to the noise of many subsampled
    releases at a small delta, and its curve bends: each step follows the plan's
    Gaussian approximation plus a residual, the line of slope ``drift`` through the
    last point computed (the slope between the last two, or ``drift`` as given, or
    0 at first), and a plain secant step where the plan has no approximation. Once
    points on both sides of the target are known, every step stays between them.
    """
    limit = math.log(MAX_FACTOR)

    def log_cost(log_scale):
        eps = acc.epsilon(plan.scaled(math.exp(log_scale)), delta)
        return math.log(max(eps, 1e-300)), eps

    # steps aim a little below the target; a point is kept within the target
    window = max(rtol, resolution or rtol)
    target, aim, floor = (math.log(epsilon) + math.log1p(-f) for f in (0.0, window / 2, rtol))
    loose = math.log(epsilon) + math.log1p(-window)
    if known is None:
        value, eps = log_cost(point)
    else:
        value, eps = math.log(max(known, 1e-300)), known
    model = _approximation(plan, delta)
    slope = -1.0
    kept = (point, value, eps) if value <= target else None
    above = None if value <= target else (point, value)  # the most noise found too little
    for steps in range(SECANT_STEPS):
        if kept is not None and kept[1] >= (floor if steps == 0 else loose):
            break
        move = _model_move(model, (point, value), drift or 0.0, aim)
        if move is None:
            move = (aim - value) / slope
        move = max(-MAX_SECANT_MOVE, min(MAX_SECANT_MOVE, move))
        following = min(limit, max(-limit, point + move))
        if kept is not None and above is not None and not above[0] < following < kept[0]:
            following = _interpolate(above, kept[:2], aim)
        following_value, following_eps = log_cost(following)
        if following_value <= target:
            if kept is None or following < kept[0]:
                kept = (following, following_value, following_eps)
        elif above is None or following > above[0]:
            above = (following, following_value)
        # a slope from points closer than the grid resolves is its jitter, not the curve's
        if abs(following - point) > (resolution or rtol) and following_value != value:
            slope = min(-1e-3, (following_value - value) / (following - point))
            if model is not None:
                drift = slope - (model(following) - model(point)) / (following - point)
        point, value = following, following_value
    while kept is None:  # not met yet: move up until it is
        if point >= limit:
            raise _no_level(acc.name, epsilon, delta, math.exp(value))
        point = min(limit, point + max(rtol, value - target))
        value, eps = log_cost(point)
        if value <= target:
            kept = (point, value, eps)
    scale = math.exp(kept[0])
    return CalibrationResult(plan.scaled(scale), scale, kept[2], delta, acc.name), drift


def _approximation(plan, delta):
    """``log epsilon`` of the plan's Gaussian approximation as a function of ``log scale``,
    or None when it has none (no event it approximates, or an infinite epsilon)."""
    events = active_events(plan) or []
    if not events or delta <= 0:
        return None

    def log_epsilon(log_scale):
        mu = approximate_mu([e.scaled(math.exp(log_scale)) for e in events])
        return math.log(max(gdp_epsilon(mu, delta), 1e-300))

    return log_epsilon


def _model_move(model, last, drift, aim, reach=2 * MAX_SECANT_MOVE):
    """The move of ``log scale`` from ``last``, a ``(log scale, log epsilon)`` point
    computed on the grid, that takes ``model`` plus its residual to ``aim``: the residual
    is the line of slope ``drift`` through ``last``. None without a model or a root
    within ``reach``."""
    if model is None:
        return None
    try:
        point, value = last
        offset = value - model(point)

        def gap(log_scale):
            return model(log_scale) + offset + drift * (log_scale - point) - aim

        lo, hi = point - reach, point + reach
        if not gap(lo) > 0 > gap(hi):
            return None
        return find_root(gap, lo, hi, xtol=1e-4) - point
    except (OverflowError, ValueError, ZeroDivisionError):
        return None


def _interpolate(above, below, aim):
    """The ``log scale`` at which the line through two ``(log scale, log epsilon)``
    points on either side of the target reaches ``aim``, kept off their ends."""
    (x0, y0), (x1, y1) = above, below
    fraction = (y0 - aim) / (y0 - y1) if y0 != y1 else 0.5
    return x0 + min(0.9, max(0.1, fraction)) * (x1 - x0)


def _rough_log_scale(plan, epsilon, delta):
    """A first guess of the calibrated log-scale, from the Gaussian approximation of the
    plan's privacy loss (not a bound: the search checks every point it keeps)."""
    events = active_events(plan) or []

    def gap(log_scale):
        mu = approximate_mu([e.scaled(math.exp(log_scale)) for e in events])
        return math.log(max(gdp_epsilon(mu, delta), 1e-300)) - math.log(epsilon)

    lo, hi = -30.0, 30.0
    if not (gap(lo) > 0 > gap(hi)):
        return None
    return find_root(gap, lo, hi, xtol=1e-3)


def _search(plan, epsilon, delta, acc, rtol, start=None):
    """The least scale whose epsilon under ``acc`` is at most the target, by bracketing
    and Brent's method on ``log(scale)``.

    ``start`` is the scale of a cheaper accountant's result: a first bracket
    of width ``NARROW_STEP`` below it saves steps; None is returned if it costs
    more than the target there (the accountant cannot win).
    """
    name = acc.name

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
    if start is not None:
        hi = math.log(start)
        eps_hi = cost(hi)
        if eps_hi > epsilon:
            return None
        first = NARROW_STEP
    else:
        hi, eps_hi = 0.0, cost(0.0)
        while eps_hi > epsilon:
            hi += step
            if hi > limit:
                raise _no_level(name, epsilon, delta, eps_hi)
            eps_hi = cost(hi)
        first = step
    lo = hi - first
    while (eps_lo := cost(lo)) <= epsilon:
        hi, eps_hi, lo = lo, eps_lo, lo - step
        if lo < -limit:
            return result(hi, eps_hi)
    root = find_root(
        lambda t: cost(t) - epsilon,
        lo,
        hi,
        xtol=rtol / 4,
        rtol=1e-15,
        f_lo=eps_lo - epsilon,
        f_hi=eps_hi - epsilon,
    )
    # return a point whose cost was computed and found within the target
    candidate = min(hi, root + rtol / 2)
    eps = cost(candidate)
    while eps > epsilon:
        candidate = min(hi, candidate + rtol / 2)
        eps = cost(candidate)
    return result(candidate, eps)
