"""A classifier's label set on its default path: selected privately before the model is fitted.

Without ``classes=``, a classifier's fit selects the labels it releases
(``classes_``, the model file) with a share of its budget
(:class:`~dpglm.preprocessing.label_sets.LabelSelection`), charged apart and
first; the model is planned and fitted at the rest, on the kept labels
(the records of a label not kept take the fallback label). Public labels
(``classes=``) cost nothing; a non-private fit (``epsilon=inf``) reads them
from the data, as it reads everything. Records in row chunks that were loaded
with their labels (a :class:`~dpglm.distributed.ShardedRows`) hold a label
set read by the workers, which no fit can select privately: the estimators
refuse them without ``classes``.

Examples
--------
>>> label_selection("DPLogisticRegression", 20_000, 1.0, None, public=None).share.value
0.1
>>> label_selection("DPLogisticRegression", 20_000, float("inf"), None, public=None) is None
True
"""

from __future__ import annotations

import math

import numpy as np

from dpglm.data.columns import is_missing_scalar
from dpglm.data.locations import preview
from dpglm.estimators.tables import composed_report, seed_sequence
from dpglm.exceptions import BudgetExceededError, NonFiniteValueError, TargetError
from dpglm.preprocessing.label_sets import LABEL_PART, LabelSelection, relabelled
from dpglm.privacy.targets import default_delta

__all__ = [
    "check_affordable",
    "label_random_state",
    "label_selection",
    "select_in_memory",
    "select_on_chunks",
    "with_selection",
]

#: the spawn key's last word of the label selection's stream: a tag, not a spawn count, so
#: that it is apart from every stream spawned from the same seed (the category
#: selection's child 0, a pipeline's steps' children 1, 2, ...)
LABEL_STREAM = 0x1ABE15


def label_random_state(random_state):
    """The label selection's seed: a stream of ``random_state`` apart from the model's and
    from every child that :func:`~dpglm.estimators.tables.child_random_states` spawns.

    An int or a SeedSequence gives the SeedSequence of the same entropy whose spawn key
    ends in :data:`LABEL_STREAM` (the given SeedSequence is not advanced); a Generator is
    shared (its state advances); None stays None (fresh entropy).

    Examples
    --------
    >>> label_random_state(3).spawn_key, label_random_state(None)
    ((1752597,), None)
    """
    random_state = seed_sequence(random_state)
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.SeedSequence(
            random_state.entropy,
            spawn_key=(*random_state.spawn_key, LABEL_STREAM),
            pool_size=random_state.pool_size,
        )
    return random_state


def label_selection(name, n_samples, epsilon, delta, *, public):
    """The label selection a classifier's fit runs, or None (public labels, ``epsilon=inf``).

    Checked before anything is charged: ``delta`` must be positive, and the
    records enough to keep two labels.

    Parameters
    ----------
    name : str
        The estimator's name, for messages.
    n_samples : int
    epsilon : float
    delta : float or None
        None: ``min(1 / n**2, 1e-5)``.
    public : ClassLabels or None
        The public label set, if given.

    Returns
    -------
    LabelSelection or None
    """
    if public is not None or math.isinf(epsilon):
        return None
    delta = default_delta(n_samples) if delta is None else delta
    if delta == 0:
        raise ValueError(
            f"{name}(delta=0) cannot select its label set privately: the selection adds "
            "Gaussian noise to the label counts and thresholds them, which needs delta > 0; "
            "give the public label set as classes= to fit at delta = 0"
        )
    selection = LabelSelection.create(n_samples, epsilon, delta)
    selection.check_feasible(name)
    return selection


def check_affordable(budget, selection, model_plan, name):
    """Refuse, before anything is charged, a fit whose budget cannot afford both its label
    selection and its model (``model_plan``), which are charged one after the other."""
    if not budget.can_afford(selection.plan.plan + model_plan):
        raise BudgetExceededError(
            f"{name}: its label selection (epsilon {selection.epsilon:.4g}) and its model "
            f"(epsilon {selection.rest[0]:.4g}) would exceed the budget (epsilon "
            f"{budget.epsilon:g}, {budget.spent():.6g} spent); nothing was charged"
        )


def select_in_memory(selection, data, *, budget, random_state, name):
    """Select the label set of ``data`` (a classification Dataset) and relabel it.

    Returns
    -------
    data : Dataset
        On the kept labels.
    report : PrivacyReport
        The selection's.
    """
    kept, report = selection.run(
        data, budget=budget, random_state=label_random_state(random_state), label=name
    )
    return relabelled(data, kept), report


def select_on_chunks(name, y, epsilon, delta, *, budget, random_state, check):
    """Select the label set of the target ``y`` of records in row chunks (a Dask array,
    counted where it lives, or an array in memory) and relabel it.

    Parameters
    ----------
    name : str
    y : dask.array.Array or ndarray
    epsilon : float
        Finite: the fit's.
    delta : float or None
    budget : PrivacyBudget or None
    random_state : None, int, SeedSequence or Generator
    check : callable
        Called with the number of records, of labels read and the selection,
        before the charge: it refuses what the model's fit would refuse.

    Returns
    -------
    y : dask.array.Array or ndarray
        Its records of a label not kept take the fallback label.
    labels : ClassLabels
        The kept labels.
    report : PrivacyReport
        The selection's.
    rest : tuple of float
        ``(epsilon, delta)`` left for the model.
    """
    import dask.array as da

    from dpglm.estimators.validation import is_dask

    chunked = is_dask(y)
    if chunked:
        values, counts = da.compute(*da.unique(y, return_counts=True))
    else:
        y = np.asarray(y)
        values, counts = np.unique(y, return_counts=True)
    missing = [v for v in values.tolist() if is_missing_scalar(v)]
    if missing:
        # a missing label is refused, never counted as a label nor mapped to the fallback
        raise NonFiniteValueError(
            f"{name}: y holds a missing label ({missing[0]!r}); give every record a label"
        )
    if len(values) < 2:
        raise TargetError(
            f"{name} is a classifier, but y has only one class {preview(values)} on the "
            "chunks; it needs at least two, or the public label set given as classes"
        )
    n = int(np.sum(counts))
    selection = label_selection(name, n, epsilon, delta, public=None)
    check(n, len(values), selection)
    kept, report = selection.select(
        values,
        counts,
        budget=budget,
        random_state=label_random_state(random_state),
        label=name,
    )
    classes, fallback = kept.labels.classes, np.asarray(kept.fallback, dtype=values.dtype)

    def relabel(block):
        return np.where(np.isin(block, classes), block, fallback)

    # block by block: Dask's own isin cannot chunk an object array of labels
    mapped = y.map_blocks(relabel, dtype=y.dtype) if chunked else relabel(y)
    return mapped, kept.labels, report, selection.rest


def with_selection(selection_report, report):
    """``report`` after the label selection's: one report, the selection as its own part."""
    if selection_report is None:
        return report
    return composed_report(selection_report, report, part=LABEL_PART)
