"""Kernels of multinomial DP-SGD: many noisy steps per call, each record clipped over all classes.

``theta`` holds the ``K x p`` coefficients row by row, then (with
``fit_intercept``) the ``K`` intercepts: the layout of
:class:`~dpglm.problem.Problem` with a :class:`~dpglm.datafits.Multinomial`
datafit. Step ``t`` reads batch ``B_t`` (the next ``counts[t]`` entries of
``rows``) and, for each of its records at the step's starting point,

* computes the scores ``z_k = w_k . x_i + b_k`` and the residual
  ``r = softmax(z) - e_{y_i}``;
* scales it by ``f_i = min(1, C / (||r|| row_norms[i]))``, which clips the
  record's whole gradient ``r (x_i, 1)^T`` (all ``K`` rows at once) to
  Frobenius norm ``C``; a residual that is not finite (scores that
  overflowed) contributes nothing;

then takes the proximal step of :func:`~dpglm._kernels.stochastic.prox_update`
with the sum, the step's noise ``sigma * noise[t]`` and ``inv_b``. Inputs are
validated by the Python caller; the kernels do no bounds checks.
"""

from __future__ import annotations

import math

import numpy as np

from dpglm._kernels.elementwise import SMALLEST_NORMAL, bounded_loss, factor_below
from dpglm._kernels.full_gradient import add_lipschitz_path
from dpglm._kernels.jit import kernel
from dpglm._kernels.stochastic import prox_update


@kernel
def residual_scale(scores, label, row_norm, clip):
    """Turn ``scores`` into the clipped residual ``f (softmax(scores) - e_label)`` in place.

    Returns ``f``, the factor that clips the record's gradient to norm
    ``clip`` (0 when the residual is not finite).

    Examples
    --------
    >>> import numpy as np
    >>> scores = np.zeros(2)
    >>> round(float(residual_scale(scores, 0, 2.0, 0.5)), 6), scores
    (0.353553, array([-0.1767767,  0.1767767]))
    """
    k = scores.shape[0]
    top = scores[0]
    for c in range(1, k):
        if scores[c] > top:
            top = scores[c]
    total = 0.0
    for c in range(k):
        scores[c] = math.exp(scores[c] - top)
        total += scores[c]
    squares = 0.0
    for c in range(k):
        r = scores[c] / total - (1.0 if c == label else 0.0)
        scores[c] = r
        squares += r * r
    size = math.sqrt(squares) * row_norm
    # NaN (overflowed scores) fails every comparison: such a record contributes nothing
    factor = 0.0
    if size <= clip:
        factor = 1.0
    elif size > clip and size < math.inf:
        factor = factor_below(clip / size)
    for c in range(k):
        v = scores[c] * factor
        if factor < 1.0 and abs(v) < SMALLEST_NORMAL:
            # a product rounded into the subnormals may be half a step over: one step back
            v = math.copysign(factor_below(abs(v)), v)
        scores[c] = v
    return factor


@kernel
def multinomial_steps_dense(
    X, y, row_norms, counts, rows, noise, theta, grad, scores,
    sigma, clip, step, inv_b, l1, l2, lo, hi, fit_intercept,
):  # fmt: skip
    """Run ``counts.shape[0]`` multinomial DP-SGD steps on a dense C-order ``X``.

    Parameters
    ----------
    X : ndarray of shape (n, p), C order
    y : ndarray of shape (n,)
        Class codes ``0, ..., K-1`` (as floats).
    row_norms : ndarray of shape (n,)
        ``||(x_i, 1)||`` with an intercept, ``||x_i||`` without.
    counts, rows, noise
        As in :func:`~dpglm._kernels.stochastic.sgd_steps_dense`; ``noise``
        has ``n_coords`` columns.
    theta : ndarray of shape (n_coords,)
        ``K p`` coefficients then ``K`` intercepts (with ``fit_intercept``),
        updated in place.
    grad : ndarray of shape (n_coords,)
        Scratch.
    scores : ndarray of shape (K,)
        Scratch; its length is ``K``.
    sigma, clip, step, inv_b, l1, l2, lo, hi
        As in :func:`~dpglm._kernels.stochastic.sgd_steps_dense`.
    fit_intercept : bool

    Examples
    --------
    >>> import numpy as np
    >>> X, y = np.array([[1.0]]), np.array([1.0])
    >>> theta, zeros, inf = np.zeros(2), np.zeros(2), np.full(2, np.inf)
    >>> multinomial_steps_dense(
    ...     X, y, np.ones(1), np.array([1]), np.array([0]), np.zeros((1, 2)), theta,
    ...     np.empty(2), np.empty(2), 0.0, np.inf, 1.0, 1.0, zeros, zeros, -inf, inf, False,
    ... )  # fmt: skip
    >>> theta  # residual (0.5, -0.5): class 1's score goes up
    array([-0.5,  0.5])
    """
    p = X.shape[1]
    k = scores.shape[0]
    weights = k * p
    pos = 0
    for t in range(counts.shape[0]):
        for j in range(theta.shape[0]):
            grad[j] = 0.0
        stop = pos + counts[t]
        for m in range(pos, stop):
            i = rows[m]
            row = X[i]
            for c in range(k):
                z = theta[weights + c] if fit_intercept else 0.0
                base = c * p
                for j in range(p):
                    z += row[j] * theta[base + j]
                scores[c] = z
            if residual_scale(scores, int(y[i]), row_norms[i], clip) == 0.0:
                continue
            for c in range(k):
                r = scores[c]
                base = c * p
                for j in range(p):
                    grad[base + j] += r * row[j]
                if fit_intercept:
                    grad[weights + c] += r
        pos = stop
        prox_update(theta, grad, noise[t], sigma, step, inv_b, l1, l2, lo, hi)


@kernel
def multinomial_steps_csr(
    data, indices, indptr, y, row_norms, counts, rows, noise, theta, grad, scores,
    sigma, clip, step, inv_b, l1, l2, lo, hi, n_features, fit_intercept,
):  # fmt: skip
    """Run ``counts.shape[0]`` multinomial DP-SGD steps on a CSR ``X``.

    Same parameters as :func:`multinomial_steps_dense`, with ``X`` given by
    its CSR arrays ``data, indices, indptr`` and its width ``n_features``;
    only the stored entries of the batch rows are read.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.sparse import csr_array
    >>> A, y = csr_array(np.array([[1.0]])), np.array([1.0])
    >>> theta, zeros, inf = np.zeros(2), np.zeros(2), np.full(2, np.inf)
    >>> multinomial_steps_csr(
    ...     A.data, A.indices, A.indptr, y, np.ones(1), np.array([1]), np.array([0]),
    ...     np.zeros((1, 2)), theta, np.empty(2), np.empty(2), 0.0, np.inf, 1.0, 1.0,
    ...     zeros, zeros, -inf, inf, 1, False,
    ... )  # fmt: skip
    >>> theta
    array([-0.5,  0.5])
    """
    p = n_features
    k = scores.shape[0]
    weights = k * p
    pos = 0
    for t in range(counts.shape[0]):
        for j in range(theta.shape[0]):
            grad[j] = 0.0
        stop = pos + counts[t]
        for m in range(pos, stop):
            i = rows[m]
            lo_i, hi_i = indptr[i], indptr[i + 1]
            for c in range(k):
                z = theta[weights + c] if fit_intercept else 0.0
                base = c * p
                for kk in range(lo_i, hi_i):
                    z += data[kk] * theta[base + indices[kk]]
                scores[c] = z
            if residual_scale(scores, int(y[i]), row_norms[i], clip) == 0.0:
                continue
            for c in range(k):
                r = scores[c]
                base = c * p
                for kk in range(lo_i, hi_i):
                    grad[base + indices[kk]] += r * data[kk]
                if fit_intercept:
                    grad[weights + c] += r
        pos = stop
        prox_update(theta, grad, noise[t], sigma, step, inv_b, l1, l2, lo, hi)


@kernel
def _shifted_loss(z, u, i, a, label):
    """``logsumexp(z_i - a u_i) - (z_i - a u_i)_label``, the multinomial loss at step ``a``."""
    k = z.shape[1]
    top = z[i, 0] - a * u[i, 0]
    for c in range(1, k):
        v = z[i, c] - a * u[i, c]
        if v > top:
            top = v
    total = 0.0
    for c in range(k):
        total += math.exp(z[i, c] - a * u[i, c] - top)
    return top + math.log(total) - (z[i, label] - a * u[i, label])


@kernel
def multinomial_candidate_losses(z, u, y, steps, clip, out):
    """``out[j] = sum_i min(l(z_i - steps[j] u_i, y_i), clip)`` for the multinomial loss.

    DP-AGD's clipped objective at each candidate step along a direction,
    ``l(z, y) = logsumexp(z) - z_y`` on every record's ``K`` scores; a loss
    that is NaN or infinite (scores that overflowed) counts as ``clip``.

    Parameters
    ----------
    z, u : ndarray of shape (n, K)
        Scores at the current iterate and their change along the direction.
    y : ndarray of shape (n,)
        Class codes.
    steps : ndarray of shape (k,)
    clip : float
    out : ndarray of shape (k,)

    Examples
    --------
    >>> import numpy as np
    >>> z, u = np.zeros((1, 2)), np.array([[1.0, -1.0]])
    >>> out = multinomial_candidate_losses(
    ...     z, u, np.array([0.0]), np.array([0.0, 1.0]), 10.0, np.empty(2)
    ... )
    >>> np.round(out, 4)  # log 2, then log(1 + e**2)
    array([0.6931, 2.1269])
    """
    for j in range(steps.shape[0]):
        out[j] = 0.0
    for i in range(z.shape[0]):
        label = int(y[i])
        for j in range(steps.shape[0]):
            # the loss reads the largest score twice, and the two passes may round apart
            # (to -inf where the sum of exponentials underflows)
            out[j] += bounded_loss(_shifted_loss(z, u, i, steps[j], label), clip)
    return out


@kernel
def multinomial_candidate_changes(z, u, y, steps, scale, slopes, out):
    """``out[j] = sum_i scale_i (l(z_i - steps[j] u_i) - l(z_i))`` for the multinomial loss.

    The loss's gradient in the scores, ``softmax(z) - e_y``, has L2 norm at
    most ``sqrt(2)``, so record ``i``'s term moves by at most
    ``scale_i sqrt(2) ||u_i|| |a - b|`` between the candidates ``a`` and ``b``:
    DP-AGD's ``scale_i = min(1, C / (sqrt(2) ||u_i||))`` makes it
    ``C``-Lipschitz in the step size.
    :func:`~dpglm._kernels.full_gradient.add_lipschitz_path` keeps it so under
    rounding, and leaves out a record whose changes are not finite (scores
    that overflowed).

    Parameters
    ----------
    z, u : ndarray of shape (n, K)
        Scores at the current iterate and their change along the direction.
    y : ndarray of shape (n,)
        Class codes.
    steps : ndarray of shape (k,)
        Candidate step sizes, ascending and non-negative.
    scale : ndarray of shape (n,)
        Every record's weight, in ``[0, 1]``.
    slopes : ndarray of shape (n,)
        Every record's bound ``scale_i sqrt(2) ||u_i||`` (``min(sqrt(2) ||u_i||, C)``
        for DP-AGD's weights), from the caller: a sum of squares here could
        overflow where the caller's did not.
    out : ndarray of shape (k,)

    Examples
    --------
    >>> import numpy as np
    >>> z, u = np.zeros((1, 2)), np.array([[1.0, -1.0]])
    >>> steps, half = np.array([0.0, 1.0]), np.array([0.5])
    >>> out = multinomial_candidate_changes(z, u, np.zeros(1), steps, half, half * 2, np.empty(2))
    >>> np.round(out, 4)  # half of log(1 + e**2) - log 2
    array([0.    , 0.7169])
    """
    values = np.empty(steps.shape[0])
    for j in range(steps.shape[0]):
        out[j] = 0.0
    for i in range(z.shape[0]):
        weight = scale[i]
        if not weight > 0.0:
            continue
        label = int(y[i])
        for j in range(steps.shape[0]):
            values[j] = weight * _shifted_loss(z, u, i, steps[j], label)
        base = weight * _shifted_loss(z, u, i, 0.0, label)
        add_lipschitz_path(out, values, base, steps, slopes[i])
    return out
