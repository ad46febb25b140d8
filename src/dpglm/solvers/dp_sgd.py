"""DP-SGD: private proximal stochastic gradient descent (Abadi et al. 2016), the baseline.

Starting from ``w = 0``, each of ``T = round(passes * n / b)`` steps draws a
batch ``B`` of records, clips every per-sample gradient ``g_i = s_i (x_i, 1)``
(``s_i = l'(x_i . w + b, y_i)``, the 1 only with an intercept) to L2 norm ``C``
and takes a proximal step with a constant step size ``gamma``:

    ``w <- prox_{gamma psi}(w - gamma (sum_{i in B} clip_C(g_i) + N(0, sigma**2 I)) / b)``.

The prox is exact for every separable penalty (none, L2, L1, elastic net,
box); the intercept is not penalised. Like every dpglm solver, DP-SGD is
analysed for replace-one neighbours: the number of records ``n`` is public
(it sets the sampling rate, the number of steps and, in the estimators, the
default batch size and ``delta``), and replacing one record moves the clipped
sum by at most ``2 C``, so ``sigma = 2 z C``. Two samplers, each accounted as
exactly what it is:

``sampling="poisson"`` (default)
    Every record joins the batch independently with probability
    ``q = b / n``, drawn as a count ``k ~ Binomial(n, q)`` (by inversion of
    its CDF) and then ``k`` distinct records uniformly (Floyd's algorithm),
    which is the same distribution. The event is a Poisson-subsampled
    Gaussian of rate ``q`` under replace-one neighbours: the replaced record
    is in the batch with probability ``q`` and then contributes a term of
    norm at most ``C`` in place of another (dp-accounting's ``REPLACE_ONE``
    pair). The sum is divided by the expected batch size ``b = q n``, not by
    the realised ``k``, which would release ``k``.
``sampling="without_replacement"``
    Exactly ``b`` distinct records, uniformly and independently at each step:
    sampled-without-replacement Gaussians (Renyi DP).

The noise multiplier ``z`` is calibrated by the accountant so that the ``T``
composed subsampled Gaussian releases meet ``(epsilon, delta)``; every
iterate is a post-processing of them. All randomness (counts, rows and noise)
comes from one :class:`~dpglm.privacy.mechanisms.NoiseSource`. The steps run in
numba kernels (:mod:`dpglm._kernels.stochastic`), many per call, on a row-major
copy of ``X`` (C order or CSR).

``epsilon = inf`` runs the same code with no noise and no clipping.

Examples
--------
>>> import numpy as np
>>> from dpglm.problem import Problem
>>> from dpglm.solvers.dp_sgd import dp_sgd
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, (2000, 5))
>>> y = X @ np.array([1.0, -2.0, 0.0, 0.5, 0.0]) + 0.1 * rng.standard_normal(2000)
>>> fit = dp_sgd(
...     Problem(X, y, "squared", "l2"),
...     epsilon=1.0,
...     delta=1e-6,
...     passes=5,
...     batch_size=100,
...     step=0.5,
...     clip=2.0,
...     random_state=0,
... )
>>> round(fit.report.epsilon, 3) <= 1.0, fit.n_iter, fit.report.neighbouring
(True, 100, 'replace_one')
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

from dpglm._kernels.stochastic import distinct_subsets
from dpglm.privacy.events import PrivacyPlan, SampledGaussianEvent
from dpglm.privacy.releases import Release
from dpglm.privacy.report import neighbouring_assumptions
from dpglm.privacy.targets import check_privacy_target
from dpglm.problem import coordinate_penalties
from dpglm.solvers.hyperparameters import (
    HYPERPARAMETER_ASSUMPTION,
    check_finite_clip,
    check_in_memory_outputs,
    check_positive,
)
from dpglm.solvers.registry import EstimatorMapping, FitPlan, Solver
from dpglm.solvers.result import FitResult, History

#: the neighbouring relation of every dpglm plan (``n`` is public)
NEIGHBOURING = "replace_one"
SAMPLING = ("poisson", "without_replacement")
#: at most this many noise values (and about as many batch rows) drawn at a time
_DRAW_BLOCK = 1 << 20
#: the Binomial CDF table stops this many standard deviations (plus as many
#: records) above the mean: the mass beyond is below 1e-24, far under the 2**-53
#: resolution of the uniforms that invert it
_TAIL_SDS = 40.0


def schedule(passes: float, n_samples: int, batch_size: int) -> int:
    """``T``: the number of steps for ``passes`` passes of ``batch_size`` records (at least 1).

    Examples
    --------
    >>> schedule(5.0, 20000, 256)
    391
    >>> schedule(0.001, 100, 10)
    1
    """
    passes = check_positive("passes", passes)
    return max(1, round(passes * n_samples / batch_size))


#: the noise a noise-matched step lets into the coefficients per step, in L2 norm
#: (measured: 0.6-1.0 gave the best multinomial fits on letter and digits at epsilon
#: 0.5-2 of the ten tried settings; ``benchmarks/bench_multiclass.py``)
STEP_NOISE = 0.8
#: the largest noise-matched step (multinomial): at a large epsilon the noise no longer sets it
MAX_MATCHED_STEP = 5.0


def noise_matched_step(
    noise_std: float,
    batch_size: int,
    n_coords: int,
    *,
    step_noise: float = STEP_NOISE,
    smallest: float = 0.0,
    largest: float = MAX_MATCHED_STEP,
) -> float:
    """The step whose noise moves the coefficients by about ``step_noise`` per step.

    A step adds ``gamma N(0, sigma**2 I) / b`` to the ``d`` coefficients
    (``sigma = z 2 C``, the noise on a step's clipped sum), of norm about
    ``gamma sigma sqrt(d) / b``; ``gamma = step_noise b / (sigma sqrt(d))``
    keeps it at ``step_noise`` whatever the batch, the clip, the number of
    coefficients (a multinomial fit has one row per class) and the noise the
    budget allows, within ``[smallest, largest]``: where the noise is large
    the step no longer shrinks with it, and at a large epsilon the noise no
    longer sets it. This is the form of the private SGD step of Bassily,
    Smith and Thakurta (2014), ``R / sqrt(T (G^2 + d sigma^2 / b^2))``, where
    the noise term dominates. Computed from the calibrated plan (public),
    never from the data.

    Examples
    --------
    >>> round(noise_matched_step(4.0, 256, 442), 4)
    2.4353
    >>> noise_matched_step(0.0, 256, 442)
    5.0
    >>> noise_matched_step(20.0, 256, 124, step_noise=0.1, smallest=0.5, largest=4.0)
    0.5
    """
    noise = noise_std * math.sqrt(n_coords) / batch_size
    if noise * largest <= step_noise:
        return largest
    return max(smallest, step_noise / noise)


def binomial_cdf(n: int, q: float) -> np.ndarray:
    """``P(K <= k)`` for ``K ~ Binomial(n, q)`` and ``k = 0, 1, ...`` up to a negligible tail.

    Examples
    --------
    >>> binomial_cdf(2, 0.5)
    array([0.25, 0.75, 1.  ])
    """
    sd = math.sqrt(n * q * (1.0 - q))
    top = min(n, math.ceil(n * q + _TAIL_SDS * (sd + 1.0)))
    return binom.cdf(np.arange(top + 1), n, q)


class BatchSampler:
    """The batches of DP-SGD: exactly the sampler its privacy event describes.

    Parameters
    ----------
    n : int
        Number of records.
    batch_size : int
        ``b`` in ``[1, n]``: the expected batch size (Poisson sampling at rate
        ``q = b / n``) or the exact one (without replacement).
    sampling : {"poisson", "without_replacement"}

    Attributes
    ----------
    rate : float
        Probability that a given record is in a batch, ``b / n``.

    Examples
    --------
    >>> from dpglm.privacy.mechanisms import make_noise_source
    >>> sampler = BatchSampler(10, 3, "without_replacement")
    >>> counts, rows = sampler.draw(make_noise_source(0), 2)
    >>> counts.tolist(), rows.shape, len(set(rows[:3].tolist()))
    ([3, 3], (6,), 3)
    """

    def __init__(self, n: int, batch_size: int, sampling: str):
        self.n = int(n)
        self.batch_size = int(batch_size)
        self.sampling = sampling
        self.rate = self.batch_size / self.n
        self._cdf = binomial_cdf(self.n, self.rate) if sampling == "poisson" else None
        self._marker = np.zeros(self.n, dtype=bool)

    def counts(self, source, steps: int) -> np.ndarray:
        """Batch sizes of ``steps`` steps: ``Binomial(n, q)`` draws, or ``b`` each."""
        if self._cdf is None:
            return np.full(steps, self.batch_size, dtype=np.int64)
        u = np.asarray(source.uniform(steps))
        # K = #{k : P(K <= k) <= u} has P(K <= k) = P(u < cdf[k]) = cdf[k] for u
        # uniform on [0, 1), also at u = 0 and at the table's end
        k = np.searchsorted(self._cdf, u, side="right")
        return np.minimum(k, self._cdf.shape[0] - 1).astype(np.int64)

    def draw(self, source, steps: int) -> tuple[np.ndarray, np.ndarray]:
        """The batches of ``steps`` consecutive steps.

        Returns
        -------
        counts : ndarray of int64 of shape (steps,)
            Size of each batch.
        rows : ndarray of int64 of shape (counts.sum(),)
            The batches one after the other, each a uniformly random set of
            ``counts[t]`` distinct records.
        """
        counts = self.counts(source, steps)
        total = int(counts.sum())
        uniforms = np.ascontiguousarray(source.uniform(total), dtype=float).reshape(total)
        rows = np.empty(total, dtype=np.int64)
        distinct_subsets(self.n, counts, uniforms, self._marker, rows)
        return counts, rows


def training_event(
    sampling: str, n: int, batch_size: int, count: int, sensitivity: float, label=None
):
    """Template event of ``count`` steps on sampled batches (unit noise multiplier).

    ``sensitivity`` is the replace-one sensitivity of one step's sum (``2 C``
    for DP-SGD's clipped gradients); ``inf`` (no clipping) records none.

    Examples
    --------
    >>> e = training_event("without_replacement", 100, 10, 5, 2.0)
    >>> e.kind, e.count, e.rate, e.sensitivity
    ('sampled_gaussian', 5, 0.1, 2.0)
    """
    if sampling == "poisson":
        where = {"sampling_rate": batch_size / n}
    else:
        where = {"dataset_size": n, "batch_size": batch_size}
    return SampledGaussianEvent(
        noise_multiplier=1.0,
        count=count,
        sampling=sampling,
        sensitivity=None if sensitivity is None or math.isinf(sensitivity) else sensitivity,
        label=label or f"sum of per-sample L2-clipped gradients over a {sampling} batch",
        **where,
    )


def sampling_assumptions(sampling: str, n: int, batch_size: int) -> tuple:
    """What the guarantee of a sampled fit assumes about its batches (DP-SGD, DP-SCD)."""
    if sampling == "poisson":
        return (
            f"records sampled by Poisson sampling with rate q = {batch_size / n:.6g} = "
            f"batch_size / n (each record in a batch independently; accounted as such, for "
            "replace-one neighbours)",
        )
    return (
        f"batches of {batch_size} distinct records out of n = {n} drawn uniformly without "
        "replacement, independently at each step (accounted as such)",
    )


def check_batch_size(batch_size, n: int) -> int:
    """``batch_size`` as an int in ``[1, n]``, or an error naming it."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer):
        raise TypeError(f"batch_size must be an int, got {batch_size!r}")
    if not 1 <= batch_size <= n:
        raise ValueError(f"batch_size must lie in [1, n_samples={n}], got {batch_size!r}")
    return int(batch_size)


def check_sampling(sampling) -> str:
    """``sampling`` if it is one of :data:`SAMPLING`, else a ``ValueError``."""
    if not isinstance(sampling, str) or sampling not in SAMPLING:
        raise ValueError(f"sampling must be one of {SAMPLING}, got {sampling!r}")
    return sampling


def check(problem) -> None:
    """Raise DP-SGD's refusal of ``problem``, if it has one.

    DP-SGD fits any datafit (the hinge loss by its subgradient), with or
    without an intercept, in memory or on row chunks; it refuses a penalty
    whose prox is not taken coordinate-wise.

    Parameters
    ----------
    problem : Problem, ShardedProblem or ProblemShape
        Only its penalty is read.

    Raises
    ------
    ValueError
        The penalty is not separable.

    Examples
    --------
    >>> from dpglm.penalties import L1Ball
    >>> from dpglm.solvers.registry import ProblemShape
    >>> check(ProblemShape(10, 2, "hinge", "l1", fit_intercept=True, chunked=True))
    >>> check(ProblemShape(10, 2, "squared", L1Ball(1.0)))
    Traceback (most recent call last):
    ...
    ValueError: DP-SGD needs a separable penalty (its prox is taken coordinate-wise); L1Ball(radius=1.0) is not
    """  # noqa: E501
    penalty = problem.penalty
    if not penalty.separable:
        raise ValueError(
            f"DP-SGD needs a separable penalty (its prox is taken coordinate-wise); "
            f"{penalty!r} is not"
        )
    check_in_memory_outputs(problem, "DP-SGD")


@dataclass(frozen=True)
class Setup:
    """A DP-SGD fit as :func:`prepare` validated it: its plan and the settings it runs.

    Attributes
    ----------
    fit_plan : FitPlan
        The template plan (one sampled Gaussian event of ``steps`` releases),
        the target and the accountant.
    step : float
        ``gamma``.
    clip : float
        ``C``; ``inf`` when ``epsilon = inf`` (no clipping).
    batch_size : int
        ``b``.
    sampling : {"poisson", "without_replacement"}
    steps : int
        ``T``.
    """

    fit_plan: FitPlan
    step: float
    clip: float
    batch_size: int
    sampling: str
    steps: int


def prepare(
    problem,
    *,
    epsilon: float,
    delta: float,
    passes: float,
    step: float,
    clip: float,
    batch_size: int,
    sampling: str,
    accountant: str,
) -> Setup:
    """The checks of :func:`dp_sgd`, in its order, and the plan it charges; no record is read.

    Parameters
    ----------
    problem : Problem, ShardedProblem or ProblemShape
        Only its shape is read.
    epsilon, delta, passes, step, clip, batch_size, sampling, accountant
        As in :func:`dp_sgd` (no defaults here: the fit function's are the ones).

    Returns
    -------
    Setup

    Raises
    ------
    TypeError, ValueError
        What :func:`dp_sgd` raises before its charge, with its message.

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> setup = prepare(
    ...     ProblemShape(2000, 5, "squared", "l2"),
    ...     epsilon=1.0,
    ...     delta=1e-6,
    ...     passes=5,
    ...     step=0.5,
    ...     clip=2.0,
    ...     batch_size=100,
    ...     sampling="poisson",
    ...     accountant="auto",
    ... )
    >>> (event,) = setup.fit_plan.template.events
    >>> setup.steps, event.count, event.rate, event.sensitivity
    (100, 100, 0.05, 4.0)
    """
    epsilon, delta = check_privacy_target(epsilon, delta)
    step = check_positive("step", step)
    clip = check_positive("clip", clip, allow_inf=True)
    sampling = check_sampling(sampling)
    n = problem.n_samples
    batch_size = check_batch_size(batch_size, n)
    T = schedule(passes, n, batch_size)
    check(problem)
    private = not math.isinf(epsilon)
    check_finite_clip(clip, private=private)
    clip = clip if private else math.inf
    # replace-one: a record's gradient of norm <= C gives way to another's
    event = training_event(sampling, n, batch_size, T, 2.0 * clip)
    template = PrivacyPlan((event,), NEIGHBOURING)
    fit_plan = FitPlan(template, epsilon, delta, accountant)
    return Setup(fit_plan, step, clip, batch_size, sampling, T)


def chunk_steps(n_coords: int, batch_size: int, total: int) -> int:
    """Steps whose noise and batches are drawn at once, bounding their memory."""
    return max(1, min(total, _DRAW_BLOCK // max(n_coords, batch_size)))


def _train(steps, sampler: BatchSampler, source, T: int, release: Release) -> History:
    """Run ``T`` steps, drawing batches then noise chunk by chunk; return the history.

    The noise is the release's unit Gaussian draws (zeros without noise), which
    the kernels scale by the noise std.

    ``steps`` is the problem's :class:`~dpglm.access.batches.BatchSteps` (in
    memory, or gathering the batches' rows on its row chunks).
    """
    n_coords = steps.theta.shape[0]
    history = History.empty(n_coords)
    marks = History.checkpoints(T)
    chunk = chunk_steps(n_coords, sampler.batch_size, T)
    for first in range(0, T, chunk):
        size = min(chunk, T - first)
        counts, rows = sampler.draw(source, size)
        noise = np.ascontiguousarray(release.unit((size, n_coords)), dtype=float)
        offsets = np.concatenate(([0], np.cumsum(counts)))
        # stop at every checkpoint inside the chunk, without changing what is drawn
        done = 0
        for end in sorted({m - first for m in marks if first < m <= first + size} | {size}):
            steps.run(counts[done:end], rows[offsets[done] : offsets[end]], noise[done:end])
            done = end
            if first + end in marks:
                history.record((first + end) * sampler.batch_size / sampler.n, steps.theta)
    return history


def dp_sgd(
    problem,
    *,
    epsilon: float,
    delta: float,
    passes: float = 5.0,
    step: float = 0.1,
    clip: float = 1.0,
    batch_size: int = 256,
    sampling: str = "poisson",
    budget=None,
    accountant: str = "auto",
    random_state=None,
    secure: bool = False,
) -> FitResult:
    """Fit ``problem`` with DP-SGD.

    Parameters
    ----------
    problem : Problem
        Any datafit (the hinge loss uses its subgradient) and a separable
        penalty (none, L2, L1, elastic net, box).
    epsilon, delta : float
        Target guarantee, for replace-one neighbours (``n`` public);
        ``epsilon = inf`` is non-private SGD (no noise, no clipping).
    passes : float, default=5.0
        Records sampled in units of ``n``: ``T = round(passes * n / batch_size)`` steps.
    step : float, default=0.1
        Constant step size ``gamma``.
    clip : float, default=1.0
        ``C``, the L2 bound of every per-sample gradient; finite unless ``epsilon = inf``.
    batch_size : int, default=256
        ``b`` in ``[1, n]``: expected batch size with Poisson sampling, exact
        one without replacement; also the divisor of the noisy sum.
    sampling : {"poisson", "without_replacement"}, default="poisson"
        See the module docstring.
    budget : PrivacyBudget, optional
        Charged before the data is read for training.
    accountant : str, default="auto"
    random_state : None, int, Generator or NoiseSource
        All randomness (batch sizes, batches and noise) comes from it, mixed with
        the budget charge (see :func:`~dpglm.privacy.spending.spend`).
    secure : bool, default=False
        Draw from the operating system's CSPRNG (no seed allowed).

    Returns
    -------
    FitResult
        ``history`` holds the iterate at up to 100 evenly spaced steps, with
        ``passes = steps * batch_size / n``. The realised Poisson batch sizes
        are not returned: they are not covered by the guarantee.
    """
    setup = prepare(
        problem,
        epsilon=epsilon,
        delta=delta,
        passes=passes,
        step=step,
        clip=clip,
        batch_size=batch_size,
        sampling=sampling,
        accountant=accountant,
    )
    step, clip, T = setup.step, setup.clip, setup.steps
    sampling, batch_size = setup.sampling, setup.batch_size
    n, n_coords = problem.n_samples, problem.n_coords
    # the penalty applies to each class's coefficients; the intercepts are free
    penalty_arrays = coordinate_penalties(
        problem.penalty, problem.n_features, problem.n_outputs, problem.fit_intercept
    )
    spent = setup.fit_plan.spend(
        budget=budget,
        label=f"DP-SGD ({sampling}) on {problem!r}",
        assumptions=(
            *neighbouring_assumptions(NEIGHBOURING),
            *sampling_assumptions(sampling, n, batch_size),
            HYPERPARAMETER_ASSUMPTION,
        ),
        random_state=random_state,
        secure=secure,
    )
    source = spent.source  # keyed to the charge: no two fits of one budget share noise
    release = spent.release(0)
    multiplier = release.multiplier
    sigma = release.scale()  # the event's sensitivity: 2 C, a clipped gradient replaced

    theta = np.zeros(n_coords)
    # the data side: the problem's records, in memory or gathered on its row chunks
    steps = problem.batch_steps(theta, clip, sigma, step, 1.0 / batch_size, penalty_arrays)
    history = _train(steps, BatchSampler(n, batch_size, sampling), source, T, release)
    return FitResult.from_theta(
        problem,
        theta,
        history=history,
        report=spent.report,
        n_iter=T,
        info={
            "solver": "dp-sgd",
            "sampling": sampling,
            "batch_size": batch_size,
            "sampling_rate": batch_size / n,
            "steps": T,
            "step_size": step,
            "clip": clip,
            "noise_multiplier": multiplier,
            "noise_std": sigma,
        },
    )


SOLVER = Solver(
    name="dp-sgd",
    summary="private proximal stochastic gradient descent (Abadi et al. 2016)",
    fit=dp_sgd,
    prepare=prepare,
    check=check,
    # measured, not derived: the best count runs from 2.5 to 80 passes across the raw tables
    # with no law in (n, epsilon, p) that fits them all (benchmarks/bench_dp_sgd_passes.py)
    estimator=EstimatorMapping(passes=10.0, batch_size=True),
    order=30,
)
