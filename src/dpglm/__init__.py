"""dpglm: differentially private linear models."""

from dpglm.exceptions import DataError, PrivacyLeakWarning

__version__ = "0.1.0.dev0"

__all__ = ["DataError", "PrivacyLeakWarning", "__version__"]
