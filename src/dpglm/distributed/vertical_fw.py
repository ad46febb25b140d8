"""Private Frank-Wolfe with features split across parties (Lou and Cheung 2018, Algorithm 2).

:func:`vertical_fw` fits the LASSO problem
``min (1/2n) ||A x - y||^2`` over the product of ``K`` L1 balls, one per
party (``||x_{P_k}||_1 <= r_k``; with one party, the L1 ball of
:func:`~dpglm.solvers.dp_fw.dp_fw`): the block-separable domain of the paper's
BCFW-AS analysis, on which the server's step
``x <- (1 - gamma) x + gamma sum_k s_k`` (``s_k`` a vertex of party ``k``'s ball)
stays feasible. Columns are held by the parties, which run the protocol of
:mod:`dpglm.distributed.protocol` on an engine of
:mod:`dpglm.distributed.engines`. Each iteration every party draws ``tau`` of its
``d_k`` coordinates, so the coordinates follow the ``(K, tau)``-distributed
sampling of :class:`~dpglm.solvers.fw_sampling.Distributed`, and the step size is
BCFW-AS's universal ``2 / (p_min t + 2)``, ``p_min = tau / max_k d_k``.

Privacy (replace-one neighbours, ``n`` public; ``y`` is held by every party, as
in the paper). Two kinds of uploads depend on the data, ``K T`` of each:

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
``Delta_j = 2 b_j max_i ||J e_i||_2`` in L2. ``J`` is drawn from a public seed
before the data are read, and the bound is computed from ``J`` alone. The
party uploads ``J a + N(0, (z_g Delta_j)^2 I_m)``: a Gaussian release,
``1 / z_g``-GDP, whichever column the (already released) index picked.

``J`` need not be secret, from the coordinator or anyone: the Gaussian noise
is calibrated to the worst column of ``J``, as the paper calibrates it to
``J``'s largest singular value (a looser bound of the same quantity), so the
guarantee holds for an adversary who knows ``J``. The parties need it to
compute gradients from ``q``; the coordinator never needs it. The uploads of
the ``K`` parties in one iteration are all moved by one record, so all
``2 K T`` releases compose sequentially; the model, ``q`` and every broadcast
are post-processing.

Two calibrations:

``accountant=None`` (default): the paper's
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
any accountant name (e.g. ``"auto"``, ``"pld"``, ``"rdp"``, ``"zcdp"``): tighter
    One plan, calibrated as a whole by that accountant, with the noise of the
    two parts in the ratio that gives the selections a share ``s`` of the
    plan's zCDP ``rho`` (the paper's even split in zCDP terms).

Uplink: ``K T`` int64 indices and ``m K T`` float64 sketch entries, counted by
the engine on the messages themselves (``info["uplink"]``).

``epsilon = inf`` runs the same protocol without noise or clipping (features
included); the sketch stays, so the fit minimises the sketched objective
``(1/2n) ||J A x||^2 - (1/n) y^T A x`` (``sketch_dim=None``: the LASSO itself).

Examples
--------
>>> import numpy as np
>>> from dpglm.distributed.vertical_fw import vertical_fw
>>> from dpglm.problem import Problem
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, (2000, 8))
>>> y = 3 * X[:, 0] - 2 * X[:, 5] + 0.1 * rng.standard_normal(2000)
>>> fit = vertical_fw(
...     Problem(X, y, "squared"),
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
... )
>>> bool(fit.report.epsilon <= 1.0), [m.part for m in fit.report.mechanisms]
(True, ['index selection', 'feature sharing'])
>>> fit.info["uplink"]["total"] == 2 * 30 * 8 + 200 * 2 * 30 * 8  # K T int64 + m K T float64
True

With so few records the noise on the sketches swamps the features (their
norm grows like ``sqrt(n)``, the noise does not): the paper's utility needs
``n`` large against ``sqrt(K T) / epsilon``.
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import replace

import numpy as np

from dpglm.data.layout import as_layout
from dpglm.distributed.engines import get_engine
from dpglm.distributed.protocol import (
    FLOAT_BYTES,
    INT_BYTES,
    Coordinator,
    PartyConfig,
    PartyError,
    PartySetup,
    SketchSpec,
)
from dpglm.penalties import NoPenalty
from dpglm.privacy.events import GaussianEvent, PrivacyPlan
from dpglm.privacy.mechanisms import NoiseSource, keyed_seed_sequence
from dpglm.privacy.releases import Release
from dpglm.privacy.report import neighbouring_assumptions
from dpglm.privacy.spending import calibrate_cached, spend
from dpglm.privacy.targets import Share, check_privacy_target
from dpglm.problem import Problem
from dpglm.solvers.dp_fw import NEIGHBOURING, block_radii, check_fw_problem, fw_plan
from dpglm.solvers.fw_sampling import Distributed
from dpglm.solvers.hyperparameters import (
    HYPERPARAMETER_ASSUMPTION,
    check_finite_clip,
    check_positive,
    check_positive_int,
)
from dpglm.solvers.result import FitResult, History

__all__ = ["vertical_fw"]

SOLVER = "vertical-FW"
NOISES = ("laplace", "gumbel")
SELECTION_PART = "index selection"
SHARING_PART = "feature sharing"


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
        raise ValueError(f"sketch_dim must be a positive int or None (no sketch), got {value!r}")
    return int(value)


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


def _events(n_releases, noise, selection_sensitivity, sketch_sensitivity, share):
    """Template events (accounted mode): selections at multiplier 1, sketches at the
    multiplier that gives the selections a share ``share`` of the zCDP ``rho``."""
    (selection,) = fw_plan(n_releases, noise, selection_sensitivity).events
    selection = replace(
        selection,
        part=SELECTION_PART,
        label="signed index of each party: report-noisy-max of -<g, s> over the vertices "
        "+-r_k e_j of its tau sampled coordinates, g from the public sketch with every "
        "per-sample term clipped to C (sensitivity 2 r C / n, shown for the largest r)",
    )
    rho_sketch = share.matching(selection.rho)
    sketch = GaussianEvent(
        noise_multiplier=1.0 / math.sqrt(2.0 * rho_sketch),
        count=n_releases,
        sensitivity=sketch_sensitivity,
        part=SHARING_PART,
        label="sketched active feature J a_j + N(0, sigma^2 I_m) of each party: entries "
        "clipped to [-b_j, b_j], so one record moves J a_j by at most 2 b_j max_i ||J e_i|| "
        "(shown for the largest b_j)",
    )
    return selection, sketch


def paper_sketch_multiplier(n_releases: int, epsilon: float, delta: float) -> float:
    """The paper's Gaussian noise multiplier for ``n_releases`` sketches at ``(epsilon, delta)``.

    ``sqrt(n_releases) sqrt(2 (log(1/delta) + epsilon)) / epsilon``: the
    releases are then ``rho``-zCDP with ``rho = epsilon**2 / (4 (log(1/delta) + epsilon))``,
    and ``rho + 2 sqrt(rho log(1/delta)) <= epsilon``.

    Examples
    --------
    >>> z = paper_sketch_multiplier(100, 0.5, 1e-6)
    >>> rho = 100 / (2 * z**2)
    >>> bool(rho + 2 * math.sqrt(rho * math.log(1e6)) <= 0.5)
    True
    """
    return math.sqrt(n_releases) * math.sqrt(2.0 * (math.log(1.0 / delta) + epsilon)) / epsilon


def _spend(selection, sketch, *, epsilon, delta, accountant, share, budget, label, assumptions,
           random_state, secure):  # fmt: skip
    """Calibrate the plan (paper's split or one accountant), charge it, report it."""
    n_releases = selection.count
    if accountant is not None or math.isinf(epsilon):
        spent = spend(
            PrivacyPlan((selection, sketch), NEIGHBOURING),
            epsilon=epsilon,
            delta=delta,
            accountant="auto" if accountant is None else accountant,
            budget=budget,
            label=label,
            assumptions=assumptions,
            random_state=random_state,
            secure=secure,
        )
        return spent, {"mode": "accounted" if accountant is not None else "none"}
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
    sketch_dim,
    radius=None,
    parties=None,
    tau: int = 1,
    n_iter: int = 100,
    clip: float = 1.0,
    feature_bounds=None,
    noise: str = "laplace",
    selection_share: float = 0.5,
    accountant: str | None = None,
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
    sketch_dim : int or None
        ``m``, rows of the public sketch ``J``; ``None`` is no sketch (each
        upload is then a noisy full column, ``m = n``).
    radius : float or array_like of shape (K,), optional
        ``r_k``, radius of each party's L1 ball; defaults to the problem's
        L1Ball (one party).
    parties : int or array_like of int of shape (n_features,), optional
        ``K`` (contiguous near-equal column blocks) or each feature's party;
        required with a Problem, implied by a sequence of blocks.
    tau : int, default=1
        Coordinates each party samples per iteration.
    n_iter : int, default=100
        ``T``.
    clip : float, default=1.0
        ``C``, bound on every per-sample gradient term (finite unless
        ``epsilon = inf``).
    feature_bounds : float or array_like of shape (n_features,), optional
        ``b_j``: each party clips the entries of its column ``j`` to
        ``[-b_j, b_j]``. Required for a private fit; public.
    noise : {"laplace", "gumbel"}, default="laplace"
        Selection noise (Laplace: the paper's report-noisy-max; Gumbel: the
        exponential mechanism).
    selection_share : float in (0, 1), default=0.5
        The indices' share of the budget (the paper: one half).
    accountant : str, optional
        ``None``: the paper's calibration (see the module docstring); an
        accountant name: the whole plan calibrated by it.
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
        completed so far; ``coef`` a copy of the iterate, itself private).

    Returns
    -------
    FitResult
        ``info["vertices"]`` holds the ``K T`` uploaded indices as
        ``(feature, sign)`` rows; ``info["uplink"]`` the bytes received from
        each party and in total, with the paper's count
        (``K T`` int64 + ``m K T`` float64) and whether they match.

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
    >>> fit = vertical_fw(
    ...     prob, epsilon=np.inf, delta=0.0, sketch_dim=None, parties=2, radius=1.0, n_iter=200
    ... )
    >>> np.round(fit.coef, 2)  # least squares, inside the product of the two balls
    array([ 1., -1.])
    >>> fit.info["uplink"]["per_party"].tolist()  # 200 x (one int64 + 3 float64)
    [6400, 6400]
    """
    epsilon, delta = check_privacy_target(
        epsilon, delta, positive_delta="the sketched features are released with Gaussian noise"
    )
    private = not math.isinf(epsilon)
    n_iter = check_positive_int("n_iter", n_iter)
    blocks, y, sampling, problem = _split(problem_or_blocks, parties, tau)
    K, d, n = sampling.n_parties, sampling.n_blocks, y.size
    clip = check_positive("clip", clip, allow_inf=True)
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
    share = Share(selection_share, "selection_share")
    sketch_dim = _check_sketch_dim(sketch_dim)
    sketch_seed = _check_sketch_seed(sketch_seed)
    penalty = problem.penalty if problem is not None else NoPenalty()
    radii = block_radii(radius, K, penalty)
    radii = np.broadcast_to(radii, (K,)).copy()
    bounds = _check_feature_bounds(feature_bounds, d, private)
    check_finite_clip(clip, private=private)
    if accountant is not None and not isinstance(accountant, str):
        raise TypeError(f"accountant must be a name or None, got {accountant!r}")
    engine = get_engine(engine)
    root, sketch_seed = _seeds(random_state, secure, sketch_seed)
    sketch = SketchSpec(n_samples=n, dim=sketch_dim, seed=sketch_seed)
    m = sketch.m

    # sensitivities: from the public clip, radii, bounds and J, never from the data
    selection_sensitivity = sketch_sensitivity = None
    column_norm = None
    if private:
        selection_sensitivity = 2.0 * float(radii.max()) * clip / n
        column_norm = sketch.column_norm_bound()
        sketch_sensitivity = 2.0 * float(bounds.max()) * column_norm
    selection, shared = _events(
        K * n_iter, noise, selection_sensitivity, sketch_sensitivity, share
    )
    source_secure = secure or (isinstance(random_state, NoiseSource) and random_state.secure)
    spent, calibration = _spend(
        selection,
        shared,
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
    # the budget is charged: only now do the parties read their data, with streams keyed to it
    seeds = _party_seeds(root, K, None if spent.charge is None else spent.charge.noise_key)
    selection_release, sketch_release = spent.release(0), spent.release(1)
    # one record moves party k's vertex scores by at most 2 r_k C / n, and its sketched
    # column J a_j by at most 2 b_j max_i ||J e_i||
    selection_scale = selection_release.scale(2.0, radii, clip, over=n)
    if private:
        sketch_std = sketch_release.scale(2.0, bounds, column_norm)
    else:
        sketch_std, clip = None, math.inf
    # each party binds the releases to its own stream
    selection_noise, sketch_noise = (Release(e) for e in spent.plan.events)
    steps = 2.0 / (sampling.p_min * np.arange(n_iter) + 2.0)
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
        )
        setups.append(PartySetup(config, blocks[k], y, seed=seeds[k], secure=source_secure))

    coordinator = Coordinator(owner, radii, steps, m)
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
    uplink = {
        "per_party": engine.uplink.copy(),
        "total": int(engine.uplink.sum()),
        "int_bytes": INT_BYTES,
        "float_bytes": FLOAT_BYTES,
        "formula": "K T int64 + m K T float64",
        "expected_per_party": n_iter * per_message,
        "expected_total": K * n_iter * INT_BYTES + m * K * n_iter * FLOAT_BYTES,
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
        "radius": radii,
        "clip": clip,
        "feature_bounds": bounds,
        "parties": owner,
        "tau": sampling.tau,
        "p_min": sampling.p_min,
        "step_sizes": steps,
        "sketch_dim": m,
        "sketch_seed": sketch_seed,
        "selection_sensitivity": selection_sensitivity,
        "sketch_sensitivity": sketch_sensitivity,
        "selection_noise_scale": selection_scale,
        "sketch_noise_std": sketch_std,
        "vertices": vertices,
        "uplink": uplink,
        "downlink": {"per_party": engine.downlink.copy(), "total": int(engine.downlink.sum())},
        "calibration": calibration,
    }
    theta = coordinator.theta.copy()
    if problem is not None:
        return FitResult.from_theta(
            problem, theta, history=history, report=spent.report, n_iter=n_iter, info=info
        )
    return FitResult(
        coef=theta,
        intercept=0.0,
        history=history,
        report=spent.report,
        n_iter=n_iter,
        info={"fit_intercept": False, **info},
    )
