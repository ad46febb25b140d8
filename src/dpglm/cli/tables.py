"""Tables the command writes: the results table of ``demo`` and ``compare``, and CSV files.

:func:`format_table` is the text table printed on stdout (one line per solver
and epsilon); :func:`write_trials` writes one CSV row per fit, and
:func:`csv_value` is how a number is written in a CSV cell (``predict`` writes
its predictions with it too).
"""

from __future__ import annotations

import contextlib
import csv
import math
import os

import numpy as np

from dpglm.cli.experiments import metric_name
from dpglm.cli.text import format_duration


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
        row, guarantee = _table_row(solver, epsilon, cell)
        rows.append(row)
        leaks |= not guarantee
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


def _table_row(solver, epsilon, cell):
    """The row of one solver and epsilon (the fits ``cell``), and whether all are guarantees."""
    metric = np.array([t["metric"] for t in cell], dtype=float)
    subopt = np.array([t["relative_suboptimality"] for t in cell], dtype=float)
    seconds = float(np.mean([t["seconds"] for t in cell]))
    spent = max(float(t["epsilon_spent"]) for t in cell)
    guarantee = all(bool(t["guarantee"]) for t in cell) or math.isinf(spent)
    if cell[0]["metric_name"] == metric_name("classification"):
        shown = f"{metric.mean():.3f}" + (f" ± {metric.std():.3f}" if metric.size > 1 else "")
    else:
        shown = f"{metric.mean():.3g}" + (f" ± {metric.std():.2g}" if metric.size > 1 else "")
    row = [
        solver,
        _number(epsilon),
        shown,
        f"{subopt.mean():.3g}",
        format_duration(seconds),
        ("inf (not private)" if math.isinf(spent) else f"{spent:.3g}")
        + ("" if guarantee else " *"),
    ]
    return row, guarantee


def _number(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:g}"


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
            writer.writerow({k: csv_value(v) for k, v in trial.items()})


def csv_value(value):
    """A value as the command writes it in a CSV cell: floats exactly (``repr``), ``inf``.

    Examples
    --------
    >>> csv_value(0.1), csv_value(float("inf")), csv_value("dp-cd")
    ('0.1', 'inf', 'dp-cd')
    """
    if isinstance(value, float):
        return "inf" if math.isinf(value) else repr(value)
    return value
