"""Private preprocessing: what a solver needs from raw data, estimated inside the budget.

:mod:`dpglm.preprocessing.ranges` releases the ranges of the columns (noisy
log-scale histograms); :mod:`dpglm.preprocessing.scaling` clips the records
to them and maps them to the solver's scale, and maps a model fitted there
back to the raw scale. :mod:`dpglm.preprocessing.transformers` offers them as
scikit-learn transformers that spend a shared budget (a clipper, a min-max and
a standard scaler), and finds the steps of a pipeline that learn without privacy.
:mod:`dpglm.preprocessing.categories` selects the values of categorical columns
privately (noisy counts, thresholded), and :mod:`dpglm.preprocessing.encoders`
one-hot encodes on them as a scikit-learn transformer.

The transformers are exported here and imported on first use: they bring
scikit-learn's pipelines and column transformers, which the estimators (that
import :mod:`dpglm.preprocessing.scaling` and its package) do not need.
"""

from dpglm._lazy import lazy_exports

#: the names exported here, each defined in dpglm.preprocessing.transformers
_TRANSFORMERS = (
    "PrivateClipper",
    "PrivateMinMaxScaler",
    "PrivateStandardScaler",
    "check_pipeline",
)

#: the names exported here, each defined in dpglm.preprocessing.encoders
_ENCODERS = ("PrivateOneHotEncoder",)

__all__ = [
    "PrivateClipper",
    "PrivateMinMaxScaler",
    "PrivateOneHotEncoder",
    "PrivateStandardScaler",
    "check_pipeline",
]


__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        **dict.fromkeys(_TRANSFORMERS, f"{__name__}.transformers"),
        **dict.fromkeys(_ENCODERS, f"{__name__}.encoders"),
    },
    globals(),
)
