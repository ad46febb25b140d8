"""DP-GCD: greedy rules, the incremental clipped gradient, the plans of both noise modes.

Scores are checked against the definitions of the rules (a subdifferential, a
proximal step, a one-dimensional minimisation done by SciPy) and for the
1-Lipschitz property the privacy proof needs; the sparse solver's patched
gradient against a full recomputation; private fits step by step against a
NumPy replay with the solver's own draws; the reports against the paper's
formula (2). Statistical audits are in ``test_solver_audits.py``.
"""

import contextlib
import math
import warnings
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from dpglm._kernels.greedy import (
    GS_Q,
    GS_R,
    GS_S,
    greedy_score,
    greedy_scores,
    greedy_select,
    patch_clipped_gradient,
)
from dpglm.access.tracker import ClippedGradientTracker
from dpglm.datafits import get_datafit
from dpglm.distributed import ShardedProblem, ShardedRows
from dpglm.exceptions import BudgetExceededError, PrivacyLeakWarning
from dpglm.penalties import L1, L2, ElasticNet, L1Ball
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.mechanisms import NoiseSource, make_noise_source
from dpglm.problem import Problem
from dpglm.solvers.dp_gcd import RULES, dp_gcd
from dpglm.solvers.reference import solve_reference
from dpglm.solvers.registry import ProblemShape, get_solver
from solver_problems import make_data, seed_of

DELTA = 1e-6
RULE_CODES = {"gs-s": GS_S, "gs-r": GS_R, "gs-q": GS_Q}


def penalty_arrays(prob):
    """``(l1, l2, lo, hi)`` per coordinate; the intercept (last, when fitted) is free."""
    p, k = prob.n_features, prob.n_coords
    l1, l2, lo, hi = np.zeros(k), np.zeros(k), np.full(k, -np.inf), np.full(k, np.inf)
    l1[:p], l2[:p], lo[:p], hi[:p] = prob.penalty.prox_params(p)
    return l1, l2, lo, hi


# --- reference scores: the definitions of the rules -----------------------------------------


def subdifferential(w, l1, l2, lo, hi):
    """``d psi(w)`` for ``psi(u) = l1 |u| + l2 u^2 / 2 + indicator([lo, hi])``, an interval."""
    sign_set = (math.copysign(1.0, w), math.copysign(1.0, w)) if w != 0 else (-1.0, 1.0)
    lower, upper = l2 * w + l1 * sign_set[0], l2 * w + l1 * sign_set[1]
    # normal cone of the box: everything below at the lower end, above at the upper end
    if w == lo:
        lower = -math.inf
    if w == hi:
        upper = math.inf
    return lower, upper


def psi(u, l1, l2):
    return l1 * abs(u) + 0.5 * l2 * u * u


def quadratic_model(g, w, M, l1, l2, lo, hi):
    """``argmin_a g a + M a^2 / 2 + psi(w + a) - psi(w)`` on the box, by SciPy, and its value."""

    def model(a):
        return g * a + 0.5 * M * a * a + psi(w + a, l1, l2) - psi(w, l1, l2)

    # the model is M-strongly convex and 0 is feasible: |a*| <= 2 |subgradient at 0| / M
    reach = 2.0 * (abs(g) + l1 + l2 * abs(w)) / M + 1e-9
    a_lo, a_hi = max(lo - w, -reach), min(hi - w, reach)
    candidates = [0.0, a_lo, a_hi]
    if a_lo <= -w <= a_hi:
        candidates.append(-w)  # the kink of |w + a|
    if a_hi > a_lo:
        tol = 1e-13 * max(1.0, a_hi - a_lo)
        res = minimize_scalar(
            model, bounds=(a_lo, a_hi), method="bounded", options={"xatol": tol, "maxiter": 2000}
        )
        candidates.append(float(res.x))
    a = min(candidates, key=model)
    return a, model(a)


def reference_score(rule, g, w, M, l1, l2, lo, hi):
    if not M > 0:
        return 0.0
    if rule == GS_S:
        lower, upper = subdifferential(w, l1, l2, lo, hi)
        return max(lower - (-g), -g - upper, 0.0) / math.sqrt(M)
    a, value = quadratic_model(g, w, M, l1, l2, lo, hi)
    if rule == GS_R:
        # prox_{psi / M}(w - g / M) - w minimises the same model
        return math.sqrt(M) * abs(a)
    return math.sqrt(2.0 * max(-value, 0.0))


# --- hypothesis strategies -------------------------------------------------------------------

finite = {"allow_nan": False, "allow_infinity": False}


@st.composite
def coordinates(draw):
    """One coordinate: gradient entry, feasible iterate, smoothness, elastic net + box."""
    M = draw(st.one_of(st.just(0.0), st.floats(1e-2, 1e2, **finite)))
    l1 = draw(st.one_of(st.just(0.0), st.floats(0.0, 2.0, **finite)))
    l2 = draw(st.one_of(st.just(0.0), st.floats(0.0, 2.0, **finite)))
    lo = draw(st.one_of(st.just(-math.inf), st.floats(-3.0, 1.0, **finite)))
    hi = draw(st.one_of(st.just(math.inf), st.floats(-1.0, 3.0, **finite)))
    if lo > hi:
        lo, hi = hi, lo
    lo, hi = lo + 0.0, hi + 0.0  # no -0.0: st.floats(0.0, -0.0) is an empty range
    inside = (
        st.floats(max(lo, -5.0), min(hi, 5.0), **finite) if max(lo, -5) <= min(hi, 5) else None
    )
    choices = [c for c in (lo, hi) if math.isfinite(c)]
    if lo <= 0.0 <= hi:
        choices.append(0.0)
    options = [st.sampled_from(choices)] if choices else []
    if inside is not None:
        options.append(inside)
    w = draw(st.one_of(*options))
    g = draw(st.floats(-10.0, 10.0, **finite))
    return g, w, M, l1, l2, lo, hi


@settings(max_examples=400, deadline=None)
@given(rule=st.sampled_from([GS_S, GS_R, GS_Q]), coord=coordinates())
def test_greedy_score_matches_the_rule_definition(rule, coord):
    g, w, M, l1, l2, lo, hi = coord
    got = float(greedy_score(rule, g, w, M, l1, l2, lo, hi))
    want = reference_score(rule, g, w, M, l1, l2, lo, hi)
    assert got >= 0.0
    if rule == GS_S:
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
    elif rule == GS_R:
        # SciPy's minimiser of a smooth model is accurate to about sqrt(machine epsilon)
        assert got == pytest.approx(want, rel=1e-6, abs=1e-7 * (1.0 + math.sqrt(M)))
    else:
        q_got, q_want = got * got / 2.0, want * want / 2.0
        scale = 1.0 + g * g / max(M, 1e-300) + l1 * abs(w) + l2 * w * w
        # the kernel's minimum is exact: SciPy can only find a worse (smaller) decrease
        assert q_got >= q_want - 1e-12 * scale
        assert q_got == pytest.approx(q_want, rel=1e-9, abs=1e-12 * scale)


@settings(max_examples=400, deadline=None)
@given(
    rule=st.sampled_from([GS_S, GS_R, GS_Q]),
    coord=coordinates(),
    shift=st.one_of(st.floats(-1e-6, 1e-6, **finite), st.floats(-20.0, 20.0, **finite)),
)
def test_greedy_scores_are_one_lipschitz_in_the_scaled_gradient(rule, coord, shift):
    """``|score(g1) - score(g2)| <= |g1 - g2| / sqrt(M)``: the sensitivity of every score."""
    g, w, M, l1, l2, lo, hi = coord
    if not M > 0:
        return
    s1 = float(greedy_score(rule, g, w, M, l1, l2, lo, hi))
    s2 = float(greedy_score(rule, g + shift, w, M, l1, l2, lo, hi))
    bound = abs(shift) / math.sqrt(M)
    assert abs(s1 - s2) <= bound * (1 + 1e-9) + 1e-12 * (1 + s1 + s2)


def test_greedy_score_examples_and_the_vector_kernels():
    inf = math.inf
    # no penalty: |g| / sqrt(M) for every rule
    for rule in (GS_S, GS_R, GS_Q):
        assert greedy_score(rule, -3.0, 0.5, 4.0, 0.0, 0.0, -inf, inf) == pytest.approx(1.5)
    # L1 at zero: the flat region |g| <= l1 scores 0 under every rule
    for rule in (GS_S, GS_R, GS_Q):
        assert greedy_score(rule, 0.7, 0.0, 1.0, 1.0, 0.0, -inf, inf) == 0.0
    # at the upper end of a box, a gradient pushing outwards scores 0
    for rule in (GS_S, GS_R, GS_Q):
        assert greedy_score(rule, -2.0, 1.0, 1.0, 0.0, 0.0, -1.0, 1.0) == 0.0
    # a column of zeros (M = 0) never scores
    assert greedy_score(GS_S, 5.0, 0.0, 0.0, 0.0, 0.0, -inf, inf) == 0.0
    rng = np.random.default_rng(seed_of("vector"))
    p = 12
    g, w = rng.standard_normal(p), rng.standard_normal(p) * (rng.random(p) < 0.5)
    M = rng.uniform(0.1, 3.0, p)
    l1, l2 = np.full(p, 0.3), np.full(p, 0.1)
    lo, hi = np.full(p, -inf), np.full(p, inf)
    noise = rng.gumbel(size=p)
    for rule in (GS_S, GS_R, GS_Q):
        out = np.empty(p)
        greedy_scores(rule, g, w, M, l1, l2, lo, hi, out)
        each = [greedy_score(rule, *args) for args in zip(g, w, M, l1, l2, lo, hi, strict=True)]
        np.testing.assert_array_equal(out, each)
        assert greedy_select(rule, g, w, M, l1, l2, lo, hi, noise, 0.7) == np.argmax(
            out + 0.7 * noise
        )
        # scale 0: the exact greedy choice, and the first maximiser on ties
        best = int(np.argmax(out))
        copy = [np.append(a, a[best]) for a in (g, w, M, l1, l2, lo, hi)]
        assert greedy_select(rule, *copy, np.zeros(p + 1), 0.0) == best


# --- the clipped gradient, patched step after step on sparse data ---------------------------


def sparse_problem(seed, datafit, intercept, n=150, p=12, density=0.15):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=density, random_state=rng, format="csc")
    X.data = rng.standard_normal(X.nnz) * rng.choice([0.1, 1.0, 5.0], X.nnz)
    X = sp.csc_matrix(X.toarray() + np.where(np.arange(n)[:, None] == 0, 1.0, 0.0))  # no empty
    if get_datafit(datafit).binary_labels:
        y = rng.choice([-1.0, 1.0], n)
    else:
        y = rng.standard_normal(n) * 2.0
    return Problem(X, y, datafit, fit_intercept=intercept), rng


def assert_matches_full_computation(state, prob, theta, clip):
    scale = float(np.max(clip))
    np.testing.assert_allclose(state.z, prob.margins(theta), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(state.s, prob.derivatives(theta), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        state.G, prob.clipped_gradient(theta, clip), rtol=0, atol=1e-12 * scale
    )


@pytest.mark.parametrize("intercept", [False, True], ids=["no-icpt", "icpt"])
@pytest.mark.parametrize("datafit", ["squared", "logistic"])
def test_incremental_clipped_gradient_equals_a_full_recomputation(datafit, intercept):
    prob, rng = sparse_problem(seed_of("incremental", datafit, intercept), datafit, intercept)
    # finite thresholds, small enough that many per-sample terms are clipped
    clip = rng.uniform(0.02, 0.5, prob.n_coords)
    state = ClippedGradientTracker(prob, clip)
    theta = np.zeros(prob.n_coords)
    assert_matches_full_computation(state, prob, theta, clip)
    patched = refreshed = 0
    for _ in range(600):
        j = int(rng.integers(prob.n_coords))
        d = float(rng.standard_normal() * rng.choice([1e-3, 0.1, 1.0]))
        before = state.work
        state.move(j, d)
        theta[j] += d
        if j == prob.n_features:
            assert state.work == 0  # an intercept step moves every margin: full refresh
        elif state.work == 0:
            refreshed += 1  # the patches have read a pass: automatic full refresh
        else:
            assert state.work > before
            patched += 1
        # checked after every patch (the drift is largest just before a refresh) and refresh
        assert_matches_full_computation(state, prob, theta, clip)
    assert patched > 100 and refreshed > 5
    # clipping really is active where the walk ended
    clipped = np.abs(prob.derivatives(theta)[:, None] * prob.X.toarray()) > clip[: prob.n_features]
    assert clipped.any()


@pytest.mark.parametrize("intercept", [False, True], ids=["no-icpt", "icpt"])
@pytest.mark.parametrize("datafit", ["squared", "logistic", "huber"])
def test_patch_clipped_gradient_kernel(datafit, intercept):
    prob, rng = sparse_problem(seed_of("patch", datafit, intercept), datafit, intercept, n=40, p=6)
    X = prob.X
    R = X.tocsr()
    dense = X.toarray()
    p, n = prob.n_features, prob.n_samples
    clip = rng.choice([0.0, 0.05, 0.5, np.inf], prob.n_coords)
    theta = rng.standard_normal(prob.n_coords)
    z = prob.margins(theta)
    s = prob.derivatives(theta)
    G = prob.clipped_gradient(theta, clip)
    for _ in range(30):
        j = int(rng.integers(p))
        d = float(rng.standard_normal())
        work = patch_clipped_gradient(
            X.data, X.indices, X.indptr, R.data, R.indices, R.indptr,
            j, d, prob.y, z, s, clip, G,
            prob.datafit.code, prob.datafit.param, p, prob.fit_intercept,
        )  # fmt: skip
        theta[j] += d
        # NumPy: new margins, derivatives and clipped gradient from scratch
        z_want = dense @ theta[:p] + (theta[p] if intercept else 0.0)
        s_want = prob.datafit.derivative(z_want, prob.y)
        G_want = np.clip(s_want[:, None] * dense, -clip[:p], clip[:p]).sum(axis=0) / n
        if intercept:
            G_want = np.append(G_want, np.clip(s_want, -clip[p], clip[p]).sum() / n)
        np.testing.assert_allclose(z, z_want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(s, s_want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(G, G_want, rtol=1e-11, atol=1e-12)
        # the work is the stored entries of every row that column j touches
        rows = X.indices[X.indptr[j] : X.indptr[j + 1]]
        assert work == np.diff(R.indptr)[rows].sum()


# --- epsilon = inf: exact greedy coordinate descent ----------------------------------------

PROBLEMS = {
    "squared-l1": ("squared", L1(0.03), False),
    "logistic-enet-icpt": ("logistic", ElasticNet(0.04, 0.5), True),
}


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("case", PROBLEMS)
def test_non_private_dp_gcd_reaches_the_reference_optimum(case, rule, sparse):
    datafit, penalty, intercept = PROBLEMS[case]
    X, y = make_data(
        seed_of(case, sparse), n=250, p=6, classification=datafit == "logistic", sparse=sparse
    )
    prob = Problem(X, y, datafit, penalty, fit_intercept=intercept)
    with pytest.warns(PrivacyLeakWarning, match="raw data"):
        fit = dp_gcd(prob, epsilon=math.inf, delta=0.0, n_iter=400, rule=rule, smoothness="data")
    ref = solve_reference(prob)
    assert ref.certified
    excess = (prob.objective(fit.theta) - ref.objective) / abs(ref.objective)
    assert -1e-9 <= excess <= 1e-6, excess
    assert fit.info["rule"] == rule
    assert fit.info["selection_noise_scale"] == 0 and not fit.info["update_noise_scale"].any()
    assert np.isinf(fit.info["clip_thresholds"]).all()
    assert fit.report.non_private and not fit.report.guarantee
    np.testing.assert_array_equal(fit.history.thetas[-1], fit.theta)
    assert fit.history.passes[-1] == 400


def test_auto_rule():
    X, y = make_data(seed_of("auto rule"), n=50, p=3)
    kwargs = {"epsilon": 1.0, "delta": DELTA, "n_iter": 2, "feature_bounds": 1.0}
    assert dp_gcd(Problem(X, y, "squared", L2(0.1)), **kwargs).info["rule"] == "gs-s"
    assert dp_gcd(Problem(X, y, "squared", ElasticNet(0.1)), **kwargs).info["rule"] == "gs-r"


# --- a private fit, replayed in NumPy with the solver's own draws ---------------------------


class RecordingSource(NoiseSource):
    """A seeded source that keeps every draw it hands out, by kind."""

    def __init__(self, seed):
        self.inner = make_noise_source(seed)
        self.generator = self.inner.generator
        self.draws = []

    def _keep(self, kind, draws):
        self.draws.append((kind, np.array(draws)))
        return draws

    def standard_normal(self, size=None):
        return self._keep("normal", self.inner.standard_normal(size))

    def gumbel(self, scale, size=None):
        assert scale == 1.0
        return self._keep("gumbel", self.inner.gumbel(scale, size))

    def laplace(self, scale, size=None):
        assert scale == 1.0
        return self._keep("laplace", self.inner.laplace(scale, size))


def replay_dp_gcd(prob, fit, source):
    """Each step in NumPy: full clipped gradient, reference scores, noisy argmax, prox."""
    info = fit.info
    rule = RULE_CODES[info["rule"]]
    M, clip, step = info["smoothness"], info["clip_thresholds"], info["step_sizes"]
    l1, l2, lo, hi = penalty_arrays(prob)
    selection = np.vstack([d for _, d in source.draws if d.ndim == 2])
    update = np.concatenate([d for _, d in source.draws if d.ndim == 1])
    kinds = {k for k, _ in source.draws}
    assert kinds == ({"laplace"} if info["noise"] == "paper" else {"gumbel", "normal"})
    theta, picks = np.zeros(prob.n_coords), []
    for t in range(fit.n_iter):
        G = prob.clipped_gradient(theta, clip)
        scores = [reference_score(rule, *a) for a in zip(G, theta, M, l1, l2, lo, hi, strict=True)]
        j = int(np.argmax(np.array(scores) + info["selection_noise_scale"] * selection[t]))
        picks.append(j)
        x = theta[j] - step[j] * (G[j] + update[t] * info["update_noise_scale"][j])
        shrunk = np.sign(x) * max(abs(x) - step[j] * l1[j], 0.0) / (1.0 + step[j] * l2[j])
        theta[j] = min(max(shrunk, lo[j]), hi[j])
    return np.array(picks), theta


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
@pytest.mark.parametrize("noise", ["tight", "paper"])
@pytest.mark.parametrize("rule", RULES)
def test_private_fit_replays_in_numpy(rule, noise, sparse):
    X, y = make_data(seed_of("replay", sparse), n=80, p=5, classification=True, sparse=sparse)
    prob = Problem(X, y, "logistic", ElasticNet(0.01, 0.5), fit_intercept=True)
    source = RecordingSource(seed_of("replay source", rule, noise, sparse))
    fit = dp_gcd(
        prob,
        epsilon=8.0,
        delta=DELTA,
        n_iter=25,
        clip=0.4,
        rule=rule,
        noise=noise,
        feature_bounds=1.0,
        random_state=source,
    )
    picks, theta = replay_dp_gcd(prob, fit, source)
    np.testing.assert_array_equal(fit.info["selected"], picks)
    np.testing.assert_allclose(fit.theta, theta, rtol=1e-10, atol=1e-12)
    assert len(set(picks.tolist())) > 1  # the noisy selection moves several coordinates


# --- reproducibility ------------------------------------------------------------------------


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
@pytest.mark.parametrize("noise", ["tight", "paper"])
def test_the_seed_reproduces_the_fit_bit_for_bit(noise, sparse):
    X, y = make_data(seed_of("seed", sparse), n=200, p=6, sparse=sparse)
    prob = Problem(X, y, "squared", L1(0.01), fit_intercept=True)
    kwargs = {"epsilon": 2.0, "delta": DELTA, "n_iter": 30, "noise": noise, "feature_bounds": 1}
    a = dp_gcd(prob, random_state=11, **kwargs)
    b = dp_gcd(prob, random_state=11, **kwargs)
    c = dp_gcd(prob, random_state=12, **kwargs)
    np.testing.assert_array_equal(a.coef, b.coef)
    assert a.intercept == b.intercept
    np.testing.assert_array_equal(a.info["selected"], b.info["selected"])
    np.testing.assert_array_equal(a.history.thetas, b.history.thetas)
    assert not np.array_equal(a.history.thetas, c.history.thetas)


# --- the report matches the plan ------------------------------------------------------------


def check_noise_scales(fit, prob, clip):
    """Selection: multiplier * 2 C / (n sqrt(tr M)); update: multiplier * 2 C_j / n."""
    selection, update = fit.report.mechanisms[-2:]
    M, n = fit.info["smoothness"], prob.n_samples
    delta_score = 2 * clip / (n * math.sqrt(M.sum()))
    C_j = clip * np.sqrt(M / M.sum())
    np.testing.assert_allclose(fit.info["clip_thresholds"], C_j, rtol=1e-14)
    assert fit.info["selection_noise_scale"] == pytest.approx(
        selection.noise_multiplier * delta_score, rel=1e-14
    )
    np.testing.assert_allclose(
        fit.info["update_noise_scale"], update.noise_multiplier * 2 * C_j / n, rtol=1e-14
    )
    if selection.sensitivity is not None:  # public M: the report shows the sensitivities
        assert selection.sensitivity == pytest.approx(delta_score, rel=1e-14)
        assert update.sensitivity == pytest.approx(2 * clip / n, rel=1e-14)
    return delta_score, C_j


@pytest.mark.parametrize("n_iter", [1, 40])
@pytest.mark.parametrize("target", [0.5, 3.0])
def test_paper_mode_follows_formula_2_of_the_paper(target, n_iter):
    X, y = make_data(seed_of("paper", target, n_iter), n=300, p=6)
    prob = Problem(X, y, "squared", L1(0.01), fit_intercept=True)
    clip = 0.8
    fit = dp_gcd(
        prob,
        epsilon=target,
        delta=DELTA,
        n_iter=n_iter,
        clip=clip,
        noise="paper",
        feature_bounds=np.linspace(0.6, 1.0, 6),
        random_state=0,
    )
    report = fit.report
    selection, update = report.mechanisms
    assert (selection.kind, selection.details["noise"]) == ("noisy_max", "laplace")
    assert not selection.details["monotone"]
    assert update.kind == "laplace"
    assert selection.count == update.count == n_iter == fit.n_iter
    assert report.accountant == "advanced"
    assert report.neighbouring == "replace_one"
    # equal per-release epsilon' at selection_share = 1/2 ...
    eps1 = selection.details["epsilon"]
    assert update.details["epsilon"] == pytest.approx(eps1, rel=1e-12)
    # ... composed by formula (2): 2T releases of epsilon' under advanced composition
    T = n_iter
    formula = math.sqrt(4 * T * math.log(1 / DELTA)) * eps1 + 2 * T * eps1 * math.expm1(eps1)
    assert report.epsilon == pytest.approx(formula, rel=1e-12)
    assert report.epsilon <= target
    assert report.epsilon == pytest.approx(target, rel=1e-3)
    delta_score, C_j = check_noise_scales(fit, prob, clip)
    # Laplace scales: twice the paper's Delta / epsilon' for the selection (non-monotone
    # scores), 2 C_j / (n epsilon') for the update
    assert fit.info["selection_noise_scale"] == pytest.approx(2 * delta_score / eps1, rel=1e-12)
    np.testing.assert_allclose(
        fit.info["update_noise_scale"], 2 * C_j / prob.n_samples / eps1, rtol=1e-12
    )


@pytest.mark.parametrize("n_iter", [1, 40])
@pytest.mark.parametrize("target", [0.5, 3.0])
def test_tight_mode_plan(target, n_iter):
    X, y = make_data(seed_of("tight", target, n_iter), n=300, p=6, sparse=True)
    prob = Problem(X, y, "squared", L2(0.01))
    clip = 1.3
    fit = dp_gcd(
        prob,
        epsilon=target,
        delta=DELTA,
        n_iter=n_iter,
        clip=clip,
        feature_bounds=1.0,
        random_state=0,
    )
    report = fit.report
    selection, update = report.mechanisms
    assert (selection.kind, selection.details["noise"]) == ("noisy_max", "gumbel")
    assert update.kind == "gaussian"
    assert selection.count == update.count == n_iter
    assert report.accountant != "advanced"
    assert report.epsilon <= target
    assert report.epsilon == pytest.approx(target, rel=1e-3)
    # selection_share = 1/2 of each step's zCDP budget: rho = eps^2 / 8 vs 1 / (2 z^2)
    assert selection.details["rho"] == pytest.approx(0.5 / update.noise_multiplier**2, rel=1e-12)
    check_noise_scales(fit, prob, clip)


@pytest.mark.parametrize("noise", ["tight", "paper"])
def test_selection_share_splits_each_step(noise):
    X, y = make_data(seed_of("share", noise), n=200, p=4)
    prob = Problem(X, y, "squared")
    kwargs = {"epsilon": 1.0, "delta": DELTA, "n_iter": 10, "feature_bounds": 1.0}
    fit = dp_gcd(prob, noise=noise, selection_share=0.3, **kwargs)
    selection, update = fit.report.mechanisms
    if noise == "paper":
        eps_sel, eps_upd = selection.details["epsilon"], update.details["epsilon"]
        assert eps_sel / (eps_sel + eps_upd) == pytest.approx(0.3, rel=1e-12)
    else:
        rho_sel, rho_upd = selection.details["rho"], 0.5 / update.noise_multiplier**2
        assert rho_sel / (rho_sel + rho_upd) == pytest.approx(0.3, rel=1e-12)
    assert fit.report.epsilon == pytest.approx(1.0, rel=1e-3)


def test_private_smoothness_leaves_the_sensitivities_to_the_fit():
    X, y = make_data(seed_of("private smoothness"), n=2000, p=6)
    prob = Problem(X, y, "squared", fit_intercept=True)
    fit = dp_gcd(
        prob,
        epsilon=2.0,
        delta=DELTA,
        n_iter=10,
        smoothness="private",
        feature_bounds=1.0,
        smoothness_share=0.2,
        random_state=0,
    )
    smooth, selection, update = fit.report.mechanisms
    assert (smooth.kind, smooth.part, smooth.count) == ("laplace", "smoothness estimation", 6)
    assert selection.part == update.part == "training"
    assert fit.report.epsilon <= 2.0
    assert set(fit.report.parts) == {"smoothness estimation", "training"}
    # tr M was not known when the plan was made: the scales use the estimate
    assert selection.sensitivity is None
    check_noise_scales(fit, prob, 1.0)


# --- validation -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_problem():
    X, y = make_data(seed_of("small"), n=50, p=3)
    return Problem(X, y, "squared")


def test_non_smooth_and_non_separable_problems_are_refused():
    X, y = make_data(seed_of("refused"), n=30, p=3, classification=True)
    with pytest.raises(ValueError, match=r"DP-GCD needs a smooth loss.*hinge.*squared_hinge"):
        dp_gcd(Problem(X, y, "hinge"), epsilon=1.0, delta=DELTA, feature_bounds=1.0)
    with pytest.raises(ValueError, match=r"separable penalty.*L1Ball.*Frank-Wolfe"):
        dp_gcd(Problem(X, y, "logistic", L1Ball(1.0)), epsilon=1.0, delta=DELTA)


@pytest.mark.parametrize(
    ("name", "value", "error"),
    [
        ("step", 0.0, ValueError),
        ("step", math.inf, ValueError),
        ("step", None, TypeError),
        ("clip", -1.0, ValueError),
        ("clip", math.nan, ValueError),
        ("clip", math.inf, ValueError),  # a private fit needs a finite sensitivity
        ("n_iter", 0, ValueError),
        ("n_iter", 2.5, ValueError),
        ("n_iter", True, ValueError),
        ("rule", "gs-x", ValueError),
        ("rule", None, ValueError),
        ("noise", "gaussian", ValueError),
        ("selection_share", 0.0, ValueError),
        ("selection_share", 1.0, ValueError),
        ("selection_share", math.nan, ValueError),
        ("selection_share", "half", ValueError),
        ("smoothness", "guess", ValueError),
    ],
)
def test_bad_parameters_are_named(small_problem, name, value, error):
    kwargs = {"epsilon": 1.0, "delta": DELTA, "feature_bounds": 1.0, "random_state": 0}
    kwargs[name] = value
    with pytest.raises(error, match=name) as raised:
        dp_gcd(small_problem, **kwargs)
    # the registry's plan refuses them before any record is read, with the fit's message
    del kwargs["random_state"]
    for shape in (small_problem, ProblemShape.of(small_problem)):
        with pytest.raises(error) as planned:
            get_solver("dp-gcd").plan(shape, **kwargs)
        assert str(planned.value) == str(raised.value)


def test_budget_is_charged_once_per_fit_and_refuses_overspending(small_problem):
    budget = PrivacyBudget(1.2, DELTA)
    kwargs = {"delta": DELTA, "feature_bounds": 1.0, "budget": budget, "random_state": 0}
    fit = dp_gcd(small_problem, epsilon=1.0, noise="paper", **kwargs)
    assert len(budget.charges) == 1
    (charge,) = budget.charges
    multipliers = [m.noise_multiplier for m in fit.report.mechanisms]
    assert [e.noise_multiplier for e in charge.plan.events] == multipliers
    with pytest.raises(BudgetExceededError):
        dp_gcd(small_problem, epsilon=1.0, **kwargs)
    assert len(budget.charges) == 1


# --- the registry: the plan known before the data is read is the plan the fit charges -------

#: hyperparameters of the registry tests (the others take the fit function's defaults)
REGISTRY_SETTINGS = {
    "tight, bounds": {"n_iter": 8, "feature_bounds": 1.0},
    "paper, per-column bounds": {
        "n_iter": 6,
        "noise": "paper",
        "smoothness": "bounds",
        "feature_bounds": [1.0, 0.5, 1.0, 2.0, 1.0],
        "selection_share": 0.3,
        "rule": "gs-s",
    },
    "private smoothness": {
        "n_iter": 5,
        "smoothness": "private",
        "feature_bounds": 1.0,
        "smoothness_share": 0.2,
        "rule": "gs-q",
    },
    "clip, step and rdp": {
        "n_iter": 5,
        "clip": 2.0,
        "step": 0.5,
        "feature_bounds": 1.0,
        "accountant": "rdp",
    },
    "data smoothness": {"n_iter": 5, "smoothness": "data"},
}


@contextlib.contextmanager
def registry_problem(kind):
    """A lasso problem of 120 records: dense, sparse, with an intercept, or in row chunks."""
    X, y = make_data(seed_of("registry", kind), n=120, p=5, sparse=kind == "sparse")
    intercept = kind in ("intercept", "rows")
    if kind == "rows":
        with ShardedRows.from_array(X, y, chunks=50) as rows:
            yield ShardedProblem(rows, "squared", L1(0.01), fit_intercept=intercept)
    else:
        yield Problem(X, y, "squared", L1(0.01), fit_intercept=intercept)


def fit_recording_leaks(problem, **kwargs):
    """The fit and the messages of the privacy-leak warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyLeakWarning)
        fit = dp_gcd(problem, **kwargs)
    return fit, tuple(str(w.message) for w in caught if w.category is PrivacyLeakWarning)


def without_sensitivities(plan):
    """What accounting reads of a plan: its events' noise and counts, and the relation."""
    events = tuple(replace(e, sensitivity=None) for e in plan.events)
    return events, plan.neighbouring


@pytest.mark.parametrize("kind", ["dense", "sparse", "intercept", "rows"])
@pytest.mark.parametrize("settings", list(REGISTRY_SETTINGS))
def test_the_registry_plan_is_the_charged_plan(kind, settings):
    params = REGISTRY_SETTINGS[settings]
    solver = get_solver("dp-gcd")
    with registry_problem(kind) as problem:
        budget = PrivacyBudget(epsilon=2.0, delta=2 * DELTA)
        fit, leaked = fit_recording_leaks(
            problem, epsilon=1.0, delta=DELTA, budget=budget, random_state=0, **params
        )
        charged = budget.charges[-1].plan
        # the plan of this fit: its smoothness estimate, then a selection and an update a step
        assert [e.count for e in charged.events[-2:]] == [fit.n_iter] * 2
        assert len(charged.events) == 2 + (settings == "private smoothness")
        # with M_j public or read from the data, the report shows the sensitivities
        known = None not in [e.sensitivity for e in charged.events[-2:]]
        assert known == (settings != "private smoothness")
        shapes = (problem, ProblemShape.of(problem))
        for shape in shapes:
            plan = solver.plan(shape, epsilon=1.0, delta=DELTA, **params)
            if settings == "data smoothness":
                # the report's sensitivities come from M_j read from the data, after the
                # plan; accounting reads none of them
                assert [e.sensitivity for e in plan.events] == [None, None]
                assert without_sensitivities(plan) == without_sensitivities(charged)
            else:
                assert plan == charged
            assert solver.accepts(shape) is None
            assert solver.leaks(shape, epsilon=1.0, delta=DELTA, **params) == leaked
        assert shapes[1].chunked == (kind == "rows")
    assert bool(leaked) == (settings == "data smoothness")


@pytest.mark.parametrize("kind", ["dense", "rows"])
def test_the_registry_lists_the_leak_of_smoothness_read_from_the_data(kind):
    solver = get_solver("dp-gcd")
    with registry_problem(kind) as problem:
        for smoothness in ("data", "auto"):  # "auto" without bounds reads the data
            fit, leaked = fit_recording_leaks(
                problem, epsilon=1.0, delta=DELTA, n_iter=3, smoothness=smoothness
            )
            planned = solver.leaks(
                ProblemShape.of(problem), epsilon=1.0, delta=DELTA, smoothness=smoothness
            )
            assert len(leaked) == 1 and "raw data" in leaked[0]
            assert planned == leaked
            assert planned == fit.report.warnings[: len(planned)]
        assert solver.leaks(problem, epsilon=1.0, delta=DELTA, feature_bounds=1.0) == ()
        # a non-private fit reads the data too, when no bounds are given
        assert solver.leaks(problem, epsilon=math.inf, delta=0.0, smoothness="private") == leaked


@pytest.mark.parametrize("penalty", ["hinge", "l1-ball"])
def test_the_registry_refuses_what_the_fit_refuses_with_its_message(penalty):
    X, y = make_data(seed_of("registry refused"), n=60, p=3, classification=True)
    problem = Problem(X, y, *{"hinge": ("hinge",), "l1-ball": ("logistic", L1Ball(1.0))}[penalty])
    solver = get_solver("dp-gcd")
    with pytest.raises(ValueError) as raised:
        dp_gcd(problem, epsilon=1.0, delta=DELTA, feature_bounds=1.0)
    shape = ProblemShape.of(problem)
    assert solver.accepts(problem) == solver.accepts(shape) == str(raised.value)
    # row chunks are no refusal: DP-GCD is data-parallel
    assert solver.accepts(replace(shape, chunked=True)) == str(raised.value)
    assert solver.accepts(ProblemShape(60, 3, "logistic", L1(0.1), chunked=True)) is None
    with pytest.raises(ValueError) as planned:
        solver.plan(shape, epsilon=1.0, delta=DELTA, feature_bounds=1.0)
    assert str(planned.value) == str(raised.value)


@pytest.mark.parametrize(
    ("refused", "kwargs", "first"),
    [
        (True, {"epsilon": 0.0}, "smooth loss"),
        (False, {"epsilon": 0.0, "step": 0.0}, "epsilon"),
        (False, {"step": 0.0, "clip": 0.0}, "step"),
        (False, {"clip": 0.0, "n_iter": 0}, "clip"),
        (False, {"n_iter": 0, "noise": "gaussian"}, "n_iter"),
        (False, {"noise": "gaussian", "selection_share": 2.0}, "noise"),
        (False, {"selection_share": 2.0, "rule": "gs-x"}, "selection_share"),
        (False, {"rule": "gs-x", "clip": math.inf}, "rule"),
        (False, {"clip": math.inf, "smoothness": "guess"}, "clip must be finite"),
        (False, {"smoothness": "guess", "feature_bounds": [1.0]}, "smoothness"),
        (False, {"feature_bounds": [1.0]}, "feature_bounds has shape"),
    ],
)
def test_the_first_error_of_the_fit_is_the_registrys(refused, kwargs, first):
    options = {"epsilon": 1.0, "delta": DELTA, "feature_bounds": 1.0, **kwargs}
    X, y = make_data(seed_of("registry errors"), n=60, p=3)
    problem = Problem(X, np.sign(y), "hinge") if refused else Problem(X, y, "squared", L1(0.01))
    with pytest.raises((TypeError, ValueError), match=first) as raised:
        dp_gcd(problem, **options)
    with pytest.raises(raised.type) as planned:
        get_solver("dp-gcd").plan(ProblemShape.of(problem), **options)
    assert str(planned.value) == str(raised.value)


# --- pure-Python kernels (CI also runs these with NUMBA_DISABLE_JIT=1) ----------------------


@pytest.mark.nojit
def test_tiny_fits_without_jit():
    X, y = make_data(seed_of("nojit"), n=40, p=3, classification=True, sparse=True)
    prob = Problem(X, y, "logistic", L1(0.01), fit_intercept=True)
    for rule in RULES:
        with pytest.warns(PrivacyLeakWarning):
            exact = dp_gcd(
                prob, epsilon=math.inf, delta=0.0, n_iter=80, smoothness="data", rule=rule
            )
        ref = solve_reference(prob)
        assert (prob.objective(exact.theta) - ref.objective) / abs(ref.objective) <= 1e-6
    source = RecordingSource(seed_of("nojit source"))
    fit = dp_gcd(
        prob, epsilon=4.0, delta=DELTA, n_iter=10, feature_bounds=1.0, random_state=source
    )
    picks, theta = replay_dp_gcd(prob, fit, source)
    np.testing.assert_array_equal(fit.info["selected"], picks)
    np.testing.assert_allclose(fit.theta, theta, rtol=1e-10, atol=1e-12)
    # the sparse patches agree with a full recomputation here too
    clip = np.full(prob.n_coords, 0.1)
    state = ClippedGradientTracker(prob, clip)
    theta = np.zeros(prob.n_coords)
    rng = np.random.default_rng(seed_of("nojit moves"))
    for _ in range(20):
        j, d = int(rng.integers(prob.n_coords)), float(rng.standard_normal())
        state.move(j, d)
        theta[j] += d
        assert_matches_full_computation(state, prob, theta, clip)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dp_gcd(prob, epsilon=1.0, delta=DELTA, n_iter=3, noise="paper", feature_bounds=1.0)
