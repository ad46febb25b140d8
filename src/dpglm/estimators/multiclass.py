"""More than two classes: the checks, and one-vs-rest as one plan.

A classifier whose target holds ``K > 2`` classes fits them in one of two ways
(:meth:`DPLinearModel._strategy <dpglm.estimators.base.DPLinearModel._strategy>`):

* **multinomial** (logistic regression with DP-SGD or DP-AGD, the default):
  one fit of the ``K x (p + 1)`` coefficients of the softmax loss
  (:class:`~dpglm.datafits.Multinomial`), each record's gradient clipped over
  all ``K`` rows at once, so its plan is the binary fit's, whatever ``K``;
* **one-vs-rest** (the coordinate and dual solvers, DP-CD, DP-GCD and
  DP-SCD, which fit one margin per record, and every linear SVC): ``K``
  binary fits, class ``k`` against the rest, whose plans are put in a row
  (:func:`repeated`), each its own part of the report, and calibrated
  together to the one ``(epsilon, delta)`` by the accountant. Each fit then
  gets the noise of a ``K``-fold composition: about ``sqrt(K)`` times the
  binary fit's under Gaussian noise.

Examples
--------
>>> import numpy as np
>>> ovr_target(np.array([0.0, 2.0, 1.0]), 2)
array([-1.,  1., -1.])
>>> class_parts(np.array(["a", "b"]))
['class a', 'class b']
"""

from __future__ import annotations

import dataclasses
import numbers

import numpy as np

from dpglm.data.locations import preview
from dpglm.exceptions import TargetError
from dpglm.privacy.events import PrivacyPlan
from dpglm.solvers.registry import FitPlan
from dpglm.solvers.smoothness import CLIPPED_TO_BOUNDS

#: records per class, on average, below which a target is refused as not a class label
MIN_ROWS_PER_CLASS = 2


def check_n_classes(n_classes) -> int:
    """``n_classes`` as an int >= 2, or a ``ValueError`` naming it.

    Examples
    --------
    >>> check_n_classes(3)
    3
    """
    if isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral) or n_classes < 2:
        raise ValueError(f"n_classes must be an int >= 2, got {n_classes!r}")
    return int(n_classes)


def check_class_count(name: str, classes, n_samples: int) -> None:
    """Refuse more classes than the rows allow: fewer than two rows per class on average.

    Such a target is a regression target or an identifier, not class labels.

    Examples
    --------
    >>> check_class_count("DPLogisticRegression", ["a", "b", "c"], 6)
    >>> check_class_count("DPLogisticRegression", ["a", "b", "c"], 5)
    Traceback (most recent call last):
    ...
    dpglm.exceptions.TargetError: DPLogisticRegression: 3 classes ['a', 'b', 'c'] for 5 rows; a classifier needs at least 2 rows per class on average (is the target a regression target or an identifier?)
    """  # noqa: E501
    classes = list(classes)
    if len(classes) * MIN_ROWS_PER_CLASS > n_samples:
        raise TargetError(
            f"{name}: {len(classes)} classes {preview(np.asarray(classes))} for {n_samples} "
            f"rows; a classifier needs at least {MIN_ROWS_PER_CLASS} rows per class on average "
            "(is the target a regression target or an identifier?)"
        )


def class_parts(classes) -> list:
    """The report's part of each class's fit in one-vs-rest."""
    return [f"class {label}" for label in np.asarray(classes).tolist()]


def label_assumption(classes, public: bool) -> str:
    """The report's line on where the label set, released in ``classes_``, comes from."""
    shown = preview(np.asarray(classes))
    if public:
        return f"label set {shown} given as classes (public, fixed without the data)"
    return (
        f"label set {shown} read from the data and released (classes_, the model file): "
        "covered by the guarantee only if it is public (give classes= to fix it without the "
        "data)"
    )


def ovr_target(codes, k: int) -> np.ndarray:
    """The -1 / +1 target of class ``k`` against the rest, from class codes ``0, ..., K-1``."""
    return np.where(np.asarray(codes) == k, 1.0, -1.0)


def repeated(plan: FitPlan, parts) -> FitPlan:
    """The plan of ``len(parts)`` fits of ``plan`` in a row, each its own part.

    A solver's own parts are kept inside each copy (``"class a (smoothness)"``).

    Examples
    --------
    >>> from dpglm.privacy.events import GaussianEvent
    >>> one = FitPlan(PrivacyPlan((GaussianEvent(noise_multiplier=1.0),)), 1.0, 1e-6)
    >>> [e.part for e in repeated(one, ["class a", "class b"]).template.events]
    ['class a', 'class b']
    """
    events = tuple(
        dataclasses.replace(
            event, part=part if event.part == "training" else f"{part} ({event.part})"
        )
        for part in parts
        for event in plan.template.events
    )
    template = PrivacyPlan(events, plan.template.neighbouring)
    return dataclasses.replace(plan, template=template)


def _class_part(part: str, solver_part: str) -> str:
    return part if solver_part == "training" else f"{part} ({solver_part})"


def stack_models(models) -> tuple:
    """``(W, b)`` of shape ``(K, p)`` and ``(K,)`` from the ``K`` binary models ``(w, b)``."""
    coefs, intercepts = zip(*models, strict=True)
    return np.vstack([np.asarray(c, dtype=float) for c in coefs]), np.array(intercepts, float)


def one_vs_rest_report(results, planned, offset: int, size: int):
    """The report of a one-vs-rest fit, from its ``K`` binary fits' results.

    ``planned`` is the report of the charge: the whole plan, each class's
    releases under its part, and the guarantee of them all. Each fit described
    its own ``size`` releases (from ``offset + k size`` in the plan) in its
    report, which lists the plan's events up to its own: those records replace
    the planned ones, under their class's part. The assumptions are the fits'
    (the same for every class), with one line saying how the classes were fitted.
    """
    mechanisms = list(planned.mechanisms)
    for k, result in enumerate(results):
        for j in range(offset + k * size, offset + (k + 1) * size):
            part = planned.mechanisms[j].part
            mechanisms[j] = dataclasses.replace(result.report.mechanisms[j], part=part)
    first = results[0].report
    # the solver's bounds on its input are the scaling's (1), not the user's
    kept = tuple(a for a in first.assumptions if a != CLIPPED_TO_BOUNDS)
    line = (
        f"one-vs-rest: {len(results)} binary fits (each class against the rest), composed by "
        "the accountant into the one (epsilon, delta); each class's fit is its own part"
    )
    warnings = tuple(dict.fromkeys(w for result in results for w in result.report.warnings))
    return dataclasses.replace(
        planned,
        mechanisms=tuple(mechanisms),
        assumptions=(*kept, line),
        warnings=warnings,
    )
