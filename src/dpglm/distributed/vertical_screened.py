"""The screened variant of the feature-split private Frank-Wolfe: shared statistics, then FW.

The protocol of Algorithm 2 (:mod:`dpglm.distributed.protocol`) lets each
party read the other parties' margins through one noisy sketch per iteration,
and its Frank-Wolfe steps turn the noise on every gradient into a linear
excess loss: a vertex of radius ``r`` is chosen on noise alone once the
gradient is within the noise of zero. This variant releases, once, what the
LASSO needs on a small shared support, and leaves the optimisation to the
coordinator, where it is post-processing. Every statistic a party releases is
of its columns over their public bounds, ``a_j / b_j`` (entries in
``[-1, 1]``), so one record's term is bounded alike whatever the columns'
ranges; the coordinator scales the statistics back:

round 0, screening
    Party ``k`` releases the marginal scores of its columns over their bounds,
    ``(1/n) (a_j / b_j)^T clip(y, B)``, with Gaussian noise. The
    coordinator ranks each party's columns by them and shares those whose
    score stands out of the screen's noise (:func:`screen_noise`) and above
    the noise their shared statistics would carry (:func:`join_threshold`),
    at most ``max_shared`` a party.
round 1, statistics
    Party ``k`` releases its own block's statistics on its ``s_k`` shared
    columns ``S_k`` (the upper triangle of ``(1/n) A_S^T A_S`` and
    ``(1/n) A_S^T clip(y, B)``) and, when there are other parties, the count
    sketch of those columns, ``Z_k = J A_S + N(0, sigma_2^2 I)`` (``m x s_k``
    floats; ``m`` from :func:`sketch_rows` unless given).
round 2, cross statistics
    The coordinator broadcasts every ``Z_l`` with its rows clipped to the
    90th percentile of their norms (a function of the releases alone); party
    ``k`` releases ``(1/n) A_{S_k}^T J^T Z~_l + N(0, sigma_3^2 I)`` for every
    other party ``l``: its exact columns against the other party's noisy ones.

The coordinator averages the two estimates of each cross block. In a
private fit it then divides the quadratic (of the columns over their
bounds) by their squared spread ``1/3``, adds the ridge :func:`ridge` (the noise's
predicted spectral norm squared over the mean normalised diagonal), floors
the eigenvalues at a thousandth of the largest (at least of 1), and scales
back to the columns themselves; it minimises the quadratic over the product
of the parties' L1 balls to a relative Frank-Wolfe duality gap of ``1e-8`` (:func:`solve_balls`).
Nothing there reads data. Without noise (``epsilon = inf``) nothing is
clipped, regularised or floored: the fit is the LASSO on each party's
``max_shared`` columns of largest marginal score (all of them when it holds
no more), exactly with ``sketch_dim=None``.

The budget's split (:func:`screened_shares`) minimises the noise the
releases leave on the shared quadratic, from public numbers; the radius acts
as a prior on the coefficients' L1 norm (every threshold grows with it), so
a radius far above it shares fewer columns.

Why it learns where the paper's protocol does not: a party still reads the
other parties' columns only through per-record noise (the ``1 / sqrt(n)``
rate of :mod:`~dpglm.distributed.vertical_fw` stays), but (1) the noise is paid
on ``s_k`` screened columns instead of ``K T`` vertices, (2) the noise enters
the solution through a solve of the shared quadratic, an excess quadratic in
the noise instead of Frank-Wolfe's linear one, and (3) a party's own block is
released as an aggregate, with noise of order ``1 / n``. Measured on the
scaling run's problem (``n = 10^6``, ``d = 200``, ``K = 2``, ``epsilon = 4``):
relative suboptimality 0.067 where Algorithm 2 reaches 2.1 and the centralized
private Frank-Wolfe 0.185 (``benchmarks/bench_vertical_scaling.py``).

What it assumes: marginal screening finds the columns that matter, as on
designs whose columns are not strongly correlated (a column whose effect
shows only jointly with others may not be shared); columns left out get
coefficient 0.

Privacy (replace-one neighbours, ``n`` public, every party holds ``y``).
Every party clips each entry of column ``j`` to ``[-b_j, b_j]``, divides it
by ``b_j`` and clips the targets to ``[-B, B]``: per-record operations, after
which a record's row ``a`` over ``s`` columns has ``||a|| <= sqrt(s)``.
Replacing record ``i`` moves

* the scores by at most ``2 B sqrt(d_k) / n`` (L2);
* the own statistics, a sum of per-record terms ``(upper(a a^T), a y)`` of
  norm at most ``sqrt(s) sqrt(s + B^2)``, by twice that over ``n``;
* the sketch ``Z_k`` by at most ``2 sqrt(s_k)`` (one entry of each column
  moves, through one column of ``J`` of norm 1);
* the cross statistics, a sum of per-record terms ``a_S (J^T Z~_l)_i^T`` whose
  second factor is a row of the released ``Z_l`` clipped to ``c_l`` (by the
  party itself, whatever the coordinator sent), by at most
  ``2 sqrt(s_k) c_l / n``.

Each release is Gaussian with its multiplier fixed by the plan
(:func:`screened_events`) before any data is read; the supports, ``m``, the
clips and the sensitivities that follow from them are functions of earlier
releases and public numbers, so each release is ``1 / z``-GDP whatever they
are, and the ``3 K + K (K - 1)`` releases (two with one party, which shares
no sketch) compose adaptively. The plan is
calibrated as a whole by the accountant. The coordinator's solve and the
model are post-processing.

Examples
--------
>>> events = screened_events(2)
>>> [e.part for e in events], [e.count for e in events]
(['column screening', 'own statistics', 'feature sharing', 'cross statistics'], [2, 2, 2, 2])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from dpglm.clipping import clip_features
from dpglm.data.layout import as_layout
from dpglm.distributed.protocol import (
    COUNT,
    FLOAT_BYTES,
    ProtocolError,
    SketchSpec,
    out_of_order,
)
from dpglm.penalties import L1Ball
from dpglm.privacy.events import GaussianEvent
from dpglm.privacy.mechanisms import make_noise_source

__all__ = [
    "CROSS_PART",
    "OWN_PART",
    "SCREENED",
    "SCREEN_PART",
    "ScreenedConfig",
    "ScreenedCoordinator",
    "ScreenedParty",
    "join_threshold",
    "least_coefficient",
    "ridge",
    "screen_noise",
    "screened_events",
    "screened_regime",
    "screened_shares",
    "sketch_rows",
    "solve_balls",
]

SCREENED = "screened"
SCREEN_PART = "column screening"
OWN_PART = "own statistics"
SHARING_PART = "feature sharing"
CROSS_PART = "cross statistics"
PARTS = (SCREEN_PART, OWN_PART, SHARING_PART, CROSS_PART)
#: shares of the plan's GDP mu^2 where no split is derived (a non-private fit, whose
#: multipliers are all 0 whatever the split)
FALLBACK_SHARES = (0.05, 0.05, 0.8, 0.1)
#: the screen's share of mu^2 when one party fits alone (measured: tying it to the own
#: statistics' noise gave it 84 to 98 % and lost up to 0.2 of R^2 at d = 10)
ALONE_SCREEN_SHARE = 0.3
#: shared columns per party the split's noise model assumes (at most the party's columns)
TYPICAL_SHARED = 8
#: rows of a released sketch are clipped to this quantile of their norms
ROW_QUANTILE = 0.9
#: the clip's ratio to a typical row's norm, in the split's noise model (the 90th percentile
#: of the rows' norms over their rms, for a few shared columns)
ROW_CLIP_FACTOR = 1.2
#: the sketch's error on a cross entry is aimed at this fraction of the noise's
SKETCH_ERROR_RATIO = 0.25
#: columns a party shares at most, by default
MAX_SHARED = 64
#: the least shareable coefficient, over the radius, below which a fit is expected to beat
#: w = 0 (measured; see screened_regime)
REGIME_LEVEL = 0.2
#: the ridge in units of the noise's predicted spectral norm squared over the signal
RIDGE = 1.0
#: rms of a feature bounded by ``b``, in units of ``b`` (a uniform on [-b, b])
SPREAD = 1.0 / math.sqrt(3.0)
#: relative floor of the eigenvalues of the shared quadratic, on the bounds' scale (private)
EIGEN_FLOOR = 1e-3
#: the coordinator's solve: iterations at most, and the relative duality gap it stops at
SOLVER_ITERATIONS = 20_000
SOLVER_GAP = 1e-8
#: rows of the count sketch at most (0.5 MB a shared column)
MAX_ROWS = 2**16
ROUNDS = 3


def screened_events(n_parties: int, shares=None) -> tuple:
    """Template events of the screened plan, multipliers in the ratio of ``shares``.

    Event ``i`` has ``count_i`` Gaussian releases at multiplier ``z_i``; their
    GDP composes as ``mu^2 = sum_i count_i / z_i^2``, so ``z_i^2 ~ count_i / share_i``
    gives the parts the shares of ``mu^2`` (:func:`screened_shares`). The
    calibration scales every multiplier by one factor; the sensitivities are
    each party's own (normalised to 1 here). One party shares with nobody: its
    plan is the screening and its own statistics only (two shares).

    Examples
    --------
    >>> [round(e.noise_multiplier, 3) for e in screened_events(2)]
    [6.325, 6.325, 1.581, 4.472]
    >>> [e.part for e in screened_events(1, (0.3, 0.7))]
    ['column screening', 'own statistics']
    """
    K = int(n_parties)
    counts = (K, K) if K == 1 else (K, K, K, K * (K - 1))
    if shares is None:
        shares = _renormalised(FALLBACK_SHARES[: len(counts)])
    if len(shares) != len(counts):
        raise ValueError(
            f"{K} parties plan {len(counts)} parts ({', '.join(PARTS[: len(counts)])}), "
            f"got {len(shares)} shares"
        )
    return tuple(
        GaussianEvent(
            noise_multiplier=math.sqrt(count / share),
            count=count,
            sensitivity=1.0,
            part=part,
            label=f"{part} (Gaussian)",
        )
        for count, share, part in zip(counts, shares, PARTS, strict=False)
    )


def _renormalised(shares):
    total = float(sum(shares))
    return tuple(float(s) / total for s in shares)


def _screen_unit(n, columns, target_bound):
    """The level a score per unit bound must pass to stand out of the screen's noise, per
    unit multiplier."""
    return math.sqrt(2.0 * math.log(2.0 * columns)) * 2.0 * target_bound * math.sqrt(columns) / n


def _own_unit(n, shared, target_bound):
    """Std of the noise on an own statistic, per unit multiplier (``s`` columns over their
    bounds)."""
    return 2.0 * math.sqrt(shared) * math.sqrt(shared + target_bound * target_bound) / n


def _cross_unit(n, shared):
    """Std of the sketches' noise on a cross entry, per unit sketch multiplier.

    Party ``k``'s exact column (rms ``SPREAD`` over its bound) read against
    the other party's sketch noise of std ``z 2 sqrt(s)``, over ``n``,
    averaged over the two directions.
    """
    return SPREAD * 2.0 * math.sqrt(shared) / math.sqrt(2.0 * n)


def screened_shares(n, n_parties, columns, radius, target_bound, mu, shared=TYPICAL_SHARED):
    """The split of the plan's ``mu^2`` that leaves the least noise on the shared quadratic.

    A model of the noise, per entry of the quadratic of the columns over their
    bounds (``s = min(shared, columns)`` columns per party; a party's numbers:
    the most columns, the largest radius in those units):

    * the sketches' noise on a cross entry: ``e_2 = z_2`` :func:`_cross_unit`
      (the error at the ``1 / sqrt(n)`` rate);
    * the cross statistics' own noise: ``e_3 = z_3 2 sqrt(s) c / (n sqrt(2))``
      with the row clip ``c`` about ``ROW_CLIP_FACTOR sqrt(s)`` times the
      sketch's noise ``z_2 2 sqrt(s)``: a product of the two multipliers;
    * the own statistics' noise: ``e_1 = z_1`` :func:`_own_unit`;
    * the screening: its noise must not decide which column is shared, so its
      multiplier is tied to the sketches' so that the level a score per unit
      bound needs to stand out of it (:func:`screen_noise`) equals the level a
      column needs to be shared (:func:`join_threshold`).

    The shares minimise the model's ``e_1^2 + e_2^2 + e_3^2`` at
    ``mu^2 = sum_i count_i / z_i^2`` (exact for Gaussian releases), by
    Nelder-Mead over the simplex. One party shares no sketch: the screen then
    takes the fixed share ``ALONE_SCREEN_SHARE`` (measured) and its own
    statistics the rest.

    Examples
    --------
    >>> shares = screened_shares(10**6, 2, 100, 12.0, 24.0, 0.55)
    >>> [round(s, 2) for s in shares], round(sum(shares), 12)
    ([0.01, 0.05, 0.86, 0.08], 1.0)
    """
    K = int(n_parties)
    s = min(int(shared), int(columns))
    if K == 1:
        return (ALONE_SCREEN_SHARE, 1.0 - ALONE_SCREEN_SHARE)
    own = _own_unit(n, s, target_bound)
    counts = np.array([K, K, K * (K - 1)], dtype=float)
    # z_0 = tie z_2: the screen's level equals the join threshold
    tie = join_threshold(n, radius, 1.0) / _screen_unit(n, columns, target_bound)
    cross = _cross_unit(n, s)
    product = 2.0 * math.sqrt(s) * ROW_CLIP_FACTOR * math.sqrt(s) * 2.0 * math.sqrt(s)
    product /= n * math.sqrt(2.0)

    def multipliers(logits):
        weights = np.exp(logits - logits.max())
        weights /= weights.sum()
        z = np.sqrt(counts / (weights * mu * mu))  # own, sketch, cross, before the screen
        # the screen's share w_0 with z_0 = tie z_2 once the rest is scaled to 1 - w_0:
        # w_0 = a (1 - w_0), a = K / (tie z_2 mu)^2 at the unscaled z_2
        a = K / (tie * z[1] * mu) ** 2
        screen_share = a / (1.0 + a)
        return z / math.sqrt(1.0 - screen_share), weights * (1.0 - screen_share)

    def variance(logits):
        z, _ = multipliers(logits)
        return (z[0] * own) ** 2 + (z[1] * cross) ** 2 + (z[2] * z[1] * product) ** 2

    start = np.zeros(3)
    for _ in range(3):  # restarted from its own best: Nelder-Mead's simplex may collapse early
        start = minimize(variance, start, method="Nelder-Mead",
                         options={"xatol": 1e-10, "fatol": 0.0, "maxiter": 20_000}).x  # fmt: skip
    _, weights = multipliers(start)
    return _renormalised((1.0 - float(weights.sum()), *(float(w) for w in weights)))


def join_threshold(n, radius, sketch_multiplier):
    """The score (over its bound) a column needs to join a party's shared set.

    The sketch of ``s`` shared columns over their bounds carries noise of std
    ``sigma_2 = z_2 2 sqrt(s)``; another party's statistic of one of them
    reads it with the spread ``SPREAD`` over ``sqrt(n)``, and its gradient
    coordinate that times the norm of the other party's coefficients,
    ``r / sqrt(s)`` for ``s`` equal ones in a ball of radius ``r`` (in the
    same units). The ``sqrt(s)`` cancel: ``SPREAD z_2 2 r / sqrt(n)``,
    whatever the number shared. A column whose marginal score is below that
    adds more noise than signal.

    Examples
    --------
    >>> round(join_threshold(10**6, 12.0, 2.75), 4)
    0.0381
    """
    return SPREAD * sketch_multiplier * 2.0 * radius / math.sqrt(n)


def screen_noise(n, n_columns, target_bound, screen_multiplier):
    """The score per unit bound a column needs to stand out of the screen's own noise.

    The scores per unit bound ``v_j / b_j`` carry Gaussian noise of std
    ``sigma_0 = z_0 2 B sqrt(d_k) / n``; the largest of ``d_k`` pure-noise
    scores exceeds ``sqrt(2 log(2 d_k)) sigma_0`` in at most about one fit in
    ``2 sqrt(pi log(2 d_k))``.

    Examples
    --------
    >>> round(screen_noise(10**5, 50, 36.8, 40.0), 4)
    0.6318
    """
    return screen_multiplier * _screen_unit(n, n_columns, target_bound)


def sketch_rows(n, sizes, sketch_multiplier):
    """``m``: the count sketch whose error on a cross entry is a quarter of the noise's.

    ``sizes``: each party's number of shared columns. On columns over their
    bounds, the count sketch leaves an error of std about ``SPREAD^2 / sqrt(m)``
    on a cross entry; the noise, ``SPREAD z_2 2 sqrt(s_l) / sqrt(n)``. ``m`` is
    the least that puts the first at ``SKETCH_ERROR_RATIO`` of the second for
    every party sharing (the fewest shared columns, the least noise), at most
    ``MAX_ROWS``; ``None`` (no sketch, ``J = I``) when that is ``n`` or more,
    when nothing is shared, or without noise.

    Examples
    --------
    >>> sketch_rows(10**6, [12, 12], 2.75)
    14693
    >>> sketch_rows(1000, [12], 0.1), sketch_rows(10**9, [2], 0.01)
    (None, 65536)
    """
    fewest = min((s for s in sizes if s), default=0)
    if sketch_multiplier == 0 or fewest == 0:
        return None
    need = SPREAD**2 / (SKETCH_ERROR_RATIO * sketch_multiplier * 2.0) ** 2 / fewest
    m = min(math.ceil(n * need), MAX_ROWS)
    return None if m >= n else int(m)


def ridge(n, sizes, sketch_multiplier, signal):
    """The ridge on the normalised quadratic: its noise's spectral norm squared over the signal.

    ``sizes``: each party's number of shared columns. On the quadratic of the
    columns over their bounds, normalised by the spread ``SPREAD`` (unit
    diagonal for columns that fill their bounds), a cross entry with party
    ``l`` carries noise of std ``z_2 2 sqrt(s_l) / (SPREAD sqrt(2 n))`` (two
    estimates averaged), so a spectral norm of about ``2 sqrt(s)`` times that
    over the ``s`` shared columns. Shrinking by its square over ``signal``,
    the mean normalised diagonal, keeps the solve from following the noise's
    directions when the noise is comparable to the signal, and costs little
    when it is not. Zero without noise or with fewer than two parties sharing.

    Examples
    --------
    >>> round(ridge(10**6, [12, 12], 2.75, 1.0), 5)
    0.05227
    """
    total = int(sum(sizes))
    if sketch_multiplier == 0 or sum(1 for s in sizes if s) < 2:
        return 0.0
    entry = sketch_multiplier * 2.0 * math.sqrt(max(sizes)) / (SPREAD * math.sqrt(2.0 * n))
    return RIDGE * (2.0 * math.sqrt(total) * entry) ** 2 / max(signal, EIGEN_FLOOR)


def least_coefficient(n, n_columns, n_parties, radius, bound, target_bound, multipliers):
    """The least coefficient a party's first column can have and be shared, over the radius.

    For a column of bound ``b`` (the party's median bound), its score over the
    bound ``|v_j| / b`` is about ``SPREAD^2 b |w_j|``; it is shared when that
    passes :func:`screen_noise` and, with other parties, the level of
    :func:`join_threshold`, with the coefficients' L1 norm about ``r b`` in
    the units of the columns over their bounds (as the coordinator sets it).
    """
    score = screen_noise(n, n_columns, target_bound, multipliers[0])
    if n_parties > 1:
        score = max(score, join_threshold(n, radius * bound, multipliers[2]))
    return score / (SPREAD**2 * bound) / radius


def screened_regime(n, columns, radii, bounds, target_bound, multipliers):
    """Whether the screen can share the columns a fit needs, from public numbers.

    ``least_coefficient_over_radius``: per party, the least coefficient it can
    share (:func:`least_coefficient`) over its radius. The fit beats ``w = 0``
    when the coefficients that carry the signal pass the screen; measured on
    the benchmark's problem (``benchmarks/bench_vertical_rule.py``), it does
    from a least coefficient of about ``REGIME_LEVEL`` times the radius. The
    level assumes a radius close to the coefficients' L1 norm: a loose radius
    raises every threshold. ``min_n`` is the least ``n`` at which every party
    reaches that level at the same multipliers (both thresholds fall with ``n``).

    Examples
    --------
    >>> regime = screened_regime(
    ...     10**4, [50, 50], [18.4, 18.4], [1.0, 1.0], 36.8, (40.0, 40.0, 10.0, 28.0)
    ... )
    >>> regime["expected_to_learn"], regime["min_n"] > 10**4
    (False, True)
    """
    K = len(columns)

    def worst(size):
        return max(
            least_coefficient(size, d_k, K, r, b, target_bound, multipliers)
            for d_k, r, b in zip(columns, radii, bounds, strict=True)
        )

    least = [
        float(least_coefficient(n, d_k, K, r, b, target_bound, multipliers))
        for d_k, r, b in zip(columns, radii, bounds, strict=True)
    ]
    low, high = 1, max(int(n), 1)
    while worst(high) > REGIME_LEVEL:
        high *= 2
    while low < high:
        middle = (low + high) // 2
        if worst(middle) > REGIME_LEVEL:
            low = middle + 1
        else:
            high = middle
    return {
        "least_coefficient_over_radius": least,
        "level": REGIME_LEVEL,
        "expected_to_learn": bool(max(least) <= REGIME_LEVEL),
        "min_n": int(low),
    }


def _duality_gap(grad, x, radii, groups):
    """Frank-Wolfe's gap ``max_s <grad, x - s>`` over the product of the balls."""
    gap = float(grad @ x)
    for (a, b), r in zip(groups, radii, strict=True):
        if b > a:
            gap += r * float(np.abs(grad[a:b]).max())
    return gap


def solve_balls(G, c, radii, groups, *, iterations=SOLVER_ITERATIONS, gap=SOLVER_GAP):
    """Minimise ``x^T G x / 2 - c^T x`` over the product of L1 balls (``G`` positive semidefinite).

    The unconstrained minimiser when it lies in every ball; otherwise
    accelerated projected gradient (step ``1 / lambda_max(G)``) with
    O'Donoghue and Candes' gradient restart, each block projected on its
    ball; stops when Frank-Wolfe's duality gap, which bounds the excess
    objective, is below ``gap`` times ``|c|_max sum(radii)`` (the objective's
    scale on the balls), or when the iterate no longer moves. Returns
    ``(x, duality_gap, iterations)``, the gap at the returned ``x``.

    Examples
    --------
    >>> x, gap, _ = solve_balls(np.eye(2), np.array([0.5, -3.0]), [1.0, 1.0], [(0, 1), (1, 2)])
    >>> np.round(x, 6).tolist(), bool(gap < 1e-9)
    ([0.5, -1.0], True)
    """
    balls = [L1Ball(r) for r in radii]

    def project(v):
        out = np.empty_like(v)
        for (a, b), ball in zip(groups, balls, strict=True):
            out[a:b] = ball.prox(v[a:b]) if b > a else v[a:b]
        return out

    x = np.zeros(c.size)
    scale = float(np.abs(c).max(initial=0.0)) * float(sum(radii))
    if scale == 0.0:
        return x, 0.0, 0
    values = np.linalg.eigvalsh(G)
    top = float(values.max())
    if values.min() > 1e-10 * top:
        # the unconstrained minimiser, when every ball holds it and its gap certifies it,
        # is the answer (a G singular up to rounding goes to the iterations instead)
        with np.errstate(all="ignore"):
            try:
                inside = np.linalg.solve(G, c)
            except np.linalg.LinAlgError:
                inside = None
        if (
            inside is not None
            and np.isfinite(inside).all()
            and all(
                np.abs(inside[a:b]).sum() <= r for (a, b), r in zip(groups, radii, strict=True)
            )
        ):
            inside_gap = _duality_gap(G @ inside - c, inside, radii, groups)
            if inside_gap <= gap * scale:
                return inside, max(inside_gap, 0.0), 0
    step = 1.0 / top if top > 0 else 1.0 / scale
    look, momentum = x, 1.0
    duality = _duality_gap(G @ x - c, x, radii, groups)
    t = 0
    for t in range(1, iterations + 1):  # noqa: B007 - t is returned
        if duality <= gap * scale:
            break
        candidate = project(look - step * (G @ look - c))
        moved = candidate - x
        if float((look - candidate) @ moved) > 0.0:  # gradient restart: the momentum overshot
            following, look = 1.0, candidate
        else:
            following = (1.0 + math.sqrt(1.0 + 4.0 * momentum**2)) / 2.0
            look = candidate + (momentum - 1.0) / following * moved
        x, momentum = candidate, following
        duality = _duality_gap(G @ x - c, x, radii, groups)
        if not np.any(moved):
            break
    return x, duality, t


@dataclass(frozen=True)
class ScreenedConfig:
    """What party ``index`` is told before the protocol: public numbers and its releases.

    Attributes
    ----------
    index : int
    features : ndarray of int
        Global indices of its columns.
    n_parties : int
    feature_bounds : ndarray or None
        ``b_j`` per column (``None``: not private, nothing clipped).
    target_bound : float
        ``B`` (``inf``: not clipped).
    sketch_seed : int
        The public seed of the count sketch.
    releases : dict of str to Release, or None
        The plan's releases by part name, unbound (``None``: no noise).
    """

    index: int
    features: np.ndarray
    n_parties: int
    feature_bounds: np.ndarray | None
    target_bound: float
    sketch_seed: int
    releases: dict | None = None


def _floats(values) -> bytes:
    return np.ascontiguousarray(values, dtype=np.float64).tobytes()


def _upper(matrix):
    return matrix[np.triu_indices(matrix.shape[0])]


class ScreenedParty:
    """One party of the screened protocol: its columns, ``y`` and its noise stream.

    :meth:`step` is the only call an engine makes; round ``t`` reads the
    coordinator's broadcast and returns the party's one message, float64 bytes.

    Parameters
    ----------
    config : ScreenedConfig
    X : ndarray or sparse matrix of shape (n, d_k)
        Finite entries.
    y : ndarray of shape (n,)
        Finite targets.
    seed : SeedSequence, int or None
    secure : bool, default=False
    """

    def __init__(self, config: ScreenedConfig, X, y, *, seed=None, secure=False):
        self.config = config
        X = as_layout(X, "columns")
        values = X.data if hasattr(X, "data") and not isinstance(X, np.ndarray) else X
        if not (np.isfinite(values).all() and np.isfinite(np.asarray(y, dtype=float)).all()):
            raise ValueError(
                f"party {config.index}: its columns and targets must be finite (a NaN or an "
                "inf never passes a clip)"
            )
        bounds = config.feature_bounds
        if bounds is not None:
            X = clip_features(X, np.asarray(bounds, dtype=float))
        self._X = X
        self._y = np.ascontiguousarray(y, dtype=float)
        if math.isfinite(config.target_bound):
            self._y = np.clip(self._y, -config.target_bound, config.target_bound)
        self._n = self._y.shape[0]
        # every statistic is of the columns over their bounds: entries in [-1, 1], so one
        # record's term has the same bound whatever the columns' ranges (1: not private)
        self._scale = np.ones(len(config.features)) if bounds is None else np.asarray(bounds)
        source = make_noise_source(seed, secure=secure)
        self._releases = (
            None
            if config.releases is None
            else {part: release.bind(source) for part, release in config.releases.items()}
        )
        self._shared = None
        self._sketch = None
        self._iteration = 0

    @property
    def iteration(self) -> int:
        """Rounds this party has completed."""
        return self._iteration

    @property
    def sharing(self) -> bool:
        """Whether there are other parties to share a sketch with."""
        return self.config.n_parties > 1

    def _columns(self, index):
        """The columns ``index`` over their bounds, dense."""
        A = self._X[:, index]
        A = A.toarray() if hasattr(A, "toarray") else np.array(A, dtype=float)
        return A / self._scale[index]

    def _release(self, part, values, *factors, over=None):
        if self._releases is None:
            return np.asarray(values, dtype=float)
        release = self._releases[part]
        return values + release.scale(*factors, over=over) * release.unit(np.shape(values))

    def step(self, iteration: int, payload) -> bytes:
        """Run round ``iteration`` on the coordinator's broadcast; the party's message."""
        if iteration != self._iteration:
            raise out_of_order(self.config.index, iteration, self._iteration, "round")
        payload = np.asarray(payload, dtype=float)
        if iteration == 0:
            message = self._screen()
        elif iteration == 1:
            message = self._statistics(payload)
        elif iteration == 2:
            message = self._cross(payload)
        else:
            raise ProtocolError(
                f"the screened protocol has {ROUNDS} rounds, asked for round {iteration}",
                party=self.config.index,
                iteration=iteration,
                completed=self._iteration,
            )
        self._iteration += 1
        return _floats(message)

    def _screen(self):
        scores = np.asarray(self._X.T @ self._y, dtype=float).ravel() / self._n / self._scale
        # per unit bound: one record moves v_j / b_j by at most 2 B / n, the vector by
        # 2 B sqrt(d_k) / n in L2, whatever the bounds
        columns = math.sqrt(scores.size)
        return self._release(
            SCREEN_PART, scores, 2.0, self.config.target_bound, columns, over=self._n
        )

    def _statistics(self, payload):
        # broadcast: [m (0: no sketch), one flag per global feature]
        m = int(payload[0])
        flags = payload[1:][self.config.features]
        self._shared = np.flatnonzero(flags > 0.5)
        s = self._shared.size
        if s == 0:
            return np.zeros(0)
        A = self._columns(self._shared)
        gram = A.T @ A / self._n
        inner = A.T @ self._y / self._n
        b = math.sqrt(s)  # a record's row over the bounds has norm at most sqrt(s)
        # per-record term (upper(a a^T), a y): norm at most ||a|| sqrt(||a||^2 + B^2)
        own = self._release(
            OWN_PART,
            np.concatenate([_upper(gram), inner]),
            2.0,
            b * math.sqrt(b * b + self.config.target_bound**2),
            over=self._n,
        )
        if not self.sharing:
            return own
        self._sketch = None if m == 0 else SketchSpec(self._n, m, self.config.sketch_seed, COUNT)
        sketched = self._sketch_rows(A)
        # one record moves one row of J A_S by at most 2 sqrt(s) (J's columns: norm 1)
        shared = self._release(SHARING_PART, sketched, 2.0, b)
        return np.concatenate([own, shared.ravel()])

    def _sketch_rows(self, A):
        if self._sketch is None:
            return A.copy()
        rows, signs = self._sketch.hashes()
        out = np.zeros((self._sketch.m, A.shape[1]))
        np.add.at(out, rows, signs[:, None] * A)
        return out

    def _unsketch(self, Z):
        """``J^T Z``: each record reads its row, signed (``Z`` itself without a sketch)."""
        if self._sketch is None:
            return Z
        rows, signs = self._sketch.hashes()
        return signs[:, None] * Z[rows]

    def _cross(self, payload):
        # broadcast: [clip_l for each party, the sizes s_l, then each party's clipped Z_l]
        K = self.config.n_parties
        s = self._shared.size
        if s == 0 or not self.sharing:
            return np.zeros(0)
        clips = payload[:K]
        sizes = payload[K : 2 * K].astype(int)
        blocks = payload[2 * K :]
        A = self._columns(self._shared)
        b = math.sqrt(s)
        rows = self._n if self._sketch is None else self._sketch.m
        out, start = [], 0
        for other in range(K):
            size = int(sizes[other]) * rows
            Z = blocks[start : start + size].reshape(rows, int(sizes[other]))
            start += size
            if other == self.config.index or sizes[other] == 0:
                continue
            if self._releases is not None:
                # the sensitivity below holds for rows within the clip, whatever was sent
                norms = np.sqrt(np.einsum("ij,ij->i", Z, Z))
                Z = Z * np.minimum(1.0, clips[other] / np.maximum(norms, 1e-300))[:, None]
            product = A.T @ self._unsketch(Z) / self._n
            # a record's term a_S (J^T Z~)_i^T: norm at most sqrt(s) clip_l
            out.append(
                self._release(CROSS_PART, product, 2.0, b, float(clips[other]), over=self._n)
            )
        return np.concatenate([o.ravel() for o in out]) if out else np.zeros(0)

    def __repr__(self) -> str:
        return (
            f"ScreenedParty(index={self.config.index}, "
            f"features={len(self.config.features)}, round={self._iteration})"
        )


class ScreenedCoordinator:
    """The coordinator of the screened protocol: supports, broadcasts and the final solve.

    Everything it computes is a function of the parties' releases and of
    public numbers.

    Parameters
    ----------
    blocks : list of ndarray of int
        Each party's global feature indices.
    n : int
    radii : sequence of float
        Each party's radius.
    column_bounds : ndarray or None
        ``b_j`` of every feature (``None``: not private; every scale is then 1).
    target_bound : float
        ``B``.
    multipliers : dict of str to float
        The calibrated multiplier of each of the plan's parts (zeros: not private).
    max_shared : int
    sketch_dim : int, None or "auto"
    """

    def __init__(self, blocks, n, radii, column_bounds, target_bound, multipliers, max_shared,
                 sketch_dim):  # fmt: skip
        self.blocks = [np.asarray(b, dtype=np.int64) for b in blocks]
        self.n = int(n)
        self.radii = [float(r) for r in radii]
        d = sum(b.size for b in self.blocks)
        self.private = column_bounds is not None
        self.column_bounds = np.ones(d) if column_bounds is None else np.asarray(column_bounds)
        self.target_bound = float(target_bound)
        self.multipliers = {part: float(multipliers.get(part, 0.0)) for part in PARTS}
        self.max_shared = int(max_shared)
        self.sketch_dim = sketch_dim
        self.shared = None
        self.m = None
        self.own = None
        self.sketches = None
        self.theta = None
        self.completed = 0
        self.info: dict = {}

    @property
    def n_parties(self) -> int:
        return len(self.blocks)

    @property
    def sharing(self) -> bool:
        return self.n_parties > 1

    def _read(self, k, message, size):
        values = np.frombuffer(message, dtype=np.float64)
        if values.size != size:
            raise ProtocolError(
                f"party {k} sent {values.size} floats at round {self.completed}, expected {size}",
                party=k,
                iteration=self.completed,
                completed=self.completed,
            )
        if not np.isfinite(values).all():
            raise ProtocolError(
                f"party {k} sent non-finite values at round {self.completed}",
                party=k,
                iteration=self.completed,
                completed=self.completed,
            )
        return values

    def first(self) -> np.ndarray:
        """The broadcast of round 0: nothing."""
        return np.zeros(0)

    def receive(self, iteration: int, messages) -> np.ndarray:
        """Read round ``iteration``'s messages; the next broadcast (empty after the last)."""
        if iteration == 0:
            out = self._supports(messages)
        elif iteration == 1:
            out = self._statistics(messages)
        else:
            out = self._cross(messages)
        self.completed = iteration + 1
        return out

    def _choose(self, k, scores):
        """Party ``k``'s shared columns (local indices): ranked by their released scores per
        unit bound ``|v_j| / b_j``, each kept when it stands out of the screen's noise and
        passes the level of :func:`join_threshold` (columns over their bounds, whose
        coefficients' L1 norm is about ``r_k`` times the party's median bound)."""
        order = np.argsort(-np.abs(scores), kind="stable")
        if not self.private:
            return np.sort(order[: self.max_shared])
        level = screen_noise(self.n, order.size, self.target_bound, self.multipliers[SCREEN_PART])
        if self.sharing:
            radius = self.radii[k] * float(np.median(self.column_bounds[self.blocks[k]]))
            level = max(level, join_threshold(self.n, radius, self.multipliers[SHARING_PART]))
        passing = order[np.abs(scores[order]) >= level]
        return np.sort(passing[: self.max_shared])

    def _supports(self, messages):
        self.shared = [
            self._choose(k, self._read(k, message, self.blocks[k].size))
            for k, message in enumerate(messages)
        ]
        if not self.sharing:
            self.m = None
        elif isinstance(self.sketch_dim, str):
            self.m = sketch_rows(self.n, self._sizes(), self.multipliers[SHARING_PART])
        else:
            self.m = self.sketch_dim
        flags = np.zeros(self.column_bounds.size)
        for k, local in enumerate(self.shared):
            flags[self.blocks[k][local]] = 1.0
        return np.concatenate([[0.0 if self.m is None else float(self.m)], flags])

    def _sizes(self):
        """Each party's number of shared columns."""
        return [s.size for s in self.shared]

    def _scales(self):
        """The shared columns' bounds, in the quadratic's order."""
        return np.concatenate([self.column_bounds[self.blocks[k][s]]
                               for k, s in enumerate(self.shared)])  # fmt: skip

    @property
    def rows(self) -> int:
        return self.n if self.m is None else self.m

    def _sketch_floats(self, s):
        return self.rows * s if self.sharing else 0

    def _statistics(self, messages):
        self.own, self.sketches = [], []
        clips = []
        for k, message in enumerate(messages):
            s = self.shared[k].size
            head = s * (s + 1) // 2 + s
            values = self._read(k, message, head + self._sketch_floats(s))
            self.own.append(values[:head])
            if not self.sharing:
                continue
            Z = values[head:].reshape(self.rows, s)
            norms = np.sqrt(np.einsum("ij,ij->i", Z, Z))
            clip = float(np.quantile(norms, ROW_QUANTILE)) if s else 0.0
            if not self.private or clip == 0:  # not private: nothing clipped
                clip = float(norms.max(initial=0.0))
            else:
                Z = Z * np.minimum(1.0, clip / np.maximum(norms, 1e-300))[:, None]
            clips.append(clip)
            self.sketches.append(Z)
        self.info["row_clips"] = clips
        if not self.sharing:
            return np.zeros(0)
        return np.concatenate([clips, self._sizes(), *[Z.ravel() for Z in self.sketches]])

    def _quadratic(self, messages):
        """``(G, c, offsets)`` of the shared columns from the own and cross statistics."""
        sizes = self._sizes()
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        total = int(offsets[-1])
        G = np.zeros((total, total))
        c = np.zeros(total)
        for k, values in enumerate(self.own):
            s = sizes[k]
            if s == 0:
                continue
            block = np.zeros((s, s))
            upper = np.triu_indices(s)
            block[upper] = values[: upper[0].size]
            block = block + np.triu(block, 1).T
            G[offsets[k] : offsets[k + 1], offsets[k] : offsets[k + 1]] = block
            c[offsets[k] : offsets[k + 1]] = values[upper[0].size :]
        for k, message in enumerate(messages):
            expected = sizes[k] * (total - sizes[k]) if sizes[k] and self.sharing else 0
            values = self._read(k, message, expected)
            start = 0
            for other in range(self.n_parties):
                if other == k or sizes[other] == 0 or sizes[k] == 0:
                    continue
                size = sizes[k] * sizes[other]
                P = values[start : start + size].reshape(sizes[k], sizes[other]) / 2.0
                start += size
                rows = slice(offsets[k], offsets[k + 1])
                cols = slice(offsets[other], offsets[other + 1])
                G[rows, cols] += P
                G[cols, rows] += P.T
        return G, c, offsets

    def _regularised(self, G):
        """Private: the ridge and the eigenvalue floor on the quadratic of the columns over
        their bounds, normalised by the spread ``1 / sqrt(3)``. Not private: ``G`` itself."""
        if not self.private:
            return G, 0.0
        normalised = G / SPREAD**2
        signal = float(np.mean(np.diag(normalised)))
        lam = ridge(self.n, self._sizes(), self.multipliers[SHARING_PART], signal)
        normalised = normalised + lam * np.eye(G.shape[0])
        values, vectors = np.linalg.eigh(normalised)
        floor = EIGEN_FLOOR * max(float(values.max()), 1.0)
        normalised = (vectors * np.maximum(values, floor)) @ vectors.T
        return normalised * SPREAD**2, lam

    def _cross(self, messages):
        G, c, offsets = self._quadratic(messages)
        theta = np.zeros(self.column_bounds.size)
        lam = gap = 0.0
        iterations = 0
        if G.shape[0]:
            G, lam = self._regularised(G)
            # back from the columns over their bounds to the columns themselves
            scales = self._scales()
            G, c = G * np.outer(scales, scales), c * scales
            groups = [(int(offsets[k]), int(offsets[k + 1])) for k in range(self.n_parties)]
            x, gap, iterations = solve_balls(G, c, self.radii, groups)
            for k, local in enumerate(self.shared):
                theta[self.blocks[k][local]] = x[offsets[k] : offsets[k + 1]]
        self.theta = theta
        self.info.update(ridge=lam, duality_gap=gap, solver_iterations=iterations)
        return np.zeros(0)

    def expected_uplink(self) -> np.ndarray:
        """Bytes each party sends: its scores, own statistics, sketch and cross blocks."""
        sizes = self._sizes()
        total = sum(sizes)
        out = []
        for k, block in enumerate(self.blocks):
            s = sizes[k]
            floats = block.size + s * (s + 1) // 2 + s
            if self.sharing:
                floats += self.rows * s + s * (total - s)
            out.append(floats * FLOAT_BYTES)
        return np.array(out, dtype=np.int64)
