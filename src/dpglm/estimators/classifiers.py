"""The classifiers (logistic regression, linear SVC) and their labels.

The labels come from the public ``classes`` parameter when it is given (a
training set may then lack some of them, and nothing is spent on them), else
they are selected from ``y`` privately, with a share of the budget
(:mod:`dpglm.estimators.labels`; the report's part ``"label selection"``):
a label held by fewer records than the selection's threshold is not released,
and its records are fitted as the kept label with the largest noisy count. Two
classes are fitted as -1/+1 targets (:class:`~dpglm.data.labels.BinaryLabels`); more, ``K``, as
class codes (:class:`~dpglm.data.labels.ClassLabels`), by one multinomial fit
or by ``K`` binary fits one-vs-rest (:mod:`dpglm.estimators.multiclass` says
which and what each costs).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin

from dpglm.data.labels import BinaryLabels, ClassLabels
from dpglm.datafits import Multinomial
from dpglm.estimators.base import COMMON_PARAMETERS_DOC, DPLinearModel, store_params
from dpglm.estimators.validation import check_alpha
from dpglm.penalties import L1, L2, ElasticNet, NoPenalty


class _Classifier(ClassifierMixin, DPLinearModel):
    _task = "classification"

    def _check_params(self):
        epsilon, delta = super()._check_params()
        self._public_labels()
        return epsilon, delta

    def _public_labels(self):
        if self.classes is None:
            return None
        return ClassLabels.from_classes(self.classes)

    def decision_function(self, X):
        """Margins: ``X w + b`` for two classes (positive means ``classes_[1]``), else
        one column per class of ``classes_``, ``X W^T + b``."""
        return self._decision(X)

    def predict(self, X):
        """Predicted class labels: the class of the largest margin."""
        margins = self.decision_function(X)
        if margins.ndim == 2:
            return self.classes_[np.argmax(margins, axis=1)]
        return BinaryLabels(self.classes_).decode(np.where(margins > 0, 1.0, -1.0))


_CLASSES_DOC = """
    classes : array-like of labels, optional
        The public label set, fixed without the data (as scikit-learn's
        ``partial_fit`` takes it). ``y`` must hold only these labels (a
        :class:`~dpglm.exceptions.TargetError` names the first row that does
        not) and may lack some of them: a training set with a single class is
        fitted too, so that whether a fit succeeds does not depend on the data.
        ``classes_`` is this set, sorted, and nothing is spent on it. None:
        the labels are selected from ``y`` privately, first, with a share of
        ``(epsilon, delta)`` (:func:`~dpglm.preprocessing.label_sets.label_share`,
        from 2 % to a quarter) charged apart; the labels held by fewer records
        than the selection's threshold are not released (their records are
        fitted as the kept label with the largest noisy count). A fit with
        ``epsilon=inf`` reads them from ``y`` (the report says so)."""


_PENALTIES = ("none", "l2", "l1", "elasticnet")


def _classifier_penalty(penalty, alpha, l1_ratio):
    if penalty not in _PENALTIES:
        raise ValueError(f"penalty must be one of {_PENALTIES}, got {penalty!r}")
    alpha = check_alpha(alpha)
    if penalty == "none":
        return NoPenalty()
    if penalty == "l2":
        return L2(alpha)
    if penalty == "l1":
        return L1(alpha)
    return ElasticNet(alpha, l1_ratio)


class DPLogisticRegression(_Classifier):
    __doc__ = (
        """Logistic regression (binary or multinomial) under differential privacy.

    More than two classes, ``K``: one multinomial (softmax) fit with DP-SGD
    (the default) or DP-AGD, each record's gradient clipped over all classes
    at once, so that it costs what a binary fit costs; one-vs-rest with DP-CD,
    DP-GCD and DP-SCD, which fit one margin per record: ``K`` binary fits
    calibrated together to the one ``epsilon`` (``K`` parts in the report;
    each fit's noise grows about like ``sqrt(K)``). ``coef_`` has shape
    ``(K, n_features)`` and ``intercept_`` ``(K,)``, and ``(1, n_features)``
    and ``(1,)`` for two classes, as scikit-learn's; ``multi_class_`` says
    which way the classes were fitted.

    Parameters
    ----------
    penalty : {"l2", "l1", "elasticnet", "none"}, default="l2"
    alpha : float, default=1e-4
        Strength of the penalty on the mean loss. The private binary fits at
        the default settings are insensitive to it (adult, phishing,
        electricity, madelon at epsilon 1: 1e-4 and 1e-3 within 0.001 of
        accuracy); the optimum is closer to scikit-learn's with the smaller
        one (non-private letter .757 against .711, electricity .750 against
        .713), and so is the multinomial fit on letter at epsilon 1 (.654
        against .617).
    l1_ratio : float, default=0.5
        Elastic-net mixing, used with ``penalty="elasticnet"``."""
        + _CLASSES_DOC
        + COMMON_PARAMETERS_DOC
        + """
    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(-1, 1, (3000, 2))
    >>> y = np.where(X[:, 0] > 0, "yes", "no")
    >>> model = DPLogisticRegression(feature_bounds=1.0, random_state=0).fit(X, y)
    >>> model.classes_.tolist(), model.predict([[0.9, 0.0]]).tolist()
    (['no', 'yes'], ['yes'])

    With the label set public, a training set that lacks a class is fitted too:

    >>> public = DPLogisticRegression(classes=["yes", "no"], feature_bounds=1.0, random_state=0)
    >>> public.fit(X, np.full(3000, "no")).classes_.tolist()
    ['no', 'yes']
    """
    )

    def __init__(self, penalty="l2", alpha=1e-4, l1_ratio=0.5, *, classes=None, epsilon=1.0,
                 delta=None, budget=None, solver="auto", clip=None, passes=None, step=None,
                 batch_size=None, feature_bounds=None, smoothness="auto", solver_options=None,
                 fit_intercept=True, categories=None, missing_values=None,
                 random_state=None):  # fmt: skip
        store_params(self, locals())

    def _datafit(self):
        return "logistic"

    def _multinomial_datafit(self, n_classes):
        return Multinomial(n_classes)

    def _penalty(self):
        return _classifier_penalty(self.penalty, self.alpha, self.l1_ratio)

    def predict_proba(self, X):
        """Probabilities of each class of ``classes_``; every row sums to 1.

        Multinomial: the softmax of the margins. One-vs-rest: each class's
        logistic probability, divided by their sum (as scikit-learn's
        one-vs-rest does).
        """
        return np.exp(self.predict_log_proba(X))

    def predict_log_proba(self, X):
        """Logarithms of :meth:`predict_proba`, computed without overflow."""
        margins = self.decision_function(X)
        if margins.ndim == 1:
            return np.column_stack([-np.logaddexp(0.0, margins), -np.logaddexp(0.0, -margins)])
        if self.multi_class_ == "ovr":
            margins = -np.logaddexp(0.0, -margins)  # each class's log-probability against the rest
        top = margins.max(axis=1, keepdims=True)
        shifted = margins - top
        return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


_SVC_LOSSES = ("squared_hinge", "hinge")


class DPLinearSVC(_Classifier):
    __doc__ = (
        """Linear support vector classifier under differential privacy.

    More than two classes, ``K``: one-vs-rest, whatever the solver: ``K``
    binary fits calibrated together to the one ``epsilon`` (``K`` parts in
    the report; each fit's noise grows about like ``sqrt(K)``). ``coef_``
    has shape ``(K, n_features)`` and ``intercept_`` ``(K,)``, and
    ``(1, n_features)`` and ``(1,)`` for two classes, as scikit-learn's.

    Parameters
    ----------
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
        ``"hinge"`` is not smooth: ``solver="auto"`` then uses DP-SGD.
    penalty : {"l2", "l1", "elasticnet", "none"}, default="l2"
    alpha : float, default=1e-3
    l1_ratio : float, default=0.5"""
        + _CLASSES_DOC
        + COMMON_PARAMETERS_DOC
        + """
    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(-1, 1, (3000, 2))
    >>> model = DPLinearSVC(feature_bounds=1.0, random_state=0).fit(X, X[:, 1] > 0)
    >>> model.score(X, X[:, 1] > 0) > 0.9
    True
    """
    )

    def __init__(self, loss="squared_hinge", penalty="l2", alpha=1e-3, l1_ratio=0.5, *,
                 classes=None, epsilon=1.0, delta=None, budget=None, solver="auto", clip=None,
                 passes=None, step=None, batch_size=None, feature_bounds=None,
                 smoothness="auto", solver_options=None, fit_intercept=True,
                 categories=None, missing_values=None, random_state=None):  # fmt: skip
        store_params(self, locals())

    def _datafit(self):
        if self.loss not in _SVC_LOSSES:
            raise ValueError(f"loss must be one of {_SVC_LOSSES}, got {self.loss!r}")
        return self.loss

    def _penalty(self):
        return _classifier_penalty(self.penalty, self.alpha, self.l1_ratio)
