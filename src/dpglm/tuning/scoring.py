"""The validation scores of a search's runs, and their sensitivity.

Each score is the mean of per-record terms in a range of width
``score_range``: accuracy for classifiers (width 1), minus the squared or
absolute error clipped to ``error_bound`` for regressors; one replaced record
moves it by at most ``score_range / n_val``.
"""

from __future__ import annotations

import numpy as np

CLASSIFIER_SCORING = ("accuracy",)
REGRESSOR_SCORING = ("neg_mean_squared_error", "neg_mean_absolute_error")


class Scorer:
    """A validation score: the mean of per-record terms in a range of width ``score_range``."""

    def __init__(self, scoring, score_range):
        self.scoring = scoring
        self.score_range = score_range

    @staticmethod
    def describe(scoring, score_range):
        """The score and its sensitivity, in words, for the report."""
        if scoring == "accuracy":
            return "accuracy on the validation split (sensitivity 1 / n_val)"
        error = "squared" if scoring == "neg_mean_squared_error" else "absolute"
        return (
            f"minus the mean {error} error on the validation split, each record's error "
            f"clipped to [0, {score_range:g}] (sensitivity {score_range:g} / n_val)"
        )

    def __call__(self, model, X, y):
        """The score of ``model`` on ``(X, y)`` (without noise)."""
        predictions = model.predict(X)
        y = np.asarray(y)
        if self.scoring == "accuracy":
            return float(np.mean(predictions == y))
        errors = np.asarray(predictions, dtype=float) - y.astype(float)
        errors = errors**2 if self.scoring == "neg_mean_squared_error" else np.abs(errors)
        return -float(np.mean(np.minimum(errors, self.score_range)))
