"""dpglm: differentially private linear models.

The estimators and :func:`load_model` (a saved model) are imported on first
use, so that ``import dpglm`` stays light (no numba, no dp-accounting). Data
are read with :func:`dpglm.data.load`.

Examples
--------
>>> import dpglm
>>> dpglm.load_model.__module__
'dpglm.estimators.persistence'
"""

from dpglm._version import __version__
from dpglm.exceptions import (
    BudgetExceededError,
    DataError,
    PrivacyError,
    PrivacyLeakWarning,
)
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.report import PrivacyReport

_LAZY = {
    "DPLinearRegression": "dpglm.estimators",
    "DPRidge": "dpglm.estimators",
    "DPLasso": "dpglm.estimators",
    "DPElasticNet": "dpglm.estimators",
    "DPLogisticRegression": "dpglm.estimators",
    "DPLinearSVC": "dpglm.estimators",
    "load_model": "dpglm.estimators",
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
]

# a removed name -> what replaced it, so that old code fails with a pointer
_REMOVED = {
    "load": "dpglm.load_model (a saved model) or dpglm.data.load (a dataset)",
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        if name in _REMOVED:
            raise AttributeError(f"module 'dpglm' has no attribute {name!r}: use {_REMOVED[name]}")
        raise AttributeError(f"module 'dpglm' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
