"""DP-SGD: convergence without noise, reproducibility, the plan it reports, a sampler that
matches its accountant, kernels equal to NumPy, budget charging and input checks."""

import contextlib
import importlib
import math
import warnings
from itertools import combinations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import binom, chi2

from dpglm._kernels.stochastic import distinct_subsets, sgd_steps_csr, sgd_steps_dense
from dpglm.datafits import Hinge, Huber, Logistic, Squared, SquaredHinge
from dpglm.distributed import ShardedProblem, ShardedRows
from dpglm.exceptions import BudgetExceededError, PrivacyLeakWarning
from dpglm.penalties import L1, L2, Box, ElasticNet, L1Ball
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.mechanisms import make_noise_source
from dpglm.problem import Problem
from dpglm.solvers.dp_sgd import BatchSampler, chunk_steps, dp_sgd
from dpglm.solvers.reference import solve_reference
from dpglm.solvers.registry import ProblemShape, get_solver
from dpglm.solvers.result import History

# the module, even once the package exports the function under the same name
dp_sgd_module = importlib.import_module("dpglm.solvers.dp_sgd")
DATAFITS = [Squared(), Logistic(), SquaredHinge(), Huber(0.7), Hinge()]
IDS = [d.name for d in DATAFITS]
#: a correct implementation fails a statistical test with probability below 1e-7:
#: normal approximations at 5.5 sd (two-sided 4e-8), chi-square tails at 1e-8 each
Z = 5.5
TAIL = 1e-8

# One private configuration (n, batch size, steps, clip) per sampler: the plans are
# calibrated once and the cached calibration serves every test below.
N, B, PASSES, CLIP, EPS, DELTA = 500, 50, 5.0, 1.0, 1.0, 1e-5
T = round(PASSES * N / B)
RIDGE = L2(0.1)


def regression(n=N, p=5, seed=0, intercept=False, penalty=RIDGE):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    y = X @ rng.standard_normal(p) + 0.3 + 0.1 * rng.standard_normal(n)
    return Problem(X, y, "squared", penalty, fit_intercept=intercept)


def private_fit(problem, sampling="poisson", **kwargs):
    options = {"epsilon": EPS, "delta": DELTA, "passes": PASSES, "batch_size": B}
    options.update(clip=CLIP, step=0.5)
    return dp_sgd(problem, sampling=sampling, **{**options, **kwargs})


# -- naive NumPy DP-SGD -------------------------------------------------------------------


def prox(x, step, l1, l2, lo, hi):
    shrunk = np.sign(x) * np.maximum(np.abs(x) - step * l1, 0.0) / (1.0 + step * l2)
    return np.minimum(np.maximum(shrunk, lo), hi)


def naive_steps(X, y, datafit, intercept, counts, rows, noise, theta, sigma, clip, step, b, pen):
    """One step at a time, as the module docstring of the kernels says; returns every iterate."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    ones = np.ones((X.shape[0], 1))
    F = np.hstack([X, ones]) if intercept else X
    norms = np.sqrt((F**2).sum(axis=1))
    offsets = np.concatenate(([0], np.cumsum(counts)))
    iterates = []
    for t in range(len(counts)):
        batch = rows[offsets[t] : offsets[t + 1]]
        s = datafit.derivative(F[batch] @ theta, y[batch])
        with np.errstate(divide="ignore"):
            factor = np.minimum(1.0, clip / (np.abs(s) * norms[batch]))
        g = (s * factor) @ F[batch]
        theta = prox(theta - step * (g + sigma * noise[t]) / b, step, *pen)
        iterates.append(theta)
    return np.array(iterates).reshape(len(counts), -1)


def penalty_arrays(p, intercept, rng):
    n_coords = p + intercept
    l1, l2 = rng.uniform(0, 0.3, n_coords), rng.uniform(0, 0.3, n_coords)
    lo, hi = -rng.uniform(0.2, 2, n_coords), rng.uniform(0.2, 2, n_coords)
    if intercept:
        l1[-1], l2[-1], lo[-1], hi[-1] = 0.0, 0.0, -np.inf, np.inf
    return l1, l2, lo, hi


def kernel_case(rng, n, p, datafit, intercept, steps):
    X = rng.standard_normal((n, p)) * (rng.uniform(size=(n, p)) < 0.6)
    if datafit.binary_labels:
        y = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)
    else:
        y = 2.0 * rng.standard_normal(n)
    counts = rng.integers(0, n + 1, steps)
    counts[0] = 0  # a step on an empty Poisson batch: noise only
    rows = np.concatenate([rng.choice(n, k, replace=False) for k in counts]).astype(np.int64)
    noise = rng.standard_normal((steps, p + intercept))
    theta = 0.3 * rng.standard_normal(p + intercept)
    return X, y, counts, rows, noise, theta, penalty_arrays(p, intercept, rng)


def run_kernel(X, y, datafit, intercept, counts, rows, noise, theta, sigma, clip, step, b, pen):
    F = np.hstack([X, np.ones((X.shape[0], 1))]) if intercept else X
    norms = np.sqrt((F**2).sum(axis=1))
    tail = (sigma, clip, step, 1.0 / b, *pen, datafit.code, datafit.param, intercept)
    dense, csr = theta.copy(), theta.copy()
    head = (y, norms, counts, rows, noise)
    sgd_steps_dense(np.ascontiguousarray(X), *head, dense, np.empty_like(theta), *tail)
    A = sp.csr_array(X)
    sgd_steps_csr(A.data, A.indices, A.indptr, *head, csr, np.empty_like(theta), *tail)
    return dense, csr


@pytest.mark.parametrize("intercept", [False, True], ids=["no_intercept", "intercept"])
@pytest.mark.parametrize("datafit", DATAFITS, ids=IDS)
def test_kernels_equal_naive_numpy(datafit, intercept):
    rng = np.random.default_rng([datafit.code, int(intercept)])
    X, y, counts, rows, noise, theta, pen = kernel_case(rng, 40, 7, datafit, intercept, 12)
    # a clip that binds for some samples and not others, and real noise
    args = (counts, rows, noise, theta, 0.7, 1.5, 0.3, 20.0, pen)
    want = naive_steps(X, y, datafit, intercept, *args)[-1]
    dense, csr = run_kernel(X, y, datafit, intercept, *args)
    assert not np.allclose(want, theta)  # the steps moved the iterate
    np.testing.assert_allclose(dense, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(csr, want, rtol=1e-12, atol=1e-12)


@pytest.mark.nojit
@pytest.mark.parametrize("datafit", [Logistic(), Huber(0.7)], ids=["logistic", "huber"])
def test_kernels_small(datafit):
    rng = np.random.default_rng(3)
    X, y, counts, rows, noise, theta, pen = kernel_case(rng, 8, 3, datafit, True, 4)
    args = (counts, rows, noise, theta, 0.5, 1.0, 0.5, 4.0, pen)
    want = naive_steps(X, y, datafit, True, *args)[-1]
    for got in run_kernel(X, y, datafit, True, *args):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # and the sampler and the whole non-private solver run without the JIT too
    counts, rows = BatchSampler(9, 4, "poisson").draw(make_noise_source(0), 6)
    assert rows.shape == (counts.sum(),)
    fit = dp_sgd(regression(n=30, p=3), epsilon=math.inf, delta=0.0, batch_size=5, passes=1)
    assert fit.n_iter == 6 and np.all(np.isfinite(fit.coef)) and fit.coef.any()


# -- non-private convergence ----------------------------------------------------------------


def smoothness(problem):
    X = np.asarray(problem.X)
    if problem.fit_intercept:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    return problem.datafit.curvature * np.linalg.eigvalsh(X.T @ X / X.shape[0])[-1]


def classification(n=300, p=5, seed=1, penalty="l2", intercept=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = np.where(X @ rng.standard_normal(p) + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return Problem(X, y, "logistic", penalty, fit_intercept=intercept)


@pytest.mark.parametrize(
    "problem",
    [
        regression(n=200, penalty=L2(0.1), intercept=True),
        classification(penalty=L2(0.05)),
        regression(n=200, penalty=L1(0.05)),
        classification(penalty=ElasticNet(0.02, 0.5), intercept=True),
        regression(n=200, penalty=Box(-0.3, 0.3)),
    ],
    ids=["squared-l2", "logistic-l2", "squared-l1", "logistic-enet", "squared-box"],
)
def test_full_batch_gradient_descent_reaches_optimum(problem):
    n = problem.n_samples
    fit = dp_sgd(
        problem,
        epsilon=math.inf,
        delta=0.0,
        batch_size=n,
        sampling="without_replacement",
        step=1.0 / smoothness(problem),
        passes=1500,
        random_state=0,
    )
    best = solve_reference(problem).objective
    start = problem.objective(np.zeros(problem.n_coords))
    assert (start - best) / abs(best) > 1e-2  # a real distance to cover
    assert (problem.objective(fit.theta) - best) / abs(best) <= 1e-6
    assert fit.report.non_private and fit.info["clip"] == math.inf
    assert fit.n_iter == 1500


def test_sparse_data_gives_the_dense_iterates():
    dense = regression(n=120, p=6, penalty=ElasticNet(0.05, 0.5), intercept=True)
    X = np.asarray(dense.X).copy()
    X[np.abs(X) < 0.5] = 0.0
    dense = Problem(X, dense.y, "squared", ElasticNet(0.05, 0.5), fit_intercept=True)
    sparse = Problem(sp.csr_matrix(X), dense.y, "squared", ElasticNet(0.05, 0.5), True)
    options = {"epsilon": math.inf, "delta": 0.0, "batch_size": 10, "passes": 3}
    options["random_state"] = 4
    a, b = dp_sgd(dense, **options), dp_sgd(sparse, **options)
    assert a.n_iter == 36
    np.testing.assert_allclose(b.history.thetas, a.history.thetas, rtol=1e-12, atol=1e-12)


# -- the private fit ----------------------------------------------------------------------


def test_fixed_seed_reproduces_and_seeds_differ():
    problem = regression(intercept=True)
    a, b = private_fit(problem, random_state=7), private_fit(problem, random_state=7)
    assert np.array_equal(a.theta, b.theta)
    assert np.array_equal(a.history.thetas, b.history.thetas)
    c = private_fit(problem, random_state=8)
    assert not np.array_equal(a.theta, c.theta)


@pytest.mark.parametrize("sampling", ["poisson", "without_replacement"])
def test_report_matches_plan(sampling):
    fit = private_fit(regression(), sampling, random_state=0)
    report = fit.report
    (mech,) = report.mechanisms
    assert mech.kind == "sampled_gaussian" and mech.count == T == fit.n_iter
    assert mech.details["sampling"] == sampling
    assert mech.details["sampling_rate"] == B / N
    # replace-one neighbours for both samplers: n is public, a clipped gradient of norm
    # <= C gives way to another
    assert report.neighbouring == "replace_one"
    assert mech.sensitivity == 2 * CLIP
    assert any("the number of records n is public" in a for a in report.assumptions)
    if sampling == "poisson":
        assert any("Poisson sampling with rate q = 0.1" in a for a in report.assumptions)
    else:
        assert mech.details["batch_size"] == B and mech.details["dataset_size"] == N
        assert any("without replacement" in a for a in report.assumptions)
    assert EPS * (1 - 1e-3) <= report.epsilon <= EPS
    assert report.guarantee and not report.warnings
    assert fit.info["noise_std"] == mech.noise_scale == mech.noise_multiplier * mech.sensitivity
    assert np.allclose(fit.history.passes, np.arange(1, T + 1) * B / N)
    assert np.array_equal(fit.history.thetas[-1], fit.theta)


@pytest.mark.parametrize("sampling", ["poisson", "without_replacement"])
def test_noise_has_the_calibrated_scale(sampling):
    # zero data and targets: every gradient is 0, so each step adds -step * noise / b
    p = 60
    problem = Problem(np.zeros((N, p)), np.zeros(N), "squared")
    fit = private_fit(problem, sampling, random_state=1)
    steps = np.diff(np.vstack([np.zeros(p), fit.history.thetas]), axis=0)
    draws = (steps * B / -0.5).ravel()
    sigma = fit.info["noise_std"]
    assert sigma == fit.report.mechanisms[0].noise_scale
    # the sample std of m normals has relative sd 1 / sqrt(2 m)
    assert abs(draws.std() / sigma - 1.0) <= Z / math.sqrt(2 * draws.size)
    assert abs(draws.mean()) <= Z * sigma / math.sqrt(draws.size)


def test_solver_runs_the_sampler_and_noise_it_reports():
    problem = regression(intercept=True, penalty=L1(0.01))
    fit = private_fit(problem, random_state=11)
    # replay: the solver's draws in its order (batches, then noise, per chunk)
    assert chunk_steps(problem.n_coords, B, T) >= T
    source = make_noise_source(11)
    counts, rows = BatchSampler(N, B, "poisson").draw(source, T)
    noise = source.standard_normal((T, problem.n_coords))
    assert counts.std() > 0  # Poisson batches vary in size
    pen = (np.r_[np.full(5, 0.01), 0.0], np.zeros(6), np.full(6, -np.inf), np.full(6, np.inf))
    args = (counts, rows, noise, np.zeros(6), fit.info["noise_std"], CLIP, 0.5, B, pen)
    want = naive_steps(problem.X, problem.y, Squared(), True, *args)
    np.testing.assert_allclose(fit.history.thetas, want, rtol=1e-12, atol=1e-12)


def test_chunks_and_checkpoints_do_not_change_the_steps(monkeypatch):
    # 250 steps drawn 7 at a time: checkpoints (every 2 or 3 steps) fall inside chunks
    monkeypatch.setattr(dp_sgd_module, "_DRAW_BLOCK", 7 * B)
    problem = regression(intercept=True)
    fit = dp_sgd(problem, epsilon=math.inf, delta=0.0, batch_size=B, passes=25, random_state=3)
    assert fit.n_iter == 250 and len(fit.history) == 100
    source = make_noise_source(3)
    sampler = BatchSampler(N, B, "poisson")
    draws = [sampler.draw(source, min(7, 250 - first)) for first in range(0, 250, 7)]
    counts = np.concatenate([c for c, _ in draws])
    rows = np.concatenate([r for _, r in draws])
    free = (0.0, 0.0, -np.inf, np.inf)  # the intercept's
    pen = tuple(np.append(a, f) for a, f in zip(problem.penalty.prox_params(5), free, strict=True))
    assert pen[1][0] > 0  # the L2 penalty goes through the prox
    args = (counts, rows, np.zeros((250, 6)), np.zeros(6), 0.0, math.inf, 0.1, B, pen)
    iterates = naive_steps(problem.X, problem.y, Squared(), True, *args)
    marks = sorted(History.checkpoints(250))
    np.testing.assert_allclose(fit.history.thetas, iterates[np.array(marks) - 1], rtol=1e-12)
    np.testing.assert_allclose(fit.history.passes, np.array(marks) * B / N)


def test_secure_source():
    fit = private_fit(regression(), secure=True)
    assert fit.report.secure and np.all(np.isfinite(fit.coef)) and fit.coef.any()
    with pytest.raises(ValueError):
        private_fit(regression(), secure=True, random_state=0)


# -- the sampler matches the accountant -----------------------------------------------------


def in_chi_square_bulk(stat, df):
    """Neither tail of the chi-square law beyond TAIL: too uniform fails as well."""
    return chi2.sf(stat, df) > TAIL and chi2.cdf(stat, df) > TAIL


def pearson(observed, expected):
    return float(np.sum((observed - expected) ** 2 / expected))


def split(counts, rows):
    return np.split(rows, np.cumsum(counts)[:-1])


def test_poisson_batches_are_poisson_sampling_exactly():
    # n = 5: each of the 32 subsets must come out with probability q^|S| (1 - q)^(5 - |S|)
    n, q, M = 5, 0.4, 40000
    counts, rows = BatchSampler(n, 2, "poisson").draw(make_noise_source(21), M)
    codes = np.zeros(M, dtype=np.int64)
    np.add.at(codes, np.repeat(np.arange(M), counts), 1 << rows)
    assert all(len(set(batch.tolist())) == len(batch) for batch in split(counts, rows)[:2000])
    observed = np.bincount(codes, minlength=32)
    sizes = np.array([bin(s).count("1") for s in range(32)])
    expected = M * q**sizes * (1 - q) ** (n - sizes)
    stat = pearson(observed, expected)
    assert in_chi_square_bulk(stat, 31), stat


def test_fixed_size_batches_are_uniform_subsets():
    n, b, M = 6, 3, 40000
    counts, rows = BatchSampler(n, b, "without_replacement").draw(make_noise_source(22), M)
    assert np.all(counts == b)
    batches = rows.reshape(M, b)
    assert np.all(np.diff(np.sort(batches, axis=1), axis=1) > 0)  # distinct rows
    index = {s: k for k, s in enumerate(combinations(range(n), b))}
    observed = np.bincount([index[tuple(s)] for s in np.sort(batches, axis=1).tolist()])
    stat = pearson(observed, np.full(20, M / 20))
    assert in_chi_square_bulk(stat, 19), stat


def test_poisson_batch_sizes_are_binomial():
    n, b, M = 1000, 100, 40000
    q = b / n
    counts = BatchSampler(n, b, "poisson").counts(make_noise_source(23), M)
    mean, var = n * q, n * q * (1 - q)
    assert abs(counts.mean() - mean) <= Z * math.sqrt(var / M)
    # sample variance: sd sqrt((mu4 - var^2) / M), mu4 = var^2 (3 + excess kurtosis)
    mu4 = var**2 * (3 + (1 - 6 * q * (1 - q)) / var)
    assert abs(counts.var() - var) <= Z * math.sqrt((mu4 - var**2) / M) + var / M
    # and the whole law, in bins of at least 300 expected draws
    edges = np.r_[0, np.arange(80, 121, 2), n + 1]
    observed = np.histogram(counts, edges)[0]
    expected = M * np.diff(binom.cdf(edges - 1, n, q))
    stat = pearson(observed, expected)
    assert expected.min() > 300 and in_chi_square_bulk(stat, len(observed) - 1), stat


@pytest.mark.parametrize("sampling", ["poisson", "without_replacement"])
def test_rows_are_uniform(sampling):
    n, b, M = 1000, 100, 20000
    q = b / n
    _, rows = BatchSampler(n, b, sampling).draw(make_noise_source(24), M)
    hits = np.bincount(rows, minlength=n)
    # Each row is in a batch with probability q, so it has Binomial(M, q) hits and
    # stat = sum_i (hits_i - M q)^2 / (M q (1 - q)). Poisson: independent rows, chi-square
    # with n df. Fixed size: a batch's indicators have covariance
    # q (1 - q) n / (n - 1) (I - 11'/n), so stat is n / (n - 1) times chi-square(n - 1).
    stat = float(np.sum((hits - M * q) ** 2)) / (M * q * (1 - q))
    if sampling == "poisson":
        assert in_chi_square_bulk(stat, n), stat
    else:
        assert in_chi_square_bulk(stat * (n - 1) / n, n - 1), stat


def test_distinct_subsets_never_repeat_and_clear_the_marker():
    rng = np.random.default_rng(0)
    counts = np.array([0, 7, 7, 3, 1])
    marker = np.zeros(7, dtype=bool)
    out = np.empty(counts.sum(), dtype=np.int64)
    # uniforms at both ends of [0, 1), including the largest double below 1
    u = np.r_[np.nextafter(1.0, 0.0), 0.0, rng.uniform(size=counts.sum() - 2)]
    distinct_subsets(7, counts, u, marker, out)
    assert not marker.any()
    for batch, k in zip(split(counts, out), counts, strict=True):
        assert len(set(batch.tolist())) == k and batch.min(initial=0) >= 0
        assert batch.max(initial=0) < 7


# -- budget and inputs --------------------------------------------------------------------


def test_budget_is_charged_once_and_refuses_before_any_work():
    budget = PrivacyBudget(epsilon=1.2, delta=DELTA)
    fit = private_fit(regression(), budget=budget, random_state=0)
    (charge,) = budget.charges
    (event,) = charge.plan.events
    assert event.count == T and event.noise_multiplier == fit.report.mechanisms[0].noise_multiplier
    assert "DP-SGD" in charge.label
    generator = np.random.default_rng(5)
    state = generator.bit_generator.state
    with pytest.raises(BudgetExceededError):
        private_fit(regression(), budget=budget, random_state=generator)
    assert generator.bit_generator.state == state  # nothing drawn
    assert len(budget.charges) == 1


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"batch_size": N + 1}, ValueError, "batch_size"),
        ({"batch_size": 2.5}, TypeError, "batch_size"),
        ({"batch_size": True}, TypeError, "batch_size"),
        ({"sampling": "uniform"}, ValueError, "sampling"),
        ({"sampling": None}, ValueError, "sampling"),
        ({"step": 0.0}, ValueError, "step"),
        ({"step": math.inf}, ValueError, "step"),
        ({"step": "big"}, TypeError, "step"),
        ({"clip": -1.0}, ValueError, "clip"),
        ({"clip": math.nan}, ValueError, "clip"),
        ({"clip": math.inf}, ValueError, "clip"),
        ({"passes": 0}, ValueError, "passes"),
        ({"passes": None}, TypeError, "passes"),
        ({"epsilon": 0.0}, ValueError, "epsilon"),
    ],
)
def test_bad_inputs_name_the_parameter(kwargs, error, name):
    options = {"epsilon": EPS, "delta": DELTA, "passes": PASSES, "batch_size": B}
    problem = regression()
    with pytest.raises(error, match=name) as raised:
        dp_sgd(problem, **{**options, **kwargs})
    # the registry's plan refuses them before any data is read, with the fit's message
    for shape in (problem, ProblemShape.of(problem)):
        with pytest.raises(error) as planned:
            get_solver("dp-sgd").plan(shape, **{**options, **kwargs})
        assert str(planned.value) == str(raised.value)


def test_non_separable_penalty_is_refused():
    problem = regression(penalty=L1Ball(1.0))
    with pytest.raises(ValueError, match="separable"):
        dp_sgd(problem, epsilon=EPS, delta=DELTA)


def test_binomial_table_covers_the_law():
    # q = 1 (batch_size = n): every record, every time; u = 0 must not give a smaller batch
    sampler = BatchSampler(50, 50, "poisson")
    assert np.all(sampler.counts(make_noise_source(0), 100) == 50)

    class Zeros:
        def uniform(self, size):
            return np.zeros(size)

    assert np.all(sampler.counts(Zeros(), 3) == 50)
    # the table's end: a uniform just below 1 gives a batch within the table
    tail = BatchSampler(10**6, 3, "poisson")

    class Top:
        def uniform(self, size):
            return np.full(size, np.nextafter(1.0, 0.0))

    top = tail.counts(Top(), 1)[0]
    assert 3 < top <= tail._cdf.shape[0] - 1 and binom.sf(top, 10**6, 3e-6) < 1e-15


# -- the registry: the plan known before the data is read is the plan the fit charges ---------

#: hyperparameters of the registry tests (the others take the fit function's defaults)
REGISTRY_SETTINGS = {
    "defaults": {},
    "without replacement": {"sampling": "without_replacement", "batch_size": 20, "passes": 1.5},
    "clip and rdp": {"clip": 3.0, "step": 0.2, "batch_size": B, "accountant": "rdp"},
}


@contextlib.contextmanager
def problem_of_kind(kind):
    """A ridge problem of ``N`` records: dense, sparse, with an intercept, or in row chunks."""
    dense = regression(intercept=kind == "intercept")
    if kind == "sparse":
        X = np.asarray(dense.X).copy()
        X[np.abs(X) < 0.5] = 0.0
        yield Problem(sp.csr_matrix(X), dense.y, "squared", RIDGE)
    elif kind == "sharded":
        with ShardedRows.from_array(np.asarray(dense.X), dense.y, chunks=150) as rows:
            yield ShardedProblem(rows, "squared", RIDGE, fit_intercept=True)
    else:
        yield dense


@pytest.mark.parametrize("kind", ["dense", "sparse", "intercept", "sharded"])
@pytest.mark.parametrize("settings", list(REGISTRY_SETTINGS), ids=list(REGISTRY_SETTINGS))
def test_the_registry_plan_is_the_charged_plan(kind, settings):
    params = REGISTRY_SETTINGS[settings]
    solver = get_solver("dp-sgd")
    with problem_of_kind(kind) as problem:
        budget = PrivacyBudget(epsilon=2 * EPS, delta=2 * DELTA)
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            fit = dp_sgd(
                problem, epsilon=EPS, delta=DELTA, budget=budget, random_state=0, **params
            )
        charged = budget.charges[-1].plan
        assert charged.events[0].count == fit.n_iter  # the plan of this fit, not an empty one
        shapes = (problem, ProblemShape.of(problem))
        for shape in shapes:
            plan = solver.plan(shape, epsilon=EPS, delta=DELTA, **params)
            assert plan.events == charged.events and plan.neighbouring == charged.neighbouring
            assert solver.accepts(shape) is None
            assert solver.leaks(shape, epsilon=EPS, delta=DELTA, **params) == ()
        assert shapes[1].chunked == (kind == "sharded")


def test_the_registry_refuses_the_problems_the_fit_refuses():
    problem = regression(penalty=L1Ball(1.0))
    with pytest.raises(ValueError) as raised:
        dp_sgd(problem, epsilon=EPS, delta=DELTA)
    solver = get_solver("dp-sgd")
    assert "separable" in solver.accepts(problem)
    assert solver.accepts(problem) == solver.accepts(ProblemShape.of(problem)) == str(raised.value)


@pytest.mark.parametrize(
    ("kwargs", "penalty", "name"),
    [
        ({"step": 0.0, "batch_size": 0}, RIDGE, "step"),
        ({"sampling": "uniform", "batch_size": 0}, RIDGE, "sampling"),
        ({"batch_size": 0, "passes": 0}, RIDGE, "batch_size"),
        ({"passes": 0}, L1Ball(1.0), "passes"),
        ({"clip": math.inf}, L1Ball(1.0), "separable"),
        ({"clip": math.inf}, RIDGE, "clip must be finite"),
    ],
)
def test_the_first_error_of_the_fit_is_the_registrys(kwargs, penalty, name):
    options = {"epsilon": EPS, "delta": DELTA, **kwargs}
    problem = regression(penalty=penalty)
    with pytest.raises(ValueError, match=name) as raised:
        dp_sgd(problem, **options)
    with pytest.raises(ValueError) as planned:
        get_solver("dp-sgd").plan(ProblemShape.of(problem), **options)
    assert str(planned.value) == str(raised.value)
