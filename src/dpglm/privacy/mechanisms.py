"""Noise mechanisms: Gaussian, Laplace and report-noisy-max, vectorised.

Every mechanism draws from a single :class:`NoiseSource`, made once per fit by
:func:`make_noise_source`, so that one ``random_state`` reproduces a whole fit
and a batch of independent runs is one call (any array shape). A fit charged
to a budget keys its stream to the charge as well (``key``, see
:func:`keyed_seed_sequence`): the same seed then gives independent noise to
every charge of one budget, and the same noise again from a fresh budget.

The privacy of each mechanism is that of the matching event of
:mod:`dpglm.privacy.events`, whose noise multiplier is the noise scale divided
by the sensitivity under the plan's neighbouring relation:

* :func:`gaussian_mechanism`: ``GaussianEvent(noise_multiplier=z)``;
* :func:`laplace_mechanism`: ``LaplaceEvent(noise_multiplier=z)``, ``1/z``-DP;
* :func:`report_noisy_max` and :func:`noisy_min`:
  ``NoisyMaxEvent(noise_multiplier=z, noise=...)``, ``2/z``-DP.

The mechanisms require ``0 < noise_multiplier < inf``: a non-private fit does
not call them, so an infinite or zero multiplier is always a mistake.

Solvers do not call them with multipliers of their own: each calibrated event
of a fit's plan is run through a :class:`~dpglm.privacy.releases.Release`,
which draws with the same primitives (:func:`add_gaussian`, :func:`add_laplace`,
:func:`noisy_argmax`) at the scale :func:`noise_scale_of` gives; nothing
outside :mod:`dpglm.privacy` calls them.

Floating-point caveat: all samplers here (including the secure source) turn
uniform floats into noise by floating-point transforms. Such samplers have a
data-dependent set of reachable outputs, which an attacker who sees full-precision
outputs can exploit (Mironov 2012, "On significance of the least significant
bits for differential privacy"). The guarantee of the events holds for the
idealised real-valued noise.

Examples
--------
>>> from dpglm.privacy.mechanisms import gaussian_mechanism, make_noise_source
>>> source = make_noise_source(0)
>>> gaussian_mechanism([1.0, 2.0, 3.0], sensitivity=0.1, noise_multiplier=2.0, source=source).shape
(3,)
"""

from __future__ import annotations

import math
import numbers
import os

import numpy as np

from dpglm.privacy.events import NOISY_MAX_NOISE

__all__ = [
    "NoiseSource",
    "gaussian_mechanism",
    "keyed_seed_sequence",
    "laplace_mechanism",
    "make_noise_source",
    "noisy_min",
    "report_noisy_max",
]

_TWO_PI = 2.0 * math.pi


def size_shape(size) -> tuple:
    """The array shape of a draw of ``size`` (None: a scalar, ``()``)."""
    if size is None:
        return ()
    if isinstance(size, numbers.Integral):
        return (int(size),)
    return tuple(int(s) for s in size)


def _check_scale(scale) -> float:
    scale = float(scale)
    if not (math.isfinite(scale) and scale >= 0.0):
        raise ValueError(f"scale must be a finite number >= 0, got {scale!r}")
    return scale


def _scalar_or_array(values: np.ndarray, size):
    return float(values.reshape(())) if size is None else values


class NoiseSource:
    """One stream of randomness for every draw of a fit.

    Use :func:`make_noise_source` to build one. The numpy-backed source draws
    from a :class:`numpy.random.Generator`, exposed as ``generator`` for numba
    kernels that take a Generator directly; the secure source draws from the
    operating system's cryptographically secure generator and has
    ``generator = None``.

    Every method takes ``size`` as an int, a tuple, or ``None`` for a single
    float (or int).

    Attributes
    ----------
    secure : bool
        Whether draws come from the operating system's CSPRNG.
    generator : numpy.random.Generator or None
        The underlying Generator, ``None`` for the secure source.
    """

    secure = False
    generator = None

    def standard_normal(self, size=None):
        """Draws of ``N(0, 1)``."""
        raise NotImplementedError

    def laplace(self, scale, size=None):
        """Draws of the centred Laplace distribution of scale ``scale``."""
        raise NotImplementedError

    def gumbel(self, scale, size=None):
        """Draws of the Gumbel distribution of location 0 and scale ``scale``."""
        raise NotImplementedError

    def exponential(self, scale, size=None):
        """Draws of the exponential distribution of mean ``scale`` (non-negative)."""
        raise NotImplementedError

    def uniform(self, size=None):
        """Draws of the uniform distribution on ``[0, 1)``."""
        raise NotImplementedError

    def integers(self, high, size=None):
        """Uniform integers in ``[0, high)``."""
        raise NotImplementedError

    def permutation(self, n):
        """A uniformly random permutation of ``range(n)``."""
        raise NotImplementedError


class _GeneratorSource(NoiseSource):
    """Draws from a numpy Generator (PCG64 by default: fast, seedable, not cryptographic)."""

    def __init__(self, generator: np.random.Generator):
        self.generator = generator

    def __repr__(self):
        return f"NoiseSource(generator={self.generator!r})"

    def standard_normal(self, size=None):
        return self.generator.standard_normal(size)

    # Laplace and Gumbel from standard exponentials (ziggurat): numpy's own
    # samplers take two logarithms per draw and run 2x (Laplace) to 3x (Gumbel)
    # slower, which dominates a noisy max over many candidates.
    def laplace(self, scale, size=None):
        scale = _check_scale(scale)
        draws = self.generator.standard_exponential(size) - self.generator.standard_exponential(
            size
        )
        return scale * draws

    def gumbel(self, scale, size=None):
        scale = _check_scale(scale)
        return -scale * np.log(self.generator.standard_exponential(size))

    def exponential(self, scale, size=None):
        return self.generator.exponential(_check_scale(scale), size)

    def uniform(self, size=None):
        return self.generator.random(size)

    def integers(self, high, size=None):
        draws = self.generator.integers(high, size=size)
        return int(draws) if size is None else draws

    def permutation(self, n):
        return self.generator.permutation(int(n))


class _SecureSource(NoiseSource):
    """Draws built from ``os.urandom``: an unpredictable stream that cannot be seeded.

    Uniforms are odd multiples of ``2**-53`` in ``(0, 1)`` (52 random bits
    each), so logarithms are always finite; normals come from Box-Muller,
    Laplace from a random sign times an exponential, Gumbel and exponential by
    inverse CDF.
    """

    secure = True

    def __repr__(self):
        return "NoiseSource(secure=True)"

    @staticmethod
    def _words(count: int) -> np.ndarray:
        return np.frombuffer(os.urandom(8 * count), dtype=np.uint64)

    def _open_uniform(self, count: int) -> np.ndarray:
        # (2k + 1) / 2**53 for k on 52 bits: exactly representable, symmetric about 1/2,
        # never 0 or 1
        k = self._words(count) >> np.uint64(12)
        return (2.0 * k.astype(np.float64) + 1.0) * 2.0**-53

    def standard_normal(self, size=None):
        shape = size_shape(size)
        count = math.prod(shape)
        pairs = (count + 1) // 2
        u = self._open_uniform(2 * pairs)
        radius = np.sqrt(-2.0 * np.log(u[:pairs]))
        angle = _TWO_PI * u[pairs:]
        draws = np.concatenate([radius * np.cos(angle), radius * np.sin(angle)])[:count]
        return _scalar_or_array(draws.reshape(shape), size)

    def exponential(self, scale, size=None):
        scale = _check_scale(scale)
        shape = size_shape(size)
        draws = -scale * np.log(self._open_uniform(math.prod(shape)))
        return _scalar_or_array(draws.reshape(shape), size)

    def laplace(self, scale, size=None):
        scale = _check_scale(scale)
        shape = size_shape(size)
        count = math.prod(shape)
        words = self._words(count)
        # the low bit gives the sign, the 52 high bits the uniform of the magnitude
        u = (2.0 * (words >> np.uint64(12)).astype(np.float64) + 1.0) * 2.0**-53
        sign = 1.0 - 2.0 * (words & np.uint64(1)).astype(np.float64)
        draws = sign * (-scale * np.log(u))
        return _scalar_or_array(draws.reshape(shape), size)

    def gumbel(self, scale, size=None):
        scale = _check_scale(scale)
        shape = size_shape(size)
        draws = -scale * np.log(-np.log(self._open_uniform(math.prod(shape))))
        return _scalar_or_array(draws.reshape(shape), size)

    def uniform(self, size=None):
        shape = size_shape(size)
        draws = self._open_uniform(math.prod(shape))
        return _scalar_or_array(draws.reshape(shape), size)

    def integers(self, high, size=None):
        high = int(high)
        if not 1 <= high <= 2**63:
            raise ValueError(f"high must lie in [1, 2**63], got {high}")
        shape = size_shape(size)
        count = math.prod(shape)
        # rejection keeps the draws exactly uniform: accept words below the largest
        # multiple of high that fits in 64 bits
        limit = (2**64 // high) * high
        out = np.empty(count, dtype=np.int64)
        filled = 0
        while filled < count:
            words = self._words(count - filled)
            if limit < 2**64:
                words = words[words < np.uint64(limit)]
            values = (words % np.uint64(high)).astype(np.int64)
            out[filled : filled + values.size] = values
            filled += values.size
        out = out.reshape(shape)
        return int(out.reshape(())) if size is None else out

    def permutation(self, n):
        n = int(n)
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        # sorting i.i.d. keys gives a uniform order when the keys are distinct; redraw
        # on the (astronomically rare) tie
        while True:
            keys = self._words(n)
            if np.unique(keys).size == n:
                return np.argsort(keys, kind="stable")


def _check_key(key) -> tuple:
    key = tuple(key)
    if not key or not all(
        isinstance(w, numbers.Integral) and not isinstance(w, bool) and 0 <= w < 2**32 for w in key
    ):
        raise ValueError(f"key must be a non-empty sequence of 32-bit words, got {key!r}")
    return tuple(int(w) for w in key)


def keyed_seed_sequence(random_state, key) -> np.random.SeedSequence:
    """The seed of a stream that depends on ``random_state`` and on ``key``.

    ``key`` (e.g. :attr:`~dpglm.privacy.budget.Charge.noise_key`) is appended
    to the spawn key of the seed's :class:`numpy.random.SeedSequence`: equal
    seeds with different keys give independent streams, and neither meets the
    unkeyed stream of the seed (whose spawn key is shorter).

    Parameters
    ----------
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator
        ``None`` is fresh entropy from the operating system; an int or a
        SeedSequence gives its entropy (a SeedSequence keeps its own spawn key,
        then ``key``); a Generator gives four draws of its stream as entropy
        (its state advances by them).
    key : sequence of int
        Words in ``[0, 2**32)``.

    Returns
    -------
    numpy.random.SeedSequence

    Examples
    --------
    >>> a = np.random.default_rng(keyed_seed_sequence(0, [1])).standard_normal()
    >>> b = np.random.default_rng(keyed_seed_sequence(0, [2])).standard_normal()
    >>> c = np.random.default_rng(keyed_seed_sequence(0, [1])).standard_normal()
    >>> a == c, a == b, a == np.random.default_rng(0).standard_normal()
    (True, False, False)
    """
    key = _check_key(key)
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.SeedSequence(
            random_state.entropy,
            spawn_key=(*random_state.spawn_key, *key),
            pool_size=random_state.pool_size,
        )
    if isinstance(random_state, np.random.Generator):
        entropy = random_state.integers(0, 2**63, size=4).tolist()
        return np.random.SeedSequence(entropy, spawn_key=key)
    if random_state is None:
        return np.random.SeedSequence(None, spawn_key=key)
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"a seed must be a non-negative int, got {random_state!r}")
        return np.random.SeedSequence(int(random_state), spawn_key=key)
    raise TypeError(
        "random_state must be None, an int, a numpy SeedSequence or a numpy Generator to be "
        f"keyed, got {type(random_state).__name__}"
    )


def make_noise_source(random_state=None, *, secure: bool = False, key=None) -> NoiseSource:
    """The noise source of a fit.

    Parameters
    ----------
    random_state : None, int, numpy.random.SeedSequence, numpy.random.Generator or NoiseSource
        ``None`` seeds a fresh Generator from the operating system; an int or a
        SeedSequence seeds a new PCG64 Generator, so the same value reproduces
        the same draws; a Generator is used as is (its state advances, so one
        seeded stream can serve a whole fit); a NoiseSource is returned
        unchanged.
    secure : bool, default=False
        Draw from the operating system's cryptographically secure generator
        (``os.urandom``) instead of numpy's PCG64, which is fast but
        predictable from its state. A secure source cannot be seeded: it
        refuses any ``random_state`` other than ``None`` (or a secure source).
        Its ``generator`` is ``None``, so solvers whose numba kernels draw from
        a Generator do not support secure mode and say so.
    key : sequence of int, optional
        Key of the fit's stream, e.g. the
        :attr:`~dpglm.privacy.budget.Charge.noise_key` of its budget charge: an
        int, a SeedSequence or a Generator then seeds the stream of
        :func:`keyed_seed_sequence` instead (a Generator gives four draws to
        it). ``None`` (and the secure source, and a NoiseSource, which are not
        seeds) ignore it: a NoiseSource's stream is the caller's to keep apart
        from other releases.

    Returns
    -------
    NoiseSource

    Raises
    ------
    ValueError
        If ``secure=True`` and a seed, Generator or non-secure source is given.
    TypeError
        If ``random_state`` has an unsupported type.

    Notes
    -----
    Secure mode makes the noise stream unpredictable (an attacker cannot
    recover it from a seed or a Generator state), but it turns random bits into
    noise with floating-point arithmetic like any float sampler, so it is not
    hardened against floating-point attacks on the low-order bits of released
    values (Mironov 2012). The privacy report records whether it was used.

    Examples
    --------
    >>> a = make_noise_source(42).standard_normal(3)
    >>> b = make_noise_source(42).standard_normal(3)
    >>> bool((a == b).all())
    True
    >>> source = make_noise_source(secure=True)
    >>> source.secure, source.generator is None
    (True, True)
    >>> c = make_noise_source(42, key=[7]).standard_normal(3)
    >>> bool((a == c).any())
    False
    """
    if isinstance(random_state, NoiseSource):
        if secure and not random_state.secure:
            raise ValueError(
                "secure=True needs a secure noise source; a seeded or Generator-backed "
                "source is predictable from its seed"
            )
        return random_state
    if secure:
        if random_state is not None:
            raise ValueError(
                "secure=True refuses a seed: random_state must be None, because a seed "
                f"or a Generator makes the noise predictable (got {random_state!r})"
            )
        return _SecureSource()
    if key is not None and random_state is not None:
        return _GeneratorSource(np.random.default_rng(keyed_seed_sequence(random_state, key)))
    if isinstance(random_state, np.random.Generator):
        return _GeneratorSource(random_state)
    if random_state is None or isinstance(random_state, np.random.SeedSequence):
        return _GeneratorSource(np.random.default_rng(random_state))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return _GeneratorSource(np.random.default_rng(int(random_state)))
    raise TypeError(
        "random_state must be None, an int, a numpy SeedSequence, a numpy Generator or a "
        f"NoiseSource, got {type(random_state).__name__}"
    )


def noise_scale_of(noise_multiplier, *factors, over=None):
    """``noise_multiplier * factors[0] * ... * factors[-1] / over``, multiplied left to right.

    The arithmetic of every noise scale in dpglm: the mechanisms below and
    :meth:`Release.scale <dpglm.privacy.releases.Release.scale>` (through which
    the solvers get theirs) call it, and nothing else multiplies a noise
    multiplier by a sensitivity. The sensitivity is given as it is derived
    (e.g. ``2 C_j / n``, the mean of terms clipped to ``C_j``, as
    ``2.0, C_j, over=n``): floating-point products are not associative, so the
    order is part of the result.

    Parameters
    ----------
    noise_multiplier : float
    *factors : float or ndarray
        The sensitivity's factors; arrays give per-coordinate scales.
    over : float or ndarray, optional
        The sensitivity's divisor (none when omitted).

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> noise_scale_of(3.0, 2.0, 0.5, over=4.0)
    0.75
    """
    scale = noise_multiplier
    for factor in factors:
        scale = scale * factor
    return scale if over is None else scale / over


def _check_parameters(sensitivity, noise_multiplier) -> float:
    """The noise scale ``noise_multiplier * sensitivity``, after validating both."""
    try:
        sensitivity = float(sensitivity)
        noise_multiplier = float(noise_multiplier)
    except (TypeError, ValueError):
        raise TypeError(
            f"sensitivity and noise_multiplier must be numbers, got {sensitivity!r} "
            f"and {noise_multiplier!r}"
        ) from None
    if not (math.isfinite(sensitivity) and sensitivity >= 0.0):
        raise ValueError(f"sensitivity must be a finite number >= 0, got {sensitivity!r}")
    if not (math.isfinite(noise_multiplier) and noise_multiplier > 0.0):
        raise ValueError(
            "noise_multiplier must satisfy 0 < noise_multiplier < inf (a non-private fit "
            f"does not call a mechanism), got {noise_multiplier!r}"
        )
    return noise_scale_of(noise_multiplier, sensitivity)


def check_noise_source(source) -> NoiseSource:
    """``source`` itself if it is a :class:`NoiseSource`, else a ``TypeError``."""
    if not isinstance(source, NoiseSource):
        raise TypeError(
            f"source must be a NoiseSource (see make_noise_source), got {type(source).__name__}"
        )
    return source


def finite_array(values, name: str) -> np.ndarray:
    """``values`` as a float64 array, refused (``ValueError`` naming ``name``) unless finite."""
    values = np.asarray(values, dtype=np.float64)
    # a non-finite input would pass through the noise unchanged and reveal itself
    if not np.isfinite(values).all():
        raise ValueError(f"{name} must be finite")
    return values


def _release(values: np.ndarray, noise: np.ndarray):
    released = values + noise
    return float(released) if values.ndim == 0 else released


def add_gaussian(values, sigma: float, source):
    """``values`` plus Gaussian noise of std ``sigma`` (validated by the caller)."""
    source = check_noise_source(source)
    values = finite_array(values, "values")
    noise = source.standard_normal(values.shape if values.ndim else None)
    return _release(values, sigma * np.asarray(noise))


def add_laplace(values, scale: float, source):
    """``values`` plus Laplace noise of scale ``scale`` (validated by the caller)."""
    source = check_noise_source(source)
    values = finite_array(values, "values")
    noise = source.laplace(scale, values.shape if values.ndim else None)
    return _release(values, np.asarray(noise))


def gaussian_mechanism(values, *, sensitivity, noise_multiplier, source):
    """Release ``values`` plus Gaussian noise of std ``noise_multiplier * sensitivity``.

    Parameters
    ----------
    values : float or array_like
        The query value(s), any shape; noise is i.i.d. elementwise.
    sensitivity : float
        L2 sensitivity ``Delta`` of the whole array under the plan's
        neighbouring relation (finite, ``>= 0``).
    noise_multiplier : float
        ``sigma / Delta``, with ``0 < noise_multiplier < inf``.
    source : NoiseSource

    Returns
    -------
    float or ndarray
        Same shape as ``values``.

    Notes
    -----
    The privacy is that of ``GaussianEvent(noise_multiplier=noise_multiplier)``
    (``1 / noise_multiplier``-GDP).

    Examples
    --------
    >>> source = make_noise_source(0)
    >>> out = gaussian_mechanism(
    ...     np.zeros((2, 3)), sensitivity=1.0, noise_multiplier=0.5, source=source
    ... )
    >>> out.shape
    (2, 3)
    """
    return add_gaussian(values, _check_parameters(sensitivity, noise_multiplier), source)


def laplace_mechanism(values, *, sensitivity, noise_multiplier, source):
    """Release ``values`` plus Laplace noise of scale ``noise_multiplier * sensitivity``.

    Parameters
    ----------
    values : float or array_like
        The query value(s), any shape; noise is i.i.d. elementwise.
    sensitivity : float
        L1 sensitivity ``Delta`` of the whole array under the plan's
        neighbouring relation (finite, ``>= 0``).
    noise_multiplier : float
        ``b / Delta`` for the Laplace scale ``b``, with ``0 < noise_multiplier < inf``.
    source : NoiseSource

    Returns
    -------
    float or ndarray
        Same shape as ``values``.

    Notes
    -----
    The privacy is that of ``LaplaceEvent(noise_multiplier=noise_multiplier)``:
    ``1 / noise_multiplier``-DP.

    Examples
    --------
    >>> source = make_noise_source(0)
    >>> isinstance(
    ...     laplace_mechanism(3.0, sensitivity=1.0, noise_multiplier=1.0, source=source), float
    ... )
    True
    """
    return add_laplace(values, _check_parameters(sensitivity, noise_multiplier), source)


def noisy_argmax(scores: np.ndarray, scale: float, noise: str, source: NoiseSource):
    """Argmax over the last axis of ``scores`` plus noise of ``scale`` (validated by the caller).

    The primitive of :func:`report_noisy_max` and of a
    :class:`~dpglm.privacy.releases.Release`'s selections.
    """
    if noise not in NOISY_MAX_NOISE:
        raise ValueError(f"noise must be one of {NOISY_MAX_NOISE}, got {noise!r}")
    if scores.ndim == 0 or scores.shape[-1] == 0:
        raise ValueError(
            f"scores must have at least one candidate on their last axis, got shape {scores.shape}"
        )
    if noise == "laplace":
        draws = source.laplace(scale, scores.shape)
    elif noise == "gumbel":
        draws = source.gumbel(scale, scores.shape)
    else:
        draws = source.exponential(scale, scores.shape)
    # the noise is added: with one-sided exponential noise, subtracting it would
    # favour low scores and lose the guarantee
    index = np.argmax(scores + draws, axis=-1)
    return int(index) if scores.ndim == 1 else index


def report_noisy_max(scores, *, sensitivity, noise_multiplier, noise="gumbel", source):
    """Index of the largest score plus i.i.d. noise of scale ``noise_multiplier * sensitivity``.

    Parameters
    ----------
    scores : array_like of shape (..., k)
        Candidate scores on the last axis; leading axes are independent
        selections (a batch of runs is one call).
    sensitivity : float
        ``Delta``, the largest change of any single score between neighbours
        (finite, ``>= 0``).
    noise_multiplier : float
        Noise scale over ``Delta``, with ``0 < noise_multiplier < inf``.
    noise : {"gumbel", "laplace", "exponential"}, default="gumbel"
        ``"gumbel"`` gives the exponential mechanism
        (``P(j) ~ exp(score_j / scale)``); ``"laplace"`` the classic
        report-noisy-max; ``"exponential"`` one-sided noise, which is
        permute-and-flip.
    source : NoiseSource

    Returns
    -------
    int or ndarray of int
        The selected index; shape ``scores.shape[:-1]``. Ties have
        probability zero.

    Notes
    -----
    Each selection has the privacy of
    ``NoisyMaxEvent(noise_multiplier=noise_multiplier, noise=noise)``:
    ``2 / noise_multiplier``-DP for arbitrary scores, ``1 / noise_multiplier``
    when the scores are monotone (``monotone=True`` in the event).

    Examples
    --------
    >>> source = make_noise_source(0)
    >>> report_noisy_max([0.0, 100.0, 1.0], sensitivity=1.0, noise_multiplier=1.0, source=source)
    1
    >>> report_noisy_max(
    ...     np.zeros((4, 5)), sensitivity=1.0, noise_multiplier=1.0, noise="laplace", source=source
    ... ).shape
    (4,)
    """
    scale = _check_parameters(sensitivity, noise_multiplier)
    source = check_noise_source(source)
    scores = finite_array(scores, "scores")
    return noisy_argmax(scores, scale, noise, source)


def noisy_min(values, *, sensitivity, noise_multiplier, noise="gumbel", source):
    """Index of the smallest value, selected privately: report-noisy-max of ``-values``.

    DP-AGD uses it to choose the candidate step size with the smallest loss.

    Parameters
    ----------
    values : array_like of shape (..., k)
        Candidate values on the last axis; leading axes are independent selections.
    sensitivity : float
        ``Delta``, the largest change of any single value between neighbours.
    noise_multiplier : float
        Noise scale over ``Delta``, with ``0 < noise_multiplier < inf``.
    noise : {"gumbel", "laplace", "exponential"}, default="gumbel"
        See :func:`report_noisy_max`.
    source : NoiseSource

    Returns
    -------
    int or ndarray of int
        The selected index; shape ``values.shape[:-1]``.

    Notes
    -----
    The privacy is that of
    ``NoisyMaxEvent(noise_multiplier=noise_multiplier, noise=noise)``, as for
    :func:`report_noisy_max` (negating the values keeps their sensitivity).

    Examples
    --------
    >>> source = make_noise_source(0)
    >>> noisy_min([5.0, -100.0, 4.0], sensitivity=1.0, noise_multiplier=1.0, source=source)
    1
    """
    scale = _check_parameters(sensitivity, noise_multiplier)
    source = check_noise_source(source)
    values = finite_array(values, "values")
    return noisy_argmax(-values, scale, noise, source)
