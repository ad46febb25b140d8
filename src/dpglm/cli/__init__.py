"""The ``dpglm`` command: fit, use and compare private linear models from a shell.

Subcommands
-----------
``dpglm demo``
    Private logistic regression on a real dataset that ships with
    scikit-learn (breast cancer): DP-CD, DP-GCD and DP-SGD at several
    epsilons, a table of test accuracy, relative suboptimality, time and
    epsilon spent, and a privacy-utility figure (``dpglm-demo.png``) when
    matplotlib is installed (the ``plot`` extra).
``dpglm fit DATA --model M -o MODEL.json``
    Fit one private model on a CSV / LIBSVM / Parquet file and save it as
    JSON, optionally charging a budget ledger; ``--test-size F`` fits on part
    of the file and prints the held-out score beside a constant baseline. A
    file whose feature columns hold text is fitted as a raw table, its text
    columns one-hot encoded (``--categories``, ``--missing-values``).
``dpglm predict MODEL.json DATA``
    Predictions of a saved model, as CSV.
``dpglm score MODEL.json DATA``
    Accuracy or R² of a saved model on a data file, beside the baseline
    that always predicts the file's majority class or mean. Scores are
    computed without privacy: for the data owner, not for publication.
``dpglm compare DATA --model M``
    Privacy-utility curves of several solvers over a grid of epsilons
    (a PNG figure and a CSV file).
``dpglm report MODEL.json``
    The privacy report of a saved model.
``dpglm budget create|show LEDGER``
    Create a budget in an SQLite ledger, or show what it has spent.

Exit status: 0 on success, 1 on an error (one line on stderr,
``dpglm: error: ...``, naming the file, column or option at fault), 2 on a
usage error (wrong or missing options), 3 when the privacy guarantee does not
hold: ``fit`` wrote a model whose report says so (data used without privacy,
or ``--epsilon inf``), or ``compare`` printed an epsilon that is not a
guarantee; ``--accept-leak`` turns 3 into 0. Fits that take more than a
couple of seconds show a progress bar on stderr; ``--quiet`` hides it.

Modules
-------
This package holds :func:`main` and how errors and warnings reach the user;
the commands live in :mod:`~dpglm.cli.demo`, :mod:`~dpglm.cli.fitting`
(``fit``, ``predict``, ``score``, ``report``), :mod:`~dpglm.cli.compare` and
:mod:`~dpglm.cli.ledger` (``budget``); :mod:`~dpglm.cli.parser` and
:mod:`~dpglm.cli.argument_types` define the options;
:mod:`~dpglm.cli.experiments` runs solvers over epsilons,
:mod:`~dpglm.cli.tables` and :mod:`~dpglm.cli.text` format the output,
:mod:`~dpglm.cli.progress` draws the progress bar, :mod:`~dpglm.cli.models`
makes estimators from ``--model``, :mod:`~dpglm.cli.features` reads a
model's feature columns for ``predict`` and ``score``,
:mod:`~dpglm.cli.raw_tables` reads files with text columns as Arrow tables,
:mod:`~dpglm.cli.scoring` compares a model with a constant baseline and
:mod:`~dpglm.cli.outputs` checks output paths.

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

import contextlib
import os
import sys
import warnings

from dpglm.cli.demo import BREAST_CANCER_RANGES, scale_breast_cancer
from dpglm.cli.experiments import SolverSettings, held_out_score, run_grid, run_solver, split_rows
from dpglm.cli.features import read_features
from dpglm.cli.fitting import EXIT_NO_GUARANTEE
from dpglm.cli.ledger import ledger_datasets
from dpglm.cli.parser import build_parser, check_usage
from dpglm.cli.progress import Progress
from dpglm.cli.tables import format_table, write_trials
from dpglm.exceptions import DpglmError, PrivacyLeakWarning

__all__ = [
    "BREAST_CANCER_RANGES",
    "EXIT_NO_GUARANTEE",
    "PROGRESS_DELAY",
    "USER_ERRORS",
    "Progress",
    "SolverSettings",
    "build_parser",
    "format_table",
    "held_out_score",
    "ledger_datasets",
    "main",
    "read_features",
    "run_grid",
    "run_solver",
    "scale_breast_cancer",
    "split_rows",
    "write_trials",
]

#: errors caused by what the user asked for: one line on stderr and exit status 1
USER_ERRORS = (DpglmError, OSError, ValueError)

#: seconds a fit runs before the progress bar appears (:class:`Progress` reads it when
#: a bar is created)
PROGRESS_DELAY = 2.0


def main(argv=None) -> int:
    """Run the ``dpglm`` command; returns the exit status (0, 1, 2 or 3, see above).

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
        check_usage(parser, args)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 2)
    return _run(args)


def _run(args) -> int:
    """Run the parsed command: each warning shown once, an error as one line (status 1)."""
    with warnings.catch_warnings():
        warnings.showwarning = _WarningPrinter()
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
