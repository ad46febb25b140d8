"""Data-parallel DP-GCD, DP-AGD, DP-GD, DP-FW and DP-SGD on row chunks: the in-memory fit anywhere.

A :class:`ShardedProblem` over the row chunks of a ``dask.array`` (dense or
``scipy.sparse`` chunks) or of a list of files must give the in-memory fit of
the same records for the same seed, up to summation order (1e-10 relative),
with the same selections and the same privacy report. The cluster is a real
``LocalCluster`` (two worker processes, one thread each, on loopback). Chunks
return clipped sums only, counted in ``uplink``; a worker lost mid-run names
the chunk, its worker and the iteration, and no model is returned.
"""

import os

import numpy as np
import pytest
import scipy.sparse as sp

from dpglm.data import load
from dpglm.distributed import ChunkLostError, ShardedProblem, ShardedRows
from dpglm.distributed.sharded import ChunkFailedError, chunk_op
from dpglm.exceptions import (
    NonFiniteValueError,
    PrivacyLeakWarning,
    TargetError,
    UnreadableFileError,
)
from dpglm.penalties import L1, L2
from dpglm.privacy.budget import PrivacyBudget
from dpglm.problem import Problem
from dpglm.solvers.dp_agd import dp_agd
from dpglm.solvers.dp_cd import dp_cd
from dpglm.solvers.dp_fw import dp_bcfw, dp_fw
from dpglm.solvers.dp_gcd import dp_gcd
from dpglm.solvers.dp_gd import dp_gd
from dpglm.solvers.dp_scd import dp_scd
from dpglm.solvers.dp_sgd import dp_sgd
from solver_problems import (
    actor_indices,
    cluster_workers,
    kill_worker,
    local_client,
    make_data,
    seed_of,
    wait_until,
)

DELTA = 1e-6
RTOL = 1e-10

#: solver -> (datafit, penalty, intercept, classification, fit); each fit reads its
#: problem and nothing else, with a fixed seed
CASES = {
    "dp-gcd": (
        "squared", L1(0.02), True, False,
        lambda prob: dp_gcd(
            prob, epsilon=2.0, delta=DELTA, n_iter=30, clip=1.0, feature_bounds=1.0,
            random_state=5,
        ),
    ),
    "dp-gcd-private-M": (
        "logistic", None, True, True,
        lambda prob: dp_gcd(
            prob, epsilon=2.0, delta=DELTA, n_iter=20, clip=1.0, feature_bounds=1.0,
            smoothness="private", random_state=5,
        ),
    ),
    "dp-agd": (
        "logistic", L2(0.01), True, True,
        lambda prob: dp_agd(prob, epsilon=2.0, delta=DELTA, max_iter=40, random_state=5),
    ),
    "dp-gd": (
        "logistic", L2(0.01), True, True,
        lambda prob: dp_gd(prob, epsilon=2.0, delta=DELTA, n_iter=20, step=1.0, random_state=5),
    ),
    "dp-fw": (
        "squared", None, False, False,
        lambda prob: dp_fw(
            prob, epsilon=2.0, delta=DELTA, radius=2.0, n_iter=30, clip=1.0, random_state=5
        ),
    ),
    "dp-bcfw": (
        "squared", None, False, False,
        lambda prob: dp_bcfw(
            prob, epsilon=2.0, delta=DELTA, radius=1.0, blocks=np.array([0, 1, 0, 1, 2, 2]),
            sampling="uniform", n_iter=30, random_state=5,
        ),
    ),
    "dp-sgd": (
        "logistic", L1(0.001), True, True,
        lambda prob: dp_sgd(
            prob, epsilon=2.0, delta=DELTA, passes=2, batch_size=40, step=0.5, random_state=5
        ),
    ),
}  # fmt: skip
ON_CLUSTER = ["dp-gcd", "dp-agd", "dp-fw", "dp-sgd"]
N, P, ROWS = 360, 6, 100  # 4 chunks: 100, 100, 100, 60


def data(solver, sparse):
    _, _, _, classification, _ = CASES[solver]
    return make_data(seed_of("data-parallel", classification, sparse), n=N, p=P,
                     classification=classification, sparse=sparse)  # fmt: skip


def fits(solver, X, y, rows):
    """The in-memory fit and the fit on ``rows`` (the same records), same seed."""
    datafit, penalty, intercept, _, fit = CASES[solver]
    local = fit(Problem(X, y, datafit, penalty, fit_intercept=intercept))
    remote = fit(ShardedProblem(rows, datafit, penalty, fit_intercept=intercept))
    return local, remote


def assert_same_fit(local, remote):
    """Coefficients to 1e-10 relative, the same discrete choices, the same privacy report."""
    scale = np.max(np.abs(local.theta))
    assert scale > 0
    assert np.max(np.abs(remote.theta - local.theta)) <= RTOL * scale
    for key in ("selected", "vertices"):
        if key in local.info:
            np.testing.assert_array_equal(remote.info[key], local.info[key])
    assert remote.n_iter == local.n_iter and remote.report == local.report
    np.testing.assert_allclose(remote.history.thetas, local.history.thetas, rtol=0,
                               atol=RTOL * scale)  # fmt: skip


def assert_sums_only(rows, fit, labels_checked):
    """What came back from each chunk: sums of its records (a few floats a step), nothing else.

    A chunk returns ``n_coords`` floats per gradient (``n_features`` per FW block,
    the block's width), ``K + 1`` per DP-AGD selection, ``n_features`` column sums
    for the private smoothness estimate, and one float for the label check.
    """
    solver, n_coords = fit.info["solver"], fit.theta.size
    floats = rows.uplink // 8
    assert (rows.uplink % 8 == 0).all() and (floats > 0).all()
    floats = floats - int(labels_checked)  # -1/+1 labels: the first bad row, if any
    if solver == "dp-agd":
        k = fit.info["candidates"] + 1
        steps = fit.info["schedule"]
        assert (floats == sum(n_coords + k * len(r.selection_rho) for r in steps)).all()
    elif solver == "dp-gd":  # one clipped gradient sum a step
        assert (floats == fit.n_iter * n_coords).all()
    elif solver in ("DP-FW", "DP-BCFW"):
        widths = np.bincount(fit.info["blocks"])
        assert (floats == widths[fit.info["blocks"][fit.info["vertices"][:, 0]]].sum()).all()
    elif solver == "dp-gcd":
        if fit.info["smoothness_source"] == "private":
            floats = floats - fit.coef.size
        assert (floats % n_coords == 0).all() and (floats <= (fit.n_iter + 1) * n_coords).all()
        assert (floats == floats[0]).all()  # every chunk is asked every time
    else:  # DP-SGD: chunks without a sampled record are not asked
        assert (floats % n_coords == 0).all() and (floats <= fit.n_iter * n_coords).all()


# --- in this process: the chunks' code, resident and spilled ---------------------------------


@pytest.mark.parametrize("resident", [True, False], ids=["resident", "spilled"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("solver", list(CASES))
def test_chunks_in_this_process_give_the_in_memory_fit(solver, sparse, resident):
    X, y = data(solver, sparse)
    with ShardedRows.from_array(X, y, chunks=ROWS, resident=resident) as rows:
        local, remote = fits(solver, X, y, rows)
        assert_same_fit(local, remote)
        assert_sums_only(rows, remote, CASES[solver][3])
        if not resident:  # the rows are mapped for each operation only
            assert all(chunk._X is None and chunk._cached is None for chunk in rows._chunks)
            folders = [chunk._directory for chunk in rows._chunks]
            assert all(folder.exists() for folder in folders)
    if not resident:
        assert not any(folder.exists() for folder in folders)


def test_the_problem_sums_on_its_chunks_and_keeps_its_records_there():
    X, y = make_data(seed_of("sums"), n=50, p=4, sparse=True)
    theta = np.array([0.5, -1.0, 0.0, 2.0, 0.3])
    local = Problem(X, y, "huber", fit_intercept=True)
    with ShardedRows.from_array(X, y, chunks=[10, 25, 15]) as rows:
        prob = ShardedProblem(rows, "huber", fit_intercept=True)
        assert prob.objective(theta) == pytest.approx(local.objective(theta), rel=1e-13)
        np.testing.assert_allclose(prob.gradient(theta), local.gradient(theta), rtol=1e-13)
        clip = np.linspace(0.05, 0.5, 5)
        np.testing.assert_allclose(
            prob.clipped_gradient(theta, clip), local.clipped_gradient(theta, clip), rtol=1e-13
        )
        for what in ("X", "rows", "y"):
            with pytest.raises(TypeError, match="stay on its row chunks"):
                getattr(prob, what)
        with pytest.raises(TypeError, match="stay on its row chunks"):
            prob.margins(theta)
        # DP-CD and DP-SCD need fresh state at every step: they stay in memory, and refuse
        # before anything is charged
        budget = PrivacyBudget(10.0, 1e-3)
        with pytest.raises(TypeError, match="DP-CD needs an in-memory Problem"):
            dp_cd(prob, epsilon=1.0, delta=DELTA, feature_bounds=1.0, budget=budget)
        ridge = ShardedProblem(rows, "squared", L2(0.1))
        with pytest.raises(TypeError, match="DP-SCD needs an in-memory Problem"):
            dp_scd(ridge, epsilon=1.0, delta=DELTA, budget=budget)
        assert not budget.charges


def test_smoothness_from_the_raw_data_warns_as_in_memory():
    X, y = make_data(seed_of("leak"), n=120, p=4)
    kwargs = {"epsilon": 1.0, "delta": DELTA, "n_iter": 8, "random_state": 2}
    with pytest.warns(PrivacyLeakWarning, match="raw data"):
        local = dp_gcd(Problem(X, y, "squared"), **kwargs)
    rows = ShardedRows.from_array(X, y, chunks=50)
    with rows, pytest.warns(PrivacyLeakWarning, match="raw data") as caught:
        remote = dp_gcd(ShardedProblem(rows, "squared"), **kwargs)
    assert [w.filename for w in caught] == [__file__]  # the caller's line, as in memory
    assert remote.report.warnings == local.report.warnings != ()
    # the leaked M_j are sums too: the reported sensitivities agree to rounding only
    assert remote.report.epsilon == local.report.epsilon
    np.testing.assert_allclose(remote.theta, local.theta, rtol=RTOL)
    np.testing.assert_array_equal(remote.info["selected"], local.info["selected"])


def test_bad_records_are_named_with_their_chunk():
    X, y = make_data(seed_of("bad"), n=30, p=3)
    X[17, 1] = np.nan
    # the row is named by its place in the whole, as the chunk is
    with pytest.raises(NonFiniteValueError, match=r"chunk 1 \(rows 10-19\):.* at row 17;"):
        ShardedRows.from_array(X, y, chunks=10)
    import dask.array as da

    with pytest.raises(NonFiniteValueError, match=r"chunk 1 \(rows 10-19\):.* at row 17;"):
        ShardedRows.from_dask_array(da.from_array(X, chunks=(10, 3)), da.from_array(y, 10))
    X[17, 1] = 0.0
    y[25] = 0.0  # not a -1/+1 label
    labels = np.where(y > np.median(y), 1.0, -1.0)
    labels[25] = 0.0
    rows = ShardedRows.from_array(X, labels, chunks=10)
    with rows, pytest.raises(TargetError, match=r"row 25 \(chunk 2, row 5 of it\)"):
        ShardedProblem(rows, "logistic")

    @chunk_op
    def broken(chunk):
        return 1 / 0

    with ShardedRows.from_array(X, y, chunks=10) as rows:
        with pytest.raises(ChunkFailedError, match=r"chunk 0 .* ZeroDivisionError"):
            rows.sum(broken)
        with pytest.raises(TypeError, match="not a chunk operation"):
            rows.sum(lambda chunk: 0.0)


def test_classification_files_must_agree_on_their_labels(tmp_path):
    X, y = make_data(seed_of("labels"), n=40, p=3, classification=True)
    words = np.where(y > 0, "yes", "no")
    paths = []
    for k, (a, e, other) in enumerate([(0, 20, False), (20, 40, False), (0, 10, True)]):
        labels = ["maybe" if other and v == "yes" else v for v in words[a:e]]
        rows = [",".join([*map(repr, X[i].tolist()), labels[i - a]]) for i in range(a, e)]
        paths.append(tmp_path / f"part{k}.csv")
        paths[-1].write_text("\n".join(["a,b,c,label", *rows]) + "\n")
    theta = np.array([0.3, -0.2, 0.1])
    with ShardedRows.from_files(paths[:2], task="classification") as rows:
        assert rows.classes == ["no", "yes"]
        prob = ShardedProblem(rows, "logistic")
        local = Problem(X, y, "logistic")
        assert prob.objective(theta) == pytest.approx(local.objective(theta), rel=1e-13)
    with pytest.raises(TargetError, match=r"chunk 2 \(file .*part2.csv'\) has labels"):
        ShardedRows.from_files(paths, task="classification")


# --- on a LocalCluster ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def client():
    with local_client() as client:
        yield client


def chunks_by_worker(client):
    """``{worker: the indices of the chunks it holds}``, asked of each worker."""
    return actor_indices(client, lambda chunk: chunk.index)


def idle_workers(client):
    """The cluster's two workers, once no chunk of an earlier test is left on them (closed
    rows' chunks are freed by the workers after ``close`` has returned)."""
    workers = cluster_workers(client)
    wait_until(
        lambda: not any(chunks_by_worker(client).values()),
        lambda: f"chunks of earlier rows are still held: {chunks_by_worker(client)}",
    )
    return workers


@pytest.mark.parametrize("sparse", [False, True], ids=["dense-chunks", "sparse-chunks"])
@pytest.mark.parametrize("solver", ON_CLUSTER)
def test_a_dask_array_on_the_cluster_gives_the_in_memory_fit(client, solver, sparse):
    da = pytest.importorskip("dask.array")
    workers = idle_workers(client)
    X, y = data(solver, sparse)
    if sparse:  # scipy.sparse blocks, targets as an array
        chunked, targets = da.from_array(sp.csr_matrix(X), chunks=(ROWS, P), asarray=False), y
    else:  # two column blocks (merged), targets as a dask array with other chunks
        chunked, targets = da.from_array(X, chunks=(ROWS, 3)), da.from_array(y, chunks=150)
    with ShardedRows.from_dask_array(chunked, targets, client=client) as rows:
        # one actor per chunk, round-robin over the workers in sorted order: what the rows
        # recorded, and where each worker says the chunks are
        assert rows.placement == [workers[0], workers[1], workers[0], workers[1]]
        assert chunks_by_worker(client) == {workers[0]: [0, 2], workers[1]: [1, 3]}
        assert rows.chunk_sizes == [100, 100, 100, 60] and rows.sparse == sparse
        local, remote = fits(solver, X, y, rows)
        assert_same_fit(local, remote)
        assert_sums_only(rows, remote, CASES[solver][3])
    wait_until(
        lambda: not any(chunks_by_worker(client).values()),
        lambda: f"the chunks outlive their rows: {chunks_by_worker(client)}",
    )


def write_csv(path, X, y):
    """A CSV file with a header; every value written exactly (``repr``)."""
    lines = [",".join([*(f"x{j}" for j in range(X.shape[1])), "y"])]
    for row, target in zip(X.tolist(), y.tolist(), strict=True):
        lines.append(",".join(repr(v) for v in (*row, target)))
    path.write_text("\n".join(lines) + "\n")


def write_libsvm(path, X, y):
    """A LIBSVM file (1-based indices, stored entries only), values written exactly."""
    X = sp.csr_matrix(X)
    lines = []
    for i in range(X.shape[0]):
        row = X[[i]]
        entries = zip(row.indices.tolist(), row.data.tolist(), strict=True)
        pairs = [f"{j + 1}:{v!r}" for j, v in entries]
        lines.append(" ".join([repr(float(y[i])), *pairs]))
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("kind", ["csv", "libsvm"])
def test_files_loaded_by_their_workers_give_the_in_memory_fit(client, tmp_path, kind):
    solver = "dp-gcd" if kind == "csv" else "dp-sgd"
    X, y = data(solver, kind == "libsvm")
    X = X.toarray() if sp.issparse(X) else X
    X[:150, -1] = 0.0  # the first file's LIBSVM lines stop short of the last feature
    paths = []
    for k, (a, e) in enumerate([(0, 150), (150, 270), (270, N)]):
        path = tmp_path / f"part{k}.{kind if kind == 'csv' else 'svm'}"
        (write_csv if kind == "csv" else write_libsvm)(path, X[a:e], y[a:e])
        paths.append(path)
    # what the workers read is what the files hold
    parts = [load(path, n_features=None if kind == "csv" else P) for path in paths]
    if kind == "csv":
        X_read = np.vstack([part.X for part in parts])
    else:
        X_read = sp.vstack([part.X for part in parts]).tocsc()
    y_read = np.concatenate([part.y for part in parts])
    # out of core: every chunk spills to its worker's disk, and is mapped per step only
    workers = idle_workers(client)
    with ShardedRows.from_files(paths, client=client, resident=False) as rows:
        assert rows.n_features == P and rows.chunk_sizes == [150, 120, 90]
        assert rows.placement == [workers[0], workers[1], workers[0]]
        assert chunks_by_worker(client) == {workers[0]: [0, 2], workers[1]: [1]}
        assert spill_files(client) == {workers[0]: [0, 2], workers[1]: [1]}
        local, remote = fits(solver, X_read, y_read, rows)
        assert_same_fit(local, remote)
        assert_sums_only(rows, remote, CASES[solver][3])
    wait_until(  # released with their chunks
        lambda: not any(spill_files(client).values()),
        lambda: f"the spill files outlive their chunks: {spill_files(client)}",
    )


def spill_files(client):
    """``{worker: the indices of the chunks with spill files in its local directory}``."""

    def spilled(dask_worker):
        import glob

        # glob skips a folder that disappears while it looks (a chunk being freed)
        files = glob.glob(os.path.join(dask_worker.local_directory, "dpglm-chunk*", "*"))
        folders = {os.path.basename(os.path.dirname(path)) for path in files}
        return sorted(int(folder.split("-")[1].removeprefix("chunk")) for folder in folders)

    return client.run(spilled)


def test_a_worker_lost_mid_run_names_the_chunk_and_the_iteration(client, monkeypatch):
    X, y = data("dp-gcd", False)
    datafit, penalty, intercept, _, _ = CASES["dp-gcd"]
    budget = PrivacyBudget(10.0, DELTA)
    kwargs = {"epsilon": 2.0, "delta": DELTA, "n_iter": 30, "clip": 1.0, "feature_bounds": 1.0,
              "random_state": 5}  # fmt: skip
    workers = idle_workers(client)
    with ShardedRows.from_array(X, y, chunks=ROWS, client=client) as rows:
        assert rows.placement == [workers[0], workers[1], workers[0], workers[1]]
        prob = ShardedProblem(rows, datafit, penalty, fit_intercept=intercept)
        real_call = ShardedRows.call
        iterations = []

        def call(self, op, args=(), **options):
            iterations.append(options.get("iteration"))
            if options.get("iteration") == 4 and len(iterations) == 5:
                kill_worker(client, self.placement[1])  # chunks 1 and 3 live there
            return real_call(self, op, args, **options)

        monkeypatch.setattr(ShardedRows, "call", call)
        with pytest.raises(ChunkLostError) as caught:
            dp_gcd(prob, budget=budget, **kwargs)
        err = caught.value
        assert (err.chunk, err.chunks, err.iteration, err.completed) == (1, (1, 3), 4, 4)
        assert err.worker == rows.placement[1] and iterations == [0, 1, 2, 3, 4]
        message = str(err)
        assert "chunks 1, 3" in message and rows.placement[1] in message
        assert "iteration 4" in message and "No model is returned" in message
        (charge,) = budget.charges  # the whole plan, charged once before training
        assert charge.plan.releases == 60
        with pytest.raises(RuntimeError, match="call restart"):
            prob.objective(np.zeros(prob.n_coords))
        monkeypatch.setattr(ShardedRows, "call", real_call)
        # the nanny restarts the worker; the rows reload on the workers present
        restarted = cluster_workers(client)
        assert workers[0] in restarted
        rows.restart()
        assert rows.placement == [restarted[0], restarted[1], restarted[0], restarted[1]]
        fit = dp_gcd(prob, **kwargs)
    local = dp_gcd(Problem(X, y, datafit, penalty, fit_intercept=intercept), **kwargs)
    assert_same_fit(local, fit)


def test_a_file_list_reads_libsvm_files_with_one_base(tmp_path):
    """Each worker reads its own file: "auto" reads them all 1-based, not each by its own
    indices (a file that happens to hold index 0 would be read shifted against the others)."""
    (tmp_path / "a.svm").write_text("1 1:2 2:1\n-1 2:3\n")
    (tmp_path / "b.svm").write_text("1 2:1\n-1 0:7 1:1\n")
    paths = [tmp_path / "a.svm", tmp_path / "b.svm"]
    with pytest.raises(UnreadableFileError, match=r"chunk 1 .*row 1 \(line 2 of b\.svm\) has "
                       r"feature index 0, but the file is read 1-based"):  # fmt: skip
        ShardedRows.from_files(paths, n_features=3)
    with ShardedRows.from_files(paths, zero_based=True, n_features=3) as rows:
        assert rows.chunk_sizes == [2, 2]
    with pytest.raises(ValueError, match="zero_based must be one of"):
        ShardedRows.from_files(paths, zero_based="yes")
