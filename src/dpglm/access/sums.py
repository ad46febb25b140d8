"""Sums of per-sample L2-clipped gradients and clipped losses (DP-AGD, DP-GD).

A full-batch private gradient method releases ``sum_i clip_C(l'(z_i) (x_i, 1))``
(the 1 only with an intercept), each per-sample gradient clipped to L2 norm
``C``; DP-AGD also scores candidate step sizes ``a`` along a direction ``d``,
with ``u = X d``, by the change of the objective whose gradient the clipped
sum is (:func:`candidate_changes`) or, as in its paper, by the clipped losses
``sum_i min(l(z_i - a u_i), C_obj)`` (:func:`candidate_losses`). All are sums over
records of per-record terms, so a row chunk computes its part and a
coordinator adds the parts (:mod:`dpglm.distributed.data_parallel`).

:class:`GradientSums` holds what a fit keeps between its steps (the row norms);
a problem hands one out with
:meth:`Problem.gradient_sums <dpglm.problem.Problem.gradient_sums>`.

Examples
--------
>>> import numpy as np
>>> from dpglm.problem import Problem
>>> prob = Problem(np.array([[3.0, 4.0], [1.0, 0.0]]), np.array([1.0, 0.0]), "squared")
>>> total, z = GradientSums(prob, clip_grad=1.0).gradient_sum(np.zeros(2))
>>> total  # the first record's gradient (-3, -4) is scaled to norm 1
array([-0.6, -0.8])
"""

from __future__ import annotations

import math

import numpy as np

from dpglm import _kernels
from dpglm.clipping import l2_clip_coefficients, l2_clip_residuals, record_norms

__all__ = [
    "GradientSums",
    "candidate_changes",
    "candidate_losses",
    "clipped_gradient_sum",
    "row_norms",
]


def row_norms(problem) -> np.ndarray:
    """L2 norm of every record's feature vector ``(x_i, 1)`` (the 1 only with an intercept).

    Examples
    --------
    >>> from dpglm.problem import Problem
    >>> prob = Problem(np.array([[3.0, 4.0], [0.0, 0.0]]), np.zeros(2), "squared")
    >>> row_norms(prob)
    array([5., 0.])
    """
    return record_norms(problem.X, problem.fit_intercept)


def clipped_gradient_sum(problem, theta, clip: float, norms=None):
    """``sum_i clip_C(l'(z_i) (x_i, 1))`` and the margins ``z``, from one product each.

    A per-sample gradient's L2 norm is ``|l'(z_i)|`` times the row norm, so the
    clipped sum is one product ``X^T c``: no ``n x p`` array is formed. Each
    term is clipped on its own (a per-record operation): replacing one record
    moves the sum by at most ``2 C`` in L2.

    Parameters
    ----------
    problem : Problem
    theta : ndarray of shape (n_coords,)
        Coefficients, then the intercept when fitted.
    clip : float
        ``C``; ``inf`` sums the gradients unclipped.
    norms : ndarray of shape (n_samples,), optional
        :func:`row_norms` of the problem, computed here when not given.

    Returns
    -------
    total : ndarray of shape (n_coords,)
    z : ndarray of shape (n_samples,)

    Examples
    --------
    >>> from dpglm.problem import Problem
    >>> prob = Problem(np.array([[3.0, 4.0], [1.0, 0.0]]), np.array([1.0, 0.0]), "squared")
    >>> total, z = clipped_gradient_sum(prob, np.zeros(2), 1.0)
    >>> total  # the first record's gradient (-3, -4) is scaled to norm 1
    array([-0.6, -0.8])
    """
    # an extreme record's margin and derivative may overflow: clipping bounds them below
    with np.errstate(over="ignore", invalid="ignore"):
        z = problem.margins(theta)
        s = problem.datafit.derivative(z, problem.y)
    if problem.n_outputs > 1:
        return _clipped_residual_sum(problem, s, clip, norms), z
    if math.isfinite(clip):
        norms = row_norms(problem) if norms is None else norms
        # |l'(z_i)| times the row norm is the per-sample gradient's norm
        s = l2_clip_coefficients(s, norms, clip)
    total = np.asarray(problem.X.T @ s).ravel()
    if problem.fit_intercept:
        total = np.append(total, s.sum())
    return total, z


def _clipped_residual_sum(problem, residuals, clip, norms):
    """``sum_i clip_C(r_i (x_i, 1)^T)`` of a multinomial problem, in ``theta``'s layout."""
    if math.isfinite(clip):
        norms = row_norms(problem) if norms is None else norms
        residuals = l2_clip_residuals(residuals, norms, clip)
    total = np.asarray(problem.X.T @ residuals).T.ravel()
    if problem.fit_intercept:
        total = np.concatenate([total, residuals.sum(axis=0)])
    return total


def candidate_losses(problem, z, direction, steps, clip_obj: float) -> np.ndarray:
    """``sum_i min(l(z_i - a u_i), C_obj)`` for every candidate ``a``, with ``u = X d``.

    Parameters
    ----------
    problem : Problem
    z : ndarray of shape (n_samples,)
        Margins at the current iterate.
    direction : ndarray of shape (n_coords,)
        ``d`` (its last entry moves the intercept, when fitted).
    steps : ndarray of shape (k,)
        Candidate step sizes.
    clip_obj : float
        ``C_obj``; ``inf`` for no clipping.

    Examples
    --------
    >>> from dpglm.problem import Problem
    >>> prob = Problem(np.array([[1.0], [2.0]]), np.zeros(2), "squared")
    >>> candidate_losses(prob, np.zeros(2), np.array([1.0]), np.array([0.0, 1.0]), 1.0)
    array([0. , 1.5])
    """
    with np.errstate(over="ignore", invalid="ignore"):  # the kernel clips overflowed losses
        u = problem.margins(direction)
    if problem.n_outputs > 1:
        return _clipped_multinomial_losses(problem, z, u, steps, clip_obj)
    out = np.empty(steps.shape[0])
    _kernels.clipped_candidate_losses(
        problem.datafit.code, problem.datafit.param, z, u, problem.y, steps, clip_obj, out
    )
    return out


def slope_caps(norms, clip: float) -> np.ndarray:
    """Every record's slope cap ``C / ||(x_i, 1)||`` (``inf`` for a zero row or ``C = inf``).

    A loss whose slope in the margin is capped at it has per-sample gradients
    of L2 norm at most ``C``: its gradient is the clipped gradient.

    Examples
    --------
    >>> slope_caps(np.array([2.0, 0.0]), 1.0)
    array([0.5, inf])
    """
    caps = np.full(norms.shape[0], math.inf)
    if math.isfinite(clip):
        np.divide(clip, norms, out=caps, where=norms > 0)
    return caps


def candidate_changes(problem, z, direction, steps, clip: float, norms=None) -> np.ndarray:
    """The change of the clipped-gradient objective at every candidate step ``a`` along ``d``.

    For a scalar margin, ``sum_i h_i(z_i - a u_i) - h_i(z_i)`` with ``u = X d``
    and ``h_i`` the loss with its slope capped at ``C / ||(x_i, 1)||`` (a
    Huber-like loss whose gradient is the record's gradient clipped to L2 norm
    ``C``, :func:`~dpglm._kernels.huberised_loss`). For the multinomial loss,
    ``sum_i s_i (l(z_i - a u_i) - l(z_i))`` with ``s_i = min(1, C / (sqrt(2) ||u_i||))``,
    as the loss's gradient in the scores has norm at most ``sqrt(2)`` (the
    clipped gradients are not the gradient of any objective there).

    Either way every record's term is ``C``-Lipschitz in ``a`` along a unit
    direction (``|u_i| <= ||(x_i, 1)||``) and 0 at ``a = 0``, for every finite
    record: replacing one record moves the difference of two candidates' scores
    by at most ``2 C |a - b|``.

    Parameters
    ----------
    problem : Problem
        A smooth datafit.
    z : ndarray of shape (n_samples,) or (n_samples, K)
        Margins at the current iterate.
    direction : ndarray of shape (n_coords,)
        ``d`` (its last entries move the intercepts, when fitted).
    steps : ndarray of shape (k,)
        Candidate step sizes, ascending and non-negative.
    clip : float
        ``C``; ``inf`` for the plain loss changes.
    norms : ndarray of shape (n_samples,), optional
        :func:`row_norms` of the problem (a scalar margin's only), computed here
        when not given.

    Examples
    --------
    >>> from dpglm.problem import Problem
    >>> prob = Problem(np.array([[1.0], [2.0]]), np.zeros(2), "squared")
    >>> z, d, steps = np.zeros(2), np.array([1.0]), np.array([0.0, 1.0, 2.0])
    >>> candidate_changes(prob, z, d, steps, np.inf)  # (a**2 + 4 a**2) / 2
    array([ 0. ,  2.5, 10. ])
    >>> candidate_changes(prob, z, d, steps, 1.0)  # slopes capped at 1 and 1/2
    array([0.   , 1.375, 3.375])
    """
    if not problem.datafit.smooth:
        raise ValueError(
            f"the {problem.datafit.name} loss is not smooth: its changes along a direction "
            "are scored by DP-AGD's smooth losses only"
        )
    steps = np.ascontiguousarray(steps, dtype=float)
    if steps.ndim != 1 or not (steps[0] >= 0 and np.all(np.diff(steps) >= 0)):
        # the changes' bound is built along the steps in order, from 0
        raise ValueError(f"steps must be ascending and non-negative, got {steps!r}")
    with np.errstate(over="ignore", invalid="ignore"):  # the kernels skip overflowed records
        u = problem.margins(direction)
    out = np.empty(steps.shape[0])
    if problem.n_outputs > 1:
        z, u = np.ascontiguousarray(z, dtype=float), np.ascontiguousarray(u, dtype=float)
        # the scores move by at most sqrt(2) ||u_i|| per unit of step, and ||u_i|| is at
        # most ||(x_i, 1)|| along a unit direction (often far less, spread over K classes)
        with np.errstate(over="ignore", invalid="ignore"):
            moves = np.sqrt(2.0) * np.linalg.norm(u, axis=1)
        scale = np.minimum(1.0, slope_caps(moves, clip))
        slopes = np.minimum(moves, clip)
        y = np.ascontiguousarray(problem.y, dtype=float)
        return _kernels.multinomial_candidate_changes(z, u, y, steps, scale, slopes, out)
    datafit = problem.datafit
    if math.isfinite(clip) and norms is None:
        norms = row_norms(problem)
    caps = slope_caps(norms, clip) if math.isfinite(clip) else np.full(z.shape[0], math.inf)
    return _kernels.lipschitz_candidate_changes(
        datafit.code, datafit.param, z, u, problem.y, steps, caps, out
    )


def _clipped_multinomial_losses(problem, z, u, steps, clip_obj):
    """``sum_i min(l(z_i - a u_i), C_obj)`` for each candidate ``a`` (vector margins)."""
    out = np.empty(steps.shape[0])
    z, u = np.ascontiguousarray(z, dtype=float), np.ascontiguousarray(u, dtype=float)
    y = np.ascontiguousarray(problem.y, dtype=float)
    steps = np.ascontiguousarray(steps, dtype=float)
    return _kernels.multinomial_candidate_losses(z, u, y, steps, clip_obj, out)


class GradientSums:
    """Clipped gradient sums and clipped candidate losses of one in-memory problem.

    Parameters
    ----------
    problem : Problem
    clip_grad : float
        ``C_grad``, the L2 bound of every per-sample gradient (``inf``: no clipping).
    clip_obj : float, default=inf
        ``C_obj``, the bound of every per-sample loss in :meth:`losses`.

    Examples
    --------
    >>> from dpglm.problem import Problem
    >>> prob = Problem(np.array([[1.0], [2.0]]), np.zeros(2), "squared")
    >>> sums = GradientSums(prob, clip_grad=np.inf, clip_obj=1.0)
    >>> total, z = sums.gradient_sum(np.zeros(1))
    >>> total, sums.losses(z, np.array([1.0]), np.array([0.0, 1.0]))
    (array([0.]), array([0. , 1.5]))
    """

    def __init__(self, problem, clip_grad: float, clip_obj: float = math.inf):
        self.problem = problem
        self.clip_grad, self.clip_obj = clip_grad, clip_obj
        self.row_norms = None  # read on the first gradient sum, when clipping needs them

    def gradient_sum(self, theta):
        """``sum_i clip(l'(z_i) (x_i, 1))`` and the margins ``z``, from one product each.

        ``z`` is what :meth:`losses` takes back (``None`` from a sharded
        problem, whose margins stay on its row chunks).
        """
        if self.row_norms is None and math.isfinite(self.clip_grad):
            self.row_norms = row_norms(self.problem)
        return clipped_gradient_sum(self.problem, theta, self.clip_grad, self.row_norms)

    def losses(self, z, direction, steps):
        """The clipped losses of the candidates, see :func:`candidate_losses`."""
        return candidate_losses(self.problem, z, direction, steps, self.clip_obj)

    def changes(self, z, direction, steps):
        """The clipped-gradient objective's changes, see :func:`candidate_changes`.

        ``z`` comes from :meth:`gradient_sum`, which has read the row norms a
        finite clip needs.
        """
        return candidate_changes(self.problem, z, direction, steps, self.clip_grad, self.row_norms)
