"""PrivateSearchCV over a Pipeline: private steps fitted once, at their share, in one report."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from dpglm.estimators import DPLogisticRegression, DPRidge
from dpglm.exceptions import PrivacyLeakWarning
from dpglm.preprocessing import PrivateClipper, PrivateOneHotEncoder, PrivateStandardScaler
from dpglm.preprocessing.label_sets import label_share
from dpglm.privacy.budget import PrivacyBudget
from dpglm.tuning import PrivateSearchCV

RNG = np.random.default_rng(0)
#: raw scale: columns of very different means and spreads
X = RNG.normal([50.0, -3.0], [20.0, 0.5], size=(20_000, 2))
Y = (X[:, 0] - 50.0) / 20.0 + (X[:, 1] + 3.0) / 0.5 > 0
GRID = {"dplogisticregression__alpha": [1e-4, 1e-2]}


def search(pipeline, grid=GRID, **kwargs):
    options = {"epsilon": 2.0, "delta": 1e-6, "mean_repetitions": 3.0, "shape": 1.0}
    return PrivateSearchCV(pipeline, grid, **{**options, "random_state": 0, **kwargs})


def scaled_pipeline(budget=None):
    return make_pipeline(
        PrivateStandardScaler(budget=budget),
        DPLogisticRegression(budget=budget, feature_bounds=4.0),
    )


def test_one_report_of_the_steps_and_the_search_charged_to_one_budget():
    budget = PrivacyBudget(2.0, 1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        fitted = search(scaled_pipeline(budget)).fit(X, Y)
    report = fitted.privacy_report_
    assert 0.98 * 2.0 <= report.epsilon <= 2.0
    assert report.delta == pytest.approx(1e-6)
    assert report.guarantee and not report.warnings
    # the steps' share (0.2) as their own part; of the rest (1.6, 0.8e-6), the label set's
    # selection (no classes given) takes its share, the search the rest
    assert set(report.parts) == {"preprocessing", "label selection", "hyperparameter search"}
    assert 0.98 * 0.4 <= report.parts["preprocessing"] <= 0.4
    labels = label_share(20_000, 1.6, 0.8e-6) * 1.6
    assert 0.98 * labels <= report.parts["label selection"] <= labels
    assert 0.98 * (1.6 - labels) <= report.parts["hyperparameter search"] <= 1.6 - labels
    assert sum(report.parts.values()) == pytest.approx(report.epsilon)
    parts = [m.part for m in report.mechanisms]
    assert parts.count("label selection") == 2 and parts.count("hyperparameter search") == 1
    assert any(
        a.startswith("label set [False, True] selected privately (") for a in report.assumptions
    )
    # the scaler's charge, then the label selection's, then the search's
    scaler, selection, searched = budget.charges
    assert scaler.label == "PrivateStandardScaler"
    assert {e.part for e in scaler.plan.events} == {"preprocessing"}
    assert [e.part for e in selection.plan.events] == ["label selection"] * 2
    assert [e.part for e in searched.plan.events] == ["hyperparameter search"]
    assert budget.spent() <= 2.0 + 1e-9


def test_the_selected_model_is_the_fitted_pipeline_on_raw_records():
    fitted = search(scaled_pipeline()).fit(X, Y)
    best = fitted.best_estimator_
    assert [name for name, _ in best.steps] == ["privatestandardscaler", "dplogisticregression"]
    assert best[-1].privacy_report_ is fitted.privacy_report_
    assert set(fitted.best_params_) == {"dplogisticregression__alpha"}
    # the scaler's noisy means are near the raw columns' (50, -3), far from 0
    assert np.allclose(best[0].mean_, [50.0, -3.0], atol=[2.0, 0.2])
    assert fitted.score(X, Y) > 0.95
    assert fitted.n_features_in_ == 2
    # the step keeps the user's seed, not the child seed its noise came from
    assert best[0].random_state is None


def test_the_steps_share_is_split_equally_among_the_steps_that_release():
    pipeline = make_pipeline(
        PrivateClipper(),  # releases the ranges
        PrivateClipper(bounds=100.0),  # public bounds: releases nothing, takes no share
        PrivateStandardScaler(),
        DPLogisticRegression(feature_bounds=4.0),
    )
    fitted = search(pipeline, steps_share=0.3).fit(X, Y)
    first, _, third = fitted.best_estimator_.steps[:3]
    assert first[1].epsilon == pytest.approx(0.3)
    assert third[1].epsilon == pytest.approx(0.3)
    assert third[1].delta == pytest.approx(0.15e-6)
    report = fitted.privacy_report_
    assert 0.98 * 0.6 <= report.parts["preprocessing"] <= 0.6
    assert report.epsilon <= 2.0


def test_steps_nested_in_a_column_transformer_are_found_and_charged():
    table = pd.DataFrame({"city": RNG.choice(["a", "b", "c"], 20_000), "x": X[:, 0]})
    y = (table["city"] == "a") ^ (table["x"] > 50.0)
    budget = PrivacyBudget(2.0, 1e-6)
    columns = ColumnTransformer(
        [
            ("cities", PrivateOneHotEncoder(sparse_output=False), ["city"]),
            ("numbers", PrivateStandardScaler(), ["x"]),
        ]
    )
    # the public label set: no label selection, the search is one charge
    model = DPLogisticRegression(budget=budget, feature_bounds=4.0, classes=[False, True])
    pipeline = make_pipeline(columns, model)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        fitted = search(pipeline).fit(table, y)
    # the encoder's and the scaler's charges, then the search's
    assert len(budget.charges) == 3
    assert fitted.privacy_report_.epsilon <= 2.0
    assert list(fitted.feature_names_in_) == ["city", "x"]
    assert fitted.predict(table).shape == (20_000,)


def test_a_non_private_step_is_warned_and_voids_the_guarantee():
    pipeline = make_pipeline(StandardScaler(), DPLogisticRegression(feature_bounds=4.0))
    with pytest.warns(PrivacyLeakWarning, match="'standardscaler'"):
        fitted = search(pipeline).fit(X, Y)
    report = fitted.privacy_report_
    assert not report.guarantee
    assert any("standardscaler" in w for w in report.warnings)
    # nothing private to share with: the search keeps the whole target
    assert "preprocessing" not in report.parts


def test_a_data_free_step_takes_no_share_and_leaks_nothing():
    # the public label set: no label selection takes a share either
    pipeline = make_pipeline(
        FunctionTransformer(lambda Z: Z / 100.0),
        DPLogisticRegression(feature_bounds=1.0, classes=[False, True]),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        fitted = search(pipeline).fit(X, Y)
    assert fitted.privacy_report_.guarantee
    assert 0.98 * 2.0 <= fitted.privacy_report_.parts["hyperparameter search"] <= 2.0


def test_a_parameter_of_an_earlier_step_is_refused_before_any_charge():
    budget = PrivacyBudget(2.0, 1e-6)
    grid = {"privatestandardscaler__with_mean": [True, False]}
    with pytest.raises(ValueError, match="fitted once, before the search"):
        search(scaled_pipeline(budget), grid).fit(X, Y)
    with pytest.raises(ValueError, match="cannot be searched"):
        search(scaled_pipeline(budget), {"dplogisticregression__epsilon": [1.0]}).fit(X, Y)
    with pytest.raises(ValueError, match="is not a parameter of DPLogisticRegression"):
        search(scaled_pipeline(budget), {"dplogisticregression__nope": [1.0]}).fit(X, Y)
    assert budget.charges == ()


def test_a_pipeline_must_end_with_a_dpglm_estimator():
    pipeline = make_pipeline(PrivateStandardScaler(), LogisticRegression())
    with pytest.raises(TypeError, match="last step 'logisticregression'"):
        search(pipeline, {"logisticregression__C": [1.0]}).fit(X, Y)


def test_too_few_records_are_refused_before_the_steps_are_charged():
    budget = PrivacyBudget(2.0, 1e-6)
    with pytest.raises(ValueError, match="need at least 2"):
        search(scaled_pipeline(budget), validation_fraction=0.9).fit(X[:3], Y[:3])
    assert budget.charges == ()


def test_a_regressor_pipeline_and_a_non_private_search():
    y = X @ [0.05, 2.0] + RNG.normal(0.0, 0.1, len(X))
    pipeline = make_pipeline(PrivateStandardScaler(), DPRidge(feature_bounds=4.0))
    grid = {"dpridge__alpha": [1e-3, 1.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        fitted = search(pipeline, grid, epsilon=math.inf, error_bound=100.0).fit(X, y)
    assert not fitted.privacy_report_.guarantee
    assert fitted.score(X, y) > 0.9
