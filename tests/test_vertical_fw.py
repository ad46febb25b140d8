"""The centred vertical Frank-Wolfe (the default of ``vertical_fw``): it learns, and its
releases carry the noise its plan says.

Statistical tests fail a correct implementation with probability below 1e-6.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dpglm.audit import mu_lower_bound
from dpglm.distributed import vertical_fw
from dpglm.distributed.protocol import Party, PartyConfig, SketchSpec, decode_message
from dpglm.privacy.events import GaussianEvent, NoisyMaxEvent
from dpglm.privacy.releases import Release
from dpglm.problem import Problem
from solver_problems import seed_of, with_less_noise

ALPHA = 1e-6


def issue_problem(n, d=100, nonzeros=8, seed=0):
    """Columns uniform on [-1, 1], 8 non-zeros of magnitude in [1, 3], noise 0.5; 20% held out."""
    rng = np.random.default_rng(seed)
    total = n + n // 4
    X = rng.uniform(-1.0, 1.0, (total, d))
    w = np.zeros(d)
    support = rng.choice(d, nonzeros, replace=False)
    w[support] = rng.choice([-1.0, 1.0], nonzeros) * rng.uniform(1.0, 3.0, nonzeros)
    y = X @ w + 0.5 * rng.standard_normal(total)
    return (X[:n], y[:n]), (X[n:], y[n:]), w


def r2(X, y, coef):
    return 1.0 - np.sum((y - X @ coef) ** 2) / np.sum((y - y.mean()) ** 2)


def test_without_privacy_the_centred_variant_learns_and_the_paper_variant_does_not():
    (X, y), (Xt, yt), w = issue_problem(20_000)
    kwargs = {
        "epsilon": math.inf, "delta": 0.0, "parties": 2, "tau": 50, "sketch_dim": 200,
        "radius": float(np.abs(w).sum()), "n_iter": 50, "random_state": 0,
    }  # fmt: skip
    prob = Problem(X, y, "squared")
    default = vertical_fw(prob, variant="centred", **kwargs)
    paper = vertical_fw(prob, **kwargs)
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
    assert report.epsilon <= FIT["epsilon"] and report.epsilon == pytest.approx(2.0, rel=1e-3)
    column_norm = SketchSpec(n, FIT["sketch_dim"], info["sketch_seed"]).column_norm_bound()
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


# --- the noise of the releases -----------------------------------------------------------------

N_RUNS = 4000


def party_zero(fit, X, y, n, m):
    """Party 0 of ``fit`` (centred, private), built here to run its first step alone."""
    report, info = fit.report, fit.info
    selection, sharing, target = report.mechanisms
    p = X.shape[1]
    config = PartyConfig(
        index=0, features=np.arange(p), tau=p, radius=1.0,
        sketch=SketchSpec(n, m, info["sketch_seed"]), clip=info["clip"],
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


@pytest.mark.parametrize("variant", ["correct", "half noise"])
def test_the_uploads_carry_the_planned_gaussian_noise(variant, monkeypatch, request):
    """Chi-square: the upload less its exact sketch, over the planned std, is standard normal."""
    if variant != "correct":
        with_less_noise(monkeypatch, kinds=("gaussian",))
    prob = small_problem()
    n, m = prob.n_samples, FIT["sketch_dim"]
    X = np.asarray(prob.X)
    fit = vertical_fw(prob, **{**FIT, "parties": 1, "tau": 6, "radius": 1.0})
    planned = fit.report.mechanisms
    config = party_zero(fit, X, prob.y, n, m)
    G = config.sketch.gaussian() / math.sqrt(m)
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


@pytest.mark.parametrize("variant", ["correct", "half noise"])
def test_target_sketch_gaussian_audit(variant, monkeypatch, request):
    """Neighbours that differ in the target of the record at J's longest column, +-B beyond
    the clip: the statistic is the upload projected on J e_i; its mu may not exceed 1 / z_y."""
    if variant != "correct":
        with_less_noise(monkeypatch, kinds=("gaussian",))
    prob = small_problem(n=60, p=3)
    n, m = prob.n_samples, 4
    X = np.asarray(prob.X)
    # most of the budget to the targets' single release, so that its claim is auditable
    fit = vertical_fw(
        prob, **{**FIT, "parties": 1, "tau": 3, "sketch_dim": m, "n_iter": 1, "epsilon": 8.0}
    )
    target = fit.report.mechanisms[2]
    mu_claim = 1.0 / target.noise_multiplier
    config = party_zero(fit, X, prob.y, n, m)
    G = config.sketch.gaussian() / math.sqrt(m)
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
