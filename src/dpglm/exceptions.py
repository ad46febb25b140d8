"""Errors and warnings raised by dpglm.

Every error that comes from bad input derives from :class:`DataError` (itself a
``ValueError``), so callers can catch one class; the subclasses say what kind of
problem was found, and the message names the row, column or parameter at fault.

Examples
--------
>>> import numpy as np
>>> from dpglm.data import load
>>> from dpglm.exceptions import DataError
>>> try:
...     load(np.array([[1.0, np.nan]]), np.array([0.0]))
... except DataError as err:
...     print(type(err).__name__)
NonFiniteValueError
"""


class DpglmError(Exception):
    """Base class of every error dpglm raises on purpose."""


class DataError(DpglmError, ValueError):
    """Input data that dpglm refuses, with the offending row or column named."""


class EmptyDataError(DataError):
    """The data has no rows or no feature columns."""


class NonFiniteValueError(DataError):
    """A feature or target value is NaN, infinite or missing."""


class NonNumericColumnError(DataError):
    """A feature column holds values that are not numbers (e.g. strings, categories)."""


class TargetError(DataError):
    """The target is missing, or does not have the values the task needs."""


class ShapeMismatchError(DataError):
    """Two inputs that must agree in length or width do not."""


class UnreadableFileError(DataError):
    """A file could not be opened or parsed; the message says where and why."""


class MissingDependencyError(DpglmError, ImportError):
    """An optional dependency needed for the requested operation is not installed."""


class PrivacyLeakWarning(UserWarning):
    """A quantity was computed from the data without differential privacy.

    dpglm emits this warning whenever a value that depends on the data is used
    without being charged to a privacy budget (for instance coordinate-wise
    smoothness constants computed from the raw features). The resulting model
    does not carry the stated guarantee unless that value is public.
    """


class PrivacyError(DpglmError):
    """Base class of the errors of the privacy layer."""


class PlanError(PrivacyError, ValueError):
    """An event plan that is malformed or cannot be analysed as stated."""


class UnsupportedPlanError(PrivacyError, ValueError):
    """An accountant was asked about a plan it has no valid analysis for."""


class CalibrationError(PrivacyError, ValueError):
    """No noise level makes the plan meet the target (e.g. fixed costs exceed it)."""


class BudgetExceededError(PrivacyError):
    """A charge would take the spent privacy over the budget; nothing was charged."""


class LedgerError(PrivacyError):
    """The persistent budget ledger is missing, corrupt or inconsistent with the request."""
