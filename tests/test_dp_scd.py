"""DP-SCD: the non-private optimum for every loss, consistency in expectation, a one-step
audit, reproducibility, the plan it reports, budget charging, inputs, the intercept (a
constant feature) and the estimators.

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
from dpglm.solvers.dp_scd import (
    NORMALISATION,
    NORMALISATION_WITH_INTERCEPT,
    constant_feature,
    dp_scd,
    normalised_margins,
    row_scales,
)
from dpglm.solvers.dp_sgd import BatchSampler
from dpglm.solvers.reference import solve_reference
from dpglm.solvers.registry import ProblemShape, Settings, get_solver
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


def normalised(problem, intercept_scaling=None):
    """The problem DP-SCD solves: the same one on rows of unit L2 norm.

    With ``intercept_scaling`` ``s``, on the rows ``(x_i, s)`` normalised (the column is
    appended here, in a copy: the solver never makes one), without intercept.
    """
    X = sp.csr_matrix(problem.X) if sp.issparse(problem.X) else np.asarray(problem.X)
    if intercept_scaling is not None:
        column = np.full((X.shape[0], 1), float(intercept_scaling))
        X = sp.hstack([X, column], format="csr") if sp.issparse(X) else np.hstack([X, column])
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


@pytest.mark.parametrize("intercept", [False, True], ids=["", "intercept"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize(
    "sequential, noise_all",
    [(False, False), (True, False), (False, True), (True, True)],
    ids=["parallel", "sequential", "parallel-all", "sequential-all"],
)
def test_inline_noise_is_the_pre_drawn_noise_in_draw_order(
    sparse, sequential, noise_all, intercept
):
    """The kernels' two noise paths (Generator inside, draws handed over) agree exactly.

    Inline, each step draws the noise of ``alpha`` (its batch entries, or all ``n`` with
    ``noise_all``) and then ``p`` values for ``v`` (``p + 1`` with the constant feature
    of an intercept); handing over the same values in that order must give the same state.
    """
    problem = problem_of("logistic", True, n=60, p=5, sparse=sparse)
    constant = 2.0 if intercept else None
    batch, steps_n, sigma, p = 6, 7, 0.4, problem.n_features + int(intercept)
    per_step = 60 if noise_all else batch
    counts = np.full(steps_n, batch, dtype=np.int64)
    rows = np.random.default_rng(seed_of("inline rows")).integers(0, 60, batch * steps_n)
    lam_n = LAMBDA * problem.n_samples

    def state(noise=sigma):
        return dp_scd_module._Steps(
            problem, lam_n, 0.5, noise, batch, sequential, batch, noise_all, constant
        )

    inline = state()
    inline.run(counts, rows, (np.zeros(0), np.zeros(0), np.random.default_rng(3), True))
    draws = np.random.default_rng(3).standard_normal((steps_n, per_step + p))
    handed = state()
    noise_alpha, noise_v = draws[:, :per_step].ravel(), draws[:, per_step:].ravel()
    handed.run(counts, rows, (noise_alpha, noise_v, dp_scd_module._NO_GENERATOR, False))
    np.testing.assert_array_equal(inline.alpha, handed.alpha)
    np.testing.assert_array_equal(inline.v, handed.v)
    assert inline.v.shape == (p,)
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
        (lambda: Problem(*make_data(0, n=50), Huber(1.0), L2(0.1), True), "huber"),
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
        # an intercept is no refusal: the infinite clip of a private fit is the first error
        ({"clip": math.inf}, L2(0.1), True, "clip must be finite"),
        ({"intercept_scaling": 0.0, "clip": math.inf}, L2(0.1), True, "intercept_scaling"),
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


# -- the intercept: a constant feature s in every row, before the normalisation ----------------


def intercept_data(n, seed):
    """Features uniform in [-1, 1]^3, labels ``x0 > 0.5``: the best model needs an intercept.

    A quarter of the labels are +1: a model through the origin does no better than the
    majority (about 0.75), one with an intercept separates them.
    """
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, 3))
    return X, np.where(X[:, 0] > 0.5, 1.0, -1.0)


def accuracy(fit, X, y):
    margins = normalised_margins(X, fit.coef, fit.intercept, fit.info["intercept_scaling"])
    return float(np.mean(np.where(margins > 0, 1.0, -1.0) == y))


@pytest.mark.parametrize("loss, classification", LOSSES, ids=[name for name, _ in LOSSES])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_epsilon_inf_with_intercept_reaches_the_augmented_optimum(loss, classification, sparse):
    """The fit is the optimum on the rows ``(x_i, s)`` normalised, with ``b = s w0``."""
    s = 2.0
    X, y = make_data(3, n=200, p=6, classification=classification, sparse=sparse)
    problem = Problem(X, y, loss, L2(LAMBDA), fit_intercept=True)
    target = normalised(problem, intercept_scaling=s)
    ref = solve_reference(target)
    # the hinge dual is not strongly convex: on these sparse rows it needs more passes
    batch, passes = (5, 1000) if loss == "hinge" else (20, 200)
    fit = dp_scd(
        problem,
        epsilon=math.inf,
        delta=0.0,
        passes=passes,
        batch_size=batch,
        intercept_scaling=s,
        random_state=0,
    )
    atol = 1e-3 if loss == "hinge" else 1e-6
    np.testing.assert_allclose(fit.coef, ref.theta[:-1], atol=atol)
    assert fit.intercept == pytest.approx(s * ref.theta[-1], abs=s * atol)
    # the constant's weight is not negligible here: the intercept matters
    assert abs(fit.intercept) > 0.05
    assert fit.info["intercept_scaling"] == s and fit.info["fit_intercept"]
    assert fit.info["normalisation"] == NORMALISATION_WITH_INTERCEPT
    assert NORMALISATION_WITH_INTERCEPT in fit.report.assumptions
    # the model applies to the normalised augmented rows
    np.testing.assert_allclose(
        normalised_margins(problem.rows, fit.coef, fit.intercept, s),
        target.X @ ref.theta,
        atol=1e-2 if loss == "hinge" else 1e-6,
    )
    # and the history holds (w, b) too
    np.testing.assert_array_equal(fit.history.thetas[-1], fit.theta)


@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared_hinge"])
def test_an_intercept_beats_no_intercept_at_a_large_epsilon(loss):
    X, y = intercept_data(4000, seed_of("intercept", loss))
    settings = {"epsilon": 1e4, "delta": 1e-6, "passes": 10, "batch_size": 100, "clip": 0.5}
    scores = {}
    for intercept in (True, False):
        problem = Problem(X, y, loss, L2(1e-3), fit_intercept=intercept)
        scores[intercept] = accuracy(dp_scd(problem, random_state=0, **settings), X, y)
    print(f"{loss} epsilon=1e4: with intercept {scores[True]:.4f}, without {scores[False]:.4f}")
    # measured 0.99 against 0.76 (the majority)
    assert scores[True] > 0.97 and scores[False] < 0.8, scores


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_an_intercept_beats_no_intercept_at_epsilon_one(sparse):
    X, y = intercept_data(4000, seed_of("intercept at epsilon 1"))
    data = sp.csr_matrix(X) if sparse else X
    settings = {"epsilon": 1.0, "delta": 1e-6, "passes": 10, "batch_size": 100, "clip": 0.5}
    fits = {
        intercept: dp_scd(
            Problem(data, y, "squared_hinge", L2(1e-3), fit_intercept=intercept),
            random_state=1,
            **settings,
        )
        for intercept in (True, False)
    }
    scores = {intercept: accuracy(fit, data, y) for intercept, fit in fits.items()}
    print(f"epsilon=1: with intercept {scores[True]:.4f}, without {scores[False]:.4f}")
    # measured 0.95-0.98 against 0.75-0.76 over seeds
    assert scores[True] > 0.9 and scores[True] - scores[False] > 0.12, scores
    assert fits[True].report.epsilon <= 1.0


def test_sparse_data_with_an_intercept_is_fitted_as_dense_data():
    """The CSR kernel reads the constant feature as the dense one does, with no dense copy."""
    X, y = intercept_data(300, seed_of("sparse intercept"))
    X[np.random.default_rng(0).random(X.shape) < 0.5] = 0.0
    X[7] = 0.0  # a zero row: (0, s) normalised is (0, 1)
    fits = [
        dp_scd(
            Problem(data, y, "logistic", L2(LAMBDA), fit_intercept=True),
            random_state=3,
            intercept_scaling=0.5,
            **PRIVATE,
        )
        for data in (X, sp.csr_matrix(X))
    ]
    np.testing.assert_allclose(fits[1].theta, fits[0].theta, rtol=1e-10, atol=1e-12)
    assert abs(fits[0].intercept) > 0


@pytest.mark.parametrize(
    "settings",
    [
        {"batch_size": 20, "passes": 2.0},
        {"batch_size": 20, "clip": 0.3, "sampling": "without_replacement"},
        {"batch_size": 10, "sampling": "without_replacement", "sequential": True},
    ],
    ids=["poisson", "without replacement", "seqdp-scd"],
)
def test_the_plan_with_an_intercept_is_the_plan_without(settings):
    """The constant is inside the row-norm bound: same sensitivity, steps and noise."""
    X, y = make_data(0, n=200, p=6, classification=True)
    solver, target = get_solver("dp-scd"), {"epsilon": EPS, "delta": DELTA}
    fits, plans = {}, {}
    for intercept in (True, False):
        problem = Problem(X, y, "logistic", L2(LAMBDA), fit_intercept=intercept)
        fits[intercept] = dp_scd(problem, random_state=0, intercept_scaling=3.0, **target,
                                 **settings)  # fmt: skip
        plans[intercept] = solver.plan(ProblemShape.of(problem), **target, **settings)
        assert solver.accepts(problem) is None
    assert plans[True].events == plans[False].events
    for key in ("sensitivity", "steps", "noise_multiplier", "noise_std", "sampling_rate"):
        assert fits[True].info[key] == fits[False].info[key], key
    assert fits[True].report.mechanisms == fits[False].report.mechanisms
    assert fits[True].report.epsilon == fits[False].report.epsilon <= EPS
    # the constant's weight is released too, with the same noise: a model of p + 1 entries
    assert fits[True].theta.shape == (7,) and fits[False].theta.shape == (6,)
    assert fits[False].info["intercept_scaling"] is None


def test_augmented_rows_as_the_kernels_read_them_have_unit_norm():
    """``(scale_i x_i, bias_i)`` is ``(x_i, s) / ||(x_i, s)||``, extreme and zero rows too."""
    from dpglm.clipping import normalised_rows

    X = np.array(
        [[3.0, 4.0], [0.0, 0.0], [1e300, 1e300], [3.4e-162, 0.0], [5e-324, 0.0], [1e-3, 0.0]]
    )
    for s in (1.0, 1e-3, 1e200):
        for data in (X, sp.csr_matrix(X)):
            rows, unit = normalised_rows(data)
            scale, bias = constant_feature(data, unit, s)
            dense = rows.toarray() if sp.issparse(rows) else rows
            norms = np.hypot(np.linalg.norm(dense * scale[:, None], axis=1), bias)
            np.testing.assert_allclose(norms, 1.0, rtol=1e-14)
    # the first row, by hand: (3, 4, 1) / sqrt(26)
    scale, bias = constant_feature(X[:1], row_scales(X[:1]), 1.0)
    assert scale[0] == pytest.approx(1 / math.sqrt(26)) and bias[0] == pytest.approx(scale[0])


def test_normalised_margins_by_hand():
    X = np.array([[3.0, 0.0], [0.0, 0.0], [0.0, 3.0]])
    coef = np.array([1.0, 2.0])
    # with s = 4 the rows' norms are 5, 4 and 5: (3 + 1) / 5, (0 + 1) / 4, (6 + 1) / 5
    for data in (X, sp.csr_matrix(X)):
        np.testing.assert_allclose(normalised_margins(data, coef, 1.0, 4.0), [0.8, 0.25, 1.4])
    # without intercept: x / ||x|| (a zero row gets 0), and the intercept is scaled too
    np.testing.assert_allclose(normalised_margins(X, coef), [1.0, 0.0, 2.0])
    np.testing.assert_allclose(normalised_margins(X, coef, 3.0), [2.0, 0.0, 3.0])
    np.testing.assert_allclose(row_scales(X, 4.0), [0.2, 0.25, 0.2])


@pytest.mark.parametrize("value", [0, -1.0, math.nan, math.inf, "a"])
def test_bad_intercept_scaling_is_refused_naming_it(value):
    problem = problem_of("logistic", True)
    exc = TypeError if isinstance(value, str) else ValueError
    with pytest.raises(exc, match="intercept_scaling") as raised:
        dp_scd(problem, intercept_scaling=value, **PRIVATE)
    # before any data is read: the registry's plan raises the same
    with pytest.raises(exc) as planned:
        get_solver("dp-scd").plan(ProblemShape.of(problem), intercept_scaling=value, **PRIVATE)
    assert str(planned.value) == str(raised.value)
    with pytest.raises(exc, match="intercept_scaling"):
        normalised_margins(np.eye(2), np.ones(2), 0.0, intercept_scaling=value)
    estimator = DPLinearSVC(solver="dp-scd", solver_options={"intercept_scaling": value})
    with pytest.raises(exc, match="intercept_scaling"):
        estimator.fit(*make_data(0, n=100, p=3, classification=True))


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
    with pytest.raises(ValueError, match="step"):
        DPRidge(solver="dp-scd", fit_intercept=False, step=0.1).fit(X, y)


@pytest.mark.parametrize("cls, least", [(DPLinearSVC, 0.9), (DPLogisticRegression, 0.8)])
def test_classifiers_with_dp_scd_and_default_arguments(cls, least):
    """``fit_intercept=True`` by default: DP-SCD fits it, well above chance (0.59 here).

    At the default ``alpha = 1e-3`` DP-SCD's logistic fits vary much more than its
    squared hinge ones (0.75 to 0.87 over seeds on 10 000 rows): many rows (lambda N = 100
    here) make them reliable.
    """
    rng = np.random.default_rng(seed_of("dp-scd defaults"))
    X = rng.uniform(-1.0, 1.0, (100_000, 3))
    y = np.where(X[:, 0] + X[:, 1] > 0.2, "yes", "no")
    model = cls(solver="dp-scd", random_state=0).fit(X, y)
    score = model.score(X, y)
    print(f"{cls.__name__} dp-scd with default arguments: {score:.4f}")
    # measured 0.99 (DPLinearSVC, squared hinge) and 0.95 (DPLogisticRegression)
    assert model.solver_ == "dp-scd" and model.fit_intercept and model.intercept_ != 0.0
    assert score > least and score > np.mean(y == "no") + 0.1
    assert model.privacy_report_.epsilon <= 1.0


def test_predict_applies_the_fits_intercept_scaling():
    """``predict`` normalises ``(z, s)`` with the ``s`` of ``solver_options`` (default 1)."""
    X, y = make_data(6, n=3000, p=3, classification=True)
    for s in (None, 3.0):
        options = None if s is None else {"intercept_scaling": s}
        model = DPLogisticRegression(alpha=0.05, solver="dp-scd", solver_options=options)
        model.set_params(random_state=0, batch_size=100, clip=0.5).fit(X, y)
        scaling = model.scaling_
        z = scaling.transform(X)
        w, b = scaling.scaled_model(model.coef_[0], model.intercept_[0])
        constant = 1.0 if s is None else s
        want = (z @ w + b) / np.sqrt((z * z).sum(axis=1) + constant**2)
        np.testing.assert_allclose(model.decision_function(X), want, rtol=1e-10, atol=1e-12)
        # another s would give other scores: the test can tell them apart
        other = (z @ w + b) / np.sqrt((z * z).sum(axis=1) + (constant + 1.0) ** 2)
        assert np.abs(model.decision_function(X) - other).max() > 1e-3


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


def test_the_estimators_clip_is_lambda_n_over_the_batch_capped_at_one():
    spec = get_solver("dp-scd")
    shape = ProblemShape(8000, 68, "logistic", L2(1e-4), fit_intercept=True)
    # alpha N / L with the default batch min(256, N / 20) = 256
    assert spec.arguments(Settings(), shape, epsilon=1.0, delta=1e-6)["clip"] == pytest.approx(
        1e-4 * 8000 / 256
    )
    # the batch the fit takes sets it, and a given clip is kept
    assert spec.arguments(Settings(batch_size=32), shape, epsilon=1.0, delta=1e-6)[
        "clip"
    ] == pytest.approx(0.025)
    assert spec.arguments(Settings(clip=0.5), shape, epsilon=1.0, delta=1e-6)["clip"] == 0.5
    ridge = ProblemShape(8000, 68, "squared", L2(1.0), fit_intercept=True)
    assert spec.arguments(Settings(), ridge, epsilon=1.0, delta=1e-6)["clip"] == 1.0


def test_the_estimators_clip_takes_the_capped_batch_and_leaves_refusals_to_the_check():
    spec = get_solver("dp-scd")
    shape = ProblemShape(300, 4, "logistic", L2(1e-2), fit_intercept=True)
    # a batch above n is capped at n before the clip is computed
    arguments = spec.arguments(Settings(batch_size=10_000), shape, epsilon=1.0, delta=1e-6)
    assert arguments["batch_size"] == 300
    assert arguments["clip"] == pytest.approx(1e-2 * 300 / 300)
    X, y = make_data(3, n=60, p=4, classification=True)
    for model in (
        DPLogisticRegression(penalty="none", solver="dp-scd"),
        DPLinearSVC(alpha=0.0, solver="dp-scd"),
    ):
        with pytest.raises(ValueError, match="DP-SCD needs an L2 penalty"):
            model.fit(X, y)
