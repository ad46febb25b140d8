"""dpglm: differentially private linear models."""

from dpglm.exceptions import (
    BudgetExceededError,
    DataError,
    PrivacyError,
    PrivacyLeakWarning,
)
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.report import PrivacyReport

__version__ = "0.1.0.dev0"

__all__ = [
    "BudgetExceededError",
    "DataError",
    "PrivacyBudget",
    "PrivacyError",
    "PrivacyLeakWarning",
    "PrivacyReport",
    "__version__",
]
