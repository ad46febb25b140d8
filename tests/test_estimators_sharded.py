"""The estimators on records in row chunks: the in-memory fit, data-parallel, where they live.

``fit`` with a row-chunked ``dask.array``, a Dask data frame or a
:class:`ShardedRows` must give the in-memory fit of the same records for the
same seed (the same private ranges, the same solver, coefficients to 1e-10
relative, the same report but for its ``execution`` line), with the
preprocessing counted on the chunks. Solvers that need every record in this
process, and ``epsilon=inf``, are refused before anything is charged. On a
real ``LocalCluster`` (two worker processes), the report names the workers,
and a worker lost mid-fit raises a clear error after an honest charge.
"""

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

from dpglm.data import load
from dpglm.distributed import ChunkLostError, ShardedRows
from dpglm.estimators import DPLinearRegression, DPLogisticRegression
from dpglm.exceptions import DataError, PrivacyLeakWarning, TargetError
from dpglm.privacy.budget import PrivacyBudget
from solver_problems import cluster_workers, kill_worker, local_client

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

N, P, ROWS = 6000, 5, 1500


def raw_data(seed=0, classes=None):
    """Raw-scale features (columns in [0, 10] to [0, 1e4]); a regression or labelled target."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, (N, P)) * np.array([10.0, 1e2, 1.0, 1e4, 5.0])
    z = X @ np.array([0.3, -0.02, 2.0, 1e-4, 0.0]) + rng.normal(0.0, 0.3, N)
    if classes is None:
        return X, z
    cuts = np.quantile(z, np.linspace(0, 1, len(classes) + 1)[1:-1])
    return X, np.asarray(classes)[np.digitize(z, cuts)]


def parquet_parts(folder, X, y, target):
    """The records as Parquet files of ROWS rows each, in order; their paths."""
    paths = []
    for k, a in enumerate(range(0, len(y), ROWS)):
        frame = pd.DataFrame(X[a : a + ROWS], columns=[f"x{j}" for j in range(P)])
        frame[target] = y[a : a + ROWS]
        paths.append(folder / f"part{k}.parquet")
        frame.to_parquet(paths[-1])
    return paths


def chunked(X, y):
    return da.from_array(X, chunks=(ROWS, P)), da.from_array(y, chunks=ROWS)


def assert_same_fit(local, sharded, execution):
    """Coefficients to 1e-10 relative, the same report but for how it ran."""
    np.testing.assert_allclose(sharded.coef_, local.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sharded.intercept_, local.intercept_, rtol=1e-10, atol=1e-12)
    report = sharded.privacy_report_
    assert report.execution == execution
    assert local.privacy_report_.execution == ""
    assert dataclasses.replace(report, execution="") == local.privacy_report_
    assert sharded.solver_ == local.solver_ and sharded.n_iter_ == local.n_iter_


IN_PROCESS = "data-parallel on 4 row chunks, in this process"


#: "auto" on row chunks chooses DP-AGD where it chooses DP-SGD in memory (few round trips)
IN_MEMORY = {"auto": "dp-agd"}


@pytest.mark.parametrize("solver", ["auto", "dp-gcd", "dp-agd", "dp-sgd"])
def test_a_regressor_on_a_dask_array_gives_the_in_memory_fit(solver):
    X, y = raw_data(1)
    params = {"epsilon": 1.0, "random_state": 3}
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # the default path is private
        local = DPLinearRegression(**params, solver=IN_MEMORY.get(solver, solver)).fit(X, y)
        sharded = DPLinearRegression(**params, solver=solver).fit(*chunked(X, y))
    assert_same_fit(local, sharded, IN_PROCESS)
    # the preprocessing is a part of its own, released from the chunks' counts
    assert "preprocessing" in sharded.privacy_report_.parts
    np.testing.assert_allclose(sharded.predict(X), local.predict(X), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("solver", ["auto", "dp-gcd"])
def test_a_classifier_on_a_dask_array_gives_the_in_memory_fit(solver):
    X, y = raw_data(2, ["no", "yes"])
    params = {"epsilon": 1.0, "random_state": 4}
    local = DPLogisticRegression(**params, solver=IN_MEMORY.get(solver, solver)).fit(X, y)
    sharded = DPLogisticRegression(**params, solver=solver).fit(*chunked(X, y))
    assert_same_fit(local, sharded, IN_PROCESS)
    assert list(sharded.classes_) == ["no", "yes"]
    assert sharded.score(X, y) == local.score(X, y) > 0.8


def test_more_than_two_classes_are_fitted_one_vs_rest_on_the_chunks():
    X, y = raw_data(3, ["a", "b", "c"])
    # DP-GCD fits one-vs-rest in memory too: the same fit
    params = {"epsilon": 2.0, "random_state": 5, "solver": "dp-gcd"}
    local = DPLogisticRegression(**params).fit(X, y)
    sharded = DPLogisticRegression(**params).fit(*chunked(X, y))
    assert_same_fit(local, sharded, IN_PROCESS)
    assert sharded.multi_class_ == "ovr" and sharded.coef_.shape == (3, P)
    # the default solver fits a multinomial model in memory; on chunks, one-vs-rest
    default = DPLogisticRegression(epsilon=2.0, random_state=5).fit(*chunked(X, y))
    assert default.multi_class_ == "ovr" and default.solver_ == "dp-agd"
    assert default.score(X, y) > 0.6


def test_a_dask_data_frame_keeps_its_column_names():
    X, y = raw_data(4)
    names = [f"c{j}" for j in range(P)]
    frame = dd.from_pandas(pd.DataFrame(X, columns=names), npartitions=4)
    target = dd.from_pandas(pd.Series(y, name="y"), npartitions=4)
    model = DPLinearRegression(epsilon=1.0, random_state=0).fit(frame, target)
    local = DPLinearRegression(epsilon=1.0, random_state=0, solver="dp-agd")
    local.fit(pd.DataFrame(X, columns=names), y)
    assert list(model.feature_names_in_) == names
    np.testing.assert_allclose(model.coef_, local.coef_, rtol=1e-10, atol=1e-12)
    assert model.privacy_report_.execution.startswith("data-parallel on 4 row chunks")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # its own names: no warning of names missing
        expected = local.predict(pd.DataFrame(X, columns=names))
        np.testing.assert_allclose(model.predict(frame), expected, rtol=1e-10)
    with pytest.raises(ValueError, match="same order"):
        model.predict(frame[names[::-1]])


@pytest.mark.parametrize("reread", [False, True], ids=["spilled", "reread"])
def test_files_read_out_of_core_give_the_fit_of_the_loaded_dataset(tmp_path, reread):
    X, y = raw_data(5, ["neg", "pos"])
    paths = parquet_parts(tmp_path, X, y, "label")
    # the public label set: no label selection on either side (rows loaded with their
    # labels hold a label set read when they were loaded)
    params = {"epsilon": 1.0, "random_state": 6, "classes": ["neg", "pos"]}
    whole = load(pd.concat([pd.read_parquet(p) for p in paths]), target="label",
                 task="classification")  # fmt: skip
    local = DPLogisticRegression(**params, solver="dp-agd").fit(whole.X, whole.decode(whole.y))
    with ShardedRows.from_files(paths, target="label", task="classification",
                                resident=False, reread=reread) as rows:  # fmt: skip
        sharded = DPLogisticRegression(**params).fit(rows)
        assert rows.n_chunks == 4  # the user's rows outlive the fit
        assert repr(rows).endswith(", reread)" if reread else ", spilled)")
    assert_same_fit(local, sharded, IN_PROCESS)


def test_a_truncated_file_of_a_dataset_is_named(tmp_path):
    X, y = raw_data(11)
    paths = parquet_parts(tmp_path, X, y, "y")
    paths[2].write_bytes(paths[2].read_bytes()[:-100])  # the footer is lost
    with pytest.raises(DataError, match=r"chunk 2 \(file '.*part2\.parquet'\)"):
        ShardedRows.from_files(paths, target="y")


def test_ranges_read_from_the_data_warn_as_in_memory():
    X, y = raw_data(6)
    params = {"epsilon": 1.0, "random_state": 7, "feature_bounds": "data", "target_bounds": "data",
              "solver": "dp-agd"}  # fmt: skip
    with pytest.warns(PrivacyLeakWarning):
        local = DPLinearRegression(**params).fit(X, y)
    with pytest.warns(PrivacyLeakWarning):
        sharded = DPLinearRegression(**params).fit(*chunked(X, y))
    np.testing.assert_array_equal(sharded.scaling_.low, X.min(axis=0))
    np.testing.assert_array_equal(sharded.scaling_.high, X.max(axis=0))
    assert_same_fit(local, sharded, IN_PROCESS)
    assert not sharded.privacy_report_.guarantee


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"solver": "dp-cd"}, "solver='dp-cd'.* cannot fit records in row chunks"),
        ({"solver": "adassp"}, "solver='adassp'.* cannot fit records in row chunks"),
        ({"epsilon": np.inf}, "epsilon=inf.* in memory"),
    ],
)
def test_what_cannot_run_on_chunks_is_refused_before_any_charge(params, message):
    X, y = raw_data(7)
    budget = PrivacyBudget(10.0, 1e-5)
    model = DPLinearRegression(**{"epsilon": 1.0, "budget": budget, **params})
    with pytest.raises(ValueError, match=message):
        model.fit(*chunked(X, y))
    assert len(budget.charges) == 0 and not hasattr(model, "coef_")


def test_a_sharded_rows_holds_its_targets():
    X, y = raw_data(8)
    with ShardedRows.from_array(X, y, chunks=ROWS) as rows:
        with pytest.raises(ValueError, match="pass y=None"):
            DPLinearRegression(epsilon=1.0).fit(rows, y)
        with pytest.raises(Exception, match="task='classification'"):
            DPLogisticRegression(epsilon=1.0, classes=[0, 1]).fit(rows)


def test_a_sharded_rows_without_public_classes_is_refused_before_any_charge():
    """Its chunks hold the labels they were loaded with, read from the data."""
    X, y = raw_data(8, classes=["neg", "pos"])
    budget = PrivacyBudget(10.0, 1e-3)
    with ShardedRows.from_array(X, y, chunks=ROWS, task="classification") as rows:
        with pytest.raises(TargetError, match="cannot select privately: give the public"):
            DPLogisticRegression(epsilon=1.0, budget=budget).fit(rows)
        assert budget.charges == ()
        model = DPLogisticRegression(epsilon=1.0, budget=budget, classes=["neg", "pos"])
        assert model.fit(rows).classes_.tolist() == ["neg", "pos"]


def test_dask_records_that_the_chunks_refuse_are_refused_before_the_label_charge():
    X, y = raw_data(9, classes=["neg", "pos"])
    X[234, 1] = np.nan
    budget = PrivacyBudget(10.0, 1e-3)
    with pytest.raises(ValueError, match="row 234"):
        DPLogisticRegression(epsilon=1.0, budget=budget).fit(*chunked(X, y))
    assert budget.charges == ()


# --- on a LocalCluster ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def client():
    with local_client() as client:
        yield client


def test_a_dask_array_is_fitted_on_the_workers_in_scope(client):
    X, y = raw_data(9, ["no", "yes"])
    params = {"epsilon": 1.0, "random_state": 8}
    local = DPLogisticRegression(**params, solver="dp-agd").fit(X, y)
    sharded = DPLogisticRegression(**params).fit(*chunked(X, y))
    assert_same_fit(local, sharded, "data-parallel on 4 row chunks across 2 Dask workers")


def test_a_worker_lost_mid_fit_is_a_clear_error_after_an_honest_charge(client, monkeypatch):
    X, y = raw_data(10)
    budget = PrivacyBudget(10.0, 1e-5)
    model = DPLinearRegression(epsilon=1.0, budget=budget, random_state=9, solver="dp-agd")
    real_call = ShardedRows.call
    calls = []

    def call(self, op, args=(), **options):
        calls.append(options.get("iteration"))
        if options.get("iteration") == 2 and calls.count(2) == 1:
            kill_worker(client, self.placement[1])
        return real_call(self, op, args, **options)

    monkeypatch.setattr(ShardedRows, "call", call)
    with pytest.raises(ChunkLostError) as caught:
        model.fit(*chunked(X, y))
    message = str(caught.value)
    assert "iteration 2" in message and "No model is returned" in message
    assert "charged before training for the whole plan" in message
    (charge,) = budget.charges  # the fit's one plan, charged once before training
    assert charge.plan.neighbouring == "replace_one" and budget.spent() <= 1.0 + 1e-9
    assert not hasattr(model, "coef_")
    monkeypatch.setattr(ShardedRows, "call", real_call)
    cluster_workers(client)  # the nanny restarts the worker: the next fit runs
    refit = DPLinearRegression(epsilon=1.0, random_state=9, solver="dp-agd").fit(*chunked(X, y))
    assert refit.privacy_report_.execution.endswith("across 2 Dask workers")


def test_a_target_of_one_class_on_the_chunks_is_refused_as_in_memory():
    X, _ = raw_data(4)
    frame = da.from_array(X, chunks=(X.shape[0] // 4, X.shape[1]))
    target = da.from_array(np.ones(X.shape[0]), chunks=X.shape[0] // 4)
    with pytest.raises(TargetError, match=r"only one class \[1.0\] on the chunks"):
        DPLogisticRegression(epsilon=1.0).fit(frame, target)


def test_a_dask_data_frame_of_unnamed_columns_and_one_of_repeated_names():
    """Integer column names are no feature names, at fit as at predict (no warning on the
    frame itself); two columns of one name are refused before anything is read."""
    X, y = raw_data(4)
    frame = dd.from_pandas(pd.DataFrame(X), npartitions=4)
    target = dd.from_pandas(pd.Series(y, name="y"), npartitions=4)
    model = DPLinearRegression(epsilon=1.0, random_state=0).fit(frame, target)
    assert getattr(model, "feature_names_in_", None) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(frame)
    named = dd.from_pandas(pd.DataFrame(X, columns=["a"] * X.shape[1]), npartitions=4)
    with pytest.raises(DataError, match="several columns named 'a'"):
        DPLinearRegression(epsilon=1.0).fit(named, target)
