"""Small problems and seeds shared by the solver tests."""

import zlib

import numpy as np
import scipy.sparse as sp


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
