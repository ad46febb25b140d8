"""Private and accurate by default: the estimators with only ``epsilon`` set, on raw data.

The acceptance benchmark of "private and accurate by default". For each dataset
and each epsilon in {0.5, 1, 2} (``RUNS`` seeds, ``random_state`` 0..4):

* **dpglm defaults**: ``DPLogisticRegression`` (classification) or
  ``DPLinearRegression`` (regression) with only ``epsilon`` and
  ``random_state`` set, fitted on the raw training data: the script neither
  scales nor clips anything, the estimator's own private preprocessing does.
  A :class:`~dpglm.PrivacyLeakWarning` is turned into an error (and a report
  listing a leak counts as one): a leak fails the cell loudly, is printed, and
  makes the script exit with status 2. Recorded: the held-out score (mean,
  min, max over the seeds), the fit time (``time.perf_counter`` around
  ``fit``, after one untimed warm-up fit per dataset and column so numba's
  compilation is excluded; the warm-up's own time is recorded apart), the
  solver ``"auto"`` chose (``model.solver_``) and the share of epsilon spent on
  preprocessing: the epsilon of the report's ``"preprocessing"`` part on its
  own over the whole fit's epsilon (``privacy_report_.parts``; 0 when no
  mechanism has ``part == "preprocessing"``, None when the report has no such
  field);
* **dpglm with exact public bounds**: the same, with
  ``feature_bounds=np.column_stack([X_train.min(0), X_train.max(0)])`` (the
  training columns' ranges, implicit zeros of sparse data included) and, for
  regression, ``target_bounds=(y_train.min(), y_train.max())``: what the
  defaults would reach if the ranges were public. An estimator that rejects
  these parameters gets its error recorded in the cell, and the run goes on;
* **non-private**: scikit-learn's ``LogisticRegression(max_iter=2000)`` or
  ``LinearRegression()`` after ``StandardScaler`` (``with_mean=False`` on
  sparse data) fitted on the training split;
* **trivial baseline**: the training split's majority class (accuracy on the
  test split); for regression the training mean (R^2, about 0).

Data (``DIR``, see its README.md), all with a fixed 75 / 25 split of
permutation seed 0 except adult, which has its own test file: adult a9a,
phishing, electricity, madelon and sms spam TF-IDF (sparse, 14993 features)
are classification, scored by accuracy; california (scikit-learn form and raw
StatLib columns) and communities and crime are regression, scored by R^2. The raw
census table with its string columns is measured by ``bench_categorical.py`` (its
protocol differs: a DataFrame in, category sets public or private).

Targets at epsilon = 1 (mean over the seeds of the defaults column): adult
>= 0.83, phishing >= 0.92, electricity >= 0.755, california (both forms) R^2
>= 0.50, communities R^2 >= 0.55, sms spam >= 0.90, madelon >= 0.55; and every
timed default fit under 2 s. ``--table`` prints PASS / FAIL per dataset.

Each dataset's results are saved as soon as they are measured, with the
installed dpglm's version, git commit and the files changed under ``src/``,
in ``results/bench_defaults.json`` (``--quick``: ``bench_defaults_quick.json``).
Exit status: 0 when every cell ran, 1 when some cell recorded an error, 2 when
some fit leaked.

Usage::

    python benchmarks/bench_defaults.py --datasets DIR [--only NAME[,NAME]] [--quick]
    python benchmarks/bench_defaults.py --table [--quick] [--readme]

``DIR`` holds the datasets (default: ``$DPGLM_DATASETS``); ``--quick`` runs
epsilon 1 with one seed; ``--readme`` also writes the tables into
``benchmarks/README.md``. Names for ``--only``: adult, phishing, electricity,
california, california_raw, communities, sms_spam, madelon.
"""

from __future__ import annotations

import logging
import math
import subprocess
import sys
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from readme_tables import dataset_arguments, show_table
from result_store import finish, load_results, results_path, save_entry, spread, version_lines

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results" / "bench_defaults.json"

EPSILONS = (0.5, 1.0, 2.0)
TARGET_EPSILON = 1.0
RUNS = 5
SPLIT_SEED = 0
TIME_LIMIT = 2.0  # seconds, every timed default fit
PREPROCESSING_PART = "preprocessing"
#: the report part of a classifier's label selection (its own charge, before the model's)
LABEL_PART = "label selection"

COLUMNS = ("defaults", "public_bounds")

#: name -> (label, train file, test file or None, task, n_features or None, target at eps=1)
DATASETS = {
    "adult": (
        "adult (a9a)",
        "adult_a9a_train.svm.gz",
        "adult_a9a_test.svm.gz",
        "classification",
        123,
        0.83,
    ),
    "phishing": ("phishing", "phishing.svm.gz", None, "classification", 68, 0.92),
    "electricity": ("electricity", "electricity.csv.gz", None, "classification", None, 0.755),
    "california": ("california", "california_housing.csv.gz", None, "regression", None, 0.50),
    "california_raw": (
        "california (StatLib raw)",
        "california_housing_statlib_raw.csv.gz",
        None,
        "regression",
        None,
        0.50,
    ),
    "communities": ("communities", "communities_crime.csv.gz", None, "regression", None, 0.55),
    "sms_spam": (
        "sms spam (TF-IDF)",
        "sms_spam_tfidf.svm.gz",
        None,
        "classification",
        14993,
        0.90,
    ),
    "madelon": ("madelon", "madelon.csv.gz", None, "classification", None, 0.55),
}


# -- data ---------------------------------------------------------------------------


def _split(X, y, seed=SPLIT_SEED, test=0.25):
    rng = np.random.default_rng(seed)
    order = rng.permutation(X.shape[0])
    cut = round((1 - test) * X.shape[0])
    return X[order[:cut]], y[order[:cut]], X[order[cut:]], y[order[cut:]]


def _raw(X):
    """``X`` as loaded: CSR if sparse (rows are split), else a NumPy array."""
    return X.tocsr() if sp.issparse(X) else np.asarray(X)


def load_dataset(directory: Path, name: str):
    """``(X_train, y_train, X_test, y_test, task)``, unscaled."""
    from dpglm.data import load

    _, train, test, task, n_features, _ = DATASETS[name]
    options = {"task": task, "n_features": n_features}
    if train.endswith(".csv.gz"):
        options["target"] = "target"
    data = load(directory / train, **options)
    X, y = _raw(data.X), np.asarray(data.y)
    if test is None:
        return (*_split(X, y), task)
    other = load(directory / test, **options)
    return X, y, _raw(other.X), np.asarray(other.y), task


def column_ranges(X):
    """``(p, 2)`` array of each column's (min, max), implicit zeros of sparse X included."""
    if sp.issparse(X):
        low = np.asarray(X.min(axis=0).todense()).ravel()
        high = np.asarray(X.max(axis=0).todense()).ravel()
    else:
        low, high = X.min(axis=0), X.max(axis=0)
    return np.column_stack([low, high]).astype(float)


def score(task, y_true, y_pred):
    """Accuracy (classification) or R^2 (regression)."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if task == "classification":
        return float(np.mean(y_true == y_pred))
    residual = np.sum((y_true - y_pred) ** 2)
    return float(1.0 - residual / np.sum((y_true - y_true.mean()) ** 2))


def non_private_score(X, y, X_test, y_test, task):
    """scikit-learn's score on features standardised with the training split."""
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = LogisticRegression(max_iter=2000) if task == "classification" else LinearRegression()
    pipeline = make_pipeline(StandardScaler(with_mean=not sp.issparse(X)), model).fit(X, y)
    return score(task, y_test, pipeline.predict(X_test))


def baseline_score(y, y_test, task):
    """Majority class of the training split (accuracy), or its mean (R^2)."""
    if task == "classification":
        values, counts = np.unique(y, return_counts=True)
        return score(task, y_test, np.full(len(y_test), values[np.argmax(counts)]))
    return score(task, y_test, np.full(len(y_test), float(np.mean(y))))


# -- provenance ---------------------------------------------------------------------


def _git(*args):
    try:
        done = subprocess.run(
            ["git", "--no-optional-locks", "-C", str(REPO), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.rstrip("\n")


def provenance() -> dict:
    """The dpglm measured: version, module path, commit and the files changed under src/."""
    import dpglm

    changed = _git("status", "--porcelain", "--untracked-files=all", "--", "src")
    return {
        "version": dpglm.__version__,
        "module": dpglm.__file__,
        "commit": _git("rev-parse", "HEAD"),
        "changed_under_src": None if changed is None else changed.splitlines(),
    }


# -- fits ---------------------------------------------------------------------------


class LeakError(RuntimeError):
    """A fit whose report lists a privacy leak (the warning did not reach the filter)."""


def error_text(exc) -> str:
    """``Type: message (file:line of the innermost frame)``, on one line."""
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip().replace("\n", " ")
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        text += f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})"
    return text


def is_leak(exc) -> bool:
    from dpglm import PrivacyLeakWarning

    return isinstance(exc, PrivacyLeakWarning | LeakError)


def estimator_params(column, task, X, y, epsilon, seed) -> dict:
    params = {"epsilon": epsilon, "random_state": seed}
    if column == "public_bounds":
        params["feature_bounds"] = column_ranges(X)
        if task == "regression":
            params["target_bounds"] = (float(np.min(y)), float(np.max(y)))
    return params


def fit_once(column, task, X, y, epsilon, seed):
    """``(model, seconds)``; a privacy leak raises."""
    from dpglm import PrivacyLeakWarning
    from dpglm.estimators import DPLinearRegression, DPLogisticRegression

    cls = DPLogisticRegression if task == "classification" else DPLinearRegression
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        model = cls(**estimator_params(column, task, X, y, epsilon, seed))
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start
    leaks = getattr(getattr(model, "privacy_report_", None), "warnings", ())
    if leaks:
        raise LeakError("the privacy report lists leaks: " + "; ".join(leaks))
    return model, seconds


def preprocessing_spend(model) -> dict:
    """Epsilon of the preprocessing part, on its own, and its share of the fit's epsilon."""
    report = getattr(model, "privacy_report_", None)
    mechanisms = getattr(report, "mechanisms", None)
    if mechanisms is None or any(not hasattr(m, "part") for m in mechanisms):
        return {"share": None, "epsilon": None, "note": "the report has no mechanism parts"}
    total = float(report.epsilon)
    found = [m for m in mechanisms if m.part == PREPROCESSING_PART]
    parts = dict(getattr(report, "parts", {}) or {})
    spend = {
        "total_epsilon": total if math.isfinite(total) else None,
        "mechanisms": [f"{m.count} x {m.kind} [{m.label}]" for m in found],
        "parts": {k: (float(v) if math.isfinite(v) else None) for k, v in parts.items()},
    }
    if not found:
        return {"share": 0.0, "epsilon": 0.0, **spend}
    epsilon = parts.get(PREPROCESSING_PART)
    if epsilon is None or not math.isfinite(total) or total <= 0:
        return {"share": None, "epsilon": epsilon, "note": "no epsilon for the part", **spend}
    return {"share": float(epsilon) / total, "epsilon": float(epsilon), **spend}


def run_cell(column, task, data, epsilon, runs) -> dict:
    """The ``runs`` seeds of one (column, epsilon); the first error ends the cell."""
    X, y, X_test, y_test = data
    scores, times, solvers, shares, first_spend, error, leak = [], [], [], [], None, None, False
    for seed in range(runs):
        try:
            model, seconds = fit_once(column, task, X, y, epsilon, seed)
            scores.append(score(task, y_test, model.predict(X_test)))
        except Exception as exc:  # recorded in the cell, the run goes on
            error, leak = f"seed {seed}: {error_text(exc)}", is_leak(exc)
            break
        times.append(seconds)
        solvers.append(getattr(model, "solver_", None))
        spend = preprocessing_spend(model)
        shares.append(spend["share"])
        first_spend = first_spend or spend
    return {
        "score": spread(scores) if scores else None,
        "seconds": spread(times) if times else None,
        "solver": Counter(solvers).most_common(1)[0][0] if solvers else None,
        "solvers": solvers,
        "preprocessing": first_spend,
        "preprocessing_shares": shares,
        "error": error,
        "leak": leak,
    }


def warm_up(column, task, X, y) -> dict:
    """One untimed fit at the target epsilon, so that the timed ones exclude compilation."""
    try:
        model, seconds = fit_once(column, task, X, y, TARGET_EPSILON, 0)
    except Exception as exc:  # recorded, the column is skipped
        return {"seconds": None, "solver": None, "error": error_text(exc), "leak": is_leak(exc)}
    return {"seconds": seconds, "solver": getattr(model, "solver_", None), "error": None}


def _cell_text(cell) -> str:
    if cell.get("score") is None:
        return f"ERROR {cell['error']}"
    s, t = cell["score"], cell["seconds"]
    share = (cell.get("preprocessing") or {}).get("share")
    text = (
        f"{s['mean']:.4f} [{s['min']:.4f}, {s['max']:.4f}] {cell['solver']} "
        f"prep={'n/a' if share is None else f'{share:.3f}'} fit {t['mean']:.3f}s"
    )
    return text + (f"  (then ERROR {cell['error']})" if cell["error"] else "")


def run_dataset(directory, name, epsilons, runs, path, protocol) -> list:
    """Measure ``name``, save each part as soon as it is done; the leaks found."""
    label, _, _, task, _, target = DATASETS[name]
    start = time.perf_counter()
    X, y, X_test, y_test, task = load_dataset(directory, name)
    meta = {
        "label": label,
        "task": task,
        "metric": "accuracy" if task == "classification" else "R^2",
        "n_train": int(X.shape[0]),
        "n_test": int(X_test.shape[0]),
        "n_features": int(X.shape[1]),
        "sparse": bool(sp.issparse(X)),
        "load_seconds": time.perf_counter() - start,
        "non_private": non_private_score(X, y, X_test, y_test, task),
        "baseline": baseline_score(y, y_test, task),
        "target": target,
        "dpglm": provenance(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    print(
        f"{label}: n={meta['n_train']}+{meta['n_test']}, p={meta['n_features']}"
        f"{' sparse' if meta['sparse'] else ''}; non-private {meta['non_private']:.4f}, "
        f"baseline {meta['baseline']:.4f}",
        flush=True,
    )
    leaks = []
    for column in COLUMNS:
        warm = warm_up(column, task, X, y)
        row = {"warmup": warm, "epsilons": {}, "started": meta["started"]}
        if warm["error"] is None:
            print(f"  {column:13s} warm-up {warm['seconds']:.2f}s ({warm['solver']})", flush=True)
        else:
            print(f"  {column:13s} warm-up ERROR {warm['error']}", flush=True)
        for epsilon in epsilons:
            if warm["error"] is None:
                cell = run_cell(column, task, (X, y, X_test, y_test), epsilon, runs)
            else:
                cell = {"score": None, "error": f"warm-up: {warm['error']}", "leak": warm["leak"]}
            row["epsilons"][f"{epsilon:g}"] = cell
            print(f"  {column:13s} eps={epsilon:<4g} {_cell_text(cell)}", flush=True)
            if cell["leak"]:
                leaks.append(f"{label} / {column} / eps={epsilon:g}: {cell['error']}")
                print(f"PRIVACY LEAK: {leaks[-1]}", file=sys.stderr, flush=True)
        save_entry(path, name, meta, column, row, protocol)
    return leaks


# -- tables -------------------------------------------------------------------------


def _md(text, limit=70) -> str:
    text = str(text).replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _get(entry, column, epsilon):
    return entry["methods"].get(column, {}).get("epsilons", {}).get(f"{epsilon:g}")


def _spread_text(cell) -> str:
    if not cell:
        return "not run"
    if cell.get("score") is None:
        return "error: " + _md(cell["error"])
    s = cell["score"]
    text = f"{s['mean']:.3f} [{s['min']:.3f}, {s['max']:.3f}]"
    return text + (" (error after)" if cell.get("error") else "")


def _mean_text(cell) -> str:
    if not cell:
        return "not run"
    if cell.get("score") is None:
        return "error: " + _md(cell["error"])
    return f"{cell['score']['mean']:.3f}" + (" (error after)" if cell.get("error") else "")


def _share_text(cell) -> str:
    """The ranges' share of the fit's epsilon, and a classifier's label selection's."""
    spend = (cell or {}).get("preprocessing") or {}
    share = spend.get("share")
    if share is None:
        return "n/a"
    labels = (spend.get("parts") or {}).get(LABEL_PART)
    total = spend.get("total_epsilon")
    if labels is None or not total:
        return f"{share:.0%}"
    return f"{share:.0%} + {labels / total:.0%} labels"


def _time_text(cell) -> str:
    t = (cell or {}).get("seconds")
    return "n/a" if t is None else f"{t['mean']:.2f} s (max {t['max']:.2f})"


def verdict(entry) -> str:
    """PASS / FAIL of the defaults at the target epsilon: mean score and every fit time."""
    cell = _get(entry, "defaults", TARGET_EPSILON)
    if not cell or cell.get("score") is None or cell.get("error"):
        return "FAIL (leak)" if cell and cell.get("leak") else "FAIL (error)"
    misses = []
    if cell["score"]["mean"] < entry["target"]:
        misses.append("score")
    times = [
        t
        for c in entry["methods"]["defaults"]["epsilons"].values()
        for t in ((c.get("seconds") or {}).get("runs") or [])
    ]
    if max(times) >= TIME_LIMIT:
        misses.append("time")
    return "PASS" if not misses else f"FAIL ({', '.join(misses)})"


def table(results) -> str:
    protocol = results.get("protocol", {})
    runs = protocol.get("runs", RUNS)
    lines = [
        f"epsilon = {TARGET_EPSILON:g}, {runs} seed(s); scores on held-out data; fit time "
        "after a warm-up fit; target: mean score of the defaults and every default fit "
        f"< {TIME_LIMIT:g} s.",
        "",
        "| data (metric) | dpglm defaults, mean [min, max] | exact public bounds | "
        "non-private | baseline | auto's solver | preprocessing share | fit time | target | met |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for entry in results["problems"].values():
        if "target" not in entry:
            continue
        cell = _get(entry, "defaults", TARGET_EPSILON)
        lines.append(
            f"| {entry['label']} ({entry['metric']}) | {_spread_text(cell)} | "
            f"{_mean_text(_get(entry, 'public_bounds', TARGET_EPSILON))} | "
            f"{entry['non_private']:.3f} | {entry['baseline']:.3f} | "
            f"{(cell or {}).get('solver') or 'n/a'} | {_share_text(cell)} | {_time_text(cell)} | "
            f">= {entry['target']:.3g} | {verdict(entry)} |"
        )
    lines += [
        "",
        "| data | epsilon | defaults, mean [min, max] | public bounds | solver | prep. share "
        "| fit time |",
        "|---|---|---|---|---|---|---|",
    ]
    for entry in results["problems"].values():
        if "target" not in entry:
            continue
        epsilons = entry["methods"].get("defaults", {}).get("epsilons", {})
        for key, cell in sorted(epsilons.items(), key=lambda item: float(item[0])):
            lines.append(
                f"| {entry['label']} | {key} | {_spread_text(cell)} | "
                f"{_mean_text(_get(entry, 'public_bounds', float(key)))} | "
                f"{cell.get('solver') or 'n/a'} | {_share_text(cell)} | "
                f"{_time_text(cell).split(' (')[0]} |"
            )
    lines += version_lines(results)
    return "\n".join(lines)


SECTION = """## Private and accurate by default (`bench_defaults.py`)

The estimators with only `epsilon` and a seed set, fitted on raw data (the script scales
nothing), against the same with exact public ranges, scikit-learn's non-private fit and the
trivial baseline; privacy-leak warnings are errors. Regenerate with
`python benchmarks/bench_defaults.py --datasets DIR`, then `--table --readme`."""


# -- main ---------------------------------------------------------------------------


def main(argv=None) -> int:
    parser = dataset_arguments(__doc__.splitlines()[0], DATASETS)
    args = parser.parse_args(argv)
    path = results_path(RESULTS, args.quick)
    if args.table:
        return show_table("bench_defaults", table(load_results(path)), SECTION, args.readme)
    if args.datasets is None:
        parser.error("give --datasets DIR (or set DPGLM_DATASETS)")
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in DATASETS]
    if unknown:
        parser.error(f"unknown dataset(s) {', '.join(unknown)}; known: {', '.join(DATASETS)}")
    logging.getLogger("absl").setLevel(logging.ERROR)
    epsilons, runs = ((TARGET_EPSILON,), 1) if args.quick else (EPSILONS, RUNS)
    protocol = {
        "epsilons": list(epsilons),
        "runs": runs,
        "split_seed": SPLIT_SEED,
        "time_limit_seconds": TIME_LIMIT,
    }
    leaks = []
    for name in names:
        leaks += run_dataset(Path(args.datasets), name, epsilons, runs, path, protocol)
    return finish(path, names, table, leaks)


if __name__ == "__main__":
    sys.exit(main())
