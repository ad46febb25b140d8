"""Saving a fitted pipeline of dpglm steps as JSON (``save_pipeline``), reading it back."""

import json
import warnings

import numpy as np
import pytest
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

import dpglm
from dpglm.estimators import DPLogisticRegression, DPRidge, load_model, save_pipeline
from dpglm.exceptions import UnreadableFileError
from dpglm.preprocessing import (
    PrivateClipper,
    PrivateMinMaxScaler,
    PrivateOneHotEncoder,
    PrivateStandardScaler,
)
from dpglm.privacy.budget import PrivacyBudget


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    X = rng.normal([5.0, -20.0, 0.0], [2.0, 8.0, 0.1], size=(3000, 3))
    y = (X[:, 0] - 5.0 + (X[:, 1] + 20.0) / 4 + rng.normal(size=3000) > 0).astype(int)
    return X, y


def _quiet_fit(pipeline, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # budgets apart: said, and not the point
        return pipeline.fit(X, y)


def _quiet_load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # an in-memory budget is not restored
        return load_model(path)


@pytest.mark.parametrize(
    "front",
    [
        [PrivateStandardScaler(random_state=1)],
        [PrivateMinMaxScaler(random_state=1), "passthrough"],
        [PrivateClipper(random_state=1), PrivateStandardScaler(with_mean=False, random_state=2)],
        [PrivateClipper(bounds=[(0.0, 10.0), (-40.0, 0.0), (-1.0, 1.0)])],
    ],
)
def test_a_pipeline_round_trips_with_its_state_and_reports(tmp_path, data, front):
    X, y = data
    pipeline = _quiet_fit(make_pipeline(*front, DPLogisticRegression(random_state=3)), X, y)
    path = save_pipeline(pipeline, tmp_path / "p.json")
    document = json.loads(path.read_text())
    assert document["format"] == "dpglm-pipeline" and document["version"] == 1
    again = _quiet_load(path)
    assert isinstance(again, Pipeline)
    assert [name for name, _ in again.steps] == [name for name, _ in pipeline.steps]
    np.testing.assert_array_equal(again.predict(X), pipeline.predict(X))
    np.testing.assert_array_equal(again.decision_function(X), pipeline.decision_function(X))
    for (_, before), (_, after) in zip(pipeline.steps, again.steps, strict=True):
        if isinstance(before, str):
            assert after == "passthrough"
            continue
        assert type(after) is type(before)
        assert after.get_params()["random_state"] is None  # the seed would give the noise away
        assert after.privacy_report_ == before.privacy_report_
        if hasattr(before, "low_"):
            np.testing.assert_array_equal(after.transform(X), before.transform(X))
            assert after.n_features_in_ == before.n_features_in_


def test_steps_that_shared_a_ledger_share_it_again(tmp_path, data):
    X, y = data
    ledger = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget.open(ledger, dataset="census", epsilon=3.0, delta=1e-5)
    pipeline = make_pipeline(
        PrivateStandardScaler(epsilon=1.0, budget=budget, random_state=0),
        DPLogisticRegression(epsilon=1.0, delta=1e-6, budget=budget, random_state=0),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one budget: nothing to say
        pipeline.fit(X, y)
        again = load_model(save_pipeline(pipeline, tmp_path / "p.json"))
    assert again[0].budget is again[-1].budget
    assert again[0].budget.persistent and again[0].budget.dataset == "census"
    assert len(again[0].budget.charges) == len(budget.charges) == 3  # scaler, labels, model
    assert again[0].budget.spent() == pytest.approx(budget.spent())


def test_steps_that_cannot_be_saved_are_named(tmp_path, data):
    X, y = data
    leaky = make_pipeline(StandardScaler(), DPLogisticRegression(random_state=0))
    with pytest.raises(TypeError, match=r"step 'standardscaler' \(StandardScaler\) cannot be"):
        save_pipeline(_quiet_fit(leaky, X, y), tmp_path / "p.json")
    with pytest.raises(TypeError, match=r"last step 'standardscaler' is a StandardScaler"):
        save_pipeline(make_pipeline(StandardScaler()).fit(X), tmp_path / "p.json")
    with pytest.raises(TypeError, match="takes a sklearn Pipeline"):
        save_pipeline(DPRidge(), tmp_path / "p.json")
    encoder = make_pipeline(PrivateOneHotEncoder(), DPRidge())
    with pytest.raises(TypeError, match=r"\(PrivateOneHotEncoder\) cannot be saved"):
        save_pipeline(encoder, tmp_path / "p.json")
    assert not (tmp_path / "p.json").exists()


def test_malformed_pipeline_files_are_refused_with_the_reason(tmp_path, data):
    X = data[0]
    pipeline = _quiet_fit(
        make_pipeline(PrivateMinMaxScaler(random_state=0), DPRidge(random_state=0)), X, X[:, 0]
    )
    document = json.loads(save_pipeline(pipeline, tmp_path / "p.json").read_text())

    def refused(changed, match):
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(changed))
        with pytest.raises(UnreadableFileError, match=match):
            _quiet_load(path)

    refused({**document, "version": 2}, "pipeline format version 2; this dpglm reads version 1")
    refused({**document, "steps": []}, "no steps")
    first = dict(document["steps"][0], fitted=dict(document["steps"][0]["fitted"]))
    first["fitted"]["low_"] = first["fitted"]["low_"][:2]
    refused({**document, "steps": [first, document["steps"][1]]},
            r"step 'privateminmaxscaler': low_ must hold 3 values")  # fmt: skip
    odd = dict(document["steps"][0], fitted={**document["steps"][0]["fitted"], "transform": 1})
    refused({**document, "steps": [odd, document["steps"][1]]},
            r"unknown fitted attributes \['transform'\]")  # fmt: skip
    bare = dict(document["steps"][0], fitted={"low_": [0.0] * 3})
    refused({**document, "steps": [bare, document["steps"][1]]}, "step 'privateminmaxscaler'")
    unknown = dict(document["steps"][0], transformer="Mystery")
    refused({**document, "steps": [unknown, document["steps"][1]]}, "unknown transformer")
    refused({**document, "steps": document["steps"][:1]}, "last step .* is not a model")


def test_the_top_level_exports_it():
    assert dpglm.save_pipeline is save_pipeline
