"""dpglm: differentially private linear models.

Everything but the version and the exceptions is imported on first use (the
estimators, :func:`load_model` for a saved model or pipeline, :func:`save_pipeline`,
the search, the budget and the report), so that ``import dpglm`` stays light: no
numba, no dp-accounting, no scikit-learn. Data are read with :func:`dpglm.data.load`.

Examples
--------
>>> import dpglm
>>> dpglm.load_model.__module__
'dpglm.estimators.persistence'
"""

from dpglm._lazy import lazy_exports
from dpglm._version import __version__
from dpglm.exceptions import (
    BudgetExceededError,
    DataError,
    PrivacyError,
    PrivacyLeakWarning,
)

_LAZY = {
    "PrivacyBudget": "dpglm.privacy.budget",
    "PrivacyReport": "dpglm.privacy.report",
    "DPLinearRegression": "dpglm.estimators",
    "DPRidge": "dpglm.estimators",
    "DPLasso": "dpglm.estimators",
    "DPElasticNet": "dpglm.estimators",
    "DPLogisticRegression": "dpglm.estimators",
    "DPLinearSVC": "dpglm.estimators",
    "load_model": "dpglm.estimators",
    "save_pipeline": "dpglm.estimators",
    "PrivateSearchCV": "dpglm.tuning",
}

__all__ = [
    "BudgetExceededError",
    "DPElasticNet",
    "DPLasso",
    "DPLinearRegression",
    "DPLinearSVC",
    "DPLogisticRegression",
    "DPRidge",
    "DataError",
    "PrivacyBudget",
    "PrivacyError",
    "PrivacyLeakWarning",
    "PrivacyReport",
    "PrivateSearchCV",
    "__version__",
    "load_model",
    "save_pipeline",
]

# a removed name -> what replaced it, so that old code fails with a pointer
_REMOVED = {
    "load": "dpglm.load_model (a saved model) or dpglm.data.load (a dataset)",
}


#: subpackages reachable as attributes after a bare ``import dpglm``: code written when the
#: package top imported them eagerly reads ``dpglm.privacy.X`` without importing it
_SUBPACKAGES = ("privacy",)


__getattr__, __dir__ = lazy_exports(
    "dpglm", _LAZY, globals(), submodules=_SUBPACKAGES, removed=_REMOVED
)
