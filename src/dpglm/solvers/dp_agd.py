"""DP-AGD: gradient descent with an adaptive per-iteration budget (Lee and Kifer 2018).

The whole fit is ``rho``-zCDP, with ``rho`` the largest budget the zCDP
accountant converts to the target ``(epsilon, delta)`` (:func:`zcdp_budget`).
Starting from ``w = 0`` with ``rho_ng = (1 - s) rho / splits`` and
``rho_nmax = s rho / splits`` (``s = selection_share``), each step of the
paper's algorithm (``variant="paper"``)

1. measures the sum of the per-sample gradients ``l'(z_i) (x_i, 1)`` (the 1
   only with an intercept), each clipped to L2 norm ``C_grad``, with Gaussian
   noise at ``rho_ng``; a per-sample norm is ``|l'(z_i)|`` times the row norm,
   so the clipped sum is one product ``X^T c`` and no ``n x p`` array is formed;
2. turns it into the direction ``d``: the noisy mean plus the penalty's
   gradient, normalised to unit length;
3. chooses a step size in ``Phi = {0, a_max / K, 2 a_max / K, ..., a_max}``
   at ``rho_nmax``: the argmax of the scores plus i.i.d. Gumbel noise, the scores
   being ``-(sum_i min(l(z_i - a u_i), C_obj) + n psi(w - a d))`` where
   ``u = X d`` (one product gives the margins of every candidate);
4. if the step is 0 (the noisy direction does not descend), raises
   ``rho_ng`` to ``(1 + gamma) rho_ng`` for this and every later step, measures
   the same clipped sum again with the difference as budget, merges the two
   measurements by :func:`grad_avg` (their inverse-variance average, whose
   noise is that of one measurement at the raised ``rho_ng``) and selects
   again; otherwise it moves to ``w - a d``.

Every ``tau`` steps ``a_max`` becomes ``(1 + gamma)`` times the largest step
chosen in those steps.

The default, ``variant="loss-change"``, changes two things, both measured by
``benchmarks/bench_dp_agd_variants.py`` on the raw tables, where the paper's
variant falls to the majority class: adult's logistic fit 0.834 at epsilon 1,
0.764 at 4 and 16, phishing's at 16, and with a clip of 1 (the estimators'
before :func:`estimator_clip`) adult's squared hinge from epsilon 4 (0.805 at
1) and phishing's from 4:

* **The scores are the changes of the objective whose gradient is measured.**
  The clipped gradient sum is the gradient of ``sum_i h_i``, ``h_i`` the loss
  with its slope in the margin capped at ``C_grad / ||(x_i, 1)||`` (a Huber-like
  loss, :func:`~dpglm.access.sums.candidate_changes`), so the direction is a
  descent direction of what the selection scores; the paper scores the clipped
  loss ``min(l, C_obj)``, whose descent directions are not the clipped
  gradient's (with the squared hinge, rejected at every candidate even without
  noise). Each candidate's score is
  ``(sum_i h_i(z_i - a u_i) - h_i(z_i) + n (psi(w - a d) - psi(w))) / a_max``:
  along a unit direction each record's term is ``C_grad``-Lipschitz in ``a``
  and 0 at ``a = 0``, so replacing a record moves the difference of two scores
  by at most ``2 C_grad`` (the paper's ``2 C_obj``). There is no ``C_obj``, the
  fit minimises the objective of the clipped gradients (as DP-SGD does), and
  the noise shrinks with the steps: late steps, whose loss changes are far
  below ``C_obj``, are chosen as well as early ones. For the multinomial loss,
  whose clipped gradients are the gradient of no objective, a record's term is
  its loss change times ``min(1, C_grad / (sqrt(2) ||u_i||))``: ``C_grad``-Lipschitz
  in ``a`` too (the loss's gradient in the scores has norm at most ``sqrt(2)``).
* **The candidate set follows the step sizes.** A rejection halves ``a_max``
  (besides raising ``rho_ng``: the paper's rule alone spends the budget on
  re-measurements when every candidate overshoots, the smallest being
  ``a_max / K``), and choosing the largest candidate doubles it; the update
  every ``tau`` steps stays (and may undo them). ``a_max`` is computed from
  private outputs only.

The clip of the squared hinge. The Huberised loss is the squared hinge only
where its slope stays below the cap ``C_grad / ||(x_i, 1)||``. With a clip of
1, a dense one-hot table mapped to ``[-1, 1]`` (adult given as a dense array:
rows of norm 11) caps it at 0.09, the scored objective is a hinge, and steepest
descent stalls on it: ``DPLinearSVC`` stayed at the majority class at epsilon 1
and 4, in memory and on row chunks, where ``solver="auto"`` takes DP-AGD. The
estimators clip the squared hinge at ``min(2 sqrt(d), 16)`` for ``d``
coordinates instead (:func:`estimator_clip`, with its measurements: adult
dense 0.836 and 0.843 at epsilon 1 and 4). Remedies measured first on the
same tables (8 seeds each), none adopted: conjugate directions (Polak-Ribiere,
restarted when not a descent direction) reach 0.83 and 0.85 there but lose 3.5
points on phishing's squared hinge at epsilon 1 and make communities' R^2
negative; damping the conjugate term by the measured signal-to-noise ratio of
the noisy gradients reaches 0.84 at epsilon 4 and keeps every other table
within 0.6 point, but leaves epsilon 1 at the majority; centring the direction
on the records' mean (read without privacy, as an upper bound) reaches 0.84
and 0.85 but costs communities 10 points of R^2 at epsilon 4 and phishing's
squared hinge 1 to 2 points at 1, even when only the steps whose gradient is
mostly signal are centred. Each carries noise from step to step, which the
selections cannot catch where few records leave them near chance.

The fit stops exactly when the budget is spent:
whenever what remains could not pay for one more full step after the next
release, the next release takes all that remains (split in the same
proportions) and is the last; if that last selection rejects its direction,
the fit ends where it stands. The step that reaches ``max_iter`` takes all
that remains too.

Privacy (replace-one neighbours, ``n`` public). Replacing one record moves
the clipped gradient sum by at most ``2 C_grad`` in L2 (the slides' ``C_grad``
is for add/remove neighbours), and every candidate's score by ``Delta_a`` with
``|Delta_a - Delta_b| <= 2 S`` for any two candidates: ``S = C_obj`` for the
paper's clipped objective, ``S = C_grad`` for the scaled loss changes (the
penalty term is the same on both sides). The scores move in different
directions for different candidates, so the selection is analysed for
arbitrary (non-monotone) scores: it is the exponential mechanism (Gumbel noise
of scale ``S / sqrt(2 rho_nmax)`` added to the scores), which is
``sqrt(8 rho_nmax)``-bounded range hence ``rho_nmax``-zCDP (Cesar and Rogers
2021), where the slides' Laplace noisy max at the same noise scale costs
``rho_nmax`` only for monotone scores. Each release's budget is chosen from
earlier private outputs (the rejections), and their sum never exceeds ``rho``:
zCDP composition under such a budget filter is ``rho``-zCDP (the Renyi filter
of Feldman and Zrnic 2021, at every order; Lee and Kifer 2018).

The whole budget is charged up front and spent through a
:class:`~dpglm.privacy.filters.ZCDPFilter`, which hands out every release at
the budget DP-AGD asks for and never above ``rho``; the report returned is
built from the releases actually run, one event per budget level, with the
steps that used it. Their budgets add up to the charged ``rho`` (up to
rounding, never above).

Problems: any smooth datafit (squared, logistic, squared hinge, Huber, and the
multinomial loss of ``K`` classes), with or without intercept (not penalised),
and a smooth penalty (none or L2, including an elastic net with
``l1_ratio = 0``). Penalties with an L1 part or bounds are
refused: a proximal step would make the candidates' margins non-linear in the
step size, one pass over the data per candidate instead of one product for
all, and the paper's line search along a normalised direction would no longer
be a descent test; DP-CD, DP-GCD and DP-SGD handle them.

``epsilon = inf`` runs the same code without noise or clipping: plain gradient
descent with an exact line search over ``Phi`` for ``max_iter`` steps (the
loss changes and the losses choose alike, and the default variant doubles
``a_max`` after the largest candidate as a private fit does). There the
step 0 means that every candidate overshoots, so ``a_max`` shrinks to the
smallest candidate (half of it if ``K = 1``) instead, and the fit ends early once
``a_max`` is too small to move ``w`` in floating point.

Examples
--------
>>> import numpy as np
>>> from dpglm.penalties import L2
>>> from dpglm.problem import Problem
>>> from dpglm.solvers.dp_agd import dp_agd
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, (2000, 5))
>>> y = np.where(X @ np.array([2.0, -1.0, 0.0, 1.0, 0.5]) > 0, 1.0, -1.0)
>>> fit = dp_agd(Problem(X, y, "logistic", L2(0.01)), epsilon=1.0, delta=1e-6, random_state=0)
>>> fit.report.accountant, bool(fit.report.epsilon <= 1.0), fit.n_iter > 10
('zcdp', True, True)
>>> bool(np.mean(np.sign(X @ fit.coef + fit.intercept) == y) > 0.9)
True
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from dpglm.privacy.accounting import zcdp_rho
from dpglm.privacy.events import (
    GaussianEvent,
    NonPrivateEvent,
    PrivacyPlan,
    ZCDPEvent,
)
from dpglm.privacy.filters import FilterRole, ZCDPFilter
from dpglm.privacy.report import PrivacyReport, neighbouring_assumptions
from dpglm.privacy.spending import calibrate_cached
from dpglm.privacy.targets import Share, check_privacy_target
from dpglm.problem import coordinate_penalties
from dpglm.solvers.hyperparameters import (
    HYPERPARAMETER_ASSUMPTION,
    check_in_memory_outputs,
    check_positive,
)
from dpglm.solvers.registry import DEFAULT_CLIP, EstimatorMapping, FitPlan, ProblemShape, Solver
from dpglm.solvers.result import FitResult, History

NEIGHBOURING = "replace_one"
#: the zCDP conversions DP-AGD can be accounted with; "auto" is the first, the tightest
ACCOUNTANTS = ("zcdp", "zcdp-bun-steinke")
#: the step-size rules: the first is the default (see the module docstring)
VARIANTS = ("loss-change", "paper")
#: the paper variant's C_obj when none is given
PAPER_CLIP_OBJ = 3.0


def zcdp_budget(epsilon: float, delta: float, accountant: str = "auto") -> tuple[float, str]:
    """The largest ``rho`` whose zCDP guarantee the accountant converts to ``(epsilon, delta)``.

    Parameters
    ----------
    epsilon : float
        Positive and finite.
    delta : float
        In ``(0, 1)``: a zCDP guarantee gives no ``(epsilon, 0)`` guarantee.
    accountant : {"auto", "zcdp", "zcdp-bun-steinke"}, default="auto"
        ``"zcdp"`` converts with Canonne, Kamath and Steinke (2020), the
        tightest; ``"zcdp-bun-steinke"`` with ``rho + 2 sqrt(rho log(1/delta))``,
        the conversion of the slides; ``"auto"`` is ``"zcdp"``.

    Returns
    -------
    rho : float
    accountant : str
        The accountant's name.

    Examples
    --------
    >>> rho, name = zcdp_budget(1.0, 1e-6, "zcdp-bun-steinke")
    >>> name, round(rho, 5)
    ('zcdp-bun-steinke', 0.01747)
    >>> zcdp_budget(1.0, 1e-6)[0] > rho  # the tight conversion affords more
    True
    """
    name = ACCOUNTANTS[0] if accountant == "auto" else accountant
    # the zCDP accountants read a Gaussian of multiplier z as rho = 1 / (2 z**2): the
    # calibrated unit Gaussian carries the largest rho they accept
    unit = PrivacyPlan((GaussianEvent(noise_multiplier=1.0),), NEIGHBOURING)
    calibrated = calibrate_cached(unit, epsilon, delta, name)
    return zcdp_rho(calibrated.plan.events), name


def candidate_steps(max_step: float, candidates: int) -> np.ndarray:
    """``Phi``: 0 then ``candidates`` evenly spaced step sizes up to ``max_step``.

    Examples
    --------
    >>> candidate_steps(2.0, 4)
    array([0. , 0.5, 1. , 1.5, 2. ])
    """
    return max_step * np.arange(candidates + 1) / candidates


def grad_avg(noisy, rho_old: float, second, rho_second: float):
    """GradAvg: merge two noisy measurements of the same gradient, weighted by their budgets.

    With Gaussian noise of variance ``Delta**2 / (2 rho)`` on each, the merged
    ``(rho_old noisy + rho_second second) / (rho_old + rho_second)`` has noise
    of variance ``Delta**2 / (2 (rho_old + rho_second))``: one measurement at the
    summed budget, the least variance of any unbiased combination.

    Examples
    --------
    >>> grad_avg(np.array([1.0, 3.0]), 0.1, np.array([2.0, 0.0]), 0.3)
    array([1.75, 0.75])
    """
    return (rho_old * noisy + rho_second * second) / (rho_old + rho_second)


# --- the budget: what each release costs, and when the fit ends -------------------------


@dataclass(frozen=True)
class StepRecord:
    """What one step released and chose.

    Attributes
    ----------
    gradient_rho : tuple of float
        Budget of each measurement of the step's gradient: the first, then one
        per rejected direction (merged by GradAvg).
    selection_rho : tuple of float
        Budget of each step-size selection.
    step_size : float
        The step taken (0 when the last selection rejected its direction).
    max_step : float
        ``a_max`` of the candidate set the step was taken from (after the
        halvings of its rejections, in the default variant).
    """

    gradient_rho: tuple
    selection_rho: tuple
    step_size: float
    max_step: float

    @property
    def rejections(self) -> int:
        """Selections that chose the step size 0."""
        return len(self.selection_rho) - int(self.step_size > 0)


#: what each role of release is, in the report
_WHAT = {
    "gradient": "noisy sum of L2-clipped per-sample gradients",
    "remeasure": "second measurement of a rejected step's gradient, merged by GradAvg",
    "selection": "step size: noisy max over {k} candidates of {scores}",
}
_SCORES = {
    "loss-change": "the loss changes (Lipschitz in the step) per unit of the largest step",
    "paper": "the clipped objective",
}


def _roles(clip_grad: float, clip_obj, n_candidates: int, variant: str) -> dict:
    """The releases of a fit: the clipped gradient sum moves by at most ``2 C_grad`` (L2)
    when a record is replaced; two candidates' scores move apart by at most ``2 C_obj``
    (the paper's clipped objective) or ``2 C_grad`` (the scaled loss changes)."""
    gradient = 2.0 * clip_grad
    scores = clip_obj if variant == "paper" else clip_grad
    what = _WHAT["selection"].format(k=n_candidates, scores=_SCORES[variant])
    return {
        "gradient": FilterRole("gaussian", gradient, _WHAT["gradient"]),
        "remeasure": FilterRole("gaussian", gradient, _WHAT["remeasure"]),
        "selection": FilterRole("gumbel", scores, what),
    }


class _Budget:
    """How much to ask the fit's zCDP filter for: ``rho_ng`` (raised on rejection),
    ``rho_nmax``, and all that remains at the end."""

    def __init__(self, spending: ZCDPFilter, rho_ng: float, rho_nmax: float, gamma: float):
        self.spending = spending
        self.rho_ng = rho_ng
        self.rho_nmax = rho_nmax
        self.gamma = gamma

    def _take(self, roles, amounts, reserve, step):
        """Ask for ``amounts``, or for all that remains when less than ``reserve`` would be left.

        Returns the releases, their budgets and whether nothing remains.
        """
        requests = list(zip(roles, amounts, strict=True))
        if self.spending.remaining < math.fsum(amounts) + reserve:
            releases, rhos = self.spending.take_rest(requests, step)
            return releases, rhos, True
        releases, rhos = self.spending.take(requests, step)
        return releases, rhos, False

    def step(self, step: int, last: bool):
        """Releases and budgets of a step's gradient and selection; whether it is the last."""
        reserve = math.inf if last else self.rho_ng + self.rho_nmax
        amounts = (self.rho_ng, self.rho_nmax)
        return self._take(("gradient", "selection"), amounts, reserve, step)

    def retry(self, step: int):
        """After a rejection: raise ``rho_ng``; the second measurement and the new selection."""
        raised = (1.0 + self.gamma) * self.rho_ng
        amounts = (raised - self.rho_ng, self.rho_nmax)
        self.rho_ng = raised
        return self._take(("remeasure", "selection"), amounts, raised + self.rho_nmax, step)


# --- the data side of a step ------------------------------------------------------------


class _Objective:
    """Clipped gradient sums and the candidates' scores of one problem.

    The sums come from the problem's :class:`~dpglm.access.sums.GradientSums`
    (in memory, or on its row chunks); the penalty's terms are exact, here.
    """

    def __init__(self, problem, clip_grad: float, clip_obj: float, l2: np.ndarray, variant):
        self.problem = problem
        # the penalised coordinates: every class's coefficients, before the intercepts
        self.n, self.p = problem.n_samples, l2.shape[0]
        self.l2 = l2
        self.variant = variant
        self.sums = problem.gradient_sums(clip_grad, clip_obj)

    def gradient_sum(self, theta):
        """``sum_i clip(l'(z_i) (x_i, 1))`` and the margins ``z``, from one product each."""
        return self.sums.gradient_sum(theta)

    def losses(self, z, direction, steps):
        """The data part of the candidates' values, the clipped losses along ``direction``."""
        return self.sums.losses(z, direction, steps)

    def direction(self, noisy, theta):
        """Unit direction of the noisy mean gradient plus the penalty's (exact) gradient."""
        g = noisy / self.n
        g[: self.p] += self.l2 * theta[: self.p]
        norm = float(np.linalg.norm(g))
        return g / norm if norm > 0 else g

    def values(self, theta, z, direction, steps):
        """Every candidate ``a``'s score, the lowest the best.

        ``sum_i min(l(z_i - a u_i), C_obj) + n psi(w - a d)`` (the paper's), or
        ``(sum_i h_i(z_i - a u_i) - h_i(z_i) + n (psi(w - a d) - psi(w))) / a_max``.
        """
        # psi(w - a d) = psi(w) - a sum l2 w d + a**2 psi(d) for psi = sum l2 w**2 / 2
        w, d = theta[: self.p], direction[: self.p]
        slope, psi_d = self.l2 @ (w * d), 0.5 * self.l2 @ (d * d)
        if self.variant == "paper":
            out = self.losses(z, direction, steps)
            psi_w = 0.5 * self.l2 @ (w * w)
            return out + self.n * (psi_w - steps * slope + steps * steps * psi_d)
        penalty = self.n * (-steps * slope + steps * steps * psi_d)
        return (self.sums.changes(z, direction, steps) + penalty) / steps[-1]


def _measure(gradient_sum, release):
    """The clipped gradient sum plus the release's Gaussian noise (none without a release)."""
    if release is None:
        return gradient_sum.copy()
    return release.add(gradient_sum)


def _choose(values, release) -> int:
    """Index of the candidate to take: the release's noisy min (exact without a release)."""
    if release is None:
        return int(np.argmin(values))
    return release.noisy_min(values)


# --- the iterations -----------------------------------------------------------------------


class _Checkpoints:
    """At most ``limit`` evenly spaced iterates, however many steps the fit takes."""

    def __init__(self, n_coords: int, limit: int = 100):
        self.n_coords = n_coords
        self.limit = limit
        self.stride = 1
        self.kept: list = []

    def add(self, step: int, theta) -> None:
        if step % self.stride == 0:
            self.kept.append((step, theta.copy()))
        if len(self.kept) > self.limit:
            self.stride *= 2
            self.kept = [(s, th) for s, th in self.kept if s % self.stride == 0]

    def history(self, steps: int, theta) -> History:
        history = History.empty(self.n_coords)
        for step, kept in self.kept:
            if step < steps:
                history.record(step, kept)
        history.record(steps, theta)
        return history


@dataclass(frozen=True)
class _Settings:
    clip_grad: float
    clip_obj: float
    gamma: float
    tau: int
    candidates: int
    max_step: float
    max_iter: int
    variant: str


def _smallest_step(theta) -> float:
    """Below this ``a_max`` a non-private line search cannot move ``theta`` any more."""
    return 1e-15 * max(1.0, float(np.linalg.norm(theta)))


class _Descent:
    """The iterate, the candidate step sizes and the record of a fit, one step at a time."""

    def __init__(self, objective: _Objective, budget: _Budget | None, settings):
        self.objective = objective
        self.budget = budget
        self.settings = settings
        self.theta = np.zeros(objective.problem.n_coords)
        self._grid(settings.max_step)
        self.chosen: list = []  # step sizes taken since a_max was last set
        self.records: list = []

    def _grid(self, max_step) -> None:
        self.max_step = float(max_step)
        self.steps = candidate_steps(self.max_step, self.settings.candidates)

    def run(self):
        """All the steps; returns the last iterate, the checkpoints and the step records."""
        checkpoints = _Checkpoints(self.theta.shape[0])
        for t in range(1, self.settings.max_iter + 1):
            last = self.step(t)
            checkpoints.add(t, self.theta)
            if last:
                break
            if t % self.settings.tau == 0 and self.chosen:
                self._grid((1.0 + self.settings.gamma) * max(self.chosen))
                self.chosen = []
        return self.theta, checkpoints.history(len(self.records), self.theta), tuple(self.records)

    def _release(self, gradient_sum, release):
        return _measure(gradient_sum, release)

    def step(self, t: int) -> bool:
        """Measure, choose a step size (measuring again on rejection), move; True if last."""
        gradient_sum, z = self.objective.gradient_sum(self.theta)
        if self.budget is None:
            (measure, select), rhos, last = (None, None), (math.inf, math.inf), False
        else:
            (measure, select), rhos, last = self.budget.step(t, t == self.settings.max_iter)
        noisy = self._release(gradient_sum, measure)
        gradient_rho, selection_rho = [rhos[0]], [rhos[1]]
        while True:
            direction = self.objective.direction(noisy, self.theta)
            values = self.objective.values(self.theta, z, direction, self.steps)
            k = _choose(values, select)
            if k > 0 or last:
                break
            if self.budget is None:
                # the exact gradient descends, so every candidate overshoots: refine below
                # the smallest one (halve a single candidate)
                self._grid(self.max_step / max(self.settings.candidates, 2))
                last = self.max_step < _smallest_step(self.theta)
                continue
            if self.settings.variant != "paper":
                # the direction may descend with every candidate overshooting: look closer too
                self._grid(0.5 * self.max_step)
            (again, select), rhos, last = self.budget.retry(t)
            second = self._release(gradient_sum, again)
            noisy = grad_avg(noisy, math.fsum(gradient_rho), second, rhos[0])
            gradient_rho.append(rhos[0])
            selection_rho.append(rhos[1])
        step_size = float(self.steps[k])
        self.theta = self.theta - step_size * direction
        self.records.append(
            StepRecord(tuple(gradient_rho), tuple(selection_rho), step_size, self.max_step)
        )
        if k > 0:
            self.chosen.append(step_size)
        if self.settings.variant != "paper" and k == self.settings.candidates:
            self._grid(2.0 * self.max_step)  # the best step may lie beyond the largest
        return last


# --- the public function ------------------------------------------------------------------

ADAPTIVE_ASSUMPTION = (
    "the budget of each release (gradient measurement or step-size selection) is chosen "
    "from earlier private outputs (a rejected step raises the gradient's budget), and the "
    "releases stop before their budgets add up to more than the rho = {rho:.6g} charged up "
    "front: zCDP composition under such a budget filter is rho-zCDP (Renyi filter of Feldman "
    "and Zrnic 2021 at every order; Lee and Kifer 2018)"
)


def check(problem) -> None:
    """Refuse the losses and penalties DP-AGD does not take, with the fit's message.

    Reads the problem's shape only (datafit, penalty, ``n_features``): a
    :class:`~dpglm.problem.Problem`, a
    :class:`~dpglm.distributed.data_parallel.ShardedProblem` (DP-AGD runs on row
    chunks) or a :class:`~dpglm.solvers.registry.ProblemShape`.

    Raises
    ------
    ValueError
        A loss that is not smooth, or a penalty with an L1 part, bounds or no
        separable form.

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> check(ProblemShape(10, 2, "logistic", "l2")) is None
    True
    >>> check(ProblemShape(10, 2, "hinge"))
    Traceback (most recent call last):
    ...
    ValueError: DP-AGD needs a smooth loss; the hinge loss is not (use 'squared_hinge', or DP-SGD for the hinge loss)
    """  # noqa: E501
    if not problem.datafit.smooth:
        raise ValueError(
            f"DP-AGD needs a smooth loss; the {problem.datafit.name} loss is not (use "
            "'squared_hinge', or DP-SGD for the hinge loss)"
        )
    check_in_memory_outputs(problem, "DP-AGD")
    if gradient_step_l2(problem) is None:
        raise ValueError(
            f"DP-AGD takes a smooth penalty (none or L2); {problem.penalty!r} has an L1 part, "
            "bounds or is not separable (use DP-CD, DP-GCD or DP-SGD, whose proximal steps "
            "handle it)"
        )


def gradient_step_l2(problem):
    """``l2`` of every coefficient when the penalty is none or L2, which a plain gradient
    step can take; ``None`` for an L1 part, bounds or a non-separable penalty.

    A multinomial problem's coefficients are its ``K`` rows of ``p``: the
    result is repeated for each.

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.penalties import L1, L2
    >>> from dpglm.problem import Problem
    >>> gradient_step_l2(Problem(np.eye(2), np.zeros(2), "squared", L2(0.5)))
    array([0.5, 0.5])
    >>> gradient_step_l2(Problem(np.eye(2), np.zeros(2), "squared", L1(0.1))) is None
    True
    """
    penalty = problem.penalty
    if not penalty.separable:
        return None
    l1, l2, lo, hi = coordinate_penalties(penalty, problem.n_features, problem.datafit.n_outputs)
    if np.any(l1) or not (np.isinf(lo).all() and np.isinf(hi).all()):
        return None
    return l2


def _check_int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return int(value)


def _check_real(name: str, value, low: float, high: float) -> float:
    """``value`` as a float in ``[low, high)``; ``high`` may be inf, nothing else is."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number in [{low}, {high}), got {value!r}")
    value = float(value)
    if not low <= value < high or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number in [{low}, {high}), got {value!r}")
    return value


def _check_variant(variant, clip_obj):
    """The variant, and its ``C_obj``: the paper's default when not given, none otherwise."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if variant == "paper":
        return PAPER_CLIP_OBJ if clip_obj is None else clip_obj
    if clip_obj is not None:
        raise ValueError(
            f"clip_obj is the paper variant's (variant='paper'); the {variant!r} variant scores "
            "loss changes whose sensitivity comes from clip_grad, got "
            f"clip_obj={clip_obj!r}"
        )
    return None


def _check_accountant(accountant) -> None:
    if accountant != "auto" and accountant not in ACCOUNTANTS:
        raise ValueError(
            f"accountant must be 'auto' or one of {ACCOUNTANTS} (DP-AGD is analysed in zCDP), "
            f"got {accountant!r}"
        )


@dataclass(frozen=True)
class Setup:
    """A DP-AGD fit's validated settings and the plan it charges, from the problem's shape.

    Attributes
    ----------
    fit_plan : FitPlan
        The whole budget as one ``rho``-zCDP event (one non-private event when
        ``epsilon = inf``) and the accountant that converts ``rho``: the plan
        the fit charges up front, calibrated by :func:`~dpglm.privacy.spending.spend`
        as any other (a zCDP event is a fixed cost, left as it is).
    rho : float
        The budget the fit's zCDP filter hands out (inf without privacy).
    clip_grad : float
        The threshold as given, for the report and the releases' sensitivities.
    clip_obj : float or None
        The paper variant's ``C_obj``; ``None`` for the loss changes.
    share : Share
        ``selection_share``.
    splits : float
    settings : _Settings
        What the descent runs with: no clipping without privacy.
    l2 : ndarray
        The L2 strength of every coefficient.
    """

    fit_plan: FitPlan
    rho: float
    clip_grad: float
    clip_obj: float | None
    share: Share
    splits: float
    settings: _Settings
    l2: np.ndarray = field(compare=False, repr=False)


def prepare(
    problem,
    *,
    epsilon: float,
    delta: float,
    clip_grad: float,
    clip_obj: float | None,
    selection_share: float,
    splits: float | None,
    gamma: float,
    tau: int,
    candidates: int,
    max_step: float,
    max_iter: int,
    accountant: str,
    variant: str = VARIANTS[0],
) -> Setup:
    """The checks of :func:`dp_agd`, in its order, and the plan it charges; no record is read.

    DP-AGD charges its whole budget before it trains and spends it through a
    zCDP filter as the fit goes: the charged plan is one
    :class:`~dpglm.privacy.events.ZCDPEvent` of the largest ``rho`` the
    accountant converts to ``(epsilon, delta)`` (:func:`zcdp_budget`), whatever
    the releases turn out to be.

    Parameters
    ----------
    problem : Problem, ShardedProblem or ProblemShape
        Only its shape is read.
    epsilon, delta : float
    clip_grad, clip_obj, selection_share, splits, gamma, tau, candidates, max_step, max_iter
    accountant, variant : str
        As :func:`dp_agd` takes them; no defaults here, the fit's are the defaults
        (:meth:`~dpglm.solvers.registry.Solver.plan` passes them).

    Returns
    -------
    Setup

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> shape = ProblemShape(2000, 5, "logistic", "l2", fit_intercept=True)
    >>> hyper = dict(
    ...     clip_grad=1.0,
    ...     clip_obj=None,
    ...     selection_share=0.3,
    ...     splits=60.0,
    ...     gamma=0.1,
    ...     tau=10,
    ...     candidates=20,
    ...     max_step=2.0,
    ...     max_iter=1000,
    ... )
    >>> setup = prepare(shape, epsilon=1.0, delta=1e-6, accountant="auto", **hyper)
    >>> (event,) = setup.fit_plan.calibrated().events
    >>> event.kind, event.rho == setup.rho, setup.fit_plan.accountant
    ('zcdp', True, 'zcdp')
    """
    epsilon, delta = check_privacy_target(
        epsilon, delta, positive_delta="a zCDP guarantee gives no (epsilon, 0) guarantee"
    )
    private = not math.isinf(epsilon)
    clip_grad = check_positive("clip_grad", clip_grad, allow_inf=True)
    clip_obj = _check_variant(variant, clip_obj)
    thresholds = [("clip_grad", clip_grad)]
    if clip_obj is not None:
        clip_obj = check_positive("clip_obj", clip_obj, allow_inf=True)
        thresholds.append(("clip_obj", clip_obj))
    for name, value in thresholds:
        if private and math.isinf(value):
            raise ValueError(f"{name} must be finite for a private fit (epsilon < inf), got inf")
    share = Share(selection_share, "selection_share")
    if splits is not None:
        splits = _check_real("splits", splits, 1.0, math.inf)
    gamma = check_positive("gamma", gamma)
    settings = _Settings(
        clip_grad=clip_grad if private else math.inf,
        clip_obj=clip_obj if private and clip_obj is not None else math.inf,
        gamma=gamma,
        tau=_check_int("tau", tau, 1),
        candidates=_check_int("candidates", candidates, 1),
        max_step=check_positive("max_step", max_step),
        max_iter=_check_int("max_iter", max_iter, 1),
        variant=variant,
    )
    _check_accountant(accountant)
    check(problem)
    l2 = gradient_step_l2(problem)
    if private:
        rho, name = zcdp_budget(epsilon, delta, accountant)
        whole = ZCDPEvent(rho=rho, label="DP-AGD: the whole budget, spent adaptively by the fit")
        template = PrivacyPlan((whole,), NEIGHBOURING)
    else:
        rho, name = math.inf, "auto"
        template = PrivacyPlan((NonPrivateEvent(label="DP-AGD without noise"),), NEIGHBOURING)
    if splits is None:
        splits = default_splits(problem, rho)
    return Setup(
        fit_plan=FitPlan(template, epsilon, delta, name),
        rho=rho,
        clip_grad=clip_grad,
        clip_obj=clip_obj,
        share=share,
        splits=splits,
        settings=settings,
        l2=l2,
    )


#: :func:`default_splits`'s constant for the squared loss, and its range
SQUARED_SPLITS_FACTOR = 0.9
MIN_SPLITS, MAX_SPLITS = 10.0, 240.0
#: the splits of the other losses, whose best splits do not follow the squared loss's law
BOUNDED_SLOPE_SPLITS = 60.0


def default_splits(shape, rho: float) -> float:
    """DP-AGD's ``splits`` when None: ``0.9 n sqrt(rho / d)`` within ``[10, 240]`` for the
    squared loss (``d`` coordinates), 60 for the other losses.

    A fit runs about ``splits`` steps (0.7 to 0.85 of them: rejected
    directions spend budget on measuring again), each measuring the mean
    clipped gradient with noise of norm ``2 C sqrt(d) / (n sqrt(2 rho_ng))``,
    ``rho_ng = (1 - s) rho / splits``. Gradient descent of ``T`` steps on a
    ``beta``-smooth convex objective ends within
    ``beta R**2 / (2 T) + sigma_g**2 / (2 beta)`` of the optimum, where a
    step's noise variance ``sigma_g**2`` grows like ``T d / (n**2 rho)``: too
    few steps stop short, too many drown each in noise (Lee and Kifer's
    trade-off), and the two balance at ``T`` proportional to
    ``n sqrt(rho / d)``, with a constant ``beta R / C`` that the data set.

    Measured (``benchmarks/bench_defaults.py``'s splits, epsilon 0.5 / 1 /
    4, splits 10 to 240, 5 seeds, 10 on communities and madelon): the squared
    loss's best splits follow the law, 10, 20-40 and 60-120 on communities
    (``n sqrt(rho / d)`` of 11, 22, 78) and 60-240 on the California tables
    (327 to 2,427); with 0.9 the rule is within 0.8 point of R**2 of each
    row's best, where the former fixed 60 gave communities R**2 -7.2 and 0.40
    at epsilon 0.5 and 1 (the rule: 0.26 and 0.50), and it gains 0.2 to 1.3
    points on the California tables. The logistic loss's and the squared
    hinge's best splits do not follow it: madelon (4 to 34) is best at 40 at
    every epsilon, phishing at 20 to 240 as epsilon grows, adult and
    electricity flat within 0.5 point from 40 to 240. 40 and 60 are within
    0.3 point of each other on the large tables (40 gains 0.2 to 1.5 on
    madelon, within its seeds' spread): they keep 60.

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> round(default_splits(ProblemShape(1496, 100, "squared", fit_intercept=True), 0.021), 1)
    19.4
    >>> default_splits(ProblemShape(8291, 68, "logistic", "l2", fit_intercept=True), 0.012)
    60.0
    """
    shape = ProblemShape.of(shape)
    if shape.datafit.name != "squared":
        return BOUNDED_SLOPE_SPLITS
    if not math.isfinite(rho):  # no noise: the splits only pace the steps
        return MAX_SPLITS
    splits = SQUARED_SPLITS_FACTOR * shape.n_samples * math.sqrt(rho / shape.n_coords)
    return float(min(MAX_SPLITS, max(MIN_SPLITS, splits)))


@functools.lru_cache(maxsize=256)
def _run_report(plan, delta, accountant, assumptions, warnings, secure):
    return PrivacyReport.from_plan(
        plan,
        delta,
        accountant=accountant,
        assumptions=assumptions,
        warnings=warnings,
        secure=secure,
    )


def dp_agd(
    problem,
    *,
    epsilon: float,
    delta: float,
    clip_grad: float = 1.0,
    clip_obj: float | None = None,
    selection_share: float = 0.3,
    splits: float | None = None,
    gamma: float = 0.1,
    tau: int = 10,
    candidates: int = 20,
    max_step: float = 2.0,
    max_iter: int = 1000,
    budget=None,
    accountant: str = "auto",
    variant: str = VARIANTS[0],
    random_state=None,
    secure: bool = False,
) -> FitResult:
    """Fit ``problem`` with DP-AGD.

    Parameters
    ----------
    problem : Problem
        Smooth datafit; no penalty or L2 (see the module docstring).
    epsilon, delta : float
        Target guarantee (replace-one neighbours), ``delta > 0``;
        ``epsilon = inf`` is non-private gradient descent with a line search.
    clip_grad : float, default=1.0
        ``C_grad``, the L2 bound of every per-sample gradient; in the default
        variant, also the bound of each record's loss change per unit of step
        (the selection's sensitivity). Measured through the estimators (3 seeds,
        epsilon 1 and 4; adult, phishing, electricity, California raw,
        communities): clips 0.25 to 4 within 0.5 point of 1 everywhere but the
        squared hinge on adult (0.847 at 4 against 0.843) and communities at
        epsilon 1, whose 1,500 records leave every setting noisy. The
        estimators give the squared hinge ``min(2 sqrt(d), 16)``
        (:func:`estimator_clip`).
    clip_obj : float, optional
        ``C_obj``, the bound of every per-sample loss in the step-size scores
        of ``variant="paper"`` (3 when not given); the default variant has
        none and refuses it. Keep it well above the typical loss (``log 2``
        for the logistic loss at ``w = 0``): the clipped objective cannot see a
        record's loss grow past it, so a small bound favours steps that
        sacrifice many records.
    selection_share : float in (0, 1), default=0.3
        Share of the selection in the initial per-step budget ``rho / splits``.
    splits : float >= 1, optional
        The budget would pay for this many steps if no direction were rejected.
        None: :func:`default_splits`, from ``n``, ``d`` and ``rho`` for the
        squared loss, 60 for the others.
    gamma : float > 0, default=0.1
        Growth of ``rho_ng`` on a rejection, and of ``a_max`` over the largest
        recent step.
    tau : int >= 1, default=10
        Steps between two resets of ``a_max`` to ``(1 + gamma)`` times the
        largest step taken since (the default variant also halves and doubles
        it in between).
    candidates : int >= 1, default=20
        ``K``, the number of non-zero step sizes in ``Phi``.
    max_step : float > 0, default=2.0
        The first ``a_max`` (a distance: the direction has unit norm).
    max_iter : int >= 1, default=1000
        Steps of a non-private fit; at most this many steps in a private one,
        whose step ``max_iter`` takes all the budget that remains.
    budget : PrivacyBudget, optional
        Charged with the whole budget before the data is read for training.
    accountant : {"auto", "zcdp", "zcdp-bun-steinke"}, default="auto"
        Conversion of ``rho`` to ``(epsilon, delta)``, see :func:`zcdp_budget`.
    variant : {"loss-change", "paper"}, default="loss-change"
        ``"paper"`` is the slides' algorithm (clipped losses as scores, ``a_max``
        set every ``tau`` steps only); the default scores the changes of the
        clipped-gradient objective and moves ``a_max`` with the steps (module
        docstring).
    random_state : None, int, Generator or NoiseSource
        All randomness comes from it, mixed with the budget charge (see
        :func:`~dpglm.privacy.spending.spend`).
    secure : bool, default=False
        Draw from the operating system's CSPRNG (no seed allowed).

    Returns
    -------
    FitResult
        ``n_iter`` is the number of steps, ``history`` holds up to about 100
        iterates (``passes`` counts steps: each reads the data for its gradient
        and for its candidates), ``info["schedule"]`` one :class:`StepRecord` per
        step, ``info["rho"]`` the budget charged, ``info["variant"]`` and
        ``info["clip_obj"]`` (``None`` in the default variant). The report lists
        the releases actually run.
    """
    setup = prepare(
        problem,
        epsilon=epsilon,
        delta=delta,
        clip_grad=clip_grad,
        clip_obj=clip_obj,
        selection_share=selection_share,
        splits=splits,
        gamma=gamma,
        tau=tau,
        candidates=candidates,
        max_step=max_step,
        max_iter=max_iter,
        accountant=accountant,
        variant=variant,
    )
    private = setup.fit_plan.private
    settings, share, splits = setup.settings, setup.share, setup.splits
    clip_grad, clip_obj, rho, l2 = setup.clip_grad, setup.clip_obj, setup.rho, setup.l2
    delta, name = setup.fit_plan.delta, setup.fit_plan.accountant

    if clip_obj is None and problem.datafit.n_outputs > 1:
        scores = (
            "candidates scored by the loss changes, each record's weighted by "
            "min(1, C_grad / (sqrt(2) ||u_i||)), per unit of the largest step (each record's "
            "term C_grad-Lipschitz in the step)"
        )
    elif clip_obj is None:
        scores = (
            "candidates scored by the changes of the loss with its slope capped at "
            "C_grad / ||(x_i, 1)||, per unit of the largest step (each record's term "
            "C_grad-Lipschitz in the step)"
        )
    else:
        scores = f"per-sample losses clipped to [0, C_obj] with C_obj = {clip_obj:g}"
    assumptions = (
        *neighbouring_assumptions(NEIGHBOURING),
        f"per-sample gradients clipped to L2 norm C_grad = {clip_grad:g} (sensitivity "
        f"2 C_grad); {scores}",
        HYPERPARAMETER_ASSUMPTION,
    )
    if private:
        assumptions = (*assumptions, ADAPTIVE_ASSUMPTION.format(rho=rho))
    spent = setup.fit_plan.spend(
        budget=budget,
        label=f"DP-AGD on {problem!r}",
        assumptions=assumptions,
        random_state=random_state,
        secure=secure,
    )
    source = spent.source  # keyed to the charge: no two fits of one budget share noise

    # the data side: the problem's clipped sums, wherever its records are
    objective = _Objective(problem, settings.clip_grad, settings.clip_obj, l2, settings.variant)
    schedule = None
    if private:
        per_step = rho / splits
        roles = _roles(clip_grad, clip_obj, settings.candidates + 1, settings.variant)
        spending = ZCDPFilter(rho, source, roles, neighbouring=NEIGHBOURING)
        schedule = _Budget(spending, share.rest_of(per_step), share.of(per_step), settings.gamma)
    theta, history, records = _Descent(objective, schedule, settings).run()
    report = spent.report
    if private:
        # the releases that preceded the fit in its plan (an estimator's preprocessing)
        # come first in the report of what was spent
        realised = schedule.spending.plan()
        whole = PrivacyPlan((*spent.prior, *realised.events), realised.neighbouring)
        # the leaks of what preceded the fit (ranges read from the data) stay in its report
        report = _run_report(
            whole, delta, name, spent.report.assumptions, spent.report.warnings, source.secure
        )
    return FitResult.from_theta(
        problem,
        theta,
        history=history,
        report=report,
        n_iter=len(records),
        info={
            "solver": "dp-agd",
            "rho": rho,
            "schedule": records,
            "rejections": sum(r.rejections for r in records),
            "clip_grad": settings.clip_grad,
            "clip_obj": None if clip_obj is None else settings.clip_obj,
            "variant": settings.variant,
            "candidates": settings.candidates,
            "selection_share": share.value,
            "splits": splits,
        },
    )


#: the largest clip the estimators give the squared hinge (a wide table's typical record is
#: far shorter than the bound ``sqrt(d)``)
SQUARED_HINGE_MAX_CLIP = 16.0


def estimator_clip(shape, batch_size=None) -> float:
    """The estimators' DP-AGD clip when ``clip=None``: 1, and ``min(2 sqrt(d), 16)`` for the
    squared hinge (``d`` coordinates: features and intercept).

    The clipped gradients are the gradient of the Huberised loss, whose slope
    is capped at ``C / ||(x_i, 1)||`` (module docstring). The squared hinge's
    slope is 2 at the null margin: with ``C = 1`` and rows of norm 11 (a dense
    one-hot table mapped to ``[-1, 1]``) the cap is 0.09, the quadratic part
    covers margins ``[0.955, 1]`` only, and the objective the selection scores
    is a hinge, on which steepest descent stalls: ``DPLinearSVC`` stayed at the
    majority class on adult given dense (0.764 at epsilon 1 and 4), on row
    chunks too, where ``solver="auto"`` takes DP-AGD. On the estimators' scale
    ``||(x_i, 1)|| <= sqrt(d)``, so ``C = 2 sqrt(d)`` clips no record's gradient
    at ``w = 0`` and keeps the loss a squared hinge wherever the margin is
    positive. At most 16: beyond, the typical record's norm, not the bound, sets
    the gradients' scale (as for DP-GCD's clip,
    :func:`~dpglm.solvers.dp_gcd.estimator_clip`). The logistic loss's Huberised
    form keeps a smooth tail whatever the cap, and the squared loss's residuals
    are not bounded by a slope: both keep 1.

    Measured (6 seeds, epsilon 1 / 4 / 16, ``benchmarks/bench_defaults.py``'s
    splits), the squared hinge at this clip against 1: adult dense 0.836 / 0.843
    / 0.845 against 0.764 / 0.770 / 0.764 (``sqrt(d)``: 0.824 / 0.839 / 0.843),
    adult sparse 0.846 / 0.849 / 0.851 against 0.843 / 0.845 / 0.846, phishing
    0.916 / 0.929 / 0.935 against 0.921 / 0.929 / 0.930, electricity 0.1 to 0.2
    point below; madelon (501 coordinates, clip 16) loses 1.2 to 2.3 points
    (0.520 / 0.547 / 0.595). The logistic loss at ``sqrt(d) / 4`` gains 0.3
    point on adult dense and loses 0.8 to 2 on madelon: it keeps 1.
    (``batch_size``: None, DP-AGD reads every record at each step.)

    Examples
    --------
    >>> from dpglm.solvers.registry import ProblemShape
    >>> estimator_clip(ProblemShape(100, 8, "squared_hinge", "l2", fit_intercept=True))
    6.0
    >>> estimator_clip(ProblemShape(100, 123, "squared_hinge", "l2", fit_intercept=True))
    16.0
    >>> estimator_clip(ProblemShape(100, 123, "logistic", "l2", fit_intercept=True))
    1.0
    """
    if shape.datafit.name != "squared_hinge":
        return DEFAULT_CLIP
    return min(2.0 * math.sqrt(shape.n_coords), SQUARED_HINGE_MAX_CLIP)


SOLVER = Solver(
    name="dp-agd",
    summary="private gradient descent with an adaptive per-step budget (Lee and Kifer 2018)",
    fit=dp_agd,
    prepare=prepare,
    check=check,
    estimator=EstimatorMapping(
        passes=None, work="max_iter", clip="clip_grad", step=False, default_clip=estimator_clip
    ),
    order=50,
)
