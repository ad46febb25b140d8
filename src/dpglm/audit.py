"""Empirical privacy auditing: statistical lower bounds on epsilon.

A black-box audit runs a mechanism many times on two neighbouring inputs and
bounds how differently its outputs behave. If a mechanism is
``(epsilon, delta)``-DP, every set ``S`` of outputs satisfies
``p1 <= exp(epsilon) * p0 + delta`` with ``p0 = P[M(D0) in S]`` and
``p1 = P[M(D1) in S]`` (in both directions, since DP is symmetric). With
one-sided Clopper-Pearson bounds ``p0 <= p0_up`` and ``p1 >= p1_lo``, each
holding with probability ``1 - alpha / 2``,

    ``eps_lb = log((p1_lo - delta) / p0_up)``

is a lower bound on the true epsilon with probability at least ``1 - alpha``,
provided ``S`` was chosen without looking at the samples that give the counts.
The audit **fails** a claim when ``eps_lb > epsilon_claimed``, which happens to
a correct implementation with probability at most ``alpha``. Several sets are
tested with a Bonferroni split of ``alpha``.

For Gaussian mechanisms, :func:`mu_lower_bound` bounds the Gaussian-DP
parameter ``mu`` instead (a ``mu``-GDP mechanism has
``FNR >= Phi(Phi^-1(1 - FPR) - mu)`` for every test), which detects much
smaller calibration errors for the same number of samples.

:func:`audit_epsilon` (continuous statistics) and :func:`audit_event`
(discrete outputs) split the samples in two: a pilot, which alone chooses the
orientation and the sets to test, then fresh evaluation samples, which alone
give the counts. A passing audit never proves privacy: it only fails to
refute the claim for the inputs and events it tried.

Examples
--------
>>> import numpy as np
>>> from dpglm.audit import audit_epsilon
>>> from dpglm.privacy.mechanisms import laplace_mechanism, make_noise_source
>>> def sample(value, n, rng):
...     return laplace_mechanism(
...         np.full(n, value), sensitivity=1.0, noise_multiplier=1.0, source=make_noise_source(rng)
...     )
>>> bound = audit_epsilon(sample, 0.0, 1.0, n=20_000, delta=0.0, rng=0)
>>> bool(0.5 < bound.epsilon <= 1.0)
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from dpglm.privacy.targets import check_delta

__all__ = [
    "EpsilonBound",
    "MuBound",
    "ThresholdPlan",
    "audit_epsilon",
    "audit_event",
    "choose_thresholds",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "mu_lower_bound",
]

#: the smallest tail probability of a threshold grid is this many expected
#: evaluation counts over the number of evaluation samples
MIN_TAIL_COUNT = 30
#: the largest tail probability of a threshold grid
MAX_TAIL_PROBABILITY = 0.2
#: audit_event refuses statistics with more distinct pilot outputs than this
MAX_EVENT_VALUES = 1000


def _check_alpha(alpha) -> float:
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    return alpha


def _counts(k, n):
    k = np.asarray(k)
    n = np.asarray(n)
    if not (np.issubdtype(k.dtype, np.integer) and np.issubdtype(n.dtype, np.integer)):
        raise TypeError("k and n must be integers")
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise ValueError(f"counts must satisfy 0 <= k <= n and n >= 1, got k={k}, n={n}")
    return k, n


def _scalar_or_array(value: np.ndarray):
    return float(value) if value.ndim == 0 else value


def clopper_pearson_upper(k, n, alpha):
    """One-sided exact upper confidence bound on a binomial proportion.

    With probability at least ``1 - alpha`` over ``k ~ Binomial(n, p)``,
    ``p <= clopper_pearson_upper(k, n, alpha)``.

    Parameters
    ----------
    k : int or array_like of int
        Successes, ``0 <= k <= n``.
    n : int or array_like of int
        Trials, ``n >= 1``.
    alpha : float
        Error probability in ``(0, 1)``.

    Returns
    -------
    float or ndarray
        The ``1 - alpha`` quantile of ``Beta(k + 1, n - k)``, or 1 when ``k = n``.

    Examples
    --------
    >>> round(clopper_pearson_upper(5, 10, 0.025), 6)
    0.812914
    >>> round(clopper_pearson_upper(0, 10, 0.05), 6)  # 1 - 0.05 ** (1 / 10)
    0.258866
    """
    alpha = _check_alpha(alpha)
    k, n = _counts(k, n)
    full = k == n
    # the b parameter is kept positive where the closed-form edge case applies
    upper = stats.beta.isf(alpha, k + 1, np.where(full, 1, n - k))
    return _scalar_or_array(np.where(full, 1.0, upper))


def clopper_pearson_lower(k, n, alpha):
    """One-sided exact lower confidence bound on a binomial proportion.

    With probability at least ``1 - alpha`` over ``k ~ Binomial(n, p)``,
    ``p >= clopper_pearson_lower(k, n, alpha)``.

    Parameters
    ----------
    k : int or array_like of int
        Successes, ``0 <= k <= n``.
    n : int or array_like of int
        Trials, ``n >= 1``.
    alpha : float
        Error probability in ``(0, 1)``.

    Returns
    -------
    float or ndarray
        The ``alpha`` quantile of ``Beta(k, n - k + 1)``, or 0 when ``k = 0``.

    Examples
    --------
    >>> round(clopper_pearson_lower(5, 10, 0.025), 6)
    0.187086
    >>> round(clopper_pearson_lower(10, 10, 0.05), 6)  # 0.05 ** (1 / 10)
    0.741134
    """
    alpha = _check_alpha(alpha)
    k, n = _counts(k, n)
    empty = k == 0
    lower = stats.beta.ppf(alpha, np.where(empty, 1, k), n - k + 1)
    return _scalar_or_array(np.where(empty, 0.0, lower))


def _statistics(values, name: str) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {values.shape}")
    if np.isnan(values).any():
        raise ValueError(f"{name} contains NaN")
    return values


def _count_above(values: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    return values.size - np.searchsorted(np.sort(values), thresholds, side="right")


def _threshold_bounds(stat0, stat1, thresholds, delta, alpha_each):
    """Per threshold: eps_lb, k0, k1, p0_up, p1_lo, each CP bound at ``alpha_each / 2``."""
    k0 = _count_above(stat0, thresholds)
    k1 = _count_above(stat1, thresholds)
    p0_up = np.atleast_1d(clopper_pearson_upper(k0, stat0.size, alpha_each / 2))
    p1_lo = np.atleast_1d(clopper_pearson_lower(k1, stat1.size, alpha_each / 2))
    with np.errstate(divide="ignore"):
        ratio = np.log(np.maximum(p1_lo - delta, 0.0) / p0_up)
    eps = np.where(p1_lo > delta, ratio, 0.0)
    return eps, k0, k1, p0_up, p1_lo


@dataclass(frozen=True)
class EpsilonBound:
    """A lower bound on epsilon and the test that gave it.

    Roles: side 1 is the input whose statistic is expected to be larger (more
    often in the set); side 0 the other. After an audit that swapped the
    inputs (``swapped=True``), side 0 is ``input1`` and side 1 is ``input0``.

    Attributes
    ----------
    epsilon : float
        The lower bound (``>= 0``): with probability ``>= 1 - alpha`` the true
        epsilon at ``delta`` is at least this.
    event : str
        The set of outputs that attains it, e.g. ``"statistic > 1.2"``.
    threshold : float
        Its threshold (threshold tests) or output value (event tests).
    k0, n0, k1, n1 : int
        Evaluation counts in the set, and sample sizes, of sides 0 and 1.
    p0_upper, p1_lower : float
        Clopper-Pearson bounds on the probabilities of the set.
    delta, alpha : float
        The delta the bound is for, and the total error probability.
    n_tests : int
        The number of sets tested (``alpha`` is split among them).
    swapped : bool
        Whether the roles of the two inputs were swapped.
    """

    epsilon: float
    event: str
    threshold: float
    k0: int
    n0: int
    k1: int
    n1: int
    p0_upper: float
    p1_lower: float
    delta: float
    alpha: float
    n_tests: int
    swapped: bool = False

    def exceeds(self, epsilon: float) -> bool:
        """Whether the bound refutes an ``epsilon`` claim (at this ``delta``)."""
        return self.epsilon > epsilon

    def __str__(self):
        roles = "input1 vs input0" if self.swapped else "input0 vs input1"
        return (
            f"eps_lb={self.epsilon:.4f} at delta={self.delta:g} (alpha={self.alpha:g}, "
            f"{self.n_tests} tests) for {self.event}: side0 {self.k0}/{self.n0} "
            f"(p0 <= {self.p0_upper:.4g}), side1 {self.k1}/{self.n1} "
            f"(p1 >= {self.p1_lower:.4g}), sides {roles}"
        )


def epsilon_lower_bound(stat0, stat1, thresholds, *, delta=0.0, alpha=1e-6) -> EpsilonBound:
    """Lower bound on epsilon from the sets ``{statistic > t}`` for fixed thresholds ``t``.

    For each threshold, ``p0_up = CP_upper(k0, n0, a / 2)`` and
    ``p1_lo = CP_lower(k1, n1, a / 2)`` with ``a = alpha / len(thresholds)``
    (Bonferroni), and ``eps_lb = log((p1_lo - delta) / p0_up)``, or 0 when
    ``p1_lo <= delta``. The result is the largest, floored at 0.

    The thresholds and the orientation (which side is expected to be larger)
    must be fixed without looking at ``stat0`` and ``stat1``, e.g. from a
    separate pilot (:func:`choose_thresholds`); otherwise the bound is invalid.

    Parameters
    ----------
    stat0, stat1 : array_like of shape (n0,) and (n1,)
        The statistic on independent runs of the mechanism on each input;
        ``stat1`` is the side expected to be larger.
    thresholds : float or array_like
        The thresholds ``t``.
    delta : float, default=0.0
        The delta of the claim being audited.
    alpha : float, default=1e-6
        Total probability that the bound exceeds the true epsilon.

    Returns
    -------
    EpsilonBound

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> stat0, stat1 = rng.laplace(0.0, 1.0, 100_000), rng.laplace(1.0, 1.0, 100_000)
    >>> bound = epsilon_lower_bound(stat0, stat1, [1.0, 2.0])
    >>> bool(0.8 < bound.epsilon <= 1.0), bound.n_tests
    (True, 2)
    """
    delta = check_delta(delta)
    alpha = _check_alpha(alpha)
    stat0 = _statistics(stat0, "stat0")
    stat1 = _statistics(stat1, "stat1")
    thresholds = np.atleast_1d(np.asarray(thresholds, dtype=np.float64))
    if thresholds.ndim != 1 or thresholds.size == 0 or np.isnan(thresholds).any():
        raise ValueError("thresholds must be a non-empty 1-D array without NaN")
    per_test = _threshold_bounds(stat0, stat1, thresholds, delta, alpha / thresholds.size)
    eps, k0, k1, p0_up, p1_lo = per_test
    best = int(np.argmax(eps))
    t = float(thresholds[best])
    n0, n1 = stat0.size, stat1.size
    return EpsilonBound(
        epsilon=max(float(eps[best]), 0.0),
        event=f"statistic > {t:.6g}",
        threshold=t,
        k0=int(k0[best]),
        n0=n0,
        k1=int(k1[best]),
        n1=n1,
        p0_upper=float(p0_up[best]),
        p1_lower=float(p1_lo[best]),
        delta=delta,
        alpha=alpha,
        n_tests=int(thresholds.size),
    )


@dataclass(frozen=True)
class MuBound:
    """A lower bound on the Gaussian-DP parameter ``mu`` and the test that gave it.

    Attributes
    ----------
    mu : float
        The lower bound (``>= 0``): with probability ``>= 1 - alpha`` the
        mechanism is not ``mu'``-GDP for any ``mu' < mu``.
    threshold : float
        The test rejects side 0 when the statistic exceeds it.
    k0, n0, k1, n1 : int
        Counts above the threshold, and sample sizes, of sides 0 and 1.
    fpr_upper, fnr_upper : float
        Clopper-Pearson upper bounds on the false positive rate
        ``P0[stat > t]`` and the false negative rate ``P1[stat <= t]``.
    alpha : float
    """

    mu: float
    threshold: float
    k0: int
    n0: int
    k1: int
    n1: int
    fpr_upper: float
    fnr_upper: float
    alpha: float

    def exceeds(self, mu: float) -> bool:
        """Whether the bound refutes a ``mu``-GDP claim."""
        return self.mu > mu

    def __str__(self):
        return (
            f"mu_lb={self.mu:.4f} (alpha={self.alpha:g}) at threshold {self.threshold:.6g}: "
            f"FPR {self.k0}/{self.n0} (<= {self.fpr_upper:.4g}), "
            f"FNR {self.n1 - self.k1}/{self.n1} (<= {self.fnr_upper:.4g})"
        )


def mu_lower_bound(stat0, stat1, threshold, *, alpha=1e-6) -> MuBound:
    """Lower bound on the Gaussian-DP ``mu`` from the test ``statistic > threshold``.

    ``FPR_up = CP_upper(k0, n0, alpha / 2)``,
    ``FNR_up = CP_upper(n1 - k1, n1, alpha / 2)`` and
    ``mu_lb = Phi^-1(1 - FPR_up) - Phi^-1(FNR_up)``, floored at 0. A Gaussian
    mechanism with noise ``sigma`` and sensitivity ``Delta`` is exactly
    ``Delta / sigma``-GDP, so ``mu_lb > Delta / sigma`` refutes it. The
    threshold must not be chosen from ``stat0`` or ``stat1`` (the midpoint of
    the two expected means is a good fixed choice).

    Parameters
    ----------
    stat0, stat1 : array_like
        The statistic on independent runs on each input; ``stat1`` is the side
        expected to be larger.
    threshold : float
    alpha : float, default=1e-6

    Returns
    -------
    MuBound

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> stat0, stat1 = rng.normal(0.0, 2.0, 100_000), rng.normal(1.0, 2.0, 100_000)
    >>> bound = mu_lower_bound(stat0, stat1, 0.5)
    >>> bool(0.4 < bound.mu <= 0.5)
    True
    """
    alpha = _check_alpha(alpha)
    stat0 = _statistics(stat0, "stat0")
    stat1 = _statistics(stat1, "stat1")
    threshold = float(threshold)
    if math.isnan(threshold):
        raise ValueError("threshold must not be NaN")
    k0 = int(_count_above(stat0, threshold))
    k1 = int(_count_above(stat1, threshold))
    n0, n1 = stat0.size, stat1.size
    fpr_up = clopper_pearson_upper(k0, n0, alpha / 2)
    fnr_up = clopper_pearson_upper(n1 - k1, n1, alpha / 2)
    mu = float(stats.norm.isf(fpr_up) - stats.norm.ppf(fnr_up))
    return MuBound(max(mu, 0.0), threshold, k0, n0, k1, n1, fpr_up, fnr_up, alpha)


# --- pilot-based audits ---------------------------------------------------------------


def _as_generator(rng) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, bool):
        raise TypeError("rng must be a numpy Generator or an int seed (audits are reproducible)")
    return np.random.default_rng(rng)


def _split(n, pilot_fraction) -> tuple[int, int]:
    n = int(n)
    if not 0.0 < pilot_fraction < 1.0:
        raise ValueError(f"pilot_fraction must lie in (0, 1), got {pilot_fraction!r}")
    n_pilot = max(1, round(pilot_fraction * n))
    n_eval = n - n_pilot
    if n_eval < 1:
        raise ValueError(f"n={n} leaves no evaluation samples after the pilot")
    return n_pilot, n_eval


def _draw(sample, value, n: int, rng, name: str) -> np.ndarray:
    out = _statistics(sample(value, n, rng), f"the statistics of {name}")
    if out.size != n:
        raise ValueError(f"sample({name}, n={n}, rng) returned {out.size} values, expected {n}")
    return out


def _pilot_alpha(alpha: float, n_tests: int, n_pilot: int, n_eval: int) -> float:
    # the pilot scores a candidate test with the confidence width the evaluation
    # will have: the evaluation's z-value shrunk by sqrt(n_pilot / n_eval)
    z_eval = stats.norm.isf(alpha / (2 * n_tests))
    return float(min(0.5, 2.0 * stats.norm.sf(z_eval * math.sqrt(n_pilot / n_eval))))


@dataclass(frozen=True)
class ThresholdPlan:
    """The tests of an audit, fixed from pilot samples before any evaluation sample exists.

    Attributes
    ----------
    swapped : bool
        Whether ``input0`` plays side 1 (the side expected to be larger).
    tail : {"upper", "lower"}
        The sets are ``{statistic > t}`` or ``{statistic < t}``.
    thresholds : tuple of float
        The thresholds ``t``.
    pilot_epsilon : float
        The pilot's estimate of the bound (for information only).
    """

    swapped: bool
    tail: str
    thresholds: tuple
    pilot_epsilon: float

    def evaluate(self, stat0, stat1, *, delta=0.0, alpha=1e-6) -> EpsilonBound:
        """The lower bound from fresh samples of ``input0`` and ``input1`` (in that order).

        Examples
        --------
        >>> plan = ThresholdPlan(swapped=True, tail="lower", thresholds=(0.0,), pilot_epsilon=0.0)
        >>> plan.evaluate([0.5, -1.0], [1.0, 2.0]).event
        'statistic < 0'
        """
        side0, side1 = (stat1, stat0) if self.swapped else (stat0, stat1)
        sign = 1.0 if self.tail == "upper" else -1.0
        thresholds = np.asarray(self.thresholds, dtype=np.float64)
        bound = epsilon_lower_bound(
            sign * _statistics(side0, "stat0"),
            sign * _statistics(side1, "stat1"),
            sign * thresholds,
            delta=delta,
            alpha=alpha,
        )
        t = sign * bound.threshold
        op = ">" if self.tail == "upper" else "<"
        return replace(bound, event=f"statistic {op} {t:.6g}", threshold=t, swapped=self.swapped)


def choose_thresholds(
    pilot0, pilot1, *, n_eval, n_thresholds=12, delta=0.0, alpha=1e-6
) -> ThresholdPlan:
    """Fix the orientation and a grid of thresholds from pilot samples only.

    For each orientation (which input is side 1, and which tail), thresholds
    are placed at side 1's pilot quantiles with tail probabilities geometric
    from 0.2 down to ``30 / n_eval``; the orientation whose grid gives the
    largest pilot bound is kept (at the confidence width the evaluation will
    have). The orientation is a free choice because DP is symmetric in the
    two inputs.

    Parameters
    ----------
    pilot0, pilot1 : array_like
        Pilot statistics of ``input0`` and ``input1``.
    n_eval : int
        Evaluation samples per side that will follow.
    n_thresholds : int, default=12
        Size of the grid (before removing duplicate thresholds).
    delta, alpha : float
        As in the evaluation.

    Returns
    -------
    ThresholdPlan

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> plan = choose_thresholds(
    ...     rng.normal(1.0, 1.0, 5000), rng.normal(0.0, 1.0, 5000), n_eval=50_000
    ... )
    >>> len(plan.thresholds), bool(plan.pilot_epsilon > 0.5)
    (12, True)
    """
    pilot0 = _statistics(pilot0, "pilot0")
    pilot1 = _statistics(pilot1, "pilot1")
    delta = check_delta(delta)
    alpha = _check_alpha(alpha)
    n_eval = int(n_eval)
    n_thresholds = int(n_thresholds)
    if n_thresholds < 1:
        raise ValueError(f"n_thresholds must be >= 1, got {n_thresholds}")
    smallest = MIN_TAIL_COUNT / n_eval
    if smallest >= MAX_TAIL_PROBABILITY:
        raise ValueError(
            f"n_eval={n_eval} is too small: the threshold grid needs tail probabilities "
            f"from {MAX_TAIL_PROBABILITY} down to {MIN_TAIL_COUNT}/n_eval"
        )
    tails = np.geomspace(MAX_TAIL_PROBABILITY, smallest, n_thresholds)
    n_pilot = min(pilot0.size, pilot1.size)
    pilot_alpha = _pilot_alpha(alpha, n_thresholds, n_pilot, n_eval)

    best = None
    for swapped in (False, True):
        side0, side1 = (pilot1, pilot0) if swapped else (pilot0, pilot1)
        for tail, sign in (("upper", 1.0), ("lower", -1.0)):
            oriented1 = sign * side1
            grid = np.unique(np.quantile(oriented1, 1.0 - tails, method="inverted_cdf"))
            eps = _threshold_bounds(sign * side0, oriented1, grid, delta, pilot_alpha)[0]
            score = max(float(eps.max()), 0.0)
            if best is None or score > best.pilot_epsilon:
                thresholds = tuple(float(sign * t) for t in grid)
                best = ThresholdPlan(swapped, tail, thresholds, score)
    return best


def audit_epsilon(
    sample: Callable,
    input0,
    input1,
    *,
    n,
    delta,
    alpha=1e-6,
    pilot_fraction=0.1,
    n_thresholds=12,
    rng,
) -> EpsilonBound:
    """Audit a mechanism with a 1-D continuous statistic: pilot, then fresh evaluation.

    1. Pilot: ``round(pilot_fraction * n)`` runs per input fix the
       orientation and a grid of thresholds (:func:`choose_thresholds`).
    2. Evaluation: the remaining runs, drawn afterwards, give the counts of
       every threshold of the grid; the bound is the best of them at
       ``alpha / len(grid)`` each (:func:`epsilon_lower_bound`).

    Parameters
    ----------
    sample : callable
        ``sample(input, n, rng) -> ndarray of shape (n,)``: the statistic of
        ``n`` independent runs of the mechanism on ``input``, drawing all
        randomness from the Generator ``rng``.
    input0, input1 : object
        Neighbouring inputs (worst case for the claim being audited).
    n : int
        Runs per input, pilot included.
    delta : float
        The delta of the claim.
    alpha : float, default=1e-6
        Probability that the bound exceeds the true epsilon.
    pilot_fraction : float, default=0.1
    n_thresholds : int, default=12
    rng : numpy.random.Generator or int
        Randomness of the runs (an int seeds a new Generator).

    Returns
    -------
    EpsilonBound
        A claim ``epsilon`` fails the audit when ``bound.epsilon > epsilon``.

    Examples
    --------
    >>> def sample(value, n, rng):
    ...     return rng.normal(value, 1.0, n)
    >>> bound = audit_epsilon(sample, 1.0, 0.0, n=20_000, delta=1e-5, rng=1)
    >>> bound.n0, bound.n1, bound.n_tests
    (18000, 18000, 12)
    """
    rng = _as_generator(rng)
    n_pilot, n_eval = _split(n, pilot_fraction)

    plan = choose_thresholds(
        _draw(sample, input0, n_pilot, rng, "input0"),
        _draw(sample, input1, n_pilot, rng, "input1"),
        n_eval=n_eval,
        n_thresholds=n_thresholds,
        delta=delta,
        alpha=alpha,
    )
    # only now are the evaluation runs drawn, so nothing in the plan depends on them
    return plan.evaluate(
        _draw(sample, input0, n_eval, rng, "input0"),
        _draw(sample, input1, n_eval, rng, "input1"),
        delta=delta,
        alpha=alpha,
    )


@dataclass(frozen=True)
class _EventChoice:
    value: float
    equal: bool
    swapped: bool
    pilot_epsilon: float


def _choose_event(pilot0, pilot1, *, n_eval, delta, alpha) -> _EventChoice:
    values = np.union1d(pilot0, pilot1)
    if values.size > MAX_EVENT_VALUES:
        raise ValueError(
            f"the pilot has {values.size} distinct outputs (more than {MAX_EVENT_VALUES}): "
            "audit_event is for discrete outputs, use audit_epsilon for a continuous statistic"
        )
    pilot_alpha = _pilot_alpha(alpha, 1, min(pilot0.size, pilot1.size), n_eval)
    half = np.array([0.5])
    best = None
    for value in values:
        for equal in (True, False):
            in0 = (pilot0 == value) if equal else (pilot0 != value)
            in1 = (pilot1 == value) if equal else (pilot1 != value)
            for swapped in (False, True):
                side0, side1 = (in1, in0) if swapped else (in0, in1)
                eps = _threshold_bounds(
                    side0.astype(float), side1.astype(float), half, delta, pilot_alpha
                )[0]
                score = max(float(eps[0]), 0.0)
                if best is None or score > best.pilot_epsilon:
                    best = _EventChoice(float(value), equal, swapped, score)
    return best


def audit_event(
    sample: Callable,
    input0,
    input1,
    *,
    n,
    delta,
    alpha=1e-6,
    pilot_fraction=0.1,
    rng,
) -> EpsilonBound:
    """Audit a mechanism with discrete outputs (e.g. a selected index) on one event.

    1. Pilot: ``round(pilot_fraction * n)`` runs per input choose the event
       (``output == v`` or ``output != v`` for an output ``v`` seen in the
       pilot) and which input is side 1.
    2. Evaluation: the remaining runs, drawn afterwards, test that single
       hypothesis at level ``alpha``.

    Parameters
    ----------
    sample : callable
        ``sample(input, n, rng) -> ndarray of shape (n,)``: the outputs of
        ``n`` independent runs on ``input``, drawing all randomness from ``rng``.
    input0, input1 : object
        Neighbouring inputs.
    n : int
        Runs per input, pilot included.
    delta : float
        The delta of the claim (0 for pure DP).
    alpha : float, default=1e-6
    pilot_fraction : float, default=0.1
    rng : numpy.random.Generator or int

    Returns
    -------
    EpsilonBound

    Examples
    --------
    >>> def randomized_response(bit, n, rng):  # log(3)-DP
    ...     return np.where(rng.random(n) < 0.75, bit, 1 - bit)
    >>> bound = audit_event(randomized_response, 0, 1, n=50_000, delta=0.0, rng=0)
    >>> bool(0.9 < bound.epsilon <= np.log(3)), bound.n_tests
    (True, 1)
    """
    rng = _as_generator(rng)
    delta = check_delta(delta)
    alpha = _check_alpha(alpha)
    n_pilot, n_eval = _split(n, pilot_fraction)

    choice = _choose_event(
        _draw(sample, input0, n_pilot, rng, "input0"),
        _draw(sample, input1, n_pilot, rng, "input1"),
        n_eval=n_eval,
        delta=delta,
        alpha=alpha,
    )
    # only now are the evaluation runs drawn, so the event does not depend on them
    eval0 = _draw(sample, input0, n_eval, rng, "input0")
    eval1 = _draw(sample, input1, n_eval, rng, "input1")
    side0, side1 = (eval1, eval0) if choice.swapped else (eval0, eval1)
    if choice.equal:
        in0, in1 = side0 == choice.value, side1 == choice.value
    else:
        in0, in1 = side0 != choice.value, side1 != choice.value
    bound = epsilon_lower_bound(in0, in1, 0.5, delta=delta, alpha=alpha)
    op = "==" if choice.equal else "!="
    return replace(
        bound,
        event=f"output {op} {choice.value:.6g}",
        threshold=choice.value,
        swapped=choice.swapped,
    )
