"""Privacy loss distributions on a grid, in numpy: a tight accountant in milliseconds.

A mechanism's privacy curve ``delta(epsilon)`` (the hockey-stick divergence of
its dominating pair) is turned into a distribution of privacy losses on the grid
``epsilon_i = i h`` by the pessimistic *connect-the-dots* discretisation of
Doroshenko, Ghazi, Kamath, Kumar and Manurangsi (2022, Algorithm 1): the
discrete distribution whose curve equals the true one at every grid point and
interpolates it in between along ``e**epsilon``. The true curve is convex in
``e**epsilon``, so the interpolation lies above it: every ``delta`` computed from
the grid is an upper bound, and so is every ``epsilon``. Compositions of such
pessimistic distributions stay pessimistic (dominance is preserved by
composition), and compose as convolutions, done here by one FFT per plan with
each repeated event raised to its count in the frequency domain.

What is cut off is never dropped: the loss beyond the grid at the top goes to
the mass at infinity (it counts fully in every ``delta``), the loss below it at
the bottom is moved up onto the grid, and the part of a composition outside the
window kept by a Chernoff bound is either folded onto a higher loss or added to
the mass at infinity. FFT rounding makes entries of order ``1e-17`` negative;
their magnitude is added back to every entry.

The curves are those of the dominating pairs of dp-accounting's privacy loss
classes (Gaussian, Laplace, Poisson-subsampled Gaussian under either relation,
randomized response for any pure-DP mechanism), written here as numpy
expressions of the whole grid at once, which is what makes it fast: dp-accounting
inverts the privacy loss point by point in Python.

Examples
--------
>>> from dpglm.privacy.loss_curves import gaussian_curve
>>> from dpglm.privacy.pld import GridPLD
>>> pld = GridPLD.from_curve(gaussian_curve(1.0), 1e-3, tail_mass=1e-12)
>>> round(pld.epsilon(1e-5), 4)  # the exact value is 4.3772
4.3772
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from dpglm.privacy.accounting import gaussian_mu, gdp_epsilon
from dpglm.privacy.events import GaussianEvent, LaplaceEvent, SampledGaussianEvent
from dpglm.privacy.loss_curves import (
    PrivacyCurve,
    gaussian_curve,
    laplace_curve,
    poisson_gaussian_curves,
)

#: candidate Chernoff exponents for the windows of compositions
_CHERNOFF_T = np.geomspace(1e-3, 2e3, 24)
#: exponents added on each side of a tilt, spread to its neighbours on the grid: with the
#: next exponent a factor 1.88 above it, the tilted upper tail of a 1e6-row plan was
#: bounded at a loss of 20,000 instead of 21, and its FFT took seconds
TILT_NEIGHBOURS = 12
#: the largest tilt: beyond it the FFT's rounding no longer matters for any delta above
#: 1e-15, while the window that holds the tilted composition keeps growing
MAX_TILT = 4.0
#: probabilities below this are summed apart in the moment-generating functions
_TINY = 1e-250
#: spectral entries of a composition below ``e**_NEGLIGIBLE_LOG`` in modulus are left out
_NEGLIGIBLE_LOG = -700.0


def randomized_response_composed(epsilon: float, count: int, step: float) -> GridPLD:
    """``count`` runs of randomized response at ``epsilon``, composed exactly, on the grid.

    The composed loss is ``epsilon (count - 2 j)`` with binomial probability
    (``j`` flipped answers), so only the final rounding onto the grid is lost,
    once, rather than once per run as a per-run grid would.

    Examples
    --------
    >>> pld = randomized_response_composed(1.0, 10, 1e-3)
    >>> round(pld.epsilon(0.0), 9)
    10.0
    """
    j = np.arange(count + 1)
    log_keep = -math.log1p(math.exp(-epsilon))  # log(e^eps / (1 + e^eps))
    log_flip = -epsilon + log_keep
    log_p = (
        gammaln(count + 1)
        - gammaln(j + 1)
        - gammaln(count - j + 1)
        + (count - j) * log_keep
        + j * log_flip
    )
    return GridPLD.from_atoms(epsilon * (count - 2 * j), np.exp(log_p), step)


# -- distributions on the grid ------------------------------------------------------------------


@dataclass(frozen=True)
class GridPLD:
    """A pessimistic privacy loss distribution on the grid ``(offset + i) * step``.

    Attributes
    ----------
    step : float
        The grid's spacing ``h``.
    offset : int
        The grid index of ``probs[0]``.
    probs : numpy.ndarray
        Probability of each loss on the grid (under the first distribution of the pair).
    infinity : float
        Probability of an infinite loss: it counts fully in every ``delta``.
    """

    step: float
    offset: int
    probs: np.ndarray
    infinity: float

    @classmethod
    def from_curve(cls, curve: PrivacyCurve, step: float, tail_mass: float) -> GridPLD:
        """The connect-the-dots distribution of ``curve`` on the grid of spacing ``step``.

        Losses above the grid's top (where ``delta`` has fallen to ``tail_mass``)
        go to the mass at infinity; an unbounded lower tail stops where the
        curve's mirror image would, and its mass is lifted onto the grid.
        """
        high = curve.high if math.isfinite(curve.high) else _reach(curve.delta, tail_mass)
        # unbounded below only for a symmetric pair: P(L < -a) <= e**-a P(L > a)
        low = curve.low if math.isfinite(curve.low) else -high
        lo, hi = math.floor(low / step), math.ceil(high / step)
        if hi <= lo:
            hi = lo + 1
        eps = np.arange(lo, hi + 1) * step
        deltas = np.minimum.accumulate(_curve_values(curve.delta, eps))
        probs = _connect_the_dots(deltas, step)
        return cls(step, lo, probs, float(deltas[-1]))

    @classmethod
    def from_atoms(cls, losses, probs, step: float) -> GridPLD:
        """The connect-the-dots distribution of finitely many losses on the grid.

        The curve of a discrete distribution is convex in ``e**epsilon`` like
        any other, so its interpolation between grid points lies above it: each
        atom's mass is shared between the grid points around it, rather than
        moved up to the next one (which would cost up to ``step`` in epsilon).

        Examples
        --------
        >>> pld = GridPLD.from_atoms([0.25, -0.25], [0.6, 0.4], 0.1)
        >>> pld.losses
        array([-0.3, -0.2, -0.1,  0. ,  0.1,  0.2,  0.3])
        >>> exact = 0.6 * (1 - math.exp(0.2 - 0.25))
        >>> bool(math.isclose(pld.delta(0.2), exact)), pld.delta(0.35)
        (True, 0.0)
        """
        losses = np.asarray(losses, dtype=float)
        probs = np.asarray(probs, dtype=float)
        below = np.floor(losses / step)
        offset = int(below.min())
        index = below.astype(np.int64) - offset
        # an atom at l in [a, a + h) splits into m_a + m_b = p, m_a e^-a + m_b e^-(a+h) = p e^-l:
        # the two curves then agree at every grid point, and in between the split one is above
        upper = probs * np.expm1(below * step - losses) / math.expm1(-step)
        grid = np.zeros(int(index.max()) + 2)
        np.add.at(grid, index, probs - upper)
        np.add.at(grid, index + 1, upper)
        return cls(step, offset, grid, 0.0)

    @property
    def losses(self) -> np.ndarray:
        """The loss of each entry of ``probs``."""
        return (self.offset + np.arange(self.probs.size)) * self.step

    def self_compose(self, count: int, tail_mass: float = 0.0) -> GridPLD:
        """The distribution of ``count`` runs of this mechanism."""
        return compose_all([(self, count)], tail_mass)

    def deltas(self) -> tuple:
        """``delta`` at every grid point, and the two tail sums that interpolate it.

        Returns ``(delta, above, weighted)``: ``above[j]`` is the mass strictly
        above loss ``j`` and ``weighted[j]`` that mass weighted by
        ``exp(loss_j - loss)``, so that between grid points ``j`` and ``j + 1``
        ``delta(eps) = above[j] + infinity - exp(eps - loss_j) weighted[j]``.
        """
        p = self.probs
        above = np.concatenate([np.cumsum(p[::-1])[::-1][1:], [0.0]])
        # sum_{i > j} p_i exp(-(i - j) h), by a reversed cumulative sum of rescaled blocks
        weighted = _discounted_tail(p, self.step)
        return above - weighted + self.infinity, above, weighted

    def delta(self, epsilon: float) -> float:
        """``delta`` of this distribution at ``epsilon`` (an upper bound on the true one)."""
        p, losses = self.probs, self.losses
        keep = losses > epsilon
        tail = p[keep] * -np.expm1(epsilon - losses[keep])
        return float(min(1.0, math.fsum(tail) + self.infinity))

    def epsilon(self, delta: float) -> float:
        """The least ``epsilon >= 0`` with ``delta(epsilon) <= delta`` (``inf`` if none)."""
        if self.infinity > delta:
            return math.inf
        p = self.probs
        above = np.concatenate([np.cumsum(p[::-1])[::-1][1:], [0.0]])
        # delta at loss j is at most above[j] + infinity, so the last grid point over
        # delta lies below the first where that sum is not: the discounted tail (exact
        # on any suffix, as it only sums higher losses) is computed on a suffix that
        # grows until it holds that point
        length = 2 * (p.size - int(np.argmax(above + self.infinity <= delta))) + 64
        while True:
            start = max(0, p.size - length)
            weighted = _discounted_tail(p[start:], self.step)
            over = np.flatnonzero(above[start:] - weighted + self.infinity > delta)
            if over.size or start == 0:
                break
            length *= 4
        if over.size == 0:
            # below the grid's first loss: delta = A - exp(eps) B over all the mass
            first = self.offset * self.step
            total = math.fsum(self.probs) + self.infinity - delta
            below = math.fsum(self.probs * np.exp(first - self.losses))
            return _outward(first + math.log(total / below))
        j = start + int(over[-1])
        # on (loss_j, loss_j+1]: delta = A - exp(eps - loss_j) W; solve for delta
        loss_j = (self.offset + j) * self.step
        eps = loss_j + math.log((above[j] + self.infinity - delta) / weighted[j - start])
        return _outward(min(eps, loss_j + self.step))


def _curve_values(delta, eps):
    """``delta(eps)`` in ``[0, 1]``; where the formula overflows (far in a tail) the
    value is taken as 1, which the running minimum then lowers to its neighbour's."""
    with np.errstate(all="ignore"):
        values = np.asarray(delta(eps), dtype=float)
    return np.clip(np.nan_to_num(values, nan=1.0), 0.0, 1.0)


def _outward(epsilon):
    """``epsilon`` (at least 0) moved up by far more than its rounding error: grid losses
    such as ``750 * 0.002`` come out a unit in the last place below their true value."""
    return max(0.0, epsilon) * (1 + 1e-12) + 1e-15


class _BeyondReachError(ArithmeticError):
    """A privacy loss too large for any grid: epsilon is taken as infinite."""


def _reach(delta, tail_mass):
    """A loss above which the curve's ``delta`` is at most ``tail_mass``."""
    grid = np.geomspace(1e-8, 1e4, 400)
    values = _curve_values(delta, grid)
    below = np.flatnonzero(values <= tail_mass)
    if below.size == 0:
        raise _BeyondReachError("the curve does not fall to the tail mass below a loss of 1e4")
    return float(grid[below[0]])


def _connect_the_dots(deltas, step):
    """Masses on the grid points whose curve passes through ``deltas`` (Algorithm 1 of
    Doroshenko et al. 2022, for evenly spaced points); the rest is at infinity."""
    n = deltas.size
    if n == 1:
        return np.array([1.0 - deltas[0]])
    diffs = np.diff(deltas)  # delta_{i+1} - delta_i, <= 0
    em1 = math.expm1(step)
    probs = np.empty(n)
    probs[0] = (1.0 - deltas[0]) + diffs[0] / em1
    probs[1:-1] = (diffs[1:] - math.exp(step) * diffs[:-1]) / em1
    probs[-1] = diffs[-1] / math.expm1(-step)
    # rounding can leave a tiny negative mass: a larger mass is the pessimistic side
    return np.maximum(probs, 0.0)


def _discounted_tail(p, step):
    """``w[j] = sum_{i > j} p_i exp(-(i - j) step)``, stably, in blocks of bounded exponent."""
    n = p.size
    out = np.empty(n)
    block = min(n, max(1, int(30.0 / step)))  # exp(30) keeps every block's rescaling finite
    k = np.arange(block)
    decay, growth = np.exp(-k * step), np.exp(k * step)
    carry = 0.0  # the discounted mass beyond the current block, seen from its last entry
    for end in range(n, 0, -block):
        start = max(0, end - block)
        m = end - start
        # within the block, relative to its first entry: sum_{i > j} p_i e^{-(i-j)h}
        rev = np.cumsum((p[start:end] * decay[:m])[::-1])[::-1]
        inside = np.append(rev[1:], 0.0) * growth[:m]
        beyond = carry * decay[:m][::-1]  # carry * exp(-(m - 1 - k) step)
        out[start:end] = inside + beyond
        carry = (p[start] + out[start]) * math.exp(-step)
    return out


def _log_mgf(pld, t, block: int = 128):
    """``log E exp(t L)`` of the finite part of ``pld`` for every ``t`` (normalised).

    On the grid ``L_i = (offset + i) h``, ``exp(t (L_i - L_top))`` is ``z**j`` with
    ``z = exp(-|t| h)`` and ``j`` the distance of ``i`` from the end where ``t L``
    is largest; with ``j = a B + b`` it is ``z**(a B) z**b``, so one matrix product
    of the probabilities (in rows of ``B``) with ``z**b`` and a weighted sum over
    the rows replace ``len(t) * n`` exponentials by ``len(t) * (n / B + B)``.
    No power exceeds 1, so none overflows. Probabilities below ``1e-250`` are
    taken out of the product (their products with the powers would be
    subnormal numbers, which the processor handles a hundred times slower)
    and their sum added to every total instead: no power exceeds 1, so the
    result stays an upper bound.
    """
    t = np.asarray(t, dtype=float)
    probs = pld.probs
    tiny = probs < _TINY
    spare = float(probs[tiny].sum())
    probs = np.where(tiny, 0.0, probs)
    n = probs.size
    rows = -(-n // block)
    padded = np.zeros(rows * block)
    within = np.arange(block)
    across = np.arange(rows) * block
    out = np.empty(t.size)
    for upward in (True, False):
        chosen = t > 0 if upward else t <= 0
        if not chosen.any():
            continue
        rate = np.abs(t[chosen]) * pld.step
        padded[:n] = probs[::-1] if upward else probs
        inner = padded.reshape(rows, block) @ np.exp(-np.outer(within, rate))
        total = np.einsum("rk,rk->k", inner, np.exp(-np.outer(across, rate))) + spare
        top = pld.offset + (n - 1 if upward else 0)
        with np.errstate(divide="ignore"):
            out[chosen] = t[chosen] * top * pld.step + np.log(total)
    return out - math.log(pld.probs.sum())


class _Cumulants:
    """``K(u) = log E exp(u S)`` of a composition's sum ``S``, on a grid of exponents
    ``u`` symmetric about 0 (0 included), for Chernoff bounds and the tilt."""

    def __init__(self, parts):
        self.parts = parts
        positive = _CHERNOFF_T
        self.exponents = np.concatenate([-positive[::-1], [0.0], positive])
        self.values = self._at(self.exponents)

    def _at(self, exponents) -> np.ndarray:
        return sum(count * _log_mgf(pld, exponents) for pld, count in self.parts)

    def refine(self, centre: float) -> None:
        """Add :data:`TILT_NEIGHBOURS` exponents on each side of ``centre`` (a point of the
        grid), up to its neighbours: the bounds about a tilt need them."""
        u = self.exponents
        at = int(np.argmin(np.abs(u - centre)))
        if at == 0 or at == u.size - 1:
            return
        fractions = np.arange(1, TILT_NEIGHBOURS + 1) / (TILT_NEIGHBOURS + 1)
        extra = np.concatenate(
            [u[at] + fractions * (u[at - 1] - u[at]), u[at] + fractions * (u[at + 1] - u[at])]
        )
        exponents = np.concatenate([u, extra])
        order = np.argsort(exponents)
        self.exponents = exponents[order]
        self.values = np.concatenate([self.values, self._at(extra)])[order]

    def tilt(self, delta: float) -> float:
        """The exponent of the Chernoff bound ``P(S > x) <= delta`` (at most ``MAX_TILT``):
        tilting by ``e**(t L)`` centres the composition near where ``delta`` is read, so
        that the FFT's absolute rounding is relative there."""
        if not 0 < delta < 1:
            return 0.0
        u = self.exponents
        up = np.flatnonzero(u > 0)
        best = up[np.argmin((self.values[up] - math.log(delta)) / u[up])]
        # a point of the grid, so that bounds() reads K at the tilt itself
        capped = up[u[up] <= MAX_TILT]
        return float(u[min(best, capped[-1])])

    def bounds(self, centre: float, log_tail: float) -> tuple:
        """``(low, high)`` with mass at most ``e**log_tail`` below and above under the tilt
        ``centre`` (a point of the grid): ``P'(S > x) <= exp(K(u) - K(t) - (u - t) x)``
        for ``u > t``, the same below for ``u < t``."""
        u = self.exponents
        gap = u - centre
        base = self.values[np.argmin(np.abs(gap))]
        with np.errstate(divide="ignore", invalid="ignore"):
            x = (self.values - base - log_tail) / gap
        return float(np.max(x[gap < 0])), float(np.min(x[gap > 0]))


def _window(parts, cumulants, tail_mass, tilt=0.0):
    """Grid indices ``[lo, hi]`` that the FFT of a composition keeps, by Chernoff bounds.

    Above ``hi`` both the composition and its tilted version have mass at most
    ``tail_mass``: what the circular convolution folds from there onto the
    bottom is covered by adding ``tail_mass`` to the mass at infinity. Below
    ``lo`` the composition tilted by ``e**(tilt L)`` has mass at most
    ``tail_mass``; the FFT folds it onto higher losses (pessimistic), where the
    tilt's undoing makes it smaller still.
    """
    full_lo = sum(count * pld.offset for pld, count in parts)
    full_hi = sum(count * (pld.offset + pld.probs.size - 1) for pld, count in parts)
    if tail_mass <= 0:
        return full_lo, full_hi
    step = parts[0][0].step
    log_tail = math.log(tail_mass)
    low, high = cumulants.bounds(tilt, log_tail)
    if tilt:
        high = max(high, cumulants.bounds(0.0, log_tail)[1])
    lo = max(full_lo, math.floor(low / step)) if math.isfinite(low) else full_lo
    hi = min(full_hi, math.ceil(high / step)) if math.isfinite(high) else full_hi
    return lo, max(hi, lo)


def _fft_size(n):
    """The least size ``>= n`` of the form ``2**a 3**b`` (fast for numpy's FFT)."""
    best = 1 << max(0, (n - 1).bit_length())
    power3 = 1
    while power3 < best:
        size = power3
        while size < n:
            size *= 2
        best = min(best, size)
        power3 *= 3
    return best


def _wrap(p, size):
    """``p`` folded onto ``size`` entries (entry ``i`` onto ``i mod size``), zero-padded.

    numpy's FFT would truncate a longer input; the circular convolution needs it folded.
    """
    if p.size <= size:
        return np.pad(p, (0, size - p.size))
    rows = -(-p.size // size)
    return np.pad(p, (0, rows * size - p.size)).reshape(rows, size).sum(axis=0)


def compose_all(parts, tail_mass: float = 0.0, delta: float = 0.0) -> GridPLD:
    """The composition of ``count`` runs of each ``(pld, count)`` in ``parts``, by one FFT.

    The result keeps the grid window that the Chernoff bound says holds all but
    ``tail_mass`` on either side. The circular convolution folds the mass below
    the window onto higher losses inside it (pessimistic) and the mass above it
    onto lower ones, so ``tail_mass`` is added to the mass at infinity to cover
    the latter. Given the ``delta`` at which the result will be read, the
    convolution runs on the distributions times ``e**(t L)`` (normalised), for
    the Chernoff exponent ``t`` of ``delta``: tilting commutes with convolution
    and puts the FFT's rounding, of the order of the machine epsilon times the
    largest entry, where the tilted composition peaks, near that ``delta``.

    Examples
    --------
    >>> one = GridPLD.from_curve(gaussian_curve(4.0), 1e-3, tail_mass=1e-15)
    >>> sixteen = one.self_compose(16, tail_mass=1e-15)
    >>> exact = GridPLD.from_curve(gaussian_curve(1.0), 1e-3, tail_mass=1e-15)
    >>> abs(sixteen.epsilon(1e-5) - exact.epsilon(1e-5)) < 0.02
    True
    """
    parts = [(pld, count) for pld, count in parts if count > 0]
    steps = {pld.step for pld, _ in parts}
    if len(steps) != 1:
        raise ValueError(f"distributions on different grids cannot be composed: {sorted(steps)}")
    step = steps.pop()
    cumulants = _Cumulants(parts) if tail_mass > 0 or 0 < delta < 1 else None
    tilt = cumulants.tilt(delta) if cumulants is not None else 0.0
    if tilt:
        cumulants.refine(tilt)
    lo, hi = _window(parts, cumulants, tail_mass, tilt)
    full = sum(count * (pld.probs.size - 1) for pld, count in parts) + 1
    size = _fft_size(min(full, hi - lo + 1))
    folded = size < full
    transforms, log_modulus = [], np.zeros(size // 2 + 1)
    start, log_scale = 0, 0.0
    for pld, count in parts:
        p = pld.probs
        if tilt:
            log_w = tilt * pld.losses
            log_w -= log_w.max()
            p = p * np.exp(log_w)
        mass = p.sum()
        transform = np.fft.rfft(_wrap(p / mass, size))
        with np.errstate(divide="ignore"):
            log_modulus += count * np.log(np.abs(transform))
        transforms.append((transform, count))
        start += count * pld.offset
        log_scale += count * math.log(mass)
    # a composition of many releases is smooth: most of its spectrum is below e**-700
    # and is left at 0, which moves any entry of the inverse by at most 2 e**-700
    live = log_modulus > _NEGLIGIBLE_LOG
    spectrum = np.zeros(size // 2 + 1, dtype=complex)
    spectrum[live] = math.prod(transform[live] ** count for transform, count in transforms)
    out = np.fft.irfft(spectrum, size)
    if not folded:
        out = out[:full]  # the rest is padding: zero but for rounding
    # FFT rounding leaves entries of the order of the machine epsilon, some negative:
    # their size (and the bound on the spectrum left out) is added back to every entry,
    # which only adds mass
    floor = max(0.0, -float(out.min())) + 2.0 * math.exp(_NEGLIGIBLE_LOG)
    out = np.maximum(out, 0.0) + floor
    if folded:
        # circular index r holds the losses start + r + k * size; keep the window [lo, lo + size)
        shift = (lo - start) % size
        out = np.roll(out, -shift)
        offset = lo
    else:
        offset = start
    if tilt:
        # undo the tilt: entry r had weight exp(tilt (loss_r - sum of the parts' top losses))
        tops = sum(count * (pld.offset + pld.probs.size - 1) for pld, count in parts)
        exponent = log_scale + tilt * step * (tops - offset - np.arange(out.size))
        with np.errstate(under="ignore"):
            out = out * np.exp(np.minimum(exponent, 700.0))
    infinity = 1.0 - math.prod((1.0 - pld.infinity) ** count for pld, count in parts)
    if folded:
        infinity += tail_mass
    return GridPLD(step, offset, out, min(1.0, infinity))


# -- plans -------------------------------------------------------------------------------------

#: the grid's spacing when no target epsilon is known yet, and the coarsest one used
COARSE_STEP = 2e-3
#: the finest spacing the automatic rule goes to
FINE_STEP = 2e-5
#: the relative error in epsilon the automatic spacing aims at: connect-the-dots
#: overstates a composition of T events by about 2 T h**2 (measured), so the
#: spacing is sqrt(ERROR epsilon / (2 T))
STEP_ERROR = 2e-3
#: the share of delta that truncated tails may add to the mass at infinity
TAIL_SHARE = 1e-4


def step_for(epsilon: float, compositions: int) -> float:
    """The grid spacing for a plan of ``compositions`` events near ``epsilon``.

    The ideal ``sqrt(STEP_ERROR epsilon / (2 T))`` rounded down to the ladder
    ``COARSE_STEP / 2**(k / 2)``, so that nearby epsilons share a grid (a
    calibration and the report of its result then compute on the same one).

    Examples
    --------
    >>> step_for(1.0, 1)
    0.002
    >>> step_for(1.0, 1000)
    0.001
    """
    if compositions <= 1:
        return COARSE_STEP
    ideal = math.sqrt(STEP_ERROR * max(epsilon, 1e-2) / (2 * compositions))
    if ideal >= COARSE_STEP:
        return COARSE_STEP
    rung = math.ceil(2 * math.log2(COARSE_STEP / ideal))
    return max(FINE_STEP, COARSE_STEP / 2 ** (rung / 2))


def direction_parts(events, neighbouring: str, step: float, tail_mass: float) -> list:
    """The distributions each direction of a plan composes: lists of ``(GridPLD, count)``.

    Gaussian releases compose exactly into one Gaussian; a Poisson-subsampled
    Gaussian has a curve of its own per direction under add/remove; Laplace
    releases take their curve; every other pure-DP event (noisy max, a
    ``PureDPEvent``) is randomized response at its epsilon, composed exactly.
    Events are the active events of a plan (no zero or infinite multipliers,
    no non-private events); the caller has checked that each is supported.
    Unbounded curves are cut where ``delta`` falls to ``tail_mass``.
    """
    directions = 2 if neighbouring == "add_remove" else 1
    sides = [[] for _ in range(directions)]

    def add(curves, count):
        grids = [GridPLD.from_curve(curve, step, tail_mass) for curve in curves]
        for side, grid in zip(sides, grids * (directions // len(grids)), strict=True):
            side.append((grid, count))

    gaussians = [e for e in events if isinstance(e, GaussianEvent)]
    if gaussians:
        add([gaussian_curve(1.0 / gaussian_mu(gaussians))], 1)
    for e in events:
        if isinstance(e, GaussianEvent):
            continue
        if isinstance(e, SampledGaussianEvent):
            add(
                poisson_gaussian_curves(e.noise_multiplier, e.sampling_rate, neighbouring), e.count
            )
        elif isinstance(e, LaplaceEvent):
            add([laplace_curve(e.noise_multiplier)], e.count)
        else:
            composed = randomized_response_composed(e.epsilon, e.count, step)
            for side in sides:
                side.append((composed, 1))
    return sides


def unbounded(events) -> bool:
    """Whether some event's privacy loss is unbounded (no guarantee at ``delta = 0``)."""
    return any(isinstance(e, GaussianEvent | SampledGaussianEvent) for e in events)


def aligned_step(events, step: float) -> float:
    """``step``, shortened so that the largest loss of the plan's Laplace releases is on
    the grid when they share one multiplier: their curve has a kink there, which the
    grid then follows exactly instead of rounding it up once per release."""
    reaches = {1.0 / e.noise_multiplier for e in events if isinstance(e, LaplaceEvent)}
    if len(reaches) != 1:
        return step
    reach = reaches.pop()
    return reach / math.ceil(reach / step)


def composition_count(events) -> int:
    """How many releases the grid composes (Gaussian releases count once together)."""
    gaussian = any(isinstance(e, GaussianEvent) for e in events)
    return int(gaussian) + sum(e.count for e in events if not isinstance(e, GaussianEvent))


def approximate_mu(events) -> float:
    """``mu`` of the Gaussian approximation of the composed privacy loss of ``events``.

    Gaussian releases add ``count / z**2``; a Poisson-subsampled one
    ``count q**2 (e**(1 / z**2) - 1)`` (the central limit theorem of Dong, Roth
    and Su 2022); a pure ``epsilon``-DP release ``epsilon**2``. Not a bound: it
    picks the grid's spacing and a calibration's first guess, and everything
    kept is computed on the grid.
    """
    total = 0.0
    for e in events:
        if isinstance(e, SampledGaussianEvent):
            total += e.count * e.rate**2 * math.expm1(min(1.0 / e.noise_multiplier**2, 700.0))
        elif isinstance(e, GaussianEvent):
            total += e.count / e.noise_multiplier**2
        elif getattr(e, "epsilon", None) is not None:
            total += e.count * e.epsilon**2
    return math.sqrt(total)


def plan_epsilon(events, neighbouring: str, delta: float, step: float | None = None) -> float:
    """Epsilon at ``delta`` of a plan's active ``events``, an upper bound on the true one.

    ``step=None`` takes the spacing of :func:`step_for` at the epsilon of the
    plan's Gaussian approximation (:func:`approximate_mu`): a function of the plan
    alone, so that a calibration and the report of its plan use one grid.

    Examples
    --------
    >>> from dpglm.privacy.events import SampledGaussianEvent
    >>> event = SampledGaussianEvent(noise_multiplier=1.0, sampling_rate=0.01, count=1000)
    >>> round(plan_epsilon([event], "replace_one", 1e-6), 3)  # dp-accounting: 1.3745
    1.376
    """
    if delta == 0 and unbounded(events):
        return math.inf
    total = composition_count(events)
    if step is None:
        step = grid_step(events, delta)
    try:
        return _epsilon_on_grid(events, neighbouring, delta, step, total)
    except _BeyondReachError:
        # losses beyond 1e4 (noise a thousandth of the sensitivity): infinite is an upper
        # bound, and a calibration moves to more noise
        return math.inf


def grid_step(events, delta: float) -> float:
    """The spacing :func:`plan_epsilon` computes ``events`` on when given no ``step``.

    :func:`step_for` at the epsilon of the plan's Gaussian approximation,
    aligned to its Laplace releases (:func:`aligned_step`); the resolution of
    the epsilon it reads, which a calibration cannot beat.

    Examples
    --------
    >>> from dpglm.privacy.events import GaussianEvent
    >>> grid_step([GaussianEvent(noise_multiplier=1.0)], 1e-6)
    0.002
    """
    rough = gdp_epsilon(approximate_mu(events), delta) if delta > 0 else math.inf
    step = step_for(rough if math.isfinite(rough) else 1.0, composition_count(events))
    return aligned_step(events, step)


def _epsilon_on_grid(events, neighbouring, delta, step, total):
    step = aligned_step(events, step)
    tail = TAIL_SHARE * delta
    epsilons = []
    for side in direction_parts(events, neighbouring, step, tail / total):
        if len(side) == 1 and side[0][1] == 1:
            composed = side[0][0]
        else:
            composed = compose_all(side, tail, delta)
        epsilons.append(composed.epsilon(delta))
    return max(epsilons)
