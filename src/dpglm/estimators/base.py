"""The base class of the estimators: fit, prediction, report and ``save``.

:class:`DPLinearModel` checks the hyperparameters and the data, builds the
:class:`~dpglm.problem.Problem`, has it fitted by the solver that
:class:`~dpglm.estimators.dispatch.SolverDispatch` calls, and keeps the
coefficients and the privacy report; the regressors and the classifiers
subclass it. :data:`COMMON_PARAMETERS_DOC` documents the parameters they all
take.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from dpglm.data.frames import is_series
from dpglm.data.validation import check_not_empty
from dpglm.estimators.dispatch import SolverDispatch, default_delta
from dpglm.estimators.labels import (
    check_affordable,
    label_selection,
    select_in_memory,
    select_on_chunks,
    with_selection,
)
from dpglm.estimators.multiclass import (
    check_class_count,
    check_n_classes,
    class_parts,
    label_assumption,
    one_vs_rest_report,
    ovr_target,
    repeated,
    stack_models,
)
from dpglm.estimators.persistence import save_model
from dpglm.estimators.pipelines import upstream_charges, upstream_leaks
from dpglm.estimators.preprocessing import Preprocessing
from dpglm.estimators.sharded import ShardedData, check_data_parallel, is_sharded, sharded_data
from dpglm.estimators.tables import (
    categorical_columns,
    check_unique_names,
    composed_report,
    is_table,
    select_for,
)
from dpglm.estimators.validation import (
    check_batch_size,
    check_budget,
    check_choice,
    check_class_labels,
    check_clip,
    check_feature_names,
    check_features,
    check_fit_intercept,
    check_l1_ratio,
    check_passes,
    check_random_state,
    check_smoothness,
    check_solver_options,
    check_step,
    check_target,
    column_count,
    feature_names_of,
    labels_error,
    load_checked,
)
from dpglm.exceptions import DataError, ShapeMismatchError, TargetError
from dpglm.preprocessing.bounds import check_feature_bounds, check_target_bounds
from dpglm.privacy.targets import check_privacy_target
from dpglm.problem import Problem
from dpglm.solvers.registry import ProblemShape, estimator_solvers, get_solver
from dpglm.solvers.smoothness import CLIPPED_TO_BOUNDS


@dataclasses.dataclass(frozen=True)
class _Fitted:
    """What a fit gives the estimator to store: the model on the solver's scale and more."""

    w: np.ndarray
    b: object
    n_iter: int
    report: object
    scaling: object
    multi_class: str | None
    solver: str
    epsilon: float
    delta: float


class DPLinearModel(SolverDispatch, BaseEstimator):
    """What every dpglm estimator shares: validation, solver dispatch, report, persistence.

    The base class of the regressors and the classifiers, which give it a
    datafit and a penalty; not an estimator on its own. Its solver calls come
    from :class:`~dpglm.estimators.dispatch.SolverDispatch`.
    """

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
        """Validate every hyperparameter (before the data is read); return epsilon and delta.

        The one check of the estimators' hyperparameters: each raises a
        ``ValueError`` naming the parameter and what it takes, whichever solver
        fits, so a hyperparameter a solver does not use (``feature_bounds``
        for DP-SGD, ``batch_size`` for DP-CD) is checked all the same. The
        length of ``feature_bounds`` is checked once the data is read
        (:meth:`fit`) or its shape given (:meth:`planned_fit`); ``delta = 0``
        is refused when the solver's plan is calibrated, if it adds Gaussian
        noise. All before anything is charged.
        """
        # delta=None: default_delta(n), once the data is read
        epsilon, delta = check_privacy_target(self.epsilon, self.delta, optional_delta=True)
        check_choice("solver", self.solver, ("auto", *estimator_solvers()))
        if self.clip is not None:
            check_clip(self.clip, private=not math.isinf(epsilon))
        check_passes(self.passes)
        check_step(self.step)
        check_batch_size(self.batch_size)
        check_feature_bounds(self.feature_bounds, partial=True)
        self._target_bounds()
        check_smoothness(self.smoothness)
        check_solver_options(self.solver_options)
        check_fit_intercept(self.fit_intercept)
        check_random_state(self.random_state)
        check_budget(self.budget)
        if hasattr(self, "l1_ratio"):
            check_l1_ratio(self.l1_ratio)
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
        >>> from dpglm.estimators import DPLogisticRegression
        >>> X = np.array([[0.5], [2.0], [1.0]])
        >>> data = load(X, ["no", "yes", "no"], task="classification")
        >>> problem = DPLogisticRegression(alpha=0.01).build_problem(data.X, data.y)
        >>> problem.datafit.name, problem.penalty, problem.fit_intercept, problem.y
        ('logistic', L2(alpha=0.01), True, array([-1.,  1., -1.]))
        """
        return Problem(X, y, self._datafit(), self._penalty(), self.fit_intercept)

    def fit(self, X, y=None):
        """Fit the model privately; every call is charged to ``budget`` when given.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            Or records that stay in row chunks, fitted data-parallel where
            they live (:mod:`dpglm.estimators.sharded`): a row-chunked
            ``dask.array``, a Dask data frame, or a
            :class:`~dpglm.distributed.ShardedRows` (whose chunks hold the
            targets: ``y=None``).
        y : array-like of shape (n_samples,)
            Or a Dask array or series, with a Dask ``X``.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            A hyperparameter out of range or of the wrong type, whichever
            solver fits (the message names it); ``feature_bounds`` whose length
            is not the number of features; ``delta = 0`` with a solver that
            adds Gaussian noise (the message says which take ``delta = 0``);
            data that :func:`dpglm.data.load` refuses (a
            :class:`~dpglm.exceptions.DataError` naming the row or column);
            fewer than two samples; for classifiers, a target without exactly
            two classes, or with ``classes`` given, a label outside them (the
            message names its row). Nothing is charged to ``budget``.
        BudgetExceededError
            ``budget`` cannot afford the fit; nothing was fitted or charged.
        """
        name = type(self).__name__
        epsilon, delta = self._check_params()
        public_labels = self._public_labels()
        upstream = upstream_leaks(self), upstream_charges(self)
        check_unique_names(X)
        if is_sharded(X):
            self._fit_sharded(X, y, epsilon, delta, public_labels)
            return self._with_upstream_leaks(upstream)
        if categorical_columns(X):
            self._fit_table(X, y, epsilon, delta, public_labels)
            return self._with_upstream_leaks(upstream)
        feature_names = feature_names_of(X)  # before an Arrow table becomes an array
        X = check_features(X)
        y = check_target(y, name)
        if self._task == "classification":
            check_class_labels(y)
        data = self._load(X, y, public_labels)
        selection = self._label_selection(data, epsilon, delta, public_labels)
        if selection is not None:
            data, selected = select_in_memory(
                selection, data, budget=self.budget, random_state=self.random_state, name=name
            )
            epsilon, delta = selection.rest
        fitted = self._fit_records(data, epsilon, delta)
        if selection is not None:
            fitted = _composed(fitted, with_selection(selected, fitted.report))
        self._store(fitted, data, _label_source(public_labels, selection), feature_names)
        return self._with_upstream_leaks(upstream)

    def _label_selection(self, data, epsilon, delta, public_labels):
        """The label selection of a classifier's fit on ``data``, or None; everything the
        model's fit would refuse for the labels read is refused first (nothing is charged)."""
        if self._task != "classification" or public_labels is not None or math.isinf(epsilon):
            return None
        delta = default_delta(data.n_samples) if delta is None else delta
        # the model's refusals first (at the whole target: the same as at the rest)
        self._check_plannable(data, epsilon, delta)
        name = type(self).__name__
        selection = label_selection(name, data.n_samples, epsilon, delta, public=None)
        if self.budget is not None:
            # a budget that cannot afford the model after the selection is refused before
            # either is charged (planned for the labels read: one-vs-rest's plan has a
            # part per kept label, at most as many)
            sparse = sp.issparse(data.X)
            n, p, k = data.n_samples, data.n_features, data.labels.n_classes
            model, _ = self._model_plan(n, p, sparse, k, *selection.rest)
            check_affordable(self.budget, selection, model, name)
        return selection

    def _check_chunked(self, n, p, sparse, n_classes):
        """Refuse, before the label selection is charged, a solver that cannot fit these
        records in row chunks with this many labels."""
        name = type(self).__name__
        if n_classes > 2:
            check_class_count(name, range(n_classes), n)
        shape, solver, _ = self._strategy(n, p, sparse, n_classes, chunked=True)
        check_data_parallel(name, solver, shape)

    def _check_plannable(self, data, epsilon, delta):
        """Refuse, before the label selection is charged, a fit of records in memory that its
        model's plan would refuse on these labels (too many classes, a solver that cannot fit
        this shape, ``delta = 0`` with Gaussian noise)."""
        n, p, n_classes = data.n_samples, data.n_features, data.labels.n_classes
        if n_classes > 2:
            check_class_count(type(self).__name__, data.labels.classes, n)
        template = self._model_template(n, p, sp.issparse(data.X), n_classes, epsilon, delta)
        if delta == 0:  # calibrated: the solver's refusal of delta = 0, if it adds Gaussian noise
            template.calibrated()

    def _with_upstream_leaks(self, upstream):
        """``self``, its report listing the leaks of the pipeline steps before it (as
        warnings) and their charges outside its budget (as assumptions)."""
        leaks, charges = upstream
        if leaks or charges:
            report = self.privacy_report_
            self.privacy_report_ = dataclasses.replace(
                report,
                warnings=(*report.warnings, *leaks),
                assumptions=(*report.assumptions, *charges),
            )
        return self

    def _load(self, X, y, public_labels):
        """The validated :class:`~dpglm.data.Dataset` of features ``X`` and target ``y``."""
        try:
            if public_labels is None:
                return load_checked(X, y, task=self._task)
            return load_checked(X, y, task=self._task, classes=public_labels.classes)
        except TargetError as err:
            if self._task != "classification" or public_labels is not None:
                raise
            raise labels_error(type(self).__name__, y, err) from err

    def _fit_table(self, X, y, epsilon, delta, public_labels):
        """:meth:`fit` on a table with string columns (see :mod:`dpglm.estimators.tables`):
        the category sets selected first with their share, the model fitted on the encoded
        matrix with the rest, both in one report."""
        name = type(self).__name__
        check_not_empty((len(X), len(X.columns)), "the table")
        y = check_target(y, name)
        if self._task == "classification":
            check_class_labels(y)
        delta = default_delta(len(X)) if delta is None else delta
        target = (epsilon, delta)
        selection = None
        if self._task == "classification":
            # the labels refused as a fit refuses them, before the category selection's charge
            self._load(np.zeros((len(X), 1)), y, public_labels)
            # checked before the category selection is charged
            selection = label_selection(name, len(X), epsilon, delta, public=public_labels)
            if selection is not None:
                target = selection.rest
        encoding, bounds, rest = select_for(self, X, *target, self.random_state)
        data = self._load(encoding.matrix(X), y, public_labels)
        selected = None
        if selection is not None:
            data, selected = select_in_memory(
                selection, data, budget=self.budget, random_state=self.random_state, name=name
            )
        fitted = self._fit_records(data, *rest, feature_bounds=bounds)
        report = composed_report(encoding.encoder.privacy_report_, fitted.report)
        fitted = _composed(fitted, with_selection(selected, report))
        self._store(fitted, data, _label_source(public_labels, selection), None)
        self.n_features_in_ = len(encoding.columns)
        self.feature_names_in_ = np.asarray(encoding.columns, dtype=object)
        self.encoding_ = encoding
        self.encoded_feature_names_ = encoding.feature_names_out
        return self

    def _fit_sharded(self, X, y, epsilon, delta, public_labels):
        """:meth:`fit` on records in row chunks (see :mod:`dpglm.estimators.sharded`)."""
        name = type(self).__name__
        if math.isinf(epsilon):
            raise ValueError(
                f"{name}(epsilon=inf) fits the exact optimum in memory; records in row "
                "chunks are fitted privately only (give a finite epsilon, or load a sample "
                "with dpglm.data.load)"
            )
        bounds = check_feature_bounds(self.feature_bounds, partial=True)
        if isinstance(bounds, tuple) and np.isnan(bounds[0]).any():
            raise ValueError(
                f"{name}(feature_bounds=...) with (nan, nan) rows is not taken on records in "
                "row chunks: give every column's range, or none"
            )
        from dpglm.distributed import ShardedRows

        labels, selected, source = public_labels, None, _label_source(public_labels, None)
        select = self._task == "classification" and public_labels is None
        if select and isinstance(X, ShardedRows) and y is None:
            raise TargetError(
                f"{name}: the chunks of a ShardedRows hold the labels they were loaded with, "
                "read from the data, which a fit cannot select privately: give the public "
                "label set as classes= (load the chunks with the same classes), or fit a "
                "Dask array or frame, whose labels are selected privately"
            )
        if select and not isinstance(X, ShardedRows) and y is not None:
            # the labels counted where they live and selected privately before the chunks
            # are made: the chunks then encode the kept labels
            y = y.to_dask_array(lengths=True) if hasattr(y, "to_dask_array") else y

            def check(n, n_classes, selection):
                p = len(X.columns) if hasattr(X, "columns") else int(X.shape[1])
                sparse = sp.issparse(getattr(X, "_meta", None))
                self._check_chunked(n, p, sparse, n_classes)
                if self.budget is not None:
                    args = (n, p, sparse, n_classes, *selection.rest)
                    model, _ = self._model_plan(*args, chunked=True)
                    check_affordable(self.budget, selection, model, name)
                if not _chunks_valid(X, n):
                    # the chunks' own refusal, naming the row, before anything is charged
                    sharded_data(X, y, task=self._task, classes=None, name=name).close()

            y, labels, selected, (epsilon, delta) = select_on_chunks(
                name,
                y,
                epsilon,
                delta,
                budget=self.budget,
                random_state=self.random_state,
                check=check,
            )
            source = "selected"
        data = sharded_data(X, y, task=self._task, classes=labels, name=name)
        try:
            fitted = self._fit_records(data, epsilon, delta)
        finally:
            data.close()
        report = dataclasses.replace(fitted.report, execution=data.execution)
        fitted = _composed(fitted, with_selection(selected, report))
        self._store(fitted, data, source, data.feature_names)
        return self

    def _fit_records(self, data, epsilon, delta, feature_bounds=None) -> _Fitted:
        """Plan, charge and fit ``data``: a :class:`~dpglm.data.Dataset`, or records in row
        chunks (:class:`~dpglm.estimators.sharded.ShardedData`); ``feature_bounds``, when
        given, in place of the estimator's (e.g. the public ranges of one-hot columns)."""
        name = type(self).__name__
        n, p = data.n_samples, data.n_features
        if n < 2:
            raise DataError(f"n_samples={n}: {name} needs at least 2 samples to fit")
        n_classes = data.labels.n_classes if self._task == "classification" else 2
        if n_classes > 2:
            check_class_count(name, data.labels.classes, n)
        delta = default_delta(n) if delta is None else delta
        chunked = isinstance(data, ShardedData)
        sparse = data.sparse if chunked else sp.issparse(data.X)
        preprocessing = self._preprocessing(n, p, sparse, epsilon, delta, feature_bounds)
        shape, solver, multi_class = self._strategy(n, p, sparse, n_classes, chunked)
        if chunked:  # before anything is planned or charged
            check_data_parallel(name, solver, shape)
        fit = self._fit_one_vs_rest if multi_class == "ovr" else self._fit_scaled
        w, b, n_iter, report, scaling = fit(data, preprocessing, shape, solver, epsilon, delta)
        return _Fitted(w, b, n_iter, report, scaling, multi_class, solver, epsilon, delta)

    def _store(self, fitted, data, label_source, feature_names):
        """Set every learned attribute at once, after a fit that succeeded; ``label_source``
        says where a classifier's label set comes from (:func:`_label_source`)."""
        coef, intercept = fitted.scaling.raw_model(fitted.w, fitted.b)
        report = fitted.report
        if self._task == "classification":
            classes = data.labels.classes
            if label_source != "selected":  # the selection's report says how it was selected
                report = _with_label_assumption(report, classes, label_source == "public")
            self.classes_ = np.array(classes)
            self.multi_class_ = fitted.multi_class
        self.n_features_in_ = data.n_features
        for stale in ("encoding_", "encoded_feature_names_"):
            if hasattr(self, stale):
                delattr(self, stale)
        if feature_names is not None:
            self.feature_names_in_ = feature_names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self._set_model(coef, intercept)
        self.scaling_ = fitted.scaling
        self.n_iter_ = int(fitted.n_iter)
        self.solver_ = "reference" if math.isinf(fitted.epsilon) else fitted.solver
        self.delta_ = fitted.delta
        self.privacy_report_ = report

    def _target_bounds(self):
        """The validated ``target_bounds`` of a regressor (None for a classifier)."""
        if self._task != "regression":
            return None
        return check_target_bounds(getattr(self, "target_bounds", None))

    def _preprocessing(self, n, p, sparse, epsilon, delta, feature_bounds=None):
        """Where the fit's ranges come from, and the release that estimates them (planned)."""
        if feature_bounds is None:
            feature_bounds = check_feature_bounds(self.feature_bounds, p, partial=True)
        return Preprocessing.create(
            n_samples=n,
            n_features=p,
            sparse=sparse,
            feature_bounds=feature_bounds,
            target_bounds=self._target_bounds(),
            regression=self._task == "regression",
            epsilon=epsilon,
            delta=delta,
            fit_intercept=self.fit_intercept,
        )

    def _shape(self, n, p, sparse, datafit=None, chunked=False):
        return ProblemShape(
            n,
            p,
            self._datafit() if datafit is None else datafit,
            self._penalty(),
            fit_intercept=self.fit_intercept,
            sparse=sparse,
            chunked=chunked,
        )

    def _multinomial_datafit(self, n_classes):
        """The datafit of one fit of all ``n_classes`` classes, or None: one-vs-rest."""
        return None

    def _strategy(self, n, p, sparse, n_classes, chunked=False):
        """``(shape, solver, multi_class)``: what a fit on data of this shape runs.

        ``multi_class`` is ``"binary"``, ``"multinomial"`` (one fit of every
        class's coefficients, when the estimator has a multinomial loss and
        the solver fits it) or ``"ovr"`` (one binary fit per class, of
        ``shape``); None for a regressor. ``chunked``: the records are in
        row chunks (a multinomial fit there is refused by every solver, so
        more than two classes are fitted one-vs-rest).
        """
        binary = self._shape(n, p, sparse, chunked=chunked)
        if self._task != "classification":
            return binary, self._solver_for(binary), None
        if n_classes == 2:
            return binary, self._solver_for(binary), "binary"
        datafit = self._multinomial_datafit(n_classes)
        if datafit is not None:
            joint = self._shape(n, p, sparse, datafit, chunked)
            solver = self._solver_for(joint)
            if get_solver(solver).accepts(joint) is None:
                return joint, solver, "multinomial"
        return binary, self._solver_for(binary), "ovr"

    def _scaled_problem(self, data, scaling, shape=None, positive=None):
        """The problem of ``shape`` (the estimator's own by default) on the scaled records.

        ``positive``: the class code whose records are +1 and the others -1
        (one-vs-rest), in place of the data's targets. ``data`` is a
        :class:`~dpglm.data.Dataset` or, for records in row chunks, a
        :class:`~dpglm.estimators.sharded.ShardedData`.
        """
        if isinstance(data, ShardedData):
            if shape is None:
                shape = self._shape(data.n_samples, data.n_features, data.sparse, chunked=True)
            return data.problem(shape, positive).scaled(scaling)
        X = scaling.transform(data.X)
        y = scaling.transform_target(data.y) if positive is None else ovr_target(data.y, positive)
        if shape is None:
            return self.build_problem(X, y)
        return Problem(X, y, shape.datafit, shape.penalty, shape.fit_intercept)

    def _class_problem(self, data, problem, positive):
        """One-vs-rest: ``problem`` with class code ``positive`` against the others."""
        if isinstance(data, ShardedData):
            return problem.one_vs_rest(positive)
        return problem.with_targets(ovr_target(data.y, positive))

    def _scaling(self, data, preprocessing, releases):
        """Read or release the ranges of ``data`` (in memory or in row chunks)."""
        if isinstance(data, ShardedData):
            return preprocessing.scaling_of(data, releases)
        return preprocessing.scaling(data.X, data.y, releases)

    def _fit_scaled(self, data, preprocessing, shape, solver, epsilon, delta):
        """Release (or read) the ranges, scale the records and fit them.

        Returns ``(w, b, n_iter, report, scaling)``: the model on the solver's
        scale, the solver's iterations, the whole fit's report and the
        :class:`~dpglm.preprocessing.scaling.Scaling`.
        """
        if math.isinf(epsilon):
            scaling, _ = self._scaling(data, preprocessing, ())
            problem = self._scaled_problem(data, scaling, shape)
            theta, n_iter, report = self._fit_non_private(problem, delta)
            return (*problem.split(theta), n_iter, report, scaling)
        plan = self._private_fit_plan(shape, epsilon, delta, preprocessing.events)
        spent = preprocessing.combined(plan, epsilon, delta).spend(
            budget=self.budget,
            label=f"{type(self).__name__} ({solver}) on {shape.n_samples}x{shape.n_features}",
            warnings=preprocessing.leaks,
            random_state=self.random_state,
        )
        k = len(preprocessing.events)
        scaling, assumptions = self._scaling(
            data, preprocessing, [spent.release(i) for i in range(k)]
        )
        problem = self._scaled_problem(data, scaling, shape)
        result = self._fit_spent(
            problem, solver, spent.after(k, assumptions=assumptions), plan, scaling
        )
        # the solver's bounds on its input are the scaling's (1), not the user's: the
        # scaling's own line says where the ranges came from
        assumptions = tuple(a for a in result.report.assumptions if a != CLIPPED_TO_BOUNDS)
        report = dataclasses.replace(result.report, assumptions=assumptions)
        return (*problem.split(result.theta), result.n_iter, report, scaling)

    def _fit_one_vs_rest(self, data, preprocessing, shape, solver, epsilon, delta):
        """One binary fit of ``shape`` per class against the rest, under one plan.

        The plan is the preprocessing's release, then ``K`` copies of the
        solver's plan, each its own part of the report (``"class <label>"``),
        calibrated together to ``(epsilon, delta)`` by the accountant (not
        ``epsilon / K`` each) and charged once. Returns what
        :meth:`_fit_scaled` returns, with ``(K, p)`` coefficients and ``K``
        intercepts.
        """
        classes = data.labels.classes
        parts = class_parts(classes)
        n_classes = len(parts)
        if math.isinf(epsilon):
            scaling, _ = self._scaling(data, preprocessing, ())
            problem = self._scaled_problem(data, scaling, shape, positive=0)
            binaries = [self._class_problem(data, problem, c) for c in range(n_classes)]
            thetas, report = self._solve_non_private(binaries, delta)
            weights = [problem.split(theta) for theta in thetas]
            return (*stack_models(weights), 0, report, scaling)
        single = self._private_fit_plan(
            shape, epsilon, delta, preprocessing.events, copies=n_classes
        )
        plan = repeated(single, parts)
        spent = preprocessing.combined(plan, epsilon, delta).spend(
            budget=self.budget,
            label=(
                f"{type(self).__name__} ({solver}, one-vs-rest over {n_classes} classes) on "
                f"{shape.n_samples}x{shape.n_features}"
            ),
            warnings=preprocessing.leaks,
            random_state=self.random_state,
        )
        k, m = len(preprocessing.events), len(single.template.events)
        scaling, assumptions = self._scaling(
            data, preprocessing, [spent.release(i) for i in range(k)]
        )
        problem = self._scaled_problem(data, scaling, shape, positive=0)
        results = []
        for c in range(n_classes):
            start = k + c * m
            part = spent.after(start, start + m, assumptions=assumptions)
            binary = self._class_problem(data, problem, c)
            results.append(self._fit_spent(binary, solver, part, single, scaling))
        report = one_vs_rest_report(results, spent.report, k, m)
        weights = [(result.coef, result.intercept) for result in results]
        return (*stack_models(weights), results[0].n_iter, report, scaling)

    def planned_fit(
        self, n_samples: int, n_features: int, *, sparse: bool = False, n_classes=None
    ):
        """The plan a fit on data of this shape will charge, without data and without fitting.

        The plan is a function of the hyperparameters and of the public shape
        of the data only (``n_samples`` is public: replace-one neighbours), so
        it is known before any record is read: :class:`~dpglm.tuning.PrivateSearchCV`
        accounts its search with it, and a fit charges exactly this plan. A
        classifier without ``classes`` selects its label set first, charged
        apart at its share of ``(epsilon, delta)``
        (:func:`~dpglm.preprocessing.label_sets.label_share`): this is then the
        plan of the model, at the rest.

        Parameters
        ----------
        n_samples, n_features : int
            The shape of the data the fit will see.
        sparse : bool, default=False
            Whether the features will be a sparse matrix.
        n_classes : int, optional
            Classifiers: the number of classes the target will hold (public
            when ``classes`` is given, which sets it; 2 by default). A
            multinomial fit's plan does not depend on it; one-vs-rest's has
            one part per class.

        Returns
        -------
        plan : PrivacyPlan
            The calibrated plan the fit charges to its budget.
        leaks : tuple of str
            The :class:`~dpglm.exceptions.PrivacyLeakWarning` messages the fit
            will issue (e.g. smoothness constants read from the data).

        Examples
        --------
        >>> from dpglm.estimators import DPLogisticRegression
        >>> plan, leaks = DPLogisticRegression(epsilon=1.0).planned_fit(20_000, 10)
        >>> [(event.part, event.kind, event.count) for event in plan.events]
        [('preprocessing', 'gaussian', 1), ('preprocessing', 'gaussian', 1), ('training', 'sampled_gaussian', 781)]
        >>> leaks
        ()
        """  # noqa: E501
        epsilon, delta = self._check_params()
        name = type(self).__name__
        if n_samples < 2:
            raise DataError(f"n_samples={n_samples}: {name} needs at least 2 samples to fit")
        classes = self._class_count(n_classes)
        if classes > 2:
            check_class_count(name, range(classes), n_samples)
        delta = default_delta(n_samples) if delta is None else delta
        if self._task == "classification" and not math.isinf(epsilon):
            public = self._public_labels()
            if public is None and delta == 0:
                # the model's refusal of delta = 0 first, as a fit's
                self._model_plan(n_samples, n_features, sparse, classes, epsilon, delta)
            elif public is None:
                check_feature_bounds(self.feature_bounds, n_features, partial=True)
            selection = label_selection(name, n_samples, epsilon, delta, public=public)
            if selection is not None:  # charged apart, first: the model gets the rest
                epsilon, delta = selection.rest
        return self._model_plan(n_samples, n_features, sparse, classes, epsilon, delta)

    def _model_plan(
        self, n_samples, n_features, sparse, classes, epsilon, delta, *, chunked=False
    ):
        """:meth:`planned_fit`'s plan of the model (its ranges' release and its solver's), on
        records in memory or in row chunks, calibrated, and its leak warnings."""
        if math.isinf(epsilon):
            # checked as a private fit's would be
            self._preprocessing(n_samples, n_features, sparse, epsilon, delta)
            self._strategy(n_samples, n_features, sparse, classes, chunked)
            return self._non_private_plan(), ()
        args = (n_samples, n_features, sparse, classes, epsilon, delta)
        plan = self._model_template(*args, chunked=chunked)
        return plan.calibrated(), plan.leaks

    def _model_template(
        self, n_samples, n_features, sparse, classes, epsilon, delta, *, chunked=False
    ):
        """The model's plan at a finite ``epsilon``, not yet calibrated: its ranges' release
        and its solver's (one copy per class of a one-vs-rest fit)."""
        preprocessing = self._preprocessing(n_samples, n_features, sparse, epsilon, delta)
        shape, _, multi_class = self._strategy(n_samples, n_features, sparse, classes, chunked)
        copies = classes if multi_class == "ovr" else 1
        solver_plan = self._private_fit_plan(
            shape, epsilon, delta, preprocessing.events, copies=copies
        )
        if multi_class == "ovr":
            # each class's part is named by its label when the label set is public
            public = self._public_labels()
            names = range(classes) if public is None else public.classes
            solver_plan = repeated(solver_plan, class_parts(names))
        return preprocessing.combined(solver_plan, epsilon, delta)

    def _class_count(self, n_classes):
        """The number of classes a planned fit sees: given, or the public ``classes``, or 2."""
        if self._task != "classification":
            return 2
        public = self._public_labels()
        if n_classes is None:
            return 2 if public is None else public.n_classes
        n_classes = check_n_classes(n_classes)
        if public is not None and public.n_classes != n_classes:
            raise ValueError(f"n_classes={n_classes} but classes= gives {public.n_classes} labels")
        return n_classes

    def _public_labels(self):
        """The public label set (classifiers' ``classes``), or None: read from the data."""
        return None

    # -- the model ----------------------------------------------------------------------

    def _set_model(self, coef, intercept):
        """``coef_`` and ``intercept_`` in scikit-learn's shapes from the fit's: a regressor's
        ``(p,)`` and a float; a classifier's ``(K, p)`` and ``(K,)``, one row for two
        classes (``(1, p)`` and ``(1,)``, as ``LogisticRegression``'s)."""
        coef = np.array(coef, dtype=float)
        if self._task != "classification":
            self.coef_, self.intercept_ = coef, float(intercept)
            return
        self.coef_ = coef.reshape(1, -1) if coef.ndim == 1 else coef
        self.intercept_ = np.array(intercept, dtype=float).reshape(-1)

    def _model(self):
        """``(coef, intercept)`` as the fit made them: ``(p,)`` and a float for one model
        (a regressor, a binary classifier), ``(K, p)`` and ``(K,)`` for one per class."""
        coef, intercept = self.coef_, self.intercept_
        if coef.ndim == 2 and coef.shape[0] == 1:
            return coef[0], float(intercept[0])
        return coef, intercept

    # -- prediction ---------------------------------------------------------------------

    def _decision(self, X):
        check_is_fitted(self, "coef_")
        encoding = getattr(self, "encoding_", None)
        if encoding is not None:
            if not is_table(X):
                raise TypeError(
                    f"{type(self).__name__} was fitted on a table with string columns "
                    f"{list(encoding.categorical)}: predict takes such a table (a pandas "
                    f"DataFrame or pyarrow Table with the columns {list(encoding.columns)})"
                )
            check_not_empty((len(X), len(encoding.columns)), "the table")
            X = encoding.matrix(X)
        else:
            check_feature_names(self, X)  # before an Arrow table becomes an array
            X = check_features(X)
        n_features = self.scaling_.n_features
        width = column_count(X)
        if width is not None and width != n_features:
            raise ShapeMismatchError(
                f"X has {width} features, but {type(self).__name__} is expecting "
                f"{n_features} features as input"
            )
        rows = len(X) if is_series(X) else getattr(X, "shape", (None,))[0]
        data = load_checked(X, np.zeros(rows if rows is not None else 0), n_features=n_features)
        scaling = self.scaling_
        if getattr(self, "solver_", None) == "dp-scd":
            # DP-SCD fits the model on scaled rows, with the constant feature s of an
            # intercept, normalised to unit L2 norm: apply it to them. Imported here: the
            # solver module brings numba and scipy.stats, which importing the estimators
            # does not need
            from dpglm.solvers.dp_scd import INTERCEPT_SCALING, normalised_margins

            constant = None
            if self.fit_intercept:
                # the s the solver used: its default unless solver_options gave one
                options = self.solver_options or {}
                constant = options.get("intercept_scaling", INTERCEPT_SCALING)
            z = scaling.transform(data.X)
            w, b = scaling.scaled_model(*self._model())
            if w.ndim == 2:  # one-vs-rest: one binary model per class
                return np.column_stack(
                    [
                        normalised_margins(z, w_k, b_k, intercept_scaling=constant)
                        for w_k, b_k in zip(w, b, strict=True)
                    ]
                )
            scores = normalised_margins(z, w, b, intercept_scaling=constant)
            return scaling.target_centre + scaling.target_scale * scores
        # the model applies to records clipped to the ranges it was fitted on
        clipped = scaling.clip(data.X)
        coef, intercept = self._model()
        if coef.ndim == 2:  # one row of coefficients per class
            return np.asarray(clipped @ coef.T, dtype=float) + intercept
        return np.asarray(clipped @ coef, dtype=float).ravel() + intercept

    # -- persistence --------------------------------------------------------------------

    def save(self, path) -> Path:
        """Write the fitted model to ``path`` as JSON (see :func:`~dpglm.estimators.load_model`).

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
        return save_model(self, path)


def _chunks_valid(X, n) -> bool:
    """Whether the Dask features ``X`` have ``n`` rows and only finite entries (dense
    chunks; sparse ones are checked when they are loaded), in one pass over them."""
    import dask.array as da

    X = X.to_dask_array(lengths=True) if hasattr(X, "to_dask_array") else X
    if X.ndim != 2 or X.shape[0] != n:
        return False
    if sp.issparse(getattr(X, "_meta", None)) or X.dtype.kind not in "fiub":
        return True
    return bool(da.isfinite(X).all().compute())


def _label_source(public_labels, selection) -> str:
    """Where a fit's label set comes from: ``"public"`` (``classes=``), ``"selected"``
    privately, or ``"data"`` (read without privacy: ``epsilon=inf``)."""
    if public_labels is not None:
        return "public"
    return "data" if selection is None else "selected"


def _composed(fitted, report):
    """``fitted`` with the report of the whole fit (a selection's composed with it)."""
    return dataclasses.replace(fitted, report=report, delta=report.delta)


def _with_label_assumption(report, classes, public):
    """``report`` with a line on where the label set, released in ``classes_``, comes from."""
    line = label_assumption(classes, public)
    return dataclasses.replace(report, assumptions=(*report.assumptions, line))


#: the parameters of every estimator, for their docstrings
COMMON_PARAMETERS_DOC = """
    epsilon : float, default=1.0
        Privacy of the fit (``inf``: the non-private optimum).
    delta : float or None, default=None
        ``None``: ``min(1 / n**2, 1e-5)`` from the number of records. ``0`` is refused
        unless the fit adds no Gaussian noise (DP-GCD with
        ``solver_options={"noise": "paper", "accountant": "basic"}`` and
        ``feature_bounds``).
    budget : PrivacyBudget, optional
        Shared budget charged by every fit.
    solver : {"auto", "dp-cd", "dp-gcd", "dp-sgd", "dp-scd", "dp-agd", "adassp", \
"dp-direction"}, default="auto"
    clip : float, optional
        Clipping threshold ``C`` (per coordinate split for DP-CD / DP-GCD, L2 per
        sample for DP-SGD and DP-AGD, bound on each dual update for DP-SCD, on each
        row for DP-Direction). None: 1, except DP-GCD's ``min(4, sqrt(d) / 2)`` for
        ``d`` coordinates (:func:`~dpglm.solvers.dp_gcd.estimator_clip`) and DP-SCD's
        ``min(1, alpha N / L)`` for ``N`` records in batches of ``L``
        (:func:`~dpglm.solvers.dp_scd.estimator_clip`); DP-CD's and DP-GCD's are
        four times larger for the squared hinge
        (:func:`~dpglm.solvers.hyperparameters.slope_scale`), and DP-AGD's is
        ``min(2 sqrt(d), 16)`` for it (:func:`~dpglm.solvers.dp_agd.estimator_clip`).
        Each is measured.
    passes : float, optional
        Work: passes over the data (DP-CD, DP-SGD, DP-SCD) or greedy steps (DP-GCD);
        None: DP-SGD's 10 (``DEFAULT_PASSES``), and a rule of the fit's ``n``,
        ``epsilon`` and ``delta`` for the others, each from its paper's bound
        and measured: DP-CD ``0.07 n epsilon / sqrt(8 log(1/delta))`` passes
        from 10 to 320 (:func:`~dpglm.solvers.dp_cd.estimator_passes`), DP-SCD
        ``c (max(L, lambda N) epsilon)^(2/3) / (lambda N log(1/delta))^(1/3)``
        from 1 to 40 (:func:`~dpglm.solvers.dp_scd.estimator_passes`), DP-GCD
        ``0.4 (n epsilon)^(2/3) / log(1/delta)^(1/3)`` steps, from 10 to 1,000
        (:func:`~dpglm.solvers.dp_gcd.estimator_steps`). DP-AGD runs until its
        budget is spent; ``passes`` caps its steps.
    step : float, optional
        Step-size factor; solver default when None, except DP-SGD on the
        logistic loss, which takes the step whose noise moves the coefficients
        by a fixed amount per step
        (:func:`~dpglm.solvers.dp_sgd.noise_matched_step`, from the calibrated
        plan): 0.8 for a multinomial fit, 0.1 for a binary one, whose step
        stays within ``[0.5, 4]``
        (:data:`~dpglm.estimators.dispatch.BINARY_STEP_NOISE`, measured), and
        on the squared loss, ``min(0.1, 0.5 / sqrt(p))``.
    batch_size : int, optional
        Expected batch size of DP-SGD and DP-SCD; None: ``default_batch_size(n)``,
        ``min(256, max(1, n // 20))``.
    feature_bounds : None, "data", float or array-like, default=None
        Public ranges of the features. Every fit clips each record to its
        features' ranges and maps them into ``[-1, 1]`` before the solver
        reads them (sparse data: scaled, not centred, so zeros stay zeros);
        ``coef_`` and ``intercept_`` are on the raw scale and ``predict``
        takes raw data. None: the ranges are estimated privately (noisy
        log-scale histograms, :mod:`dpglm.preprocessing.ranges`) with a share
        of ``(epsilon, delta)`` from a twentieth to a quarter, less the more
        records there are (:func:`~dpglm.estimators.preprocessing.preprocessing_share`),
        shown as the ``"preprocessing"`` part of the report. A number ``B`` or one per
        feature: the ranges ``[-B_j, B_j]``; an ``(n_features, 2)`` array:
        ``(low_j, high_j)`` rows; both public and free; a ``(nan, nan)`` row
        leaves its column's range to the private estimate (one per numeric
        column of a table with string columns, whose one-hot columns' ranges
        are public). ``"data"``: the data's
        own minima and maxima, read without privacy (a leak the report shows).
        ``alpha`` applies to the coefficients on the ``[-1, 1]`` scale.
    smoothness : {"auto", "bounds", "private", "data", "private-or-bounds"}, default="auto"
        Source of the coordinate-wise smoothness constants of DP-CD and DP-GCD
        (:mod:`dpglm.solvers.smoothness`); ``"auto"``: ``"private-or-bounds"``,
        the private estimate where its noise is small enough to inform the
        steps, else the bounds.
    solver_options : dict, optional
        Further keyword arguments of the solver function.
    fit_intercept : bool, default=True
    categories : dict, optional
        Public category sets of the string columns of a table ``X`` (a pandas
        DataFrame or pyarrow Table whose columns mix numbers and strings):
        column name -> list of values, e.g. from the dataset's documentation.
        Those columns are one-hot encoded on them, for free; the other string
        columns' sets are selected privately with a tenth of ``(epsilon,
        delta)`` (:mod:`dpglm.estimators.tables`). A value outside its
        column's set goes to the column's "other" level, at fit and predict
        time alike.
    missing_values : str or list of str, optional
        Strings that mark a missing value in string columns (e.g. ``"?"``);
        with ``None`` and NaN they form one level of their column.
    random_state : None, int or numpy Generator
"""


def store_params(estimator, values):
    """Set each ``__init__`` argument in ``values`` (its ``locals()``) on ``estimator``."""
    # scikit-learn reads hyperparameters back by the __init__ signature: store each
    # argument as given, unvalidated (validation happens in fit)
    for name, value in values.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)
