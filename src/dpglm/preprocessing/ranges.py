"""Private ranges of the columns: noisy log-scale histograms, thresholded.

What a solver needs from raw data before it can train privately is a bound
on every entry it reads (its clipping and its smoothness constants assume
one), and, to train well, each column on a comparable scale. dpglm estimates
both privately, inside the fit's budget, the way the approximate-bounds
mechanism of Google's differential privacy library and the private
preprocessing of Biswas et al. (CoinPress, NeurIPS 2020) and Amin et al.
(ICML 2019, "Bounding user contributions") do: from a **noisy histogram on
a signed logarithmic grid**, whose bins need no prior knowledge of the scale
(a value of ``1e-5`` and one of ``1e9`` each fall in a bin of their own
octave), and whose sensitivity does not depend on the data:

- **Per-column histograms** (:data:`COLUMNS_LABEL`). Every record puts each
  of its ``p`` features in one bin of :data:`GRID`; replacing a record moves
  one count out of one bin and into another in each column: L2 sensitivity
  ``sqrt(2 p)``, whatever the values (a NaN or an infinity never reaches the
  grid: the data are checked finite first, and magnitudes beyond the grid
  fall in its end bins).
- **The target's histogram** (:data:`TARGET_LABEL`, regression only), on its
  own: sensitivity ``sqrt(2)``, so that the target's range is read however
  many features there are.
- **Row extremes** (:data:`ROWS_LABEL`). Every record puts its smallest and
  its largest feature value (implicit zeros of a sparse row included) in one
  bin each of two histograms: L2 sensitivity ``2``. Its noise does not grow
  with the number of columns, so it gives a common range when a column's own
  histogram is too noisy to read (many columns and few records, e.g. sparse
  text with fifteen thousand columns). A dense record of more than 100
  features gives its 1 % quantiles instead (:func:`row_rank`), whose range
  is not that of its few widest columns.

Each is released once with Gaussian noise, as an event of the fit's plan
(part :data:`PART`), all calibrated together to a share of the fit's budget.
Everything after the release is post-processing of the noisy counts: a bin
*passes* when its noisy count exceeds the threshold ``tau = sigma z`` with
``z`` the ``1 - beta / N`` normal quantile over the release's ``N`` bins, so
that the chance of any empty bin passing is at most ``beta`` (see
:data:`FALSE_BIN_RATE`); sums of 2 adjacent bins are tested too (4 and 8 when
nothing else passes), for records spread over several bins. A bin whose
magnitudes lie more than two octaves above those of every bin that passes the
stricter threshold of :data:`FAR_BIN_RATE` must pass that one too: a false bin
far above the records would stretch the range by orders of magnitude. (The
windows that then extend a span outward keep the first threshold: held to the
stricter one, they cut the thin tails of skewed columns, communities' R^2 0.495
against 0.555 at epsilon 1, and one release in about 4,000 still stretches a
range through a false window.) A column's range
runs from the lower edge of its lowest passing bin to the upper edge of its
highest, then grows outward while a window of bins just beyond it holds
records (a skewed column's thin tail); a column with no passing
bin takes the range of the row extremes (their fullest four-octave bins when
none passes), and a target with none of its own ``[-1, 1]`` (:data:`UNIT_RANGE`). Records
outside a range are clipped to it (a bin that does not pass holds few
records, fewer than ``tau`` plus noise).

Examples
--------
>>> import numpy as np
>>> from dpglm.privacy.mechanisms import make_noise_source
>>> from dpglm.privacy.spending import spend
>>> X = np.random.default_rng(0).normal(100.0, 10.0, size=(20_000, 2))
>>> plan = RangePlan.create(2, epsilon=0.5, delta=1e-8)
>>> spent = spend(plan.plan, epsilon=0.5, delta=1e-8, random_state=0)
>>> ranges, _ = plan.release(X, None, [spent.release(i) for i in range(2)])
>>> ranges.low, ranges.high, ranges.sources
(array([64., 64.]), array([128., 128.]), ('column', 'column'))
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.special import ndtri

from dpglm.privacy.events import GaussianEvent, PrivacyPlan
from dpglm.privacy.spending import calibrate_cached
from dpglm.privacy.targets import Share

__all__ = [
    "COLUMNS_LABEL",
    "FALSE_BIN_RATE",
    "GRID",
    "PART",
    "ROWS_LABEL",
    "TARGET_LABEL",
    "UNIT_RANGE",
    "LogGrid",
    "RangePlan",
    "Ranges",
]

#: the part of the report that holds the range estimate
PART = "preprocessing"
#: the label of the per-column histograms' release
COLUMNS_LABEL = "per-column log-scale histograms (Gaussian; L2 sensitivity sqrt(2 p), p features)"
#: the label of the target's histogram
TARGET_LABEL = "log-scale histogram of the target (Gaussian; sensitivity sqrt(2))"
#: the label of the row extremes' release
ROWS_LABEL = (
    "histograms of each record's smallest and largest feature, or its 1% quantiles beyond 100 "
    "dense features (Gaussian; sensitivity 2)"
)
#: the chance that some empty bin of a release passes the threshold
FALSE_BIN_RATE = 0.01
#: the same chance for the bins far from the records, whose passing would stretch a range
#: by orders of magnitude (a target's to 1.9e8 where its records end at 5e5, R^2 of -325 on
#: the StatLib California table: once in 600 fits with the one threshold); Google's
#: approximate bounds take 1e-9 for every bin
FAR_BIN_RATE = 1e-6
#: how far from the bins that pass the far threshold a bin may pass the near one: two
#: octaves (records beyond are for _extended, one adjacent window at a time)
NEAR_BINS = 4
#: the range of a column no histogram could read
UNIT_RANGE = (-1.0, 1.0)


@dataclass(frozen=True)
class LogGrid:
    """A signed logarithmic grid: ``0`` alone, and ``per_octave`` bins in each octave.

    Magnitudes run from ``2**low`` to ``2**high``, in bins closed on the right
    (``(e_m, e_m+1]``); smaller magnitudes fall in the first bin of their sign
    (down to 0, excluded), larger ones in the last (whose upper edge,
    ``2**high``, is where they are clipped). Bin
    ``K + 1 + m`` holds the positive values of magnitude bin ``m``, bin ``K``
    the zeros, and bin ``K - 1 - m`` the negative ones, ``K`` magnitude bins
    per sign.

    Examples
    --------
    >>> grid = LogGrid(low=-2, high=2, per_octave=1)
    >>> grid.index(np.array([-3.0, 0.0, 0.3, 1.5, 100.0]))
    array([0, 4, 5, 7, 8])
    >>> grid.lower(np.array([0, 4, 7])), grid.upper(np.array([0, 4, 7]))
    (array([-4.,  0.,  1.]), array([-2.,  0.,  2.]))
    """

    low: int = -24
    high: int = 40
    per_octave: int = 2

    @property
    def magnitudes(self) -> int:
        """``K``, the number of magnitude bins per sign."""
        return (self.high - self.low) * self.per_octave

    @property
    def size(self) -> int:
        """``2 K + 1``: every bin of the grid."""
        return 2 * self.magnitudes + 1

    def _edges(self):
        k = np.arange(self.magnitudes + 1)
        edges = np.exp2(self.low + k / self.per_octave)
        edges[0] = 0.0  # the first bin reaches down to 0
        return edges

    def index(self, values: np.ndarray) -> np.ndarray:
        """The bin of every value (finite values; any shape)."""
        values = np.asarray(values, dtype=float)
        K = self.magnitudes
        with np.errstate(divide="ignore"):
            octave = np.log2(np.abs(values))
        # bins closed on the right, (e_m, e_m+1]: a magnitude at a power of two (the 1 of
        # binary data, the 8 of a byte's range) is the upper edge of its bin, not the lower
        m = np.ceil((octave - self.low) * self.per_octave) - 1
        m = np.clip(np.nan_to_num(m, neginf=0.0), 0, K - 1).astype(np.int64)
        return np.where(values > 0, K + 1 + m, np.where(values < 0, K - 1 - m, K))

    def lower(self, bins: np.ndarray) -> np.ndarray:
        """The lower edge of every bin."""
        bins = np.asarray(bins)
        K, edges = self.magnitudes, self._edges()
        positive = edges[np.clip(bins - K - 1, 0, K)]
        negative = -edges[np.clip(K - bins, 0, K)]
        return np.where(bins > K, positive, np.where(bins < K, negative, 0.0))

    def upper(self, bins: np.ndarray) -> np.ndarray:
        """The upper edge of every bin."""
        bins = np.asarray(bins)
        K, edges = self.magnitudes, self._edges()
        positive = edges[np.clip(bins - K, 0, K)]
        negative = -edges[np.clip(K - 1 - bins, 0, K)]
        return np.where(bins > K, positive, np.where(bins < K, negative, 0.0))


#: the grid of every range estimate: half-octave bins from 2**-24 to 2**40 (about 6e-8
#: to 1.1e12), 257 bins
GRID = LogGrid()


#: rows whose bins :func:`column_counts` computes at once
COUNT_BLOCK_ROWS = 65_536


def column_counts(X, grid: LogGrid = GRID) -> np.ndarray:
    """Counts of every column's values in the grid's bins.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, p)
        Finite values; a sparse matrix's implicit zeros are counted in the
        zero bin without being read.

    Returns
    -------
    ndarray of shape (p, grid.size)

    Examples
    --------
    >>> counts = column_counts(np.array([[1.0, 0.0], [3.0, 0.0]]), grid=LogGrid(-1, 2, 1))
    >>> counts.shape, counts[0].nonzero()[0], counts[1].nonzero()[0]
    ((2, 7), array([4, 6]), array([3]))
    """
    n, p = X.shape
    if sp.issparse(X):
        X = sp.csc_array(X)
        nonzero = np.diff(X.indptr)
        columns = np.repeat(np.arange(p), nonzero)
        keys = columns * grid.size + grid.index(X.data)
        counts = np.bincount(keys, minlength=p * grid.size).reshape(p, grid.size).astype(float)
        # the implicit zeros: every stored entry, an explicit zero included, is counted once
        counts[:, grid.magnitudes] += n - nonzero
    else:
        X = np.asarray(X, dtype=float)
        counts = np.zeros(p * grid.size, dtype=np.int64)
        offsets = np.arange(p) * grid.size
        # a block of rows at a time: the bin indices of a block, not of every entry, are
        # held at once (a count is a sum over records, so the blocks' counts add up)
        for start in range(0, n, COUNT_BLOCK_ROWS):
            keys = offsets + grid.index(X[start : start + COUNT_BLOCK_ROWS])
            counts += np.bincount(keys.ravel(), minlength=p * grid.size)
        counts = counts.reshape(p, grid.size).astype(float)
    return counts


def extremes(X, axis: int) -> tuple:
    """The smallest and largest value along ``axis`` (a sparse matrix's implicit zeros count).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> extremes(sp.csr_array(np.array([[0.0, 2.0], [-1.0, 0.0]])), axis=0)
    (array([-1.,  0.]), array([0., 2.]))
    """
    if sp.issparse(X):
        X = sp.csr_array(X)
        low, high = X.min(axis=axis), X.max(axis=axis)
        low = low.toarray() if sp.issparse(low) else low
        high = high.toarray() if sp.issparse(high) else high
        return np.asarray(low, dtype=float).ravel(), np.asarray(high, dtype=float).ravel()
    X = np.asarray(X, dtype=float)
    return X.min(axis=axis), X.max(axis=axis)


#: a dense record gives its ROW_QUANTILE-th quantiles, not its extremes (see row_rank)
ROW_QUANTILE = 0.01


def row_rank(n_features: int, sparse: bool) -> int:
    """``k``: the rank, from each end, of the values a record gives the row histograms.

    ``ceil(ROW_QUANTILE p)`` for dense records: each record's 1 % quantiles,
    its ``k``-th smallest and ``k``-th largest value. With hundreds of
    columns a record's extremes are those of its few widest columns, and a
    range read from them leaves every other column a sliver of ``[-1, 1]``
    away from its centre (madelon's 500 columns: ``[256, 1024]`` from the
    extremes, around values near 480). Sparse records give their extremes
    (``k = 1``): their implicit zeros would be most of any quantile. The
    sensitivity is the same whatever ``k``: one count per record in each of
    the two histograms.

    Examples
    --------
    >>> row_rank(8, sparse=False), row_rank(500, sparse=False), row_rank(500, sparse=True)
    (1, 5, 1)
    """
    if sparse:
        return 1
    return max(1, math.ceil(ROW_QUANTILE * n_features - 1e-9))


def row_quantiles(X) -> tuple:
    """Each row's ``k``-th smallest and ``k``-th largest value, ``k`` = :func:`row_rank`
    (a sparse row's extremes, its implicit zeros included).

    Examples
    --------
    >>> X = np.arange(200.0).reshape(1, 200)
    >>> row_quantiles(X)
    (array([1.]), array([198.]))
    """
    if not sp.issparse(X):
        X = np.asarray(X, dtype=float)
        p = X.shape[1]
        k = row_rank(p, sparse=False)
        if k > 1:
            parted = np.partition(X, (k - 1, p - k), axis=1)
            return parted[:, k - 1], parted[:, p - k]
    return extremes(X, axis=1)


def row_extreme_counts(X, grid: LogGrid = GRID) -> np.ndarray:
    """Counts of every row's low and high value (:func:`row_quantiles`).

    Returns
    -------
    ndarray of shape (2, grid.size)
        The histogram of the rows' low values, then of their high values:
        their extremes for sparse rows and dense rows of at most 100 values,
        else their 1 % quantiles.

    Examples
    --------
    >>> counts = row_extreme_counts(np.array([[1.0, -3.0], [2.0, 5.0]]), grid=LogGrid(-1, 3, 1))
    >>> counts[0].nonzero()[0], counts[1].nonzero()[0]
    (array([1, 6]), array([5, 8]))
    """
    lowest, highest = row_quantiles(X)
    return np.vstack(
        [
            np.bincount(grid.index(lowest), minlength=grid.size),
            np.bincount(grid.index(highest), minlength=grid.size),
        ]
    ).astype(float)


@dataclass(frozen=True)
class Ranges:
    """The released range ``[low_j, high_j]`` of every column, and where each came from.

    Attributes
    ----------
    low, high : ndarray of shape (k,)
        Finite, ``low <= high``.
    sources : tuple of str
        Per column: ``"column"`` (its own histogram), ``"rows"`` (the row
        extremes), ``"rows (best guess)"`` (the fullest wide bins of the row
        extremes, none of them above its threshold) or ``"unit"``
        (:data:`UNIT_RANGE`, nothing could be read).
    """

    low: np.ndarray
    high: np.ndarray
    sources: tuple


def _merged(noisy, width):
    """Sums of ``width`` adjacent bins of each sign (zeros alone), and each sum's first bin."""
    K = (noisy.shape[1] - 1) // 2
    negative = noisy[:, :K][:, ::-1].reshape(len(noisy), K // width, width).sum(axis=2)
    positive = noisy[:, K + 1 :].reshape(len(noisy), K // width, width).sum(axis=2)
    sums = np.hstack([negative[:, ::-1], noisy[:, K : K + 1], positive])
    # the original bins each merged bin spans, from its lowest to its highest
    starts = np.concatenate(
        [np.arange(K // width) * width, [K], K + 1 + np.arange(K // width) * width]
    )
    ends = np.concatenate(
        [np.arange(K // width) * width + width - 1, [K], K + width + np.arange(K // width) * width]
    )
    return sums, starts, ends


def _span(noisy, sigma, levels):
    """``(first, last, found, any)``: the lowest and highest bin of each row's passing bins.

    ``found``: some bin of non-zero values passes; ``any``: some bin passes.

    A bin passes when its noisy count exceeds ``sigma z``; the sums of
    ``2**r`` adjacent bins pass when they exceed ``sigma sqrt(2**r) z`` (their
    noise is that much larger), for every level ``r`` of ``levels``, so that a
    column whose records spread over several bins, none of them full, still
    shows where they lie. A sum that overlaps the span the previous levels
    found does not widen it (it passes because of the bins already in it;
    records just beyond a span are for :func:`_extended` to find). ``z``
    bounds the chance that any sum without records passes, over every bin of
    every level, by :data:`FALSE_BIN_RATE`.

    Far above the records that threshold is not enough: one empty bin in a
    hundred releases passes it, and a passing bin ten octaves above the
    largest records stretches the range a thousandfold (a target's, and the
    fit's every prediction with it). So a bin whose magnitudes lie more than
    :data:`NEAR_BINS` above every bin that passes the threshold of
    :data:`FAR_BIN_RATE` must pass that one too (either sign: a range is as
    wide as its largest magnitude). Where no bin of values passes it (few
    records), every bin passing at ``z`` counts.
    """
    rows, size = noisy.shape
    tests = rows * sum(size // 2**r for r in levels)
    zero = (size - 1) // 2
    merged = [(r, *_merged(noisy, 2**r)) for r in levels]
    top = _top_magnitude(merged, sigma, float(ndtri(1.0 - FAR_BIN_RATE / tests)), zero)
    z = float(ndtri(1.0 - FALSE_BIN_RATE / tests))
    first = np.full(rows, size, dtype=np.int64)
    last = np.full(rows, -1, dtype=np.int64)
    found = np.zeros(rows, dtype=bool)
    for r, sums, starts, ends in merged:
        passing = _passing(sums, sigma, r, z)
        smallest, _ = _magnitudes(starts, ends, zero)
        passing &= (top[:, None] < 0) | (smallest[None, :] <= (top + NEAR_BINS)[:, None])
        # a wider bin that overlaps the span the narrower ones found passes because of the
        # bins already in it: it would only round the span out to its own edges
        passing &= (ends[None, :] < first[:, None]) | (starts[None, :] > last[:, None])
        hit = passing.any(axis=1)
        lowest = starts[np.argmax(passing, axis=1)]
        highest = ends[passing.shape[1] - 1 - np.argmax(passing[:, ::-1], axis=1)]
        first = np.where(hit, np.minimum(first, lowest), first)
        last = np.where(hit, np.maximum(last, highest), last)
        # the zero bin alone says nothing of a column's scale (a sparse one-hot column's
        # zeros pass, its ones may not): a range is found when a bin of values passes
        found |= (passing & (starts != zero)).any(axis=1)
    return first, last, found, last >= 0


def _passing(sums, sigma, r, z):
    """Which sums of ``2**r`` bins pass ``sigma sqrt(2**r) z`` (any positive one without
    noise)."""
    return sums > (sigma * math.sqrt(2**r) * z if sigma > 0 else 0.0)


def _magnitudes(starts, ends, zero):
    """The smallest and the largest magnitude (an index on the grid, either sign) of each
    merged bin: 0 and -1 for the zeros' bin, which holds no magnitude."""
    smallest = np.where(
        starts > zero, starts - zero - 1, np.where(ends < zero, zero - 1 - ends, 0)
    )
    largest = np.where(
        ends > zero, ends - zero - 1, np.where(starts < zero, zero - 1 - starts, -1)
    )
    return smallest, largest


def _top_magnitude(merged, sigma, z, zero):
    """Per row, the largest magnitude of the bins of values among the ``merged`` sums
    (``(r, sums, starts, ends)`` per level) that pass ``sigma sqrt(2**r) z``; -1 where none
    does."""
    top = np.full(merged[0][1].shape[0], -1, dtype=np.int64)
    for r, sums, starts, ends in merged:
        _, largest = _magnitudes(starts, ends, zero)
        passing = _passing(sums, sigma, r, z)
        top = np.maximum(top, np.where(passing, largest[None, :], -1).max(axis=1))
    return top


#: the levels whose passing bins are joined: half-octave and octave bins, then, where
#: nothing passes, bins of two and four octaves
FINE_LEVELS, COARSE_LEVELS = (0, 1), (2, 3)


#: the widths, in bins, of the windows that extend a span outward (see _extended)
WINDOWS = (1, 2, 4, 8, 16)
#: how many times a span may be extended on each side
EXTENSIONS = 8


def _extended(noisy, sigma, first, last, found, z):
    """Each span extended outward while the bins just beyond it hold records.

    The passing bins find where most records lie; records spread thinly over
    the bins beyond them (a skewed column's tail) may pass none on its own. A
    window of ``w`` bins adjacent to the span passes when its noisy sum exceeds
    ``sigma sqrt(w) z``; the span then grows to the far end of the narrowest
    passing window, and is tested again, at most :data:`EXTENSIONS` times.
    """
    if sigma == 0.0:
        return first, last
    rows, size = noisy.shape
    totals = np.hstack([np.zeros((rows, 1)), np.cumsum(noisy, axis=1)])
    index = np.arange(rows)
    for _ in range(EXTENSIONS):
        grown = False
        for side in (1, -1):
            edge = last if side == 1 else first
            step = np.zeros(rows, dtype=np.int64)
            for w in reversed(WINDOWS):  # the narrowest passing window wins
                far = edge + side * w
                inside = found & (far >= 0) & (far < size)
                far_c = np.clip(far, 0, size - 1)
                # the window's bins: edge + 1 .. far (upward) or far .. edge - 1 (downward)
                if side == 1:
                    sums = totals[index, far_c + 1] - totals[index, edge + 1]
                else:
                    sums = totals[index, edge] - totals[index, far_c]
                passing = inside & (sums > sigma * math.sqrt(w) * z)
                step = np.where(passing, w, step)
            if side == 1:
                last = last + step
            else:
                first = first - step
            grown |= bool(step.any())
        if not grown:
            break
    return first, last


#: the level whose fullest bins make the best guess of the row extremes (four octaves)
GUESS_LEVEL = 3


def _best_guess(noisy, grid):
    """``(low, high)`` from the fullest four-octave bin of the row minima and of the maxima.

    When no bin of the row extremes passes its threshold (few records for the
    noise), the fullest wide bin is still the likeliest place of the records'
    extremes: a range of the right order of magnitude, better than none for
    raw data on an unknown scale. None when the two bins contradict each other.
    """
    sums, starts, ends = _merged(noisy, 2**GUESS_LEVEL)
    fullest = np.argmax(sums, axis=1)
    low = float(grid.lower(starts[fullest[0]]))
    high = float(grid.upper(ends[fullest[1]]))
    return (low, high) if low <= high else None


def _read_ranges(noisy, sigma, grid):
    """Each row's span in the noisy counts ``noisy`` (rows of bins, noise std ``sigma``).

    Returns ``(low, high, found, any)``: ``found`` when a bin of non-zero
    values passed (the span says where the values lie), ``any`` when some bin
    did (perhaps the zeros alone); ``low = high = 0`` when none did.
    """
    first, last, found, hit = _span(noisy, sigma, FINE_LEVELS)
    if not found.all():
        coarse = _span(noisy, sigma, COARSE_LEVELS)
        # the coarse span where the fine one found no values: the coarse one's values,
        # or its zeros where the fine one passed nothing at all
        use = ~found & (coarse[2] | (~hit & coarse[3]))
        first, last = np.where(use, coarse[0], first), np.where(use, coarse[1], last)
        found, hit = found | coarse[2], hit | coarse[3]
    tests = noisy.shape[0] * 2 * EXTENSIONS * len(WINDOWS)
    first, last = _extended(
        noisy, sigma, first, last, found, float(ndtri(1.0 - FALSE_BIN_RATE / tests))
    )
    zero = grid.magnitudes
    first, last = np.where(hit, first, zero), np.where(hit, last, zero)
    return grid.lower(first), grid.upper(last), found, hit


@dataclass(frozen=True)
class RangePlan:
    """The private estimate of the features' and the target's ranges: its events and release.

    Attributes
    ----------
    n_features : int
    features : bool
        Whether the features' ranges are estimated (two events: the
        per-column histograms and the row extremes).
    target : bool
        Whether the target's range is estimated (one event, last).
    plan : PrivacyPlan
        The Gaussian events, their noise fixed (calibrated to the share of the
        budget given to :meth:`create`), of part :data:`PART`.
    grid : LogGrid
    """

    n_features: int
    features: bool
    target: bool
    plan: PrivacyPlan
    grid: LogGrid = GRID

    @classmethod
    def create(
        cls,
        n_features: int,
        *,
        features: bool = True,
        target: bool = False,
        epsilon: float,
        delta: float,
        accountant: str = "auto",
        neighbouring: str = "replace_one",
        grid: LogGrid = GRID,
    ) -> RangePlan:
        """The estimate's events, calibrated to ``(epsilon, delta)`` on their own.

        Parameters
        ----------
        n_features : int
        features : bool, default=True
            Estimate the features' ranges.
        target : bool, default=False
            Estimate the range of the target (a regression's).
        epsilon, delta : float
            What the estimate may spend (the caller's share of the fit's budget).
        accountant : str, default="auto"
        neighbouring : str, default="replace_one"

        Examples
        --------
        >>> plan = RangePlan.create(8, target=True, epsilon=0.1, delta=1e-9)
        >>> [(e.sensitivity, e.fixed, e.part) for e in plan.plan.events]
        [(4.0, True, 'preprocessing'), (2.0, True, 'preprocessing'), (1.4142135623730951, True, 'preprocessing')]
        """  # noqa: E501
        if not (features or target):
            raise ValueError("a range estimate needs the features, the target or both")
        # equal multipliers: each release gets the same share of the cost; the row
        # extremes' and the target's noise then do not grow with the number of columns,
        # which is what they are for
        events = []
        if features:
            events += [
                GaussianEvent(
                    noise_multiplier=1.0,
                    sensitivity=math.sqrt(2.0 * n_features),
                    label=COLUMNS_LABEL,
                    part=PART,
                ),
                GaussianEvent(noise_multiplier=1.0, sensitivity=2.0, label=ROWS_LABEL, part=PART),
            ]
        if target:
            events.append(
                GaussianEvent(
                    noise_multiplier=1.0, sensitivity=math.sqrt(2.0), label=TARGET_LABEL, part=PART
                )
            )
        template = PrivacyPlan(tuple(events), neighbouring)
        calibrated = calibrate_cached(template, epsilon, delta, accountant).plan
        plan = PrivacyPlan(tuple(e.frozen() for e in calibrated.events), neighbouring)
        return cls(n_features, bool(features), bool(target), plan, grid)

    @classmethod
    def share_of(cls, n_features, *, epsilon, delta, share, **kwargs) -> RangePlan:
        """:meth:`create` with ``share`` of ``(epsilon, delta)`` (a :class:`Share` or a number).

        Examples
        --------
        >>> RangePlan.share_of(3, epsilon=1.0, delta=1e-6, share=0.1).n_features
        3
        """
        share = share if isinstance(share, Share) else Share(share, "preprocessing_share")
        return cls.create(n_features, epsilon=share.of(epsilon), delta=share.of(delta), **kwargs)

    def counts(self, X, y) -> list:
        """The exact counts each of the plan's histograms releases, in the order of its events.

        Every count is a sum over records (each record falls in exactly one bin
        of each row), so the counts of a dataset are the sums of the counts of
        its parts: row chunks may count their own records
        (:mod:`dpglm.distributed`) and the sums be released once
        (:meth:`release_counts`).

        Parameters
        ----------
        X : ndarray or sparse matrix of shape (n, p)
            Finite features (read only when their ranges are estimated).
        y : ndarray of shape (n,) or None
            The finite target, when the plan estimates its range.

        Returns
        -------
        list of ndarray
            One array of bins per release: the features' ``p`` rows, the row
            minima and maxima, the target's one row.

        Examples
        --------
        >>> plan = RangePlan.create(2, epsilon=1.0, delta=1e-6)
        >>> [c.shape for c in plan.counts(np.ones((3, 2)), None)]
        [(2, 257), (2, 257)]
        """
        if (y is not None) != self.target:
            raise ValueError("give y exactly when the plan estimates the target's range")
        grid, counts = self.grid, []
        if self.features:
            counts += [column_counts(X, grid), row_extreme_counts(X, grid)]
        if self.target:
            counts.append(column_counts(np.asarray(y, dtype=float).reshape(-1, 1), grid))
        return counts

    def _sensitivities(self) -> list:
        """Each histogram's L2 sensitivity: the event's, whatever the values."""
        sensitivities = []
        if self.features:
            sensitivities += [math.sqrt(2.0 * self.n_features), 2.0]
        if self.target:
            sensitivities.append(math.sqrt(2.0))
        return sensitivities

    def histograms(self, X, y, releases) -> list:
        """The noisy histograms the plan releases, in the order of its events.

        Parameters
        ----------
        X : ndarray or sparse matrix of shape (n, p)
            Finite features (read only when their ranges are estimated).
        y : ndarray of shape (n,) or None
            The finite target, when the plan estimates its range.
        releases : sequence of Release
            The plan's events, in order, bound to the fit's noise source.

        Returns
        -------
        list of (ndarray, float)
            Each release's noisy counts (one row of bins per column: the
            features' ``p`` rows, the row minima and maxima, the target) and
            its noise standard deviation.
        """
        return self.noisy(self.counts(X, y), releases)

    def noisy(self, counts, releases) -> list:
        """Release exact ``counts`` (:meth:`counts`, or their sum over row chunks).

        Returns
        -------
        list of (ndarray, float)
            As :meth:`histograms`.
        """
        counts, releases = list(counts), list(releases)
        # each histogram is one Gaussian release: the counts' L2 sensitivity is the
        # event's, whatever the values (every record falls in exactly one bin per row)
        return [
            (release.add(c, sensitivity=sensitivity), release.scale(sensitivity))
            for release, c, sensitivity in zip(
                releases, counts, self._sensitivities(), strict=True
            )
        ]

    def release_counts(self, counts, releases) -> tuple:
        """Release exact ``counts`` and read the ranges off them (see :meth:`release`)."""
        histograms = self.noisy(counts, releases)
        features = target = None
        if self.features:
            features = self._feature_ranges(*histograms[:2])
        if self.target:
            target = self._target_range(histograms[-1])
        return features, target

    def release(self, X, y, releases) -> tuple:
        """Release the histograms (:meth:`histograms`) and read the ranges off them.

        Returns
        -------
        features : Ranges or None
            The features' ranges, when the plan estimates them.
        target : Ranges or None
            The target's range, when the plan estimates it.
        """
        return self.release_counts(self.counts(X, y), releases)

    def _feature_ranges(self, columns, rows) -> Ranges:
        grid = self.grid
        low, high, found, _ = _read_ranges(*columns, grid)
        row_low, row_high, row_found, row_hit = _read_ranges(*rows, grid)
        # the fallback: from the smallest row minimum to the largest row maximum (either
        # may be the zeros alone, e.g. the minima of sparse rows)
        if row_found.any() and row_hit.all():
            common, common_source = (float(row_low[0]), float(row_high[1])), "rows"
        else:
            common, common_source = _best_guess(rows[0], grid), "rows (best guess)"
            if common is None:
                common, common_source = UNIT_RANGE, "unit"
        low[~found], high[~found] = common
        sources = tuple("column" if hit else common_source for hit in found)
        return Ranges(low.astype(float), high.astype(float), sources)

    def _target_range(self, histogram) -> Ranges:
        low, high, found, _ = _read_ranges(*histogram, self.grid)
        if found[0]:
            return Ranges(low.astype(float), high.astype(float), ("column",))
        return Ranges(np.array([UNIT_RANGE[0]]), np.array([UNIT_RANGE[1]]), ("unit",))
