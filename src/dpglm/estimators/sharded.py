"""Estimators on records that stay in row chunks: Dask arrays and data frames, ShardedRows.

``fit(X, y)`` with a ``dask.array`` (row-chunked, dense or ``scipy.sparse``
blocks), a Dask data frame, or a :class:`~dpglm.distributed.ShardedRows`
(e.g. :meth:`ShardedRows.from_files <dpglm.distributed.ShardedRows.from_files>`
on a dataset's files, out of core with ``resident=False``) runs the estimator's
fit where the chunks live: each row chunk becomes one
:class:`~dpglm.distributed.sharded.Chunk`, on a worker of the
``distributed.Client`` in scope (``distributed.default_client()``), or in this
process without one. The fit is the in-memory fit, step for step:

- the same plan, calibrated and charged before any record is read;
- the same private preprocessing: each chunk counts its records in the range
  estimate's histograms, the counts are added here and released once
  (:meth:`ShardedProblem.range_counts
  <dpglm.distributed.ShardedProblem.range_counts>`); each chunk then clips
  and maps its own records with the released ranges;
- the solver, one of the data-parallel ones (DP-GCD, DP-AGD, DP-SGD; ``"auto"``
  chooses one of them), on a :class:`~dpglm.distributed.ShardedProblem`;
- the same ``coef_`` on the raw scale, and a report whose ``execution`` says
  that the fit ran data-parallel, on how many chunks and workers.

A solver that needs every record in this process (DP-CD, DP-SCD, AdaSSP) and
``epsilon=inf`` (the exact optimum, in memory) are refused before anything is
planned or charged.

Examples
--------
>>> import numpy as np
>>> import dask.array as da
>>> from dpglm.estimators import DPLinearRegression
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(0, 10, (4000, 3))
>>> y = X @ np.array([1.0, -2.0, 0.5]) + rng.normal(0, 0.5, 4000)
>>> model = DPLinearRegression(epsilon=1.0, random_state=0)
>>> model = model.fit(da.from_array(X, chunks=(1000, 3)), da.from_array(y, chunks=1000))
>>> model.privacy_report_.execution
'data-parallel on 4 row chunks, in this process'
"""

from __future__ import annotations

import numpy as np

from dpglm.data.labels import ClassLabels
from dpglm.estimators.validation import feature_names_of, is_dask
from dpglm.exceptions import ShapeMismatchError, TargetError

__all__ = ["ShardedData", "check_data_parallel", "is_sharded", "sharded_data"]


def is_sharded(X) -> bool:
    """Whether ``X`` is records in row chunks: a Dask collection or a ShardedRows.

    Decided from the type alone, without importing Dask.

    Examples
    --------
    >>> is_sharded(np.eye(2))
    False
    """
    if is_dask(X):
        return True
    return type(X).__name__ == "ShardedRows" and type(X).__module__.startswith("dpglm.")


def check_data_parallel(name: str, solver: str, shape) -> None:
    """Refuse, before anything is planned or charged, a solver that cannot run on row chunks.

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> shape = ProblemShape(100, 3, "squared", chunked=True)
    >>> check_data_parallel("DPLinearRegression", "dp-sgd", shape)
    >>> check_data_parallel("DPLinearRegression", "dp-cd", shape)
    Traceback (most recent call last):
    ...
    ValueError: DPLinearRegression(solver='dp-cd') cannot fit records in row chunks: each of its steps needs state fresh from the previous one, a round trip to the row chunks per step; use solver='auto' or one of 'dp-gcd', 'dp-sgd', 'dp-agd', or load the records in memory
    """  # noqa: E501
    from dpglm.solvers.registry import estimator_solvers, get_solver

    refusal = get_solver(solver).accepts(shape)
    if refusal is None:
        return
    # the reason, without the solver API's advice (which names functions, not estimators)
    reason = refusal.split(": ", 1)[-1].split("; ")[0]
    # the registry says which of the estimators' solvers take this shape in row chunks
    able = [s for s in estimator_solvers() if get_solver(s).accepts(shape) is None]
    raise ValueError(
        f"{name}(solver={solver!r}) cannot fit records in row chunks: {reason}; use "
        f"solver='auto' or one of {', '.join(repr(s) for s in able)}, or "
        "load the records in memory"
    )


def client_in_scope():
    """The ``distributed.Client`` in scope (``default_client()``), or None."""
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:
        return None


class ShardedData:
    """The records of a sharded fit: its row chunks, label set and feature names.

    Plays, for an estimator's fit, the part a :class:`~dpglm.data.Dataset`
    plays in memory, without holding a record: the preprocessing reads the
    ranges through it (:meth:`range_counts`) and the solver the chunks
    (:meth:`problem`).

    Attributes
    ----------
    rows : ShardedRows
    labels : ClassLabels or None
        A classifier's label set (codes on the chunks); None for a regressor.
    feature_names : ndarray of str or None
    owned : bool
        Whether the fit made the chunks (and releases them when it ends).
    """

    def __init__(self, rows, labels, feature_names, owned):
        self.rows, self.labels = rows, labels
        self.feature_names, self.owned = feature_names, owned

    @property
    def n_samples(self) -> int:
        return self.rows.n_samples

    @property
    def n_features(self) -> int:
        return self.rows.n_features

    @property
    def sparse(self) -> bool:
        return bool(self.rows.sparse)

    @property
    def execution(self) -> str:
        """How the fit ran, for the report."""
        rows = self.rows
        chunks = f"{rows.n_chunks} row chunk" + ("s" if rows.n_chunks != 1 else "")
        if rows.client is None:
            return f"data-parallel on {chunks}, in this process"
        workers = len(set(rows.placement))
        label = "Dask worker" + ("s" if workers != 1 else "")
        return f"data-parallel on {chunks} across {workers} {label}"

    def problem(self, shape, positive=None):
        """The :class:`~dpglm.distributed.ShardedProblem` of ``shape`` on the chunks."""
        from dpglm.distributed import ShardedProblem

        return ShardedProblem(
            self.rows, shape.datafit, shape.penalty, shape.fit_intercept, positive=positive
        )

    def _reader(self):
        from dpglm.distributed import ShardedProblem

        # what reads the ranges: any datafit reads the same records
        return ShardedProblem(self.rows, "squared")

    def range_counts(self, plan) -> list:
        """The counts of a range estimate's histograms, summed over the chunks."""
        return self._reader().range_counts(plan)

    def feature_extremes(self) -> tuple:
        """Every column's minimum and maximum (read without privacy)."""
        return self._reader().feature_extremes()

    def target_extremes(self) -> tuple:
        """The target's minimum and maximum (read without privacy)."""
        return self._reader().target_extremes()

    def close(self) -> None:
        """Release the chunks the fit made (a ShardedRows given by the user stays)."""
        if self.owned:
            self.rows.close()


def _labels_of(y, classes):
    """The label set of a classification: the public ``classes``, else the labels in ``y``."""
    if classes is not None:
        return classes
    if is_dask(y):
        import dask.array as da

        return np.unique(da.unique(y).compute())
    return np.unique(np.asarray(y))


def sharded_data(X, y, *, task: str, classes, name: str) -> ShardedData:
    """The row chunks of ``X`` (and ``y``) for a fit of ``name``, made where they will live.

    Parameters
    ----------
    X : dask.array.Array, dask DataFrame or ShardedRows
    y : dask.array.Array, dask Series, array_like, or None (with a ShardedRows)
    task : {"regression", "classification"}
    classes : ClassLabels or None
        The public label set, if any.
    name : str
        The estimator's name, for messages.

    Returns
    -------
    ShardedData
    """
    from dpglm.distributed import ShardedRows

    if isinstance(X, ShardedRows):
        if y is not None:
            raise ValueError(
                f"{name}.fit(X, y): X is a ShardedRows, whose chunks hold their targets; "
                "pass y=None"
            )
        return ShardedData(X, _chunk_labels(X, task, classes, name), None, owned=False)
    if y is None:
        raise ValueError(f"{name}.fit(X, y) needs y with a Dask X (only a ShardedRows holds it)")
    feature_names = None
    if hasattr(X, "columns") and hasattr(X, "to_dask_array"):  # a Dask data frame
        # its names as a DataFrame's: kept when all are strings, as predict reads them
        feature_names = feature_names_of(X)
        X = X.to_dask_array(lengths=True)
    if hasattr(y, "to_dask_array"):  # a Dask series
        y = y.to_dask_array(lengths=True)
    if X.ndim != 2:
        raise ShapeMismatchError(f"X must be 2-D (n_samples, n_features), got {X.ndim}-D")
    options = {"task": task}
    if task == "classification":
        public = None if classes is None else classes.classes
        options["classes"] = list(_labels_of(y, public))
        if public is None and len(options["classes"]) < 2:
            found = np.asarray(options["classes"]).tolist()
            raise TargetError(
                f"{name} is a classifier, but y has only one class {found} on the chunks; it "
                "needs at least two, or the public label set given as classes"
            )
    rows = ShardedRows.from_dask_array(X, y, client=client_in_scope(), **options)
    try:
        labels = _chunk_labels(rows, task, classes, name)
    except BaseException:
        rows.close()
        raise
    return ShardedData(rows, labels, feature_names, owned=True)


def _chunk_labels(rows, task, classes, name):
    """The label set the chunks encoded (classifiers), checked against the public one."""
    if task != "classification":
        return None
    if rows.classes is None:
        raise TargetError(
            f"{name} needs class labels on the chunks: load the files with task='classification'"
        )
    labels = ClassLabels.of(rows.classes)
    if classes is not None and list(labels.classes) != list(classes.classes):
        raise TargetError(
            f"the chunks hold the labels {list(labels.classes)}; classes= gives "
            f"{list(classes.classes)}"
        )
    return labels
