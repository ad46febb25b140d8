"""Numba kernels for the hot loops of the solvers (dense and sparse).

Kernels take plain arrays (float64 values; sparse matrices as separate
``data, indices, indptr`` arrays) and do no validation: the Python callers
check shapes, dtypes, layouts and finiteness once. A datafit is passed as its
integer ``code`` and scalar ``param`` (see :mod:`dpglm.datafits`).
"""

from dpglm._kernels.coordinate import coordinate_steps_csc, coordinate_steps_dense
from dpglm._kernels.dense import (
    add_scaled_column_dense,
    clipped_coordinate_gradient_dense,
    clipped_gradient_dense,
    clipped_row_gradient_sum_dense,
    exceeds_bounds_dense,
)
from dpglm._kernels.dual import svm_dual_epochs_csr
from dpglm._kernels.elementwise import clip_value, prox_elastic_net_box, soft_threshold
from dpglm._kernels.greedy import (
    greedy_score,
    greedy_scores,
    greedy_select,
    patch_clipped_gradient,
)
from dpglm._kernels.losses import (
    derivative_value,
    derivatives,
    fast_exp,
    logistic_derivative,
    loss_value,
)
from dpglm._kernels.sparse import (
    add_scaled_column_csc,
    clipped_coordinate_gradient_csc,
    clipped_gradient_csc,
    clipped_row_gradient_sum_csr,
)
from dpglm._kernels.stochastic import distinct_subsets, sgd_steps_csr, sgd_steps_dense

__all__ = [
    "add_scaled_column_csc",
    "add_scaled_column_dense",
    "clip_value",
    "clipped_coordinate_gradient_csc",
    "clipped_coordinate_gradient_dense",
    "clipped_gradient_csc",
    "clipped_gradient_dense",
    "clipped_row_gradient_sum_csr",
    "clipped_row_gradient_sum_dense",
    "coordinate_steps_csc",
    "coordinate_steps_dense",
    "derivative_value",
    "derivatives",
    "distinct_subsets",
    "exceeds_bounds_dense",
    "fast_exp",
    "greedy_score",
    "greedy_scores",
    "greedy_select",
    "logistic_derivative",
    "loss_value",
    "patch_clipped_gradient",
    "prox_elastic_net_box",
    "sgd_steps_csr",
    "sgd_steps_dense",
    "soft_threshold",
    "svm_dual_epochs_csr",
]
