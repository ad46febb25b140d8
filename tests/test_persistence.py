"""Saving a fitted estimator as JSON (``model.save``), reading it back (``dpglm.load_model``)."""

import json
import math
import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import dpglm
from dpglm.estimators import (
    MODEL_FORMAT,
    MODEL_FORMAT_VERSION,
    DPElasticNet,
    DPLasso,
    DPLinearRegression,
    DPLinearSVC,
    DPLogisticRegression,
    DPRidge,
)
from dpglm.exceptions import DataError, PrivacyLeakWarning, UnreadableFileError
from dpglm.privacy.budget import PrivacyBudget

KEYS = {
    "format",
    "version",
    "estimator",
    "params",
    "budget",
    "coef",
    "intercept",
    "multi_class",
    "scaling",
    "n_features_in",
    "feature_names_in",
    "classes",
    "solver",
    "n_iter",
    "delta",
    "privacy_report",
    "encoding",
}

MODELS = [
    DPLinearRegression(feature_bounds=1.0, random_state=0),
    DPRidge(alpha=0.01, feature_bounds=1.0, random_state=0),
    DPLasso(alpha=0.01, feature_bounds=1.0, random_state=0),
    DPElasticNet(alpha=0.01, smoothness="private", feature_bounds=1.0, random_state=0),
    DPLogisticRegression(feature_bounds=[1.0, 1.0, 1.0], random_state=0),
    DPLinearSVC(feature_bounds=1.0, random_state=0),
    DPLinearSVC(loss="hinge", penalty="l1", alpha=1e-3, random_state=0),
    DPRidge(alpha=0.01, random_state=0),  # smoothness from the data: a recorded leak
    DPRidge(alpha=0.01, epsilon=math.inf),
    DPLogisticRegression(epsilon=math.inf, fit_intercept=False),
]


def _data(model, n=None, seed=0):
    """Regression: 300 records; classification: 1,000, enough for the private label
    selection to keep both labels (500 each, its threshold about 235)."""
    if n is None:
        n = 1_000 if model._task == "classification" else 300
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3))
    if model._task == "classification":
        return X, np.where(X[:, 0] - X[:, 1] > 0, "pos", "neg")
    return X, X @ [1.0, -1.0, 0.5] + 0.1 * rng.standard_normal(n)


def _fit(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return model.fit(X, y)


def _round_trip(model, tmp_path, name="model.json"):
    path = model.save(tmp_path / name)
    return path, dpglm.load_model(path)


def _assert_same_model(again, model, X):
    assert type(again) is type(model)
    params, again_params = model.get_params(), again.get_params()
    params.pop("budget"), again_params.pop("budget")
    # the seed is never saved: it would give the fit's noise away
    params.pop("random_state"), again_params.pop("random_state")
    assert repr(again_params) == repr(params)
    np.testing.assert_array_equal(again.coef_, model.coef_)
    assert again.intercept_ == model.intercept_
    assert again.n_features_in_ == model.n_features_in_
    assert again.solver_ == model.solver_
    assert again.n_iter_ == model.n_iter_
    assert again.delta_ == model.delta_
    assert again.privacy_report_ == model.privacy_report_
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    if hasattr(model, "classes_"):
        np.testing.assert_array_equal(again.classes_, model.classes_)
        assert again.classes_.dtype == model.classes_.dtype
        np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
    if hasattr(model, "predict_proba"):
        np.testing.assert_array_equal(again.predict_proba(X), model.predict_proba(X))


@pytest.mark.parametrize("model", MODELS, ids=repr)
def test_round_trip_gives_identical_predictions(model, tmp_path):
    X, y = _data(model)
    _fit(model, X, y)
    _, again = _round_trip(model, tmp_path)
    _assert_same_model(again, model, X)
    assert again.random_state is None
    X_new, _ = _data(model, seed=1)
    np.testing.assert_array_equal(again.predict(X_new), model.predict(X_new))
    assert again.budget is None


def test_document_holds_the_documented_keys(tmp_path):
    model = DPLogisticRegression(feature_bounds=1.0, random_state=0)
    X, y = _data(model)
    path = model.fit(X, y).save(tmp_path / "model.json")
    text = path.read_text(encoding="utf-8")
    document = json.loads(text)
    assert set(document) == KEYS
    assert document["format"] == MODEL_FORMAT == "dpglm-model"
    assert document["version"] == MODEL_FORMAT_VERSION == 4
    assert document["encoding"] is None
    assert document["multi_class"] == "binary"
    assert document["scaling"] == model.scaling_.to_dict()
    assert document["scaling"]["low"] == [-1.0] * 3 and document["scaling"]["centred"]
    assert document["estimator"] == "DPLogisticRegression"
    assert set(document["params"]) == set(model.get_params()) - {"budget"}
    assert document["params"]["feature_bounds"] == 1.0
    assert document["budget"] is None
    # one model, as in every version of the format: the model's one row of coefficients
    assert document["coef"] == model.coef_[0].tolist()
    assert document["intercept"] == model.intercept_[0]
    assert document["n_features_in"] == 3
    assert document["feature_names_in"] is None
    assert document["classes"] == ["neg", "pos"]
    assert document["solver"] == model.solver_ in ("dp-cd", "dp-gcd", "dp-sgd")
    assert document["n_iter"] == model.n_iter_
    assert document["delta"] == model.delta_ == 1 / 1_000**2
    assert document["privacy_report"] == json.loads(model.privacy_report_.to_json())


def test_the_file_is_standard_json_without_pickle(tmp_path):
    model = DPRidge(epsilon=math.inf).fit(*_data(DPRidge()))
    path = model.save(tmp_path / "model.json")
    raw = path.read_bytes()
    assert not raw.startswith(b"\x80")  # a pickle stream starts with the PROTO opcode

    def refuse(constant):
        raise AssertionError(f"non-standard JSON constant {constant}")

    document = json.loads(raw.decode("utf-8"), parse_constant=refuse)
    text = raw.decode("utf-8").lower()
    assert "pickle" not in text and "base64" not in text and "__reduce__" not in text

    def plain(value):
        if isinstance(value, dict):
            return all(isinstance(k, str) and plain(v) for k, v in value.items())
        if isinstance(value, list):
            return all(plain(v) for v in value)
        return value is None or isinstance(value, bool | int | float | str)

    assert plain(document)


def test_infinite_epsilon_round_trips(tmp_path):
    model = DPLasso(alpha=0.01, epsilon=math.inf)
    X, y = _data(model)
    path, again = _round_trip(model.fit(X, y), tmp_path)
    document = json.loads(path.read_text())
    assert document["params"]["epsilon"] == "inf"
    assert document["privacy_report"]["epsilon"] == "inf"
    assert document["solver"] == "reference"
    assert math.isinf(again.epsilon)
    assert again.privacy_report_.non_private
    assert not again.privacy_report_.guarantee
    _assert_same_model(again, model, X)


@pytest.mark.parametrize(
    ("negative", "positive"), [(False, True), (0, 1), (-1, 1), (0.0, 1.0), ("ham", "spam")]
)
def test_labels_round_trip(negative, positive, tmp_path):
    X, y = _data(DPLogisticRegression())
    labels = np.where(y == "pos", positive, negative)
    model = DPLogisticRegression(feature_bounds=1.0, random_state=0).fit(X, labels)
    _, again = _round_trip(model, tmp_path)
    _assert_same_model(again, model, X)
    assert again.predict(X).dtype == labels.dtype


def test_pandas_feature_names_round_trip(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = _data(DPRidge())
    frame = pd.DataFrame(X, columns=["age", "income", "height"])
    model = DPRidge(alpha=0.01, feature_bounds=1.0, random_state=0).fit(frame, y)
    path, again = _round_trip(model, tmp_path)
    assert json.loads(path.read_text())["feature_names_in"] == ["age", "income", "height"]
    assert again.feature_names_in_.dtype == object
    np.testing.assert_array_equal(again.feature_names_in_, model.feature_names_in_)
    np.testing.assert_array_equal(again.predict(frame), model.predict(frame))
    with pytest.raises(ValueError, match="same order"):
        again.predict(frame[["height", "age", "income"]])


def test_persistent_budget_is_referenced_by_path_and_reopened(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    budget = PrivacyBudget.open("ledger.sqlite", dataset="census", epsilon=5.0, delta=1e-5)
    model = DPRidge(alpha=0.01, budget=budget, feature_bounds=1.0, random_state=0)
    X, y = _data(model)
    path, again = _round_trip(model.fit(X, y), tmp_path)
    reference = json.loads(path.read_text())["budget"]
    assert reference == {
        "ledger": str((tmp_path / "ledger.sqlite").resolve()),
        "dataset": "census",
    }
    assert again.budget.persistent
    assert again.budget.dataset == "census"
    assert again.budget.epsilon == 5.0 and again.budget.delta == 1e-5
    assert len(again.budget.charges) == 1
    again.fit(X, y)  # charged to the same ledger
    assert len(budget.charges) == 2
    # a second charge to the ledger draws noise of its own, even with the same seed
    assert not np.array_equal(again.coef_, model.coef_)
    # the same seed and data on a fresh ledger of the dataset: the same fit
    fresh = PrivacyBudget.open("fresh.sqlite", dataset="census", epsilon=5.0, delta=1e-5)
    _assert_same_model(again.set_params(budget=fresh, random_state=0).fit(X, y), model, X)


def test_missing_ledger_warns_and_loads_without_budget(tmp_path):
    ledger = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget.open(ledger, dataset="d", epsilon=5.0, delta=1e-5)
    model = DPRidge(budget=budget, feature_bounds=1.0, random_state=0)
    path = model.fit(*_data(model)).save(tmp_path / "model.json")
    ledger.unlink()
    with pytest.warns(UserWarning, match="no longer exists"):
        again = dpglm.load_model(path)
    assert again.budget is None


def test_in_memory_budget_is_not_saved_and_loading_says_so(tmp_path):
    budget = PrivacyBudget(5.0, 1e-5)
    model = DPRidge(budget=budget, feature_bounds=1.0, random_state=0)
    X, y = _data(model)
    path = model.fit(X, y).save(tmp_path / "model.json")
    assert json.loads(path.read_text())["budget"] == {"ledger": None}
    with pytest.warns(UserWarning, match="in-memory PrivacyBudget"):
        again = dpglm.load_model(str(path))
    assert again.budget is None
    np.testing.assert_array_equal(again.predict(X), model.predict(X))


@pytest.mark.parametrize("seed", [0, np.int64(3), np.random.default_rng(0)], ids=repr)
def test_random_state_is_saved_as_null(seed, tmp_path):
    """The seed stays out of the model file: with it the fit's noise could be taken off."""
    model = DPRidge(feature_bounds=1.0, random_state=seed)
    X, y = _data(model)
    path, again = _round_trip(model.fit(X, y), tmp_path)
    assert json.loads(path.read_text())["params"]["random_state"] is None
    assert again.random_state is None
    np.testing.assert_array_equal(again.predict(X), model.predict(X))


def test_array_hyperparameters_round_trip(tmp_path):
    model = DPRidge(feature_bounds=np.array([1.0, 1.0, 2.0]), random_state=np.int64(3))
    X, y = _data(model)
    _, again = _round_trip(model.fit(X, y), tmp_path)
    assert again.feature_bounds == [1.0, 1.0, 2.0]
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    # the loaded hyperparameters, with the seed kept by its owner, fit the same model
    refit = again.set_params(random_state=3).fit(X, y)
    np.testing.assert_array_equal(refit.coef_, model.coef_)


def test_unfitted_model_cannot_be_saved(tmp_path):
    with pytest.raises(NotFittedError):
        DPRidge().save(tmp_path / "model.json")


# -- files that are not dpglm models ---------------------------------------------------


@pytest.fixture
def saved(tmp_path):
    model = DPLogisticRegression(feature_bounds=1.0, random_state=0)
    path = model.fit(*_data(model)).save(tmp_path / "model.json")
    return path, json.loads(path.read_text())


def _write(path, document):
    path.write_text(json.dumps(document))
    return path


def _load_error(path, match):
    with pytest.raises(UnreadableFileError, match=match) as info:
        dpglm.load_model(path)
    assert isinstance(info.value, DataError) and isinstance(info.value, ValueError)
    return info.value


def test_corrupt_file(saved):
    path, _ = saved
    path.write_text(path.read_text()[:100])
    _load_error(path, "cannot read a dpglm model")
    path.write_bytes(b"\x80\x04\x95 not json")
    _load_error(path, "cannot read a dpglm model")


def test_missing_file(tmp_path):
    _load_error(tmp_path / "nothing.json", "cannot read a dpglm model")


@pytest.mark.parametrize("document", [[1, 2], {"coef": [1.0]}, {"format": "sklearn-model"}])
def test_wrong_format(tmp_path, document):
    _load_error(_write(tmp_path / "m.json", document), "not a dpglm model file")


@pytest.mark.parametrize("version", [1, 5, 0, "2", None, True])
def test_wrong_version(saved, version):
    path, document = saved
    document["version"] = version
    _load_error(_write(path, document), f"version {version!r}; this dpglm reads versions 2, 3, 4")


@pytest.mark.parametrize("name", ["DPPoisson", "LogisticRegression", None])
def test_unknown_estimator(saved, name):
    path, document = saved
    document["estimator"] = name
    _load_error(_write(path, document), "unknown estimator")


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda d: d.pop("coef"), "missing field 'coef'"),
        (lambda d: d.pop("privacy_report"), "missing field"),
        (lambda d: d["coef"].append(1.0), "coef has shape"),
        (lambda d: d.update(n_features_in=2.5), "n_features_in"),
        (lambda d: d["params"].update(no_such_param=1), "no_such_param"),
        (lambda d: d.update(params=[1, 2]), "params"),
        (lambda d: d.update(classes=["a", "b", "c"]), r"expected \(3, 3\).*3 classes"),
        (lambda d: d.update(multi_class="ovr"), "multi_class is 'ovr'; 2 classes take one of"),
        (lambda d: d.update(feature_names_in=["a"]), "feature_names_in"),
        (lambda d: d.update(intercept="zero"), "could not convert|zero"),
        (lambda d: d["privacy_report"].pop("epsilon"), "missing field 'epsilon'"),
    ],
)
def test_malformed_fields(saved, change, match):
    path, document = saved
    change(document)
    _load_error(_write(path, document), match)


@pytest.mark.parametrize("classes", [["neg", "pos"], [True, False], [0, 1]])
def test_public_classes_round_trip(tmp_path, classes):
    X, y = _data(DPLogisticRegression())
    labels = np.unique(np.asarray(classes))
    y = labels[(y == "pos").astype(int)]
    y[:] = labels[1]  # one class only: fitted all the same, the set being public
    model = DPLinearSVC(classes=classes, feature_bounds=1.0, random_state=0).fit(X, y)
    path, again = _round_trip(model, tmp_path)
    assert again.get_params()["classes"] == list(classes)
    assert again.classes_.tolist() == model.classes_.tolist() == labels.tolist()
    assert again.privacy_report_ == model.privacy_report_
    assert any("given as classes" in a for a in again.privacy_report_.assumptions)
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    document = json.loads(path.read_text())
    document["params"]["classes"] = ["other", "pos"]
    _load_error(_write(path, document), "differ from the classes parameter")


def test_dpglm_load_is_gone_and_points_to_load_model():
    # a model used to load with dpglm.load and data with dpglm.data.load: one name, two things
    with pytest.raises(AttributeError, match=r"use dpglm\.load_model .* dpglm\.data\.load"):
        dpglm.load  # noqa: B018
    assert not hasattr(dpglm, "load")
    assert "load" not in dpglm.__all__ and "load" not in dir(dpglm)
    assert "load_model" in dpglm.__all__ and "load_model" in dir(dpglm)


def test_load_model_round_trips_through_the_top_level_name(tmp_path):
    from dpglm.estimators import load_model

    assert dpglm.load_model is load_model
    model = DPRidge(alpha=0.01, feature_bounds=1.0, random_state=0)
    X, y = _data(model)
    _fit(model, X, y).save(tmp_path / "model.json")
    _assert_same_model(dpglm.load_model(tmp_path / "model.json"), model, X)


def test_a_version_3_file_reads_as_a_model_without_encoding(saved):
    path, document = saved
    del document["encoding"]
    document["version"] = 3
    model = dpglm.load_model(_write(path, document))
    assert not hasattr(model, "encoding_")


def test_a_version_2_file_reads_as_a_binary_model(saved):
    path, document = saved
    del document["multi_class"]
    document["version"] = 2
    model = dpglm.load_model(_write(path, document))
    assert model.multi_class_ == "binary" and model.intercept_.shape == (1,)
