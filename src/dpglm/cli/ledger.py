"""The ``dpglm budget create|show`` commands, and opening a ledger's budget for ``dpglm fit``.

A ledger is the SQLite file of :class:`dpglm.privacy.budget.PrivacyBudget`:
one budget per dataset and every charge made to it.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from dpglm.cli.outputs import check_output
from dpglm.exceptions import LedgerError


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


def open_budget(path, dataset):
    """The existing budget of ``dataset`` in the ledger at ``path``, to charge fits to.

    Parameters
    ----------
    path : str or os.PathLike
        The ledger (``dpglm fit --budget``).
    dataset : str
        The dataset whose budget is charged (``dpglm fit --dataset``).

    Returns
    -------
    dpglm.privacy.budget.PrivacyBudget

    Raises
    ------
    LedgerError
        The ledger does not exist, is not a ledger, or has no budget for
        ``dataset``; the message says how to create one.

    Examples
    --------
    >>> import os, tempfile
    >>> from dpglm.privacy.budget import PrivacyBudget
    >>> path = os.path.join(tempfile.mkdtemp(), "ledger.sqlite")
    >>> _ = PrivacyBudget.open(path, dataset="census", epsilon=1.0, delta=1e-6)
    >>> open_budget(path, "census").epsilon
    1.0
    """
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


def cmd_budget_create(args):
    """``dpglm budget create``: a budget for a dataset in an SQLite ledger."""
    from dpglm.privacy.budget import PrivacyBudget

    path = Path(args.ledger)
    if path.exists():
        ledger_datasets(path)  # refuse a file that is not a ledger before writing to it
    else:
        check_output(path)
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
    datasets = _datasets_to_show(args.ledger, args.dataset)
    if not datasets:
        print(f"ledger {args.ledger}: no budget yet (create one with `dpglm budget create`)")
    for k, name in enumerate(datasets):
        if k:
            print()
        _show_budget(args.ledger, name)
    return 0


def _datasets_to_show(ledger, dataset):
    """All the ledger's datasets, or only ``dataset`` (which must be one of them)."""
    datasets = ledger_datasets(ledger)
    if dataset is None:
        return datasets
    if dataset not in datasets:
        raise LedgerError(
            f"the budget ledger {str(ledger)!r} has no budget for dataset {dataset!r}"
            + (f"; it has: {', '.join(map(repr, datasets))}" if datasets else "")
        )
    return [dataset]


def _show_budget(ledger, name):
    """Print one dataset's budget, what it has spent and its charges."""
    from dpglm.privacy.budget import PrivacyBudget

    budget = PrivacyBudget.open(ledger, dataset=name)
    print(
        f"ledger {ledger}, dataset {name!r}: budget epsilon {budget.epsilon:g}, "
        f"delta {budget.delta:g} ({budget.accountant} accountant)"
    )
    charges = budget.charges
    if not charges:
        print("  nothing spent yet")
        return
    spent = charges[-1].epsilon_after
    print(
        f"  spent epsilon {spent:.4g} over {len(charges)} fits, composed at delta "
        f"{budget.delta:g}; remaining {budget.epsilon - spent:.4g} (epsilons do not add up: "
        "a new fit may cost more or less than it would alone)"
    )
    for line in _charge_lines(charges):
        print(line)


def _charge_lines(charges):
    """The table of charges: number, time, epsilon spent after it, what was fitted."""
    rows = [["#", "time (UTC)", "epsilon after", "fit"]]
    for i, charge in enumerate(charges, 1):
        when = charge.created.replace("T", " ")[:19]
        rows.append([str(i), when, f"{charge.epsilon_after:.4g}", charge.label])
    widths = [max(len(r[j]) for r in rows) for j in range(3)]
    return [
        "  " + "  ".join(c.ljust(w) for c, w in zip(row[:3], widths, strict=True)) + "  " + row[3]
        for row in rows
    ]
