"""Speed of the private solvers (whole solver calls) against their floors.

Goals, as ratios measured in one process (memory bandwidth drifts 20-25 %
between runs on this shared host, so only ratios are comparable):

* one DP-CD epoch (``p`` noisy coordinate updates, least squares, dense
  20,000 x 500) within 1.5x of a non-private numba coordinate-descent epoch
  (random order, residual updates) on the same data;
* one DP-GCD step on sparse 20,000 x 20,000 data (0.5 %) at most 0.2x the
  floor, one read of ``X`` (numba CSC ``X.T @ r``);
* one DP-SGD step (batch 256, Poisson sampling) within 1.6x of gathering the
  batch's rows (dense C order 20,000 x 500).

Solver calls are timed end to end through the public functions. Per-step
figures are differences of a long and a one-step call (the setup, calibration
included, cancels out): ``(t(K + 1 steps) - t(1 step)) / K``. All callables of
a group are timed round-robin (``bench_kernels.time_round_robin``), and the
load of other processes during the group is recorded: on a busy machine the
ratios stay comparable, the absolute times do not.

Usage::

    python benchmarks/bench_solvers.py            # writes results/bench_solvers.json
    python benchmarks/bench_solvers.py --quick    # smaller problems, results/..._quick.json
    python benchmarks/bench_solvers.py --table    # README table from the saved JSON
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
    csc_transpose_matvec,
    environment,
    gather_rows_sum,
    time_round_robin,
    wait_until_quiet,
)
from dpglm._kernels.jit import FASTMATH  # noqa: E402
from dpglm.exceptions import PrivacyLeakWarning  # noqa: E402
from dpglm.penalties import L1  # noqa: E402
from dpglm.problem import Problem  # noqa: E402
from dpglm.solvers.registry import get_solver  # noqa: E402
from readme_tables import replace_table  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "bench_solvers.json"

AVERAGED_ROUNDS = 4
GOALS = {"dp_cd_epoch": 1.5, "dp_gcd_step_sparse": 0.2, "dp_sgd_step": 1.6}


@numba.njit(nogil=True, fastmath=set(FASTMATH), error_model="numpy")
def ls_cd_epoch(X, r, w, order, inv_m, lam):
    """Non-private LASSO coordinate descent on residuals ``r = y - X w`` (the reference epoch)."""
    n = X.shape[0]
    for k in range(order.shape[0]):
        j = order[k]
        acc = 0.0
        for i in range(n):
            acc += X[i, j] * r[i]
        v = w[j] + acc / n * inv_m[j]
        t = lam * inv_m[j]
        w_new = v - t if v > t else (v + t if v < -t else 0.0)
        d = w_new - w[j]
        if d != 0.0:
            w[j] = w_new
            for i in range(n):
                r[i] -= d * X[i, j]


def make_data(n, p, sparse_p, density, seed=0):
    rng = np.random.default_rng(seed)
    X = np.asfortranarray(rng.uniform(-1.0, 1.0, (n, p)))
    y = X @ rng.standard_normal(p) + rng.standard_normal(n)
    Xs = sp.random(n, sparse_p, density=density, random_state=seed + 1, format="csc")
    Xs.data = rng.uniform(-1.0, 1.0, Xs.nnz)
    labels = np.where(Xs @ rng.standard_normal(sparse_p) + rng.standard_normal(n) >= 0, 1.0, -1.0)
    return X, y, Xs, labels


def measure(funcs, repeats, threshold=0.15, timeout=30.0):
    waited, before = wait_until_quiet(threshold, timeout)
    meter = LoadMeter()
    meter.start()
    timings = time_round_robin(funcs, repeats)
    return {
        "timings": timings,
        "load": {"waited_s": waited, "other_load_before": before, "other_load": meter.stop()},
    }


def run(n, p, sparse_p, density, repeats, steps):
    X, y, Xs, labels = make_data(n, p, sparse_p, density)
    bounds = 1.0
    private = {"epsilon": 1.0, "delta": 1e-6, "random_state": 0}
    results = {}

    # DP-CD epoch vs a non-private numba CD epoch, one thread, random order.
    numba.set_num_threads(1)
    dense = Problem(X, y, "squared", L1(1e-4))
    rng = np.random.default_rng(1)
    order = rng.integers(0, p, size=p)
    inv_m = 1.0 / np.full(p, bounds**2)
    r, w = y.copy(), np.zeros(p)

    def cd_epoch():
        ls_cd_epoch(X, r, w, order, inv_m, 1e-4)

    def dp_cd_epochs(passes, averaging):
        return lambda: get_solver("dp-cd").fit(
            dense, passes=passes, averaging=averaging, feature_bounds=bounds, clip=1.0, **private
        )

    with threadpoolctl.threadpool_limits(1):
        results["dp_cd"] = measure(
            {
                "cd_epoch_nonprivate": cd_epoch,
                "dp_cd_epoch": dp_cd_epochs(1, False),
                # averaging recomputes the margins X w between rounds: 3 times in 4 rounds
                "dp_cd_4_epochs_averaged": dp_cd_epochs(AVERAGED_ROUNDS, True),
            },
            repeats,
        )

    # DP-GCD steps on sparse data vs one read of X.
    sparse = Problem(Xs, labels, "logistic", L1(1e-4))
    res, out = rng.standard_normal(n), np.empty(sparse_p)
    data, indices, indptr = Xs.data, Xs.indices, Xs.indptr

    def gcd(n_iter, noise):
        return lambda: get_solver("dp-gcd").fit(
            sparse, n_iter=n_iter, noise=noise, feature_bounds=bounds, clip=1.0, **private
        )

    results["dp_gcd"] = measure(
        {
            "floor_csc": lambda: csc_transpose_matvec(data, indices, indptr, res, out),
            "dp_gcd_tight_1": gcd(1, "tight"),
            "dp_gcd_tight_long": gcd(steps + 1, "tight"),
            "dp_gcd_paper_1": gcd(1, "paper"),
            "dp_gcd_paper_long": gcd(steps + 1, "paper"),
        },
        repeats,
    )

    # DP-SGD steps (batch 256, Poisson) vs gathering 256 random rows.
    rows_problem = Problem(np.ascontiguousarray(X), y, "squared", L1(1e-4))
    XC = np.ascontiguousarray(X)
    batch = 256
    # fresh random rows at every call, as the solver reads: a fixed batch would stay in cache
    batches = [rng.choice(n, batch, replace=False) for _ in range(1000)]
    cursor = [0]

    def gather():
        cursor[0] = (cursor[0] + 1) % len(batches)
        gather_rows_sum(XC, batches[cursor[0]])

    def sgd(n_steps):
        return lambda: get_solver("dp-sgd").fit(
            rows_problem,
            passes=n_steps * batch / n,
            batch_size=batch,
            step=0.01,
            clip=1.0,
            **private,
        )

    with threadpoolctl.threadpool_limits(1):
        results["dp_sgd"] = measure(
            {
                "floor_gather_rows": gather,
                "dp_sgd_1": sgd(1),
                "dp_sgd_long": sgd(steps + 1),
            },
            repeats,
        )
    return results


def summarise(results, steps, p):
    def med(group, name):
        return results[group]["timings"][name]["median"]

    rows = [
        {
            "measure": "dp_cd_epoch",
            "label": "DP-CD epoch (p updates), last iterate, LS dense",
            "seconds": med("dp_cd", "dp_cd_epoch"),
            "floor": "non-private numba CD epoch",
            "floor_seconds": med("dp_cd", "cd_epoch_nonprivate"),
        },
        {
            "measure": "dp_cd_epoch_averaged",
            "label": f"DP-CD epoch with outer averaging ({AVERAGED_ROUNDS} rounds of p updates, "
            "margins X w recomputed between rounds), per round",
            "seconds": med("dp_cd", "dp_cd_4_epochs_averaged") / AVERAGED_ROUNDS,
            "floor": "non-private numba CD epoch",
            "floor_seconds": med("dp_cd", "cd_epoch_nonprivate"),
        },
    ]
    names = {"tight": "dp_gcd_step_sparse", "paper": "dp_gcd_step_sparse_paper"}
    for noise, draws in (("tight", "Gumbel"), ("paper", "Laplace")):
        per_step = med("dp_gcd", f"dp_gcd_{noise}_long") - med("dp_gcd", f"dp_gcd_{noise}_1")
        rows.append(
            {
                "measure": names[noise],
                "label": f"DP-GCD step, sparse, {noise} mode ({draws} selection noise)",
                "seconds": per_step / steps,
                "floor": "one read of X (CSC X.T @ r)",
                "floor_seconds": med("dp_gcd", "floor_csc"),
            }
        )
    per_step = (med("dp_sgd", "dp_sgd_long") - med("dp_sgd", "dp_sgd_1")) / steps
    rows.append(
        {
            "measure": "dp_sgd_step",
            "label": "DP-SGD step, batch 256 Poisson, dense C order",
            "seconds": per_step,
            "floor": "gather 256 fresh random rows",
            "floor_seconds": med("dp_sgd", "floor_gather_rows"),
        }
    )
    for row in rows:
        row["ratio"] = row["seconds"] / row["floor_seconds"]
        goal = GOALS.get(row["measure"])
        row["goal"] = goal
        row["goal_met"] = None if goal is None else bool(row["ratio"] <= goal)
    return rows


def markdown(report):
    loads = [
        g["load"]["other_load"]
        for g in report["results"].values()
        if g["load"]["other_load"] is not None
    ]
    size = report["size"]
    lines = [
        f"Dense {size['n']} x {size['p']}, sparse {size['n']} x {size['sparse_p']} at "
        f"{size['density']:.1%}; per-step figures from {report['steps']}-step differences; "
        f"median of {report['repeats']} interleaved repeats. Other processes used up to "
        f"{max(loads, default=0):.2f} cores during the groups.",
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
    "## Solver speed (`bench_solvers.py`)\n\n"
    "Whole solver calls against their floors, timed round-robin in one process; per-step "
    "figures are differences of a long and a one-step call. Generated from "
    "`results/bench_solvers.json` (`python benchmarks/bench_solvers.py --table`)."
)


def update_readme(table):
    replace_table("bench_solvers", table, SECTION)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args(argv)
    path = RESULTS.with_name("bench_solvers_quick.json") if args.quick else RESULTS
    if args.table:
        print(markdown(json.loads(RESULTS.read_text())))
        return 0
    if args.quick:
        size = {"n": 4000, "p": 100, "sparse_p": 4000, "density": 0.005}
        repeats, steps = 3, 50
    else:
        size = {"n": 20000, "p": 500, "sparse_p": 20000, "density": 0.005}
        repeats, steps = 11, 200
    # dp-accounting's RDP logs every Renyi order it skips for large sampling rates
    logging.getLogger("absl").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        results = run(**size, repeats=repeats, steps=steps)
    report = {
        "environment": environment(),
        "size": size,
        "repeats": repeats,
        "steps": steps,
        "results": results,
    }
    report["summary"] = summarise(results, steps, size["p"])
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(report, indent=1))
    table = markdown(report)
    print(table)
    if not args.quick:
        update_readme(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
