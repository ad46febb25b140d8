"""What a private solver returns: the model, its iterate history and its privacy report.

Examples
--------
>>> import numpy as np
>>> from dpglm.solvers.result import History
>>> history = History.empty(3)
>>> history.record(1.0, np.array([0.5, 0.0, 0.1]))
>>> history.passes, history.thetas.shape
(array([1.]), (1, 3))
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dpglm.privacy.report import PrivacyReport


class History:
    """Iterates of a private fit, recorded at checkpoints.

    Every recorded iterate is a post-processing of the fit's noisy releases,
    so the history is covered by the same guarantee as the final model. Its
    objective values are not: :meth:`objectives` reads the data without
    privacy, for measuring solvers on data one may look at.

    Attributes
    ----------
    passes : ndarray of shape (k,)
        Work done at each checkpoint, in passes over the data (one pass is
        ``n_coords`` coordinate updates for DP-CD, one greedy step for DP-GCD,
        ``n_samples`` sampled records for DP-SGD).
    thetas : ndarray of shape (k, n_coords)
        The iterate the solver would return if it stopped there (averaged
        where the solver averages); coefficients then intercept.
    """

    def __init__(self, n_coords: int):
        self.n_coords = int(n_coords)
        self._passes: list = []
        self._thetas: list = []

    @classmethod
    def empty(cls, n_coords: int) -> History:
        """A history with no checkpoint yet."""
        return cls(n_coords)

    @staticmethod
    def checkpoints(total: int, limit: int = 100) -> set:
        """At most ``limit`` evenly spaced step numbers in ``1..total``, ``total`` included.

        Examples
        --------
        >>> sorted(History.checkpoints(10, 3))
        [3, 6, 10]
        """
        count = min(total, limit)
        return {(k * total) // count for k in range(1, count + 1)}

    def record(self, passes: float, theta) -> None:
        """Append one checkpoint (``theta`` is copied)."""
        self._passes.append(float(passes))
        self._thetas.append(np.array(theta, dtype=float))

    @property
    def passes(self) -> np.ndarray:
        return np.asarray(self._passes, dtype=float)

    @property
    def thetas(self) -> np.ndarray:
        if not self._thetas:
            return np.empty((0, self.n_coords))
        return np.vstack(self._thetas)

    def objectives(self, problem) -> np.ndarray:
        """Objective of ``problem`` at every checkpoint (reads the data without privacy)."""
        return np.array([problem.objective(theta) for theta in self._thetas])

    def __len__(self) -> int:
        return len(self._passes)


@dataclass
class FitResult:
    """The output of a private solver.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
    intercept : float
        0.0 when the problem has no intercept.
    history : History
    report : PrivacyReport
        The guarantee of the fit and how it was spent.
    n_iter : int
        Number of updates run (coordinate updates, greedy steps or SGD steps),
        exactly as planned.
    info : dict
        Solver-specific facts the report does not hold (step sizes, clipping
        thresholds, smoothness constants used).
    """

    coef: np.ndarray
    intercept: float
    history: History
    report: PrivacyReport
    n_iter: int
    info: dict = field(default_factory=dict)

    @classmethod
    def from_theta(cls, problem, theta, *, history, report, n_iter, info) -> FitResult:
        """The result of a fit of ``problem`` that ended at ``theta`` (intercept last)."""
        coef, intercept = problem.split(theta)
        return cls(
            coef=np.array(coef, dtype=float),
            intercept=intercept,
            history=history,
            report=report,
            n_iter=n_iter,
            info={"fit_intercept": problem.fit_intercept, **info},
        )

    @property
    def theta(self) -> np.ndarray:
        """Coefficients (row by row, one per class) followed by the intercept(s) if fitted."""
        if self.info.get("fit_intercept", False):
            return np.append(self.coef, self.intercept)
        return self.coef.ravel().copy()
