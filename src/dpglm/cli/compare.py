"""The ``dpglm compare`` command: privacy-utility curves of several solvers on a data file.

Each solver is fitted at each epsilon on a training split of the data, on the
problem the ``--model`` estimator minimises; the test score and the relative
suboptimality of each fit go to a table on stdout, a CSV file and a figure.

As ``dpglm fit`` does, ``compare`` exits with status 3 when what it printed
is not a guarantee: a row at a finite epsilon marked ``*`` (a fit that used
the data without privacy), unless ``--accept-leak`` is given. The rows at
epsilon ``inf`` are the non-private reference asked for, and say so.
"""

from __future__ import annotations

import math
import sys

from dpglm.cli.experiments import SolverSettings, metric_name, run_grid, split_rows
from dpglm.cli.fitting import EXIT_NO_GUARANTEE
from dpglm.cli.models import check_feature_bounds, describe_model, make_estimator, model_task
from dpglm.cli.outputs import check_output, require_figure
from dpglm.cli.progress import Progress
from dpglm.cli.tables import format_table, write_trials
from dpglm.cli.text import TIME_NOTE, count_runs, wrap_note


def cmd_compare(args):
    """``dpglm compare``: privacy-utility curves of several solvers on a data file."""
    require_figure(args)
    prefix = _output_prefix(args.output)
    png, table = check_output(prefix + ".png"), check_output(prefix + ".csv")
    from dpglm.data import load
    from dpglm.estimators import default_delta

    task = model_task(args.model)
    data = load(args.data, target=args.target, task=task)
    _check_two_classes(data)
    settings = _solver_settings(args, data.n_features)
    model = make_estimator(args, feature_bounds=settings.feature_bounds)
    train, test = split_rows(data.n_samples, args.test_size, args.seed)
    X = data.X.tocsr() if hasattr(data.X, "tocsr") else data.X
    # the estimator's own problem, so that compare fits what `dpglm fit` fits
    problem = model.build_problem(X[train], data.y[train])
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
        _plot_curves(trials, reference, task, f"{describe_model(model)} on {data.source}", png)
        written.insert(0, repr(str(png)))
    intro = (
        f"{describe_model(model)} on {data.source}: {problem.n_samples} training and "
        f"{len(test)} test records, {data.n_features} features, {count_runs(args.repeats)} "
        f"per line (mean ± std), delta {delta:.3g}."
    )
    print(wrap_note(intro, indent=""))
    print()
    print(format_table(trials, reference=reference))
    print()
    for line in _compare_notes(args.solvers, settings):
        print(wrap_note(line))
    print(f"Curves written to {' and '.join(written)}.")
    leaky = sorted(
        {
            t["solver"]
            for t in trials
            if not t["guarantee"] and not math.isinf(float(t["epsilon_spent"]))
        }
    )
    if not leaky or args.accept_leak:
        return 0
    print(
        f"dpglm: the epsilons of {', '.join(leaky)} (rows marked *) are NOT guarantees: those "
        f"fits used the data without privacy. Exit status {EXIT_NO_GUARANTEE}; "
        "--accept-leak accepts this (exit status 0).",
        file=sys.stderr,
    )
    return EXIT_NO_GUARANTEE


def _check_two_classes(data):
    """Refuse a target of more than two classes: the experiments measure binary problems."""
    from dpglm.data.locations import preview
    from dpglm.exceptions import TargetError

    if data.task == "classification" and data.labels.n_classes > 2:
        target = f"target {data.target_name!r}" if data.target_name else "target"
        raise TargetError(
            f"dpglm compare takes two classes; the {target} of {data.source} has "
            f"{data.labels.n_classes}: {preview(data.classes)} (`dpglm fit --test-size` "
            "fits and scores a model of them)"
        )


def _plot_curves(trials, reference, task, title, path):
    """The privacy-utility figure: test score against epsilon, per solver."""
    from dpglm.plotting import plot_privacy_utility

    plot_privacy_utility(
        trials,
        metric=metric_name(task),
        log_metric=task == "regression",
        reference=reference["metric"],
        title=title,
        path=path,
    )


def _output_prefix(output) -> str:
    """``--output`` without a ``.png`` or ``.csv`` ending (compare writes both files)."""
    prefix = str(output)
    for suffix in (".png", ".csv"):
        if prefix.endswith(suffix):
            prefix = prefix[: -len(suffix)]
    return prefix


def _solver_settings(args, n_features):
    """The hyperparameters every solver runs with, from the options."""
    from dpglm.solvers.registry import DEFAULT_CLIP

    bounds = check_feature_bounds(args.feature_bounds, n_features, repr(args.data))
    return SolverSettings(
        passes=args.passes,
        clip=DEFAULT_CLIP if args.clip is None else args.clip,
        step=args.step,
        batch_size=256 if args.batch_size is None else args.batch_size,
        feature_bounds=bounds,
    )


def _compare_notes(solvers, settings):
    """The paragraphs under the table: hyperparameters, features, what the scores are."""
    return [
        "Hyperparameters: "
        + "; ".join(f"{s.upper()} {settings.describe(s)}" for s in solvers)
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
