"""Parameters of the feature-split private Frank-Wolfe from a rule, and its predicted regime.

:func:`vertical_fw_rule` chooses ``T``, the sketch size ``m``, ``tau``, the
clip and the budget split of
:func:`~dpglm.distributed.vertical_fw.vertical_fw` from public numbers
(``n``, ``d``, ``K``, ``epsilon``, ``delta``, the radius and the feature
bound), and predicts the signal-to-noise of the last vertex scores: whether
the fit is expected to beat ``w = 0`` and from how many records. The fit
uses the same functions to fill in what it was not given
(:func:`rule_sizes`, :func:`full_rule`) and to warn before any charge
(:func:`predicted_regime`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from dpglm.distributed.protocol import COUNT, GAUSSIAN, check_sketch_kind
from dpglm.distributed.vertical_plan import (
    FIXED_POINT_STEPS,
    PAPER,
    SPREAD,
    UNIT_STD,
    calibrated_multipliers,
    clip_attenuation,
    margin_noise_per_unit,
    paper_events,
    selection_averaging,
    sketch_error,
)
from dpglm.privacy.targets import Share, check_privacy_target
from dpglm.solvers.hyperparameters import check_positive, check_positive_int

__all__ = ["VerticalRule", "expected_column_norm", "vertical_fw_rule"]

#: rules computed at most to settle ``min_n`` (the rule at that n changes with n)
MIN_N_STEPS = 8

#: relative sketch error ``sqrt(d / m)`` the rule aims at (``m ~ 8 d``)
SKETCH_ERROR = 0.35
#: ``c_f`` of Frank-Wolfe's optimisation error ``2 c_f / (p_min T + 2)``: ``T = 50`` at
#: ``SKETCH_ERROR``, where the issue's problem without noise stops gaining from ``T``
CURVATURE = 4.5
#: Frank-Wolfe's optimisation error the rule aims at, as a share of SKETCH_ERROR: half
#: with a Gaussian sketch (the work ``T m n`` balanced against ``m``), an eighth with a
#: count sketch, whose iterations cost the ``tau n`` of a gradient pass whatever ``m``
OPTIMISATION_SHARE = {GAUSSIAN: 0.5, COUNT: 0.125}
#: largest ``m n`` entries of the public sketch a party rebuilds (1.6 GB of float64)
MAX_SKETCH_ENTRIES = 2 * 10**8
#: the rule's clip, in units of what a gradient term carries besides its signal at the
#: last step: ``b_rms hypot(sigma, e)``, the margins' noise and the paper's sketch error
CLIP_RATIO = 0.1
#: score signal-to-noise at which the fit is expected to beat ``w = 0``
SNR_NEEDED = 1.0
#: a fit whose signal-to-noise is this many times below ``SNR_NEEDED`` is warned of
FAR_BELOW = 2.0


@dataclass(frozen=True)
class VerticalRule:
    """Parameters of the vertical fit chosen by :func:`vertical_fw_rule`, and its regime.

    ``n_iter``, ``sketch_dim``, ``clip`` and ``tau`` are the rule's choice (or the
    values it was given); ``selection_share`` is None: the split of the budget
    that leaves the least noise on the last vertex scores. ``snr`` is the
    predicted signal-to-noise of a vertex score at the last step; ``min_n`` the
    smallest number of records at which it reaches ``snr_needed``, the level at
    which the fit is expected to beat ``w = 0`` (``beats_zero``).
    """

    n_iter: int
    sketch_dim: int | None
    clip: float
    tau: int
    selection_share: float | None
    selection_noise_multiplier: float
    sketch_noise_multiplier: float
    margin_noise: float
    snr: float
    snr_needed: float
    min_n: int

    @property
    def beats_zero(self) -> bool:
        """Whether the fit is expected to beat ``w = 0`` (``snr >= snr_needed``)."""
        return self.snr >= self.snr_needed

    def as_dict(self) -> dict:
        """The fields and ``beats_zero``, as plain numbers."""
        out = {f: getattr(self, f) for f in self.__dataclass_fields__}
        out["beats_zero"] = self.beats_zero
        return out


def expected_column_norm(n: int, m: int | None, sketch: str = GAUSSIAN) -> float:
    """A high-probability bound on ``max_i ||J e_i||_2`` for an ``m x n`` sketch.

    Gaussian: ``m ||J e_i||^2`` is chi-square with ``m`` degrees of freedom;
    Laurent and Massart's bound at level ``1/n`` for each of the ``n`` columns
    gives ``1 + 2 sqrt(log(n) / m) + 2 log(n) / m``. A count sketch's columns
    have norm 1. For the rule only: a fit computes the exact maximum of its
    own ``J`` (:meth:`~dpglm.distributed.protocol.SketchSpec.column_norm_bound`).

    Examples
    --------
    >>> round(expected_column_norm(100_000, 200), 2), expected_column_norm(50, None)
    (1.26, 1.0)
    >>> expected_column_norm(100_000, 200, "count")
    1.0
    """
    if m is None or sketch != GAUSSIAN:
        return 1.0
    x = math.log(n) / m
    return math.sqrt(1.0 + 2.0 * math.sqrt(x) + 2.0 * x)


def rule_sizes(n, d, blocks, tau, n_iter, sketch_dim, sketch=GAUSSIAN):
    """``(tau, m, T)``: each given value, or the rule's; ``blocks`` the smallest and largest
    party's number of features. A Gaussian sketch's ``m`` is capped by the memory of its
    ``m n`` entries, a count sketch's (``n`` entries) is not. Without a sketch
    (``sketch_dim=None``) ``T`` is the Gaussian rule's: each iteration uploads ``n`` floats
    a party, and there is no sketch error to weigh ``T`` against."""
    smallest_block, largest_block = blocks
    if tau is None:
        # a party scores all its coordinates: d_k n flops, less than the sketch's 2 m n
        tau = smallest_block
    if isinstance(sketch_dim, str):  # "auto"
        cap = max(1, MAX_SKETCH_ENTRIES // n) if sketch == GAUSSIAN else n
        sketch_dim = min(n, max(min(d, cap), min(math.ceil(d / SKETCH_ERROR**2), cap)))
    if n_iter is None:
        p_min = tau / largest_block
        # Frank-Wolfe's 2 c_f / (p T + 2) at a share of the sketch's error (see
        # vertical_fw_rule); kept when the cap makes m smaller: the noise does not grow with T
        share = OPTIMISATION_SHARE[GAUSSIAN if sketch_dim is None else sketch]
        target = share * SKETCH_ERROR
        n_iter = max(1, math.ceil((2.0 * CURVATURE / target - 2.0) / p_min))
    return tau, sketch_dim, n_iter


def regime_terms(n, d, m, r, b, clip, noise, z_sel, sigma, n_iter):
    """``(signal, sketches, selections)``: a gradient's signal at the last step and the std
    of its two noises, in units of the unclipped gradient (see :func:`vertical_fw_rule`).

    The selections' noise is weighed by
    :func:`~dpglm.distributed.vertical_plan.selection_averaging`, as in the split."""
    spread = SPREAD * b
    signal = r / math.sqrt(d) * spread**2
    sketches = sigma * spread / math.sqrt(n)
    kappa = clip_attenuation(clip, spread * math.hypot(sigma, sketch_error(n, m, r, b)))
    selections = UNIT_STD[noise] * z_sel * 2.0 * clip / (n * kappa)
    return signal, sketches, selections * selection_averaging(n_iter)


def records_needed(n, signal, sketches, selections):
    """The ``n'`` at which ``signal / hypot(sketches sqrt(n / n'), selections n / n')`` is
    ``SNR_NEEDED``: the sketches' noise on a gradient falls like ``1 / sqrt(n)``, the
    selections' like ``1 / n``, at the same multipliers."""
    need = (signal / SNR_NEEDED) ** 2
    S, Q = sketches**2, selections**2
    x = need / S if Q == 0 else (-S + math.sqrt(S * S + 4.0 * Q * need)) / (2.0 * Q)
    return max(1, math.ceil(n / x))


def predicted_regime(n, d, m, K, radii, bounds, clip, noise, z_sel, z_g, sketch_sensitivity, steps,
            epsilon):  # fmt: skip
    """The fit's predicted regime (``info["regime"]``); warns when far below beating 0."""
    r, b = float(radii.max()), float(bounds.max())
    sigma = margin_noise_per_unit(sketch_sensitivity, r, steps, K) * z_g
    signal, sketches, selections = regime_terms(
        n, d, m, r, b, clip, noise, z_sel, sigma, len(steps)
    )
    snr = signal / math.hypot(sketches, selections)
    regime = {
        "snr": snr,
        "snr_needed": SNR_NEEDED,
        "beats_zero": snr >= SNR_NEEDED,
        "min_n": records_needed(n, signal, sketches, selections),
        "margin_noise": sigma,
        "gradient_signal": signal,
        "gradient_noise": {"feature sharing": sketches, "index selection": selections},
    }
    if snr < SNR_NEEDED / FAR_BELOW:
        warnings.warn(
            f"vertical_fw is not expected to beat w = 0 with n={n} records at "
            f"epsilon={epsilon:.6g}: the predicted signal-to-noise of a vertex score is "
            f"{snr:.3g}, below the {SNR_NEEDED:g} at which the fit beats w = 0; at this "
            f"epsilon and with these settings it is expected from n={regime['min_n']} "
            "records (vertical_fw_rule predicts the regime for given n, epsilon and "
            "delta). Nothing has been charged yet.",
            UserWarning,
            stacklevel=3,
        )
    return regime


def full_rule(n, d, parties, epsilon, delta, radius, bound, *, noise="laplace", accountant="auto",
          selection_share=None, tau=None, n_iter=None, sketch_dim="auto", clip=None,
          column_norm=None, blocks=None, find_min_n=True, sketch=COUNT):  # fmt: skip
    """:func:`vertical_fw_rule` with its internals: any accountant or share, a given ``J``."""
    if blocks is None:  # contiguous near-equal blocks
        blocks = (d // parties, -(-d // parties))
    tau, m, T = rule_sizes(n, d, blocks, tau, n_iter, sketch_dim, sketch)
    if math.isinf(epsilon):
        clip = math.inf if clip is None else clip
        return VerticalRule(T, m, clip, tau, selection_share, 0.0, 0.0, 0.0, math.inf,
                            SNR_NEEDED, 1)  # fmt: skip
    if accountant == PAPER and selection_share is None:
        selection_share = 0.5
    share = None if selection_share is None else Share(selection_share, "selection_share")
    p_min = tau / blocks[1]
    steps = 2.0 / (p_min * np.arange(T) + 2.0)
    if column_norm is None:
        column_norm = expected_column_norm(n, m, sketch)
    sketch_sensitivity = 2.0 * bound * column_norm
    per_unit = margin_noise_per_unit(sketch_sensitivity, radius, steps, parties)
    rows = n if m is None else m
    error = sketch_error(n, rows, radius, bound)
    rule_clip = clip is None
    clip = bound if rule_clip else clip
    for _ in range(FIXED_POINT_STEPS):
        selection_sensitivity = 2.0 * radius * clip / n
        events, _ = paper_events(
            parties * T, noise, (selection_sensitivity, sketch_sensitivity, radius, bound),
            steps, parties, n, rows, clip, (epsilon, delta, accountant), share,
        )  # fmt: skip
        z_sel, z_g = calibrated_multipliers(events, epsilon, delta, accountant, share)
        sigma = per_unit * z_g
        if not rule_clip:
            break
        # a fraction of what each term carries besides its signal: noise and sketch error
        previous, clip = clip, CLIP_RATIO * SPREAD * bound * math.hypot(sigma, error)
        if abs(clip - previous) <= 1e-3 * previous:
            break
    terms = regime_terms(n, d, rows, radius, bound, clip, noise, z_sel, sigma, T)
    snr = terms[0] / math.hypot(*terms[1:])
    min_n = records_needed(n, *terms)
    for _ in range(MIN_N_STEPS if find_min_n else 0):
        # the rule at that n (its split, clip and sketch change with n), until it settles
        there = full_rule(min_n, d, parties, epsilon, delta, radius, bound, noise=noise,
                      accountant=accountant, selection_share=selection_share, tau=tau,
                      n_iter=n_iter, sketch_dim=sketch_dim, clip=None if rule_clip else clip,
                      blocks=blocks, find_min_n=False, sketch=sketch)  # fmt: skip
        settled = abs(there.min_n - min_n) <= 0.02 * min_n
        min_n = there.min_n
        if settled:
            break
    return VerticalRule(T, m, float(clip), tau, selection_share, z_sel, z_g, sigma, snr,
                        SNR_NEEDED, int(min_n))  # fmt: skip


def vertical_fw_rule(
    n: int,
    d: int,
    parties: int,
    epsilon: float,
    delta: float,
    radius: float,
    feature_bound: float,
    *,
    noise: str = "laplace",
    sketch: str = COUNT,
) -> VerticalRule:
    """Choose ``n_iter``, ``sketch_dim``, ``clip``, ``tau`` and the split of the vertical fit.

    :func:`~dpglm.distributed.vertical_fw.vertical_fw`'s parameters, from
    public numbers only (the paper's variant): ``n`` records, ``d``
    features in ``parties`` near-equal blocks, the target ``(epsilon, delta)``,
    the radius ``r`` of each party's ball and the features' bound ``b``. The
    choice follows the three errors of the fit:

    * **the noise.** A sketch's own signal-to-noise is
      ``||J a_j|| / (sqrt(m) z_g Delta) ~ epsilon sqrt(n / (m K T log(1/delta)))``
      (``z_g ~ sqrt(K T log(1/delta)) / epsilon``, ``Delta = 2 b max_i ||J e_i||``),
      but the gradients read the sum of the ``K T`` uploads, weighted in ``q``
      by :func:`~dpglm.distributed.vertical_plan.noise_weights`
      (``sum_t w_t^2 ~ 4 / (3 p T)``), through the
      ``m`` entries of ``J a_j``: each pseudo-margin carries noise
      ``sigma = r sqrt(K sum_t w_t^2) Delta z_g ~ r K Delta sqrt(log(1/delta)) / epsilon``,
      and a gradient ``sigma b / sqrt(3 n)``, *independent of T and m*
      (``m`` enters only through ``Delta``, which shrinks towards ``2 b``).
      Against the gradient ``w b^2 / 3`` of a coefficient ``w`` (features of the
      spread of a uniform on ``[-b, b]``), taking the reference coefficient
      ``w = r / sqrt(d)``, the score's signal-to-noise is
      ``snr ~ epsilon sqrt(n) / (K sqrt(d log(1/delta)))`` up to constants:
      it sets the regime, not the sizes.
    * **the sketch.** The paper's variant minimises a sketched objective
      whose minimiser is off by ``O(sqrt(d / m))`` of ``w``: ``m`` is chosen so
      that ``sqrt(d / m) = 0.35`` (``m ~ 8 d``), capped at ``2 10^8 / n``
      (each party rebuilds ``J``, ``m n`` float64: 1.6 GB) and at ``n``.
    * **the optimisation.** Frank-Wolfe's error ``2 c_f / (p_min T + 2)``.
      With a Gaussian sketch the work ``~ T m n`` is fixed, and the sum of the
      two errors is least when the optimisation's is half the sketch's,
      ``T = (4 c_f / sqrt(d / m) - 2) / p_min``, with ``c_f = 4.5``: 50
      iterations at ``m = 8 d``, where the issue's problem without noise stops
      gaining from ``T`` (held-out ``R^2`` 0.70, 0.77, 0.77 at ``T`` = 25, 50,
      100 with ``m = 400``). A count sketch's iteration costs the party's
      gradient pass (``tau n``) whatever ``m``, so the rule aims the
      optimisation's error at an eighth of the sketch's instead: ``T = 204``
      at ``m = 8 d``. As the noise does not grow with ``T``, more iterations
      cost only time, and they average more selections (the split and the
      regime weigh the selections' noise accordingly,
      :func:`~dpglm.distributed.vertical_plan.selection_averaging`). Measured
      with the count sketch, going from 50 iterations (the selections weighed
      at the last one) to 204 (weighed by their averaging): on the issue's
      problem (``benchmarks/bench_vertical_rule.py``) held-out ``R^2`` -0.51
      -> -0.12 at ``epsilon = 1``, 0.24 -> 0.30 at 4, 0.78 -> 0.85 at 16; on
      ``n = 10^6``, ``d = 200`` (``benchmarks/bench_vertical_scaling.py``, 2
      seeds) relative suboptimality 8.6 -> 7.3 (``w = 0``: 8.0) at
      ``epsilon = 1``, 2.4 -> 2.1 at 4, 0.87 -> 0.48 at 16. ``T`` is kept
      when a Gaussian sketch's cap makes ``m`` smaller.

    Each party scores as many coordinates as the smallest party holds
    (``tau = floor(d / K)``; ``p_min = 1`` when ``K`` divides ``d``): ``d_k n``
    flops, less than the ``2 m n`` of the sketch products. The budget
    is split with the least noise on the last scores (``selection_share=None``,
    see :func:`~dpglm.distributed.vertical_fw.vertical_fw`). The clip is a tenth of what a term
    ``(u_i - y_i) a_ij`` carries besides its signal,
    ``C = 0.1 b_rms hypot(sigma, e)``, ``e = sqrt(n / m) b_rms r`` the
    paper's sketch error on a pseudo-margin (``||A x|| / sqrt(m)``): a
    gradient of terms clipped far below their noise keeps a share
    ``kappa ~ 0.8 C / (b_rms s)`` of its signal
    (:func:`~dpglm.distributed.vertical_plan.clip_attenuation`),
    so the selections' noise, ``z_sel 2 r C / n`` on the clipped scores,
    weighs ``~ 2.5 r b_rms s / n`` against the signal whatever the clip below
    ``s``, and more above it, while the sketches' noise passes a small clip
    with at most 25 % more weight (a clipped Gaussian's
    ``sqrt(E min(Z^2, c^2)) / erf(c / sqrt(2))`` tends to ``sqrt(pi / 2)``).
    The fixed point of ``C`` and the calibration takes a few calibrations
    (nothing is charged).

    The regime: the fit is expected to beat ``w = 0`` when ``snr >= 1``, the
    level at which held-out ``R^2`` crosses 0 on the issue's problem
    (``benchmarks/bench_vertical_rule.py``: mean ``R^2`` -0.39 at ``snr``
    0.6, 0.15 at 1.2, 0.22 at 1.5, 0.71 at 6 with the Gaussian sketch and
    ``T = 50``; with the count sketch and ``T = 204``, -0.12 at 0.2, -0.09 at
    0.65, 0.30 at 1.6, 0.85 at 6.6, and at ``epsilon = 1`` for growing
    ``n``: 0.02 at 0.49, -0.04 at 0.72, 0.23 at 1.14, 0.47 at 1.52);
    ``min_n`` is where ``snr`` reaches it at the same ``(epsilon, delta)``:
    the sketches' noise on a gradient falls like ``1 / sqrt(n)``, the
    selections' like ``1 / n``.
    :func:`~dpglm.distributed.vertical_fw.vertical_fw` warns before charging
    anything when ``snr`` is below half that level.

    Parameters
    ----------
    n, d, parties : int
        Records, features, parties ``K``.
    epsilon, delta : float
        Target guarantee.
    radius : float
        ``r``, radius of each party's L1 ball.
    feature_bound : float
        ``b``, bound on every feature (public).
    noise : {"laplace", "gumbel"}, default="laplace"
        The selections' noise.
    sketch : {"count", "gaussian"}, default="count"
        The kind of sketch (its column norm, and whether memory caps ``m``).

    Returns
    -------
    VerticalRule
        ``n_iter``, ``sketch_dim``, ``clip``, ``tau``, ``selection_share`` and
        the predicted regime (``snr``, ``min_n``, ``beats_zero``).

    Examples
    --------
    >>> rule = vertical_fw_rule(100_000, 100, 2, 4.0, 1e-10, 18.0, 1.0)
    >>> round(rule.snr, 1), bool(rule.clip < 1e3)
    (1.6, True)
    >>> rule.n_iter, rule.sketch_dim, rule.tau, rule.selection_share
    (204, 817, 50, None)
    >>> small = vertical_fw_rule(10_000, 100, 2, 1.0, 1e-8, 18.0, 1.0)
    >>> bool(rule.beats_zero), bool(small.beats_zero), small.min_n > 10_000
    (True, False, True)
    """
    epsilon, delta = check_privacy_target(epsilon, delta, positive_delta="the sketches")
    K = check_positive_int("parties", parties)
    return full_rule(
        check_positive_int("n", n),
        check_positive_int("d", d),
        K,
        epsilon,
        delta,
        check_positive("radius", radius),
        check_positive("feature_bound", feature_bound),
        noise=noise,
        sketch=check_sketch_kind(sketch),
    )
