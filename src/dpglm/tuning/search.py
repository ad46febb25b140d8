"""The private hyperparameter search, :class:`PrivateSearchCV`.

The algorithm and its accounting are described in :mod:`dpglm.tuning`.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import ParameterGrid, ParameterSampler
from sklearn.utils.metaestimators import available_if

from dpglm.estimators.dispatch import default_delta
from dpglm.estimators.labels import label_selection, select_in_memory, with_selection
from dpglm.estimators.multiclass import label_assumption
from dpglm.estimators.tables import categorical_columns, composed_report, select_for
from dpglm.exceptions import NonNumericColumnError, PlanError
from dpglm.preprocessing.transformers import frame_feature_names
from dpglm.privacy.budget import Charge
from dpglm.privacy.events import NonPrivateEvent, PrivacyPlan
from dpglm.privacy.mechanisms import make_noise_source
from dpglm.privacy.releases import Release
from dpglm.privacy.report import PrivacyReport, collect_privacy_warnings
from dpglm.privacy.spending import SEED_ASSUMPTION, SOURCE_ASSUMPTION, seed_assumptions
from dpglm.privacy.targets import Share, check_privacy_target, left_after
from dpglm.tuning.pipelines import (
    DEFAULT_STEPS_SHARE,
    final_candidates,
    final_step,
    fit_steps,
)
from dpglm.tuning.planning import PlanGuard, PlanMismatchError, Planner
from dpglm.tuning.repetitions import MAX_MEAN_REPETITIONS, draw_repetitions
from dpglm.tuning.scoring import CLASSIFIER_SCORING, REGRESSOR_SCORING, Scorer

#: parameters the search sets on every fit, which cannot be searched
RESERVED = ("epsilon", "delta", "budget", "random_state")


class PrivateSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Private hyperparameter search (repeat-and-select), charged once to the budget.

    See :mod:`dpglm.tuning` for the algorithm and its accounting.

    Parameters
    ----------
    estimator : dpglm estimator or Pipeline
        A :mod:`dpglm.estimators` model; its ``epsilon``, ``delta``, ``budget``
        and ``random_state`` are set by the search for every run. Or a
        scikit-learn ``Pipeline`` ending with one, after dpglm's private
        transformers (or steps that learn nothing): those steps are fitted
        once, before the search, at ``steps_share`` of the target
        (:mod:`dpglm.tuning.pipelines`), and the search runs on their output.
    param_distributions : dict or list of dicts
        Candidate hyperparameters: lists (a grid) or, with ``n_candidates``,
        scipy distributions (anything with ``rvs``), as in scikit-learn's
        searches; for a pipeline, its last step's, prefixed with its name
        (``"dplogisticregression__alpha"``). The candidates are drawn before
        the data is read and are public (``candidates_``).
    epsilon : float
        Privacy of the whole search, ``> 0``; ``inf`` gives a non-private
        search: every candidate fitted exactly and scored without noise once,
        and a report that says so.
    delta : float, optional
        Its delta, ``> 0`` for a private search (Renyi DP accounting cannot
        reach ``delta = 0``); None: ``min(1 / n**2, 1e-5)``.
    budget : PrivacyBudget, optional
        Charged once with the plan of the whole search before the data is
        read; None: the estimator's own ``budget``, if any (giving two
        different budgets is an error). The runs do not charge anything.
    n_candidates : int, optional
        Number of candidates drawn from ``param_distributions``
        (scikit-learn's ``ParameterSampler``); None: the full grid (lists only).
    mean_repetitions : float, default=10.0
        Expected number of runs, in ``[1, 500]``; each run fits one candidate,
        drawn uniformly, so a grid much larger than this is only sampled.
    shape : float, default=inf
        Distribution of the number of runs: ``inf`` for Poisson (no run at all
        with probability ``exp(-mean_repetitions)``), or ``>= 0`` for the
        truncated negative binomial (at least one run; ``1`` geometric,
        ``0`` logarithmic), whose cost at equal mean differs (lower or higher,
        depending on the plan of a run); the report states the exact cost.
    validation_fraction : float, default=0.2
        Share of the records held out for the scores, in ``(0, 1)``.
    scoring : str, optional
        ``"accuracy"`` (classifiers, default) or ``"neg_mean_squared_error"``
        (regressors, default) / ``"neg_mean_absolute_error"``.
    error_bound : float, optional
        Regressors: each record's error is clipped to ``[0, error_bound]``
        (a public bound, e.g. the squared range of the target), which makes
        the score's sensitivity ``error_bound / n_val``. Required for regressors.
    score_share : float, default=0.2
        Share of each run's epsilon spent on its noisy score (the rest on the fit).
    steps_share : float, default=0.2
        A pipeline's: the share of ``(epsilon, delta)`` its private steps take
        together (in equal parts), fitted once before the search; the report
        lists them as the part ``"preprocessing"``. Unused for an estimator.
    random_state : None, int or numpy Generator
        All the search's randomness comes from it. The candidates (public)
        come from the seed alone; the secret randomness (split, number of runs,
        draws, seeds of the fits, score noise) from a stream keyed to the
        search's budget charge as well (see :func:`~dpglm.privacy.spending.spend`),
        so that two searches with one seed charged to one budget share none
        of it. A fixed seed reproduces a search from a fresh budget; keep it
        secret if the search is published.

    Attributes
    ----------
    candidates_ : list of dict
        The candidates (public: drawn without the data).
    best_index_ : int or None
        Index in ``candidates_`` of the selected run's candidate.
    best_params_ : dict or None
    best_estimator_ : estimator or None
        The model of the selected run, trained on the training split only (no
        refit on all the data, which would cost another fit). Its
        ``privacy_report_`` is the search's (the model is the search's
        release, and its saved copies carry that report); its ``epsilon``
        parameter is the budget of its run's fit (``fit_epsilon_``), and
        ``solver_`` and ``n_iter_`` describe that fit. Its ``random_state`` is
        the estimator's own: the run's seed is the search's secret randomness
        (it would give away the run's noise). Its ``budget`` is the search's,
        so refitting it is charged as a new fit, whose report then replaces
        the search's. None when nothing was selected (no run took place, or
        every run failed; a warning says so).
    best_score_ : float
        Noisy validation score of the selected run (NaN when nothing was selected).
    fit_epsilon_, score_epsilon_ : float
        Epsilon of each run's fit (at ``delta_``) and of its noisy score.
    delta_ : float
    privacy_report_ : PrivacyReport
        The whole search: one repeat-and-select event and its base plan.

    Notes
    -----
    Released (covered by the guarantee): the selected run's candidate, model
    and noisy score, or the fact that no run took place. Not released: the
    number of runs ``K`` and the other runs' candidates, models and scores,
    which are the mechanism's internal randomness and are not kept. The
    train/validation split is drawn without the data, with fixed sizes
    (:mod:`dpglm.tuning` gives the analysis, for replace-one neighbours like
    every fit's).

    A run whose fit or score raises (e.g. a training split with a single
    class, when the estimator is not given its ``classes``) scores ``-inf``:
    it is never selected over a run that succeeded, and its error is not
    raised, since an error after the charge would tell something about the
    data that the accounting does not cover. When every run fails, nothing is
    selected, as when no run takes place (the warning does not tell which).
    Errors that come before the charge (bad hyperparameters, found while
    planning) are raised as usual, and so is a fit that calibrates a plan
    other than the accounted one (a :class:`~dpglm.exceptions.PrivacyError`):
    that is a defect the accounting does not cover, not a failed run.

    The plan of each candidate's fit is known before the data is read: the
    estimator gives it from its hyperparameters and the training split's
    shape through the solver registry
    (:meth:`~dpglm.estimators.base.DPLinearModel.planned_fit`), without
    fitting anything, and every real run gets a stand-in budget that checks
    that the plan it charges is the accounted one. The privacy-leak warnings
    the plans announce and those of the runs go into the report.

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.estimators import DPRidge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (3000, 2))
    >>> y = X @ [1.0, -0.5]
    >>> search = PrivateSearchCV(
    ...     DPRidge(solver="dp-cd", feature_bounds=1.0, smoothness="bounds", clip=2.0),
    ...     {"alpha": [1e-3, 10.0]},
    ...     epsilon=3.0,
    ...     delta=1e-6,
    ...     error_bound=4.0,
    ...     mean_repetitions=6,
    ...     random_state=0,
    ... ).fit(X, y)
    >>> search.best_params_
    {'alpha': 0.001}
    >>> search.privacy_report_.mechanisms[0].details["distribution"]
    'poisson'
    """

    def __init__(self, estimator, param_distributions, *, epsilon, delta=None, budget=None,
                 n_candidates=None, mean_repetitions=10.0, shape=math.inf,
                 validation_fraction=0.2, scoring=None, error_bound=None, score_share=0.2,
                 steps_share=DEFAULT_STEPS_SHARE, random_state=None):  # fmt: skip
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.epsilon = epsilon
        self.delta = delta
        self.budget = budget
        self.n_candidates = n_candidates
        self.mean_repetitions = mean_repetitions
        self.shape = shape
        self.validation_fraction = validation_fraction
        self.scoring = scoring
        self.error_bound = error_bound
        self.score_share = score_share
        self.steps_share = steps_share
        self.random_state = random_state

    # -- validation ---------------------------------------------------------------------

    def _delta(self, n):
        """``delta``, or the default ``min(1 / n**2, 1e-5)`` for ``n`` records."""
        return default_delta(n) if self.delta is None else float(self.delta)

    def _check_params(self):
        from dpglm.estimators import ESTIMATORS

        name, final = final_step(self.estimator)
        if not isinstance(final, tuple(ESTIMATORS.values())):
            where = "" if name is None else f"the pipeline's last step {name!r}: "
            raise TypeError(
                f"estimator must be a dpglm estimator ({', '.join(ESTIMATORS)}) or a Pipeline "
                f"ending with one; {where}got {type(final).__name__}"
            )
        epsilon, _ = check_privacy_target(
            self.epsilon,
            self.delta,
            optional_delta=True,  # None: min(1 / n**2, 1e-5), once n is known
            positive_delta="its Renyi DP accounting gives no guarantee at delta = 0",
            what="search",
        )
        mean = _real("mean_repetitions", self.mean_repetitions)
        if not 1.0 <= mean <= MAX_MEAN_REPETITIONS:
            raise ValueError(
                f"mean_repetitions must lie in [1, {MAX_MEAN_REPETITIONS:g}], got {mean!r}"
            )
        shape = _real("shape", self.shape)
        if not shape >= 0.0:
            raise ValueError(f"shape must be >= 0 or inf (Poisson), got {self.shape!r}")
        fraction = _real("validation_fraction", self.validation_fraction)
        if not 0.0 < fraction < 1.0:
            raise ValueError(f"validation_fraction must lie in (0, 1), got {fraction!r}")
        share = Share(self.score_share, "score_share")
        preprocessing = Share(self.steps_share, "steps_share")
        classifier = is_classifier(self.estimator)
        allowed = CLASSIFIER_SCORING if classifier else REGRESSOR_SCORING
        scoring = allowed[0] if self.scoring is None else self.scoring
        if scoring not in allowed:
            kind = "a classifier" if classifier else "a regressor"
            raise ValueError(f"scoring must be one of {allowed} for {kind}, got {scoring!r}")
        score_range = 1.0
        if not classifier:
            if self.error_bound is None:
                raise ValueError(
                    "a regressor's search needs error_bound, a public bound on each record's "
                    "error (e.g. the squared range of the target): the errors are clipped to "
                    "it, which bounds the score's sensitivity"
                )
            score_range = _real("error_bound", self.error_bound)
            if not (math.isfinite(score_range) and score_range > 0):
                raise ValueError(
                    f"error_bound must be a finite number > 0, got {self.error_bound!r}"
                )
        budget = self.budget
        own = final.get_params(deep=False).get("budget")
        if budget is None:
            budget = own
        elif own is not None and own is not budget:
            raise ValueError(
                "the search and its estimator have different budgets; give one (the search "
                "charges the whole search to it once)"
            )
        return {
            "epsilon": epsilon,
            "mean": mean,
            "shape": shape,
            "fraction": fraction,
            "share": share,  # of each run's epsilon, to its noisy score; the rest to its fit
            "preprocessing": preprocessing.value,  # a pipeline's steps, fitted once
            "classifier": classifier,
            "scoring": scoring,
            "score_range": score_range,
            "budget": budget,
        }

    def _candidates(self, source):
        grid = self.param_distributions
        if isinstance(grid, Mapping):
            grid = [grid]
        if not isinstance(grid, list | tuple) or not grid:
            raise ValueError(
                "param_distributions must be a dict or a non-empty list of dicts, got "
                f"{self.param_distributions!r}"
            )
        step, final = final_step(self.estimator)
        names = set(final.get_params(deep=False))
        for one in grid:
            if not isinstance(one, Mapping) or not one:
                raise ValueError(f"each set of candidates must be a non-empty dict, got {one!r}")
            for key in one:
                # a pipeline's candidates name its last step's parameters, with its prefix
                bare = key if step is None else next(iter(final_candidates([{key: 0}], step)[0]))
                if bare in RESERVED:
                    raise ValueError(
                        f"{key!r} cannot be searched: the search sets {RESERVED} on every fit"
                    )
                if bare not in names:
                    raise ValueError(f"{key!r} is not a parameter of {type(final).__name__}")
        if self.n_candidates is None:
            for one in grid:
                for key, values in one.items():
                    if (
                        isinstance(values, str)
                        or not hasattr(values, "__len__")
                        or not len(values)
                    ):
                        raise ValueError(
                            f"{key!r} must be a non-empty list of values for a grid (or give "
                            "n_candidates to sample from distributions)"
                        )
            return list(ParameterGrid(grid))
        n = self.n_candidates
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"n_candidates must be None or a positive int, got {n!r}")
        seed = int(source.integers(2**31))
        return list(ParameterSampler(grid, int(n), random_state=seed))

    # -- fitting ------------------------------------------------------------------------

    def fit(self, X, y):
        """Run the search; the whole search is charged to the budget first.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        from dpglm.data import load as load_data
        from dpglm.data.rows import take_rows

        settings = self._check_params()
        task = "classification" if settings["classifier"] else "regression"
        # the candidates are public (drawn without the data): the seed's own stream
        source = make_noise_source(self.random_state)
        candidates = self._candidates(source)
        step, base = final_step(self.estimator)
        encoding, steps, run_params = None, None, candidates
        private = not math.isinf(settings["epsilon"])
        selects = settings["classifier"] and private and base.get_params().get("classes") is None
        if selects:
            # too few records for the label selection even at the whole target: refused
            # before the steps or the category sets are charged
            n_rows = np.shape(X)[0]
            _split_sizes(n_rows, settings["fraction"])  # its refusal first, as before
            label_selection(
                self._label_name(), n_rows, settings["epsilon"], self._delta(n_rows), public=None
            )
        if step is not None:
            # a pipeline's steps first, once, at their share; the search on their output
            run_params = final_candidates(candidates, step)
            raw_names, raw_p = frame_feature_names(X), np.shape(X)[1]
            X, steps, settings = self._fitted_steps(X, y, settings)
        elif categorical_columns(X):
            # the category sets first, at their share, charged apart; the search on the rest
            X, base, encoding, settings = self._encoded(X, settings)
        # with the estimator's public label set, if any: a one-class y is then valid
        classes = base.get_params(deep=False).get("classes")
        data = load_data(X, y, task=task, classes=classes)
        n, p = data.n_samples, data.n_features
        n_classes = data.labels.n_classes if settings["classifier"] else None
        # without public classes, a private search selects the label set first, at its
        # share, and every run fits the kept labels (a training split that lacks one would
        # change a one-vs-rest plan); a non-private one reads more than two classes so
        run_classes, label_report = None, None
        if selects:
            y, data, label_report, settings = self._selected_labels(data, settings)
            n_classes = data.labels.n_classes
            run_classes = data.labels.classes.tolist()
        elif classes is None and n_classes is not None and n_classes > 2:
            run_classes = data.labels.classes.tolist()
        if run_classes is not None:  # the runs' plans, as the planner accounts them
            base = clone(base).set_params(classes=run_classes)
        del data
        if sp.issparse(X):
            # rows are taken from it after the charge: in a format that can take them
            X = X.tocsr()
        delta = self._delta(n)
        # what the selections before the search (steps, categories, labels) left of delta,
        # a few units in the last place below it: the composed report adds their deltas
        # in another order, which may round up
        delta = left_after(delta, settings.get("selection_delta", 0.0))
        for _ in range(_ROUNDING_ULPS):
            delta = math.nextafter(delta, 0.0)
        n_val, n_train = _split_sizes(n, settings["fraction"])
        shape_info = (n_train, p, settings["classifier"], sp.issparse(X), n_classes)
        budget = settings["budget"]

        if math.isinf(settings["epsilon"]):
            runs = self._fit_non_private(candidates, delta, budget)
        else:
            runs = self._fit_private(run_params, settings, delta, shape_info, n_val, budget, base)
        plan, fit_epsilon, score_event, guards, planned_leaks, assumptions = runs
        charge = None
        if budget is not None:
            charge = budget.charge(plan, label=self._label(len(candidates)))
        if isinstance(charge, Charge):
            # the secret randomness below (split, K, draws, the runs' seeds, score noise)
            # from a stream keyed to the charge: two searches with one seed charged to one
            # budget share none of it; without a charge the seed's stream goes on
            source = make_noise_source(self.random_state, key=charge.noise_key)
        if score_event is not None:  # a private search: its seed could void its guarantee
            assumptions = (*assumptions, *seed_assumptions(self.random_state))

        # the data are used from here on (above, only validated and measured)
        order = source.permutation(n)
        val_idx, train_idx = np.sort(order[:n_val]), np.sort(order[n_val:])
        X_train, y_train = take_rows(X, train_idx), take_rows(y, train_idx)
        X_val, y_val = take_rows(X, val_idx), take_rows(y, val_idx)
        scorer = Scorer(settings["scoring"], settings["score_range"])

        # non-private: every candidate once, in order
        draws = list(range(len(candidates))) if score_event is None else None
        best = (-math.inf, None, None)
        with collect_privacy_warnings() as leaks:
            if draws is None:
                k = draw_repetitions(settings["mean"], settings["shape"], source)
                draws = [int(source.integers(len(candidates))) for _ in range(k)]
                del k  # part of the mechanism's secret randomness: not kept
            for index in draws:
                model = clone(base).set_params(
                    **run_params[index],
                    epsilon=fit_epsilon,
                    delta=delta,
                    budget=guards[index],
                    random_state=int(source.integers(2**63)),
                    **({} if run_classes is None else {"classes": run_classes}),
                )
                try:
                    model.fit(X_train, y_train)
                    score = scorer(model, X_val, y_val)
                except PlanMismatchError:
                    raise
                except Exception:
                    # a failed run (e.g. a one-class training split) scores -inf: never
                    # selected, and its error, which depends on the data, stays inside
                    model, score = None, -math.inf
                # drawn for a failed run too, so that the later runs' draws do not depend on it
                if score_event is not None:  # at the plan's sensitivity, score_range / n_val
                    score += float(Release(score_event, source).noise())
                if score > best[0]:
                    best = (score, index, model)
        del draws

        score, index, model = best
        self.candidates_ = candidates
        self.delta_ = delta
        self.fit_epsilon_ = fit_epsilon
        self.score_epsilon_ = math.inf if score_event is None else score_event.epsilon
        self.n_features_in_ = p
        if model is None:
            # one message whatever the reason: K and the runs' outcomes stay secret
            poisson = score_event is not None and math.isinf(settings["shape"])
            why, hint = "every run failed", ""
            if poisson:
                why = (
                    "no run took place (the Poisson number of runs was 0, probability "
                    f"exp(-{settings['mean']:g})) or every run failed"
                )
                hint = "; a finite shape (e.g. shape=1.0) always runs at least once"
            warnings.warn(
                f"nothing was selected, and the budget is spent: {why} (a run fails when its "
                f"fit or its score raises, e.g. on a training split with a single class){hint}",
                UserWarning,
                stacklevel=2,
            )
            self.best_index_, self.best_params_, self.best_estimator_ = None, None, None
            self.best_score_ = math.nan
            inner_assumptions = ()
        else:
            # the run's seed is the mechanism's secret randomness: with it anyone could
            # recompute the run's noise, so the model keeps the estimator's own random_state
            model.set_params(budget=budget, random_state=clone(base).random_state)
            if run_classes is not None:
                model.set_params(classes=None)  # the user's setting: read from the data
            self.best_index_ = index
            self.best_params_ = dict(candidates[index])
            self.best_estimator_ = model
            self.best_score_ = float(score)
            # not the run's seed line: the run's seed is the search's secret (its own line
            # is the search's random_state)
            inner_assumptions = tuple(
                a
                for a in model.privacy_report_.assumptions
                if a not in (SEED_ASSUMPTION, SOURCE_ASSUMPTION)
            )
            if run_classes is not None:  # the runs' label set was selected or read
                given = label_assumption(run_classes, public=True)
                read = () if label_report else (label_assumption(run_classes, public=False),)
                inner_assumptions = tuple(
                    b for a in inner_assumptions for b in (read if a == given else (a,))
                )
        self.privacy_report_ = PrivacyReport.from_plan(
            plan,
            delta,
            accountant="auto" if score_event is None else "rdp",
            assumptions=tuple(dict.fromkeys((*assumptions, *inner_assumptions))),
            warnings=tuple(dict.fromkeys((*planned_leaks, *leaks))),
        )
        if encoding is not None:
            self.privacy_report_ = composed_report(
                encoding.encoder.privacy_report_, self.privacy_report_
            )
            self.delta_ = self.privacy_report_.delta
            self.n_features_in_ = len(encoding.columns)
            self.feature_names_in_ = np.asarray(encoding.columns, dtype=object)
            if model is not None:
                model.set_params(feature_bounds=self.estimator.feature_bounds)
                model.n_features_in_ = self.n_features_in_
                model.feature_names_in_ = self.feature_names_in_
                model.encoding_ = encoding
                model.encoded_feature_names_ = encoding.feature_names_out
        if steps is not None:
            self.privacy_report_ = steps.composed(self.privacy_report_)
            self.delta_ = self.privacy_report_.delta
            self.n_features_in_ = raw_p
            if raw_names is not None:
                self.feature_names_in_ = raw_names
        if label_report is not None:
            self.privacy_report_ = with_selection(label_report, self.privacy_report_)
            self.delta_ = self.privacy_report_.delta
        if model is not None:
            # the model is the search's release: it carries the search's report (its run's
            # own report covers one run, not the selection among them), and so does save()
            model.privacy_report_ = self.privacy_report_
            if steps is not None:  # the pipeline's fitted steps, then the selected model
                self.best_estimator_ = steps.with_last(step, model)
        return self

    def _fitted_steps(self, X, y, settings):
        """A pipeline's steps before the last, fitted once at their share of the target and
        charged to the budget: ``(their output, FittedSteps, settings)``, the settings
        taking the rest of epsilon (the steps' delta in ``settings["selection_delta"]``)."""
        n = np.shape(X)[0]
        _split_sizes(n, settings["fraction"])  # refused before anything is charged
        epsilon = settings["epsilon"]
        delta = self._delta(n)
        steps, rest = fit_steps(
            self.estimator,
            X,
            y,
            epsilon=epsilon,
            delta=delta,
            share=settings["preprocessing"],
            budget=settings["budget"],
            random_state=self.random_state,
        )
        settings = {**settings, "epsilon": rest[0], "selection_delta": delta - rest[1]}
        return steps.transform(X), steps, settings

    def _encoded(self, X, settings):
        """A table with string columns: its category sets selected (or public) at their
        share of the search's target and charged to its budget, and the search's inputs on
        the encoded matrix: ``(matrix, estimator, encoding, settings)``, the estimator
        taking the one-hot columns' public ranges and the settings the rest of epsilon
        (the selection's delta in ``settings["selection_delta"]``)."""
        grid = self.param_distributions
        searched = {k for one in ([grid] if isinstance(grid, Mapping) else grid) for k in one}
        if "feature_bounds" in searched:
            raise NonNumericColumnError(
                "X has string columns: the search encodes them once, so it cannot search "
                "feature_bounds; give the numeric columns' bounds to the estimator"
            )
        epsilon = settings["epsilon"]
        delta = self._delta(len(X))
        run = clone(self.estimator).set_params(budget=settings["budget"])
        encoding, bounds, rest = select_for(run, X, epsilon, delta, self.random_state)
        base = clone(self.estimator).set_params(
            feature_bounds=np.column_stack([bounds.low, bounds.high]), categories=None
        )
        settings = {**settings, "epsilon": rest[0], "selection_delta": delta - rest[1]}
        return encoding.matrix(X), base, encoding, settings

    def _label_name(self):
        """How the label selection names the search, in the ledger and in messages."""
        return f"PrivateSearchCV({type(self.estimator).__name__})"

    def _selected_labels(self, data, settings):
        """The label set selected privately at its share of what is left of the search's
        target, charged to its budget: ``(y, data, report, settings)``, ``y`` and ``data``
        on the kept labels and the settings taking the rest (its delta added to
        ``settings["selection_delta"]``)."""
        name = self._label_name()
        n = data.n_samples
        delta = self._delta(n) - settings.get("selection_delta", 0.0)
        selection = label_selection(name, n, settings["epsilon"], delta, public=None)
        data, report = select_in_memory(
            selection,
            data,
            budget=settings["budget"],
            random_state=self.random_state,
            name=name,
        )
        # the records of a label not kept take the fallback, as in the selected data
        values = data.decode(data.y)
        epsilon, rest_delta = selection.rest
        taken = settings.get("selection_delta", 0.0) + (delta - rest_delta)
        return values, data, report, {**settings, "epsilon": epsilon, "selection_delta": taken}

    def _fit_non_private(self, candidates, delta, budget):
        plan = PrivacyPlan(
            (
                NonPrivateEvent(
                    label=f"non-private search: {len(candidates)} candidates fitted exactly "
                    "and scored without noise",
                    part="hyperparameter search",
                ),
            ),
            # the relation of the budget's earlier charges: this plan costs inf under either
            budget.charges[0].plan.neighbouring if budget and budget.charges else "replace_one",
        )
        assumptions = ("epsilon = inf: no privacy; every candidate fitted and scored exactly",)
        return plan, math.inf, None, [None] * len(candidates), (), assumptions

    def _fit_private(self, candidates, settings, delta, shape_info, n_val, budget, base):
        planner = Planner(base, candidates, settings, delta, shape_info, n_val)
        epsilon_rep = planner.calibrate()
        plan, fit_plans, score_event = planner.search_plan(epsilon_rep, final=True)
        guards = [PlanGuard(fit_plans[i]) for i in range(len(candidates))]
        if plan.neighbouring != "replace_one":
            raise PlanError(
                f"the candidates' fits are analysed for {plan.neighbouring} neighbours; the "
                "search's split and its scores are analysed for replace-one neighbours only"
            )
        relation = "replace-one neighbours; the number of records is public"
        assumptions = (
            relation,
            f"train/validation split: {n_val} validation records drawn uniformly without "
            "replacement, without the data; each run's fit and noisy score composed "
            "sequentially",
            f"candidates drawn uniformly from {len(candidates)} chosen without the data; "
            + (
                "their different fit plans are all accounted in each run (an upper bound "
                "for the uniform mixture)"
                if planner.n_groups > 1
                else "all share one fit plan"
            ),
            "only the selected run is released: the number of runs and the other runs stay secret",
            "the selected model is trained on the training split only (no refit), its fit "
            f"at epsilon {settings['share'].rest_of(epsilon_rep):.4g} (its epsilon parameter); "
            "it carries this report, the guarantee of the whole search",
            "validation score: " + Scorer.describe(settings["scoring"], settings["score_range"]),
        )
        fit_epsilon = settings["share"].rest_of(epsilon_rep)
        return plan, fit_epsilon, score_event, guards, planner.leaks, assumptions

    def _label(self, n_candidates):
        return (
            f"PrivateSearchCV({type(self.estimator).__name__}, {n_candidates} candidates, "
            f"mean_repetitions={self.mean_repetitions:g}, shape={self.shape:g})"
        )

    # -- using the selected model --------------------------------------------------------

    def _selected(self):
        if not hasattr(self, "privacy_report_"):
            raise NotFittedError("this PrivateSearchCV is not fitted yet; call fit first")
        if self.best_estimator_ is None:
            raise NotFittedError(
                "the search selected nothing (no run took place, or every run failed); "
                "there is no model"
            )
        return self.best_estimator_

    @property
    def classes_(self):
        """Classes of the selected classifier."""
        return self._selected().classes_

    def predict(self, X):
        """Predictions of the selected model."""
        return self._selected().predict(X)

    @available_if(lambda self: hasattr(self.estimator, "decision_function"))
    def decision_function(self, X):
        """Decision function of the selected classifier."""
        return self._selected().decision_function(X)

    @available_if(lambda self: hasattr(self.estimator, "predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the selected classifier."""
        return self._selected().predict_proba(X)

    def score(self, X, y):
        """The selected model's own ``score`` (R^2 or accuracy) on ``(X, y)``, not private."""
        return self._selected().score(X, y)


#: how many units in the last place a search's delta stays below what its selections left
_ROUNDING_ULPS = 8


def _split_sizes(n, fraction):
    """``(n_val, n_train)`` for ``n`` records; at least 2 for training, else a ValueError."""
    n_val = max(1, round(fraction * n))
    n_train = n - n_val
    if n_train < 2:
        raise ValueError(
            f"{n} records leave {n_train} for training with validation_fraction="
            f"{fraction:g}; need at least 2"
        )
    return n_val, n_train


def _real(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise ValueError(f"{name} must be a number, got {value!r}")
    return float(value)
