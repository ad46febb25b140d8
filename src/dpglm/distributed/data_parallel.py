"""Data-parallel private solvers: DP-GCD, DP-AGD, DP-GD, DP-FW and DP-SGD on row chunks.

A :class:`ShardedProblem` is a :class:`~dpglm.problem.Problem` whose records
live in the row chunks of a :class:`~dpglm.distributed.sharded.ShardedRows`
(a row-chunked ``dask.array``, dense or with ``scipy.sparse`` chunks, or a
list of files, each loaded by the worker that owns it). The in-memory solvers
run on it unchanged: :func:`~dpglm.solvers.dp_gcd.dp_gcd`,
:func:`~dpglm.solvers.dp_agd.dp_agd`, :func:`~dpglm.solvers.dp_gd.dp_gd`,
:func:`~dpglm.solvers.dp_fw.dp_fw` (and :func:`~dpglm.solvers.dp_fw.dp_bcfw`)
and :func:`~dpglm.solvers.dp_sgd.dp_sgd` validate, plan, calibrate, charge the
budget, draw every random number and select exactly as they do in memory.
They reach their data only through the operations of
:class:`~dpglm.access.DataAccess`, which a :class:`ShardedProblem` implements
by asking the chunks for their **clipped sums** (each chunk running the
in-memory code of :mod:`dpglm.access` on its rows), adding them in chunk
order, and handing the total to the solver, which adds the noise once, here,
from the fit's single noise source.

Layout: row chunks, for every solver
    A clipped gradient is a sum over records of per-record clipped terms, so
    each chunk computes its part on its own records and the coordinator adds
    the parts: one round trip per step, whatever the number of features, and
    no record ever leaves its worker. (A column split would need the margins
    of every record on every column holder at every step, and the vertical
    protocol of :mod:`dpglm.distributed.vertical_fw` pays for that with a
    sketch.) Within a chunk the rows are kept in the layout the solver's
    kernels read, converted in place once per fit when needed.

DP-GCD (:func:`~dpglm.solvers.dp_gcd.dp_gcd`)
    Needs every coordinate's clipped partial derivative at each step (the
    report-noisy-max compares them all). Each chunk keeps its margins
    ``z = X theta``; a step broadcasts the coordinate moved and by how much
    (``j, d``: two numbers), each chunk updates its margins
    (``z += d X_j``) and returns ``sum_i clip(l'(z_i) X_ij, C_j)`` for every
    ``j`` (``n_coords`` floats). A resident chunk runs the in-memory tracker
    on its rows (on sparse rows it patches the sums from the rows the moved
    column touches); a spilled one recomputes them from its margins.
    Selection, update noise and the step happen at the coordinator. A step
    that does not move the coordinate costs no round trip.
    ``smoothness="private"`` sums each chunk's clipped ``X_ij**2`` (per
    record, then per column) and adds the Laplace noise here.
DP-FW (:func:`~dpglm.solvers.dp_fw.dp_fw`, :func:`~dpglm.solvers.dp_fw.dp_bcfw`)
    The same: every coordinate's clipped sum (every vertex is scored). The
    margin updates of a step (``z <- (1 - mu) z + mu r X_j``) travel with the
    next request; one round trip per drawn block.
DP-AGD (:func:`~dpglm.solvers.dp_agd.dp_agd`), DP-GD (:func:`~dpglm.solvers.dp_gd.dp_gd`)
    Each step asks the chunks for the sum of their per-sample L2-clipped
    gradients (``n_coords`` floats; the margins stay on the chunks), then,
    for each selection of DP-AGD, for the ``K + 1`` candidates' sums of loss
    changes (or, in the paper's variant, of clipped losses) along the noisy
    direction (``K + 1`` floats).
DP-SGD (:func:`~dpglm.solvers.dp_sgd.dp_sgd`)
    The coordinator draws the batch (Poisson or without replacement, from the
    fit's source, exactly as in memory) and sends each chunk the indices of
    its sampled rows and the iterate; the chunk gathers those rows, clips
    each per-sample gradient to L2 norm ``C`` and returns their sum
    (``n_coords`` floats). Chunks without a sampled row are not called. One
    round trip per step.

Why DP-CD stays on one machine
    DP-CD (:func:`~dpglm.solvers.dp_cd.dp_cd`) updates one coordinate at a
    time, and each update needs the clipped partial derivative at the fresh
    residual, which the previous update just changed: a round trip to every
    chunk per coordinate step, ``n_coords`` of them per pass, thousands per
    pass on wide data, each moving ``O(1)`` numbers. The latency of those
    round trips, not the arithmetic, would set the speed; DP-GCD does the
    same kind of coordinate step with one round trip per step and is the
    method to distribute. Its in-memory kernels stay where they are (a
    :class:`ShardedProblem` passed to DP-CD raises, saying so, from
    :meth:`ShardedProblem.in_memory`). DP-SCD likewise.

Privacy
    The plan, its calibration, the budget charge and the report are the
    in-memory solver's, computed before any chunk is read for training.
    What the chunks return are sums of clipped per-record terms (the very
    quantities the plan's sensitivities bound), computed before any noise:
    the noise is added once, at the coordinator, from the fit's one source.
    The coordinator never holds a record. Besides the sums it learns what
    loading tells any :class:`~dpglm.problem.Problem`: each chunk's shape
    and number of stored entries (the number of records is public in the
    replace-one analysis), the label names of classification files, and the
    first row with an invalid label, raised as an error; no fit releases
    them. As with :class:`~dpglm.distributed.engines.DaskEngine`, Dask is no
    trust boundary: a client can run any code on its workers.

Same result as in memory
    For the same ``random_state`` the fit equals the in-memory fit of the
    same records up to the order of the sums (chunk by chunk, then across
    chunks in chunk order): coefficients agree to about ``1e-15`` relative
    (the tests require ``1e-10``), the selections and the privacy report
    exactly (a noisy argmax would have to be tied to rounding to differ).
    The sums are added in chunk order, wherever the chunks run.

Out of core
    ``ShardedRows.from_files(..., resident=False)`` (or ``from_dask_array``)
    loads one chunk per worker at a time and spills it to a memory-mapped
    ``.npy`` file; each step maps a chunk, computes, unmaps it. A worker then
    holds one chunk at a time, plus the targets and 8 to 24 bytes per record
    of fit state for each of its chunks, so the data may be far larger than
    a worker's memory limit (the sum of the workers' limits, even).

Failures
    A lost worker raises :class:`~dpglm.distributed.sharded.ChunkLostError`
    naming the chunk, its worker and the iteration; no model is returned
    (the budget was charged for the whole plan before training, as always).
    :meth:`ShardedRows.restart <dpglm.distributed.sharded.ShardedRows.restart>`
    reloads the chunks on the workers present.

Examples
--------
>>> import numpy as np
>>> from dpglm.distributed import ShardedProblem, ShardedRows
>>> from dpglm.penalties import L1
>>> from dpglm.problem import Problem
>>> from dpglm.solvers.dp_gcd import dp_gcd
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, (600, 5))
>>> y = 2 * X[:, 0] - X[:, 3] + 0.1 * rng.standard_normal(600)
>>> kwargs = dict(epsilon=1.0, delta=1e-6, n_iter=10, clip=2.0, feature_bounds=1.0)
>>> local = dp_gcd(Problem(X, y, "squared", L1(0.01)), random_state=0, **kwargs)
>>> with ShardedRows.from_array(X, y, chunks=250) as rows:  # 3 chunks, in this process
...     fit = dp_gcd(ShardedProblem(rows, "squared", L1(0.01)), random_state=0, **kwargs)
>>> bool(np.allclose(fit.coef, local.coef, rtol=1e-10, atol=0))
True
>>> (fit.info["selected"] == local.info["selected"]).all(), fit.report == local.report
(np.True_, True)
"""

from __future__ import annotations

import copy
import math

import numpy as np
import scipy.sparse as sp

from dpglm import _kernels
from dpglm._kernels.stochastic import prox_update
from dpglm.access import in_memory_refusal
from dpglm.access.batches import sample_norms
from dpglm.access.sums import (
    candidate_changes,
    candidate_losses,
    clipped_gradient_sum,
    row_norms,
)
from dpglm.datafits import get_datafit
from dpglm.distributed.sharded import ShardedRows, chunk_op
from dpglm.exceptions import TargetError
from dpglm.penalties import NoPenalty, get_penalty
from dpglm.problem import Problem

__all__ = ["ShardedProblem"]


# --- the operations the chunks run (each returns a sum over the chunk's records) -------------


@chunk_op
def _first_bad_label(chunk, config):
    """The chunk's first row whose label is not -1/+1 (-1 if none), for the error message."""
    y = chunk.y if config[-1] is None else np.where(chunk.y == config[-1], 1.0, -1.0)
    bad = np.flatnonzero((y != 1.0) & (y != -1.0))
    return np.array([bad[0] if bad.size else -1.0])


@chunk_op
def _loss_sum(chunk, config, theta):
    prob = chunk.problem(*config)
    return np.array([prob.datafit_value(theta) * chunk.n])


@chunk_op
def _gradient_sum(chunk, config, theta):
    return chunk.problem(*config).gradient(theta) * chunk.n


@chunk_op
def _clipped_gradient_sum(chunk, config, theta, clip):
    return chunk.problem(*config).clipped_gradient(theta, clip) * chunk.n


@chunk_op
def _column_square_sums(chunk, config, ceilings):
    """``sum_i X_ij**2`` per column, or ``sum_i min(X_ij**2, ceilings_j)`` (clipped per record)."""
    return chunk.problem(*config).column_square_means(ceilings) * chunk.n


@chunk_op
def _greedy_gradient(chunk, config, moves, clip):
    """DP-GCD: apply the coordinator's moves to the margins; the clipped gradient's sums."""
    prob = chunk.problem(*config)
    if chunk.resident:  # the in-memory tracker on the chunk (sparse patches included)
        state = chunk.state.get("greedy")
        if state is None:
            state = chunk.state["greedy"] = prob.clipped_gradient_tracker(clip)
        for j, d in moves:
            state.move(j, d)
        return state.G * chunk.n
    # spilled: the rows are mapped for this call only, the margins stay
    z = chunk.state.get("z")
    if z is None:
        z = chunk.state["z"] = np.zeros(chunk.n)
    X = prob.X
    for j, d in moves:
        if j == prob.n_features:  # the intercept moves every margin
            z += d
        elif sp.issparse(X):
            _kernels.add_scaled_column_csc(X.data, X.indices, X.indptr, j, d, z)
        else:
            _kernels.add_scaled_column_dense(X, j, d, z)
    s = np.empty(chunk.n)
    _kernels.derivatives(prob.datafit.code, prob.datafit.param, z, prob.y, s)
    return prob.clipped_gradient(None, clip, derivatives=s) * chunk.n


@chunk_op
def _agd_gradient(chunk, config, theta, clip):
    """DP-AGD: the sum of per-sample L2-clipped gradients; the margins stay here."""
    prob = chunk.problem(*config)
    norms = chunk.state.get("norms")
    if norms is None and math.isfinite(clip):
        norms = chunk.state["norms"] = row_norms(prob)
    total, chunk.state["z"] = clipped_gradient_sum(prob, theta, clip, norms)
    return total


@chunk_op
def _agd_losses(chunk, config, direction, steps, clip_obj):
    """DP-AGD: the sums of clipped candidate losses along ``direction``."""
    return candidate_losses(chunk.problem(*config), chunk.state["z"], direction, steps, clip_obj)


@chunk_op
def _agd_changes(chunk, config, direction, steps, clip):
    """DP-AGD: the changes of the clipped-gradient objective along ``direction``.

    :func:`_agd_gradient` left the margins here, and the row norms a finite clip needs.
    """
    prob, state = chunk.problem(*config), chunk.state
    return candidate_changes(prob, state["z"], direction, steps, clip, state.get("norms"))


@chunk_op
def _fw_gradient(chunk, config, order, bounds, clip, margin_moves, b):
    """Frank-Wolfe: apply the pending margin moves, then block ``b``'s clipped gradient sums."""
    blocks = chunk.state.get("blocks")
    if blocks is None:
        blocks = chunk.problem(*config).margin_blocks(order, bounds, clip)
        if "z" in chunk.state:  # a spilled chunk: the margins outlive the mapped rows
            blocks.z, blocks.s = chunk.state["z"], chunk.state["s"]
        else:
            chunk.state["z"], chunk.state["s"] = blocks.z, blocks.s
        if chunk.resident:
            chunk.state["blocks"] = blocks
    for move in margin_moves:
        kind = move[0]
        if kind == "derivatives":
            blocks.derivatives()
        elif kind == "scale":
            blocks.scale_margins(move[1])
        elif kind == "block":
            _, a, e, values, factor = move
            theta = np.zeros(len(order))
            theta[a:e] = values
            blocks.add_block(a, e, theta, factor)
        else:
            blocks.add_column(move[1], move[2])
    out = np.empty(bounds[b + 1] - bounds[b])
    blocks.gradient(b, out)
    return out * chunk.n


@chunk_op
def _sgd_batch(chunk, config, theta, clip, rows):
    """DP-SGD: the sum of the L2-clipped gradients of the chunk's sampled ``rows``.

    The sampled rows are gathered first and only they are clipped, scaled and
    normed: a step reads ``b`` rows of a spilled chunk, not all of them.
    """
    datafit, fit_intercept, _, bounds, scaling, positive = config
    X = chunk.features("rows")
    prob = chunk.prepared(X[rows], chunk.y[rows], datafit, fit_intercept, bounds, scaling,
                          positive)  # fmt: skip
    X, y = prob.rows, prob.y
    norms = sample_norms(X, prob.fit_intercept)
    coef, intercept = prob.split(theta)
    with np.errstate(over="ignore", invalid="ignore"):  # the kernel clips overflowed terms
        z = np.asarray(X @ coef).ravel() + intercept
    s = np.empty(rows.size)
    _kernels.derivatives(prob.datafit.code, prob.datafit.param, z, y, s)
    out = np.empty(prob.n_features)
    batch = np.arange(rows.size, dtype=np.int64)
    if sp.issparse(X):
        total = _kernels.clipped_row_gradient_sum_csr(
            X.data, X.indices, X.indptr, batch, s, norms, clip, out
        )
    else:
        total = _kernels.clipped_row_gradient_sum_dense(X, batch, s, norms, clip, out)
    return np.append(out, total) if prob.fit_intercept else out


@chunk_op
def _range_counts(chunk, config, plan):
    """The exact counts of a range estimate's histograms (a RangePlan's), flattened."""
    X, y = chunk.records()
    if config[-1] is not None:
        y = np.where(y == config[-1], 1.0, -1.0)
    counts = plan.counts(X, y if plan.target else None)
    return np.concatenate([c.ravel() for c in counts])


@chunk_op
def _extremes(chunk, config):
    """Every column's minimum, then its maximum, then the target's (read without privacy)."""
    from dpglm.preprocessing.ranges import extremes

    X, y = chunk.records()
    low, high = extremes(X, axis=0)
    return np.concatenate([low, high, [y.min(), y.max()]])


# --- the solvers' data sides, at the coordinator -------------------------------------------


class _ClippedGradientTracker:
    """DP-GCD's clipped gradient (see :class:`~dpglm.access.tracker.ClippedGradientTracker`)
    with the margins on the chunks.

    A move is sent with the next request for the gradient, so a step that
    does not move its coordinate costs no round trip.
    """

    def __init__(self, problem, clip):
        self.problem = problem
        self.clip = np.asarray(clip, dtype=float)
        self.pending: list = []
        problem.shards.reset()
        self.G = self._fetch(0)

    def _fetch(self, t):
        moves, self.pending = self.pending, []
        total = self.problem._sum(_greedy_gradient, "columns", (moves, self.clip), iteration=t)
        return total / self.problem.n_samples

    def gradient(self, t: int):
        if self.pending:
            self.G = self._fetch(t)
        return self.G

    def move(self, j: int, d: float):
        self.pending.append((int(j), float(d)))


class _GradientSums:
    """The clipped sums of :class:`~dpglm.access.sums.GradientSums`, with the margins on the
    chunks (``z`` is never sent here)."""

    def __init__(self, problem, clip_grad, clip_obj):
        self.problem = problem
        self.clip_grad, self.clip_obj = clip_grad, clip_obj
        self.iteration = -1
        problem.shards.reset()

    def gradient_sum(self, theta):
        # DP-AGD and DP-GD read one gradient per step, first thing: this counts their steps
        self.iteration += 1
        args = (np.asarray(theta, dtype=float), self.clip_grad)
        return self.problem._sum(_agd_gradient, "columns", args, iteration=self.iteration), None

    def losses(self, z, direction, steps):
        args = (np.asarray(direction, dtype=float), np.asarray(steps), self.clip_obj)
        return self.problem._sum(_agd_losses, "columns", args, iteration=self.iteration)

    def changes(self, z, direction, steps):
        args = (np.asarray(direction, dtype=float), np.asarray(steps), self.clip_grad)
        return self.problem._sum(_agd_changes, "columns", args, iteration=self.iteration)


class _MarginBlocks:
    """Frank-Wolfe's blocks (:class:`~dpglm.access.blocks.MarginBlocks`) with the margins on
    the chunks.

    The margin moves of a step (:meth:`derivatives`, :meth:`scale_margins`,
    :meth:`add_block`, :meth:`add_column`) are queued and sent, in order, with
    the next request for a block's gradient, where each chunk replays them with
    the in-memory ``MarginBlocks``; the selection runs in the solver, here.
    """

    def __init__(self, problem, order, bounds, clip):
        self.problem = problem
        self.order = np.asarray(order, dtype=np.int64)
        self.bounds = np.asarray(bounds, dtype=np.int64)
        self.clip_value = float(clip)
        self.n = problem.n_samples
        self.pending: list = []
        self.iteration = -1
        problem.shards.reset()

    def derivatives(self):
        # called once per iteration, first thing: this counts the iterations
        self.iteration += 1
        self.pending.append(("derivatives",))

    def scale_margins(self, factor):
        self.pending.append(("scale", float(factor)))

    def gradient(self, b, out):
        moves, self.pending = self.pending, []
        args = (self.order, self.bounds, self.clip_value, moves, int(b))
        out[:] = self.problem._sum(_fw_gradient, "columns", args, iteration=self.iteration)
        out /= self.n

    def add_block(self, a, e, theta, factor):
        self.pending.append(("block", int(a), int(e), np.array(theta[a:e]), float(factor)))

    def add_column(self, j, a):
        self.pending.append(("column", int(j), float(a)))


class _BatchSteps:
    """DP-SGD's steps (:class:`~dpglm.access.batches.BatchSteps`): batches gathered on their
    chunks, noise here."""

    def __init__(self, problem, theta, clip, sigma, step, inv_b, penalty_arrays):
        self.problem = problem
        self.theta = theta
        self.grad = np.empty_like(theta)
        self.clip, self.sigma, self.step, self.inv_b = float(clip), sigma, step, inv_b
        self.penalty_arrays = penalty_arrays
        self.done = 0
        problem.shards.reset()

    def run(self, counts, rows, noise):
        offsets = self.problem.shards.offsets
        pos = 0
        for t in range(counts.shape[0]):
            batch = rows[pos : pos + counts[t]]
            pos += counts[t]
            owner = np.searchsorted(offsets, batch, side="right") - 1
            gathered = {
                int(c): (np.ascontiguousarray(batch[owner == c] - offsets[c]),)
                for c in np.unique(owner)
            }
            self.grad[:] = 0.0
            if gathered:
                args = (self.theta, self.clip)
                self.grad += self.problem._sum(
                    _sgd_batch, "rows", args, chunk_args=gathered, iteration=self.done
                )
            prox_update(
                self.theta, self.grad, noise[t], self.sigma, self.step, self.inv_b,
                *self.penalty_arrays,
            )  # fmt: skip
            self.done += 1


# --- the problem -------------------------------------------------------------------------


class ShardedProblem(Problem):
    """A :class:`~dpglm.problem.Problem` whose records live in row chunks.

    The solvers DP-GCD, DP-AGD, DP-GD, DP-FW / DP-BCFW and DP-SGD accept it in
    place of an in-memory problem (see the module docstring): it implements
    every operation of :class:`~dpglm.access.DataAccess` on its chunks. DP-CD
    and DP-SCD do not accept it (:meth:`in_memory` refuses). Methods that
    return per-record values (``margins``, ``derivatives``) or the features
    (``X``, ``rows``) raise: the records stay on their chunks. The objective
    and gradients are sums computed on the chunks, and, like those of
    :class:`~dpglm.problem.Problem`, **not private**: for measuring a fit on
    data one may look at.

    Parameters
    ----------
    shards : ShardedRows
        The row chunks. One fit at a time.
    datafit, penalty, fit_intercept
        As in :class:`~dpglm.problem.Problem`.
    positive : float, optional
        With chunks of class codes (more than two labels): the code whose
        records are +1, the others -1 (see :meth:`one_vs_rest`).

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.distributed import ShardedRows
    >>> rows = ShardedRows.from_array(np.eye(3), np.array([1.0, 2.0, 3.0]), chunks=2)
    >>> prob = ShardedProblem(rows, "squared", fit_intercept=True)
    >>> prob.n_coords, round(prob.objective(np.zeros(4)), 4)
    (4, 2.3333)
    >>> prob.gradient(np.zeros(4))
    array([-0.33333333, -0.66666667, -1.        , -2.        ])
    >>> rows.close()
    """

    #: bounds the chunks clip their entries to (see :meth:`clipped_to`)
    feature_bounds = None
    #: the ranges the chunks map their records with (see :meth:`scaled`)
    scaling = None
    #: the class whose records are +1, the others -1 (see :meth:`one_vs_rest`)
    positive = None

    def __init__(self, shards: ShardedRows, datafit, penalty=None, fit_intercept: bool = False,
                 *, positive=None):  # fmt: skip
        if not isinstance(shards, ShardedRows):
            raise TypeError(f"shards must be a ShardedRows, got {type(shards).__name__}")
        self.shards = shards
        self.datafit = get_datafit(datafit)
        if self.datafit.n_outputs > 1:
            # the chunks' work objects compute one margin per record
            raise ValueError(
                f"a sharded problem takes a datafit with one margin per record; "
                f"{self.datafit!r} has {self.datafit.n_outputs} (fit one-vs-rest, or load the "
                "records in memory)"
            )
        self.n_outputs = 1
        self.penalty = get_penalty(penalty) if penalty is not None else NoPenalty()
        self.fit_intercept = bool(fit_intercept)
        self.n_samples, self.n_features = shards.n_samples, shards.n_features
        self.n_coords = self.n_features + int(self.fit_intercept)
        self.positive = positive
        if self.datafit.binary_labels:
            for k, first in shards.call(_first_bad_label, (self._config(None),)).items():
                if first[0] >= 0:
                    row = int(shards.offsets[k] + first[0])
                    raise TargetError(
                        f"the {self.datafit.name} loss needs labels -1/+1, but row {row} "
                        f"(chunk {k}, row {int(first[0])} of it) has another label; load the "
                        "files with task='classification'"
                    )

    @property
    def sparse(self) -> bool:
        """Whether the chunks hold sparse rows."""
        return bool(self.shards.sparse)

    def _config(self, layout):
        """The arguments of :meth:`Chunk.problem <dpglm.distributed.sharded.Chunk.problem>`."""
        return (self.datafit, self.fit_intercept, layout, self.feature_bounds, self.scaling,
                self.positive)  # fmt: skip

    def _sum(self, op, layout, args=(), **kwargs):
        """The sum over chunks of ``op(chunk, config, *args)`` (``config``: :meth:`_config`)."""
        return self.shards.sum(op, (self._config(layout), *args), **kwargs)

    def scaled(self, scaling):
        """The problem whose chunks map their records with ``scaling`` before any kernel.

        ``scaling`` (:class:`~dpglm.preprocessing.scaling.Scaling`) clips
        every entry to its column's range and maps it into ``[-1, 1]``, and a
        regression's target likewise: each chunk does it to its own records,
        so a data-parallel fit trains on what an estimator's in-memory fit with
        the same ranges does.

        Examples
        --------
        >>> from dpglm.distributed import ShardedRows
        >>> from dpglm.preprocessing.scaling import Scaling
        >>> rows = ShardedRows.from_array(np.array([[4.0], [0.0]]), np.zeros(2), chunks=1)
        >>> scaling = Scaling.from_ranges([0.0], [2.0])  # 4 is clipped to 2, then maps to 1
        >>> ShardedProblem(rows, "squared").scaled(scaling).column_square_means()
        array([1.])
        >>> rows.close()
        """
        problem = copy.copy(self)
        problem.scaling = scaling
        return problem

    def one_vs_rest(self, positive):
        """The binary problem of class code ``positive`` against the others (-1 / +1 targets).

        The chunks must hold class codes (loaded with ``task="classification"``
        and more than two labels).
        """
        problem = copy.copy(self)
        problem.positive = positive
        return problem

    # -- what an estimator's preprocessing reads (the records' ranges) ------------------------

    def range_counts(self, plan) -> list:
        """The exact counts of ``plan``'s histograms (a ``RangePlan``), summed over the chunks.

        Each chunk counts its own records; the sums, added here in chunk
        order, equal the counts of all records, and are released once by the
        plan. What a chunk returns is exact: only the plan's noise makes it
        private.
        """
        total = self.shards.sum(_range_counts, (self._config(None), plan))
        empty_y = np.zeros(0) if plan.target else None
        shapes = [c.shape for c in plan.counts(np.zeros((0, self.n_features)), empty_y)]
        sizes = np.cumsum([math.prod(shape) for shape in shapes])[:-1]
        parts = np.split(total, sizes)
        return [part.reshape(shape) for part, shape in zip(parts, shapes, strict=True)]

    def _extremes(self):
        found = np.vstack(list(self.shards.call(_extremes, (self._config(None),)).values()))
        p = self.n_features
        return found[:, :p].min(axis=0), found[:, p : 2 * p].max(axis=0), found[:, 2 * p :]

    def feature_extremes(self) -> tuple:
        """Every column's minimum and maximum over the chunks (read without privacy)."""
        low, high, _ = self._extremes()
        return low, high

    def target_extremes(self) -> tuple:
        """The target's minimum and maximum over the chunks (read without privacy)."""
        target = self._extremes()[2]
        return float(target[:, 0].min()), float(target[:, 1].max())

    def clipped_to(self, feature_bounds):
        """The problem whose chunks clip every entry of column ``j`` to ``[-B_j, B_j]``.

        The chunks clip their own records (a per-record operation, on the
        worker, before any kernel reads them; a copy only where some entry
        lies outside), so a data-parallel fit with feature bounds trains on
        what the in-memory fit with the same bounds does
        (:meth:`Problem.clipped_to <dpglm.problem.Problem.clipped_to>`).

        Examples
        --------
        >>> from dpglm.distributed import ShardedRows
        >>> rows = ShardedRows.from_array(np.array([[1e308], [0.5]]), np.zeros(2), chunks=1)
        >>> prob = ShardedProblem(rows, "squared").clipped_to(1.0)
        >>> prob.gradient(np.ones(1))  # (1 * 1 + 0.5 * 0.5) / 2
        array([0.625])
        >>> rows.close()
        """
        bounds = np.asarray(feature_bounds, dtype=float)
        bounds = np.broadcast_to(bounds, (self.n_features,)).copy()
        if not (np.isfinite(bounds) & (bounds >= 0)).all():
            raise ValueError(f"feature_bounds must be finite and >= 0, got {feature_bounds!r}")
        problem = copy.copy(self)
        problem.feature_bounds = bounds
        return problem

    # -- no records here ------------------------------------------------------------------

    def _elsewhere(self, what):
        return TypeError(
            f"{what} of a ShardedProblem stay on its row chunks; the data-parallel solvers "
            "(dp_gcd, dp_agd, dp_gd, dp_fw, dp_bcfw, dp_sgd) read them there, and DP-CD and "
            "DP-SCD need an in-memory Problem (see dpglm.distributed.data_parallel)"
        )

    @property
    def X(self):  # noqa: N802 (the name of Problem's property)
        raise self._elsewhere("the features")

    @property
    def rows(self):
        raise self._elsewhere("the features")

    @property
    def features(self):
        raise self._elsewhere("the features")

    @property
    def y(self):
        raise self._elsewhere("the targets")

    def layout(self, name: str):
        raise self._elsewhere("the features")

    @property
    def layouts(self) -> tuple:
        return ()

    def margins(self, theta):
        raise self._elsewhere("the margins")

    def derivatives(self, theta):
        raise self._elsewhere("the per-sample derivatives")

    def coordinate_gradient(self, theta, j: int) -> float:
        self._check_coordinate(j)
        return float(self.gradient(theta)[j])

    def coordinate_smoothness(self, feature_bounds=None):
        if feature_bounds is None:
            raise self._elsewhere("the column norms")
        return super().coordinate_smoothness(feature_bounds)

    # -- sums over the chunks (not private) -------------------------------------------------

    def datafit_value(self, theta) -> float:
        """Empirical risk ``(1/n) sum_i l(z_i, y_i)``, summed on the chunks."""
        theta = self._check_theta(theta)
        return float(self._sum(_loss_sum, None, (theta,))[0]) / self.n_samples

    def gradient(self, theta, derivatives=None):
        """Gradient of the empirical risk, summed on the chunks."""
        if derivatives is not None:
            raise self._elsewhere("the per-sample derivatives")
        return self._sum(_gradient_sum, None, (self._check_theta(theta),)) / self.n_samples

    def clipped_gradient(self, theta, clip, derivatives=None):
        """Coordinate-wise clipped gradient (see ``Problem.clipped_gradient``), on the chunks."""
        if derivatives is not None:
            raise self._elsewhere("the per-sample derivatives")
        args = (self._check_theta(theta), self._check_clip(clip))
        return self._sum(_clipped_gradient_sum, "columns", args) / self.n_samples

    # -- data access: what the solvers ask (dpglm.access.DataAccess), on the chunks ---------

    def in_memory(self, solver: str):
        """Refuse: ``solver`` needs every record in this process (DP-CD, DP-SCD).

        Each of their steps needs state fresh from the previous one, a round
        trip to the row chunks per step (see the module docstring). Raised
        before anything is planned or charged.

        Examples
        --------
        >>> from dpglm.distributed import ShardedRows
        >>> rows = ShardedRows.from_array(np.eye(2), np.zeros(2), chunks=1)
        >>> try:
        ...     ShardedProblem(rows, "squared").in_memory("DP-CD")
        ... except TypeError as error:
        ...     print(str(error).split(":")[0])
        DP-CD needs an in-memory Problem
        >>> rows.close()
        """
        raise TypeError(in_memory_refusal(solver))

    def dense_entries(self, n_columns=None) -> float:
        """``inf``: no kernel reads records here, so the coordinator's threads stay as they are.

        On a worker, the chunks' kernels run on the worker's threads.
        """
        return math.inf

    def column_square_means(self, ceilings=None):
        """``(1/n) sum_i X_ij**2`` per column, or with each square clipped to ``ceilings_j``.

        The chunks sum their records' (clipped) squares; the coordinator adds
        the sums in chunk order (see :meth:`Problem.column_square_means
        <dpglm.problem.Problem.column_square_means>`). Not private.

        Examples
        --------
        >>> from dpglm.distributed import ShardedRows
        >>> rows = ShardedRows.from_array(np.array([[3.0], [1.0]]), np.zeros(2), chunks=1)
        >>> ShardedProblem(rows, "squared").column_square_means(np.array([4.0]))
        array([2.5])
        >>> rows.close()
        """
        return self._sum(_column_square_sums, "columns", (ceilings,)) / self.n_samples

    def clipped_gradient_tracker(self, clip):
        """DP-GCD's clipped gradient, kept on the chunks."""
        return _ClippedGradientTracker(self, clip)

    def gradient_sums(self, clip_grad, clip_obj=math.inf):
        """DP-AGD's and DP-GD's clipped gradient sums and candidate losses, on the chunks."""
        return _GradientSums(self, clip_grad, clip_obj)

    def margin_blocks(self, order, bounds, clip):
        """Frank-Wolfe's blocks, with the margins on the chunks."""
        return _MarginBlocks(self, order, bounds, clip)

    def batch_steps(self, theta, clip, sigma, step, inv_b, penalty_arrays):
        """DP-SGD's steps, the batches' clipped sums gathered on their chunks."""
        return _BatchSteps(self, theta, clip, sigma, step, inv_b, penalty_arrays)

    def __repr__(self) -> str:
        kind = "sparse" if self.shards.sparse else "dense"
        return (
            f"ShardedProblem({self.n_samples}x{self.n_features} {kind} in "
            f"{self.shards.n_chunks} chunks, datafit={self.datafit!r}, "
            f"penalty={self.penalty!r}, fit_intercept={self.fit_intercept})"
        )
