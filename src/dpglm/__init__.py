"""dpglm: differentially private linear models.

The estimators and :func:`load` (a saved model) are imported on first use, so
that ``import dpglm`` stays light (no numba, no dp-accounting).
"""

from dpglm.exceptions import (
    BudgetExceededError,
    DataError,
    PrivacyError,
    PrivacyLeakWarning,
)
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.report import PrivacyReport

__version__ = "0.1.0.dev0"

_LAZY = {
    "DPLinearRegression": "dpglm.estimators",
    "DPRidge": "dpglm.estimators",
    "DPLasso": "dpglm.estimators",
    "DPElasticNet": "dpglm.estimators",
    "DPLogisticRegression": "dpglm.estimators",
    "DPLinearSVC": "dpglm.estimators",
    "load": "dpglm.estimators",
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
    "load",
]


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dpglm' has no attribute {name!r}")
    import importlib

    attribute = "load_model" if name == "load" else name
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
