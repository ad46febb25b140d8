"""DP-CD: exact without privacy, reproducible, and run exactly as its privacy report says.

The private side is audited statistically in ``test_solver_audits.py``; here the
report is checked against the plan the solver ran (counts, noise actually used,
calibration) and the non-private limit against the certified reference optimum.
"""

import contextlib
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dpglm.distributed import ShardedProblem, ShardedRows
from dpglm.exceptions import BudgetExceededError, PrivacyLeakWarning
from dpglm.penalties import L1, L2, ElasticNet, L1Ball
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.mechanisms import NoiseSource, make_noise_source
from dpglm.problem import Problem
from dpglm.solvers.dp_cd import average_iterates, dp_cd, schedule
from dpglm.solvers.reference import solve_reference
from dpglm.solvers.registry import ProblemShape, get_solver
from solver_problems import make_data, seed_of

DELTA = 1e-6


def relative_excess(problem, theta):
    ref = solve_reference(problem)
    assert ref.certified, f"reference not certified: gap {ref.gap} ({ref.method})"
    return (problem.objective(theta) - ref.objective) / abs(ref.objective)


def exact_bounds(X):
    A = abs(X).toarray() if sp.issparse(X) else np.abs(X)
    return A.max(axis=0)


def fit_quiet(problem, **kwargs):
    """A fit whose smoothness comes from the data: it must warn, and the warning is expected."""
    with pytest.warns(PrivacyLeakWarning, match="raw data"):
        return dp_cd(problem, **kwargs)


# --- epsilon = inf: the exact randomized coordinate method ----------------------------------

LOSSES = {
    "squared-l2": ("squared", L2(0.1)),
    "squared-l1": ("squared", L1(0.03)),
    "squared-enet": ("squared", ElasticNet(0.1, 0.5)),
    "logistic-l2": ("logistic", L2(0.05)),
    "logistic-l1": ("logistic", L1(0.02)),
}


@pytest.mark.parametrize("intercept", [False, True], ids=["no-icpt", "icpt"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
@pytest.mark.parametrize("averaging", [True, False], ids=["avg", "last"])
@pytest.mark.parametrize("case", LOSSES)
def test_non_private_dp_cd_reaches_the_reference_optimum(case, averaging, sparse, intercept):
    datafit, penalty = LOSSES[case]
    X, y = make_data(seed_of(case, sparse), classification=datafit == "logistic", sparse=sparse)
    prob = Problem(X, y, datafit, penalty, fit_intercept=intercept)
    kwargs = {"epsilon": math.inf, "delta": 0.0, "passes": 300, "averaging": averaging}
    if averaging:
        fit = fit_quiet(prob, smoothness="data", random_state=1, **kwargs)
    else:  # exact public bounds: larger M_j, smaller steps, no warning
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            fit = dp_cd(prob, feature_bounds=exact_bounds(X), random_state=1, **kwargs)
    excess = relative_excess(prob, fit.theta)
    assert -1e-9 <= excess <= 1e-6, excess
    # the non-private run adds no noise and clips nothing, and says it is not private
    assert not fit.info["noise_std"].any()
    assert np.isinf(fit.info["clip_thresholds"]).all()
    assert fit.report.non_private and not fit.report.guarantee
    assert fit.intercept == (fit.theta[-1] if intercept else 0.0)
    # the history ends with the returned iterate
    np.testing.assert_array_equal(fit.history.thetas[-1], fit.theta)


class RecordingSource(NoiseSource):
    """A seeded source that keeps every coordinate order and Gaussian draw it hands out."""

    def __init__(self, seed):
        self.inner = make_noise_source(seed)
        self.generator = self.inner.generator
        self.orders, self.normals = [], []

    def integers(self, high, size=None):
        draws = self.inner.integers(high, size)
        self.orders.append(np.array(draws))
        return draws

    def standard_normal(self, size=None):
        draws = self.inner.standard_normal(size)
        self.normals.append(np.array(draws))
        return draws


def replay_dp_cd(prob, fit, source):
    """Algorithm 1 step by step in NumPy, with the solver's draws and per-coordinate arrays."""
    X = prob.X.toarray() if sp.issparse(prob.X) else prob.X
    p, n = prob.n_features, prob.n_samples
    columns = np.hstack([X, np.ones((n, 1))]) if prob.fit_intercept else X
    # the penalty on the coefficients; the intercept (last, when fitted) is free
    l1, l2 = np.zeros(prob.n_coords), np.zeros(prob.n_coords)
    lo, hi = np.full(prob.n_coords, -np.inf), np.full(prob.n_coords, np.inf)
    l1[:p], l2[:p], lo[:p], hi[:p] = prob.penalty.prox_params(p)
    step, clip, std = (fit.info[k] for k in ("step_sizes", "clip_thresholds", "noise_std"))
    theta = np.zeros(prob.n_coords)
    for order, normals in zip(source.orders, source.normals, strict=True):
        total = np.zeros_like(theta)
        for j, e in zip(order, normals * std[order], strict=True):
            s = prob.derivatives(theta)
            g = np.clip(s * columns[:, j], -clip[j], clip[j]).mean() + e
            x = theta[j] - step[j] * g
            shrunk = np.sign(x) * max(abs(x) - step[j] * l1[j], 0.0) / (1.0 + step[j] * l2[j])
            theta[j] = min(max(shrunk, lo[j]), hi[j])
            total += theta
        if fit.info["averaging"]:
            theta = total / len(order)
    return theta


@pytest.mark.parametrize("intercept", [False, True], ids=["no-icpt", "icpt"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
@pytest.mark.parametrize("averaging", [True, False], ids=["avg", "last"])
def test_private_fit_replays_in_numpy(averaging, sparse, intercept):
    """White box: clipping, the noise actually added, the prox and the averaging."""
    X, y = make_data(seed_of("replay", sparse), n=60, p=4, classification=True, sparse=sparse)
    prob = Problem(X, y, "logistic", ElasticNet(0.02, 0.7), fit_intercept=intercept)
    source = RecordingSource(seed_of("replay source", averaging, sparse, intercept))
    fit = dp_cd(
        prob,
        epsilon=3.0,
        delta=DELTA,
        passes=6,
        round_length=3,
        clip=0.3,  # active: per-sample terms reach 1 * 0.5 = 0.5 before clipping
        averaging=averaging,
        feature_bounds=1.0,
        random_state=source,
    )
    assert len(source.orders) == fit.info["rounds"] and fit.info["round_length"] == 3
    assert all(o.shape == (3,) for o in source.orders)
    np.testing.assert_allclose(fit.theta, replay_dp_cd(prob, fit, source), rtol=1e-10, atol=1e-12)


# --- the averaging of a round's iterates ----------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 6).flatmap(
        lambda d: st.tuples(
            st.just(d),
            st.lists(st.integers(0, d - 1), min_size=1, max_size=25),
            st.integers(0, 2**32 - 1),
        )
    )
)
def test_average_iterates_is_the_mean_of_the_round_iterates(case):
    d, order, seed = case
    rng = np.random.default_rng(seed)
    start = rng.standard_normal(d)
    trace = rng.standard_normal(len(order))
    iterate, total = start.copy(), np.zeros(d)
    for j, value in zip(order, trace, strict=True):
        iterate[j] = value
        total += iterate
    got = average_iterates(start, np.array(order), trace)
    np.testing.assert_allclose(got, total / len(order), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("passes", "n_coords", "round_length", "expected"),
    [
        (2.5, 10, None, (2, 10)),
        (1.0, 1, None, (1, 1)),
        (0.001, 8, None, (1, 1)),
        (3.0, 4, 5, (2, 5)),  # 12 updates in rounds of 5: the nearest multiple is 10
        (3.0, 4, 100, (1, 12)),  # a round never exceeds the total
    ],
)
def test_schedule(passes, n_coords, round_length, expected):
    assert schedule(passes, n_coords, round_length) == expected


# --- reproducibility ------------------------------------------------------------------------


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
def test_the_seed_reproduces_the_fit_bit_for_bit(sparse):
    X, y = make_data(seed_of("seed", sparse), n=200, p=6, sparse=sparse)
    prob = Problem(X, y, "squared", L1(0.01), fit_intercept=True)
    kwargs = {"epsilon": 1.0, "delta": DELTA, "passes": 8, "clip": 0.5, "feature_bounds": 1.0}
    a = dp_cd(prob, random_state=7, **kwargs)
    b = dp_cd(prob, random_state=7, **kwargs)
    c = dp_cd(prob, random_state=8, **kwargs)
    np.testing.assert_array_equal(a.coef, b.coef)
    assert a.intercept == b.intercept
    np.testing.assert_array_equal(a.history.thetas, b.history.thetas)
    np.testing.assert_array_equal(a.history.passes, b.history.passes)
    assert not np.array_equal(a.history.thetas, c.history.thetas)
    # a Generator is a seed too: the same stream gives the same fit
    d = dp_cd(prob, random_state=np.random.default_rng(7), **kwargs)
    np.testing.assert_array_equal(a.coef, d.coef)


def test_secure_noise_is_reported_and_refuses_a_seed():
    X, y = make_data(seed_of("secure"), n=100, p=3)
    prob = Problem(X, y, "squared")
    kwargs = {"epsilon": 1.0, "delta": DELTA, "passes": 2, "feature_bounds": 1.0}
    fit = dp_cd(prob, secure=True, **kwargs)
    assert fit.report.secure and np.isfinite(fit.coef).all()
    with pytest.raises(ValueError, match="seed"):
        dp_cd(prob, secure=True, random_state=0, **kwargs)


# --- the report matches the plan ------------------------------------------------------------


@pytest.mark.parametrize("target", [0.5, 2.0])
@pytest.mark.parametrize("intercept", [False, True])
def test_report_matches_the_plan(target, intercept):
    X, y = make_data(seed_of("report", target, intercept), n=400, p=7)
    prob = Problem(X, y, "squared", L2(0.01), fit_intercept=intercept)
    bounds = np.linspace(0.5, 1.5, 7)
    fit = dp_cd(
        prob,
        epsilon=target,
        delta=DELTA,
        passes=3.4,
        clip=0.7,
        round_length=5,
        feature_bounds=bounds,
        random_state=0,
    )
    report = fit.report
    T, K = fit.info["rounds"], fit.info["round_length"]
    assert schedule(3.4, prob.n_coords, 5) == (T, K)
    assert fit.n_iter == T * K
    assert report.epsilon <= target
    assert report.epsilon == pytest.approx(target, rel=1e-3)
    assert report.delta == DELTA
    assert report.neighbouring == "replace_one"
    assert report.guarantee and not report.warnings
    (mechanism,) = report.mechanisms
    assert mechanism.kind == "gaussian" and mechanism.count == T * K
    assert mechanism.sensitivity == pytest.approx(2 * 0.7 / prob.n_samples)
    assert set(report.parts) == {"training"}
    # smoothness from the public bounds, clipping split C_j = C sqrt(M_j / tr M)
    M = np.append(bounds**2, 1.0) if intercept else bounds**2
    np.testing.assert_allclose(fit.info["smoothness"], M, rtol=1e-15)
    clips = 0.7 * np.sqrt(M / M.sum())
    np.testing.assert_allclose(fit.info["clip_thresholds"], clips, rtol=1e-14)
    np.testing.assert_allclose(fit.info["step_sizes"], 1.0 / M, rtol=1e-15)
    # the noise actually used is the calibrated multiplier on each coordinate's sensitivity
    z = mechanism.noise_multiplier
    np.testing.assert_allclose(fit.info["noise_std"], z * 2 * clips / prob.n_samples, rtol=1e-14)
    # and that multiplier is what the accountant needs for the target, no more
    from dpglm.privacy.accounting import gdp_epsilon

    mu = math.sqrt(T * K) / z
    assert gdp_epsilon(mu, DELTA) == pytest.approx(report.epsilon, rel=1e-9)


def test_private_smoothness_is_part_of_the_plan():
    X, y = make_data(seed_of("private smoothness"), n=2000, p=6)
    prob = Problem(X, y, "squared", fit_intercept=True)
    fit = dp_cd(
        prob,
        epsilon=2.0,
        delta=DELTA,
        passes=4,
        smoothness="private",
        feature_bounds=1.0,
        smoothness_share=0.2,
        random_state=0,
    )
    report = fit.report
    assert fit.info["smoothness_source"] == "private"
    smooth, train = report.mechanisms
    assert (smooth.kind, smooth.part, smooth.count) == ("laplace", "smoothness estimation", 6)
    assert (train.kind, train.part, train.count) == ("gaussian", "training", fit.n_iter)
    assert report.epsilon <= 2.0 and report.epsilon == pytest.approx(2.0, rel=1e-3)
    # each part on its own, and the estimate spends (at most) its share
    assert set(report.parts) == {"smoothness estimation", "training"}
    assert 0 < report.parts["smoothness estimation"] <= 0.2 * 2.0 * (1 + 1e-9)
    assert 0 < report.parts["training"] < 2.0
    # the training noise is calibrated to what remains: std from the Gaussian event
    n = prob.n_samples
    expected = train.noise_multiplier * 2 * fit.info["clip_thresholds"] / n
    np.testing.assert_allclose(fit.info["noise_std"], expected, rtol=1e-14)


def test_data_smoothness_voids_the_guarantee():
    X, y = make_data(seed_of("data smoothness"), n=200, p=4)
    prob = Problem(X, y, "squared")
    fit = fit_quiet(prob, epsilon=1.0, delta=DELTA, passes=2, smoothness="data", random_state=0)
    assert fit.info["smoothness_source"] == "data"
    assert not fit.report.guarantee
    assert any("raw data" in w for w in fit.report.warnings)
    np.testing.assert_allclose(fit.info["smoothness"], (X**2).mean(axis=0), rtol=1e-14)


# --- validation -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_problem():
    X, y = make_data(seed_of("small"), n=50, p=3)
    return Problem(X, y, "squared")


def test_non_smooth_and_non_separable_problems_are_refused():
    X, y = make_data(seed_of("refused"), n=30, p=3, classification=True)
    with pytest.raises(ValueError, match=r"DP-CD needs a smooth loss.*hinge.*squared_hinge"):
        dp_cd(Problem(X, y, "hinge"), epsilon=1.0, delta=DELTA, feature_bounds=1.0)
    with pytest.raises(ValueError, match=r"separable penalty.*L1Ball.*Frank-Wolfe"):
        dp_cd(Problem(X, y, "logistic", L1Ball(1.0)), epsilon=1.0, delta=DELTA, feature_bounds=1)


@pytest.mark.parametrize(
    ("name", "value", "error"),
    [
        ("step", 0.0, ValueError),
        ("step", -1.0, ValueError),
        ("step", math.nan, ValueError),
        ("step", math.inf, ValueError),
        ("step", "big", TypeError),
        ("clip", 0.0, ValueError),
        ("clip", -2.0, ValueError),
        ("clip", math.nan, ValueError),
        ("clip", math.inf, ValueError),  # a private fit needs a finite sensitivity
        ("passes", 0, ValueError),
        ("passes", -1.0, ValueError),
        ("passes", math.inf, ValueError),
        ("round_length", 0, ValueError),
        ("round_length", 2.5, TypeError),
        ("smoothness", "guess", ValueError),
        ("smoothness_share", 1.0, ValueError),
        ("smoothness_share", "a tenth", ValueError),
    ],
)
def test_bad_parameters_are_named(small_problem, name, value, error):
    kwargs = {"epsilon": 1.0, "delta": DELTA, "feature_bounds": 1.0, "random_state": 0}
    if name == "smoothness_share":
        kwargs["smoothness"] = "private"
    kwargs[name] = value
    with pytest.raises(error, match=name) as raised:
        dp_cd(small_problem, **kwargs)
    # the registry's plan refuses them before any record is read, with the fit's message
    del kwargs["random_state"]
    for shape in (small_problem, ProblemShape.of(small_problem)):
        with pytest.raises(error) as planned:
            get_solver("dp-cd").plan(shape, **kwargs)
        assert str(planned.value) == str(raised.value)


@pytest.mark.parametrize(
    ("epsilon", "delta"), [(0.0, DELTA), (-1.0, DELTA), (math.nan, DELTA), (1.0, 1.0)]
)
def test_bad_privacy_targets_are_refused(small_problem, epsilon, delta):
    with pytest.raises(ValueError, match=r"epsilon|delta") as raised:
        dp_cd(small_problem, epsilon=epsilon, delta=delta, feature_bounds=1.0)
    with pytest.raises(ValueError) as planned:
        get_solver("dp-cd").plan(
            ProblemShape.of(small_problem), epsilon=epsilon, delta=delta, feature_bounds=1.0
        )
    assert str(planned.value) == str(raised.value)


def test_budget_is_charged_once_per_fit_and_refuses_overspending(small_problem):
    budget = PrivacyBudget(1.2, DELTA)
    kwargs = {"delta": DELTA, "feature_bounds": 1.0, "budget": budget, "random_state": 0}
    fit = dp_cd(small_problem, epsilon=1.0, smoothness="private", **kwargs)
    assert len(budget.charges) == 1
    (charge,) = budget.charges
    # the charge is the plan the report describes, smoothness estimate included
    assert [e.kind for e in charge.plan.events] == [m.kind for m in fit.report.mechanisms]
    multipliers = [m.noise_multiplier for m in fit.report.mechanisms]
    assert [e.noise_multiplier for e in charge.plan.events] == multipliers
    assert charge.epsilon_after <= fit.report.epsilon * (1 + 1e-9)
    with pytest.raises(BudgetExceededError):
        dp_cd(small_problem, epsilon=1.0, **kwargs)
    assert len(budget.charges) == 1
    dp_cd(small_problem, epsilon=0.1, **kwargs)
    assert len(budget.charges) == 2


# --- pure-Python kernels (CI also runs these with NUMBA_DISABLE_JIT=1) ----------------------


@pytest.mark.nojit
def test_tiny_fits_without_jit():
    X, y = make_data(seed_of("nojit"), n=40, p=3, classification=True)
    for data in (X, sp.csc_matrix(X)):
        prob = Problem(data, y, "logistic", L1(0.01), fit_intercept=True)
        exact = fit_quiet(prob, epsilon=math.inf, delta=0.0, passes=150, smoothness="data")
        assert relative_excess(prob, exact.theta) <= 1e-6
        fit = dp_cd(prob, epsilon=1.0, delta=DELTA, passes=2, feature_bounds=1.0, random_state=3)
        assert fit.n_iter == 2 * 4 and np.isfinite(fit.theta).all()
        z = fit.report.mechanisms[0].noise_multiplier
        np.testing.assert_allclose(fit.info["noise_std"], z * 2 * fit.info["clip_thresholds"] / 40)


# --- the registry: the plan known before the data is read is the plan the fit charges -------

#: hyperparameters of the registry tests (the others take the fit function's defaults)
REGISTRY_SETTINGS = {
    "bounds": {"feature_bounds": 1.0},
    "private smoothness": {
        "smoothness": "private",
        "feature_bounds": [1.0, 1.0, 0.5, 1.0, 2.0],
        "smoothness_share": 0.2,
        "passes": 2,
    },
    "rounds, clip and rdp": {
        "feature_bounds": 1.0,
        "passes": 1.5,
        "round_length": 2,
        "clip": 3.0,
        "step": 0.5,
        "averaging": False,
        "accountant": "rdp",
    },
    "data smoothness": {"smoothness": "data", "passes": 1},
}


def registry_problem(kind):
    """A lasso problem of 120 records: dense, sparse, or with an intercept."""
    X, y = make_data(seed_of("registry", kind), n=120, p=5, sparse=kind == "sparse")
    return Problem(X, y, "squared", L1(0.01), fit_intercept=kind == "intercept")


def fit_recording_leaks(problem, **kwargs):
    """The fit and the messages of the privacy-leak warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyLeakWarning)
        fit = dp_cd(problem, **kwargs)
    return fit, tuple(str(w.message) for w in caught if w.category is PrivacyLeakWarning)


@pytest.mark.parametrize("kind", ["dense", "sparse", "intercept"])
@pytest.mark.parametrize("settings", list(REGISTRY_SETTINGS))
def test_the_registry_plan_is_the_charged_plan(kind, settings):
    params = REGISTRY_SETTINGS[settings]
    problem = registry_problem(kind)
    budget = PrivacyBudget(epsilon=2.0, delta=2 * DELTA)
    fit, leaked = fit_recording_leaks(
        problem, epsilon=1.0, delta=DELTA, budget=budget, random_state=0, **params
    )
    charged = budget.charges[-1].plan
    # the plan of this fit: its smoothness estimate, then its T K updates
    assert charged.events[-1].count == fit.n_iter
    assert len(charged.events) == 1 + (settings == "private smoothness")
    solver = get_solver("dp-cd")
    for shape in (problem, ProblemShape.of(problem)):
        plan = solver.plan(shape, epsilon=1.0, delta=DELTA, **params)
        assert plan == charged
        assert solver.accepts(shape) is None
        assert solver.leaks(shape, epsilon=1.0, delta=DELTA, **params) == leaked
    assert bool(leaked) == (settings == "data smoothness")


def test_the_registry_lists_the_leak_of_smoothness_read_from_the_data():
    problem = registry_problem("dense")
    solver = get_solver("dp-cd")
    for smoothness in ("data", "auto"):  # "auto" without bounds reads the data
        fit, leaked = fit_recording_leaks(
            problem, epsilon=1.0, delta=DELTA, smoothness=smoothness, random_state=0
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


@contextlib.contextmanager
def refused_problem(kind):
    """A problem DP-CD refuses: a non-smooth loss, a non-separable penalty, or row chunks."""
    X, y = make_data(seed_of("registry refused"), n=60, p=3, classification=True)
    if kind == "rows":
        with ShardedRows.from_array(X, y, chunks=30) as rows:
            yield ShardedProblem(rows, "logistic", L2(0.1), fit_intercept=True)
    else:
        yield Problem(X, y, *{"hinge": ("hinge",), "l1-ball": ("logistic", L1Ball(1.0))}[kind])


@pytest.mark.parametrize(
    ("kind", "error"), [("hinge", ValueError), ("l1-ball", ValueError), ("rows", TypeError)]
)
def test_the_registry_refuses_what_the_fit_refuses_with_its_message(kind, error):
    solver = get_solver("dp-cd")
    with refused_problem(kind) as problem:
        with pytest.raises(error) as raised:
            dp_cd(problem, epsilon=1.0, delta=DELTA, feature_bounds=1.0)
        shape = ProblemShape.of(problem)
        assert solver.accepts(problem) == solver.accepts(shape) == str(raised.value)
        with pytest.raises(error) as planned:
            solver.plan(shape, epsilon=1.0, delta=DELTA, feature_bounds=1.0)
    assert str(planned.value) == str(raised.value)


@pytest.mark.parametrize(
    ("problem_kind", "kwargs", "first"),
    [
        ("rows", {"step": 0.0}, "needs an in-memory Problem"),
        ("hinge", {"epsilon": 0.0}, "smooth loss"),
        ("dense", {"epsilon": 0.0, "step": 0.0}, "epsilon"),
        ("dense", {"step": 0.0, "clip": 0.0}, "step"),
        ("dense", {"clip": 0.0, "passes": 0}, "clip"),
        ("dense", {"passes": 0, "smoothness": "guess"}, "passes"),
        ("dense", {"clip": math.inf, "smoothness": "guess"}, "clip must be finite"),
        ("dense", {"smoothness": "guess", "feature_bounds": [1.0]}, "smoothness"),
        ("dense", {"smoothness": "bounds", "feature_bounds": None}, "needs feature_bounds"),
    ],
)
def test_the_first_error_of_the_fit_is_the_registrys(problem_kind, kwargs, first):
    options = {"epsilon": 1.0, "delta": DELTA, "feature_bounds": 1.0, **kwargs}
    with contextlib.ExitStack() as stack:
        if problem_kind == "dense":
            problem = registry_problem("dense")
        else:
            problem = stack.enter_context(refused_problem(problem_kind))
        with pytest.raises((TypeError, ValueError), match=first) as raised:
            dp_cd(problem, **options)
        with pytest.raises(raised.type) as planned:
            get_solver("dp-cd").plan(ProblemShape.of(problem), **options)
    assert str(planned.value) == str(raised.value)
