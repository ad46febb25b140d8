"""Distributed training: features split across parties, or records split in row chunks.

:func:`~dpglm.distributed.vertical_fw.vertical_fw` fits the LASSO when ``K``
parties each hold a block of columns. By default
(:mod:`dpglm.distributed.vertical_screened`) the parties release, in three
rounds, noisy statistics of the columns their noisy marginal scores screen
in, and the coordinator solves the shared quadratic; ``variant="paper"`` runs
Algorithm 2 of Lou and Cheung (2018), whose coordinator combines the parties'
private signed indices and noisy sketched features at every iteration. The
protocols (:mod:`dpglm.distributed.protocol` and the screened module) do not
know where the parties run; an engine (:mod:`dpglm.distributed.engines`) does:
in this process by default, or one Dask actor per party (the ``dask`` extra).
:func:`~dpglm.distributed.vertical_rule.vertical_fw_rule` chooses Algorithm 2's
iterations, sketch size and clip from public numbers, and predicts whether
the fit will beat ``w = 0``; :mod:`dpglm.distributed.vertical_plan` holds its
privacy plan and the split of its budget.

:class:`~dpglm.distributed.data_parallel.ShardedProblem` is the data-parallel
side: the records stay in the row chunks of a
:class:`~dpglm.distributed.sharded.ShardedRows` (a row-chunked ``dask.array``
or a list of files, one Dask actor per chunk), and DP-GCD, DP-AGD, DP-GD,
private Frank-Wolfe and DP-SGD run on it, with the clipped sums computed on
the chunks (it implements :class:`~dpglm.access.DataAccess`) and the noise
added once at the coordinator.

Examples
--------
>>> from dpglm.distributed import InProcessEngine, vertical_fw
>>> InProcessEngine().name
'in-process'
"""

from dpglm.distributed.data_parallel import ShardedProblem
from dpglm.distributed.engines import DaskEngine, Engine, InProcessEngine
from dpglm.distributed.protocol import PartyError, PartyLostError, ProtocolError
from dpglm.distributed.sharded import ChunkLostError, ShardedRows
from dpglm.distributed.vertical_fw import vertical_fw
from dpglm.distributed.vertical_rule import vertical_fw_rule

__all__ = [
    "ChunkLostError",
    "DaskEngine",
    "Engine",
    "InProcessEngine",
    "PartyError",
    "PartyLostError",
    "ProtocolError",
    "ShardedProblem",
    "ShardedRows",
    "vertical_fw",
    "vertical_fw_rule",
]
