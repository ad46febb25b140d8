"""The screened variant of the feature-split private Frank-Wolfe: shared statistics, then FW.

The protocol of Algorithm 2 (:mod:`dpglm.distributed.protocol`) lets each
party read the other parties' margins through one noisy sketch per iteration,
and its Frank-Wolfe steps turn the noise on every gradient into a linear
excess loss: a vertex of radius ``r`` is chosen on noise alone once the
gradient is within the noise of zero. This variant releases, once, what the
LASSO needs on a small shared support, and leaves the optimisation to the
coordinator, where it is post-processing:

round 0, screening
    Party ``k`` releases the marginal scores of its columns,
    ``v_k = (1/n) A_k^T clip(y, B) + N(0, sigma_0^2 I)``. The coordinator
    ranks each party's columns by ``|v_j| / b_j`` and shares the leading ones
    while their score stands above the noise their shared statistics would
    carry (:func:`join_threshold`), at most ``max_shared`` a party.
round 1, statistics
    Party ``k`` releases its own block's statistics on its shared columns
    ``S_k`` (the upper triangle of ``(1/n) A_S^T A_S`` and ``(1/n) A_S^T clip(y, B)``)
    and the count sketch of those columns, ``Z_k = J A_S + N(0, sigma_2^2 I)``
    (``m x s_k`` floats; ``m`` from :func:`sketch_rows` unless given).
round 2, cross statistics
    The coordinator broadcasts every ``Z_l`` with its rows clipped to the
    90th percentile of their norms (a function of the releases alone); party
    ``k`` releases ``(1/n) A_{S_k}^T J^T Z~_l + N(0, sigma_3^2 I)`` for every
    other party ``l``: its exact columns against the other party's noisy ones.

The coordinator averages the two estimates of each cross block, adds the
ridge :func:`ridge` (the noise's predicted spectral norm squared over the
shared columns' mean second moment), floors the eigenvalues at a
thousandth of the largest, and minimises the quadratic over the product of
the parties' L1 balls to a Frank-Wolfe duality gap of ``1e-8``
(:func:`solve_balls`). Nothing there reads data.

Why it learns where the paper's protocol does not: a party still reads the
other parties' columns only through per-record noise (the ``1 / sqrt(n)``
rate of :mod:`~dpglm.distributed.vertical_fw` stays), but (1) the noise is paid
on ``s_k`` screened columns instead of ``K T`` vertices, (2) the noise enters
the solution through a solve of the shared quadratic, an excess quadratic in
the noise instead of Frank-Wolfe's linear one, and (3) a party's own block is
released as an aggregate, with noise of order ``1 / n``. Measured on the
scaling run's problem (``n = 10^6``, ``d = 200``, ``K = 2``, ``epsilon = 4``):
relative suboptimality 0.06 where Algorithm 2 reaches 2.1 and the centralized
private Frank-Wolfe 0.185 (``benchmarks/bench_vertical_scaling.py``).

What it assumes: marginal screening finds the columns that matter, as on
designs whose columns are not strongly correlated (a column whose effect
shows only jointly with others may not be shared); columns left out get
coefficient 0.

Privacy (replace-one neighbours, ``n`` public, every party holds ``y``).
Every party clips each entry of column ``j`` to ``[-b_j, b_j]`` and the
targets to ``[-B, B]``: per-record operations. Replacing record ``i`` moves

* the scores ``v_k`` by at most ``2 B ||b_{P_k}||_2 / n`` (L2);
* the own statistics, a sum of per-record terms ``(upper(a a^T), a y)`` of
  norm at most ``||b_S|| sqrt(||b_S||^2 + B^2)``, by twice that over ``n``;
* the sketch ``Z_k`` by at most ``2 ||b_S||_2`` (one entry of each column moves,
  through one column of ``J`` of norm 1);
* the cross statistics, a sum of per-record terms ``a_S (J^T Z~_l)_i^T`` whose
  second factor is a clipped row of the released ``Z_l``, by at most
  ``2 ||b_{S_k}||_2 c_l / n`` (``c_l`` the clip).

Each release is Gaussian with its multiplier fixed by the plan
(:func:`screened_events`) before any data is read; the supports, ``m``, the
clips and the sensitivities that follow from them are functions of earlier
releases and public numbers, so each release is ``1 / z``-GDP whatever they
are, and the ``3 K + K (K - 1)`` releases compose adaptively. The plan is
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

from dpglm.clipping import clip_features
from dpglm.data.layout import as_layout
from dpglm.distributed.protocol import COUNT, FLOAT_BYTES, ProtocolError, SketchSpec
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
    "sketch_rows",
    "solve_balls",
]

SCREENED = "screened"
SCREEN_PART = "column screening"
OWN_PART = "own statistics"
SHARING_PART = "feature sharing"
CROSS_PART = "cross statistics"
#: shares of the plan's zCDP rho: screening, own statistics, sketches, cross statistics.
#: The sketches' noise is the error every cross entry carries at the rate 1 / sqrt(n); the
#: other three release aggregates with noise of order 1 / n, and need little of the budget.
RHO_SHARES = (0.05, 0.05, 0.8, 0.1)
#: rows of a released sketch are clipped to this quantile of their norms
ROW_QUANTILE = 0.9
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
#: relative floor of the eigenvalues of the shared quadratic
EIGEN_FLOOR = 1e-3
#: the coordinator's solve: iterations at most, and the relative duality gap it stops at
SOLVER_ITERATIONS = 20_000
SOLVER_GAP = 1e-8
#: rows of the count sketch at most (0.5 MB a shared column)
MAX_ROWS = 2**16
ROUNDS = 3


def screened_events(n_parties: int, shares=RHO_SHARES) -> tuple:
    """Template events of the screened plan, multipliers in the ratio of ``shares``.

    Event ``i`` has ``count_i`` releases at multiplier ``z_i``; as zCDP each
    costs ``1 / (2 z_i^2)``, so ``z_i^2 ~ count_i / share_i`` gives the parts
    the shares of ``rho``. The calibration scales every multiplier by one
    factor; the sensitivities are each party's own (normalised to 1 here).

    Examples
    --------
    >>> [round(e.noise_multiplier, 3) for e in screened_events(2)]
    [6.325, 6.325, 1.581, 4.472]
    """
    K = int(n_parties)
    counts = (K, K, K, K * (K - 1))
    parts = (SCREEN_PART, OWN_PART, SHARING_PART, CROSS_PART)
    return tuple(
        GaussianEvent(
            noise_multiplier=math.sqrt(count / share),
            count=count,
            sensitivity=1.0,
            part=part,
            label=f"{part} (Gaussian)",
        )
        for count, share, part in zip(counts, shares, parts, strict=True)
        if count > 0
    )


def join_threshold(n, shared, radius, bound, sketch_multiplier):
    """The score a party's ``shared``-th column needs to be shared.

    A shared column's statistics carry, on every cross entry, noise of std
    about ``b_rms sigma_2 / sqrt(n)`` with ``sigma_2 = z_2 2 b sqrt(s)`` (the
    sketch's noise read through the other party's exact column), and its
    gradient coordinate that times the norm of the other party's
    coefficients, ``r / sqrt(s)`` for ``s`` equal ones in a ball of radius
    ``r``. A column whose marginal score is below that would add more noise
    than signal.

    Examples
    --------
    >>> round(join_threshold(10**6, 12, 12.0, 1.0, 2.75), 4)
    0.0381
    """
    sigma = sketch_multiplier * 2.0 * bound * math.sqrt(shared)
    return SPREAD * bound * sigma / math.sqrt(n) * radius / math.sqrt(shared)


def sketch_rows(n, shared, bound, sketch_multiplier):
    """``m``: the count sketch whose error on a cross entry is a quarter of the noise's.

    The count sketch leaves an error of std about ``b_rms^2 / sqrt(m)`` on a
    normalised cross entry, the noise ``b_rms sigma_2 / sqrt(n)``; ``m`` is
    the least that puts the first at ``SKETCH_ERROR_RATIO`` of the second,
    at most ``n``. ``None`` (no sketch, ``J = I``) when that is ``n`` or more.

    Examples
    --------
    >>> sketch_rows(10**6, 12, 1.0, 2.75), sketch_rows(1000, 12, 1.0, 0.1)
    (14693, None)
    """
    sigma = sketch_multiplier * 2.0 * bound * math.sqrt(max(shared, 1))
    if sigma == 0:
        return None
    m = math.ceil(n * (SPREAD * bound) ** 2 / (SKETCH_ERROR_RATIO * sigma) ** 2)
    return None if m >= n else int(min(m, MAX_ROWS))


def ridge(n, sizes, bound, sketch_multiplier, signal):
    """The ridge added to the shared quadratic: predicted noise norm squared over the signal.

    The cross blocks carry noise of std ``b_rms sigma_2 / (sqrt(2) sqrt(n))``
    per entry (two independent estimates averaged), so a spectral norm of
    about ``2 sqrt(s) `` times that over ``s`` shared columns. Shrinking by
    its square over the shared columns' mean second moment ``signal`` (read
    off the released own statistics) keeps the solve from following the
    noise's directions when the noise is comparable to the signal, and costs
    little when it is not.

    Examples
    --------
    >>> round(ridge(10**6, [12, 12], 1.0, 2.75, 1 / 3), 5)
    0.01742
    """
    total = int(sum(sizes))
    if total == 0 or sketch_multiplier == 0 or signal <= 0:
        return 0.0
    sigma = sketch_multiplier * 2.0 * bound * math.sqrt(max(sizes))
    entry = SPREAD * bound * sigma / math.sqrt(n) / math.sqrt(2.0)
    return RIDGE * (2.0 * math.sqrt(total) * entry) ** 2 / signal


def screen_noise(n, n_columns, bound, target_bound, screen_multiplier):
    """The score a column needs to stand out of the screen's own noise.

    The scores carry Gaussian noise of std ``sigma_0 = z_0 2 B ||b||_2 / n``;
    the largest of ``d_k`` pure-noise scores stays below
    ``sqrt(2 log(2 d_k)) sigma_0`` but in about one fit in ``2 sqrt(pi log(2 d_k))``
    or less, so a column must pass that level to be shared.

    Examples
    --------
    >>> round(screen_noise(10**5, 50, 1.0, 36.8, 40.0), 4)
    0.6318
    """
    sigma = screen_multiplier * 2.0 * target_bound * bound * math.sqrt(n_columns) / n
    return math.sqrt(2.0 * math.log(2.0 * n_columns)) * sigma


def least_coefficient(n, n_columns, radius, bound, target_bound, multipliers):
    """The least coefficient a party's first column can have and be shared, over the radius.

    A column's score ``|v_j|`` is about ``b_rms^2 |w_j|``; it is shared when
    it passes both :func:`join_threshold` at one shared column and
    :func:`screen_noise`.
    """
    score = max(
        join_threshold(n, 1, radius, bound, multipliers[2]),
        screen_noise(n, n_columns, bound, target_bound, multipliers[0]),
    )
    return score / (SPREAD * bound) ** 2 / radius


def screened_regime(n, columns, radii, bounds, target_bound, multipliers):
    """Whether the screen can share the columns a fit needs, from public numbers.

    ``least_coefficient_over_radius``: per party, the least coefficient it can
    share (:func:`least_coefficient`) over its radius. The fit beats ``w = 0``
    when the coefficients that carry the signal pass the screen; measured on
    the benchmark's problem (``benchmarks/bench_vertical_rule.py``), it does
    from a least coefficient of about ``REGIME_LEVEL`` times the radius.
    ``min_n`` is the least ``n`` at which every party reaches that level at
    the same multipliers (both thresholds fall with ``n``).

    Examples
    --------
    >>> regime = screened_regime(
    ...     10**4, [50, 50], [18.4, 18.4], [1.0, 1.0], 36.8, (40.0, 40.0, 10.0, 28.0)
    ... )
    >>> regime["expected_to_learn"], regime["min_n"] > 10**4
    (False, True)
    """

    def worst(size):
        return max(
            least_coefficient(size, d_k, r, b, target_bound, multipliers)
            for d_k, r, b in zip(columns, radii, bounds, strict=True)
        )

    least = [
        float(least_coefficient(n, d_k, r, b, target_bound, multipliers))
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
    """Minimise ``x^T G x / 2 - c^T x`` over the product of L1 balls (``G`` positive definite).

    Accelerated projected gradient (step ``1 / lambda_max(G)``, restarted when
    the objective rises), each block projected on its ball; stops when
    Frank-Wolfe's duality gap, which bounds the excess objective, is below
    ``gap`` times ``max(1, |c|_max sum(radii))``. Returns
    ``(x, duality_gap, iterations)``.

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

    def objective(v):
        return 0.5 * float(v @ G @ v) - float(c @ v)

    step = 1.0 / max(float(np.linalg.eigvalsh(G).max()), 1e-300)
    scale = max(1.0, float(np.abs(c).max(initial=0.0)) * float(sum(radii)))
    x = np.zeros(c.size)
    look, momentum, value = x, 1.0, 0.0
    duality = math.inf
    t = 0
    for t in range(1, iterations + 1):  # noqa: B007 - t is returned
        duality = _duality_gap(G @ x - c, x, radii, groups)
        if duality <= gap * scale:
            break
        candidate = project(look - step * (G @ look - c))
        candidate_value = objective(candidate)
        if candidate_value > value:  # restart the momentum where it stops descending
            look, momentum = x, 1.0
            continue
        following = (1.0 + math.sqrt(1.0 + 4.0 * momentum**2)) / 2.0
        look = candidate + (momentum - 1.0) / following * (candidate - x)
        x, momentum, value = candidate, following, candidate_value
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
    releases : tuple of Release or None
        The plan's four releases, unbound (``None``: no noise).
    """

    index: int
    features: np.ndarray
    n_parties: int
    feature_bounds: np.ndarray | None
    target_bound: float
    sketch_seed: int
    releases: tuple | None = None


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
    y : ndarray of shape (n,)
    seed : SeedSequence, int or None
    secure : bool, default=False
    """

    def __init__(self, config: ScreenedConfig, X, y, *, seed=None, secure=False):
        self.config = config
        X = as_layout(X, "columns")
        bounds = config.feature_bounds
        if bounds is not None:
            X = clip_features(X, np.asarray(bounds, dtype=float))
        self._X = X
        self._y = np.ascontiguousarray(y, dtype=float)
        if math.isfinite(config.target_bound):
            self._y = np.clip(self._y, -config.target_bound, config.target_bound)
        self._n = self._y.shape[0]
        self._bounds = (
            np.full(len(config.features), math.inf) if bounds is None else np.asarray(bounds)
        )
        source = make_noise_source(seed, secure=secure)
        self._releases = (
            None if config.releases is None else [r.bind(source) for r in config.releases]
        )
        self._shared = None
        self._sketch = None
        self._iteration = 0

    @property
    def iteration(self) -> int:
        """Rounds this party has completed."""
        return self._iteration

    def _columns(self, index):
        A = self._X[:, index]
        return A.toarray() if hasattr(A, "toarray") else np.asarray(A)

    def _release(self, part, values, *factors, over=None):
        if self._releases is None:
            return np.asarray(values, dtype=float)
        release = self._releases[part]
        return values + release.scale(*factors, over=over) * release.unit(np.shape(values))

    def step(self, iteration: int, payload) -> bytes:
        """Run round ``iteration`` on the coordinator's broadcast; the party's message."""
        if iteration != self._iteration:
            raise ProtocolError(
                f"party {self.config.index} was asked for round {iteration}, expected "
                f"{self._iteration}",
                party=self.config.index,
                iteration=iteration,
                completed=self._iteration,
            )
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
        scores = np.asarray(self._X.T @ self._y, dtype=float).ravel() / self._n
        # one record moves the scores by at most 2 B ||b||_2 / n
        norm = float(np.sqrt(np.sum(self._bounds**2)))
        return self._release(0, scores, 2.0, self.config.target_bound, norm, over=self._n)

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
        b = float(np.sqrt(np.sum(self._bounds[self._shared] ** 2)))
        # per-record term (upper(a a^T), a y): norm at most ||b|| sqrt(||b||^2 + B^2)
        own = self._release(
            1,
            np.concatenate([_upper(gram), inner]),
            2.0,
            b * math.sqrt(b * b + self.config.target_bound**2),
            over=self._n,
        )
        self._sketch = None if m == 0 else SketchSpec(self._n, m, self.config.sketch_seed, COUNT)
        sketched = self._sketch_rows(A)
        # one record moves one row of J A_S by at most 2 ||b_S||_2 (J's columns: norm 1)
        shared = self._release(2, sketched, 2.0, b)
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
        # broadcast: [clip_l for each party, then each party's clipped Z_l, in party order]
        K = self.config.n_parties
        clips = payload[:K]
        sizes = payload[K : 2 * K].astype(int)
        blocks = payload[2 * K :]
        s = self._shared.size
        if s == 0:
            return np.zeros(0)
        A = self._columns(self._shared)
        b = float(np.sqrt(np.sum(self._bounds[self._shared] ** 2)))
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
            # a record's term a_S (J^T Z~)_i^T: norm at most ||b_S|| clip_l
            out.append(self._release(3, product, 2.0, b, float(clips[other]), over=self._n))
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
    radii, bounds : sequence of float
        Each party's radius and largest feature bound.
    column_bounds : ndarray or None
        ``b_j`` of every feature (``None``: not private).
    target_bound : float
        ``B``.
    multipliers : tuple of float
        The calibrated multipliers of the plan's four events (zeros: not private).
    max_shared : int
    sketch_dim : int, None or "auto"
    """

    def __init__(self, blocks, n, radii, bounds, column_bounds, target_bound, multipliers,
                 max_shared, sketch_dim):  # fmt: skip
        self.blocks = [np.asarray(b, dtype=np.int64) for b in blocks]
        self.n = int(n)
        self.radii = [float(r) for r in radii]
        self.bounds = [float(b) for b in bounds]
        self.column_bounds = column_bounds
        self.target_bound = float(target_bound)
        self.multipliers = multipliers
        self.max_shared = int(max_shared)
        self.sketch_dim = sketch_dim
        self.shared = None
        self.m = None
        self.own = None
        self.sketches = None
        self.completed = 0
        self.info: dict = {}

    @property
    def n_parties(self) -> int:
        return len(self.blocks)

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

    def _supports(self, messages):
        z = self.multipliers[2]
        self.shared = []
        for k, message in enumerate(messages):
            scores = self._read(k, message, self.blocks[k].size)
            b = 1.0 if self.column_bounds is None else self.column_bounds[self.blocks[k]]
            order = np.argsort(-np.abs(scores) / b, kind="stable")
            limit = min(self.max_shared, order.size)
            s = limit
            if z > 0:
                bound = self.bounds[k]
                floor = screen_noise(
                    self.n, order.size, bound, self.target_bound, self.multipliers[0]
                )
                s = 0
                for count in range(1, limit + 1):
                    level = max(floor, join_threshold(self.n, count, self.radii[k], bound, z))
                    if abs(scores[order[count - 1]]) < level:
                        break
                    s = count
            self.shared.append(np.sort(order[:s]))
        sizes = [s.size for s in self.shared]
        if isinstance(self.sketch_dim, str):
            self.m = sketch_rows(self.n, max(sizes), max(self.bounds), z)
        else:
            self.m = self.sketch_dim
        flags = np.zeros(sum(b.size for b in self.blocks))
        for k, local in enumerate(self.shared):
            flags[self.blocks[k][local]] = 1.0
        return np.concatenate([[0.0 if self.m is None else float(self.m)], flags])

    @property
    def rows(self) -> int:
        return self.n if self.m is None else self.m

    def _statistics(self, messages):
        self.own, self.sketches = [], []
        clips = []
        for k, message in enumerate(messages):
            s = self.shared[k].size
            size = s * (s + 1) // 2 + s + self.rows * s if s else 0
            values = self._read(k, message, size)
            head = s * (s + 1) // 2 + s
            self.own.append(values[:head])
            Z = values[head:].reshape(self.rows, s)
            norms = np.sqrt(np.einsum("ij,ij->i", Z, Z))
            clip = float(np.quantile(norms, ROW_QUANTILE)) if s else 0.0
            if self.multipliers[2] == 0 or clip == 0:  # not private: nothing clipped
                clip = float(norms.max(initial=0.0))
            else:
                Z = Z * np.minimum(1.0, clip / np.maximum(norms, 1e-300))[:, None]
            clips.append(clip)
            self.sketches.append(Z)
        self.info["row_clips"] = clips
        sizes = [float(s.size) for s in self.shared]
        return np.concatenate([clips, sizes, *[Z.ravel() for Z in self.sketches]])

    def _cross(self, messages):
        sizes = [s.size for s in self.shared]
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
            expected = sizes[k] * (total - sizes[k]) if sizes[k] else 0
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
        theta = np.zeros(sum(b.size for b in self.blocks))
        lam = gap = 0.0
        iterations = 0
        if total:
            # a noisy diagonal may be anything: the floors are set by the public bound's scale
            public = (SPREAD * max(self.bounds)) ** 2
            signal = max(float(np.mean(np.diag(G))), EIGEN_FLOOR * public)
            lam = ridge(self.n, sizes, max(self.bounds), self.multipliers[2], signal)
            G = G + lam * np.eye(total)
            values, vectors = np.linalg.eigh(G)
            floor = EIGEN_FLOOR * max(float(values.max()), public)
            G = (vectors * np.maximum(values, floor)) @ vectors.T
            groups = [(int(offsets[k]), int(offsets[k + 1])) for k in range(self.n_parties)]
            x, gap, iterations = solve_balls(G, c, self.radii, groups)
            for k, local in enumerate(self.shared):
                theta[self.blocks[k][local]] = x[offsets[k] : offsets[k + 1]]
        self.theta = theta
        self.info.update(ridge=lam, duality_gap=gap, solver_iterations=iterations)
        return np.zeros(0)

    def expected_uplink(self) -> np.ndarray:
        """Bytes each party sends: its scores, own statistics, sketch and cross blocks."""
        sizes = [s.size for s in self.shared]
        total = sum(sizes)
        out = []
        for k, block in enumerate(self.blocks):
            s = sizes[k]
            floats = block.size + (s * (s + 1) // 2 + s + self.rows * s + s * (total - s))
            out.append(floats * FLOAT_BYTES)
        return np.array(out, dtype=np.int64)
