"""DP-GCD: private greedy (proximal) coordinate descent (Mangold et al. 2023).

Starting from ``w = 0``, each of ``T`` steps

1. selects a coordinate by report-noisy-max over the greedy rule's scores
   (:mod:`dpglm._kernels.greedy`): ``GS-s`` (Algorithm 1's
   ``|g_j| / sqrt(M_j)`` for smooth problems), ``GS-r`` or ``GS-q`` (the
   proximal rules of the paper's appendix C), computed on the clipped
   gradient ``g_j = (1/n) sum_i clip(l'(x_i . w, y_i) X_ij, C_j)``;
2. updates it: ``w_j <- prox_{gamma_j psi_j}(w_j - gamma_j (g_j + eta_j))``
   with ``gamma_j = gamma / M_j``.

Privacy (replace-one neighbours). Every score moves by at most
``Delta = 2 C / (n sqrt(tr M))`` and ``g_j`` by ``2 C_j / n``. Two noise modes:

``"tight"`` (default)
    Gumbel noise on the scores (the exponential mechanism, ``epsilon**2 / 8``-zCDP
    per selection) and Gaussian noise on the update, composed by the
    accountant (zCDP, RDP or PLD, the tightest); ``selection_share`` is the
    selection's share of each step's zCDP budget.
``"paper"``
    Laplace noise on the scores and on the update, calibrated as the paper's
    appendix A does: ``2T`` releases of ``epsilon'`` each under the advanced
    composition theorem (its formula (2)); ``selection_share`` is the
    selection's share of each step's ``2 epsilon'``. One correction: the
    selection's Laplace scale is ``2 Delta / epsilon'``, twice the paper's
    ``Delta / epsilon'``, because report-noisy-max with Laplace noise of scale
    ``Delta / epsilon'`` is only ``2 epsilon'``-DP when scores can move in
    opposite directions between neighbours, as partial derivatives do (the
    ``epsilon'`` bound needs monotone scores, such as counts). The audit in
    the tests catches the paper's scale.

The paper puts the selection noise inside the rule (``|g_j + chi_j|``); here
it is added to the score, the form that report-noisy-max's proof covers
(for scores with flat regions, such as GS-s at ``w_j = 0`` under an L1
penalty, noise inside the rule can tie and leak through the tie-break).

On sparse data the clipped gradient is patched after each step from the rows
where the updated column is non-zero, and recomputed in full once the patches
have read as many entries as one pass (which bounds the rounding drift).

``epsilon = inf`` runs the same code without noise or clipping.

Examples
--------
>>> import numpy as np
>>> from dpglm.penalties import L1
>>> from dpglm.problem import Problem
>>> from dpglm.solvers.dp_gcd import dp_gcd
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, (5000, 20))
>>> y = 3 * X[:, 0] - 2 * X[:, 1] + 0.1 * rng.standard_normal(5000)
>>> fit = dp_gcd(
...     Problem(X, y, "squared", L1(0.01)),
...     epsilon=1.0,
...     delta=1e-6,
...     n_iter=10,
...     clip=2.0,
...     feature_bounds=1.0,
...     random_state=0,
... )
>>> sorted(np.flatnonzero(fit.coef)[:2].tolist())
[0, 1]
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from dpglm import _kernels
from dpglm._kernels.greedy import GS_Q, GS_R, GS_S, greedy_select
from dpglm._kernels.jit import threads_for
from dpglm.privacy.events import GaussianEvent, LaplaceEvent, NoisyMaxEvent, PrivacyPlan
from dpglm.privacy.releases import Release
from dpglm.privacy.report import collect_privacy_warnings, neighbouring_assumptions
from dpglm.privacy.targets import Share, check_privacy_target
from dpglm.solvers.coordinate_steps import check_coordinate_problem, coordinate_arrays
from dpglm.solvers.hyperparameters import (
    HYPERPARAMETER_ASSUMPTION,
    check_finite_clip,
    check_positive,
    check_positive_int,
    check_single_output,
    log_inverse_delta,
    slope_scale,
)
from dpglm.solvers.registry import EstimatorMapping, FitPlan, Solver
from dpglm.solvers.result import FitResult, History
from dpglm.solvers.smoothness import DATA_LEAK, SmoothnessSpec

NEIGHBOURING = "replace_one"
RULES = {"gs-s": GS_S, "gs-r": GS_R, "gs-q": GS_Q}
NOISE_MODES = ("tight", "paper")
#: selection noise drawn at most this many values at a time
_NOISE_BLOCK = 1 << 20


#: the largest default clip of the estimators' DP-GCD fits of the logistic and squared
#: losses (see estimator_clip; a loss with a steeper slope scales it)
MAX_ESTIMATOR_CLIP = 4.0


def estimator_clip(shape, batch_size=None) -> float:
    """The estimators' DP-GCD clip: ``min(4, sqrt(d) / 2)`` for ``d`` coordinates, times the slope.

    Times the loss's :func:`~dpglm.solvers.hyperparameters.slope_scale` (4 for
    the squared hinge, whose slope at the null margin is four times the
    logistic's): measured on the squared hinge (2 seeds, clips 1 to 16,
    epsilon 1 and 4), 16 against 4 scores 0.831 and 0.836 against 0.791 and
    0.793 on adult, 0.919 against 0.904 and 0.911 on phishing, 0.611 and 0.614
    against 0.585 and 0.581 on madelon, and the same on electricity.
    (``batch_size``: None, DP-GCD reads every record at each step.)

    ``C`` is split over the coordinates as ``C_j = C sqrt(M_j / tr M)``, and the
    records reach DP-GCD scaled into ``[-1, 1]``, where a record's gradient,
    ``l'(z) x``, has norm up to ``sqrt(d)`` (``|l'| <= 1`` for the logistic loss
    and the scaled targets' residuals): a clip at half of it leaves the typical
    terms whole. A clip of 1 cut them to a fraction of their size, and with 20
    greedy steps DP-GCD moved too little: adult (a9a, 124 coordinates), with an
    L1 penalty (what ``solver="auto"`` fits with DP-GCD), stayed at the
    majority class (0.764) at epsilon 1 and 4. Measured (3 seeds, epsilon 1
    and 4, clips 1 to 8; ``benchmarks/bench_defaults.py``'s tables): adult
    0.831 and 0.832 (the majority at clip 1), phishing 0.910 and 0.917 (0.901),
    madelon 0.598 and 0.609 (0.575 and 0.579), communities 0.456 and 0.603
    (0.392 and 0.623), California within 0.2 point, electricity 0.1 to 0.2 point
    below. At most 4: beyond, the typical record's norm, not the largest, sets
    the gradients' scale (madelon's 501 coordinates: 0.555 at clip 11 and
    epsilon 1, against 0.598 at 4).

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> estimator_clip(ProblemShape(100, 8, "logistic", "l1", fit_intercept=True))
    1.5
    >>> estimator_clip(ProblemShape(100, 500, "logistic", "l1", fit_intercept=True))
    4.0
    >>> estimator_clip(ProblemShape(100, 500, "squared_hinge", "l2", fit_intercept=True))
    16.0
    """
    return min(MAX_ESTIMATOR_CLIP, math.sqrt(shape.n_coords) / 2.0) * slope_scale(shape.datafit)


#: the constant of :func:`estimator_steps`, measured
STEPS_FACTOR = 0.4
#: the fewest and the most greedy steps :func:`estimator_steps` gives
MIN_ESTIMATOR_STEPS, MAX_ESTIMATOR_STEPS = 10, 1000


def estimator_steps(shape, epsilon: float, delta: float) -> int:
    """The estimators' number of greedy steps: ``0.4 (n epsilon)^(2/3) / log(1/delta)^(1/3)``.

    The law of Mangold et al. (2023, Theorem 4.3, convex case):
    ``T = (n^2 epsilon^2 R_M^2 M_min / (2^7 L_max^2 log(1/delta)))^(1/3)``
    balances the optimisation error, which falls like ``1 / T``, against the
    noise of ``T`` releases, which grows like ``sqrt(T)``. Its data-dependent
    factor ``(R_M^2 M_min / (2^7 L_max^2))^(1/3)`` (the distance to the
    optimum in the ``M``-norm, the clip) is not known before the fit, and is
    replaced by the constant 0.4, measured: the estimators' DP-GCD with 10 to
    320 steps (5 seeds, epsilon 1 and 4, ``delta = 1 / n^2``) on the tables of
    ``benchmarks/bench_defaults.py``, DPLasso on california (n = 15,480),
    its raw StatLib columns and communities (1,496), the L1 logistic fit on
    adult (32,561), phishing (8,291) and electricity (33,984) and the L2 fit
    on madelon (1,500). The best number of steps grows with ``n epsilon``:
    about 20 on madelon and 20 to 50 on communities at epsilon 1, 100 to 320
    on the larger tables. Against the former constant 20, the law gains on
    every table with more than 8,000 records (adult 0.842 against 0.832 at
    epsilon 1, 0.847 against 0.833 at 4; phishing 0.918 and 0.929 against
    0.910 and 0.916; california raw R^2 0.591 and 0.595 against 0.565 and
    0.566) and gives about 20 steps, as before, to the small tables at
    epsilon 1. The constant stands for real tables, whose optimum lies far
    from 0 in many coordinates: on a synthetic problem close to its optimum
    after a few steps (5,000 records uniform in ``[-1, 1]^50``, 5 non-zero
    coefficients, DPLasso at epsilon 1, 10 seeds) the law's 45 steps score
    R^2 0.962 against 0.978 at 20 (0.908 at 100): the steps beyond the
    optimum only add noise. Without a ``delta`` (DP-GCD's pure-DP plan)
    ``1 / n^2`` stands for it; without privacy (``epsilon = inf``, as
    ``dpglm compare`` runs it) the most steps.

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> estimator_steps(ProblemShape(1500, 500, "logistic", "l2"), 1.0, 1500**-2.0)
    21
    >>> estimator_steps(ProblemShape(32561, 123, "logistic", "l1"), 1.0, 32561**-2.0)
    148
    """
    if not epsilon > 0:  # refused by the fit's own checks, with their message
        return MIN_ESTIMATOR_STEPS
    if not math.isfinite(epsilon):
        return MAX_ESTIMATOR_STEPS
    n = shape.n_samples
    steps = (
        STEPS_FACTOR * (n * epsilon) ** (2.0 / 3.0) / log_inverse_delta(delta, n) ** (1.0 / 3.0)
    )
    return int(min(MAX_ESTIMATOR_STEPS, max(MIN_ESTIMATOR_STEPS, round(steps))))


def greedy_plan(n_iter: int, noise: str, selection_share: float, delta_score, delta_grad):
    """Template plan of ``n_iter`` DP-GCD steps (selection then update per step).

    Examples
    --------
    >>> plan = greedy_plan(10, "paper", 0.5, 0.01, 0.02)
    >>> [(e.kind, e.count, e.epsilon) for e in plan.events]
    [('noisy_max', 10, 1.0), ('laplace', 10, 1.0)]
    """
    share = Share(selection_share, "selection_share")
    if noise == "paper":
        # equal per-release epsilon' at s = 1/2: selection costs 2 / z_sel, update 1 / z_upd
        selection = NoisyMaxEvent(
            noise="laplace",
            noise_multiplier=1.0 / share.value,
            count=n_iter,
            sensitivity=delta_score,
        )
        update = LaplaceEvent(
            noise_multiplier=0.5 / share.rest, count=n_iter, sensitivity=delta_grad
        )
    else:
        # zCDP: the selection costs 1 / (2 z_sel^2), the update 1 / (2 z_upd^2)
        selection = NoisyMaxEvent(
            noise="gumbel",
            noise_multiplier=1.0 / math.sqrt(share.value),
            count=n_iter,
            sensitivity=delta_score,
        )
        update = GaussianEvent(
            noise_multiplier=1.0 / math.sqrt(share.rest), count=n_iter, sensitivity=delta_grad
        )
    selection = _labelled(selection, "greedy coordinate selection (noisy max over rule scores)")
    update = _labelled(update, "clipped partial derivative of the selected coordinate "
                       "(sensitivity 2 C_j / n, shown for C)")  # fmt: skip
    return PrivacyPlan((selection, update), NEIGHBOURING)


def _labelled(event, label):
    return replace(event, label=label)


def _sensitivities(private: bool, clip: float, n: int, smoothness) -> tuple:
    """``(Delta_score, Delta_grad)`` for the report, or Nones when ``tr M`` is not known yet.

    Every rule's score moves by at most ``2 C / (n sqrt(tr M))``, a partial
    derivative by ``2 C_j / n`` (shown for ``C``); a non-private fit has none.
    """
    if not private or smoothness is None:
        return None, None
    return 2.0 * clip / (n * math.sqrt(smoothness.sum())), 2.0 * clip / n


def _template(spec, n_iter, noise, selection_share, sensitivities) -> PrivacyPlan:
    """The private smoothness estimate's events (if any), then the steps' (:func:`greedy_plan`)."""
    return spec.plan + greedy_plan(n_iter, noise, selection_share, *sensitivities)


def check(problem) -> None:
    """Raise DP-GCD's refusal of ``problem``, if it has one.

    DP-GCD needs a smooth loss (coordinate-wise smoothness constants) and a
    separable penalty (coordinate-wise proximal steps); it fits an intercept,
    and runs on records in memory or in row chunks (a ShardedProblem).

    Parameters
    ----------
    problem : Problem, ShardedProblem or ProblemShape
        Only its datafit and penalty are read.

    Raises
    ------
    ValueError
        The loss is not smooth or the penalty is not separable.

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> check(ProblemShape(10, 2, "logistic", "l1", fit_intercept=True, chunked=True))
    >>> check(ProblemShape(10, 2, "hinge"))
    Traceback (most recent call last):
    ...
    ValueError: DP-GCD needs a smooth loss; the hinge loss has no coordinate-wise smoothness constant (use 'squared_hinge', or DP-SGD for the hinge loss)
    """  # noqa: E501
    check_single_output(problem, "DP-GCD")
    check_coordinate_problem(problem, "DP-GCD")


@dataclass(frozen=True)
class Setup:
    """A DP-GCD fit as :func:`prepare` validated it: its plan and the settings it runs.

    Attributes
    ----------
    fit_plan : FitPlan
        The template plan (the private smoothness estimate, if any, then a
        selection and an update per step), the target and the accountant
        (``"advanced"`` by default in paper mode).
    step : float
        ``gamma``.
    clip : float
        ``C`` as given (finite for a private fit).
    n_iter : int
        ``T``.
    noise : {"tight", "paper"}
    selection_share : float
        The selection's share of each step's budget.
    rule_code : int
        The greedy rule, ``"auto"`` resolved.
    spec : SmoothnessSpec
        The source of ``M_j``, with the feature bounds.
    smoothness : ndarray or None
        ``M_j`` when public (``"bounds"``), known before the charge; else None.
    """

    fit_plan: FitPlan
    step: float
    clip: float
    n_iter: int
    noise: str
    selection_share: float
    rule_code: int
    spec: SmoothnessSpec
    smoothness: np.ndarray | None

    def template(self, n_samples: int, smoothness) -> PrivacyPlan:
        """The template plan, its events showing the sensitivities ``M_j`` gives.

        Accounting ignores sensitivities: whatever ``M_j``, this is the plan of
        :attr:`fit_plan`, event for event.
        """
        sensitivities = _sensitivities(self.fit_plan.private, self.clip, n_samples, smoothness)
        return _template(self.spec, self.n_iter, self.noise, self.selection_share, sensitivities)


def prepare(
    problem,
    *,
    epsilon: float,
    delta: float,
    n_iter: int,
    step: float,
    clip: float,
    rule: str,
    noise: str,
    selection_share: float,
    smoothness: str,
    feature_bounds,
    smoothness_share: float,
    accountant: str | None,
) -> Setup:
    """The checks of :func:`dp_gcd`, in its order, and the plan it charges; no record is read.

    Parameters
    ----------
    problem : Problem, ShardedProblem or ProblemShape
        Only its shape is read.
    epsilon, delta, n_iter, step, clip, rule, noise, selection_share, smoothness, \
feature_bounds, smoothness_share, accountant
        As in :func:`dp_gcd` (no defaults here: the fit function's are the ones).

    Returns
    -------
    Setup
        Its ``fit_plan.leaks`` holds the leak warning of ``M_j`` read from the
        data (``smoothness="data"``, or ``"auto"`` without bounds). Its
        template shows the sensitivities when ``M_j`` is public; with ``M_j``
        read from the data the fit shows them once it has read them.

    Raises
    ------
    TypeError, ValueError
        What :func:`dp_gcd` raises before its charge, with its message.

    Examples
    --------
    >>> from dpglm.penalties import L1
    >>> from dpglm.solvers.registry import ProblemShape
    >>> setup = prepare(
    ...     ProblemShape(1000, 4, "squared", L1(0.1)),
    ...     epsilon=1.0,
    ...     delta=1e-6,
    ...     n_iter=10,
    ...     step=1.0,
    ...     clip=2.0,
    ...     rule="auto",
    ...     noise="paper",
    ...     selection_share=0.5,
    ...     smoothness="bounds",
    ...     feature_bounds=0.5,
    ...     smoothness_share=0.1,
    ...     accountant=None,
    ... )
    >>> [(e.kind, e.count, e.sensitivity) for e in setup.fit_plan.template.events]
    [('noisy_max', 10, 0.004), ('laplace', 10, 0.004)]
    >>> _rule_name(setup.rule_code), setup.fit_plan.accountant, setup.fit_plan.leaks
    ('gs-r', 'advanced', ())
    """
    check(problem)
    epsilon, delta = check_privacy_target(epsilon, delta)
    step = check_positive("step", step)
    clip = check_positive("clip", clip, allow_inf=True)
    n_iter = check_positive_int("n_iter", n_iter)
    if noise not in NOISE_MODES:
        raise ValueError(f"noise must be one of {NOISE_MODES}, got {noise!r}")
    share = Share(selection_share, "selection_share")
    rule_code = _rule_code(rule, problem)
    if accountant is None:
        accountant = "advanced" if noise == "paper" else "auto"
    private = not math.isinf(epsilon)
    check_finite_clip(clip, private=private)
    spec = SmoothnessSpec.create(
        problem,
        smoothness,
        feature_bounds=feature_bounds,
        epsilon=epsilon,
        delta=delta,
        share=smoothness_share,
        neighbouring=NEIGHBOURING,
    )
    # M_j from public bounds reads no record (nor warns); from the data it is known only
    # once the fit reads it, and privately only after the charge
    public = spec.estimate(problem, source=None) if spec.mode == "bounds" else None
    sensitivities = _sensitivities(private, clip, problem.n_samples, public)
    template = _template(spec, n_iter, noise, share.value, sensitivities)
    leaks = (DATA_LEAK,) if spec.mode == "data" else ()
    fit_plan = FitPlan(template, epsilon, delta, accountant, leaks)
    return Setup(fit_plan, step, clip, n_iter, noise, share.value, rule_code, spec, public)


def dp_gcd(
    problem,
    *,
    epsilon: float,
    delta: float,
    n_iter: int = 20,
    step: float = 1.0,
    clip: float = 1.0,
    rule: str = "auto",
    noise: str = "tight",
    selection_share: float = 0.5,
    smoothness: str = "auto",
    feature_bounds=None,
    smoothness_share: float = 0.1,
    budget=None,
    accountant: str | None = None,
    random_state=None,
    secure: bool = False,
) -> FitResult:
    """Fit ``problem`` with DP-GCD.

    Parameters
    ----------
    problem : Problem
        Smooth datafit, separable penalty.
    epsilon, delta : float
        Target guarantee (replace-one neighbours); ``epsilon = inf`` is the
        non-private greedy method (exact selection, no clipping).
    n_iter : int, default=20
        ``T``, the number of greedy steps (each reads the whole gradient: the
        paper counts one step as one pass).
    step : float, default=1.0
        ``gamma``: step size ``gamma / M_j``.
    clip : float, default=1.0
        ``C``, split into ``C_j = C sqrt(M_j / tr M)``; finite unless ``epsilon = inf``.
    rule : {"auto", "gs-s", "gs-r", "gs-q"}, default="auto"
        Greedy rule; ``"auto"`` is ``"gs-s"`` (Algorithm 1) without an L1
        part in the penalty and ``"gs-r"`` with one (the rule of the paper's
        figures).
    noise : {"tight", "paper"}, default="tight"
        See the module docstring.
    selection_share : float in (0, 1), default=0.5
        Selection's share of each step's budget.
    smoothness, feature_bounds, smoothness_share
        Source of ``M_j``, see :mod:`dpglm.solvers.smoothness`; with
        ``feature_bounds`` every entry is clipped to ``[-B_j, B_j]`` (per
        record) before training.
    budget : PrivacyBudget, optional
    accountant : str, optional
        Defaults to ``"advanced"`` in paper mode (the paper's calibration)
        and ``"auto"`` otherwise.
    random_state : None, int, Generator or NoiseSource
        All randomness comes from it, mixed with the budget charge (see
        :func:`~dpglm.privacy.spending.spend`).
    secure : bool, default=False

    Returns
    -------
    FitResult
        ``history`` holds the iterate at up to 100 evenly spaced steps.
    """
    setup = prepare(
        problem,
        epsilon=epsilon,
        delta=delta,
        n_iter=n_iter,
        step=step,
        clip=clip,
        rule=rule,
        noise=noise,
        selection_share=selection_share,
        smoothness=smoothness,
        feature_bounds=feature_bounds,
        smoothness_share=smoothness_share,
        accountant=accountant,
    )
    step, clip, n_iter, spec = setup.step, setup.clip, setup.n_iter, setup.spec
    rule_code = setup.rule_code
    n, p = problem.n_samples, problem.n_features
    private = setup.fit_plan.private
    # with public bounds, every entry is clipped to them before any kernel reads it
    problem = spec.bounded(problem)
    # M_j from the problem's column statistics, wherever its records are (a partial adds
    # no frame: a leak warning still points at the caller of dp_gcd)
    estimate = functools.partial(spec.estimate, problem)
    # leaked data: no draw, so nothing random happens before the charge
    with collect_privacy_warnings() as leaks:
        M = estimate(source=None) if spec.mode == "data" else setup.smoothness
    fit_plan = setup.fit_plan
    if spec.mode == "data":
        # the report shows the sensitivities tr M gives, read from the data with the
        # leak warned above; the plan's accounting is prepare's (it ignores sensitivities)
        fit_plan = replace(fit_plan, template=setup.template(n, M))
    spent = fit_plan.spend(
        budget=budget,
        label=f"DP-GCD ({noise}) on {problem!r}",
        assumptions=(
            *neighbouring_assumptions(NEIGHBOURING),
            *spec.assumptions,
            f"greedy rule {_rule_name(rule_code)}; selection noise added to the rule's score",
            HYPERPARAMETER_ASSUMPTION,
        ),
        warnings=leaks,
        random_state=random_state,
        secure=secure,
    )
    source = spent.source  # keyed to the charge: no two fits of one budget share noise
    if M is None:
        M = estimate(source=source)
    arrays = coordinate_arrays(
        M, step=step, clip=clip if private else math.inf, penalty=problem.penalty, n_features=p
    )
    selection, update = spent.release(-2), spent.release(-1)
    # every rule's score of coordinate j moves by at most 2 C_j / (n sqrt(M_j)), which is
    # 2 C / (n sqrt(tr M)) for all j; an update releases a mean of terms clipped to C_j
    score_scale = selection.scale(2.0, clip, over=n * math.sqrt(M.sum()))
    update_scale = update.scale(2.0, arrays.clip, over=n)

    draws = _Draws(selection, update, score_scale, update_scale)
    # one thread for a small dense pass; sparse or sharded data (inf) keep the default threads
    with threads_for(problem.dense_entries()):
        theta, history, picks = _run(problem, arrays, rule_code, draws, n_iter)
    return FitResult.from_theta(
        problem,
        theta,
        history=history,
        report=spent.report,
        n_iter=n_iter,
        info={
            "solver": "dp-gcd",
            "rule": _rule_name(rule_code),
            "noise": noise,
            "smoothness": M,
            "smoothness_source": spec.mode,
            "step_sizes": arrays.step,
            "clip_thresholds": arrays.clip,
            "selection_noise_scale": score_scale,
            "update_noise_scale": update_scale,
            "selected": picks,
        },
    )


@dataclass(frozen=True)
class _Draws:
    """The noise of a fit: its selection and update releases, and the scales they get.

    The kernels take unit draws (Gumbel or Laplace for the selection, Gaussian or
    Laplace for the update; zeros without noise) and multiply them by the scales.
    """

    selection: Release
    update: Release
    score_scale: float
    update_scale: np.ndarray


def _run(problem, arrays, rule_code, draws, n_iter):
    """The ``n_iter`` greedy steps; returns the iterate, the history and the selections."""
    n_coords = problem.n_coords
    M = arrays.smoothness
    state = problem.clipped_gradient_tracker(arrays.clip)
    theta = np.zeros(n_coords)
    history = History.empty(n_coords)
    marks = History.checkpoints(n_iter)
    block = max(1, min(n_iter, _NOISE_BLOCK // n_coords))
    selection_noise = np.empty((0, n_coords))
    picks = np.empty(n_iter, dtype=np.int64)
    for t in range(n_iter):
        row = t % block
        if row == 0:
            rows = min(block, n_iter - t)
            selection_noise = draws.selection.unit((rows, n_coords))
            update_noise = draws.update.unit((rows,))
        G = state.gradient(t)
        j = greedy_select(
            rule_code, G, theta, M, arrays.l1, arrays.l2, arrays.lo, arrays.hi,
            selection_noise[row], draws.score_scale,
        )  # fmt: skip
        picks[t] = j
        g = G[j] + update_noise[row] * draws.update_scale[j]
        old = theta[j]
        new = _kernels.prox_elastic_net_box(
            old - arrays.step[j] * g,
            arrays.step[j],
            arrays.l1[j],
            arrays.l2[j],
            arrays.lo[j],
            arrays.hi[j],
        )
        if new != old:
            theta[j] = new
            state.move(j, new - old)
        if t + 1 in marks:
            history.record(t + 1, theta)
    return theta, history, picks


def _rule_code(rule, problem):
    if rule == "auto":
        l1 = problem.penalty.prox_params(1)[0][0] if problem.n_features else 0.0
        return GS_R if l1 > 0 else GS_S
    try:
        return RULES[rule]
    except (KeyError, TypeError):
        raise ValueError(f"rule must be 'auto' or one of {sorted(RULES)}, got {rule!r}") from None


def _rule_name(code):
    return {v: k for k, v in RULES.items()}[code]


SOLVER = Solver(
    name="dp-gcd",
    summary="private greedy (proximal) coordinate descent (Mangold et al. 2023)",
    fit=dp_gcd,
    prepare=prepare,
    check=check,
    estimator=EstimatorMapping(
        work="n_iter",
        unit="greedy steps",
        smoothness=True,
        default_clip=estimator_clip,
        default_work=estimator_steps,
    ),
    order=20,
)
