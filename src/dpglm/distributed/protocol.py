"""The parties and the coordinator of Algorithm 2 (Lou and Cheung 2018), engine-independent.

``K`` parties each hold a disjoint block of the columns of ``A`` (``n x d``)
and the targets ``y``; a coordinator holds the iterate ``x``, the public step
sizes and the shared sketch ``q = J A x`` of the margins, where ``J`` is the
public ``m x n`` sketch (:class:`SketchSpec`: a count sketch, or the paper's
Gaussian Johnson-Lindenstrauss matrix). At iteration ``t`` the
coordinator broadcasts ``q`` and every party, on its own,

1. forms the pseudo-margins ``u = J^T q`` (``J^T J ~ I``, so ``u ~ A x``),
2. samples ``tau`` of its coordinates (a ``tau``-nice sampling, its own draw),
3. computes their clipped partial gradients
   ``g_j = (1/n) sum_i clip((u_i - y_i) A_ij, C)`` (the squared loss),
4. picks a signed index by report-noisy-max over the vertices
   ``+-r_k e_j`` of its ball restricted to the sampled ``j`` (the kernel of
   :func:`~dpglm.solvers.dp_fw.dp_fw`), and
5. uploads one message: the signed index (one int64) and its active feature
   sketched, ``J a_j + N(0, sigma_j^2 I_m)`` (``m`` float64).

The coordinator then moves ``x <- (1 - gamma) x + gamma sum_k sign_k r_k e_{j_k}``
and ``q <- (1 - gamma) q + gamma sum_k sign_k r_k (J a_{j_k} + noise)``, which is
all it ever needs: it never holds ``J`` nor any column.

**Centred** (``PartyConfig.centred``; ``variant="centred"`` of
:func:`~dpglm.distributed.vertical_fw.vertical_fw`): the broadcast sketches the
*residual* ``A x - y`` instead of the margins. Party 0 appends ``J y + noise``
(``m`` more float64) to its first message, and the coordinator broadcasts
``q - (J y + noise)``; the parties then take ``u = J^T q`` itself as the
residual in step 3 (at iteration 0, ``x = 0`` and the residual is ``-y``,
which every party holds). The sketch's error ``(J^T J - I) r`` is then
proportional to the residual ``r``, small near the optimum, instead of to the
margins ``A x``.

Nothing here knows how parties are run: an engine
(:mod:`dpglm.distributed.engines`) builds each :class:`Party` from a
:class:`PartySetup` where its data lives, calls :meth:`Party.step` and hands the
messages to the :class:`Coordinator`. Party ``k`` draws from its own stream,
spawned from the fit's seed, so every engine gives the same bits.

Examples
--------
>>> import numpy as np
>>> from dpglm.distributed.protocol import Coordinator, Party, PartyConfig, SketchSpec
>>> sketch = SketchSpec(n_samples=3, dim=None, seed=0)  # no sketch: J = I
>>> config = PartyConfig(index=0, features=np.array([0, 1]), tau=2, radius=1.0, sketch=sketch)
>>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
>>> party = Party(config, X, np.array([1.0, -2.0, 0.0]), seed=0)
>>> coordinator = Coordinator(np.array([0, 0]), np.array([1.0]), np.array([1.0]), sketch.m)
>>> q = coordinator.receive(0, [party.step(0, coordinator.q)])
>>> coordinator.theta, q  # exact selection (no noise): vertex -e_1, step size 1
(array([ 0., -1.]), array([ 0., -1., -1.]))
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dpglm import _kernels
from dpglm._kernels.frank_wolfe import block_margins_dense, noisy_vertex
from dpglm._kernels.jit import threads_for
from dpglm.clipping import clip_features
from dpglm.data.layout import as_layout
from dpglm.datafits import get_datafit
from dpglm.exceptions import DpglmError
from dpglm.privacy.mechanisms import make_noise_source
from dpglm.privacy.releases import Release
from dpglm.solvers.fw_sampling import TauNice

__all__ = [
    "COUNT",
    "FLOAT_BYTES",
    "GAUSSIAN",
    "INT_BYTES",
    "SKETCHES",
    "Coordinator",
    "Party",
    "PartyConfig",
    "PartyError",
    "PartyLostError",
    "PartySetup",
    "ProtocolError",
    "SketchSpec",
    "check_sketch_kind",
    "decode_message",
    "encode_message",
    "out_of_order",
]

#: an uploaded index is one little-endian int64, a sketch entry one little-endian float64
INT_BYTES = 8
FLOAT_BYTES = 8
_INT = np.dtype("<i8")
_FLOAT = np.dtype("<f8")

#: the datafit code of the squared loss (see dpglm.datafits): the only one whose
#: gradient is linear in the margins, which is what the sketch preserves
_SQUARED = "squared"

#: the kinds of public sketch (see :class:`SketchSpec`)
GAUSSIAN, COUNT = "gaussian", "count"
SKETCHES = (GAUSSIAN, COUNT)


class PartyError(DpglmError, RuntimeError):
    """A party failed during distributed training; names the party and the iteration.

    Raised instead of a result: no partial model is returned. ``report`` (set
    by :func:`~dpglm.distributed.vertical_fw.vertical_fw`) is the privacy
    report of what was charged, the whole planned fit, since the budget is
    charged before training starts.

    Attributes
    ----------
    party : int
    iteration : int or None
        The iteration (0-based) at which it failed; ``None`` while starting.
    completed : int
        Iterations completed by every party before the failure.
    report : PrivacyReport or None
    """

    def __init__(self, message, *, party, iteration, completed=0):
        super().__init__(message)
        self.party = party
        self.iteration = iteration
        self.completed = completed
        self.report = None


class PartyLostError(PartyError):
    """A party's worker was lost, or its call did not come back."""


class ProtocolError(PartyError):
    """A party sent a message the protocol does not allow (wrong size, index or values)."""


# --- the public Johnson-Lindenstrauss matrix ------------------------------------------------


def out_of_order(party: int, asked: int, completed: int, unit: str = "iteration"):
    """The error of a party asked for step ``asked`` when it has completed ``completed``.

    Examples
    --------
    >>> out_of_order(1, 3, 2, "round").args[0]
    'party 1 was asked for round 3, but has completed 2: rounds run in order, once'
    """
    return ProtocolError(
        f"party {party} was asked for {unit} {asked}, but has completed {completed}: "
        f"{unit}s run in order, once",
        party=party,
        iteration=asked,
        completed=completed,
    )


def check_sketch_kind(kind, name: str = "sketch") -> str:
    """``kind`` if it names a kind of sketch (:data:`SKETCHES`), else a ValueError naming
    the parameter ``name``.

    Examples
    --------
    >>> check_sketch_kind("count")
    'count'
    """
    if not isinstance(kind, str) or kind not in SKETCHES:
        raise ValueError(f"{name} must be one of {SKETCHES}, got {kind!r}")
    return kind


@dataclass(frozen=True)
class SketchSpec:
    """The public sketch ``J`` (``m x n``), rebuilt from its seed wherever it is needed.

    Two kinds, both with ``E[J^T J] = I`` and drawn from ``seed``, which is
    public and independent of the data; ``J`` is never shipped as data:

    ``"gaussian"``
        i.i.d. ``N(0, 1/m)`` entries (the paper's Johnson-Lindenstrauss
        matrix): ``m n`` floats to hold, ``O(m n)`` work to apply, and a
        largest column norm above 1 (about ``1 + sqrt(log(n) / m)``).
    ``"count"``
        a count sketch (Charikar, Chen and Farach-Colton 2002; Clarkson and
        Woodruff 2013): record ``i`` goes to one row ``h(i)`` with a random
        sign, so ``J v`` sums the signed entries of each row's records and
        ``J^T q`` reads ``q[h(i)]``. ``n`` row indices and signs to hold,
        ``O(n)`` work, and every column of norm exactly 1: the least
        sensitivity any sketch with ``E[J^T J] = I`` can have (a record's
        entry moves ``J a`` by ``|a_i - a'_i|``, as it moves ``a`` itself).
        Inner products ``a^T J^T J r`` are unbiased with the variance of the
        Gaussian sketch's, ``(||a||^2 ||r||^2 + (a^T r)^2) / m`` up to a term
        in ``sum_i a_i^2 r_i^2``.

    ``dim=None`` is no sketch (``J = I``, ``m = n``): parties then upload their
    noisy active columns in full.

    Parameters
    ----------
    n_samples : int
        ``n``.
    dim : int or None
        ``m``.
    seed : int
        Public seed of ``J``.
    kind : {"gaussian", "count"}, default="gaussian"
        The kind of ``J`` (above); ignored with ``dim=None``. The spec's own
        default is the paper's; :func:`~dpglm.distributed.vertical_fw.vertical_fw`
        takes ``"count"`` by default.

    Examples
    --------
    >>> spec = SketchSpec(n_samples=50, dim=10, seed=3)
    >>> spec.m, spec.gaussian().shape
    (10, (10, 50))
    >>> bool(spec.column_norm_bound() > 0.5)
    True
    >>> count = SketchSpec(n_samples=50, dim=10, seed=3, kind="count")
    >>> rows, signs = count.hashes()
    >>> rows.shape, sorted(set(signs.tolist())), count.column_norm_bound()
    ((50,), [-1.0, 1.0], 1.0)
    """

    n_samples: int
    dim: int | None
    seed: int
    kind: str = GAUSSIAN

    def __post_init__(self):
        check_sketch_kind(self.kind, "kind")

    @property
    def m(self) -> int:
        """Floats in one sketched feature."""
        return self.n_samples if self.dim is None else self.dim

    @property
    def identity(self) -> bool:
        return self.dim is None

    def gaussian(self) -> np.ndarray | None:
        """``G = sqrt(m) J``, standard normal entries, Fortran order (``None`` unless a
        Gaussian sketch).

        Kept unscaled so that the kernels that apply it read it once per use
        (see :class:`Party`).
        """
        if self.identity or self.kind != GAUSSIAN:
            return None
        rng = np.random.default_rng(self.seed)
        return np.asfortranarray(rng.standard_normal((self.dim, self.n_samples)))

    def hashes(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(rows, signs)`` of a count sketch: ``J[rows[i], i] = signs[i]`` (``None`` unless
        a count sketch)."""
        if self.identity or self.kind != COUNT:
            return None
        rng = np.random.default_rng(self.seed)
        rows = rng.integers(0, self.dim, size=self.n_samples, dtype=np.int64)
        signs = rng.integers(0, 2, size=self.n_samples).astype(float) * 2.0 - 1.0
        return rows, signs

    def matrix(self) -> np.ndarray:
        """``J`` itself, dense (``m x n``): for checks on small sketches, never in a fit.

        Examples
        --------
        >>> J = SketchSpec(n_samples=6, dim=2, seed=0, kind="count").matrix()
        >>> J.shape, np.abs(J).sum(axis=0).tolist()
        ((2, 6), [1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
        """
        if self.identity:
            return np.eye(self.n_samples)
        G = self.gaussian()
        if G is not None:
            return G / math.sqrt(self.dim)
        rows, signs = self.hashes()
        J = np.zeros((self.dim, self.n_samples))
        J[rows, np.arange(self.n_samples)] = signs
        return J

    def column_norm_bound(self) -> float:
        """``max_i ||J e_i||_2``: how far one record's entry moves a sketched column, per unit.

        Replacing record ``i`` changes a column ``a`` only in entry ``i``, so
        ``||J a - J a'||_2 = |a_i - a'_i| ||J e_i||_2``. The paper bounds it
        with the largest singular value of ``J``, which is larger (about
        ``sqrt(n / m)`` times here); the largest column norm is the exact
        worst case over records, and depends on ``J`` alone, never on the data.
        A count sketch's columns have norm 1 by construction.
        """
        G = self.gaussian()
        if G is None:
            return 1.0
        return float(np.sqrt(np.einsum("ij,ij->j", G, G).max() / self.dim))


# --- messages -------------------------------------------------------------------------------


def encode_message(feature: int, sign: int, sketch: np.ndarray) -> bytes:
    """A party's upload: ``sign * (feature + 1)`` as one int64, then the sketch as float64.

    Examples
    --------
    >>> message = encode_message(4, -1, np.array([0.5, 2.0]))
    >>> len(message) == INT_BYTES + 2 * FLOAT_BYTES
    True
    >>> decode_message(message, 2)
    (4, -1, array([0.5, 2. ]))
    """
    signed = np.array([sign * (int(feature) + 1)], dtype=_INT)
    return signed.tobytes() + np.ascontiguousarray(sketch, dtype=_FLOAT).tobytes()


def decode_message(message, m: int) -> tuple[int, int, np.ndarray]:
    """``(feature, sign, sketch)`` from a message of exactly ``INT_BYTES + m FLOAT_BYTES`` bytes.

    Raises
    ------
    ValueError
        If the message has another size, a zero index or non-finite values.

    Examples
    --------
    >>> decode_message(encode_message(0, 1, np.zeros(1)), 1)
    (0, 1, array([0.]))
    >>> decode_message(encode_message(0, 1, np.zeros(1)), 2)
    Traceback (most recent call last):
    ...
    ValueError: a message is one int64 and 2 float64 (24 bytes), got 16 bytes
    """
    if not isinstance(message, bytes | bytearray):
        raise ValueError(f"a message is bytes, got {type(message).__name__}")
    expected = INT_BYTES + m * FLOAT_BYTES
    if len(message) != expected:
        raise ValueError(
            f"a message is one int64 and {m} float64 ({expected} bytes), got {len(message)} bytes"
        )
    signed = int(np.frombuffer(message, dtype=_INT, count=1)[0])
    if signed == 0:
        raise ValueError("the signed index is 0, which names no feature")
    sketch = np.frombuffer(message, dtype=_FLOAT, offset=INT_BYTES).copy()
    if not np.isfinite(sketch).all():
        raise ValueError("the sketch has non-finite values")
    return abs(signed) - 1, (1 if signed > 0 else -1), sketch


# --- the parties ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PartyConfig:
    """What party ``index`` is told before training: public numbers only.

    Attributes
    ----------
    index : int
        ``k``.
    features : ndarray of int
        Global indices of its columns (which party holds which feature is public).
    tau : int
        Coordinates sampled per iteration.
    radius : float
        ``r_k``, radius of its L1 ball.
    sketch : SketchSpec
    clip : float
        ``C``, bound on every per-sample gradient term (``inf``: no clipping).
    feature_bounds : ndarray or None
        ``b_j`` per column: entries are clipped to ``[-b_j, b_j]`` (``None``: not clipped).
    selection : Release or None
        The release of the plan's selection event (Laplace or Gumbel noisy
        max), unbound: the party draws its unit noise from its own stream
        (``None``: exact selection).
    selection_scale : float
        Scale of the selection noise, the release's at the sensitivity ``2 r_k C / n``.
    sketch_noise : Release or None
        The release of the plan's Gaussian sketch event, unbound (``None``: no noise).
    sketch_std : ndarray or None
        Std of the Gaussian noise on the sketch of each column, the release's
        at the sensitivity ``2 b_j max_i ||J e_i||`` (``None``: no noise).
    datafit : str
    centred : bool, default=False
        The broadcast sketches the residual ``A x - y`` (see the module
        docstring); ``False`` is the paper's (the margins ``A x``).
    target_bound : float
        ``B``: the targets are clipped to ``[-B, B]`` (``inf``: not clipped).
    target_noise : Release or None
        The release of the plan's Gaussian target event, unbound (``None``: no noise).
    target_std : float or None
        Std of the Gaussian noise on the sketch of the targets ``J y``, which
        party 0 uploads at iteration 0 when centred (``None``: no noise).
    """

    index: int
    features: np.ndarray
    tau: int
    radius: float
    sketch: SketchSpec
    clip: float = math.inf
    feature_bounds: np.ndarray | None = None
    selection: Release | None = None
    selection_scale: float = 0.0
    sketch_noise: Release | None = None
    sketch_std: np.ndarray | None = None
    datafit: str = _SQUARED
    centred: bool = False
    target_bound: float = math.inf
    target_noise: Release | None = None
    target_std: float | None = None


@dataclass
class PartySetup:
    """Everything an engine needs to build party ``k`` where its data lives.

    ``seed`` is the party's own stream (a spawned ``SeedSequence``), or
    ``None`` with ``secure=True``: the party then draws from its own
    operating system's generator. ``party_type`` is the class built from
    ``config`` (:class:`Party` by default; the screened variant's
    :class:`~dpglm.distributed.vertical_screened.ScreenedParty`).
    """

    config: object
    X: object
    y: np.ndarray
    seed: object = None
    secure: bool = False
    party_type: type | None = None

    def build(self):
        party_type = Party if self.party_type is None else self.party_type
        return party_type(self.config, self.X, self.y, seed=self.seed, secure=self.secure)


def _clip_entries(X, bounds):
    """Every entry of column ``j`` clipped to ``[-b_j, b_j]``: a per-record operation.

    ``X`` itself when every entry lies within its bound (a copy otherwise, in
    the same layout): see :func:`dpglm.clipping.clip_features`.
    """
    return clip_features(X, bounds)


class Party:
    """One party of Algorithm 2: its columns, ``y``, its noise stream and its sampling.

    The raw columns never leave the party through the protocol: :meth:`step`
    returns the only thing it sends, one message of
    ``INT_BYTES + m FLOAT_BYTES`` bytes, and engines call nothing else.

    Parameters
    ----------
    config : PartyConfig
    X : ndarray or sparse matrix of shape (n, d_k)
        Its columns (any layout; kept column-wise).
    y : ndarray of shape (n,)
    seed : SeedSequence, int or None
        Its own noise stream.
    secure : bool, default=False
        Draw from the operating system's generator (``seed`` must be ``None``).
    """

    def __init__(self, config: PartyConfig, X, y, *, seed=None, secure=False):
        self.config = config
        X = as_layout(X, "columns")
        if config.feature_bounds is not None:
            X = _clip_entries(X, np.asarray(config.feature_bounds, dtype=float))
        self._X = X
        self._y = np.ascontiguousarray(y, dtype=float)
        if math.isfinite(config.target_bound):
            # a per-record operation, which bounds what one record moves J y by
            self._y = np.clip(self._y, -config.target_bound, config.target_bound)
        self._n = self._y.shape[0]
        self._source = make_noise_source(seed, secure=secure)
        if (config.sketch_std is None) != (config.sketch_noise is None):
            raise ValueError("sketch_std and sketch_noise are given together, or neither")
        # the plan's releases, drawing from this party's own stream
        if (config.target_std is None) != (config.target_noise is None):
            raise ValueError("target_std and target_noise are given together, or neither")
        self._selection, self._sketch_noise, self._target_noise = (
            None if release is None else release.bind(self._source)
            for release in (config.selection, config.sketch_noise, config.target_noise)
        )
        self._sampling = TauNice(len(config.features), config.tau)
        self._G = config.sketch.gaussian()
        self._hashes = config.sketch.hashes()
        self._inv_sqrt_m = 1.0 / math.sqrt(config.sketch.m)
        self._m = config.sketch.m
        datafit = get_datafit(config.datafit)
        self._code, self._param = datafit.code, datafit.param
        self._clip = np.full(config.tau, config.clip)
        self._no_clip = np.full(self._n, math.inf)
        self._iteration = 0

    @property
    def iteration(self) -> int:
        """Iterations this party has completed."""
        return self._iteration

    def step(self, iteration: int, q) -> bytes:
        """Iteration ``iteration`` of the party given the broadcast sketch ``q``.

        Returns
        -------
        bytes
            The upload: signed global index and sketched active feature.
        """
        if iteration != self._iteration:
            raise out_of_order(self.config.index, iteration, self._iteration)
        q = np.ascontiguousarray(q, dtype=float)
        config, source = self.config, self._source
        if not config.centred:
            s = self._pseudo_margins(q)
            _kernels.derivatives(self._code, self._param, s, self._y, s)
        elif iteration == 0:
            s = -self._y  # x = 0: the residual, exactly
        else:
            s = self._pseudo_margins(q)  # the broadcast sketches the residual already
        cols = self._sampling.sample(source, 1)[0]
        g = self._gradient(cols, s)
        width = 2 * cols.size
        if self._selection is None:
            draws = np.zeros(width)
        else:  # unit draws, which the kernel scales
            draws = np.asarray(self._selection.unit(width), dtype=float)
        c = int(noisy_vertex(g, config.radius, draws, config.selection_scale))
        j, sign = int(cols[c // 2]), 1 - 2 * (c % 2)
        sketch = self._sketch_column(j)
        if config.sketch_std is not None:
            noise = np.asarray(self._sketch_noise.unit(sketch.size), dtype=float)
            sketch += config.sketch_std[j] * noise
        if iteration == 0 and config.centred and config.index == 0:
            target = self._sketch_vector(self._y)
            if config.target_std is not None:
                target += config.target_std * np.asarray(
                    self._target_noise.unit(target.size), dtype=float
                )
            sketch = np.concatenate([sketch, target])
        self._iteration += 1
        return encode_message(int(config.features[j]), sign, sketch)

    def _pseudo_margins(self, q):
        """``u = J^T q``, an estimate of the margins ``A x`` from the public sketch."""
        if self._hashes is not None:
            rows, signs = self._hashes
            return signs * np.asarray(q, dtype=float)[rows]
        if self._G is None:
            return q.copy()
        G = self._G
        u = np.empty(G.shape[1])
        # (1/m) G^T q by the gradient kernel (no clipping), times sqrt(m): u = J^T q.
        # Numba kernels, not BLAS, so that the sum order never depends on the
        # process's BLAS threads (Dask workers run one): engines agree bit for bit
        with threads_for(G.size):
            _kernels.clipped_gradient_dense(G, q, self._no_clip, u)
        u *= G.shape[0] * self._inv_sqrt_m
        return u

    def _gradient(self, cols, s):
        """Clipped partial gradients of the sampled columns, given the derivatives ``s``."""
        out = np.empty(cols.size)
        X = self._X
        if sp.issparse(X):
            sub = X[:, cols]
            _kernels.clipped_gradient_csc(
                sub.data, sub.indices, sub.indptr, self._n, s, self._clip, out
            )
        elif cols.size == X.shape[1]:
            # every column sampled: read the block in place rather than copy it
            full = np.empty(X.shape[1])
            with threads_for(X.size):
                _kernels.clipped_gradient_dense(X, s, self._clip, full)
            out[:] = full[cols]
        else:
            sub = np.asfortranarray(X[:, cols])
            with threads_for(sub.size):
                _kernels.clipped_gradient_dense(sub, s, self._clip, out)
        return out

    def _column(self, j):
        X = self._X
        if sp.issparse(X):
            column = np.zeros(self._n)
            a, b = X.indptr[j], X.indptr[j + 1]
            column[X.indices[a:b]] = X.data[a:b]
            return column
        return np.array(X[:, j], dtype=float)

    def _sketch_column(self, j):
        """``J a_j`` (``a_j`` itself without sketch)."""
        return self._sketch_vector(self._column(j))

    def _sketch_vector(self, v):
        """``J v`` (a copy of ``v`` without sketch)."""
        if self._hashes is not None:
            rows, signs = self._hashes
            # bincount adds in record order, the same bits on every engine
            return np.bincount(rows, weights=signs * v, minlength=self._m)
        if self._G is None:
            return np.array(v, dtype=float)
        out = np.zeros(self._G.shape[0])
        block_margins_dense(self._G, 0, self._n, v, self._inv_sqrt_m, out)
        return out

    def __repr__(self) -> str:
        return (
            f"Party(index={self.config.index}, features={len(self.config.features)}, "
            f"tau={self.config.tau})"
        )


# --- the coordinator ------------------------------------------------------------------------


class Coordinator:
    """The server of Algorithm 2: ``x``, the step sizes and the shared sketch ``q``.

    Parameters
    ----------
    owner : ndarray of int of shape (d,)
        The party holding each feature (public).
    radii : ndarray of shape (K,)
        ``r_k`` of each party's ball.
    steps : ndarray of shape (T,)
        Public step sizes.
    m : int
        Floats in one sketch.
    centred : bool, default=False
        Party 0's first message carries ``m`` more floats, the (noisy) sketch
        of the targets ``J y``, and ``q`` is then the sketch of the residual.

    Attributes
    ----------
    theta : ndarray of shape (d,)
        The iterate ``x``.
    q : ndarray of shape (m,)
        The broadcast: the sketch of the margins, ``J A x`` plus the
        accumulated noise, less the sketch of the targets when centred.
    vertices : list of (int, int)
        The ``(feature, sign)`` received, in order.
    """

    def __init__(self, owner, radii, steps, m, *, centred=False):
        self.owner = np.asarray(owner)
        self.radii = np.asarray(radii, dtype=float)
        self.steps = np.asarray(steps, dtype=float)
        self.m = int(m)
        self.centred = bool(centred)
        self.theta = np.zeros(self.owner.size)
        self.q = np.zeros(self.m)
        self.margins = self.q if not self.centred else np.zeros(self.m)
        self.target = None
        self.vertices: list = []
        self.completed = 0

    @property
    def n_parties(self) -> int:
        return self.radii.size

    def receive(self, iteration: int, messages) -> np.ndarray:
        """Apply every party's message of ``iteration``; return the new ``q`` to broadcast."""
        if iteration != self.completed:
            raise RuntimeError(f"iteration {iteration} after {self.completed} completed")
        if len(messages) != self.n_parties:
            raise RuntimeError(f"{len(messages)} messages for {self.n_parties} parties")
        decoded = []
        for k, message in enumerate(messages):
            first = self.centred and iteration == 0 and k == 0
            try:
                feature, sign, sketch = decode_message(message, 2 * self.m if first else self.m)
            except ValueError as err:
                raise ProtocolError(
                    f"party {k} sent a malformed message at iteration {iteration}: {err}",
                    party=k,
                    iteration=iteration,
                    completed=self.completed,
                ) from None
            if not (0 <= feature < self.owner.size and self.owner[feature] == k):
                raise ProtocolError(
                    f"party {k} named feature {feature} at iteration {iteration}, which it "
                    "does not hold",
                    party=k,
                    iteration=iteration,
                    completed=self.completed,
                )
            if first:
                sketch, self.target = sketch[: self.m], sketch[self.m :]
            decoded.append((feature, sign, sketch))
        gamma = self.steps[iteration]
        self.theta *= 1.0 - gamma
        self.margins *= 1.0 - gamma
        for k, (feature, sign, sketch) in enumerate(decoded):
            a = gamma * sign * self.radii[k]
            self.theta[feature] += a
            self.margins += a * sketch
            self.vertices.append((feature, sign))
        if self.centred:
            self.q = self.margins - self.target
        self.completed += 1
        return self.q.copy()
