"""The :class:`Dataset` every loader returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from dpglm.data.labels import BinaryLabels, ClassLabels
from dpglm.data.layout import as_layout, nearest_layout, sparse_matrix
from dpglm.data.target import TASKS, check_task
from dpglm.exceptions import ShapeMismatchError


@dataclass(frozen=True, eq=False, repr=False)
class Dataset:
    """Features, target and what is known about them, ready for the solvers.

    Fields cannot be reassigned (use :func:`dataclasses.replace`); the arrays
    are not copied, so do not modify them in place.

    Parameters
    ----------
    X : ndarray, scipy.sparse.csc_matrix or csr_matrix of shape (n_samples, n_features)
        float64 features in one of the two layouts solvers read: a Fortran- or
        C-ordered array, or a CSC or CSR matrix with sorted indices and no
        duplicate entries. Other numeric input is converted to columns
        (Fortran order or CSC; see :func:`dpglm.data.layout.nearest_layout`);
        values are not validated here, which :func:`dpglm.data.load` does.
    y : ndarray of float64, shape (n_samples,)
        The target (regression) or its codes (classification: -1 / +1 for
        two classes, ``0, ..., K-1`` for more).
    task : {"regression", "classification"}
    labels : ClassLabels or None
        The label mapping; required for classification, None for regression.
    feature_names : list of str, optional
        Defaults to ``["x0", "x1", ...]``.
    target_name : str or None
    source : str
        Short description of where the data came from (file name, "numpy array").
    coef_true : ndarray of shape (n_features,) or None
        The coefficients that generated the data (synthetic datasets only).

    Attributes
    ----------
    classes : ndarray of shape (2,) or None
        The original labels: ``classes[0]`` is encoded -1, ``classes[1]`` +1.
    n_samples, n_features : int

    Examples
    --------
    >>> import numpy as np
    >>> ds = Dataset(
    ...     np.eye(2),
    ...     np.array([-1.0, 1.0]),
    ...     "classification",
    ...     labels=BinaryLabels(["ham", "spam"]),
    ... )
    >>> ds
    Dataset(source='numpy array', task='classification', n_samples=2, n_features=2, classes=['ham', 'spam'])
    >>> ds.feature_names
    ['x0', 'x1']
    >>> ds.decode(np.array([1.0, -1.0]))
    array(['spam', 'ham'], dtype='<U4')
    """  # noqa: E501

    X: Any
    y: np.ndarray
    task: str = "regression"
    labels: ClassLabels | None = None
    feature_names: list[str] | None = None
    target_name: str | None = None
    source: str = "numpy array"
    coef_true: np.ndarray | None = None

    def __post_init__(self) -> None:
        check_task(self.task)
        X = as_layout(self.X, nearest_layout(self.X))
        if sp.issparse(X):
            X = sparse_matrix(X)
        object.__setattr__(self, "X", X)
        n_samples, n_features = X.shape
        y = np.asarray(self.y, dtype=np.float64)
        if y.shape != (n_samples,):
            raise ShapeMismatchError(
                f"y must have shape ({n_samples},) to match X with {n_samples} rows, "
                f"got shape {y.shape}"
            )
        object.__setattr__(self, "y", y)
        self._check_labels()
        names = self.feature_names
        names = [f"x{j}" for j in range(n_features)] if names is None else list(names)
        if len(names) != n_features:
            raise ShapeMismatchError(f"{len(names)} feature names given for {n_features} features")
        object.__setattr__(self, "feature_names", names)
        if self.coef_true is not None:
            coef = np.asarray(self.coef_true, dtype=np.float64)
            if coef.shape != (n_features,):
                raise ShapeMismatchError(
                    f"coef_true must have shape ({n_features},), got {coef.shape}"
                )
            object.__setattr__(self, "coef_true", coef)

    def _check_labels(self) -> None:
        if self.task == "regression":
            if self.labels is not None:
                raise ValueError("a regression dataset has no labels; pass labels=None")
            return
        if not isinstance(self.labels, ClassLabels):
            raise ValueError(f"task {TASKS[1]!r} needs labels=ClassLabels(...) or BinaryLabels")
        if isinstance(self.labels, BinaryLabels):
            if not np.all(np.abs(self.y) == 1.0):
                raise ValueError("a binary classification dataset needs y in {-1, +1}")
        elif not np.all(np.isin(self.y, np.arange(self.labels.n_classes))):
            raise ValueError(
                f"a classification dataset of {self.labels.n_classes} classes needs y in "
                f"0, ..., {self.labels.n_classes - 1}"
            )

    @property
    def n_samples(self) -> int:
        """Number of rows of ``X``."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of columns of ``X``."""
        return int(self.X.shape[1])

    @property
    def classes(self) -> np.ndarray | None:
        """The two original labels (classification), or None (regression)."""
        return None if self.labels is None else self.labels.classes

    def decode(self, y_pm1: Any) -> np.ndarray:
        """Map -1 / +1 predictions back to the original labels.

        Raises
        ------
        ValueError
            For a regression dataset, or codes other than -1 / +1.

        Examples
        --------
        >>> import numpy as np
        >>> ds = Dataset(
        ...     np.ones((2, 1)),
        ...     np.array([1.0, -1.0]),
        ...     "classification",
        ...     labels=BinaryLabels([0, 1]),
        ... )
        >>> ds.decode([1, 1, -1])
        array([1, 1, 0])
        """
        if self.labels is None:
            raise ValueError("decode needs a classification dataset; this one is regression")
        return self.labels.decode(y_pm1)

    def __repr__(self) -> str:
        parts = [
            f"source={self.source!r}",
            f"task={self.task!r}",
            f"n_samples={self.n_samples}",
            f"n_features={self.n_features}",
        ]
        if sp.issparse(self.X):
            parts.append(f"sparse=True, nnz={self.X.nnz}")
        if self.labels is not None:
            parts.append(f"classes={[c.item() for c in self.labels.classes]}")
        return f"Dataset({', '.join(parts)})"
