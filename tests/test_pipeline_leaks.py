"""A dpglm estimator fitted last in a scikit-learn pipeline judges the steps before it."""

import warnings

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

from dpglm.estimators import DPLinearRegression, DPLogisticRegression
from dpglm.exceptions import PrivacyLeakWarning
from dpglm.preprocessing import PrivateStandardScaler


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    return X, (X[:, 0] + 0.3 * rng.normal(size=3000) > 0).astype(int)


def _fit(pipeline, X, y):
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        pipeline.fit(X, y)
    leaks = [str(w.message) for w in shown if issubclass(w.category, PrivacyLeakWarning)]
    return pipeline, leaks


def test_a_standard_scaler_in_front_is_warned_and_voids_the_guarantee(data):
    X, y = data
    pipeline, leaks = _fit(make_pipeline(StandardScaler(), DPLogisticRegression()), X, y)
    report = pipeline[-1].privacy_report_
    assert len(leaks) == 1 and "'standardscaler' (StandardScaler)" in leaks[0]
    assert "mean_" in leaks[0]
    assert report.guarantee is False
    assert report.warnings[-1] == leaks[0]


def test_a_one_hot_encoder_inside_a_column_transformer_is_named(data):
    X, y = data
    codes = np.column_stack([X[:, :2], (X[:, 2] > 0).astype(int)])
    columns = ColumnTransformer([("codes", OneHotEncoder(), [2])], remainder="passthrough")
    nested = Pipeline([("prep", make_pipeline(columns)), ("model", DPLogisticRegression())])
    pipeline, leaks = _fit(nested, codes, y)
    assert len(leaks) == 1
    assert "'prep__columntransformer__codes' (OneHotEncoder)" in leaks[0]
    assert "categories_" in leaks[0]
    assert pipeline[-1].privacy_report_.guarantee is False


@pytest.mark.parametrize(
    "step",
    [PrivateStandardScaler(random_state=0), FunctionTransformer(np.tanh), "passthrough"],
    ids=["private scaler", "function", "passthrough"],
)
def test_private_or_data_free_steps_keep_the_guarantee(data, step):
    X, y = data
    model = DPLogisticRegression(feature_bounds=4.0, random_state=0)
    pipeline, leaks = _fit(Pipeline([("step", step), ("model", model)]), X, y)
    assert leaks == []
    assert pipeline[-1].privacy_report_.guarantee is True


def test_every_fit_of_a_grid_search_over_a_leaky_pipeline_says_so(data):
    X, y = data
    pipeline = make_pipeline(StandardScaler(), DPLinearRegression(random_state=0))
    grid = {"dplinearregression__passes": [5, 10]}
    search, leaks = _fit(GridSearchCV(pipeline, grid, cv=2), X, X[:, 0] + y)
    assert len(leaks) == 2 * 2 + 1  # every candidate on every fold, then the refit
    assert search.best_estimator_[-1].privacy_report_.guarantee is False


def test_a_fit_outside_the_pipeline_that_holds_the_estimator_is_not_judged(data):
    X, y = data
    model = DPLogisticRegression(random_state=0)
    make_pipeline(StandardScaler().fit(X), model)
    _, leaks = _fit(model, X, y)
    assert leaks == [] and model.privacy_report_.guarantee is True


def test_a_private_step_charged_apart_is_said_in_the_final_report(data):
    """A private step with a budget of its own is no leak, but the final report alone would
    understate what the pipeline released: it says what to add, and the fit warns."""
    from dpglm.privacy.budget import PrivacyBudget

    X, y = data
    scaler = PrivateStandardScaler(epsilon=0.5, random_state=0)
    pipeline = make_pipeline(scaler, DPLogisticRegression(epsilon=1.0, random_state=0))
    with pytest.warns(UserWarning, match="covers its own release only") as shown:
        pipeline.fit(X, y)
    assert not [w for w in shown if issubclass(w.category, PrivacyLeakWarning)]
    report = pipeline[-1].privacy_report_
    assert report.guarantee is True and 0.99 < report.epsilon <= 1.0
    (note,) = [a for a in report.assumptions if a.startswith("pipeline step")]
    assert "'privatestandardscaler' (PrivateStandardScaler) spent epsilon=0.5," in note
    assert f"delta={scaler.privacy_report_.delta:.3g}" in note
    # one budget for both: its account holds both, and nothing is said
    budget = PrivacyBudget(epsilon=1.5, delta=1e-6)
    shared = make_pipeline(
        PrivateStandardScaler(epsilon=0.5, budget=budget, random_state=0),
        DPLogisticRegression(epsilon=1.0, delta=5e-7, budget=budget, random_state=0),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        shared.fit(X, y)
    assert not [a for a in shared[-1].privacy_report_.assumptions if a.startswith("pipeline")]
    assert len(budget.charges) == 3  # the scaler, the label selection, the model


def test_a_step_on_the_same_ledger_shares_the_account(data, tmp_path):
    """Two openings of one ledger's dataset are one account: nothing to add, nothing said."""
    from dpglm.privacy.budget import PrivacyBudget

    X, y = data
    ledger = tmp_path / "ledger.sqlite"
    first = PrivacyBudget.open(ledger, dataset="d", epsilon=2.0, delta=1e-5)
    second = PrivacyBudget.open(ledger, dataset="d")
    pipeline = make_pipeline(
        PrivateStandardScaler(epsilon=0.5, budget=first, random_state=0),
        DPLogisticRegression(epsilon=1.0, delta=1e-6, budget=second, random_state=0),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pipeline.fit(X, y)
    assert not [a for a in pipeline[-1].privacy_report_.assumptions if a.startswith("pipeline")]
