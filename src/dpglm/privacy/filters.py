"""Adaptive zCDP filters: releases at the budget asked for, never above the total.

A fit that chooses the budget of each release from its earlier private
outputs (DP-AGD raises its gradient's budget when a step is rejected) charges
its whole zCDP budget ``rho`` up front and spends it through a
:class:`ZCDPFilter`. The filter hands out each release as a
:class:`~dpglm.privacy.releases.Release` at the ``rho`` it is asked for (a
Gaussian, or a Gumbel noisy max, of multiplier ``1 / sqrt(2 rho)``), refuses
any request that would take the releases' total over ``rho``, and can split all
that remains among the last releases. zCDP composition under such a filter is
``rho``-zCDP (the Renyi filter of Feldman and Zrnic 2021, at every order).

The total spent is read by the accountant's own
:func:`~dpglm.privacy.accounting.zcdp_rho` from the very events
:meth:`ZCDPFilter.plan` reports, grouped by role and budget level: the report's
total is exactly the one the filter checks.

Examples
--------
>>> from dpglm.privacy.filters import FilterRole, ZCDPFilter
>>> from dpglm.privacy.mechanisms import make_noise_source
>>> roles = {"sum": FilterRole("gaussian", sensitivity=2.0, label="noisy sum")}
>>> spending = ZCDPFilter(0.5, make_noise_source(0), roles)
>>> (release,), rhos = spending.take([("sum", 0.125)], step=1)
>>> release.multiplier, rhos, spending.remaining
(2.0, [0.125], 0.375)
>>> (last,), rhos = spending.take_rest([("sum", 1.0)], step=2)
>>> spending.remaining >= 0.0, len(spending.plan().events)
(True, 2)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpglm.exceptions import BudgetExceededError
from dpglm.privacy.accounting import zcdp_rho
from dpglm.privacy.events import GaussianEvent, NoisyMaxEvent, PrivacyPlan
from dpglm.privacy.releases import Release

__all__ = ["FilterRole", "ZCDPFilter"]

#: the noise of a filter's releases: each costs rho = 1 / (2 z**2) at multiplier z
FILTER_NOISE = ("gaussian", "gumbel")


@dataclass(frozen=True)
class FilterRole:
    """One kind of release of a filter: its noise, its sensitivity and what it releases.

    Parameters
    ----------
    noise : {"gaussian", "gumbel"}
        A Gaussian release, or a Gumbel noisy max (the exponential mechanism,
        ``rho``-zCDP at the same multiplier as a ``rho``-zCDP Gaussian).
    sensitivity : float
        Of the released value (L2) or of every score.
    label : str
        What it releases, for the report.

    Examples
    --------
    >>> FilterRole("gumbel", sensitivity=3.0, label="step size").noise
    'gumbel'
    """

    noise: str
    sensitivity: float
    label: str

    def __post_init__(self):
        if self.noise not in FILTER_NOISE:
            raise ValueError(f"noise must be one of {FILTER_NOISE}, got {self.noise!r}")


def _multiplier(rho: float) -> float:
    """Noise multiplier of a Gaussian (or Gumbel selection) costing ``rho``."""
    return 1.0 / math.sqrt(2.0 * rho)


def _grouped(groups: dict, role: str, z: float, step: int) -> None:
    count, first, _ = groups.get((role, z), (0, step, step))
    groups[(role, z)] = (count + 1, first, step)


class ZCDPFilter:
    """Releases at the zCDP budget asked for, never more than ``total`` in all.

    Parameters
    ----------
    total : float
        ``rho``, the budget charged up front (positive, finite).
    source : NoiseSource
        The fit's noise source: every release draws from it.
    roles : mapping of str to FilterRole
        The kinds of release that can be asked for.
    neighbouring : str, default="replace_one"
        The relation of the plan (:meth:`plan`).

    Notes
    -----
    The releases are grouped by role and budget level, in order of first use,
    each group one event of the plan with the steps that used it (the
    ``step`` of each request), so that the report lists what actually ran.
    """

    def __init__(self, total: float, source, roles, *, neighbouring: str = "replace_one"):
        if not (isinstance(total, int | float) and 0.0 < total < math.inf):
            raise ValueError(f"total must be a positive finite rho, got {total!r}")
        self.total = float(total)
        self.source = source
        self.roles = dict(roles)
        self.neighbouring = neighbouring
        self._groups: dict = {}  # (role, noise multiplier) -> (count, first step, last step)

    def _event(self, role, z, count, first, last):
        spec = self.roles[role]
        steps = f"step {first}" if first == last else f"steps {first}-{last}"
        options = {
            "noise_multiplier": z,
            "count": count,
            "sensitivity": spec.sensitivity,
            "label": f"{spec.label}, rho {0.5 / z**2:.4g} each ({steps})",
            "fixed": True,
        }
        if spec.noise == "gumbel":
            return NoisyMaxEvent(noise="gumbel", **options)
        return GaussianEvent(**options)

    def events(self, extra=()) -> tuple:
        """The grouped events, with the ``(role, z, step)`` releases of ``extra`` added."""
        groups = dict(self._groups)
        for grant in extra:
            _grouped(groups, *grant)
        return tuple(self._event(role, z, *value) for (role, z), value in groups.items())

    def spent(self, extra=()) -> float:
        """The ``rho`` of the releases handed out (and of ``extra``), by the accountant."""
        return zcdp_rho(self.events(extra))

    @property
    def remaining(self) -> float:
        """What the releases handed out leave of ``total``."""
        return self.total - self.spent()

    def _grant(self, grants) -> tuple:
        for role, z, step in grants:
            _grouped(self._groups, role, z, step)
        releases = tuple(
            Release(self._event(role, z, 1, step, step), self.source) for role, z, step in grants
        )
        return releases, [0.5 / z**2 for _, z, _ in grants]

    def take(self, requests, step: int) -> tuple:
        """Releases at the budgets asked for.

        Parameters
        ----------
        requests : sequence of (str, float)
            ``(role, rho)`` of each release, in order.
        step : int
            The fit's step that runs them (for the report).

        Returns
        -------
        releases : tuple of Release
        rhos : list of float
            The budget of each, ``1 / (2 z**2)`` at its multiplier ``z``.

        Raises
        ------
        BudgetExceededError
            If the releases would take the total over ``total`` (nothing is
            handed out).
        """
        grants = [(role, _multiplier(rho), step) for role, rho in requests]
        if self.spent(grants) > self.total:
            raise BudgetExceededError(
                f"the zCDP filter has rho={self.remaining:.6g} left of {self.total:.6g}; the "
                f"releases asked for ({', '.join(f'{r} {rho:.6g}' for r, rho in requests)}) "
                "would exceed it"
            )
        return self._grant(grants)

    def take_rest(self, requests, step: int) -> tuple:
        """Releases that split all that remains in proportion to the amounts of ``requests``.

        The split is nudged down until the accountant's sum of the rounded
        multipliers is within the total: the last releases never overspend.

        Parameters
        ----------
        requests : sequence of (str, float)
            ``(role, amount)``: only the amounts' proportions matter.
        step : int

        Returns
        -------
        releases : tuple of Release
        rhos : list of float
        """
        roles = [role for role, _ in requests]
        shares = [amount for _, amount in requests]
        remaining = self.remaining
        parts = [remaining * s / math.fsum(shares) for s in shares]
        while True:
            grants = [(r, _multiplier(rho), step) for r, rho in zip(roles, parts, strict=True)]
            if self.spent(grants) <= self.total:
                return self._grant(grants)
            parts = [rho * (1.0 - 2.0**-40) for rho in parts]

    def plan(self) -> PrivacyPlan:
        """The releases handed out, grouped, as the plan of the report."""
        return PrivacyPlan(self.events(), self.neighbouring)
