"""The ``dpglm`` argument parser: its commands, their options, and usage checks.

:func:`build_parser` defines every command and option (each command's
parser records the function that runs it as ``run``); :func:`check_usage`
refuses the option combinations argparse cannot express.
"""

from __future__ import annotations

import argparse

from dpglm.cli.argument_types import (
    class_labels,
    delta_value,
    epsilon_list,
    epsilon_value,
    feature_bounds_value,
    fraction,
    missing_value_list,
    nonnegative_float,
    positive_float,
    positive_int,
    solver_list,
    target_bounds_value,
)
from dpglm.cli.compare import cmd_compare
from dpglm.cli.demo import DEMO_EPSILONS, DEMO_REPEATS, cmd_demo
from dpglm.cli.experiments import FIT_SOLVERS, SOLVERS
from dpglm.cli.fitting import EXIT_NO_GUARANTEE, cmd_fit, cmd_predict, cmd_report, cmd_score
from dpglm.cli.ledger import cmd_budget_create, cmd_budget_show
from dpglm.cli.models import MODELS, PENALTIES

#: the epsilons ``dpglm compare`` runs by default
COMPARE_EPSILONS = (0.1, 0.5, 1.0, 2.0, float("inf"))


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


def build_parser() -> argparse.ArgumentParser:
    """The ``dpglm`` argument parser.

    Examples
    --------
    >>> args = build_parser().parse_args(["report", "model.json"])
    >>> args.command, args.model
    ('report', 'model.json')
    """
    from dpglm._version import __version__

    parser = argparse.ArgumentParser(
        prog="dpglm",
        description="Differentially private linear models from the command line.",
        epilog="Run `dpglm COMMAND --help` for the options of a command. Exit status: 0 "
        f"success, 1 error, 2 usage error, {EXIT_NO_GUARANTEE} the privacy guarantee does not "
        "hold: `fit` wrote a model that used the data without privacy or is not private "
        "(--epsilon inf), or `compare` printed a private epsilon that is not a guarantee "
        "(rows marked *); --accept-leak makes it 0.",
    )
    parser.add_argument("--version", action="version", version=f"dpglm {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_demo(commands)
    _add_fit(commands)
    _add_predict(commands)
    _add_score(commands)
    _add_compare(commands)
    _add_report(commands)
    _add_budget(commands)
    return parser


def check_usage(parser, args) -> None:
    """Refuse option combinations argparse cannot express, as a usage error (exit 2).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser of :func:`build_parser`.
    args : argparse.Namespace
        What it parsed.

    Raises
    ------
    SystemExit
        With status 2, after argparse printed the command's usage and the
        error on stderr.

    Examples
    --------
    >>> parser = build_parser()
    >>> check_usage(parser, parser.parse_args(["report", "model.json"]))
    """
    if args.command is None:
        parser.error("a command is required (demo, fit, predict, score, compare, report, budget)")
    command = args.parser
    if args.command == "fit" and (args.budget is None) != (args.dataset is None):
        command.error("--budget LEDGER and --dataset NAME go together")
    if args.command == "fit" and args.out_of_core and args.workers is args.cluster is None:
        command.error("--out-of-core applies to a fit on a cluster: add --workers N or --cluster")
    if args.command in ("fit", "compare"):
        if args.penalty is not None and args.model not in ("logistic", "svm"):
            command.error(
                f"--penalty applies to --model logistic and svm; {args.model} has its own "
                "penalty (ridge: l2, lasso: l1, elasticnet: both, linear: none)"
            )
        if getattr(args, "classes", None) is not None and args.model not in ("logistic", "svm"):
            command.error("--classes applies to --model logistic and svm (classifiers)")
        if args.alpha is not None and args.model == "linear":
            command.error("--alpha does not apply to --model linear (no penalty)")
        if args.l1_ratio is not None and not (
            args.model == "elasticnet" or args.penalty == "elasticnet"
        ):
            command.error("--l1-ratio applies to --model elasticnet or --penalty elasticnet")


def _command(commands, name, run, **kwargs):
    """A command's parser, which records ``run`` and itself in the parsed arguments."""
    sub = commands.add_parser(name, **kwargs)
    sub.set_defaults(run=run, parser=sub)
    return sub


def _add_demo(commands):
    demo = _command(
        commands,
        "demo",
        cmd_demo,
        formatter_class=_Formatter,
        help="private models on a bundled real dataset: table and privacy-utility figure",
        description="Private logistic regression on the Wisconsin breast cancer data (bundled "
        "with scikit-learn): DP-CD, DP-GCD and DP-SGD at several epsilons. Prints test "
        "accuracy, relative suboptimality, time per fit and epsilon spent, and writes a "
        "privacy-utility figure if matplotlib is installed (pip install 'dpglm[plot]').",
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
    _add_quiet(demo)


def _add_fit(commands):
    fit = _command(
        commands,
        "fit",
        cmd_fit,
        formatter_class=_Formatter,
        help="fit a private model on a data file and save it as JSON",
        description="Fit a private model on DATA (CSV, CSV.gz, LIBSVM or Parquet) and write "
        "it as JSON. Classification models (logistic, svm) need a target with at least two "
        "labels, or only labels of the set given with --classes. More than two classes: "
        "logistic fits one multinomial model with dp-sgd, and one binary model per class "
        "against the rest with dp-cd or dp-gcd; svm fits one per class.",
    )
    fit.add_argument(
        "data",
        metavar="DATA",
        help="the training data: a file, or a directory or a quoted glob pattern (e.g. "
        "'parts/*.parquet') of CSV or Parquet files with the same columns",
    )
    fit.add_argument(
        "-o", "--output", required=True, metavar="MODEL.json", help="where to write the model"
    )
    _, solver = _add_model_options(fit, classes=True)
    solver.add_argument(
        "--solver",
        choices=("auto", *FIT_SOLVERS),
        default="auto",
        help="the estimator's solver (default: auto, chosen from the loss, the penalty and "
        "the data's shape)",
    )
    raw = fit.add_argument_group(
        "text columns: a CSV / Parquet file whose feature columns hold text (categories) is "
        "fitted as a raw table; each text column is one-hot encoded, on its public values "
        "(--categories) or on values selected privately with a tenth of the budget; an empty "
        "cell (Parquet: null) is a missing value, a level of its own"
    )
    raw.add_argument(
        "--missing-values",
        type=missing_value_list,
        action="append",
        metavar="STR",
        help="text that marks a missing value in the text columns (e.g. '?'), a level of its "
        "own; repeat the option or separate markers with commas",
    )
    raw.add_argument(
        "--categories",
        metavar="FILE.json",
        help="public values of text columns, e.g. from the dataset's documentation: a JSON "
        'object of column name -> list of values ({"sex": ["Female", "Male"]}); those '
        "columns cost no budget, a value outside its list goes to the column's <other> level",
    )
    ledger = fit.add_argument_group("budget ledger")
    ledger.add_argument(
        "--budget",
        metavar="LEDGER",
        help="charge the fit to this ledger (see `dpglm budget create`)",
    )
    ledger.add_argument("--dataset", metavar="NAME", help="the ledger's dataset to charge")
    check = fit.add_argument_group("is the model any good?")
    check.add_argument(
        "--test-size",
        type=fraction,
        metavar="F",
        help="hold out this share of the records (drawn from their number and --seed, never "
        "from their values), fit on the rest, and print the held-out accuracy or R² beside "
        "the baseline that always predicts the training records' majority class or mean; "
        "computed without privacy, for the data owner: not for publication, not saved in "
        "the model",
    )
    scale = fit.add_argument_group(
        "scale out (dask.distributed): each file of DATA is a row chunk, read and kept by a "
        "worker; the fit runs data-parallel on the chunks (solvers auto, dp-sgd, dp-gcd, dp-agd); "
        "a classifier there needs --classes, the public label set (the workers read the labels)"
    )
    where = scale.add_mutually_exclusive_group()
    where.add_argument(
        "--workers", type=positive_int, metavar="N", help="start a local cluster of N workers"
    )
    where.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="the scheduler of a running cluster (e.g. tcp://10.0.0.5:8786); its workers "
        "read the files at the same paths",
    )
    scale.add_argument(
        "--out-of-core",
        action="store_true",
        help="each worker keeps its chunks on its local disk and maps one at a time (data "
        "larger than the workers' memory)",
    )
    _add_accept_leak(fit, "the model is written either way")
    _add_quiet(fit)


def _add_predict(commands):
    predict = _command(
        commands,
        "predict",
        cmd_predict,
        formatter_class=_Formatter,
        help="predictions of a saved model, as CSV",
        description="Predict with a saved model. CSV / Parquet: the columns named as the "
        "model's features are used, whatever else DATA holds (e.g. the target); a model "
        "without feature names uses every column but --target. LIBSVM: features by index. "
        "Output columns: prediction, then probability_<class> (logistic: of the second class "
        "for two classes, of each class for more) or decision (svm; decision_<class> of each "
        "class for more than two).",
    )
    predict.add_argument("model", metavar="MODEL.json")
    predict.add_argument(
        "data", metavar="DATA", help="a file, or a directory or glob pattern of CSV/Parquet files"
    )
    predict.add_argument("-o", "--output", metavar="CSV", help="default: standard output")
    predict.add_argument(
        "--target", metavar="COL", help="a column to ignore, for models without feature names"
    )


def _add_score(commands):
    score = _command(
        commands,
        "score",
        cmd_score,
        formatter_class=_Formatter,
        help="accuracy or R² of a saved model on a data file, beside a constant baseline",
        description="Score a saved model on DATA: accuracy (logistic, svm) or R² (the "
        "regression models), beside the baseline that always predicts the majority class or "
        "the mean target of DATA itself. The features are read as `dpglm predict` reads "
        "them. The score is computed on the data without privacy: it is for the data owner, "
        "not for publication, and nothing is written to the model file. Warns on stderr when "
        "the model does not beat the baseline.",
    )
    score.add_argument("model", metavar="MODEL.json")
    score.add_argument(
        "data", metavar="DATA", help="a file, or a directory or glob pattern of CSV/Parquet files"
    )
    score.add_argument(
        "--target",
        metavar="COL",
        help="the target column of a CSV / Parquet file (default: the last column; LIBSVM "
        "files carry their labels)",
    )


def _add_compare(commands):
    compare = _command(
        commands,
        "compare",
        cmd_compare,
        formatter_class=_Formatter,
        help="privacy-utility curves of several solvers over a grid of epsilons",
        description="Fit each solver at each epsilon on a training split of DATA and measure "
        "the test score and the relative suboptimality of the training objective. Writes "
        "PREFIX.png and PREFIX.csv (one row per fit). Classification: two classes (for more, "
        "`dpglm fit --test-size` scores one fit).",
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
        default=list(COMPARE_EPSILONS),
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
    _add_accept_leak(compare, "the table and the files are written either way")
    compare.set_defaults(seed=0)
    _add_quiet(compare)


def _add_report(commands):
    report = _command(
        commands,
        "report",
        cmd_report,
        help="the privacy report of a saved model",
        formatter_class=_Formatter,
    )
    report.add_argument("model", metavar="MODEL.json")
    report.add_argument("--json", action="store_true", help="the report as JSON")


def _add_budget(commands):
    budget = commands.add_parser("budget", help="privacy budget ledgers (SQLite)")
    budget.set_defaults(parser=budget)
    actions = budget.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = _command(
        actions,
        "create",
        cmd_budget_create,
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
    show = _command(
        actions,
        "show",
        cmd_budget_show,
        formatter_class=_Formatter,
        help="what a ledger has spent, per fit",
        description="Each budget of the ledger (or only --dataset's): its total, what has "
        "been spent, and every charge (time, epsilon spent after it, what was fitted).",
    )
    show.add_argument("ledger", metavar="LEDGER")
    show.add_argument("--dataset", metavar="NAME")


def _add_model_options(parser, *, epsilon=True, classes=False):
    """The options of the model, its privacy and its solver (``fit`` and ``compare``)."""
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
    if classes:
        model.add_argument(
            "--classes",
            type=class_labels,
            metavar="A,B,...",
            help="the class labels of logistic and svm, two or more, public (fixed without the "
            "data): the target may lack some; default: read from the data, which releases "
            "them without privacy",
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
        help="default min(1/n^2, 1e-5) from the number of training records",
    )
    privacy.add_argument(
        "--feature-bounds",
        type=feature_bounds_value,
        metavar="B",
        help="public bound(s) on |X_ij|: one number, or one per feature (comma-separated); "
        "without it the features' ranges are estimated privately, with a share of the "
        "budget; 'data' reads them from the data (not private)",
    )
    privacy.add_argument(
        "--target-bounds",
        type=target_bounds_value,
        metavar="LOW,HIGH",
        help="public range of a regression's target; without it the range is estimated "
        "privately with the features'",
    )
    solver = parser.add_argument_group("solver")
    solver.add_argument(
        "--clip",
        type=positive_float,
        metavar="C",
        help="clipping threshold (default: the estimator's: 1, or DP-GCD's min(4, sqrt(d) / 2) "
        "for d coordinates, both 4 times larger for the squared hinge (DP-CD's too), DP-AGD's "
        "min(2 sqrt(d), 16) for the squared hinge, DP-SCD's min(1, alpha n / batch); 1 for "
        "every solver of 'compare'; AdaSSP and DP-Direction take none)",
    )
    solver.add_argument(
        "--passes",
        type=positive_float,
        metavar="P",
        help="passes over the data (DP-CD, DP-SGD, DP-SCD), greedy steps (DP-GCD; default "
        "from n and epsilon) or the most steps (DP-AGD)",
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
        metavar="N",
        help="expected batch size of DP-SGD and DP-SCD (default: the estimator's, "
        "min(256, n / 20); 256 for 'compare')",
    )
    solver.add_argument("--seed", type=int, metavar="S", help="seed of the noise (and split)")
    return privacy, solver


def _add_accept_leak(parser, written):
    parser.add_argument(
        "--accept-leak",
        action="store_true",
        help=f"exit with status 0, not {EXIT_NO_GUARANTEE}, when the privacy guarantee does "
        f"not hold ({written})",
    )


def _add_quiet(parser):
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
