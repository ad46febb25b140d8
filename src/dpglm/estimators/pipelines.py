"""The scikit-learn pipeline an estimator is fitted in, and its steps that learned without privacy.

``Pipeline.fit`` fits the steps before the last and hands their output to the
last step's ``fit``: the estimator sees transformed records, never the steps
that transformed them. A ``StandardScaler`` or a ``OneHotEncoder`` in front of
a private estimator is the leak users write most (the means, variances and
category sets reach the model without noise), so :func:`upstream_leaks` looks
on the call stack for the ``Pipeline.fit`` whose final step is the estimator
being fitted (scikit-learn calls it a frame or two below) and judges the steps
before it by the rule of :func:`dpglm.preprocessing.transformers.check_pipeline`.
Each leak is warned (:class:`~dpglm.exceptions.PrivacyLeakWarning`) and listed
in the fit's report, whose guarantee then does not hold. A private step charged
to a budget other than the estimator's (:func:`upstream_charges`) is no leak,
but the estimator's report alone understates what the pipeline released: the
report says what to add, and the fit warns.

It finds scikit-learn's own pipelines, also inside ``GridSearchCV`` or
``cross_validate`` (each fits a pipeline, which fits its steps); a pipeline of
another library, or records transformed before ``fit`` is called, are not seen:
:func:`~dpglm.preprocessing.transformers.check_pipeline` is the explicit check.

Examples
--------
>>> import warnings
>>> import numpy as np
>>> from sklearn.pipeline import make_pipeline
>>> from sklearn.preprocessing import StandardScaler
>>> from dpglm.estimators import DPLogisticRegression
>>> rng = np.random.default_rng(0)
>>> X, y = rng.normal(size=(2000, 3)), rng.integers(0, 2, 2000)
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     model = make_pipeline(StandardScaler(), DPLogisticRegression(random_state=0)).fit(X, y)
>>> model[-1].privacy_report_.guarantee
False
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

from dpglm.privacy.leaks import warn_privacy_leak

__all__ = ["MAX_FRAMES", "enclosing_pipeline", "upstream_charges", "upstream_leaks"]

#: how many frames above the estimator's ``fit`` the pipeline's ``fit`` is looked for
#: (scikit-learn's ``Pipeline.fit`` calls the final step directly, under a decorator or two)
MAX_FRAMES = 6


def enclosing_pipeline(estimator, *, depth: int = 2):
    """The scikit-learn ``Pipeline`` whose ``fit`` is fitting ``estimator`` as its final step.

    Parameters
    ----------
    estimator : object
        The estimator whose ``fit`` is running.
    depth : int, default=2
        The frame the search starts from, counted from this function's own
        (0): 2 is the caller of the function that calls this one, i.e. the
        caller of the estimator's ``fit`` when ``fit`` calls it directly.

    Returns
    -------
    sklearn.pipeline.Pipeline or None
        None when none is found within :data:`MAX_FRAMES` frames (or
        scikit-learn's pipelines were never imported: no pipeline exists).

    Examples
    --------
    >>> enclosing_pipeline(object()) is None
    True
    """
    module = sys.modules.get("sklearn.pipeline")
    get_frame = getattr(sys, "_getframe", None)
    if module is None or get_frame is None:
        return None
    try:
        frame = get_frame(depth)
    except ValueError:  # the stack is not that deep
        return None
    for _ in range(MAX_FRAMES):
        if frame is None:
            return None
        candidate = frame.f_locals.get("self")
        pipeline = isinstance(candidate, module.Pipeline) and candidate.steps
        if pipeline and candidate.steps[-1][1] is estimator:
            return candidate
        frame = frame.f_back
    return None


def upstream_leaks(estimator) -> tuple:
    """The leak messages of the steps before ``estimator`` in the pipeline fitting it, each
    also warned; empty outside a pipeline or when every earlier step is private.

    Call it from the estimator's ``fit``, before anything is charged.

    Examples
    --------
    >>> upstream_leaks(object())
    ()
    """
    pipeline = enclosing_pipeline(estimator, depth=3)
    if pipeline is None:
        return ()
    from dpglm.preprocessing.transformers import leak_messages, leaking_steps

    messages = tuple(leak_messages(leaking_steps(pipeline.steps[:-1])))
    for message in messages:
        warn_privacy_leak(message, stacklevel=3)
    return messages


def upstream_charges(estimator) -> tuple:
    """What the private steps before ``estimator`` in the pipeline fitting it released
    outside its budget: one report assumption per step, also warned together.

    A step that shares the estimator's :class:`~dpglm.privacy.budget.PrivacyBudget`
    is in that budget's account; a step fitted with a budget of its own (or
    none) is not, though the records the estimator reads went through it: the
    pipeline's guarantee is the composition of both releases, and the
    estimator's report must not pass for the pipeline's.

    Call it from the estimator's ``fit``, as :func:`upstream_leaks`.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn.pipeline import make_pipeline
    >>> from dpglm.estimators import DPLinearRegression
    >>> from dpglm.preprocessing import PrivateStandardScaler
    >>> X = np.random.default_rng(0).normal(size=(2000, 2))
    >>> pipe = make_pipeline(
    ...     PrivateStandardScaler(epsilon=0.5, random_state=0),
    ...     DPLinearRegression(epsilon=1.0, random_state=0),
    ... )
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     report = pipe.fit(X, X[:, 0]).steps[-1][1].privacy_report_
    >>> print(report.assumptions[-1][:79])
    pipeline step 'privatestandardscaler' (PrivateStandardScaler) spent epsilon=0.5
    """
    pipeline = enclosing_pipeline(estimator, depth=3)
    if pipeline is None:
        return ()
    from dpglm.preprocessing.transformers import leaf_steps
    from dpglm.privacy.report import PrivacyReport

    own = getattr(estimator, "budget", None)
    notes = []
    for name, step in leaf_steps(pipeline.steps[:-1]):
        report = getattr(step, "privacy_report_", None)
        if not isinstance(report, PrivacyReport) or report.non_private:
            continue  # nothing released, or a leak (upstream_leaks says so)
        if _same_budget(getattr(step, "budget", None), own):
            continue
        notes.append(
            f"pipeline step {name!r} ({type(step).__name__}) spent epsilon={report.epsilon:.4g}, "
            f"delta={report.delta:.3g} outside this fit's budget on the records it transformed "
            "for this fit: the pipeline's guarantee is the composition of both releases (add "
            "them to this report's epsilon and delta); give the steps and the estimator one "
            "PrivacyBudget for one account"
        )
    if notes:
        warnings.warn(
            f"{type(estimator).__name__}'s privacy report covers its own release only: "
            + "; ".join(notes),
            UserWarning,
            stacklevel=3,
        )
    return tuple(notes)


def _same_budget(budget, other) -> bool:
    """Whether two budgets are one account: the same object, or the same dataset of the
    same ledger file (each opened with ``PrivacyBudget.open``)."""
    if budget is None or other is None:
        return False
    if budget is other:
        return True
    if not (getattr(budget, "persistent", False) and getattr(other, "persistent", False)):
        return False
    same_file = Path(budget.ledger_path).resolve() == Path(other.ledger_path).resolve()
    return same_file and budget.dataset == other.dataset
