"""The synthetic problems of the DP-GCD paper (Mangold et al., 2023, section 5)."""

from __future__ import annotations

from typing import Any

import numpy as np

from dpglm.data.dataset import Dataset
from dpglm.data.labels import BinaryLabels

SYNTHETIC_DATASETS = ("log1", "log2", "square")

# name -> (n_samples, n_features, sigma of the log-normal coefficients)
_SHAPES = {"log1": (1000, 100, 1.0), "log2": (1000, 100, 2.0), "square": (1000, 1000, 1.0)}

_SQUARE_SUPPORT = 10


def make_synthetic(name: str, *, random_state: Any = None) -> Dataset:
    """Generate one of the synthetic problems ``log1``, ``log2`` or ``square``.

    All randomness comes from ``rng = numpy.random.default_rng(random_state)``,
    drawn in this order:

    1. ``X``, of shape ``(n, p)``, with i.i.d. standard normal entries, drawn as
       ``rng.standard_normal((p, n)).T`` (column by column, so that ``X`` is
       Fortran-ordered without a copy). Each column has unit variance in
       distribution; columns are *not* re-standardised afterwards.
    2. The true coefficients ``coef_true`` (``w_true``):

       - ``log1`` / ``log2`` (n = 1000, p = 100):
         ``rng.lognormal(mean=0, sigma=s, size=p)`` with ``s = 1`` for log1 and
         ``s = 2`` for log2. All coefficients are positive; with ``s = 2`` a
         few of them dominate ("quasi-sparse").
       - ``square`` (n = p = 1000): ``support = rng.choice(p, 10, replace=False)``,
         then magnitudes ``rng.lognormal(0, 1, size=10)``, then signs
         ``rng.choice([-1.0, 1.0], size=10)``; the other 990 entries are 0.
    3. The noise ``eps = rng.standard_normal(n)``.

    Targets: for log1 / log2, ``y = +1`` where ``X @ coef_true + eps >= 0`` and
    ``-1`` elsewhere (task ``"classification"``, classes ``[-1, 1]``; the paper
    trains logistic regression on them). For square,
    ``y = X @ coef_true + eps`` (task ``"regression"``; the paper's LASSO
    problem).

    The paper states the shapes, the normal design with unit-variance
    columns, the log-normal parameters and the 10 non-zeros of square. It is
    silent on the following, which are our reading: the noise is standard
    normal; log1 / log2 labels are the sign of the noisy linear model (ties at
    0 go to +1); square's non-zeros sit at uniformly random positions, with
    log-normal(0, 1) magnitudes and uniformly random signs.

    Parameters
    ----------
    name : {"log1", "log2", "square"}
    random_state : None, int, array of ints, SeedSequence or Generator
        Seed for ``numpy.random.default_rng``; the same seed gives the same
        data. A Generator is used (and advanced) as it is.

    Returns
    -------
    Dataset
        With ``coef_true`` set, feature names ``x0, x1, ...`` and target name
        ``"y"``.

    Examples
    --------
    >>> ds = make_synthetic("log1", random_state=0)
    >>> ds.n_samples, ds.n_features, ds.task, ds.classes
    (1000, 100, 'classification', array([-1,  1]))
    >>> int((make_synthetic("square", random_state=0).coef_true != 0).sum())
    10
    """
    if name not in _SHAPES:
        raise ValueError(f"unknown synthetic dataset {name!r}; available: {SYNTHETIC_DATASETS}")
    n, p, sigma = _SHAPES[name]
    rng = np.random.default_rng(random_state)
    X = rng.standard_normal((p, n)).T
    if name == "square":
        coef = _sparse_coefficients(rng, p)
        eps = rng.standard_normal(n)
        return Dataset(
            X,
            X @ coef + eps,
            "regression",
            target_name="y",
            source="synthetic square",
            coef_true=coef,
        )
    coef = rng.lognormal(mean=0.0, sigma=sigma, size=p)
    eps = rng.standard_normal(n)
    y = np.where(X @ coef + eps >= 0.0, 1.0, -1.0)
    return Dataset(
        X,
        y,
        "classification",
        labels=BinaryLabels([-1, 1]),
        target_name="y",
        source=f"synthetic {name}",
        coef_true=coef,
    )


def _sparse_coefficients(rng: np.random.Generator, p: int) -> np.ndarray:
    support = rng.choice(p, size=_SQUARE_SUPPORT, replace=False)
    magnitudes = rng.lognormal(mean=0.0, sigma=1.0, size=_SQUARE_SUPPORT)
    signs = rng.choice([-1.0, 1.0], size=_SQUARE_SUPPORT)
    coef = np.zeros(p)
    coef[support] = magnitudes * signs
    return coef
