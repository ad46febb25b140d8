"""Private label sets: the class labels a classifier releases, selected with noisy counts.

A classifier releases its label set in ``classes_`` and in its model file.
Read off the target, that set names records: a label that one record alone
holds (a typo, an identifier, a dollar amount in a column that is not a class
label) says that this record is in the data. Without the public label set
(``classes=``), the estimators select the labels privately, as the values of
a categorical column are selected (:mod:`dpglm.preprocessing.categories`,
whose analysis holds here with ``c = 1``):

1. count every label observed in the target;
2. add Gaussian noise of standard deviation ``sigma`` to every count, in one
   release (L2 sensitivity ``sqrt(2)`` under replace-one: a record's new
   label gains one count and its old one loses one);
3. keep the labels whose noisy count exceeds ``tau = 1 + sigma z``, where
   ``z`` makes a label held by one record pass with probability at most the
   threshold's delta (:func:`~dpglm.preprocessing.categories.selection_threshold`).

**Records of a label not kept** are fitted as the kept label of the largest
noisy count (:func:`relabelled`): the number of records stays public and
every record is used. Such labels are rare by construction (about ``tau``
records or fewer); a model cannot predict a label it does not release.

**The share.** The selection is a release of its own, composed with the
model's fit by basic composition: the model's plan depends on the number of
labels kept (one-vs-rest fits one model per label), so it is planned after
the selection, at the rest of ``(epsilon, delta)``. The selection's share of
the pair (:func:`label_share`) is the least, from :data:`MIN_SHARE` to
:data:`MAX_SHARE`, that puts ``tau`` at most at a fortieth of the records
(:data:`LABEL_FRACTION`), or at 300 records (:data:`LABEL_RECORDS`) when that
is more, a quarter of them in a dataset of fewer than 1,200. A label held by
a few percent of a large dataset, or by a few hundred records of a smaller
one, is then kept nearly surely, and a large dataset pays little. Measured
(``benchmarks/bench_defaults.py``, ``bench_multiclass.py``): the 26 classes of
the letter data (3.6 % of 15,000 records each) all pass at epsilon 1 with 13 %
of it; a fortieth of the records alone would cost the madelon and sms spam
tables (1,500 and 4,180 records, two classes) a quarter of the budget and 1
to 5 points of accuracy at epsilon 1, against 12 to 14 % and about a point.
The price: a small table of many small classes (ten of 180 records) loses
them; the kept labels' noisy counts say how many records they hold, and a fit
warns when that is under :data:`COVERAGE_WARNING` of them. ``n``, ``epsilon``
and ``delta`` are public: the share reveals nothing. A public label set costs
nothing; it is usually known (the target's possible values), and
``classes=`` gives it.

Examples
--------
>>> import numpy as np
>>> from dpglm.data import load
>>> rng = np.random.default_rng(0)
>>> y = rng.choice(["cat", "dog"], size=20_000).astype(object)
>>> y[0] = "ferret"  # one record: never released
>>> data = load(rng.normal(size=(20_000, 2)), y, task="classification")
>>> selection = LabelSelection.create(20_000, epsilon=1.0, delta=1e-8)
>>> kept, report = selection.run(data, budget=None, random_state=0, label="example")
>>> kept.labels.classes.tolist(), kept.n_classes
(['cat', 'dog'], 2)
>>> list(report.parts), round(report.epsilon, 3)
(['label selection'], 0.1)
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np

from dpglm.data.labels import ClassLabels
from dpglm.data.locations import preview
from dpglm.exceptions import TargetError
from dpglm.preprocessing.categories import CategoryPlan
from dpglm.privacy.spending import spend
from dpglm.privacy.targets import Share, left_after

__all__ = [
    "COUNTS_LABEL",
    "COVERAGE_WARNING",
    "LABEL_FRACTION",
    "LABEL_PART",
    "LABEL_RECORDS",
    "MAX_SHARE",
    "MIN_SHARE",
    "SMALL_FRACTION",
    "THRESHOLD_LABEL",
    "KeptLabels",
    "LabelSelection",
    "label_share",
    "relabelled",
]

#: the report's name of the label selection's part
LABEL_PART = "label selection"
#: the label of the counts' release
COUNTS_LABEL = (
    "count of each observed class label (Gaussian; L2 sensitivity sqrt(2) under replace-one)"
)
#: the label of the threshold's fixed delta
THRESHOLD_LABEL = (
    "threshold on the noisy label counts: the label of a single record is kept with "
    "probability at most delta"
)
#: the share of (epsilon, delta) is the least that puts the threshold at most at
#: max(LABEL_FRACTION n, min(LABEL_RECORDS, SMALL_FRACTION n)) for n records, within
#: [MIN_SHARE, MAX_SHARE]
LABEL_FRACTION, LABEL_RECORDS, SMALL_FRACTION = 1.0 / 40.0, 300, 0.25
MIN_SHARE, MAX_SHARE = 0.02, 0.25
#: below this share of the records held by the kept labels (their noisy counts' sum), and
#: by more than the noise explains, a fit warns that labels were left out
COVERAGE_WARNING = 0.9
#: the shares tried, in hundredths
_SHARE_STEPS = range(round(100 * MIN_SHARE), round(100 * MAX_SHARE) + 1)


def _plan(n_samples: int, share: float, epsilon: float, delta: float) -> CategoryPlan:
    return CategoryPlan.create(
        n_samples,
        1,
        share * epsilon,
        share * delta,
        counts_label=COUNTS_LABEL,
        threshold_label=THRESHOLD_LABEL,
        part=LABEL_PART,
    )


def _target(n_samples: int) -> float:
    """The threshold a share must reach: a fortieth of the records, or 300 records in a
    dataset of 1,200 to 12,000, a quarter of them in a smaller one."""
    small = min(float(LABEL_RECORDS), SMALL_FRACTION * n_samples)
    return max(LABEL_FRACTION * n_samples, small)


def label_share(n_samples: int, epsilon: float, delta: float) -> float:
    """The share of a classifier's ``(epsilon, delta)`` that selects its label set.

    The least share in hundredths, from :data:`MIN_SHARE` to
    :data:`MAX_SHARE`, whose threshold is at most
    ``max(n / 40, min(300, n / 4))`` for ``n`` records; the threshold falls as
    the share grows (both the noise and its multiplier shrink), so the search
    halves the interval.

    Examples
    --------
    >>> label_share(1_000_000, 1.0, 1e-12), label_share(15_000, 1.0, 1 / 15_000**2)
    (0.02, 0.13)
    >>> label_share(2_000, 1.0, 1 / 2_000**2), label_share(2_000, 0.5, 1 / 2_000**2)
    (0.13, 0.24)
    """
    low, high = 0, len(_SHARE_STEPS) - 1
    while low < high:
        middle = (low + high) // 2
        share = _SHARE_STEPS[middle] / 100.0
        if _plan(n_samples, share, epsilon, delta).threshold <= _target(n_samples):
            high = middle
        else:
            low = middle + 1
    return _SHARE_STEPS[low] / 100.0


@dataclass(frozen=True)
class KeptLabels:
    """What a label selection kept.

    Attributes
    ----------
    labels : ClassLabels
        The kept labels, sorted: the model's classes.
    fallback : object
        The kept label of the largest noisy count, which the records of a
        label not kept are fitted as.
    coverage : float
        The share of the records the kept labels hold, by their noisy counts
        (a post-processing of the release), at most 1.
    """

    labels: ClassLabels
    fallback: object
    coverage: float = 1.0

    @property
    def n_classes(self) -> int:
        return self.labels.n_classes


@dataclass(frozen=True)
class LabelSelection:
    """The private selection of a classifier's label set, at its share of the fit's target.

    Attributes
    ----------
    share : Share
        Of the fit's ``(epsilon, delta)`` (:func:`label_share`).
    target : tuple of float
        The fit's ``(epsilon, delta)``.
    plan : CategoryPlan
        Its counts' Gaussian release and its threshold's delta.
    """

    share: Share
    target: tuple
    plan: CategoryPlan

    @classmethod
    def create(cls, n_samples: int, epsilon: float, delta: float) -> LabelSelection:
        """The selection of a fit of ``n_samples`` records at ``(epsilon, delta)``.

        Examples
        --------
        >>> selection = LabelSelection.create(15_000, 1.0, 1 / 15_000**2)
        >>> selection.share.value, round(selection.plan.threshold), selection.epsilon
        (0.13, 364, 0.13)
        """
        share = label_share(n_samples, epsilon, delta)
        plan = _plan(n_samples, share, epsilon, delta)
        return cls(Share(share, "label share"), (epsilon, delta), plan)

    @property
    def epsilon(self) -> float:
        """The selection's own epsilon."""
        return self.share.of(self.target[0])

    @property
    def delta(self) -> float:
        """The selection's own delta."""
        return self.share.of(self.target[1])

    @property
    def rest(self) -> tuple:
        """``(epsilon, delta)`` left for the model: what the selection's own leaves of the
        target, rounded down so that the two add up to no more than it in floating point."""
        return left_after(self.target[0], self.epsilon), left_after(self.target[1], self.delta)

    def check_feasible(self, name: str) -> None:
        """Refuse, before anything is charged, a fit whose selection cannot keep two labels.

        Two labels pass only when each holds more than the threshold: at
        or above half the records, the selection would keep at most one.
        Decided from the public ``n``, ``epsilon`` and ``delta`` alone.

        Examples
        --------
        >>> LabelSelection.create(200, 0.5, 1e-6).check_feasible("DPLogisticRegression")
        Traceback (most recent call last):
        ...
        dpglm.exceptions.TargetError: DPLogisticRegression: 200 records at epsilon 0.5 are too few to select the label set privately (a label is kept when its noisy count exceeds 248, with 25% of the budget); give the public label set as classes= (free), or a larger epsilon
        """  # noqa: E501
        plan = self.plan
        if 2.0 * plan.threshold >= plan.n_samples:
            raise TargetError(
                f"{name}: {plan.n_samples} records at epsilon {self.target[0]:g} "
                "are too few to select the label set privately (a label is kept when its "
                f"noisy count exceeds {plan.threshold:.0f}, with {self.share.value:.0%} of the "
                "budget); give the public label set as classes= (free), or a larger epsilon"
            )

    def keep(self, values, counts, release, name: str = "the classifier") -> KeptLabels:
        """The labels among ``values`` whose noisy count exceeds the threshold.

        Parameters
        ----------
        values : array-like of shape (K,)
            The distinct observed labels, sorted.
        counts : array-like of shape (K,)
            How many records hold each.
        release : Release
            The counts' Gaussian event bound to the noise source.
        name : str
            For the message when fewer than two labels are kept.

        Raises
        ------
        TargetError
            Fewer than two labels kept (the selection is charged by then).
        """
        values = np.asarray(values)
        plan = self.plan
        # one column of counts, keyed by position: the noisy counts are in the values' order
        counted = dict(enumerate(counts))
        if len(counted) != len(values):
            raise ValueError(f"{len(values)} labels but {len(counted)} counts")
        ((_, noisy_counts),) = plan.noisy_counts([counted], release)
        above = noisy_counts > plan.threshold
        kept = values[above]
        if len(kept) < 2:
            raise TargetError(
                f"{name}: the private label selection kept {len(kept)} label(s) "
                f"{preview(kept)}: a label is kept when its noisy count exceeds "
                f"{plan.threshold:.0f} of the {plan.n_samples} records; its share of the "
                f"budget (epsilon {self.epsilon:.3g}) is spent. Give the public label set "
                "as classes= (free), or a larger epsilon"
            )
        fallback = values[int(np.argmax(noisy_counts))]
        coverage = min(1.0, max(0.0, float(np.sum(noisy_counts[above])) / plan.n_samples))
        return KeptLabels(ClassLabels.of(kept), fallback, coverage)

    def run(self, data, *, budget, random_state, label: str):
        """Select the label set of a classification :class:`~dpglm.data.Dataset`: :meth:`select`
        on its labels (``data.labels``) and their counts."""
        return self.select(
            data.labels.classes,
            class_counts(data),
            budget=budget,
            random_state=random_state,
            label=label,
        )

    def select(self, values, counts, *, budget, random_state, label: str):
        """Charge the selection, release the noisy counts and keep the labels above the threshold.

        Parameters
        ----------
        values : array-like of shape (K,)
            The distinct observed labels, sorted.
        counts : array-like of shape (K,)
            How many records hold each (read only through the noise).
        budget : PrivacyBudget or None
            Charged for the selection.
        random_state : None, int, SeedSequence or Generator
            The selection's noise.
        label : str
            What is charged, for the ledger and the messages.

        Returns
        -------
        kept : KeptLabels
        report : PrivacyReport
            The selection's, with a line on what it kept.
        """
        spent = spend(
            self.plan.plan,
            epsilon=self.epsilon,
            delta=self.delta,
            budget=budget,
            label=label,
            random_state=random_state,
        )
        kept = self.keep(values, counts, spent.release(0), label)
        if self.left_out(kept):
            warnings.warn(
                f"{label}: the labels kept, {preview(kept.labels.classes)}, hold about "
                f"{kept.coverage:.0%} of the records by their noisy counts, less than their "
                f"noise explains; the others' labels (each under about "
                f"{self.plan.threshold:.0f} records) are fitted as "
                f"{np.asarray(kept.fallback).item()!r}. Give the public label set as "
                "classes= to fit them all",
                UserWarning,
                stacklevel=3,
            )
        return kept, self.reported(spent.report, kept)

    def left_out(self, kept: KeptLabels) -> bool:
        """Whether the kept labels hold less than :data:`COVERAGE_WARNING` of the records,
        by more than four standard deviations of their noisy counts' sum: labels were then
        left out (a post-processing of the release)."""
        plan = self.plan
        deficit = (1.0 - kept.coverage) * plan.n_samples
        noise = 4.0 * plan.noise_scale * np.sqrt(kept.n_classes)
        return kept.coverage < COVERAGE_WARNING and deficit > noise

    def reported(self, report, kept: KeptLabels):
        """``report`` with the line that says how the label set was selected."""
        plan = self.plan
        line = (
            f"label set {preview(kept.labels.classes)} selected privately ({self.share.value:.0%} "
            f"of epsilon and delta): Gaussian noise of standard deviation "
            f"{plan.noise_scale:.4g} on the count of every observed label, kept above "
            f"{plan.threshold:.4g}, holding about {kept.coverage:.0%} of the records by "
            "their noisy counts; records of a label not kept are fitted as "
            f"{np.asarray(kept.fallback).item()!r}, the kept label of the largest noisy count"
        )
        return replace(report, assumptions=(*report.assumptions, line))


def class_counts(data) -> np.ndarray:
    """How many records of a classification :class:`~dpglm.data.Dataset` hold each class.

    Examples
    --------
    >>> from dpglm.data import load
    >>> class_counts(load(np.zeros((3, 1)), ["b", "a", "b"], task="classification"))
    array([1, 2])
    """
    return np.bincount(_class_index(data), minlength=data.labels.n_classes)


def _class_index(data) -> np.ndarray:
    """The position of every record's label in ``data.labels.classes``."""
    y = np.asarray(data.y)
    if data.labels.n_classes == 2:
        return (y > 0).astype(np.intp)
    return y.astype(np.intp)


def relabelled(data, kept: KeptLabels):
    """``data`` with the kept label set: its records of a label not kept take the fallback.

    Examples
    --------
    >>> from dpglm.data import load
    >>> data = load(np.zeros((4, 1)), ["a", "b", "c", "b"], task="classification")
    >>> kept = KeptLabels(ClassLabels.of(["b", "c"]), "b")
    >>> new = relabelled(data, kept)
    >>> new.labels.classes.tolist(), new.decode(new.y).tolist()
    (['b', 'c'], ['b', 'b', 'c', 'b'])
    """
    classes = data.labels.classes
    position = {value: k for k, value in enumerate(kept.labels.classes.tolist())}
    fallback = position[np.asarray(kept.fallback).item()]
    where = np.array([position.get(value, fallback) for value in classes.tolist()])
    index = where[_class_index(data)]
    binary = kept.n_classes == 2
    codes = np.where(index == 1, 1.0, -1.0) if binary else index.astype(np.float64)
    return replace(data, y=codes, labels=kept.labels)
