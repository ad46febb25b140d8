"""DP-SCD: private stochastic dual coordinate descent (Damaskinos et al. 2021, Algorithm 1).

Problem and notation
    ``min_w (1/N) sum_i l(x_i . w, y_i) + (lambda / 2) ||w||^2``: dpglm's objective
    with an ``L2(alpha)`` penalty, so the paper's ``lambda`` is the penalty's
    ``alpha`` (> 0) and ``N`` the number of records. Only L2-penalised problems
    are handled, for the squared (ridge), logistic, hinge and squared hinge
    losses, with or without intercept.

Row normalisation
    The first step divides every row by its L2 norm (rows of norm 0 stay 0), a
    per-record operation with no privacy cost that gives ``||x_i|| <= 1``, which
    Lemma 1 needs. It changes the problem: the model is fitted on, and applies
    to, normalised rows ``x / ||x||`` (``FitResult.info["row_normalised"]``).

Intercept
    With ``fit_intercept=True`` every record gets a constant feature
    ``s = intercept_scaling`` (default 1) *before* the normalisation, as
    liblinear does: the row ``(x_i, s)`` is divided by ``||(x_i, s)||``, so it
    still has norm 1 (a zero row becomes ``(0, 1)``) and Lemma 1, hence the
    sensitivity and the whole plan, is unchanged; the constant is public, and
    its weight ``w0`` is one more entry of ``v``, noised like the others. The
    fitted ``theta`` is ``(w, b)`` with ``b = s w0``, so the model's margin on a
    record ``x`` is ``(x . w + b) / ||(x, s)||`` (:func:`normalised_margins`).
    Two consequences, as with liblinear: the intercept is penalised (the
    penalty is ``lambda / 2 (||w||^2 + (b / s)^2)``: a larger ``s`` penalises it
    less, but shrinks the features' share of every normalised row), and the
    model applies to normalised augmented rows, not to ``x``. The constant is
    handled inside the kernels (one more entry per row, read from a per-row
    ``s / ||(x_i, s)||``): no copy of the data with the column is made, and
    sparse data stays sparse.

Algorithm
    State: the dual ``alpha`` (one entry per record) and ``v = X^T alpha``,
    both 0 at the start. Each of ``T = round(passes * N / L)`` steps draws a
    batch ``B``; for every ``j`` in ``B`` the minimiser ``zeta_j`` of the local
    subproblem (8), i.e. of ``l_j*(-(alpha_j + zeta)) + z_j zeta + (s_j / 2) zeta^2``
    with ``z_j = x_j . v / (lambda N)`` and ``s_j = L ||x_j||^2 / (lambda N)``
    (:meth:`dpglm.datafits.Datafit.dual_step`: closed form for ridge, hinge
    (projected on the box) and squared hinge, one Newton step in the box for
    logistic), all computed against the same ``(alpha, v)``, is scaled to
    ``|zeta_j| <= C``; then ``alpha_B += zeta_B + N(0, sigma^2 I)`` and
    ``v += sum_j zeta_j x_j + N(0, sigma^2 I)``. The model is ``theta = v / (lambda N)``.
    The noise on ``alpha`` and ``v`` is independent and centred, so
    ``E[v] = X^T E[alpha]`` (Remark 1). ``sequential=True`` is SeqDP-SCD: the
    updates of a batch are applied one after the other (``s_j`` then uses 1
    instead of ``L``), which correlates them.

Privacy
    Replace-one neighbours, as for every dpglm solver (``N`` is public: it
    sets ``q``, ``T`` and ``lambda N``). Parallel updates touch distinct
    records and are computed independently, so one record contributes
    ``(zeta_j e_j, zeta_j x_j)`` to ``(Delta alpha, Delta v)``, of norm at most
    ``sqrt(2) C`` (Lemma 1: ``||x_j|| <= 1``, the constant feature included),
    and replacing a record moves the update by at most ``2 sqrt(2) C``, the
    sensitivity, with or without intercept. SeqDP-SCD has the paper's
    sensitivity ``2 C sqrt(L (L + 1))`` for a batch of exactly ``L`` records
    (replace-one: the replaced update and every later one in the batch change
    by at most ``2 C``), so it needs ``sampling="without_replacement"``. The
    noise has standard deviation ``sigma = z * sensitivity`` on ``alpha`` (on
    ``B``) and on every entry of ``v``, where ``z`` is the noise multiplier
    calibrated for ``T`` subsampled Gaussian releases, accounted as exactly the
    sampler that runs:

    ``sampling="poisson"`` (default)
        Each record joins a batch independently with probability
        ``q = L / N`` (:class:`~dpglm.solvers.dp_sgd.BatchSampler`);
        Poisson-sampled Gaussians under replace-one neighbours (the replaced
        record, when sampled, contributes one term of norm at most
        ``sqrt(2) C`` in place of another). ``s_j`` uses the expected batch
        size ``L``.
    ``sampling="without_replacement"``
        Exactly ``L`` distinct records per step, drawn independently at each
        step; sampled-without-replacement Gaussians.

    Nothing is shuffled: shuffling once and accounting as Poisson sampling (as
    in the published code) would claim an amplification that does not hold.
    What is released is ``v`` (``theta`` and its history). The calibration
    charges the sensitivity of ``(Delta alpha, Delta v)``, at least that of
    ``Delta v`` alone. How the dual ``alpha`` stays covered depends on the
    sampler:

    * Poisson: ``alpha`` is noised on ``B`` only and stays inside the solver
      (releasing it would reveal which records were sampled). It is covered
      by giving the adversary every other record's state and coins, and the
      target's past coins: given the released history these are the same on
      both neighbouring datasets, and the target's contribution to ``v`` at a
      step is then a term of norm at most ``C`` present with probability
      ``q``, in place of another such term (joint convexity).
    * Without replacement: that argument fails, because a fixed batch size
      couples the records (whether the target is drawn changes which other
      records are, hence their hidden ``alpha``, hence later steps). So every
      entry of ``alpha`` gets noise of the same ``sigma`` at every step: the
      whole state ``(alpha, v)`` is then a release, each step is a
      sampled-without-replacement Gaussian mechanism applied to released
      values, and adaptive composition applies as accounted. It costs ``N``
      normals per step and adds noise to the records outside the batch.

``epsilon = inf`` runs the same steps with no noise and no scaling, and
converges to the optimum of the row-normalised problem. The steps run in the
numba kernels of :mod:`dpglm._kernels.dual_coordinate`, many per call, on a
row-major view of ``X`` (C order or CSR; the normalisation is applied on the
fly, so no normalised copy is made, unless some row's squared norm lies
outside ``[2**-968, 2**968]``: those rows, and only they, are normalised in a
copy, see :func:`~dpglm.clipping.normalised_rows`).

Examples
--------
>>> import numpy as np
>>> from dpglm.penalties import L2
>>> from dpglm.problem import Problem
>>> from dpglm.solvers.dp_scd import dp_scd
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, (2000, 5))
>>> y = np.where(X @ np.array([1.0, -2.0, 0.0, 0.5, 0.0]) > 0, 1.0, -1.0)
>>> fit = dp_scd(
...     Problem(X, y, "logistic", L2(0.01)),
...     epsilon=1.0,
...     delta=1e-6,
...     passes=5,
...     batch_size=100,
...     clip=0.5,
...     random_state=0,
... )
>>> fit.report.epsilon <= 1.0, fit.n_iter, fit.report.neighbouring, fit.info["row_normalised"]
(True, 100, 'replace_one', True)

With an intercept (the constant feature ``s = 1``), the same plan:

>>> with_intercept = dp_scd(
...     Problem(X, y, "logistic", L2(0.01), fit_intercept=True),
...     epsilon=1.0,
...     delta=1e-6,
...     passes=5,
...     batch_size=100,
...     clip=0.5,
...     random_state=0,
... )
>>> with_intercept.theta.shape, with_intercept.info["intercept_scaling"]
((6,), 1.0)
>>> with_intercept.report.mechanisms == fit.report.mechanisms
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dpglm._kernels.dual_coordinate import scd_steps_csr, scd_steps_dense
from dpglm.clipping import normalised_rows, record_norms
from dpglm.datafits import HINGE, LOGISTIC, SQUARED, SQUARED_HINGE
from dpglm.penalties import L2
from dpglm.privacy.events import PrivacyPlan
from dpglm.privacy.releases import Release
from dpglm.privacy.report import neighbouring_assumptions
from dpglm.privacy.targets import check_privacy_target
from dpglm.solvers.dp_sgd import (
    NEIGHBOURING,
    BatchSampler,
    check_batch_size,
    check_sampling,
    chunk_steps,
    sampling_assumptions,
    schedule,
    training_event,
)
from dpglm.solvers.hyperparameters import (
    HYPERPARAMETER_ASSUMPTION,
    check_finite_clip,
    check_positive,
    log_inverse_delta,
)
from dpglm.solvers.registry import (
    DEFAULT_CLIP,
    EstimatorMapping,
    FitPlan,
    Solver,
    default_batch_size,
)
from dpglm.solvers.result import FitResult, History

#: the datafits DP-SCD handles (the kernels' dual steps)
DATAFITS = {
    SQUARED: "squared",
    LOGISTIC: "logistic",
    HINGE: "hinge",
    SQUARED_HINGE: "squared_hinge",
}

#: how batches drawn without replacement keep the dual covered (see the module docstring)
DUAL_RELEASED_WITHOUT_REPLACEMENT = (
    "sampling without replacement: every entry of the dual alpha gets Gaussian noise at every "
    "step, so the whole state (alpha, v) is released and each step is a subsampled Gaussian "
    "mechanism on released values (a fixed batch size couples the records, and a dual noised "
    "on the batch only would be hidden state that the accounting does not cover)"
)

NORMALISATION = (
    "rows normalised to unit L2 norm before training (a per-record operation, no privacy "
    "cost): the model is fitted on, and applies to, x / ||x||"
)

NORMALISATION_WITH_INTERCEPT = (
    "rows augmented with the constant feature s = intercept_scaling and normalised to unit "
    "L2 norm before training (a per-record operation, no privacy cost): the model is fitted "
    "on, and applies to, (x, s) / ||(x, s)||, and its intercept b = s w0 is penalised "
    "through the constant's weight w0"
)

#: the constant feature of an intercept, ``s`` (liblinear's default)
INTERCEPT_SCALING = 1.0


def update_sensitivity(clip: float, batch_size: int, sampling: str, sequential: bool) -> float:
    """L2 sensitivity of one batch update of ``(alpha, v)`` under the sampler's relation.

    Examples
    --------
    >>> round(update_sensitivity(1.0, 10, "poisson", False), 4)
    2.8284
    >>> round(update_sensitivity(1.0, 3, "without_replacement", True), 4)
    6.9282
    """
    if sequential:
        return 2.0 * clip * math.sqrt(batch_size * (batch_size + 1.0))
    return 2.0 * math.sqrt(2.0) * clip


def check(problem) -> None:
    """Raise DP-SCD's refusal of ``problem``, if it has one.

    DP-SCD (and SeqDP-SCD) fits an in-memory problem with the squared,
    logistic, hinge or squared hinge loss and an ``L2(alpha)`` penalty with
    ``alpha > 0``, with or without intercept (a constant feature, see the
    module docstring).

    Parameters
    ----------
    problem : Problem, ShardedProblem or ProblemShape
        Only its shape is read.

    Raises
    ------
    TypeError
        The records are in row chunks (a ShardedProblem).
    ValueError
        The penalty or the loss.

    Examples
    --------
    >>> from dpglm.penalties import L1
    >>> from dpglm.solvers.registry import ProblemShape
    >>> check(ProblemShape(10, 2, "hinge", L2(0.1), fit_intercept=True))
    >>> check(ProblemShape(10, 2, "squared", L1(0.1)))
    Traceback (most recent call last):
    ...
    ValueError: DP-SCD needs an L2 penalty (its dual is defined through lambda/2 ||w||^2); got penalty L1(alpha=0.1)
    """  # noqa: E501
    # every batch needs the shared vector fresh from the previous one: the records stay here
    problem.in_memory("DP-SCD")
    penalty = problem.penalty
    if type(penalty) is not L2:
        raise ValueError(
            f"DP-SCD needs an L2 penalty (its dual is defined through lambda/2 ||w||^2); "
            f"got penalty {penalty!r}"
        )
    if not penalty.alpha > 0:
        raise ValueError(f"DP-SCD needs an L2 penalty with alpha > 0, got {penalty!r}")
    if problem.datafit.code not in DATAFITS:
        raise ValueError(
            f"DP-SCD handles the {', '.join(DATAFITS.values())} losses; got the "
            f"{problem.datafit.name} loss"
        )


@dataclass(frozen=True)
class Setup:
    """A DP-SCD fit as :func:`prepare` validated it: its plan and the settings it runs.

    Attributes
    ----------
    fit_plan : FitPlan
        The template plan (one sampled Gaussian event of ``steps`` releases),
        the target and the accountant.
    clip : float
        ``C``; ``inf`` when ``epsilon = inf`` (no scaling).
    batch_size : int
        ``L``.
    sampling : {"poisson", "without_replacement"}
    sequential : bool
        SeqDP-SCD.
    steps : int
        ``T``.
    lam : float
        ``lambda``, the L2 penalty's ``alpha``.
    sensitivity : float
        Of one batch update of ``(alpha, v)`` (:func:`update_sensitivity`).
    intercept_scaling : float or None
        ``s``, the constant feature of the intercept; None without intercept.
    """

    fit_plan: FitPlan
    clip: float
    batch_size: int
    sampling: str
    sequential: bool
    steps: int
    lam: float
    sensitivity: float
    intercept_scaling: float | None = None


def check_intercept_scaling(value) -> float:
    """``value`` as the constant feature ``s`` of an intercept: a finite number > 0.

    Examples
    --------
    >>> check_intercept_scaling(2)
    2.0
    >>> check_intercept_scaling(0.0)
    Traceback (most recent call last):
    ...
    ValueError: intercept_scaling must be positive and finite, got 0.0
    """
    return check_positive("intercept_scaling", value)


def prepare(
    problem,
    *,
    epsilon: float,
    delta: float,
    passes: float,
    batch_size: int,
    clip: float,
    sampling: str,
    sequential: bool,
    accountant: str,
    intercept_scaling: float = INTERCEPT_SCALING,
) -> Setup:
    """The checks of :func:`dp_scd`, in its order, and the plan it charges; no record is read.

    Parameters
    ----------
    problem : Problem, ShardedProblem or ProblemShape
        Only its shape is read.
    epsilon, delta, passes, batch_size, clip, sampling, sequential, accountant
        As in :func:`dp_scd` (no defaults here: the fit function's are the ones).
    intercept_scaling : float, default=1.0
        As in :func:`dp_scd`; checked with or without intercept, used with one.

    Returns
    -------
    Setup

    Raises
    ------
    TypeError, ValueError
        What :func:`dp_scd` raises before its charge, with its message.

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> setup = prepare(
    ...     ProblemShape(2000, 5, "logistic", L2(0.01)),
    ...     epsilon=1.0,
    ...     delta=1e-6,
    ...     passes=5,
    ...     batch_size=100,
    ...     clip=0.5,
    ...     sampling="without_replacement",
    ...     sequential=True,
    ...     accountant="auto",
    ... )
    >>> (event,) = setup.fit_plan.template.events
    >>> setup.steps, event.count, event.rate, round(event.sensitivity, 4)
    (100, 100, 0.05, 100.4988)
    >>> setup.intercept_scaling is None
    True
    """
    epsilon, delta = check_privacy_target(epsilon, delta)
    clip = check_positive("clip", clip, allow_inf=True)
    sampling = check_sampling(sampling)
    if not isinstance(sequential, bool | np.bool_):
        raise TypeError(f"sequential must be a bool, got {sequential!r}")
    if sequential and sampling != "without_replacement":
        raise ValueError(
            "sequential=True (SeqDP-SCD) needs sampling='without_replacement': its "
            "sensitivity 2 C sqrt(L (L + 1)) holds for batches of exactly L records"
        )
    intercept_scaling = check_intercept_scaling(intercept_scaling)
    check(problem)
    lam = float(problem.penalty.alpha)
    n = problem.n_samples
    batch_size = check_batch_size(batch_size, n)
    T = schedule(passes, n, batch_size)
    private = not math.isinf(epsilon)
    check_finite_clip(clip, private=private)
    clip = clip if private else math.inf
    sens = update_sensitivity(clip, batch_size, sampling, sequential)
    label = f"scaled dual coordinate updates (alpha, v) over a {sampling} batch"
    event = training_event(sampling, n, batch_size, T, sens, label=label)
    template = PrivacyPlan((event,), NEIGHBOURING)
    fit_plan = FitPlan(template, epsilon, delta, accountant)
    # the constant feature is inside every normalised row (norm 1): the plan ignores it
    constant = intercept_scaling if problem.fit_intercept else None
    return Setup(fit_plan, clip, batch_size, sampling, sequential, T, lam, sens, constant)


def row_scales(X, intercept_scaling=None) -> np.ndarray:
    """``1 / ||x_i||`` for every row of ``X`` (0 for a zero row), or ``1 / ||(x_i, s)||``.

    The norms are exact to rounding for every finite row
    (:func:`~dpglm.clipping.record_norms`); without the constant, a row whose
    norm is below ``1 / max_double`` gets ``inf``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
    intercept_scaling : float, optional
        ``s``: the scales of the rows augmented with the constant feature ``s``
        (never 0, nor infinite).

    Examples
    --------
    >>> row_scales(np.array([[3.0, 4.0], [0.0, 0.0]]))
    array([0.2, 0. ])
    >>> row_scales(np.array([[3.0, 0.0], [0.0, 0.0]]), intercept_scaling=4.0)
    array([0.2 , 0.25])
    """
    norms = record_norms(X)
    if intercept_scaling is not None:
        # hypot: ||(x_i, s)|| without squaring the norm (no overflow, no underflow)
        return 1.0 / np.hypot(norms, check_intercept_scaling(intercept_scaling))
    scale = np.zeros(norms.shape[0])
    positive = norms > 0
    with np.errstate(over="ignore", divide="ignore"):
        scale[positive] = 1.0 / norms[positive]
    return scale


def normalised_margins(X, coef, intercept=0.0, intercept_scaling=None) -> np.ndarray:
    """The margins of a DP-SCD model on raw rows: ``(X @ coef + intercept) * scale``.

    The model applies to normalised rows: ``scale`` is ``1 / ||(x_i, s)||``
    with the constant feature ``s = intercept_scaling`` of a fit with
    intercept, ``1 / ||x_i||`` without (0 for a zero row), as in
    :func:`row_scales`.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
        The records on the scale the model was fitted on.
    coef : ndarray of shape (p,) or (p, k)
        One model, or ``k`` models side by side.
    intercept : float or ndarray of shape (k,), default=0.0
        ``b = s w0`` (:attr:`FitResult.intercept <dpglm.solvers.result.FitResult>`).
    intercept_scaling : float, optional
        The fit's ``s`` (``FitResult.info["intercept_scaling"]``); None for a
        fit without intercept.

    Returns
    -------
    ndarray of shape (n,) or (n, k)

    Examples
    --------
    >>> X = np.array([[3.0, 0.0], [0.0, 0.0]])
    >>> normalised_margins(X, np.array([1.0, 2.0]), 1.0, intercept_scaling=4.0)
    array([0.8 , 0.25])
    >>> normalised_margins(X, np.array([1.0, 2.0]))
    array([1., 0.])
    """
    margins = np.asarray(X @ np.asarray(coef, dtype=float), dtype=float)
    scale = row_scales(X, intercept_scaling)
    # one model (coef of shape (p,)) or several side by side (coef of shape (p, k))
    return (margins + intercept) * (scale if margins.ndim == 1 else scale[:, None])


def constant_feature(X, scale, intercept_scaling) -> tuple:
    """``(scale', bias)`` reading row ``i`` of ``X`` as ``(x_i, s) / ||(x_i, s)||``.

    ``X`` and ``scale`` are :func:`~dpglm.clipping.normalised_rows`' output
    (``scale[i] X[i]`` the unit row, ``X[i]`` either the record or, for an
    extreme one, the record normalised); then ``scale'[i] X[i]`` is
    ``x_i / ||(x_i, s)||`` and ``bias[i]`` is ``s / ||(x_i, s)||``, the
    kernels' arguments for a constant feature.

    Examples
    --------
    >>> from dpglm.clipping import normalised_rows
    >>> X = np.array([[3.0, 0.0], [0.0, 0.0], [3e200, 0.0]])
    >>> constant_feature(X, normalised_rows(X)[1], 4.0)
    (array([0.2, 0. , 1. ]), array([8.00000000e-001, 1.00000000e+000, 1.33333333e-200]))
    """
    s = float(intercept_scaling)
    norms = record_norms(X)
    # scale[i] = 1 / ||x_i||, or 1 for a row normalised in the copy: either way it
    # becomes 1 / ||(x_i, s)|| on the row as read when divided by ||(1, s / ||x_i||)||
    with np.errstate(over="ignore", divide="ignore"):
        ratio = np.divide(s, norms, out=np.zeros_like(norms), where=norms > 0)
        return scale / np.hypot(1.0, ratio), s / np.hypot(norms, s)


class _Steps:
    """Runs DP-SCD steps on the row-major data with the dense or CSR kernel."""

    def __init__(
        self,
        problem,
        lambda_n,
        clip,
        sigma,
        curvature,
        sequential,
        batch_size,
        noise_all=False,
        intercept_scaling=None,
    ):
        # rows of extreme norm come normalised in a copy: the kernels' products of
        # scales and entries then neither overflow nor lose digits
        X, self.scale = normalised_rows(problem.rows)
        # an intercept is the constant feature s, read by the kernels from one entry per
        # row: no copy of X with the column (sparse data stays sparse)
        self.intercept_scaling = intercept_scaling
        self.bias = _EMPTY
        if intercept_scaling is not None:
            self.scale, self.bias = constant_feature(problem.rows, self.scale, intercept_scaling)
        self.noise_all = bool(noise_all)
        self.sparse = sp.issparse(X)
        self.data = (X.data, X.indices, X.indptr) if self.sparse else (X,)
        self.y = np.ascontiguousarray(problem.y, dtype=float)
        self.alpha = np.zeros(problem.n_samples)
        self.v = np.zeros(problem.n_features + int(intercept_scaling is not None))
        self.zeta = np.empty(problem.n_samples if not sequential else batch_size)
        datafit = problem.datafit
        self.settings = (
            float(sigma),
            float(clip),
            float(lambda_n),
            float(curvature),
            int(datafit.code),
            float(getattr(datafit, "dual_box", 0.0)),
            bool(sequential),
            bool(noise_all),
        )

    def theta(self, lambda_n) -> np.ndarray:
        """The model ``v / (lambda N)``, its last entry ``b = s w0`` with an intercept."""
        theta = self.v / lambda_n
        if self.intercept_scaling is not None:
            theta[-1] *= self.intercept_scaling
        return theta

    def run(self, counts, rows, noise):
        """Run the steps of ``counts`` on ``rows`` with ``noise`` from :meth:`_StepNoise.span`."""
        noise_alpha, noise_v, generator, inline = noise
        state = (
            self.y,
            self.scale,
            self.bias,
            counts,
            rows,
            noise_alpha,
            noise_v,
            self.alpha,
            self.v,
        )
        tail = (self.zeta, *self.settings, generator, inline)
        if self.sparse:
            scd_steps_csr(*self.data, *state, *tail)
        else:
            scd_steps_dense(*self.data, *state, *tail)


#: stands in for the Generator argument of the kernels when they read pre-drawn
#: noise (the secure source): numba needs a value of that type and never reads it
_NO_GENERATOR = np.random.default_rng(0)
_EMPTY = np.zeros(0)


class _StepNoise:
    """The unit noise of a chunk of steps: drawn inside the kernel, in advance, or none.

    It comes from the fit's release, whose scale the kernel applies. A release
    on a numpy-backed source hands its Generator to the kernel, which
    draws each value when it needs it (the same stream as numpy's bulk draws,
    5x faster on this workload). The secure source has no Generator: the
    release's draws are made here, for ``alpha`` (one per batch entry, or ``n``
    per step when every entry is noised) then ``steps * p`` for ``v``.
    """

    def __init__(self, release: Release, entries, steps, p, alpha_per_step=None):
        self.p, self.alpha_per_step = p, alpha_per_step
        self.generator, self.inline = _NO_GENERATOR, False
        self.alpha = self.v = _EMPTY
        if release.generator is not None:
            self.generator, self.inline = release.generator, True
        elif release.private:
            count = entries if alpha_per_step is None else steps * alpha_per_step
            self.alpha = np.ascontiguousarray(release.unit(count), dtype=float)
            self.v = np.ascontiguousarray(release.unit(steps * p), dtype=float)

    def span(self, entries: slice, steps: slice) -> tuple:
        """Kernel arguments ``(noise_alpha, noise_v, generator, inline)`` of some steps."""
        if self.alpha.size == 0:
            return self.alpha, self.v, self.generator, self.inline
        if self.alpha_per_step is not None:
            entries = slice(steps.start * self.alpha_per_step, steps.stop * self.alpha_per_step)
        v = self.v[steps.start * self.p : steps.stop * self.p]
        return self.alpha[entries], v, self.generator, self.inline


def _train(steps: _Steps, sampler: BatchSampler, source, T, release, lambda_n) -> History:
    """Run ``T`` steps, drawing batches (and pre-drawn noise) chunk by chunk."""
    p = steps.v.shape[0]
    history = History.empty(p)
    marks = History.checkpoints(T)
    chunk = chunk_steps(p, sampler.batch_size, T)
    for first in range(0, T, chunk):
        size = min(chunk, T - first)
        counts, rows = sampler.draw(source, size)
        offsets = np.concatenate(([0], np.cumsum(counts)))
        every = steps.alpha.shape[0] if steps.noise_all else None
        noise = _StepNoise(release, int(offsets[-1]), size, p, every)
        done = 0
        for end in sorted({m - first for m in marks if first < m <= first + size} | {size}):
            entries = slice(offsets[done], offsets[end])
            steps.run(counts[done:end], rows[entries], noise.span(entries, slice(done, end)))
            done = end
            if first + end in marks:
                passes = (first + end) * sampler.batch_size / sampler.n
                history.record(passes, steps.theta(lambda_n))
    return history


def dp_scd(
    problem,
    *,
    epsilon: float,
    delta: float,
    passes: float = 5.0,
    batch_size: int = 256,
    clip: float = 0.5,
    sampling: str = "poisson",
    sequential: bool = False,
    intercept_scaling: float = INTERCEPT_SCALING,
    budget=None,
    accountant: str = "auto",
    random_state=None,
    secure: bool = False,
) -> FitResult:
    """Fit ``problem`` (rows normalised to unit norm) with DP-SCD.

    Parameters
    ----------
    problem : Problem
        Squared, logistic, hinge or squared hinge loss, an ``L2(alpha)``
        penalty with ``alpha > 0`` (the paper's ``lambda``); with an intercept,
        fitted as the weight of a constant feature (see the module docstring).
    epsilon, delta : float
        Target guarantee, for replace-one neighbours (``N`` public);
        ``epsilon = inf`` runs without noise and without scaling.
    passes : float, default=5.0
        Records sampled in units of ``N``: ``T = round(passes * N / batch_size)`` steps.
    batch_size : int, default=256
        ``L`` in ``[1, N]``: expected batch size with Poisson sampling, exact
        one without replacement; also the factor of the subproblem's curvature.
    clip : float, default=0.5
        ``C``, the bound on every ``|zeta_j|``; finite unless ``epsilon = inf``.
    sampling : {"poisson", "without_replacement"}, default="poisson"
    sequential : bool, default=False
        SeqDP-SCD (needs ``sampling="without_replacement"``).
    intercept_scaling : float, default=1.0
        ``s``, finite and > 0: with ``problem.fit_intercept`` every row is
        ``(x_i, s)`` before its normalisation, and the intercept is ``s`` times
        the constant's (penalised) weight; unused without intercept. The plan
        does not depend on it.
    budget : PrivacyBudget, optional
        Charged once, before the data is read for training.
    accountant : str, default="auto"
    random_state : None, int, Generator or NoiseSource
        All randomness (batches and noise) comes from it, mixed with the budget
        charge (see :func:`~dpglm.privacy.spending.spend`).
    secure : bool, default=False
        Draw from the operating system's CSPRNG (no seed allowed).

    Returns
    -------
    FitResult
        Coefficients for normalised rows (:func:`normalised_margins` applies
        them); ``history`` holds ``v / (lambda N)`` (its last entry times ``s``
        with an intercept) at up to 100 evenly spaced steps;
        ``info["intercept_scaling"]`` is ``s``, None without intercept.
    """
    setup = prepare(
        problem,
        epsilon=epsilon,
        delta=delta,
        passes=passes,
        batch_size=batch_size,
        clip=clip,
        sampling=sampling,
        sequential=sequential,
        accountant=accountant,
        intercept_scaling=intercept_scaling,
    )
    clip, batch_size, sampling, T = setup.clip, setup.batch_size, setup.sampling, setup.steps
    constant = setup.intercept_scaling
    normalisation = NORMALISATION if constant is None else NORMALISATION_WITH_INTERCEPT
    lam, sens, private = setup.lam, setup.sensitivity, not math.isinf(setup.fit_plan.epsilon)
    n = problem.n_samples
    name = "SeqDP-SCD" if sequential else "DP-SCD"
    spent = setup.fit_plan.spend(
        budget=budget,
        label=f"{name} ({sampling}) on {problem!r}",
        assumptions=(
            *neighbouring_assumptions(NEIGHBOURING),
            *sampling_assumptions(sampling, n, batch_size),
            normalisation,
            *(() if sampling == "poisson" else (DUAL_RELEASED_WITHOUT_REPLACEMENT,)),
            HYPERPARAMETER_ASSUMPTION,
        ),
        random_state=random_state,
        secure=secure,
    )
    source = spent.source  # keyed to the charge: no two fits of one budget share noise
    release = spent.release(0)
    multiplier = release.multiplier
    sigma = release.scale(sens)  # the kernels draw (or read) unit noise and scale it by sigma

    lambda_n = lam * n
    curvature = 1.0 if sequential else float(batch_size)
    noise_all = sampling == "without_replacement"
    steps = _Steps(
        problem, lambda_n, clip, sigma, curvature, sequential, batch_size, noise_all, constant
    )
    sampler = BatchSampler(n, batch_size, sampling)
    history = _train(steps, sampler, source, T, release, lambda_n)
    return FitResult.from_theta(
        problem,
        steps.theta(lambda_n),
        history=history,
        report=spent.report,
        n_iter=T,
        info={
            "solver": "seqdp-scd" if sequential else "dp-scd",
            "row_normalised": True,
            "normalisation": normalisation,
            "intercept_scaling": constant,
            "sampling": sampling,
            "sequential": sequential,
            "batch_size": batch_size,
            "sampling_rate": batch_size / n,
            "steps": T,
            "clip": clip,
            "sensitivity": sens if private else math.inf,
            "noise_multiplier": multiplier,
            "noise_std": sigma,
            "lambda": lam,
        },
    )


def estimator_clip(shape, batch_size) -> float:
    """The estimators' DP-SCD clip when ``clip=None``: ``min(1, lambda N / L)``.

    The clip bounds each dual step ``|zeta_j|``, and the noise on ``theta``
    grows with it (``sigma / (lambda N)`` per step, ``sigma`` proportional to
    ``C``). The step minimises the local subproblem, whose curvature in
    ``zeta`` is at least ``s_j = L ||x_j||**2 / (lambda N)``, which is
    ``L / (lambda N)`` on the normalised rows DP-SCD fits: a subproblem whose
    slope at 0 is of order 1 takes a step of order ``lambda N / L`` (a
    heuristic: the logistic dual's slope grows near the box's edges, where
    its conjugate's curvature grows too, and the squared hinge's with the
    dual variable). A clip there leaves the typical steps whole and adds no
    noise for steps that never come; capped at 1, the width of the logistic
    and hinge losses' dual box. SeqDP-SCD (``sequential=True``) uses the
    curvature ``||x_j||**2 / (lambda N)``, whose steps may be ``L`` times
    larger: give it its clip. A problem without a positive L2 penalty gets
    1, and DP-SCD's check refuses it with its own message.

    The clip of 1 it replaces was 300 times too large for the estimators'
    logistic default (``alpha = 1e-4``, phishing's
    ``lambda N / L = 0.0032``). Measured (2 seeds, epsilon 1 and 4; the
    logistic loss at ``alpha = 1e-4``, the hinge and squared hinge at
    ``1e-3``; adult, phishing, electricity): within 0.55 point of the best of
    the clips 0.001 to 3 in all 18 rows, where the clip of 1 lost up to 26
    points: at epsilon 1, logistic 0.926 against 0.671 on phishing and 0.845
    against 0.777 on adult; hinge 0.929 against 0.693 and 0.841 against 0.790;
    squared hinge 0.930 against 0.907 and 0.845 against 0.832.

    Parameters
    ----------
    shape : ProblemShape
        ``N`` and the L2 penalty's ``lambda``.
    batch_size : int
        ``L``, the expected batch the fit takes.

    Examples
    --------
    >>> from dpglm.penalties import L2
    >>> from dpglm.solvers.registry import ProblemShape
    >>> round(estimator_clip(ProblemShape(8000, 68, "logistic", L2(1e-4)), 256), 6)
    0.003125
    >>> estimator_clip(ProblemShape(8000, 68, "squared", L2(1.0)), 256)
    1.0
    """
    alpha = shape.penalty.alpha if isinstance(shape.penalty, L2) else None
    if alpha is None or not alpha > 0:
        return DEFAULT_CLIP
    return min(DEFAULT_CLIP, float(alpha) * shape.n_samples / batch_size)


#: :func:`estimator_passes`'s constants: the squared loss's R^2 pays for the noise on the
#: margins in squares, a classifier's accuracy only where it flips a sign
PASSES_FACTOR = 1.25
SQUARED_PASSES_FACTOR = 0.25
#: the fewest and the most passes :func:`estimator_passes` gives
MIN_ESTIMATOR_PASSES, MAX_ESTIMATOR_PASSES = 1.0, 40.0


def estimator_passes(shape, epsilon: float, delta: float) -> float:
    """The estimators' DP-SCD passes when ``passes=None``:
    ``c (max(L, lambda N) epsilon)**(2/3) / (lambda N log(1/delta))**(1/3)`` within ``[1, 40]``.

    ``c`` is 1.25 (0.25 for the squared loss) and ``L`` the default batch
    (:func:`~dpglm.solvers.registry.default_batch_size`).

    Theorem 2 of Damaskinos et al. (2021) balances a contraction of
    ``1 - rho`` per step (Lemma 2, ``rho`` about ``mu lambda L / (mu lambda N + L)``)
    against the perturbation's cost per step (Lemma 3, with ``sigma`` growing
    like ``q sqrt(T log(1/delta)) / epsilon``, Theorem 1): ``T`` of order
    ``log(lambda N**4 epsilon**2 / (L**3 log(1/delta))) / rho``. Its condition
    ``mu lambda > 1/2`` is far from the estimators' penalties (``rho`` is then
    about ``mu lambda``, 4e-4 per logistic step), so their fits stay in the
    sublinear phase, where the dual gap after ``P`` passes falls like
    ``1 / (lambda N P)`` (Shalev-Shwartz and Zhang 2013) while the noise,
    never taken back, leaves ``theta = v / (lambda N)`` a random walk of
    per-coordinate std about ``2 sqrt(2) P C sqrt(log(1/delta)) / (lambda N epsilon)``,
    the noise on every margin of a unit row, which costs the objective its
    square. The two balance at
    ``P = c (lambda N epsilon / C)**(2/3) / (lambda N log(1/delta))**(1/3)``, and
    ``lambda N / C = max(L, lambda N)`` at :func:`estimator_clip`. With another
    ``batch_size`` or ``clip``, give ``passes``.

    Measured (``benchmarks/bench_defaults.py``'s splits; epsilon 0.5, 1 and
    4; passes 1 to 40; 5 seeds, 20 on madelon): the best passes grow with
    epsilon (logistic on adult and phishing: 10, 10 to 20, 40) and fall with
    ``lambda N`` (``DPLinearSVC``'s ten times larger ``alpha``: 5, 5, 10 on
    adult; ``DPRidge``: 1 to 5), as the law says, where the paper's log law
    misses by up to 8 points. Against the former fixed 10 passes: the
    logistic loss gains 0.7 and 0.6 point on adult and phishing at epsilon 4
    (8 on madelon), the hinge and squared hinge 1.0 to 2.1 points on adult
    and phishing at 0.5, within 0.25 point elsewhere (madelon within its
    seeds' spread); ``DPRidge`` R^2 0.60 against 0.43 on California and 0.28
    against -9.8 on communities at epsilon 0.5, 0.47 against -0.58 on
    communities at 1, 0.4 and 0.6 point below on the California tables at 4.

    Examples
    --------
    >>> from dpglm.penalties import L2
    >>> from dpglm.solvers.registry import ProblemShape
    >>> shape = ProblemShape(8291, 68, "logistic", L2(1e-4))
    >>> round(estimator_passes(shape, 0.85, 8291**-2.0), 1)
    18.4
    >>> round(estimator_passes(ProblemShape(15480, 8, "squared", L2(1e-3)), 1.0, 1e-8), 1)
    1.5
    """
    alpha = shape.penalty.alpha if isinstance(shape.penalty, L2) else None
    n = shape.n_samples
    if alpha is None or not alpha > 0 or not math.isfinite(epsilon):
        return MAX_ESTIMATOR_PASSES  # refused by the fit's own checks, or no noise
    lambda_n = float(alpha) * n
    batch = min(default_batch_size(n), n)
    factor = SQUARED_PASSES_FACTOR if shape.datafit.name == "squared" else PASSES_FACTOR
    passes = factor * (max(batch, lambda_n) * epsilon) ** (2.0 / 3.0)
    # no delta (which the fit refuses, with its own message): 1 / n^2 stands for it
    passes /= (lambda_n * log_inverse_delta(delta, n)) ** (1.0 / 3.0)
    return float(min(MAX_ESTIMATOR_PASSES, max(MIN_ESTIMATOR_PASSES, passes)))


SOLVER = Solver(
    name="dp-scd",
    summary="private stochastic dual coordinate descent and SeqDP-SCD (Damaskinos et al. 2021)",
    fit=dp_scd,
    prepare=prepare,
    check=check,
    estimator=EstimatorMapping(
        step=False, batch_size=True, default_clip=estimator_clip, default_work=estimator_passes
    ),
    order=40,
    row_normalised=True,
)
