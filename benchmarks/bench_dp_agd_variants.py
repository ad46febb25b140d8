"""DP-AGD on the raw tables: the paper's step-size rule against the loss-change default.

DP-AGD is ``solver="auto"``'s choice for records in row chunks. Run by the
estimators on the raw tables of ``bench_defaults.py``, the paper's variant
(``solver_options={"variant": "paper"}``: clipped losses ``min(l, C_obj)`` as
the step-size scores, ``a_max`` set every ``tau`` steps only) falls to the
majority class with the logistic loss from epsilon 4 up on adult and at 16 on
phishing (and with the squared hinge too while the estimators clipped it at
1). The default variant (``"loss-change"``) scores the
change of the objective whose gradient the clipped sum is, and moves ``a_max``
with the rejections and the largest steps taken (the method is in
:mod:`dpglm.solvers.dp_agd`).

Protocol: the datasets, splits and loaders of ``bench_defaults.py`` (adult,
phishing, electricity and madelon by accuracy with ``DPLogisticRegression`` and
``DPLinearSVC``; california raw and communities by R^2 with
``DPLinearRegression``), and letter and digits by accuracy with the multinomial
``DPLogisticRegression`` (the loaders and splits of ``bench_multiclass.py``).
Only ``epsilon``, ``random_state`` and ``solver="dp-agd"`` are set, and the
variant (and digits' public ``classes``, as in ``bench_multiclass.py``: its 1,347
training records are too few to select its ten labels privately below epsilon
16); the estimators' private preprocessing does the rest (adult's, phishing's,
electricity's, madelon's and letter's label sets are selected privately). Epsilon in
``EPSILONS``, ``SEEDS`` seeds each: mean [min, max] of the held-out score.
The last column is the same estimator at ``epsilon = inf`` (its reference
solver on the same clipped and scaled data): what a private fit aims at.
A ``PrivacyLeakWarning`` is an error.

Usage: ``python benchmarks/bench_dp_agd_variants.py --datasets DIR`` (about ten
minutes on 2 cores; ``--table`` rewrites the README section from the JSON).
Writes ``results/bench_dp_agd_variants.json`` and the README section
``bench_dp_agd_variants``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

import bench_multiclass
from bench_defaults import load_dataset
from dpglm import DPLinearRegression, DPLinearSVC, DPLogisticRegression, PrivacyLeakWarning
from readme_tables import measure_or_reload

RESULTS = Path(__file__).resolve().parent / "results" / "bench_dp_agd_variants.json"
EPSILONS = (1.0, 4.0, 16.0)
SEEDS = 5
VARIANTS = ("paper", "loss-change")
BINARY = ("adult", "phishing", "electricity", "madelon")
REGRESSION = ("california_raw", "communities")
MULTICLASS = ("letter", "digits")

SECTION = """## DP-AGD: the paper's step-size rule against the loss-change default \
(`bench_dp_agd_variants.py`)

DP-AGD is `solver="auto"`'s choice on records in row chunks. The estimators with
`solver="dp-agd"` and only epsilon set, on the raw tables (method in the script's
docstring): held-out accuracy (R^2 for the regressions), mean [min, max] over the seeds;
the last column is the same estimator without privacy."""


def load(directory, name):
    if name in MULTICLASS:
        return (*bench_multiclass.load_dataset(directory, name), "multiclass")
    return load_dataset(directory, name)


def estimators(name):
    if name in REGRESSION:
        return {"DPLinearRegression": DPLinearRegression}
    if name in MULTICLASS:
        return {"DPLogisticRegression": DPLogisticRegression}
    return {"DPLogisticRegression": DPLogisticRegression, "DPLinearSVC": DPLinearSVC}


def fit_score(estimator, data, epsilon, seed, options, classes=None):
    X, y, X_test, y_test = data
    extra = {} if classes is None else {"classes": classes}
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=PrivacyLeakWarning)
        model = estimator(epsilon=epsilon, random_state=seed, solver="dp-agd",
                          solver_options=options, **extra)  # fmt: skip
        model.fit(X, y)
    return float(model.score(X_test, y_test)), model


def run(directory):
    rows = []
    for name in (*BINARY, *REGRESSION, *MULTICLASS):
        *data, _ = load(directory, name)
        # digits' public labels (too few records to select them privately below epsilon 16)
        classes = bench_multiclass.PUBLIC_CLASSES.get(name)
        for label, estimator in estimators(name).items():
            reference = estimator(epsilon=np.inf).fit(data[0], data[1]).score(data[2], data[3])
            row = {"dataset": name, "model": label, "non_private": float(reference)}
            for variant in VARIANTS:
                cells = {}
                for epsilon in EPSILONS:
                    scores, steps = [], []
                    for seed in range(SEEDS):
                        value, model = fit_score(estimator, data, epsilon, seed,
                                                 {"variant": variant}, classes)  # fmt: skip
                        scores.append(value)
                        steps.append(int(model.n_iter_))
                    cells[f"{epsilon:g}"] = {"scores": scores, "steps": steps}
                row[variant] = cells
                means = [np.mean(c["scores"]) for c in cells.values()]
                print(name, label, variant, np.round(means, 4), flush=True)
            rows.append(row)
    return {"epsilons": list(EPSILONS), "seeds": SEEDS, "rows": rows}


def _cell(cell):
    s = cell["scores"]
    return f"{np.mean(s):.3f} [{np.min(s):.3f}, {np.max(s):.3f}]"


def markdown(report):
    epsilons = [f"{e:g}" for e in report["epsilons"]]
    head = " | ".join(f"epsilon {e}" for e in epsilons)
    lines = [
        f"| dataset | model | variant | {head} | epsilon = inf |",
        "|---|---|---|" + "---|" * len(epsilons) + "---|",
    ]
    for row in report["rows"]:
        for variant in VARIANTS:
            cells = " | ".join(_cell(row[variant][e]) for e in epsilons)
            lines.append(
                f"| {row['dataset']} | {row['model']} | {variant} | {cells} | "
                f"{row['non_private']:.3f} |"
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    description = __doc__.split("\n\n")[0]
    return measure_or_reload(
        argv, description, RESULTS, run, markdown, "bench_dp_agd_variants", SECTION
    )


if __name__ == "__main__":
    sys.exit(main())
