"""Private Frank-Wolfe with features split across parties (Lou and Cheung 2018, Algorithm 2).

:func:`vertical_fw` fits the LASSO problem
``min (1/2n) ||A x - y||^2`` over the product of ``K`` L1 balls, one per
party (``||x_{P_k}||_1 <= r_k``; with one party, the L1 ball of
:func:`~dpglm.solvers.dp_fw.dp_fw`): the block-separable domain of the paper's
BCFW-AS analysis. Columns are held by the parties, which run a protocol on an
engine of :mod:`dpglm.distributed.engines`.

Three variants (``variant``):

``"screened"`` (default)
    The parties release, once, what the LASSO needs on a small shared
    support: each party's noisy marginal scores pick the columns it shares;
    each party then releases its own block's statistics on them and their
    noisy count sketch, and, against the other parties' released sketches,
    its cross statistics; the coordinator solves the shared quadratic over
    the product of the balls (post-processing). Three rounds, no iterations
    on the parties. See :mod:`dpglm.distributed.vertical_screened` for the
    protocol, its privacy and its parameters (``max_shared``, the sketch's
    rows ``sketch_dim``, the ridge). How it differs from Algorithm 2: the noise
    is paid on the ``s_k`` shared columns instead of ``K T`` sketched vertices,
    it enters the model through the solve of a quadratic (an excess loss
    quadratic in the noise) instead of through Frank-Wolfe's choice of
    vertices (linear in it), and a party's own block is released as an
    aggregate. Measured on the issue's problems (the benchmarks'
    ``bench_vertical_rule.py`` and ``bench_vertical_scaling.py``):

    * ``n = 100,000``, ``d = 100``, ``K = 2``, only ``epsilon``, ``delta``,
      the parties, the radius and the feature bounds given: held-out ``R^2``
      0.97 at ``epsilon = 4`` (Algorithm 2 with the count sketch: 0.30), 0.53
      at ``epsilon = 1`` (-0.12); at ``epsilon = 1`` it beats ``w = 0`` on
      every seed from ``n = 5 x 10^4``;
    * ``n = 10^6``, ``d = 200``: relative suboptimality 0.067 (``K = 2``) and
      0.105 (``K = 4``) at ``epsilon = 4``, against 0.185 for the centralized
      private Frank-Wolfe and 2.1 for Algorithm 2.

    What it assumes: marginal screening finds the columns that matter (a
    column whose effect shows only jointly with correlated others may not
    be shared), and columns not shared get coefficient 0.
``"centred"``
    The broadcast sketches the *residual*: party 0 uploads, once, the sketch
    of the targets ``J y`` (with Gaussian noise), and the coordinator
    broadcasts ``q = J A x - J y``; the parties take ``u = J^T q`` as the
    residual. The sketch's error ``(J^T J - I) (A x - y)`` is then
    proportional to the residual, which is small near the optimum: the
    non-private fit minimises ``(1/2n) ||J (A x - y)||^2`` (sketch-and-solve,
    whose minimiser is ``w`` itself when ``y = A w``), and needs ``m`` of the
    order of ``d`` or more. Cost: ``m`` more floats of uplink, and one more
    Gaussian release. Calibrated as a whole by an accountant (``"auto"``).
``"paper"``
    Algorithm 2 as published (kept by name for the paper's reproduction):
    ``q = J A x`` and the parties take ``u = J^T q`` as the margins, so their gradients
    ``(1/n) a_j^T (J^T J A x - y)`` keep an error of the order of
    ``||a_j|| ||A x|| / (n sqrt(m))`` that does not vanish at the optimum; the
    fit minimises ``(1/2n) ||J A x||^2 - (1/n) y^T A x``, whose minimiser is off
    by ``O(sqrt(d / m))`` of ``w`` itself. Measured on ``n = 100,000``,
    ``d = 100``, ``K = 2``, ``m = 200``, ``T = 50``, without noise: held-out
    ``R^2`` 0.71 against 0.96 centred (``benchmarks/bench_vertical_sketch.py``).
    Under privacy the centred variant's extra release (whose sensitivity
    grows with the target bound) costs more than its smaller sketch error
    gains at the sizes measured (``R^2`` 0.05 against 0.50 at epsilon 16 under
    the paper's calibration).

The sketch of the Frank-Wolfe variants (``sketch``): by default a count sketch, each
record hashed to one of the ``m`` rows with a random sign
(:class:`~dpglm.distributed.protocol.SketchSpec`), in place of the paper's dense
Gaussian ``J``. Both have ``E[J^T J] = I`` and the same error on the inner products the
gradients read; the count sketch's columns have norm exactly 1, where the Gaussian's
longest column (the sensitivity's factor) is 1.1 to 1.3 times longer at the sizes
measured, and it takes ``O(n)`` memory and work where the Gaussian takes ``O(m n)``, so
that the rule's ``m`` is no longer capped by memory, and its iterations are cheap enough
that the rule runs four times as many (:func:`vertical_fw_rule`). Measured on the
issue's problem (``n = 100,000``, ``d = 100``, ``K = 2``, only the target, parties,
radius and feature bounds given; ``benchmarks/bench_vertical_rule.py``): held-out
``R^2`` 0.30 at ``epsilon = 4`` (40 seeds; the Gaussian sketch at its rule's sizes: 0.15
over 8), 0.85 at 16 (0.71), -0.12 at 1 (-0.40), in about 1 s a fit (the Gaussian: 15 to
35 s); without noise, at the same ``m = 817`` and ``T = 50``, 0.90 for both.
``sketch="gaussian"`` runs the paper's.

The Frank-Wolfe variants (``"centred"`` and ``"paper"``): each iteration every
party draws ``tau`` of its ``d_k`` coordinates, so the coordinates follow the
``(K, tau)``-distributed sampling of :class:`~dpglm.solvers.fw_sampling.Distributed`,
and the step size is BCFW-AS's universal ``2 / (p_min t + 2)``,
``p_min = tau / max_k d_k``; the coordinator's step
``x <- (1 - gamma) x + gamma sum_k s_k`` (``s_k`` a vertex of party ``k``'s
ball) stays feasible. Their privacy (replace-one neighbours, ``n`` public;
``y`` is held by every party, as in the paper): two kinds of uploads depend on
the data, ``K T`` of each:

**Signed indices.** Party ``k`` computes its partial gradients from the
public broadcast: ``g_j = (1/n) sum_i clip((u_i - y_i) A_ij, C)`` with
``u = J^T q``. Every per-sample term is clipped to ``C`` (a public
hyperparameter, never a data statistic), so replacing record ``i`` moves
``g_j`` by at most ``2 C / n`` and the score ``-<g, s>`` of a vertex of radius
``r_k`` by at most ``2 r_k C / n``; scores of ``+r e_j`` and ``-r e_j`` move in
opposite directions, so each selection is a non-monotone
:class:`~dpglm.privacy.events.NoisyMaxEvent`, ``2 / z``-DP for noise of scale
``z 2 r_k C / n`` (Laplace, as in the paper, or Gumbel). ``u`` itself is a
post-processing of earlier uploads.

**Sketched active features.** Each party first clips every entry of column
``j`` to ``[-b_j, b_j]`` (``feature_bounds``: public, a per-record
operation). Replacing record ``i`` then changes the selected column ``a`` in
entry ``i`` only, by at most ``2 b_j``, so the sketch ``J a`` moves by at most
``Delta_j = 2 b_j max_i ||J e_i||_2`` in L2 (``2 b_j`` for a count sketch).
``J`` is drawn from a public seed before the data are read, and the bound is
computed from ``J`` alone. The party uploads
``J a + N(0, (z_g Delta_j)^2 I_m)``: a Gaussian release, ``1 / z_g``-GDP,
whichever column the (already released) index picked.

``J`` need not be secret, from the coordinator or anyone: the Gaussian noise
is calibrated to the worst column of ``J``, as the paper calibrates it to
``J``'s largest singular value (a looser bound of the same quantity), so the
guarantee holds for an adversary who knows ``J``. The parties need it to
compute gradients from ``q``; the coordinator never needs it. The uploads of
the ``K`` parties in one iteration are all moved by one record, so all
``2 K T`` releases compose sequentially; the model, ``q`` and every broadcast
are post-processing.

Two calibrations:

**Centred: the targets' sketch.** Party 0 clips every target to
``[-B, B]`` (``target_bound``; default ``sum_k r_k max_{j in P_k} b_j``, the
largest ``|a_i^T x|`` over the domain: public numbers only) and uploads
``J y + N(0, (z_y 2 B max_i ||J e_i||)^2 I_m)`` once: replacing record ``i``
moves ``J y`` by at most ``2 B ||J e_i||``, so the release is
``1 / z_y``-GDP. From then on the broadcast ``q`` is post-processing of the
releases, and a party's gradient ``(1/n) sum_i clip(a_ij u_i, C)`` with the
public ``u = J^T q`` moves by at most ``2 C / n`` when record ``i`` is replaced
(only ``a_ij`` is the record's); at the first iteration ``u = -y`` (``x = 0``),
record ``i``'s own term, clipped to ``C`` too. So the selections keep the
paper's sensitivity ``2 r_k C / n``. The plan is the ``K T`` selections, the
``K T`` feature sketches and the target sketch; it is calibrated as a whole
(``accountant``, default ``"auto"``: the tightest valid accountant) with the
three multipliers in the ratio that minimises the noise each part leaves on
the last iteration's vertex scores (see
:func:`~dpglm.distributed.vertical_plan.centred_events`;
``selection_share`` instead fixes the selections' share of the zCDP ``rho``).

Calibrations of the paper's variant:

``accountant=None`` (``"auto"``, the default) or any accountant's name: one plan
    The ``K T`` selections and the ``K T`` sketches are calibrated as one
    plan by the accountant (``"auto"``: the tightest valid one), with the two
    multipliers in the ratio that minimises the noise they leave on the last
    iteration's vertex scores, derived as for the centred variant
    (:func:`~dpglm.distributed.vertical_plan.paper_model`). Per unit multiplier
    the sketches leave ``a_f = r sigma_1 b_rms sqrt(n) / n`` on a score, with
    ``sigma_1 = r sqrt(K sum_t w_t^2) Delta`` the noise they leave on each
    pseudo-margin (:func:`~dpglm.distributed.vertical_plan.noise_weights`); the
    selections leave
    ``a_sel = u 2 r C / (n kappa)``, with ``u`` the std of their unit draw
    (``sqrt(2)`` for Laplace) and ``kappa = erf(C / (sqrt(2) b_rms s))`` the
    share of a gradient's signal that survives the clip when its terms carry
    noise and sketch error ``s`` (:func:`clip_attenuation`: a clip far below
    the noise divides the signal, not the selections' noise). At a fixed
    total zCDP ``rho = sum_i W_i / z_i^2`` (``W_sel = K T rho_1``,
    ``W_g = K T / 2``) the variance ``sum_i a_i^2 z_i^2`` is least at
    ``z_i^2 ~ sqrt(W_i) / a_i``; ``kappa`` depends on the calibrated ``z_g``,
    so the ratio and the calibration are iterated to their fixed point
    before anything is charged. ``b_rms = b / sqrt(3)`` (the spread of a
    uniform on ``[-b, b]``) only weighs the split, never a sensitivity. On
    the problem of ``benchmarks/bench_vertical_sketch.py`` (``m = 200``,
    ``T = 50``, ``C = 1``) both parts get less noise than under the paper's
    calibration: 0.56 to 0.77 times its sketch noise, 0.49 to 0.78 times its
    selection noise (``epsilon`` 16 to 1; ``benchmarks/bench_vertical_rule.py``).
    ``selection_share`` instead fixes the selections' share of the plan's
    zCDP ``rho``.
``accountant="paper"``: the paper's calibration
    The budget is split, a share ``s = selection_share`` (the paper: one half)
    of ``(epsilon, delta)`` to the indices and the rest to the features. The
    ``K T`` selections are calibrated by advanced composition at
    ``(s epsilon, s delta)``; the sketches get the paper's Gaussian scale
    ``z_g = sqrt(K T) sqrt(2 (log(1/delta') + epsilon')) / epsilon'`` at
    ``(epsilon', delta') = ((1 - s) epsilon, (1 - s) delta)``, which makes the
    ``K T`` releases ``rho``-zCDP with ``rho + 2 sqrt(rho log(1/delta')) <= epsilon'``
    (Bun and Steinke). The two parts add up to ``(epsilon, delta)``; the
    report then states the tightest valid accounting of the plan as run
    (``"auto"``), at most ``epsilon``.

Parameters from a rule: ``n_iter``, ``sketch_dim``, ``clip`` and ``tau`` left
out are chosen by :func:`vertical_fw_rule` from public numbers (``n``, ``d``,
``K``, the target, the radius and the feature bound; its docstring states the
derivation), and ``info["rule"]`` holds its choice. Before the budget is
charged the fit predicts the signal-to-noise of its last vertex scores
(``info["regime"]``, the paper's variant) and warns (``UserWarning``) when it
is far below the level at which the fit is expected to beat ``w = 0``, naming
the smallest ``n`` at which the rule expects it to.

Why it needs far more records than a centralized fit: a party's gradient
reads, record by record, the margins of the columns the other parties hold,
and every party sees them only through differentially private releases. So
each coordinate of its gradient carries noise of order ``1 / sqrt(n)``
(per-record noise on ``n`` terms, divided by ``n``), where a centralized fit's
carries ``1 / n``. No protocol of this kind escapes that rate: two parties
whose views are epsilon-differentially private cannot estimate the inner
product of their ``n``-bit vectors with an additive error much below
``sqrt(n)`` (McGregor, Mironov, Pitassi, Reingold, Talwar and Vadhan 2010),
where a curator holding both errs by ``O(1 / epsilon)``. Measured
(``benchmarks/bench_vertical_scaling.py``, ``d = 200``, ``K = 2``): the
relative suboptimality falls like ``n^-0.57`` at ``epsilon = 4`` and
``n^-0.45`` at 16, and is 11 times the centralized private Frank-Wolfe's at
``epsilon = 4`` and ``n = 10^6`` (2.6 times at 16); a smaller constant could move
that crossing, not the rate.

Uplink: ``K T`` int64 indices and ``m K T`` float64 sketch entries, and ``m``
more float64 centred, counted by the engine on the messages themselves
(``info["uplink"]``).

With ``epsilon = inf`` the Frank-Wolfe variants run the same protocol without
noise or clipping (features and targets included); the sketch stays, so the
fit minimises the sketched objective ``(1/2n) ||J (A x - y)||^2`` (centred) or
``(1/2n) ||J A x||^2 - (1/n) y^T A x`` (paper) (``sketch_dim=None``: the LASSO
itself). The screened variant without noise is the LASSO on each party's
``max_shared`` columns of largest marginal score (all of them when it holds
no more), exactly with ``sketch_dim=None``.

Examples
--------
>>> import numpy as np
>>> from dpglm.distributed.vertical_fw import vertical_fw
>>> from dpglm.problem import Problem
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, (20_000, 8))
>>> y = 3 * X[:, 0] - 2 * X[:, 5] + 0.1 * rng.standard_normal(20_000)
>>> fit = vertical_fw(
...     Problem(X, y, "squared"),
...     epsilon=8.0,
...     delta=1e-9,
...     parties=2,
...     radius=3.0,
...     feature_bounds=1.0,
...     random_state=0,
... )
>>> [m.part for m in fit.report.mechanisms]
['column screening', 'own statistics', 'feature sharing', 'cross statistics']
>>> [s.tolist() for s in fit.info["shared"]], np.round(fit.coef, 1).tolist()
([[0, 2], [5]], [2.9, 0.0, 0.0, 0.0, 0.0, -2.0, 0.0, 0.0])

The paper's Algorithm 2, with its sizes given:

>>> fit = vertical_fw(
...     Problem(X[:2000], y[:2000], "squared"),
...     epsilon=1.0,
...     delta=1e-6,
...     parties=2,
...     tau=2,
...     sketch_dim=200,
...     radius=3.0,
...     n_iter=30,
...     clip=2.0,
...     feature_bounds=1.0,
...     random_state=0,
...     variant="paper",
... )
>>> bool(fit.report.epsilon <= 1.0), [m.part for m in fit.report.mechanisms]
(True, ['index selection', 'feature sharing'])
>>> fit.info["uplink"]["total"] == 2 * 30 * 8 + 200 * 2 * 30 * 8  # K T ints + m K T floats
True

With so few records the noise on the sketches swamps the features (their
norm grows like ``sqrt(n)``, the noise does not): the paper's utility needs
``n`` large against ``sqrt(K T) / epsilon``.
"""

from __future__ import annotations

import math
import numbers
import os
import warnings
from dataclasses import replace

import numpy as np

from dpglm.data.layout import as_layout
from dpglm.distributed.engines import get_engine
from dpglm.distributed.protocol import (
    COUNT,
    FLOAT_BYTES,
    INT_BYTES,
    Coordinator,
    PartyConfig,
    PartyError,
    PartySetup,
    SketchSpec,
    check_sketch_kind,
)
from dpglm.distributed.vertical_plan import (
    PAPER,
    SELECTION_PART,
    SHARING_PART,
    calibrated_multipliers,
    centred_events,
    paper_events,
    paper_sketch_multiplier,
)
from dpglm.distributed.vertical_rule import (
    VerticalRule,
    full_rule,
    predicted_regime,
    vertical_fw_rule,
)
from dpglm.distributed.vertical_screened import (
    MAX_SHARED,
    OWN_PART,
    ROUNDS,
    SCREEN_PART,
    SCREENED,
    TYPICAL_SHARED,
    ScreenedConfig,
    ScreenedCoordinator,
    ScreenedParty,
    screened_events,
    screened_regime,
    screened_shares,
)
from dpglm.penalties import NoPenalty
from dpglm.privacy.events import GaussianEvent, PrivacyPlan
from dpglm.privacy.mechanisms import NoiseSource, keyed_seed_sequence
from dpglm.privacy.releases import Release
from dpglm.privacy.report import neighbouring_assumptions
from dpglm.privacy.spending import calibrate_cached, spend
from dpglm.privacy.targets import Share, check_privacy_target
from dpglm.problem import Problem
from dpglm.solvers.dp_fw import NEIGHBOURING, block_radii, check_fw_problem
from dpglm.solvers.fw_sampling import Distributed
from dpglm.solvers.hyperparameters import (
    HYPERPARAMETER_ASSUMPTION,
    check_finite_clip,
    check_positive,
    check_positive_int,
)
from dpglm.solvers.result import FitResult, History

__all__ = ["VerticalRule", "vertical_fw", "vertical_fw_rule"]

SOLVER = "vertical-FW"
NOISES = ("laplace", "gumbel")
VARIANTS = (SCREENED, "centred", "paper")
AUTO = "auto"
#: the screened fit warns when the least coefficient it can share is this many times the level
#: from which it learns (see vertical_screened.screened_regime)
FAR_OUTSIDE = 2.0


# --- validation -----------------------------------------------------------------------------


def _check_squared(problem, what):
    check_fw_problem(problem, SOLVER)
    if problem.datafit.name != "squared":
        raise ValueError(
            f"{what} has the {problem.datafit.name} loss; the vertical protocol fits the "
            "LASSO (squared loss), the loss whose gradient the sketch of A x preserves"
        )


def _split(problem_or_blocks, parties, tau):
    """``(blocks, y, sampling, problem)``: each party's columns, the targets, the sampling."""
    if isinstance(problem_or_blocks, Problem):
        problem = problem_or_blocks
        _check_squared(problem, "the problem")
        if parties is None:
            raise ValueError("parties is required: the number of parties, or each feature's party")
        sampling = Distributed(problem.n_features, tau, parties)
        X = problem.X
        blocks = [as_layout(X[:, features], "columns") for features in sampling.party_blocks]
        return blocks, problem.y, sampling, problem
    try:
        problems = list(problem_or_blocks)
    except TypeError:
        problems = None
    if not problems or not all(isinstance(p, Problem) for p in problems):
        raise TypeError(
            "problem_or_blocks must be a Problem or a sequence of Problems (one per party, "
            f"same targets), got {type(problem_or_blocks).__name__}"
        )
    y = problems[0].y
    for k, p in enumerate(problems):
        _check_squared(p, f"the block of party {k}")
        if not isinstance(p.penalty, NoPenalty):
            raise ValueError(
                f"the block of party {k} has penalty {p.penalty!r}; give the balls' radius instead"
            )
        if p.n_samples != y.size or not np.array_equal(p.y, y):
            raise ValueError(
                f"the block of party {k} has other targets than party 0: every party holds "
                "the same records and the same y"
            )
    if parties is not None and not (
        isinstance(parties, numbers.Integral) and int(parties) == len(problems)
    ):
        raise ValueError(
            f"parties={parties!r} contradicts the {len(problems)} blocks given; leave it None"
        )
    labels = np.repeat(np.arange(len(problems)), [p.n_features for p in problems])
    sampling = Distributed(labels.size, tau, labels)
    return [p.X for p in problems], y, sampling, None


def _check_sketch_dim(value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(
            f"sketch_dim must be a positive int, None (no sketch) or 'auto' (the rule's), "
            f"got {value!r}"
        )
    return int(value)


def _checked_common(problem, sampling, *, radius, sketch_dim, sketch_seed, sketch,
                    feature_bounds, accountant, private):  # fmt: skip
    """The parameters every variant reads, checked: ``(sketch_dim, sketch_seed, sketch kind,
    radii, feature bounds, accountant)``, the accountant ``"auto"`` when None."""
    if not (isinstance(sketch_dim, str) and sketch_dim == AUTO):
        sketch_dim = _check_sketch_dim(sketch_dim)
    K = sampling.n_parties
    penalty = problem.penalty if problem is not None else NoPenalty()
    radii = np.broadcast_to(block_radii(radius, K, penalty), (K,)).copy()
    if accountant is not None and not isinstance(accountant, str):
        raise TypeError(f"accountant must be a name or None, got {accountant!r}")
    return (
        sketch_dim,
        _check_sketch_seed(sketch_seed),
        check_sketch_kind(sketch),
        radii,
        _check_feature_bounds(feature_bounds, sampling.n_blocks, private),
        "auto" if accountant is None else accountant,
    )


def _check_feature_bounds(value, d, private):
    if value is None:
        if private:
            raise ValueError(
                "feature_bounds is required for a private fit: the sketched features' "
                "sensitivity comes from clipping each entry to [-b_j, b_j], never from the data"
            )
        return None
    try:
        bounds = np.array(value, dtype=float)
    except (TypeError, ValueError):
        bounds = None
    if bounds is None or bounds.ndim > 1 or (bounds.ndim == 1 and bounds.shape != (d,)):
        raise ValueError(
            f"feature_bounds must be a number or {d} numbers (one per feature), got {value!r}"
        )
    bounds = np.broadcast_to(bounds, (d,)).copy()
    if not (np.isfinite(bounds).all() and (bounds > 0).all()):
        raise ValueError(f"feature_bounds must be positive and finite, got {value!r}")
    return bounds


def _check_target_bound(value, radii, bounds, sampling, private):
    """``B``, the clip of the targets (centred, private); ``inf`` when not private.

    Default: ``sum_k r_k max_{j in P_k} b_j``, the largest ``|a_i^T x|`` over
    the domain, from public numbers only.
    """
    if not private:
        return math.inf
    if value is None:
        return float(
            sum(r * bounds[f].max() for r, f in zip(radii, sampling.party_blocks, strict=True))
        )
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"target_bound must be a positive number, got {value!r}")
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"target_bound must be positive and finite, got {value!r}")
    return value


def _child(root, i):
    """Child ``i`` of ``root``, as ``root.spawn`` makes it (without counting it as spawned)."""
    return np.random.SeedSequence(
        root.entropy, spawn_key=(*root.spawn_key, i), pool_size=root.pool_size
    )


def _seeds(random_state, secure, sketch_seed):
    """The root of the parties' streams and the public seed of ``J``, from the fit's seed.

    Returns ``(root, sketch_seed)``; ``root`` is None for the secure source.
    ``J``'s seed is child 0 of the root: public, drawn before the charge (the
    sensitivity is computed from ``J``) and not keyed to it; the parties get
    the next children once the charge is known (:func:`_party_seeds`).
    """
    if isinstance(random_state, NoiseSource):
        secure = secure or random_state.secure
        random_state = None if random_state.secure else random_state.generator
    if secure:
        if random_state is not None:
            raise ValueError(
                "secure=True refuses a seed: random_state must be None, because a seed "
                f"or a Generator makes the noise predictable (got {random_state!r})"
            )
        if sketch_seed is None:
            # public, but unpredictable before the fit like the rest
            sketch_seed = int.from_bytes(os.urandom(16), "little")
        return None, sketch_seed
    if isinstance(random_state, np.random.Generator):
        root = np.random.SeedSequence(random_state.integers(0, 2**63, size=4).tolist())
    elif isinstance(random_state, np.random.SeedSequence):
        # a copy: spawning from the caller's object would change its next spawns
        root = np.random.SeedSequence(random_state.entropy, spawn_key=random_state.spawn_key)
    elif random_state is None or (
        isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool)
    ):
        root = np.random.SeedSequence(None if random_state is None else int(random_state))
    else:
        raise TypeError(
            "random_state must be None, an int, a numpy SeedSequence, a numpy Generator or a "
            f"NoiseSource, got {type(random_state).__name__}"
        )
    if sketch_seed is None:
        state = _child(root, 0).generate_state(4, np.uint32)
        sketch_seed = int.from_bytes(state.astype("<u4").tobytes(), "little")
    return root, sketch_seed


def _party_seeds(root, n_parties, key):
    """One stream per party: children ``1..K`` of the root keyed to the budget charge.

    The parties' streams are spawned children of one ``SeedSequence``, so that
    a party draws the same numbers wherever it runs. ``key`` (the charge's
    :attr:`~dpglm.privacy.budget.Charge.noise_key`, None without a charge)
    makes two fits charged to one budget with the same seed draw different
    noise; without it the streams are the seed's own.
    """
    if root is None:
        return [None] * n_parties
    if key is not None:
        root = keyed_seed_sequence(root, key)
    return [_child(root, k + 1) for k in range(n_parties)]


def _check_sketch_seed(value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"sketch_seed must be a non-negative int or None, got {value!r}")
    return int(value)


# --- the plan ------------------------------------------------------------------------------


def _spend(events, *, epsilon, delta, accountant, share, budget, label, assumptions,
           random_state, secure):  # fmt: skip
    """Calibrate the plan (paper's split or one accountant), charge it, report it."""
    selection, sketch = events[:2]
    n_releases = sketch.count
    if accountant != PAPER or math.isinf(epsilon):
        spent = spend(
            PrivacyPlan(events, NEIGHBOURING),
            epsilon=epsilon,
            delta=delta,
            accountant="auto" if accountant == PAPER else accountant,
            budget=budget,
            label=label,
            assumptions=assumptions,
            random_state=random_state,
            secure=secure,
        )
        return spent, {"mode": "accounted" if accountant != PAPER else "none"}
    (eps1, delta1), (eps2, delta2) = share.split(epsilon, delta)
    selected = calibrate_cached(PrivacyPlan((selection,), NEIGHBOURING), eps1, delta1, "advanced")
    z_selection = selected.plan.events[0].noise_multiplier
    z_sketch = paper_sketch_multiplier(n_releases, eps2, delta2)
    plan = PrivacyPlan(
        (
            replace(selection, noise_multiplier=z_selection).frozen(),
            replace(sketch, noise_multiplier=z_sketch).frozen(),
        ),
        NEIGHBOURING,
    )
    spent = spend(
        plan,
        epsilon=epsilon,
        delta=delta,
        accountant="auto",
        budget=budget,
        label=label,
        assumptions=(
            *assumptions,
            f"noise calibrated as in Lou and Cheung (2018): ({eps1:.6g}, {delta1:.3g}) to the "
            f"indices by advanced composition, ({eps2:.6g}, {delta2:.3g}) to the sketched "
            "features by the paper's Gaussian scale; the report accounts the plan as run",
        ),
        random_state=random_state,
        secure=secure,
    )
    calibration = {
        "mode": "paper",
        SELECTION_PART: {
            "epsilon": eps1,
            "delta": delta1,
            "accountant": "advanced",
            "accounted_epsilon": selected.epsilon,
            "noise_multiplier": z_selection,
        },
        SHARING_PART: {
            "epsilon": eps2,
            "delta": delta2,
            "formula": "sqrt(K T) sqrt(2 (log(1/delta') + epsilon')) / epsilon'",
            "noise_multiplier": z_sketch,
        },
    }
    return spent, calibration


# --- the fit -------------------------------------------------------------------------------


def vertical_fw(
    problem_or_blocks,
    *,
    epsilon: float,
    delta: float,
    sketch_dim="auto",
    sketch: str = COUNT,
    radius=None,
    parties=None,
    tau: int | None = None,
    n_iter: int | None = None,
    clip: float | None = None,
    feature_bounds=None,
    noise: str | None = None,
    selection_share: float | None = None,
    accountant: str | None = None,
    variant: str = SCREENED,
    max_shared: int | None = None,
    target_bound=None,
    engine=None,
    budget=None,
    random_state=None,
    secure: bool = False,
    sketch_seed: int | None = None,
    callback=None,
) -> FitResult:
    """Fit the LASSO with features split across parties (private, distributed Frank-Wolfe).

    Parameters
    ----------
    problem_or_blocks : Problem or sequence of Problem
        A :class:`~dpglm.problem.Problem` (squared loss, no intercept, no
        penalty or an :class:`~dpglm.penalties.L1Ball` with one party) whose
        columns are split among ``parties``; or one Problem per party, its
        columns, all with the same targets (the global features are the
        parties' columns in order).
    epsilon, delta : float
        Target guarantee (replace-one neighbours); ``epsilon = inf`` is the
        non-private protocol. A private fit needs ``delta > 0`` (Gaussian
        noise on the sketches).
    sketch_dim : int, None or "auto", default="auto"
        ``m``, rows of the public sketch ``J``; ``None`` is no sketch (each
        upload is then a noisy full column, ``m = n``); ``"auto"``: from
        :func:`vertical_fw_rule` (Frank-Wolfe variants) or, once the shared
        columns are known, from
        :func:`~dpglm.distributed.vertical_screened.sketch_rows` (screened).
    sketch : {"count", "gaussian"}, default="count"
        The kind of public sketch ``J``
        (:class:`~dpglm.distributed.protocol.SketchSpec`): a count sketch,
        whose columns have norm exactly 1 (less noise for the same budget than
        the paper's Gaussian matrix, whose largest column norm is 1.1 to 1.3
        at the sizes of the benchmarks) and which takes ``O(n)`` memory and
        work instead of ``O(m n)``, so that ``"auto"`` is not capped by
        memory; or ``"gaussian"``, the paper's ``J`` (for its reproduction, with
        ``accountant="paper"`` and the paper's ``n_iter``: the rule's split weighs
        the selections by :func:`~dpglm.distributed.vertical_plan.selection_averaging`
        whatever the sketch; the screened variant takes the count sketch
        only). Ignored with ``sketch_dim=None`` (``J = I``).
    radius : float or array_like of shape (K,), optional
        ``r_k``, radius of each party's L1 ball; defaults to the problem's
        L1Ball (one party).
    parties : int or array_like of int of shape (n_features,), optional
        ``K`` (contiguous near-equal column blocks) or each feature's party;
        required with a Problem, implied by a sequence of blocks.
    tau : int, optional
        Frank-Wolfe variants: coordinates each party samples per iteration;
        default: as many as the smallest party holds (the rule's).
    n_iter : int, optional
        Frank-Wolfe variants: ``T``; default: :func:`vertical_fw_rule`'s.
    clip : float, optional
        Frank-Wolfe variants:
        ``C``, bound on every per-sample gradient term (finite unless
        ``epsilon = inf``; a public hyperparameter); default:
        :func:`vertical_fw_rule`'s, a fraction of the noise the pseudo-margins
        are predicted to carry.
    feature_bounds : float or array_like of shape (n_features,), optional
        ``b_j``: each party clips the entries of its column ``j`` to
        ``[-b_j, b_j]``. Required for a private fit; public.
    noise : {"laplace", "gumbel"}, optional
        Frank-Wolfe variants: selection noise (Laplace, the default: the
        paper's report-noisy-max; Gumbel: the exponential mechanism).
    selection_share : float in (0, 1), optional
        Frank-Wolfe variants: the indices' share of the budget: of ``(epsilon, delta)`` with
        ``accountant="paper"`` (one half by default), of the plan's zCDP
        ``rho`` otherwise (by default the split that leaves the least noise on
        the last vertex scores).
    accountant : str, optional
        ``None`` is ``"auto"``: the whole plan calibrated by the tightest
        valid accountant; an accountant's name: by that one; ``"paper"``
        (``variant="paper"`` only): the paper's calibration (see the module
        docstring).
    variant : {"screened", "paper", "centred"}, default="screened"
        ``"screened"``: shared statistics on screened columns, solved by the
        coordinator (:mod:`~dpglm.distributed.vertical_screened`);
        ``"centred"``: the broadcast sketches the residual ``A x - y`` (party 0
        uploads ``J y`` once); ``"paper"``: Algorithm 2 as published (the
        margins ``A x``). See the module docstring.
    max_shared : int, optional
        Screened variant: the most columns a party shares (default 64).
    target_bound : float, optional
        ``B``, private, screened and centred: the targets are clipped to
        ``[-B, B]`` before any statistic of them. Default
        ``sum_k r_k max_{j in P_k} b_j``.
    engine : Engine or distributed.Client, optional
        Where the parties run: ``None`` is an
        :class:`~dpglm.distributed.engines.InProcessEngine`; a client or a
        :class:`~dpglm.distributed.engines.DaskEngine` runs one actor per party.
    budget : PrivacyBudget, optional
        Charged with the whole plan before any party starts.
    random_state : None, int, SeedSequence, Generator or NoiseSource
        Seeds every party's stream (spawned, and keyed to the budget charge as
        in :func:`~dpglm.privacy.spending.spend`) and the public seed of ``J``
        (not keyed: ``J`` is public and drawn before the charge). A
        NoiseSource gives four draws of its Generator as the seed.
    secure : bool, default=False
        Every party draws from its operating system's generator (no seed).
    sketch_seed : int, optional
        The public seed of ``J`` (default: derived from ``random_state``).
    callback : callable, optional
        ``callback(iteration, coef)`` after every iteration (``iteration``
        completed so far; ``coef`` a copy of the iterate, itself private);
        the screened variant calls it once, with its 3 rounds and the model.

    Returns
    -------
    FitResult
        Screened: ``info["shared"]`` each party's shared columns (global
        indices), ``info["uplink"]`` the bytes counted against the protocol's
        formula, ``info["regime"]`` the least coefficient each party can
        share over its radius and the ``n`` from which the fit is expected to
        learn, ``info["ridge"]`` and ``info["duality_gap"]`` of the
        coordinator's solve. Frank-Wolfe variants: ``info["vertices"]`` holds
        the ``K T`` uploaded indices as ``(feature, sign)`` rows;
        ``info["uplink"]`` the bytes received from each party and in total, with the paper's count
        (``K T`` int64 + ``m K T`` float64) and whether they match;
        ``info["rule"]`` the rule's choice (None when every size was given);
        ``info["sketch"]`` and ``info["sketch_seed"]`` the kind of ``J`` (None:
        no sketch) and its public seed (``SketchSpec(n, m, seed, kind)`` rebuilds it);
        ``info["regime"]`` (the paper's variant, private) the predicted
        signal-to-noise of the last vertex scores (``snr``), the level needed
        to beat ``w = 0`` (``snr_needed``, ``beats_zero``) and the smallest
        ``n`` at which it is reached (``min_n``, at the same multipliers).

    Warns
    -----
    UserWarning
        Before anything is charged, when the predicted signal-to-noise
        (Algorithm 2) is below half the level at which the fit beats
        ``w = 0``, or the least coefficient the screen can share is over
        twice the level from which the screened fit learns; the message names
        ``n``, ``epsilon`` and ``min_n``.

    Raises
    ------
    PartyError
        A party failed or its worker was lost; the message names the party
        and the iteration, ``err.report`` is the report of the budget charged
        (the whole plan). No model is returned.

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.problem import Problem
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> prob = Problem(X, np.array([1.0, -1.0, 0.0]), "squared")
    >>> fit = vertical_fw(prob, epsilon=np.inf, delta=0.0, sketch_dim=None, parties=2, radius=1.0)
    >>> np.round(fit.coef, 2)  # least squares, inside the product of the two balls
    array([ 1., -1.])
    >>> fit = vertical_fw(
    ...     prob,
    ...     epsilon=np.inf,
    ...     delta=0.0,
    ...     sketch_dim=None,
    ...     parties=2,
    ...     radius=1.0,
    ...     n_iter=200,
    ...     variant="paper",
    ... )
    >>> np.round(fit.coef, 2)
    array([ 1., -1.])
    >>> fit.info["uplink"]["per_party"].tolist()  # 200 x (one int64 + 3 float64)
    [6400, 6400]
    >>> centred = vertical_fw(
    ...     prob,
    ...     epsilon=np.inf,
    ...     delta=0.0,
    ...     sketch_dim=None,
    ...     parties=2,
    ...     radius=1.0,
    ...     n_iter=200,
    ...     variant="centred",
    ... )
    >>> centred.info["uplink"]["per_party"].tolist()  # party 0 also sends J y (3 float64)
    [6424, 6400]
    """
    epsilon, delta = check_privacy_target(
        epsilon, delta, positive_delta="the sketched features are released with Gaussian noise"
    )
    private = not math.isinf(epsilon)
    if n_iter is not None:
        n_iter = check_positive_int("n_iter", n_iter)
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    blocks, y, sampling, problem = _split(problem_or_blocks, parties, 1 if tau is None else tau)
    K, d, n = sampling.n_parties, sampling.n_blocks, y.size
    if variant == SCREENED:
        return _fit_screened(
            blocks, y, sampling, problem, epsilon=epsilon, delta=delta, private=private,
            sketch_dim=sketch_dim, sketch=sketch, radius=radius, feature_bounds=feature_bounds,
            given={"n_iter": n_iter, "tau": tau, "clip": clip, "noise": noise,
                   "selection_share": selection_share},
            accountant=accountant, target_bound=target_bound, max_shared=max_shared,
            engine=engine, budget=budget, random_state=random_state, secure=secure,
            sketch_seed=sketch_seed, callback=callback,
        )  # fmt: skip
    if max_shared is not None:
        raise ValueError(f"max_shared is the screened variant's; variant={variant!r} refuses it")
    if noise is None:
        noise = "laplace"
    sizes = [len(features) for features in sampling.party_blocks]
    if tau is None:  # the rule's: every party scores as many coordinates as the smallest holds
        labels = np.empty(d, dtype=np.int64)
        for k, features in enumerate(sampling.party_blocks):
            labels[features] = k
        sampling = Distributed(d, min(sizes), labels)
    if clip is not None:
        clip = check_positive("clip", clip, allow_inf=True)
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
    sketch_dim, sketch_seed, sketch_kind, radii, bounds, accountant = _checked_common(
        problem, sampling, radius=radius, sketch_dim=sketch_dim, sketch_seed=sketch_seed,
        sketch=sketch, feature_bounds=feature_bounds, accountant=accountant, private=private,
    )  # fmt: skip
    centred = variant != PAPER
    if selection_share is None and accountant == PAPER:
        selection_share = 0.5  # the paper's even split
    share = None if selection_share is None else Share(selection_share, "selection_share")
    if centred and accountant == PAPER:
        raise ValueError(
            "accountant='paper' calibrates the paper's variant (variant='paper'); the centred "
            "variant is calibrated as a whole by an accountant (default 'auto')"
        )
    rule = None
    if n_iter is None or clip is None or isinstance(sketch_dim, str):
        # public numbers only: the expected column norm of J, not J itself (not drawn yet)
        rule = full_rule(
            n, d, K, epsilon, delta, float(radii.max()),
            None if bounds is None else float(bounds.max()),
            noise=noise, accountant=accountant, selection_share=selection_share,
            tau=sampling.tau, n_iter=n_iter, sketch_dim=sketch_dim, clip=clip,
            blocks=(min(sizes), max(sizes)), find_min_n=False, sketch=sketch_kind,
        )  # fmt: skip
        n_iter, sketch_dim, clip = rule.n_iter, rule.sketch_dim, rule.clip
    check_finite_clip(clip, private=private)
    target_bound = _check_target_bound(target_bound, radii, bounds, sampling, private)
    engine = get_engine(engine)
    root, sketch_seed = _seeds(random_state, secure, sketch_seed)
    sketch = SketchSpec(n_samples=n, dim=sketch_dim, seed=sketch_seed, kind=sketch_kind)
    m = sketch.m

    # sensitivities: from the public clip, radii, bounds and J, never from the data
    selection_sensitivity = sketch_sensitivity = target_sensitivity = None
    column_norm = None
    if private:
        selection_sensitivity = 2.0 * float(radii.max()) * clip / n
        column_norm = sketch.column_norm_bound()
        sketch_sensitivity = 2.0 * float(bounds.max()) * column_norm
        target_sensitivity = 2.0 * target_bound * column_norm
    steps = 2.0 / (sampling.p_min * np.arange(n_iter) + 2.0)
    noise_model = None
    if centred:
        events = centred_events(
            K * n_iter,
            noise,
            (
                selection_sensitivity,
                sketch_sensitivity,
                target_sensitivity,
                float(radii.max()),
                None if bounds is None else float(bounds.max()),
            ),
            steps,
            K,
            n,
            share,
        )
    else:
        events, noise_model = paper_events(
            K * n_iter,
            noise,
            (
                selection_sensitivity,
                sketch_sensitivity,
                float(radii.max()),
                None if bounds is None else float(bounds.max()),
            ),
            steps,
            K,
            n,
            m,
            clip,
            (epsilon, delta, accountant),
            share,
        )
    regime = None
    if private and not centred:
        # before the charge: a fit expected to fall short of w = 0 is said so while the
        # budget is still whole
        if noise_model is not None:
            z_sel = noise_model["selection_noise_multiplier"]
            z_g = noise_model["sketch_noise_multiplier"]
        else:
            z_sel, z_g = calibrated_multipliers(events, epsilon, delta, accountant, share)
        regime = predicted_regime(n, d, m, K, radii, bounds, clip, noise, z_sel, z_g,
                         sketch_sensitivity, steps, epsilon)  # fmt: skip
    source_secure = secure or (isinstance(random_state, NoiseSource) and random_state.secure)
    spent, calibration = _spend(
        events,
        epsilon=epsilon,
        delta=delta,
        accountant=accountant,
        share=share,
        budget=budget,
        label=f"{SOLVER} ({noise}, K={K}, tau={tau}, m={m}) on {n} records",
        assumptions=(
            *neighbouring_assumptions(NEIGHBOURING),
            "every party holds y (the paper's setting); each party clips the entries of its "
            "columns to the public feature_bounds, a per-record operation",
            "the uploads of the K parties in one iteration composed sequentially (one record "
            "moves all of them); broadcasts and the model are post-processing",
            "the sketch J is drawn from a public seed independent of the data; its largest "
            "column norm sets the sketch sensitivity, so J need not be secret",
            HYPERPARAMETER_ASSUMPTION,
            "radius, parties, tau and sketch_dim chosen independently of the data",
        ),
        # the root, not random_state: a Generator has given its draws to the root already
        random_state=None if random_state is None or root is None else root,
        secure=source_secure,
    )
    if noise_model is not None:
        calibration["least noise"] = noise_model
    # the budget is charged: only now do the parties read their data, with streams keyed to it
    seeds = _party_seeds(root, K, None if spent.charge is None else spent.charge.noise_key)
    selection_release, sketch_release = spent.release(0), spent.release(1)
    # one record moves party k's vertex scores by at most 2 r_k C / n, and its sketched
    # column J a_j by at most 2 b_j max_i ||J e_i||
    selection_scale = selection_release.scale(2.0, radii, clip, over=n)
    target_std = None
    if private:
        sketch_std = sketch_release.scale(2.0, bounds, column_norm)
        if centred:
            # one record moves J clip(y) by at most 2 B max_i ||J e_i||
            target_std = float(spent.release(2).scale(2.0, target_bound, column_norm))
    else:
        sketch_std, clip = None, math.inf
    # each party binds the releases to its own stream
    selection_noise, sketch_noise = (Release(e) for e in spent.plan.events[:2])
    target_noise = Release(spent.plan.events[2]) if centred and private else None
    owner = np.empty(d, dtype=np.int64)
    setups = []
    for k, features in enumerate(sampling.party_blocks):
        owner[features] = k
        config = PartyConfig(
            index=k,
            features=features,
            tau=sampling.tau,
            radius=float(radii[k]),
            sketch=sketch,
            clip=clip,
            feature_bounds=None if not private else bounds[features],
            selection=selection_noise if private else None,
            selection_scale=float(selection_scale[k]),
            sketch_noise=sketch_noise if private else None,
            sketch_std=None if sketch_std is None else sketch_std[features],
            centred=centred,
            target_bound=target_bound,
            target_noise=target_noise if k == 0 else None,
            target_std=target_std if k == 0 else None,
        )
        setups.append(PartySetup(config, blocks[k], y, seed=seeds[k], secure=source_secure))

    coordinator = Coordinator(owner, radii, steps, m, centred=centred)
    history, marks = History.empty(d), History.checkpoints(n_iter)
    share_read = K * sampling.tau / d
    try:
        engine.start(setups)
        q = coordinator.q.copy()
        for t in range(n_iter):
            messages = engine.step(t, q)
            q = coordinator.receive(t, messages)
            if t + 1 in marks:
                history.record((t + 1) * share_read, coordinator.theta)
            if callback is not None:
                callback(t + 1, coordinator.theta.copy())
    except PartyError as err:
        err.report = spent.report
        err.completed = coordinator.completed
        err.args = (
            f"{err.args[0]}. No model is returned. The budget was charged before training "
            f"for the whole plan (epsilon={spent.report.epsilon:.6g}, "
            f"delta={spent.report.delta:.3g}, {spent.plan.releases} releases); "
            f"{coordinator.completed} of {n_iter} iterations completed",
        )
        raise
    finally:
        engine.stop()
    vertices = np.array(coordinator.vertices, dtype=np.int64).reshape(-1, 2)
    if vertices.shape[0] != K * n_iter:  # the plan is the truth
        raise RuntimeError(f"received {vertices.shape[0]} indices, planned {K * n_iter}")
    per_message = INT_BYTES + m * FLOAT_BYTES
    target_bytes = m * FLOAT_BYTES if centred else 0
    expected_per_party = np.full(K, n_iter * per_message)
    expected_per_party[0] += target_bytes
    uplink = {
        "per_party": engine.uplink.copy(),
        "total": int(engine.uplink.sum()),
        "int_bytes": INT_BYTES,
        "float_bytes": FLOAT_BYTES,
        "formula": "K T int64 + m (K T + 1) float64" if centred else "K T int64 + m K T float64",
        "expected_per_party": expected_per_party if centred else n_iter * per_message,
        "expected_total": K * n_iter * INT_BYTES + m * K * n_iter * FLOAT_BYTES + target_bytes,
    }
    uplink["matches"] = bool(
        uplink["total"] == uplink["expected_total"]
        and (uplink["per_party"] == uplink["expected_per_party"]).all()
    )
    info = {
        "solver": SOLVER,
        "engine": engine.name,
        "placement": list(engine.placement),
        "noise": noise,
        "variant": variant,
        "target_bound": target_bound,
        "target_noise_std": target_std,
        "radius": radii,
        "clip": clip,
        "feature_bounds": bounds,
        "parties": owner,
        "tau": sampling.tau,
        "p_min": sampling.p_min,
        "step_sizes": steps,
        "sketch_dim": m,
        "sketch_seed": sketch_seed,
        "sketch": None if sketch.identity else sketch_kind,
        "selection_sensitivity": selection_sensitivity,
        "sketch_sensitivity": sketch_sensitivity,
        "selection_noise_scale": selection_scale,
        "sketch_noise_std": sketch_std,
        "vertices": vertices,
        "uplink": uplink,
        "downlink": {"per_party": engine.downlink.copy(), "total": int(engine.downlink.sum())},
        "calibration": calibration,
        "regime": regime,
        "rule": None if rule is None else rule.as_dict(),
    }
    return _result(problem, coordinator.theta.copy(), history, spent.report, n_iter, info)


# --- the screened variant -------------------------------------------------------------------


def _refuse_for_screened(given, accountant, sketch):
    named = [name for name, value in given.items() if value is not None]
    if named:
        raise ValueError(
            f"{', '.join(named)} set the Frank-Wolfe iterations of variant='paper' or "
            "'centred'; the screened variant (the default) runs none on the parties (its "
            "coordinator solves the shared statistics): leave them None, or pass variant='paper'"
        )
    if accountant == PAPER:
        raise ValueError(
            "accountant='paper' calibrates the paper's variant (variant='paper'); the screened "
            "variant is calibrated as a whole by an accountant (default 'auto')"
        )
    if sketch != COUNT:
        raise ValueError(
            f"sketch={sketch!r}: the screened variant shares its columns through a count "
            "sketch (or none, sketch_dim=None), whose rows bound a record's cross term"
        )


def _check_screened_scales(bounds, target_bound, columns, n):
    """The sensitivities' and thresholds' products of public numbers must be finite."""
    for b, d_k in zip(bounds, columns, strict=True):
        norm = math.sqrt(d_k)
        if not math.isfinite(2.0 * target_bound * norm * max(norm, target_bound) * b * b):
            raise ValueError(
                f"feature_bounds (largest {b:g}) and target_bound ({target_bound:g}) are too "
                f"large: the noise's thresholds over {d_k} columns overflow; rescale the data"
            )


def _check_max_shared(value):
    if value is None:
        return MAX_SHARED
    return check_positive_int("max_shared", value)


def _fit_screened(blocks, y, sampling, problem, *, epsilon, delta, private, sketch_dim, sketch,
                  radius, feature_bounds, given, accountant, target_bound, max_shared, engine,
                  budget, random_state, secure, sketch_seed, callback):  # fmt: skip
    """The screened variant (:mod:`~dpglm.distributed.vertical_screened`): plan, charge, run."""
    K, d, n = sampling.n_parties, sampling.n_blocks, y.size
    sketch_dim, sketch_seed, sketch_kind, radii, bounds, accountant = _checked_common(
        problem, sampling, radius=radius, sketch_dim=sketch_dim, sketch_seed=sketch_seed,
        sketch=sketch, feature_bounds=feature_bounds, accountant=accountant, private=private,
    )  # fmt: skip
    _refuse_for_screened(given, accountant, sketch_kind)
    if isinstance(sketch_dim, int) and sketch_dim > n:
        raise ValueError(
            f"sketch_dim={sketch_dim} exceeds the {n} records: a count sketch of more rows "
            "than records only costs uplink; give sketch_dim=None (no sketch) instead"
        )
    max_shared = _check_max_shared(max_shared)
    target_bound = _check_target_bound(target_bound, radii, bounds, sampling, private)
    columns = [len(f) for f in sampling.party_blocks]
    party_bounds = [
        1.0 if bounds is None else float(bounds[f].max()) for f in sampling.party_blocks
    ]
    shares = None  # without noise every multiplier is 0 whatever the split
    if private:
        medians = [float(np.median(bounds[f])) for f in sampling.party_blocks]
        _check_screened_scales(party_bounds, target_bound, columns, n)
        # mu of the whole plan: the split is derived at the level it will be calibrated to
        one = PrivacyPlan((GaussianEvent(noise_multiplier=1.0),), NEIGHBOURING)
        mu = (
            1.0 / calibrate_cached(one, epsilon, delta, accountant).plan.events[0].noise_multiplier
        )
        # the parties' statistics are of the columns over their bounds: unit bounds, and
        # coefficients of L1 norm about r_k times the party's median bound
        radius_units = max(r * b for r, b in zip(radii, medians, strict=True))
        shares = screened_shares(
            n, K, max(columns), radius_units, target_bound, mu,
            shared=min(max_shared, TYPICAL_SHARED),
        )  # fmt: skip
    events = screened_events(K, shares)
    template_mu2 = sum(e.count / e.noise_multiplier**2 for e in events)
    plan = PrivacyPlan(events, NEIGHBOURING)
    regime = None
    if private:
        # before the charge: a fit not expected to learn is said so while the budget is whole
        calibrated = calibrate_cached(plan, epsilon, delta, accountant).plan.events
        z = {e.part: float(e.noise_multiplier) for e in calibrated}
        regime = screened_regime(
            n, columns, radii, medians, target_bound,
            (z[SCREEN_PART], z[OWN_PART], z.get(SHARING_PART, 0.0)),
        )  # fmt: skip
        if max(regime["least_coefficient_over_radius"]) > FAR_OUTSIDE * regime["level"]:
            warnings.warn(
                f"at n={n} and epsilon={epsilon:g} the screen shares no coefficient below "
                f"{max(regime['least_coefficient_over_radius']):.3g} times a party's radius "
                f"(it learns from about {regime['level']:g}): the fit is not expected to beat "
                f"w = 0; it needs about n >= {regime['min_n']} at this epsilon",
                UserWarning,
                stacklevel=3,
            )
    engine = get_engine(engine)
    root, sketch_seed = _seeds(random_state, secure, sketch_seed)
    source_secure = secure or (isinstance(random_state, NoiseSource) and random_state.secure)
    spent = spend(
        plan,
        epsilon=epsilon,
        delta=delta,
        accountant=accountant,
        budget=budget,
        label=f"{SOLVER} (screened, K={K}) on {n} records",
        assumptions=(
            *neighbouring_assumptions(NEIGHBOURING),
            "every party holds y; each party clips the entries of its columns to the public "
            "feature_bounds and the targets to the public target_bound, per-record operations",
            "the shared columns, the sketch's rows and the clip of the released sketches' rows "
            "are chosen from earlier releases and public numbers; each release's multiplier is "
            "fixed by the plan, so the releases compose adaptively",
            "the count sketch J is drawn from a public seed independent of the data",
            "radius, parties, max_shared and sketch_dim chosen independently of the data",
        ),
        random_state=None if random_state is None or root is None else root,
        secure=source_secure,
    )
    multipliers = {e.part: float(e.noise_multiplier) for e in spent.plan.events}
    releases = {e.part: Release(e) for e in spent.plan.events} if private else None
    seeds = _party_seeds(root, K, None if spent.charge is None else spent.charge.noise_key)
    owner = np.empty(d, dtype=np.int64)
    setups = []
    for k, features in enumerate(sampling.party_blocks):
        owner[features] = k
        config = ScreenedConfig(
            index=k,
            features=np.asarray(features),
            n_parties=K,
            feature_bounds=bounds[features] if private else None,
            target_bound=target_bound,
            sketch_seed=sketch_seed,
            releases=releases,
        )
        setup = PartySetup(config, blocks[k], y, seed=seeds[k], secure=source_secure)
        setup.party_type = ScreenedParty
        setups.append(setup)
    coordinator = ScreenedCoordinator(
        sampling.party_blocks, n, radii, bounds if private else None, target_bound, multipliers,
        max_shared, sketch_dim,
    )  # fmt: skip
    try:
        engine.start(setups)
        q = coordinator.first()
        for t in range(ROUNDS):
            messages = engine.step(t, q)
            q = coordinator.receive(t, messages)
    except PartyError as err:
        err.report = spent.report
        err.completed = coordinator.completed
        err.args = (
            f"{err.args[0]}. No model is returned. The budget was charged before the protocol "
            f"for the whole plan (epsilon={spent.report.epsilon:.6g}, "
            f"delta={spent.report.delta:.3g}); {coordinator.completed} of {ROUNDS} rounds "
            "completed",
        )
        raise
    finally:
        engine.stop()
    theta = coordinator.theta.copy()
    if callback is not None:
        callback(ROUNDS, theta.copy())
    expected = coordinator.expected_uplink()
    uplink = {
        "per_party": engine.uplink.copy(),
        "total": int(engine.uplink.sum()),
        "float_bytes": FLOAT_BYTES,
        "formula": (
            "d_k + s_k (s_k + 1) / 2 + s_k + m s_k + s_k (s - s_k) float64 per party"
            if K > 1
            else "d + s (s + 1) / 2 + s float64"
        ),
        "expected_per_party": expected,
        "expected_total": int(expected.sum()),
    }
    uplink["matches"] = bool((uplink["per_party"] == expected).all())
    shared = [np.asarray(sampling.party_blocks[k])[s] for k, s in enumerate(coordinator.shared)]
    info = {
        "solver": SOLVER,
        "engine": engine.name,
        "placement": list(engine.placement),
        "variant": SCREENED,
        "radius": radii,
        "feature_bounds": bounds,
        "target_bound": target_bound,
        "parties": owner,
        "shared": shared,
        "max_shared": max_shared,
        "sketch_dim": coordinator.rows if K > 1 else None,
        "sketch": None if coordinator.m is None else COUNT,
        "sketch_seed": sketch_seed,
        "noise_multipliers": multipliers,
        "shares": {e.part: e.count / e.noise_multiplier**2 / template_mu2 for e in events},
        "row_clips": coordinator.info.get("row_clips"),
        "ridge": coordinator.info.get("ridge"),
        "duality_gap": coordinator.info.get("duality_gap"),
        "solver_iterations": coordinator.info.get("solver_iterations"),
        "uplink": uplink,
        "downlink": {"per_party": engine.downlink.copy(), "total": int(engine.downlink.sum())},
        "calibration": {"mode": "accounted"},
        "regime": regime,
        "rule": None,
    }
    history = History.empty(d)
    history.record(float(ROUNDS), theta)
    return _result(problem, theta, history, spent.report, ROUNDS, info)


def _result(problem, theta, history, report, n_iter, info):
    """The fit on the problem given (its scale), or on the blocks given (no intercept)."""
    if problem is not None:
        return FitResult.from_theta(
            problem, theta, history=history, report=report, n_iter=n_iter, info=info
        )
    return FitResult(
        coef=theta,
        intercept=0.0,
        history=history,
        report=report,
        n_iter=n_iter,
        info={"fit_intercept": False, **info},
    )
