"""Block samplings of block-coordinate Frank-Wolfe (BCFW-AS, Lou and Cheung 2018).

At every iteration a sampling draws a random set of blocks out of
``n_blocks``, independently of the other iterations and of the data. Each one
here draws sets of a fixed ``size`` (so that a fit knows before it starts how
many private selections it makes), and is *proper*: every block ``i`` has a
positive inclusion probability ``p_i``. BCFW-AS only needs
``p_min = min_i p_i``, which sets its universal step size
``2 / (p_min t + 2)``.

The samplings of the paper:

``Elementary``
    The deterministic set of all blocks (``p_i = 1``): the blocks' linear
    oracles together are the full Frank-Wolfe oracle of the product set.
``UniformSerial``
    One block, uniformly at random (``p_i = 1 / n_blocks``).
``TauNice``
    ``tau`` distinct blocks, every ``tau``-subset equally likely
    (``p_i = tau / n_blocks``).
``Distributed``
    The ``(K, tau)``-distributed sampling: the blocks are split among ``K``
    parties, and each party draws ``tau`` of its own blocks as a ``tau``-nice
    sampling, independently of the others (``p_i = tau / |P_k|`` for a block
    of party ``k``).

Examples
--------
>>> from dpglm.privacy.mechanisms import make_noise_source
>>> from dpglm.solvers.fw_sampling import Distributed
>>> sampling = Distributed(6, tau=1, parties=2)
>>> sampling.size, sampling.p_min
(2, 0.3333333333333333)
>>> draws = sampling.sample(make_noise_source(0), 4)
>>> draws.shape, bool((draws[:, 0] < 3).all() and (draws[:, 1] >= 3).all())
((4, 2), True)
"""

from __future__ import annotations

import numbers

import numpy as np

from dpglm._kernels.stochastic import distinct_subsets

__all__ = [
    "SAMPLINGS",
    "Distributed",
    "Elementary",
    "Sampling",
    "TauNice",
    "UniformSerial",
    "make_sampling",
]


def _check_count(name, value, low, high) -> int:
    """``value`` as an int in ``[low, high]``, or an error naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must lie in [{low}, {high}], got {value}")
    return int(value)


class Sampling:
    """A proper sampling of ``size`` blocks out of ``n_blocks``, the same at every draw.

    Subclasses set ``name``, ``n_blocks`` and ``size``, and implement
    :attr:`probabilities` and :meth:`sample`.

    Attributes
    ----------
    name : str
        Short name for reports.
    n_blocks : int
        Number of blocks sampled from.
    size : int
        Number of distinct blocks in every draw.
    """

    name = "sampling"
    n_blocks: int
    size: int

    @property
    def probabilities(self) -> np.ndarray:
        """``p_i``, the probability that block ``i`` is in a draw."""
        raise NotImplementedError

    @property
    def p_min(self) -> float:
        """The smallest inclusion probability, which sets BCFW-AS's step size."""
        return float(np.min(self.probabilities))

    def sample(self, source, count: int) -> np.ndarray:
        """``count`` independent draws, one per row of an int64 array ``(count, size)``.

        Parameters
        ----------
        source : NoiseSource
            Where the randomness comes from (see
            :func:`~dpglm.privacy.mechanisms.make_noise_source`).
        count : int
            Number of draws.
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_blocks={self.n_blocks})"


class Elementary(Sampling):
    """Every block at every iteration (``p_i = 1``).

    Examples
    --------
    >>> Elementary(3).sample(None, 2)
    array([[0, 1, 2],
           [0, 1, 2]])
    """

    name = "elementary"

    def __init__(self, n_blocks: int):
        self.n_blocks = _check_count("n_blocks", n_blocks, 1, np.iinfo(np.int32).max)
        self.size = self.n_blocks

    @property
    def probabilities(self) -> np.ndarray:
        return np.ones(self.n_blocks)

    def sample(self, source, count):
        # deterministic: no draw from the source, so a fit's noise stream is unchanged
        return np.tile(np.arange(self.n_blocks, dtype=np.int64), (int(count), 1))


class TauNice(Sampling):
    """``tau`` distinct blocks, every ``tau``-subset with probability ``1 / binom(n_blocks, tau)``.

    Drawn by Floyd's algorithm (:func:`~dpglm._kernels.stochastic.distinct_subsets`),
    ``tau`` uniforms per draw.

    Examples
    --------
    >>> TauNice(4, tau=2).probabilities
    array([0.5, 0.5, 0.5, 0.5])
    """

    name = "tau-nice"

    def __init__(self, n_blocks: int, tau: int):
        self.n_blocks = _check_count("n_blocks", n_blocks, 1, np.iinfo(np.int32).max)
        self.tau = _check_count("tau", tau, 1, self.n_blocks)
        self.size = self.tau

    @property
    def probabilities(self) -> np.ndarray:
        return np.full(self.n_blocks, self.tau / self.n_blocks)

    def sample(self, source, count):
        count = int(count)
        uniforms = np.ascontiguousarray(source.uniform(count * self.tau), dtype=float)
        out = np.empty(count * self.tau, dtype=np.int64)
        marker = np.zeros(self.n_blocks, dtype=np.bool_)
        distinct_subsets(
            self.n_blocks, np.full(count, self.tau, dtype=np.int64), uniforms, marker, out
        )
        return out.reshape(count, self.tau)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_blocks={self.n_blocks}, tau={self.tau})"


class UniformSerial(TauNice):
    """One block, uniformly at random: the ``1``-nice sampling.

    Examples
    --------
    >>> UniformSerial(4).p_min
    0.25
    """

    name = "uniform"

    def __init__(self, n_blocks: int):
        super().__init__(n_blocks, 1)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_blocks={self.n_blocks})"


def _party_labels(parties, n_blocks) -> np.ndarray:
    """One party label per block from ``K`` (contiguous, near-equal split) or the labels."""
    if isinstance(parties, numbers.Integral) and not isinstance(parties, bool):
        K = _check_count("parties", parties, 1, n_blocks)
        return np.repeat(np.arange(K), [len(a) for a in np.array_split(np.arange(n_blocks), K)])
    labels = np.asarray(parties)
    if labels.shape != (n_blocks,) or not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(
            f"parties must be an int or {n_blocks} integer labels (one per block), got {parties!r}"
        )
    K = int(labels.max()) + 1 if labels.size else 0
    missing = np.setdiff1d(np.arange(K), labels)
    if labels.min() < 0 or missing.size:
        raise ValueError(
            f"parties labels must be 0, ..., K - 1 with every party holding a block; "
            f"got labels {np.unique(labels).tolist()}"
        )
    return labels


class Distributed(Sampling):
    """The ``(K, tau)``-distributed sampling: each of ``K`` parties draws ``tau`` of its blocks.

    Parameters
    ----------
    n_blocks : int
    tau : int
        Blocks drawn by every party, at most the blocks of the smallest party.
    parties : int or array_like of int of shape (n_blocks,)
        ``K`` (the blocks split into ``K`` contiguous, near-equal groups), or
        the party of each block, labelled ``0, ..., K - 1``.

    Examples
    --------
    >>> Distributed(5, tau=1, parties=[0, 0, 1, 1, 1]).probabilities.round(3)
    array([0.5  , 0.5  , 0.333, 0.333, 0.333])
    """

    name = "distributed"

    def __init__(self, n_blocks: int, tau: int, parties):
        self.n_blocks = _check_count("n_blocks", n_blocks, 1, np.iinfo(np.int32).max)
        labels = _party_labels(parties, self.n_blocks)
        self.party_blocks = tuple(np.flatnonzero(labels == k) for k in range(labels.max() + 1))
        smallest = min(len(b) for b in self.party_blocks)
        self.tau = _check_count("tau", tau, 1, smallest)
        self._nice = tuple(TauNice(len(b), self.tau) for b in self.party_blocks)
        self.size = self.tau * len(self.party_blocks)

    @property
    def n_parties(self) -> int:
        return len(self.party_blocks)

    @property
    def probabilities(self) -> np.ndarray:
        p = np.empty(self.n_blocks)
        for blocks in self.party_blocks:
            p[blocks] = self.tau / len(blocks)
        return p

    def sample(self, source, count):
        return np.hstack(
            [
                blocks[nice.sample(source, count)]
                for blocks, nice in zip(self.party_blocks, self._nice, strict=True)
            ]
        )

    def __repr__(self) -> str:
        sizes = [len(b) for b in self.party_blocks]
        return f"{type(self).__name__}(n_blocks={self.n_blocks}, tau={self.tau}, parties={sizes})"


SAMPLINGS = ("elementary", "uniform", "tau-nice", "distributed")


def make_sampling(sampling, n_blocks: int, *, tau=None, parties=None) -> Sampling:
    """A :class:`Sampling` of ``n_blocks`` blocks from its name, or ``sampling`` itself.

    Parameters
    ----------
    sampling : Sampling or {"elementary", "uniform", "tau-nice", "distributed"}
    n_blocks : int
    tau : int, optional
        Required by ``"tau-nice"`` and ``"distributed"``, refused otherwise.
    parties : int or array_like of int, optional
        Required by ``"distributed"``, refused otherwise.

    Examples
    --------
    >>> make_sampling("tau-nice", 10, tau=3)
    TauNice(n_blocks=10, tau=3)
    """
    if isinstance(sampling, Sampling):
        if tau is not None or parties is not None:
            raise ValueError("tau and parties only apply to a sampling given by name")
        if sampling.n_blocks != n_blocks:
            raise ValueError(
                f"sampling draws from {sampling.n_blocks} blocks, but there are {n_blocks} blocks"
            )
        return sampling
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling must be a Sampling or one of {SAMPLINGS}, got {sampling!r}")
    needs_tau = sampling in ("tau-nice", "distributed")
    if needs_tau and tau is None:
        raise ValueError(f"the {sampling!r} sampling needs tau")
    if not needs_tau and tau is not None:
        raise ValueError(f"tau does not apply to the {sampling!r} sampling")
    if (sampling == "distributed") != (parties is not None):
        raise ValueError(
            "parties is required by the 'distributed' sampling and refused by the others"
        )
    if sampling == "elementary":
        return Elementary(n_blocks)
    if sampling == "uniform":
        return UniformSerial(n_blocks)
    if sampling == "tau-nice":
        return TauNice(n_blocks, tau)
    return Distributed(n_blocks, tau, parties)
