"""Data-parallel DP-GCD on more data than the workers may hold: out of core on Dask.

A LASSO problem is generated on the workers of a ``distributed.LocalCluster``
(2 worker processes, one thread each, loopback) in ``CHUNKS`` row chunks of
dense float64, more in total than the workers' memory limit
(``memory_limit`` per worker, the Dask "nanny" limit). Each chunk is built on
the worker that will own it and spilled to a memory-mapped file there
(``ShardedRows.from_dask_array(..., resident=False)``); every DP-GCD step maps
the chunks one at a time, sums their clipped gradients and unmaps them, so a
worker holds one chunk at a time. The coordinator adds the noise once per step.

The script reports the data size against the limits, each worker's peak
resident memory (``ru_maxrss`` of the worker process), the time per step, the
bytes the chunks returned, and checks that the result equals an in-memory fit
of the same data with the same seed (the data regenerated in this process).

Usage::

    python benchmarks/bench_out_of_core.py            # writes results/bench_out_of_core.json
    python benchmarks/bench_out_of_core.py --quick    # small, results/..._quick.json
    python benchmarks/bench_out_of_core.py --table    # README table from the saved JSON
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

import numpy as np

from bench_kernels import environment
from dpglm.penalties import L1
from dpglm.problem import Problem
from dpglm.solvers.registry import get_solver
from readme_tables import replace_table

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "bench_out_of_core.json"

FULL = {"p": 100, "rows": 25_000, "chunks": 40, "limit_mib": 450, "steps": 10}
QUICK = {"p": 50, "rows": 5_000, "chunks": 8, "limit_mib": 400, "steps": 5}
TRUE_COEF = (3.0, -2.0, 1.5, -1.0, 0.5)
FIT = {"epsilon": 1.0, "delta": 1e-6, "clip": 2.0, "feature_bounds": 1.0, "random_state": 0}
LAMBDA = 0.01


def block(seed, rows, p):
    """One chunk of the LASSO problem, the same wherever it is built."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (rows, p))
    w = np.zeros(p)
    w[: len(TRUE_COEF)] = TRUE_COEF
    return X, X @ w + 0.1 * rng.standard_normal(rows)


def peak_rss_mib(dask_worker=None):
    """Peak resident memory of this process, in MiB (Linux reports KiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mib(dask_worker=None):
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def sharded_fit(size):
    """The out-of-core fit on a fresh cluster: coefficients and measurements."""
    import dask
    import dask.array as da
    import distributed

    from dpglm.distributed import ShardedProblem, ShardedRows

    rows, p, chunks = size["rows"], size["p"], size["chunks"]
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        memory_limit=f"{size['limit_mib']}MiB",
        silence_logs=logging.ERROR,
    )
    client = distributed.Client(cluster)
    try:
        client.wait_for_workers(2, timeout=60)
        baseline = client.run(current_rss_mib)
        parts = [dask.delayed(block)(seed, rows, p) for seed in range(chunks)]
        X = da.concatenate([da.from_delayed(b[0], (rows, p), dtype=float) for b in parts])
        y = da.concatenate([da.from_delayed(b[1], (rows,), dtype=float) for b in parts])
        start = time.perf_counter()
        shards = ShardedRows.from_dask_array(X, y, client=client, resident=False)
        loaded = time.perf_counter() - start
        with shards:
            problem = ShardedProblem(shards, "squared", L1(LAMBDA))
            start = time.perf_counter()
            fit = get_solver("dp-gcd").fit(problem, n_iter=size["steps"], **FIT)
            seconds = time.perf_counter() - start
            uplink = int(shards.uplink.sum())
        return fit.coef, {
            "data_mib": X.nbytes / 2**20,
            "chunk_mib": X.nbytes / chunks / 2**20,
            "baseline_rss_mib": list(baseline.values()),
            "peak_rss_mib": list(client.run(peak_rss_mib).values()),
            "load_seconds": loaded,
            "fit_seconds": seconds,
            "seconds_per_step": seconds / size["steps"],
            "uplink_bytes": uplink,
        }
    finally:
        client.close()
        cluster.close()


def in_memory_fit(size):
    """The same fit on the same data, generated in this process."""
    blocks = [block(seed, size["rows"], size["p"]) for seed in range(size["chunks"])]
    X = np.concatenate([b[0] for b in blocks])
    y = np.concatenate([b[1] for b in blocks])
    start = time.perf_counter()
    fit = get_solver("dp-gcd").fit(
        Problem(X, y, "squared", L1(LAMBDA)), n_iter=size["steps"], **FIT
    )
    return fit.coef, time.perf_counter() - start


def markdown(report):
    size, m = report["size"], report["measured"]
    limit = size["limit_mib"]
    lines = [
        "| measure | value |",
        "|---|---|",
        f"| data (dense float64) | {m['data_mib']:.0f} MiB in {size['chunks']} chunks of "
        f"{m['chunk_mib']:.1f} MiB ({size['chunks'] * size['rows']} x {size['p']}) |",
        f"| worker memory limit | 2 workers x {limit} MiB = {2 * limit} MiB |",
        f"| worker memory at start | {', '.join(f'{v:.0f}' for v in m['baseline_rss_mib'])} MiB |",
        f"| worker peak memory | {', '.join(f'{v:.0f}' for v in m['peak_rss_mib'])} MiB |",
        f"| load and spill | {m['load_seconds']:.1f} s |",
        f"| DP-GCD step, out of core | {m['seconds_per_step'] * 1e3:.0f} ms "
        f"({size['steps']} steps) |",
        f"| DP-GCD step, in memory (one process) | "
        f"{report['in_memory_seconds'] / size['steps'] * 1e3:.0f} ms |",
        f"| bytes the chunks returned (clipped sums only) | {m['uplink_bytes']:,} |",
        f"| largest relative difference from the in-memory fit | {report['max_rel_diff']:.1e} |",
    ]
    return "\n".join(lines)


SECTION = (
    "## Out-of-core data-parallel DP-GCD (`bench_out_of_core.py`)\n\n"
    "A LASSO problem generated on the workers of a local Dask cluster (2 worker processes, "
    "one thread each), larger than the workers' memory limits, fitted by DP-GCD on row "
    "chunks spilled to memory-mapped files on the workers (`ShardedRows(resident=False)`): "
    "each step maps one chunk at a time, returns its clipped gradient sum and unmaps it; "
    "the noise is added once at the coordinator. The fit is checked against an in-memory "
    "fit of the same data with the same seed. Generated from "
    "`results/bench_out_of_core.json` (`python benchmarks/bench_out_of_core.py`)."
)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args(argv)
    path = RESULTS.with_name("bench_out_of_core_quick.json") if args.quick else RESULTS
    if args.table:
        print(markdown(json.loads(RESULTS.read_text())))
        return 0
    size = QUICK if args.quick else FULL
    coef, measured = sharded_fit(size)
    reference, in_memory_seconds = in_memory_fit(size)
    scale = np.maximum(np.abs(reference), 1e-300)
    max_rel_diff = float(np.max(np.abs(coef - reference) / scale, initial=0.0))
    report = {
        "environment": environment(),
        "size": size,
        "fit": {**FIT, "lambda": LAMBDA, "penalty": "l1"},
        "measured": measured,
        "in_memory_seconds": in_memory_seconds,
        "max_rel_diff": max_rel_diff,
    }
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(report, indent=1))
    table = markdown(report)
    print(table)
    if max_rel_diff > 1e-10:
        raise SystemExit(f"the out-of-core fit differs from the in-memory one: {max_rel_diff}")
    if not args.quick:
        replace_table("bench_out_of_core", table, SECTION)
    return 0


if __name__ == "__main__":
    sys.exit(main())
