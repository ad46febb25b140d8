"""Private preprocessing: what a solver needs from raw data, estimated inside the budget.

:mod:`dpglm.preprocessing.ranges` releases the ranges of the columns (noisy
log-scale histograms); :mod:`dpglm.preprocessing.scaling` clips the records
to them and maps them to the solver's scale, and maps a model fitted there
back to the raw scale. :mod:`dpglm.preprocessing.transformers` offers them as
scikit-learn transformers that spend a shared budget (a clipper, a min-max and
a standard scaler), and finds the steps of a pipeline that learn without privacy.
"""

from dpglm.preprocessing.transformers import (
    PrivateClipper,
    PrivateMinMaxScaler,
    PrivateStandardScaler,
    check_pipeline,
)

__all__ = [
    "PrivateClipper",
    "PrivateMinMaxScaler",
    "PrivateStandardScaler",
    "check_pipeline",
]
