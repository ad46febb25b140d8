"""scikit-learn estimators trained under differential privacy.

Six estimators share one implementation: :class:`DPLinearRegression`,
:class:`DPRidge`, :class:`DPLasso`, :class:`DPElasticNet` (regressors) and
:class:`DPLogisticRegression`, :class:`DPLinearSVC` (binary classifiers). Each
minimises ``(1/n) sum_i loss(x_i . w + b, y_i) + alpha * penalty(w)`` with a
private solver and keeps the :class:`~dpglm.privacy.report.PrivacyReport` of
the fit in ``privacy_report_``.

Privacy parameters
------------------
``epsilon`` (default 1.0) and ``delta`` (default ``None``: ``1 / n**2``,
computed from the number of records ``n``, which the replace-one analysis of
the coordinate solvers treats as public anyway; pass a number to fix it before
seeing the data). ``budget``, a shared :class:`~dpglm.privacy.budget.PrivacyBudget`,
is charged by every fit (``clone``, grid searches and pickling keep the same
budget). ``epsilon=inf`` gives the non-private optimum (certified reference
solver), and the report says the fit is not private.

Solvers
-------
``solver="auto"`` picks, before looking at the data beyond its shape:

* ``"dp-sgd"`` for the hinge loss (not smooth: no coordinate-wise steps);
* ``"dp-gcd"`` when the penalty has an L1 part or ``p >= n`` (greedy steps
  find the few coordinates that matter, and each costs one selection);
* ``"dp-cd"`` otherwise (smooth, low-dimensional problems).

``benchmarks/bench_estimators.py`` measures how well the rule picks.

Feature scaling
---------------
The coordinate solvers need coordinate-wise smoothness constants. Give
``feature_bounds`` (public bounds on ``|X_ij|``) for a guarantee; with
``smoothness="private"`` they are only rough bounds and the constants are
estimated privately (charged); without bounds they come from the data, with a
:class:`~dpglm.exceptions.PrivacyLeakWarning` that the report records. Never
silent.

Examples
--------
>>> import numpy as np
>>> from dpglm.estimators import DPLogisticRegression
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, (2000, 3))
>>> y = (X[:, 0] - X[:, 1] > 0).astype(int)
>>> model = DPLogisticRegression(epsilon=1.0, feature_bounds=1.0, random_state=0).fit(X, y)
>>> model.score(X, y) > 0.9, model.solver_, round(model.privacy_report_.epsilon, 2)
(True, 'dp-cd', 1.0)
"""

from __future__ import annotations

import json
import math
import numbers
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from dpglm.data import load as load_data
from dpglm.data.labels import BinaryLabels
from dpglm.penalties import L1, L2, ElasticNet, NoPenalty
from dpglm.privacy.events import NonPrivateEvent, PrivacyPlan
from dpglm.privacy.report import PrivacyReport
from dpglm.problem import Problem

SOLVERS = ("auto", "dp-cd", "dp-gcd", "dp-sgd")
#: work of a fit when ``passes`` is None: passes over the data for DP-CD and DP-SGD,
#: greedy steps for DP-GCD (each reads the whole gradient)
DEFAULT_PASSES = {"dp-cd": 20.0, "dp-gcd": 20, "dp-sgd": 10.0}
MODEL_FORMAT = "dpglm-model"
MODEL_FORMAT_VERSION = 1


def default_delta(n_samples: int) -> float:
    """The default ``delta``: ``1 / n**2``.

    Examples
    --------
    >>> default_delta(1000)
    1e-06
    """
    return 1.0 / float(n_samples) ** 2


def choose_solver(problem) -> str:
    """The solver ``solver="auto"`` uses for ``problem`` (see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.problem import Problem
    >>> choose_solver(Problem(np.eye(3), np.ones(3), "squared", "l1"))
    'dp-gcd'
    """
    if not math.isfinite(problem.datafit.curvature):
        return "dp-sgd"
    l1 = problem.penalty.prox_params(1)[0][0] if problem.penalty.separable else 0.0
    if l1 > 0 or problem.n_features >= problem.n_samples:
        return "dp-gcd"
    return "dp-cd"


def _check_epsilon(epsilon):
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not epsilon > 0:
        raise ValueError(f"epsilon must be a positive number (inf allowed), got {epsilon!r}")
    return float(epsilon)


def _check_delta(delta, n):
    if delta is None:
        return default_delta(n)
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0 <= delta < 1:
        raise ValueError(f"delta must be None or a number in [0, 1), got {delta!r}")
    return float(delta)


def _check_alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not alpha >= 0:
        raise ValueError(f"alpha must be a number >= 0, got {alpha!r}")
    if math.isinf(alpha):
        raise ValueError("alpha must be finite, got inf")
    return float(alpha)


class _DPLinearModel(BaseEstimator):
    """What every dpglm estimator shares: validation, solver dispatch, report, persistence."""

    _task = "regression"

    def _datafit(self):
        raise NotImplementedError

    def _penalty(self):
        raise NotImplementedError

    # -- fitting ------------------------------------------------------------------------

    def fit(self, X, y):
        """Fit the model privately; every call is charged to ``budget`` when given.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        epsilon = _check_epsilon(self.epsilon)
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, got {self.solver!r}")
        data = load_data(X, y, task=self._task)
        self._set_input_features(X, data)
        if self._task == "classification":
            self.classes_ = np.asarray(data.labels.classes)
            self._labels = data.labels
        n = data.n_samples
        delta = _check_delta(self.delta, n)
        problem = Problem(data.X, data.y, self._datafit(), self._penalty(), self.fit_intercept)
        solver = choose_solver(problem) if self.solver == "auto" else self.solver
        if math.isinf(epsilon):
            theta, n_iter, report = self._fit_non_private(problem, delta)
        else:
            result = self._fit_private(problem, solver, epsilon, delta)
            theta, n_iter, report = result.theta, result.n_iter, result.report
        coef, intercept = problem.split(theta)
        self.coef_ = np.asarray(coef, dtype=float).copy()
        self.intercept_ = float(intercept)
        self.n_iter_ = int(n_iter)
        self.solver_ = "reference" if math.isinf(epsilon) else solver
        self.delta_ = delta
        self.privacy_report_ = report
        return self

    def _fit_private(self, problem, solver, epsilon, delta):
        from dpglm.solvers.dp_cd import dp_cd
        from dpglm.solvers.dp_gcd import dp_gcd
        from dpglm.solvers.dp_sgd import dp_sgd

        options = dict(self.solver_options or {})
        common = {
            "epsilon": epsilon,
            "delta": delta,
            "clip": self.clip,
            "budget": self.budget,
            "random_state": self.random_state,
        }
        if self.step is not None:
            common["step"] = self.step
        passes = DEFAULT_PASSES[solver] if self.passes is None else self.passes
        if solver == "dp-sgd":
            common["batch_size"] = min(self.batch_size, problem.n_samples)
            return dp_sgd(problem, passes=passes, **common, **options)
        common["smoothness"] = self.smoothness
        common["feature_bounds"] = self.feature_bounds
        if solver == "dp-cd":
            return dp_cd(problem, passes=passes, **common, **options)
        return dp_gcd(problem, n_iter=max(1, round(passes)), **common, **options)

    def _fit_non_private(self, problem, delta):
        from dpglm.solvers.reference import solve_reference

        solution = solve_reference(problem)
        plan = PrivacyPlan(
            (NonPrivateEvent(label=f"non-private optimum ({solution.method})"),),
            "replace_one",
        )
        report = PrivacyReport.from_plan(
            plan, delta, assumptions=("epsilon = inf: no privacy, the exact optimum",)
        )
        return solution.theta, 0, report

    def _set_input_features(self, X, data):
        self.n_features_in_ = data.n_features
        columns = getattr(X, "columns", None)
        if columns is not None and all(isinstance(c, str) for c in columns):
            self.feature_names_in_ = np.asarray(list(columns), dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_

    # -- prediction ---------------------------------------------------------------------

    def _decision(self, X):
        check_is_fitted(self, "coef_")
        data = load_data(X, np.zeros(_n_rows(X)), n_features=self.n_features_in_)
        self._check_feature_names(X)
        return np.asarray(data.X @ self.coef_, dtype=float).ravel() + self.intercept_

    def _check_feature_names(self, X):
        names = getattr(self, "feature_names_in_", None)
        columns = getattr(X, "columns", None)
        if names is not None and columns is not None and list(columns) != list(names):
            raise ValueError(
                "X has feature names that differ from those seen in fit: expected "
                f"{list(names)}, got {list(columns)}"
            )

    # -- persistence --------------------------------------------------------------------

    def save(self, path) -> Path:
        """Write the fitted model to ``path`` as JSON (see :func:`load_model`).

        The file holds the class, the hyperparameters, the coefficients, the
        classes and the privacy report; a persistent budget is recorded by
        its ledger path and dataset, an in-memory one as absent.
        """
        check_is_fitted(self, "coef_")
        params = self.get_params(deep=False)
        budget = params.pop("budget", None)
        document = {
            "format": MODEL_FORMAT,
            "version": MODEL_FORMAT_VERSION,
            "estimator": type(self).__name__,
            "params": _jsonable(params),
            "budget": _budget_reference(budget),
            "coef": self.coef_.tolist(),
            "intercept": self.intercept_,
            "n_features_in": self.n_features_in_,
            "feature_names_in": (
                None
                if getattr(self, "feature_names_in_", None) is None
                else [str(v) for v in self.feature_names_in_]
            ),
            "classes": (
                None if self._task != "classification" else _jsonable(self.classes_.tolist())
            ),
            "solver": self.solver_,
            "n_iter": self.n_iter_,
            "delta": self.delta_,
            "privacy_report": json.loads(self.privacy_report_.to_json()),
        }
        path = Path(path)
        path.write_text(json.dumps(document, indent=1) + "\n")
        return path


def _n_rows(X):
    shape = getattr(X, "shape", None)
    return shape[0] if shape is not None and len(shape) else len(X)


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else ("-inf" if value < 0 else "nan")
    return value


def _budget_reference(budget):
    if budget is None:
        return None
    if budget.persistent:
        return {"ledger": str(budget.ledger_path), "dataset": budget.dataset}
    return {"ledger": None}


class _Regressor(RegressorMixin, _DPLinearModel):
    def predict(self, X):
        """Predicted targets ``X w + b``."""
        return self._decision(X)


class _Classifier(ClassifierMixin, _DPLinearModel):
    _task = "classification"

    def decision_function(self, X):
        """Signed margins ``X w + b``; positive means ``classes_[1]``."""
        return self._decision(X)

    def predict(self, X):
        """Predicted class labels."""
        margins = self.decision_function(X)
        return self._labels.decode(np.where(margins > 0, 1.0, -1.0))


_COMMON_DOC = """
    epsilon : float, default=1.0
        Privacy of the fit (``inf``: the non-private optimum).
    delta : float or None, default=None
        ``None``: ``1 / n**2`` from the number of records.
    budget : PrivacyBudget, optional
        Shared budget charged by every fit.
    solver : {"auto", "dp-cd", "dp-gcd", "dp-sgd"}, default="auto"
    clip : float, default=1.0
        Clipping threshold ``C`` (per coordinate split for DP-CD / DP-GCD, L2 per
        sample for DP-SGD).
    passes : float, optional
        Work: passes over the data (DP-CD, DP-SGD) or greedy steps (DP-GCD);
        None: ``DEFAULT_PASSES`` (20, 10 and 20 greedy steps).
    step : float, optional
        Step-size factor; solver default when None.
    batch_size : int, default=256
        Expected batch size of DP-SGD.
    feature_bounds : float or array-like, optional
        Public bounds on ``|X_ij|`` (coordinate solvers).
    smoothness : {"auto", "bounds", "private", "data"}, default="auto"
        Source of the coordinate-wise smoothness constants.
    solver_options : dict, optional
        Further keyword arguments of the solver function.
    fit_intercept : bool, default=True
    random_state : None, int or numpy Generator
"""


def _store_params(estimator, values):
    # scikit-learn reads hyperparameters back by the __init__ signature: store each
    # argument as given, unvalidated (validation happens in fit)
    for name, value in values.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


class DPLinearRegression(_Regressor):
    __doc__ = (
        """Least squares under differential privacy.

    Parameters
    ----------"""
        + _COMMON_DOC
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

    def __init__(self, *, epsilon=1.0, delta=None, budget=None, solver="auto", clip=1.0,
                 passes=None, step=None, batch_size=256, feature_bounds=None,
                 smoothness="auto", solver_options=None, fit_intercept=True,
                 random_state=None):  # fmt: skip
        _store_params(self, locals())

    def _datafit(self):
        return "squared"

    def _penalty(self):
        return NoPenalty()


class DPRidge(_Regressor):
    __doc__ = (
        """Ridge regression (least squares + ``alpha / 2 ||w||^2``) under differential privacy.

    Parameters
    ----------
    alpha : float, default=1.0"""
        + _COMMON_DOC
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

    def __init__(self, alpha=1.0, *, epsilon=1.0, delta=None, budget=None, solver="auto",
                 clip=1.0, passes=None, step=None, batch_size=256, feature_bounds=None,
                 smoothness="auto", solver_options=None, fit_intercept=True,
                 random_state=None):  # fmt: skip
        _store_params(self, locals())

    def _datafit(self):
        return "squared"

    def _penalty(self):
        return L2(_check_alpha(self.alpha))


class DPLasso(_Regressor):
    __doc__ = (
        """LASSO (least squares + ``alpha ||w||_1``) under differential privacy.

    Parameters
    ----------
    alpha : float, default=1.0"""
        + _COMMON_DOC
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

    def __init__(self, alpha=1.0, *, epsilon=1.0, delta=None, budget=None, solver="auto",
                 clip=1.0, passes=None, step=None, batch_size=256, feature_bounds=None,
                 smoothness="auto", solver_options=None, fit_intercept=True,
                 random_state=None):  # fmt: skip
        _store_params(self, locals())

    def _datafit(self):
        return "squared"

    def _penalty(self):
        return L1(_check_alpha(self.alpha))


class DPElasticNet(_Regressor):
    __doc__ = (
        """Elastic net under differential privacy.

    Penalty ``alpha (l1_ratio ||w||_1 + (1 - l1_ratio) / 2 ||w||^2)``.

    Parameters
    ----------
    alpha : float, default=1.0
    l1_ratio : float, default=0.5"""
        + _COMMON_DOC
        + """
    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(-1, 1, (5000, 4))
    >>> DPElasticNet(alpha=0.01, feature_bounds=1.0, random_state=0).fit(X, X[:, 0]).solver_
    'dp-gcd'
    """
    )

    def __init__(self, alpha=1.0, l1_ratio=0.5, *, epsilon=1.0, delta=None, budget=None,
                 solver="auto", clip=1.0, passes=None, step=None, batch_size=256,
                 feature_bounds=None, smoothness="auto", solver_options=None,
                 fit_intercept=True, random_state=None):  # fmt: skip
        _store_params(self, locals())

    def _datafit(self):
        return "squared"

    def _penalty(self):
        return ElasticNet(_check_alpha(self.alpha), self.l1_ratio)


_PENALTIES = ("none", "l2", "l1", "elasticnet")


def _classifier_penalty(penalty, alpha, l1_ratio):
    if penalty not in _PENALTIES:
        raise ValueError(f"penalty must be one of {_PENALTIES}, got {penalty!r}")
    alpha = _check_alpha(alpha)
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
        + _COMMON_DOC
        + """
    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(-1, 1, (3000, 2))
    >>> y = np.where(X[:, 0] > 0, "yes", "no")
    >>> model = DPLogisticRegression(feature_bounds=1.0, random_state=0).fit(X, y)
    >>> model.classes_.tolist(), model.predict([[0.9, 0.0]]).tolist()
    (['no', 'yes'], ['yes'])
    """
    )

    def __init__(self, penalty="l2", alpha=1e-3, l1_ratio=0.5, *, epsilon=1.0, delta=None,
                 budget=None, solver="auto", clip=1.0, passes=None, step=None, batch_size=256,
                 feature_bounds=None, smoothness="auto", solver_options=None,
                 fit_intercept=True, random_state=None):  # fmt: skip
        _store_params(self, locals())

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
        + _COMMON_DOC
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
                 epsilon=1.0, delta=None, budget=None, solver="auto", clip=1.0, passes=None,
                 step=None, batch_size=256, feature_bounds=None, smoothness="auto",
                 solver_options=None, fit_intercept=True, random_state=None):  # fmt: skip
        _store_params(self, locals())

    def _datafit(self):
        if self.loss not in _SVC_LOSSES:
            raise ValueError(f"loss must be one of {_SVC_LOSSES}, got {self.loss!r}")
        return self.loss

    def _penalty(self):
        return _classifier_penalty(self.penalty, self.alpha, self.l1_ratio)


ESTIMATORS = {
    cls.__name__: cls
    for cls in (
        DPLinearRegression,
        DPRidge,
        DPLasso,
        DPElasticNet,
        DPLogisticRegression,
        DPLinearSVC,
    )
}


def load_model(path):
    """Rebuild a fitted estimator from the JSON written by its ``save`` method.

    The format (``"format": "dpglm-model"``, ``"version": 1``) holds
    ``estimator`` (class name), ``params`` (hyperparameters; infinite values as
    the strings ``"inf"``), ``budget`` (``null``, or the ledger path and
    dataset of a persistent budget, reopened when the file exists),
    ``coef``, ``intercept``, ``n_features_in``, ``feature_names_in``,
    ``classes``, ``solver``, ``n_iter``, ``delta`` and ``privacy_report``
    (:meth:`PrivacyReport.to_json`). No pickle is involved.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> X = np.random.default_rng(0).uniform(-1, 1, (500, 2))
    >>> model = DPRidge(feature_bounds=1.0, random_state=0).fit(X, X[:, 0])
    >>> path = os.path.join(tempfile.mkdtemp(), "model.json")
    >>> _ = model.save(path)
    >>> again = load_model(path)
    >>> bool(np.array_equal(again.predict(X), model.predict(X)))
    True
    """
    from dpglm.exceptions import UnreadableFileError

    path = Path(path)
    try:
        document = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UnreadableFileError(f"cannot read a dpglm model from {str(path)!r}: {err}") from err
    if not isinstance(document, dict) or document.get("format") != MODEL_FORMAT:
        raise UnreadableFileError(f"{str(path)!r} is not a dpglm model file (no format tag)")
    if document.get("version") != MODEL_FORMAT_VERSION:
        raise UnreadableFileError(
            f"{str(path)!r} has model format version {document.get('version')!r}; this dpglm "
            f"reads version {MODEL_FORMAT_VERSION}"
        )
    try:
        cls = ESTIMATORS[document["estimator"]]
    except KeyError:
        raise UnreadableFileError(
            f"{str(path)!r} names an unknown estimator {document.get('estimator')!r}"
        ) from None
    params = _from_json_numbers(document["params"])
    model = cls(**params, budget=_reopen_budget(document.get("budget")))
    model.coef_ = np.asarray(document["coef"], dtype=float)
    model.intercept_ = float(document["intercept"])
    model.n_features_in_ = int(document["n_features_in"])
    if document.get("feature_names_in") is not None:
        model.feature_names_in_ = np.asarray(document["feature_names_in"], dtype=object)
    if cls._task == "classification":
        model.classes_ = np.asarray(document["classes"])
        model._labels = BinaryLabels(model.classes_)
    model.solver_ = document["solver"]
    model.n_iter_ = int(document["n_iter"])
    model.delta_ = float(document["delta"])
    model.privacy_report_ = PrivacyReport.from_json(json.dumps(document["privacy_report"]))
    return model


def _from_json_numbers(value):
    if isinstance(value, dict):
        return {k: _from_json_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_json_numbers(v) for v in value]
    if value in ("inf", "-inf", "nan"):
        return float(value)
    return value


def _reopen_budget(reference):
    if not reference or not reference.get("ledger"):
        return None
    from dpglm.privacy.budget import PrivacyBudget

    ledger = Path(reference["ledger"])
    if not ledger.exists():
        return None
    return PrivacyBudget.open(ledger, dataset=reference.get("dataset"))
