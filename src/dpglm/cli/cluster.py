"""``dpglm fit --workers N`` / ``--cluster ADDRESS``: a fit on a Dask cluster, data-parallel.

The data (a file, a directory or a glob of CSV / Parquet files,
:func:`dpglm.data.dataset_files`) is read file by file by the workers, one row
chunk per file (:meth:`ShardedRows.from_files
<dpglm.distributed.ShardedRows.from_files>`), and the estimator's fit runs on
the chunks where they live (:mod:`dpglm.estimators.sharded`): the records never
pass through this process. ``--workers N`` starts a local cluster of ``N``
worker processes (one thread each) for the fit; ``--cluster`` connects to a
running scheduler, whose workers must be able to read the files at the same
paths. ``--out-of-core`` spills each chunk to its worker's disk and maps it
only while a step reads it, for data larger than the workers' memory.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass

from dpglm.exceptions import MissingDependencyError

__all__ = ["ShardedSource", "cluster_client", "sharded_rows"]


@dataclass(frozen=True)
class ShardedSource:
    """What ``fit`` prints of data it never held: its shape, names and where it came from.

    Examples
    --------
    >>> ShardedSource("regression", 10, 2, "'data/'", "y").n_features
    2
    """

    task: str
    n_samples: int
    n_features: int
    source: str
    target_name: str | None


@contextlib.contextmanager
def cluster_client(workers=None, address=None):
    """A Dask client: of a new local cluster of ``workers`` processes, or of ``address``.

    Both are closed on exit (a scheduler given by its address keeps running).
    """
    try:
        import distributed
    except ImportError as err:  # pragma: no cover - only without the extra
        raise MissingDependencyError(
            "--workers and --cluster need dask.distributed: pip install 'dpglm[dask]'"
        ) from err
    if address is not None:
        try:
            client = distributed.Client(address, timeout="30s")
        except OSError as err:
            raise OSError(f"--cluster {address}: cannot reach the scheduler ({err})") from err
        with client:
            yield client
        return
    cluster = distributed.LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    with cluster, distributed.Client(cluster) as client:
        yield client


def sharded_rows(args, task, client):
    """The row chunks of ``args.data``, one per file, loaded by the workers of ``client``."""
    from dpglm.data import dataset_files
    from dpglm.distributed import ShardedRows

    paths = dataset_files(args.data)
    return ShardedRows.from_files(
        paths,
        client=client,
        target=args.target,
        task=task,
        classes=args.classes,
        resident=not args.out_of_core,
    )
