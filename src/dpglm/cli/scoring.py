"""Held-out scores beside a trivial baseline: ``dpglm fit --test-size`` and ``dpglm score``.

A score reads the records without privacy. It tells the data owner whether a
private model is any good; it is not for publication, and it is not part of the
model file or its privacy report. The baseline predicts one constant for every
record: the majority class (classification) or the mean target (regression), of
the training records for ``fit --test-size`` and of the scored records
themselves for ``score``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpglm.cli.experiments import split_rows

#: what every score says of itself
PRIVACY_NOTE = (
    "Computed on the data without privacy: for the data owner, not for publication; not "
    "part of the model file or its privacy report. Choosing hyperparameters by it voids the "
    "report's assumption that they were chosen without the data (PrivateSearchCV chooses "
    "them privately)."
)

#: the seed-sequence key of the held-out split, apart from every noise stream of the fit
SPLIT_KEY = 0x5B117


@dataclass(frozen=True)
class Comparison:
    """A model's score and a constant baseline's, on the same records.

    Attributes
    ----------
    task : {"classification", "regression"}
    n_records : int
        The records scored.
    model, baseline : float
        Accuracy, or R² (NaN when the target is constant on these records).
    model_error, baseline_error : float
        The number of wrong predictions, or the mean squared error.
    baseline_value : object
        The baseline's constant prediction (a class label, or a target value).
    """

    task: str
    n_records: int
    model: float
    baseline: float
    model_error: float
    baseline_error: float
    baseline_value: object

    @property
    def beats_baseline(self) -> bool:
        """Whether the model makes strictly fewer errors than the baseline.

        On the same records R² orders models as their mean squared errors do;
        the errors also compare when R² is undefined (a constant target).
        """
        return self.model_error < self.baseline_error


def compare_classifier(y, predicted, baseline_code, classes) -> Comparison:
    """Accuracy of encoded predictions and of always predicting ``baseline_code``.

    Parameters
    ----------
    y, predicted : array-like of class codes
        The true labels and the model's predictions, encoded as
        :class:`~dpglm.data.labels.ClassLabels` encodes them: -1 / +1 for two
        classes, ``0, ..., K-1`` for more.
    baseline_code : float
        The baseline's prediction, e.g. :func:`majority_code` of some labels.
    classes : ClassLabels or array-like of labels
        The label mapping, or the sorted labels (two, or ``K``), to name the
        baseline's prediction.

    Examples
    --------
    >>> c = compare_classifier([1, 1, -1, 1], [1, -1, -1, 1], 1, ["no", "yes"])
    >>> c.model, c.baseline, c.baseline_value, c.beats_baseline
    (0.75, 0.75, 'yes', False)
    >>> c = compare_classifier([0, 2, 2, 1], [0, 2, 2, 2], 2, ["a", "b", "c"])
    >>> c.model, c.baseline, c.baseline_value, c.beats_baseline
    (0.75, 0.5, 'c', True)
    """
    from dpglm.data.labels import ClassLabels

    labels = classes if isinstance(classes, ClassLabels) else ClassLabels.of(classes)
    y = np.asarray(y, dtype=float)
    wrong = int(np.count_nonzero(np.asarray(predicted, dtype=float) != y))
    baseline_wrong = int(np.count_nonzero(y != baseline_code))
    n = len(y)
    label = labels.decode([baseline_code])[0]
    return Comparison(
        "classification",
        n,
        1.0 - wrong / n,
        1.0 - baseline_wrong / n,
        wrong,
        baseline_wrong,
        label.item() if hasattr(label, "item") else label,
    )


def compare_regressor(y, predicted, baseline_value) -> Comparison:
    """R² of predictions and of always predicting ``baseline_value``.

    R² is ``1 - MSE / variance`` of the target on these records; it is NaN when
    the target is constant on them (the mean squared errors still compare).

    Examples
    --------
    >>> c = compare_regressor([1.0, 2.0, 3.0], [1.0, 2.0, 4.0], 2.0)
    >>> round(c.model, 3), c.baseline, c.beats_baseline
    (0.5, 0.0, True)
    """
    y = np.asarray(y, dtype=float)
    error = float(np.mean((np.asarray(predicted, dtype=float) - y) ** 2))
    baseline_error = float(np.mean((baseline_value - y) ** 2))
    variance = float(np.mean((y - y.mean()) ** 2))
    if variance > 0:
        model, baseline = 1.0 - error / variance, 1.0 - baseline_error / variance
    else:
        model = baseline = math.nan
    return Comparison(
        "regression", len(y), model, baseline, error, baseline_error, float(baseline_value)
    )


def majority_code(y) -> float:
    """The most frequent class code of ``y`` (a tie: the smallest code, the first class).

    Codes as :class:`~dpglm.data.labels.ClassLabels` encodes labels: -1 / +1
    for two classes, ``0, ..., K-1`` for more; either way the smallest code
    is the first of the sorted classes.

    Examples
    --------
    >>> majority_code([1, -1, 1]), majority_code([1, -1])
    (1.0, -1.0)
    >>> majority_code([2, 0, 1, 2, 1]), majority_code([2, 1, 0])
    (1.0, 0.0)
    """
    codes, counts = np.unique(np.asarray(y, dtype=float), return_counts=True)
    return float(codes[np.argmax(counts)])


def held_out_split(n: int, test_size: float, seed=None):
    """The rows ``dpglm fit --test-size`` trains on and holds out: a random fraction.

    Drawn from ``n`` and the seed only, never from the data's values; the seed
    (``--seed``) is mixed with :data:`SPLIT_KEY` so that the split's stream is
    apart from the fit's noise. ``None`` draws a fresh split.

    Returns
    -------
    train, test : ndarray of int
        Sorted row indices; each holds at least one row.

    Examples
    --------
    >>> train, test = held_out_split(8, 0.25, seed=0)
    >>> len(train), len(test), sorted([*train, *test]) == list(range(8))
    (6, 2, True)
    """
    if seed is not None and seed < 0:
        raise ValueError(f"a seed must be a non-negative int, got {seed!r}")
    stream = np.random.SeedSequence(seed, spawn_key=(SPLIT_KEY,)) if seed is not None else None
    return split_rows(n, test_size, stream)


def comparison_lines(comparison: Comparison, baseline_source: str) -> list[str]:
    """Two lines: the model's score, then the baseline's and what the baseline is.

    Parameters
    ----------
    comparison : Comparison
    baseline_source : str
        Where the baseline's constant comes from, e.g. ``"the training records"``.

    Examples
    --------
    >>> c = compare_classifier([1, 1, -1, 1], [1, 1, -1, 1], 1, ["no", "yes"])
    >>> print("\\n".join(comparison_lines(c, "these records")))
    accuracy 1.0000 (4 of 4 right)
    baseline accuracy 0.7500 (always 'yes', the majority class of these records)
    """
    c = comparison
    if c.task == "classification":
        return [
            f"accuracy {c.model:.4f} ({c.n_records - int(c.model_error)} of {c.n_records} right)",
            f"baseline accuracy {c.baseline:.4f} (always {c.baseline_value!r}, the majority "
            f"class of {baseline_source})",
        ]
    always = f"always {c.baseline_value:.4g}, the mean target of {baseline_source}"
    if math.isnan(c.model):
        return [
            f"R² undefined (the target is constant on these records), mean squared error "
            f"{c.model_error:.4g}",
            f"baseline mean squared error {c.baseline_error:.4g} ({always})",
        ]
    return [
        f"R² {c.model:.4f} (mean squared error {c.model_error:.4g})",
        f"baseline R² {c.baseline:.4f} ({always})",
    ]


def baseline_warning(comparison: Comparison, *, private: bool = True) -> str | None:
    """The warning when the model does not beat the baseline, else None.

    Examples
    --------
    >>> c = compare_regressor([1.0, 2.0, 3.0], [3.0, 2.0, 1.0], 2.0)
    >>> print(baseline_warning(c))  # doctest: +ELLIPSIS
    WARNING: the private model does not beat the baseline: R² -3.0000 against 0.0000 ...
    """
    c = comparison
    if c.beats_baseline:
        return None
    if c.task == "classification":
        scores = (
            f"accuracy {c.model:.4f} against {c.baseline:.4f} by always predicting "
            f"{c.baseline_value!r}"
        )
    elif math.isnan(c.model):
        scores = (
            f"mean squared error {c.model_error:.4g} against {c.baseline_error:.4g} by always "
            f"predicting {c.baseline_value:.4g}"
        )
    else:
        scores = f"R² {c.model:.4f} against {c.baseline:.4f} by always predicting the mean"
    model = "private model" if private else "model"
    return (
        f"WARNING: the {model} does not beat the baseline: {scores}; on these records its "
        "predictions are no better than ignoring the features"
    )
