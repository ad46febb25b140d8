"""Scale out: a Parquet dataset larger than memory, fitted by ``DPLogisticRegression.fit`` on Dask.

The dataset: ``--files`` Parquet files (zstd) of 1,000,000 records each, 100
float32 features and a 0/1 target, written to ``--directory`` (default: a
temporary directory beside the working directory) and deleted at the end
unless ``--keep``. Each feature takes 256 values (an 8-bit code times the
column's own scale, from 1e-4 to 10: raw columns of very different ranges, as
a real table has), so Parquet's dictionary encoding stores about a byte a
value; the target follows a logistic model on ten of the columns. The
default, 65 files, is 6.5e9 values: 26 GB as float32, 52 GB as the float64
the solvers compute on, against the machine's 24 GB of memory; about 6.5 GB
on disk. The script refuses to write more than half of the free disk.

What is measured, on a ``distributed.LocalCluster`` of 2 worker processes of
one thread each, memory limit ``--memory-limit`` per worker:

* **I/O floor**: every file read once by ``pyarrow.parquet.read_table``, the
  files shared between the two workers, in parallel: cold (each file evicted
  from the page cache first, ``posix_fadvise(DONTNEED)``) and warm.
* **The fit**: ``ShardedRows.from_files(files, target="y",
  task="classification", classes=[0, 1], resident=False, reread=True)``, each
  worker reading its files again for each pass (no copy held, nothing
  spilled), then ``DPLogisticRegression(epsilon=1.0, classes=[0, 1],
  random_state=0).fit(rows)`` (the 0/1 labels are public: the workers read
  them, so they cannot be selected privately), every other argument by
  default (``solver="auto"``: DP-AGD on row chunks). Time to load (the
  chunks read and validate their files once), time of the fit, the
  passes over the data it made (the reads per chunk), time per pass against
  the I/O floor, and the peak resident memory of each worker (sampled every
  second, ``psutil``).
* **Accuracy** on a held-out file of 1,000,000 records, against the same
  default ``DPLogisticRegression(epsilon=1.0, classes=[0, 1])`` fitted in
  memory on the first ``--sample-files`` files (a sample that fits in
  memory), and scikit-learn's non-private ``LogisticRegression`` on the
  standardised first file.

Usage::

    python benchmarks/bench_scale_out.py                 # 65 files, results/bench_scale_out.json
    python benchmarks/bench_scale_out.py --files 4 --quick   # a check, ..._quick.json
    python benchmarks/bench_scale_out.py --table         # the README table from the JSON
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
ROWS, FEATURES, INFORMATIVE = 1_000_000, 100, 10
#: the target's labels, public (0/1 by construction): row chunks read by their workers cannot
#: have their labels selected privately, and the sample fit is given them too, to compare
CLASSES = [0, 1]
SEED = 20261126


def column_scales():
    """Each column's scale: raw ranges from about 1e-2 to 1e3 (codes run over -128..127)."""
    return (10.0 ** np.random.default_rng(SEED).uniform(-4, 1, FEATURES)).astype(np.float32)


def truth():
    """The logistic model's coefficients, on the 8-bit codes scaled to [-1, 1]."""
    w = np.zeros(FEATURES)
    w[:INFORMATIVE] = np.random.default_rng(SEED + 1).normal(0.0, 1.5, INFORMATIVE)
    return w


def write_file(path: str, index: int) -> int:
    """One file of ROWS records; returns its size in bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng([SEED, index])
    codes = rng.integers(-128, 128, (ROWS, FEATURES), dtype=np.int16)
    margin = (codes[:, :INFORMATIVE] / 128.0) @ truth()[:INFORMATIVE] - 0.3
    y = (margin + rng.logistic(0.0, 1.0, ROWS) > 0).astype(np.int8)
    X = codes.astype(np.float32) * column_scales()
    columns = {f"x{j}": X[:, j] for j in range(FEATURES)}
    columns["y"] = y
    pq.write_table(pa.table(columns), path, compression="zstd", row_group_size=250_000)
    return os.path.getsize(path)


def write_dataset(directory: Path, files: int) -> tuple:
    """The training files and the held-out file, written by two processes."""
    paths = [str(directory / f"part-{k:04d}.parquet") for k in range(files)]
    test = str(directory / "heldout.parquet")
    with ProcessPoolExecutor(2) as pool:
        sizes = list(pool.map(write_file, [*paths, test], [*range(files), 10**6]))
    return paths, test, sizes


def evict(paths) -> None:
    """Drop the files' pages from the page cache (a cold read), without privileges."""
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def read_rows(path: str) -> int:
    import pyarrow.parquet as pq

    return pq.read_table(path).num_rows


def io_floor(client, paths) -> float:
    """Seconds to read every file once on the cluster's workers, in parallel."""
    start = time.perf_counter()
    futures = client.map(read_rows, paths, pure=False)
    assert sum(client.gather(futures)) == ROWS * len(paths)
    return time.perf_counter() - start


class MemoryWatch:
    """Each worker's peak resident memory, sampled every second in a thread."""

    def __init__(self, client):
        self.client, self.peak, self._stop = client, {}, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _rss():
        import psutil

        return psutil.Process().memory_info().rss

    def _run(self):
        while not self._stop.wait(1.0):
            try:
                for worker, rss in self.client.run(self._rss).items():
                    self.peak[worker] = max(self.peak.get(worker, 0), rss)
            except Exception:  # a worker restarting: sample again next second
                continue

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def sample_fit(paths, test, sample_files):
    """The default fit in memory on a sample, and scikit-learn's on the first file."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from dpglm.data import load
    from dpglm.estimators import DPLogisticRegression

    held_out = load(test, target="y", task="classification")
    y_test = held_out.decode(held_out.y)
    parts = [load(path, target="y", task="classification") for path in paths[:sample_files]]
    X = np.vstack([part.X for part in parts])
    y = np.concatenate([part.decode(part.y) for part in parts])
    del parts
    start = time.perf_counter()
    model = DPLogisticRegression(epsilon=1.0, classes=CLASSES, random_state=0).fit(X, y)
    seconds = time.perf_counter() - start
    private = {"records": len(y), "seconds": seconds, "solver": model.solver_,
               "accuracy": float(model.score(held_out.X, y_test))}  # fmt: skip
    del X, y
    first = load(paths[0], target="y", task="classification")
    scaler = StandardScaler().fit(first.X)
    reference = LogisticRegression(max_iter=1000).fit(scaler.transform(first.X), first.y)
    accuracy = float(reference.score(scaler.transform(held_out.X), held_out.y))
    return private, {"records": first.n_samples, "accuracy": accuracy}, held_out, y_test


def cluster_fit(client, paths, held_out, y_test):
    """The data-parallel default fit, timed, with its passes and the workers' memory."""
    from dpglm.distributed import ShardedRows
    from dpglm.estimators import DPLogisticRegression

    with MemoryWatch(client) as watch:
        start = time.perf_counter()
        rows = ShardedRows.from_files(paths, client=client, target="y", task="classification",
                                      classes=CLASSES, resident=False, reread=True)  # fmt: skip
        loaded = time.perf_counter() - start
        with rows:
            start = time.perf_counter()
            model = DPLogisticRegression(epsilon=1.0, classes=CLASSES, random_state=0).fit(rows)
            seconds = time.perf_counter() - start
            reads = [fact["reads"] for fact in rows.facts()]
    return {
        "load_seconds": loaded,
        "fit_seconds": seconds,
        "passes": int(max(reads)),
        "reads_per_chunk": sorted(set(reads)),
        "solver": model.solver_,
        "iterations": model.n_iter_,
        "execution": model.privacy_report_.execution,
        "epsilon": model.privacy_report_.epsilon,
        "accuracy": float(model.score(held_out.X, y_test)),
        "peak_worker_memory_gb": {w: rss / 1e9 for w, rss in sorted(watch.peak.items())},
    }


def run(args) -> dict:
    import distributed

    root = Path(args.directory or tempfile.mkdtemp(prefix="dpglm-scale-out-", dir="."))
    root.mkdir(parents=True, exist_ok=True)
    estimate = (args.files + 1) * 105e6  # about a byte a value, and the metadata
    free = shutil.disk_usage(root).free
    if estimate > free / 2:
        raise SystemExit(f"{estimate / 1e9:.1f} GB would exceed half of the free disk")
    try:
        start = time.perf_counter()
        paths, test, sizes = write_dataset(root, args.files)
        written = time.perf_counter() - start
        values = args.files * ROWS * FEATURES
        result = {
            "files": args.files,
            "records": args.files * ROWS,
            "features": FEATURES,
            "float32_gb": values * 4 / 1e9,
            "float64_gb": values * 8 / 1e9,
            "disk_gb": sum(sizes[:-1]) / 1e9,
            "write_seconds": written,
            "memory_gb": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9,
        }
        print(json.dumps(result, indent=1), flush=True)
        private, reference, held_out, y_test = sample_fit(paths, test, args.sample_files)
        result["sample_fit"], result["non_private_first_file"] = private, reference
        print(json.dumps({"sample_fit": private, "reference": reference}), flush=True)
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           memory_limit=args.memory_limit,
                                           dashboard_address=None)  # fmt: skip
        with cluster, distributed.Client(cluster) as client:
            evict(paths)
            cold = io_floor(client, paths)
            warm = io_floor(client, paths)
            result["io_floor_seconds"] = {"cold": cold, "warm": warm}
            print(json.dumps(result["io_floor_seconds"]), flush=True)
            fit = cluster_fit(client, paths, held_out, y_test)
        fit["seconds_per_pass"] = fit["fit_seconds"] / fit["passes"]
        fit["pass_over_cold_floor"] = fit["seconds_per_pass"] / cold
        fit["pass_over_warm_floor"] = fit["seconds_per_pass"] / warm
        result["cluster_fit"] = fit
        result["memory_limit"] = args.memory_limit
        result["load_average"] = os.getloadavg()
        print(json.dumps(fit, indent=1), flush=True)
        return result
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


def table(result) -> str:
    fit, floor = result["cluster_fit"], result["io_floor_seconds"]
    peak = max(fit["peak_worker_memory_gb"].values())
    lines = [
        "| dataset | I/O floor (cold / warm) | load | fit | passes | per pass | per pass / "
        "floor (cold / warm) | peak worker memory | accuracy: cluster / sample in memory "
        "/ non-private |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| {result['records']:,} x {result['features']}: {result['float32_gb']:.0f} GB "
        f"float32, {result['float64_gb']:.0f} GB float64, {result['disk_gb']:.1f} GB "
        f"Parquet | {floor['cold']:.0f} s / {floor['warm']:.0f} s | "
        f"{fit['load_seconds']:.0f} s | {fit['fit_seconds']:.0f} s ({fit['solver']}, "
        f"{fit['iterations']} steps) | {fit['passes']} | {fit['seconds_per_pass']:.1f} s | "
        f"{fit['pass_over_cold_floor']:.2f} / {fit['pass_over_warm_floor']:.2f} | "
        f"{peak:.1f} GB (limit {result['memory_limit']}) | {fit['accuracy']:.4f} / "
        f"{result['sample_fit']['accuracy']:.4f} ({result['sample_fit']['records']:,} "
        f"records) / {result['non_private_first_file']['accuracy']:.4f} |",
    ]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=65)
    parser.add_argument("--sample-files", type=int, default=4)
    parser.add_argument("--memory-limit", default="8GB")
    parser.add_argument("--directory")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--quick", action="store_true", help="write ..._quick.json")
    parser.add_argument("--table", action="store_true", help="print the table of the JSON")
    args = parser.parse_args()
    out = RESULTS / ("bench_scale_out_quick.json" if args.quick else "bench_scale_out.json")
    if args.table:
        print(table(json.loads(out.read_text())))
        return
    result = run(args)
    RESULTS.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(table(result))


if __name__ == "__main__":
    main()
