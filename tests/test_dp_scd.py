"""DP-SCD: the non-private optimum for every loss, consistency in expectation, a one-step
audit, reproducibility, the plan it reports, budget charging, inputs and the estimators.

Every statistical test fails a correct implementation with probability below 1e-6."""

import importlib
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import optimize, stats

from dpglm._kernels.dual_coordinate import dual_step
from dpglm.audit import mu_lower_bound
from dpglm.datafits import Hinge, Huber, Logistic, Squared, SquaredHinge
from dpglm.distributed import ShardedProblem, ShardedRows
from dpglm.estimators import DPLasso, DPLinearSVC, DPLogisticRegression, DPRidge
from dpglm.exceptions import BudgetExceededError, PrivacyLeakWarning
from dpglm.penalties import L1, L2, ElasticNet
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.events import GaussianEvent
from dpglm.privacy.mechanisms import make_noise_source
from dpglm.privacy.releases import Release
from dpglm.problem import Problem
from dpglm.solvers.dp_scd import NORMALISATION, dp_scd, row_scales
from dpglm.solvers.dp_sgd import BatchSampler
from dpglm.solvers.reference import solve_reference
from dpglm.solvers.registry import ProblemShape, get_solver
from solver_problems import make_data, seed_of, with_less_noise

dp_scd_module = importlib.import_module("dpglm.solvers.dp_scd")
LAMBDA = 0.05
EPS, DELTA = 1.0, 1e-5
# one private configuration (n = 200 records) shared by the tests below, so that its
# calibrations are cached: batches of 20, 2 passes
PRIVATE = {"epsilon": EPS, "delta": DELTA, "batch_size": 20, "passes": 2.0}
LOSSES = [("squared", False), ("logistic", True), ("hinge", True), ("squared_hinge", True)]


def problem_of(loss, classification, *, seed=1, n=200, p=6, sparse=False, penalty=None):
    X, y = make_data(seed, n=n, p=p, classification=classification, sparse=sparse)
    return Problem(X, y, loss, L2(LAMBDA) if penalty is None else penalty)


def normalised(problem):
    """The problem DP-SCD solves: the same one on rows of unit L2 norm."""
    X = sp.csr_matrix(problem.X) if sp.issparse(problem.X) else np.asarray(problem.X)
    scale = row_scales(X)
    X = sp.diags(scale) @ X if sp.issparse(X) else X * scale[:, None]
    return Problem(X, problem.y, problem.datafit, problem.penalty)


# -- the kernel's coordinate update is the datafit's -------------------------------------------


@pytest.mark.parametrize(
    "datafit", [Squared(), Logistic(), Logistic(0.01), Hinge(), SquaredHinge()], ids=repr
)
def test_kernel_dual_step_is_the_datafits(datafit):
    rng = np.random.default_rng(seed_of("dual step", repr(datafit)))
    y = rng.choice([-1.0, 1.0], 50)
    alpha, z, s = rng.normal(0, 2, 50), rng.normal(0, 2, 50), rng.uniform(0.01, 5, 50)
    box = getattr(datafit, "dual_box", 0.0)
    got = [dual_step(datafit.code, box, *args) for args in zip(alpha, y, z, s, strict=True)]
    np.testing.assert_allclose(got, datafit.dual_step(alpha, y, z, s), rtol=1e-12, atol=1e-12)


# -- epsilon = inf: the reference optimum ---------------------------------------------------


@pytest.mark.parametrize("loss, classification", LOSSES, ids=[name for name, _ in LOSSES])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_epsilon_inf_reaches_the_reference_optimum(loss, classification, sparse):
    problem = problem_of(loss, classification, sparse=sparse)
    target = normalised(problem)
    ref = solve_reference(target)
    # the hinge dual is not strongly convex: smaller batches, more passes
    batch, passes = (5, 400) if loss == "hinge" else (20, 200)
    fit = dp_scd(
        problem, epsilon=math.inf, delta=0.0, passes=passes, batch_size=batch, random_state=0
    )
    gap = target.objective(fit.theta) - target.objective(ref.theta)
    assert abs(gap) < 1e-8, gap
    np.testing.assert_allclose(fit.theta, ref.theta, atol=1e-3 if loss == "hinge" else 1e-6)
    assert fit.info["row_normalised"] and fit.report.epsilon == math.inf
    # the model differs from the optimum of the problem on raw rows
    assert np.abs(fit.theta - solve_reference(problem).theta).max() > 1e-2


@pytest.mark.parametrize("sampling", ["poisson", "without_replacement"])
def test_epsilon_inf_sequential_and_samplers_reach_the_optimum(sampling):
    problem = problem_of("logistic", True, seed=2)
    target = normalised(problem)
    best = target.objective(solve_reference(target).theta)
    for sequential in (False, True) if sampling == "without_replacement" else (False,):
        fit = dp_scd(
            problem,
            epsilon=math.inf,
            delta=0.0,
            passes=200,
            batch_size=20,
            sampling=sampling,
            sequential=sequential,
            random_state=1,
        )
        assert target.objective(fit.theta) - best < 1e-9


# -- consistency in expectation: E[v] = X^T E[alpha] ----------------------------------------


def unit_noise(source):
    """A private release drawing from ``source``: the steps' kernels scale its draws by sigma."""
    return Release(GaussianEvent(noise_multiplier=1.0), source)


def run_state(problem, sigma, clip, batch, steps, rng):
    """``(alpha, v)`` after ``steps`` private steps with noise ``sigma`` (the solver's code)."""
    lam_n = LAMBDA * problem.n_samples
    state = dp_scd_module._Steps(problem, lam_n, clip, sigma, batch, False, batch)
    sampler = BatchSampler(problem.n_samples, batch, "poisson")
    source = make_noise_source(rng)
    dp_scd_module._train(state, sampler, source, steps, unit_noise(source), lam_n)
    return state.alpha.copy(), state.v.copy()


def test_consistency_in_expectation():
    problem = problem_of("squared", False, seed=4, n=40, p=3)
    Xn = normalised(problem).X
    rng = np.random.default_rng(seed_of("consistency"))
    runs, steps = 400, 10
    gaps, alphas = [], []
    for _ in range(runs):
        alpha, v = run_state(problem, 0.3, 0.5, 8, steps, rng)
        gaps.append(v - Xn.T @ alpha)
        alphas.append(alpha)
    gaps = np.array(gaps)
    # the noise moved the state off X^T alpha in every run ...
    assert np.all(np.abs(gaps).max(axis=1) > 1e-3)
    # ... but not on average: a t-test per coordinate at 6 standard errors (each two-sided
    # tail below 5e-9 with 399 degrees of freedom)
    t = gaps.mean(axis=0) / (gaps.std(axis=0, ddof=1) / math.sqrt(runs))
    assert np.all(np.abs(t) < 6.0), t
    # without noise the two stay exactly consistent
    alpha, v = run_state(problem, 0.0, 0.5, 8, steps, rng)
    np.testing.assert_allclose(v, Xn.T @ alpha, atol=1e-12)
    assert np.abs(np.mean(alphas, axis=0)).max() > 0.0


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize(
    "sequential, noise_all",
    [(False, False), (True, False), (False, True), (True, True)],
    ids=["parallel", "sequential", "parallel-all", "sequential-all"],
)
def test_inline_noise_is_the_pre_drawn_noise_in_draw_order(sparse, sequential, noise_all):
    """The kernels' two noise paths (Generator inside, draws handed over) agree exactly.

    Inline, each step draws the noise of ``alpha`` (its batch entries, or all ``n`` with
    ``noise_all``) and then ``p`` values for ``v``; handing over the same values in that
    order must give the same state.
    """
    problem = problem_of("logistic", True, n=60, p=5, sparse=sparse)
    batch, steps_n, sigma, p = 6, 7, 0.4, problem.n_features
    per_step = 60 if noise_all else batch
    counts = np.full(steps_n, batch, dtype=np.int64)
    rows = np.random.default_rng(seed_of("inline rows")).integers(0, 60, batch * steps_n)
    lam_n = LAMBDA * problem.n_samples

    def state(noise=sigma):
        return dp_scd_module._Steps(
            problem, lam_n, 0.5, noise, batch, sequential, batch, noise_all
        )

    inline = state()
    inline.run(counts, rows, (np.zeros(0), np.zeros(0), np.random.default_rng(3), True))
    draws = np.random.default_rng(3).standard_normal((steps_n, per_step + p))
    handed = state()
    noise_alpha, noise_v = draws[:, :per_step].ravel(), draws[:, per_step:].ravel()
    handed.run(counts, rows, (noise_alpha, noise_v, dp_scd_module._NO_GENERATOR, False))
    np.testing.assert_array_equal(inline.alpha, handed.alpha)
    np.testing.assert_array_equal(inline.v, handed.v)
    # and the noise did reach both parts of the state
    quiet = state(0.0)
    quiet.run(counts, rows, (np.zeros(0), np.zeros(0), np.random.default_rng(3), True))
    assert np.abs(quiet.v - inline.v).min() > 0
    touched = np.isin(np.arange(60), rows)
    # noise on every dual entry, or on the sampled ones only
    assert np.all((quiet.alpha != inline.alpha) == (touched | noise_all))


@pytest.mark.parametrize("sampling", ["poisson", "without_replacement"])
def test_dual_noise_covers_the_batch_or_everything(sampling):
    """Without replacement every dual entry is noised at every step; with Poisson only B."""
    problem = problem_of("squared", False, n=200)
    lam_n = LAMBDA * problem.n_samples
    noise_all = sampling == "without_replacement"
    state = dp_scd_module._Steps(problem, lam_n, 0.5, 0.3, 10, False, 10, noise_all)
    sampler = BatchSampler(200, 10, sampling)
    source = make_noise_source(5)
    dp_scd_module._train(state, sampler, source, 1, unit_noise(source), lam_n)
    noised = np.count_nonzero(state.alpha)
    assert noised == 200 if noise_all else noised < 40
    fit = dp_scd(problem, sampling=sampling, random_state=0, **PRIVATE)
    assert (dp_scd_module.DUAL_RELEASED_WITHOUT_REPLACEMENT in fit.report.assumptions) is noise_all


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_row_major_data_is_read_in_place(sparse):
    """DP-SCD reads rows: given rows, it makes no column-major copy of the data."""
    X, y = make_data(2, n=200, p=6, classification=True, sparse=sparse)
    X = sp.csr_matrix(X) if sparse else np.ascontiguousarray(X)
    problem = Problem(X, y, "logistic", L2(LAMBDA))
    fit = dp_scd(problem, random_state=0, **PRIVATE)
    fit.history.objectives(problem)
    assert problem.layouts == ("rows",) and problem.rows is X


def test_secure_source_draws_the_noise_in_advance():
    fit = dp_scd(problem_of("squared", False), secure=True, **PRIVATE)
    assert fit.report.secure and np.all(np.isfinite(fit.coef)) and fit.coef.any()


# -- a one-step audit on worst-case replace-one neighbours ----------------------------------

AUDIT_ROWS, AUDIT_CLIP, AUDIT_RUNS = 4, 1.0, 20_000
AUDIT_FIT = {
    "epsilon": 6.0,
    "delta": 1e-5,
    "passes": 1.0,
    "batch_size": AUDIT_ROWS,
    "clip": AUDIT_CLIP,
    "sampling": "without_replacement",
}


def gdp_mu(epsilon, delta):
    """The ``mu`` of the Gaussian pair that is exactly ``(epsilon, delta)``-DP (Balle-Wang)."""

    def excess(mu):
        return (
            stats.norm.cdf(-epsilon / mu + mu / 2)
            - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2)
            - delta
        )

    return optimize.brentq(excess, 1e-6, 100.0, xtol=1e-14)


def audit_neighbours():
    """Ridge at alpha = v = 0: the canary's update is clipped to -C in D and +C in D'.

    The other records are zero rows and leave ``v`` alone, so the released coefficient
    is ``(+-C + noise) / (lambda N)``: ``v`` moves by ``2 C``, the most one replaced
    record can move it.
    """
    X = np.zeros((AUDIT_ROWS, 1))
    X[0, 0] = 1.0
    y = np.zeros(AUDIT_ROWS)
    y[0] = -10.0 * AUDIT_CLIP
    other = y.copy()
    other[0] = 10.0 * AUDIT_CLIP
    return Problem(X, y, "squared", L2(1.0)), Problem(X, other, "squared", L2(1.0))


@pytest.mark.parametrize("variant", ["correct", "half noise"])
def test_one_step_audit(variant, monkeypatch, request):
    if variant == "half noise":
        with_less_noise(monkeypatch)  # the kernel's sigma, from Release.scale, halved
    D, D_prime = audit_neighbours()
    fit = dp_scd(D, random_state=0, **AUDIT_FIT)
    assert fit.n_iter == 1 and fit.info["sampling_rate"] == 1.0
    report = fit.report
    assert report.epsilon <= AUDIT_FIT["epsilon"] and report.delta == AUDIT_FIT["delta"]
    mu_claim = gdp_mu(report.epsilon, report.delta)
    rng = np.random.default_rng(seed_of(request.node.name))

    def sample(problem):
        return np.array(
            [dp_scd(problem, random_state=rng, **AUDIT_FIT).coef[0] for _ in range(AUDIT_RUNS)]
        )

    bound = mu_lower_bound(sample(D), sample(D_prime), 0.0, alpha=1e-6)
    print(f"DP-SCD {variant}: claim eps={report.epsilon:.4f} mu={mu_claim:.4f}; {bound}")
    if variant == "correct":
        assert not bound.exceeds(mu_claim), f"correct solver refuted: {bound}"
        # v alone moves by 2C against noise calibrated for (alpha, v): mu = claim / sqrt 2
        assert bound.mu > 0.5 * mu_claim, f"audit without power: {bound}"
    else:
        assert bound.exceeds(mu_claim), f"half noise not caught: {bound} <= {mu_claim:.4f}"


# -- reproducibility and the reported plan ----------------------------------------------------


def test_seeds_reproduce():
    problem = problem_of("logistic", True)
    kwargs = PRIVATE
    first = dp_scd(problem, random_state=7, **kwargs)
    again = dp_scd(problem, random_state=7, **kwargs)
    other = dp_scd(problem, random_state=8, **kwargs)
    np.testing.assert_array_equal(first.coef, again.coef)
    np.testing.assert_array_equal(first.history.thetas, again.history.thetas)
    assert not np.array_equal(first.coef, other.coef)
    with pytest.raises(ValueError):
        dp_scd(problem, random_state=7, secure=True, **kwargs)


@pytest.mark.parametrize(
    "sampling, sequential",
    [("poisson", False), ("without_replacement", False), ("without_replacement", True)],
)
def test_report_matches_plan(sampling, sequential):
    relation = "replace_one"  # every sampler: N is public
    problem = problem_of("hinge", True)
    batch, clip, passes = 20, 0.4, 2.0
    fit = dp_scd(
        problem,
        epsilon=EPS,
        delta=DELTA,
        passes=passes,
        batch_size=batch,
        clip=clip,
        sampling=sampling,
        sequential=sequential,
        random_state=0,
    )
    T = round(passes * 200 / batch)
    if sequential:
        sensitivity = 2 * clip * math.sqrt(batch * (batch + 1))
    else:
        # replacing a record moves (alpha, v) by at most 2 sqrt(2) C, whatever the sampler
        sensitivity = 2 * math.sqrt(2) * clip
    report = fit.report
    (mech,) = report.mechanisms
    assert fit.n_iter == T == mech.count and report.neighbouring == relation
    assert mech.kind == "sampled_gaussian" and mech.sensitivity == pytest.approx(sensitivity)
    assert fit.info["noise_std"] == pytest.approx(mech.noise_multiplier * sensitivity)
    assert mech.noise_scale == pytest.approx(fit.info["noise_std"])
    assert 0.9 * EPS <= report.epsilon <= EPS and report.delta == DELTA
    assert NORMALISATION in report.assumptions
    assert fit.info["sampling"] == sampling and fit.info["sequential"] == sequential
    assert len(fit.history) == min(T, 100)
    np.testing.assert_array_equal(fit.history.thetas[-1], fit.coef)


# -- budget and inputs ----------------------------------------------------------------------


def test_budget_is_charged_once_and_refuses_before_any_work():
    problem = problem_of("squared", False)
    budget = PrivacyBudget(epsilon=1.05, delta=DELTA)
    fit = dp_scd(problem, **PRIVATE, budget=budget, random_state=0)
    (charge,) = budget.charges
    (event,) = charge.plan.events
    assert event.noise_multiplier == fit.report.mechanisms[0].noise_multiplier
    with pytest.raises(BudgetExceededError):
        dp_scd(problem, **PRIVATE, budget=budget, random_state=0)
    assert len(budget.charges) == 1


@pytest.mark.parametrize(
    "kwargs, exc, word",
    [
        ({"clip": 0.0}, ValueError, "clip"),
        ({"clip": "big"}, TypeError, "clip"),
        ({"clip": math.inf}, ValueError, "clip"),
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"batch_size": 10_000}, ValueError, "batch_size"),
        ({"batch_size": 2.5}, TypeError, "batch_size"),
        ({"passes": 0.0}, ValueError, "passes"),
        ({"sampling": "shuffle"}, ValueError, "sampling"),
        ({"sequential": True}, ValueError, "sequential"),
        ({"sequential": "yes"}, TypeError, "sequential"),
        ({"epsilon": 0.0}, ValueError, "epsilon"),
        ({"delta": 1.0}, ValueError, "delta"),
    ],
)
def test_bad_inputs_name_the_parameter(kwargs, exc, word):
    options = {"epsilon": EPS, "delta": DELTA, "batch_size": 20, **kwargs}
    problem = problem_of("squared", False)
    with pytest.raises(exc, match=word) as raised:
        dp_scd(problem, **options)
    # the registry's plan refuses them before any data is read, with the fit's message
    for shape in (problem, ProblemShape.of(problem)):
        with pytest.raises(exc) as planned:
            get_solver("dp-scd").plan(shape, **options)
        assert str(planned.value) == str(raised.value)


@pytest.mark.parametrize(
    "problem, word",
    [
        (lambda: problem_of("squared", False, penalty=L1(0.1)), "L1"),
        (lambda: problem_of("squared", False, penalty=ElasticNet(0.1, 0.5)), "ElasticNet"),
        (lambda: problem_of("squared", False, penalty=L2(0.0)), "alpha > 0"),
        (lambda: Problem(*make_data(0, n=50), "squared"), "NoPenalty"),
        (lambda: Problem(*make_data(0, n=50), Huber(1.0), L2(0.1)), "huber"),
        (lambda: Problem(*make_data(0, n=50), "squared", L2(0.1), True), "fit_intercept"),
    ],
)
def test_unsupported_problems_are_refused(problem, word):
    problem = problem()
    with pytest.raises(ValueError, match=word) as raised:
        dp_scd(problem, epsilon=EPS, delta=DELTA, batch_size=10)
    solver = get_solver("dp-scd")
    assert solver.accepts(problem) == solver.accepts(ProblemShape.of(problem)) == str(raised.value)


def test_records_in_row_chunks_are_refused():
    X, y = make_data(0, n=60, p=3)
    with ShardedRows.from_array(X, y, chunks=20) as rows:
        problem = ShardedProblem(rows, "squared", L2(0.1))
        with pytest.raises(TypeError, match="in-memory Problem") as raised:
            dp_scd(problem, epsilon=EPS, delta=DELTA, batch_size=10)
        solver = get_solver("dp-scd")
        shape = ProblemShape.of(problem)
        assert shape.chunked and solver.accepts(shape) == solver.accepts(problem)
        assert solver.accepts(problem) == str(raised.value)


# -- the registry: the plan known before the data is read is the plan the fit charges ---------

#: hyperparameters of the registry tests (the others take the fit function's defaults)
REGISTRY_SETTINGS = {
    "poisson": {"batch_size": 20, "passes": 2.0},
    "without replacement": {"batch_size": 20, "clip": 0.3, "sampling": "without_replacement"},
    "seqdp-scd": {"batch_size": 10, "sampling": "without_replacement", "sequential": True},
    "rdp": {"batch_size": 25, "passes": 1.0, "accountant": "rdp"},
}


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("settings", list(REGISTRY_SETTINGS), ids=list(REGISTRY_SETTINGS))
def test_the_registry_plan_is_the_charged_plan(settings, sparse):
    params = REGISTRY_SETTINGS[settings]
    solver, target = get_solver("dp-scd"), {"epsilon": EPS, "delta": DELTA}
    problem = problem_of("logistic", True, sparse=sparse)
    budget = PrivacyBudget(epsilon=2 * EPS, delta=2 * DELTA)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        fit = dp_scd(problem, **target, budget=budget, random_state=0, **params)
    charged = budget.charges[-1].plan
    # the plan of this fit, not an empty one
    assert charged.events[0].count == fit.n_iter
    assert charged.events[0].sensitivity == fit.info["sensitivity"]
    for shape in (problem, ProblemShape.of(problem)):
        plan = solver.plan(shape, **target, **params)
        assert plan.events == charged.events and plan.neighbouring == charged.neighbouring
        assert solver.accepts(shape) is None
        assert solver.leaks(shape, **target, **params) == ()


@pytest.mark.parametrize(
    "kwargs, penalty, intercept, word",
    [
        ({"sequential": True}, L1(0.1), False, "sequential"),
        ({"sampling": "shuffle", "batch_size": 0}, L1(0.1), False, "sampling"),
        ({"batch_size": 0}, L1(0.1), False, "L2 penalty"),
        ({"clip": math.inf}, L2(0.1), True, "fit_intercept"),
        ({"batch_size": 0, "passes": 0.0}, L2(0.1), False, "batch_size"),
        ({"passes": 0.0, "clip": math.inf}, L2(0.1), False, "passes"),
    ],
)
def test_the_first_error_of_the_fit_is_the_registrys(kwargs, penalty, intercept, word):
    options = {"epsilon": EPS, "delta": DELTA, "batch_size": 10, **kwargs}
    problem = Problem(*make_data(0, n=50), "squared", penalty, fit_intercept=intercept)
    with pytest.raises(ValueError, match=word) as raised:
        dp_scd(problem, **options)
    with pytest.raises(ValueError) as planned:
        get_solver("dp-scd").plan(ProblemShape.of(problem), **options)
    assert str(planned.value) == str(raised.value)


# -- estimators -----------------------------------------------------------------------------


def test_estimators_fit_and_predict_with_dp_scd():
    X, _ = make_data(5, n=5000, p=4)
    # a linear truth in the direction of each row, which the normalised model can fit
    y = (X / np.linalg.norm(X, axis=1, keepdims=True)) @ np.array([1.0, -1.0, 0.5, 0.0])
    ridge = DPRidge(alpha=0.05, solver="dp-scd", fit_intercept=False, epsilon=2.0, passes=2)
    ridge.set_params(random_state=0, batch_size=100, clip=0.5).fit(X, y)
    assert ridge.solver_ == "dp-scd" and ridge.privacy_report_.epsilon <= 2.0
    # the model applies to the scaled rows normalised: predict normalises them too, and
    # without intercept nothing is centred, so the model stays one through the origin
    assert ridge.intercept_ == 0.0
    scaling = ridge.scaling_
    z = scaling.transform(X)
    w, _ = scaling.scaled_model(ridge.coef_, ridge.intercept_)
    want = scaling.target_scale * (z / np.linalg.norm(z, axis=1, keepdims=True)) @ w
    np.testing.assert_allclose(ridge.predict(X), want, rtol=1e-12, atol=1e-15)
    assert ridge.score(X, y) > 0.5
    Xc, yc = make_data(5, n=5000, p=4, classification=True)
    for cls in (DPLogisticRegression, DPLinearSVC):
        model = cls(alpha=0.05, solver="dp-scd", fit_intercept=False, epsilon=2.0, passes=2)
        model.set_params(random_state=0, batch_size=100, clip=0.5).fit(Xc, yc)
        # the non-private optimum without intercept scores 0.72 here
        assert model.solver_ == "dp-scd" and model.score(Xc, yc) > 0.65
        assert set(model.predict(Xc)) <= {-1.0, 1.0}
    with pytest.raises(ValueError, match="L1"):
        DPLasso(alpha=0.1, solver="dp-scd", fit_intercept=False).fit(X, y)
    with pytest.raises(ValueError, match="fit_intercept"):
        DPRidge(solver="dp-scd").fit(X, y)
    with pytest.raises(ValueError, match="step"):
        DPRidge(solver="dp-scd", fit_intercept=False, step=0.1).fit(X, y)


# -- without the JIT ------------------------------------------------------------------------


@pytest.mark.nojit
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_small_fits_without_jit(sparse):
    small = problem_of("squared_hinge", True, n=30, p=3, sparse=sparse, penalty=L2(1.0))
    target = normalised(small)
    best = target.objective(solve_reference(target).theta)
    fit = dp_scd(small, epsilon=math.inf, delta=0.0, passes=30, batch_size=3)
    assert target.objective(fit.theta) - best < 1e-9
    problem = problem_of("squared_hinge", True, p=3, sparse=sparse)
    fit = dp_scd(problem, **PRIVATE, random_state=0)
    assert np.all(np.isfinite(fit.coef)) and fit.coef.any()
    fit = dp_scd(
        problem,
        **PRIVATE,
        sampling="without_replacement",
        sequential=True,
        random_state=0,
    )
    assert np.all(np.isfinite(fit.coef))
