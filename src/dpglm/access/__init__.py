"""Data access: what a solver asks of its data, wherever the records are.

A private solver reads its records only through the operations of
:class:`DataAccess`, which an in-memory :class:`~dpglm.problem.Problem`
(dense or sparse, either layout) and a
:class:`~dpglm.distributed.data_parallel.ShardedProblem` (row chunks in this
process or on Dask workers, resident or memory-mapped) both implement. The
solver never asks where the data is: it plans, calibrates, charges the budget
and draws every random number the same way, and the data computes the clipped
sums, in one place or chunk by chunk.

The work objects the operations hand out hold a fit's state next to the
records (margins, derivatives, row norms). Their in-memory versions live here,
one module each, and run unchanged on every row chunk of a sharded problem:

:mod:`~dpglm.access.columns`
    Column statistics behind the smoothness constants ``M_j``.
:mod:`~dpglm.access.tracker`
    DP-GCD's coordinate-wise clipped gradient, kept across coordinate moves.
:mod:`~dpglm.access.sums`
    DP-AGD's and DP-GD's sums of L2-clipped gradients, and DP-AGD's candidate
    scores (loss changes, or clipped losses).
:mod:`~dpglm.access.blocks`
    Frank-Wolfe's blocks of columns, with the margins shared by all blocks.
:mod:`~dpglm.access.batches`
    DP-SGD's steps on the rows of sampled batches.

Everything here reads the raw data and is **not private**: the solvers decide
what is released, and add the noise.

Examples
--------
>>> import numpy as np
>>> from dpglm.problem import Problem
>>> prob = Problem(np.array([[3.0, 1.0], [1.0, 1.0]]), np.zeros(2), "squared")
>>> isinstance(prob, DataAccess)
True
>>> prob.column_square_means(ceilings=np.array([4.0, 4.0]))
array([2.5, 1. ])
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from dpglm.access.batches import BatchSteps, sample_norms
from dpglm.access.blocks import MarginBlocks
from dpglm.access.columns import clipped_column_mean_squares, column_mean_squares
from dpglm.access.sums import GradientSums, candidate_losses, clipped_gradient_sum, row_norms
from dpglm.access.tracker import ClippedGradientTracker

__all__ = [
    "BatchSteps",
    "ClippedGradientTracker",
    "DataAccess",
    "GradientSums",
    "MarginBlocks",
    "candidate_losses",
    "clipped_column_mean_squares",
    "clipped_gradient_sum",
    "column_mean_squares",
    "in_memory_refusal",
    "row_norms",
    "sample_norms",
]


@runtime_checkable
class DataAccess(Protocol):
    """The operations a solver asks of its data, besides a problem's basics.

    The basics (``n_samples``, ``n_features``, ``n_coords``, ``datafit``,
    ``penalty``, ``fit_intercept``, ``split``, ``objective``, ``gradient``,
    ``clipped_gradient``) are those of :class:`~dpglm.problem.Problem`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.problem import Problem
    >>> prob = Problem(np.eye(2), np.array([1.0, -1.0]), "squared")
    >>> sums = prob.gradient_sums(clip_grad=0.5)
    >>> sums.gradient_sum(np.zeros(2))[0]  # (-1, 0) and (0, 1), each clipped to norm 0.5
    array([-0.5,  0.5])
    >>> prob.in_memory("DP-CD") is prob
    True
    """

    def clipped_to(self, feature_bounds) -> DataAccess:
        """The data with every entry of column ``j`` clipped to ``[-B_j, B_j]``, per record."""
        ...

    def in_memory(self, solver: str):
        """The problem with every record in this process, for ``solver``; others refuse."""
        ...

    def dense_entries(self, n_columns=None) -> float:
        """Entries a dense kernel reads here in one pass over ``n_columns`` columns (or inf)."""
        ...

    def column_square_means(self, ceilings=None):
        """``(1/n) sum_i X_ij**2`` per column, or ``(1/n) sum_i min(X_ij**2, ceilings_j)``."""
        ...

    def clipped_gradient_tracker(self, clip):
        """DP-GCD's clipped gradient at ``theta = 0``, kept up to date move after move.

        The object answers ``gradient(t)`` (the clipped gradient at the start
        of step ``t``) and ``move(j, d)`` (coordinate ``j`` moved by ``d``), as
        :class:`~dpglm.access.tracker.ClippedGradientTracker` does.
        """
        ...

    def gradient_sums(self, clip_grad, clip_obj=float("inf")):
        """Sums of L2-clipped per-sample gradients, and DP-AGD's candidate scores.

        The object answers ``gradient_sum(theta)`` (the sum and a handle ``z``
        on the margins), ``changes(z, direction, steps)`` and
        ``losses(z, direction, steps)``, as
        :class:`~dpglm.access.sums.GradientSums` does.
        """
        ...

    def margin_blocks(self, order, bounds, clip):
        """Frank-Wolfe's blocks of columns, with the margins shared by all blocks.

        The object has ``bounds`` and answers ``derivatives()``,
        ``scale_margins(factor)``, ``gradient(b, out)``,
        ``add_block(a, e, theta, factor)`` and ``add_column(j, a)``, as
        :class:`~dpglm.access.blocks.MarginBlocks` does.
        """
        ...

    def batch_steps(self, theta, clip, sigma, step, inv_b, penalty_arrays):
        """DP-SGD's steps on the rows of sampled batches, updating ``theta`` in place.

        The object answers ``run(counts, rows, noise)``, as
        :class:`~dpglm.access.batches.BatchSteps` does.
        """
        ...


def in_memory_refusal(solver: str) -> str:
    """Why data in row chunks refuses ``solver``, whose every step needs fresh state.

    The message of :meth:`DataAccess.in_memory` on a
    :class:`~dpglm.distributed.data_parallel.ShardedProblem`, and of the
    solvers' checks on a problem's public shape.

    Examples
    --------
    >>> in_memory_refusal("DP-CD").split(":")[0]
    'DP-CD needs an in-memory Problem'
    """
    return (
        f"{solver} needs an in-memory Problem: each of its steps needs state fresh "
        "from the previous one, a round trip to the row chunks per step; use a "
        "data-parallel solver (dp_gcd, dp_agd, dp_gd, dp_fw, dp_bcfw, dp_sgd) on a "
        "ShardedProblem (see dpglm.distributed.data_parallel)"
    )
