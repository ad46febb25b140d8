"""Vertical Frank-Wolfe: the centred variant learns and its releases carry the noise its plan
says; the paper's variant is calibrated as one plan by default.

Statistical tests fail a correct implementation with probability below 1e-6.
"""

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from dpglm.audit import mu_lower_bound
from dpglm.distributed import vertical_fw
from dpglm.distributed.protocol import Party, PartyConfig, SketchSpec, decode_message
from dpglm.distributed.vertical_plan import (
    noise_weights,
    paper_sketch_multiplier,
    selection_averaging,
)
from dpglm.distributed.vertical_rule import vertical_fw_rule
from dpglm.privacy.accounting import advanced_composition_epsilon
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.events import GaussianEvent, NoisyMaxEvent
from dpglm.privacy.releases import Release
from dpglm.problem import Problem
from solver_problems import issue_problem, r2, seed_of, with_less_noise

ALPHA = 1e-6


def test_without_privacy_the_centred_variant_learns_and_the_paper_variant_does_not():
    (X, y), (Xt, yt), w = issue_problem(20_000)
    kwargs = {
        "epsilon": math.inf, "delta": 0.0, "parties": 2, "tau": 50, "sketch_dim": 200,
        "radius": float(np.abs(w).sum()), "n_iter": 50, "random_state": 0,
    }  # fmt: skip
    prob = Problem(X, y, "squared")
    default = vertical_fw(prob, variant="centred", **kwargs)
    paper = vertical_fw(prob, variant="paper", **kwargs)
    assert default.info["variant"] == "centred" and paper.info["variant"] == "paper"
    assert r2(Xt, yt, default.coef) > 0.9
    # the paper's pseudo-margins J^T J A x keep an error of the order of ||A x|| / sqrt(m)
    assert r2(Xt, yt, paper.coef) < r2(Xt, yt, default.coef) - 0.1
    # one more sketch, J y, from party 0 at the first iteration
    uplink = default.info["uplink"]
    assert uplink["matches"] and uplink["total"] == paper.info["uplink"]["total"] + 200 * 8


def small_problem(n=300, p=6, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, p))
    return Problem(X, X[:, 0] - X[:, -1] + 0.1 * rng.standard_normal(n), "squared")


FIT = {
    "epsilon": 2.0, "delta": 1e-6, "parties": 2, "tau": 3, "sketch_dim": 8, "radius": 1.0,
    "n_iter": 4, "clip": 1.0, "feature_bounds": 1.0, "random_state": 3, "variant": "centred",
}  # fmt: skip


def test_the_plan_has_three_parts_calibrated_as_a_whole():
    prob = small_problem()
    fit = vertical_fw(prob, **FIT)
    report, info = fit.report, fit.info
    selection, sharing, target = report.mechanisms
    K, T, n = 2, FIT["n_iter"], prob.n_samples
    assert (selection.count, sharing.count, target.count) == (K * T, K * T, 1)
    assert target.part == "target sharing" and info["calibration"]["mode"] == "accounted"
    assert info["regime"] is None  # predicted for the paper's variant only
    assert report.epsilon <= FIT["epsilon"] and report.epsilon == pytest.approx(2.0, rel=1e-3)
    spec = SketchSpec(n, FIT["sketch_dim"], info["sketch_seed"], info["sketch"])
    column_norm = spec.column_norm_bound()
    B = info["target_bound"]
    assert pytest.approx(2 * FIT["radius"] * FIT["feature_bounds"]) == B  # sum_k r_k b
    assert target.sensitivity == pytest.approx(2 * B * column_norm, rel=1e-14)
    assert info["target_noise_std"] == pytest.approx(target.noise_scale, rel=1e-14)
    np.testing.assert_allclose(info["sketch_noise_std"], sharing.noise_scale, rtol=1e-14)
    # a given share fixes the selections' part of rho
    shared = vertical_fw(prob, **{**FIT, "selection_share": 0.3}).report.mechanisms
    rho = [shared[0].count * shared[0].details["rho"]] + [
        e.count / (2 * e.noise_multiplier**2) for e in shared[1:]
    ]
    assert rho[0] / sum(rho) == pytest.approx(0.3, rel=1e-9)
    with pytest.raises(ValueError, match="variant='paper'"):
        vertical_fw(prob, accountant="paper", **FIT)
    with pytest.raises(ValueError, match="variant must be"):
        vertical_fw(prob, **{**FIT, "variant": "centered"})
    with pytest.raises(ValueError, match="target_bound"):
        vertical_fw(prob, target_bound=-1.0, **FIT)


# --- the paper's variant: calibrated as one plan by default ---------------------------------

PAPER_FIT = {**FIT, "variant": "paper", "n_iter": 6}


def test_the_paper_variant_is_calibrated_as_one_plan_with_less_sketch_noise():
    # enough records that the selections, whose noise shrinks like 1 / n, need little budget
    prob = small_problem(n=20_000)
    target, delta = PAPER_FIT["epsilon"], PAPER_FIT["delta"]
    fit = vertical_fw(prob, **PAPER_FIT)
    paper = vertical_fw(prob, accountant="paper", **PAPER_FIT)
    assert fit.info["calibration"]["mode"] == "accounted" and fit.report.accountant != "paper"
    assert paper.info["calibration"]["mode"] == "paper"
    assert fit.report.epsilon <= target and fit.report.epsilon >= 0.98 * target
    assert fit.report.delta <= delta
    # the same sensitivities, less noise on every sketch: the tight accounting of the plan
    sketch, paper_sketch = fit.report.mechanisms[1], paper.report.mechanisms[1]
    assert sketch.sensitivity == paper_sketch.sensitivity
    assert sketch.noise_multiplier < paper_sketch.noise_multiplier
    assert np.all(fit.info["sketch_noise_std"] < paper.info["sketch_noise_std"])


@pytest.mark.parametrize("clip", [1.0, 1e4])
def test_the_default_ratio_of_the_multipliers_minimises_the_noise_on_the_last_scores(clip):
    """Lagrange: a_sel^2 z_sel^4 / W_sel = a_f^2 z_g^4 / W_g, with a_f the sketches' noise on a
    vertex score at the last step, a_sel the selections' over the clipped gradient's share of
    the signal (per unit multiplier), and W each part's rho at z = 1."""
    prob = small_problem()
    fit = vertical_fw(prob, **{**PAPER_FIT, "clip": clip})
    selection, sketch = fit.report.mechanisms
    info, n, K = fit.info, prob.n_samples, 2
    r, b = PAPER_FIT["radius"], PAPER_FIT["feature_bounds"]
    z_sel, z_g = selection.noise_multiplier, sketch.noise_multiplier
    # the noise on each pseudo-margin at the last step, and the clipped gradient's share of
    # the signal, for features of the spread of a uniform on [-b, b]; the pseudo-margins'
    # sketch error ||A x|| / sqrt(m) passes the clip too
    sigma = math.sqrt(K * noise_weights(info["step_sizes"])) * r * sketch.sensitivity * z_g
    spread = b / math.sqrt(3)
    error = math.sqrt(n / info["sketch_dim"]) * spread * r
    kappa = math.erf(clip / (math.sqrt(2) * spread * math.hypot(sigma, error)))
    assert (kappa < 0.1) == (clip == 1.0)  # both regimes: clipped far below the noise, or not
    # the Laplace draws' std, weighed by the iterate's averaging of the T selections
    averaging = selection_averaging(len(info["step_sizes"]))
    assert averaging == pytest.approx(math.sqrt(50 / len(info["step_sizes"])))
    a_sel = math.sqrt(2) * selection.sensitivity / kappa * averaging
    a_f = r * sigma / z_g * spread * math.sqrt(n) / n
    W_sel = selection.count * selection.details["rho"] * z_sel**2  # rho at multiplier 1
    W_g = sketch.count / 2
    # the ratio is iterated to a fixed point of kappa, to 1e-3
    assert a_sel**2 * z_sel**4 / W_sel == pytest.approx(a_f**2 * z_g**4 / W_g, rel=5e-3)
    assert info["calibration"]["least noise"]["clip_attenuation"] == pytest.approx(kappa, 2e-3)
    # a given share keeps its meaning under an accountant: the selections' share of rho
    shared = vertical_fw(prob, selection_share=0.3, **PAPER_FIT).report.mechanisms
    rho = [shared[0].count * shared[0].details["rho"]]
    rho.append(shared[1].count / (2 * shared[1].noise_multiplier ** 2))
    assert rho[0] / sum(rho) == pytest.approx(0.3, rel=1e-9)


def test_the_paper_calibration_is_kept_by_name():
    prob = small_problem()
    target, delta, K, T = PAPER_FIT["epsilon"], PAPER_FIT["delta"], 2, PAPER_FIT["n_iter"]
    fit = vertical_fw(prob, accountant="paper", **PAPER_FIT)
    selection, sketch = fit.report.mechanisms
    # half of (epsilon, delta) to each part: advanced composition of the K T selections
    spent = advanced_composition_epsilon([selection.details["epsilon"]], [K * T], delta / 2)
    assert spent <= target / 2 and spent == pytest.approx(target / 2, rel=1e-3)
    # and the paper's Gaussian scale for the K T sketches
    z = paper_sketch_multiplier(K * T, target / 2, delta / 2)
    assert sketch.noise_multiplier == pytest.approx(z, rel=1e-14)
    calibration = fit.info["calibration"]
    assert calibration["mode"] == "paper"
    assert calibration["feature sharing"]["noise_multiplier"] == sketch.noise_multiplier
    # a share splits (epsilon, delta), as in the paper
    shared = vertical_fw(prob, accountant="paper", selection_share=0.25, **PAPER_FIT)
    z = paper_sketch_multiplier(K * T, 0.75 * target, 0.75 * delta)
    assert shared.report.mechanisms[1].noise_multiplier == pytest.approx(z, rel=1e-14)


# --- the parameters from the rule, and the regime ------------------------------------------

ONLY_THE_TARGET = {
    "epsilon": 4.0, "delta": 1e-6, "parties": 2, "radius": 1.0, "feature_bounds": 1.0,
    "random_state": 0, "variant": "paper",
}  # fmt: skip


def test_parameters_left_out_come_from_the_rule():
    n = 1000
    prob = small_problem(n=n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the regime's warning, tested below
        fit = vertical_fw(prob, **ONLY_THE_TARGET)
        rule = vertical_fw_rule(n, 6, 2, 4.0, 1e-6, 1.0, 1.0)
        info = fit.info
        assert (fit.n_iter, info["sketch_dim"], info["tau"]) == (
            rule.n_iter, rule.sketch_dim, rule.tau,
        )  # fmt: skip
        assert info["clip"] == rule.clip and info["rule"]["clip"] == rule.clip
        assert fit.report.epsilon <= 4.0
        # given values are kept, and the rule fills in the others for them
        given = vertical_fw(prob, n_iter=7, **ONLY_THE_TARGET)
        assert given.n_iter == 7 and given.info["rule"]["n_iter"] == 7
        assert given.info["sketch_dim"] == rule.sketch_dim
        explicit = vertical_fw(prob, n_iter=3, sketch_dim=10, clip=0.5, tau=1, **ONLY_THE_TARGET)
        assert (explicit.n_iter, explicit.info["sketch_dim"], explicit.info["clip"]) == (
            3,
            10,
            0.5,
        )
        assert explicit.info["tau"] == 1 and explicit.info["rule"] is None
        # sketch_dim=None is still no sketch
        whole = vertical_fw(prob, sketch_dim=None, n_iter=2, **ONLY_THE_TARGET)
        assert whole.info["sketch_dim"] == n and whole.info["sketch"] is None
        # without a sketch there is no sketch error to weigh T against: the Gaussian rule's T
        unsketched = vertical_fw(prob, sketch_dim=None, **ONLY_THE_TARGET)
        assert (
            unsketched.n_iter
            == vertical_fw_rule(
                n, prob.n_features, 2, 4.0, 1e-6, 1.0, 1.0, sketch="gaussian"
            ).n_iter
        )


def test_the_rule_follows_its_derivation():
    n, d, K, r = 100_000, 100, 2, 18.0
    rule = vertical_fw_rule(n, d, K, 4.0, 1e-10, r, 1.0)
    paper = vertical_fw_rule(n, d, K, 4.0, 1e-10, r, 1.0, sketch="gaussian")
    # m with sqrt(d / m) = 0.35; T with Frank-Wolfe's error an eighth of the sketch's (count)
    # or half of it (Gaussian); tau = d / K
    assert rule.sketch_dim == paper.sketch_dim == math.ceil(d / 0.35**2)
    assert rule.n_iter == math.ceil(16 * 4.5 / 0.35 - 2) and rule.tau == d // K
    assert paper.n_iter == math.ceil(4 * 4.5 / 0.35 - 2) and paper.tau == d // K
    # the count sketch's column norm is 1, the Gaussian's above: less noise on each margin
    assert rule.margin_noise < paper.margin_noise
    # the noise on a pseudo-margin does not grow with T (the sketches' multiplier does)
    from dpglm.distributed.vertical_rule import full_rule

    short, long = (
        full_rule(n, d, K, 4.0, 1e-10, r, 1.0, n_iter=T, find_min_n=False) for T in (25, 100)
    )
    assert long.sketch_noise_multiplier > 1.8 * short.sketch_noise_multiplier
    assert long.margin_noise < 1.2 * short.margin_noise
    # the signal-to-noise grows with n and epsilon; at min_n it is the level needed
    assert vertical_fw_rule(4 * n, d, K, 4.0, 1e-10, r, 1.0).snr > 1.9 * rule.snr
    assert vertical_fw_rule(n, d, K, 8.0, 1e-10, r, 1.0).snr > 1.9 * rule.snr
    small = vertical_fw_rule(n // 10, d, K, 1.0, 1e-10, r, 1.0)
    assert not small.beats_zero and small.min_n > n
    there = vertical_fw_rule(small.min_n, d, K, 1.0, 1e-10, r, 1.0)
    assert there.snr == pytest.approx(small.snr_needed, rel=0.1)
    # each party rebuilds J: a Gaussian sketch's m n is capped, a count sketch's n is not
    capped = vertical_fw_rule(10**7, d, K, 4.0, 1e-10, r, 1.0, sketch="gaussian")
    assert (capped.sketch_dim, capped.n_iter) == (20, paper.n_iter)
    uncapped = vertical_fw_rule(10**7, d, K, 4.0, 1e-10, r, 1.0)
    assert (uncapped.sketch_dim, uncapped.n_iter) == (rule.sketch_dim, rule.n_iter)


def test_a_fit_far_outside_its_regime_warns_before_the_budget_is_charged():
    prob = small_problem()
    n = prob.n_samples
    budget = PrivacyBudget(2.0, 1e-6)
    kwargs = {**ONLY_THE_TARGET, "epsilon": 2.0, "n_iter": 5}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match=rf"n={n} records at epsilon=2\b.*from n=\d+"):
            vertical_fw(prob, budget=budget, **kwargs)
    assert budget.spent() == 0 and not budget.charges
    with pytest.warns(UserWarning, match="not expected to beat w = 0") as caught:
        fit = vertical_fw(prob, **kwargs)
    regime = fit.info["regime"]
    assert not regime["beats_zero"] and regime["snr"] < regime["snr_needed"] / 2
    assert str(regime["min_n"]) in str(caught[0].message) and regime["min_n"] > n
    # far inside it: no warning, and the regime says so
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        inside = vertical_fw(small_problem(n=3000), **{**kwargs, "epsilon": 200.0})
    assert inside.info["regime"]["beats_zero"] and inside.info["regime"]["min_n"] < 3000


# --- the noise of the releases -----------------------------------------------------------------

N_RUNS = 4000


def party_zero(fit, X, y, n, m):
    """Party 0 of ``fit`` (centred, private), built here to run its first step alone."""
    report, info = fit.report, fit.info
    selection, sharing, target = report.mechanisms
    p = X.shape[1]
    config = PartyConfig(
        index=0, features=np.arange(p), tau=p, radius=1.0,
        sketch=SketchSpec(n, m, info["sketch_seed"], info["sketch"]), clip=info["clip"],
        feature_bounds=np.ones(p),
        selection=Release(
            NoisyMaxEvent(noise="laplace", noise_multiplier=selection.noise_multiplier)
        ),
        selection_scale=info["selection_noise_scale"][0],
        sketch_noise=Release(GaussianEvent(noise_multiplier=sharing.noise_multiplier)),
        sketch_std=info["sketch_noise_std"][:p],
        centred=True, target_bound=info["target_bound"],
        target_noise=Release(GaussianEvent(noise_multiplier=target.noise_multiplier)),
        target_std=info["target_noise_std"],
    )  # fmt: skip
    return config


@pytest.mark.parametrize("sketch", ["count", "gaussian"])
@pytest.mark.parametrize("variant", ["correct", "half noise"])
def test_the_uploads_carry_the_planned_gaussian_noise(variant, sketch, monkeypatch, request):
    """Chi-square: the upload less its exact sketch, over the planned std, is standard normal."""
    if variant != "correct":
        with_less_noise(monkeypatch, kinds=("gaussian",))
    prob = small_problem()
    n, m = prob.n_samples, FIT["sketch_dim"]
    X = np.asarray(prob.X)
    fit = vertical_fw(prob, **{**FIT, "parties": 1, "tau": 6, "radius": 1.0}, sketch=sketch)
    planned = fit.report.mechanisms
    config = party_zero(fit, X, prob.y, n, m)
    G = config.sketch.matrix()
    y = np.clip(prob.y, -config.target_bound, config.target_bound)
    seeds = np.random.SeedSequence(seed_of(request.node.name)).spawn(N_RUNS // 10)
    feature_z, target_z = [], []
    for seed in seeds:
        party = Party(config, X, prob.y, seed=seed)
        feature, _, upload = decode_message(party.step(0, np.zeros(m)), 2 * m)
        feature_z.append((upload[:m] - G @ X[:, feature]) / planned[1].noise_scale)
        target_z.append((upload[m:] - G @ y) / planned[2].noise_scale)
    for name, z in (("feature", feature_z), ("target", target_z)):
        z = np.concatenate(z)
        p_low = stats.chi2.cdf(np.sum(z**2), z.size)
        print(f"{name} sketch {variant}: mean z^2 {np.mean(z**2):.3f}, p = {p_low:.3g}")
        if variant == "correct":
            assert ALPHA / 2 < p_low < 1 - ALPHA / 2, (name, p_low)
        else:
            assert p_low < ALPHA / 2, (name, p_low)


@pytest.mark.parametrize("sketch", ["count", "gaussian"])
@pytest.mark.parametrize("variant", ["correct", "half noise"])
def test_target_sketch_gaussian_audit(variant, sketch, monkeypatch, request):
    """Neighbours that differ in the target of the record at J's longest column, +-B beyond
    the clip: the statistic is the upload projected on J e_i; its mu may not exceed 1 / z_y."""
    if variant != "correct":
        with_less_noise(monkeypatch, kinds=("gaussian",))
    prob = small_problem(n=60, p=3)
    n, m = prob.n_samples, 4
    X = np.asarray(prob.X)
    # most of the budget to the targets' single release, so that its claim is auditable
    fit = vertical_fw(
        prob,
        **{**FIT, "parties": 1, "tau": 3, "sketch_dim": m, "n_iter": 1, "epsilon": 8.0},
        sketch=sketch,
    )
    target = fit.report.mechanisms[2]
    mu_claim = 1.0 / target.noise_multiplier
    config = party_zero(fit, X, prob.y, n, m)
    G = config.sketch.matrix()
    worst = int(np.argmax(np.linalg.norm(G, axis=0)))
    direction = G[:, worst] / np.linalg.norm(G[:, worst])
    B = config.target_bound
    targets = {}
    for key, value in (("D", -10.0 * B), ("D'", 10.0 * B)):
        y = prob.y.copy()
        y[worst] = value
        targets[key] = y
    y_low = np.clip(targets["D"], -B, B)
    midpoint = direction @ (G @ y_low) + B * np.linalg.norm(G[:, worst])
    rng = np.random.SeedSequence(seed_of(request.node.name))
    samples = {}
    for key, seeds in zip(("D", "D'"), rng.spawn(2), strict=True):
        out = np.empty(N_RUNS)
        for i, seed in enumerate(seeds.spawn(N_RUNS)):
            party = Party(config, X, targets[key], seed=seed)
            _, _, upload = decode_message(party.step(0, np.zeros(m)), 2 * m)
            out[i] = direction @ upload[m:]
        samples[key] = out
    bound = mu_lower_bound(samples["D"], samples["D'"], midpoint, alpha=ALPHA)
    print(f"target sketch {variant}: claim mu={mu_claim:.4f}; {bound}")
    if variant == "correct":
        assert not bound.exceeds(mu_claim), f"correct release refuted: {bound}"
        assert bound.mu > 0.5 * mu_claim, f"audit without power: {bound}"
    else:
        assert bound.exceeds(mu_claim), f"half noise not caught: {bound} <= {mu_claim:.4f}"
