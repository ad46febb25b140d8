"""The ``dpglm fit``, ``predict``, ``score`` and ``report`` commands: one saved model.

``fit`` fits a private model on a data file and saves it as JSON (charging a
budget ledger when asked; with ``--test-size``, on part of the file, scoring
the model on the rest); ``predict`` writes a saved model's predictions as CSV,
``score`` its accuracy or R² on a data file beside a constant baseline, and
``report`` prints its privacy report.

``fit`` exits with :data:`EXIT_NO_GUARANTEE` (3) when the model it wrote has no
guarantee (its report's ``guarantee`` is False: data used without privacy, or
``--epsilon inf``), unless ``--accept-leak`` is given.
"""

from __future__ import annotations

import csv
import io
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from dpglm.cli.features import is_libsvm_file, read_features
from dpglm.cli.ledger import open_budget
from dpglm.cli.models import (
    check_feature_bounds,
    describe_model,
    make_estimator,
    missing_markers,
    model_task,
    read_categories,
)
from dpglm.cli.outputs import check_output
from dpglm.cli.progress import Progress
from dpglm.cli.scoring import (
    PRIVACY_NOTE,
    baseline_warning,
    compare_classifier,
    compare_regressor,
    comparison_lines,
    held_out_split,
    majority_code,
)
from dpglm.cli.tables import csv_value
from dpglm.cli.text import format_duration, wrap_note
from dpglm.data.locations import preview
from dpglm.preprocessing.label_sets import LABEL_PART

#: the exit status of a command whose privacy guarantee does not hold (``--accept-leak``: 0)
EXIT_NO_GUARANTEE = 3


#: how the first line of ``fit`` names a fit of more than two classes
_MULTI_CLASS = {
    "multinomial": " (one multinomial model)",
    "ovr": " (one-vs-rest: one binary model per class)",
}


def cmd_fit(args):
    """``dpglm fit``: fit one model, save it, print the guarantee (and a held-out score)."""
    output = check_output(args.output)
    task = model_task(args.model)
    if args.workers is not None or args.cluster is not None:
        model, data, budget, seconds, bounds = _fit_on_cluster(args, task)
        test = comparison = None
    else:
        model, data, budget, seconds, bounds, test, comparison = _fit_in_memory(args, task)
    model.save(output)
    _print_fit(
        model, data, seconds=seconds, bounds=bounds, held_out=0 if test is None else len(test)
    )
    if comparison is not None:
        print(f"held-out score on the {len(test)} records not used for training:")
        for line in comparison_lines(comparison, "the training records"):
            print("  " + line)
        print("  " + wrap_note(PRIVACY_NOTE, indent="  "))
    if budget is not None:
        print(
            f"budget: dataset {budget.dataset!r} in {str(args.budget)!r} has spent epsilon "
            f"{budget.spent():.4g} of {budget.epsilon:g} (delta {budget.delta:g})"
        )
    print(f"model written to {str(output)!r}; `dpglm report {output}` shows the full report")
    report = model.privacy_report_
    if comparison is not None:
        _warn_below_baseline(comparison, private=not report.non_private)
    if report.guarantee or args.accept_leak:
        return 0
    why = (
        "it is not private (--epsilon inf)"
        if report.non_private
        else "the fit used the data without privacy (see the privacy leak above)"
    )
    print(
        f"dpglm: the model was written to {str(output)!r}, but its privacy guarantee does "
        f"NOT hold: {why}. Exit status {EXIT_NO_GUARANTEE}; --accept-leak accepts this "
        "(exit status 0).",
        file=sys.stderr,
    )
    return EXIT_NO_GUARANTEE


def _fit_in_memory(args, task):
    """Load ``args.data`` here and fit it (on part of it, with ``--test-size``).

    A file whose feature columns hold text (or fitted with ``--categories``)
    is read as a raw table, whose text columns the estimator one-hot encodes.
    """
    from dpglm.data import load
    from dpglm.exceptions import NonNumericColumnError

    # read first: a bad file of categories is refused before the data is read
    categories = read_categories(args.categories) if args.categories is not None else None
    if categories:
        return _fit_raw_table(args, task, categories)
    try:
        data = load(args.data, target=args.target, task=task, classes=args.classes)
    except NonNumericColumnError:
        if is_libsvm_file(args.data):
            raise
        return _fit_raw_table(args, task, categories)
    bounds = check_feature_bounds(args.feature_bounds, data.n_features, repr(args.data))
    budget = open_budget(args.budget, args.dataset) if args.budget else None
    model = make_estimator(args, budget=budget, feature_bounds=bounds)
    X = data.X.tocsr() if args.test_size is not None and hasattr(data.X, "tocsr") else data.X
    seconds, test, comparison = _fit_holding_out(args, task, model, data, X, _rows)
    if not is_libsvm_file(args.data):
        model.feature_names_in_ = np.asarray(data.feature_names, dtype=object)
    return model, data, budget, seconds, bounds, test, comparison


def _fit_raw_table(args, task, categories):
    """Fit a raw table: ``args.data`` read as an Arrow table, its text columns kept as text."""
    from dpglm.cli.raw_tables import read_raw_table

    markers = missing_markers(args.missing_values) if args.missing_values else None
    data = read_raw_table(
        args.data, target=args.target, task=task, classes=args.classes, missing_values=markers
    )
    _check_categories(categories, data, args.categories)
    bounds = args.feature_bounds
    if isinstance(bounds, list) and len(bounds) != len(data.numeric):
        raise ValueError(
            f"--feature-bounds has {len(bounds)} values; {data.shown} has "
            f"{len(data.numeric)} numeric feature columns (give one bound for all, or one per "
            "numeric column in the file's order; its text columns are one-hot encoded, each "
            "entry 0 or 1)"
        )
    budget = open_budget(args.budget, args.dataset) if args.budget else None
    model = make_estimator(args, budget=budget, feature_bounds=bounds)
    seconds, test, comparison = _fit_holding_out(
        args, task, model, data, data.features, lambda table, rows: table.take(rows)
    )
    return model, data, budget, seconds, bounds, test, comparison


def _rows(X, rows):
    """Rows ``rows`` of an array or a CSR matrix."""
    return X[rows]


def _fit_holding_out(args, task, model, data, X, take):
    """Fit ``model`` on the records of ``X`` (``--test-size`` of them held out) and compare it
    with the trivial baseline on those; ``take(X, rows)`` picks rows.

    Returns ``(seconds, test rows or None, comparison or None)``.
    """
    y, test = data.y, None
    X_all = X
    if args.test_size is not None:
        # from n and the seed only: which records are held out says nothing of their values
        train, test = held_out_split(data.n_samples, args.test_size, args.seed)
        X, y = take(X, train), y[train]
    seconds = _timed_fit(model, X, data.decode(y) if task == "classification" else y, args)
    comparison = None
    if test is not None:
        comparison = _held_out_comparison(model, data, y, take(X_all, test), data.y[test])
    return seconds, test, comparison


def _check_categories(categories, data, path):
    """Refuse ``--categories`` naming a column that is not a text feature column of the data."""
    from dpglm.data.locations import preview

    unknown = [name for name in categories or {} if name not in data.text]
    if unknown:
        columns = preview(list(data.text), limit=20) if data.text else "none"
        raise ValueError(
            f"--categories {str(path)!r} names {preview(unknown)}, not text feature "
            f"column(s) of {data.shown}; its text feature columns: {columns}"
        )


def _timed_fit(model, X, y, args):
    """Fit ``model`` under the progress bar; the seconds it took."""
    start = time.perf_counter()
    with Progress(f"fitting {type(model).__name__}", enabled=not args.quiet):
        model.fit(X, y)
    return time.perf_counter() - start


def _fit_on_cluster(args, task):
    """Fit ``args.data`` data-parallel on the workers of ``--workers`` or ``--cluster``."""
    from dpglm.cli.cluster import ShardedSource, cluster_client, sharded_rows
    from dpglm.distributed import ChunkLostError

    if args.test_size is not None:
        raise ValueError(
            "--test-size holds records out of a dataset loaded here; with --workers or "
            "--cluster the records stay on the workers: score the model on a held-out file "
            "with `dpglm score`"
        )
    if task == "classification" and args.classes is None and not math.isinf(args.epsilon):
        # the workers read each file's labels as they load it: no private selection there
        raise ValueError(
            "--workers and --cluster fit a classifier on the labels each worker reads with "
            "its file, which cannot be selected privately: give the public label set with "
            "--classes (or fit in this process, without --workers, to select it privately)"
        )
    budget = open_budget(args.budget, args.dataset) if args.budget else None
    with (
        cluster_client(args.workers, args.cluster) as client,
        sharded_rows(args, task, client) as rows,
    ):
        bounds = check_feature_bounds(args.feature_bounds, rows.n_features, repr(args.data))
        model = make_estimator(args, budget=budget, feature_bounds=bounds)
        start = time.perf_counter()
        try:
            with Progress(f"fitting {type(model).__name__}", enabled=not args.quiet):
                model.fit(rows)
        except ChunkLostError as err:
            raise ChunkLostError(
                f"{err}{_spent_line(budget)}", chunks=err.chunks, worker=err.worker,
                iteration=err.iteration, completed=err.completed,
            ) from err  # fmt: skip
        seconds = time.perf_counter() - start
        if rows.feature_names is not None and not is_libsvm_file(args.data):
            model.feature_names_in_ = np.asarray(rows.feature_names, dtype=object)
        data = ShardedSource(
            task, rows.n_samples, rows.n_features, repr(str(args.data)), args.target
        )
    return model, data, budget, seconds, bounds


def _spent_line(budget) -> str:
    """What the ledger holds after a fit that failed once charged."""
    if budget is None:
        return ""
    return (
        f"; the ledger's dataset {budget.dataset!r} has spent epsilon {budget.spent():.4g} of "
        f"{budget.epsilon:g}"
    )


def _held_out_comparison(model, data, y_train, X_test, y_test):
    """The fitted model and the training records' constant baseline, on the held-out rows."""
    predicted = model.predict(X_test)
    if data.task == "classification":
        return compare_classifier(
            y_test, data.labels.encode(predicted), majority_code(y_train), data.labels
        )
    return compare_regressor(y_test, predicted, float(np.mean(y_train)))


def _warn_below_baseline(comparison, *, private):
    """The loud line on stderr when the model does not beat the constant baseline."""
    warning = baseline_warning(comparison, private=private)
    if warning is not None:
        print(f"dpglm: {warning}", file=sys.stderr)


def _print_fit(model, data, *, seconds, bounds, held_out=0):
    """What was fitted, on what, how, and the first lines of its privacy report."""
    nonzero = int(np.count_nonzero(model.coef_))
    classes = ""
    if data.task == "classification":
        classes = f", classes {model.classes_.tolist()}"
        classes += _MULTI_CLASS.get(getattr(model, "multi_class_", None), "")
    records = (
        f"{data.n_samples - held_out} records ({held_out} more held out)"
        if held_out
        else f"{data.n_samples} records"
    )
    encoding = getattr(model, "encoding_", None)
    features = f"{data.n_features} features"
    if encoding is not None:
        features += (
            f" ({len(encoding.numeric)} numeric, {len(encoding.categorical)} text one-hot "
            f"encoded into {_one_hot_columns(model)} columns)"
        )
    print(
        f"{describe_model(model)} on {data.source}: {records}, {features}"
        + (f", target {data.target_name!r}" if data.target_name else "")
        + classes
    )
    where = model.privacy_report_.execution
    print(
        f"solver {model.solver_}, {model.n_iter_} updates, {format_duration(seconds)}"
        + (f", {where}" if where else "")
        + f"; {nonzero} of {np.size(model.coef_)} coefficients non-zero"
    )
    report = model.privacy_report_
    head = str(report).splitlines()
    print("privacy: " + head[0])
    if len(head) > 1 and head[1].startswith("WARNING"):
        print("  " + head[1])
        if isinstance(bounds, str) and bounds == "data":
            print("  leave out --feature-bounds data: the ranges are then estimated privately")
    n_train = data.n_samples - held_out
    # the share of the budget the selections left for the model (its ranges and training):
    # the label set's is taken first, the category sets' from the rest
    left = 1.0 - _label_share(model, n_train)
    if data.task == "classification" and LABEL_PART in report.parts:
        line = label_line(report, model.classes_, 1.0 - left)
        print("  " + wrap_note(line, indent="  "))
    if encoding is not None:
        print("  " + wrap_note(_category_summary(model, left), indent="  "))
    preprocessing = report.parts.get("preprocessing")
    if preprocessing is not None:
        from dpglm.estimators.preprocessing import preprocessing_share

        if encoding is None:
            share = left * preprocessing_share(n_train, data.n_features, left * model.epsilon)
        else:
            # the ranges of the numeric columns only, planned on what the selections left
            left *= 1.0 - _category_share(model)
            estimated = len(encoding.numeric) if bounds is None else 0
            share = left * preprocessing_share(n_train, max(estimated, 1), left * model.epsilon)
        print("  " + wrap_note(preprocessing_line(report, preprocessing, share), indent="  "))
    if data.task == "classification":
        line = one_vs_rest_line(report, model.classes_)
        if line is not None:
            print("  " + wrap_note(line, indent="  "))


def _label_share(model, n_train):
    """The share of the budget the label selection was planned with (0: none)."""
    if LABEL_PART not in model.privacy_report_.parts:
        return 0.0
    from dpglm.preprocessing.label_sets import label_share

    return label_share(n_train, model.epsilon, model.delta_)


def label_line(report, classes, share):
    """What selecting the label set cost, within the fit's epsilon.

    Examples
    --------
    >>> from dpglm.privacy.report import PrivacyReport
    >>> parts = {"label selection": 0.1, "training": 0.9}
    >>> report = PrivacyReport(1.0, 1e-9, "replace_one", "pld", parts=parts)
    >>> print(label_line(report, np.array(["no", "yes"]), 0.1))
    label selection: the label set ['no', 'yes'] took epsilon 0.1 of the 1 (on its own; 10% of the budget); public --classes cost nothing
    """  # noqa: E501
    return (
        f"label selection: the label set {preview(np.asarray(classes))} took epsilon "
        f"{report.parts[LABEL_PART]:.3g} of the {report.epsilon:.3g} (on its own; "
        f"{share:.0%} of the budget); public --classes cost nothing"
    )


def _one_hot_columns(model):
    """The number of one-hot columns of a model fitted on a raw table."""
    return len(model.encoded_feature_names_) - len(model.encoding_.numeric)


def _public_columns(model):
    """The text columns of a raw table's model whose values were public (``--categories``)."""
    return set(model.categories or {}) & set(model.encoding_.categorical)


def _category_share(model):
    """The share of the budget the category selection was planned with (0: none)."""
    from dpglm.estimators.tables import category_share

    text = model.encoding_.categorical
    if math.isinf(model.epsilon):
        return 0.0
    return category_share(len(_public_columns(model)), len(text))


def _category_summary(model, left=1.0):
    """:func:`category_line` of a model fitted on a raw table."""
    from dpglm.estimators.tables import CATEGORY_PART

    report = model.privacy_report_
    return category_line(
        report,
        report.parts.get(CATEGORY_PART),
        left * _category_share(model),
        n_text=len(model.encoding_.categorical),
        n_public=len(_public_columns(model)),
        n_one_hot=_one_hot_columns(model),
    )


def category_line(report, epsilon, share, *, n_text, n_public, n_one_hot):
    """What selecting the values of the text columns cost, within the fit's epsilon.

    Parameters
    ----------
    report : PrivacyReport
        The fit's report.
    epsilon : float or None
        Its ``"category selection"`` part, or None (no selection: every text
        column's values were public, or the fit is not private).
    share : float
        The share of the budget the selection was planned with.
    n_text, n_public, n_one_hot : int
        The text columns, those with public values (``--categories``), and
        the one-hot columns they were encoded into.

    Examples
    --------
    >>> from dpglm.privacy.report import PrivacyReport
    >>> parts = {"category selection": 0.1, "training": 0.9}
    >>> report = PrivacyReport(1.0, 1e-9, "replace_one", "pld", parts=parts)
    >>> print(category_line(report, 0.1, 0.1, n_text=8, n_public=0, n_one_hot=39))
    category selection: the values of the 8 text columns took epsilon 0.1 of the 1 (on their own; 10% of the budget), one-hot encoded into 39 columns; public --categories cost nothing
    >>> report = PrivacyReport(1.0, 1e-9, "replace_one", "pld", parts={"training": 1.0})
    >>> print(category_line(report, None, 0.0, n_text=2, n_public=2, n_one_hot=5))
    category selection: none, the values of the 2 text columns are public (--categories), one-hot encoded into 5 columns
    """  # noqa: E501
    encoded = f"one-hot encoded into {n_one_hot} columns"
    columns = f"the {n_text} text columns" if n_text != 1 else "the text column"
    if epsilon is None:
        if n_public == n_text:
            return (
                f"category selection: none, the values of {columns} are public "
                f"(--categories), {encoded}"
            )
        return (
            f"category selection: the values of {columns} were read from the data without "
            f"privacy (--epsilon inf), {encoded}"
        )
    public = f", {n_public} of them public (--categories)" if n_public else ""
    return (
        f"category selection: the values of {columns}{public} took epsilon "
        f"{epsilon:.3g} of the {report.epsilon:.3g} (on their own; {share:.0%} of the "
        f"budget), {encoded}; public --categories cost nothing"
    )


def one_vs_rest_line(report, classes):
    """The parts of a one-vs-rest fit's report, one per class, or None (no such parts).

    Each class's fit (and its own releases, e.g. a smoothness estimate) is a
    part of the report, whose epsilon is that part's on its own; the
    accountant composes them into the fit's epsilon.

    Examples
    --------
    >>> from dpglm.privacy.report import PrivacyReport
    >>> parts = {"preprocessing": 0.2, "class a": 0.45, "class b": 0.45, "class c": 0.45}
    >>> report = PrivacyReport(1.0, 1e-9, "replace_one", "pld", parts=parts)
    >>> print(one_vs_rest_line(report, ["a", "b", "c"]))
    one-vs-rest: 3 binary fits (each class against the rest), composed into the epsilon above; each class's fit, on its own: epsilon 0.45 (training)
    >>> parts = {"class 0": 0.4, "class 0 (smoothness estimation)": 0.1, "class 1": 0.5}
    >>> report = PrivacyReport(1.0, 1e-9, "replace_one", "pld", parts=parts)
    >>> print(one_vs_rest_line(report, [0, 1, 2]))
    one-vs-rest: 3 binary fits (each class against the rest), composed into the epsilon above; each class's fit, on its own: class 0: epsilon 0.4 (training), 0.1 (smoothness estimation); class 1: epsilon 0.5 (training); class 2: none
    >>> one_vs_rest_line(PrivacyReport(1.0, 1e-9, "replace_one", "pld"), [0, 1]) is None
    True
    """  # noqa: E501
    names = [f"class {label}" for label in np.asarray(classes).tolist()]
    spent = {name: [] for name in names}
    for part, epsilon in report.parts.items():
        # the longest class name the part is named after (labels may share a prefix)
        owners = [name for name in names if part == name or part.startswith(name + " (")]
        if owners:
            owner = max(owners, key=len)
            what = part[len(owner) :].strip()[1:-1] or "training"
            spent[owner].append(f"{epsilon:.3g} ({what})")
    if not any(spent.values()):
        return None
    shown = {
        name: ("epsilon " + ", ".join(parts)) if parts else "none" for name, parts in spent.items()
    }
    head = (
        f"one-vs-rest: {len(names)} binary fits (each class against the rest), composed into "
        "the epsilon above; "
    )
    head += "each class's fit, on its own: "
    if len(set(shown.values())) == 1:
        return head + shown[names[0]]
    return head + "; ".join(f"{name}: {text}" for name, text in shown.items())


def preprocessing_line(report, epsilon, share):
    """What the private ranges cost, within the fit's epsilon, and how to spend nothing on them.

    Examples
    --------
    >>> from dpglm.privacy.report import PrivacyReport
    >>> report = PrivacyReport(1.0, 1e-9, "replace_one", "pld", parts={"preprocessing": 0.09})
    >>> print(preprocessing_line(report, 0.09, 0.1))
    preprocessing: the private ranges of the features and target took epsilon 0.09 of the 1 (on their own; 10% of the budget), the rest trained the model; public --feature-bounds and --target-bounds cost nothing
    """  # noqa: E501
    labels = " ".join(m.label for m in report.mechanisms if m.part == "preprocessing")
    what = []
    if "per-column" in labels or not labels:
        what.append("features")
    if "target" in labels or not labels:
        what.append("target")
    public = (
        "--feature-bounds and --target-bounds cost"
        if "target" in what
        else ("--feature-bounds cost")
    )
    return (
        f"preprocessing: the private ranges of the {' and '.join(what)} took epsilon "
        f"{epsilon:.3g} of the {report.epsilon:.3g} (on their own; "
        f"{share:.0%} of the budget), the rest trained the model; public {public} nothing"
    )


def cmd_predict(args):
    """``dpglm predict``: predictions of a saved model on a data file, as CSV."""
    from dpglm.estimators import load_model

    model = load_model(args.model)
    encoding = getattr(model, "encoding_", None)
    if encoding is not None:
        from dpglm.cli.raw_tables import read_raw_columns

        # a raw table's model reads its columns by name, typed as it was fitted
        X = read_raw_columns(
            args.data, numeric=encoding.numeric, text=encoding.categorical
        ).features
        n_rows = X.num_rows
    else:
        names = getattr(model, "feature_names_in_", None)
        X = read_features(
            args.data,
            names=None if names is None else [str(n) for n in names],
            n_features=model.n_features_in_,
            target=args.target,
        )
        n_rows = X.shape[0]
    columns = _prediction_columns(model, X)
    output = check_output(args.output) if args.output else None
    text = _csv_text(columns)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text)
        print(f"{n_rows} predictions written to {str(output)!r} (columns: {', '.join(columns)})")
    return 0


def cmd_score(args):
    """``dpglm score``: a saved model's accuracy or R² on a data file, beside a baseline."""
    from sklearn.base import is_classifier

    from dpglm.cli.features import read_raw_scored, read_scored
    from dpglm.data.labels import ClassLabels
    from dpglm.estimators import load_model

    model = load_model(args.model)
    classifier = is_classifier(model)
    task = "classification" if classifier else "regression"
    classes = model.classes_ if classifier else None
    encoding = getattr(model, "encoding_", None)
    if encoding is not None:
        X, y, target = read_raw_scored(
            args.data,
            numeric=encoding.numeric,
            text=encoding.categorical,
            target=args.target,
            task=task,
            classes=classes,
        )
    else:
        names = getattr(model, "feature_names_in_", None)
        X, y, target = read_scored(
            args.data,
            names=None if names is None else [str(n) for n in names],
            n_features=model.n_features_in_,
            target=args.target,
            task=task,
            classes=classes,
        )
    with warnings.catch_warnings():
        # the columns were matched to the model's feature names by read_scored
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        predicted = model.predict(X)
    if classifier:
        labels = ClassLabels.of(model.classes_)
        comparison = compare_classifier(y, labels.encode(predicted), majority_code(y), labels)
    else:
        comparison = compare_regressor(y, predicted, float(np.mean(y)))
    print(
        f"{args.model}: {describe_model(model)}, solver {model.solver_}, scored on "
        f"{Path(args.data).name}: {len(y)} records, "
        + (f"target {target!r}" if target is not None else "the file's labels")
    )
    for line in comparison_lines(comparison, "the scored records themselves"):
        print("  " + line)
    print("  " + wrap_note(PRIVACY_NOTE, indent="  "))
    _warn_below_baseline(comparison, private=not model.privacy_report_.non_private)
    return 0


def _prediction_columns(model, X):
    """The output columns: prediction, then probability_<class> or decision.

    Two classes: the probability of the second class (logistic), or the one
    decision value (svm; positive for the second class). More: one column of
    each per class, ``probability_<class>`` (each row sums to 1) or
    ``decision_<class>``.
    """
    with warnings.catch_warnings():
        # the columns were matched to the model's feature names by read_features
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        columns = {"prediction": model.predict(X)}
        classes = getattr(model, "classes_", None)
        if hasattr(model, "predict_proba"):
            probabilities = model.predict_proba(X)
            shown = range(1, 2) if len(classes) == 2 else range(len(classes))
            for k in shown:
                columns[f"probability_{classes[k]}"] = probabilities[:, k]
        elif hasattr(model, "decision_function"):
            decision = model.decision_function(X)
            if decision.ndim == 1:
                columns["decision"] = decision
            else:
                for k, label in enumerate(classes):
                    columns[f"decision_{label}"] = decision[:, k]
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
