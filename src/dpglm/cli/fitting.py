"""The ``dpglm fit``, ``dpglm predict`` and ``dpglm report`` commands: one saved model.

``fit`` fits a private model on a data file and saves it as JSON (charging a
budget ledger when asked), ``predict`` writes a saved model's predictions as
CSV, and ``report`` prints its privacy report.
"""

from __future__ import annotations

import csv
import io
import sys
import time
import warnings

import numpy as np

from dpglm.cli.features import read_features
from dpglm.cli.ledger import open_budget
from dpglm.cli.models import check_feature_bounds, describe_model, make_estimator, model_task
from dpglm.cli.outputs import check_output
from dpglm.cli.progress import Progress
from dpglm.cli.tables import csv_value
from dpglm.cli.text import format_duration


def cmd_fit(args):
    """``dpglm fit``: fit one model, save it, print the guarantee."""
    from dpglm.data import load
    from dpglm.data.files import guess_format

    output = check_output(args.output)
    task = model_task(args.model)
    data = load(args.data, target=args.target, task=task, classes=args.classes)
    bounds = check_feature_bounds(args.feature_bounds, data.n_features, repr(args.data))
    budget = open_budget(args.budget, args.dataset) if args.budget else None
    model = make_estimator(args, budget=budget, feature_bounds=bounds)
    y = data.decode(data.y) if task == "classification" else data.y
    start = time.perf_counter()
    with Progress(f"fitting {type(model).__name__}", enabled=not args.quiet):
        model.fit(data.X, y)
    seconds = time.perf_counter() - start
    if guess_format(args.data) != "svmlight":
        model.feature_names_in_ = np.asarray(data.feature_names, dtype=object)
    model.save(output)
    _print_fit(model, data, seconds=seconds, bounds=bounds)
    if budget is not None:
        print(
            f"budget: dataset {budget.dataset!r} in {str(args.budget)!r} has spent epsilon "
            f"{budget.spent():.4g} of {budget.epsilon:g} (delta {budget.delta:g})"
        )
    print(f"model written to {str(output)!r}; `dpglm report {output}` shows the full report")
    return 0


def _print_fit(model, data, *, seconds, bounds):
    """What was fitted, on what, how, and the first lines of its privacy report."""
    nonzero = int(np.count_nonzero(model.coef_))
    print(
        f"{describe_model(model)} on {data.source}: {data.n_samples} records, "
        f"{data.n_features} features"
        + (f", target {data.target_name!r}" if data.target_name else "")
        + (f", classes {model.classes_.tolist()}" if data.task == "classification" else "")
    )
    print(
        f"solver {model.solver_}, {model.n_iter_} updates, {format_duration(seconds)}; "
        f"{nonzero} of {data.n_features} coefficients non-zero"
    )
    head = str(model.privacy_report_).splitlines()
    print("privacy: " + head[0])
    if len(head) > 1 and head[1].startswith("WARNING"):
        print("  " + head[1])
        if bounds is None:
            print("  give public bounds on |X_ij| with --feature-bounds to avoid the leak")


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
    columns = _prediction_columns(model, X)
    output = check_output(args.output) if args.output else None
    text = _csv_text(columns)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text)
        print(
            f"{X.shape[0]} predictions written to {str(output)!r} (columns: {', '.join(columns)})"
        )
    return 0


def _prediction_columns(model, X):
    """The output columns: prediction, then probability_<class> or decision."""
    with warnings.catch_warnings():
        # the columns were matched to the model's feature names by read_features
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        columns = {"prediction": model.predict(X)}
        if hasattr(model, "predict_proba"):
            columns[f"probability_{model.classes_[1]}"] = model.predict_proba(X)[:, 1]
        elif hasattr(model, "decision_function"):
            columns["decision"] = model.decision_function(X)
    return columns


def _csv_text(columns):
    """Named columns of equal length as CSV text, header first."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(list(columns))
    for row in zip(*columns.values(), strict=True):
        writer.writerow([csv_value(v.item() if hasattr(v, "item") else v) for v in row])
    return buffer.getvalue()


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
