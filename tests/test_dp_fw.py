"""Private Frank-Wolfe (DP-FW) and block-coordinate Frank-Wolfe (BCFW-AS).

Without noise both reach the optimum over their domain (the L1 ball; the
product of the blocks' balls), checked against an accelerated projected
gradient whose Frank-Wolfe gap certifies it, within the O(1/T) bounds of
Jaggi (2013) and of Lou and Cheung's Theorem 1. Private fits are replayed in
NumPy with the solver's own draws; the samplers' inclusion frequencies are
tested against their probabilities; one private selection is audited on a
worst-case neighbouring pair. Statistical tests fail a correct implementation
with probability below 1e-6.
"""

import importlib
import itertools
import math
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dpglm._kernels.frank_wolfe import block_margins_csc, block_margins_dense, noisy_vertex
from dpglm.audit import audit_event
from dpglm.exceptions import BudgetExceededError
from dpglm.penalties import L1, L1Ball
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.mechanisms import NoiseSource, make_noise_source
from dpglm.problem import Problem
from dpglm.solvers.dp_fw import dp_bcfw, dp_fw
from dpglm.solvers.fw_sampling import (
    Distributed,
    Elementary,
    Sampling,
    TauNice,
    UniformSerial,
    make_sampling,
)
from dpglm.solvers.reference import solve_reference
from dpglm.solvers.registry import ProblemShape, get_solver
from solver_problems import make_data, seed_of, with_less_noise

dp_fw_module = importlib.import_module("dpglm.solvers.dp_fw")

DELTA = 1e-6
ALPHA = 1e-6


# --- kernels ---------------------------------------------------------------------------------


def test_noisy_vertex_is_the_noisy_argmax_of_the_vertex_scores():
    rng = np.random.default_rng(seed_of("noisy vertex"))
    for k in (1, 2, 7):
        g, r = rng.standard_normal(k), rng.uniform(0.1, 3.0)
        vertices = np.repeat(np.eye(k), 2, axis=0) * np.tile([r, -r], k)[:, None]
        scores = -(vertices @ g)  # -<g, s>, candidates +r e_0, -r e_0, +r e_1, ...
        for scale in (0.0, 0.3, 5.0):
            noise = rng.gumbel(size=2 * k)
            want = int(np.argmax(scores + scale * noise))
            assert noisy_vertex(g, r, noise, scale) == want
    # exact oracle: the vertex of the first largest |g_j|, +r when g_j <= 0
    assert noisy_vertex(np.array([1.0, -3.0, 3.0]), 2.0, np.zeros(6), 0.0) == 2
    assert noisy_vertex(np.array([3.0, -3.0]), 2.0, np.zeros(4), 0.0) == 1
    assert noisy_vertex(np.zeros(3), 2.0, np.zeros(6), 0.0) == 0


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
def test_block_margins_kernels(sparse):
    rng = np.random.default_rng(seed_of("block margins", sparse))
    X = rng.standard_normal((30, 9)) * (rng.random((30, 9)) < 0.4)
    theta = rng.standard_normal(9) * (rng.random(9) < 0.6)
    z0 = rng.standard_normal(30)
    for start, stop in [(0, 9), (2, 5), (4, 4)]:
        z = z0.copy()
        if sparse:
            C = sp.csc_matrix(X)
            block_margins_csc(C.data, C.indices, C.indptr, start, stop, theta, -0.7, z)
        else:
            block_margins_dense(np.asfortranarray(X), start, stop, theta, -0.7, z)
        want = z0 - 0.7 * X[:, start:stop] @ theta[start:stop]
        np.testing.assert_allclose(z, want, rtol=1e-13, atol=1e-13)


# --- samplings -------------------------------------------------------------------------------

SAMPLINGS = {
    "elementary": Elementary(5),
    "uniform": UniformSerial(7),
    "tau-nice": TauNice(7, tau=3),
    "distributed-uneven": Distributed(7, tau=2, parties=[0, 0, 0, 1, 1, 1, 1]),
    "distributed-3": Distributed(9, tau=1, parties=3),
}
N_DRAWS = 100_000


def test_p_min_and_probabilities():
    expected = {
        "elementary": [1.0] * 5,
        "uniform": [1 / 7] * 7,
        "tau-nice": [3 / 7] * 7,
        "distributed-uneven": [2 / 3] * 3 + [1 / 2] * 4,
        "distributed-3": [1 / 3] * 9,
    }
    for name, sampling in SAMPLINGS.items():
        np.testing.assert_allclose(sampling.probabilities, expected[name], rtol=1e-15)
        assert sampling.p_min == min(expected[name])
        # the expected size of a draw is its fixed size
        assert sampling.probabilities.sum() == pytest.approx(sampling.size, rel=1e-14)


def test_sampler_inclusion_frequencies_match_the_probabilities():
    """Each block's count over N independent draws is Binomial(N, p_i): exact bounds, 1e-6."""
    n_tests = sum(s.n_blocks for s in SAMPLINGS.values())
    source = make_noise_source(seed_of("inclusion"))
    for name, sampling in SAMPLINGS.items():
        draws = sampling.sample(source, N_DRAWS)
        assert draws.shape == (N_DRAWS, sampling.size) and draws.dtype == np.int64
        # every draw holds distinct blocks
        ordered = np.sort(draws, axis=1)
        assert (np.diff(ordered, axis=1) > 0).all(), name
        counts = np.bincount(draws.ravel(), minlength=sampling.n_blocks)
        p = sampling.probabilities
        lo = stats.binom.ppf(ALPHA / (2 * n_tests), N_DRAWS, p)
        hi = stats.binom.isf(ALPHA / (2 * n_tests), N_DRAWS, p)
        assert ((lo <= counts) & (counts <= hi)).all(), (name, counts / N_DRAWS, p)
        if isinstance(sampling, Distributed):  # tau blocks from each party, in order
            for k, blocks in enumerate(sampling.party_blocks):
                part = draws[:, k * sampling.tau : (k + 1) * sampling.tau]
                assert np.isin(part, blocks).all()


@pytest.mark.parametrize("name", ["tau-nice-5-2", "distributed-uneven"])
def test_sampled_sets_are_uniform_chi_square(name):
    """Every possible set equally likely (and parties independent): chi-square at 1e-6."""
    if name == "tau-nice-5-2":
        sampling = TauNice(5, tau=2)
        cells = list(itertools.combinations(range(5), 2))
    else:
        sampling = SAMPLINGS[name]
        cells = [
            a + b
            for a in itertools.combinations(range(3), 2)
            for b in itertools.combinations(range(3, 7), 2)
        ]
    draws = sampling.sample(make_noise_source(seed_of("chi2", name)), N_DRAWS)
    counts = Counter(map(tuple, np.sort(draws, axis=1).tolist()))
    assert set(counts) == set(cells)
    observed = np.array([counts[c] for c in cells])
    chi2 = float(((observed - N_DRAWS / len(cells)) ** 2).sum() / (N_DRAWS / len(cells)))
    assert chi2 <= stats.chi2.isf(ALPHA, len(cells) - 1), chi2


def test_elementary_sampling_draws_nothing():
    source = make_noise_source(seed_of("elementary"))
    draws = Elementary(4).sample(source, 3)
    np.testing.assert_array_equal(draws, np.tile(np.arange(4), (3, 1)))
    # the source is untouched
    assert source.uniform() == make_noise_source(seed_of("elementary")).uniform()


@pytest.mark.parametrize(
    ("args", "kwargs", "name"),
    [
        (("random", 4), {}, "sampling"),
        (("tau-nice", 4), {"tau": 0}, "tau"),
        (("tau-nice", 4), {"tau": 5}, "tau"),
        (("tau-nice", 4), {"tau": 1.5}, "tau"),
        (("tau-nice", 4), {}, "tau"),
        (("uniform", 4), {"tau": 1}, "tau"),
        (("distributed", 4), {"tau": 1}, "parties"),
        (("distributed", 4), {"tau": 1, "parties": 0}, "parties"),
        (("distributed", 4), {"tau": 1, "parties": 5}, "parties"),
        (("distributed", 4), {"tau": 1, "parties": [0, 0, 2, 2]}, "parties"),
        (("distributed", 4), {"tau": 3, "parties": 2}, "tau"),
        (("elementary", 4), {"parties": 2}, "parties"),
        ((TauNice(3, 1), 4), {}, "sampling"),
        ((TauNice(4, 1), 4), {"tau": 1}, "tau"),
    ],
)
def test_bad_samplings_are_named(args, kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        make_sampling(*args, **kwargs)


# --- references: accelerated projected gradient on a product of L1 balls --------------------


def pairs(bounds):
    """``(start, stop)`` of every block."""
    return list(itertools.pairwise(int(b) for b in bounds))


def fw_gap(prob, theta, bounds, radii):
    """Frank-Wolfe gap ``max_s <grad, theta - s>`` over the product of balls: >= F - F*."""
    g = prob.gradient(theta)
    support = sum(r * np.abs(g[a:b]).max() for (a, b), r in zip(pairs(bounds), radii, strict=True))
    return float(g @ theta + support)


def projected_gradient(prob, bounds, radii, *, tol=1e-13, max_iter=50_000):
    """FISTA with the sort-based projection of Duchi et al. (2008) onto each block's ball.

    Returns the minimiser over the product of the balls ``||theta_b||_1 <= r_b``
    once its Frank-Wolfe gap certifies it to ``tol`` (relative).
    """
    X = prob.X.toarray() if sp.issparse(prob.X) else np.asarray(prob.X)
    L = prob.datafit.curvature * np.linalg.eigvalsh(X.T @ X / prob.n_samples).max()
    balls = [L1Ball(r) for r in radii]

    def project(x):
        return np.concatenate(
            [ball.prox(x[a:b]) for ball, (a, b) in zip(balls, pairs(bounds), strict=True)]
        )

    theta = np.zeros(prob.n_features)
    v, t = theta.copy(), 1.0
    for _ in range(max_iter):
        new = project(v - prob.gradient(v) / L)
        t_next = (1 + math.sqrt(1 + 4 * t * t)) / 2
        v, theta, t = new + (t - 1) / t_next * (new - theta), new, t_next
        if fw_gap(prob, theta, bounds, radii) <= tol * abs(prob.objective(theta)):
            return theta
    raise AssertionError("the reference did not converge")


def curvature_bound(prob, bounds, radii):
    """``C_f <= curvature * (sum_b 2 r_b max_{j in b} ||X_j|| / sqrt(n))**2``.

    On the product of balls, ``s - x`` lies in the product of the balls of radius
    ``2 r_b``, and ``v' H v <= (sum_j |v_j| sqrt(H_jj))**2`` for the Hessian ``H``,
    which is at most ``curvature * X'X / n``. With one block it is exact for least
    squares: ``4 r**2 max_j H_jj``.
    """
    X = prob.X.toarray() if sp.issparse(prob.X) else np.asarray(prob.X)
    norms = np.sqrt((X**2).sum(axis=0) / prob.n_samples)
    width = sum(2 * r * norms[a:b].max() for (a, b), r in zip(pairs(bounds), radii, strict=True))
    return prob.datafit.curvature * width**2


# --- epsilon = inf: the constrained optimum --------------------------------------------------


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
@pytest.mark.parametrize("datafit", ["squared", "logistic"])
def test_non_private_dp_fw_reaches_the_l1_ball_optimum(datafit, sparse):
    X, y = make_data(
        seed_of("fw optimum", datafit, sparse),
        n=300,
        p=8,
        classification=datafit == "logistic",
        sparse=sparse,
    )
    radius, T = 1.0, 2000
    prob = Problem(X, y, datafit, L1Ball(radius))
    bounds, radii = np.array([0, 8]), [radius]
    best = projected_gradient(prob, bounds, radii)
    ref = solve_reference(prob)
    assert np.abs(best).sum() == pytest.approx(radius, rel=1e-9)  # the constraint is active
    assert prob.objective(best) == pytest.approx(ref.objective, rel=1e-9)
    f_star = min(prob.objective(best), ref.objective)

    fit = dp_fw(prob, epsilon=math.inf, delta=0.0, n_iter=T)
    excess = prob.objective(fit.coef) - f_star
    # Jaggi (2013), Theorem 1: F(theta_T) - F* <= 2 C_f / (T + 2)
    assert -1e-12 <= excess <= 2 * curvature_bound(prob, bounds, radii) / (T + 2)
    assert excess <= 1e-5 * abs(f_star), excess
    assert np.abs(fit.coef).sum() <= radius * (1 + 1e-12)
    assert fit.report.non_private and not fit.report.guarantee
    assert fit.info["clip"] == math.inf and not fit.info["selection_noise_scale"].any()
    np.testing.assert_array_equal(fit.info["step_sizes"], 2.0 / (np.arange(T) + 2.0))
    np.testing.assert_array_equal(fit.history.thetas[-1], fit.coef)
    assert fit.history.passes[-1] == T and fit.n_iter == T


class FirstPlusOne(Sampling):
    """Block 0 at every iteration and one other block, uniformly: an arbitrary proper sampling."""

    name = "first-plus-one"

    def __init__(self, n_blocks):
        self.n_blocks, self.size = n_blocks, 2

    @property
    def probabilities(self):
        p = np.full(self.n_blocks, 1 / (self.n_blocks - 1))
        p[0] = 1.0
        return p

    def sample(self, source, count):
        others = 1 + source.integers(self.n_blocks - 1, size=count)
        return np.column_stack([np.zeros(count, dtype=np.int64), others])


BCFW_CASES = {
    # case: (blocks, radius, dp_bcfw keywords, inclusion probability of each block)
    "elementary": (4, 0.4, {"sampling": "elementary"}, [1.0] * 4),
    "uniform": (4, 0.4, {"sampling": "uniform"}, [0.25] * 4),
    "tau-nice": (
        [0, 1, 2, 0, 1, 2, 3, 3],
        [0.3, 0.5, 0.2, 0.4],
        {"sampling": "tau-nice", "tau": 2},
        [0.5] * 4,
    ),
    "distributed": (4, 0.4, {"sampling": "distributed", "tau": 1, "parties": 2}, [0.5] * 4),
    "coordinates": (
        None,
        0.3,
        {"sampling": "distributed", "tau": 2, "parties": [0, 0, 0, 0, 0, 1, 1, 1]},
        [0.4] * 5 + [2 / 3] * 3,
    ),
    "arbitrary": (4, 0.4, {"sampling": FirstPlusOne(4)}, [1.0, 1 / 3, 1 / 3, 1 / 3]),
}


def block_bounds(blocks, p):
    """Features in block order, block boundaries: the solver's view of ``blocks``."""
    if blocks is None:
        blocks = p
    if isinstance(blocks, int):
        labels = np.repeat(np.arange(blocks), [len(a) for a in np.array_split(range(p), blocks)])
    else:
        labels = np.asarray(blocks)
    order = np.argsort(labels, kind="stable")
    return labels, order, np.concatenate([[0], np.cumsum(np.bincount(labels))])


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
@pytest.mark.parametrize("case", BCFW_CASES)
def test_non_private_bcfw_reaches_the_product_optimum(case, sparse):
    blocks, radius, kwargs, probabilities = BCFW_CASES[case]
    p_min = min(probabilities)
    X, y = make_data(seed_of("bcfw optimum", sparse), n=300, p=8, sparse=sparse)
    prob = Problem(X, y, "squared")
    labels, order, bounds = block_bounds(blocks, 8)
    radii = np.broadcast_to(radius, bounds.size - 1)
    # the reference works on the features in block order
    permuted = Problem(X[:, order], y, "squared")
    best = projected_gradient(permuted, bounds, radii)
    f_star = permuted.objective(best)
    T = 4000
    fit = dp_bcfw(
        prob,
        epsilon=math.inf,
        delta=0.0,
        radius=radius,
        blocks=blocks,
        n_iter=T,
        random_state=seed_of("bcfw", case, sparse),
        **kwargs,
    )
    assert fit.info["p_min"] == p_min
    np.testing.assert_array_equal(fit.info["blocks"], labels)
    # an iteration reads the gradient of sum_b p_b |b| / p of the columns, on average
    share = np.asarray(probabilities) @ np.diff(bounds) / 8
    assert fit.history.passes[-1] == pytest.approx(share * T, rel=1e-12)
    np.testing.assert_array_equal(fit.info["step_sizes"], 2.0 / (p_min * np.arange(T) + 2.0))
    for b, r in enumerate(radii):  # inside every block's ball
        assert np.abs(fit.coef[labels == b]).sum() <= r * (1 + 1e-12)
    excess = prob.objective(fit.coef) - f_star
    # Lou and Cheung (2018), Theorem 1 (exact oracle, in expectation; observed far below)
    h0 = prob.objective(np.zeros(8)) - f_star
    bound = 2 * (h0 + curvature_bound(permuted, bounds, radii)) / (p_min * T + 2)
    assert -1e-12 <= excess <= bound
    assert excess <= 1e-5 * abs(f_star), excess


# --- a private fit, replayed in NumPy with the solver's own draws ----------------------------


class RecordingSource(NoiseSource):
    """A seeded source that keeps every draw it hands out, by kind."""

    def __init__(self, seed):
        self.inner = make_noise_source(seed)
        self.generator = self.inner.generator
        self.draws = []

    def _keep(self, kind, draws):
        self.draws.append((kind, np.array(draws)))
        return draws

    def uniform(self, size=None):
        return self._keep("uniform", self.inner.uniform(size))

    def gumbel(self, scale, size=None):
        assert scale == 1.0
        return self._keep("gumbel", self.inner.gumbel(scale, size))

    def laplace(self, scale, size=None):
        assert scale == 1.0
        return self._keep("laplace", self.inner.laplace(scale, size))


def replay(prob, fit, source, radii, clip):
    """Every iteration in NumPy: clipped gradient at the iterate, -<g, s> of every vertex
    of each drawn block's ball, noisy argmax with the recorded draws, the FW step."""
    info = fit.info
    labels = info["blocks"]
    noise = np.concatenate([d for kind, d in source.draws if kind == info["noise"]])
    vertices = info["vertices"].reshape(fit.n_iter, -1, 2)
    theta, offset = np.zeros(prob.n_features), 0
    for t, chosen in enumerate(vertices):
        g = prob.clipped_gradient(theta, clip)
        gamma = 2.0 / (info["p_min"] * t + 2.0)
        new = theta.copy()
        for j, sign in chosen:
            b = labels[j]
            features = np.flatnonzero(labels == b)  # in the order the block draws noise
            candidates = [(f, s) for f in features for s in (1, -1)]
            scores = np.array([-(s * radii[b] * g[f]) for f, s in candidates])
            draws = noise[offset : offset + scores.size]
            offset += scores.size
            scale = info["selection_noise_scale"][b]
            assert candidates[int(np.argmax(scores + scale * draws))] == (j, sign)
            new[features] *= 1.0 - gamma
            new[j] += gamma * sign * radii[b]
        theta = new
    assert offset == noise.size  # every draw used, none twice
    return theta


REPLAY_CASES = {
    "fw": {"solver": dp_fw, "radius": 0.8},
    "bcfw-tau-nice": {
        "solver": dp_bcfw,
        "radius": [0.3, 0.5, 0.2],
        "blocks": [2, 0, 1, 0, 2, 1],
        "sampling": "tau-nice",
        "tau": 2,
    },
    "bcfw-distributed": {
        "solver": dp_bcfw,
        "radius": 0.4,
        "blocks": 3,
        "sampling": "distributed",
        "tau": 1,
        "parties": [0, 1, 1],
    },
}


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
@pytest.mark.parametrize("noise", ["gumbel", "laplace"])
@pytest.mark.parametrize("case", REPLAY_CASES)
def test_private_fit_replays_in_numpy(case, noise, sparse):
    kwargs = dict(REPLAY_CASES[case])
    solver = kwargs.pop("solver")
    X, y = make_data(seed_of("replay", sparse), n=80, p=6, classification=True, sparse=sparse)
    prob = Problem(X, y, "logistic")
    source = RecordingSource(seed_of("replay source", case, noise, sparse))
    clip = 0.3
    fit = solver(
        prob,
        epsilon=3.0,
        delta=DELTA,
        n_iter=25,
        clip=clip,
        noise=noise,
        random_state=source,
        **kwargs,
    )
    n_blocks = int(fit.info["blocks"].max()) + 1
    radii = np.broadcast_to(np.asarray(kwargs["radius"], dtype=float), n_blocks)
    theta = replay(prob, fit, source, radii, clip)
    np.testing.assert_allclose(fit.coef, theta, rtol=1e-12, atol=1e-14)
    # the noise scale is the calibrated multiplier times 2 r_b C / n
    (selection,) = fit.report.mechanisms
    np.testing.assert_allclose(
        fit.info["selection_noise_scale"],
        selection.noise_multiplier * 2 * radii * clip / prob.n_samples,
        rtol=1e-14,
    )
    assert len({tuple(v) for v in fit.info["vertices"].tolist()}) > 1  # the noise matters
    if case == "bcfw-distributed":  # one block of each party per iteration
        drawn = fit.info["blocks"][fit.info["vertices"][:, 0]].reshape(25, 2)
        assert (drawn[:, 0] == 0).all() and np.isin(drawn[:, 1], [1, 2]).all()


# --- reproducibility ------------------------------------------------------------------------


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
@pytest.mark.parametrize("solver", ["fw", "bcfw"])
def test_the_seed_reproduces_the_fit_bit_for_bit(solver, sparse):
    X, y = make_data(seed_of("seed", sparse), n=200, p=6, sparse=sparse)
    prob = Problem(X, y, "squared")
    kwargs = {"epsilon": 2.0, "delta": DELTA, "n_iter": 40, "radius": 1.0}
    if solver == "fw":
        fits = [dp_fw(prob, random_state=seed, **kwargs) for seed in (11, 11, 12)]
    else:
        fits = [
            dp_bcfw(prob, random_state=seed, blocks=3, sampling="tau-nice", tau=2, **kwargs)
            for seed in (11, 11, 12)
        ]
    a, b, c = fits
    np.testing.assert_array_equal(a.coef, b.coef)
    np.testing.assert_array_equal(a.info["vertices"], b.info["vertices"])
    np.testing.assert_array_equal(a.history.thetas, b.history.thetas)
    assert not np.array_equal(a.history.thetas, c.history.thetas)


# --- the report matches the plan ------------------------------------------------------------


@pytest.mark.parametrize("n_iter", [1, 60])
@pytest.mark.parametrize("target", [0.5, 3.0])
def test_gumbel_plan(target, n_iter):
    X, y = make_data(seed_of("gumbel plan", target, n_iter), n=300, p=6, sparse=True)
    prob = Problem(X, y, "squared", L1Ball(2.0))
    clip = 1.3
    fit = dp_fw(prob, epsilon=target, delta=DELTA, n_iter=n_iter, clip=clip, random_state=0)
    report = fit.report
    (selection,) = report.mechanisms
    assert (selection.kind, selection.count) == ("noisy_max", n_iter)
    assert selection.details["noise"] == "gumbel" and not selection.details["monotone"]
    # scores -<g, s> over vertices of radius r move by 2 r C / n
    delta_score = 2 * 2.0 * clip / prob.n_samples
    assert selection.sensitivity == pytest.approx(delta_score, rel=1e-14)
    assert fit.info["selection_noise_scale"][0] == pytest.approx(
        selection.noise_multiplier * delta_score, rel=1e-14
    )
    # non-monotone: 2 / z per selection, the exponential mechanism's eps^2 / 8 in zCDP
    eps1 = 2 / selection.noise_multiplier
    assert selection.details["epsilon"] == pytest.approx(eps1, rel=1e-14)
    assert selection.details["rho"] == pytest.approx(eps1**2 / 8, rel=1e-14)
    assert report.neighbouring == "replace_one" and report.accountant != "advanced"
    assert report.epsilon <= target
    assert report.epsilon == pytest.approx(target, rel=1e-3)


@pytest.mark.parametrize("n_iter", [1, 60])
@pytest.mark.parametrize("target", [0.5, 3.0])
def test_laplace_plan_is_the_originals_advanced_composition(target, n_iter):
    X, y = make_data(seed_of("laplace plan", target, n_iter), n=300, p=6)
    prob = Problem(X, y, "squared")
    clip, radius = 0.7, 1.5
    fit = dp_fw(
        prob,
        epsilon=target,
        delta=DELTA,
        radius=radius,
        n_iter=n_iter,
        clip=clip,
        noise="laplace",
        random_state=0,
    )
    report = fit.report
    (selection,) = report.mechanisms
    assert selection.details["noise"] == "laplace" and not selection.details["monotone"]
    assert report.accountant == "advanced"
    # T selections of eps' each, composed by the advanced composition theorem
    eps1, T = selection.details["epsilon"], n_iter
    formula = math.sqrt(2 * T * math.log(1 / DELTA)) * eps1 + T * eps1 * math.expm1(eps1)
    assert report.epsilon == pytest.approx(formula, rel=1e-12)
    assert report.epsilon <= target and report.epsilon == pytest.approx(target, rel=1e-3)
    # Laplace scale 2 Delta / eps' with Delta = 2 r C / n: report-noisy-max of
    # non-monotone scores (Delta / eps' would be 2 eps'-DP)
    delta_score = 2 * radius * clip / prob.n_samples
    assert fit.info["selection_noise_scale"][0] == pytest.approx(2 * delta_score / eps1, rel=1e-12)
    # at delta = 0 the epsilons add up
    pure = dp_fw(prob, epsilon=1.0, delta=0.0, radius=radius, n_iter=4, noise="laplace")
    assert pure.report.accountant == "basic" and pure.report.epsilon <= 1.0


def test_bcfw_plan_counts_every_selection():
    X, y = make_data(seed_of("bcfw plan"), n=400, p=8)
    prob = Problem(X, y, "squared")
    radii, clip, T = np.array([0.5, 1.0, 0.25, 0.5]), 0.9, 30
    fit = dp_bcfw(
        prob,
        epsilon=2.0,
        delta=DELTA,
        radius=radii,
        blocks=4,
        sampling="distributed",
        tau=2,
        parties=2,
        n_iter=T,
        clip=clip,
        random_state=0,
    )
    (selection,) = fit.report.mechanisms
    # two parties drawing two blocks each: four selections per iteration, composed
    assert selection.count == 4 * T == fit.info["vertices"].shape[0]
    assert selection.sensitivity == pytest.approx(2 * 1.0 * clip / 400, rel=1e-14)
    np.testing.assert_allclose(
        fit.info["selection_noise_scale"],
        selection.noise_multiplier * 2 * radii * clip / 400,
        rtol=1e-14,
    )
    assert fit.report.epsilon <= 2.0
    assert any("composed sequentially" in a for a in fit.report.assumptions)
    # the same budget over fewer selections per iteration buys less noise per selection
    fewer = dp_bcfw(prob, epsilon=2.0, delta=DELTA, radius=radii, blocks=4, n_iter=T, clip=clip)
    assert fewer.report.mechanisms[0].count == T
    assert fewer.report.mechanisms[0].noise_multiplier < selection.noise_multiplier


def test_declared_sensitivity_bounds_every_score_change():
    """White-box: at iterates of the ball, replacing one record moves each -<g, s> by at
    most the report's sensitivity, and the swap canary reaches it."""
    X, y = make_data(seed_of("sensitivity"), n=50, p=5)
    X[0], y[0] = 1.0, -40.0  # canary: every clipped term at +-C
    other = y.copy()
    other[0] = 40.0
    radius, clip = 1.5, 0.5
    fit = dp_fw(
        Problem(X, y, "squared"), epsilon=1.0, delta=DELTA, radius=radius, clip=clip, n_iter=20
    )
    declared = fit.report.mechanisms[0].sensitivity
    rng = np.random.default_rng(seed_of("sensitivity points"))
    largest = 0.0
    inside = [L1Ball(radius).prox(x) for x in 3 * rng.standard_normal((20, 5))]
    for theta in [*fit.history.thetas, *inside]:
        g = Problem(X, y, "squared").clipped_gradient(theta, clip)
        g_other = Problem(X, other, "squared").clipped_gradient(theta, clip)
        # scores of +-r e_j are -+r g_j
        largest = max(largest, float(np.abs(radius * (g - g_other)).max()))
    assert largest <= declared * (1 + 1e-12)
    assert largest == pytest.approx(declared, rel=1e-12)


# --- validation and budget ------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_problem():
    X, y = make_data(seed_of("small"), n=50, p=4)
    return Problem(X, y, "squared")


FW_BAD = [
    ("radius", 0.0),
    ("radius", -1.0),
    ("radius", math.inf),
    ("radius", math.nan),
    ("radius", "big"),
    ("radius", [1.0, 2.0]),
    ("radius", None),
    ("n_iter", 0),
    ("n_iter", 2.5),
    ("n_iter", True),
    ("clip", -1.0),
    ("clip", math.nan),
    ("clip", math.inf),  # a private fit needs a finite sensitivity
    ("noise", "gaussian"),
    ("epsilon", 0.0),
    ("delta", 1.0),
    ("accountant", "guess"),
]


@pytest.mark.parametrize(("name", "value"), FW_BAD)
def test_bad_dp_fw_parameters_are_named(small_problem, name, value):
    kwargs = {"epsilon": 1.0, "delta": DELTA, "radius": 1.0, "random_state": 0, name: value}
    with pytest.raises((ValueError, TypeError), match=name):
        dp_fw(small_problem, **kwargs)


BCFW_BAD = [
    ({"blocks": 0}, "blocks"),
    ({"blocks": 5}, "blocks"),
    ({"blocks": [0, 0, 2, 2]}, "blocks"),
    ({"blocks": [0, 1]}, "blocks"),
    ({"blocks": 2, "radius": [1.0, 1.0, 1.0]}, "radius"),
    ({"blocks": 2, "radius": [1.0, 0.0]}, "radius"),
    ({"sampling": "random"}, "sampling"),
    ({"sampling": "tau-nice", "tau": 5}, "tau"),
    ({"sampling": "tau-nice", "tau": 0}, "tau"),
    ({"sampling": "uniform", "tau": 2}, "tau"),
    ({"sampling": "distributed", "tau": 1}, "parties"),
    ({"sampling": "distributed", "tau": 3, "parties": 2}, "tau"),
    ({"sampling": TauNice(3, 1)}, "sampling"),
]


@pytest.mark.parametrize(("kwargs", "name"), BCFW_BAD)
def test_bad_dp_bcfw_parameters_are_named(small_problem, kwargs, name):
    full = {"epsilon": 1.0, "delta": DELTA, "radius": 1.0, "random_state": 0, **kwargs}
    with pytest.raises((ValueError, TypeError), match=name):
        dp_bcfw(small_problem, **full)


class Repeating(FirstPlusOne):
    """Draws block 0 twice: not a set of distinct blocks."""

    def sample(self, source, count):
        return np.zeros((count, 2), dtype=np.int64)


def test_a_sampling_that_breaks_its_promise_is_refused(small_problem):
    with pytest.raises(ValueError, match=r"sampling Repeating.*2 distinct blocks"):
        dp_bcfw(
            small_problem, epsilon=1.0, delta=DELTA, radius=1.0, blocks=4, sampling=Repeating(4)
        )


def test_problems_frank_wolfe_cannot_fit_are_refused():
    X, y = make_data(seed_of("refused"), n=30, p=3, classification=True)
    kwargs = {"epsilon": 1.0, "delta": DELTA, "radius": 1.0}
    with pytest.raises(ValueError, match=r"penalty.*L1\(alpha=0.1\)"):
        dp_fw(Problem(X, y, "logistic", L1(0.1)), **kwargs)
    with pytest.raises(ValueError, match="fit_intercept"):
        dp_fw(Problem(X, y, "logistic", fit_intercept=True), **kwargs)
    with pytest.raises(ValueError, match=r"smooth datafit.*hinge"):
        dp_fw(Problem(X, y, "hinge"), **kwargs)
    with pytest.raises(ValueError, match=r"radius=2\.0 contradicts.*L1Ball"):
        dp_fw(Problem(X, y, "logistic", L1Ball(1.0)), epsilon=1.0, delta=DELTA, radius=2.0)
    with pytest.raises(ValueError, match="3 blocks cannot share"):
        dp_bcfw(Problem(X, y, "logistic", L1Ball(1.0)), epsilon=1.0, delta=DELTA, radius=None)
    # the problem's ball gives the radius
    fit = dp_fw(Problem(X, y, "logistic", L1Ball(0.5)), epsilon=1.0, delta=DELTA, n_iter=2)
    np.testing.assert_array_equal(fit.info["radius"], [0.5])


def test_secure_mode(small_problem):
    kwargs = {"epsilon": 1.0, "delta": DELTA, "radius": 1.0, "n_iter": 5, "secure": True}
    assert dp_fw(small_problem, **kwargs).report.secure
    fit = dp_bcfw(small_problem, blocks=2, sampling="tau-nice", tau=1, **kwargs)
    assert fit.report.secure and fit.info["vertices"].shape == (5, 2)
    with pytest.raises(ValueError, match="refuses a seed"):
        dp_fw(small_problem, random_state=0, **kwargs)


def test_budget_is_charged_once_before_the_data_is_read(small_problem, monkeypatch):
    budget = PrivacyBudget(1.5, DELTA)
    reads = []
    real_blocks = Problem.margin_blocks

    def blocks(self, *args, **kwargs):  # the first read of the data for training
        reads.append(len(budget.charges))
        return real_blocks(self, *args, **kwargs)

    monkeypatch.setattr(Problem, "margin_blocks", blocks)
    kwargs = {"delta": DELTA, "radius": 1.0, "budget": budget, "random_state": 0}
    fit = dp_fw(small_problem, epsilon=1.0, noise="laplace", **kwargs)
    assert reads == [1]  # charged once, before training
    (charge,) = budget.charges
    assert [e.noise_multiplier for e in charge.plan.events] == [
        m.noise_multiplier for m in fit.report.mechanisms
    ]
    with pytest.raises(BudgetExceededError):
        dp_bcfw(small_problem, epsilon=1.5, **kwargs)
    assert reads == [1] and len(budget.charges) == 1  # refused before any data was read


# --- the registry: the plan a fit charges, from the problem's shape alone ------------------

#: case -> (solver, datafit, penalty, sparse, the fit's keywords besides the runtime ones)
PLAN_CASES = {
    "dp-fw gumbel": ("dp-fw", "squared", None, False, {"radius": 2.0, "n_iter": 10}),
    "dp-fw laplace advanced": (
        "dp-fw", "logistic", None, False,
        {"radius": 1.0, "n_iter": 8, "clip": 0.5, "noise": "laplace"},
    ),
    "dp-fw laplace pure": (
        "dp-fw", "squared", None, False,
        {"delta": 0.0, "radius": 1.0, "n_iter": 5, "noise": "laplace"},
    ),
    "dp-fw ball sparse": ("dp-fw", "squared", L1Ball(0.7), True, {"n_iter": 12, "clip": 2.0}),
    "dp-fw accountant given": (
        "dp-fw", "squared", None, False,
        {"radius": 1.0, "n_iter": 6, "noise": "laplace", "accountant": "basic"},
    ),
    "dp-bcfw labels uniform": (
        "dp-bcfw", "squared", None, False,
        {"radius": 1.0, "blocks": np.array([0, 1, 0, 1, 2, 2]), "n_iter": 10},
    ),
    "dp-bcfw distributed radii": (
        "dp-bcfw", "logistic", None, False,
        {"radius": [0.5, 1.0, 2.0], "blocks": 3, "sampling": "distributed", "tau": 1,
         "parties": 3, "n_iter": 7, "clip": 0.8},
    ),
    "dp-bcfw tau-nice sparse laplace": (
        "dp-bcfw", "squared_hinge", None, True,
        {"radius": 0.6, "sampling": "tau-nice", "tau": 2, "n_iter": 9, "noise": "laplace"},
    ),
    "dp-bcfw one block ball": ("dp-bcfw", "squared", L1Ball(1.5), False, {"blocks": 1,
                                "radius": None, "n_iter": 4}),
    "dp-bcfw arbitrary sampling": (
        "dp-bcfw", "squared", None, False,
        {"radius": 1.0, "blocks": 3, "sampling": FirstPlusOne(3), "n_iter": 5},
    ),
}  # fmt: skip
FITS = {"dp-fw": dp_fw, "dp-bcfw": dp_bcfw}


def plan_problem(case):
    _, datafit, penalty, sparse, _ = PLAN_CASES[case]
    classification = datafit != "squared"
    X, y = make_data(seed_of("plan", case), n=120, p=6, classification=classification,
                     sparse=sparse)  # fmt: skip
    return X, y, datafit, penalty


def charged_plan(fit, problem, **kwargs):
    """The plan a fit charges to a fresh budget."""
    budget = PrivacyBudget(50.0, 1e-3)
    fit(problem, budget=budget, random_state=0, **kwargs)
    (charge,) = budget.charges
    return charge.plan


def assert_same_plan(planned, charged):
    """What accounting reads: the events (noise, counts, sensitivities) and the relation."""
    assert planned.events == charged.events
    assert planned.neighbouring == charged.neighbouring


@pytest.mark.parametrize("case", PLAN_CASES)
def test_the_registered_plan_is_the_plan_the_fit_charges(case):
    name, *_, params = PLAN_CASES[case]
    X, y, datafit, penalty = plan_problem(case)
    problem = Problem(X, y, datafit, penalty)
    target = {"epsilon": 1.0, "delta": DELTA, **params}
    charged = charged_plan(FITS[name], problem, **target)
    solver = get_solver(name)
    assert solver.fit is FITS[name]
    assert_same_plan(solver.plan(problem, **target), charged)
    # the shape alone gives it: no record is read
    assert_same_plan(solver.plan(ProblemShape.of(problem), **target), charged)
    assert solver.leaks(ProblemShape.of(problem), **target) == ()


@pytest.mark.parametrize(
    ("params", "accountant"),
    [
        ({}, "auto"),
        ({"noise": "laplace"}, "advanced"),
        ({"noise": "laplace", "delta": 0.0}, "basic"),
        ({"noise": "laplace", "accountant": "basic"}, "basic"),  # a given one is kept
    ],
)
@pytest.mark.parametrize("name", FITS)
def test_the_fit_plan_carries_the_accountant_the_fit_resolves(name, params, accountant):
    shape = ProblemShape(100, 4, "squared")
    target = {"epsilon": 1.0, "delta": DELTA, "radius": 1.0, "n_iter": 5, **params}
    fit_plan = get_solver(name).fit_plan(shape, **target)
    assert fit_plan.accountant == accountant
    if accountant != "auto":  # "auto" reports the accountant it chose
        X, y = make_data(seed_of("accountant", name), n=100, p=4)
        fit = FITS[name](Problem(X, y, "squared"), random_state=0, **target)
        assert fit.report.accountant == accountant


@pytest.mark.parametrize("name", FITS)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_the_registered_plan_of_a_sharded_problem_is_the_plan_the_fit_charges(name, sparse):
    from dpglm.distributed import ShardedProblem, ShardedRows

    X, y = make_data(seed_of("sharded plan", name, sparse), n=150, p=6, sparse=sparse)
    params = {"epsilon": 1.5, "delta": DELTA, "radius": 1.0, "n_iter": 6}
    if name == "dp-bcfw":
        params |= {"blocks": 3, "sampling": "tau-nice", "tau": 2}
    with ShardedRows.from_array(X, y, chunks=60, resident=True) as rows:
        problem = ShardedProblem(rows, "squared")
        charged = charged_plan(FITS[name], problem, **params)
        solver = get_solver(name)
        assert_same_plan(solver.plan(problem, **params), charged)
        shape = ProblemShape.of(problem)
        assert shape.chunked and solver.accepts(shape) is None  # FW runs on row chunks
        assert_same_plan(solver.plan(shape, **params), charged)
    # the same records in memory: the same plan
    assert_same_plan(solver.plan(Problem(X, y, "squared"), **params), charged)


REFUSED = {
    "L1 penalty": ("logistic", L1(0.1), False),
    "intercept": ("logistic", None, True),
    "hinge": ("hinge", None, False),
}


@pytest.mark.parametrize("case", REFUSED)
@pytest.mark.parametrize("name", FITS)
def test_accepts_gives_the_fit_s_own_refusal(name, case):
    datafit, penalty, intercept = REFUSED[case]
    X, y = make_data(seed_of("refusal", case), n=30, p=3, classification=True)
    problem = Problem(X, y, datafit, penalty, fit_intercept=intercept)
    with pytest.raises(ValueError) as refusal:
        FITS[name](problem, epsilon=1.0, delta=DELTA, radius=1.0)
    solver = get_solver(name)
    assert solver.accepts(problem) == str(refusal.value)
    assert solver.accepts(ProblemShape.of(problem)) == str(refusal.value)
    assert name.upper() in str(refusal.value)  # DP-BCFW's refusal names DP-BCFW
    # an acceptable problem of the same size
    assert solver.accepts(ProblemShape(30, 3, "logistic", L1Ball(1.0))) is None


PLAN_BAD = [
    ("dp-fw", "squared", L1Ball(1.0), {"radius": 2.0}),
    ("dp-fw", "squared", None, {"radius": None}),
    ("dp-fw", "squared", None, {"radius": 1.0, "n_iter": 0}),
    ("dp-fw", "squared", None, {"radius": 1.0, "clip": math.inf}),
    ("dp-fw", "squared", None, {"radius": 1.0, "noise": "gaussian"}),
    ("dp-fw", "squared", None, {"radius": 1.0, "epsilon": 0.0}),
    ("dp-fw", "squared", None, {"radius": 1.0, "accountant": "guess"}),
    # the problem's refusal wins over a bad hyperparameter, in the plan as in the fit
    ("dp-fw", "hinge", None, {"radius": 1.0, "n_iter": 0}),
    ("dp-bcfw", "squared", L1Ball(1.0), {"radius": None}),
    ("dp-bcfw", "squared", None, {"radius": 1.0, "blocks": 5}),
    ("dp-bcfw", "squared", None, {"radius": [1.0, 2.0], "blocks": 3}),
    ("dp-bcfw", "squared", None, {"radius": 1.0, "sampling": "distributed", "tau": 1}),
    ("dp-bcfw", "squared", None, {"radius": 1.0, "sampling": TauNice(3, 1)}),
    # the privacy target is checked before the blocks
    ("dp-bcfw", "squared", None, {"radius": 1.0, "blocks": 0, "delta": 1.0}),
]


@pytest.mark.parametrize(("name", "datafit", "penalty", "params"), PLAN_BAD)
def test_the_plan_raises_what_the_fit_raises(name, datafit, penalty, params):
    X, y = make_data(seed_of("plan bad"), n=40, p=4, classification=True)
    problem = Problem(X, y, datafit, penalty)
    params = {"epsilon": 1.0, "delta": DELTA, **params}
    with pytest.raises((ValueError, TypeError)) as fit_error:
        FITS[name](problem, random_state=0, **params)
    for seen in (problem, ProblemShape.of(problem)):
        with pytest.raises(type(fit_error.value)) as plan_error:
            get_solver(name).plan(seen, **params)
        assert str(plan_error.value) == str(fit_error.value)


def test_the_solvers_are_registered_with_their_hyperparameters():
    fw, bcfw = get_solver("dp-fw"), get_solver("dp-bcfw")
    assert dp_fw_module.SOLVER[0] is fw and dp_fw_module.SOLVER[1] is bcfw
    assert (fw.order, bcfw.order, fw.estimator, bcfw.estimator) == (70, 80, None, None)
    assert fw.hyperparameters == ("radius", "n_iter", "clip", "noise", "accountant")
    assert bcfw.hyperparameters[:5] == ("radius", "blocks", "sampling", "tau", "parties")
    assert "Talwar" in fw.summary and "Lou and Cheung" in bcfw.summary
    # dp_bcfw's radius has no default: the plan needs it, as the fit does
    with pytest.raises(TypeError, match="'radius'"):
        bcfw.plan(ProblemShape(10, 2, "squared"), epsilon=1.0, delta=DELTA)


# --- audit of one private selection ---------------------------------------------------------

CLIP = 1.0
COORDS = 20  # 40 vertices
BACKGROUND = 9
N_AUDIT = 6000  # runs per side


def fw_neighbours():
    """Squared loss at theta = 0, every clipped per-sample term at +-C.

    Background records add -C to every g_j. The canary adds (+C, -C, ..., -C) in D and
    (-C, +C, ..., +C) in D': from D to D' the score -<g, r e_0> rises by the full
    sensitivity 2 r C / n and -<g, r e_j> falls by it for every j >= 1, the
    non-monotone worst case of report-noisy-max (the vertices -r e_j score far below).
    """
    n = BACKGROUND + 1
    X = -np.ones((n, COORDS))
    X[0, 0] = 1.0
    y = np.full(n, -10.0 * CLIP)
    other = y.copy()
    other[0] = 10.0 * CLIP
    return {"D": Problem(X, y, "squared"), "D'": Problem(X, other, "squared")}


@pytest.mark.parametrize("variant", ["correct", "half noise"])
@pytest.mark.parametrize("noise", ["gumbel", "laplace"])
def test_one_selection_audit(noise, variant, monkeypatch, request):
    fails = variant != "correct"
    if fails:  # the monotone calibration: half the scale non-monotone scores need
        with_less_noise(monkeypatch)
    problems = fw_neighbours()
    # basic composition: the one selection gets the whole epsilon (the advanced
    # composition of one release would claim a fifth of it, too small to audit here)
    fit_kwargs = {"epsilon": 2.0, "delta": 1e-5, "radius": 1.0, "clip": CLIP, "noise": noise}
    fit_kwargs["accountant"] = "basic" if noise == "laplace" else "auto"
    fit = dp_fw(problems["D"], n_iter=1, random_state=0, **fit_kwargs)
    (selection,) = fit.report.mechanisms
    assert selection.count == 1
    assert selection.sensitivity == pytest.approx(2 * CLIP / (BACKGROUND + 1), rel=1e-14)
    claim = selection.details["epsilon"]  # 2 / z, the pure epsilon of the selection
    assert fit.report.epsilon <= fit_kwargs["epsilon"]

    def sample(key, n, rng):
        out = np.empty(n, dtype=np.int64)
        for i in range(n):
            (j, sign), *_ = dp_fw(problems[key], n_iter=1, random_state=rng, **fit_kwargs).info[
                "vertices"
            ]
            out[i] = 2 * j + (sign < 0)
        return out

    bound = audit_event(sample, "D", "D'", n=N_AUDIT, delta=0.0, rng=seed_of(request.node.name))
    print(f"DP-FW {noise} {variant}: claim eps={claim:.4f}; {bound}")
    if fails:
        assert bound.exceeds(claim), f"half noise not caught: {bound} <= {claim:.4f}"
    else:
        assert not bound.exceeds(claim), f"correct solver refuted: {bound} > {claim:.4f}"
        assert bound.epsilon > 0.4 * claim, f"audit without power: {bound}"


# --- pure-Python kernels (CI also runs these with NUMBA_DISABLE_JIT=1) ----------------------


@pytest.mark.nojit
def test_tiny_fits_without_jit():
    X, y = make_data(seed_of("nojit"), n=40, p=4, classification=True, sparse=True)
    prob = Problem(X, y, "logistic", L1Ball(0.5))
    exact = dp_fw(prob, epsilon=math.inf, delta=0.0, n_iter=300)
    ref = solve_reference(prob)
    bound = 2 * curvature_bound(prob, np.array([0, 4]), [0.5]) / 302
    assert prob.objective(exact.coef) - ref.objective <= bound
    source = RecordingSource(seed_of("nojit source"))
    kwargs = {"blocks": [1, 0, 1, 0], "sampling": "uniform", "n_iter": 12, "clip": 0.5}
    fit = dp_bcfw(
        Problem(X, y, "logistic"),
        epsilon=8.0,
        delta=DELTA,
        radius=0.5,
        random_state=source,
        **kwargs,
    )
    theta = replay(Problem(X, y, "logistic"), fit, source, np.full(2, 0.5), 0.5)
    np.testing.assert_allclose(fit.coef, theta, rtol=1e-12, atol=1e-14)
