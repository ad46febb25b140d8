"""Speed of DP-SCD epochs (whole solver calls) against a non-private numba SDCA epoch.

Goal, as a ratio measured in one process (memory bandwidth drifts 20-25 %
between runs on this shared host, so only ratios are comparable): one DP-SCD
epoch (``N`` example updates in batches of ``L = 256``, Poisson sampling,
ridge) on dense C-ordered data 20,000 x 500 and on CSR sparse data 20,000 x
20,000 at 0.5 % within 2x of a non-private numba SDCA epoch on the same
row-normalised data (sequential dual coordinate ascent in a random
permutation, closed-form ridge step, ``w += delta x_i / (lambda N)``).

Solver calls are timed end to end through :func:`dpglm.solvers.dp_scd.dp_scd`.
The per-epoch time is a difference of a long and a short call, so setup (row
norms) and calibration cancel out: ``(t(3 epochs) - t(1 epoch)) / 2``. The
data is given row-major (C order / CSR), the layout DP-SCD reads, and the
problem holds it as given: the script checks that no column-major copy was
made (``Problem.layouts``). To say what an epoch is spent on, its parts are
timed separately too: the numba steps with their noise drawn inside the
kernel (``T`` times ``p`` normals for ``v`` plus one per batch entry for
``alpha``, from the fit's Generator), the same steps without noise, the batch
draws, and, for comparison, numpy's bulk draws of the same noise (the path of
the secure source). All callables of a group are timed round-robin
(``bench_kernels.time_round_robin``), and the load of other processes during
the group is recorded.

Usage::

    python benchmarks/bench_dp_scd.py            # writes results/bench_dp_scd.json
    python benchmarks/bench_dp_scd.py --quick    # smaller problems, results/..._quick.json
    python benchmarks/bench_dp_scd.py --table    # README table from the saved JSON
"""

from __future__ import annotations

import os

# the thread environment of bench_kernels (idle BLAS and OpenMP threads sleep at
# once) must be set before numpy is imported
from bench_kernels import THREAD_ENV

for _key, _value in THREAD_ENV.items():
    os.environ.setdefault(_key, _value)

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import threadpoolctl  # noqa: E402

from bench_kernels import (  # noqa: E402
    LoadMeter,
    _fmt_time,
    environment,
    time_round_robin,
    wait_until_quiet,
)
from dpglm._kernels.jit import FASTMATH  # noqa: E402
from dpglm.data.layout import as_layout  # noqa: E402
from dpglm.exceptions import PrivacyLeakWarning  # noqa: E402
from dpglm.penalties import L2  # noqa: E402
from dpglm.privacy.mechanisms import make_noise_source  # noqa: E402
from dpglm.problem import Problem  # noqa: E402
from dpglm.solvers.dp_scd import _Steps, row_scales  # noqa: E402
from dpglm.solvers.dp_sgd import BatchSampler, schedule  # noqa: E402
from dpglm.solvers.registry import get_solver  # noqa: E402
from readme_tables import replace_table  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "bench_dp_scd.json"

BATCH = 256
CLIP = 0.5
LAMBDA = 1e-3
LONG = 3  # epochs of the long call; the short call runs 1
GOALS = {"dp_scd_epoch_dense": 2.0, "dp_scd_epoch_sparse": 2.0}


# Non-private SDCA epochs for ridge on row-normalised data: for each example i
# of the permutation, delta = (y_i - x_i . w - alpha_i) / (1 + ||x_i||^2 / (lambda N)),
# alpha_i += delta, w += delta x_i / (lambda N). Compiled with the kernels' options.
@numba.njit(nogil=True, fastmath=set(FASTMATH), error_model="numpy")
def sdca_epoch_dense(X, y, squares, alpha, w, order, lambda_n):
    """One non-private ridge SDCA epoch on C-ordered rows (the reference epoch)."""
    p = X.shape[1]
    for k in range(order.shape[0]):
        i = order[k]
        margin = 0.0
        for c in range(p):
            margin += X[i, c] * w[c]
        delta = (y[i] - margin - alpha[i]) / (1.0 + squares[i] / lambda_n)
        alpha[i] += delta
        step = delta / lambda_n
        for c in range(p):
            w[c] += step * X[i, c]


@numba.njit(nogil=True, fastmath=set(FASTMATH), error_model="numpy")
def sdca_epoch_csr(data, indices, indptr, y, squares, alpha, w, order, lambda_n):
    """:func:`sdca_epoch_dense` on CSR rows."""
    for k in range(order.shape[0]):
        i = order[k]
        start, stop = np.intp(indptr[i]), np.intp(indptr[i + 1])
        margin = 0.0
        for q in range(start, stop):
            margin += data[q] * w[np.intp(indices[q])]
        delta = (y[i] - margin - alpha[i]) / (1.0 + squares[i] / lambda_n)
        alpha[i] += delta
        step = delta / lambda_n
        for q in range(start, stop):
            w[np.intp(indices[q])] += step * data[q]


def make_data(n, p, sparse_p, density, seed=0):
    rng = np.random.default_rng(seed)
    X = np.ascontiguousarray(rng.uniform(-1.0, 1.0, (n, p)))
    y = X @ rng.standard_normal(p) + rng.standard_normal(n)
    Xs = sp.random(n, sparse_p, density=density, random_state=seed + 1, format="csr")
    Xs.data = rng.uniform(-1.0, 1.0, Xs.nnz)
    ys = Xs @ rng.standard_normal(sparse_p) + rng.standard_normal(n)
    return X, y, Xs, ys


def normalised_rows(X):
    """The row-normalised row-major copy of ``X`` the reference epoch reads."""
    rows = as_layout(X, "rows")
    scale = row_scales(rows)
    if sp.issparse(rows):
        return sp.diags(scale).tocsr() @ rows
    return np.ascontiguousarray(rows * scale[:, None])


def measure(funcs, repeats, threshold=0.15, timeout=30.0):
    waited, before = wait_until_quiet(threshold, timeout)
    meter = LoadMeter()
    meter.start()
    timings = time_round_robin(funcs, repeats)
    return {
        "timings": timings,
        "load": {"waited_s": waited, "other_load_before": before, "other_load": meter.stop()},
    }


def group(problem, y, n_perms=8):
    """The callables of one data kind: reference, solver calls and the epoch's parts."""
    n, p = problem.n_samples, problem.n_features
    lambda_n = LAMBDA * n
    rng = np.random.default_rng(1)
    rows = normalised_rows(problem.rows)
    squares = (
        np.asarray(rows.multiply(rows).sum(axis=1)).ravel()
        if sp.issparse(rows)
        else np.einsum("ij,ij->i", rows, rows)
    )
    # fresh permutations at every call (a fixed order would favour the cache)
    perms = [rng.permutation(n) for _ in range(n_perms)]
    alpha, w, cursor = np.zeros(n), np.zeros(p), [0]

    if sp.issparse(rows):
        data, indices, indptr = rows.data, rows.indices, rows.indptr

        def sdca():
            cursor[0] = (cursor[0] + 1) % n_perms
            sdca_epoch_csr(data, indices, indptr, y, squares, alpha, w, perms[cursor[0]], lambda_n)
    else:

        def sdca():
            cursor[0] = (cursor[0] + 1) % n_perms
            sdca_epoch_dense(rows, y, squares, alpha, w, perms[cursor[0]], lambda_n)

    def solver(passes, epsilon=1.0):
        return lambda: get_solver("dp-scd").fit(
            problem,
            epsilon=epsilon,
            delta=1e-6,
            passes=passes,
            batch_size=BATCH,
            clip=CLIP,
            random_state=0,
        )

    # the epoch's parts, with the solver's own objects and the calibrated noise
    sigma = solver(1)().info["noise_std"]
    T = schedule(1, n, BATCH)
    source = make_noise_source(0)
    sampler = BatchSampler(n, BATCH, "poisson")
    drawn = [sampler.draw(source, T) for _ in range(n_perms)]
    inline = (np.zeros(0), np.zeros(0), source.generator, True)

    def kernel(noise_std):
        steps = _Steps(problem, lambda_n, CLIP, noise_std, float(BATCH), False, BATCH)

        def run():
            cursor[0] = (cursor[0] + 1) % n_perms
            counts, batch_rows = drawn[cursor[0]]
            steps.run(counts, batch_rows, inline)

        return run

    def noise_draws_numpy():
        counts = drawn[0][0]
        source.standard_normal(int(counts.sum()))
        source.standard_normal((T, p))

    return {
        "sdca_epoch_nonprivate": sdca,
        "dp_scd_1": solver(1),
        "dp_scd_long": solver(LONG),
        "dp_scd_nonoise_1": solver(1, np.inf),
        "dp_scd_nonoise_long": solver(LONG, np.inf),
        "kernel_epoch": kernel(sigma),
        "kernel_epoch_nonoise": kernel(0.0),
        "batch_draws_epoch": lambda: sampler.draw(source, T),
        "noise_draws_numpy": noise_draws_numpy,
        "row_scales": lambda: row_scales(problem.rows),
    }


def run(n, p, sparse_p, density, repeats):
    X, y, Xs, ys = make_data(n, p, sparse_p, density)
    numba.set_num_threads(1)
    results = {}
    with threadpoolctl.threadpool_limits(1):
        for kind, problem, target in (
            ("dense", Problem(X, y, "squared", L2(LAMBDA)), y),
            ("sparse", Problem(Xs, ys, "squared", L2(LAMBDA)), ys),
        ):
            results[kind] = measure(group(problem, np.ascontiguousarray(target)), repeats)
            # the row-major data was read in place: no column-major copy was made
            results[kind]["layouts"] = list(problem.layouts)
            if problem.layouts != ("rows",):
                raise RuntimeError(f"DP-SCD made a copy of the data: {problem.layouts}")
    return results


def summarise(results):
    rows = []
    for kind, data in (("dense", "dense C order"), ("sparse", "CSR")):
        t = {name: m["median"] for name, m in results[kind]["timings"].items()}
        floor = t["sdca_epoch_nonprivate"]
        per_epoch = (t["dp_scd_long"] - t["dp_scd_1"]) / (LONG - 1)
        no_noise = (t["dp_scd_nonoise_long"] - t["dp_scd_nonoise_1"]) / (LONG - 1)
        entries = [
            (f"dp_scd_epoch_{kind}", f"DP-SCD epoch, {data}, epsilon = 1", per_epoch),
            (f"dp_scd_epoch_nonoise_{kind}", "same, epsilon = inf (no noise draws)", no_noise),
            (
                f"kernel_epoch_{kind}",
                "part: numba steps of one epoch, noise drawn inside",
                t["kernel_epoch"],
            ),
            (
                f"kernel_epoch_nonoise_{kind}",
                "part: the same steps without noise",
                t["kernel_epoch_nonoise"],
            ),
            (f"batch_draws_{kind}", "part: Poisson batch draws", t["batch_draws_epoch"]),
            (
                f"rest_{kind}",
                "part: rest (history, calls)",
                per_epoch - t["kernel_epoch"] - t["batch_draws_epoch"],
            ),
            (
                f"noise_draws_numpy_{kind}",
                "for comparison: numpy bulk draws of one epoch's noise (secure source path)",
                t["noise_draws_numpy"],
            ),
            (f"row_scales_{kind}", "one-time row norms (per call)", t["row_scales"]),
        ]
        for measure_, label, seconds in entries:
            goal = GOALS.get(measure_)
            ratio = seconds / floor
            rows.append(
                {
                    "measure": measure_,
                    "label": label,
                    "seconds": seconds,
                    "floor": f"non-private numba SDCA epoch, {data}",
                    "floor_seconds": floor,
                    "ratio": ratio,
                    "goal": goal,
                    "goal_met": None if goal is None else bool(ratio <= goal),
                }
            )
    return rows


def markdown(report):
    loads = [
        g["load"]["other_load"]
        for g in report["results"].values()
        if g["load"]["other_load"] is not None
    ]
    size = report["size"]
    lines = [
        f"Ridge (lambda = {LAMBDA:g}), dense {size['n']} x {size['p']} (given in C order), "
        f"sparse {size['n']} x {size['sparse_p']} at {size['density']:.1%} (given as CSR; "
        "the problem holds the rows as given and makes no column-major copy); batch "
        f"{BATCH} (Poisson), clip {CLIP}, one thread. Epochs from (t({LONG} epochs) - t(1)) / "
        f"{LONG - 1}; median of {report['repeats']} interleaved repeats. Other processes used "
        f"up to {max(loads, default=0):.2f} cores during the groups.",
        "",
        "| measure | time | floor | floor time | ratio | goal | met |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in report["summary"]:
        goal = "" if row["goal"] is None else f"<= {row['goal']:g}x"
        met = "" if row["goal_met"] is None else ("yes" if row["goal_met"] else "**no**")
        lines.append(
            f"| {row['label']} | {_fmt_time(row['seconds'])} | {row['floor']} | "
            f"{_fmt_time(row['floor_seconds'])} | {row['ratio']:.2f} | {goal} | {met} |"
        )
    return "\n".join(lines)


#: the heading and prose of this script's section of benchmarks/README.md
SECTION = (
    "## DP-SCD speed (`bench_dp_scd.py`)\n\n"
    "Whole `dp_scd` calls against a non-private numba SDCA epoch on the same row-normalised "
    "data, timed round-robin in one process; per-epoch figures are differences of a long and "
    "a one-epoch call, so the per-call row norms and the calibration cancel out (the row "
    "norms are also timed on their own). Generated from `results/bench_dp_scd.json` "
    "(`python benchmarks/bench_dp_scd.py --table`)."
)


def update_readme(table):
    replace_table("bench_dp_scd", table, SECTION)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args(argv)
    path = RESULTS.with_name("bench_dp_scd_quick.json") if args.quick else RESULTS
    if args.table:
        print(markdown(json.loads(RESULTS.read_text())))
        return 0
    if args.quick:
        size = {"n": 4000, "p": 100, "sparse_p": 4000, "density": 0.005}
        repeats = 3
    else:
        size = {"n": 20000, "p": 500, "sparse_p": 20000, "density": 0.005}
        repeats = 11
    # dp-accounting's RDP logs every Renyi order it skips for large sampling rates
    logging.getLogger("absl").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        results = run(**size, repeats=repeats)
    report = {
        "environment": environment(),
        "size": size,
        "repeats": repeats,
        "epochs": {"long": LONG, "short": 1},
        "results": results,
    }
    report["summary"] = summarise(results)
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(report, indent=1))
    table = markdown(report)
    print(table)
    if not args.quick:
        update_readme(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
