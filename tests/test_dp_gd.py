"""DP-GD with a fixed budget split: the non-private optimum, a NumPy replay of private fits
with the solver's own draws, the calibration and report, seeds, a one-release audit (the
correct release and one with half its noise), budget charging and input checks.

The audit runs one step of the solver on worst-case replace-one neighbours, thousands of
times per side, and bounds the Gaussian-DP ``mu`` of the two output distributions from
below (error probability 1e-6, seeded from the test name): a correct solver fails with
probability below 1e-6 and the half-noise variant, patched into the module, must fail.
"""

import importlib
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dpglm.audit import mu_lower_bound
from dpglm.distributed import ShardedProblem, ShardedRows
from dpglm.exceptions import BudgetExceededError, PrivacyLeakWarning
from dpglm.penalties import L1, L2, Box, ElasticNet, L1Ball
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.mechanisms import NoiseSource, make_noise_source
from dpglm.privacy.report import PrivacyReport
from dpglm.problem import Problem
from dpglm.solvers.dp_gd import dp_gd, gradient_plan
from dpglm.solvers.reference import solve_reference
from dpglm.solvers.registry import ProblemShape, Settings, get_solver
from solver_problems import judge_mu_audit, make_data, seed_of, with_less_noise

DELTA = 1e-6


def features(prob):
    """``(x_i, 1)`` (the 1 only with an intercept) as a dense array."""
    X = prob.X.toarray() if sp.issparse(prob.X) else np.asarray(prob.X)
    return np.hstack([X, np.ones((X.shape[0], 1))]) if prob.fit_intercept else X


# --- epsilon = inf: gradient descent with step 1 / L -------------------------------------


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
def test_non_private_dp_gd_reaches_the_reference_optimum(sparse):
    X, y = make_data(seed_of("optimum", sparse), n=300, p=8, classification=True, sparse=sparse)
    lam = 0.05
    prob = Problem(X, y, "logistic", L2(lam), fit_intercept=True)
    F = features(prob)
    # the objective's smoothness: l'' <= 1/4, plus the penalty (the intercept has none)
    L = 0.25 * np.linalg.eigvalsh(F.T @ F / F.shape[0])[-1] + lam
    fit = dp_gd(prob, epsilon=math.inf, delta=0.0, n_iter=2000, step=1.0 / L)
    ref = solve_reference(prob)
    assert ref.certified
    excess = (prob.objective(fit.theta) - ref.objective) / abs(ref.objective)
    assert -1e-9 <= excess <= 1e-9, excess
    np.testing.assert_allclose(fit.theta, ref.theta, atol=1e-5)
    assert fit.report.non_private and not fit.report.guarantee
    assert math.isinf(fit.info["clip"]) and fit.info["noise_std"] == 0.0
    assert fit.n_iter == 2000 and fit.history.passes[-1] == 2000
    np.testing.assert_array_equal(fit.history.thetas[-1], fit.theta)


def test_non_private_fit_does_not_clip():
    """Gradients far above the clip: a non-private step is the exact gradient step."""
    X, y = make_data(seed_of("no clip"), n=50, p=3)
    prob = Problem(10 * X, 10 * y, "squared", L2(0.1), fit_intercept=True)
    fit = dp_gd(prob, epsilon=math.inf, delta=0.0, n_iter=1, step=0.01, clip=1e-3)
    np.testing.assert_allclose(fit.theta, -0.01 * prob.gradient(np.zeros(4)), rtol=1e-12)


# --- a private fit, replayed in NumPy with the solver's own draws --------------------------


class RecordingSource(NoiseSource):
    """A seeded source that keeps every standard normal draw it hands out."""

    def __init__(self, seed):
        self.inner = make_noise_source(seed)
        self.generator = self.inner.generator
        self.draws = []

    def standard_normal(self, size=None):
        draws = self.inner.standard_normal(size)
        self.draws.append(np.array(draws))
        return draws


def replay(prob, fit, draws, step, clip):
    """Every step in NumPy, clipping the explicit n x p per-sample gradients."""
    F = features(prob)
    n, p = prob.X.shape
    l2 = prob.penalty.prox_params(p)[1]
    sigma = fit.report.mechanisms[0].noise_scale
    theta = np.zeros(prob.n_coords)
    for noise in draws:
        G = prob.datafit.derivative(F @ theta, prob.y)[:, None] * F
        norms = np.linalg.norm(G, axis=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            G = G * np.minimum(1.0, np.where(norms > 0, clip / norms, 1.0))
        g = (G.sum(axis=0) + sigma * noise) / n
        g[:p] += l2 * theta[:p]
        theta = theta - step * g
    return theta


@pytest.mark.parametrize(
    ("case", "sparse", "intercept"),
    [("dense", False, True), ("csc", True, True), ("no intercept", False, False)],
)
def test_private_fit_replays_in_numpy_with_the_planned_noise(case, sparse, intercept):
    X, y = make_data(seed_of("replay", case), n=120, p=5, classification=True, sparse=sparse)
    prob = Problem(X, y, "logistic", L2(0.05), fit_intercept=intercept)
    source = RecordingSource(seed_of("replay source", case))
    step, clip, T = 0.7, 0.3, 12
    fit = dp_gd(
        prob, epsilon=3.0, delta=DELTA, n_iter=T, step=step, clip=clip, random_state=source
    )
    assert len(source.draws) == T and all(d.shape == (prob.n_coords,) for d in source.draws)
    np.testing.assert_allclose(
        fit.theta, replay(prob, fit, source.draws, step, clip), rtol=1e-10, atol=1e-12
    )
    # the clip binds for some records, or the test would not check clipping
    s = prob.datafit.derivative(np.zeros(120), prob.y)
    assert np.any(np.abs(s) * np.linalg.norm(features(prob), axis=1) > clip)


# --- calibration and report -------------------------------------------------------------


def gdp_delta(mu, epsilon):
    """``delta(epsilon)`` of ``mu``-Gaussian DP (Dong, Roth and Su 2019)."""
    return stats.norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * stats.norm.cdf(
        -epsilon / mu - mu / 2
    )


@pytest.mark.parametrize(("target", "T", "clip"), [(0.1, 200, 1.0), (2.0, 30, 0.25)])
def test_report_is_the_plan_with_one_multiplier_for_all_releases(target, T, clip):
    X, y = make_data(seed_of("report", target), n=200, p=4, classification=True)
    prob = Problem(X, y, "logistic", L2(0.01), fit_intercept=True)
    fit = dp_gd(prob, epsilon=target, delta=DELTA, n_iter=T, clip=clip, random_state=0)
    report = fit.report
    assert report.accountant == "gdp" and report.neighbouring == "replace_one"
    (gradient,) = report.mechanisms
    z = fit.info["noise_multiplier"]
    assert gradient.kind == "gaussian" and gradient.count == T
    assert gradient.sensitivity == 2 * clip and gradient.noise_multiplier == z
    assert gradient.noise_scale == pytest.approx(z * 2 * clip, rel=1e-15)
    assert fit.info["noise_std"] == pytest.approx(z * 2 * clip, rel=1e-15)
    # T releases of multiplier z compose to sqrt(T) / z-GDP: the target, within calibration
    mu = math.sqrt(T) / z
    assert gdp_delta(mu, target) <= DELTA * (1 + 1e-6)
    assert gdp_delta(mu * 1.001, target) > DELTA
    assert report.epsilon <= target and report.epsilon == pytest.approx(target, rel=1e-3)
    assert any("2 C" in a and "fixed budget split" in a for a in report.assumptions)
    assert PrivacyReport.from_json(report.to_json()) == report
    assert gradient_plan(T, clip).events[0].sensitivity == 2 * clip


def test_the_multiplier_grows_with_the_number_of_releases():
    X, y = make_data(seed_of("split"), n=100, p=3, classification=True)
    prob = Problem(X, y, "logistic")
    z = [
        dp_gd(prob, epsilon=1.0, delta=DELTA, n_iter=T, random_state=0).info["noise_multiplier"]
        for T in (1, 4, 100)
    ]
    # GDP: the multiplier of T equal releases is sqrt(T) times that of one
    assert z[1] == pytest.approx(2 * z[0], rel=1e-6)
    assert z[2] == pytest.approx(10 * z[0], rel=1e-6)


# --- reproducibility ----------------------------------------------------------------------


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
def test_the_seed_reproduces_the_fit_bit_for_bit(sparse):
    X, y = make_data(seed_of("seed", sparse), n=200, p=6, sparse=sparse)
    prob = Problem(X, y, "squared", L2(0.01), fit_intercept=True)
    kwargs = {"epsilon": 2.0, "delta": DELTA, "n_iter": 20, "step": 0.5, "clip": 2.0}
    a = dp_gd(prob, random_state=11, **kwargs)
    b = dp_gd(prob, random_state=11, **kwargs)
    c = dp_gd(prob, random_state=12, **kwargs)
    np.testing.assert_array_equal(a.coef, b.coef)
    assert a.intercept == b.intercept
    np.testing.assert_array_equal(a.history.thetas, b.history.thetas)
    assert a.report == b.report
    assert not np.array_equal(a.coef, c.coef)


# --- audit: one gradient release --------------------------------------------------------

N_AUDIT = 10_000
AUDIT_CLIP = 0.5
AUDIT_STEP = 2.0


def audit_neighbours():
    """Squared loss, one feature, ``w = 0``: the canary's clipped gradient is ``-+C``.

    Twenty background records (x = 1, y = 0) have gradient 0 at ``w = 0``; the canary
    x = 10, y = +-10 has gradient -+100, clipped to -+C. One step gives
    ``w = -gamma (sum + noise) / n``, so ``-n w / gamma`` is the released sum:
    ``N(-+C, (2 C z)**2)``, two Gaussians ``1 / z`` standard deviations apart.
    """

    def problem(label):
        X = np.array([[1.0]] * 20 + [[10.0]])
        y = np.array([0.0] * 20 + [label])
        return Problem(X, y, "squared")

    return {"D": problem(10.0), "D'": problem(-10.0)}


@pytest.mark.parametrize("variant", ["correct", "half noise"])
def test_gradient_release_audit(variant, monkeypatch, request):
    if variant == "half noise":
        with_less_noise(monkeypatch)
    problems = audit_neighbours()
    kwargs = {"epsilon": 4.0, "delta": 1e-5, "n_iter": 1, "step": AUDIT_STEP, "clip": AUDIT_CLIP}
    fit = dp_gd(problems["D"], random_state=0, **kwargs)
    (gradient,) = fit.report.mechanisms
    assert gradient.kind == "gaussian" and gradient.sensitivity == 2 * AUDIT_CLIP
    mu_claim = 1.0 / gradient.noise_multiplier  # the Gaussian release is (Delta / sigma)-GDP
    rng = np.random.default_rng(seed_of(request.node.name))
    n = problems["D"].n_samples

    def released_sum(key):
        return -n * dp_gd(problems[key], random_state=rng, **kwargs).coef[0] / AUDIT_STEP

    stat0 = np.array([released_sum("D") for _ in range(N_AUDIT)])  # centred at -C
    stat1 = np.array([released_sum("D'") for _ in range(N_AUDIT)])  # centred at +C
    bound = mu_lower_bound(stat0, stat1, 0.0)  # the midpoint of the two means
    judge_mu_audit(bound, mu_claim, variant, power=0.7)
    print(f"gradient {variant}: claim mu={mu_claim:.4f}; {bound}")


# --- budget charging ----------------------------------------------------------------------


class WatchedProblem:
    """A problem whose data may be read only once ``budget`` holds a charge."""

    def __init__(self, prob, budget):
        self._prob = prob
        self._budget = budget

    def __getattr__(self, name):
        if name in ("X", "y", "rows", "features", "margins", "gradient", "objective"):
            assert self._budget.charges, f"the data ({name}) was read before the charge"
        return getattr(self._prob, name)

    def __repr__(self):
        return "WatchedProblem()"


def test_budget_is_charged_once_before_the_data_is_read():
    X, y = make_data(seed_of("charge"), n=200, p=3, classification=True)
    prob = Problem(X, y, "logistic", L2(0.1))
    # two fits at epsilon 1 compose to about 1.45 (GDP): over 1.2
    budget = PrivacyBudget(1.2, DELTA)
    fit = dp_gd(WatchedProblem(prob, budget), epsilon=1.0, delta=DELTA, n_iter=30, budget=budget)
    (charge,) = budget.charges
    (event,) = charge.plan.events
    assert charge.plan.neighbouring == "replace_one"
    assert event.count == 30 and event.noise_multiplier == fit.info["noise_multiplier"]
    assert event.sensitivity == 2.0
    assert charge.epsilon_after == pytest.approx(fit.report.epsilon, rel=1e-9)
    # refused before the data is read (the watched problem would raise AssertionError)
    small = PrivacyBudget(0.5, DELTA)
    with pytest.raises(BudgetExceededError):
        dp_gd(WatchedProblem(prob, small), epsilon=1.0, delta=DELTA, budget=small)
    assert not small.charges
    with pytest.raises(BudgetExceededError):
        dp_gd(prob, epsilon=1.0, delta=DELTA, budget=budget)
    assert len(budget.charges) == 1


# --- validation ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_problem():
    X, y = make_data(seed_of("small"), n=50, p=3)
    return Problem(X, y, "squared")


@pytest.mark.parametrize(
    ("name", "value", "error"),
    [
        ("epsilon", -1.0, ValueError),
        ("epsilon", 0.0, ValueError),
        ("delta", 0.0, ValueError),  # Gaussian noise needs delta > 0
        ("delta", 1.0, ValueError),
        ("n_iter", 0, ValueError),
        ("n_iter", 2.5, ValueError),
        ("n_iter", True, ValueError),
        ("n_iter", None, ValueError),
        ("step", 0.0, ValueError),
        ("step", -1.0, ValueError),
        ("step", math.inf, ValueError),
        ("step", math.nan, ValueError),
        ("step", None, TypeError),
        ("clip", 0.0, ValueError),
        ("clip", math.inf, ValueError),  # a private fit needs a finite sensitivity
        ("clip", "one", TypeError),
        ("accountant", "bogus", ValueError),
        ("accountant", 3, ValueError),
    ],
)
def test_bad_parameters_are_named(small_problem, name, value, error):
    kwargs = {"epsilon": 1.0, "delta": DELTA, "random_state": 0}
    kwargs[name] = value
    with pytest.raises(error, match=name):
        dp_gd(small_problem, **kwargs)


@pytest.mark.parametrize(
    "penalty", [L1(0.1), ElasticNet(0.1, 0.5), Box(-1.0, 1.0), L1Ball(1.0)], ids=repr
)
def test_penalties_without_a_gradient_step_are_refused(penalty):
    X, y = make_data(seed_of("refused"), n=30, p=3, classification=True)
    with pytest.raises(ValueError, match=r"DP-GD takes no penalty or an L2 penalty.*DP-CD"):
        dp_gd(Problem(X, y, "logistic", penalty), epsilon=1.0, delta=DELTA)


def test_an_elastic_net_without_l1_part_is_l2():
    X, y = make_data(seed_of("enet0"), n=60, p=3, classification=True)
    kwargs = {"epsilon": 1.0, "delta": DELTA, "n_iter": 5, "random_state": 3}
    a = dp_gd(Problem(X, y, "logistic", ElasticNet(0.2, 0.0)), **kwargs)
    b = dp_gd(Problem(X, y, "logistic", L2(0.2)), **kwargs)
    np.testing.assert_array_equal(a.coef, b.coef)


def test_secure_mode(small_problem):
    with pytest.raises(ValueError, match="seed"):
        dp_gd(small_problem, epsilon=1.0, delta=DELTA, secure=True, random_state=0)
    fit = dp_gd(small_problem, epsilon=1.0, delta=DELTA, secure=True, n_iter=3)
    assert fit.report.secure and fit.report.epsilon <= 1.0


# --- the registry: the plan a fit charges, from the problem's shape ------------------------


class RecordingBudget:
    """A stand-in budget that records the plan it is charged and returns no charge, as a
    search's guard does: what a non-private fit, which no PrivacyBudget affords, charges."""

    def __init__(self):
        self.plans = []

    def charge(self, plan, *, label=""):
        self.plans.append(plan)


def same_accounting(plan, charged):
    """What accounting reads of a plan: its events (kinds, counts, noise) and relation."""
    return plan.events == charged.events and plan.neighbouring == charged.neighbouring


#: case -> (datafit, penalty, intercept, sparse, epsilon, hyperparameters)
PLAN_CASES = {
    "defaults": ("squared", L2(0.01), True, False, 1.0, {}),
    "sparse-intercept": (
        "logistic", L2(0.01), True, True, 2.0, {"n_iter": 30, "step": 2.0, "clip": 0.5},
    ),
    "hinge-rdp": ("hinge", None, False, False, 0.5, {"n_iter": 7, "accountant": "rdp"}),
    "enet0-pld": (
        "huber", ElasticNet(0.1, 0.0), True, True, 3.0,
        {"n_iter": 12, "clip": 2.0, "accountant": "pld"},
    ),
}  # fmt: skip


def plan_problem(case):
    datafit, penalty, intercept, sparse, _, _ = PLAN_CASES[case]
    classification = datafit in ("logistic", "hinge")
    X, y = make_data(
        seed_of("plan", case), n=200, p=4, classification=classification, sparse=sparse
    )
    return Problem(X, y, datafit, penalty, fit_intercept=intercept)


@pytest.mark.parametrize("case", PLAN_CASES)
def test_the_registry_plan_is_the_charged_plan(case):
    *_, epsilon, params = PLAN_CASES[case]
    prob = plan_problem(case)
    budget = PrivacyBudget(10.0, DELTA)
    fit = dp_gd(prob, epsilon=epsilon, delta=DELTA, budget=budget, random_state=1, **params)
    (charge,) = budget.charges
    solver = get_solver("dp-gd")
    plan = solver.plan(prob, epsilon=epsilon, delta=DELTA, **params)
    assert same_accounting(plan, charge.plan)
    (event,) = plan.events
    assert event.count == fit.n_iter and event.noise_multiplier == fit.info["noise_multiplier"]
    assert event.sensitivity == 2.0 * params.get("clip", 1.0)
    shape = ProblemShape.of(prob)
    assert shape.sparse == sp.issparse(prob.X) and not shape.chunked
    assert same_accounting(solver.plan(shape, epsilon=epsilon, delta=DELTA, **params), plan)
    assert solver.leaks(shape, epsilon=epsilon, delta=DELTA, **params) == ()


def test_the_registry_plan_of_other_settings_is_not_the_charged_plan():
    # the comparison above can fail: another T, clip or accountant charges another plan
    prob = plan_problem("defaults")
    budget = PrivacyBudget(10.0, DELTA)
    dp_gd(prob, epsilon=1.0, delta=DELTA, n_iter=20, budget=budget, random_state=1)
    solver = get_solver("dp-gd")
    for other in ({"n_iter": 21}, {"clip": 0.5}, {"accountant": "rdp"}, {"epsilon": 0.9}):
        plan = solver.plan(prob, **{"epsilon": 1.0, "delta": DELTA, "n_iter": 20, **other})
        assert not same_accounting(plan, budget.charges[-1].plan)


def test_the_registry_plan_is_the_plan_a_ledger_keeps(tmp_path):
    prob = plan_problem("sparse-intercept")
    ledger = PrivacyBudget.open(tmp_path / "ledger.sqlite", dataset="d", epsilon=5.0, delta=DELTA)
    dp_gd(prob, epsilon=1.0, delta=DELTA, n_iter=9, budget=ledger, random_state=0)
    reopened = PrivacyBudget.open(tmp_path / "ledger.sqlite", dataset="d")
    plan = get_solver("dp-gd").plan(ProblemShape.of(prob), epsilon=1.0, delta=DELTA, n_iter=9)
    assert same_accounting(plan, reopened.charges[-1].plan)


def test_the_registry_plan_of_a_non_private_fit_is_the_charged_plan():
    prob = plan_problem("defaults")
    budget = RecordingBudget()
    dp_gd(prob, epsilon=math.inf, delta=0.0, n_iter=5, clip=3.0, budget=budget)
    (charged,) = budget.plans
    plan = get_solver("dp-gd").plan(
        ProblemShape.of(prob), epsilon=math.inf, delta=0.0, n_iter=5, clip=3.0
    )
    assert same_accounting(plan, charged)
    (event,) = plan.events
    assert event.noise_multiplier == 0.0 and event.sensitivity is None  # no clipping


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_the_registry_plan_of_a_sharded_problem_is_the_charged_plan(sparse):
    X, y = make_data(seed_of("plan sharded", sparse), n=240, p=4, classification=True,
                     sparse=sparse)  # fmt: skip
    params = {"n_iter": 8, "clip": 0.5}
    with ShardedRows.from_array(X, y, chunks=100) as rows:
        prob = ShardedProblem(rows, "logistic", L2(0.01), fit_intercept=True)
        budget = PrivacyBudget(10.0, DELTA)
        dp_gd(prob, epsilon=2.0, delta=DELTA, budget=budget, random_state=2, **params)
        solver = get_solver("dp-gd")
        plan = solver.plan(prob, epsilon=2.0, delta=DELTA, **params)
        shape = ProblemShape.of(prob)
    assert same_accounting(plan, budget.charges[-1].plan)
    assert shape.chunked and shape.sparse == sparse and solver.accepts(shape) is None
    assert same_accounting(solver.plan(shape, epsilon=2.0, delta=DELTA, **params), plan)


def test_the_fit_spends_the_plan_of_its_prepare(monkeypatch):
    module = importlib.import_module("dpglm.solvers.dp_gd")
    prepared = []
    real = module.prepare

    def spy(problem, **kwargs):
        prepared.append(real(problem, **kwargs))
        return prepared[-1]

    monkeypatch.setattr(module, "prepare", spy)
    prob = plan_problem("sparse-intercept")
    budget = PrivacyBudget(10.0, DELTA)
    fit = dp_gd(prob, epsilon=2.0, delta=DELTA, budget=budget, n_iter=6, step=0.5, clip=2)
    (setup,) = prepared
    assert same_accounting(setup.fit_plan.calibrated(), budget.charges[-1].plan)
    assert (setup.n_iter, setup.step, setup.clip) == (6, 0.5, 2.0) == (
        fit.n_iter, fit.info["step_size"], fit.info["clip"]
    )  # fmt: skip
    np.testing.assert_array_equal(setup.l2, np.full(4, 0.01))


@pytest.mark.parametrize(
    "penalty", [L1(0.1), ElasticNet(0.1, 0.5), Box(-1.0, 1.0), L1Ball(1.0)], ids=repr
)
def test_accepts_gives_the_fits_own_refusal(penalty):
    X, y = make_data(seed_of("accepts"), n=30, p=3, classification=True)
    prob = Problem(X, y, "hinge", penalty, fit_intercept=True)
    with pytest.raises(ValueError) as refusal:
        dp_gd(prob, epsilon=1.0, delta=DELTA)
    solver = get_solver("dp-gd")
    assert solver.accepts(prob) == str(refusal.value)
    assert solver.accepts(ProblemShape.of(prob)) == str(refusal.value)
    with pytest.raises(ValueError) as planned:
        solver.plan(ProblemShape.of(prob), epsilon=1.0, delta=DELTA)
    assert str(planned.value) == str(refusal.value)


def test_accepts_every_loss_on_rows_or_in_memory():
    solver = get_solver("dp-gd")
    for datafit in ("squared", "logistic", "squared_hinge", "huber", "hinge"):
        for chunked in (False, True):
            shape = ProblemShape(100, 3, datafit, L2(0.1), fit_intercept=True, chunked=chunked)
            assert solver.accepts(shape) is None


@pytest.mark.parametrize(
    ("bad", "first"),
    [
        ({"epsilon": 0.0, "n_iter": 0}, "epsilon"),
        ({"delta": 0.0}, "delta"),
        ({"n_iter": 2.5, "step": -1.0}, "n_iter"),
        ({"step": None, "clip": 0.0}, "step"),
        ({"clip": math.inf}, "clip"),
        ({"accountant": 3, "problem": L1(0.1)}, "accountant"),
        ({"accountant": "bogus", "problem": L1(0.1)}, "DP-GD takes no penalty"),
        ({"accountant": "bogus"}, "unknown accountant"),  # by the calibration, before the charge
        ({"clip": "one", "problem": L1(0.1)}, "clip"),
    ],
    ids=repr,
)
def test_the_plan_refuses_what_the_fit_refuses_with_its_message(bad, first):
    # the fit's order of checks is today's (the first refusal below wins), and the plan's
    bad = dict(bad)
    penalty = bad.pop("problem", L2(0.1))
    X, y = make_data(seed_of("bad plan"), n=40, p=3)
    prob = Problem(X, y, "squared", penalty)
    target = {"epsilon": 1.0, "delta": DELTA}
    target.update((k, bad.pop(k)) for k in ("epsilon", "delta") if k in bad)
    with pytest.raises((TypeError, ValueError), match=f"^{first}") as refusal:
        dp_gd(prob, random_state=0, **target, **bad)
    solver = get_solver("dp-gd")
    for problem in (prob, ProblemShape.of(prob)):
        with pytest.raises(type(refusal.value)) as planned:
            solver.plan(problem, **target, **bad)
        assert str(planned.value) == str(refusal.value)


def test_the_fit_warns_of_no_leak_and_the_registry_lists_none():
    prob = plan_problem("defaults")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        fit = dp_gd(prob, epsilon=1.0, delta=DELTA, n_iter=5, random_state=0)
    assert fit.report.warnings == ()
    assert get_solver("dp-gd").leaks(prob, epsilon=1.0, delta=DELTA) == ()


def test_the_solver_is_registered_for_direct_use_only():
    solver = get_solver("dp-gd")
    assert solver.fit is dp_gd and solver.order == 60 and solver.estimator is None
    assert "Lee and Kifer 2018" in solver.summary and "\n" not in solver.summary
    assert solver.hyperparameters == ("n_iter", "step", "clip", "accountant")
    assert dict(solver.defaults) == {"n_iter": 50, "step": 1.0, "clip": 1.0, "accountant": "auto"}
    with pytest.raises(ValueError, match="dp-gd is not available to the estimators"):
        solver.arguments(Settings(), ProblemShape(10, 2, "squared"))
