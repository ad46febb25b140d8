"""Small real datasets that ship with scikit-learn (no download)."""

from __future__ import annotations

from dataclasses import replace

from dpglm.data.dataset import Dataset
from dpglm.data.loader import load

BUNDLED_DATASETS = ("breast_cancer", "diabetes")


def load_bundled(name: str) -> Dataset:
    """Load a dataset bundled with scikit-learn, as a validated :class:`Dataset`.

    - ``"breast_cancer"``: Wisconsin diagnostic breast cancer,
      569 samples x 30 features (``sklearn.datasets.load_breast_cancer``),
      classification. Labels are the diagnoses: ``classes`` is
      ``['benign', 'malignant']``, so malignant (212 samples) is +1 and
      benign (357) is -1. Features are raw measurements on very different
      scales.
    - ``"diabetes"``: 442 samples x 10 features
      (``sklearn.datasets.load_diabetes``), regression; the target is a
      measure of disease progression one year after baseline. The features
      are the ones scikit-learn ships: centred and scaled by their standard
      deviation times sqrt(442) by the data's publishers.

    Parameters
    ----------
    name : {"breast_cancer", "diabetes"}

    Raises
    ------
    ValueError
        Unknown name; the message lists :data:`BUNDLED_DATASETS`.

    Examples
    --------
    >>> ds = load_bundled("breast_cancer")
    >>> ds.n_samples, ds.n_features, ds.classes.tolist()
    (569, 30, ['benign', 'malignant'])
    >>> load_bundled("diabetes").feature_names[:3]
    ['age', 'sex', 'bmi']
    """
    from sklearn import datasets

    if name == "breast_cancer":
        raw = datasets.load_breast_cancer()
        ds = load(raw.data, raw.target_names[raw.target], task="classification")
        target_name = "diagnosis"
    elif name == "diabetes":
        raw = datasets.load_diabetes()
        ds = load(raw.data, raw.target)
        target_name = "disease_progression"
    else:
        raise ValueError(f"unknown bundled dataset {name!r}; available: {BUNDLED_DATASETS}")
    return replace(
        ds,
        feature_names=[str(f) for f in raw.feature_names],
        target_name=target_name,
        source=f"scikit-learn {name}",
    )
