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
in the fit's report, whose guarantee then does not hold.

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

from dpglm.privacy.leaks import warn_privacy_leak

__all__ = ["MAX_FRAMES", "enclosing_pipeline", "upstream_leaks"]

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
