"""An estimator's preprocessing: where its ranges come from, and the one plan it spends.

Every fit clips its records to ranges and maps them into ``[-1, 1]``
(:class:`~dpglm.preprocessing.scaling.Scaling`) before the solver reads them,
and gives its coefficients back on the raw scale. The ranges come from:

- the user, as public bounds (``feature_bounds``, a regressor's
  ``target_bounds``): free;
- by default, a private release (:class:`~dpglm.preprocessing.ranges.RangePlan`)
  that takes a share of the fit's ``(epsilon, delta)`` (:func:`preprocessing_share`,
  from a twentieth to a quarter, less the more records there are):
  its events come first in the fit's plan (part ``"preprocessing"`` of the
  report), the solver's follow, and the solver's noise is calibrated so that
  the whole plan meets the target. One plan, one charge, one report;
- with ``feature_bounds="data"`` (or ``target_bounds="data"``), the data's
  own minima and maxima, read without privacy: a
  :class:`~dpglm.exceptions.PrivacyLeakWarning`, and a report that says the
  guarantee does not hold. A non-private fit (``epsilon=inf``) reads them so
  too, without a warning: it claims nothing.

Examples
--------
>>> prep = Preprocessing.create(
...     n_samples=5000,
...     n_features=3,
...     sparse=False,
...     feature_bounds=None,
...     target_bounds=None,
...     regression=True,
...     epsilon=1.0,
...     delta=1e-6,
... )
>>> [e.part for e in prep.range_plan.plan.events]
['preprocessing', 'preprocessing', 'preprocessing']
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpglm.preprocessing.bounds import PartialBounds
from dpglm.preprocessing.ranges import RangePlan, extremes
from dpglm.preprocessing.scaling import Scaling
from dpglm.privacy.events import PrivacyPlan
from dpglm.privacy.leaks import warn_privacy_leak
from dpglm.solvers.registry import FitPlan

__all__ = ["InMemoryRecords", "Preprocessing", "preprocessing_share"]

#: the preprocessing's share of (epsilon, delta) is
#: SHARE_SCALE sqrt(min(p, SHARE_COLUMNS)) / (epsilon n), within [MIN_SHARE, MAX_SHARE]
SHARE_SCALE, SHARE_COLUMNS, MIN_SHARE, MAX_SHARE = 800.0, 64, 0.05, 0.25


def preprocessing_share(n_samples: int, n_features: int, epsilon: float) -> float:
    """The share of a fit's budget its private ranges take: less the more records it has.

    A bin of a noisy histogram is read when it holds a few times the noise's
    standard deviation, which is ``sqrt(2 p)`` (the per-column histograms'
    sensitivity) times a multiplier falling like ``1 / (share epsilon)``: to
    read the bins that hold a few percent of the records, the release needs
    ``share epsilon n`` proportional to ``sqrt(p)``. Beyond
    :data:`SHARE_COLUMNS` columns the records' extremes give the ranges
    (their noise does not grow with ``p``), so ``p`` counts up to there. A
    large dataset spends :data:`MIN_SHARE` (a twentieth), a small one up to
    :data:`MAX_SHARE` (a quarter), whose training is noisy whatever its ranges
    (measured in ``benchmarks/bench_defaults.py``: electricity, 34,000 records
    and 6 columns, loses a point of accuracy at a fifth against a twentieth;
    communities, 1,500 records, gains ten points of R² at a fifth against a
    tenth; the raw California table, 15,500 records and 8 columns, clips its
    income column below its upper octave in one fit out of ten at a
    twentieth). ``n``, ``p`` and ``epsilon`` are public: the share reveals
    nothing.

    Examples
    --------
    >>> preprocessing_share(1500, 100, 1.0), round(preprocessing_share(34_000, 6, 1.0), 3)
    (0.25, 0.058)
    """
    columns = min(n_features, SHARE_COLUMNS)
    share = SHARE_SCALE * math.sqrt(columns) / (epsilon * n_samples)
    return min(MAX_SHARE, max(MIN_SHARE, share))


#: the leak warning of ranges read from the data
DATA_RANGES_LEAK = (
    "feature or target ranges read from the data (minimum and maximum) without privacy; "
    "leave feature_bounds / target_bounds unset for a private estimate, or give public ones"
)


class InMemoryRecords:
    """Records in this process, as :meth:`Preprocessing.scaling_of` reads them.

    Examples
    --------
    >>> records = InMemoryRecords(np.array([[1.0, -2.0], [3.0, 0.0]]), np.array([5.0, 7.0]))
    >>> records.feature_extremes(), records.target_extremes()
    ((array([ 1., -2.]), array([3., 0.])), (5.0, 7.0))
    """

    def __init__(self, X, y):
        self.X, self.y = X, y

    def range_counts(self, plan: RangePlan) -> list:
        """The exact counts of ``plan``'s histograms."""
        return plan.counts(self.X, self.y if plan.target else None)

    def feature_extremes(self) -> tuple:
        """Every column's minimum and maximum, read without privacy."""
        return extremes(self.X, axis=0)

    def target_extremes(self) -> tuple:
        """The target's minimum and maximum, read without privacy."""
        y = np.asarray(self.y, dtype=float)
        return float(y.min()), float(y.max())


@dataclass(frozen=True)
class Preprocessing:
    """Where a fit's ranges come from, and the private release that estimates them, if any.

    Attributes
    ----------
    features : tuple of two ndarrays, or "estimate", or "data"
        Public ``(low, high)``, a private estimate, or the data's own range.
    target : tuple of two floats, "estimate", "data", or None
        The same for a regression's target; None for a classifier.
    sparse : bool
        Sparse features are scaled, not centred.
    range_plan : RangePlan or None
        The private release, when something is estimated.
    private : bool
        Whether the fit is private (``epsilon < inf``).
    centred : bool
        Whether the model has an intercept: its features (dense ones) and its
        target are then centred on their ranges; a model without intercept
        is fitted on scaled, uncentred records, so that it stays a model
        through the origin on the raw scale.
    """

    features: object
    target: object
    sparse: bool
    range_plan: RangePlan | None
    private: bool
    centred: bool = True

    @classmethod
    def create(
        cls,
        *,
        n_samples: int,
        n_features: int,
        sparse: bool,
        feature_bounds,
        target_bounds,
        regression: bool,
        epsilon: float,
        delta: float,
        fit_intercept: bool = True,
        neighbouring: str = "replace_one",
    ) -> Preprocessing:
        """Decide the sources from the validated bounds and plan the release (no data read).

        Parameters
        ----------
        n_samples, n_features : int
        sparse : bool
        feature_bounds : None, "data" or (low, high) arrays
            As :func:`~dpglm.preprocessing.bounds.check_feature_bounds` returns it.
        target_bounds : None, "data" or (low, high)
            A regressor's; ignored for a classifier.
        regression : bool
        epsilon, delta : float
            The fit's target.
        fit_intercept : bool, default=True
            Whether the model has an intercept (see :attr:`centred`).
        neighbouring : str
            The relation of the solver's plan.
        """
        private = not math.isinf(epsilon)

        def source(bounds):
            if bounds is None:
                return "estimate" if private else "data"
            return bounds

        features = source(feature_bounds)
        target = source(target_bounds) if regression else None
        estimated = n_features
        if isinstance(features, PartialBounds):
            estimated = int(features.unknown.sum())
            estimate_features = private and estimated > 0
        else:
            estimate_features = isinstance(features, str) and features == "estimate"
        estimate_target = isinstance(target, str) and target == "estimate"
        range_plan = None
        if estimate_features or estimate_target:
            range_plan = RangePlan.share_of(
                max(estimated, 1),
                features=estimate_features,
                target=estimate_target,
                epsilon=epsilon,
                delta=delta,
                share=preprocessing_share(n_samples, max(estimated, 1), epsilon),
                neighbouring=neighbouring,
            )
        return cls(features, target, bool(sparse), range_plan, private, bool(fit_intercept))

    @property
    def features_centred(self) -> bool:
        """Whether the features are centred: dense features of a model with intercept."""
        return self.centred and not self.sparse

    @property
    def events(self) -> tuple:
        """The release's events (fixed noise), to come first in the fit's plan."""
        return () if self.range_plan is None else self.range_plan.plan.events

    @property
    def leaks(self) -> tuple:
        """The leak warning of ranges read from the data in a private fit."""
        reads = [s for s in (self.features, self.target) if isinstance(s, str) and s == "data"]
        return (DATA_RANGES_LEAK,) if reads and self.private else ()

    def combined(self, solver_plan: FitPlan, epsilon: float, delta: float) -> FitPlan:
        """The fit's plan: this release's events, then the solver's, calibrated to the target."""
        template = solver_plan.template
        return FitPlan(
            PrivacyPlan((*self.events, *template.events), template.neighbouring),
            epsilon,
            delta,
            solver_plan.accountant,
            (*self.leaks, *solver_plan.leaks),
        )

    def scaling(self, X, y, releases) -> tuple:
        """Read or release the ranges of in-memory records (see :meth:`scaling_of`).

        Parameters
        ----------
        X : ndarray or sparse matrix
        y : ndarray
        releases : sequence of Release

        Returns
        -------
        scaling : Scaling
        assumptions : tuple of str
        """
        if isinstance(self.features, PartialBounds):
            X = self.features.columns_of(X)
        return self.scaling_of(InMemoryRecords(X, y), releases)

    def scaling_of(self, records, releases) -> tuple:
        """Read or release the ranges; return the :class:`Scaling` and the report's lines.

        Parameters
        ----------
        records : InMemoryRecords or ShardedProblem
            What counts the records' histograms (``range_counts(plan)``) and,
            for ranges read without privacy, their extremes
            (``feature_extremes()``, ``target_extremes()``): the records in
            this process, or row chunks that count their own
            (:class:`~dpglm.distributed.ShardedProblem`).
        releases : sequence of Release
            The release's events bound to the fit's noise source (empty when
            nothing is estimated).

        Returns
        -------
        scaling : Scaling
        assumptions : tuple of str
        """
        if self.leaks:
            warn_privacy_leak(DATA_RANGES_LEAK, stacklevel=5)
        released_features = released_target = None
        if self.range_plan is not None:
            released_features, released_target = self.range_plan.release_counts(
                records.range_counts(self.range_plan), releases
            )
        low, high, feature_line = self._features(records, released_features)
        target, target_line = self._target(records, released_target)
        scaling = Scaling.from_ranges(
            low,
            high,
            centred=self.features_centred,
            target=target,
            target_centred=self.centred,
        )
        return scaling, tuple(line for line in (feature_line, target_line) if line)

    def _features(self, records, released):
        how = "centred and scaled into [-1, 1]" if self.features_centred else "scaled into [-1, 1]"
        if isinstance(self.features, PartialBounds):
            public = f"{self.features.public_line} (public), {how}"
            if not self.features.unknown.any():
                return self.features.low, self.features.high, public
            low, high, line = self._estimated_features(records, released, how)
            return (*self.features.filled(low, high), f"{line}; {public}")
        if isinstance(self.features, str):
            return self._estimated_features(records, released, how)
        low, high = self.features
        line = (
            "feature ranges (low, high) supplied by the user (public): every entry clipped to "
            f"its range per record and {how}"
        )
        return low, high, line

    def _estimated_features(self, records, released, how):
        """The ranges of the columns without public ones: released, or read from the data."""
        if released is not None:
            sources = released.sources
            line = (
                "feature ranges released privately (part 'preprocessing': Gaussian noise on "
                f"log-scale histograms): {sources.count('column')} from their own histogram, "
                f"{sources.count('rows')} from the records' extremes, "
                f"{sources.count('rows (best guess)')} from the fullest bins of the records' "
                f"extremes, {sources.count('unit')} taken as [-1, 1]; every entry clipped to "
                f"its range per record and {how}"
            )
            return released.low, released.high, line
        low, high = records.feature_extremes()
        line = ""
        if self.private:
            line = f"feature ranges read from the data without privacy, then {how}"
        return low, high, line

    def _target(self, records, released):
        if self.target is None:
            return None, ""
        if released is not None:
            where = "its own histogram" if released.sources[0] == "column" else "none: [-1, 1]"
            line = (
                "target range released privately (part 'preprocessing'; found from "
                f"{where}): every target clipped to it and mapped into [-1, 1]"
            )
            return (float(released.low[0]), float(released.high[0])), line
        if isinstance(self.target, str):
            low, high = records.target_extremes()
            line = "target range read from the data without privacy" if self.private else ""
            return (float(low), float(high)), line
        line = (
            "target range (low, high) supplied by the user (public): every target clipped to it "
            "and mapped into [-1, 1]"
        )
        return tuple(self.target), line
