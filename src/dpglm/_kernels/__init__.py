"""Numba kernels for the hot loops of the solvers (dense and sparse).

Kernels take plain arrays (float64 values; sparse matrices as separate
``data, indices, indptr`` arrays) and do no validation: the Python callers
check shapes, dtypes, layouts and finiteness once. A datafit is passed as its
integer ``code`` and scalar ``param`` (see :mod:`dpglm.datafits`).

The kernels are exported here and imported on first use: importing them
imports numba and loads their compiled code, which only a fit needs (the
estimators, the problem and the data-access objects import this package
without paying for it).
"""

from dpglm._lazy import lazy_exports

#: each kernel -> the module of this package that defines it
_KERNELS = {
    "coordinate_steps_csc": "coordinate",
    "coordinate_steps_dense": "coordinate",
    "add_scaled_column_dense": "dense",
    "clipped_coordinate_gradient_dense": "dense",
    "clipped_gradient_dense": "dense",
    "clipped_row_gradient_sum_dense": "dense",
    "exceeds_bounds_dense": "dense",
    "svm_dual_epochs_csr": "dual",
    "clip_value": "elementwise",
    "prox_elastic_net_box": "elementwise",
    "soft_threshold": "elementwise",
    "block_margins_csc": "frank_wolfe",
    "block_margins_dense": "frank_wolfe",
    "clipped_candidate_losses": "full_gradient",
    "huberised_loss": "full_gradient",
    "lipschitz_candidate_changes": "full_gradient",
    "slope_interval": "full_gradient",
    "greedy_score": "greedy",
    "greedy_scores": "greedy",
    "greedy_select": "greedy",
    "patch_clipped_gradient": "greedy",
    "derivative_value": "losses",
    "derivatives": "losses",
    "fast_exp": "losses",
    "logistic_derivative": "losses",
    "loss_value": "losses",
    "multinomial_candidate_changes": "multinomial",
    "multinomial_candidate_losses": "multinomial",
    "multinomial_steps_csr": "multinomial",
    "multinomial_steps_dense": "multinomial",
    "residual_scale": "multinomial",
    "add_scaled_column_csc": "sparse",
    "clipped_coordinate_gradient_csc": "sparse",
    "clipped_gradient_csc": "sparse",
    "clipped_row_gradient_sum_csr": "sparse",
    "distinct_subsets": "stochastic",
    "sgd_steps_csr": "stochastic",
    "sgd_steps_dense": "stochastic",
}


__all__ = [
    "add_scaled_column_csc",
    "add_scaled_column_dense",
    "block_margins_csc",
    "block_margins_dense",
    "clip_value",
    "clipped_candidate_losses",
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
    "huberised_loss",
    "lipschitz_candidate_changes",
    "logistic_derivative",
    "loss_value",
    "multinomial_candidate_changes",
    "multinomial_candidate_losses",
    "multinomial_steps_csr",
    "multinomial_steps_dense",
    "patch_clipped_gradient",
    "prox_elastic_net_box",
    "residual_scale",
    "sgd_steps_csr",
    "sgd_steps_dense",
    "slope_interval",
    "soft_threshold",
    "svm_dual_epochs_csr",
]


__getattr__, __dir__ = lazy_exports(
    __name__, {name: f"{__name__}.{module}" for name, module in _KERNELS.items()}, globals()
)
