"""Private category sets of categorical columns: noisy counts of the observed values, thresholded.

Reading the values of a string column off the data to one-hot encode it
releases them: a value that one record alone holds (a rare occupation, a
misspelt country) names that record. The values are selected privately
instead, by the stability-based selection of Korolova, Kenthapadi, Mishra and
Ntoulas (2009), "Releasing search queries and clicks privately" (WWW), with
Gaussian noise as in Wilson, Zhang, Lam, Desfontaines, Simmons-Marengo and
Gipson (2020), "Differentially private SQL with bounded user contribution"
(PoPETs):

1. count every value observed in each of the ``c`` columns (a value absent
   from the data has no count and is never released);
2. add Gaussian noise of standard deviation ``sigma`` to every count, in one
   release of all the columns' counts;
3. keep the values whose noisy count exceeds the threshold ``tau``.

**Missing values.** ``None``, float NaN, pandas' ``NA`` and ``NaT``, and every
string given in ``missing_values`` (e.g. ``"?"``) are one value of the
column, :data:`MISSING` (the string ``"<missing>"``, which stands for itself
too): a level like any other, counted, noised and kept or not by the same rule.

**Sensitivity.** Neighbouring datasets differ in one record's values
(replace-one: the number of records ``n`` is public). In each column that
record's old value loses one count and its new value gains one (nothing
changes when they are equal), so the vector of all the counts moves by at
most ``sqrt(2)`` per column: L2 sensitivity ``sqrt(2 c)``, whatever the
values. A value seen in only one of the two datasets has count 0 in the
other, which is the count it would have in a release over every possible
value.

**Threshold and delta.** What noise alone does not hide is a value present in
one dataset and absent from its neighbour: its count there is exactly 1 (one
record holds it), and there is at most one such value per column in each
dataset, the removed record's or the added one's: at most ``2 c`` over the
pair. Each passes the threshold ``tau = 1 + sigma z`` with probability
``P[1 + N(0, sigma**2) > tau] = 1 - Phi(z)``; with
``z = Phi^{-1}(1 - delta_t / (2 c))`` (:func:`selection_threshold`), the chance that any
of them is released, in either dataset's run, is at most ``delta_t``. Outside
that event both runs release exactly what the Gaussian release of the counts
of the values common to both datasets, post-processed by the threshold,
releases: ``(epsilon, delta_g)``-DP with the sensitivity above. The noise of
the values seen in one dataset only is independent of that release, and
splitting each run's output on whether such a value was kept bounds
``P[M(D) in S] - e**epsilon P[M(D') in S]`` by ``delta_g`` plus the
largest of the two chances: the whole selection is
``(epsilon, delta_g + delta_t)``-DP, and composes with further releases
the same way, which is how :class:`~dpglm.privacy.events.ThresholdEvent`
is accounted (``delta_t`` taken off the plan's delta).

**The split of delta.** :data:`THRESHOLD_SHARE` (half) of ``delta`` goes to
the threshold, the rest to the Gaussian release, whose noise is calibrated so
that the plan meets ``(epsilon, delta)``. What the split decides is ``tau``,
the count a value needs to be kept: both ``sigma`` and ``z`` grow as their
share of delta shrinks. Of the shares 0.05 to 0.95, half gave the lowest
``tau`` on every target tried (``c`` from 1 to 100, ``(epsilon, delta)`` from
``(0.1, 1e-9)`` to ``(1, 1e-6)``), and 0.1 or 0.9 a ``tau`` 1.5 to 5 % higher:
a fixed public share loses little, and keeps the plan a function of ``n``,
``c``, ``epsilon`` and ``delta`` alone.

Examples
--------
>>> import numpy as np
>>> from dpglm.privacy.spending import spend
>>> rng = np.random.default_rng(0)
>>> colour = rng.choice(["red", "green", "blue"], size=5_000, p=[0.5, 0.3, 0.2]).astype(object)
>>> colour[:3] = ["mauve", None, "?"]  # too rare to release: one record, two missing
>>> plan = CategoryPlan.create(5_000, 1, epsilon=1.0, delta=1e-6)
>>> spent = spend(plan.plan, epsilon=1.0, delta=1e-6, random_state=0)
>>> select([colour], plan, spent.release(0), missing_values="?")
[array(['blue', 'green', 'red'], dtype=object)]
>>> round(plan.threshold, 1), [e.kind for e in plan.plan.events]
(32.0, ['gaussian', 'threshold'])
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from dpglm.data.columns import object_array
from dpglm.preprocessing.ranges import PART
from dpglm.privacy.events import GaussianEvent, PrivacyPlan, ThresholdEvent
from dpglm.privacy.report import MechanismRecord
from dpglm.privacy.spending import calibrate_cached
from dpglm.privacy.targets import Share, check_privacy_target, default_delta

__all__ = [
    "COUNTS_LABEL",
    "MISSING",
    "THRESHOLD_LABEL",
    "THRESHOLD_SHARE",
    "CategoryPlan",
    "count_levels",
    "level_of",
    "missing_markers",
    "select",
    "selection_threshold",
    "sort_levels",
]

#: the one level of every missing value of a column (None, NaN, pandas' NA, the strings
#: given as missing values, and this string itself)
MISSING = "<missing>"
#: the label of the counts' release
COUNTS_LABEL = (
    "counts of each observed value of each categorical column (Gaussian; L2 sensitivity "
    "sqrt(2c) under replace-one)"
)
#: the label of the threshold's fixed delta
THRESHOLD_LABEL = (
    "threshold on the noisy counts: a value held by one record alone is kept with probability "
    "at most delta"
)
#: the share of delta that pays for the threshold; the Gaussian release gets the rest
THRESHOLD_SHARE = Share(0.5, "threshold share")

#: why the selection needs delta > 0
_GAUSSIAN_REASON = "the counts are released with Gaussian noise and thresholded"
#: pandas' missing scalars, recognised by their type's name without importing pandas
_PANDAS_MISSING = frozenset({"NAType", "NaTType"})


# -- levels ------------------------------------------------------------------------------------


def missing_markers(missing_values) -> tuple:
    """``missing_values`` as a tuple of strings: None, one string, or a sequence of strings.

    Examples
    --------
    >>> missing_markers("?"), missing_markers(None), missing_markers(["?", "n/a"])
    (('?',), (), ('?', 'n/a'))
    """
    if missing_values is None:
        return ()
    if isinstance(missing_values, str):
        return (missing_values,)
    try:
        markers = tuple(missing_values)
    except TypeError:
        markers = None
    if markers is None or not all(isinstance(m, str) for m in markers):
        raise ValueError(
            "missing_values must be None, a string or a sequence of strings that mark a "
            f"missing value (e.g. '?'), got {missing_values!r}"
        )
    return markers


def level_of(value, markers=()):
    """The level ``value`` counts in: :data:`MISSING` for a missing marker, else itself.

    Examples
    --------
    >>> [level_of(v, ("?",)) for v in ["a", None, float("nan"), "?", 3]]
    ['a', '<missing>', '<missing>', '<missing>', 3]
    """
    if value is None:
        return MISSING
    if isinstance(value, np.generic):
        # numpy's scalars (the np.str_ of a string array) as the Python values they equal
        value = value.item()
    if isinstance(value, float):
        return MISSING if math.isnan(value) else value
    if isinstance(value, str):
        return MISSING if value == MISSING or value in markers else value
    if type(value).__name__ in _PANDAS_MISSING:
        return MISSING
    return value


def _sort_key(level):
    # the missing level last; then the string form, and the type's name between values
    # whose string forms agree (1 and "1")
    return (level == MISSING, str(level), type(level).__name__)


def sort_levels(levels) -> np.ndarray:
    """``levels`` sorted by their string form, :data:`MISSING` last, as an object array.

    Examples
    --------
    >>> sort_levels(["b", MISSING, "a", 10])
    array([10, 'a', 'b', '<missing>'], dtype=object)
    """
    return object_array(sorted(levels, key=_sort_key))


def count_levels(values, markers=()) -> dict:
    """The exact count of every level of one column: ``{level: count}``, sorted.

    The records are counted in C (``collections.Counter``); only the distinct
    values are looked at in Python, to map the missing markers to
    :data:`MISSING`.

    Parameters
    ----------
    values : array-like of shape (n,)
        Hashable values.
    markers : tuple of str
        Strings that mark a missing value (:func:`missing_markers`).

    Returns
    -------
    dict
        Every level observed, with its count (a positive int), in the order of
        :func:`sort_levels`.

    Raises
    ------
    TypeError
        A value is not hashable.

    Examples
    --------
    >>> count_levels(["b", "a", "b", None, "?", float("nan")], ("?",))
    {'a': 1, 'b': 2, '<missing>': 3}
    """
    levels = {}
    for value, count in Counter(values).items():
        level = level_of(value, markers)
        levels[level] = levels.get(level, 0) + count
    return {level: levels[level] for level in sort_levels(levels)}


def selection_threshold(sigma: float, delta: float, n_columns: int) -> float:
    """``1 + sigma Phi^{-1}(1 - delta / (2 c))``: the least noisy count a kept value has.

    A value held by one record has count 1; with noise ``N(0, sigma**2)`` it
    passes with probability ``delta / (2 c)``, and the ``2 c`` such values of
    two neighbouring datasets (at most one per column in each) together with
    probability at most ``delta``. ``sigma = 0`` (no noise, no privacy) gives 0:
    every observed value is kept.

    Examples
    --------
    >>> round(selection_threshold(10.0, 1e-6, 2), 3)
    51.263
    >>> selection_threshold(0.0, 1e-6, 2)
    0.0
    """
    if sigma == 0.0:
        return 0.0
    # -ndtri(p) is Phi^{-1}(1 - p) without the rounding of 1 - p at small p
    return 1.0 + sigma * float(-ndtri(delta / (2.0 * n_columns)))


# -- the plan and the release ------------------------------------------------------------------


def _check_count(name, value, least):
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
        raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class CategoryPlan:
    """The private selection of the values of ``n_columns`` categorical columns.

    Attributes
    ----------
    n_samples : int
        The public number of records.
    n_columns : int
        ``c``, the columns whose values are selected.
    plan : PrivacyPlan
        A :class:`~dpglm.privacy.events.GaussianEvent` (the counts, noise fixed
        once calibrated) and a :class:`~dpglm.privacy.events.ThresholdEvent`
        (its fixed delta), both of part ``"preprocessing"``.
    threshold : float
        ``tau``: a value is kept when its noisy count exceeds it
        (:func:`selection_threshold`).
    """

    n_samples: int
    n_columns: int
    plan: PrivacyPlan
    threshold: float

    @classmethod
    def create(
        cls,
        n_samples: int,
        n_columns: int,
        epsilon: float,
        delta: float | None = None,
        *,
        accountant: str = "auto",
        counts_label: str = COUNTS_LABEL,
        threshold_label: str = THRESHOLD_LABEL,
        part: str = PART,
    ) -> CategoryPlan:
        """The selection's events, calibrated to ``(epsilon, delta)``, and its threshold.

        Parameters
        ----------
        n_samples : int
            At least 1.
        n_columns : int
            At least 1.
        epsilon : float
            What the selection may spend (``inf``: no noise, every observed
            value kept, and no privacy).
        delta : float or None, default=None
            ``None``: ``min(1 / n_samples**2, 1e-5)``. Must be > 0 for a private
            selection; :data:`THRESHOLD_SHARE` of it pays for the threshold.
        accountant : str, default="auto"
        counts_label, threshold_label : str
            The report's labels of the counts' release and of the threshold
            (other selections, e.g. of class labels, name what they count).
        part : str, default="preprocessing"
            The report's part of both events.

        Examples
        --------
        >>> plan = CategoryPlan.create(1_000, 8, epsilon=1.0, delta=1e-6)
        >>> [(e.kind, e.part) for e in plan.plan.events]
        [('gaussian', 'preprocessing'), ('threshold', 'preprocessing')]
        >>> plan.sensitivity, plan.plan.events[1].delta
        (4.0, 5e-07)
        """
        n = _check_count("n_samples", n_samples, 1)
        c = _check_count("n_columns", n_columns, 1)
        epsilon, delta = check_privacy_target(
            epsilon, delta, optional_delta=True, positive_delta=_GAUSSIAN_REASON, what="selection"
        )
        if delta is None:
            delta = default_delta(n)
        sensitivity = math.sqrt(2.0 * c)
        template = PrivacyPlan(
            (
                GaussianEvent(
                    noise_multiplier=1.0, sensitivity=sensitivity, label=counts_label, part=part
                ),
                ThresholdEvent(delta=THRESHOLD_SHARE.of(delta), label=threshold_label, part=part),
            )
        )
        calibrated = calibrate_cached(template, epsilon, delta, accountant).plan
        counts, cut = calibrated.events
        plan = PrivacyPlan((counts.frozen(), cut), calibrated.neighbouring)
        # the threshold is the plan's: from the noise scale its report states, so that anyone
        # can recompute it from the report (the noise itself is drawn by the release)
        sigma = MechanismRecord.from_event(plan.events[0]).noise_scale
        return cls(n, c, plan, selection_threshold(sigma, cut.delta, c))

    @property
    def sensitivity(self) -> float:
        """``sqrt(2 c)``: the L2 sensitivity of all the counts under replace-one."""
        return math.sqrt(2.0 * self.n_columns)

    @property
    def noise_scale(self) -> float:
        """``sigma``, the standard deviation of the noise on every count (the report's)."""
        return MechanismRecord.from_event(self.plan.events[0]).noise_scale

    def counts(self, columns, missing_values=None) -> list:
        """The exact count of every observed level of each column (:func:`count_levels`).

        Parameters
        ----------
        columns : sequence of array-like of shape (n_samples,)
            ``n_columns`` columns of hashable values.
        missing_values : None, str or sequence of str

        Returns
        -------
        list of dict
            ``{level: count}`` per column.
        """
        columns = list(columns)
        if len(columns) != self.n_columns:
            raise ValueError(
                f"the plan selects the values of {self.n_columns} columns, got {len(columns)}"
            )
        markers = missing_markers(missing_values)
        counted = []
        for j, values in enumerate(columns):
            if len(values) != self.n_samples:
                raise ValueError(
                    f"column {j} has {len(values)} records; the plan was made for "
                    f"n_samples={self.n_samples}"
                )
            counted.append(count_levels(values, markers))
        return counted

    def noisy_counts(self, counts, noise) -> list:
        """Release exact ``counts`` (:meth:`counts`): ``(levels, noisy counts)`` per column.

        Parameters
        ----------
        counts : list of dict
            As :meth:`counts` returns them.
        noise : Release
            The plan's Gaussian event bound to the fit's noise source
            (``spend(plan.plan, ...).release(0)``).

        Returns
        -------
        list of (ndarray of object, ndarray of float)
        """
        counts = list(counts)
        sizes = [len(c) for c in counts]
        exact = np.fromiter(
            (count for column in counts for count in column.values()),
            dtype=float,
            count=sum(sizes),
        )
        # one Gaussian release of every column's counts: their L2 sensitivity is the plan's
        noisy = np.atleast_1d(noise.add(exact, sensitivity=self.sensitivity))
        pieces = np.split(noisy, np.cumsum(sizes)[:-1])
        return [(object_array(c), piece) for c, piece in zip(counts, pieces, strict=True)]

    def keep(self, noisy) -> list:
        """The levels whose noisy count exceeds :attr:`threshold`, per column, sorted."""
        return [levels[values > self.threshold] for levels, values in noisy]


def select(columns, plan: CategoryPlan, noise, *, missing_values=None) -> list:
    """The values of each column whose noisy count exceeds the plan's threshold.

    Parameters
    ----------
    columns : sequence of array-like of shape (n_samples,)
        The plan's ``n_columns`` columns, of hashable values.
    plan : CategoryPlan
    noise : Release
        The plan's Gaussian event bound to the fit's noise source
        (``spend(plan.plan, ...).release(0)``), through which the noise is drawn.
    missing_values : None, str or sequence of str
        Strings that mark a missing value, counted in :data:`MISSING`.

    Returns
    -------
    list of ndarray of object
        The kept levels of every column, sorted by their string form with
        :data:`MISSING` last (:func:`sort_levels`); the others fall in the
        column's "other" level when it is encoded.

    Examples
    --------
    >>> from dpglm.privacy.spending import spend
    >>> plan = CategoryPlan.create(4_000, 2, epsilon=float("inf"))
    >>> spent = spend(plan.plan, epsilon=float("inf"), delta=1e-6)
    >>> columns = [["x"] * 3_999 + [None], ["y"] * 4_000]
    >>> select(columns, plan, spent.release(0))  # no noise: every observed value
    [array(['x', '<missing>'], dtype=object), array(['y'], dtype=object)]
    """
    return plan.keep(plan.noisy_counts(plan.counts(columns, missing_values), noise))
