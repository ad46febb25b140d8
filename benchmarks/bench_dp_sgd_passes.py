"""DP-SGD's number of passes: what the estimators' default of 10 costs against the best.

``solver="auto"`` fits every binary and regression table of ``bench_defaults.py``
but sms spam and madelon with DP-SGD, at ``DEFAULT_PASSES["dp-sgd"]`` passes
over the data. The theory of private SGD gives no count to use: its excess
risk bound for convex losses (Bassily, Smith and Thakurta 2014) is reached
after about ``n^2`` steps, and the noise of each step grows with the steps
taken for a fixed epsilon, so the best count is a trade-off this script
measures, table by table.

Protocol: the datasets, splits and loaders of ``bench_defaults.py`` (adult,
phishing and electricity by accuracy with ``DPLogisticRegression``; both
California tables and communities by R^2 with ``DPLinearRegression``). Only
``epsilon``, ``random_state`` and ``passes`` are set; the estimators' private
preprocessing, step and batch size do the rest. Epsilon in ``EPSILONS``,
passes in ``PASSES``, ``SEEDS`` seeds each: the mean held-out score, the best
count, and what the default loses against it. A ``PrivacyLeakWarning`` is an
error.

Usage: ``python benchmarks/bench_dp_sgd_passes.py --datasets DIR`` (about
fifteen minutes on 2 cores; ``--table`` rewrites the README section from the
JSON). Writes ``results/bench_dp_sgd_passes.json`` and the README section
``bench_dp_sgd_passes``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

from bench_defaults import load_dataset
from dpglm import DPLinearRegression, DPLogisticRegression, PrivacyLeakWarning
from dpglm.estimators import DEFAULT_PASSES
from readme_tables import measure_or_reload

RESULTS = Path(__file__).resolve().parent / "results" / "bench_dp_sgd_passes.json"
EPSILONS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
PASSES = (2.5, 5.0, 10.0, 20.0, 40.0, 80.0)
SEEDS = 5
DATASETS = ("adult", "phishing", "electricity", "california", "california_raw", "communities")

SECTION = """## DP-SGD's number of passes (`bench_dp_sgd_passes.py`)

DP-SGD is `solver="auto"`'s choice on six of the eight tables of `bench_defaults.py`. The
estimators with only epsilon and `passes` set, on the raw tables (method in the script's
docstring): the mean held-out score over the seeds at each number of passes, the best
count, and what the default (10 passes) loses against it, in points of accuracy or R^2."""


def fit_score(estimator, data, epsilon, passes, seed):
    X, y, X_test, y_test = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=PrivacyLeakWarning)
        model = estimator(epsilon=epsilon, random_state=seed, passes=passes).fit(X, y)
    return float(model.score(X_test, y_test))


def run(directory):
    rows = []
    for name in DATASETS:
        X, y, X_test, y_test, task = load_dataset(directory, name)
        estimator = DPLinearRegression if task == "regression" else DPLogisticRegression
        for epsilon in EPSILONS:
            scores = {
                f"{passes:g}": [
                    fit_score(estimator, (X, y, X_test, y_test), epsilon, passes, seed)
                    for seed in range(SEEDS)
                ]
                for passes in PASSES
            }
            rows.append(
                {
                    "dataset": name,
                    "model": estimator.__name__,
                    "n_train": int(X.shape[0]),
                    "n_features": int(X.shape[1]),
                    "epsilon": epsilon,
                    "scores": scores,
                }
            )
            means = {p: round(float(np.mean(s)), 4) for p, s in scores.items()}
            print(name, epsilon, means, flush=True)
    return {"passes": list(PASSES), "seeds": SEEDS, "default": DEFAULT_PASSES["dp-sgd"],
            "rows": rows}  # fmt: skip


def markdown(report):
    passes = [f"{p:g}" for p in report["passes"]]
    default = f"{report['default']:g}"
    lines = [
        "| dataset | n epsilon | epsilon | " + " | ".join(f"{p} passes" for p in passes)
        + " | best | default's loss |",
        "|---|---|---|" + "---|" * len(passes) + "---|---|",
    ]  # fmt: skip
    for row in report["rows"]:
        means = {p: float(np.mean(row["scores"][p])) for p in passes}
        best = max(means, key=means.get)
        cells = " | ".join(
            f"**{means[p]:.3f}**" if p == best else f"{means[p]:.3f}" for p in passes
        )
        loss = 100 * (means[best] - means[default])
        lines.append(
            f"| {row['dataset']} | {row['n_train'] * row['epsilon']:,.0f} | "
            f"{row['epsilon']:g} | {cells} | {best} | {loss:.1f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    description = __doc__.split("\n\n")[0]
    return measure_or_reload(
        argv, description, RESULTS, run, markdown, "bench_dp_sgd_passes", SECTION
    )


if __name__ == "__main__":
    sys.exit(main())
