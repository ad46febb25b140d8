"""Raw tables with string columns: the census table in, with only ``epsilon`` set.

The raw adult table (``adult_raw_train.csv.gz``, ``adult_raw_test.csv.gz``: 6
integer and 8 string columns, ``?`` for a missing value, the target the
string ``<=50K`` / ``>50K``) is fitted as a pandas DataFrame, for each epsilon
in {0.5, 1, 2} and ``RUNS`` seeds (``random_state`` 0..4), and scored on
adult's own test file:

* **private selection**: ``DPLogisticRegression(epsilon=e, missing_values="?")``
  on the DataFrame: the category sets are selected privately inside the fit's
  budget, the numeric ranges too. A ``PrivacyLeakWarning`` is an error;
* **public categories**: the same with ``categories=`` the sets UCI's
  ``adult.names`` lists (public, free);
* **non-private scikit-learn**: ``OneHotEncoder(handle_unknown="ignore")`` on
  the string columns and ``StandardScaler`` on the numeric ones, then
  ``LogisticRegression(max_iter=2000)``;
* **dpglm behind scikit-learn's encoders**: the idiom users write today, whose
  encoders learn without privacy: recorded with whether the fit's report says
  its guarantee holds (it must say it does not);
* **majority**: the training split's majority class.

Fit times are ``time.perf_counter`` around ``fit`` after one untimed warm-up
fit (numba's compilation). Targets at epsilon 1: private selection >= .83,
public categories >= .84, no leak, fit under 2 s. Results in
``results/bench_categorical.json``.

Usage::

    python benchmarks/bench_categorical.py --datasets DIR [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).parent / "results" / "bench_categorical.json"
EPSILONS = (0.5, 1.0, 2.0)
RUNS = 5
NUMERIC = ("age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week")
#: the category sets of UCI's adult.names (dashes written as underscores in column names)
PUBLIC_CATEGORIES = {
    "workclass": [
        "Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
        "State-gov", "Without-pay", "Never-worked",
    ],
    "education": [
        "Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm",
        "Assoc-voc", "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate",
        "5th-6th", "Preschool",
    ],
    "marital_status": [
        "Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
        "Married-spouse-absent", "Married-AF-spouse",
    ],
    "occupation": [
        "Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
        "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
        "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
        "Armed-Forces",
    ],
    "relationship": [
        "Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried",
    ],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
    "sex": ["Female", "Male"],
    "native_country": [
        "United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
        "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba",
        "Iran", "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico",
        "Portugal", "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan",
        "Haiti", "Columbia", "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand",
        "Yugoslavia", "El-Salvador", "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands",
    ],
}  # fmt: skip


def load(directory: Path):
    import pandas as pd

    train = pd.read_csv(directory / "adult_raw_train.csv.gz")
    test = pd.read_csv(directory / "adult_raw_test.csv.gz")
    return (
        train.drop(columns="target"),
        train["target"].to_numpy(),
        test.drop(columns="target"),
        test["target"].to_numpy(),
    )


def dpglm_fit(X, y, epsilon, seed, public):
    from dpglm.estimators import DPLogisticRegression
    from dpglm.exceptions import PrivacyLeakWarning

    model = DPLogisticRegression(
        epsilon=epsilon,
        missing_values="?",
        categories=PUBLIC_CATEGORIES if public else None,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start
    return model, seconds


def sklearn_pipeline(dp=None):
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    strings = list(PUBLIC_CATEGORIES)
    columns = ColumnTransformer(
        [
            ("strings", OneHotEncoder(handle_unknown="ignore"), strings),
            ("numbers", StandardScaler(), list(NUMERIC)),
        ]
    )
    return make_pipeline(columns, dp if dp is not None else LogisticRegression(max_iter=2000))


def summary(values) -> dict:
    values = [float(v) for v in values]
    return {"mean": float(np.mean(values)), "min": min(values), "max": max(values), "runs": values}


def run(directory: Path, epsilons, runs) -> dict:
    from dpglm.estimators import DPLogisticRegression

    X, y, X_test, y_test = load(directory)
    values, counts = np.unique(y, return_counts=True)
    majority = float(np.mean(y_test == values[np.argmax(counts)]))
    start = time.perf_counter()
    sk = sklearn_pipeline().fit(X, y)
    sk_seconds = time.perf_counter() - start
    results = {
        "majority": majority,
        "sklearn": {"accuracy": float(sk.score(X_test, y_test)), "seconds": sk_seconds},
        "epsilons": {},
    }
    print(f"majority {majority:.4f}  sklearn {results['sklearn']['accuracy']:.4f}", flush=True)
    warm = time.perf_counter()
    dpglm_fit(X, y, 1.0, 123, public=False)
    results["warm_up_seconds"] = time.perf_counter() - warm
    for epsilon in epsilons:
        row = {}
        for name, public in (("private selection", False), ("public categories", True)):
            scores, times, shares = [], [], []
            for seed in range(runs):
                model, seconds = dpglm_fit(X, y, epsilon, seed, public)
                assert model.privacy_report_.guarantee, model.privacy_report_.warnings
                scores.append(model.score(X_test, y_test))
                times.append(seconds)
                shares.append(model.privacy_report_.parts.get("category selection", 0.0))
            row[name] = {
                "accuracy": summary(scores),
                "seconds": summary(times),
                "selection_epsilon": float(np.mean(shares)),
                "encoded_columns": len(model.encoded_feature_names_),
                "epsilon": model.privacy_report_.epsilon,
            }
        leaky_scores, guarantees = [], []
        for seed in range(runs):
            pipeline = sklearn_pipeline(DPLogisticRegression(epsilon=epsilon, random_state=seed))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pipeline.fit(X, y)
            leaky_scores.append(pipeline.score(X_test, y_test))
            guarantees.append(bool(pipeline[-1].privacy_report_.guarantee))
        row["behind sklearn encoders (not private)"] = {
            "accuracy": summary(leaky_scores),
            "report_guarantee": guarantees,
        }
        results["epsilons"][str(epsilon)] = row
        print(
            f"eps {epsilon:g}: "
            + "  ".join(
                f"{k} {v['accuracy']['mean']:.4f} [{v['accuracy']['min']:.4f}, "
                f"{v['accuracy']['max']:.4f}]"
                for k, v in row.items()
            )
            + f"  fit {row['private selection']['seconds']['mean']:.2f} s",
            flush=True,
        )
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=os.environ.get("DPGLM_DATASETS"))
    parser.add_argument("--quick", action="store_true", help="epsilon 1, one seed")
    args = parser.parse_args(argv)
    if args.datasets is None:
        parser.error("--datasets DIR (or DPGLM_DATASETS) is required")
    epsilons, runs = ((1.0,), 1) if args.quick else (EPSILONS, RUNS)
    results = run(args.datasets, epsilons, runs)
    if not args.quick:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(results, indent=1) + "\n")
        print(f"saved in {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
