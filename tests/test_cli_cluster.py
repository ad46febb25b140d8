"""``dpglm fit --workers N`` or ``--cluster ADDRESS``: a dataset fitted data-parallel.

The data is a real directory of Parquet files, each read by the worker that keeps its
chunk; the cluster a real ``distributed.LocalCluster`` (started by ``--workers``, or
the test's own, reached by ``--cluster``). The saved model must be the in-memory fit's
of the same records with the same solver and seed, its report must say where it ran,
and a worker lost mid-fit must be a one-line error that says what the ledger spent.
"""

import json
import re

import numpy as np
import pandas as pd
import pytest

from dpglm.cli import main
from dpglm.data import load
from dpglm.distributed import ShardedRows
from dpglm.estimators import DPLogisticRegression, load_model
from solver_problems import cluster_workers, kill_worker, local_client

pytest.importorskip("distributed")

FILES, ROWS, P = 3, 2000, 4


@pytest.fixture
def parts(tmp_path):
    """A directory of three Parquet files, raw-scale columns and text labels."""
    rng = np.random.default_rng(0)
    folder = tmp_path / "parts"
    folder.mkdir()
    for k in range(FILES):
        X = rng.uniform(0, 1, (ROWS, P)) * np.array([1.0, 10.0, 100.0, 1000.0])
        frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(P)])
        frame["label"] = np.where(X[:, 0] * 3 - X[:, 1] / 10 > 0.5, "yes", "no")
        frame.to_parquet(folder / f"part-{k}.parquet")
    return folder


def call(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def fit_args(parts, output, *more, classes=("--classes", "no,yes")):
    """A cluster fit of the logistic model, given the public label set (the workers read
    each file's labels: a fit there cannot select them privately)."""
    return ["fit", parts, "--model", "logistic", "--target", "label", "--epsilon", "1",
            "--seed", "3", "-o", output, "-q", *classes, *more]  # fmt: skip


def test_fit_on_a_local_cluster_saves_the_in_memory_fit(capsys, parts, tmp_path):
    output = tmp_path / "model.json"
    status, out, err = call(capsys, *fit_args(parts, output, "--workers", "2"))
    assert status == 0, err
    assert "solver dp-agd" in out and "data-parallel on 3 row chunks across 2 Dask workers" in out
    model = load_model(output)
    assert list(model.feature_names_in_) == [f"c{j}" for j in range(P)]
    assert model.privacy_report_.execution == "data-parallel on 3 row chunks across 2 Dask workers"
    whole = load(parts, target="label", task="classification")
    # the chunks hold the public label set they were loaded with, as the in-memory fit
    assert any("given as classes (public" in a for a in model.privacy_report_.assumptions)
    local = DPLogisticRegression(
        epsilon=1.0, random_state=3, solver="dp-agd", classes=["no", "yes"]
    )
    local.fit(whole.X, whole.decode(whole.y))
    np.testing.assert_allclose(model.coef_, local.coef_, rtol=1e-10, atol=1e-12)
    assert json.loads(output.read_text())["classes"] == ["no", "yes"]


def test_what_a_cluster_fit_cannot_do_is_refused(capsys, parts, tmp_path):
    output = tmp_path / "model.json"
    status, _, err = call(capsys, *fit_args(parts, output, "--workers", "2", "--test-size", ".2"))
    assert status == 1 and "--test-size" in err and "dpglm score" in err
    status, _, err = call(capsys, *fit_args(parts, output, "--out-of-core"))
    assert status == 2 and "--out-of-core applies to a fit on a cluster" in err
    status, _, err = call(capsys, *fit_args(parts, output, "--workers", "2", "--solver", "dp-cd"))
    assert status == 1 and "cannot fit records in row chunks" in err
    # labels read by the workers cannot be selected privately: refused before any cluster
    status, _, err = call(capsys, *fit_args(parts, output, "--workers", "2", classes=()))
    assert status == 1 and "give the public label set with --classes" in err
    assert not output.exists()


@pytest.fixture(scope="module")
def client():
    with local_client() as client:
        yield client


def test_a_worker_lost_mid_fit_says_what_the_ledger_spent(capsys, parts, tmp_path, client,
                                                          monkeypatch):  # fmt: skip
    ledger = tmp_path / "ledger.sqlite"
    assert call(capsys, "budget", "create", ledger, "--dataset", "parts", "--epsilon", "4",
                "--delta", "1e-5")[0] == 0  # fmt: skip
    real_call = ShardedRows.call
    calls = []

    def call_and_kill(self, op, args=(), **options):
        calls.append(options.get("iteration"))
        if options.get("iteration") == 1 and calls.count(1) == 1:
            kill_worker(client, self.placement[0])
        return real_call(self, op, args, **options)

    monkeypatch.setattr(ShardedRows, "call", call_and_kill)
    output = tmp_path / "model.json"
    address = client.scheduler.address
    status, _, err = call(capsys, *fit_args(parts, output, "--cluster", address, "--out-of-core",
                                            "--budget", ledger, "--dataset", "parts"))  # fmt: skip
    assert status == 1 and not output.exists()
    assert "were lost at iteration 1" in err or "was lost at iteration 1" in err
    # the whole plan was charged before training: the ledger's epsilon (at its own delta)
    spent = re.search(r"the ledger's dataset 'parts' has spent epsilon ([0-9.]+) of 4", err)
    assert spent is not None and 0.5 < float(spent.group(1)) <= 1.0
    monkeypatch.setattr(ShardedRows, "call", real_call)
    cluster_workers(client)  # the nanny restarts the worker
    status, out, _ = call(capsys, "budget", "show", ledger, "--dataset", "parts")
    assert status == 0 and spent.group(1) in out
