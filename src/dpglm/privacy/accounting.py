"""Accountants: from an event plan to ``(epsilon, delta)``.

Each accountant is a valid upper bound on the privacy loss of the plans it
supports and refuses the others (:class:`~dpglm.exceptions.UnsupportedPlanError`):

``"gdp"``
    Exact composition of non-subsampled Gaussian releases: the plan is
    ``mu``-GDP with ``mu = sqrt(sum_t (Delta_t / sigma_t)**2)`` and
    ``epsilon(delta)`` solves the analytic Gaussian formula of Balle and Wang
    (2018), ``delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``.
``"pld"``
    Privacy loss distributions on a grid (:mod:`dpglm.privacy.pld`, numpy
    only), numerically tight and pessimistic: Gaussian, Laplace,
    Poisson-subsampled Gaussian (under either relation, with dp-accounting's
    dominating pairs), and any pure-DP event through the binary randomized
    response that dominates every ``epsilon``-DP mechanism.
``"rdp"``
    Renyi DP (dp-accounting), also for sampling without replacement and zCDP
    events; the only accountant of repeat-and-select hyperparameter searches
    (:class:`~dpglm.privacy.events.RepeatAndSelectEvent`, Papernot and Steinke
    2022), which every other accountant refuses. Pure-DP events take the Renyi
    curve of randomized response, valid for every ``epsilon``-DP pair under
    either relation, and replace-one Poisson sampling a curve computed here
    (:mod:`dpglm.privacy.rdp_curves`).
``"zcdp"`` / ``"zcdp-bun-steinke"``
    Zero-concentrated DP: ``rho`` adds up (Gaussian ``1 / (2 z**2)``, pure
    ``epsilon``-DP ``epsilon**2 / 2``, Gumbel noisy max ``epsilon**2 / 8``) and is
    converted with Canonne, Kamath and Steinke (2020) (tight) or with the
    ``rho + 2 sqrt(rho log(1/delta))`` of Bun and Steinke used by the DP-AGD paper.
``"advanced"``
    Advanced composition of pure-DP events,
    ``sqrt(2 log(1/delta) sum_i eps_i**2) + sum_i eps_i (e^eps_i - 1)``, which
    for ``2T`` identical events is formula (2) of the DP-GCD paper's appendix A.
``"basic"``
    Basic composition of pure-DP events: the epsilons add up (exact at ``delta = 0``).
``"auto"`` (default)
    The smallest epsilon among the accountants valid for the plan (each is an
    upper bound, so their minimum is one too); exact Gaussian composition alone
    when it applies, since nothing valid is tighter; PLD only while the closed
    forms stay below ``EXPENSIVE_EPSILON_LIMIT``.

A :class:`~dpglm.privacy.events.ThresholdEvent` costs a fixed delta and no
epsilon: every accountant accounts the plan's other events at ``delta`` minus
:func:`fixed_delta` (basic composition of approximate DP: ``(e1, d1)`` then
``(e2, d2)`` is ``(e1 + e2, d1 + d2)``), and gives ``inf`` when nothing remains.

Noise multipliers are noise scale over sensitivity under the plan's own
neighbouring relation (:mod:`dpglm.privacy.events`), so non-subsampled events
need no relation-specific analysis; dp-accounting's own conventions differ
between its accountants, so this module feeds it explicit dominating pairs.
dp-accounting is imported only when the RDP accountant runs.

Examples
--------
>>> from dpglm.privacy.accounting import compute_epsilon
>>> from dpglm.privacy.events import GaussianEvent, PrivacyPlan
>>> plan = PrivacyPlan([GaussianEvent(noise_multiplier=50.0, count=10_000)])
>>> round(compute_epsilon(plan, 1e-6, "gdp"), 4)
10.9972
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import log_ndtr

from dpglm.exceptions import UnsupportedPlanError
from dpglm.privacy.events import (
    GaussianEvent,
    LaplaceEvent,
    NoisyMaxEvent,
    NonPrivateEvent,
    PrivacyPlan,
    PureDPEvent,
    RepeatAndSelectEvent,
    SampledGaussianEvent,
    ThresholdEvent,
    ZCDPEvent,
)
from dpglm.privacy.rdp_curves import poisson_replace_one_rdp, pure_dp_rdp, wor_gaussian_rdp
from dpglm.privacy.roots import find_root, minimize_bounded
from dpglm.privacy.targets import check_delta

#: accountants that compute numerically, in seconds rather than microseconds
EXPENSIVE = ("pld",)

#: "auto" skips the numerical accountants once the closed forms exceed this epsilon:
#: their cost grows with the privacy loss (14 s at epsilon 600) while the closed
#: forms are then within about 10% of tight, and such a guarantee means little
EXPENSIVE_EPSILON_LIMIT = 50.0


def active_events(plan):
    """The events that cost anything; ``None`` if some event is not private at all.

    A repeat-and-select event is kept with the active part of its base plan,
    dropped when that part is empty (repeating a free mechanism is free), and
    makes the plan non-private when its base plan is. Threshold events are
    left out: they cost a fixed delta (:func:`fixed_delta`), which
    :meth:`Accountant.epsilon` takes off before the others are accounted.
    """
    events = []
    for event in plan.events:
        if event.count == 0 or isinstance(event, ThresholdEvent):
            continue
        if isinstance(event, RepeatAndSelectEvent):
            inner = active_events(event.inner)
            if inner is None:
                return None
            if inner:
                events.append(
                    replace(event, inner=PrivacyPlan(tuple(inner), event.inner.neighbouring))
                )
            continue
        if isinstance(event, NonPrivateEvent):
            return None
        if getattr(event, "noise_multiplier", None) == 0.0:
            return None
        if getattr(event, "noise_multiplier", None) == math.inf:
            continue
        events.append(event)
    return events


def fixed_delta(plan) -> float:
    """The delta the threshold events of ``plan`` cost whatever the noise: ``sum count * delta``.

    Examples
    --------
    >>> from dpglm.privacy.events import GaussianEvent
    >>> events = [GaussianEvent(noise_multiplier=1.0), ThresholdEvent(delta=1e-7, count=3)]
    >>> round(fixed_delta(PrivacyPlan(events)), 12)
    3e-07
    """
    return math.fsum(e.count * e.delta for e in plan.events if isinstance(e, ThresholdEvent))


def _pure_epsilon(event):
    """Per-application epsilon of a pure-DP event, or None if it is not pure DP."""
    if isinstance(event, LaplaceEvent | NoisyMaxEvent | PureDPEvent):
        return event.epsilon
    return None


class Accountant:
    """Base class: maps a plan to an epsilon at a given delta.

    Subclasses implement ``_reason(events, plan)`` (why a plan is not
    supported, or None) and ``_epsilon(events, plan, delta)``.
    """

    name = "accountant"

    #: whether the accountant analyses :class:`RepeatAndSelectEvent` (only Renyi DP does)
    repeat_and_select = False

    def supports(self, plan: PrivacyPlan) -> bool:
        """Whether this accountant has a valid analysis of ``plan``."""
        events = active_events(plan)
        return events is None or self._why_not(events, plan) is None

    def check(self, plan: PrivacyPlan) -> None:
        """Raise :class:`UnsupportedPlanError` if ``plan`` is not supported."""
        events = active_events(plan)
        if events is not None:
            reason = self._why_not(events, plan)
            if reason is not None:
                raise UnsupportedPlanError(f"the {self.name!r} accountant {reason}")

    def _why_not(self, events, plan):
        if not self.repeat_and_select and any(isinstance(e, RepeatAndSelectEvent) for e in events):
            return (
                "has no analysis of repeat-and-select (Papernot and Steinke 2022); "
                "only the 'rdp' accountant accounts it"
            )
        return self._reason(events, plan)

    def epsilon(self, plan: PrivacyPlan, delta: float) -> float:
        """Epsilon of ``plan`` at ``delta`` (``inf`` for a non-private plan).

        The other events are accounted at ``delta`` minus the threshold
        events' fixed delta (:func:`fixed_delta`); ``inf`` when that leaves nothing.
        """
        check_delta(delta)
        self.check(plan)
        events = active_events(plan)
        if events is None:
            return math.inf
        fixed = fixed_delta(plan)
        if fixed > 0.0:
            if delta <= fixed:
                return math.inf
            delta = delta - fixed
        if not events:
            return 0.0
        return max(0.0, float(self._epsilon(events, plan, delta)))

    def _reason(self, events, plan):
        raise NotImplementedError

    def _epsilon(self, events, plan, delta):
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


# -- exact Gaussian composition -------------------------------------------------------------


def gaussian_mu(events) -> float:
    """``mu = sqrt(sum count / z**2)`` of non-subsampled Gaussian events."""
    return math.sqrt(sum(e.count / e.noise_multiplier**2 for e in events))


def gdp_log_delta(mu: float, eps: float) -> float:
    """``log delta(eps)`` of a ``mu``-GDP mechanism, computed in log space.

    Examples
    --------
    >>> round(math.exp(gdp_log_delta(1.0, 1.0)), 6)
    0.126937
    """
    log_a = log_ndtr(-eps / mu + mu / 2)
    log_b = eps + log_ndtr(-eps / mu - mu / 2)
    if log_b >= log_a:
        return -math.inf
    return float(log_a + math.log1p(-math.exp(log_b - log_a)))


def gdp_epsilon(mu: float, delta: float) -> float:
    """Smallest ``eps`` with ``delta(eps) <= delta`` for a ``mu``-GDP mechanism.

    Examples
    --------
    >>> round(gdp_epsilon(1.0, 1e-5), 4)
    4.3772
    """
    if mu == 0:
        return 0.0
    if not math.isfinite(mu) or delta == 0:
        return math.inf
    target = math.log(delta)
    if gdp_log_delta(mu, 0.0) <= target:
        return 0.0
    hi = mu * mu / 2 + 2 * mu + 1.0
    while gdp_log_delta(mu, hi) > target:
        hi *= 2
    return find_root(lambda e: gdp_log_delta(mu, e) - target, 0.0, hi, xtol=1e-14, rtol=1e-14)


class GDPAccountant(Accountant):
    """Exact composition of non-subsampled Gaussian releases (Gaussian DP)."""

    name = "gdp"

    def _reason(self, events, plan):
        if all(isinstance(e, GaussianEvent) for e in events):
            return None
        return "only composes non-subsampled Gaussian releases"

    def _epsilon(self, events, plan, delta):
        return gdp_epsilon(gaussian_mu(events), delta)


# -- privacy loss distributions -------------------------------------------------------------


class PLDAccountant(Accountant):
    """Privacy loss distributions on a grid (:mod:`dpglm.privacy.pld`), pessimistic.

    Parameters
    ----------
    value_discretization_interval : float, optional
        The grid's spacing; by default the one of
        :func:`~dpglm.privacy.pld.step_for` at the plan's epsilon, which keeps
        the discretisation's overstatement of epsilon near 0.2%.
    """

    name = "pld"

    def __init__(self, value_discretization_interval: float | None = None):
        self.value_discretization_interval = value_discretization_interval

    def _reason(self, events, plan):
        for e in events:
            if isinstance(e, ZCDPEvent):
                return "has no privacy loss distribution for a generic zCDP event"
            if isinstance(e, SampledGaussianEvent) and e.sampling != "poisson":
                return "does not analyse sampling without replacement (use 'rdp')"
        return None

    def _epsilon(self, events, plan, delta):
        from dpglm.privacy.pld import plan_epsilon

        return plan_epsilon(events, plan.neighbouring, delta, self.value_discretization_interval)

    def __repr__(self) -> str:
        step = self.value_discretization_interval
        return "PLDAccountant()" if step is None else f"PLDAccountant({step!r})"


# -- Renyi DP (dp-accounting) ----------------------------------------------------------------


class RDPAccountant(Accountant):
    """Renyi DP through dp-accounting, on its default grid of orders.

    dp-accounting composes the Gaussian, Laplace, zCDP, sampled-without-
    replacement and add/remove Poisson events, and repeat-and-select. Two
    curves come from :mod:`dpglm.privacy.rdp_curves` instead: every generic
    pure-DP event (noisy max, ``PureDPEvent``) takes the Renyi
    divergence of randomized response, a bound for every ``epsilon``-DP pair
    under either relation, and a Poisson-subsampled Gaussian of a replace-one
    plan takes its replace-one divergence, which dp-accounting's RDP
    accountant does not compute.
    """

    name = "rdp"
    repeat_and_select = True

    def __init__(self, orders=None):
        self.orders = orders

    def _reason(self, events, plan):
        return None

    def _epsilon(self, events, plan, delta):
        import dp_accounting

        relation = dp_accounting.NeighboringRelation
        replace_one = plan.neighbouring == "replace_one"
        neighbouring = relation.REPLACE_ONE if replace_one else relation.ADD_OR_REMOVE_ONE
        accountant = _curve_accountant(self.orders, neighbouring)
        with _quiet_absl():
            for e in events:
                accountant.compose(_rdp_event(e, plan.neighbouring))
            if delta == 0:
                return math.inf
            return accountant.get_epsilon(delta)


def _rdp_event(event, neighbouring):
    """``event`` as a dp-accounting event for the RDP accountant of a ``neighbouring`` plan."""
    import dp_accounting
    from dp_accounting import dp_event

    if isinstance(event, RepeatAndSelectEvent):
        inner = dp_accounting.ComposedDpEvent(
            [_rdp_event(e, neighbouring) for e in event.inner.events]
        )
        one = dp_event.RepeatAndSelectDpEvent(inner, event.mean, event.shape)
        return one if event.count == 1 else dp_accounting.SelfComposedDpEvent(one, event.count)
    curve = None
    if isinstance(event, NoisyMaxEvent) and event.noise == "gumbel":
        # epsilon-DP and epsilon^2 / 8-zCDP (bounded range): both bound every order
        curve = functools.partial(_bounded_range_rdp, event.epsilon, event.rho)
    elif isinstance(event, NoisyMaxEvent | PureDPEvent):
        # a generic epsilon-DP mechanism; Laplace releases keep dp-accounting's exact
        # Laplace curve (with L1 sensitivity its worst pair moves one coordinate)
        curve = functools.partial(pure_dp_rdp, event.epsilon)
    elif (
        isinstance(event, SampledGaussianEvent)
        and event.sampling == "poisson"
        and neighbouring == "replace_one"
    ):
        curve = functools.partial(
            poisson_replace_one_rdp, event.sampling_rate, event.noise_multiplier
        )
    elif isinstance(event, SampledGaussianEvent) and event.sampling == "without_replacement":
        # dp-accounting's bound, computed for all orders at once
        curve = functools.partial(wor_gaussian_rdp, event.rate, event.noise_multiplier)
    if curve is None:
        return event.to_dp_event()
    one = _curve_event(curve)
    return one if event.count == 1 else dp_accounting.SelfComposedDpEvent(one, event.count)


def _bounded_range_rdp(epsilon, rho, orders):
    return np.minimum(pure_dp_rdp(epsilon, orders), rho * np.asarray(orders, dtype=float))


@functools.cache
def _curve_classes():
    """A dp-accounting event that carries its own Renyi curve, and the accountant that reads it.

    Built on first use, so that dp-accounting is imported only when an RDP
    accounting runs.
    """
    from dp_accounting import dp_event
    from dp_accounting.rdp import RdpAccountant

    class CurveDpEvent(dp_event.DpEvent):
        """A mechanism given by its Renyi DP at every order (``curve(orders) -> array``)."""

        def __init__(self, curve):
            object.__setattr__(self, "curve", curve)

    class CurveRdpAccountant(RdpAccountant):
        """dp-accounting's RDP accountant, composing :class:`CurveDpEvent` as well."""

        def _maybe_compose(self, event, count, do_compose):
            if isinstance(event, CurveDpEvent):
                if do_compose:
                    self._rdp += count * np.asarray(event.curve(self._orders), dtype=float)
                return None
            return super()._maybe_compose(event, count, do_compose)

    return CurveDpEvent, CurveRdpAccountant


def _curve_event(curve):
    return _curve_classes()[0](curve)


def _curve_accountant(orders, neighbouring):
    return _curve_classes()[1](orders, neighboring_relation=neighbouring)


@contextlib.contextmanager
def _quiet_absl():
    # dp-accounting logs a warning for every Renyi order whose series does not
    # converge (large sampling rates at small orders) and drops that order, which
    # keeps the bound valid: during calibration that is hundreds of lines of noise.
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(max(level, logging.ERROR))
    try:
        yield
    finally:
        logger.setLevel(level)


# -- zero-concentrated DP --------------------------------------------------------------------


def zcdp_rho(events) -> float:
    """Total ``rho`` of zCDP-accountable events (no subsampling)."""
    rho = 0.0
    for e in events:
        if isinstance(e, GaussianEvent):
            one = 0.5 / e.noise_multiplier**2
        elif isinstance(e, NoisyMaxEvent | ZCDPEvent):
            one = e.rho
        else:
            one = _pure_epsilon(e) ** 2 / 2
        rho += e.count * one
    return rho


def zcdp_epsilon_bun_steinke(rho: float, delta: float) -> float:
    """``rho + 2 sqrt(rho log(1/delta))`` (Bun and Steinke 2016, Prop. 1.3).

    Examples
    --------
    >>> round(zcdp_epsilon_bun_steinke(0.1, 1e-5), 4)
    2.246
    """
    if delta == 0:
        return math.inf if rho > 0 else 0.0
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def zcdp_epsilon_cks(rho: float, delta: float) -> float:
    """Tight conversion of Canonne, Kamath and Steinke (2020), Corollary 13.

    ``eps = inf_{a > 1} a rho + log(1/delta)/(a - 1) + log(1 - 1/a) - log(a)/(a - 1)``.

    Examples
    --------
    >>> round(zcdp_epsilon_cks(0.1, 1e-5), 4)
    1.9142
    """
    if rho == 0:
        return 0.0
    if delta == 0 or not math.isfinite(rho):
        return math.inf
    log_inv_delta = math.log(1.0 / delta)

    def bound(log_am1):
        am1 = math.exp(log_am1)
        a = 1.0 + am1
        return a * rho + (log_inv_delta - math.log(a)) / am1 + math.log1p(-1.0 / a)

    # the minimiser is near a = 1 + sqrt(log(1/delta) / rho); search around it on a log scale
    centre = 0.5 * math.log(log_inv_delta / rho)
    best = minimize_bounded(bound, centre - 12.0, centre + 12.0, xtol=1e-10)
    # every a gives a valid bound; never worse than the classical conversion
    return min(bound(best), zcdp_epsilon_bun_steinke(rho, delta))


class ZCDPAccountant(Accountant):
    """zCDP composition with the Canonne-Kamath-Steinke or the Bun-Steinke conversion."""

    def __init__(self, conversion: str = "cks"):
        if conversion not in ("cks", "bun-steinke"):
            raise ValueError(f"conversion must be 'cks' or 'bun-steinke', got {conversion!r}")
        self.conversion = conversion
        self.name = "zcdp" if conversion == "cks" else "zcdp-bun-steinke"

    def _reason(self, events, plan):
        if any(isinstance(e, SampledGaussianEvent) for e in events):
            return "has no subsampling amplification (use 'rdp' or 'pld')"
        return None

    def _epsilon(self, events, plan, delta):
        rho = zcdp_rho(events)
        if self.conversion == "cks":
            return zcdp_epsilon_cks(rho, delta)
        return zcdp_epsilon_bun_steinke(rho, delta)

    def __repr__(self) -> str:
        return f"ZCDPAccountant(conversion={self.conversion!r})"


# -- advanced composition --------------------------------------------------------------------


def advanced_composition_epsilon(epsilons, counts, delta: float) -> float:
    """Advanced composition of pure-DP mechanisms (Dwork, Rothblum and Vadhan 2010).

    Examples
    --------
    >>> # formula (2) of the DP-GCD paper: 2T releases at eps' each
    >>> T, eps1, delta = 10, 0.05, 1e-6
    >>> lhs = advanced_composition_epsilon([eps1], [2 * T], delta)
    >>> rhs = math.sqrt(4 * T * math.log(1 / delta)) * eps1 + 2 * T * eps1 * math.expm1(eps1)
    >>> math.isclose(lhs, rhs)
    True
    """
    eps = np.asarray(epsilons, dtype=float)
    k = np.asarray(counts, dtype=float)
    if delta == 0:
        return math.inf if np.any(eps * k > 0) else 0.0
    return float(
        math.sqrt(2.0 * math.log(1.0 / delta) * np.sum(k * eps**2))
        + np.sum(k * eps * np.expm1(eps))
    )


class _PureDPAccountant(Accountant):
    """Accountants of plans made only of pure-DP events."""

    def _reason(self, events, plan):
        if all(_pure_epsilon(e) is not None for e in events):
            return None
        return "only composes pure-DP events (Laplace, noisy max, pure DP)"


class AdvancedCompositionAccountant(_PureDPAccountant):
    """Advanced composition of pure-DP events (formula (2) of the DP-GCD paper)."""

    name = "advanced"

    def _epsilon(self, events, plan, delta):
        return advanced_composition_epsilon(
            [_pure_epsilon(e) for e in events], [e.count for e in events], delta
        )


class BasicCompositionAccountant(_PureDPAccountant):
    """Basic composition of pure-DP events: the epsilons add up, at any delta."""

    name = "basic"

    def _epsilon(self, events, plan, delta):
        return math.fsum(e.count * _pure_epsilon(e) for e in events)


# -- choosing ------------------------------------------------------------------------------

ACCOUNTANTS = ("gdp", "pld", "rdp", "zcdp", "zcdp-bun-steinke", "advanced", "basic")


def get_accountant(name: str | Accountant) -> Accountant:
    """An accountant from its name (see the module docstring) or an instance.

    Examples
    --------
    >>> get_accountant("zcdp-bun-steinke")
    ZCDPAccountant(conversion='bun-steinke')
    """
    if isinstance(name, Accountant):
        return name
    factories = {
        "gdp": GDPAccountant,
        "pld": PLDAccountant,
        "rdp": RDPAccountant,
        "zcdp": ZCDPAccountant,
        "zcdp-bun-steinke": lambda: ZCDPAccountant("bun-steinke"),
        "advanced": AdvancedCompositionAccountant,
        "basic": BasicCompositionAccountant,
    }
    try:
        return factories[name]()
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown accountant {name!r}; expected 'auto' or one of {ACCOUNTANTS}"
        ) from None


@dataclass(frozen=True)
class Accounting:
    """The result of accounting a plan.

    Attributes
    ----------
    epsilon : float
        The epsilon at ``delta`` of the chosen accountant.
    delta : float
    accountant : str
        The accountant that gave ``epsilon`` (for ``"auto"``, the tightest).
    by_accountant : dict
        Epsilon of every accountant consulted (``"auto"`` consults all valid ones).
    """

    epsilon: float
    delta: float
    accountant: str
    by_accountant: dict


def account(plan: PrivacyPlan, delta: float, accountant="auto") -> Accounting:
    """Account ``plan`` at ``delta`` with one accountant, or the tightest valid one.

    Examples
    --------
    >>> from dpglm.privacy.events import GaussianEvent, PrivacyPlan
    >>> result = account(PrivacyPlan([GaussianEvent(noise_multiplier=5.0, count=4)]), 1e-5)
    >>> result.accountant
    'gdp'
    """
    check_delta(delta)
    if active_events(plan) is None:
        return Accounting(math.inf, delta, "none", {})
    if accountant != "auto":
        acc = get_accountant(accountant)
        eps = acc.epsilon(plan, delta)
        return Accounting(eps, delta, acc.name, {acc.name: eps})
    values = {}
    names = sorted(auto_accountants(plan), key=lambda name: name in EXPENSIVE)
    rest = delta - fixed_delta(plan)
    if names == ["pld"] and rest > 0:
        # no closed form tells whether epsilon is huge: the Gaussian approximation does
        from dpglm.privacy.pld import approximate_mu

        if gdp_epsilon(approximate_mu(active_events(plan)), rest) > EXPENSIVE_EPSILON_LIMIT:
            names = large_epsilon_accountants(plan, names)
    for name in names:
        if name in EXPENSIVE and values and min(values.values()) > EXPENSIVE_EPSILON_LIMIT:
            continue
        values[name] = get_accountant(name).epsilon(plan, delta)
    best = min(values, key=values.get)
    return Accounting(values[best], delta, best, values)


def auto_accountants(plan: PrivacyPlan) -> list:
    """The accountants ``"auto"`` consults for ``plan``.

    All valid ones, except that exact Gaussian composition, when it applies,
    is the true privacy curve: no valid accountant can be tighter; and that
    Renyi DP is left out where the privacy loss distributions apply, unless the
    plan selects with Gumbel noise: both analyse the same dominating pairs, the
    distributions within their grid's 0.2%, and Renyi DP's conversion to
    ``(epsilon, delta)`` loses more (5-25% on DP-SGD's plans).

    Examples
    --------
    >>> from dpglm.privacy.events import GaussianEvent, LaplaceEvent, PrivacyPlan
    >>> auto_accountants(PrivacyPlan([GaussianEvent(noise_multiplier=2.0)]))
    ['gdp']
    >>> auto_accountants(PrivacyPlan([LaplaceEvent(noise_multiplier=2.0)]))
    ['pld', 'zcdp', 'zcdp-bun-steinke', 'advanced', 'basic']
    """
    names = valid_accountants(plan)
    if not names:
        raise UnsupportedPlanError("no accountant supports this plan")
    if "gdp" in names:
        return ["gdp"]
    if "pld" in names and not _bounded_range(plan):
        # PLD analyses the same dominating pairs as Renyi DP, within its grid's 0.2%,
        # and Renyi DP's conversion loses more than that: it cannot win
        return [name for name in names if name != "rdp"]
    return names


def large_epsilon_accountants(plan: PrivacyPlan, names: list) -> list:
    """``names`` for a target epsilon above ``EXPENSIVE_EPSILON_LIMIT``: Renyi DP in place
    of the privacy loss distributions, whose grid grows with epsilon (the closed forms
    are then within about 10% of tight, and such a guarantee means little).

    Examples
    --------
    >>> from dpglm.privacy.events import SampledGaussianEvent
    >>> plan = PrivacyPlan([SampledGaussianEvent(noise_multiplier=1.0, sampling_rate=0.1)])
    >>> large_epsilon_accountants(plan, auto_accountants(plan))
    ['rdp']
    """
    if "pld" not in names or not get_accountant("rdp").supports(plan):
        return names
    return [name for name in names if name != "pld"] + ["rdp"]


def _bounded_range(plan) -> bool:
    """Whether the plan selects with Gumbel noise, whose bounded range Renyi DP and zCDP
    use and the privacy loss distributions (generic pure DP) do not."""
    return any(
        isinstance(e, NoisyMaxEvent) and e.noise == "gumbel" for e in active_events(plan) or []
    )


def compute_epsilon(plan: PrivacyPlan, delta: float, accountant="auto") -> float:
    """Epsilon of ``plan`` at ``delta``; see :func:`account`.

    Examples
    --------
    >>> from dpglm.privacy.events import LaplaceEvent, PrivacyPlan
    >>> round(compute_epsilon(PrivacyPlan([LaplaceEvent(noise_multiplier=2.0, count=3)]), 0.0), 9)
    1.5
    """
    return account(plan, delta, accountant).epsilon


def valid_accountants(plan: PrivacyPlan) -> list:
    """Names of the accountants that support ``plan``."""
    return [name for name in ACCOUNTANTS if get_accountant(name).supports(plan)]
