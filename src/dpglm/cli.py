"""The ``dpglm`` command: fit, use and compare private linear models from a shell.

Subcommands
-----------
``dpglm demo``
    Private logistic regression on a real dataset that ships with
    scikit-learn (breast cancer): DP-CD, DP-GCD and DP-SGD at several
    epsilons, a table of test accuracy, relative suboptimality, time and
    epsilon spent, and a privacy-utility figure (``dpglm-demo.png``).
``dpglm fit DATA --model M -o MODEL.json``
    Fit one private model on a CSV / LIBSVM / Parquet file and save it as
    JSON, optionally charging a budget ledger.
``dpglm predict MODEL.json DATA``
    Predictions of a saved model, as CSV.
``dpglm compare DATA --model M``
    Privacy-utility curves of several solvers over a grid of epsilons
    (a PNG figure and a CSV file).
``dpglm report MODEL.json``
    The privacy report of a saved model.
``dpglm budget create|show LEDGER``
    Create a budget in an SQLite ledger, or show what it has spent.

Exit status: 0 on success, 1 on an error (one line on stderr,
``dpglm: error: ...``, naming the file, column or option at fault), 2 on a
usage error (wrong or missing options). Fits that take more than a couple of
seconds show a progress bar on stderr; ``--quiet`` hides it.

Examples
--------
>>> import os, tempfile
>>> ledger = os.path.join(tempfile.mkdtemp(), "ledger.sqlite")
>>> main(["budget", "create", ledger, "--dataset", "census", "--epsilon", "2", "--delta", "1e-6"])
... # doctest: +ELLIPSIS
created the budget of dataset 'census' in .../ledger.sqlite: epsilon 2, delta 1e-06
0
>>> main(["budget", "show", ledger])  # doctest: +ELLIPSIS
ledger .../ledger.sqlite, dataset 'census': budget epsilon 2, delta 1e-06 (auto accountant)
  nothing spent yet
0
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import math
import os
import sqlite3
import sys
import textwrap
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpglm.exceptions import (
    DataError,
    DpglmError,
    LedgerError,
    PrivacyLeakWarning,
    ShapeMismatchError,
)

#: errors caused by what the user asked for: one line on stderr and exit status 1
USER_ERRORS = (DpglmError, OSError, ValueError)

#: seconds a fit runs before the progress bar appears
PROGRESS_DELAY = 2.0
#: seconds between two redraws of the progress bar
PROGRESS_INTERVAL = 0.2

SOLVERS = ("dp-cd", "dp-gcd", "dp-sgd")

#: command-line model name: (estimator class, task)
MODELS = {
    "linear": ("DPLinearRegression", "regression"),
    "ridge": ("DPRidge", "regression"),
    "lasso": ("DPLasso", "regression"),
    "elasticnet": ("DPElasticNet", "regression"),
    "logistic": ("DPLogisticRegression", "classification"),
    "svm": ("DPLinearSVC", "classification"),
}
PENALTIES = ("l2", "l1", "elasticnet", "none")

# -- the demo ---------------------------------------------------------------------------

DEMO_DATASET = "breast_cancer"
DEMO_EPSILONS = (0.5, 1.0, 2.0, math.inf)
DEMO_ALPHA = 0.01
DEMO_TEST_SIZE = 0.25
DEMO_REPEATS = 5

#: minimum and maximum of each breast-cancer feature, as published in the dataset's
#: documentation (``sklearn.datasets.load_breast_cancer().DESCR``, "Summary
#: Statistics"), in the column order of the data
BREAST_CANCER_RANGES = (
    (6.981, 28.11), (9.71, 39.28), (43.79, 188.5), (143.5, 2501.0), (0.053, 0.163),
    (0.019, 0.345), (0.0, 0.427), (0.0, 0.201), (0.106, 0.304), (0.05, 0.097),
    (0.112, 2.873), (0.36, 4.885), (0.757, 21.98), (6.802, 542.2), (0.002, 0.031),
    (0.002, 0.135), (0.0, 0.396), (0.0, 0.053), (0.008, 0.079), (0.001, 0.03),
    (7.93, 36.04), (12.02, 49.54), (50.41, 251.2), (185.2, 4254.0), (0.071, 0.223),
    (0.027, 1.058), (0.0, 1.252), (0.0, 0.291), (0.156, 0.664), (0.055, 0.208),
)  # fmt: skip


@dataclass(frozen=True)
class SolverSettings:
    """Hyperparameters of one solver in an experiment (``None``: the solver's default).

    ``passes`` is passes over the data for DP-CD and DP-SGD and greedy steps
    for DP-GCD (default :data:`dpglm.estimators.DEFAULT_PASSES`); ``step`` is
    the step-size factor of the coordinate solvers and the step size of DP-SGD.
    """

    passes: float | None = None
    clip: float = 1.0
    step: float | None = None
    batch_size: int = 256
    feature_bounds: object = None

    def describe(self, solver: str) -> str:
        """Short description, e.g. ``"20 passes, clip 1"``.

        Examples
        --------
        >>> SolverSettings(passes=10, step=0.5).describe("dp-gcd")
        '10 greedy steps, step 0.5, clip 1'
        """
        from dpglm.estimators import DEFAULT_PASSES

        passes = DEFAULT_PASSES[solver] if self.passes is None else self.passes
        parts = [f"{passes:g} greedy steps" if solver == "dp-gcd" else f"{passes:g} passes"]
        if solver == "dp-sgd":
            parts.append(f"batch {self.batch_size}")
        if self.step is not None:
            parts.append(f"step {self.step:g}")
        parts.append(f"clip {self.clip:g}")
        return ", ".join(parts)


#: the demo's hyperparameters: the same at every epsilon and run (chosen once, on this
#: dataset, which the demo's footer says)
DEMO_SETTINGS = {
    "dp-cd": SolverSettings(passes=20, clip=1.0, feature_bounds=1.0),
    "dp-gcd": SolverSettings(passes=10, clip=0.5, feature_bounds=1.0),
    "dp-sgd": SolverSettings(passes=5, clip=1.0, step=1.0, batch_size=64),
}


def scale_breast_cancer(X) -> np.ndarray:
    """Map each breast-cancer feature to [-1, 1] with its published range, clipping outliers.

    The ranges (:data:`BREAST_CANCER_RANGES`) come from the dataset's
    documentation, not from the records at hand; the published values are
    rounded, so the few records just outside them are clipped, one record at
    a time. After this transform ``|X_ij| <= 1`` holds by construction, so
    ``feature_bounds=1`` is a public bound.

    Examples
    --------
    >>> from dpglm.data import load_bundled
    >>> X = scale_breast_cancer(load_bundled("breast_cancer").X)
    >>> float(X.min()), float(X.max())
    (-1.0, 1.0)
    """
    low, high = np.array(BREAST_CANCER_RANGES, dtype=float).T
    scaled = 2.0 * (np.asarray(X, dtype=float) - low) / (high - low) - 1.0
    return np.asfortranarray(np.clip(scaled, -1.0, 1.0))


# -- progress bar -----------------------------------------------------------------------


class Progress:
    """A text progress bar on stderr that appears once the work has taken ``PROGRESS_DELAY`` s.

    With ``total`` it counts steps (:meth:`advance`); without, it shows the
    elapsed time. It redraws from a background thread, so that a long fit
    (whose numba kernels release the GIL) needs no callback.

    Parameters
    ----------
    label : str
    total : int, optional
    enabled : bool, default=True
        ``False`` (``--quiet``): draw nothing.
    stream : file, optional
        Default ``sys.stderr`` at creation.
    delay : float, optional
        Default :data:`PROGRESS_DELAY`.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> with Progress("fits", total=2, stream=out, delay=0.0) as bar:
    ...     bar.advance(2)
    >>> out.getvalue().strip().startswith("fits [########################] 2/2")
    True
    """

    width = 24

    def __init__(self, label, total=None, *, enabled=True, stream=None, delay=None):
        self.label = label
        self.total = total
        self.done = 0
        self.enabled = enabled
        self.stream = sys.stderr if stream is None else stream
        self.delay = PROGRESS_DELAY if delay is None else delay
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = None
        self._drawn = 0
        self._start = time.monotonic()

    def __enter__(self):
        self._start = time.monotonic()
        if self.enabled:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def advance(self, steps: int = 1) -> None:
        """Count ``steps`` more steps done."""
        self.done += steps

    def _run(self):
        while not self._stop.wait(PROGRESS_INTERVAL):
            if time.monotonic() - self._start >= self.delay:
                self._draw(final=False)

    def _draw(self, final):
        elapsed = time.monotonic() - self._start
        if self.total:
            filled = min(self.width, int(self.width * self.done / self.total))
            bar = "#" * filled + "-" * (self.width - filled)
            text = f"{self.label} [{bar}] {self.done}/{self.total}  {elapsed:.1f} s"
        elif final:
            text = f"{self.label} [{'#' * self.width}]  {elapsed:.1f} s"
        else:
            span = self.width - 3
            tick = int(elapsed / PROGRESS_INTERVAL) % (2 * span)
            at = tick if tick < span else 2 * span - tick
            bar = " " * at + "<=>" + " " * (span - at)
            text = f"{self.label} [{bar}]  {elapsed:.1f} s"
        with self._lock:
            self.stream.write("\r" + text.ljust(self._drawn))
            self.stream.flush()
            self._drawn = len(text)

    def __exit__(self, *exc_info):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            if exc_info[0] is None and time.monotonic() - self._start >= self.delay:
                self._draw(final=True)
            if self._drawn:
                self.stream.write("\n")
                self.stream.flush()
        return False


# -- experiments ------------------------------------------------------------------------


def run_solver(problem, solver, *, epsilon, delta, settings, random_state=None):
    """Fit ``problem`` with one private solver, as the estimators do.

    Unlike the estimators, ``epsilon=inf`` runs the same solver without noise
    or clipping (the estimators return the exact optimum instead).

    Returns
    -------
    dpglm.solvers.result.FitResult

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.problem import Problem
    >>> X = np.random.default_rng(0).uniform(-1, 1, (500, 2))
    >>> prob = Problem(X, X[:, 0], "squared", fit_intercept=True)
    >>> settings = SolverSettings(feature_bounds=1.0)
    >>> fit = run_solver(prob, "dp-cd", epsilon=1.0, delta=1e-6, settings=settings, random_state=0)
    >>> round(fit.report.epsilon, 2)
    1.0
    """
    from dpglm.estimators import DEFAULT_PASSES
    from dpglm.solvers.dp_cd import dp_cd
    from dpglm.solvers.dp_gcd import dp_gcd
    from dpglm.solvers.dp_sgd import dp_sgd

    options = {"epsilon": epsilon, "delta": delta, "clip": settings.clip}
    options["random_state"] = random_state
    if settings.step is not None:
        options["step"] = settings.step
    passes = DEFAULT_PASSES[solver] if settings.passes is None else settings.passes
    if solver == "dp-sgd":
        batch = min(settings.batch_size, problem.n_samples)
        return dp_sgd(problem, passes=passes, batch_size=batch, **options)
    options["feature_bounds"] = settings.feature_bounds
    if solver == "dp-cd":
        return dp_cd(problem, passes=passes, **options)
    if solver == "dp-gcd":
        return dp_gcd(problem, n_iter=max(1, round(passes)), **options)
    raise ValueError(f"unknown solver {solver!r}; choose from {', '.join(SOLVERS)}")


def held_out_score(task, coef, intercept, X, y) -> float:
    """Accuracy (classification, -1/+1 labels) or mean squared error (regression).

    Examples
    --------
    >>> import numpy as np
    >>> held_out_score("classification", np.array([1.0]), 0.0, np.array([[1.0], [-2.0]]), [1, 1])
    0.5
    """
    margins = np.asarray(X @ coef, dtype=float).ravel() + intercept
    y = np.asarray(y, dtype=float)
    if task == "classification":
        return float(np.mean(np.where(margins > 0, 1.0, -1.0) == y))
    return float(np.mean((margins - y) ** 2))


def metric_name(task: str) -> str:
    """``"test accuracy"`` or ``"test MSE"``."""
    return "test accuracy" if task == "classification" else "test MSE"


def run_grid(
    problem,
    X_test,
    y_test,
    task,
    *,
    solvers,
    epsilons,
    delta,
    settings,
    repeats,
    seed,
    progress=None,
):
    """Fit every solver at every epsilon ``repeats`` times; measure each fit.

    The test score and the relative suboptimality read the data without
    privacy: they measure the solvers, they are not private releases.

    Parameters
    ----------
    problem : dpglm.problem.Problem
        The training problem.
    X_test, y_test : held-out features and -1/+1 labels or targets.
    task : {"classification", "regression"}
    solvers : sequence of str
    epsilons : sequence of float
    delta : float
    settings : dict of str to SolverSettings
    repeats : int
    seed : int
        Run ``r`` draws its noise from seed ``1000 * seed + r``.
    progress : Progress, optional

    Returns
    -------
    trials : list of dict
        One row per fit: ``solver``, ``epsilon``, ``repeat``, ``metric_name``,
        ``metric``, ``relative_suboptimality``, ``seconds``, ``epsilon_spent``,
        ``delta``, ``guarantee``.
    reference : dict
        ``objective`` and ``metric`` of the non-private optimum.

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.problem import Problem
    >>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2))
    >>> y = np.where(X[:, 0] > 0, 1.0, -1.0)
    >>> prob = Problem(X, y, "logistic", "l2", fit_intercept=True)
    >>> trials, ref = run_grid(
    ...     prob,
    ...     X,
    ...     y,
    ...     "classification",
    ...     solvers=["dp-cd"],
    ...     epsilons=[1.0, float("inf")],
    ...     delta=1e-5,
    ...     settings={"dp-cd": SolverSettings(feature_bounds=1.0)},
    ...     repeats=2,
    ...     seed=0,
    ... )
    >>> len(trials), ref["metric"] > 0.9
    (4, True)
    """
    from dpglm.solvers.reference import solve_reference

    reference = solve_reference(problem)
    coef, intercept = problem.split(reference.theta)
    optimum = {
        "objective": reference.objective,
        "metric": held_out_score(task, coef, intercept, X_test, y_test),
    }
    if progress is not None:
        progress.advance()
    floor = max(abs(reference.objective), 1e-300)
    trials = []
    for solver in solvers:
        for epsilon in epsilons:
            for r in range(repeats):
                start = time.perf_counter()
                fit = run_solver(
                    problem,
                    solver,
                    epsilon=epsilon,
                    delta=delta,
                    settings=settings.get(solver, SolverSettings()),
                    random_state=1000 * seed + r,
                )
                seconds = time.perf_counter() - start
                gap = problem.objective(fit.theta) - reference.objective
                trials.append(
                    {
                        "solver": solver,
                        "epsilon": float(epsilon),
                        "repeat": r,
                        "metric_name": metric_name(task),
                        "metric": held_out_score(task, fit.coef, fit.intercept, X_test, y_test),
                        "relative_suboptimality": max(gap, 0.0) / floor,
                        "seconds": seconds,
                        "epsilon_spent": fit.report.epsilon,
                        "delta": delta,
                        "guarantee": fit.report.guarantee,
                    }
                )
                if progress is not None:
                    progress.advance()
    return trials, optimum


def split_rows(n: int, test_size: float, seed: int):
    """A random train / test split of ``range(n)`` (public randomness, not the data).

    Examples
    --------
    >>> train, test = split_rows(8, 0.25, seed=0)
    >>> len(train), len(test), sorted([*train, *test]) == list(range(8))
    (6, 2, True)
    """
    order = np.random.default_rng(seed).permutation(n)
    n_test = min(n - 1, max(1, round(test_size * n)))
    return np.sort(order[n_test:]), np.sort(order[:n_test])


def format_table(trials, *, reference=None) -> str:
    """The table ``demo`` and ``compare`` print: one line per solver and epsilon.

    Examples
    --------
    >>> rows = [
    ...     {
    ...         "solver": "dp-cd",
    ...         "epsilon": 1.0,
    ...         "metric_name": "test MSE",
    ...         "metric": 0.5,
    ...         "relative_suboptimality": 0.2,
    ...         "seconds": 0.01,
    ...         "epsilon_spent": 1.0,
    ...         "guarantee": True,
    ...     }
    ... ]
    >>> print(format_table(rows))
    solver  epsilon  test MSE  rel. subopt.  time/fit  epsilon spent
    dp-cd   1        0.5       0.2           10 ms     1
    """
    header = ["solver", "epsilon", trials[0]["metric_name"] if trials else "metric"]
    header += ["rel. subopt.", "time/fit", "epsilon spent"]
    groups: dict = {}
    for t in trials:
        groups.setdefault((t["solver"], float(t["epsilon"])), []).append(t)
    rows = []
    leaks = False
    for (solver, epsilon), cell in groups.items():
        metric = np.array([t["metric"] for t in cell], dtype=float)
        subopt = np.array([t["relative_suboptimality"] for t in cell], dtype=float)
        seconds = float(np.mean([t["seconds"] for t in cell]))
        spent = max(float(t["epsilon_spent"]) for t in cell)
        guarantee = all(bool(t["guarantee"]) for t in cell) or math.isinf(spent)
        leaks |= not guarantee
        if cell[0]["metric_name"] == metric_name("classification"):
            shown = f"{metric.mean():.3f}" + (f" ± {metric.std():.3f}" if metric.size > 1 else "")
        else:
            shown = f"{metric.mean():.3g}" + (f" ± {metric.std():.2g}" if metric.size > 1 else "")
        rows.append(
            [
                solver,
                _number(epsilon),
                shown,
                f"{subopt.mean():.3g}",
                _duration(seconds),
                ("inf (not private)" if math.isinf(spent) else f"{spent:.3g}")
                + ("" if guarantee else " *"),
            ]
        )
    widths = [max(len(str(r[k])) for r in [header, *rows]) for k in range(len(header))]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in [header, *rows]
    ]
    if reference is not None:
        lines.append(
            f"non-private optimum: {header[2]} {reference['metric']:.3g} "
            f"(training objective {reference['objective']:.4g}, certified reference solver)"
        )
    if leaks:
        lines.append(
            "* NOT a guarantee: the fit used statistics of the data without privacy "
            "(PrivacyLeakWarning; give public --feature-bounds)"
        )
    return "\n".join(lines)


def _runs(count: int) -> str:
    return f"{count} run" if count == 1 else f"{count} runs"


def _number(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:g}"


def _duration(seconds: float) -> str:
    if seconds < 1.0:
        return f"{seconds * 1000:.3g} ms"
    return f"{seconds:.3g} s"


def write_trials(trials, path) -> None:
    """Write experiment trials as CSV (the file ``dpglm compare`` writes).

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> write_trials([{"solver": "dp-cd", "epsilon": float("inf")}], out)
    >>> print(out.getvalue().strip())
    solver,epsilon
    dp-cd,inf
    """
    if not trials:
        return
    columns = list(trials[0])
    with contextlib.ExitStack() as stack:
        if isinstance(path, str | os.PathLike):
            out = stack.enter_context(open(path, "w", newline=""))
        else:
            out = path
        writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for trial in trials:
            writer.writerow({k: _csv_value(v) for k, v in trial.items()})


def _csv_value(value):
    if isinstance(value, float):
        return "inf" if math.isinf(value) else repr(value)
    return value


# -- warnings ---------------------------------------------------------------------------


class _WarningPrinter:
    """Show each distinct warning once, as ``dpglm: warning: ...`` (no source line)."""

    def __init__(self):
        self.seen = set()
        self.leaks = []

    def __call__(self, message, category, filename, lineno, file=None, line=None):
        text = str(message)
        if issubclass(category, PrivacyLeakWarning) and text not in self.leaks:
            self.leaks.append(text)
        if text in self.seen:
            return
        self.seen.add(text)
        kind = "privacy leak" if issubclass(category, PrivacyLeakWarning) else "warning"
        print(f"dpglm: {kind}: {text}", file=sys.stderr)


# -- reading data -----------------------------------------------------------------------


def _load_data(path, *, target, task):
    from dpglm.data import load

    return load(path, target=target, task=task)


def _select_columns(header, *, names, target, n_features, shown):
    """Indices of the feature columns of a file, by the model's feature names if any."""
    from dpglm.data.locations import preview

    if names is not None:
        position = {name: j for j, name in enumerate(header)}
        missing = [name for name in names if name not in position]
        if missing:
            raise DataError(
                f"{shown} has no column {missing[0]!r}, a feature of the model "
                f"({len(missing)} of its {len(names)} features are missing); "
                f"the file's columns: {preview(list(header), limit=20)}"
            )
        return [position[name] for name in names], list(names)
    columns = [j for j, name in enumerate(header) if name != target]
    if len(columns) != n_features:
        raise ShapeMismatchError(
            f"{shown} has {len(columns)} feature columns"
            + (f" (all but --target {target!r})" if target is not None else "")
            + f"; the model has {n_features} features and records no feature names, so "
            "every column but --target is a feature"
        )
    return columns, [header[j] for j in columns]


def read_features(path, *, names=None, n_features, target=None) -> np.ndarray:
    """The feature matrix of a data file, for a model's predictions.

    CSV and Parquet: the columns named ``names`` (the model's feature names),
    in that order, whatever else the file holds (the target, identifiers);
    without names, every column but ``target``. LIBSVM: the features by
    index, the labels ignored.

    Raises
    ------
    DataError
        A feature column is missing or not numeric, or the width differs
        from ``n_features``; the message names the file and column.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "new.csv")
    >>> _ = open(path, "w").write("id,b,a\\nx,1,2\\ny,3,4\\n")
    >>> read_features(path, names=["a", "b"], n_features=2)
    array([[2., 1.],
           [4., 3.]])
    """
    from dpglm.data import load
    from dpglm.data.files import guess_format

    fmt = guess_format(path)
    shown = repr(os.fspath(path))
    if fmt == "svmlight":
        return load(path, n_features=n_features).X
    if fmt == "csv":
        return _csv_features(path, shown, names=names, n_features=n_features, target=target)
    return _parquet_features(path, shown, names=names, n_features=n_features, target=target)


def _csv_features(path, shown, *, names, n_features, target):
    from dpglm.data.columns import parse_text_column
    from dpglm.data.csv_reader import _split_records
    from dpglm.data.files import decode_text, read_bytes
    from dpglm.data.locations import feature_column, file_rows
    from dpglm.data.table import check_unique_names

    header, rows, lines = _split_records(decode_text(read_bytes(path), path), shown)
    check_unique_names(header, shown)
    columns, used = _select_columns(
        header, names=names, target=target, n_features=n_features, shown=shown
    )
    cells = np.array(rows, dtype=str).reshape(len(rows), len(header))
    describe_row = file_rows(lines, Path(path).name)
    X = np.empty((len(rows), len(columns)), dtype=np.float64, order="F")
    for k, j in enumerate(columns):
        X[:, k] = parse_text_column(
            cells[:, j], column=feature_column(used, k), describe_row=describe_row
        )
    return X


def _parquet_features(path, shown, *, names, n_features, target):
    from dpglm.data.files import read_bytes
    from dpglm.data.parquet import feature_matrix, open_table

    data = open_table(read_bytes(path), shown)
    columns, used = _select_columns(
        list(data.column_names), names=names, target=target, n_features=n_features, shown=shown
    )
    return feature_matrix(data, columns, used)


# -- argument types ---------------------------------------------------------------------


def _float(text):
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def positive_float(text):
    """A finite number > 0."""
    value = _float(text)
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def nonnegative_float(text):
    """A finite number >= 0."""
    value = _float(text)
    if not (value >= 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text!r}")
    return value


def epsilon_value(text):
    """A number > 0, or ``inf`` (no privacy)."""
    value = _float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0 (or inf for no privacy), got {text!r}")
    return value


def delta_value(text):
    """A number in [0, 1)."""
    value = _float(text)
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must lie in [0, 1), got {text!r}")
    return value


def fraction(text):
    """A number in (0, 1)."""
    value = _float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, got {text!r}")
    return value


def positive_int(text):
    """An integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def epsilon_list(text):
    """Comma-separated epsilons, e.g. ``0.1,0.5,1,inf``."""
    values = [epsilon_value(part.strip()) for part in text.split(",") if part.strip()]
    if not values:
        raise argparse.ArgumentTypeError("expected comma-separated epsilons, e.g. 0.5,1,inf")
    return sorted(set(values))


def solver_list(text):
    """Comma-separated solver names."""
    values = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [v for v in values if v not in SOLVERS]
    if unknown or not values:
        raise argparse.ArgumentTypeError(
            f"unknown solver {unknown[0] if unknown else text!r}; choose from "
            f"{', '.join(SOLVERS)} (comma-separated)"
        )
    return list(dict.fromkeys(values))


def feature_bounds(text):
    """One public bound on ``|X_ij|`` for every feature, or one per feature (comma-separated)."""
    values = [positive_float(part.strip()) for part in text.split(",")]
    return values[0] if len(values) == 1 else values


# -- commands ---------------------------------------------------------------------------


def _check_bounds(bounds, n_features, data):
    if isinstance(bounds, list) and len(bounds) != n_features:
        raise ValueError(
            f"--feature-bounds has {len(bounds)} values; {data} has {n_features} features "
            "(give one bound for all, or one per feature)"
        )
    return bounds


def _settings(args, n_features):
    bounds = _check_bounds(args.feature_bounds, n_features, repr(args.data))
    return SolverSettings(
        passes=args.passes,
        clip=args.clip,
        step=args.step,
        batch_size=args.batch_size,
        feature_bounds=bounds,
    )


def _estimator(args, *, budget=None, feature_bounds=None):
    from dpglm import estimators

    cls = getattr(estimators, MODELS[args.model][0])
    params = {
        "epsilon": getattr(args, "epsilon", 1.0),
        "delta": args.delta,
        "budget": budget,
        "solver": getattr(args, "solver", "auto"),
        "clip": args.clip,
        "passes": args.passes,
        "step": args.step,
        "batch_size": args.batch_size,
        "feature_bounds": feature_bounds,
        "random_state": args.seed,
    }
    if args.model in ("logistic", "svm"):
        params["penalty"] = args.penalty or "l2"
    if args.alpha is not None:
        params["alpha"] = args.alpha
    if args.l1_ratio is not None:
        params["l1_ratio"] = args.l1_ratio
    return cls(**params)


def _describe_model(estimator) -> str:
    params = estimator.get_params()
    parts = []
    for name in ("penalty", "alpha", "l1_ratio"):
        if name in params and (
            name != "l1_ratio"
            or "elastic" in type(estimator).__name__
            or params.get("penalty") == "elasticnet"
        ):
            parts.append(f"{name}={params[name]!r}")
    return f"{type(estimator).__name__}({', '.join(parts)})"


def _open_budget(path, dataset):
    from dpglm.privacy.budget import PrivacyBudget

    datasets = ledger_datasets(path)
    if dataset not in datasets:
        raise LedgerError(
            f"the budget ledger {str(path)!r} has no budget for dataset {dataset!r}"
            + (f" (it has: {', '.join(map(repr, datasets))})" if datasets else "")
            + f"; create one with `dpglm budget create {path} --dataset {dataset} "
            "--epsilon E --delta D`"
        )
    return PrivacyBudget.open(path, dataset=dataset)


def ledger_datasets(path) -> list:
    """The datasets a budget ledger holds a budget for, oldest first (read-only).

    Raises
    ------
    LedgerError
        The file does not exist or is not a dpglm budget ledger.

    Examples
    --------
    >>> import os, tempfile
    >>> from dpglm.privacy.budget import PrivacyBudget
    >>> path = os.path.join(tempfile.mkdtemp(), "ledger.sqlite")
    >>> _ = PrivacyBudget.open(path, dataset="census", epsilon=1.0, delta=1e-6)
    >>> ledger_datasets(path)
    ['census']
    """
    path = Path(path)
    if not path.is_file():
        raise LedgerError(
            f"the budget ledger {str(path)!r} does not exist"
            + (" (it is a directory)" if path.is_dir() else "")
        )
    uri = path.resolve().as_uri() + "?mode=ro"
    try:
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
            rows = conn.execute("SELECT dataset FROM budgets ORDER BY created, dataset").fetchall()
    except sqlite3.Error as err:
        raise LedgerError(f"{str(path)!r} is not a dpglm budget ledger ({err})") from None
    return [row[0] for row in rows]


def _check_output(path) -> Path:
    """Refuse an output path whose directory does not exist, before any budget is spent."""
    path = Path(path)
    parent = path.parent
    if not parent.is_dir():
        raise FileNotFoundError(
            f"cannot write {str(path)!r}: the directory {str(parent)!r} does not exist"
        )
    if path.is_dir():
        raise IsADirectoryError(f"cannot write {str(path)!r}: it is a directory")
    return path


def cmd_fit(args):
    """``dpglm fit``: fit one model, save it, print the guarantee."""
    from dpglm.data.files import guess_format

    output = _check_output(args.output)
    task = MODELS[args.model][1]
    data = _load_data(args.data, target=args.target, task=task)
    bounds = _check_bounds(args.feature_bounds, data.n_features, repr(args.data))
    budget = _open_budget(args.budget, args.dataset) if args.budget else None
    model = _estimator(args, budget=budget, feature_bounds=bounds)
    y = data.decode(data.y) if task == "classification" else data.y
    start = time.perf_counter()
    with Progress(f"fitting {type(model).__name__}", enabled=not args.quiet):
        model.fit(data.X, y)
    seconds = time.perf_counter() - start
    if guess_format(args.data) != "svmlight":
        model.feature_names_in_ = np.asarray(data.feature_names, dtype=object)
    model.save(output)
    report = model.privacy_report_
    nonzero = int(np.count_nonzero(model.coef_))
    print(
        f"{_describe_model(model)} on {data.source}: {data.n_samples} records, "
        f"{data.n_features} features"
        + (f", target {data.target_name!r}" if data.target_name else "")
        + (f", classes {model.classes_.tolist()}" if task == "classification" else "")
    )
    print(
        f"solver {model.solver_}, {model.n_iter_} updates, {_duration(seconds)}; "
        f"{nonzero} of {data.n_features} coefficients non-zero"
    )
    head = str(report).splitlines()
    print("privacy: " + head[0])
    if len(head) > 1 and head[1].startswith("WARNING"):
        print("  " + head[1])
        if bounds is None:
            print("  give public bounds on |X_ij| with --feature-bounds to avoid the leak")
    if budget is not None:
        print(
            f"budget: dataset {budget.dataset!r} in {str(args.budget)!r} has spent epsilon "
            f"{budget.spent():.4g} of {budget.epsilon:g} (delta {budget.delta:g})"
        )
    print(f"model written to {str(output)!r}; `dpglm report {output}` shows the full report")
    return 0


def cmd_predict(args):
    """``dpglm predict``: predictions of a saved model on a data file, as CSV."""
    from dpglm.estimators import load_model

    model = load_model(args.model)
    names = getattr(model, "feature_names_in_", None)
    X = read_features(
        args.data,
        names=None if names is None else [str(n) for n in names],
        n_features=model.n_features_in_,
        target=args.target,
    )
    with warnings.catch_warnings():
        # the columns were matched to the model's feature names above
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        columns = {"prediction": model.predict(X)}
        if hasattr(model, "predict_proba"):
            columns[f"probability_{model.classes_[1]}"] = model.predict_proba(X)[:, 1]
        elif hasattr(model, "decision_function"):
            columns["decision"] = model.decision_function(X)
    output = _check_output(args.output) if args.output else None
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(list(columns))
    for row in zip(*columns.values(), strict=True):
        writer.writerow([_csv_value(v.item() if hasattr(v, "item") else v) for v in row])
    if output is None:
        sys.stdout.write(buffer.getvalue())
    else:
        output.write_text(buffer.getvalue())
        print(
            f"{X.shape[0]} predictions written to {str(output)!r} (columns: {', '.join(columns)})"
        )
    return 0


def cmd_report(args):
    """``dpglm report``: the privacy report of a saved model."""
    from dpglm.estimators import load_model

    model = load_model(args.model)
    report = model.privacy_report_
    if args.json:
        print(report.to_json(indent=1))
        return 0
    print(
        f"{args.model}: {type(model).__name__}, solver {model.solver_}, "
        f"{model.n_features_in_} features, dpglm {report.library_version}"
    )
    print(report)
    return 0


def cmd_budget_create(args):
    """``dpglm budget create``: a budget for a dataset in an SQLite ledger."""
    from dpglm.privacy.budget import PrivacyBudget

    path = Path(args.ledger)
    if path.exists():
        ledger_datasets(path)  # refuse a file that is not a ledger before writing to it
    else:
        _check_output(path)
    budget = PrivacyBudget.open(path, dataset=args.dataset, epsilon=args.epsilon, delta=args.delta)
    charges = len(budget.charges)
    verb = "created" if charges == 0 else "found"
    print(
        f"{verb} the budget of dataset {args.dataset!r} in {path!s}: epsilon "
        f"{budget.epsilon:g}, delta {budget.delta:g}"
        + (f" ({charges} charges so far)" if charges else "")
    )
    return 0


def cmd_budget_show(args):
    """``dpglm budget show``: what a ledger's budgets have spent, per fit."""
    from dpglm.privacy.budget import PrivacyBudget

    datasets = ledger_datasets(args.ledger)
    if args.dataset is not None:
        if args.dataset not in datasets:
            raise LedgerError(
                f"the budget ledger {str(args.ledger)!r} has no budget for dataset "
                f"{args.dataset!r}"
                + (f"; it has: {', '.join(map(repr, datasets))}" if datasets else "")
            )
        datasets = [args.dataset]
    if not datasets:
        print(f"ledger {args.ledger}: no budget yet (create one with `dpglm budget create`)")
    for k, name in enumerate(datasets):
        if k:
            print()
        budget = PrivacyBudget.open(args.ledger, dataset=name)
        print(
            f"ledger {args.ledger}, dataset {name!r}: budget epsilon {budget.epsilon:g}, "
            f"delta {budget.delta:g} ({budget.accountant} accountant)"
        )
        charges = budget.charges
        if not charges:
            print("  nothing spent yet")
            continue
        spent = charges[-1].epsilon_after
        print(
            f"  spent epsilon {spent:.4g} over {len(charges)} fits, composed at delta "
            f"{budget.delta:g}; remaining {budget.epsilon - spent:.4g} (epsilons do not add up: "
            "a new fit may cost more or less than it would alone)"
        )
        rows = [["#", "time (UTC)", "epsilon after", "fit"]]
        for i, charge in enumerate(charges, 1):
            when = charge.created.replace("T", " ")[:19]
            rows.append([str(i), when, f"{charge.epsilon_after:.4g}", charge.label])
        widths = [max(len(r[j]) for r in rows) for j in range(3)]
        for row in rows:
            print(
                "  "
                + "  ".join(c.ljust(w) for c, w in zip(row[:3], widths, strict=True))
                + "  "
                + row[3]
            )
    return 0


def _require_figure(args):
    """Fail before any fit when the figure cannot be drawn."""
    if not args.no_plot:
        from dpglm.exceptions import MissingDependencyError
        from dpglm.plotting import require_matplotlib

        try:
            require_matplotlib()
        except MissingDependencyError as err:
            raise MissingDependencyError(
                f"dpglm {args.command} draws a figure: {err}; or pass --no-plot"
            ) from err


def cmd_demo(args):
    """``dpglm demo``: private logistic regression on breast cancer, table and figure."""
    _require_figure(args)
    output = None if args.no_plot else _check_output(args.output)
    from dpglm.data import load_bundled
    from dpglm.estimators import default_delta
    from dpglm.penalties import L2
    from dpglm.problem import Problem

    data = load_bundled(DEMO_DATASET)
    X = scale_breast_cancer(data.X)
    train, test = split_rows(data.n_samples, DEMO_TEST_SIZE, args.seed)
    problem = Problem(X[train], data.y[train], "logistic", L2(DEMO_ALPHA), fit_intercept=True)
    delta = default_delta(problem.n_samples)
    solvers = list(SOLVERS)
    total = 1 + len(solvers) * len(args.epsilons) * args.repeats
    with Progress("dpglm demo: fitting", total=total, enabled=not args.quiet) as progress:
        trials, reference = run_grid(
            problem,
            X[test],
            data.y[test],
            "classification",
            solvers=solvers,
            epsilons=args.epsilons,
            delta=delta,
            settings=DEMO_SETTINGS,
            repeats=args.repeats,
            seed=args.seed,
            progress=progress,
        )
    if output is not None:
        from dpglm.plotting import plot_privacy_utility

        plot_privacy_utility(
            trials,
            metric="test accuracy",
            reference=reference["metric"],
            title=f"Private logistic regression on breast cancer (n={problem.n_samples}, "
            f"delta={delta:.1g})",
            path=output,
        )
    intro = (
        f"Private logistic regression (L2 penalty, alpha={DEMO_ALPHA:g}) on the Wisconsin "
        f"breast cancer data (bundled with scikit-learn; {data.n_features} features, "
        f"malignant vs benign): {problem.n_samples} training and {len(test)} test records, "
        f"{_runs(args.repeats)} per line (mean ± std), delta = 1/n^2 = {delta:.2g}."
    )
    print(_wrap(intro, indent=""))
    print()
    print(format_table(trials, reference=reference))
    print()
    footer = [
        "Features: scaled to [-1, 1] with the minimum and maximum published in the "
        "dataset's documentation, then clipped record by record, so feature_bounds=1 is a "
        "public bound: no statistic of the records is computed without privacy (the "
        "published ranges are treated as public; they are not recomputed here).",
        "Hyperparameters, the same at every epsilon and run, chosen once for this demo "
        "(the choice looked at this dataset and is not part of the accounting): "
        + "; ".join(f"{s.upper()} {DEMO_SETTINGS[s].describe(s)}" for s in solvers)
        + ". epsilon inf: the same solver without noise or clipping.",
        "Test accuracy and relative suboptimality (of the training objective, against the "
        "certified optimum) are measured on the data without privacy: they evaluate the "
        "solvers; only the fitted models are private.",
        TIME_NOTE,
    ]
    for line in footer:
        print(_wrap(line))
    if output is not None:
        print(f"Figure written to {str(output)!r}.")
    return 0


TIME_NOTE = (
    "time/fit is the mean: the first fit at each epsilon also calibrates the noise (cached "
    "for the next ones) and, on a machine's first run, compiles the numba kernels."
)


def _wrap(text, width=92, indent="  "):
    return textwrap.fill(text, width=width, subsequent_indent=indent, break_on_hyphens=False)


def cmd_compare(args):
    """``dpglm compare``: privacy-utility curves of several solvers on a data file."""
    _require_figure(args)
    prefix = str(args.output)
    for suffix in (".png", ".csv"):
        if prefix.endswith(suffix):
            prefix = prefix[: -len(suffix)]
    png, table = _check_output(prefix + ".png"), _check_output(prefix + ".csv")
    from dpglm.estimators import default_delta
    from dpglm.problem import Problem

    task = MODELS[args.model][1]
    data = _load_data(args.data, target=args.target, task=task)
    settings = _settings(args, data.n_features)
    model = _estimator(args, feature_bounds=settings.feature_bounds)
    train, test = split_rows(data.n_samples, args.test_size, args.seed)
    X = data.X.tocsr() if hasattr(data.X, "tocsr") else data.X
    # the estimator's datafit and penalty, so that compare fits what `dpglm fit` fits
    problem = Problem(
        X[train], data.y[train], model._datafit(), model._penalty(), fit_intercept=True
    )
    delta = default_delta(problem.n_samples) if args.delta is None else args.delta
    total = 1 + len(args.solvers) * len(args.epsilons) * args.repeats
    with Progress("dpglm compare: fitting", total=total, enabled=not args.quiet) as progress:
        trials, reference = run_grid(
            problem,
            X[test],
            data.y[test],
            task,
            solvers=args.solvers,
            epsilons=args.epsilons,
            delta=delta,
            settings=dict.fromkeys(args.solvers, settings),
            repeats=args.repeats,
            seed=args.seed,
            progress=progress,
        )
    write_trials(trials, table)
    written = [repr(str(table))]
    if not args.no_plot:
        from dpglm.plotting import plot_privacy_utility

        plot_privacy_utility(
            trials,
            metric=metric_name(task),
            log_metric=task == "regression",
            reference=reference["metric"],
            title=f"{_describe_model(model)} on {data.source}",
            path=png,
        )
        written.insert(0, repr(str(png)))
    intro = (
        f"{_describe_model(model)} on {data.source}: {problem.n_samples} training and "
        f"{len(test)} test records, {data.n_features} features, {_runs(args.repeats)} per "
        f"line (mean ± std), delta {delta:.3g}."
    )
    print(_wrap(intro, indent=""))
    print()
    print(format_table(trials, reference=reference))
    print()
    notes = [
        "Hyperparameters: "
        + "; ".join(f"{s.upper()} {settings.describe(s)}" for s in args.solvers)
        + ". epsilon inf: the same solver without noise or clipping.",
        (
            "Features: public bounds from --feature-bounds."
            if settings.feature_bounds is not None
            else "Features: no --feature-bounds, so DP-CD and DP-GCD compute their smoothness "
            "constants from the data (PrivacyLeakWarning): their epsilons are not guarantees."
        ),
        "Scores are measured on the data without privacy: compare evaluates solvers (on "
        "public or synthetic data); its numbers are not private releases.",
        TIME_NOTE,
    ]
    for line in notes:
        print(_wrap(line))
    print(f"Curves written to {' and '.join(written)}.")
    return 0


# -- the parser -------------------------------------------------------------------------


class _Formatter(argparse.HelpFormatter):
    """Shows an option's default when it has one worth showing."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if action.option_strings and not (
            default is None or default is False or default == argparse.SUPPRESS
        ):
            if isinstance(default, list):
                default = ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in default)
            text += f" (default: {default})".replace("%", "%%")
        return text


def _add_model_options(parser, *, epsilon=True):
    model = parser.add_argument_group("model")
    model.add_argument(
        "--target",
        metavar="COL",
        help="target column of a CSV / Parquet file "
        "(default: the last column; LIBSVM files carry their labels)",
    )
    model.add_argument("--model", required=True, choices=list(MODELS), help="the estimator")
    model.add_argument(
        "--penalty", choices=PENALTIES, help="penalty of logistic and svm (default: l2)"
    )
    model.add_argument(
        "--alpha",
        type=nonnegative_float,
        metavar="A",
        help="penalty strength (estimator default when omitted)",
    )
    model.add_argument(
        "--l1-ratio",
        type=fraction,
        metavar="R",
        help="elastic-net mixing (model elasticnet or --penalty elasticnet)",
    )
    privacy = parser.add_argument_group("privacy")
    if epsilon:
        privacy.add_argument(
            "--epsilon",
            type=epsilon_value,
            default=1.0,
            metavar="E",
            help="privacy of the fit (inf: not private)",
        )
    privacy.add_argument(
        "--delta",
        type=delta_value,
        metavar="D",
        help="default 1/n^2 from the number of training records",
    )
    privacy.add_argument(
        "--feature-bounds",
        type=feature_bounds,
        metavar="B",
        help="public bound(s) on |X_ij|: one number, or one per feature (comma-separated); "
        "without it DP-CD and DP-GCD read smoothness constants from the data (privacy leak)",
    )
    solver = parser.add_argument_group("solver")
    solver.add_argument(
        "--clip", type=positive_float, default=1.0, metavar="C", help="clipping threshold"
    )
    solver.add_argument(
        "--passes",
        type=positive_float,
        metavar="P",
        help="passes over the data (DP-CD, DP-SGD) or greedy steps (DP-GCD)",
    )
    solver.add_argument(
        "--step",
        type=positive_float,
        metavar="S",
        help="step-size factor (DP-CD, DP-GCD) or step size (DP-SGD)",
    )
    solver.add_argument(
        "--batch-size",
        type=positive_int,
        default=256,
        metavar="N",
        help="expected batch size of DP-SGD",
    )
    solver.add_argument("--seed", type=int, metavar="S", help="seed of the noise (and split)")
    return privacy, solver


def _quiet(parser):
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def build_parser() -> argparse.ArgumentParser:
    """The ``dpglm`` argument parser.

    Examples
    --------
    >>> args = build_parser().parse_args(["report", "model.json"])
    >>> args.command, args.model
    ('report', 'model.json')
    """
    from dpglm import __version__

    parser = argparse.ArgumentParser(
        prog="dpglm",
        description="Differentially private linear models from the command line.",
        epilog="Run `dpglm COMMAND --help` for the options of a command. Exit status: 0 "
        "success, 1 error, 2 usage error.",
    )
    parser.add_argument("--version", action="version", version=f"dpglm {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = commands.add_parser(
        "demo",
        formatter_class=_Formatter,
        help="private models on a bundled real dataset: table and privacy-utility figure",
        description="Private logistic regression on the Wisconsin breast cancer data (bundled "
        "with scikit-learn): DP-CD, DP-GCD and DP-SGD at several epsilons. Prints test "
        "accuracy, relative suboptimality, time per fit and epsilon spent, and writes a "
        "privacy-utility figure.",
    )
    demo.add_argument("-o", "--output", default="dpglm-demo.png", metavar="PNG", help="the figure")
    demo.add_argument(
        "--epsilons",
        type=epsilon_list,
        metavar="LIST",
        default=list(DEMO_EPSILONS),
        help="comma-separated epsilons",
    )
    demo.add_argument(
        "--repeats",
        type=positive_int,
        default=DEMO_REPEATS,
        metavar="N",
        help="fits per solver and epsilon",
    )
    demo.add_argument("--seed", type=int, default=0, help="seed of the split and the noise")
    demo.add_argument("--no-plot", action="store_true", help="print the table only")
    _quiet(demo)
    demo.set_defaults(run=cmd_demo)

    fit = commands.add_parser(
        "fit",
        formatter_class=_Formatter,
        help="fit a private model on a data file and save it as JSON",
        description="Fit a private model on DATA (CSV, CSV.gz, LIBSVM or Parquet) and write "
        "it as JSON. Classification models (logistic, svm) need a target with two labels.",
    )
    fit.add_argument("data", metavar="DATA", help="the training data")
    fit.add_argument(
        "-o", "--output", required=True, metavar="MODEL.json", help="where to write the model"
    )
    _, solver = _add_model_options(fit)
    solver.add_argument("--solver", choices=("auto", *SOLVERS), default="auto")
    ledger = fit.add_argument_group("budget ledger")
    ledger.add_argument(
        "--budget",
        metavar="LEDGER",
        help="charge the fit to this ledger (see `dpglm budget create`)",
    )
    ledger.add_argument("--dataset", metavar="NAME", help="the ledger's dataset to charge")
    _quiet(fit)
    fit.set_defaults(run=cmd_fit)

    predict = commands.add_parser(
        "predict",
        formatter_class=_Formatter,
        help="predictions of a saved model, as CSV",
        description="Predict with a saved model. CSV / Parquet: the columns named as the "
        "model's features are used, whatever else DATA holds (e.g. the target); a model "
        "without feature names uses every column but --target. LIBSVM: features by index. "
        "Output columns: prediction, then probability_<class> (logistic) or decision "
        "(svm).",
    )
    predict.add_argument("model", metavar="MODEL.json")
    predict.add_argument("data", metavar="DATA")
    predict.add_argument("-o", "--output", metavar="CSV", help="default: standard output")
    predict.add_argument(
        "--target", metavar="COL", help="a column to ignore, for models without feature names"
    )
    predict.set_defaults(run=cmd_predict)

    compare = commands.add_parser(
        "compare",
        formatter_class=_Formatter,
        help="privacy-utility curves of several solvers over a grid of epsilons",
        description="Fit each solver at each epsilon on a training split of DATA and measure "
        "the test score and the relative suboptimality of the training objective. Writes "
        "PREFIX.png and PREFIX.csv (one row per fit).",
    )
    compare.add_argument("data", metavar="DATA")
    compare.add_argument(
        "-o",
        "--output",
        default="dpglm-compare",
        metavar="PREFIX",
        help="writes PREFIX.png and PREFIX.csv",
    )
    _, solver = _add_model_options(compare, epsilon=False)
    solver.add_argument(
        "--solvers",
        type=solver_list,
        default=list(SOLVERS),
        metavar="LIST",
        help="comma-separated solvers",
    )
    compare.add_argument(
        "--epsilons",
        type=epsilon_list,
        default=[0.1, 0.5, 1.0, 2.0, math.inf],
        metavar="LIST",
        help="comma-separated epsilons",
    )
    compare.add_argument(
        "--repeats", type=positive_int, default=3, metavar="N", help="fits per solver and epsilon"
    )
    compare.add_argument(
        "--test-size",
        type=fraction,
        default=0.25,
        metavar="F",
        help="share of the records held out",
    )
    compare.add_argument("--no-plot", action="store_true", help="write the CSV file only")
    compare.set_defaults(seed=0)
    _quiet(compare)
    compare.set_defaults(run=cmd_compare)

    report = commands.add_parser(
        "report", help="the privacy report of a saved model", formatter_class=_Formatter
    )
    report.add_argument("model", metavar="MODEL.json")
    report.add_argument("--json", action="store_true", help="the report as JSON")
    report.set_defaults(run=cmd_report)

    budget = commands.add_parser("budget", help="privacy budget ledgers (SQLite)")
    actions = budget.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser(
        "create",
        formatter_class=_Formatter,
        help="create the budget of a dataset in a ledger",
        description="Create (or check) the total (epsilon, delta) of a dataset in an SQLite "
        "ledger; `dpglm fit --budget LEDGER --dataset NAME` then charges it, and refuses a "
        "fit that would exceed it. A ledger's budget cannot change.",
    )
    create.add_argument("ledger", metavar="LEDGER")
    create.add_argument("--dataset", required=True, metavar="NAME")
    create.add_argument("--epsilon", type=epsilon_value, required=True, metavar="E")
    create.add_argument("--delta", type=delta_value, required=True, metavar="D")
    create.set_defaults(run=cmd_budget_create)
    show = actions.add_parser(
        "show",
        formatter_class=_Formatter,
        help="what a ledger has spent, per fit",
        description="Each budget of the ledger (or only --dataset's): its total, what has "
        "been spent, and every charge (time, epsilon spent after it, what was fitted).",
    )
    show.add_argument("ledger", metavar="LEDGER")
    show.add_argument("--dataset", metavar="NAME")
    show.set_defaults(run=cmd_budget_show)

    for sub in (demo, fit, predict, compare, report, budget, create, show):
        sub.set_defaults(parser=sub)
    return parser


def _check_usage(args):
    """Option combinations argparse cannot express; a usage error (exit 2) names them."""
    parser = args.parser
    if args.command == "fit" and (args.budget is None) != (args.dataset is None):
        parser.error("--budget LEDGER and --dataset NAME go together")
    if args.command in ("fit", "compare"):
        if args.penalty is not None and args.model not in ("logistic", "svm"):
            parser.error(
                f"--penalty applies to --model logistic and svm; {args.model} has its own "
                "penalty (ridge: l2, lasso: l1, elasticnet: both, linear: none)"
            )
        if args.alpha is not None and args.model == "linear":
            parser.error("--alpha does not apply to --model linear (no penalty)")
        if args.l1_ratio is not None and not (
            args.model == "elasticnet" or args.penalty == "elasticnet"
        ):
            parser.error("--l1-ratio applies to --model elasticnet or --penalty elasticnet")


def main(argv=None) -> int:
    """Run the ``dpglm`` command; returns the exit status (0, 1 or 2).

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``dpglm`` (default ``sys.argv[1:]``).

    Examples
    --------
    >>> main(["--version"])  # doctest: +ELLIPSIS
    dpglm ...
    0
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_usage(sys.stderr)
            print(
                "dpglm: error: a command is required (demo, fit, predict, compare, report, "
                "budget)",
                file=sys.stderr,
            )
            return 2
        _check_usage(args)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 2)
    printer = _WarningPrinter()
    with warnings.catch_warnings():
        warnings.showwarning = printer
        try:
            return args.run(args)
        except BrokenPipeError:
            # the reader of standard output went away (e.g. `dpglm predict ... | head`)
            with contextlib.suppress(OSError):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            return 1
        except USER_ERRORS as err:
            print(f"dpglm: error: {err}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("dpglm: interrupted", file=sys.stderr)
            return 130
