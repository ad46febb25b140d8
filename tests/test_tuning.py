"""PrivateSearchCV: one charge for the whole search, selection, reproducibility, errors."""

import math
import warnings

import numpy as np
import pytest
import scipy.stats
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, ParameterGrid

from dpglm.estimators import DPLinearSVC, DPLogisticRegression, DPRidge
from dpglm.exceptions import BudgetExceededError, PrivacyError, PrivacyLeakWarning, TargetError
from dpglm.preprocessing.label_sets import LabelSelection, label_share
from dpglm.privacy.accounting import account
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.events import GaussianEvent, PrivacyPlan, RepeatAndSelectEvent, ThresholdEvent
from dpglm.privacy.mechanisms import make_noise_source
from dpglm.privacy.report import PrivacyReport
from dpglm.tuning import (
    PrivateSearchCV,
    draw_repetitions,
    repetitions_gamma,
    repetitions_mean,
)
from dpglm.tuning.planning import PlanGuard

RNG = np.random.default_rng(0)
X = RNG.uniform(-1, 1, (3000, 3))
Y_CLASS = np.where(X[:, 0] - X[:, 1] > 0, "yes", "no")
Y_REG = X @ np.array([1.0, -0.5, 0.0]) + 0.05 * RNG.standard_normal(3000)

#: the public label set of Y_CLASS: given as classes=, nothing is charged to select it
PUBLIC = ["no", "yes"]
#: l1 at alpha = 1 zeroes every coefficient: a constant classifier, accuracy about 0.5
CLASSIFIER_GRID = {"alpha": [1e-4, 1.0]}
#: ridge at alpha = 100 shrinks the coefficients to almost 0: squared error about 0.4
REGRESSOR_GRID = {"alpha": [1e-3, 100.0]}


def classifier_search(classes=None, **kwargs):
    # shape 1 (geometric): at least one run; without classes, the search selects the label
    # set privately first (its own charge, at its share of the target)
    options = {
        "epsilon": 1.0,
        "delta": 1e-6,
        "mean_repetitions": 4.0,
        "shape": 1.0,
        "random_state": 0,
    }
    options.update(kwargs)
    model = DPLogisticRegression(
        penalty="l1", solver="dp-gcd", feature_bounds=1.0, smoothness="bounds", classes=classes
    )
    return PrivateSearchCV(model, CLASSIFIER_GRID, **options)


def regressor_search(**kwargs):
    options = {
        "epsilon": 1.0,
        "delta": 1e-6,
        "mean_repetitions": 4.0,
        "shape": 1.0,
        "error_bound": 4.0,
        "random_state": 0,
    }
    options.update(kwargs)
    # the target mapped into [-1, 1] halves its residuals: clip 1 here is clip 2 on y
    model = DPRidge(
        solver="dp-cd",
        feature_bounds=1.0,
        target_bounds=(-2.0, 2.0),
        smoothness="bounds",
        clip=1.0,
    )
    return PrivateSearchCV(model, REGRESSOR_GRID, **options)


# -- accounting --------------------------------------------------------------------------


def test_the_whole_search_is_charged_once_and_meets_the_target():
    budget = PrivacyBudget(3.0, 1e-6)
    # the public label set: no label selection, the search's own charge only
    search = classifier_search(budget=budget, epsilon=1.0, classes=PUBLIC).fit(X, Y_CLASS)
    (charge,) = budget.charges
    assert 1.0 * (1 - 1e-3) <= charge.epsilon_after <= 1.0
    (event,) = charge.plan.events
    assert isinstance(event, RepeatAndSelectEvent)
    assert event.mean == 4.0 and event.shape == 1.0
    report = search.privacy_report_
    assert report.epsilon == pytest.approx(charge.epsilon_after, rel=1e-12)
    assert report.accountant == "rdp" and report.guarantee
    # one run: the fit's plan at fit_epsilon_ and a Laplace score at score_epsilon_
    fit_events = event.inner.events[:-1]
    score = event.inner.events[-1]
    fit_plan = PrivacyPlan(fit_events)
    assert account(fit_plan, 1e-6).epsilon == pytest.approx(search.fit_epsilon_, rel=1e-3)
    assert score.epsilon == pytest.approx(search.score_epsilon_)
    assert search.score_epsilon_ == pytest.approx(0.25 * search.fit_epsilon_)
    assert score.sensitivity == pytest.approx(1 / 600)
    # the selected model is the search's release: it carries the search's report
    assert search.best_estimator_.privacy_report_ == report
    # the selected model keeps the shared budget: refitting it is charged
    assert search.best_estimator_.budget is budget
    # a second search composes with the first
    classifier_search(budget=budget, epsilon=1.0, random_state=1, classes=PUBLIC).fit(X, Y_CLASS)
    assert len(budget.charges) == 2 and budget.spent() < 2.0


def test_the_estimator_budget_is_charged_when_the_search_has_none():
    budget = PrivacyBudget(2.0, 1e-6)
    search = PrivateSearchCV(
        DPLogisticRegression(
            penalty="l1", solver="dp-gcd", feature_bounds=1.0, budget=budget, classes=PUBLIC
        ),
        CLASSIFIER_GRID,
        epsilon=1.0,
        delta=1e-6,
        mean_repetitions=2.0,
        shape=1.0,
        random_state=0,
    ).fit(X, Y_CLASS)
    assert len(budget.charges) == 1 and search.best_estimator_.budget is budget
    with pytest.raises(ValueError, match="different budgets"):
        PrivateSearchCV(
            DPRidge(budget=budget),
            REGRESSOR_GRID,
            epsilon=1.0,
            budget=PrivacyBudget(1.0, 1e-6),
            error_bound=4.0,
        ).fit(X, Y_REG)


def test_an_unaffordable_search_is_refused_before_anything_runs():
    budget = PrivacyBudget(0.5, 1e-6)
    # the public label set: no label selection is charged before the search's refusal
    search = classifier_search(budget=budget, epsilon=1.0, classes=PUBLIC)
    with pytest.raises(BudgetExceededError):
        search.fit(X, Y_CLASS)
    assert budget.charges == () and not hasattr(search, "best_estimator_")


def test_a_classifier_search_without_classes_selects_the_label_set_first():
    budget = PrivacyBudget(3.0, 1e-6)
    search = classifier_search(budget=budget, epsilon=1.0).fit(X, Y_CLASS)
    expected = LabelSelection.create(3000, 1.0, 1e-6)
    share = expected.share.value
    assert share == label_share(3000, 1.0, 1e-6)
    # two charges: the label selection's, at its share of the target, then the search's
    selection, charge = budget.charges
    assert selection.plan == expected.plan.plan
    assert [type(e) for e in selection.plan.events] == [GaussianEvent, ThresholdEvent]
    assert [e.part for e in selection.plan.events] == ["label selection"] * 2
    assert selection.epsilon_after <= share * 1.0
    (event,) = charge.plan.events
    assert isinstance(event, RepeatAndSelectEvent)
    assert event.mean == 4.0 and event.shape == 1.0
    # one report: the selection as its own part, first; epsilons and deltas add up to the
    # search's target
    report = search.privacy_report_
    assert [(m.kind, m.part) for m in report.mechanisms] == [
        ("gaussian", "label selection"),
        ("threshold", "label selection"),
        ("repeat_and_select", "hyperparameter search"),
    ]
    assert set(report.parts) == {"label selection", "hyperparameter search"}
    assert 0.999 * share <= report.parts["label selection"] <= share
    assert 0.999 * (1 - share) <= report.parts["hyperparameter search"] <= 1 - share
    assert report.epsilon == pytest.approx(math.fsum(report.parts.values()), rel=1e-12)
    assert 1.0 * (1 - 1e-3) <= report.epsilon <= 1.0
    assert report.delta == pytest.approx(1e-6, rel=1e-9) and report.delta <= 1e-6
    assert search.delta_ == report.delta and report.guarantee
    assert any(
        a.startswith("label set ['no', 'yes'] selected privately (") for a in report.assumptions
    )
    assert not any("read from the data" in a for a in report.assumptions)
    # the runs fit the kept labels, at the rest; the selected model carries the whole report
    assert search.classes_.tolist() == PUBLIC
    assert search.best_estimator_.classes_.tolist() == PUBLIC
    assert search.best_estimator_.privacy_report_ == report


def test_plain_grid_search_charges_every_fit():
    budget = PrivacyBudget(50.0, 1e-6)
    grid = GridSearchCV(
        DPRidge(feature_bounds=1.0, epsilon=0.5, delta=1e-6, budget=budget, random_state=0),
        {"alpha": [1e-3, 1.0]},
        cv=2,
    ).fit(X, Y_REG)
    # 2 candidates x 2 folds, and the refit on all the data
    assert len(budget.charges) == 5
    assert grid.best_estimator_.budget is budget


def test_candidates_with_different_plans_are_all_accounted():
    search = PrivateSearchCV(
        DPRidge(
            solver="dp-cd",
            feature_bounds=1.0,
            target_bounds=(-2.0, 2.0),
            smoothness="bounds",
            clip=2.0,
        ),
        {"alpha": [1e-3], "passes": [5, 20]},
        epsilon=1.0,
        delta=1e-6,
        error_bound=4.0,
        mean_repetitions=3.0,
        shape=1.0,
        random_state=0,
    ).fit(X, Y_REG)
    (event,) = search.privacy_report_.mechanisms
    inner = event.details["inner"]
    counts = sorted(m["count"] for m in inner if m["kind"] == "gaussian")
    assert counts == [20, 80]  # 5 and 20 passes over 4 coordinates
    assert {m["label"].split("; ")[-1] for m in inner[:2]} == {
        "fit of candidates 0",
        "fit of candidates 1",
    }
    assert any(
        "an upper bound for the uniform mixture" in a for a in search.privacy_report_.assumptions
    )
    assert 0.999 <= search.privacy_report_.epsilon <= 1.0
    # composing both plans in each run leaves each fit less than with one plan
    one = PrivateSearchCV(
        DPRidge(
            solver="dp-cd",
            feature_bounds=1.0,
            target_bounds=(-2.0, 2.0),
            smoothness="bounds",
            clip=2.0,
        ),
        {"alpha": [1e-3], "passes": [20]},
        epsilon=1.0,
        delta=1e-6,
        error_bound=4.0,
        mean_repetitions=3.0,
        shape=1.0,
        random_state=0,
    ).fit(X, Y_REG)
    assert search.fit_epsilon_ < one.fit_epsilon_


def test_searches_with_dp_sgd_are_replace_one():
    """DP-SGD's Poisson sampling is accounted for replace-one neighbours, like every fit."""
    budget = PrivacyBudget(2.0, 1e-6)
    # the public label set: the search and the fit below are one charge each
    search = PrivateSearchCV(
        DPLinearSVC(
            loss="hinge", solver="dp-sgd", batch_size=64, feature_bounds=1.0, classes=PUBLIC
        ),
        {"alpha": [1e-4, 1e-3]},
        epsilon=1.0,
        delta=1e-6,
        budget=budget,
        mean_repetitions=2.0,
        shape=1.0,
        random_state=0,
    ).fit(X, Y_CLASS)
    report = search.privacy_report_
    assert report.neighbouring == "replace_one" and 0.999 <= report.epsilon <= 1.0
    (record,) = report.mechanisms
    assert [m["kind"] for m in record.details["inner"]] == ["sampled_gaussian", "laplace"]
    assert record.details["inner"][0]["details"]["sampling"] == "poisson"
    assert "replace-one neighbours; the number of records is public" in report.assumptions
    assert budget.charges[0].plan.neighbouring == "replace_one"
    # it shares the budget with a coordinate solver's fit, under the same relation
    DPLinearSVC(
        loss="squared_hinge", solver="dp-cd", feature_bounds=1.0, epsilon=0.5, classes=PUBLIC
    ).set_params(budget=budget).fit(X, Y_CLASS)
    assert len(budget.charges) == 2
    assert search.score(X, Y_CLASS) > 0.8


def test_a_guard_stops_a_fit_whose_plan_differs():
    expected = PrivacyPlan([GaussianEvent(noise_multiplier=10.0, count=5, label="a")])
    guard = PlanGuard(expected)
    guard.charge(PrivacyPlan([GaussianEvent(noise_multiplier=10.0, count=5, label="b")]))
    with pytest.raises(PrivacyError, match="differs from the one the search accounted"):
        guard.charge(PrivacyPlan([GaussianEvent(noise_multiplier=9.0, count=5)]))


def test_the_report_round_trips_and_lists_what_holds():
    search = classifier_search().fit(X, Y_CLASS)
    report = search.privacy_report_
    assert PrivacyReport.from_json(report.to_json()) == report
    text = str(report)
    assert "repeat_and_select" in text and "noisy validation score" in text
    assert any("number of runs and the other runs stay secret" in a for a in report.assumptions)
    # the selected fit's own assumptions are included
    assert any("feature ranges (low, high) supplied by the user" in a for a in report.assumptions)


def test_leaks_of_the_fits_void_the_guarantee():
    search = PrivateSearchCV(
        DPLogisticRegression(solver="dp-cd", smoothness="data"),  # constants read from the data
        {"alpha": [1e-3, 1e-2]},
        epsilon=1.0,
        delta=1e-6,
        mean_repetitions=2.0,
        shape=1.0,
        random_state=0,
    )
    with pytest.warns(PrivacyLeakWarning):
        search.fit(X, Y_CLASS)
    assert search.privacy_report_.warnings and not search.privacy_report_.guarantee


# -- selection and reproducibility ---------------------------------------------------------


# Poisson of mean 10: every run draws the bad candidate (or none runs) with probability
# exp(-5) < 0.7%; the noisy scores are about 0.5 apart, their noise about 0.02 (classifier)
# and 0.07 (regressor)


@pytest.mark.parametrize("seed", range(4))
def test_picks_the_obviously_best_classifier(seed):
    search = classifier_search(random_state=seed, shape=math.inf, mean_repetitions=10.0)
    search.fit(X, Y_CLASS)
    assert search.best_params_ == {"alpha": 1e-4}
    assert search.best_index_ == 0
    assert search.candidates_ == list(ParameterGrid(CLASSIFIER_GRID))
    assert search.best_score_ > 0.85
    assert search.score(X, Y_CLASS) > 0.9
    assert set(search.classes_) == {"no", "yes"}
    assert set(search.predict(X[:5])) <= {"no", "yes"}
    assert search.predict_proba(X[:5]).shape == (5, 2)
    assert search.decision_function(X[:5]).shape == (5,)


@pytest.mark.parametrize("seed", range(4))
def test_picks_the_obviously_best_regressor(seed):
    search = regressor_search(random_state=seed, shape=math.inf, mean_repetitions=10.0)
    search.fit(X, Y_REG)
    assert search.best_params_ == {"alpha": 1e-3}
    assert -0.3 < search.best_score_ < 0.3  # noisy minus clipped squared error
    assert search.score(X, Y_REG) > 0.9
    assert not hasattr(search, "predict_proba")


def test_reproducible_with_a_seed():
    a = regressor_search(random_state=7).fit(X, Y_REG)
    b = regressor_search(random_state=7).fit(X, Y_REG)
    c = regressor_search(random_state=8).fit(X, Y_REG)
    assert a.best_params_ == b.best_params_ and a.best_score_ == b.best_score_
    assert np.array_equal(a.best_estimator_.coef_, b.best_estimator_.coef_)
    assert a.best_score_ != c.best_score_


def test_secret_randomness_is_not_kept():
    search = classifier_search().fit(X, Y_CLASS)
    public = {
        "candidates_",
        "best_index_",
        "best_params_",
        "best_estimator_",
        "best_score_",
        "fit_epsilon_",
        "score_epsilon_",
        "delta_",
        "n_features_in_",
        "privacy_report_",
    }
    fitted = {name for name in vars(search) if name.endswith("_")}
    assert fitted == public


def test_distributions_and_sampled_candidates():
    search = PrivateSearchCV(
        DPLogisticRegression(solver="dp-cd", feature_bounds=1.0),
        {"alpha": scipy.stats.loguniform(1e-5, 1e-2), "clip": [0.5, 1.0]},
        n_candidates=5,
        epsilon=1.0,
        delta=1e-6,
        mean_repetitions=2.0,
        shape=1.0,
        random_state=0,
    ).fit(X, Y_CLASS)
    assert len(search.candidates_) == 5
    assert search.best_params_ == search.candidates_[search.best_index_]
    again = clone(search).fit(X, Y_CLASS)
    assert again.candidates_ == search.candidates_


@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0, 3.0])
def test_truncated_negative_binomial_searches(shape):
    search = classifier_search(shape=shape, mean_repetitions=2.0, classes=PUBLIC)
    search.fit(X, Y_CLASS)
    (record,) = search.privacy_report_.mechanisms
    assert record.details["shape"] == shape
    assert search.best_estimator_ is not None
    assert 0.999 <= search.privacy_report_.epsilon <= 1.0


def test_no_run_at_all_with_poisson():
    # mean 1: no run with probability 1/e; find a seed whose draw is 0
    for seed in range(100):
        search = classifier_search(mean_repetitions=1.0, shape=math.inf, random_state=seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            search.fit(X, Y_CLASS)
        if search.best_estimator_ is None:
            break
    assert search.best_estimator_ is None and search.best_params_ is None
    assert search.best_index_ is None and math.isnan(search.best_score_)
    assert any("no run took place" in str(w.message) for w in caught)
    assert search.privacy_report_.epsilon <= 1.0
    with pytest.raises(NotFittedError, match="selected nothing"):
        search.predict(X)


def test_non_private_search_scores_every_candidate_exactly():
    search = classifier_search(epsilon=math.inf).fit(X, Y_CLASS)
    assert search.privacy_report_.non_private and not search.privacy_report_.guarantee
    assert search.best_params_ == {"alpha": 1e-4}
    # exact: the selected model's accuracy on the validation split, no noise
    assert search.best_score_ > 0.97 and search.best_score_ * 600 == pytest.approx(
        round(search.best_score_ * 600)
    )
    assert search.fit_epsilon_ == math.inf and search.best_estimator_.solver_ == "reference"
    with pytest.raises(BudgetExceededError):
        classifier_search(epsilon=math.inf, budget=PrivacyBudget(10.0, 1e-6)).fit(X, Y_CLASS)
    unlimited = PrivacyBudget(math.inf, 1e-6)
    classifier_search(epsilon=math.inf, budget=unlimited).fit(X, Y_CLASS)
    assert len(unlimited.charges) == 1


def test_default_delta_and_inputs_of_other_kinds():
    import pandas as pd
    import scipy.sparse as sp

    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    search = classifier_search(delta=None).fit(frame, pd.Series(Y_CLASS))
    assert search.delta_ == pytest.approx(1 / 3000**2)
    assert list(search.best_estimator_.feature_names_in_) == ["a", "b", "c"]
    dense = classifier_search().fit(X, Y_CLASS)
    sparse = classifier_search().fit(sp.csr_matrix(X), Y_CLASS)
    assert sparse.best_params_ == dense.best_params_


# -- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epsilon": 0.0}, ValueError, "epsilon must be positive"),
        ({"epsilon": "1"}, ValueError, "epsilon must be a number"),
        ({"delta": 0.0}, ValueError, "delta must be > 0 for a private search"),
        ({"delta": 1.5}, ValueError, "delta must be None or lie in"),
        ({"mean_repetitions": 0.5}, ValueError, "mean_repetitions must lie in"),
        ({"mean_repetitions": 1e4}, ValueError, "mean_repetitions must lie in"),
        ({"shape": -1.0}, ValueError, "shape must be >= 0"),
        ({"validation_fraction": 1.0}, ValueError, "validation_fraction must lie in"),
        ({"score_share": 0.0}, ValueError, "score_share must lie in"),
        ({"scoring": "neg_mean_squared_error"}, ValueError, "scoring must be one of"),
        ({"n_candidates": 0}, ValueError, "n_candidates must be None or a positive int"),
    ],
)
def test_bad_search_parameters(kwargs, error, match):
    with pytest.raises(error, match=match):
        classifier_search(**kwargs).fit(X, Y_CLASS)


@pytest.mark.parametrize(
    ("grid", "match"),
    [
        ({"epsilon": [1.0, 2.0]}, "'epsilon' cannot be searched"),
        ({"random_state": [0, 1]}, "'random_state' cannot be searched"),
        ({"gamma": [1.0]}, "'gamma' is not a parameter of DPLogisticRegression"),
        ({"alpha": []}, "must be a non-empty list"),
        ({"alpha": scipy.stats.uniform(0, 1)}, "give n_candidates"),
        ([], "non-empty list of dicts"),
        ([{}], "non-empty dict"),
    ],
)
def test_bad_candidates(grid, match):
    search = PrivateSearchCV(DPLogisticRegression(), grid, epsilon=1.0)
    with pytest.raises(ValueError, match=match):
        search.fit(X, Y_CLASS)


def test_bad_estimators_and_fits_are_refused_before_charging():
    budget = PrivacyBudget(5.0, 1e-6)
    with pytest.raises(TypeError, match="must be a dpglm estimator"):
        PrivateSearchCV(GridSearchCV(DPRidge(), {}), {"cv": [2]}, epsilon=1.0).fit(X, Y_REG)
    with pytest.raises(ValueError, match="needs error_bound"):
        PrivateSearchCV(DPRidge(), REGRESSOR_GRID, epsilon=1.0).fit(X, Y_REG)
    with pytest.raises(ValueError, match="error_bound must be a finite number"):
        regressor_search(error_bound=math.inf).fit(X, Y_REG)
    # a bad candidate fails in its dry run, before the budget is charged
    with pytest.raises(ValueError, match=r"candidate \{'alpha': -1.0\}: alpha must be"):
        PrivateSearchCV(
            DPRidge(feature_bounds=1.0), {"alpha": [1.0, -1.0]}, epsilon=1.0, budget=budget,
            error_bound=4.0,
        ).fit(X, Y_REG)  # fmt: skip
    assert budget.charges == ()
    # the public label set (3 records are too few to select it privately: refused first)
    with pytest.raises(ValueError, match="need at least 2"):
        classifier_search(validation_fraction=0.9, classes=PUBLIC).fit(X[:3], Y_CLASS[:3])


def test_sklearn_parameters():
    search = classifier_search(mean_repetitions=3.0)
    params = search.get_params(deep=False)
    assert params["mean_repetitions"] == 3.0 and params["shape"] == 1.0
    assert clone(search).get_params(deep=False)["param_distributions"] == CLASSIFIER_GRID
    with pytest.raises(NotFittedError):
        search.predict(X)


# -- the number of runs ----------------------------------------------------------------------


@pytest.mark.parametrize("shape", [0.0, 0.3, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("mean", [1.5, 4.0, 20.0])
def test_repetitions_gamma_matches_dp_accounting(mean, shape):
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    gamma = repetitions_gamma(mean, shape)
    assert repetitions_mean(gamma, shape) <= mean
    assert repetitions_mean(gamma, shape) == pytest.approx(mean, rel=1e-9)
    assert rdp._truncated_negative_binomial_mean(gamma, shape) == pytest.approx(
        repetitions_mean(gamma, shape), rel=1e-9
    )
    # ours is never below dp-accounting's gamma, so its bound holds for our draws
    assert gamma >= rdp._gamma_truncated_negative_binomial(shape, mean)


@pytest.mark.parametrize(("mean", "shape"), [(4.0, math.inf), (4.0, 0.0), (4.0, 1.0), (6.0, 2.5)])
def test_draws_follow_the_accounted_distribution(mean, shape):
    source = make_noise_source(1)
    draws = np.array([draw_repetitions(mean, shape, source) for _ in range(20_000)])
    assert abs(draws.mean() - mean) < 4 * draws.std() / math.sqrt(draws.size)
    if math.isinf(shape):
        assert abs(np.mean(draws == 0) - math.exp(-mean)) < 0.005
        assert abs(draws.var() - mean) < 0.2
        return
    assert draws.min() >= 1
    gamma = repetitions_gamma(mean, shape)
    k = np.arange(1, 6)
    if shape == 0.0:
        pmf = (1 - gamma) ** k / (k * -math.log(gamma))
    else:
        binom = (
            np.array([math.comb(int(j + shape - 1), int(j)) for j in k])
            if float(shape).is_integer()
            else np.array(
                [math.gamma(j + shape) / (math.gamma(shape) * math.factorial(j)) for j in k]
            )
        )
        pmf = (1 - gamma) ** k * binom / (gamma**-shape - 1)
    observed = np.array([np.mean(draws == j) for j in k])
    assert np.allclose(observed, pmf, atol=0.01)


def test_mean_one_and_edge_cases():
    source = make_noise_source(0)
    assert {draw_repetitions(1.0, 2.0, source) for _ in range(50)} == {1}
    assert repetitions_gamma(1.0, 0.5) == 1.0 and repetitions_mean(1.0, 3.0) == 1.0
    with pytest.raises(ValueError, match="gamma must lie in"):
        repetitions_mean(0.0, 1.0)


# -- the released model, failed runs, public labels --------------------------------------


def test_the_selected_model_carries_the_search_report(tmp_path, capsys):
    import json

    import dpglm
    from dpglm.cli import main

    search = classifier_search(epsilon=2.0, classes=PUBLIC).fit(X, Y_CLASS)
    report, model = search.privacy_report_, search.best_estimator_
    assert 2.0 * (1 - 1e-3) <= report.epsilon <= 2.0
    # in memory: the whole repeat-and-select plan, its epsilon and parts, not one run's fit
    assert model.privacy_report_ == report
    assert [m.kind for m in model.privacy_report_.mechanisms] == ["repeat_and_select"]
    assert model.privacy_report_.parts == report.parts
    # in every saved copy, and what `dpglm report` shows
    path = model.save(tmp_path / "model.json")
    document = json.loads(path.read_text())
    assert document["privacy_report"] == report.to_dict()
    assert dpglm.load_model(path).privacy_report_ == report
    assert main(["report", str(path)]) == 0
    shown = capsys.readouterr().out
    assert f"({report.epsilon:.4g}, 1e-06)-differentially private" in shown
    assert "repeat_and_select" in shown and "noisy validation score" in shown
    # the run's seed is the search's secret randomness (it gives the run's noise away):
    # the model keeps the estimator's own random_state, in memory and in the file
    assert model.random_state is None and document["params"]["random_state"] is None


def test_refitting_the_selected_model_is_charged_as_a_new_fit():
    budget = PrivacyBudget(3.0, 1e-6)
    # the public label set: the search and the refit are one charge each
    search = classifier_search(budget=budget, classes=PUBLIC).fit(X, Y_CLASS)
    model = search.best_estimator_
    model.fit(X, Y_CLASS)
    assert len(budget.charges) == 2
    # then its report is that fit's again; the search's is unchanged
    assert [m.kind for m in model.privacy_report_.mechanisms] != ["repeat_and_select"]
    assert model.privacy_report_.epsilon == pytest.approx(search.fit_epsilon_, rel=1e-3)
    assert [m.kind for m in search.privacy_report_.mechanisms] == ["repeat_and_select"]


class _FailsOnTheData(DPLogisticRegression):
    """Fails at alpha = 1 on real data only (the dry runs fit zeros): a run's own failure."""

    def fit(self, X, y):
        if self.alpha == 1.0 and np.any(np.asarray(X) != 0):
            raise ValueError("this fit failed on the data")
        return super().fit(X, y)


@pytest.mark.parametrize("seed", range(3))
def test_a_failed_run_scores_minus_infinity(seed):
    budget = PrivacyBudget(3.0, 1e-6)
    estimator = _FailsOnTheData(
        penalty="l1", solver="dp-gcd", feature_bounds=1.0, smoothness="bounds", classes=PUBLIC
    )
    # Poisson of mean 10: both candidates run with probability 1 - 2 exp(-5) > 98%
    search = PrivateSearchCV(
        estimator,
        CLASSIFIER_GRID,
        epsilon=1.0,
        delta=1e-6,
        budget=budget,
        mean_repetitions=10.0,
        random_state=seed,
    )
    search.fit(X, Y_CLASS)  # the failures are not raised after the charge
    assert search.best_params_ == {"alpha": 1e-4} and search.best_score_ > 0.85
    assert len(budget.charges) == 1


def test_every_run_failing_selects_nothing():
    budget = PrivacyBudget(3.0, 1e-6)
    # the one candidate fails on the data (not in the dry runs): every run's fit fails
    estimator = _FailsOnTheData(
        penalty="l1", solver="dp-gcd", feature_bounds=1.0, smoothness="bounds", classes=PUBLIC
    )
    search = PrivateSearchCV(
        estimator,
        {"alpha": [1.0]},
        epsilon=1.0,
        delta=1e-6,
        budget=budget,
        mean_repetitions=4.0,
        shape=1.0,
        random_state=0,
    )
    with pytest.warns(UserWarning, match="nothing was selected.*every run failed"):
        search.fit(X, Y_CLASS)
    assert search.best_estimator_ is None and search.best_params_ is None
    assert math.isnan(search.best_score_) and len(budget.charges) == 1
    with pytest.raises(NotFittedError, match="every run failed"):
        search.predict(X)
    rng = np.random.default_rng(1)
    X_few = rng.uniform(-1, 1, (300, 3))
    y = np.array(["no"] * 299 + ["yes"])
    # without classes, the private label selection keeps "no" alone (one record holds
    # "yes"): the search is refused after the selection's charge, before its own
    budget = PrivacyBudget(3.0, 1e-6)
    with pytest.raises(
        TargetError, match=r"the private label selection kept 1 label\(s\) \['no'\]"
    ):
        classifier_search(validation_fraction=0.99, budget=budget).fit(X_few, y)
    (charge,) = budget.charges
    assert [e.part for e in charge.plan.events] == ["label selection"] * 2
    # with the label set public, a one-class training split (3 records, all "no" with
    # this seed) is fitted
    search = PrivateSearchCV(
        DPLogisticRegression(
            penalty="l1",
            solver="dp-gcd",
            feature_bounds=1.0,
            smoothness="bounds",
            classes=["no", "yes"],
        ),
        CLASSIFIER_GRID,
        epsilon=1.0,
        delta=1e-6,
        mean_repetitions=4.0,
        shape=1.0,
        validation_fraction=0.99,
        random_state=0,
    ).fit(X_few, y)
    assert search.best_estimator_.classes_.tolist() == ["no", "yes"]
    assert any("given as classes" in a for a in search.privacy_report_.assumptions)


class _PlanChangesWithTheData(DPLogisticRegression):
    """Runs more passes on real data than in the dry runs: a plan the search did not account."""

    def fit(self, X, y):
        if np.any(np.asarray(X) != 0):
            self.passes = 5
        return super().fit(X, y)


def test_a_fit_with_another_plan_still_stops_the_search():
    # not a failed run: a defect of the accounting, which no score can hide
    estimator = _PlanChangesWithTheData(
        penalty="l1", solver="dp-gcd", feature_bounds=1.0, smoothness="bounds"
    )
    search = PrivateSearchCV(
        estimator, {"alpha": [1e-3]}, epsilon=1.0, delta=1e-6, shape=1.0, random_state=0
    )
    with pytest.raises(PrivacyError, match="differs from the one the search accounted"):
        search.fit(X, Y_CLASS)
