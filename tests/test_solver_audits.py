"""Single-step audits of DP-CD, DP-GCD and DP-SGD on worst-case replace-one neighbours.

Each audit runs the solver thousands of times on two datasets that differ in
one record, a canary whose clipped per-sample terms sit at the clipping bound
with opposite signs, and bounds from below (at total error probability 1e-6,
seeded from the test name) how distinguishable the two output distributions
are. A correct solver fails with probability below 1e-6 (a few 1e-6 where one
test runs several audits); the broken variants, which run with less noise while
the report still claims the calibrated epsilon (``Release.scale``, where every
noise of a fit gets its scale, is patched), must fail.

DP-CD, one coordinate, one update: the released coefficient is a Gaussian
mechanism, audited in the Gaussian-DP domain against the ``mu`` whose
Gaussian pair is exactly (report epsilon, report delta)-DP.

DP-GCD, one step on 10 coordinates: the canary moves the score of coordinate 0
up and every other score down by the full score sensitivity (the non-monotone
worst case of report-noisy-max), and the update of whichever coordinate is
selected by the full update sensitivity. Audited are

* the selection alone (``audit_event``) against the per-release epsilon of the
  selection event: this catches the paper's published Laplace scale
  ``Delta / epsilon'``, half of the ``2 Delta / epsilon'`` that paper mode uses;
* the update alone against its own event (Gaussian-DP ``mu = 1 / z`` in tight
  mode, ``epsilon'`` for Laplace in paper mode), through a statistic that is
  the update shifted by the full sensitivity whichever coordinate was selected;
* in tight mode, the joint release (selection and update) against the report's
  epsilon for the whole one-step plan, through the privacy-loss statistic
  computed with the declared noise (at ``delta = 1e-2``: at ``delta = 1e-6`` the
  half-noise variant needs about 2e5 runs per side, too many for the test suite).

Paper mode's whole-plan claim cannot be audited after one step: formula (2)
for ``T = 1`` gives ``sqrt(4 log(1/delta)) epsilon' + 2 epsilon' (e^epsilon' - 1)``,
about ``6.8 epsilon'`` at ``delta = 1e-5``, while the two pure releases are
``2 epsilon'``-DP (``4 epsilon'`` with half the noise): even the broken variant
satisfies the claim.

The runs of one (mode, variant) are shared by its audits; each audit still draws
its pilot before, and independently of, its evaluation runs.

Extreme records: the same single steps of DP-CD and DP-SGD with a canary whose
features are ``+1e308`` in D and ``-1e308`` in D' (finite, but their squares,
products and margins overflow). DP-CD clips the entries to the public feature
bounds, DP-SGD clips each gradient to L2 norm ``C`` with the record's exact
norm: either way the canary moves the release by the full sensitivity and no
more, so the claim is not refuted and half the noise is caught.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import optimize, stats

from dpglm.audit import audit_epsilon, audit_event, mu_lower_bound
from dpglm.problem import Problem
from dpglm.solvers.dp_cd import dp_cd
from dpglm.solvers.dp_gcd import dp_gcd
from dpglm.solvers.dp_sgd import dp_sgd
from solver_problems import seed_of, with_less_noise

CLIP = 1.0
ROWS = 10  # records; the canary is one of them
N_CD = 15_000  # runs per side
N_TIGHT = 20_000
N_PAPER = 10_000
COORDS = 10  # DP-GCD candidates


def check(bound, claim, fails, what):
    if fails:
        assert bound.exceeds(claim), f"{what}: broken variant not caught: {bound} <= {claim:.4f}"
    else:
        assert not bound.exceeds(claim), f"{what}: correct solver refuted: {bound} > {claim:.4f}"


def gdp_mu(epsilon, delta):
    """The ``mu`` of the Gaussian pair that is exactly ``(epsilon, delta)``-DP (Balle-Wang)."""

    def excess(mu):
        return (
            stats.norm.cdf(-epsilon / mu + mu / 2)
            - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2)
            - delta
        )

    return optimize.brentq(excess, 1e-6, 100.0, xtol=1e-14)


# --- DP-CD: one update of one coordinate --------------------------------------------------


def cd_neighbours():
    """Squared loss at w = 0: record 0's term -y_0 x_0 is clipped to +C in D and -C in D'.

    The other records have x = 0 and contribute nothing: the released coefficient
    is ``-(g + noise)`` with ``g = +-C / n``, a sufficient statistic.
    """
    X = np.zeros((ROWS, 1))
    X[0, 0] = 1.0
    y = np.zeros(ROWS)
    y[0] = -10.0 * CLIP
    other = y.copy()
    other[0] = 10.0 * CLIP
    return {"D": Problem(X, y, "squared"), "D'": Problem(X, other, "squared")}


CD_FIT = {"epsilon": 1.0, "delta": 1e-5, "passes": 1.0, "clip": CLIP, "feature_bounds": 1.0}


@pytest.mark.parametrize("variant", ["correct", "half noise"])
def test_dp_cd_one_step_gaussian_audit(variant, monkeypatch, request):
    if variant == "half noise":
        with_less_noise(monkeypatch)
    problems = cd_neighbours()
    fit = dp_cd(problems["D"], random_state=0, **CD_FIT)
    assert fit.n_iter == 1 and fit.info["noise_std"].shape == (1,)
    report = fit.report
    assert report.epsilon <= CD_FIT["epsilon"] and report.delta == CD_FIT["delta"]
    mu_claim = gdp_mu(report.epsilon, report.delta)

    rng = np.random.default_rng(seed_of(request.node.name))

    def sample(key, n):
        return np.array(
            [dp_cd(problems[key], random_state=rng, **CD_FIT).coef[0] for _ in range(n)]
        )

    released0, released1 = sample("D", N_CD), sample("D'", N_CD)
    # means -C/n and +C/n: the midpoint threshold is fixed in advance
    bound = mu_lower_bound(released0, released1, 0.0)
    check(bound, mu_claim, variant != "correct", "DP-CD coefficient")
    if variant == "correct":
        assert bound.mu > 0.5 * mu_claim, f"audit without power: {bound}"
    print(f"DP-CD {variant}: claim eps={report.epsilon:.4f} mu={mu_claim:.4f}; {bound}")


# --- DP-GCD: one step over 10 coordinates ---------------------------------------------------


def gcd_neighbours():
    """Squared loss at w = 0, all columns bounded by 1, so C_j = C / sqrt(10).

    Record 0 (background) has terms (+C_j, ..., +C_j); the canary, record 1, has
    (+C_j, -C_j, ..., -C_j) in D and the opposite in D'. The clipped gradient is
    (2 C_j / n, 0, ..., 0) in D and (0, 2 C_j / n, ..., 2 C_j / n) in D', so every
    score |g_j| moves by the full sensitivity, coordinate 0 against all others.
    """
    X = np.zeros((ROWS, COORDS))
    X[0, :] = 1.0
    X[1, 0], X[1, 1:] = 1.0, -1.0
    y = np.zeros(ROWS)
    y[:2] = -10.0 * CLIP
    other = y.copy()
    other[1] = 10.0 * CLIP
    X = sp.csc_matrix(X)
    return {"D": Problem(X, y, "squared"), "D'": Problem(X, other, "squared")}


C_J = CLIP / math.sqrt(COORDS)
DELTA_G = 2 * C_J / ROWS  # sensitivity of g_j, and of every score (M_j = 1)


class SharedRuns:
    """Runs of one solver configuration on each input, handed out in order to every audit."""

    def __init__(self, run):
        self.run = run
        self.selected = {"D": [], "D'": []}
        self.updates = {"D": [], "D'": []}

    def sampler(self, statistic):
        cursor = {"D": 0, "D'": 0}

        def sample(key, n, rng):
            start, stop = cursor[key], cursor[key] + n
            while len(self.selected[key]) < stop:
                j, v = self.run(key, rng)
                self.selected[key].append(j)
                self.updates[key].append(v)
            cursor[key] = stop
            j = np.array(self.selected[key][start:stop])
            v = np.array(self.updates[key][start:stop])
            return statistic(j, v)

        return sample


def shifted_update(j, v):
    """The noisy g_j, shifted so that it is DELTA_G + noise on D and noise on D'.

    D has g = (DELTA_G, 0, ...), D' has g = (0, DELTA_G, ...): for j = 0 the
    release is kept, for j > 0 reflected around DELTA_G, so the selection drops out.
    """
    return np.where(j == 0, v, DELTA_G - v)


def gcd_runs(noise, fit_kwargs):
    problems = gcd_neighbours()

    def run(key, rng):
        fit = dp_gcd(problems[key], n_iter=1, noise=noise, random_state=rng, **fit_kwargs)
        j = int(fit.info["selected"][0])
        return j, -float(fit.coef[j])  # w_j = 0 - (1 / M_j) (g_j + noise), M_j = 1

    return problems, SharedRuns(run)


def check_one_step_plan(fit, noise):
    assert fit.n_iter == 1 and fit.info["noise"] == noise
    np.testing.assert_allclose(fit.info["clip_thresholds"], C_J, rtol=1e-14)
    selection, update = fit.report.mechanisms
    assert selection.count == update.count == 1
    assert selection.sensitivity == pytest.approx(DELTA_G, rel=1e-14)
    return selection, update


TIGHT_FIT = {"epsilon": 2.0, "delta": 1e-2, "clip": CLIP, "feature_bounds": 1.0}


@pytest.mark.parametrize("variant", ["correct", "half noise"])
def test_dp_gcd_tight_one_step_audit(variant, monkeypatch, request):
    fails = variant != "correct"
    if fails:
        with_less_noise(monkeypatch)
    problems, runs = gcd_runs("tight", TIGHT_FIT)
    fit = dp_gcd(problems["D"], n_iter=1, random_state=0, **TIGHT_FIT)
    selection, update = check_one_step_plan(fit, "tight")
    report = fit.report
    assert report.epsilon <= TIGHT_FIT["epsilon"]
    seed = seed_of(request.node.name)

    # 1. the selection alone, against its own (pure) epsilon 2 / z
    select = audit_event(runs.sampler(lambda j, v: j), "D'", "D", n=N_TIGHT, delta=0.0, rng=seed)
    check(select, selection.details["epsilon"], fails, "tight selection")

    # 2. the update alone: a Gaussian shift by DELTA_G, declared mu = 1 / z
    updates = runs.sampler(shifted_update)
    rng = np.random.default_rng(seed + 1)
    released1, released0 = updates("D", N_TIGHT, rng), updates("D'", N_TIGHT, rng)
    update_bound = mu_lower_bound(released0, released1, DELTA_G / 2)
    check(update_bound, 1.0 / update.noise_multiplier, fails, "tight update")

    # 3. the joint release against the report's epsilon for the one-step plan, through
    #    the privacy loss log(P_D / P_D') computed with the declared noise
    u = 1.0 / selection.noise_multiplier  # score gap over the Gumbel scale
    p = COORDS
    favoured = np.log(math.exp(u) / (math.exp(u) + p - 1) * (1 + (p - 1) * math.exp(u)))
    others = np.log((1 + (p - 1) * math.exp(u)) / (math.exp(u) * (math.exp(u) + p - 1)))
    sigma = update.noise_multiplier * DELTA_G

    def privacy_loss(j, v):
        t = shifted_update(j, v)
        return np.where(j == 0, favoured, others) + (t * DELTA_G - DELTA_G**2 / 2) / sigma**2

    joint = audit_epsilon(
        runs.sampler(privacy_loss), "D'", "D", n=N_TIGHT, delta=report.delta, rng=seed + 2
    )
    check(joint, report.epsilon, fails, "tight joint release")
    if not fails:  # the audits have power: the correct solver comes close to its claims
        assert select.epsilon > 0.5 * selection.details["epsilon"], select
        assert update_bound.mu > 0.5 / update.noise_multiplier, update_bound
        assert joint.epsilon > 0.4 * report.epsilon, joint
    print(
        f"DP-GCD tight {variant}: claims sel={selection.details['epsilon']:.4f} "
        f"mu={1 / update.noise_multiplier:.4f} eps={report.epsilon:.4f}\n"
        f"  selection: {select}\n  update: {update_bound}\n  joint: {joint}"
    )


PAPER_FIT = {"epsilon": 10.0, "delta": 1e-5, "clip": CLIP, "feature_bounds": 1.0}
PAPER_VARIANTS = {
    # variant: (events whose noise is halved, selection fails, update fails)
    "correct": ((), False, False),
    "paper's selection scale": (("noisy_max",), True, False),
    "half noise": (("noisy_max", "laplace"), True, True),
}


@pytest.mark.parametrize("variant", PAPER_VARIANTS)
def test_dp_gcd_paper_one_step_audit(variant, monkeypatch, request):
    halved, selection_fails, update_fails = PAPER_VARIANTS[variant]
    if halved:
        with_less_noise(monkeypatch, kinds=halved)
    problems, runs = gcd_runs("paper", PAPER_FIT)
    fit = dp_gcd(problems["D"], n_iter=1, noise="paper", random_state=0, **PAPER_FIT)
    selection, update = check_one_step_plan(fit, "paper")
    eps1 = selection.details["epsilon"]
    assert update.details["epsilon"] == pytest.approx(eps1, rel=1e-12)
    assert fit.report.accountant == "advanced" and fit.report.epsilon <= PAPER_FIT["epsilon"]
    seed = seed_of(request.node.name)

    # the selection alone against epsilon': report-noisy-max with Laplace scale
    # 2 Delta / epsilon' (ours) passes, the paper's Delta / epsilon' is 2 epsilon'-DP here
    select = audit_event(runs.sampler(lambda j, v: j), "D'", "D", n=N_PAPER, delta=0.0, rng=seed)
    check(select, eps1, selection_fails, "paper selection")
    # the update alone against epsilon': a Laplace shift by DELTA_G
    update_bound = audit_epsilon(
        runs.sampler(shifted_update), "D'", "D", n=N_PAPER, delta=0.0, rng=seed + 1
    )
    check(update_bound, eps1, update_fails, "paper update")
    if variant == "correct":
        assert select.epsilon > 0.5 * eps1 and update_bound.epsilon > 0.5 * eps1
    print(
        f"DP-GCD paper {variant}: claim eps'={eps1:.4f} (plan eps={fit.report.epsilon:.4f})\n"
        f"  selection: {select}\n  update: {update_bound}"
    )


# --- extreme records: one step of DP-CD and of DP-SGD ----------------------------------------

HUGE = 1e308
N_EXTREME = 4_000  # runs per side; epsilon 4 makes half the noise a large gap in mu
EXTREME_TARGET = {"epsilon": 4.0, "delta": 1e-5}


def extreme_neighbours(fit_intercept):
    """Squared loss at w = 0; the canary (record 0) has x = +1e308 in D, -1e308 in D'.

    Its derivative is ``0 - y_0 = 10 C`` on both sides, so its clipped term is
    ``+C`` in D and ``-C`` in D' (DP-CD: the entry clipped to the bound 1; DP-SGD:
    the gradient ``10 C (+-1e308)`` scaled to norm C). The other records have x = 0
    and y = 0: they contribute nothing, and the released coefficient is
    ``-gamma (g + noise)``, a sufficient statistic.
    """
    X = np.zeros((ROWS, 1))
    y = np.zeros(ROWS)
    y[0] = -10.0 * CLIP
    X[0, 0] = HUGE
    other = X.copy()
    other[0, 0] = -HUGE
    return {
        "D": Problem(X, y, "squared", fit_intercept=fit_intercept),
        "D'": Problem(other, y, "squared", fit_intercept=fit_intercept),
    }


def judge_extreme_audit(bound, mu_claim, variant, what):
    check(bound, mu_claim, variant != "correct", what)
    if variant == "correct":
        assert bound.mu > 0.5 * mu_claim, f"{what}: audit without power: {bound}"
    print(f"{what} {variant}: claim mu={mu_claim:.4f}; {bound}")


@pytest.mark.parametrize("variant", ["correct", "half noise"])
def test_dp_cd_one_step_audit_with_an_extreme_canary(variant, monkeypatch, request):
    if variant == "half noise":
        with_less_noise(monkeypatch)
    problems = extreme_neighbours(False)
    fit_kwargs = {**EXTREME_TARGET, "passes": 1.0, "clip": CLIP, "feature_bounds": 1.0}
    fit = dp_cd(problems["D"], random_state=0, **fit_kwargs)
    assert fit.n_iter == 1
    mu_claim = gdp_mu(fit.report.epsilon, fit.report.delta)
    rng = np.random.default_rng(seed_of(request.node.name))

    def sample(key, n):
        return np.array(
            [dp_cd(problems[key], random_state=rng, **fit_kwargs).coef[0] for _ in range(n)]
        )

    # D: g = C / n, the coefficient -(g + noise) is centred at -C / n; D' at +C / n
    bound = mu_lower_bound(sample("D", N_EXTREME), sample("D'", N_EXTREME), 0.0)
    judge_extreme_audit(bound, mu_claim, variant, "DP-CD, canary x = +-1e308")


@pytest.mark.parametrize("variant", ["correct", "half noise"])
def test_dp_sgd_one_step_audit_with_an_extreme_canary(variant, monkeypatch, request):
    """One full batch (every record, without replacement): a Gaussian release of the sum of
    the gradients clipped to norm C, the canary's ``+-C`` with its norm 1e308 read exactly
    (a norm overflowed to inf would make its clipped gradient 0, and no noise visible)."""
    if variant == "half noise":
        with_less_noise(monkeypatch)
    problems = extreme_neighbours(True)
    step = 1.0
    fit_kwargs = {
        **EXTREME_TARGET, "passes": 1.0, "batch_size": ROWS, "sampling": "without_replacement",
        "step": step, "clip": CLIP,
    }  # fmt: skip
    fit = dp_sgd(problems["D"], random_state=0, **fit_kwargs)
    assert fit.n_iter == 1
    mu_claim = gdp_mu(fit.report.epsilon, fit.report.delta)
    rng = np.random.default_rng(seed_of(request.node.name))

    def sample(key, n):
        # theta = -step (sum + noise) / b: the coefficient is the released sum's first entry
        return np.array(
            [dp_sgd(problems[key], random_state=rng, **fit_kwargs).coef[0] for _ in range(n)]
        )

    # the canary's gradient 10 C (+-1e308, 1) clipped to norm C is (+-C, C 1e-308): the
    # coefficient is centred at -C step / b in D, +C step / b in D'
    bound = mu_lower_bound(sample("D", N_EXTREME), sample("D'", N_EXTREME), 0.0)
    judge_extreme_audit(bound, mu_claim, variant, "DP-SGD, canary x = +-1e308")
