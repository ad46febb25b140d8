"""Speed of the numba kernels against the memory-bandwidth floor of this machine.

Every kernel is compared with the cheapest operation that reads the same data
once (the *floor*), measured in the same process and interleaved with it
round-robin, so that drifts of the memory bandwidth (20-25 % between runs on a
shared host) hit both alike. The ratios, not the absolute times, are what the
goals are about.

Problems (fixed seeds): dense ``X`` of 20,000 x 500 in Fortran order, and CSC
``X`` of 20,000 x 20,000 at 0.5 % density with int32 indices.

Usage::

    python benchmarks/bench_kernels.py            # full run, writes results/bench_kernels.json
    python benchmarks/bench_kernels.py --quick    # small, writes results/bench_kernels_quick.json
    python benchmarks/bench_kernels.py --table    # README table from the saved JSON

The full run also rewrites the table in ``benchmarks/README.md``.
"""

from __future__ import annotations

import os

# Idle worker threads of OpenBLAS and of numba's OpenMP pool spin for a while
# after each call. With 2 cores, interleaving a BLAS floor and a numba kernel
# then lets one pool's spinning threads steal a core from the other (measured:
# 2x slower kernel). Let idle threads sleep at once; both sides pay the same
# wake-up (microseconds per call of milliseconds). Must precede numpy's import.
THREAD_ENV = {"OMP_WAIT_POLICY": "PASSIVE", "OPENBLAS_THREAD_TIMEOUT": "4"}
for _key, _value in THREAD_ENV.items():
    os.environ.setdefault(_key, _value)

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import threadpoolctl  # noqa: E402

from dpglm._kernels import (  # noqa: E402
    clipped_gradient_csc,
    clipped_gradient_dense,
    clipped_row_gradient_sum_dense,
    coordinate_steps_csc,
    coordinate_steps_dense,
    derivatives,
)
from dpglm._kernels.jit import FASTMATH  # noqa: E402
from dpglm.datafits import LOGISTIC, SQUARED  # noqa: E402
from readme_tables import replace_table  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

FULL = {"n": 20_000, "p": 500, "sparse_p": 20_000, "density": 0.005, "batch": 256}
QUICK = {"n": 4_000, "p": 100, "sparse_p": 4_000, "density": 0.005, "batch": 256}

# Each goal is a ratio to the floor measured in the same process (those of the
# 1-thread dense gradient, random-order CSC steps and the row gradient are the
# secondary targets of the project's performance study).
GOALS = {
    "clipped_gradient_dense_2thr": 1.25,
    "clipped_gradient_dense_1thr": 1.4,
    "clipped_gradient_csc_1thr": 1.25,
    "cd_dense_cyclic": 1.5,
    "cd_dense_random": 1.5,
    "cd_csc_cyclic": 3.0,
    "cd_csc_random": 5.0,
    "row_gradient_dense": 1.6,
}


# Floors: read the data once, as fast as this machine allows. Compiled with
# the same options as the kernels, without caching (they are not library code).
@numba.njit(nogil=True, fastmath=set(FASTMATH), error_model="numpy")
def csc_transpose_matvec(data, indices, indptr, r, out):
    """``out = X.T @ r`` for CSC ``X``, with unsigned loop bounds and indices."""
    for j in range(out.shape[0]):
        acc = 0.0
        for k in range(np.uintp(indptr[j]), np.uintp(indptr[j + 1])):
            acc += data[k] * r[np.uintp(indices[k])]
        out[j] = acc


@numba.njit(nogil=True, fastmath=set(FASTMATH), error_model="numpy")
def gather_rows_sum(X, rows):
    """Sum of the rows ``X[rows]`` of a C-order ``X``: reads each batch row once."""
    acc = 0.0
    for k in range(rows.shape[0]):
        i = rows[k]
        for j in range(X.shape[1]):
            acc += X[i, j]
    return acc


def _busy_seconds():
    """CPU seconds spent by the whole machine (all cores), or None if unknown."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:8]]
    except (OSError, ValueError):
        return None
    # user, nice, system, idle, iowait, irq, softirq: all but idle and iowait
    busy = sum(fields) - fields[3] - fields[4]
    return busy / os.sysconf("SC_CLK_TCK")


class LoadMeter:
    """Cores used by other processes between ``start()`` and ``stop()``."""

    def start(self):
        self._busy, self._own, self._wall = (
            _busy_seconds(),
            time.process_time(),
            time.perf_counter(),
        )

    def stop(self):
        busy = _busy_seconds()
        if busy is None or self._busy is None:
            return None
        own = time.process_time() - self._own
        wall = time.perf_counter() - self._wall
        return max(0.0, (busy - self._busy - own) / wall)


def wait_until_quiet(threshold, timeout, interval=0.5):
    """Wait until other processes use less than ``threshold`` cores.

    Returns the seconds waited and the last load seen (None if unknown).
    """
    meter = LoadMeter()
    start = time.perf_counter()
    while True:
        meter.start()
        time.sleep(interval)
        load = meter.stop()
        waited = time.perf_counter() - start
        if load is None or load < threshold or waited > timeout:
            return waited, load


def measure_group(funcs, repeats, threshold=0.15, timeout=600.0, attempts=3):
    """Time a group round-robin on a quiet machine, retrying if it got busy."""
    log = []
    for _ in range(attempts):
        waited, before = wait_until_quiet(threshold, timeout)
        meter = LoadMeter()
        meter.start()
        timings = time_round_robin(funcs, repeats)
        during = meter.stop()
        log.append({"waited_s": waited, "other_load_before": before, "other_load": during})
        if during is None or during < threshold:
            break
    return {"timings": timings, "load": log}


def time_round_robin(funcs, repeats, min_time=0.05):
    """Time each callable, interleaving the repeats of all of them.

    One warm-up call each (excluded), then the number of calls per repeat is
    set so that a repeat lasts at least ``min_time`` seconds; every round then
    times one repeat of each callable in turn, with the garbage collector off.

    Returns
    -------
    dict
        Per name: seconds per call (``min``, ``median``, ``max``), ``loops``
        per repeat and ``repeats``.
    """
    loops = {}
    for name, fn in funcs.items():
        fn()
        count = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(count):
                fn()
            elapsed = time.perf_counter() - t0
            if elapsed >= min_time:
                break
            count = max(count + 1, math.ceil(count * 1.2 * min_time / max(elapsed, 1e-9)))
        loops[name] = count
    samples = {name: [] for name in funcs}
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            for name, fn in funcs.items():
                count = loops[name]
                t0 = time.perf_counter()
                for _ in range(count):
                    fn()
                samples[name].append((time.perf_counter() - t0) / count)
    finally:
        gc.enable()
    return {
        name: {
            "min": min(values),
            "median": statistics.median(values),
            "max": max(values),
            "loops": loops[name],
            "repeats": repeats,
        }
        for name, values in samples.items()
    }


def make_problems(size, seed=0):
    rng = np.random.default_rng(seed)
    n, p = size["n"], size["p"]
    X = np.asfortranarray(rng.standard_normal((n, p)))
    w_true = rng.standard_normal(p) * (rng.random(p) < 0.2)
    y = X @ w_true + rng.standard_normal(n)
    Xs = sp.random_array(
        (n, size["sparse_p"]), density=size["density"], format="csc", rng=rng, dtype=np.float64
    )
    Xs.data[:] = rng.standard_normal(Xs.nnz)
    Xs.sort_indices()
    Xs.indices = Xs.indices.astype(np.int32)
    Xs.indptr = Xs.indptr.astype(np.int32)
    ws_true = rng.standard_normal(size["sparse_p"]) * (rng.random(size["sparse_p"]) < 0.05)
    ys = Xs @ ws_true + rng.standard_normal(n)
    return rng, X, y, Xs, ys


def cd_state(rng, col_sq_norms, n, clip):
    """Arrays of a least-squares DP-CD epoch: step 1/M_j, clip C_j, noise, L1 prox."""
    p = col_sq_norms.shape[0]
    M = np.maximum(col_sq_norms / n, 1e-12)
    step = 1.0 / M
    c = np.full(p, clip)
    # A small L1 keeps every update non-zero, as in a real private run.
    l1 = np.full(p, 1e-6)
    l2 = np.zeros(p)
    lo = np.full(p, -np.inf)
    hi = np.full(p, np.inf)
    noise = rng.standard_normal(p) * 1e-3
    return step, c, l1, l2, lo, hi, noise


def run(size, repeats):
    rng, X, y, Xs, ys = make_problems(size)
    n, p = X.shape
    ps = Xs.shape[1]
    data, indices, indptr = Xs.data, Xs.indices, Xs.indptr
    results = {}

    # Per-sample logistic derivatives at a random model: the s of the clipped
    # gradients (the kernels do not care which loss produced s).
    labels = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    s = derivatives(LOGISTIC, 0.0, X @ (rng.standard_normal(p) / np.sqrt(p)), labels, np.empty(n))
    r = rng.standard_normal(n)
    c_dense = np.full(p, 0.5 * np.median(np.abs(s[:200, None] * X[:200])))
    c_sparse = np.full(ps, 0.5 * np.median(np.abs(Xs.data)) * np.median(np.abs(s)))
    out_dense = np.empty(p)
    out_sparse = np.empty(ps)

    # Dense, 2 threads: BLAS floor and the blocked prange kernel.
    numba.set_num_threads(2)
    with threadpoolctl.threadpool_limits(2):
        results["dense_2thr"] = measure_group(
            {
                "floor_dense_blas_2thr": lambda: X.T @ r,
                "clipped_gradient_dense_2thr": lambda: clipped_gradient_dense(
                    X, s, c_dense, out_dense
                ),
            },
            repeats,
        )

    # Dense, 1 thread: BLAS floor, the clipped gradient and least-squares DP-CD
    # epochs (cyclic and uniformly random order with replacement).
    numba.set_num_threads(1)
    step, c, l1, l2, lo, hi, noise = cd_state(rng, (X**2).sum(0), n, clip=1.0)
    cyclic = np.arange(p, dtype=np.int64)
    random_order = rng.integers(0, p, size=p)
    z_dense = np.zeros(n)
    w_dense = np.zeros(p)

    trace_dense = np.empty(p)

    def cd_dense(order):
        coordinate_steps_dense(
            X, y, z_dense, w_dense, order, noise, step, c, l1, l2, lo, hi, SQUARED, 0.0, p,
            trace_dense,
        )  # fmt: skip

    with threadpoolctl.threadpool_limits(1):
        results["dense_1thr"] = measure_group(
            {
                "floor_dense_blas_1thr": lambda: X.T @ r,
                "clipped_gradient_dense_1thr": lambda: clipped_gradient_dense(
                    X, s, c_dense, out_dense
                ),
                "cd_dense_cyclic": lambda: cd_dense(cyclic),
                "cd_dense_random": lambda: cd_dense(random_order),
            },
            repeats,
        )

    # Sparse, 1 thread: numba CSC floor, clipped gradient, DP-CD epochs.
    s_sparse = derivatives(LOGISTIC, 0.0, Xs @ rng.standard_normal(ps) * 0.1, labels, np.empty(n))
    step_s, c_s, l1_s, l2_s, lo_s, hi_s, noise_s = cd_state(
        rng, np.asarray(Xs.multiply(Xs).sum(0)).ravel(), n, clip=1.0
    )
    cd_args_s = (step_s, c_s, l1_s, l2_s, lo_s, hi_s, SQUARED, 0.0, ps, np.empty(ps))
    cyclic_s = np.arange(ps, dtype=np.int64)
    random_s = rng.integers(0, ps, size=ps)
    z_sparse = np.zeros(n)
    w_sparse = np.zeros(ps)
    floor_out = np.empty(ps)

    def cd_csc(order):
        coordinate_steps_csc(
            data, indices, indptr, ys, z_sparse, w_sparse, order, noise_s, *cd_args_s
        )

    results["sparse_1thr"] = measure_group(
        {
            "floor_csc_numba_1thr": lambda: csc_transpose_matvec(
                data, indices, indptr, r, floor_out
            ),
            "clipped_gradient_csc_1thr": lambda: clipped_gradient_csc(
                data, indices, indptr, n, s_sparse, c_sparse, out_sparse
            ),
            "cd_csc_cyclic": lambda: cd_csc(cyclic_s),
            "cd_csc_random": lambda: cd_csc(random_s),
        },
        repeats,
    )

    # DP-SGD: L2-clipped gradient sum of fresh random batches, C-order X.
    Xc = np.ascontiguousarray(X)
    row_norms = np.sqrt((Xc**2).sum(1) + 1.0)
    n_batches = 512
    batches = rng.integers(0, n, size=(n_batches, size["batch"]))
    batch_s = rng.standard_normal((n_batches, size["batch"]))
    out_row = np.empty(p)
    counters = {"floor": 0, "kernel": 0}

    def gather_floor():
        k = counters["floor"] = (counters["floor"] + 1) % n_batches
        gather_rows_sum(Xc, batches[k])

    def row_gradient():
        k = counters["kernel"] = (counters["kernel"] + 1) % n_batches
        clipped_row_gradient_sum_dense(Xc, batches[k], batch_s[k], row_norms, 1.0, out_row)

    results["rows"] = measure_group(
        {"floor_gather_rows": gather_floor, "row_gradient_dense": row_gradient}, repeats
    )
    return results, {"dense_p": p, "sparse_p": ps, "sparse_nnz": int(Xs.nnz)}


def summarise(results, dims):
    """Ratios to the floors (medians, and minima), per-step costs and goals."""
    flat = {name: m for group in results.values() for name, m in group["timings"].items()}
    p, ps = dims["dense_p"], dims["sparse_p"]

    def ratio(name, floor, per=1):
        # An epoch of `per` coordinate steps against `per` column reads: the
        # ratio is the same per step and per epoch.
        kernel, ref = flat[name], flat[floor]
        return {
            "kernel": name,
            "floor": floor,
            "per": per,
            "median_s": kernel["median"] / per,
            "min_s": kernel["min"] / per,
            "floor_median_s": ref["median"] / per,
            "ratio_median": kernel["median"] / ref["median"],
            "ratio_min": kernel["min"] / ref["min"],
        }

    rows = [
        ratio("clipped_gradient_dense_2thr", "floor_dense_blas_2thr"),
        ratio("clipped_gradient_dense_1thr", "floor_dense_blas_1thr"),
        ratio("clipped_gradient_csc_1thr", "floor_csc_numba_1thr"),
        ratio("cd_dense_cyclic", "floor_dense_blas_1thr", p),
        ratio("cd_dense_random", "floor_dense_blas_1thr", p),
        ratio("cd_csc_cyclic", "floor_csc_numba_1thr", ps),
        ratio("cd_csc_random", "floor_csc_numba_1thr", ps),
        ratio("row_gradient_dense", "floor_gather_rows"),
    ]
    for row in rows:
        goal = GOALS.get(row["kernel"])
        row["goal"] = goal
        row["goal_met"] = None if goal is None else bool(row["ratio_median"] <= goal)
    return rows


def environment():
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    blas = [
        {k: info.get(k) for k in ("internal_api", "version", "num_threads")}
        for info in threadpoolctl.threadpool_info()
    ]
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        "platform": platform.platform(),
        "cpu": cpu,
        "logical_cpus": numba.config.NUMBA_DEFAULT_NUM_THREADS,
        "numba_threading_layer": numba.threading_layer(),
        "thread_env": {key: os.environ.get(key) for key in THREAD_ENV},
        "blas": blas,
    }


def _fmt_time(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


LABELS = {
    "clipped_gradient_dense_2thr": ("(b) clipped full gradient, dense, 2 threads", "call"),
    "clipped_gradient_dense_1thr": ("(b) clipped full gradient, dense, 1 thread", "call"),
    "clipped_gradient_csc_1thr": ("(b) clipped full gradient, CSC, 1 thread", "call"),
    "cd_dense_cyclic": ("(a)+(c) LS DP-CD step, dense, cyclic", "step"),
    "cd_dense_random": ("(a)+(c) LS DP-CD step, dense, random **(headline)**", "step"),
    "cd_csc_cyclic": ("(a)+(c) LS DP-CD step, CSC, cyclic **(headline)**", "step"),
    "cd_csc_random": ("(a)+(c) LS DP-CD step, CSC, random", "step"),
    "row_gradient_dense": ("(d) L2-clipped row gradient sum, B=256, C order", "call"),
}
FLOOR_LABELS = {
    "floor_dense_blas_2thr": "dense `X.T @ r`, BLAS 2 threads",
    "floor_dense_blas_1thr": "dense `X.T @ r`, BLAS 1 thread",
    "floor_csc_numba_1thr": "CSC `X.T @ r`, numba uintp, 1 thread",
    "floor_gather_rows": "read 256 random rows, C order",
}


def markdown(report):
    flat = {
        name: m for group in report["results"].values() for name, m in group["timings"].items()
    }
    lines = [
        f"Machine: {report['environment']['cpu']}, {report['environment']['logical_cpus']} "
        f"logical CPUs; numba {report['environment']['numba']}, numpy "
        f"{report['environment']['numpy']}. Dense X {report['size']['n']} x "
        f"{report['size']['p']} (F order), CSC X {report['size']['n']} x "
        f"{report['size']['sparse_p']} at {report['size']['density']:.1%} "
        f"({report['dims']['sparse_nnz']:,} nnz, int32 indices). Median of "
        f"{report['repeats']} interleaved repeats (each >= 50 ms); ratios are kernel / floor "
        "measured in the same process, per step for DP-CD (floor / p).",
        "",
        "| floor | median | min |",
        "|---|---|---|",
    ]
    for name, label in FLOOR_LABELS.items():
        m = flat[name]
        lines.append(f"| {label} | {_fmt_time(m['median'])} | {_fmt_time(m['min'])} |")
    lines += [
        "",
        "| kernel | median | per | floor | x floor (median) | x floor (min) | goal | met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in report["summary"]:
        label, per = LABELS[row["kernel"]]
        goal = "" if row["goal"] is None else f"<= {row['goal']:g}x"
        met = "" if row["goal_met"] is None else ("yes" if row["goal_met"] else "**no**")
        lines.append(
            f"| {label} | {_fmt_time(row['median_s'])} | {per} | "
            f"{FLOOR_LABELS[row['floor']]} | {row['ratio_median']:.2f} | "
            f"{row['ratio_min']:.2f} | {goal} | {met} |"
        )
    return "\n".join(lines)


#: the heading and prose of this script's section of benchmarks/README.md
SECTION = (
    "## Kernel speed (`bench_kernels.py`)\n\n"
    "The numba kernels of `dpglm._kernels` against the floor, the cheapest way to read "
    "the same data once, timed round-robin with it in the same process (memory "
    "bandwidth drifts 20-25 % between runs, so only these ratios are comparable). "
    "Before each group the script waits until other processes use less than 0.15 core, "
    "and the JSON records that load. Headline DP-CD steps: uniformly random order on "
    "dense data (the order of DP-CD), cyclic order on CSC data. The dense floor is BLAS "
    "`X.T @ r`; the clipped-gradient kernel streams four columns at a time and can read "
    "X faster than it (ratios below 1). The table is generated "
    "from `results/bench_kernels.json` (`python benchmarks/bench_kernels.py --table`)."
)


def update_readme(table):
    replace_table("bench_kernels", table, SECTION)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small problems, few repeats")
    parser.add_argument("--repeats", type=int, default=None, help="interleaved repeats")
    parser.add_argument("--output", type=Path, default=None, help="JSON file to write")
    parser.add_argument(
        "--table", action="store_true", help="only rebuild the README table from the JSON"
    )
    args = parser.parse_args(argv)
    output = args.output or RESULTS / (
        "bench_kernels_quick.json" if args.quick else "bench_kernels.json"
    )
    if args.table:
        report = json.loads(output.read_text())
        table = markdown(report)
        print(table)
        update_readme(table)
        return 0

    size = QUICK if args.quick else FULL
    repeats = args.repeats or (5 if args.quick else 21)
    t0 = time.perf_counter()
    results, dims = run(size, repeats)
    report = {
        "benchmark": "bench_kernels",
        "quick": args.quick,
        "size": size,
        "dims": dims,
        "repeats": repeats,
        "environment": environment(),
        "results": results,
        "summary": summarise(results, dims),
        "wall_time_s": time.perf_counter() - t0,
    }
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2) + "\n")
    table = markdown(report)
    print(table)
    if not args.quick and args.output is None:
        update_readme(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
