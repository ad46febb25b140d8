"""Privacy targets: the one check of ``(epsilon, delta)``, and the one split into shares.

Every entry point that takes a target (the solvers, the estimators, the search,
the budget, the accountants, the command line) validates it here, so that
``epsilon > 0`` (``inf`` for no privacy) and ``0 <= delta < 1`` mean the same
thing, with the same messages, wherever a target comes in. ``delta = 0`` is
refused with one message (:func:`zero_delta_message`: why, which fits take it,
what to do) wherever it cannot be met: by a fit or a search whose analysis needs
``delta > 0``, and when a plan with Gaussian noise is calibrated.

A fit that spends its budget in parts (the smoothness estimate of DP-CD and
DP-GCD, the selections of DP-GCD, DP-AGD and vertical Frank-Wolfe, the noisy
score of a search) names the part's :class:`Share`, which validates it and
does the arithmetic of the split: the share of an amount, the rest of it, a
target split in two.

Examples
--------
>>> from dpglm.privacy.targets import Share, check_privacy_target
>>> check_privacy_target(1, 1e-6)
(1.0, 1e-06)
>>> check_privacy_target(0.0, 1e-6)
Traceback (most recent call last):
...
ValueError: epsilon must be positive (inf for no privacy), got 0.0
>>> Share(0.25, "selection_share").split(2.0, 1e-6)
((0.5, 2.5e-07), (1.5, 7.5e-07))
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

__all__ = [
    "MAX_DEFAULT_DELTA",
    "PURE_DP_SOLVERS",
    "Share",
    "check_delta",
    "check_epsilon",
    "check_privacy_target",
    "default_delta",
    "left_after",
    "zero_delta_message",
]

#: which fits take ``delta = 0``, for the message that refuses it to the others; named
#: here, where every refusal of ``delta = 0`` is worded, though this layer imports no solver
PURE_DP_SOLVERS = (
    "only pure-DP noise (Laplace, noisy max) has a guarantee at delta = 0: DP-FW and DP-BCFW, "
    "and DP-GCD with noise='paper' and accountant='basic' (for the estimators, "
    "solver_options={'noise': 'paper', 'accountant': 'basic'} with public feature_bounds, "
    "and target_bounds for a regressor, since the private ranges are Gaussian) take it; "
    "DP-CD, DP-SGD, DP-SCD, DP-AGD, DP-GD, AdaSSP and DP-GCD's default noise='tight' add "
    "Gaussian noise, and no estimator default takes it"
)


#: the largest default ``delta``: ``1 / n**2`` alone would be 0.25 for two records
MAX_DEFAULT_DELTA = 1e-5


def default_delta(n_samples: int) -> float:
    """The default ``delta`` for ``n`` records: ``min(1 / n**2, 1e-5)``.

    ``delta`` bounds the probability that the guarantee fails, and a release
    that published one record of ``n`` at random would fail it with
    probability ``1 / n``: ``delta`` must be far below that. ``1 / n**2`` is
    ``1 / n`` times ``1 / n``, which is far below only for large ``n`` (0.25
    for two records, ``1e-4`` for 100); :data:`MAX_DEFAULT_DELTA`, the usual
    ``1e-5``, caps it below 317 records. ``n`` is public (the size of the
    data is not protected by the replace-one relation, and the add/remove
    fits say how they treat it).

    Examples
    --------
    >>> default_delta(1000), default_delta(2)
    (1e-06, 1e-05)
    """
    return min(1.0 / float(n_samples) ** 2, MAX_DEFAULT_DELTA)


def _real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_epsilon(epsilon, *, name: str = "epsilon") -> float:
    """``epsilon`` as a float, refused unless it is a number ``> 0`` (``inf``: no privacy).

    Parameters
    ----------
    epsilon : float
    name : str, default="epsilon"
        How the messages call it (e.g. ``"budget epsilon"``).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``epsilon`` is not a real number (a bool or a string is not), is NaN
        or is not positive.

    Examples
    --------
    >>> check_epsilon(2), check_epsilon(float("inf"))
    (2.0, inf)
    """
    if not _real(epsilon):
        raise ValueError(f"{name} must be a number, got {epsilon!r}")
    epsilon = float(epsilon)
    if not epsilon > 0:
        raise ValueError(f"{name} must be positive (inf for no privacy), got {epsilon!r}")
    return epsilon


def check_delta(delta, *, name: str = "delta", optional: bool = False) -> float | None:
    """``delta`` as a float, refused unless it is a number in ``[0, 1)``.

    Parameters
    ----------
    delta : float or None
    name : str, default="delta"
        How the messages call it (e.g. ``"budget delta"``).
    optional : bool, default=False
        Whether ``None`` (a default chosen later, e.g. from the data size) is allowed.

    Returns
    -------
    float or None

    Raises
    ------
    ValueError
        If ``delta`` is not a real number in ``[0, 1)`` (nor an allowed ``None``).

    Examples
    --------
    >>> check_delta(1e-6), check_delta(None, optional=True)
    (1e-06, None)
    """
    if delta is None and optional:
        return None
    if not (_real(delta) and 0.0 <= delta < 1.0):
        either = "be None or " if optional else ""
        raise ValueError(f"{name} must {either}lie in [0, 1), got {delta!r}")
    return float(delta)


def check_privacy_target(
    epsilon,
    delta,
    *,
    owner: str = "",
    optional_delta: bool = False,
    positive_delta: str | None = None,
    what: str = "fit",
) -> tuple[float, float | None]:
    """Validate a target: ``epsilon > 0`` (``inf`` allowed) and ``0 <= delta < 1``.

    Parameters
    ----------
    epsilon, delta : float
    owner : str, optional
        Whose target it is, in the messages (``"budget"``: "budget epsilon ...").
    optional_delta : bool, default=False
        Allow ``delta=None``.
    positive_delta : str, optional
        Why a private target needs ``delta > 0`` (Gaussian noise, a zCDP or
        Renyi DP analysis): ``delta = 0`` with a finite epsilon is then refused,
        with this reason.
    what : str, default="fit"
        What the target is for, in the message of ``positive_delta``.

    Returns
    -------
    epsilon : float
    delta : float or None

    Examples
    --------
    >>> check_privacy_target(1, 1e-6)
    (1.0, 1e-06)
    >>> check_privacy_target(1.0, 0.0, positive_delta="Gaussian noise needs it", what="search")
    Traceback (most recent call last):
    ...
    ValueError: delta must be > 0 for a private search: Gaussian noise needs it; give delta > 0, e.g. min(1 / n**2, 1e-5) for n records (the default of the estimators and of PrivateSearchCV: leave delta=None)
    """  # noqa: E501
    prefix = f"{owner} " if owner else ""
    epsilon = check_epsilon(epsilon, name=f"{prefix}epsilon")
    delta = check_delta(delta, name=f"{prefix}delta", optional=optional_delta)
    if positive_delta is not None and delta == 0.0 and not math.isinf(epsilon):
        raise ValueError(zero_delta_message(positive_delta, owner=owner, what=what))
    return epsilon, delta


def zero_delta_message(reason: str, *, owner: str = "", what: str = "fit") -> str:
    """The refusal of ``delta = 0``: why, which fits take it, and what to do.

    One message wherever ``delta = 0`` is refused: by a target check
    (``positive_delta`` of :func:`check_privacy_target`) or by the calibration
    of a plan with Gaussian noise (:func:`~dpglm.privacy.calibration.calibrate`).

    Parameters
    ----------
    reason : str
        Why this target needs ``delta > 0``.
    owner : str, optional
        Whose target it is, as in :func:`check_privacy_target`.
    what : str, default="fit"
        What the target is for; a fit's message also names the solvers that
        take ``delta = 0`` (:data:`PURE_DP_SOLVERS`).

    Returns
    -------
    str

    Examples
    --------
    >>> print(zero_delta_message("its Renyi DP accounting gives none", what="search"))
    delta must be > 0 for a private search: its Renyi DP accounting gives none; give delta > 0, e.g. min(1 / n**2, 1e-5) for n records (the default of the estimators and of PrivateSearchCV: leave delta=None)
    """  # noqa: E501
    prefix = f"{owner} " if owner else ""
    which = f"; {PURE_DP_SOLVERS}" if what == "fit" else ""
    return (
        f"{prefix}delta must be > 0 for a private {what}: {reason}{which}; give delta > 0, "
        "e.g. min(1 / n**2, 1e-5) for n records (the default of the estimators and of "
        "PrivateSearchCV: leave delta=None)"
    )


def left_after(total: float, part: float) -> float:
    """The largest ``rest`` with ``part + rest <= total`` in floating point: what a release of
    ``part`` leaves of a budget ``total`` for the releases after it, so that their basic
    composition never rounds above it.

    Examples
    --------
    >>> 0.1 * 2.5e-09 + 0.9 * 2.5e-09 > 2.5e-09
    True
    >>> 0.1 * 2.5e-09 + left_after(2.5e-09, 0.1 * 2.5e-09) <= 2.5e-09
    True
    """
    rest = total - part
    while rest > 0 and part + rest > total:
        rest = math.nextafter(rest, 0.0)
    return rest


@dataclass(frozen=True)
class Share:
    """A share ``s`` in ``(0, 1)`` of a budget; the rest, ``1 - s``, goes to the other part.

    The only place where a budget (an epsilon, a delta, a zCDP ``rho``, a
    per-step budget) is split: the callers take :meth:`of` it, :meth:`rest_of`
    it, or :meth:`split` a whole target, and never compute ``1 - s`` themselves.

    Parameters
    ----------
    value : float
        ``s``, strictly between 0 and 1.
    name : str, default="share"
        The parameter's name, for the message of a bad value.

    Raises
    ------
    ValueError
        If ``value`` is not a number strictly between 0 and 1.

    Examples
    --------
    >>> share = Share(0.25, "selection_share")
    >>> share.of(8.0), share.rest_of(8.0), share.rest
    (2.0, 6.0, 0.75)
    >>> Share(1.0, "smoothness_share")
    Traceback (most recent call last):
    ...
    ValueError: smoothness_share must lie in (0, 1), got 1.0
    """

    value: float
    name: str = "share"

    def __post_init__(self):
        if not (_real(self.value) and 0.0 < self.value < 1.0):
            raise ValueError(f"{self.name} must lie in (0, 1), got {self.value!r}")
        object.__setattr__(self, "value", float(self.value))

    @property
    def rest(self) -> float:
        """``1 - s``, the other part's share."""
        return 1.0 - self.value

    def of(self, amount: float) -> float:
        """``s * amount``: this part's budget out of ``amount``."""
        return self.value * amount

    def rest_of(self, amount: float) -> float:
        """``(1 - s) * amount``: the other part's budget out of ``amount``."""
        return self.rest * amount

    def matching(self, part: float) -> float:
        """The other part's budget when this part's is ``part``: ``part (1 - s) / s``.

        Examples
        --------
        >>> Share(0.25).matching(1.0)
        3.0
        """
        return part * self.rest / self.value

    def split(self, epsilon: float, delta: float) -> tuple:
        """``(epsilon, delta)`` split in this part's and the rest, which add up to it exactly.

        Returns
        -------
        tuple
            ``((s epsilon, s delta), (epsilon - s epsilon, delta - s delta))``.
        """
        part = (self.of(epsilon), self.of(delta))
        return part, (epsilon - part[0], delta - part[1])
