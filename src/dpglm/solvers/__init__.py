"""Solvers: the private optimisers and the non-private reference.

One module per method, each with one public function that takes a
:class:`~dpglm.problem.Problem` and returns a :class:`FitResult`:

* :func:`dpglm.solvers.dp_cd.dp_cd`: private randomized proximal coordinate descent;
* :func:`dpglm.solvers.dp_gcd.dp_gcd`: private greedy (proximal) coordinate descent;
* :func:`dpglm.solvers.dp_sgd.dp_sgd`: DP-SGD, the baseline;
* :func:`dpglm.solvers.reference.solve_reference`: the certified non-private optimum.

Each private solver turns its hyperparameters into an event plan, has it
calibrated and charged (:mod:`dpglm.solvers.spending`) before it trains, and
runs exactly that plan.
"""

from dpglm.solvers.result import FitResult, History

__all__ = ["FitResult", "History"]
