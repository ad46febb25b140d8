"""Private hyperparameter search: repeat-and-select with the whole search accounted.

Training one model per candidate and keeping the best is not private, even
when every fit is: the choice itself reveals the data, and every fit costs its
own budget. :class:`PrivateSearchCV` runs the repeat-and-select algorithm of
Papernot and Steinke (2022, "Hyperparameter tuning with Renyi differential
privacy") instead, and charges the whole search to the budget once, before
it touches the data.

The base mechanism ``Q`` (one run)
    Draw a candidate uniformly from a data-independent list; fit the
    estimator privately on the training split with its own calibrated solver
    at ``(fit_epsilon, delta)``; release its validation score on the held-out
    split plus Laplace noise: accuracy for classifiers, minus the squared (or
    absolute) error clipped to ``error_bound`` for regressors, each a mean of
    ``n_val`` per-record terms in a range of width ``R`` (1 or
    ``error_bound``), so one replaced record moves it by at most ``R / n_val``.
The search
    Draw the number of runs ``K`` (Poisson of mean ``mean_repetitions`` by
    default, or dp-accounting's truncated negative binomial of shape
    ``shape``), run ``Q`` ``K`` times independently and release the model of
    the run with the highest noisy score, that score, and nothing else:
    neither ``K`` nor the other runs (they are not even kept).

The split
    ``n_val = round(validation_fraction * n)`` records drawn uniformly
    without replacement (without the data) are the validation split, the
    others the training split, the same for every run. Replace-one
    neighbours, the relation of every dpglm fit (``n`` is public, and so are
    the split sizes): the changed record is in one split, so the fit sees a
    replace-one neighbour or the score moves by at most ``R / n_val``.

Accounting: the plan of one run is the composition of the fit's calibrated
plan and the noisy score (sequential composition, valid whichever split the
neighbouring record falls in; under replace-one their maximum would do, but
dp-accounting has no such event and the sum is a valid, looser bound). When
the candidates have different fit plans (e.g. different ``passes``), a run
is a uniform mixture of them, whose Renyi divergence is at most the largest
of theirs; the plan of a run then holds all of them, a valid (looser)
bound. The search is one
:class:`~dpglm.privacy.events.RepeatAndSelectEvent` of that plan, accounted
with Renyi DP (Theorems 2 and 6 of the paper, through dp-accounting's
``RepeatAndSelectDpEvent``). The per-run budget is calibrated so that the
whole search meets the target ``(epsilon, delta)``.

Examples
--------
>>> import numpy as np
>>> from dpglm.estimators import DPLogisticRegression
>>> from dpglm.tuning import PrivateSearchCV
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, (4000, 3))
>>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
>>> search = PrivateSearchCV(
...     DPLogisticRegression(solver="dp-cd", feature_bounds=1.0, smoothness="bounds"),
...     {"alpha": [1e-4, 1e-3, 0.5]},
...     epsilon=2.0,
...     delta=1e-6,
...     mean_repetitions=5,
...     shape=1.0,  # geometric number of runs: at least one
...     random_state=0,
... ).fit(X, y)
>>> search.privacy_report_.epsilon <= 2.0, search.privacy_report_.accountant
(True, 'rdp')
>>> round(search.fit_epsilon_, 2), round(search.score_epsilon_, 2)
(0.81, 0.2)
>>> search.best_estimator_.score(X, y) > 0.9
True
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import ParameterGrid, ParameterSampler
from sklearn.utils.metaestimators import available_if

from dpglm.exceptions import CalibrationError, PlanError, PrivacyError
from dpglm.privacy.accounting import account
from dpglm.privacy.budget import Charge
from dpglm.privacy.events import (
    LaplaceEvent,
    NonPrivateEvent,
    PrivacyPlan,
    RepeatAndSelectEvent,
)
from dpglm.privacy.mechanisms import make_noise_source
from dpglm.privacy.releases import Release
from dpglm.privacy.report import PrivacyReport, collect_privacy_warnings
from dpglm.privacy.spending import SEED_ASSUMPTION, SOURCE_ASSUMPTION, seed_assumptions
from dpglm.privacy.targets import Share, check_privacy_target

#: parameters the search sets on every fit, which cannot be searched
RESERVED = ("epsilon", "delta", "budget", "random_state")
CLASSIFIER_SCORING = ("accuracy",)
REGRESSOR_SCORING = ("neg_mean_squared_error", "neg_mean_absolute_error")
#: largest mean number of runs (the Poisson sampler works in floating point)
MAX_MEAN_REPETITIONS = 500.0
#: the calibrated search's epsilon lies in [(1 - CALIBRATION_RTOL) epsilon, epsilon]
CALIBRATION_RTOL = 1e-3


# -- the number of runs ----------------------------------------------------------------------


def repetitions_mean(gamma: float, shape: float) -> float:
    """Mean of the truncated negative binomial of the paper's Definition 1.

    ``shape = 0`` is the logarithmic distribution, ``shape = 1`` the geometric.

    Examples
    --------
    >>> repetitions_mean(0.25, 1.0)
    4.0
    >>> round(repetitions_mean(0.1, 2.0), 4)
    18.1818
    """
    if not 0.0 < gamma <= 1.0:
        raise ValueError(f"gamma must lie in (0, 1], got {gamma!r}")
    if gamma == 1.0:
        return 1.0
    if shape == 0.0:
        return (1.0 - gamma) / (gamma * -math.log(gamma))
    if shape == 1.0:
        return 1.0 / gamma
    return shape * (1.0 - gamma) / (gamma * -math.expm1(shape * math.log(gamma)))


def repetitions_gamma(mean: float, shape: float) -> float:
    """The ``gamma`` of the truncated negative binomial of mean at most ``mean``.

    The mean decreases with ``gamma``; this returns a ``gamma`` at least the
    exact one (within ``1e-12`` relative), so the distribution drawn from has
    a mean at most ``mean`` and a ``gamma`` at least dp-accounting's (which
    rounds the other way): the accounted bound holds for it.

    Examples
    --------
    >>> repetitions_gamma(4.0, 1.0)
    0.25
    >>> round(repetitions_mean(repetitions_gamma(10.0, 0.5), 0.5), 9)
    10.0
    """
    if mean <= 1.0:
        return 1.0
    if shape == 1.0:
        return 1.0 / mean
    lo, hi = 0.0, 1.0
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        if repetitions_mean(mid, shape) <= mean:
            hi = mid
        else:
            lo = mid
    return hi


def draw_repetitions(mean: float, shape: float, source) -> int:
    """Draw the number of runs ``K`` of a repeat-and-select search.

    Inverse-CDF sampling from one uniform of ``source`` (a
    :class:`~dpglm.privacy.mechanisms.NoiseSource`): Poisson of mean ``mean``
    when ``shape = inf`` (``K = 0`` possible), else the truncated negative
    binomial of :func:`repetitions_gamma` (``K >= 1``), exactly the
    distributions :class:`~dpglm.privacy.events.RepeatAndSelectEvent` accounts.

    Examples
    --------
    >>> from dpglm.privacy.mechanisms import make_noise_source
    >>> source = make_noise_source(0)
    >>> draws = [draw_repetitions(5.0, math.inf, source) for _ in range(2000)]
    >>> bool(abs(np.mean(draws) - 5.0) < 0.2)
    True
    >>> min(draw_repetitions(3.0, 1.0, source) for _ in range(200))
    1
    """
    u = float(source.uniform())
    if math.isinf(shape):
        p = math.exp(-mean)
        k, cdf = 0, p
        while u >= cdf and p > 0.0:
            k += 1
            p *= mean / k
            cdf += p
        return k
    gamma = repetitions_gamma(mean, shape)
    if gamma >= 1.0:
        return 1
    if shape == 0.0:
        p = (1.0 - gamma) / -math.log(gamma)
    else:
        p = shape * (1.0 - gamma) / math.expm1(-shape * math.log(gamma))
    k, cdf = 1, p
    # stop when the tail is negligible: only reached when u lies within rounding of 1
    while u >= cdf and p > 0.0 and not (k > mean and p < 1e-18 * gamma):
        p *= (1.0 - gamma) * (k + shape) / (k + 1)
        k += 1
        cdf += p
    return k


# -- plans of the fits, known before the data is read ----------------------------------------


class _PlanCapturedError(Exception):
    def __init__(self, plan):
        super().__init__("plan captured")
        self.plan = plan


class _PlanRecorder:
    """Stands in for a budget in a dry run: stops the fit at its charge, keeping the plan."""

    persistent = False

    def charge(self, plan, *, label=""):
        raise _PlanCapturedError(plan)


def _accounting_key(plan: PrivacyPlan) -> PrivacyPlan:
    """``plan`` without what accounting ignores (labels, parts, sensitivities)."""
    return PrivacyPlan(
        tuple(replace(e, label="", part="", sensitivity=None) for e in plan.events),
        plan.neighbouring,
    )


class _PlanMismatchError(PrivacyError):
    """A run's fit calibrated another plan than the accounted one: raised, never a failed run."""


class _PlanGuard:
    """Stands in for a budget inside a search: the fit must run the plan the search accounted.

    Solvers charge before they read the data for training, so a fit whose plan
    differs from the accounted one stops before it trains.
    """

    persistent = False

    def __init__(self, expected: PrivacyPlan):
        self.expected = _accounting_key(expected)

    def charge(self, plan, *, label=""):
        if _accounting_key(plan) != self.expected:
            raise _PlanMismatchError(
                f"the fit {label!r} calibrated a plan that differs from the one the search "
                "accounted (its plan depends on more than the data's shape and its "
                "hyperparameters); the search stops before training it"
            )


def _with_candidate(err, params):
    """``err`` again, its message prefixed with the candidate (or as is, if that fails)."""
    try:
        return type(err)(f"candidate {params}: {err}")
    except Exception:
        return err


def _dummy_data(n, p, classification, sparse):
    X = sp.csr_matrix((n, p)) if sparse else np.zeros((n, p))
    y = (np.arange(n) % 2).astype(float) if classification else np.zeros(n)
    return X, y


def _dummy_labels(y, classes):
    """The dry run's 0 / 1 labels ``y`` as the candidate's public ``classes``, if it has them."""
    if classes is None:
        return y
    return np.unique(np.asarray(classes))[(y > 0).astype(np.intp)]


# -- the search ------------------------------------------------------------------------------


class PrivateSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Private hyperparameter search (repeat-and-select), charged once to the budget.

    See the module docstring for the algorithm and its accounting.

    Parameters
    ----------
    estimator : dpglm estimator
        A :mod:`dpglm.estimators` model; its ``epsilon``, ``delta``, ``budget``
        and ``random_state`` are set by the search for every run.
    param_distributions : dict or list of dicts
        Candidate hyperparameters: lists (a grid) or, with ``n_candidates``,
        scipy distributions (anything with ``rvs``), as in scikit-learn's
        searches. The candidates are drawn before the data is read and are
        public (``candidates_``).
    epsilon : float
        Privacy of the whole search, ``> 0``; ``inf`` gives a non-private
        search: every candidate fitted exactly and scored without noise once,
        and a report that says so.
    delta : float, optional
        Its delta, ``> 0`` for a private search (Renyi DP accounting cannot
        reach ``delta = 0``); None: ``1 / n**2``.
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
    train/validation split is drawn without the data, with fixed sizes (the
    module docstring gives the analysis, for replace-one neighbours like every
    fit's).

    A run whose fit or score raises (e.g. a training split with a single
    class, when the estimator is not given its ``classes``) scores ``-inf``:
    it is never selected over a run that succeeded, and its error is not
    raised, since an error after the charge would tell something about the
    data that the accounting does not cover. When every run fails, nothing is
    selected, as when no run takes place (the warning does not tell which).
    Errors that come before the charge (bad hyperparameters, found by the
    dry runs) are raised as usual, and so is a fit that calibrates a plan
    other than the accounted one (a :class:`~dpglm.exceptions.PrivacyError`):
    that is a defect the accounting does not cover, not a failed run.

    The plan of each candidate's fit is known before the data is read: a dry
    run fits the estimator on zeros of the training split's shape with a
    stand-in budget that stops it at its charge (solvers charge before they
    train), and every real run gets a stand-in budget that checks that the
    plan it charges is the accounted one. Privacy-leak warnings of the dry
    runs and of the runs go into the report.

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
                 random_state=None):  # fmt: skip
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
        self.random_state = random_state

    # -- validation ---------------------------------------------------------------------

    def _check_params(self):
        from dpglm.estimators import ESTIMATORS

        if not isinstance(self.estimator, tuple(ESTIMATORS.values())):
            raise TypeError(
                f"estimator must be a dpglm estimator ({', '.join(ESTIMATORS)}), "
                f"got {type(self.estimator).__name__}"
            )
        epsilon, _ = check_privacy_target(
            self.epsilon,
            self.delta,
            optional_delta=True,  # None: 1 / n**2, once n is known
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
        own = self.estimator.get_params(deep=False).get("budget")
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
        names = set(self.estimator.get_params(deep=False))
        for one in grid:
            if not isinstance(one, Mapping) or not one:
                raise ValueError(f"each set of candidates must be a non-empty dict, got {one!r}")
            for key in one:
                if key in RESERVED:
                    raise ValueError(
                        f"{key!r} cannot be searched: the search sets {RESERVED} on every fit"
                    )
                if key not in names:
                    raise ValueError(
                        f"{key!r} is not a parameter of {type(self.estimator).__name__}"
                    )
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
        # with the estimator's public label set, if any: a one-class y is then valid
        classes = self.estimator.get_params(deep=False).get("classes")
        data = load_data(X, y, task=task, classes=classes)
        n, p = data.n_samples, data.n_features
        del data
        delta = 1.0 / float(n) ** 2 if self.delta is None else float(self.delta)
        n_val = max(1, round(settings["fraction"] * n))
        n_train = n - n_val
        if n_train < 2:
            raise ValueError(
                f"{n} records leave {n_train} for training with validation_fraction="
                f"{settings['fraction']:g}; need at least 2"
            )
        # the candidates are public (drawn without the data): the seed's own stream
        source = make_noise_source(self.random_state)
        candidates = self._candidates(source)
        shape_info = (n_train, p, settings["classifier"], sp.issparse(X))
        budget = settings["budget"]

        if math.isinf(settings["epsilon"]):
            runs = self._fit_non_private(candidates, delta, budget)
        else:
            runs = self._fit_private(candidates, settings, delta, shape_info, n_val, budget)
        plan, fit_epsilon, score_event, guards, dry_leaks, assumptions = runs
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
        scorer = _Scorer(settings["scoring"], settings["score_range"])

        # non-private: every candidate once, in order
        draws = list(range(len(candidates))) if score_event is None else None
        best = (-math.inf, None, None)
        with collect_privacy_warnings() as leaks:
            if draws is None:
                k = draw_repetitions(settings["mean"], settings["shape"], source)
                draws = [int(source.integers(len(candidates))) for _ in range(k)]
                del k  # part of the mechanism's secret randomness: not kept
            for index in draws:
                model = clone(self.estimator).set_params(
                    **candidates[index],
                    epsilon=fit_epsilon,
                    delta=delta,
                    budget=guards[index],
                    random_state=int(source.integers(2**63)),
                )
                try:
                    model.fit(X_train, y_train)
                    score = scorer(model, X_val, y_val)
                except _PlanMismatchError:
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
            model.set_params(budget=budget, random_state=clone(self.estimator).random_state)
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
        self.privacy_report_ = PrivacyReport.from_plan(
            plan,
            delta,
            accountant="auto" if score_event is None else "rdp",
            assumptions=tuple(dict.fromkeys((*assumptions, *inner_assumptions))),
            warnings=tuple(dict.fromkeys((*dry_leaks, *leaks))),
        )
        if model is not None:
            # the model is the search's release: it carries the search's report (its run's
            # own report covers one run, not the selection among them), and so does save()
            model.privacy_report_ = self.privacy_report_
        return self

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

    def _fit_private(self, candidates, settings, delta, shape_info, n_val, budget):
        planner = _Planner(self.estimator, candidates, settings, delta, shape_info, n_val)
        epsilon_rep = planner.calibrate()
        plan, fit_plans, score_event = planner.search_plan(epsilon_rep, final=True)
        guards = [_PlanGuard(fit_plans[i]) for i in range(len(candidates))]
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
            "validation score: " + _Scorer.describe(settings["scoring"], settings["score_range"]),
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


def _real(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise ValueError(f"{name} must be a number, got {value!r}")
    return float(value)


class _Scorer:
    """A validation score: the mean of per-record terms in a range of width ``score_range``."""

    def __init__(self, scoring, score_range):
        self.scoring = scoring
        self.score_range = score_range

    @staticmethod
    def describe(scoring, score_range):
        if scoring == "accuracy":
            return "accuracy on the validation split (sensitivity 1 / n_val)"
        error = "squared" if scoring == "neg_mean_squared_error" else "absolute"
        return (
            f"minus the mean {error} error on the validation split, each record's error "
            f"clipped to [0, {score_range:g}] (sensitivity {score_range:g} / n_val)"
        )

    def __call__(self, model, X, y):
        predictions = model.predict(X)
        y = np.asarray(y)
        if self.scoring == "accuracy":
            return float(np.mean(predictions == y))
        errors = np.asarray(predictions, dtype=float) - y.astype(float)
        errors = errors**2 if self.scoring == "neg_mean_squared_error" else np.abs(errors)
        return -float(np.mean(np.minimum(errors, self.score_range)))


class _Planner:
    """The plan of a search, from dry runs of its candidates on data of the same shape.

    A dry run fits a candidate on zeros of the training split's shape with a
    stand-in budget that stops the fit at its charge: what it captures is the
    calibrated plan, a function of the shape and the hyperparameters only.
    The per-run epsilon ``e`` (fit ``(1 - score_share) e``, score
    ``score_share e``) is searched on a log scale (secant steps in a shrinking
    bracket) until the accounted search lies within ``CALIBRATION_RTOL`` below
    the target; every fit plan is then captured at the final value.
    """

    def __init__(self, estimator, candidates, settings, delta, shape_info, n_val):
        self.n_val = n_val
        self.estimator = estimator
        self.candidates = candidates
        self.settings = settings
        self.delta = delta
        self.shape_info = shape_info
        self.leaks = ()
        self.n_groups = 1
        self._cache = {}
        self._representatives = None
        self._dummy = None

    def dry_run(self, index, fit_epsilon):
        key = (index, fit_epsilon)
        if key in self._cache:
            return self._cache[key]
        if self._dummy is None:
            self._dummy = _dummy_data(*self.shape_info)
        X, y = self._dummy
        model = clone(self.estimator).set_params(
            **self.candidates[index],
            epsilon=fit_epsilon,
            delta=self.delta,
            budget=_PlanRecorder(),
            random_state=0,
        )
        params = self.candidates[index]
        if self.shape_info[2]:
            y = _dummy_labels(y, model.get_params().get("classes"))
        # the dry run's leaks go into the report, not to the user: the runs warn again
        with collect_privacy_warnings(show=False) as caught:
            try:
                model.fit(X, y)
            except _PlanCapturedError as captured:
                plan = captured.plan
            except Exception as err:
                raise _with_candidate(err, params) from err
            else:
                raise PrivacyError(
                    f"candidate {params}: the fit charged no plan, so the search cannot account it"
                )
        leaks = tuple(f"candidate {params}: {message}" for message in caught)
        self._cache[key] = (plan, leaks)
        return plan, leaks

    def search_plan(self, epsilon_rep, final=False):
        """The search's plan at per-run epsilon ``epsilon_rep``; all candidates if ``final``."""
        fit_epsilon = self.settings["share"].rest_of(epsilon_rep)
        indices = range(len(self.candidates)) if final else self._representatives
        plans, groups, leaks = {}, {}, []
        for i in indices:
            plan, found = self.dry_run(i, fit_epsilon)
            plans[i] = plan
            groups.setdefault(_accounting_key(plan), []).append(i)
            leaks.extend(found)
        relations = {key.neighbouring for key in groups}
        if len(relations) > 1:
            by_relation = {
                r: [i for key, members in groups.items() if key.neighbouring == r for i in members]
                for r in sorted(relations)
            }
            raise PlanError(
                "the candidates' fits are analysed under different neighbouring relations "
                f"(candidates by relation: {by_relation}); one search needs one relation "
                "(e.g. do not mix solver='dp-sgd' with Poisson sampling and the coordinate "
                "solvers)"
            )
        (relation,) = relations
        if final:
            self.leaks = tuple(dict.fromkeys(leaks))
            self.n_groups = len(groups)
        events = []
        for members in groups.values():
            which = (
                "every candidate"
                if len(members) == len(self.candidates)
                else f"candidates {', '.join(map(str, members))}"
            )
            for e in plans[members[0]].events:
                events.append(replace(e, label=f"{e.label}; fit of {which}".lstrip("; ")))
        score = LaplaceEvent(
            noise_multiplier=1.0 / self.settings["share"].of(epsilon_rep),
            sensitivity=self.settings["score_range"] / self.n_val,
            label="noisy validation score",
            part="validation score",
        )
        base = PrivacyPlan((*events, score), relation)
        search = RepeatAndSelectEvent(
            inner=base,
            mean=self.settings["mean"],
            shape=self.settings["shape"],
            label="repeat-and-select: the best of the runs",
        )
        return PrivacyPlan((search,), relation), plans, score

    def cost(self, epsilon_rep, final=False):
        """Log of the search's epsilon over the target, at per-run epsilon ``epsilon_rep``."""
        plan = self.search_plan(epsilon_rep, final)[0]
        epsilon = account(plan, self.delta, "rdp").epsilon
        return math.log(max(epsilon, 1e-300) / self.settings["epsilon"])

    def _group_representatives(self, fit_epsilon):
        seen = {}
        for i in range(len(self.candidates)):
            seen.setdefault(_accounting_key(self.dry_run(i, fit_epsilon)[0]), i)
        return list(seen.values())

    def calibrate(self):
        """The largest per-run epsilon found whose search meets the target (within rtol)."""
        target = self.settings["epsilon"]
        share = self.settings["share"]
        # the iterations use one candidate per distinct fit plan; the value returned is
        # checked with every candidate
        self._representatives = self._group_representatives(share.rest_of(target))
        tolerance = math.log1p(-CALIBRATION_RTOL)
        points, lo, hi = [], None, None
        x = math.log(target)
        for _ in range(60):
            g = self.cost(math.exp(x))
            if tolerance <= g <= 0:
                g = self.cost(math.exp(x), final=True)
                if g <= 0:
                    return math.exp(x)
                # a candidate's plan changed group at this budget: regroup, go on
                self._representatives = self._group_representatives(share.rest_of(math.exp(x)))
            points.append((x, g))
            if g <= 0 and (lo is None or x > lo[0]):
                lo = (x, g)
            if g > 0 and (hi is None or x < hi[0]):
                hi = (x, g)
            x = _next_point(points, lo, hi, 0.5 * tolerance)
            if x < math.log(target) - 40.0:
                break
        if lo is not None and self.cost(math.exp(lo[0]), final=True) <= 0:
            return math.exp(lo[0])
        raise CalibrationError(
            f"no per-run budget makes the search meet epsilon={target:g} at "
            f"delta={self.delta:g}: the repeat-and-select overhead alone exceeds it "
            "(fewer repetitions or a larger delta help)"
        )


def _next_point(points, lo, hi, aim):
    """Next log per-run epsilon: a secant step towards ``g = aim``, kept inside the bracket."""
    x, g = points[-1]
    slope = 1.0
    if len(points) >= 2:
        (x0, g0), (x1, g1) = points[-2], points[-1]
        if x1 != x0 and (g1 - g0) / (x1 - x0) > 0.05:
            slope = (g1 - g0) / (x1 - x0)
    if lo is not None and hi is not None:
        (x0, g0), (x1, g1) = lo, hi
        x = x0 - (g0 - aim) * (x1 - x0) / (g1 - g0)
        width = x1 - x0
        if not x0 + 0.05 * width <= x <= x1 - 0.05 * width:
            x = 0.5 * (x0 + x1)
        return x
    return x - max(-5.0, min(5.0, (g - aim) / slope))
