"""The ``dpglm demo`` command: private logistic regression on the breast cancer data.

DP-CD, DP-GCD and DP-SGD at several epsilons on the Wisconsin breast cancer
data bundled with scikit-learn, with features scaled by their *published*
ranges (:data:`BREAST_CANCER_RANGES`, :func:`scale_breast_cancer`) so that
``feature_bounds=1`` is a public bound; a table on stdout and, with
matplotlib (the ``plot`` extra), a privacy-utility figure. Without matplotlib
the demo still runs: it prints the table and says how to get the figure.
"""

from __future__ import annotations

import math

import numpy as np

from dpglm.cli.experiments import SOLVERS, SolverSettings, run_grid, split_rows
from dpglm.cli.outputs import check_output
from dpglm.cli.progress import Progress
from dpglm.cli.tables import format_table
from dpglm.cli.text import TIME_NOTE, count_runs, wrap_note

DEMO_DATASET = "breast_cancer"
DEMO_EPSILONS = (0.5, 1.0, 2.0, math.inf)
DEMO_ALPHA = 0.01
DEMO_TEST_SIZE = 0.25
DEMO_REPEATS = 5

#: the line printed in place of the figure's when matplotlib is not installed
NO_FIGURE = "No figure: it needs matplotlib, which `pip install 'dpglm[plot]'` installs."

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


def cmd_demo(args):
    """``dpglm demo``: private logistic regression on breast cancer, table and figure.

    The figure is drawn when matplotlib is installed; without it, the demo
    prints the table and :data:`NO_FIGURE`, and exits with status 0.
    """
    # the demo is the first command a new user runs: a missing extra costs the figure only
    draw = not args.no_plot and _can_draw()
    output = check_output(args.output) if draw else None
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
        _plot_demo(trials, reference, n_train=problem.n_samples, delta=delta, path=output)
    intro = (
        f"Private logistic regression (L2 penalty, alpha={DEMO_ALPHA:g}) on the Wisconsin "
        f"breast cancer data (bundled with scikit-learn; {data.n_features} features, "
        f"malignant vs benign): {problem.n_samples} training and {len(test)} test records, "
        f"{count_runs(args.repeats)} per line (mean ± std), default delta {delta:.2g}."
    )
    print(wrap_note(intro, indent=""))
    print()
    print(format_table(trials, reference=reference))
    print()
    for line in _demo_notes(solvers):
        print(wrap_note(line))
    if output is not None:
        print(f"Figure written to {str(output)!r}.")
    elif not args.no_plot:
        print(NO_FIGURE)
    return 0


def _can_draw() -> bool:
    """Whether matplotlib imports, so that the demo's figure can be drawn."""
    from dpglm.exceptions import MissingDependencyError
    from dpglm.plotting import require_matplotlib

    try:
        require_matplotlib()
    except MissingDependencyError:
        return False
    return True


def _plot_demo(trials, reference, *, n_train, delta, path):
    """The demo's privacy-utility figure: test accuracy against epsilon, per solver."""
    from dpglm.plotting import plot_privacy_utility

    plot_privacy_utility(
        trials,
        metric="test accuracy",
        reference=reference["metric"],
        title=f"Private logistic regression on breast cancer (n={n_train}, delta={delta:.1g})",
        path=path,
    )


def _demo_notes(solvers):
    """The paragraphs under the demo's table: features, hyperparameters, what is measured."""
    return [
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
