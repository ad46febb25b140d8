"""A search over a pipeline: its private steps fitted once, the search on their output.

:class:`~dpglm.tuning.PrivateSearchCV` takes a scikit-learn ``Pipeline``
whose last step is a dpglm estimator and whose earlier steps are dpglm's
private transformers (:class:`~dpglm.preprocessing.PrivateStandardScaler`,
:class:`~dpglm.preprocessing.PrivateMinMaxScaler`,
:class:`~dpglm.preprocessing.PrivateClipper`,
:class:`~dpglm.preprocessing.PrivateOneHotEncoder`, also nested in a
``ColumnTransformer``) or steps that learn nothing from the data. The
earlier steps are fitted **once**, on every record, before the search: each
private transformer that releases something gets an equal part of the
search's ``steps_share`` of ``(epsilon, delta)``, and the search of
the last step's hyperparameters runs on their output with the rest. The two
compose by basic composition (the search's input is a per-record map of the
records, given the steps' releases, so neighbouring tables stay neighbours),
and the search's report lists the steps' mechanisms as the part
:data:`PREPROCESSING_PART`.

The steps' own hyperparameters are therefore not searched: a candidate
names the last step's parameters, with its prefix (``"dplogisticregression__alpha"``,
as scikit-learn's searches spell them).
"""

from __future__ import annotations

import dataclasses
import math

from sklearn.base import clone
from sklearn.pipeline import Pipeline

from dpglm.estimators.tables import child_random_states, composed_report
from dpglm.preprocessing.encoders import PrivateOneHotEncoder
from dpglm.preprocessing.transformers import (
    PrivateClipper,
    PrivateMinMaxScaler,
    PrivateStandardScaler,
    leaf_steps,
    leak_messages,
    leaking_steps,
)
from dpglm.privacy.leaks import warn_privacy_leak

__all__ = [
    "DEFAULT_STEPS_SHARE",
    "PREPROCESSING_PART",
    "FittedSteps",
    "final_candidates",
    "final_step",
    "fit_steps",
]

#: the part of the search's report that holds the pipeline steps' releases
PREPROCESSING_PART = "preprocessing"
#: the share of the search's (epsilon, delta) the pipeline's private steps take together
DEFAULT_STEPS_SHARE = 0.2

_PRIVATE_STEPS = (PrivateClipper, PrivateMinMaxScaler, PrivateStandardScaler, PrivateOneHotEncoder)


def final_step(estimator):
    """``(name, last step)`` of a ``Pipeline``; ``(None, estimator)`` for anything else.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from dpglm.estimators import DPRidge
    >>> from dpglm.preprocessing import PrivateClipper
    >>> final_step(make_pipeline(PrivateClipper(), DPRidge()))[0]
    'dpridge'
    >>> final_step(DPRidge())[0] is None
    True
    """
    if isinstance(estimator, Pipeline):
        if not estimator.steps:
            raise ValueError("the pipeline has no steps")
        return estimator.steps[-1]
    return None, estimator


def final_candidates(candidates, name):
    """The candidates' parameters for the last step alone, its prefix ``name__`` taken off.

    A parameter of another step is refused: those steps are fitted once,
    before the search.

    Examples
    --------
    >>> final_candidates([{"model__alpha": 0.1}], "model")
    [{'alpha': 0.1}]
    """
    prefix = f"{name}__"
    found = []
    for candidate in candidates:
        one = {}
        for key, value in candidate.items():
            if not key.startswith(prefix):
                raise ValueError(
                    f"{key!r} is not a parameter of the pipeline's last step {name!r} (spelled "
                    f"'{prefix}<parameter>'): the steps before it are fitted once, before the "
                    "search, so their parameters cannot be searched"
                )
            one[key[len(prefix) :]] = value
        found.append(one)
    return found


def _private_steps(pipeline) -> list:
    """dpglm's private transformers held by ``pipeline``'s steps, nested ones included, in
    order (a fitted ``ColumnTransformer``'s are its fitted clones)."""
    return [s for _, s in leaf_steps(pipeline.steps) if isinstance(s, _PRIVATE_STEPS)]


def _releases(step) -> bool:
    # a clipper or a min-max scaler with public bounds releases nothing (and is not charged)
    if isinstance(step, PrivateClipper | PrivateMinMaxScaler):
        return step.bounds is None
    return True


class FittedSteps:
    """The pipeline's steps before the last, fitted once, and what they released.

    Attributes
    ----------
    pipeline : Pipeline
        The fitted steps (a ``Pipeline`` of all but the last).
    reports : list of PrivacyReport
        One per private step that released something, in the order fitted.
    leaks : list of str
        A message per step that learned from the data without privacy (each
        also warned as :class:`~dpglm.exceptions.PrivacyLeakWarning`).
    """

    def __init__(self, pipeline, reports, leaks):
        self.pipeline = pipeline
        self.reports = reports
        self.leaks = leaks

    def transform(self, X):
        """The records as the last step reads them."""
        return self.pipeline.transform(X)

    def composed(self, report):
        """One report: the steps' releases (part :data:`PREPROCESSING_PART`) then ``report``."""
        for step_report in reversed(self.reports):
            report = composed_report(step_report, report, part=PREPROCESSING_PART)
        if self.leaks:
            warnings = tuple(dict.fromkeys((*report.warnings, *self.leaks)))
            report = dataclasses.replace(report, warnings=warnings)
        return report

    def with_last(self, name, model):
        """A ``Pipeline`` of the fitted steps followed by ``model`` (fitted) as ``name``."""
        return Pipeline([*self.pipeline.steps, (name, model)])


def fit_steps(pipeline, X, y, *, epsilon, delta, share, budget, random_state):
    """Fit the steps of ``pipeline`` before its last, once, at ``share`` of ``(epsilon, delta)``.

    Parameters
    ----------
    pipeline : Pipeline
        Its last step is the searched estimator; the others are fitted here
        (clones: ``pipeline`` is left as it is).
    X, y : the search's records
    epsilon, delta : float
        The whole search's target.
    share : float
        Of ``(epsilon, delta)``, split equally among the private steps that
        release something.
    budget : PrivacyBudget or None
        Charged by each such step.
    random_state : None, int, SeedSequence or Generator
        The search's; each step takes its own child seed.

    Returns
    -------
    steps : FittedSteps
    rest : tuple of float
        ``(epsilon, delta)`` left for the search.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.pipeline import make_pipeline
    >>> from dpglm.estimators import DPLogisticRegression
    >>> from dpglm.preprocessing import PrivateStandardScaler
    >>> X = np.random.default_rng(0).normal(5.0, 2.0, (5000, 2))
    >>> y = X[:, 0] > 5.0
    >>> pipeline = make_pipeline(PrivateStandardScaler(), DPLogisticRegression())
    >>> steps, rest = fit_steps(pipeline, X, y, epsilon=1.0, delta=1e-8, share=0.2,
    ...                         budget=None, random_state=0)  # fmt: skip
    >>> [round(v, 10) for v in rest], steps.reports[0].epsilon <= 0.2
    ([0.8, 8e-09], True)
    """
    steps = Pipeline([(name, clone(step)) for name, step in pipeline.steps[:-1]])
    private = [s for s in _private_steps(steps) if _releases(s)]
    rest, each = (epsilon, delta), None
    if private:
        each = (share * epsilon / len(private), share * delta / len(private))
        rest = (epsilon * (1.0 - share), delta * (1.0 - share))
    own = [step.random_state for step in private]
    # children after the one the search's category selection would take
    seeds = child_random_states(random_state, len(private), skip=1)
    for step, seed in zip(private, seeds, strict=True):
        step.set_params(epsilon=each[0], delta=each[1], budget=budget, random_state=seed)
    steps.fit(X, y)
    fitted = [s for s in _private_steps(steps) if _releases(s)]
    for step, seed in zip(fitted, own, strict=True):
        # the child seed drew the step's noise: the fitted step keeps the user's setting
        step.set_params(random_state=seed)
    reports = [s.privacy_report_ for s in fitted if s.privacy_report_ is not None]
    found = leaking_steps(steps.steps)
    if math.isinf(epsilon):  # a non-private search: its private steps' exact release is asked
        found = [leak for leak in found if all(leak[1] is not s for s in fitted)]
    leaks = leak_messages(found)
    for message in leaks:
        warn_privacy_leak(message, stacklevel=3)
    return FittedSteps(steps, reports, leaks), rest
