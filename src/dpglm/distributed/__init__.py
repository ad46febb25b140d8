"""Distributed training: private Frank-Wolfe with features split across parties.

:func:`~dpglm.distributed.vertical_fw.vertical_fw` runs Algorithm 2 of Lou and
Cheung (2018): ``K`` parties each hold a block of columns, and a coordinator
combines their private signed indices and noisy sketched features. The
protocol (:mod:`dpglm.distributed.protocol`) does not know where the parties
run; an engine (:mod:`dpglm.distributed.engines`) does: in this process by
default, or one Dask actor per party (the ``dask`` extra).

Examples
--------
>>> from dpglm.distributed import InProcessEngine, vertical_fw
>>> InProcessEngine().name
'in-process'
"""

from dpglm.distributed.engines import DaskEngine, Engine, InProcessEngine
from dpglm.distributed.protocol import PartyError, PartyLostError, ProtocolError
from dpglm.distributed.vertical_fw import vertical_fw

__all__ = [
    "DaskEngine",
    "Engine",
    "InProcessEngine",
    "PartyError",
    "PartyLostError",
    "ProtocolError",
    "vertical_fw",
]
