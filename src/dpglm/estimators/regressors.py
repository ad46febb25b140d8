"""The regressors: least squares, ridge, LASSO and elastic net under differential privacy."""

from __future__ import annotations

import textwrap

from sklearn.base import RegressorMixin

from dpglm.estimators.base import COMMON_PARAMETERS_DOC, DPLinearModel, store_params
from dpglm.estimators.validation import check_alpha
from dpglm.penalties import L1, L2, ElasticNet, NoPenalty


def _alpha_doc(measured: str) -> str:
    """The docstring of a regressor's ``alpha``, with what was measured of it."""
    text = (
        "Strength of the penalty on the mean loss, on the solver's scale: the features and "
        "the target mapped into ``[-1, 1]`` by their (public or privately estimated) ranges. "
        "There, ``alpha = 1`` (scikit-learn's default, on another scale) shrinks the model "
        "to the target's mean. Measured at epsilon 1 (R^2, 3 seeds; california, its raw "
        f"StatLib columns, communities): {measured}."
    )
    indent = " " * 8
    return "\n" + textwrap.fill(text, 88, initial_indent=indent, subsequent_indent=indent)


#: the regressors' own parameter, for their docstrings
TARGET_BOUNDS_DOC = """
    target_bounds : None, "data" or (float, float), default=None
        Public range ``(low, high)`` of the target: every target is clipped to
        it and mapped into ``[-1, 1]`` for the solver, free of charge. None:
        estimated privately with the features' ranges (part ``"preprocessing"``
        of the report). ``"data"``: read from the data without privacy (a
        leak the report shows).
"""


class _Regressor(RegressorMixin, DPLinearModel):
    def predict(self, X):
        """Predicted targets ``X w + b``."""
        return self._decision(X)


class DPLinearRegression(_Regressor):
    __doc__ = (
        """Least squares under differential privacy.

    Parameters
    ----------"""
        + COMMON_PARAMETERS_DOC
        + TARGET_BOUNDS_DOC
        + """
    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(-1, 1, (5000, 2))
    >>> y = X @ [1.0, -1.0]
    >>> model = DPLinearRegression(feature_bounds=1.0, clip=2.0, random_state=0).fit(X, y)
    >>> np.round(model.coef_, 1)
    array([ 1., -1.])
    """
    )

    def __init__(self, *, epsilon=1.0, delta=None, budget=None, solver="auto", clip=None,
                 passes=None, step=None, batch_size=None, feature_bounds=None, target_bounds=None,
                 smoothness="auto", solver_options=None, fit_intercept=True,
                 categories=None, missing_values=None, random_state=None):  # fmt: skip
        store_params(self, locals())

    def _datafit(self):
        return "squared"

    def _penalty(self):
        return NoPenalty()


class DPRidge(_Regressor):
    __doc__ = (
        """Ridge regression (least squares + ``alpha / 2 ||w||^2``) under differential privacy.

    Parameters
    ----------
    alpha : float, default=1e-3"""
        + _alpha_doc(
            "0.618, 0.596, 0.538 at 1e-3, the same as 1e-4 and 1e-5 and as "
            "DPLinearRegression; 0.613, 0.591, 0.536 at 1e-2; 0.155, 0.146, 0.333 at 1"
        )
        + COMMON_PARAMETERS_DOC
        + TARGET_BOUNDS_DOC
        + """
    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(-1, 1, (5000, 2))
    >>> model = DPRidge(alpha=0.01, feature_bounds=1.0, random_state=0).fit(X, X[:, 0])
    >>> model.coef_.shape
    (2,)
    """
    )

    def __init__(self, alpha=1e-3, *, epsilon=1.0, delta=None, budget=None, solver="auto",
                 clip=None, passes=None, step=None, batch_size=None, feature_bounds=None,
                 target_bounds=None, smoothness="auto", solver_options=None, fit_intercept=True,
                 categories=None, missing_values=None, random_state=None):  # fmt: skip
        store_params(self, locals())

    def _datafit(self):
        return "squared"

    def _penalty(self):
        return L2(check_alpha(self.alpha))


class DPLasso(_Regressor):
    __doc__ = (
        """LASSO (least squares + ``alpha ||w||_1``) under differential privacy.

    Parameters
    ----------
    alpha : float, default=1e-3"""
        + _alpha_doc(
            "0.611, 0.567, 0.445 at 1e-3 (0.614, 0.566, 0.456 at 1e-4 and 1e-5); "
            "0.581, 0.531, 0.429 at 1e-2; 0.115, 0.218, 0.004 at 0.1; the mean (R^2 <= 0) "
            "at 1"
        )
        + COMMON_PARAMETERS_DOC
        + TARGET_BOUNDS_DOC
        + """
    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(-1, 1, (5000, 20))
    >>> model = DPLasso(alpha=0.05, feature_bounds=1.0, random_state=0).fit(X, 2 * X[:, 3])
    >>> model.solver_, int(np.argmax(np.abs(model.coef_)))
    ('dp-gcd', 3)
    """
    )

    def __init__(self, alpha=1e-3, *, epsilon=1.0, delta=None, budget=None, solver="auto",
                 clip=None, passes=None, step=None, batch_size=None, feature_bounds=None,
                 target_bounds=None, smoothness="auto", solver_options=None, fit_intercept=True,
                 categories=None, missing_values=None, random_state=None):  # fmt: skip
        store_params(self, locals())

    def _datafit(self):
        return "squared"

    def _penalty(self):
        return L1(check_alpha(self.alpha))


class DPElasticNet(_Regressor):
    __doc__ = (
        """Elastic net under differential privacy.

    Penalty ``alpha (l1_ratio ||w||_1 + (1 - l1_ratio) / 2 ||w||^2)``.

    Parameters
    ----------
    alpha : float, default=1e-3"""
        + _alpha_doc(
            "0.612, 0.565, 0.446 at 1e-3 (0.614, 0.566, 0.456 at 1e-4 and 1e-5); "
            "0.593, 0.547, 0.435 at 1e-2; the mean (R^2 <= 0) at 1"
        )
        + """
    l1_ratio : float, default=0.5"""
        + COMMON_PARAMETERS_DOC
        + TARGET_BOUNDS_DOC
        + """
    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(-1, 1, (5000, 4))
    >>> DPElasticNet(alpha=0.01, feature_bounds=1.0, random_state=0).fit(X, X[:, 0]).solver_
    'dp-gcd'
    """
    )

    def __init__(self, alpha=1e-3, l1_ratio=0.5, *, epsilon=1.0, delta=None, budget=None,
                 solver="auto", clip=None, passes=None, step=None, batch_size=None,
                 feature_bounds=None, target_bounds=None, smoothness="auto", solver_options=None,
                 fit_intercept=True, categories=None, missing_values=None,
                 random_state=None):  # fmt: skip
        store_params(self, locals())

    def _datafit(self):
        return "squared"

    def _penalty(self):
        return ElasticNet(check_alpha(self.alpha), self.l1_ratio)
