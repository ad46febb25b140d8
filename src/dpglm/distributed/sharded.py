"""Row chunks of a dataset, kept where they were loaded: on Dask workers or in this process.

:class:`ShardedRows` splits the ``n`` records of a dataset into row chunks
and keeps each one where it was loaded; the process that holds the
:class:`ShardedRows` (the coordinator) never holds a row. It is built from

* a row-chunked ``dask.array`` (dense chunks or ``scipy.sparse`` chunks),
  each block computed on the worker that will own it
  (:meth:`ShardedRows.from_dask_array`);
* a list of files, one chunk each, each read with :func:`dpglm.data.load` by
  the worker that owns it (:meth:`ShardedRows.from_files`); the paths must be
  readable there;
* an in-memory array cut into chunks (:meth:`ShardedRows.from_array`), for
  tests and small data.

Each chunk is a :class:`Chunk`: with a ``distributed.Client``, one Dask actor
per chunk, pinned to a worker (chunk ``k`` on the ``k``-th worker in sorted
order, round-robin, like the parties of
:class:`~dpglm.distributed.engines.DaskEngine`); without one, an object in this
process. The coordinator calls *operations* on the chunks: plain functions
marked with :func:`chunk_op`, run as ``op(chunk, *args)`` where the chunk
lives, whose return values (float64 arrays: sums over the chunk's records)
are the only thing that comes back. Their bytes are counted per chunk in
:attr:`ShardedRows.uplink`. The operations of the data-parallel solvers are in
:mod:`dpglm.distributed.data_parallel`.

**Out of core.** With ``resident=True`` (the default) each chunk keeps its
rows in its worker's memory, in one layout at a time (converted in place when
a solver reads the other one). With ``resident=False`` a chunk writes its rows
to a spill file (``.npy``, memory-mapped) as soon as it is loaded, and maps
them only for the duration of each operation: a worker then holds one chunk
at a time plus, for each of its chunks, the targets and the per-record state
of the fit (margins and derivatives: 8 to 24 bytes a record in all). Chunks
are ingested one per worker at a time, so a dataset larger than any worker's
memory limit trains as long as one chunk fits. With ``reread=True`` as well
(chunks of files only), a chunk keeps no copy at all: each operation reads
its file again. A compressed Parquet file is then read from disk in less
time than its float64 spill would be, and no disk is spent on spilling.

On a worker, operations run numba's parallel kernels on the worker's threads
(one, in the usual one-thread-per-worker cluster): the cluster's parallelism
is its workers.

**Failures.** A chunk whose worker is lost, or whose call does not come back,
raises :class:`ChunkLostError` naming the chunk, its worker and the iteration;
the rows are then unusable until :meth:`ShardedRows.restart`, which reloads
every chunk on the workers present. Invalid data raises the
:class:`~dpglm.exceptions.DataError` of :func:`dpglm.data.load`, prefixed with
the chunk and its source.

Examples
--------
>>> import numpy as np
>>> from dpglm.distributed.sharded import ShardedRows, chunk_op
>>> @chunk_op
... def row_count(chunk):
...     return np.array([chunk.n], dtype=float)
>>> rows = ShardedRows.from_array(np.ones((10, 3)), np.zeros(10), chunks=4)
>>> rows.chunk_sizes, rows.sum(row_count)
([4, 4, 2], array([10.]))
>>> rows.uplink.tolist()  # one float64 from each chunk
[8, 8, 8]
>>> rows.close()
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import numbers
import os
import shutil
import tempfile
import threading
import weakref
from pathlib import Path

import numba
import numpy as np
import scipy.sparse as sp

from dpglm._kernels.jit import threads_for
from dpglm.data import load
from dpglm.data.files import guess_format
from dpglm.data.layout import as_layout, nearest_layout, sparse_matrix
from dpglm.data.loader import load_rows
from dpglm.data.parquet import read_parquet_rows
from dpglm.data.svmlight import check_zero_based
from dpglm.distributed.protocol import PartyLostError
from dpglm.exceptions import DpglmError, MissingDependencyError, ShapeMismatchError, TargetError

__all__ = ["Chunk", "ChunkFailedError", "ChunkLostError", "ShardedRows", "chunk_op"]

_OP_MARK = "__dpglm_chunk_op__"


def chunk_op(func):
    """Mark ``func(chunk, *args)`` as an operation chunks may run.

    A chunk runs nothing else: an operation sees the chunk's rows and returns
    a float64 array, a sum over the chunk's records (never the records
    themselves), which is all that reaches the coordinator.

    Examples
    --------
    >>> @chunk_op
    ... def label_sum(chunk):
    ...     return np.array([chunk.y.sum()])
    >>> getattr(label_sum, "__dpglm_chunk_op__")
    True
    """
    setattr(func, _OP_MARK, True)
    return func


class ChunkLostError(PartyLostError):
    """A chunk's worker was lost, or its call did not come back.

    The data-parallel counterpart of
    :class:`~dpglm.distributed.protocol.PartyLostError` (its ``party`` is the
    chunk). Raised instead of a result: no partial model is returned.

    Attributes
    ----------
    chunk : int
        The first lost chunk.
    chunks : tuple of int
        Every chunk of the lost worker (they went with it).
    worker : str or None
    iteration : int or None
        The solver's iteration (0-based) whose call failed; ``None`` while
        loading or outside a fit's iterations.
    completed : int
        Iterations completed before the failure.
    """

    def __init__(self, message, *, chunks, worker, iteration, completed=0):
        super().__init__(message, party=chunks[0], iteration=iteration, completed=completed)
        self.chunk = chunks[0]
        self.chunks = tuple(chunks)
        self.worker = worker

    def __reduce__(self):
        return (_rebuild_lost, (self.args[0], self.chunks, self.worker, self.iteration,
                                self.completed))  # fmt: skip


def _rebuild_lost(message, chunks, worker, iteration, completed):
    return ChunkLostError(
        message, chunks=chunks, worker=worker, iteration=iteration, completed=completed
    )


class ChunkFailedError(DpglmError, RuntimeError):
    """An operation raised on its chunk (a fault of the code, not of the data or the network).

    Its cause, when the chunk runs in this process, is the original exception;
    from a worker, the message carries its type and text.
    """


# --- one chunk, where it lives ----------------------------------------------------------------


def _dask_worker():
    """The Dask worker running this code, or None."""
    try:
        from distributed import get_worker

        return get_worker()
    except (ImportError, ValueError):
        return None


def _spill_root(spill_dir):
    """Where a chunk spills: ``spill_dir``, else its Dask worker's local directory, else tmp."""
    if spill_dir is not None:
        return os.fspath(spill_dir)
    worker = _dask_worker()
    return None if worker is None else worker.local_directory


@contextlib.contextmanager
def _numba_threads(count):
    """Run numba's parallel kernels on ``count`` threads (at most its pool)."""
    previous = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(count), numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def _save(directory: Path, name: str, X) -> dict:
    """Write ``X`` (dense, CSR or CSC) as ``.npy`` files; return what :func:`_mapped` reads."""
    if not sp.issparse(X):
        path = directory / f"{name}.npy"
        np.save(path, X)  # keeps Fortran or C order
        return {"kind": "dense", "path": path}
    paths = {}
    for part in ("data", "indices", "indptr"):
        paths[part] = directory / f"{name}-{part}.npy"
        np.save(paths[part], getattr(X, part))
    return {"kind": X.format, "paths": paths, "shape": X.shape}


def _mapped(saved: dict, n_features: int):
    """The spilled matrix, memory-mapped read-only (sparse: widened to ``n_features``)."""
    if saved["kind"] == "dense":
        return np.load(saved["path"], mmap_mode="r")
    data, indices, indptr = (
        np.load(saved["paths"][part], mmap_mode="r") for part in ("data", "indices", "indptr")
    )
    n, width = saved["shape"]
    if saved["kind"] == "csc" and n_features > width:
        # the new columns are empty: repeat the end of the last one
        indptr = np.concatenate([indptr, np.full(n_features - width, indptr[-1])])
    kind = sp.csc_matrix if saved["kind"] == "csc" else sp.csr_matrix
    return kind((data, indices, indptr), shape=(n, n_features), copy=False)


_THREAD = threading.local()


def _reread_buffer(shape):
    """A Fortran-order float64 array of ``shape``, reused by the thread's successive reads."""
    buffer = getattr(_THREAD, "buffer", None)
    if buffer is None or buffer.shape != shape:
        _THREAD.buffer = None  # the old one goes before the new one is made
        buffer = _THREAD.buffer = np.empty(shape, order="F")
    return buffer


def _scaling_key(scaling):
    """What identifies a scaling in a chunk's cache (its ranges and flags), or None."""
    if scaling is None:
        return None
    return (
        scaling.low.tobytes(),
        scaling.high.tobytes(),
        scaling.centred,
        scaling.target_low,
        scaling.target_high,
        scaling.target_centred,
    )


class Chunk:
    """One row chunk: its records, the state a fit keeps on them, and the operations it runs.

    Built where it lives (a Dask actor on its worker, or in this process) by
    :class:`ShardedRows`; not meant to be made directly.

    Parameters
    ----------
    index : int
        Position of the chunk in the dataset.
    source : tuple
        ``("file", path, load_options)`` (:func:`dpglm.data.load`'s) or
        ``("array", X, y, label, options)`` (:func:`~dpglm.data.loader.load_rows`'s).
    resident : bool, default=True
        Keep the rows in memory; otherwise spill them to disk and map them
        for each operation only.
    spill_dir : str or os.PathLike, optional
        Where to spill (default: the worker's local directory, else the
        system's temporary directory).
    reread : bool, default=False
        With ``resident=False`` and a file: read the file again for each
        operation instead of spilling.

    Attributes
    ----------
    index, n, p, offset : int
        Position, records, features and the first record's global row.
    y : ndarray of shape (n,)
    sparse : bool
    resident, reread : bool
    reads : int
        How many times the rows were read again from their file (``reread``).
    label : str
        Where the chunk came from, for messages.
    state : dict
        What the current fit keeps on this chunk (margins, ...); emptied by
        :meth:`reset`.

    Examples
    --------
    >>> chunk = Chunk(0, ("array", np.eye(3), np.arange(3.0), "rows 0-2", {"first_row": 0}))
    >>> chunk.describe()["n"], chunk.problem("squared").objective(np.zeros(3))
    (3, 0.8333333333333334)
    """

    def __init__(self, index, source, *, resident=True, spill_dir=None, reread=False):
        self.index = int(index)
        self.resident = bool(resident)
        self.reread = bool(reread) and not self.resident
        if self.reread and source[0] != "file":
            raise ValueError("reread=True reads a chunk's file again: chunks of files only")
        self._source = source
        self.reads = 0  # how many times the rows were read again (reread=True)
        self._spill_dir = spill_dir
        worker = _dask_worker()
        # on a worker, kernels get the worker's threads: the cluster's parallelism is its
        # workers (waking idle numba threads per chunk costs more than it saves)
        self._threads = None if worker is None else worker.state.nthreads
        if source[0] == "file":
            _, path, options = source
            self.label = f"file {os.fspath(path)!r}"
            data = self._guarded(load, path, **options)
        else:
            _, X, y, self.label, options = source
            data = self._guarded(load_rows, X, y, **options)
        self.y = np.ascontiguousarray(data.y, dtype=float)
        self.classes = None if data.classes is None else data.classes.tolist()
        self.feature_names = None if data.feature_names is None else list(data.feature_names)
        X = data.X
        if sp.issparse(X):
            X = sparse_matrix(X)
        self.n, self.p = X.shape
        self.sparse = sp.issparse(X)
        self.nnz = int(X.nnz) if self.sparse else self.n * self.p
        self.offset = 0
        self.state: dict = {}
        self._layout = nearest_layout(X)
        self._X = X
        self._cached = None  # (key, Problem): the current fit's view of the rows
        self._saved: dict = {}  # layout -> spill files
        self._directory = None
        if self.reread:
            self._X = None
        elif not self.resident:
            self._spill(X, self._layout)
            self._X = None

    # -- errors ---------------------------------------------------------------------------

    def _guarded(self, func, *args, **kwargs):
        """``func(*args, **kwargs)``, its data errors prefixed with this chunk."""
        try:
            return func(*args, **kwargs)
        except DpglmError as err:
            raise type(err)(f"chunk {self.index} ({self.label}): {err}") from None

    # -- the rows, in one layout at a time ------------------------------------------------

    def _spill(self, X, layout):
        if self._directory is None:
            root = _spill_root(self._spill_dir)
            self._directory = Path(tempfile.mkdtemp(prefix=f"dpglm-chunk{self.index}-", dir=root))
            weakref.finalize(self, shutil.rmtree, self._directory, True)
        self._saved[layout] = _save(self._directory, layout, X)

    def features(self, layout: str):
        """The rows in ``layout`` (``"columns"`` or ``"rows"``), converted at most once.

        A resident chunk converts its one copy in place of the other; a spilled
        one writes the new layout once and maps it from then on.
        """
        if self.resident:
            if layout != self._layout:
                X = as_layout(self._X, layout)
                self._X = sparse_matrix(X) if sp.issparse(X) else X
                self._layout, self._cached = layout, None
            return self._X
        if self.reread:
            return self._read(layout)
        if layout not in self._saved:
            (have,) = list(self._saved)[:1]
            X = as_layout(_mapped(self._saved[have], self.p), layout)
            self._spill(X, layout)
            del X
        return _mapped(self._saved[layout], self.p)

    def _read(self, layout):
        """The rows read again from the chunk's file, in ``layout`` (``reread=True``).

        A dense Parquet file is read into this thread's reused buffer
        (:func:`_reread_buffer`): no fresh memory to fault in at every pass.
        Valid until the next read on the thread, that is for one operation.
        """
        _, path, options = self._source
        self.reads += 1
        if not self.sparse and guess_format(path) == "parquet":
            X = _reread_buffer((self.n, self.p))
            self._guarded(
                read_parquet_rows, path, repr(os.fspath(path)), features=self.feature_names,
                target=None, out=X,
            )  # fmt: skip
            return as_layout(X, layout)
        X = self._guarded(load, path, **options).X
        if sp.issparse(X):
            X = sparse_matrix(X)
            if X.shape[1] < self.p:  # a LIBSVM file that stops short of the data's width
                X.resize((X.shape[0], self.p))
        elif X.shape != (self.n, self.p):
            raise ShapeMismatchError(
                f"chunk {self.index} ({self.label}) now has shape {X.shape}; it had "
                f"{(self.n, self.p)} when loaded: the file changed during the fit"
            )
        return as_layout(X, layout)

    def problem(self, datafit, fit_intercept: bool = False, layout: str | None = None,
                feature_bounds=None, scaling=None, positive=None):  # fmt: skip
        """The chunk as an in-memory :class:`~dpglm.problem.Problem` (no penalty).

        Operations compute on it with the in-memory code, so a chunk computes
        exactly what a :class:`~dpglm.problem.Problem` of its rows would. With
        ``feature_bounds`` its entries are clipped to them
        (:meth:`Problem.clipped_to <dpglm.problem.Problem.clipped_to>`, a copy
        only when some entry lies outside); with a ``scaling``
        (:class:`~dpglm.preprocessing.scaling.Scaling`) its records are
        clipped to their ranges and mapped into ``[-1, 1]``, as an estimator
        maps records in memory; with ``positive`` (a class code) its targets
        are +1 for that class and -1 for the others (one-vs-rest). A resident
        chunk keeps the last one made; a spilled one makes it anew.
        """
        layout = layout or self._layout
        bounds = None if feature_bounds is None else np.asarray(feature_bounds, dtype=float)
        key = (
            datafit,
            bool(fit_intercept),
            layout,
            None if bounds is None else bounds.tobytes(),
            _scaling_key(scaling),
            positive,
        )
        if self._cached is not None and self._cached[0] == key:
            return self._cached[1]
        prob = self.prepared(
            self.features(layout), self.y, datafit, fit_intercept, bounds, scaling, positive
        )
        if self.resident:
            self._cached = (key, prob)
        return prob

    def prepared(self, X, y, datafit, fit_intercept, feature_bounds, scaling, positive):
        """``X, y`` (all or some of the chunk's records) as the Problem :meth:`problem` makes."""
        from dpglm.problem import Problem

        if positive is not None:
            y = np.where(y == positive, 1.0, -1.0)
        if scaling is not None:
            # the buffer of a reread is this operation's own copy: scaled where it is
            reused = X is getattr(_THREAD, "buffer", None)
            X, y = scaling.transform(X, out=X if reused else None), scaling.transform_target(y)
        prob = self._guarded(Problem, X, y, datafit, fit_intercept=fit_intercept)
        if feature_bounds is not None:
            prob = prob.clipped_to(feature_bounds)
        return prob

    def records(self):
        """The rows in the layout they are in now (mapped, if spilled), and the targets."""
        return self.features(self._layout), self.y

    # -- what the coordinator calls ---------------------------------------------------------

    def describe(self) -> dict:
        """Shape, kind and label mapping (public facts the coordinator checks)."""
        return {
            "index": self.index,
            "n": self.n,
            "p": self.p,
            "sparse": self.sparse,
            "nnz": self.nnz,
            "classes": self.classes,
            "feature_names": self.feature_names,
            "label": self.label,
            "reads": self.reads,
        }

    def configure(self, n_features: int, offset: int) -> None:
        """Set the global width (LIBSVM files may stop short of it) and the first row."""
        n_features = int(n_features)
        if n_features != self.p:
            if not self.sparse or n_features < self.p:
                raise ShapeMismatchError(
                    f"chunk {self.index} ({self.label}) has {self.p} features; the data has "
                    f"{n_features}"
                )
            if self.resident:
                self._X = sparse_matrix(self._X)
                self._X.resize((self.n, n_features))
                self._cached = None
            self.p = n_features
        self.offset = int(offset)

    def reset(self) -> None:
        """Forget the state of the previous fit."""
        self.state = {}

    def run(self, op, args=()):
        """``op(self, *args)`` for a :func:`chunk_op` ``op``, as a float64 array."""
        if not getattr(op, _OP_MARK, False):
            raise TypeError(f"{op!r} is not a chunk operation (see dpglm.distributed.sharded)")
        threads = threads_for(self.nnz) if self._threads is None else _numba_threads(self._threads)
        try:
            with threads:
                result = op(self, *args)
        except DpglmError as err:
            if str(err).startswith(f"chunk {self.index} "):
                raise
            raise type(err)(f"chunk {self.index} ({self.label}): {err}") from None
        except Exception as err:
            # marked as the chunk's own failure, so that the coordinator does not take it
            # for a lost worker
            name = getattr(op, "__name__", repr(op))
            raise ChunkFailedError(
                f"chunk {self.index} ({self.label}) failed in {name}: {type(err).__name__}: {err}"
            ) from err
        return np.ascontiguousarray(result, dtype=float)

    def close(self) -> None:
        """Drop the rows and the spill files."""
        self._X, self._cached, self.state = None, None, {}
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)

    def __repr__(self) -> str:
        kind = "sparse" if self.sparse else "dense"
        where = "resident" if self.resident else ("reread" if self.reread else "spilled")
        return f"Chunk({self.index}: {self.n}x{self.p} {kind}, {where}, {self.label})"


# --- where the chunks come from (kept, so that a restart can reload them) --------------------


def _load_options(task, classes, first_row):
    """The options of :func:`~dpglm.data.loader.load_rows` for a chunk of an in-memory or
    dask array whose first record is row ``first_row`` of the whole."""
    options = {"task": task, "first_row": int(first_row)}
    if classes is not None:
        options["classes"] = list(classes)
    return options


class _FileRecipe:
    def __init__(self, path, options):
        self.path, self.options = os.fspath(path), dict(options)

    def source(self, client, worker):
        return ("file", self.path, self.options), []


class _ArrayRecipe:
    def __init__(self, X, y, label, options):
        self.X, self.y, self.label, self.options = X, y, label, options

    def source(self, client, worker):
        if client is None:
            return ("array", self.X, self.y, self.label, self.options), []
        X, y = client.scatter([self.X, self.y], workers=[worker], hash=False)
        return ("array", X, y, self.label, self.options), [X, y]


class _DaskRecipe:
    def __init__(self, X, y, label, options):
        # delayed blocks (y: delayed or array)
        self.X, self.y, self.label, self.options = X, y, label, options

    def source(self, client, worker):
        if client is None:
            import dask

            X, y = dask.compute(self.X, self.y)
            return ("array", X, y, self.label, self.options), []
        import dask

        # computed on the worker that will own the chunk: the rows do not pass through here
        X = client.compute(self.X, workers=[worker], allow_other_workers=False)
        futures, y = [X], self.y
        if dask.is_dask_collection(y):
            y = client.compute(y, workers=[worker], allow_other_workers=False)
            futures.append(y)
        return ("array", X, y, self.label, self.options), futures


# --- the coordinator's handle ---------------------------------------------------------------


class ShardedRows:
    """The row chunks of a dataset, where they were loaded.

    Build it with :meth:`from_dask_array`, :meth:`from_files` or
    :meth:`from_array`. The chunks are loaded (and validated) at once; use it
    as a context manager, or call :meth:`close`, to release them.

    Attributes
    ----------
    n_samples, n_features, n_chunks : int
    chunk_sizes : list of int
    offsets : ndarray of int64 of shape (n_chunks + 1,)
        First global row of each chunk, then ``n_samples``.
    sparse : bool
        Whether the chunks are sparse.
    placement : list of str
        Where each chunk lives (a worker address, or ``"in-process"``).
    classes : list or None
        The original labels (``task="classification"``), in the order of their codes.
    feature_names : list of str or None
        The columns' names (CSV and Parquet files, data frames), the same in every chunk.
    uplink : ndarray of int64 of shape (n_chunks,)
        Bytes each chunk has returned to the coordinator so far.

    Examples
    --------
    >>> import numpy as np
    >>> rows = ShardedRows.from_array(np.eye(4), np.ones(4), chunks=[1, 3])
    >>> rows
    ShardedRows(4x4 dense in 2 chunks, in-process)
    >>> rows.offsets.tolist(), rows.placement
    ([0, 1, 4], ['in-process', 'in-process'])
    >>> rows.close()
    """

    def __init__(self, recipes, *, client=None, workers=None, resident=True, spill_dir=None,
                 timeout=None, n_features=None, kind="data", reread=False):  # fmt: skip
        if client is not None:
            try:
                import distributed  # noqa: F401
            except ImportError as err:  # pragma: no cover - only without the extra
                raise MissingDependencyError(
                    "ShardedRows on a cluster needs dask.distributed: pip install 'dpglm[dask]'"
                ) from err
        self._recipes = list(recipes)
        if not self._recipes:
            raise ShapeMismatchError(f"no chunks: the {kind} has no row chunk")
        self.client = client
        self.workers = None if workers is None else [str(w) for w in workers]
        self.resident = bool(resident)
        self.reread = bool(reread) and not self.resident
        self.spill_dir = None if spill_dir is None else os.fspath(spill_dir)
        self.timeout = timeout
        self._n_features = n_features
        self._chunks: list = []
        self._futures: list = []
        self._broken = None
        self.start()

    # -- constructors ------------------------------------------------------------------------

    @classmethod
    def from_dask_array(cls, X, y, *, client=None, task="regression", classes=None, **options):
        """Chunks from the row blocks of a ``dask.array`` (dense or ``scipy.sparse`` blocks).

        Parameters
        ----------
        X : dask.array.Array of shape (n_samples, n_features)
            Row-chunked features; several column blocks are first merged
            (``X.rechunk({1: -1})``). Row chunk sizes must be known.
        y : dask.array.Array or array_like of shape (n_samples,)
            Targets; a dask array is rechunked to ``X``'s row chunks, an array
            is cut into them.
        client : distributed.Client, optional
            Each block is computed on the worker that owns its chunk; without
            a client, the chunks live in this process.
        task : {"regression", "classification"}, default="regression"
            As in :func:`dpglm.data.load`: with ``"classification"`` each
            chunk encodes its labels, as codes of ``classes``.
        classes : sequence, optional
            The labels of a classification (every chunk encodes its own with
            them; without them each chunk must hold both of two labels).
        **options
            ``workers``, ``resident``, ``spill_dir``, ``timeout``, see
            :meth:`from_files`.

        Examples
        --------
        >>> import dask.array as da
        >>> X = da.from_array(np.arange(12.0).reshape(6, 2), chunks=(4, 2))
        >>> with ShardedRows.from_dask_array(X, np.zeros(6)) as rows:
        ...     rows.chunk_sizes
        [4, 2]
        """
        import dask.array as da

        if X.ndim != 2:
            raise ShapeMismatchError(f"X must be 2-D (n_samples, n_features), got {X.ndim}-D")
        sizes = X.chunks[0]
        if any(isinstance(s, float) and np.isnan(s) for s in sizes):
            raise ValueError("X has unknown row chunk sizes; call X.compute_chunk_sizes() first")
        if len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        if isinstance(y, da.Array):
            if y.shape != (X.shape[0],):
                raise ShapeMismatchError(f"y has shape {y.shape}; expected ({X.shape[0]},)")
            ys = list(y.rechunk((sizes,)).to_delayed().ravel())
        else:
            y = np.asarray(y)
            if y.shape != (X.shape[0],):
                raise ShapeMismatchError(f"y has shape {y.shape}; expected ({X.shape[0]},)")
            ys = np.split(y, offsets[1:-1])
        blocks = list(X.to_delayed().ravel())
        recipes = [
            _DaskRecipe(b, yb, f"rows {a}-{e - 1}", _load_options(task, classes, a))
            for b, yb, a, e in zip(blocks, ys, offsets[:-1], offsets[1:], strict=True)
        ]
        return cls(recipes, client=client, kind="dask array", **options)

    @classmethod
    def from_files(cls, paths, *, client=None, target=None, task="regression", n_features=None,
                   zero_based="auto", classes=None, **options):  # fmt: skip
        """One chunk per file, each read with :func:`dpglm.data.load` by its worker.

        Parameters
        ----------
        paths : sequence of str or os.PathLike
            CSV, LIBSVM or Parquet files (see :func:`dpglm.data.load`), in the
            order of their records; readable by the workers.
        client : distributed.Client, optional
            Without one, the chunks live in this process.
        target, task
            As in :func:`dpglm.data.load`. With ``task="classification"`` every
            file is encoded on its own, and the encodings must agree: each file
            must hold every label, unless ``classes`` gives them.
        classes : sequence, optional
            The labels of a classification, as in :func:`dpglm.data.load`.
        zero_based : {"auto", True, False}, default="auto"
            Whether LIBSVM feature indices start at 0. ``"auto"`` reads every
            file 1-based (the format's convention) and refuses a file with
            index 0, naming its line: each file is read by its own worker, and
            guessing each file's base from its own indices could read the
            files of one dataset with different bases.
        n_features : int, optional
            The number of features; LIBSVM files that stop short of it are
            widened (by default, to the widest file).
        workers : sequence of str, optional
            Worker addresses to place chunks on, chunk ``k`` on
            ``workers[k % len(workers)]`` (default: every worker, sorted).
        resident : bool, default=True
            ``False`` spills each chunk to disk once loaded and maps it only
            while an operation runs (out of core, see the module docstring).
        spill_dir : str or os.PathLike, optional
            Where chunks spill (default: the worker's local directory).
        reread : bool, default=False
            With ``resident=False``: each chunk reads its file again for each
            operation instead of spilling it (see the module docstring).
        timeout : float, optional
            Seconds to wait for a chunk's call before declaring it lost.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "a.csv").write_text("x0,x1,y\\n1,0,1.5\\n0,1,2.0\\n")
        >>> _ = (folder / "b.csv").write_text("x0,x1,y\\n1,1,0.5\\n")
        >>> with ShardedRows.from_files([folder / "a.csv", folder / "b.csv"]) as rows:
        ...     rows.n_samples, rows.n_features
        (3, 2)
        """
        if isinstance(paths, str | os.PathLike):
            raise TypeError("paths must be a sequence of files (one chunk each), got one path")
        check_zero_based(zero_based)
        one_base = False if zero_based == "auto" else zero_based
        load_options = {"target": target, "task": task, "zero_based": one_base}
        if classes is not None:
            load_options["classes"] = list(classes)
        if n_features is not None:
            load_options["n_features"] = n_features
        recipes = [_FileRecipe(path, load_options) for path in paths]
        return cls(recipes, client=client, n_features=n_features, kind="file list", **options)

    @classmethod
    def from_array(cls, X, y, *, chunks, client=None, task="regression", classes=None,
                   **options):  # fmt: skip
        """Chunks cut from an in-memory array or sparse matrix (sent to the workers once).

        Parameters
        ----------
        X : array_like or scipy sparse matrix of shape (n_samples, n_features)
        y : array_like of shape (n_samples,)
        chunks : int or sequence of int
            Rows per chunk (the last one takes what is left), or each chunk's size.
        client : distributed.Client, optional
        task, classes
            As in :meth:`from_dask_array`.
        **options
            As in :meth:`from_files`.

        Examples
        --------
        >>> with ShardedRows.from_array(np.ones((5, 2)), np.ones(5), chunks=2) as rows:
        ...     rows.chunk_sizes
        [2, 2, 1]
        """
        X = X.tocsr() if sp.issparse(X) else np.asarray(X)
        y = np.asarray(y)
        if X.ndim != 2 or y.shape != (X.shape[0],):
            raise ShapeMismatchError(
                f"X must be 2-D and y 1-D of the same length; got {X.shape} and {y.shape}"
            )
        n = X.shape[0]
        if isinstance(chunks, numbers.Integral):
            if chunks < 1:
                raise ValueError(f"chunks must be >= 1 rows, got {chunks}")
            sizes = [min(chunks, n - a) for a in range(0, n, int(chunks))]
        else:
            sizes = [int(s) for s in chunks]
            if sum(sizes) != n or min(sizes, default=0) < 1:
                raise ValueError(f"chunk sizes {sizes} must be >= 1 and add up to n = {n}")
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        recipes = [
            _ArrayRecipe(X[a:e], y[a:e], f"rows {a}-{e - 1}", _load_options(task, classes, a))
            for a, e in itertools.pairwise(offsets)
        ]
        return cls(recipes, client=client, kind="array", **options)

    # -- life cycle --------------------------------------------------------------------------

    def start(self) -> None:
        """Load every chunk where it will live (done by the constructors)."""
        k = len(self._recipes)
        self._broken = None
        self.uplink = np.zeros(k, dtype=np.int64)
        try:
            if self.client is None:
                self.placement = ["in-process"] * k
                self._chunks = []
                for i, recipe in enumerate(self._recipes):
                    source, _ = recipe.source(None, None)
                    self._chunks.append(
                        Chunk(
                            i,
                            source,
                            resident=self.resident,
                            spill_dir=self.spill_dir,
                            reread=self.reread,
                        )
                    )
            else:
                self._start_on_workers()
            self._describe()
        except BaseException:
            self.close()  # no chunk outlives a failed start
            raise

    def _start_on_workers(self):
        client = self.client
        # asked of the scheduler, not read from scheduler_info() (a cache that the client's
        # periodic refresh can replace at any moment with one listing no worker)
        workers = self.workers or sorted(client.nthreads())
        if not workers:
            raise RuntimeError("the Dask client has no workers to hold the chunks")
        k = len(self._recipes)
        self.placement = [workers[i % len(workers)] for i in range(k)]
        self._chunks = [None] * k
        # one chunk per worker at a time: a worker never ingests two at once
        for first in range(0, k, len(workers)):
            pending = []
            for i in range(first, min(first + len(workers), k)):
                address = self.placement[i]
                try:
                    source, temporary = self._recipes[i].source(client, address)
                    future = client.submit(
                        Chunk, i, source, resident=self.resident, spill_dir=self.spill_dir,
                        reread=self.reread,
                        actor=True, workers=[address], allow_other_workers=False, pure=False,
                    )  # fmt: skip
                except Exception as err:
                    raise self._lost([i], None, err, "could not start") from err
                self._futures.append(future)
                pending.append((i, future, temporary))
            for i, future, _ in pending:
                try:
                    self._chunks[i] = future.result(timeout=self.timeout)
                except DpglmError:
                    raise
                except Exception as err:
                    raise self._lost([i], None, err, "could not start") from err
            # the chunks hold their rows now: the inputs are released here, not cancelled
            # (cancelling them would cancel the chunks, which depend on them)
            del pending

    def _describe(self):
        facts = self._each("describe", ())
        widths = [f["p"] for f in facts]
        self.sparse = bool(facts[0]["sparse"])
        if any(f["sparse"] != self.sparse for f in facts):
            raise ShapeMismatchError("the chunks mix dense and sparse features; make them agree")
        p = self._n_features if self._n_features is not None else max(widths)
        sizes = [f["n"] for f in facts]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.chunk_sizes = sizes
        self.n_samples, self.n_features = int(self.offsets[-1]), int(p)
        self.nnz = sum(f["nnz"] for f in facts)
        self.feature_names = facts[0]["feature_names"]
        for f in facts:
            if (
                f["feature_names"] != self.feature_names
                and self.sparse
                and widths != [p] * len(widths)
            ):
                # LIBSVM files widened to the widest: their columns are positions, not names
                self.feature_names = None
                break
            if f["feature_names"] != self.feature_names:
                raise ShapeMismatchError(
                    f"chunk {f['index']} ({f['label']}) has the columns {f['feature_names']}, "
                    f"chunk 0 has {self.feature_names}: every chunk must have the same columns"
                )
        classes = [f["classes"] for f in facts]
        self.classes = classes[0]
        for f in facts:
            if f["classes"] != self.classes:
                raise TargetError(
                    f"chunk {f['index']} ({f['label']}) has labels {f['classes']}, chunk 0 "
                    f"has {self.classes}: every chunk must hold both classes"
                )
        self._each("configure", [(p, int(a)) for a in self.offsets[:-1]])

    def facts(self) -> list:
        """What each chunk says of itself (:meth:`Chunk.describe`): shape, label, reads, ...

        Examples
        --------
        >>> with ShardedRows.from_array(np.eye(2), np.zeros(2), chunks=1) as rows:
        ...     [f["n"] for f in rows.facts()]
        [1, 1]
        """
        return self._each("describe", ())

    def close(self) -> None:
        """Release the chunks (and their spill files)."""
        if self.client is None:
            for chunk in self._chunks:
                if chunk is not None:
                    chunk.close()
        else:
            # cancelling, not just dropping the futures: the workers must free the chunks
            # (their rows and spill files go with them) now
            with contextlib.suppress(Exception):  # a lost worker's keys may be gone already
                self.client.cancel(self._futures)
        self._chunks, self._futures = [], []

    def restart(self) -> None:
        """Reload every chunk on the workers present (after a :class:`ChunkLostError`)."""
        self.close()
        self.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- calls -------------------------------------------------------------------------------

    @property
    def n_chunks(self) -> int:
        return len(self._recipes)

    def _lost(self, chunks, iteration, err, what=None):
        worker = self.placement[chunks[0]]
        # every chunk of that worker went with it
        chunks = sorted({*chunks, *(j for j, w in enumerate(self.placement) if w == worker)})
        where = "" if iteration is None else f" at iteration {iteration}"
        names = ", ".join(str(c) for c in chunks)
        label, verb = ("chunk", "was") if len(chunks) == 1 else ("chunks", "were")
        what = what or f"{verb} lost"
        message = f"{label} {names} (worker {worker}) {what}{where}: {type(err).__name__}: {err}"
        if iteration is not None:
            message += (
                f". No model is returned; the privacy budget was charged before training for "
                f"the whole plan, and {iteration} iterations completed"
            )
        return ChunkLostError(
            message, chunks=chunks, worker=worker, iteration=iteration,
            completed=iteration or 0,
        )  # fmt: skip

    def _each(self, method, args, *, indices=None, iteration=None):
        """``chunk.method(*args[k])`` on chunks ``indices`` (default all), results in order.

        ``args`` is one tuple for all, or a list with one tuple per chunk called.
        """
        if self._broken is not None:
            raise self._broken
        indices = list(range(self.n_chunks)) if indices is None else list(indices)
        per_chunk = args if isinstance(args, list) else [args] * len(indices)
        if self.client is None:
            chunks = [self._chunks[i] for i in indices]
            return [getattr(c, method)(*a) for c, a in zip(chunks, per_chunk, strict=True)]
        calls = []
        # every chunk is called before any is waited for: they compute at once
        for i, a in zip(indices, per_chunk, strict=True):
            try:
                calls.append(getattr(self._chunks[i], method)(*a))
            except Exception as err:
                raise self._fail([i], iteration, err) from err
        results = []
        for i, call in zip(indices, calls, strict=True):
            try:
                results.append(call.result(timeout=self.timeout))
            except DpglmError:  # the data's or the chunk's own failure, raised there
                raise
            except Exception as err:  # the call did not come back
                raise self._fail([i], iteration, err) from err
        return results

    def _fail(self, chunks, iteration, err):
        error = self._lost(chunks, iteration, err)
        self._broken = RuntimeError(
            f"the rows lost chunk {error.chunk} (worker {error.worker}); call restart() to "
            "reload every chunk on the workers present"
        )
        return error

    def call(self, op, args=(), *, chunk_args=None, iteration=None) -> dict:
        """Run the :func:`chunk_op` ``op(chunk, *args)`` on the chunks; results by chunk.

        Parameters
        ----------
        op : callable
            A :func:`chunk_op`.
        args : tuple
            Arguments for every chunk (sent to each).
        chunk_args : dict of int to tuple, optional
            Only these chunks are called, each with ``args + chunk_args[k]``.
        iteration : int, optional
            The solver's iteration, named if a chunk is lost.

        Returns
        -------
        dict of int to ndarray
            In chunk order.
        """
        if chunk_args is None:
            indices = list(range(self.n_chunks))
            per_chunk = [(op, tuple(args))] * len(indices)
        else:
            indices = sorted(chunk_args)
            per_chunk = [(op, tuple(args) + tuple(chunk_args[i])) for i in indices]
        results = self._each("run", per_chunk, indices=indices, iteration=iteration)
        for i, result in zip(indices, results, strict=True):
            self.uplink[i] += result.nbytes
        return dict(zip(indices, results, strict=True))

    def sum(self, op, args=(), *, chunk_args=None, iteration=None):
        """The sum over chunks of :meth:`call`'s results, added in chunk order.

        Adding in a fixed order makes the result independent of where the
        chunks run.
        """
        results = self.call(op, args, chunk_args=chunk_args, iteration=iteration)
        return functools.reduce(np.add, results.values())

    def reset(self) -> None:
        """Empty every chunk's fit state (a fit starts)."""
        self._each("reset", ())

    def __repr__(self) -> str:
        kind = "sparse" if self.sparse else "dense"
        where = "in-process" if self.client is None else f"on {len(set(self.placement))} workers"
        label = "chunk" if self.n_chunks == 1 else "chunks"
        spill = "" if self.resident else (", reread" if self.reread else ", spilled")
        return (
            f"ShardedRows({self.n_samples}x{self.n_features} {kind} in {self.n_chunks} {label}, "
            f"{where}{spill})"
        )
