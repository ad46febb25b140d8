"""Small problems and seeds shared by the solver tests."""

import contextlib
import logging
import os
import signal
import time
import zlib

import numpy as np
import pytest
import scipy.sparse as sp

from dpglm.privacy.releases import Release


def seed_of(*parts):
    """A seed derived from the test's own description, stable across runs."""
    return zlib.crc32(repr(parts).encode())


def issue_problem(n, d=100, nonzeros=8, seed=0):
    """The vertical fit's issue problem: columns uniform on [-1, 1], ``nonzeros`` non-zeros of
    magnitude in [1, 3], noise 0.5; ``((X, y), (X_test, y_test), w)``, 20% held out."""
    rng = np.random.default_rng(seed)
    total = n + n // 4
    X = rng.uniform(-1.0, 1.0, (total, d))
    w = np.zeros(d)
    support = rng.choice(d, nonzeros, replace=False)
    w[support] = rng.choice([-1.0, 1.0], nonzeros) * rng.uniform(1.0, 3.0, nonzeros)
    y = X @ w + 0.5 * rng.standard_normal(total)
    return (X[:n], y[:n]), (X[n:], y[n:]), w


def r2(X, y, coef):
    """Held-out coefficient of determination of a linear model without intercept."""
    return 1.0 - np.sum((y - X @ coef) ** 2) / np.sum((y - y.mean()) ** 2)


def make_data(seed, n=300, p=8, *, classification=False, sparse=False, density=0.4):
    """Features in [-1, 1] (so ``feature_bounds=1`` is a true bound), a sparse truth."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, p)) * rng.uniform(0.3, 1.0, p)
    if sparse:
        X[rng.random((n, p)) >= density] = 0.0
        X[rng.integers(n), :] = 0.5  # no empty column
    w = rng.standard_normal(p) * (rng.random(p) < 0.6)
    margin = X @ w + 0.4
    if classification:
        y = np.where(margin + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    else:
        y = margin + 0.2 * rng.standard_normal(n)
    return (sp.csc_matrix(X) if sparse else X), y


def with_less_noise(monkeypatch, kinds=None, factor=0.5):
    """Every release of the event ``kinds`` (all when None) runs ``factor`` times its noise.

    :meth:`Release.scale <dpglm.privacy.releases.Release.scale>` is patched, the one
    place where any noise of a fit gets its scale, while the report still claims the
    calibrated epsilon: the bug audits exist to catch. A solver whose noise bypassed
    the release would keep its full noise, and its broken variant would not be caught.
    """
    real = Release.scale

    def scale(self, *factors, over=None):
        value = real(self, *factors, over=over)
        return value * factor if kinds is None or self.event.kind in kinds else value

    monkeypatch.setattr(Release, "scale", scale)


def judge_mu_audit(bound, mu_claim, variant, power):
    """A correct release is not refuted and the audit has ``power``; half noise is caught."""
    if variant == "correct":
        assert not bound.exceeds(mu_claim), f"correct release refuted: {bound}"
        assert bound.mu > power * mu_claim, f"audit without power: {bound}"
    else:
        assert bound.exceeds(mu_claim), f"half noise not caught: {bound} <= {mu_claim:.4f}"


#: how long a cluster test waits for the cluster to reach a state (workers up, a killed one
#: dropped, actors freed): generous, for a machine loaded by other work. The waits poll the
#: cluster until the state holds; none asserts how fast it came
CLUSTER_TIMEOUT = 300.0


def wait_until(condition, what, timeout=CLUSTER_TIMEOUT):
    """Poll ``condition()`` until it is true; if it is not after ``timeout`` seconds, fail
    with ``what()``, the state it was waiting on."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what()}, still after {timeout:g} s")
        time.sleep(0.05)


def cluster_workers(client, n=2, timeout=CLUSTER_TIMEOUT):
    """The sorted addresses of the cluster's workers, once the scheduler has exactly ``n``.

    Asked of the scheduler (``Client.nthreads``), never read from
    ``Client.scheduler_info()``: that returns the client's cache, which its periodic
    refresh (every 2 s) can replace at any moment with a summary listing no worker.
    """
    client.wait_for_workers(n, timeout=timeout)
    listed = []

    def exactly_n():
        listed[:] = sorted(client.nthreads())
        return len(listed) == n

    wait_until(exactly_n, lambda: f"the scheduler lists {listed}, not {n} workers", timeout)
    return list(listed)


def kill_worker(client, address, timeout=CLUSTER_TIMEOUT):
    """SIGKILL the worker process at ``address`` and wait until the scheduler drops it."""
    pid = client.run(os.getpid, workers=[address])[address]
    os.kill(pid, signal.SIGKILL)
    wait_until(
        lambda: address not in client.nthreads(),
        lambda: f"worker {address} (pid {pid}) is listed after SIGKILL",
        timeout,
    )


def actor_indices(client, index_of):
    """``{worker address: sorted index_of(actor) of every actor it runs}``, asked of each
    worker itself: where the parties or chunks really are."""

    def indices(dask_worker):
        return sorted(index_of(actor) for actor in dask_worker.state.actors.values())

    return client.run(indices)


@contextlib.contextmanager
def local_client(workers=2):
    """A client of a real ``distributed.LocalCluster``: worker processes on loopback, one
    thread each; the test is skipped where dask.distributed is not installed. The workers
    are up and listed by the scheduler before the client is handed out."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=logging.CRITICAL,
    )
    client = distributed.Client(cluster)
    try:
        cluster_workers(client, workers)
        yield client
    finally:
        client.close()
        cluster.close()
