"""The privacy plan of the feature-split private Frank-Wolfe, and how it splits the budget.

:func:`~dpglm.distributed.vertical_fw.vertical_fw` releases ``K T`` noisy
selections (report-noisy-max of the vertex scores) and ``K T`` Gaussian
sketches of the parties' active features, and, in its centred variant, one
Gaussian sketch of the targets. This module builds those events from public
numbers (sizes, radii, bounds, the clip, the sketch's largest column norm),
chooses the ratio of their noise multipliers that leaves the least noise on
the last iteration's vertex scores (the noise model of :func:`paper_model`
and :func:`centred_events`), and keeps the paper's own calibration
(:func:`paper_sketch_multiplier`, advanced composition for the selections).
Nothing here reads data; the accountant scales the multipliers to the target.

Examples
--------
>>> from dpglm.privacy.targets import Share
>>> selection, sketch = share_events(10, "laplace", 0.01, 2.5, Share(0.5, "selection_share"))
>>> selection.part, sketch.part, sketch.count
('index selection', 'feature sharing', 10)
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from dpglm.privacy.events import GaussianEvent, PrivacyPlan
from dpglm.privacy.spending import calibrate_cached
from dpglm.solvers.dp_fw import NEIGHBOURING, fw_plan

__all__ = [
    "PAPER",
    "SELECTION_PART",
    "SHARING_PART",
    "TARGET_PART",
    "calibrated_multipliers",
    "centred_events",
    "clip_attenuation",
    "noise_weights",
    "paper_events",
    "paper_model",
    "paper_sketch_multiplier",
    "selection_averaging",
    "share_events",
]

PAPER = "paper"
SELECTION_PART = "index selection"
SHARING_PART = "feature sharing"
TARGET_PART = "target sharing"
#: rms of a feature bounded by ``b``, in units of ``b``: the spread of a uniform on [-b, b]
SPREAD = 1.0 / math.sqrt(3.0)
#: std of the selections' unit noise
UNIT_STD = {"laplace": math.sqrt(2.0), "gumbel": math.pi / math.sqrt(6.0)}
#: calibrations of the template at most, to reach the clip's fixed point
FIXED_POINT_STEPS = 20


def share_events(n_releases, noise, selection_sensitivity, sketch_sensitivity, share):
    """Template events of the paper's variant: selections at multiplier 1, sketches at the
    multiplier that gives the selections a share ``share`` of the zCDP ``rho``."""
    selection = selection_event(n_releases, noise, selection_sensitivity)
    rho_sketch = share.matching(selection.rho)
    sketch = sketch_event(n_releases, 1.0 / math.sqrt(2.0 * rho_sketch), sketch_sensitivity)
    return selection, sketch


def sketch_event(n_releases, multiplier, sensitivity):
    return GaussianEvent(
        noise_multiplier=float(multiplier),
        count=n_releases,
        sensitivity=sensitivity,
        part=SHARING_PART,
        label=SHARING_LABEL,
    )


def least_noise(W, weights):
    """Multipliers ``z_i`` (``z_0 = 1``) that minimise ``sum_i (a_i z_i)^2`` at a fixed
    ``rho = sum_i W_i / z_i^2``: ``z_i^2 ~ sqrt(W_i) / a_i`` (Lagrange: ``a_i^2 z_i^4 = W_i``
    up to one factor). Only the ratios matter: the calibration scales all of them."""
    z = np.asarray(W, dtype=float) ** 0.25 / np.sqrt(np.asarray(weights, dtype=float))
    return z / z[0]


def margin_noise_per_unit(sketch_sensitivity, r, steps, parties):
    """Std, per unit sketch multiplier, of the noise on each pseudo-margin at the last step.

    Party ``k``'s upload at step ``t`` enters the final ``q`` with weight ``r w_t``
    (:func:`noise_weights`): ``q`` carries noise of std ``r sqrt(K sum_t w_t^2) Delta``
    per entry, and ``u_i = (J^T q)_i`` about as much (``||J e_i|| ~ 1``).
    """
    return math.sqrt(parties * noise_weights(steps)) * r * sketch_sensitivity


def clip_attenuation(clip: float, noise_std: float) -> float:
    """Slope of the mean of a clipped term, ``E clip(Z + mu, C)``, in ``mu`` at 0.

    ``Z ~ N(0, noise_std^2)``: ``P(|Z| < C) = erf(C / (sqrt(2) noise_std))``. A
    gradient of terms clipped far below their noise keeps this fraction of its
    signal (``2 phi(0) C / noise_std``), so the selections' noise, added to the
    clipped gradient, weighs as ``1 / attenuation`` times more against the signal.

    Examples
    --------
    >>> round(clip_attenuation(1.0, 1.0), 4), clip_attenuation(math.inf, 1.0)
    (0.6827, 1.0)
    >>> bool(abs(clip_attenuation(0.01, 1.0) - 0.01 * math.sqrt(2 / math.pi)) < 1e-6)
    True
    """
    if math.isinf(clip) or noise_std == 0:
        return 1.0
    return math.erf(clip / (math.sqrt(2.0) * noise_std))


#: the iterations at which the selections' weight is counted (see selection_averaging): the
#: sizes at which the regime's threshold was measured
REFERENCE_ITERATIONS = 50


def selection_averaging(n_iter: int) -> float:
    """``sqrt(REFERENCE_ITERATIONS / T)``: the weight of one selection's noise on the iterate.

    At a fixed budget each of the ``T`` selections carries noise that grows like
    ``sqrt(T)``, and the Frank-Wolfe iterate averages about ``T`` of them (its
    last ``T / 2`` vertices weigh ``~ 2 / T`` each), so what their noise leaves
    on it does not grow with ``T``, as the sketches' does not; the selections'
    weight in the split and in the regime is counted as at ``REFERENCE_ITERATIONS``.

    Examples
    --------
    >>> selection_averaging(50), selection_averaging(200)
    (1.0, 0.5)
    """
    return math.sqrt(REFERENCE_ITERATIONS / n_iter)


def paper_model(n_releases, noise, sensitivities, steps, parties, n, m, clip, target):
    """The paper's variant calibrated as one plan: the multipliers with the least noise.

    ``sensitivities`` holds, from public numbers, the selection's ``2 r C / n``
    and the sketches' ``Delta = 2 b max_i ||J e_i||`` (largest ``r`` and ``b``),
    and ``r`` and ``b``; ``target`` is ``(epsilon, delta, accountant)``.

    On a vertex score ``-<g, s>`` at the last iteration the sketches leave noise
    of std ``a_f z_g``: the ``K`` parties' uploads accumulate in ``q`` with the
    weights of :func:`noise_weights`, so each pseudo-margin carries noise of std
    ``sigma = s z_g``, ``s = r sqrt(K sum_t w_t^2) Delta``; the gradient reads
    it through ``(1/n) (J a_j)^T`` with ``||J a_j|| ~ b_rms sqrt(n)``
    (``b_rms = b / sqrt(3)``, the spread of a uniform on ``[-b, b]``), and the
    score multiplies by ``r``: ``a_f = r s b_rms sqrt(n) / n``. The selections
    add their own noise, of std ``u z_sel 2 r C / n`` (``u`` the std of a unit
    draw), to the *clipped* gradient: when the terms ``(u_i - y_i) a_ij`` are
    clipped below what they carry besides their signal (``b_rms`` times
    ``hypot(sigma, e)``, ``e`` the pseudo-margins' sketch error,
    :func:`sketch_error`), the gradient keeps a fraction
    ``kappa = erf(C / (sqrt(2) b_rms hypot(sigma, e)))`` of its signal
    (:func:`clip_attenuation`), so against the signal the selections weigh
    ``a_sel = u 2 r C / (n kappa)``, times :func:`selection_averaging` (the
    iterate averages the ``T`` selections). Each part costs zCDP ``W_i / z_i^2``
    (``W_sel = K T rho_1``, ``rho_1`` one selection's ``rho`` at multiplier 1;
    ``W_g = K T / 2``); the variance ``a_sel^2 z_sel^2 + a_f^2 z_g^2`` at a
    fixed total ``rho`` is least at ``z_i^2 ~ sqrt(W_i) / a_i`` (Lagrange), and
    the accountant scales both multipliers by one factor until the plan meets
    the target. ``kappa`` depends on ``z_g`` through ``sigma``: the ratio and
    the calibration are iterated to their fixed point (a few calibrations of
    the template, no charge). These weights set the split only, never a
    sensitivity or a noise scale.

    Returns ``(events, model)``: the template events and the calibrated
    multipliers, ``sigma``, ``kappa`` and the weights.
    """
    selection_sensitivity, sketch_sensitivity, r, b = sensitivities
    selection = selection_event(n_releases, noise, selection_sensitivity)
    if selection_sensitivity is None:  # not private: the multipliers do not matter
        return (selection, sketch_event(n_releases, 1.0, sketch_sensitivity)), None
    epsilon, delta, accountant = target
    per_unit = margin_noise_per_unit(sketch_sensitivity, r, steps, parties)
    spread = SPREAD * b  # the rms of a feature bounded by b, taken as uniform
    a_f = r * per_unit * spread * math.sqrt(n) / n
    a_sel = UNIT_STD[noise] * selection_sensitivity * selection_averaging(len(steps))
    error = sketch_error(n, m, r, b)
    W = (n_releases * selection.rho, 0.5 * n_releases)
    kappa, z, calibrated = 1.0, None, None
    for _ in range(FIXED_POINT_STEPS):
        previous = kappa
        z = least_noise(W, (a_sel / kappa, a_f))
        events = (selection, sketch_event(n_releases, z[1], sketch_sensitivity))
        calibrated = calibrate_cached(PrivacyPlan(events, NEIGHBOURING), epsilon, delta,
                                      accountant)  # fmt: skip
        z_g = calibrated.plan.events[1].noise_multiplier
        kappa = clip_attenuation(clip, spread * math.hypot(per_unit * z_g, error))
        if abs(kappa - previous) <= 1e-3 * previous:
            break
    z_sel, z_g = (e.noise_multiplier for e in calibrated.plan.events)
    model = {
        "selection_weight": a_sel / kappa,
        "sketch_weight": a_f,
        "clip_attenuation": kappa,
        "margin_noise": per_unit * z_g,
        "selection_noise_multiplier": z_sel,
        "sketch_noise_multiplier": z_g,
    }
    return events, model


def sketch_error(n, m, r, b):
    """Typical error of a pseudo-margin ``(J^T J A x - A x)_i`` of the paper's variant.

    About ``||A x|| / sqrt(m)``, with ``||A x|| ~ sqrt(n) b_rms r`` (``b_rms`` the
    spread of a uniform on ``[-b, b]``); none without sketch (``m = n``). It is
    no privacy noise, but it passes the clip as the noise does.
    """
    if m >= n:
        return 0.0
    return math.sqrt(n / m) * SPREAD * b * r


def paper_events(n_releases, noise, sensitivities, steps, parties, n, m, clip, target, share):
    """Template events of the paper's variant: ``share`` of the zCDP ``rho`` to the
    selections (:func:`share_events`) when given, else the least-noise split
    (:func:`paper_model`).

    Returns ``(events, model)``, ``model`` None with a ``share``; the
    arguments are :func:`paper_model`'s.

    Examples
    --------
    >>> from dpglm.privacy.targets import Share
    >>> events, model = paper_events(4, "laplace", (0.01, 2.5, 1.0, 1.0), None, 2, 100, 20,
    ...                              1.0, None, Share(0.5, "selection_share"))  # fmt: skip
    >>> [e.part for e in events], model
    (['index selection', 'feature sharing'], None)
    """
    if share is not None:
        selection_sensitivity, sketch_sensitivity = sensitivities[:2]
        events = share_events(n_releases, noise, selection_sensitivity, sketch_sensitivity, share)
        return events, None
    return paper_model(n_releases, noise, sensitivities, steps, parties, n, m, clip, target)


def calibrated_multipliers(events, epsilon, delta, accountant, share):
    """``(z_sel, z_g)`` as the fit's charge will calibrate them, without charging anything."""
    if accountant != PAPER:
        plan = calibrate_cached(PrivacyPlan(events, NEIGHBOURING), epsilon, delta, accountant)
        return tuple(float(e.noise_multiplier) for e in plan.plan.events[:2])
    (eps1, delta1), (eps2, delta2) = share.split(epsilon, delta)
    selected = calibrate_cached(PrivacyPlan(events[:1], NEIGHBOURING), eps1, delta1, "advanced")
    z_sketch = paper_sketch_multiplier(events[1].count, eps2, delta2)
    return float(selected.plan.events[0].noise_multiplier), z_sketch


SHARING_LABEL = (
    "sketched active feature J a_j + N(0, sigma^2 I_m) of each party: entries "
    "clipped to [-b_j, b_j], so one record moves J a_j by at most 2 b_j max_i ||J e_i|| "
    "(shown for the largest b_j)"
)


def selection_event(n_releases, noise, sensitivity):
    (selection,) = fw_plan(n_releases, noise, sensitivity).events
    return replace(
        selection,
        part=SELECTION_PART,
        label="signed index of each party: report-noisy-max of -<g, s> over the vertices "
        "+-r_k e_j of its tau sampled coordinates, g from the public sketch with every "
        "per-sample term clipped to C (sensitivity 2 r C / n, shown for the largest r)",
    )


def noise_weights(steps) -> float:
    """``sum_t w_t^2``: the weights ``w_t = gamma_t prod_{s > t} (1 - gamma_s)`` of the
    ``t``-th upload in the final broadcast, squared and summed.

    The noise a party's uploads leave in ``q`` after the last step has this
    variance per unit of ``(r sigma)^2``: about ``4 / (3 T)`` for ``2 / (t + 2)``.

    Examples
    --------
    >>> T = 100
    >>> w = noise_weights(2.0 / (np.arange(T) + 2.0))
    >>> bool(abs(w * 3 * T / 4 - 1) < 0.05)
    True
    """
    steps = np.asarray(steps, dtype=float)
    keep = np.append(np.cumprod((1.0 - steps)[::-1])[::-1][1:], 1.0)
    return float(np.sum((steps * keep) ** 2))


def centred_events(n_releases, noise, sensitivities, steps, parties, n, share):
    """Template events of the centred variant: the multipliers that minimise the noise.

    ``sensitivities`` holds, from public numbers, the selection's ``2 r C / n``
    (largest ``r``), the sketches' ``2 b max_i ||J e_i||`` and the target's
    ``2 B max_i ||J e_i||``, and the radius ``r`` and bound ``b`` (largest).
    The noise each part leaves on a vertex score ``-<g, s>`` at the last
    iteration has std, per unit multiplier, ``a_sel = 2 r C / n``,
    ``a_y = r (2 B c) b sqrt(n) / n`` (the target's noise, through
    ``||J a_j|| <= b sqrt(n)``-sized columns) and
    ``a_f = r sqrt(K sum_t w_t^2) r (2 b c) b sqrt(n) / n`` (the sketches' noise,
    accumulated in ``q``; :func:`noise_weights`). With each part's zCDP
    ``W_i / z_i^2`` (``W`` the count times one release's ``rho`` at multiplier
    1), the variance ``sum a_i^2 z_i^2`` at a fixed total ``rho`` is least at
    ``z_i^2 ~ sqrt(W_i) / a_i``. A ``share`` (not None) instead fixes the
    selections' share of ``rho``; the two Gaussian parts keep their ratio.
    Calibration scales all three multipliers by one factor.
    """
    selection_sensitivity, sketch_sensitivity, target_sensitivity, r, b = sensitivities
    selection = selection_event(n_releases, noise, selection_sensitivity)
    label = (
        "the sketched targets J y + N(0, sigma_y^2 I_m), once, from party 0: y clipped to "
        "[-B, B], so one record moves J y by at most 2 B max_i ||J e_i||"
    )
    if selection_sensitivity is None:  # not private: the multipliers do not matter
        weights = np.ones(3)
    else:
        column = b * math.sqrt(n)
        accumulated = math.sqrt(parties * noise_weights(steps)) * r
        weights = np.array(
            [
                selection_sensitivity,
                r * target_sensitivity * column / n,
                r * accumulated * sketch_sensitivity * column / n,
            ]
        )
    # W_i: each part's zCDP at multiplier 1
    W = np.array([n_releases * selection.rho, 0.5, 0.5 * n_releases])
    z = W**0.25 / np.sqrt(weights)
    if share is not None:
        rho_selection = W[0] / z[0] ** 2
        rho_gaussian = W[1] / z[1] ** 2 + W[2] / z[2] ** 2
        z[1:] *= math.sqrt(rho_gaussian / share.matching(rho_selection))
    z = z / z[0]  # the selections at multiplier 1, as in the paper's variant
    sketch = GaussianEvent(
        noise_multiplier=float(z[2]),
        count=n_releases,
        sensitivity=sketch_sensitivity,
        part=SHARING_PART,
        label=SHARING_LABEL,
    )
    target = GaussianEvent(
        noise_multiplier=float(z[1]),
        count=1,
        sensitivity=target_sensitivity,
        part=TARGET_PART,
        label=label,
    )
    return selection, sketch, target


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
