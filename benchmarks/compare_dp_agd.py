"""DP-AGD against DP-GD with a fixed budget split, DP-CD, DP-GCD and DP-SGD: test accuracy.

The comparison of the DP-AGD slides (Lee and Kifer 2018) on the two LIBSVM
datasets we have: logistic regression with an L2 penalty
``lambda / 2 ||w||^2``, ``lambda = LAMBDA = 1e-4``, no intercept, at
``epsilon`` in ``EPSILONS`` and ``delta = 1e-8`` (Lee and Kifer's), test
accuracy over ``RUNS = 10`` runs.

Problems:

* ``a9a``: adult a9a, 123 one-hot features, the official test split
  (``adult_a9a_train.svm.gz`` / ``adult_a9a_test.svm.gz``);
* ``phishing``: phishing (LIBSVM encoding), 68 one-hot features, a seeded
  random 20 % of the rows as the test split (``phishing.svm.gz``).

Splits and preprocessing: a seeded random 25 % of the training rows is the
validation split, used only to choose the hyperparameters; every fit, tuning
and final, trains on the other 75 %. Every row (train, validation and test)
is divided by its L2 norm, a per-record operation that costs no budget; with
``|l'| <= 1`` for the logistic loss, every per-sample gradient then has norm at
most 1, so the clip ``C = 1`` of DP-GD, DP-AGD and DP-SGD clips nothing.

Methods, all for replace-one neighbours (the number of rows public) and all
with the accountant's tightest analysis of their own plan:

* ``dp-agd``: :func:`~dpglm.solvers.dp_agd.dp_agd`, the slides' algorithm
  (``variant="paper"``: clipped losses as the step-size scores; the default
  variant, which scores loss changes and has no ``clip_obj``, is measured on
  the raw tables by ``bench_dp_agd_variants.py``) with its defaults
  (``C_grad = 1``, 20 candidate steps, ``gamma = 0.1``, ``tau = 10``, zCDP)
  except ``clip_obj`` and ``splits``, tuned;
* ``dp-gd``: :func:`~dpglm.solvers.dp_gd.dp_gd`, ``T`` full-batch gradient
  releases with the same noise (the fixed budget split), ``C = 1``;
* ``dp-cd``: :func:`~dpglm.solvers.dp_cd.dp_cd` with ``M_j`` from the public
  feature bounds ``|X_ij| <= 1`` (true since the rows have unit norm, so no
  data-dependent smoothness and no leak warning). These bounds give
  ``M_j = 1/4`` for every column, 14 (a9a) to 30 (phishing) times the true
  ``M_j`` of the most frequent one-hot column and far more for rare ones, so
  the step factor ``gamma`` (step ``gamma / M_j``) is tuned well above its
  default 1, at which the fits barely move;
* ``dp-gcd``: :func:`~dpglm.solvers.dp_gcd.dp_gcd` (tight noise, GS-s rule)
  with the same bounds and the same reason to tune ``gamma``;
* ``dp-sgd``: :func:`~dpglm.solvers.dp_sgd.dp_sgd`, default batch size 256
  and clip 1, drawn **without replacement** (Renyi DP accounting for
  replace-one neighbours, like the other four; the comparison was run when
  the default Poisson sampler was still accounted for add/remove neighbours).

Tuning, as in the papers (and not private: choosing among configurations
by their accuracy on private validation data is itself a release, which is
not accounted): for each epsilon, every configuration of the method's grid
(``GRID``) is fitted once with one fixed seed and scored on the validation
split; the best one is rerun with ``RUNS`` fresh seeds, whose test
accuracies give the mean / min / max. Configurations per method and
epsilon: DP-AGD 8 (``clip_obj`` in {1, 3} x ``splits`` in {30, 60, 120, 240},
the defaults included), DP-GD 12 (``T`` in {10, 30, 100, 300} x step in {2, 8,
32}), DP-CD 12 (passes in {5, 20, 50} x ``gamma`` in {10, 50} x clip in
{0.5, 2}), DP-GCD 12 (``T`` in {20, 100, 300} x ``gamma`` in {10, 50} x clip
in {0.5, 2}), DP-SGD 12 (passes in {1, 5, 20} x step in {0.25, 1, 4, 16}).
The grids were centred with a few seeded probes of the validation accuracy at
epsilon 0.5 and 5 (validation split only): one step beyond their edges the
mean validation accuracy of 3 seeds gained at most about 0.3 percentage points.
``--quick`` runs 2 to 4 configurations per method and 3 runs.

The non-private optimum of the same problem
(:func:`~dpglm.solvers.reference.solve_reference`) gives the accuracy every
private method aims at.

Usage::

    python benchmarks/compare_dp_agd.py --datasets DIR [--methods dp-agd,dp-gd]
        [--problems a9a,phishing] [--quick] [--out PATH]
    python benchmarks/compare_dp_agd.py --report   # figure, table and README from the JSON

``DIR`` holds the three ``.svm.gz`` files (default: ``$DPGLM_DATASETS``).
Results accumulate in ``results/compare_dp_agd.json`` (one entry per problem
and method; two processes may run different problems at once); a full run
also writes ``results/compare_dp_agd.png`` and its table in
``benchmarks/README.md``. ``--quick`` writes ``results/compare_dp_agd_quick.*``
(or ``--out``) and leaves the README alone.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from dpglm.data import load
from dpglm.exceptions import PrivacyLeakWarning
from dpglm.penalties import L2
from dpglm.problem import Problem
from dpglm.solvers.reference import solve_reference
from dpglm.solvers.registry import get_solver
from readme_tables import replace_table
from result_store import load_results, spread
from result_store import results_path as stored_path
from result_store import save_entry as store_entry

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "compare_dp_agd.json"

EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)
DELTA = 1e-8
RUNS = 10
QUICK_RUNS = 3
LAMBDA = 1e-4
#: public bound on |X_ij| for the coordinate methods' M_j: the rows have unit norm
FEATURE_BOUND = 1.0
TUNING_SEED = 12345
SPLIT_SEED = 0

GRID = {
    "dp-agd": {"clip_obj": [1.0, 3.0], "splits": [30, 60, 120, 240]},
    "dp-gd": {"n_iter": [10, 30, 100, 300], "step": [2.0, 8.0, 32.0]},
    "dp-cd": {"passes": [5, 20, 50], "step": [10.0, 50.0], "clip": [0.5, 2.0]},
    "dp-gcd": {"n_iter": [20, 100, 300], "step": [10.0, 50.0], "clip": [0.5, 2.0]},
    "dp-sgd": {"passes": [1, 5, 20], "step": [0.25, 1.0, 4.0, 16.0]},
}
QUICK_GRID = {
    "dp-agd": {"clip_obj": [3.0], "splits": [30, 60]},
    "dp-gd": {"n_iter": [30, 100], "step": [8.0, 32.0]},
    "dp-cd": {"passes": [20], "step": [10.0, 50.0], "clip": [2.0]},
    "dp-gcd": {"n_iter": [100], "step": [10.0, 50.0], "clip": [2.0]},
    "dp-sgd": {"passes": [5], "step": [1.0, 4.0]},
}
METHODS = ("dp-agd", "dp-gd", "dp-cd", "dp-gcd", "dp-sgd")
PROBLEMS = ("a9a", "phishing")

#: the heading and prose of this script's section of benchmarks/README.md
SECTION = (
    "## DP-AGD against fixed-split DP-GD and the other methods (`compare_dp_agd.py`)\n\n"
    "The comparison of the DP-AGD slides (Lee and Kifer 2018): logistic regression with an "
    "L2 penalty (lambda = 1e-4, no intercept) on adult a9a (official test split) and phishing "
    "(random 20 % test split), rows normalised to unit L2 norm, delta = 1e-8, replace-one "
    "neighbours for every method. Each method is tuned per epsilon on a 25 % validation split "
    "of the training rows over a small grid (one seed per configuration; the tuning is not "
    "private, as in the papers), then its best configuration is rerun with 10 fresh seeds: "
    "test accuracy mean [min, max]. Grids and protocol in the script's docstring. Generated "
    "from `results/compare_dp_agd.json` (`python benchmarks/compare_dp_agd.py --datasets DIR`, "
    "then `--report`).\n\n"
    "![test accuracy against epsilon](results/compare_dp_agd.png)"
)


def normalise_rows(X):
    """Every row divided by its L2 norm (zero rows stay zero), as CSR."""
    X = sp.csr_matrix(X, dtype=float)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    return sp.csr_matrix(sp.diags(scale) @ X)


def _split(X, y, fraction, seed):
    """``(X_a, y_a, X_b, y_b)`` with a seeded random ``fraction`` of the rows in ``b``."""
    order = np.random.default_rng(seed).permutation(X.shape[0])
    cut = round(fraction * X.shape[0])
    b, a = np.sort(order[:cut]), np.sort(order[cut:])
    return X[a], y[a], X[b], y[b]


def load_problem(name: str, datasets: Path):
    """``(train, validation, test, description)``; each split is ``(X, y)``, rows normalised."""
    if name == "a9a":
        train = load(datasets / "adult_a9a_train.svm.gz", task="classification", n_features=123)
        test = load(datasets / "adult_a9a_test.svm.gz", task="classification", n_features=123)
        X, y = sp.csr_matrix(train.X), train.y
        X_test, y_test = sp.csr_matrix(test.X), test.y
        what = "adult a9a (official test split)"
    elif name == "phishing":
        data = load(datasets / "phishing.svm.gz", task="classification", n_features=68)
        X, y, X_test, y_test = _split(sp.csr_matrix(data.X), data.y, 0.2, SPLIT_SEED)
        what = "phishing (random 20 % test split)"
    else:
        raise ValueError(f"unknown problem {name!r}; expected one of {PROBLEMS}")
    X, y, X_val, y_val = _split(X, y, 0.25, SPLIT_SEED + 1)
    splits = [
        (normalise_rows(A), np.asarray(b, dtype=float))
        for A, b in ((X, y), (X_val, y_val), (X_test, y_test))
    ]
    return (*splits, f"logistic, {what}, lambda={LAMBDA:g}, rows normalised")


def accuracy(theta, X, y) -> float:
    """Share of rows whose sign of ``x . theta`` (0 counted as +1) is the label."""
    return float(np.mean(np.where(X @ theta >= 0, 1.0, -1.0) == y))


def fit(method, problem, epsilon, config, seed):
    """The coefficients of one private fit."""
    common = {"epsilon": epsilon, "delta": DELTA, "random_state": seed}
    if method == "dp-agd":
        return (
            get_solver("dp-agd")
            .fit(
                problem,
                variant="paper",
                clip_obj=float(config["clip_obj"]),
                splits=float(config["splits"]),
                **common,
            )
            .theta
        )
    if method == "dp-gd":
        return (
            get_solver("dp-gd")
            .fit(problem, n_iter=int(config["n_iter"]), step=float(config["step"]), **common)
            .theta
        )
    if method in ("dp-cd", "dp-gcd"):
        options = {
            "step": float(config["step"]),
            "clip": float(config["clip"]),
            "smoothness": "bounds",
            "feature_bounds": FEATURE_BOUND,
        }
        with warnings.catch_warnings():
            # the bounds are public: a leak warning here would be a bug
            warnings.simplefilter("error", PrivacyLeakWarning)
            if method == "dp-cd":
                return (
                    get_solver("dp-cd")
                    .fit(problem, passes=float(config["passes"]), **options, **common)
                    .theta
                )
            return (
                get_solver("dp-gcd")
                .fit(problem, n_iter=int(config["n_iter"]), **options, **common)
                .theta
            )
    if method == "dp-sgd":
        return (
            get_solver("dp-sgd")
            .fit(
                problem,
                passes=float(config["passes"]),
                step=float(config["step"]),
                sampling="without_replacement",
                **common,
            )
            .theta
        )
    raise ValueError(f"unknown method {method!r}; expected one of {METHODS}")


def configurations(method, quick=False):
    grid = (QUICK_GRID if quick else GRID)[method]
    keys = list(grid)
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*grid.values())]


def tune(method, problem, valid, test, quick=False):
    """For each epsilon: best configuration on the validation split, then fresh runs."""
    configs = configurations(method, quick)
    rows = []
    for epsilon in EPSILONS:
        start = time.perf_counter()
        scored = [
            (accuracy(fit(method, problem, epsilon, c, TUNING_SEED), *valid), -i)
            for i, c in enumerate(configs)
        ]
        valid_score, best = max(scored)  # ties: the first configuration
        config = configs[-best]
        tests = [
            accuracy(fit(method, problem, epsilon, config, seed), *test)
            for seed in range(QUICK_RUNS if quick else RUNS)
        ]
        rows.append(
            {
                "epsilon": epsilon,
                "config": config,
                "configurations": len(configs),
                "validation": valid_score,
                **spread(tests),
                "seconds": time.perf_counter() - start,
            }
        )
        shown = " ".join(f"{k}={v:g}" for k, v in config.items())
        print(
            f"  {method:7s} eps={epsilon:<4g} {shown:34s} valid={valid_score:.4f} "
            f"test mean={rows[-1]['mean']:.4f} [{rows[-1]['min']:.4f}, {rows[-1]['max']:.4f}] "
            f"({rows[-1]['seconds']:.1f} s)",
            flush=True,
        )
    return rows


def results_path(quick=False, out=None) -> Path:
    return Path(out) if out is not None else stored_path(RESULTS, quick)


def save_entry(path: Path, name, meta, method, rows, quick=False):
    """Merge one (problem, method) result into the JSON (runs may overlap)."""
    protocol = {
        "delta": DELTA,
        "lambda": LAMBDA,
        "epsilons": list(EPSILONS),
        "runs": QUICK_RUNS if quick else RUNS,
        "tuning_seed": TUNING_SEED,
        "feature_bound": FEATURE_BOUND,
        "grid": QUICK_GRID if quick else GRID,
    }
    return store_entry(path, name, meta, method, rows, protocol)


def _cell(row) -> str:
    return f"{row['mean']:.4f} [{row['min']:.4f}, {row['max']:.4f}]"


def table(results) -> str:
    """Markdown: test accuracy mean [min, max] per problem, method and epsilon."""
    runs = results.get("protocol", {}).get("runs", "?")
    lines = [
        f"Test accuracy, mean [min, max] over {runs} runs of the configuration tuned on the "
        f"validation split; delta = {DELTA:g}.",
        "",
        "| problem | method | configs | " + " | ".join(f"eps={e:g}" for e in EPSILONS) + " |",
        "|---|---|---|" + "---|" * len(EPSILONS),
    ]
    best_lines = ["| problem | method | " + " | ".join(f"eps={e:g}" for e in EPSILONS) + " |"]
    best_lines.append("|---|---|" + "---|" * len(EPSILONS))
    for name in PROBLEMS:
        entry = results["problems"].get(name)
        if entry is None:
            continue
        reference = entry.get("non_private_test")
        if reference is not None:
            shown = " | ".join([f"{reference:.4f}"] * len(EPSILONS))
            lines.append(f"| {name} | non-private optimum | - | {shown} |")
        for method in METHODS:
            rows = entry["methods"].get(method)
            if not rows:
                continue
            by_eps = {r["epsilon"]: r for r in rows}
            cells = [_cell(by_eps[e]) if e in by_eps else "" for e in EPSILONS]
            lines.append(
                f"| {name} | {method} | {rows[0]['configurations']} | " + " | ".join(cells) + " |"
            )
            configs = [
                " ".join(f"{k}={v:g}" for k, v in by_eps[e]["config"].items())
                if e in by_eps
                else ""
                for e in EPSILONS
            ]
            best_lines.append(f"| {name} | {method} | " + " | ".join(configs) + " |")
    chosen = ["", "Configuration chosen on the validation split:", ""]
    return "\n".join([*lines, *chosen, *best_lines])


def figure(results, path: Path) -> None:
    """Test accuracy against epsilon, one panel per problem, mean with a min / max band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [p for p in PROBLEMS if p in results["problems"]]
    if not names:
        return
    fig, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 4.0), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        entry = results["problems"][name]
        for method in METHODS:
            rows = entry["methods"].get(method)
            if not rows:
                continue
            x = [r["epsilon"] for r in rows]
            (line,) = ax.plot(x, [r["mean"] for r in rows], marker="o", ms=3, label=method)
            lows, highs = [r["min"] for r in rows], [r["max"] for r in rows]
            ax.fill_between(x, lows, highs, alpha=0.15, color=line.get_color())
        if entry.get("non_private_test") is not None:
            ax.axhline(entry["non_private_test"], color="k", ls=":", lw=1, label="non-private")
        ax.set_xscale("log")
        ax.set_xlabel(f"epsilon (delta = {DELTA:g})")
        ax.set_ylabel("test accuracy")
        ax.set_title(entry["description"], fontsize=8)
        ax.legend(fontsize=8, loc="lower right")
    runs = results.get("protocol", {}).get("runs", "?")
    fig.suptitle(
        f"DP-AGD vs fixed-split DP-GD, DP-CD, DP-GCD, DP-SGD: mean and min/max over {runs} runs",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def report(results, path: Path, readme: bool) -> str:
    """Write the figure next to the JSON, print the table, and put it in the README."""
    figure(results, path.with_suffix(".png"))
    text = table(results)
    print(text)
    if readme:
        replace_table("compare_dp_agd", text, SECTION)
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", type=Path, default=os.environ.get("DPGLM_DATASETS"))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--quick", action="store_true", help="coarse grid, 3 runs (smoke test)")
    parser.add_argument("--report", action="store_true", help="figure and table from the JSON")
    parser.add_argument("--out", type=Path, help="results JSON (the figure goes next to it)")
    args = parser.parse_args(argv)
    path = results_path(args.quick, args.out)
    readme = not args.quick and args.out is None
    for method in args.methods.split(","):
        if method not in METHODS:
            raise SystemExit(f"unknown method {method!r}; expected some of {METHODS}")
    if args.report:
        report(load_results(path), path, readme)
        return 0
    if not args.datasets:
        raise SystemExit("give --datasets DIR (or set DPGLM_DATASETS)")
    datasets = Path(args.datasets)
    results = load_results(path)
    for name in args.problems.split(","):
        train, valid, test, description = load_problem(name, datasets)
        problem = Problem(*train, "logistic", L2(LAMBDA))
        reference = solve_reference(problem)
        meta = {
            "description": description,
            "n_train": problem.n_samples,
            "n_validation": valid[0].shape[0],
            "n_test": test[0].shape[0],
            "p": problem.n_features,
            "non_private_test": accuracy(reference.theta, *test),
            "non_private_validation": accuracy(reference.theta, *valid),
        }
        print(
            f"{name}: {description}, n={meta['n_train']}/{meta['n_validation']}/"
            f"{meta['n_test']}, p={meta['p']}, non-private test accuracy "
            f"{meta['non_private_test']:.4f}",
            flush=True,
        )
        for method in args.methods.split(","):
            rows = tune(method, problem, valid, test, quick=args.quick)
            results = save_entry(path, name, meta, method, rows, args.quick)
    report(results, path, readme)
    return 0


if __name__ == "__main__":
    sys.exit(main())
