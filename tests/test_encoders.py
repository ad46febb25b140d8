"""PrivateOneHotEncoder: categories selected privately, encoded with an "other" level.

Frequent values get their own column, rare and unseen ones the column's
``"<other>"``; missing markers are one level; public categories cost nothing;
the encoder sits in front of a private estimator in a pipeline and in
``GridSearchCV`` with one shared budget, and :func:`check_pipeline` takes it
as private (and flags scikit-learn's ``OneHotEncoder``). The report's epsilon
is the target's; bad input is refused, naming the column, before anything is
charged. On the raw UCI Adult table the frequent categories survive.
"""

import math
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.compose import make_column_transformer
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from dpglm.estimators import DPLogisticRegression
from dpglm.exceptions import BudgetExceededError, PrivacyLeakWarning
from dpglm.preprocessing import PrivateOneHotEncoder, PrivateStandardScaler, check_pipeline
from dpglm.preprocessing.categories import MISSING
from dpglm.privacy.budget import PrivacyBudget

pd = pytest.importorskip("pandas")

ADULT = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "adult_raw_train.csv.gz"
ADULT_CATEGORICAL = [
    "workclass",
    "education",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native_country",
]


def table(n=6_000, seed=0):
    """Three string columns of different dtypes, rare values and missing markers, a label."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue"], n, p=[0.5, 0.3, 0.2]).astype(object)
    colour[:3] = ["mauve", "teal", "teal"]  # too rare to be released
    colour[3:600:3] = None
    colour[4:600:3] = np.nan
    colour[5:600:3] = "?"
    size = rng.choice(["S", "M", "L"], n)
    city = rng.choice(["Lyon", "Paris"], n).astype(object)
    city[10] = "Brest"
    X = pd.DataFrame(
        {
            "colour": colour,
            "size": pd.Categorical(size),
            "city": pd.array(city, dtype="string"),
        }
    )
    y = (X["colour"] == "red").to_numpy() | (size == "L")
    return X, y


# -- what it keeps and how it encodes ----------------------------------------------------------


def test_frequent_values_are_kept_and_rare_ones_fall_in_other():
    X, _ = table()
    encoder = PrivateOneHotEncoder(epsilon=1.0, missing_values="?", random_state=0).fit(X)
    kept = [levels.tolist() for levels in encoder.categories_]
    assert kept == [["blue", "green", "red", MISSING], ["L", "M", "S"], ["Lyon", "Paris"]]
    assert encoder.n_features_in_ == 3
    assert encoder.feature_names_in_.tolist() == ["colour", "size", "city"]
    names = encoder.get_feature_names_out().tolist()
    assert names == [
        "colour_blue",
        "colour_green",
        "colour_red",
        "colour_<missing>",
        "colour_<other>",
        "size_L",
        "size_M",
        "size_S",
        "size_<other>",
        "city_Lyon",
        "city_Paris",
        "city_<other>",
    ]
    Z = encoder.transform(X)
    assert Z[0, names.index("colour_<other>")] == 1 and Z[10, names.index("city_<other>")] == 1
    for row in (3, 4, 5):  # None, NaN and "?": the one missing level
        assert Z[row, names.index("colour_<missing>")] == 1


def test_every_row_has_one_one_per_column_and_sparse_equals_dense():
    X, _ = table()
    sparse = PrivateOneHotEncoder(missing_values="?", random_state=0).fit(X)
    dense = clone(sparse).set_params(sparse_output=False).fit(X)
    S, D = sparse.transform(X), dense.transform(X)
    assert sp.isspmatrix_csr(S) and S.dtype == np.float64
    assert isinstance(D, np.ndarray) and D.dtype == np.float64
    np.testing.assert_array_equal(S.toarray(), D)
    assert set(np.unique(D)) == {0.0, 1.0}
    np.testing.assert_array_equal(D.sum(axis=1), np.full(len(X), 3.0))
    np.testing.assert_array_equal(sparse.fit_transform(X).toarray(), D)


def test_unseen_values_and_values_not_kept_go_to_other_at_transform():
    X, _ = table()
    encoder = PrivateOneHotEncoder(missing_values="?", sparse_output=False, random_state=0)
    encoder.fit(X)
    new = pd.DataFrame(
        {
            "colour": ["purple", "teal", None],
            "size": ["XL", "S", "M"],
            "city": ["Paris", "Tokyo", pd.NA],
        }
    )
    Z = encoder.transform(new)
    names = encoder.get_feature_names_out().tolist()
    on = [[names[k] for k in np.flatnonzero(row)] for row in Z]
    assert on == [
        ["colour_<other>", "size_<other>", "city_Paris"],
        ["colour_<other>", "size_S", "city_<other>"],
        ["colour_<missing>", "size_M", "city_<other>"],  # city's missing level was not kept
    ]


def test_without_missing_values_a_marker_string_is_a_value():
    X = pd.DataFrame({"c": ["?"] * 3000 + [None] * 3000})
    encoder = PrivateOneHotEncoder(random_state=0).fit(X)
    assert encoder.categories_[0].tolist() == ["?", MISSING]
    marked = PrivateOneHotEncoder(missing_values=["?", "n/a"], random_state=0).fit(X)
    assert marked.categories_[0].tolist() == [MISSING]


def test_arrays_and_arrow_tables_give_the_same_encoding_as_a_data_frame():
    pa = pytest.importorskip("pyarrow")
    X, _ = table()
    frame = PrivateOneHotEncoder(missing_values="?", random_state=0).fit(X)
    arrow_table = pa.table(
        {
            "colour": pa.array(X["colour"].tolist(), from_pandas=True),
            # dictionary-encoded, with a null: decoded with its nulls
            "size": pa.array(X["size"].tolist()).dictionary_encode(),
            "city": pa.array(X["city"].astype(object).where(X["city"].notna(), None).tolist()),
        }
    )
    arrow = PrivateOneHotEncoder(missing_values="?", random_state=0).fit(arrow_table)
    array = PrivateOneHotEncoder(missing_values="?", random_state=0).fit(
        X.astype(object).to_numpy()
    )
    for other in (arrow, array):
        assert [c.tolist() for c in other.categories_] == [c.tolist() for c in frame.categories_]
        np.testing.assert_array_equal(
            other.transform(arrow_table if other is arrow else X.to_numpy()).toarray(),
            frame.transform(X).toarray(),
        )
    assert arrow.feature_names_in_.tolist() == ["colour", "size", "city"]
    assert not hasattr(array, "feature_names_in_")
    assert array.get_feature_names_out()[:2].tolist() == ["x0_blue", "x0_green"]
    nulls = pa.table({"s": pa.array(["a"] * 50 + [None] * 50).dictionary_encode()})
    assert PrivateOneHotEncoder(epsilon=math.inf).fit(nulls).categories_[0].tolist() == [
        "a",
        MISSING,
    ]


def test_numbers_are_encoded_by_their_values():
    X = np.column_stack([np.repeat([1, 2], 3000), np.repeat([0.5, 1.5], 3000)])
    encoder = PrivateOneHotEncoder(random_state=0).fit(X)
    assert [c.tolist() for c in encoder.categories_] == [[1.0, 2.0], [0.5, 1.5]]
    assert encoder.get_feature_names_out().tolist() == [
        "x0_1.0",
        "x0_2.0",
        "x0_<other>",
        "x1_0.5",
        "x1_1.5",
        "x1_<other>",
    ]


# -- privacy: the plan, the budget, the report -------------------------------------------------


@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, None), (0.3, 1e-9)])
def test_the_report_adds_up_to_the_target(epsilon, delta):
    X, _ = table()
    encoder = PrivateOneHotEncoder(epsilon=epsilon, delta=delta, random_state=0).fit(X)
    report = encoder.privacy_report_
    expected_delta = 1.0 / len(X) ** 2 if delta is None else delta
    assert encoder.delta_ == report.delta == pytest.approx(expected_delta, rel=1e-12)
    assert report.epsilon <= epsilon and report.epsilon == pytest.approx(epsilon, rel=1e-3)
    assert report.guarantee and list(report.parts) == ["preprocessing"]
    assert [m.kind for m in report.mechanisms] == ["gaussian", "threshold"]
    gaussian, threshold = report.mechanisms
    assert gaussian.sensitivity == pytest.approx(math.sqrt(2 * 3))
    assert threshold.details["delta"] == pytest.approx(expected_delta / 2, rel=1e-12)
    assert encoder.category_plan_.n_columns == 3 and encoder.category_plan_.n_samples == len(X)
    assert "threshold" in str(report)


def test_every_fit_is_one_charge_and_clone_shares_the_budget():
    X, _ = table()
    budget = PrivacyBudget(2.0, 1e-6)
    encoder = PrivateOneHotEncoder(epsilon=0.5, budget=budget, random_state=0)
    encoder.fit(X)
    copy = clone(encoder)
    assert copy.budget is budget
    copy.fit(X)
    assert [c.label for c in budget.charges] == ["PrivateOneHotEncoder"] * 2
    assert budget.charges[0].plan == encoder.category_plan_.plan


def test_public_categories_cost_nothing():
    X, _ = table()
    budget = PrivacyBudget(1.0, 1e-6)
    public = {
        "colour": ["red", "green", "blue", None],
        1: ["S", "M", "L"],
        "city": ["Paris", "Lyon"],
    }
    encoder = PrivateOneHotEncoder(
        budget=budget, categories=public, missing_values="?", random_state=0
    ).fit(X)
    assert budget.charges == ()
    assert encoder.category_plan_ is None and encoder.delta_ is None
    report = encoder.privacy_report_
    assert report.epsilon == 0.0 and report.parts == {} and report.mechanisms == ()
    assert report.guarantee
    # the order given, the missing markers as the missing level
    assert encoder.categories_[0].tolist() == ["red", "green", "blue", MISSING]
    assert encoder.get_feature_names_out()[:5].tolist() == [
        "colour_red",
        "colour_green",
        "colour_blue",
        "colour_<missing>",
        "colour_<other>",
    ]
    # a value outside the public list goes to other
    Z = encoder.transform(X.iloc[:3]).toarray()
    assert Z[0, 4] == 1 and Z[2, 4] == 1


def test_public_categories_need_no_record():
    public = PrivateOneHotEncoder(categories={0: ["a", "b"], 1: [None, "x"]})
    public.fit(np.empty((0, 2), dtype=object))
    assert public.get_feature_names_out().tolist() == [
        "x0_a",
        "x0_b",
        "x0_<other>",
        "x1_<missing>",
        "x1_x",
        "x1_<other>",
    ]
    Z = public.transform(np.array([["b", np.nan], ["c", "x"]], dtype=object)).toarray()
    np.testing.assert_array_equal(Z, [[0, 1, 0, 1, 0, 0], [0, 0, 1, 0, 1, 0]])
    assert public.transform(np.empty((0, 2), dtype=object)).shape == (0, 6)


def test_partly_public_categories_select_the_other_columns_only():
    X, _ = table()
    budget = PrivacyBudget(1.0, 1e-6)
    encoder = PrivateOneHotEncoder(
        budget=budget, categories={"size": ["S", "M", "L"], "city": "auto"}, random_state=0
    ).fit(X)
    assert len(budget.charges) == 1
    assert encoder.category_plan_.n_columns == 2
    assert encoder.privacy_report_.mechanisms[0].sensitivity == pytest.approx(2.0)
    assert encoder.categories_[1].tolist() == ["S", "M", "L"]


def test_infinite_epsilon_keeps_every_value_and_says_it_is_not_private():
    X, _ = table()
    encoder = PrivateOneHotEncoder(epsilon=math.inf).fit(X)
    assert encoder.categories_[0].tolist() == [
        "?",
        "blue",
        "green",
        "mauve",
        "red",
        "teal",
        MISSING,
    ]
    assert encoder.privacy_report_.non_private
    model = make_pipeline(encoder, LogisticRegression())
    model.fit(X, table()[1])
    with pytest.warns(PrivacyLeakWarning):
        assert [name for name, _ in check_pipeline(model)] == ["privateonehotencoder"]


def test_a_refused_charge_leaves_the_encoder_unfitted():
    X, _ = table()
    budget = PrivacyBudget(0.5, 1e-6)
    encoder = PrivateOneHotEncoder(epsilon=1.0, budget=budget)
    with pytest.raises(BudgetExceededError):
        encoder.fit(X)
    assert budget.charges == ()
    with pytest.raises(NotFittedError):
        encoder.transform(X)


# -- pipelines ---------------------------------------------------------------------------------


def test_a_pipeline_with_a_private_estimator_charges_both_to_one_budget():
    X, y = table()
    budget = PrivacyBudget(3.0, 1e-6)
    model = make_pipeline(
        PrivateOneHotEncoder(budget=budget, missing_values="?", random_state=0),
        # the encoder's output is 0 or 1: a public bound, fixed before the data; the public
        # label set, so that the model's fit is one charge
        DPLogisticRegression(
            budget=budget, feature_bounds=1.0, classes=[False, True], random_state=0
        ),
    ).fit(X, y)
    labels = [c.label for c in budget.charges]
    assert len(labels) == 2 and labels[0] == "PrivateOneHotEncoder"
    assert labels[1].startswith("DPLogisticRegression")
    assert model.score(X, y) > 0.9
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        assert check_pipeline(model) == []


def test_grid_search_clones_the_encoder_and_shares_its_budget():
    X, y = table(3000)
    budget = PrivacyBudget(30.0, 1e-5)
    pipeline = make_pipeline(
        PrivateOneHotEncoder(budget=budget, missing_values="?", random_state=0),
        # the public label set: each pipeline's model is one charge
        DPLogisticRegression(
            budget=budget, feature_bounds=1.0, classes=[False, True], random_state=0
        ),
    )
    search = GridSearchCV(pipeline, {"dplogisticregression__alpha": [1e-4, 1e-2]}, cv=2)
    search.fit(X, y)
    # two candidates on two folds, then the refit: five pipelines, two charges each
    labels = [c.label.split(" ")[0] for c in budget.charges]
    assert labels == ["PrivateOneHotEncoder", "DPLogisticRegression"] * 5
    assert search.best_estimator_[0].budget is budget
    assert search.score(X, y) > 0.85


def test_check_pipeline_flags_scikit_learn_one_hot_encoder_and_not_ours():
    X, y = table(1000)
    leaky = make_pipeline(OneHotEncoder(handle_unknown="ignore"), LogisticRegression())
    with pytest.warns(PrivacyLeakWarning, match="categories_"):
        found = check_pipeline(leaky.fit(X.astype(str), y))
    assert [name for name, _ in found] == ["onehotencoder"]
    for encoder in (
        PrivateOneHotEncoder(random_state=0),
        PrivateOneHotEncoder(categories={0: ["red"], 1: ["S"], 2: ["Paris"]}),
    ):
        private = make_pipeline(encoder, LogisticRegression()).fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            assert check_pipeline(private) == []


def test_a_column_transformer_encodes_the_strings_and_scales_the_numbers():
    X, y = table(4000)
    X["age"] = np.random.default_rng(3).normal(40.0, 10.0, len(X))
    budget = PrivacyBudget(5.0, 1e-6)
    columns = make_column_transformer(
        (
            PrivateOneHotEncoder(budget=budget, missing_values="?", random_state=0),
            ["colour", "size", "city"],
        ),
        (PrivateStandardScaler(budget=budget, random_state=0), ["age"]),
    )
    # the public label set: the model's fit is one charge
    model = make_pipeline(
        columns,
        DPLogisticRegression(
            budget=budget, feature_bounds=4.0, classes=[False, True], random_state=0
        ),
    )
    model.fit(X, y)
    assert len(budget.charges) == 3
    names = model[0].get_feature_names_out().tolist()
    assert "privateonehotencoder__colour_red" in names and "privatestandardscaler__age" in names
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        assert check_pipeline(model) == []


# -- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"categories": {"colour": ["red"], "weight": ["a"]}}, r"column 'weight', which is not"),
        ({"categories": {5: ["a"]}}, r"column 5, which is not a column"),
        ({"categories": {"size": ["S", "M", "S"]}}, r"column 'size' holds 'S' more than once"),
        (
            {"categories": {"colour": ["red", None, "?"]}, "missing_values": "?"},
            r"column 'colour' holds '<missing>' more than once",
        ),
        ({"categories": {"size": "S"}}, r"categories of column 'size': give 'auto' or a list"),
        ({"categories": {"size": ["S"], 1: ["M"]}}, r"gives column 'size' twice"),
        ({"categories": ["S", "M"]}, r"categories must be None, 'auto' or a dict"),
        ({"missing_values": 0}, r"missing_values must be None, a string"),
        ({"sparse_output": "yes"}, r"sparse_output must be a bool"),
        ({"epsilon": 0.0}, r"epsilon must be positive"),
        ({"delta": 0.0}, r"delta must be > 0"),
        ({"budget": 3.0}, r"budget must be None or a PrivacyBudget"),
        ({"random_state": "seed"}, r"random_state"),
    ],
)
def test_bad_parameters_are_refused_before_anything_is_charged(params, match):
    X, _ = table(500)
    budget = PrivacyBudget(5.0, 1e-6)
    params = {"budget": budget, **params}
    with pytest.raises(ValueError, match=match):
        PrivateOneHotEncoder(**params).fit(X)
    assert budget.charges == ()


def test_bad_input_is_refused_with_words_that_say_why():
    encoder = PrivateOneHotEncoder(random_state=0)
    with pytest.raises(ValueError, match="Expected a 2-D array"):
        encoder.fit(np.array(["a", "b"]))
    with pytest.raises(ValueError, match="takes a 2-D table"):
        encoder.fit(sp.csr_matrix(np.ones((3, 2))))
    with pytest.raises(ValueError, match="n_samples=0: PrivateOneHotEncoder needs at least 2"):
        encoder.fit(np.empty((0, 2), dtype=object))
    with pytest.raises(ValueError, match="0 feature"):
        encoder.fit(np.empty((5, 0), dtype=object))
    with pytest.raises(ValueError, match="column 0: every value must be hashable"):
        encoder.fit(pd.DataFrame({"a": [["x"], ["y"]]}).to_numpy())
    X, _ = table(500)
    encoder.fit(X)
    with pytest.raises(ValueError, match="X has 2 features, but PrivateOneHotEncoder"):
        encoder.transform(X[["colour", "size"]])
    with pytest.raises(ValueError, match="feature names should match"):
        encoder.transform(X[["size", "colour", "city"]])
    with pytest.raises(ValueError, match="input_features should have length"):
        encoder.get_feature_names_out(["a"])


# -- real data -----------------------------------------------------------------------------------


@pytest.mark.skipif(not ADULT.exists(), reason="the shared datasets are not on this machine")
def test_the_raw_adult_table_keeps_its_frequent_categories():
    start = time.perf_counter()
    frame = pd.read_csv(ADULT)[ADULT_CATEGORICAL]
    budget = PrivacyBudget(1.0, 1e-6)
    encoder = PrivateOneHotEncoder(
        epsilon=0.1, budget=budget, missing_values="?", random_state=0
    ).fit(frame)
    Z = encoder.transform(frame)
    elapsed = time.perf_counter() - start
    kept = dict(zip(ADULT_CATEGORICAL, encoder.categories_, strict=True))
    assert "Private" in kept["workclass"]
    assert sorted(kept["sex"]) == ["Female", "Male"]
    assert "United-States" in kept["native_country"] and "White" in kept["race"]
    # workclass, occupation and native_country have hundreds of "?" or more
    assert MISSING in kept["workclass"] and MISSING in kept["occupation"]
    for name in ADULT_CATEGORICAL:
        distinct = frame[name].replace("?", None).nunique(dropna=False)
        assert 1 <= len(kept[name]) <= distinct, name
    # "Never-worked" (7 records) and "Holand-Netherlands" (1 record) are far too rare
    assert "Never-worked" not in kept["workclass"]
    assert "Holand-Netherlands" not in kept["native_country"]
    assert Z.shape == (len(frame), sum(len(k) + 1 for k in encoder.categories_))
    assert len(budget.charges) == 1 and encoder.privacy_report_.epsilon <= 0.1
    assert elapsed < 3.0, f"fit and transform took {elapsed:.2f} s"


def test_an_empty_public_category_set_encodes_the_column_as_its_other_level():
    cells = np.array([["red", "S"], ["blue", "M"]], dtype=object)
    encoder = PrivateOneHotEncoder(categories={0: [], 1: ["S"]}, sparse_output=False).fit(cells)
    assert encoder.get_feature_names_out(["colour", "size"]).tolist() == [
        "colour_<other>",
        "size_S",
        "size_<other>",
    ]
    np.testing.assert_array_equal(encoder.transform(cells), [[1, 1, 0], [1, 0, 1]])
