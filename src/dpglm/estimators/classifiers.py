"""The binary classifiers (logistic regression, linear SVC) and their labels.

The solvers fit -1/+1 targets: :class:`~dpglm.data.labels.BinaryLabels`
encodes the two labels, from the public ``classes`` parameter when it is given
(a training set may then lack one of them), else read from ``y`` (and released
in ``classes_``, which the report says), and decodes the predictions.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin

from dpglm.data.labels import BinaryLabels
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
        return BinaryLabels.from_classes(self.classes)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"requires_y": True, "binary_only": True}

    def decision_function(self, X):
        """Signed margins ``X w + b``; positive means ``classes_[1]``."""
        return self._decision(X)

    def predict(self, X):
        """Predicted class labels."""
        margins = self.decision_function(X)
        return BinaryLabels(self.classes_).decode(np.where(margins > 0, 1.0, -1.0))


_CLASSES_DOC = """
    classes : array-like of two labels, optional
        The public label set, fixed without the data (as scikit-learn's
        ``partial_fit`` takes it). ``y`` must hold only these labels (a
        :class:`~dpglm.exceptions.TargetError` names the first row that does
        not) and may lack one of them: a training set with a single class is
        fitted too, so that whether a fit succeeds does not depend on the data.
        ``classes_`` is this set, sorted. None: the two labels are read from
        ``y`` and released in ``classes_`` and the model file without privacy
        (the report says so)."""


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
        """Binary logistic regression under differential privacy.

    Parameters
    ----------
    penalty : {"l2", "l1", "elasticnet", "none"}, default="l2"
    alpha : float, default=1e-3
        Strength of the penalty on the mean loss.
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

    def __init__(self, penalty="l2", alpha=1e-3, l1_ratio=0.5, *, classes=None, epsilon=1.0,
                 delta=None, budget=None, solver="auto", clip=1.0, passes=None, step=None,
                 batch_size=None, feature_bounds=None, smoothness="auto", solver_options=None,
                 fit_intercept=True, random_state=None):  # fmt: skip
        store_params(self, locals())

    def _datafit(self):
        return "logistic"

    def _penalty(self):
        return _classifier_penalty(self.penalty, self.alpha, self.l1_ratio)

    def predict_proba(self, X):
        """Probabilities of ``classes_[0]`` and ``classes_[1]``."""
        margins = self.decision_function(X)
        positive = 0.5 * (1.0 + np.tanh(0.5 * margins))
        return np.column_stack([1.0 - positive, positive])

    def predict_log_proba(self, X):
        """Logarithms of :meth:`predict_proba`."""
        margins = self.decision_function(X)
        return np.column_stack([-np.logaddexp(0.0, margins), -np.logaddexp(0.0, -margins)])


_SVC_LOSSES = ("squared_hinge", "hinge")


class DPLinearSVC(_Classifier):
    __doc__ = (
        """Linear support vector classifier under differential privacy.

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
                 classes=None, epsilon=1.0, delta=None, budget=None, solver="auto", clip=1.0,
                 passes=None, step=None, batch_size=None, feature_bounds=None,
                 smoothness="auto", solver_options=None, fit_intercept=True,
                 random_state=None):  # fmt: skip
        store_params(self, locals())

    def _datafit(self):
        if self.loss not in _SVC_LOSSES:
            raise ValueError(f"loss must be one of {_SVC_LOSSES}, got {self.loss!r}")
        return self.loss

    def _penalty(self):
        return _classifier_penalty(self.penalty, self.alpha, self.l1_ratio)
