"""Mini-batch dual coordinate steps of DP-SCD (Damaskinos et al. 2021, Algorithm 1).

The state is the dual vector ``alpha`` (one entry per record) and the shared
vector ``v`` (``X^T alpha`` in the absence of noise). Each step takes a batch
``B`` and, for every ``j`` in ``B``, the minimiser ``zeta_j`` of the local
subproblem (8), scaled to ``|zeta_j| <= C`` (an infinite ``zeta_j`` becomes
``+-C`` and a NaN one, from an extreme record's overflowed margin, 0); then

    ``alpha_B += zeta_B + sigma * noise_B`` and ``v += sum_j zeta_j x_j + sigma * noise_v``,

with the noise on every entry of ``alpha`` instead of ``B`` alone when asked
(``noise_all``, the solver's mode for batches drawn without replacement).

In the parallel (DP-SCD) mode every ``zeta_j`` is computed against the same
``(alpha, v)``; in the sequential mode (SeqDP-SCD) each update is applied to
``v`` before the next one is computed. Rows are read scaled by ``scale[i]``
(``1 / ||x_i||``, so the solver never copies the data to normalise it).

An intercept is a constant feature appended to every row (liblinear's way):
given ``bias`` (one entry per record), row ``i`` is read as
``(scale[i] x_i, bias[i])`` and ``v`` has one more entry, the constant's, last.
With ``bias[i] = s / ||(x_i, s)||`` and ``scale[i] = 1 / ||(x_i, s)||`` that is
the row ``(x_i, s)`` normalised, without a copy of ``X`` with the column. An
empty ``bias`` means no constant feature.

The coordinate update is the datafit's ``dual_step`` (:mod:`dpglm.datafits`):
``d`` minimising ``l*(-(alpha + d)) + z d + s d^2 / 2`` with the margin
``z = x . v / (lambda N)`` and ``s = c ||x||^2 / (lambda N)`` (``c = L`` for the
parallel mode, 1 for the sequential one).
"""

from __future__ import annotations

import math

import numpy as np

from dpglm._kernels.jit import kernel

_SQUARED = 0
_LOGISTIC = 1
_HINGE = 2
_SQUARED_HINGE = 3


@kernel
def dual_step(code, dual_box, alpha, y, z, s):
    """Scalar ``dual_step`` of the datafit with kernel ``code`` (see :mod:`dpglm.datafits`).

    Examples
    --------
    >>> round(dual_step(0, 0.0, 0.0, 1.0, 0.0, 1.0), 6)
    0.5
    """
    if code == _SQUARED:
        return (y - z - alpha) / (1.0 + s)
    if code == _LOGISTIC:
        lo, hi = dual_box, 1.0 - dual_box
        start = min(max(y * alpha, lo), hi)
        grad = y * math.log(start / (1.0 - start)) + z
        hess = 1.0 / (start * (1.0 - start)) + s
        new = min(max(start - y * grad / hess, lo), hi)
        return y * new - alpha
    if code == _HINGE:
        new = min(max(y * alpha + (1.0 - y * z) / s, 0.0), 1.0)
        return y * new - alpha
    # squared hinge
    step = (y - z - 0.5 * alpha) / (s + 0.5)
    return y * max(0.0, y * (alpha + step)) - alpha


@kernel
def _scaled_step(code, dual_box, alpha_j, y_j, z, s, clip):
    # |zeta| <= C for every record: an extreme record's step may overflow (inf, whose
    # rescaling inf * 0 would be NaN) or be NaN (an overflowed margin), so an infinite
    # step becomes +-C and a NaN one 0
    zeta = dual_step(code, dual_box, alpha_j, y_j, z, s)
    size = abs(zeta)
    if size > clip:
        # +-C exactly: zeta * (C / size) may round above C where C / size is subnormal
        return clip if zeta > 0.0 else -clip
    elif size != size:
        return 0.0
    return zeta


@kernel
def _standard_normal(drawn, index, generator, inline):
    # inline draws come from the fit's own Generator inside the kernel (2.5 ns each
    # against 12 ns for numpy's bulk draws, the same stream); the secure source has no
    # Generator and hands its draws over in advance
    if inline:
        return generator.standard_normal()
    return drawn[index]


@kernel
def _add_step_noise(v, sigma, drawn, first, generator, inline):
    for c in range(v.shape[0]):
        v[c] += sigma * _standard_normal(drawn, first + c, generator, inline)


@kernel
def _subproblem(si, margin, square, bias, i, v, curvature, lambda_n):
    """``(z, s)`` of record ``i``: its margin and the curvature of its subproblem.

    ``margin`` and ``square`` are ``x_i . v`` and ``||x_i||^2`` over the features;
    the constant feature ``bias[i]``, if any, adds its weight (``v``'s last entry).
    """
    if bias.shape[0] == 0:
        # without the constant, the expressions of the fit without intercept, bit for bit
        return si * margin / lambda_n, curvature * (si * si * square) / lambda_n
    b = bias[i]
    z = (si * margin + b * v[v.shape[0] - 1]) / lambda_n
    s = curvature * (si * si * square + b * b) / lambda_n
    return z, s


@kernel
def _add_constant(bias, i, v, step):
    # the constant feature's part of the update of v: step * bias[i] on its weight
    if bias.shape[0] != 0:
        v[v.shape[0] - 1] += step * bias[i]


@kernel
def _row_square(X, i):
    total = 0.0
    for c in range(X.shape[1]):
        total += X[i, c] * X[i, c]
    return total


@kernel
def scd_steps_dense(
    X,
    y,
    scale,
    bias,
    counts,
    rows,
    noise_alpha,
    noise_v,
    alpha,
    v,
    zeta,
    sigma,
    clip,
    lambda_n,
    curvature,
    code,
    dual_box,
    sequential,
    noise_all,
    generator,
    inline,
):
    """Run ``counts.size`` DP-SCD steps on C-ordered dense rows, in place.

    Parameters
    ----------
    X : ndarray of shape (n, p), C order
    y, scale : ndarray of shape (n,)
        Targets and row scales (``1 / ||x_i||``, 0 for a zero row; with a
        constant feature ``1 / ||(x_i, s)||``).
    bias : ndarray of shape (n,) or (0,)
        The constant feature of each row as read (``s / ||(x_i, s)||``, its
        weight ``v[-1]``); empty: no constant feature.
    counts : ndarray of int64
        Batch size of each step; ``rows`` holds the batches one after the other.
    noise_alpha : ndarray of shape (counts.sum(),) or (counts.size * n,)
        Standard normal noise for ``alpha`` on each batch entry, or on every
        entry at every step with ``noise_all`` (read unless ``inline``).
    noise_v : ndarray of shape (counts.size * v.size,)
        Standard normal noise for ``v``, step after step (read unless ``inline``).
    alpha, v : ndarray of shape (n,) and (p,), or (p + 1,) with a constant feature
        The state, updated in place.
    zeta : ndarray of shape (>= max(counts),)
        Work space.
    sigma, clip : float
        Noise standard deviation and bound ``C`` on ``|zeta_j|``.
    lambda_n : float
        ``lambda * N``.
    curvature : float
        ``L`` (parallel) or 1 (sequential), the factor of ``s``.
    code, dual_box : int, float
        The datafit.
    sequential : bool
        SeqDP-SCD: apply each update before computing the next.
    noise_all : bool
        Add noise to every entry of ``alpha`` at every step (then
        ``noise_alpha`` holds ``counts.size * n`` values), not only to the
        batch's entries.
    generator : numpy.random.Generator
        Source of the noise when ``inline``.
    inline : bool
        Draw the noise from ``generator`` as it is needed (for each step, its
        batch entries, or all of ``alpha`` with ``noise_all``, then ``v``)
        instead of reading ``noise_alpha`` and ``noise_v``. No noise is drawn
        when ``sigma == 0``.

    Examples
    --------
    >>> import numpy as np
    >>> X, y = np.ones((1, 1)), np.ones(1)
    >>> alpha, v = np.zeros(1), np.zeros(1)
    >>> scd_steps_dense(
    ...     X, y, np.ones(1), np.zeros(0), np.ones(1, np.int64), np.zeros(1, np.int64),
    ...     np.zeros(1), np.zeros(1), alpha, v, np.zeros(1), 0.0, np.inf, 1.0, 1.0, 0, 0.0,
    ...     False, False, np.random.default_rng(0), False,
    ... )  # fmt: skip
    >>> alpha, v
    (array([0.5]), array([0.5]))

    The row ``3`` with the constant ``s = 4`` is read as ``(3, 4) / 5``:

    >>> alpha, v = np.zeros(1), np.zeros(2)
    >>> scd_steps_dense(
    ...     3 * X, y, np.array([0.2]), np.array([0.8]), np.ones(1, np.int64),
    ...     np.zeros(1, np.int64), np.zeros(1), np.zeros(2), alpha, v, np.zeros(1), 0.0,
    ...     np.inf, 1.0, 1.0, 0, 0.0, False, False, np.random.default_rng(0), False,
    ... )  # fmt: skip
    >>> alpha, v.round(12)
    (array([0.5]), array([0.3, 0.4]))
    """
    n, p = X.shape
    offset = 0
    for t in range(counts.size):
        k = counts[t]
        for b in range(k):
            i = rows[offset + b]
            margin = 0.0
            for c in range(p):
                margin += X[i, c] * v[c]
            si = scale[i]
            z, s = _subproblem(si, margin, _row_square(X, i), bias, i, v, curvature, lambda_n)
            zeta[b] = _scaled_step(code, dual_box, alpha[i], y[i], z, s, clip)
            if sequential:
                step = zeta[b] * si
                for c in range(p):
                    v[c] += step * X[i, c]
                _add_constant(bias, i, v, zeta[b])
        for b in range(k):
            i = rows[offset + b]
            alpha[i] += zeta[b]
            if sigma > 0.0 and not noise_all:
                alpha[i] += sigma * _standard_normal(noise_alpha, offset + b, generator, inline)
            if not sequential:
                step = zeta[b] * scale[i]
                for c in range(p):
                    v[c] += step * X[i, c]
                _add_constant(bias, i, v, zeta[b])
        if sigma > 0.0:
            if noise_all:
                _add_step_noise(alpha, sigma, noise_alpha, t * n, generator, inline)
            # every entry of v, the constant's weight included
            _add_step_noise(v, sigma, noise_v, t * v.shape[0], generator, inline)
        offset += k


@kernel
def scd_steps_csr(
    data,
    indices,
    indptr,
    y,
    scale,
    bias,
    counts,
    rows,
    noise_alpha,
    noise_v,
    alpha,
    v,
    zeta,
    sigma,
    clip,
    lambda_n,
    curvature,
    code,
    dual_box,
    sequential,
    noise_all,
    generator,
    inline,
):
    """:func:`scd_steps_dense` on CSR rows ``(data, indices, indptr)``.

    Examples
    --------
    >>> import numpy as np
    >>> alpha, v = np.zeros(1), np.zeros(2)
    >>> scd_steps_csr(
    ...     np.ones(1), np.array([1], np.int32), np.array([0, 1], np.int32), np.ones(1),
    ...     np.ones(1), np.zeros(0), np.ones(1, np.int64), np.zeros(1, np.int64), np.zeros(1),
    ...     np.zeros(2), alpha, v, np.zeros(1), 0.0, np.inf, 1.0, 1.0, 0, 0.0, False,
    ...     False, np.random.default_rng(0), False,
    ... )  # fmt: skip
    >>> v
    array([0. , 0.5])
    """
    n, p = alpha.shape[0], v.shape[0]
    offset = 0
    for t in range(counts.size):
        k = counts[t]
        for b in range(k):
            i = rows[offset + b]
            start, stop = np.intp(indptr[i]), np.intp(indptr[i + 1])
            margin = 0.0
            square = 0.0
            for q in range(start, stop):
                margin += data[q] * v[np.intp(indices[q])]
                square += data[q] * data[q]
            si = scale[i]
            z, s = _subproblem(si, margin, square, bias, i, v, curvature, lambda_n)
            zeta[b] = _scaled_step(code, dual_box, alpha[i], y[i], z, s, clip)
            if sequential:
                step = zeta[b] * si
                for q in range(start, stop):
                    v[np.intp(indices[q])] += step * data[q]
                _add_constant(bias, i, v, zeta[b])
        for b in range(k):
            i = rows[offset + b]
            alpha[i] += zeta[b]
            if sigma > 0.0 and not noise_all:
                alpha[i] += sigma * _standard_normal(noise_alpha, offset + b, generator, inline)
            if not sequential:
                step = zeta[b] * scale[i]
                for q in range(np.intp(indptr[i]), np.intp(indptr[i + 1])):
                    v[np.intp(indices[q])] += step * data[q]
                _add_constant(bias, i, v, zeta[b])
        if sigma > 0.0:
            if noise_all:
                _add_step_noise(alpha, sigma, noise_alpha, t * n, generator, inline)
            _add_step_noise(v, sigma, noise_v, t * p, generator, inline)
        offset += k
