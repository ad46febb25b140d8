"""Raw tables with string columns go into the estimators: private category sets, one report."""

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from dpglm.estimators import DPLinearRegression, DPLogisticRegression, load_model
from dpglm.exceptions import DataError, PrivacyLeakWarning, ShapeMismatchError
from dpglm.preprocessing.label_sets import label_share
from dpglm.privacy.budget import PrivacyBudget

JOBS = ["clerk", "driver", "nurse", "teacher"]


def table(n, seed=0):
    """Age, a job (one of four, a few '?'), a rare free-text city, and a label that depends
    on both the age and the job."""
    rng = np.random.default_rng(seed)
    age = rng.uniform(18, 80, n)
    job = rng.choice(JOBS, n, p=[0.4, 0.3, 0.2, 0.1]).astype(object)
    job[rng.random(n) < 0.02] = "?"
    city = np.array([f"city {i}" for i in rng.integers(0, 5000, n)], dtype=object)
    margin = (age - 45) / 10 + np.where(job == "nurse", 2.0, 0.0) - np.where(job == "driver", 2, 0)
    label = np.where(margin + rng.logistic(size=n) * 0.5 > 0, "yes", "no")
    return pd.DataFrame({"age": age, "job": job, "city": city}), label


@pytest.fixture(scope="module")
def data():
    return table(20_000)


def private_fit(X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        return DPLogisticRegression(missing_values="?", random_state=0, **params).fit(X, y)


def test_a_raw_table_is_fitted_privately_with_only_epsilon(data):
    X, y = data
    model = private_fit(X, y)
    report = model.privacy_report_
    assert report.guarantee and 0.98 <= report.epsilon <= 1.0
    assert set(report.parts) == {
        "label selection", "category selection", "preprocessing", "training"
    }  # fmt: skip
    # the label set is selected first, at its share; the categories take 10% of the rest
    share = label_share(20_000, 1.0, 1.0 / 20_000**2)
    assert 0.99 * share <= report.parts["label selection"] <= share * (1 + 1e-9)
    categories = 0.1 * (1.0 - share)
    assert 0.99 * categories <= report.parts["category selection"] <= categories * (1 + 1e-9)
    assert [m.part for m in report.mechanisms][:4] == [
        "label selection", "label selection", "category selection", "category selection"
    ]  # fmt: skip
    assert any(
        a.startswith("label set ['no', 'yes'] selected privately (") for a in report.assumptions
    )
    assert model.classes_.tolist() == ["no", "yes"]
    assert report.delta <= 1.0 / 20_000**2
    assert model.feature_names_in_.tolist() == ["age", "job", "city"]
    names = model.encoded_feature_names_.tolist()
    assert names[0] == "age" and {"job_clerk", "job_nurse", "job_<other>"} <= set(names)
    # every city is held by a handful of records: none survives, the column is one level
    assert [n for n in names if n.startswith("city_")] == ["city_<other>"]
    assert model.coef_.shape == (1, len(names))
    test_X, test_y = table(5000, seed=1)
    assert model.score(test_X, test_y) > 0.85


def test_unseen_values_and_missing_markers_at_predict_time(data):
    X, y = data
    model = private_fit(X, y)
    new = pd.DataFrame({"age": [30.0, 30.0, 30.0], "job": ["astronaut", None, "?"], "city": "x"})
    other = model.decision_function(new.iloc[:1])
    assert np.isfinite(model.decision_function(new)).all()
    # an unseen job goes to the job column's other level, like any value not kept
    rare = pd.DataFrame({"age": [30.0], "job": ["teacher-in-training"], "city": ["x"]})
    assert model.decision_function(rare) == pytest.approx(other)


def test_an_arrow_table_gives_the_dataframes_model(data):
    X, y = data
    frame_model = private_fit(X, y)
    arrow_model = private_fit(pa.Table.from_pandas(X), y)
    np.testing.assert_array_equal(frame_model.coef_, arrow_model.coef_)
    np.testing.assert_array_equal(
        frame_model.predict(X), arrow_model.predict(pa.Table.from_pandas(X))
    )


def test_public_categories_cost_nothing(data):
    X, y = data
    categories = {"job": JOBS, "city": ["city 1", "city 2"]}
    model = private_fit(X, y, categories=categories)
    report = model.privacy_report_
    assert "category selection" not in report.parts
    assert report.guarantee and 0.98 <= report.epsilon <= 1.0
    names = model.encoded_feature_names_.tolist()
    assert [n for n in names if n.startswith("job_")] == [f"job_{j}" for j in JOBS] + [
        "job_<other>"
    ]


def test_a_shared_budget_is_charged_for_the_selection_and_the_model(data):
    X, y = data
    budget = PrivacyBudget(2.0, 1e-6)
    model = private_fit(X, y, epsilon=1.0, budget=budget)
    # the categories' selection, the label set's, then the model: three charges
    assert len(budget.charges) == 3
    categories, labels, fit = budget.charges
    assert categories.label == "PrivateOneHotEncoder"
    assert {e.part for e in labels.plan.events} == {"label selection"}
    assert "label selection" not in {e.part for e in fit.plan.events}
    assert budget.spent() <= 1.0 + 1e-9
    assert model.privacy_report_.epsilon <= 1.0


def test_the_model_file_keeps_the_encoding(data, tmp_path):
    X, y = data
    model = private_fit(X, y)
    again = load_model(model.save(tmp_path / "model.json"))
    new, _ = table(500, seed=2)
    new.loc[0, "job"] = "astronaut"
    np.testing.assert_array_equal(again.decision_function(new), model.decision_function(new))
    assert again.encoded_feature_names_.tolist() == model.encoded_feature_names_.tolist()


def test_prediction_needs_the_table_with_its_columns(data):
    X, y = data
    model = private_fit(X, y)
    with pytest.raises(TypeError, match="string columns"):
        model.predict(np.zeros((2, 3)))
    with pytest.raises(ShapeMismatchError, match="city"):
        model.predict(X.drop(columns="city"))


def test_bad_categories_and_data_bounds_are_refused_before_any_charge(data):
    X, y = data
    budget = PrivacyBudget(2.0, 1e-6)
    with pytest.raises(DataError, match="'age'"):
        private_fit(X, y, categories={"age": [1, 2]}, budget=budget)
    with pytest.raises(ValueError, match="twice"):
        private_fit(X, y, categories={"job": ["nurse", "nurse"]}, budget=budget)
    with pytest.raises(ValueError, match="feature_bounds='data'"):
        private_fit(X, y, feature_bounds="data", budget=budget)
    with pytest.raises(ValueError, match="feature_bounds has 2 values"):
        private_fit(X, y, feature_bounds=[1.0, 2.0], budget=budget)
    assert budget.charges == ()


def test_a_regressor_takes_a_raw_table_and_public_numeric_bounds(data):
    X, _ = data
    rng = np.random.default_rng(3)
    target = 1000 * X["age"].to_numpy() + np.where(X["job"] == "nurse", 20_000.0, 0.0)
    target = target + rng.normal(0, 1000, len(X))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        model = DPLinearRegression(
            feature_bounds=[[18.0, 80.0]], missing_values="?", random_state=0
        ).fit(X, target)
    assert model.score(X, target) > 0.8
    assert model.privacy_report_.guarantee


def test_a_numeric_refit_forgets_the_encoding(data):
    X, y = data
    model = private_fit(X, y)
    model.fit(X[["age"]].to_numpy(), y)
    assert not hasattr(model, "encoding_") and model.n_features_in_ == 1
    assert model.predict(np.array([[70.0]])).tolist() == ["yes"]


def test_the_private_search_selects_the_categories_once_and_searches_the_rest(data):
    from dpglm.tuning import PrivateSearchCV

    X, y = data
    budget = PrivacyBudget(2.0, 1e-6)
    grid = {"alpha": [1e-4, 1e-3]}
    search = PrivateSearchCV(
        DPLogisticRegression(missing_values="?"), grid, epsilon=1.0, budget=budget, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        search.fit(X, y)
    report = search.privacy_report_
    assert report.guarantee and 0.98 <= report.epsilon <= 1.0
    assert set(report.parts) == {"label selection", "category selection", "hyperparameter search"}
    # the label set is selected once too, at the search level: a charge of its own
    assert len(budget.charges) == 3 and budget.spent() <= 1.0
    categories, labels, runs = budget.charges
    assert categories.label == "PrivateOneHotEncoder"
    assert {e.part for e in labels.plan.events} == {"label selection"}
    assert "label selection" not in {e.part for e in runs.plan.events}
    assert [m.part for m in report.mechanisms][:2] == ["label selection"] * 2
    model = search.best_estimator_
    assert model.privacy_report_ is report
    assert model.classes_.tolist() == ["no", "yes"]
    assert (
        model.encoded_feature_names_[0] == "age" and "job_<other>" in model.encoded_feature_names_
    )
    test_X, test_y = table(5000, seed=1)
    assert search.score(test_X, test_y) > 0.8
    assert search.n_features_in_ == 3


def test_the_private_search_on_a_table_cannot_search_feature_bounds(data):
    from dpglm.exceptions import NonNumericColumnError
    from dpglm.tuning import PrivateSearchCV

    X, y = data
    budget = PrivacyBudget(2.0, 1e-6)
    grid = {"feature_bounds": [[[18.0, 80.0]], [[0.0, 100.0]]]}
    search = PrivateSearchCV(DPLogisticRegression(), grid, epsilon=1.0, budget=budget)
    with pytest.raises(NonNumericColumnError, match="cannot search feature_bounds"):
        search.fit(X, y)
    assert budget.charges == ()


def test_nan_rows_of_feature_bounds_leave_those_columns_to_the_private_estimate():
    from dpglm.preprocessing.bounds import PartialBounds, check_feature_bounds

    rows = [[np.nan, np.nan], [0.0, 1.0]]
    partial = check_feature_bounds(rows, 2, partial=True)
    assert isinstance(partial, PartialBounds) and partial.unknown.tolist() == [True, False]
    with pytest.raises(ValueError, match="finite"):
        check_feature_bounds(rows, 2)  # the transformers take no such rows
    with pytest.raises(ValueError, match=r"\(nan, nan\)"):
        check_feature_bounds([[np.nan, 1.0]], 1, partial=True)
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(0, 1000, 5000), rng.integers(0, 2, 5000)])
    y = (X[:, 0] / 500 + X[:, 1] + rng.logistic(size=5000) * 0.2 > 1.5).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        model = DPLogisticRegression(feature_bounds=rows, random_state=0).fit(X, y)
    report = model.privacy_report_
    assert report.guarantee and "preprocessing" in report.parts
    assert any("1 from their own histogram" in a for a in report.assumptions)
    assert model.score(X, y) > 0.85


def test_a_wide_encoding_stays_sparse_and_category_dtypes_are_strings(data, monkeypatch, tmp_path):
    import scipy.sparse as sp

    import dpglm.estimators.tables as tables

    X, y = data
    X = X.assign(job=X["job"].astype("category"))
    dense = private_fit(X, y)
    monkeypatch.setattr(tables, "DENSE_LIMIT", 3)
    sparse = private_fit(X, y)
    assert sp.issparse(sparse.encoding_.matrix(X)) and not sp.issparse(dense.encoding_.matrix(X))
    assert "job_nurse" in sparse.encoded_feature_names_
    test_X, test_y = table(5000, seed=1)
    assert sparse.score(test_X, test_y) > 0.85
    again = load_model(sparse.save(tmp_path / "sparse.json"))
    assert sp.issparse(again.encoding_.matrix(X))
    np.testing.assert_array_equal(
        again.decision_function(test_X), sparse.decision_function(test_X)
    )


@pytest.mark.parametrize("kind", ["pandas", "arrow"])
def test_an_empty_table_is_refused_as_empty(data, kind):
    """A raw table with no rows is refused like an empty array, before any delta is set
    from its number of rows (1 / n**2 divided by zero)."""
    from dpglm.exceptions import EmptyDataError

    X, y = data[0].iloc[:0], data[1][:0]
    if kind == "arrow":
        X = pa.Table.from_pandas(X, preserve_index=False)
    with pytest.raises(EmptyDataError, match=r"no rows \(shape \(0, 3\)\)"):
        DPLogisticRegression(epsilon=1.0).fit(X, y)
    # at predict time too, with the table's shape, not its encoding's
    model = private_fit(*data, epsilon=1.0)
    with pytest.raises(EmptyDataError, match=r"no rows \(shape \(0, 3\)\)"):
        model.predict(X)


def test_a_numeric_arrow_table_keeps_its_column_names():
    """An Arrow table of numbers alone is fitted as an array, but its names are kept and
    checked at predict time as a DataFrame's are: reordered columns are refused, not
    read in the wrong order."""
    rng = np.random.default_rng(0)
    X = pa.table({"rooms": rng.uniform(1, 9, 3000), "age": rng.uniform(1, 50, 3000)})
    y = 3.0 * X["rooms"].to_numpy() - 0.1 * X["age"].to_numpy()
    model = DPLinearRegression(epsilon=1.0, random_state=0).fit(X, y)
    assert model.feature_names_in_.tolist() == ["rooms", "age"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(X)
    with pytest.raises(ValueError, match="same order"):
        model.predict(X.select(["age", "rooms"]))


def test_a_column_of_numbers_with_a_word_is_refused_not_one_hot_encoded(data):
    """A column of numbers read as text because of one bad cell would become one column per
    number; it is refused, naming the column and the cell, as the CLI refuses it. Declared
    categories (a category dtype, or public categories) are kept."""
    from dpglm.exceptions import NonNumericColumnError

    X, y = data[0].copy(), data[1]
    X["age"] = X["age"].round().astype(object)
    X.loc[7, "age"] = "abc"
    with pytest.raises(
        NonNumericColumnError, match=r"'age' \(index 0\) holds numbers .* 'abc' at row 7"
    ):
        DPLogisticRegression(epsilon=1.0, random_state=0).fit(X, y)
    X["age"] = X["age"].astype(str).astype("category")
    model = DPLogisticRegression(epsilon=1.0, random_state=0, missing_values="?").fit(X, y)
    assert "age" in model.encoding_.categorical


def test_a_table_with_two_columns_of_one_name_is_refused(data):
    """Columns are read and predicted on by name: two of one name are refused, naming both,
    instead of a message about whichever the reader met first."""
    X = data[0].rename(columns={"city": "age"})
    with pytest.raises(DataError, match=r"several columns named 'age' \(at indices \[0, 2\]\)"):
        DPLogisticRegression(epsilon=1.0).fit(X, data[1])
