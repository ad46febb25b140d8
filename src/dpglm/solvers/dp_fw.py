"""Private Frank-Wolfe on L1 balls: centralized (DP-FW) and block-coordinate (BCFW-AS).

**DP-FW** (Talwar, Thakurta and Zhang 2015, "Nearly optimal private LASSO")
minimises a smooth empirical risk over the L1 ball of radius ``r``. Starting
from ``theta = 0``, each of ``T`` steps

1. computes the clipped gradient
   ``g_j = (1/n) sum_i clip(l'(x_i . theta, y_i) X_ij, C)``;
2. selects a vertex ``s`` among the ``2p`` vertices ``+-r e_j`` by
   report-noisy-max of the linear scores ``-<g, s>``;
3. moves towards it: ``theta <- (1 - mu_t) theta + mu_t s`` with
   ``mu_t = 2 / (t + 2)``.

The model is a function of the selected vertices alone (the step sizes are
public), so the selections are the only releases.

**BCFW-AS** (Lou and Cheung 2018, Algorithm 1) splits the coordinates into
blocks, each constrained to its own L1 ball of radius ``r_b``: the domain is
the product of these balls, the block-separable set the paper's analysis
needs (with one block, the L1 ball of DP-FW). At each iteration a
:mod:`sampling <dpglm.solvers.fw_sampling>` draws a set of blocks; every drawn
block selects a vertex ``+-r_b e_j`` of its own ball from its own coordinates
of the clipped gradient at the current iterate and moves towards it, with the
universal step size ``2 / (p_min t + 2)`` that depends only on the smallest
inclusion probability ``p_min``. The work of a block reads only its columns,
the margins shared by all blocks, and its own coefficients: a party holding
those columns could do it alone.

Privacy (replace-one neighbours, ``n`` public). Every per-sample entry of the
gradient is clipped to ``C``, so ``g_j`` moves by at most ``2 C / n`` and the
score ``-<g, s>`` of a vertex of a ball of radius ``r`` by at most
``Delta = 2 r C / n``. The scores are **not monotone**: when ``g_j`` moves,
the scores of ``+r e_j`` and ``-r e_j`` move in opposite directions. Each
selection is therefore a
:class:`~dpglm.privacy.events.NoisyMaxEvent` with ``monotone=False``, which is
``2 / z``-DP for noise of scale ``z Delta``; half that scale (the monotone
calibration) would be ``4 / z``-DP, and the audit in the tests catches it. Two
noises:

``"gumbel"`` (default)
    The exponential mechanism, ``epsilon**2 / 8``-zCDP per selection; the
    default accountant ``"auto"`` takes the tightest valid one.
``"laplace"``
    The report-noisy-max of the original; the default accountant
    ``"advanced"`` is the original's calibration, the advanced composition of
    the per-selection epsilons.

Selections of different blocks in one iteration read disjoint coordinates of
the same clipped gradient, but one record moves all of them: they compose
sequentially, like selections of different iterations. The plan holds one
event per selection, ``T`` times the number of blocks drawn per iteration
(fixed for every sampling), and the solver checks that it made exactly that
many. The noise multiplier is calibrated from the plan by the accountant.

The margins ``z = X theta`` are updated incrementally, so that a step costs
one pass over the drawn blocks' columns (the gradient) plus the columns of the
new vertex and of the block's non-zero coefficients: with every block drawn,
``z <- (1 - mu) z + mu v X_j`` reads a single column.

``epsilon = inf`` runs the same code without noise or clipping.

Both solvers are registered (:mod:`dpglm.solvers.registry`) as ``"dp-fw"``
and ``"dp-bcfw"``. Their checks and their plans (:func:`prepare_dp_fw`,
:func:`prepare_dp_bcfw`) read the problem's shape only, so a plan is known
before any record is read, for a :class:`~dpglm.problem.Problem`, a
``ShardedProblem`` or a :class:`~dpglm.solvers.registry.ProblemShape` alike.

Examples
--------
>>> import numpy as np
>>> from dpglm.problem import Problem
>>> from dpglm.solvers.dp_fw import dp_fw
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, (5000, 20))
>>> y = 3 * X[:, 0] - 2 * X[:, 1] + 0.1 * rng.standard_normal(5000)
>>> fit = dp_fw(
...     Problem(X, y, "squared"),
...     epsilon=1.0,
...     delta=1e-6,
...     radius=5.0,
...     n_iter=20,
...     clip=2.0,
...     random_state=0,
... )
>>> np.flatnonzero(np.abs(fit.coef) > 0.5).tolist(), bool(np.abs(fit.coef).sum() <= 5.0)
([0, 1], True)
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from dpglm._kernels.frank_wolfe import noisy_vertex
from dpglm._kernels.jit import threads_for
from dpglm.penalties import L1Ball, NoPenalty
from dpglm.privacy.events import NoisyMaxEvent, PrivacyPlan
from dpglm.privacy.report import neighbouring_assumptions
from dpglm.privacy.targets import check_privacy_target
from dpglm.solvers.fw_sampling import Elementary, make_sampling
from dpglm.solvers.hyperparameters import (
    HYPERPARAMETER_ASSUMPTION,
    check_finite_clip,
    check_positive,
    check_positive_int,
    check_single_output,
)
from dpglm.solvers.registry import FitPlan, Solver
from dpglm.solvers.result import FitResult, History

__all__ = [
    "Setup",
    "check_dp_bcfw",
    "check_dp_fw",
    "dp_bcfw",
    "dp_fw",
    "fw_plan",
    "prepare_dp_bcfw",
    "prepare_dp_fw",
]

NEIGHBOURING = "replace_one"
NOISES = ("gumbel", "laplace")
#: standard noise draws taken from the source at a time
_NOISE_CHUNK = 1 << 18


def fw_plan(n_selections: int, noise: str, sensitivity=None) -> PrivacyPlan:
    """Template plan of ``n_selections`` private vertex selections (unit noise multiplier).

    Examples
    --------
    >>> plan = fw_plan(50, "laplace", 0.01)
    >>> [(e.kind, e.noise, e.count, e.monotone, e.epsilon) for e in plan.events]
    [('noisy_max', 'laplace', 50, False, 2.0)]
    """
    event = NoisyMaxEvent(
        noise=noise,
        noise_multiplier=1.0,
        count=n_selections,
        monotone=False,
        sensitivity=sensitivity,
        label="Frank-Wolfe vertex +-r e_j (noisy max of -<g, s> over the vertices of the "
        "block's L1 ball; sensitivity 2 r C / n, shown for the largest r)",
    )
    return PrivacyPlan((event,), NEIGHBOURING)


# --- validation ---------------------------------------------------------------------------


def check_fw_problem(problem, solver: str) -> None:
    """Refuse a problem Frank-Wolfe cannot fit, saying what to use instead.

    Frank-Wolfe minimises a smooth datafit over L1 balls: no intercept, and no
    penalty but an :class:`~dpglm.penalties.L1Ball`.

    Examples
    --------
    >>> from dpglm.problem import Problem
    >>> check_fw_problem(Problem(np.eye(2), np.zeros(2), "squared"), "DP-FW")  # accepted
    """
    # the L1 ball's vertices are single coordinates of one margin's coefficients
    check_single_output(problem, solver)
    if problem.fit_intercept:
        raise ValueError(
            f"fit_intercept must be False for {solver}: every coordinate lies in an L1 ball "
            "and an unconstrained intercept has no vertices (centre y, or add a constant "
            "column, which the ball then constrains)"
        )
    if not problem.datafit.smooth:
        raise ValueError(
            f"{solver} needs a smooth datafit; the {problem.datafit.name} loss is not "
            "(use 'squared_hinge', or DP-SGD for the hinge loss)"
        )
    if not isinstance(problem.penalty, NoPenalty | L1Ball):
        raise ValueError(
            f"penalty must be None or an L1Ball constraint for {solver}, got "
            f"{problem.penalty!r}: Frank-Wolfe minimises the datafit over L1 balls"
        )


def block_radii(value, n_blocks: int, penalty) -> np.ndarray:
    """Radii of the blocks' balls from ``radius`` and the problem's L1Ball, if any.

    Examples
    --------
    >>> from dpglm.penalties import L1Ball, NoPenalty
    >>> block_radii(2.0, 3, NoPenalty()), block_radii(None, 1, L1Ball(0.5))
    (array([2., 2., 2.]), array([0.5]))
    """
    ball = penalty.radius if isinstance(penalty, L1Ball) else None
    if ball is not None and n_blocks > 1:
        raise ValueError(
            f"the problem's penalty {penalty!r} is one L1 ball over all coordinates, which "
            f"{n_blocks} blocks cannot share (each block has its own ball): pass a Problem "
            "without penalty and the blocks' radius"
        )
    if value is None:
        if ball is None:
            raise ValueError("radius is required when the problem has no L1Ball penalty")
        return np.array([ball])
    try:
        radii = np.array(value, dtype=float)
    except (TypeError, ValueError):
        radii = None
    if radii is None or radii.ndim > 1 or (radii.ndim == 1 and radii.shape != (n_blocks,)):
        raise ValueError(
            f"radius must be a number or {n_blocks} numbers (one per block), got {value!r}"
        )
    radii = np.broadcast_to(radii, (n_blocks,)).copy()
    if not (np.isfinite(radii).all() and (radii > 0).all()):
        raise ValueError(f"radius must be positive and finite, got {value!r}")
    if ball is not None and radii[0] != ball:
        raise ValueError(
            f"radius={float(radii[0])!r} contradicts the problem's penalty {penalty!r}; "
            "give one of them"
        )
    return radii


def _make_blocks(blocks, p):
    """``(order, bounds)``: permuted column ``k`` is column ``order[k]``; block ``b`` is
    ``bounds[b]:bounds[b + 1]`` of the permuted columns."""
    if isinstance(blocks, numbers.Integral) and not isinstance(blocks, bool):
        if not 1 <= blocks <= p:
            raise ValueError(f"blocks must lie in [1, n_features={p}], got {blocks}")
        sizes = [len(a) for a in np.array_split(np.arange(p), int(blocks))]
        return np.arange(p), np.concatenate([[0], np.cumsum(sizes)])
    labels = np.asarray(blocks)
    if labels.shape != (p,) or not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(
            f"blocks must be an int or {p} integer labels (one per feature), got {blocks!r}"
        )
    m = int(labels.max()) + 1
    counts = np.bincount(labels, minlength=m) if labels.min() >= 0 else None
    if counts is None or not counts.all():
        raise ValueError(
            f"blocks labels must be 0, ..., m - 1 with every block non-empty; got labels "
            f"{np.unique(labels).tolist()}"
        )
    return np.argsort(labels, kind="stable"), np.concatenate([[0], np.cumsum(counts)])


# --- the run -----------------------------------------------------------------------------


def _block_step(data, b, theta, gamma, radius, noise, scale, *, shared):
    """The work of block ``b`` at one iteration: select a vertex, move towards it.

    Reads the block's clipped gradient from ``data`` (the problem's
    :class:`~dpglm.access.blocks.MarginBlocks`, in memory or on its row
    chunks) at the current margins, and the block's coefficients; updates
    those coefficients and the margins. ``shared``: the margins were already
    scaled by ``1 - gamma`` for every block at once, so the block's own share
    of them need not be removed.

    Returns
    -------
    (int, int)
        The vertex ``sign * radius e_j`` (``j`` a permuted column).
    """
    a, e = data.bounds[b], data.bounds[b + 1]
    g = np.empty(e - a)
    data.gradient(b, g)
    c = noisy_vertex(g, radius, noise, scale)
    j, sign = a + c // 2, 1 - 2 * (c % 2)
    # the margins are never recomputed: their rounding errors add up at most
    # linearly in the iterations, and shrink when every block moves
    if not shared:
        data.add_block(a, e, theta, -gamma)
    theta[a:e] *= 1.0 - gamma
    theta[j] += gamma * sign * radius
    data.add_column(j, gamma * sign * radius)
    return j, sign


def _draw(sampling, sizes, count, source, release):
    """The blocks of ``count`` iterations, then the unit noise of their selections.

    The noise comes from the selections' ``release`` (zeros, drawing nothing,
    without noise); the kernel multiplies it by the block's scale.

    Returns the drawn blocks, the draws and where each iteration's draws start.
    """
    drawn = np.asarray(sampling.sample(source, count))
    ordered = np.sort(drawn, axis=-1)
    if (
        drawn.shape != (count, sampling.size)
        or ordered[:, 0].min() < 0
        or ordered[:, -1].max() >= sizes.size
        or (np.diff(ordered, axis=1) == 0).any()
    ):
        raise ValueError(
            f"sampling {sampling!r} must draw {sampling.size} distinct blocks in "
            f"[0, {sizes.size}) at every iteration"
        )
    need = 2 * sizes[drawn].sum(axis=1)
    total = int(need.sum())
    draws = release.unit(total)
    return drawn, draws, np.concatenate([[0], np.cumsum(need)])


def _run(data, domain, scales, steps, source, release):
    """The Frank-Wolfe iterations; returns the iterate, its history and the selections."""
    bounds, radii, sampling, order = domain.bounds, domain.radii, domain.sampling, domain.order
    sizes = np.diff(bounds)
    T = steps.size
    # an iteration reads the gradient of this share of the columns, on average
    share = float(sampling.probabilities @ sizes) / bounds[-1]
    shared = sampling.size == sizes.size
    theta = np.zeros(bounds[-1])
    history, marks = History.empty(theta.size), History.checkpoints(T)
    vertices = np.empty((T * sampling.size, 2), dtype=np.int64)
    chunk = max(1, _NOISE_CHUNK // (2 * domain.widest))
    selection = 0
    for t in range(T):
        if t % chunk == 0:
            drawn, draws, starts = _draw(sampling, sizes, min(chunk, T - t), source, release)
        offset, gamma = starts[t % chunk], steps[t]
        data.derivatives()
        if shared:  # every block moves: X theta scales as a whole
            data.scale_margins(1.0 - gamma)
        for b in drawn[t % chunk]:
            width = 2 * sizes[b]
            j, sign = _block_step(
                data, b, theta, gamma, radii[b], draws[offset : offset + width], scales[b],
                shared=shared,
            )  # fmt: skip
            offset += width
            vertices[selection] = order[j], sign
            selection += 1
        if t + 1 in marks:
            history.record((t + 1) * share, _unpermuted(theta, order))
    if selection != vertices.shape[0]:  # the plan is the truth
        raise RuntimeError(f"made {selection} selections, planned {vertices.shape[0]}")
    return _unpermuted(theta, order), history, vertices


def _unpermuted(theta, order):
    out = np.empty_like(theta)
    out[order] = theta
    return out


# --- the solvers -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Domain:
    """The blocks (contiguous after permuting the columns), their balls and their sampling."""

    order: np.ndarray
    bounds: np.ndarray
    radii: np.ndarray
    sampling: object

    @classmethod
    def create(cls, problem, *, radius, blocks, sampling, tau, parties):
        order, bounds = _make_blocks(blocks, problem.n_features)
        n_blocks = bounds.size - 1
        sampling = make_sampling(sampling, n_blocks, tau=tau, parties=parties)
        return cls(order, bounds, block_radii(radius, n_blocks, problem.penalty), sampling)

    @property
    def widest(self) -> int:
        """The most columns one iteration can read."""
        return int(np.sort(np.diff(self.bounds))[::-1][: self.sampling.size].sum())

    @property
    def labels(self) -> np.ndarray:
        """The block of each feature."""
        labels = np.empty(self.order.size, dtype=np.int64)
        labels[self.order] = np.repeat(np.arange(self.radii.size), np.diff(self.bounds))
        return labels


@dataclass(frozen=True)
class Setup:
    """A DP-FW or DP-BCFW fit, validated from the problem's shape: its plan and its settings.

    Attributes
    ----------
    fit_plan : FitPlan
        The template plan of the fit's selections, its target and its
        accountant (the default resolved from ``noise`` and ``delta``).
    solver : str
        ``"DP-FW"`` or ``"DP-BCFW"``, for messages, the label and ``info``.
    n_iter : int
        ``T``.
    clip : float
        ``C``, as given (the fit drops it when ``epsilon = inf``).
    noise : str
    domain : _Domain
        The blocks, their radii and their sampling.
    private : bool
        Whether ``epsilon < inf``.
    """

    fit_plan: FitPlan
    solver: str
    n_iter: int
    clip: float
    noise: str
    domain: _Domain
    private: bool


def check_dp_fw(problem) -> None:
    """Raise DP-FW's refusal of ``problem`` (intercept, loss, penalty); its shape is enough.

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> check_dp_fw(ProblemShape(10, 2, "hinge"))
    Traceback (most recent call last):
    ...
    ValueError: DP-FW needs a smooth datafit; the hinge loss is not (use 'squared_hinge', or DP-SGD for the hinge loss)
    """  # noqa: E501
    check_fw_problem(problem, "DP-FW")


def check_dp_bcfw(problem) -> None:
    """Raise DP-BCFW's refusal of ``problem`` (intercept, loss, penalty); its shape is enough.

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> check_dp_bcfw(ProblemShape(10, 2, "squared", fit_intercept=True))
    Traceback (most recent call last):
    ...
    ValueError: fit_intercept must be False for DP-BCFW: every coordinate lies in an L1 ball and an unconstrained intercept has no vertices (centre y, or add a constant column, which the ball then constrains)
    """  # noqa: E501
    check_fw_problem(problem, "DP-BCFW")


def _prepare(problem, *, solver, epsilon, delta, n_iter, clip, noise, accountant, **domain):
    """The checks after the problem's, in the fit's order, and the plan; no record is read."""
    epsilon, delta = check_privacy_target(epsilon, delta)
    n_iter = check_positive_int("n_iter", n_iter)
    clip = check_positive("clip", clip, allow_inf=True)
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
    if accountant is None:
        # advanced composition needs delta > 0; at delta = 0 epsilons add up
        accountant = ("advanced" if delta > 0 else "basic") if noise == "laplace" else "auto"
    domain = _Domain.create(problem, **domain)
    private = not math.isinf(epsilon)
    check_finite_clip(clip, private=private)
    # n is public (replace-one neighbours): the sensitivity is known before any record
    sensitivity = 2.0 * float(domain.radii.max()) * clip / problem.n_samples if private else None
    template = fw_plan(n_iter * domain.sampling.size, noise, sensitivity)
    return Setup(
        FitPlan(template, epsilon, delta, accountant),
        solver=solver,
        n_iter=n_iter,
        clip=clip,
        noise=noise,
        domain=domain,
        private=private,
    )


def prepare_dp_fw(problem, *, epsilon, delta, radius, n_iter, clip, noise, accountant) -> Setup:
    """The checks of :func:`dp_fw`, in its order, and the plan it will charge.

    Reads the problem's shape only (a :class:`~dpglm.problem.Problem`, a
    :class:`~dpglm.distributed.data_parallel.ShardedProblem` or a
    :class:`~dpglm.solvers.registry.ProblemShape`); the keywords are those of
    :func:`dp_fw`, which gives them all.

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> setup = prepare_dp_fw(
    ...     ProblemShape(100, 4, "squared"),
    ...     epsilon=1.0,
    ...     delta=0.0,
    ...     radius=2.0,
    ...     n_iter=10,
    ...     clip=1.0,
    ...     noise="laplace",
    ...     accountant=None,
    ... )
    >>> (event,) = setup.fit_plan.template.events
    >>> event.count, event.sensitivity, setup.fit_plan.accountant
    (10, 0.04, 'basic')
    """
    check_dp_fw(problem)
    return _prepare(
        problem,
        solver="DP-FW",
        epsilon=epsilon,
        delta=delta,
        radius=radius,
        blocks=1,
        sampling=Elementary(1),
        tau=None,
        parties=None,
        n_iter=n_iter,
        clip=clip,
        noise=noise,
        accountant=accountant,
    )


def prepare_dp_bcfw(
    problem, *, epsilon, delta, radius, blocks, sampling, tau, parties, n_iter, clip, noise,
    accountant,
) -> Setup:  # fmt: skip
    """The checks of :func:`dp_bcfw`, in its order, and the plan it will charge.

    Reads the problem's shape only, as :func:`prepare_dp_fw`; the keywords
    are those of :func:`dp_bcfw`, which gives them all.

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> setup = prepare_dp_bcfw(
    ...     ProblemShape(100, 6, "squared"),
    ...     epsilon=1.0,
    ...     delta=1e-6,
    ...     radius=1.0,
    ...     blocks=3,
    ...     sampling="tau-nice",
    ...     tau=2,
    ...     parties=None,
    ...     n_iter=10,
    ...     clip=1.0,
    ...     noise="gumbel",
    ...     accountant=None,
    ... )
    >>> setup.fit_plan.template.events[0].count, setup.fit_plan.accountant
    (20, 'auto')
    """
    check_dp_bcfw(problem)
    return _prepare(
        problem,
        solver="DP-BCFW",
        epsilon=epsilon,
        delta=delta,
        radius=radius,
        blocks=problem.n_features if blocks is None else blocks,
        sampling=sampling,
        tau=tau,
        parties=parties,
        n_iter=n_iter,
        clip=clip,
        noise=noise,
        accountant=accountant,
    )


def _spend(problem, setup, *, budget, random_state, secure):
    """Calibrate and charge the fit's selections."""
    return setup.fit_plan.spend(
        budget=budget,
        label=f"{setup.solver} ({setup.noise}) on {problem!r}",
        assumptions=(
            *neighbouring_assumptions(NEIGHBOURING),
            "selections of different blocks in one iteration composed sequentially",
            HYPERPARAMETER_ASSUMPTION,
            "radius, blocks and sampling chosen independently of the data",
        ),
        warnings=setup.fit_plan.leaks,
        random_state=random_state,
        secure=secure,
    )


def _fit(problem, setup, *, budget, random_state, secure):
    solver, n_iter, noise, domain = setup.solver, setup.n_iter, setup.noise, setup.domain
    spent = _spend(problem, setup, budget=budget, random_state=random_state, secure=secure)
    source = spent.source  # keyed to the charge: no two fits of one budget share noise
    # the budget is charged: only now is the data read for training
    selection = spent.release(0)
    # one record moves the score -<g, s> of a vertex s = +-r_b e_j by at most 2 r_b C / n
    clip = setup.clip
    scales = selection.scale(2.0, domain.radii, clip, over=problem.n_samples)
    if not setup.private:
        clip = math.inf
    steps = 2.0 / (domain.sampling.p_min * np.arange(n_iter) + 2.0)
    # the margins live with the problem's records: in memory, or on its row chunks
    data = problem.margin_blocks(domain.order, domain.bounds, clip)
    with threads_for(problem.dense_entries(domain.widest)):
        theta, history, vertices = _run(data, domain, scales, steps, source, selection)
    return FitResult.from_theta(
        problem,
        theta,
        history=history,
        report=spent.report,
        n_iter=n_iter,
        info={
            "solver": solver,
            "noise": noise,
            "radius": domain.radii,
            "clip": clip,
            "blocks": domain.labels,
            "sampling": domain.sampling,
            "p_min": domain.sampling.p_min,
            "step_sizes": steps,
            "selection_noise_scale": scales,
            "vertices": vertices,
        },
    )


def dp_fw(
    problem,
    *,
    epsilon: float,
    delta: float,
    radius: float | None = None,
    n_iter: int = 100,
    clip: float = 1.0,
    noise: str = "gumbel",
    budget=None,
    accountant: str | None = None,
    random_state=None,
    secure: bool = False,
) -> FitResult:
    """Fit ``problem`` over the L1 ball with private Frank-Wolfe.

    Parameters
    ----------
    problem : Problem
        Smooth datafit, no intercept, no penalty or an
        :class:`~dpglm.penalties.L1Ball` (which then gives the radius).
    epsilon, delta : float
        Target guarantee (replace-one neighbours); ``epsilon = inf`` is
        non-private Frank-Wolfe (exact oracle, no clipping).
    radius : float, optional
        ``r``, radius of the L1 ball; defaults to the problem's L1Ball.
    n_iter : int, default=100
        ``T``, the number of steps (one pass over the data each).
    clip : float, default=1.0
        ``C``, the bound on every per-sample gradient entry; finite unless
        ``epsilon = inf``.
    noise : {"gumbel", "laplace"}, default="gumbel"
        See the module docstring.
    budget : PrivacyBudget, optional
    accountant : str, optional
        Defaults to ``"advanced"`` with Laplace noise (the original's
        calibration; ``"basic"`` at ``delta = 0``) and ``"auto"`` with Gumbel
        noise.
    random_state : None, int, Generator or NoiseSource
        All randomness comes from it, mixed with the budget charge (see
        :func:`~dpglm.privacy.spending.spend`).
    secure : bool, default=False

    Returns
    -------
    FitResult
        ``info["vertices"]`` holds the selected vertices as ``(j, sign)``
        rows (vertex ``sign * r e_j``), ``history`` the iterate at up to 100
        evenly spaced steps.

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.penalties import L1Ball
    >>> from dpglm.problem import Problem
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> prob = Problem(X, np.array([1.0, -1.0, 0.0]), "squared", L1Ball(1.0))
    >>> fit = dp_fw(prob, epsilon=np.inf, delta=0.0, n_iter=200)
    >>> fit.info["vertices"][:4].tolist()  # +e_0, -e_1, +e_0, -e_1, ...
    [[0, 1], [1, -1], [0, 1], [1, -1]]
    >>> np.round(fit.coef, 2)  # the optimum is (0.5, -0.5)
    array([ 0.5, -0.5])
    """
    setup = prepare_dp_fw(
        problem,
        epsilon=epsilon,
        delta=delta,
        radius=radius,
        n_iter=n_iter,
        clip=clip,
        noise=noise,
        accountant=accountant,
    )
    return _fit(problem, setup, budget=budget, random_state=random_state, secure=secure)


def dp_bcfw(
    problem,
    *,
    epsilon: float,
    delta: float,
    radius,
    blocks=None,
    sampling="uniform",
    tau: int | None = None,
    parties=None,
    n_iter: int = 100,
    clip: float = 1.0,
    noise: str = "gumbel",
    budget=None,
    accountant: str | None = None,
    random_state=None,
    secure: bool = False,
) -> FitResult:
    """Fit ``problem`` over a product of L1 balls with private BCFW-AS.

    Parameters
    ----------
    problem : Problem
        Smooth datafit, no intercept, no penalty (an
        :class:`~dpglm.penalties.L1Ball` only with one block).
    epsilon, delta : float
        Target guarantee (replace-one neighbours); ``epsilon = inf`` is
        non-private BCFW-AS.
    radius : float or array_like of shape (n_blocks,)
        ``r_b``, radius of each block's L1 ball (one number: the same for all).
    blocks : int or array_like of int of shape (n_features,), optional
        Number of blocks (contiguous, near-equal ranges of features), or the
        block of each feature, labelled ``0, ..., m - 1``. Defaults to one block
        per feature.
    sampling : Sampling or {"elementary", "uniform", "tau-nice", "distributed"}
        The block sampling, see :mod:`dpglm.solvers.fw_sampling`.
    tau : int, optional
        Blocks per draw (``"tau-nice"``) or per party (``"distributed"``).
    parties : int or array_like of int of shape (n_blocks,), optional
        The parties of ``"distributed"``: their number, or each block's party.
    n_iter : int, default=100
        ``T``, the number of iterations.
    clip, noise, budget, accountant, random_state, secure
        As in :func:`dp_fw`.

    Returns
    -------
    FitResult
        ``info["vertices"]`` holds the ``T * sampling.size`` selected vertices
        as ``(j, sign)`` rows (vertex ``sign * r_b e_j`` of ``j``'s block),
        ``info["blocks"]`` the block of each feature; ``history.passes``
        counts the columns whose gradient was read, in expectation and in
        passes over the data (an iteration with every block drawn is one pass).

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.problem import Problem
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (200, 6))
    >>> y = X @ np.array([1.0, 0.0, 0.0, -1.0, 0.0, 0.0])
    >>> fit = dp_bcfw(
    ...     Problem(X, y, "squared"),
    ...     epsilon=np.inf,
    ...     delta=0.0,
    ...     radius=1.0,
    ...     blocks=2,
    ...     sampling="uniform",
    ...     n_iter=2000,
    ...     random_state=0,
    ... )
    >>> np.round(fit.coef, 1), fit.info["p_min"]
    (array([ 1.,  0.,  0., -1.,  0.,  0.]), 0.5)
    """
    setup = prepare_dp_bcfw(
        problem,
        epsilon=epsilon,
        delta=delta,
        radius=radius,
        blocks=blocks,
        sampling=sampling,
        tau=tau,
        parties=parties,
        n_iter=n_iter,
        clip=clip,
        noise=noise,
        accountant=accountant,
    )
    return _fit(problem, setup, budget=budget, random_state=random_state, secure=secure)


SOLVER = (
    Solver(
        name="dp-fw",
        summary="private Frank-Wolfe on the L1 ball (Talwar, Thakurta and Zhang 2015)",
        fit=dp_fw,
        prepare=prepare_dp_fw,
        check=check_dp_fw,
        estimator=None,
        order=70,
    ),
    Solver(
        name="dp-bcfw",
        summary="private block-coordinate Frank-Wolfe on a product of L1 balls, BCFW-AS "
        "(Lou and Cheung 2018)",
        fit=dp_bcfw,
        prepare=prepare_dp_bcfw,
        check=check_dp_bcfw,
        estimator=None,
        order=80,
    ),
)
