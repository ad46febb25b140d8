"""The optimisation problem every solver works on.

``Problem(X, y, datafit, penalty, fit_intercept)`` stands for

    F(theta) = (1/n) sum_i l(x_i . w + b, y_i) + psi(w),

where ``theta`` is one vector of length ``n_coords``: the coefficients ``w``
followed, when ``fit_intercept`` is true, by the intercept ``b``, an extra
coordinate whose feature is the constant 1 and which is never penalised.
Coordinate methods thus treat the intercept like any other coordinate.

With the :class:`~dpglm.datafits.Multinomial` datafit of ``K`` classes a
record has ``K`` margins ``W x + b`` and its target is a class code in
``{0, ..., K-1}``; ``theta`` is then the ``K x p`` coefficients row by row
followed, when ``fit_intercept``, by the ``K`` intercepts (``split`` gives
``W`` and ``b``). The penalty applies to each row of ``W``. The gradient
methods (DP-SGD, DP-GD, DP-AGD and the reference solver) take such a problem;
the coordinate methods, which need one margin per record, refuse it.

Everything a ``Problem`` computes reads the raw data and is **not private**:
solvers decide what may be released and charge it to a privacy budget. The one
quantity the privacy rules single out, the coordinate-wise smoothness
``M_j``, warns with :class:`~dpglm.exceptions.PrivacyLeakWarning` when it is
computed from the data instead of from public feature bounds.

A ``Problem`` is also what the solvers ask for their data: the operations of
:class:`~dpglm.access.DataAccess` (clipped sums, margins kept between steps,
column statistics), computed here on the records in memory, and on row chunks
by :class:`~dpglm.distributed.data_parallel.ShardedProblem`.

Examples
--------
>>> import numpy as np
>>> from dpglm.problem import Problem
>>> X = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
>>> y = np.array([1.0, -1.0, 1.0])
>>> prob = Problem(X, y, "logistic", fit_intercept=True)
>>> prob.n_coords
3
>>> round(prob.objective(np.zeros(3)), 6)
0.693147
"""

from __future__ import annotations

import copy
import math

import numpy as np
import scipy.sparse as sp

from dpglm import _kernels
from dpglm.access.batches import BatchSteps
from dpglm.access.blocks import MarginBlocks
from dpglm.access.columns import clipped_column_mean_squares, column_mean_squares
from dpglm.access.sums import GradientSums
from dpglm.access.tracker import ClippedGradientTracker
from dpglm.clipping import clip_features, clip_terms
from dpglm.data import as_layout, load
from dpglm.data.layout import nearest_layout, sparse_matrix
from dpglm.datafits import Datafit, get_datafit
from dpglm.exceptions import ShapeMismatchError, TargetError
from dpglm.penalties import NoPenalty, Penalty, get_penalty
from dpglm.privacy.leaks import warn_privacy_leak


def _per_coordinate(name, value, length, unit):
    """``value`` as a float64 array of ``length``: one per ``unit``, or a scalar for all."""
    array = np.asarray(value, dtype=float)
    if array.ndim == 0:
        return np.full(length, float(array))
    if array.shape != (length,):
        raise ShapeMismatchError(
            f"{name} has shape {array.shape}; expected a scalar or ({length},), one per {unit}"
        )
    return array.copy()


def _check_class_codes(y, n_classes: int) -> None:
    """Refuse targets of a multinomial problem that are not class codes ``0, ..., K-1``."""
    bad = np.flatnonzero((y != np.round(y)) | (y < 0) | (y >= n_classes))
    if bad.size:
        i = int(bad[0])
        raise TargetError(
            f"the multinomial loss of {n_classes} classes needs class codes 0, ..., "
            f"{n_classes - 1}, but row {i} has y={float(y[i])!r}; encode labels with "
            "dpglm.data.ClassLabels"
        )


def _check_binary(y, loss: str) -> None:
    """Refuse targets of a binary classification loss that are not -1 / +1."""
    bad = np.flatnonzero((y != 1.0) & (y != -1.0))
    if bad.size:
        i = int(bad[0])
        raise TargetError(
            f"the {loss} loss needs labels -1/+1, but row {i} has y={float(y[i])!r}; encode "
            "labels with dpglm.data.load(..., task='classification')"
        )


def coordinate_penalties(
    penalty, n_features: int, n_outputs: int = 1, fit_intercept=False
) -> tuple:
    """``(l1, l2, lo, hi)`` of every coordinate of ``theta``, the intercepts' free.

    The separable ``penalty``'s kernel description for each of the
    ``n_outputs`` rows of coefficients, then ``0, 0, -inf, inf`` for each
    intercept: the layout of :class:`Problem` (``theta`` is the rows of ``W``
    then the intercepts).

    Examples
    --------
    >>> from dpglm.penalties import L2
    >>> l1, l2, lo, hi = coordinate_penalties(L2(0.5), 2, n_outputs=2, fit_intercept=True)
    >>> l2, hi
    (array([0.5, 0.5, 0.5, 0.5, 0. , 0. ]), array([inf, inf, inf, inf, inf, inf]))
    """
    weights = np.tile(np.stack(penalty.prox_params(n_features)), n_outputs)
    if not fit_intercept:
        return tuple(np.ascontiguousarray(row) for row in weights)
    free = np.array([[0.0], [0.0], [-math.inf], [math.inf]]) * np.ones((4, n_outputs))
    return tuple(np.ascontiguousarray(row) for row in np.hstack([weights, free]))


class Problem:
    """Data, datafit, penalty and optional intercept of one regularised ERM problem.

    Parameters
    ----------
    X : array_like or sparse matrix of shape (n_samples, n_features)
        Features; validated and kept in their layout when it is one of the
        two solvers read (C or Fortran order, CSR or CSC; see
        :func:`dpglm.data.load`). The other layout is made on first use.
    y : array_like of shape (n_samples,)
        Targets; -1/+1 labels for classification datafits.
    datafit : Datafit or str
        Per-sample loss, see :mod:`dpglm.datafits`.
    penalty : Penalty or str or None, default=None
        Penalty on the coefficients (not on the intercept), see :mod:`dpglm.penalties`.
    fit_intercept : bool, default=False
        Whether ``theta`` carries an unpenalised intercept as its last coordinate.

    Attributes
    ----------
    X : ndarray or scipy.sparse.csc_matrix
        The features column-wise (Fortran order or CSC), what coordinate
        methods read; converted once, on first use, when given row-wise.
    rows : ndarray or scipy.sparse.csr_matrix
        The features row-wise (C order or CSR), what DP-SGD and DP-SCD read;
        converted once, on first use, when given column-wise.
    y : ndarray
        The validated targets.
    n_samples, n_features, n_coords : int
        ``n_coords`` is ``n_features + fit_intercept``, times ``n_outputs``.
    n_outputs : int
        Margins per record: 1, or the classes of a multinomial datafit.

    Examples
    --------
    >>> import numpy as np
    >>> prob = Problem(np.eye(2), np.array([1.0, 2.0]), "squared", "l2")
    >>> prob.gradient(np.zeros(2))
    array([-0.5, -1. ])
    """

    def __init__(self, X, y, datafit, penalty=None, fit_intercept: bool = False):
        data = load(X, y)
        # one layout to start with; a solver that reads the other converts once
        self._layouts = {nearest_layout(data.X): data.X}
        self.y = data.y
        self.datafit: Datafit = get_datafit(datafit)
        self.penalty: Penalty = get_penalty(penalty) if penalty is not None else NoPenalty()
        self.fit_intercept = bool(fit_intercept)
        self.n_samples, self.n_features = data.X.shape
        self.n_outputs = self.datafit.n_outputs
        self.n_coords = self.n_outputs * (self.n_features + int(self.fit_intercept))
        if self.n_outputs > 1:
            _check_class_codes(self.y, self.n_outputs)
        if self.datafit.binary_labels:
            _check_binary(self.y, self.datafit.name)

    # -- layouts ------------------------------------------------------------------------

    @property
    def sparse(self) -> bool:
        """Whether the features are a sparse matrix (public: part of the problem's shape)."""
        return sp.issparse(next(iter(self._layouts.values())))

    @property
    def X(self):  # noqa: N802 (scikit-learn's name for the features)
        """The features column-wise (Fortran order or CSC)."""
        return self.layout("columns")

    @property
    def rows(self):
        """The features row-wise (C order or CSR)."""
        return self.layout("rows")

    def layout(self, name: str):
        """The features in layout ``name`` (``"columns"`` or ``"rows"``), converted once.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.arange(6.0).reshape(3, 2)
        >>> prob = Problem(X, np.zeros(3), "squared")
        >>> prob.layout("rows") is X, prob.layouts
        (True, ('rows',))
        >>> prob.X.flags.f_contiguous, prob.layouts
        (True, ('rows', 'columns'))
        """
        X = self._layouts.get(name)
        if X is None:
            X = as_layout(self.features, name)
            if sp.issparse(X):
                X = sparse_matrix(X)
            self._layouts[name] = X
        return X

    @property
    def layouts(self) -> tuple:
        """The layouts held so far, in the order they were made."""
        return tuple(self._layouts)

    @property
    def features(self):
        """The features in whichever layout is held (the first one made)."""
        return next(iter(self._layouts.values()))

    def clipped_to(self, feature_bounds):
        """The problem with every entry of column ``j`` clipped to ``[-B_j, B_j]``.

        What a solver given public feature bounds trains on: clipping is a
        per-record operation, after which ``|X_ij| <= B_j`` holds for every
        record, as the sensitivities computed from the bounds assume. Returns
        ``self`` when every entry already lies within its bound (a verdict kept
        for the next call with the same bounds, which then reads nothing);
        otherwise a problem sharing the targets, datafit and penalty, whose
        features are a clipped copy in the layout held first (see
        :func:`clip_features`).

        Parameters
        ----------
        feature_bounds : float or array_like of shape (n_features,)
            Finite, non-negative bounds.

        Returns
        -------
        Problem

        Examples
        --------
        >>> import numpy as np
        >>> prob = Problem(np.array([[1e308, 0.5], [-2.0, 0.0]]), np.zeros(2), "squared")
        >>> prob.clipped_to(1.0).X
        array([[ 1. ,  0.5],
               [-1. ,  0. ]])
        >>> prob.clipped_to([1e308, 1.0]) is prob
        True
        """
        bounds = _per_coordinate("feature_bounds", feature_bounds, self.n_features, "column")
        if not (np.isfinite(bounds) & (bounds >= 0)).all():
            raise ValueError(f"feature_bounds must be finite and >= 0, got {feature_bounds!r}")
        # the verdict is kept, like the layouts: a fit that finds every entry within its
        # bound spares the next fits with the same bounds a read of the data
        key = bounds.tobytes()
        within = self.__dict__.setdefault("_within_bounds", set())
        if key in within:
            return self
        name, X = next(iter(self._layouts.items()))
        clipped = clip_features(X, bounds)
        if clipped is X:
            within.add(key)
            return self
        problem = copy.copy(self)
        # the other layout, if any, is made again from the clipped one when needed
        problem._layouts = {name: clipped}
        problem._within_bounds = {key}
        return problem

    def with_targets(self, y):
        """The same problem with targets ``y``: the features and their layouts are shared.

        What one-vs-rest fits, one binary problem per class on the same
        records, validated once.

        Examples
        --------
        >>> import numpy as np
        >>> prob = Problem(np.eye(2), np.array([1.0, -1.0]), "logistic")
        >>> prob.with_targets([-1.0, -1.0]).y, prob.y
        (array([-1., -1.]), array([ 1., -1.]))
        """
        y = np.asarray(y, dtype=float)
        if y.shape != (self.n_samples,):
            raise ShapeMismatchError(f"y has shape {y.shape}; expected ({self.n_samples},)")
        problem = copy.copy(self)
        # the layouts dictionary is shared: a layout one fit makes serves the others
        problem.y = y
        if self.n_outputs > 1:
            _check_class_codes(y, self.n_outputs)
        elif self.datafit.binary_labels:
            _check_binary(y, self.datafit.name)
        return problem

    # -- parameters ---------------------------------------------------------------------

    def split(self, theta):
        """Return ``(coef, intercept)`` from a parameter vector.

        For a multinomial datafit, ``coef`` is the ``(K, p)`` matrix ``W`` and
        ``intercept`` the ``(K,)`` vector ``b`` (zeros without an intercept).

        Examples
        --------
        >>> import numpy as np
        >>> prob = Problem(np.eye(2), np.zeros(2), "squared", fit_intercept=True)
        >>> prob.split(np.array([1.0, 2.0, 3.0]))
        (array([1., 2.]), 3.0)
        """
        theta = self._check_theta(theta)
        if self.n_outputs > 1:
            k, weights = self.n_outputs, self.n_outputs * self.n_features
            coef = theta[:weights].reshape(k, self.n_features)
            intercept = theta[weights:].copy() if self.fit_intercept else np.zeros(k)
            return coef, intercept
        intercept = float(theta[-1]) if self.fit_intercept else 0.0
        return theta[: self.n_features], intercept

    def _check_theta(self, theta):
        theta = np.asarray(theta, dtype=float)
        if theta.shape != (self.n_coords,):
            outputs = f"{self.n_outputs} x (" if self.n_outputs > 1 else ""
            raise ShapeMismatchError(
                f"theta has shape {theta.shape}; expected ({self.n_coords},) = {outputs}"
                f"n_features {self.n_features}"
                + (" + 1 intercept" if self.fit_intercept else "")
                + (")" if outputs else "")
            )
        return theta

    def _single_output(self, what: str):
        """Refuse a method that needs one margin per record on a multinomial problem."""
        if self.n_outputs > 1:
            raise ValueError(
                f"{what} needs one margin per record; this problem's {self.datafit.name} "
                f"datafit has {self.n_outputs} (fit it with a gradient method: DP-SGD, DP-GD "
                "or DP-AGD)"
            )

    # -- values and gradients -----------------------------------------------------------

    def margins(self, theta):
        """Margins ``z_i = x_i . w + b`` of every sample (``(n, K)``: ``X W^T + b``)."""
        coef, intercept = self.split(theta)
        if self.n_outputs > 1:
            return np.asarray(self.features @ coef.T) + intercept
        return np.asarray(self.features @ coef).ravel() + intercept

    def datafit_value(self, theta) -> float:
        """Empirical risk ``(1/n) sum_i l(z_i, y_i)``."""
        return float(np.mean(self.datafit.loss(self.margins(theta), self.y)))

    def penalty_value(self, theta) -> float:
        """Penalty ``psi(w)`` of the coefficients (the intercept is not penalised)."""
        coef = self.split(theta)[0]
        if self.n_outputs > 1:
            return float(sum(self.penalty.value(row) for row in coef))
        return self.penalty.value(coef)

    def objective(self, theta) -> float:
        """Objective ``F(theta)``: empirical risk plus penalty."""
        return self.datafit_value(theta) + self.penalty_value(theta)

    def derivatives(self, theta):
        """Per-sample derivatives ``s_i = l'(z_i, y_i)`` at ``theta``."""
        return self.datafit.derivative(self.margins(theta), self.y)

    def gradient(self, theta, derivatives=None):
        """Gradient of the empirical risk (the smooth part), length ``n_coords``.

        Parameters
        ----------
        theta : ndarray of shape (n_coords,)
        derivatives : ndarray of shape (n_samples,), optional
            Precomputed ``l'(z_i, y_i)``; computed from ``theta`` when omitted.
        """
        s = (
            self.derivatives(theta)
            if derivatives is None
            else self._check_derivatives(derivatives)
        )
        if self.n_outputs > 1:
            grad = np.asarray(self.features.T @ s).T.ravel() / self.n_samples
            if self.fit_intercept:
                grad = np.concatenate([grad, s.mean(axis=0)])
            return grad
        grad = np.asarray(self.features.T @ s).ravel() / self.n_samples
        if self.fit_intercept:
            grad = np.append(grad, np.mean(s))
        return grad

    def coordinate_gradient(self, theta, j: int) -> float:
        """Partial derivative of the empirical risk along coordinate ``j``."""
        self._single_output("coordinate_gradient")
        self._check_coordinate(j)
        s = self.derivatives(theta)
        if j == self.n_features:
            return float(np.mean(s))
        return float(self._column(j) @ s) / self.n_samples

    def clipped_gradient(self, theta, clip, derivatives=None):
        """Gradient with every per-sample, per-coordinate term clipped.

        Coordinate ``j`` is ``(1/n) sum_i clip(l'(z_i, y_i) X_ij, -clip_j, clip_j)``,
        so replacing one sample moves it by at most ``2 clip_j / n``: the
        sensitivity coordinate-wise private methods calibrate their noise to.

        Parameters
        ----------
        theta : ndarray of shape (n_coords,)
        clip : float or ndarray of shape (n_coords,)
            Non-negative thresholds (``inf`` for no clipping).
        derivatives : ndarray of shape (n_samples,), optional
            Precomputed ``l'(z_i, y_i)``.

        Examples
        --------
        >>> import numpy as np
        >>> prob = Problem(np.array([[1.0], [3.0]]), np.zeros(2), "squared")
        >>> prob.clipped_gradient(np.array([1.0]), 2.0)
        array([1.5])
        """
        self._single_output("clipped_gradient")
        if derivatives is None:
            # an extreme record's margin may overflow: its terms are clipped below
            with np.errstate(over="ignore", invalid="ignore"):
                s = self.derivatives(theta)
        else:
            s = self._check_derivatives(derivatives)
        clip = self._check_clip(clip)
        out = np.empty(self.n_features)
        if sp.issparse(self.X):
            X = self.X
            _kernels.clipped_gradient_csc(
                X.data, X.indices, X.indptr, self.n_samples, s, clip[: self.n_features], out
            )
        else:
            _kernels.clipped_gradient_dense(self.X, s, clip[: self.n_features], out)
        if self.fit_intercept:
            out = np.append(out, np.mean(clip_terms(s, clip[-1])))
        return out

    def _check_derivatives(self, s):
        # the kernels do no bounds checks: a wrong length must never reach them
        s = np.ascontiguousarray(s, dtype=float)
        shape = (self.n_samples,) if self.n_outputs == 1 else (self.n_samples, self.n_outputs)
        if s.shape != shape:
            raise ShapeMismatchError(
                f"derivatives has shape {s.shape}; expected {shape}, one per sample"
            )
        return s

    def _check_clip(self, clip):
        clip = _per_coordinate("clip", clip, self.n_coords, "coordinate")
        bad = np.flatnonzero(np.isnan(clip) | (clip < 0))
        if bad.size:
            j = int(bad[0])
            raise ValueError(f"clipping thresholds must be >= 0; coordinate {j} has {clip[j]!r}")
        return clip

    def _check_coordinate(self, j):
        if not 0 <= j < self.n_coords:
            raise IndexError(f"coordinate {j} out of range [0, {self.n_coords})")

    def _column(self, j):
        if sp.issparse(self.X):
            return self.X[:, [j]].toarray().ravel()
        return self.X[:, j]

    # -- smoothness and clipping --------------------------------------------------------

    def coordinate_smoothness(self, feature_bounds=None):
        """Coordinate-wise smoothness constants ``M_j`` of the empirical risk.

        ``M_j = curvature * (1/n) sum_i X_ij**2`` from the data, or the
        data-independent upper bound ``curvature * B_j**2`` from public feature
        bounds ``|X_ij| <= B_j``. The intercept coordinate has ``curvature``.

        Parameters
        ----------
        feature_bounds : float or array_like of shape (n_features,), optional
            Public bounds on the absolute value of each feature. When omitted,
            ``M_j`` is computed from the data and a
            :class:`~dpglm.exceptions.PrivacyLeakWarning` is emitted.

        Returns
        -------
        ndarray of shape (n_coords,)

        Examples
        --------
        >>> import numpy as np
        >>> prob = Problem(np.array([[1.0, 2.0], [-1.0, 0.0]]), np.zeros(2), "squared")
        >>> prob.coordinate_smoothness(feature_bounds=[1.0, 2.0])
        array([1., 4.])
        """
        self._single_output("coordinate_smoothness")
        if not self.datafit.smooth:
            raise ValueError(
                f"the {self.datafit.name} loss is not smooth, so it has no coordinate-wise "
                "smoothness constants; use a smooth loss (e.g. 'squared_hinge')"
            )
        if feature_bounds is None:
            warn_privacy_leak(
                "coordinate-wise smoothness constants M_j computed from the raw data without "
                "privacy; pass public feature bounds to avoid this leak",
                stacklevel=2,
            )
            sq = column_mean_squares(self.features)
        else:
            bounds = _per_coordinate("feature_bounds", feature_bounds, self.n_features, "column")
            bad = np.flatnonzero(~np.isfinite(bounds) | (bounds < 0))
            if bad.size:
                raise ValueError(
                    f"feature_bounds must be finite and >= 0; column {int(bad[0])} has "
                    f"{bounds[bad[0]]!r}"
                )
            sq = bounds * bounds
        M = self.datafit.curvature * sq
        if self.fit_intercept:
            M = np.append(M, self.datafit.curvature)
        return M

    @staticmethod
    def coordinate_clipping(clip: float, smoothness):
        """Split one clipping threshold across coordinates: ``C_j = C sqrt(M_j / sum M)``.

        The rule of DP-CD (Mangold et al. 2022): coordinates with larger
        smoothness get a larger share, and ``sum_j C_j**2 = C**2``.

        Examples
        --------
        >>> Problem.coordinate_clipping(1.0, [1.0, 3.0])
        array([0.5      , 0.8660254])
        """
        M = np.asarray(smoothness, dtype=float)
        total = M.sum()
        if not total > 0:
            raise ValueError("coordinate smoothness constants must have a positive sum")
        return float(clip) * np.sqrt(M / total)

    # -- composite structure ------------------------------------------------------------

    def prox(self, theta, step):
        """Prox of ``step * psi`` on the coefficients; the intercept passes through.

        Parameters
        ----------
        theta : ndarray of shape (n_coords,)
        step : float or ndarray of shape (n_coords,)
        """
        theta = self._check_theta(theta)
        step = _per_coordinate("step", step, self.n_coords, "coordinate")
        out = theta.copy()
        for rows in self.penalty_rows():  # the penalty applies to each class's coefficients
            out[rows] = self.penalty.prox(theta[rows], step[rows])
        return out

    def optimality_violation(self, theta) -> float:
        """Largest coordinate-wise violation of the optimality conditions.

        ``max_j min_{xi in d psi_j} |grad_j + xi|``: zero exactly at a
        coordinate-wise stationary point (for the separable penalties, at the
        minimiser).
        """
        theta = self._check_theta(theta)
        grad = self.gradient(theta)
        weights = self.n_outputs * self.n_features
        dist = np.concatenate(
            [
                self.penalty.subdiff_distance(theta[rows], grad[rows])
                for rows in self.penalty_rows()
            ]
            + [np.abs(grad[weights:])]
        )
        return float(np.max(dist, initial=0.0))

    def penalty_rows(self) -> list:
        """The slices of ``theta`` the penalty applies to: one per class, each of length ``p``.

        Examples
        --------
        >>> import numpy as np
        >>> from dpglm.datafits import Multinomial
        >>> prob = Problem(np.eye(2), np.array([0.0, 2.0]), Multinomial(3), fit_intercept=True)
        >>> prob.penalty_rows(), prob.n_coords
        ([slice(0, 2, None), slice(2, 4, None), slice(4, 6, None)], 9)
        """
        p = self.n_features
        return [slice(k * p, (k + 1) * p) for k in range(self.n_outputs)]

    # -- data access: what the solvers ask of their data (see dpglm.access) -----------------

    def in_memory(self, solver: str):
        """The problem with every record in this process: itself.

        What a solver whose every step needs state fresh from the previous one
        (DP-CD, DP-SCD) asks for; a
        :class:`~dpglm.distributed.data_parallel.ShardedProblem` refuses.

        Examples
        --------
        >>> import numpy as np
        >>> prob = Problem(np.eye(2), np.zeros(2), "squared")
        >>> prob.in_memory("DP-CD") is prob
        True
        """
        return self

    def dense_entries(self, n_columns=None) -> float:
        """Entries a dense kernel reads in one pass over ``n_columns`` columns (all by default).

        What sizes the kernels' threads (:func:`~dpglm._kernels.jit.threads_for`):
        ``inf`` for sparse features, whose kernels keep the default threads.

        Examples
        --------
        >>> import numpy as np
        >>> prob = Problem(np.ones((4, 3)), np.zeros(4), "squared")
        >>> prob.dense_entries(), prob.dense_entries(2)
        (12, 8)
        """
        if sp.issparse(self.features):
            return math.inf
        return self.n_samples * (self.n_features if n_columns is None else n_columns)

    def column_square_means(self, ceilings=None):
        """``(1/n) sum_i X_ij**2`` of every column, or ``(1/n) sum_i min(X_ij**2, ceilings_j)``.

        The column statistics behind the smoothness constants ``M_j``
        (:mod:`dpglm.solvers.smoothness`): computed from the data, **not
        private**; with ``ceilings`` each record's square is clipped on its own.

        Parameters
        ----------
        ceilings : ndarray of shape (n_features,), optional

        Returns
        -------
        ndarray of shape (n_features,)

        Examples
        --------
        >>> import numpy as np
        >>> prob = Problem(np.array([[3.0, 1.0], [1.0, 1.0]]), np.zeros(2), "squared")
        >>> prob.column_square_means(), prob.column_square_means(np.array([4.0, 4.0]))
        (array([5., 1.]), array([2.5, 1. ]))
        """
        if ceilings is None:
            return column_mean_squares(self.X)
        return clipped_column_mean_squares(self.X, ceilings)

    def clipped_gradient_tracker(self, clip):
        """DP-GCD's clipped gradient at ``theta = 0``, kept up to date coordinate move after move.

        See :class:`~dpglm.access.tracker.ClippedGradientTracker`.

        Examples
        --------
        >>> import numpy as np
        >>> prob = Problem(np.array([[1.0, 2.0], [3.0, 0.0]]), np.ones(2), "squared")
        >>> tracker = prob.clipped_gradient_tracker(np.array([0.5, 0.5]))
        >>> tracker.move(0, 1.0)
        >>> tracker.gradient(1)
        array([0.25, 0.  ])
        """
        self._single_output("clipped_gradient_tracker")
        return ClippedGradientTracker(self, clip)

    def gradient_sums(self, clip_grad, clip_obj=math.inf):
        """Sums of L2-clipped per-sample gradients, and DP-AGD's candidate scores.

        What DP-AGD and DP-GD release, see :class:`~dpglm.access.sums.GradientSums`.

        Examples
        --------
        >>> import numpy as np
        >>> prob = Problem(np.array([[3.0, 4.0]]), np.ones(1), "squared")
        >>> total, z = prob.gradient_sums(clip_grad=1.0).gradient_sum(np.zeros(2))
        >>> total
        array([-0.6, -0.8])
        """
        return GradientSums(self, clip_grad, clip_obj)

    def margin_blocks(self, order, bounds, clip):
        """Frank-Wolfe's blocks of columns, with the margins shared by all blocks.

        See :class:`~dpglm.access.blocks.MarginBlocks`.

        Examples
        --------
        >>> import numpy as np
        >>> prob = Problem(np.eye(3), np.ones(3), "squared")
        >>> blocks = prob.margin_blocks(np.array([2, 0, 1]), np.array([0, 1, 3]), 1.0)
        >>> blocks.derivatives()
        >>> out = np.empty(2)
        >>> blocks.gradient(1, out)  # the block of columns 0 and 1
        >>> out
        array([-0.33333333, -0.33333333])
        """
        self._single_output("margin_blocks")
        return MarginBlocks(self, order, bounds, clip)

    def batch_steps(self, theta, clip, sigma, step, inv_b, penalty_arrays):
        """DP-SGD's steps on the rows of sampled batches, updating ``theta`` in place.

        See :class:`~dpglm.access.batches.BatchSteps`.

        Examples
        --------
        >>> import numpy as np
        >>> prob = Problem(np.array([[1.0], [2.0]]), np.array([1.0, 2.0]), "squared")
        >>> theta, free = np.zeros(1), (np.zeros(1), np.zeros(1), -np.ones(1), np.ones(1))
        >>> prob.batch_steps(theta, np.inf, 0.0, 0.5, 1.0, free).run(
        ...     np.array([1]), np.array([1]), np.zeros((1, 1))
        ... )
        >>> theta  # 0 - 0.5 * (-4), then the box [-1, 1]
        array([1.])
        """
        return BatchSteps(self, theta, clip, sigma, step, inv_b, penalty_arrays)

    def __repr__(self) -> str:
        kind = "sparse" if sp.issparse(self.features) else "dense"
        return (
            f"Problem({self.n_samples}x{self.n_features} {kind}, datafit={self.datafit!r}, "
            f"penalty={self.penalty!r}, fit_intercept={self.fit_intercept})"
        )
