"""Figures of privacy-utility experiments.

The figures need matplotlib, an optional dependency (``pip install 'dpglm[plot]'``).
It is imported only when a figure is drawn; without it, :func:`require_matplotlib`
raises a :class:`~dpglm.exceptions.MissingDependencyError` that says how to
install it. The other functions here are plain NumPy and always work.

An experiment is a sequence of *trials*: mappings (e.g. the rows of the CSV file
that ``dpglm compare`` writes) with at least the keys

``"solver"``
    Name of the solver (one curve per solver).
``"epsilon"``
    Privacy of the fit (``inf``: the same solver without noise).
``"metric"``
    Test score of the fitted model (accuracy, mean squared error...).
``"relative_suboptimality"``
    ``(F(w) - F*) / F*`` on the training objective.

Examples
--------
>>> trials = [
...     {"solver": "dp-cd", "epsilon": 1.0, "metric": 0.8, "relative_suboptimality": 0.5},
...     {"solver": "dp-cd", "epsilon": 1.0, "metric": 0.9, "relative_suboptimality": 0.3},
...     {
...         "solver": "dp-cd",
...         "epsilon": float("inf"),
...         "metric": 0.95,
...         "relative_suboptimality": 0.1,
...     },
... ]
>>> curve = summarize(trials)["dp-cd"]
>>> curve.epsilons, curve.mean("metric"), curve.std("metric").round(3)
(array([ 1., inf]), array([0.85, 0.95]), array([0.05, 0.  ]))
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpglm.exceptions import MissingDependencyError

#: how far right of the largest finite epsilon (a factor, on the log axis) ``inf`` is drawn
INF_GAP = 2.5


def require_matplotlib():
    """Import matplotlib, or say how to install it.

    Returns
    -------
    module
        The ``matplotlib`` package.

    Raises
    ------
    MissingDependencyError
        matplotlib is not installed; the message names the ``plot`` extra.

    Examples
    --------
    >>> try:
    ...     matplotlib = require_matplotlib()
    ... except MissingDependencyError as err:  # without the plot extra
    ...     assert "dpglm[plot]" in str(err)
    """
    try:
        import matplotlib
    except ImportError as err:
        raise MissingDependencyError(
            "drawing figures needs matplotlib, which is not installed; install it with "
            "`pip install 'dpglm[plot]'` (or `pip install matplotlib`)"
        ) from err
    return matplotlib


@dataclass
class Curve:
    """The trials of one solver, grouped by epsilon (increasing, ``inf`` last).

    Attributes
    ----------
    solver : str
    epsilons : ndarray of shape (k,)
    values : dict of str to list of ndarray
        For each key of the trials (``"metric"``, ...), the values at each epsilon.
    """

    solver: str
    epsilons: np.ndarray
    values: dict = field(default_factory=dict)

    def mean(self, key: str) -> np.ndarray:
        """Mean of ``key`` at each epsilon (NaN values ignored)."""
        return np.array([_nan_stat(np.nanmean, v) for v in self.values[key]])

    def std(self, key: str) -> np.ndarray:
        """Standard deviation of ``key`` at each epsilon (0 for a single trial)."""
        return np.array([_nan_stat(np.nanstd, v) for v in self.values[key]])


def _nan_stat(function, values):
    values = np.asarray(values, dtype=float)
    if not np.any(np.isfinite(values)):
        return math.nan
    return float(function(values))


def summarize(
    trials: Iterable[Mapping], keys: Sequence[str] = ("metric", "relative_suboptimality")
) -> dict:
    """Group trials by solver and epsilon.

    Parameters
    ----------
    trials : iterable of mappings
        Each with ``"solver"``, ``"epsilon"`` and the ``keys``; numbers may be
        given as strings (as read back from a CSV file).
    keys : sequence of str
        The values to collect.

    Returns
    -------
    dict of str to Curve
        One curve per solver, in order of first appearance.

    Examples
    --------
    >>> rows = [{"solver": "dp-sgd", "epsilon": "inf", "metric": "0.5"}]
    >>> summarize(rows, keys=["metric"])["dp-sgd"].mean("metric")
    array([0.5])
    """
    grouped: dict = {}
    for trial in trials:
        solver = str(trial["solver"])
        epsilon = float(trial["epsilon"])
        cell = grouped.setdefault(solver, {}).setdefault(epsilon, {k: [] for k in keys})
        for key in keys:
            cell[key].append(float(trial[key]))
    curves = {}
    for solver, cells in grouped.items():
        epsilons = np.array(sorted(cells), dtype=float)
        values = {k: [np.array(cells[e][k]) for e in epsilons] for k in keys}
        curves[solver] = Curve(solver, epsilons, values)
    return curves


def epsilon_positions(epsilons, among=None) -> np.ndarray:
    """Where each epsilon goes on a log axis: finite ones in place, ``inf`` to the right.

    ``inf`` is drawn ``INF_GAP`` times right of the largest finite epsilon of
    ``among`` (default: ``epsilons``), at 1 when there is none.

    Examples
    --------
    >>> epsilon_positions([0.5, 2.0, float("inf")])
    array([0.5, 2. , 5. ])
    """
    epsilons = np.asarray(epsilons, dtype=float)
    among = epsilons if among is None else np.asarray(among, dtype=float)
    finite = among[np.isfinite(among)]
    at_inf = INF_GAP * finite.max() if finite.size else 1.0
    return np.where(np.isfinite(epsilons), epsilons, at_inf)


def plot_privacy_utility(
    trials: Iterable[Mapping],
    *,
    metric: str = "test score",
    log_metric: bool = False,
    reference: float | None = None,
    title: str | None = None,
    path: str | os.PathLike | None = None,
):
    """Privacy-utility curves: test score and relative suboptimality against epsilon.

    Two panels share the epsilon axis (log scale; the non-private ``inf`` is
    drawn apart on the right): the test metric, and the relative
    suboptimality of the training objective (log scale). Each solver's
    curve is the mean over its trials, with error bars of one standard
    deviation.

    Parameters
    ----------
    trials : iterable of mappings
        See the module docstring.
    metric : str, default="test score"
        Label of the metric axis (e.g. ``"test accuracy"``).
    log_metric : bool, default=False
        Log scale for the metric (e.g. a mean squared error).
    reference : float, optional
        The metric of the non-private optimum, drawn as a dashed line.
    title : str, optional
    path : str or os.PathLike, optional
        Where to save the figure (PNG, or any format matplotlib knows from the
        extension).

    Returns
    -------
    matplotlib.figure.Figure
        Built without pyplot, so no window opens and no global state changes.

    Raises
    ------
    MissingDependencyError
        matplotlib is not installed.

    Examples
    --------
    >>> trials = [
    ...     {"solver": s, "epsilon": e, "metric": m, "relative_suboptimality": r}
    ...     for s, e, m, r in [("dp-cd", 1.0, 0.8, 0.4), ("dp-cd", float("inf"), 0.9, 0.1)]
    ... ]
    >>> try:
    ...     figure = plot_privacy_utility(trials, metric="test accuracy", reference=0.95)
    ...     print(len(figure.axes))
    ... except MissingDependencyError:  # without the plot extra
    ...     print(2)
    2
    """
    require_matplotlib()
    from matplotlib.figure import Figure

    curves = summarize(trials)
    all_eps = np.concatenate([c.epsilons for c in curves.values()]) if curves else np.ones(1)
    figure = Figure(figsize=(10, 4.2), layout="constrained")
    axes = figure.subplots(1, 2, sharex=True)
    markers = "osD^v<>"
    for k, curve in enumerate(curves.values()):
        x = epsilon_positions(curve.epsilons, all_eps)
        for ax, key in zip(axes, ("metric", "relative_suboptimality"), strict=True):
            mean, std = curve.mean(key), curve.std(key)
            finite = np.isfinite(curve.epsilons)
            line = ax.errorbar(
                x[finite],
                mean[finite],
                yerr=std[finite],
                marker=markers[k % len(markers)],
                capsize=3,
                label=curve.solver,
            )
            if not finite.all():
                ax.errorbar(
                    x[~finite],
                    mean[~finite],
                    yerr=std[~finite],
                    marker=markers[k % len(markers)],
                    capsize=3,
                    color=line.lines[0].get_color(),
                    linestyle="none",
                )
    if reference is not None and math.isfinite(reference):
        axes[0].axhline(
            reference, color="0.4", linestyle="--", linewidth=1, label="non-private optimum"
        )
    axes[0].set_ylabel(metric)
    if log_metric:
        axes[0].set_yscale("log")
        _readable_log_ticks(axes[0])
    axes[1].set_ylabel("relative suboptimality (training objective)")
    axes[1].set_yscale("log")
    _readable_log_ticks(axes[1])
    for ax in axes:
        _epsilon_axis(ax, all_eps)
        ax.grid(True, which="major", alpha=0.3)
    axes[0].legend(loc="best", fontsize="small")
    if title:
        figure.suptitle(title)
    if path is not None:
        figure.savefig(path, dpi=110)
    return figure


def _epsilon_axis(ax, all_epsilons):
    ax.set_xscale("log")
    ticks = np.unique(all_epsilons)
    positions = epsilon_positions(ticks, all_epsilons)
    labels = [_epsilon_label(e) for e in ticks]
    ax.set_xticks(positions, labels)
    ax.minorticks_off()
    ax.set_xlabel("epsilon (∞: same solver, no noise)")
    finite = ticks[np.isfinite(ticks)]
    if finite.size and not np.isfinite(ticks).all():
        # a break between the largest finite epsilon and the non-private point
        middle = math.sqrt(finite.max() * epsilon_positions([math.inf], all_epsilons)[0])
        ax.axvline(middle, color="0.8", linewidth=0.8, linestyle=":")


def _readable_log_ticks(ax):
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _epsilon_label(epsilon):
    if math.isinf(epsilon):
        return "∞"
    return f"{epsilon:g}"
