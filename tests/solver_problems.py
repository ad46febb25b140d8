"""Small problems and seeds shared by the solver tests."""

import contextlib
import logging
import zlib

import numpy as np
import pytest
import scipy.sparse as sp

from dpglm.privacy.releases import Release


def seed_of(*parts):
    """A seed derived from the test's own description, stable across runs."""
    return zlib.crc32(repr(parts).encode())


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


@contextlib.contextmanager
def local_client(workers=2):
    """A client of a real ``distributed.LocalCluster``: worker processes on loopback, one
    thread each; the test is skipped where dask.distributed is not installed."""
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
        client.wait_for_workers(workers, timeout=60)
        yield client
    finally:
        client.close()
        cluster.close()
