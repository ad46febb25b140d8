"""Solvers: the private optimisers and the non-private reference.

One module per method, each with one public function that takes a
:class:`~dpglm.problem.Problem` and returns a :class:`FitResult`:

* :func:`dpglm.solvers.dp_cd.dp_cd`: private randomized proximal coordinate descent;
* :func:`dpglm.solvers.dp_gcd.dp_gcd`: private greedy (proximal) coordinate descent;
* :func:`dpglm.solvers.dp_scd.dp_scd`: private dual mini-batch coordinate descent (and
  SeqDP-SCD);
* :func:`dpglm.solvers.dp_agd.dp_agd`: DP-AGD, gradient descent with an adaptive
  per-iteration zCDP budget and a private line search;
* :func:`dpglm.solvers.dp_gd.dp_gd`: private gradient descent with a fixed budget split
  (DP-AGD's baseline);
* :func:`dpglm.solvers.dp_fw.dp_fw`: private Frank-Wolfe on the L1 ball;
* :func:`dpglm.solvers.dp_fw.dp_bcfw`: private block-coordinate Frank-Wolfe under
  arbitrary sampling (samplings in :mod:`dpglm.solvers.fw_sampling`);
* :func:`dpglm.solvers.dp_sgd.dp_sgd`: DP-SGD, the baseline;
* :func:`dpglm.solvers.reference.solve_reference`: the certified non-private optimum.

Each private solver turns its hyperparameters into an event plan, has it
calibrated and charged (:mod:`dpglm.solvers.spending`) before it trains, and
runs exactly that plan.
"""

from dpglm.solvers.result import FitResult, History

__all__ = ["FitResult", "History"]
