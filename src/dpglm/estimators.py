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
computed from the number of records ``n``, which is public: every fit is
analysed for replace-one neighbours; pass a number to fix it before seeing the
data). ``budget``, a shared :class:`~dpglm.privacy.budget.PrivacyBudget`,
is charged by every fit (``clone``, grid searches and pickling keep the same
budget). ``epsilon=inf`` gives the non-private optimum (certified reference
solver), and the report says the fit is not private.

Solvers
-------
``solver="auto"`` picks, before looking at the data beyond its shape:

* ``"dp-gcd"`` when the loss is smooth and the penalty has an L1 part or
  ``p >= n`` (greedy steps find the few coordinates that matter, and each
  costs one selection);
* ``"dp-sgd"`` otherwise, the hinge loss included (not smooth: no
  coordinate-wise steps).

``benchmarks/bench_estimators.py`` measures the rule: with default
hyperparameters DP-SGD (Poisson sampling, amplified) is the most robust on
problems with ``p < n``, while DP-CD needs its step and clipping tuned to
the data's scale to catch up. ``solver="dp-cd"`` remains available.

``solver="dp-scd"`` (private dual coordinate descent, Damaskinos et al. 2021)
fits L2-penalised problems without intercept (``fit_intercept=False``); its
hyperparameters are ``batch_size`` and ``clip`` (no ``step``). It fits the
model on rows normalised to unit L2 norm, and ``predict`` normalises rows too.

``solver="dp-agd"`` (gradient descent with an adaptive per-step zCDP budget, Lee
and Kifer 2018) fits smooth losses with no penalty or an L2 penalty; ``clip``
bounds each per-sample gradient in L2, it chooses its own step sizes (no
``step``), and runs until its budget is spent (``passes``, if given, caps the
number of gradient steps).

Feature scaling
---------------
The coordinate solvers need coordinate-wise smoothness constants. Give
``feature_bounds`` (public bounds on ``|X_ij|``) for a guarantee: by default
(``smoothness="auto"``) they serve as rough bounds and the constants are
estimated privately, at 10 % of the budget (the report shows the part);
``smoothness="bounds"`` uses the bounds alone (free, but loose bounds make
small steps). Without bounds the constants come from the data, with a
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
(True, 'dp-sgd', 1.0)
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.validation import check_is_fitted

from dpglm.data import load as load_data
from dpglm.data.frames import is_dataframe, is_series
from dpglm.data.labels import BinaryLabels
from dpglm.data.locations import preview
from dpglm.exceptions import (
    DataError,
    EmptyDataError,
    NonFiniteValueError,
    NonNumericColumnError,
    ShapeMismatchError,
    TargetError,
    UnreadableFileError,
)
from dpglm.penalties import L1, L2, ElasticNet, NoPenalty
from dpglm.privacy.events import NonPrivateEvent, PrivacyPlan
from dpglm.privacy.report import PrivacyReport
from dpglm.privacy.targets import check_privacy_target
from dpglm.problem import Problem
from dpglm.solvers.coordinates import check_positive
from dpglm.solvers.dp_scd import row_scales
from dpglm.solvers.smoothness import SMOOTHNESS_MODES

SOLVERS = ("auto", "dp-cd", "dp-gcd", "dp-sgd", "dp-scd", "dp-agd")
#: work of a fit when ``passes`` is None: passes over the data for DP-CD and DP-SGD,
#: greedy steps for DP-GCD (each reads the whole gradient), passes for DP-SCD; DP-AGD
#: runs until its budget is spent (``passes`` then caps its gradient steps)
DEFAULT_PASSES = {"dp-cd": 20.0, "dp-gcd": 20, "dp-sgd": 10.0, "dp-scd": 10.0}
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
    >>> from dpglm.penalties import L1, L2
    >>> from dpglm.problem import Problem
    >>> X = np.random.default_rng(0).uniform(-1, 1, (10, 3))
    >>> choose_solver(Problem(X, X[:, 0], "squared", L1(0.1)))
    'dp-gcd'
    >>> choose_solver(Problem(X, X[:, 0], "squared", L2(0.1)))
    'dp-sgd'
    """
    if not math.isfinite(problem.datafit.curvature):
        return "dp-sgd"
    l1 = problem.penalty.prox_params(1)[0][0] if problem.penalty.separable else 0.0
    if l1 > 0 or problem.n_features >= problem.n_samples:
        return "dp-gcd"
    return "dp-sgd"


def _check_alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not alpha >= 0:
        raise ValueError(f"alpha must be a number >= 0, got {alpha!r}")
    if math.isinf(alpha):
        raise ValueError("alpha must be finite, got inf")
    return float(alpha)


def _check_passes(passes):
    if passes is None:
        return None
    if isinstance(passes, bool) or not isinstance(passes, numbers.Real):
        raise ValueError(f"passes must be None or a positive number, got {passes!r}")
    return check_positive("passes", passes)


def _smoothness_source(smoothness, feature_bounds):
    """``"auto"``: the private estimate when bounds are given (they are rarely tight), else data.

    Public bounds alone give ``M_j = curvature * B_j**2``, an upper bound that is
    loose for sparse or skewed columns (steps too small by the column's
    density); the estimate of the DP-CD paper costs a share of the budget and
    recovers the actual constants.
    """
    if smoothness != "auto":
        return smoothness
    return "data" if feature_bounds is None else "private"


def default_batch_size(n_samples: int) -> int:
    """DP-SGD's expected batch size when ``batch_size=None``: ``min(256, max(1, n // 20))``.

    Examples
    --------
    >>> default_batch_size(569), default_batch_size(100_000)
    (28, 256)
    """
    return min(256, max(1, n_samples // 20))


def _check_batch_size(batch_size):
    if batch_size is None:
        return None
    if (
        isinstance(batch_size, bool)
        or not isinstance(batch_size, numbers.Integral)
        or batch_size < 1
    ):
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    return int(batch_size)


# -- input checks that scikit-learn words in its own way -----------------------------------
# The loader (dpglm.data.load) validates everything and names rows and columns; the
# checks below come first for the few cases where scikit-learn's conventions fix the
# wording (its estimator checks match on it), and keep the loader's details.


def _check_features(X):
    """``X`` as an array when it is array-like; raise on complex, 1-D or featureless input."""
    if is_dataframe(X) or is_series(X):
        return X
    if sp.issparse(X):
        array = X
    else:
        try:
            array = np.asarray(X)
        except (TypeError, ValueError):
            return X  # ragged and the like: the loader says what is wrong
    if array.dtype.kind == "c":
        raise NonNumericColumnError(
            f"Complex data not supported: X has dtype {array.dtype}; dpglm fits real features"
        )
    if array.ndim == 0:
        raise ShapeMismatchError(
            "Expected a 2-D array, got a scalar instead: X must have shape (n_samples, n_features)"
        )
    if array.ndim == 1:
        raise ShapeMismatchError(
            f"Expected a 2-D array, got a 1-D array of shape {array.shape} instead. Reshape "
            "your data either using X.reshape(-1, 1) if your data has a single feature or "
            "X.reshape(1, -1) if it contains a single sample."
        )
    if array.ndim == 2 and array.shape[0] > 0 and array.shape[1] == 0:
        raise EmptyDataError(
            f"Found array with 0 feature(s) (shape={array.shape}) while a minimum of 1 is "
            "required."
        )
    return array


def _check_target(y, name):
    if y is None:
        raise TargetError(f"{name} requires y to be passed, but the target y is None")
    if is_series(y) or is_dataframe(y) or sp.issparse(y):
        return y
    try:
        array = np.asarray(y)
    except (TypeError, ValueError):
        return y
    if array.ndim == 2 and array.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the "
            "shape of y to (n_samples,), for example using ravel().",
            DataConversionWarning,
            stacklevel=3,
        )
        return array.ravel()
    return array


def _load(X, y, **kwargs):
    """:func:`dpglm.data.load`, with scikit-learn's words for NaN and infinity added."""
    try:
        return load_data(X, y, **kwargs)
    except NonFiniteValueError as err:
        raise NonFiniteValueError(f"Input contains NaN or infinity: {err}") from err


def _labels_error(name, y, err):
    """A clearer error than the loader's when ``y`` does not hold exactly two labels."""
    try:
        values = np.asarray(y.to_numpy() if is_series(y) else y)
        classes = np.unique(values)
    except Exception:  # the loader's message stands
        return err
    if values.ndim != 1 or len(classes) == 2:
        return err
    if len(classes) < 2:
        return TargetError(
            f"{name} is a binary classifier, but y has only one class "
            f"{preview(classes)}; it needs two, or the public label set given as classes"
        )
    if values.dtype.kind == "f" and not np.all(np.mod(classes, 1) == 0):
        return TargetError(
            f"Unknown label type: continuous. {name} is a binary classifier and y holds "
            f"{len(classes)} distinct non-integer values {preview(classes)}; use a regressor "
            "or encode two classes"
        )
    return TargetError(
        f"Only binary classification is supported: {name} needs exactly two classes, y has "
        f"{len(classes)}: {preview(classes)}"
    )


def _feature_names(X):
    """The column names of a DataFrame when all are strings (as scikit-learn reads them)."""
    columns = getattr(X, "columns", None) if is_dataframe(X) else None
    if columns is None:
        return None
    kinds = {isinstance(c, str) for c in columns}
    if kinds == {True}:
        return np.asarray([str(c) for c in columns], dtype=object)
    if kinds == {True, False}:
        types = sorted({type(c).__name__ for c in columns})
        raise TypeError(
            "Feature names are only supported if all input features have string names, but "
            f"X has {types} as column name types; convert them all to strings, e.g. "
            "X.columns = X.columns.astype(str)"
        )
    return None


def _n_columns(X):
    if is_series(X):
        return 1
    shape = getattr(X, "shape", None)
    return shape[1] if shape is not None and len(shape) == 2 else None


class _DPLinearModel(BaseEstimator):
    """What every dpglm estimator shares: validation, solver dispatch, report, persistence."""

    _task = "regression"

    def _datafit(self):
        raise NotImplementedError

    def _penalty(self):
        raise NotImplementedError

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"requires_y": True}

    # -- fitting ------------------------------------------------------------------------

    def _check_params(self):
        """Validate the hyperparameters (before the data is read); return epsilon and delta."""
        # delta=None: default_delta(n), once the data is read
        epsilon, delta = check_privacy_target(self.epsilon, self.delta, optional_delta=True)
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, got {self.solver!r}")
        if self.smoothness not in SMOOTHNESS_MODES:
            raise ValueError(
                f"smoothness must be one of {SMOOTHNESS_MODES}, got {self.smoothness!r}"
            )
        check_positive("clip", self.clip, allow_inf=True)
        if self.step is not None:
            check_positive("step", self.step)
        _check_passes(self.passes)
        _check_batch_size(self.batch_size)
        if self.solver_options is not None and not isinstance(self.solver_options, dict):
            raise ValueError(
                f"solver_options must be None or a dict, got {type(self.solver_options)}"
            )
        # the datafit's and the penalty's hyperparameters (loss, penalty, alpha) too
        self._datafit()
        self._penalty()
        return epsilon, delta

    def build_problem(self, X, y):
        """The optimisation problem this estimator minimises on encoded data.

        The :class:`~dpglm.problem.Problem` that :meth:`fit` hands to its
        solver: the estimator's datafit and penalty, as its hyperparameters
        set them, and ``fit_intercept``. Nothing is fitted or charged to a
        budget. Use it to measure a fit, e.g. the objective of ``coef_``
        against the non-private optimum.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Features (validated as :class:`~dpglm.problem.Problem` validates
            them).
        y : array-like of shape (n_samples,)
            Targets; for classifiers the -1/+1 codes of the labels, as
            ``dpglm.data.load(..., task="classification").y`` gives them, not
            the labels themselves.

        Returns
        -------
        dpglm.problem.Problem

        Raises
        ------
        ValueError
            A hyperparameter of the datafit or the penalty is out of range
            (e.g. ``alpha``); for classifiers, ``y`` holds a value other than
            -1 and +1 (:class:`~dpglm.exceptions.TargetError`).

        Examples
        --------
        >>> import numpy as np
        >>> from dpglm.data import load
        >>> X = np.array([[0.5], [2.0], [1.0]])
        >>> data = load(X, ["no", "yes", "no"], task="classification")
        >>> problem = DPLogisticRegression(alpha=0.01).build_problem(data.X, data.y)
        >>> problem.datafit.name, problem.penalty, problem.fit_intercept, problem.y
        ('logistic', L2(alpha=0.01), True, array([-1.,  1., -1.]))
        """
        return Problem(X, y, self._datafit(), self._penalty(), self.fit_intercept)

    def fit(self, X, y):
        """Fit the model privately; every call is charged to ``budget`` when given.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self

        Raises
        ------
        ValueError
            A hyperparameter out of range (the message names it), or data that
            :func:`dpglm.data.load` refuses (a :class:`~dpglm.exceptions.DataError`
            naming the row or column); fewer than two samples; for classifiers,
            a target without exactly two classes, or with ``classes`` given, a
            label outside them (the message names its row).
        BudgetExceededError
            ``budget`` cannot afford the fit; nothing was fitted or charged.
        """
        name = type(self).__name__
        epsilon, delta = self._check_params()
        public_labels = self._public_labels()
        X = _check_features(X)
        y = _check_target(y, name)
        feature_names = _feature_names(X)
        try:
            if public_labels is None:
                data = _load(X, y, task=self._task)
            else:
                data = _load(X, y, task=self._task, classes=public_labels.classes)
        except TargetError as err:
            if self._task != "classification" or public_labels is not None:
                raise
            raise _labels_error(name, y, err) from err
        n = data.n_samples
        if n < 2:
            raise DataError(f"n_samples={n}: {name} needs at least 2 samples to fit")
        delta = default_delta(n) if delta is None else delta
        problem = self.build_problem(data.X, data.y)
        solver = choose_solver(problem) if self.solver == "auto" else self.solver
        if math.isinf(epsilon):
            theta, n_iter, report = self._fit_non_private(problem, delta)
        else:
            result = self._fit_private(problem, solver, epsilon, delta)
            theta, n_iter, report = result.theta, result.n_iter, result.report
        coef, intercept = problem.split(theta)
        if self._task == "classification":
            report = _with_label_assumption(report, data.labels.classes, public_labels is not None)
        # every learned attribute is set at once, after a fit that succeeded
        if self._task == "classification":
            self.classes_ = np.array(data.labels.classes)
        self.n_features_in_ = data.n_features
        if feature_names is not None:
            self.feature_names_in_ = feature_names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.coef_ = np.array(coef, dtype=float)
        self.intercept_ = float(intercept)
        self.n_iter_ = int(n_iter)
        self.solver_ = "reference" if math.isinf(epsilon) else solver
        self.delta_ = delta
        self.privacy_report_ = report
        return self

    def _public_labels(self):
        """The public label set (classifiers' ``classes``), or None: read from the data."""
        return None

    def _fit_private(self, problem, solver, epsilon, delta):
        from dpglm.solvers.dp_agd import dp_agd
        from dpglm.solvers.dp_cd import dp_cd
        from dpglm.solvers.dp_gcd import dp_gcd
        from dpglm.solvers.dp_scd import dp_scd
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
        if solver in ("dp-scd", "dp-agd") and self.step is not None:
            raise ValueError(
                f"step={self.step!r}: {solver.upper()} has no step size to set (DP-SCD's "
                "hyperparameters are batch_size and clip, DP-AGD chooses its steps "
                "privately); leave step=None"
            )
        if solver == "dp-agd":
            common["clip_grad"] = common.pop("clip")
            if self.passes is not None:
                common["max_iter"] = max(1, round(self.passes))
            return dp_agd(problem, **common, **options)
        passes = DEFAULT_PASSES[solver] if self.passes is None else self.passes
        if solver == "dp-scd":
            batch = self.batch_size or default_batch_size(problem.n_samples)
            common["batch_size"] = min(batch, problem.n_samples)
            return dp_scd(problem, passes=passes, **common, **options)
        if solver == "dp-sgd":
            batch = self.batch_size or default_batch_size(problem.n_samples)
            common["batch_size"] = min(batch, problem.n_samples)
            return dp_sgd(problem, passes=passes, **common, **options)
        common["smoothness"] = _smoothness_source(self.smoothness, self.feature_bounds)
        common["feature_bounds"] = self.feature_bounds
        if solver == "dp-cd":
            return dp_cd(problem, passes=passes, **common, **options)
        return dp_gcd(problem, n_iter=max(1, round(passes)), **common, **options)

    def _fit_non_private(self, problem, delta):
        from dpglm.solvers.reference import solve_reference

        relation = "replace_one"
        if self.budget is not None and self.budget.charges:
            relation = self.budget.charges[0].plan.neighbouring
        plan = PrivacyPlan(
            (NonPrivateEvent(label="non-private optimum (reference solver)"),), relation
        )
        if self.budget is not None:
            # a non-private release spends everything: only an infinite budget affords it
            self.budget.charge(plan, label=f"{type(self).__name__} with epsilon=inf")
        solution = solve_reference(problem)
        report = PrivacyReport.from_plan(
            plan,
            delta,
            assumptions=(f"epsilon = inf: no privacy, the exact optimum ({solution.method})",),
        )
        return solution.theta, 0, report

    # -- prediction ---------------------------------------------------------------------

    def _decision(self, X):
        check_is_fitted(self, "coef_")
        X = _check_features(X)
        self._check_feature_names(X)
        width = _n_columns(X)
        if width is not None and width != self.n_features_in_:
            raise ShapeMismatchError(
                f"X has {width} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input"
            )
        rows = len(X) if is_series(X) else getattr(X, "shape", (None,))[0]
        data = _load(X, np.zeros(rows if rows is not None else 0), n_features=self.n_features_in_)
        scores = np.asarray(data.X @ self.coef_, dtype=float).ravel()
        if getattr(self, "solver_", None) == "dp-scd":
            # DP-SCD fits the model on rows normalised to unit L2 norm: apply it to them
            scores = scores * row_scales(data.X)
        return scores + self.intercept_

    def _check_feature_names(self, X):
        """scikit-learn's rules: same names in the same order, a warning when either lacks them."""
        fitted = getattr(self, "feature_names_in_", None)
        names = _feature_names(X)
        name = type(self).__name__
        if fitted is None and names is None:
            return
        if fitted is None:
            warnings.warn(
                f"X has feature names, but {name} was fitted without feature names",
                UserWarning,
                stacklevel=4,
            )
            return
        if names is None:
            warnings.warn(
                f"X does not have valid feature names, but {name} was fitted with feature names",
                UserWarning,
                stacklevel=4,
            )
            return
        if len(fitted) == len(names) and np.all(fitted == names):
            return
        message = "The feature names should match those that were passed during fit.\n"
        unexpected = sorted(set(names) - set(fitted))
        missing = sorted(set(fitted) - set(names))
        if unexpected:
            message += "Feature names unseen at fit time:\n" + _name_list(unexpected)
        if missing:
            message += "Feature names seen at fit time, yet now missing:\n" + _name_list(missing)
        if not unexpected and not missing:
            message += "Feature names must be in the same order as they were in fit.\n"
        raise ValueError(message)

    # -- persistence --------------------------------------------------------------------

    def save(self, path) -> Path:
        """Write the fitted model to ``path`` as JSON (see :func:`load_model`).

        The file holds the class, the hyperparameters, the coefficients, the
        classes and the privacy report; a persistent budget is recorded by
        the absolute path of its ledger and its dataset, an in-memory one as
        ``{"ledger": null}`` (it cannot outlive the process).
        ``random_state`` is saved as null: a model file is meant to be
        published, and whoever knows a fit's seed can recompute its noise and
        take it off the coefficients. No pickle is involved.

        Returns
        -------
        pathlib.Path
        """
        check_is_fitted(self, "coef_")
        params = self.get_params(deep=False)
        budget = params.pop("budget", None)
        document = {
            "format": MODEL_FORMAT,
            "version": MODEL_FORMAT_VERSION,
            "estimator": type(self).__name__,
            "params": _params_document(params),
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
            "privacy_report": self.privacy_report_.to_dict(),
        }
        path = Path(path)
        path.write_text(json.dumps(document, indent=1, allow_nan=False) + "\n")
        return path


def _with_label_assumption(report, classes, public):
    """``report`` with a line on where the label set, released in ``classes_``, comes from."""
    if public:
        line = f"label set {preview(classes)} given as classes (public, fixed without the data)"
    else:
        line = (
            f"label set {preview(classes)} read from the data and released (classes_, the "
            "model file): covered by the guarantee only if it is public (give classes= to fix "
            "it without the data)"
        )
    return dataclasses.replace(report, assumptions=(*report.assumptions, line))


def _name_list(names, limit=5):
    lines = [f"- {n}\n" for n in names[:limit]]
    if len(names) > limit:
        lines.append("- ...\n")
    return "".join(lines)


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else ("-inf" if value < 0 else "nan")
    return value


def _params_document(params):
    document = {}
    for name, value in params.items():
        if name == "random_state":
            value = None  # the seed would give the fit's noise away (see save)
        value = _jsonable(value)
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise TypeError(f"cannot save parameter {name}={value!r} as JSON ({err})") from err
        document[name] = value
    return document


def _budget_reference(budget):
    if budget is None:
        return None
    if budget.persistent:
        return {"ledger": str(Path(budget.ledger_path).resolve()), "dataset": budget.dataset}
    return {"ledger": None}


class _Regressor(RegressorMixin, _DPLinearModel):
    def predict(self, X):
        """Predicted targets ``X w + b``."""
        return self._decision(X)


class _Classifier(ClassifierMixin, _DPLinearModel):
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


_COMMON_DOC = """
    epsilon : float, default=1.0
        Privacy of the fit (``inf``: the non-private optimum).
    delta : float or None, default=None
        ``None``: ``1 / n**2`` from the number of records.
    budget : PrivacyBudget, optional
        Shared budget charged by every fit.
    solver : {"auto", "dp-cd", "dp-gcd", "dp-sgd", "dp-scd", "dp-agd"}, default="auto"
    clip : float, default=1.0
        Clipping threshold ``C`` (per coordinate split for DP-CD / DP-GCD, L2 per
        sample for DP-SGD and DP-AGD, bound on each dual update for DP-SCD).
    passes : float, optional
        Work: passes over the data (DP-CD, DP-SGD, DP-SCD) or greedy steps (DP-GCD);
        None: ``DEFAULT_PASSES`` (20, 10, 10 and 20 greedy steps). DP-AGD runs
        until its budget is spent; ``passes`` caps its steps.
    step : float, optional
        Step-size factor; solver default when None.
    batch_size : int, optional
        Expected batch size of DP-SGD and DP-SCD; None: ``default_batch_size(n)``,
        ``min(256, max(1, n // 20))``.
    feature_bounds : float or array-like, optional
        Public bounds on ``|X_ij|`` (coordinate solvers).
    smoothness : {"auto", "bounds", "private", "data"}, default="auto"
        Source of the coordinate-wise smoothness constants.
    solver_options : dict, optional
        Further keyword arguments of the solver function.
    fit_intercept : bool, default=True
    random_state : None, int or numpy Generator
"""


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
                 passes=None, step=None, batch_size=None, feature_bounds=None,
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
                 clip=1.0, passes=None, step=None, batch_size=None, feature_bounds=None,
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
                 clip=1.0, passes=None, step=None, batch_size=None, feature_bounds=None,
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
                 solver="auto", clip=1.0, passes=None, step=None, batch_size=None,
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
        + _CLASSES_DOC
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
        + _CLASSES_DOC
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
                 classes=None, epsilon=1.0, delta=None, budget=None, solver="auto", clip=1.0,
                 passes=None, step=None, batch_size=None, feature_bounds=None,
                 smoothness="auto", solver_options=None, fit_intercept=True,
                 random_state=None):  # fmt: skip
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
    the strings ``"inf"``), ``budget`` (``null``; ``{"ledger": null}`` for an
    in-memory budget, which is not restored; or the absolute ledger path and
    the dataset of a persistent budget, reopened), ``coef``, ``intercept``,
    ``n_features_in``, ``feature_names_in``, ``classes``, ``solver``,
    ``n_iter``, ``delta`` and ``privacy_report``
    (:meth:`PrivacyReport.to_dict`). No pickle is involved.

    Raises
    ------
    UnreadableFileError
        The file is missing, not JSON, not a dpglm model, of another format
        version, names an unknown estimator or lacks a field.

    Warns
    -----
    UserWarning
        The model was fitted with a budget that cannot be restored (an
        in-memory one, or a ledger file that no longer exists): the loaded
        model has ``budget=None``, so refitting it is not charged.

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
    path = Path(path)
    where = repr(str(path))
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UnreadableFileError(f"cannot read a dpglm model from {where}: {err}") from err
    if not isinstance(document, dict) or document.get("format") != MODEL_FORMAT:
        raise UnreadableFileError(
            f'{where} is not a dpglm model file (no "format": "{MODEL_FORMAT}" tag)'
        )
    version = document.get("version")
    if type(version) is not int or version != MODEL_FORMAT_VERSION:
        raise UnreadableFileError(
            f"{where} has model format version {version!r}; this dpglm reads version "
            f"{MODEL_FORMAT_VERSION}"
        )
    cls = ESTIMATORS.get(document.get("estimator"))
    if cls is None:
        raise UnreadableFileError(
            f"{where} names an unknown estimator {document.get('estimator')!r}; known: "
            f"{sorted(ESTIMATORS)}"
        )
    try:
        model = _rebuild(cls, document)
    except (KeyError, TypeError, ValueError) as err:
        detail = f"missing field {err}" if isinstance(err, KeyError) else str(err)
        raise UnreadableFileError(f"{where} is not a valid dpglm model file: {detail}") from err
    model.budget = _reopen_budget(document.get("budget"), where)
    return model


def _rebuild(cls, document):
    params = _from_json_numbers(document["params"])
    if not isinstance(params, dict):
        raise TypeError(f"params must be an object, got {type(params).__name__}")
    params.pop("budget", None)
    model = cls(**params)
    coef = np.asarray(document["coef"], dtype=float)
    n_features = document["n_features_in"]
    if type(n_features) is not int or coef.shape != (n_features,):
        raise ValueError(f"coef has shape {coef.shape}, n_features_in is {n_features!r}")
    model.coef_ = coef
    model.intercept_ = float(_from_json_numbers(document["intercept"]))
    model.n_features_in_ = n_features
    names = document.get("feature_names_in")
    if names is not None:
        if len(names) != n_features or not all(isinstance(v, str) for v in names):
            raise ValueError(f"feature_names_in must be {n_features} strings, got {names!r}")
        model.feature_names_in_ = np.asarray(names, dtype=object)
    if cls._task == "classification":
        model.classes_ = np.asarray(document["classes"])
        BinaryLabels(model.classes_)  # two distinct classes in sorted order
        public = model._public_labels()
        if public is not None and public.classes.tolist() != model.classes_.tolist():
            raise ValueError(
                f"classes {model.classes_.tolist()!r} differ from the classes parameter "
                f"{params['classes']!r}"
            )
    model.solver_ = str(document["solver"])
    model.n_iter_ = int(document["n_iter"])
    model.delta_ = float(document["delta"])
    model.privacy_report_ = PrivacyReport.from_dict(document["privacy_report"])
    return model


def _from_json_numbers(value):
    if isinstance(value, dict):
        return {k: _from_json_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_json_numbers(v) for v in value]
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    return value


def _reopen_budget(reference, where):
    if reference is None:
        return None
    ledger = reference.get("ledger") if isinstance(reference, dict) else None
    if ledger is None:
        warnings.warn(
            f"the model in {where} was fitted with an in-memory PrivacyBudget, which is not "
            "saved: the loaded model has budget=None, so refitting it is not charged to any "
            "budget",
            UserWarning,
            stacklevel=3,
        )
        return None
    from dpglm.privacy.budget import PrivacyBudget

    if not Path(ledger).exists():
        warnings.warn(
            f"the budget ledger {ledger} of the model in {where} no longer exists: the "
            "loaded model has budget=None, so refitting it is not charged to any budget",
            UserWarning,
            stacklevel=3,
        )
        return None
    return PrivacyBudget.open(ledger, dataset=reference.get("dataset"))
