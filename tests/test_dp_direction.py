"""DP-Direction: the sensitivities of its three releases (checked against replacements of a
record, and reached), the noise of each release as the fit draws it (a seeded statistical test
that a correct fit fails with probability below 1e-6, union bound over its releases, and a fit
with half its noise fails), the
side weights, the line fit, the estimators' path (the non-negative columns of the scaling, the
"auto" rule) and the refusals.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dpglm import DPLinearSVC, DPLogisticRegression
from dpglm.datafits import SquaredHinge
from dpglm.penalties import L1, L2
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.events import GaussianEvent
from dpglm.privacy.mechanisms import make_noise_source
from dpglm.privacy.releases import Release
from dpglm.problem import Problem
from dpglm.solvers.dp_direction import (
    class_sums,
    direction_plan,
    dp_direction,
    line_fit,
    noisy_direction,
    score_edges,
    score_histograms,
    score_side,
    side_weights,
)
from dpglm.solvers.registry import ProblemShape, choose_solver
from solver_problems import seed_of, with_less_noise

DELTA = 1e-6
ALPHA = 1e-6


def _expanded(X, positive, clip, nonnegative):
    """The released vector of the class sums, every block, as one array."""
    u_plus, u_minus, v_plus, v_minus = class_sums(X, positive, clip, nonnegative)
    signed = ~nonnegative
    return np.concatenate([u_plus, v_plus, u_minus[signed], v_minus[signed]])


#: the label set of :func:`_text_like`, public
LABELS = [-1.0, 1.0]


def _text_like(seed, n=600, p=40, density=0.1):
    """Non-negative sparse rows of unit norm; the positives (15 %) use columns 0 to 4 more."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, p)) * (rng.random((n, p)) < density)
    y = np.where(rng.random(n) < 0.15, 1.0, -1.0)
    X[y > 0, :5] += rng.random((int((y > 0).sum()), 5)) * (rng.random(((y > 0).sum(), 5)) < 0.5)
    X[X.sum(axis=1) == 0, -1] = 1.0
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, y


# --- sensitivities ------------------------------------------------------------------------


@pytest.mark.parametrize("nonnegative", [True, False], ids=["non-negative", "signed"])
def test_no_replacement_moves_the_class_sums_beyond_sqrt2_clip(nonnegative):
    rng = np.random.default_rng(seed_of("sums sensitivity", nonnegative))
    clip, p = 1.5, 6
    mask = np.full(p, nonnegative)
    base = rng.uniform(-2, 2, (8, p))
    labels = rng.random(8) < 0.5
    worst = 0.0
    for _ in range(3000):
        a, b = rng.uniform(-3, 3, (2, p)) * rng.random((2, p)) ** 3
        ya, yb = rng.random(2) < 0.5
        first = _expanded(np.vstack([base, a]), np.append(labels, ya), clip, mask)
        second = _expanded(np.vstack([base, b]), np.append(labels, yb), clip, mask)
        worst = max(worst, np.linalg.norm(first - second))
    declared = direction_plan(clip).events[1].sensitivity
    assert worst <= declared * (1 + 1e-12)
    assert worst > 0.95 * declared  # the random search comes close to it


def test_the_sums_sensitivity_is_reached_and_a_signed_row_needs_the_split():
    clip = 1.0
    mask = np.zeros(2, dtype=bool)
    # x' = -x in one class: without the split into parts the sum would move by 2 C
    x = np.array([[1.0, 0.0]])
    moved = _expanded(x, np.array([True]), clip, mask) - _expanded(
        -x, np.array([True]), clip, mask
    )
    assert np.linalg.norm(moved) == pytest.approx(math.sqrt(2.0))
    # disjoint non-negative rows in one class reach sqrt(2) C
    rows = np.array([[1.0, 0.0], [0.0, 1.0]])
    both = np.ones(2, dtype=bool)
    moved = _expanded(rows[:1], np.array([True]), clip, both) - _expanded(
        rows[1:], np.array([True]), clip, both
    )
    assert np.linalg.norm(moved) == pytest.approx(direction_plan(clip).events[1].sensitivity)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_every_row_contributes_within_norm_c_and_nothing_non_finite(sparse):
    X = np.array([[-5.0, 1.0], [np.inf, 0.0], [np.nan, 1.0], [1e308, 1e308], [0.3, -0.4]])
    mask = np.array([True, False])
    clip = 0.5
    for i, row in enumerate(X):
        one = sp.csr_matrix(row[None, :]) if sparse else row[None, :]
        u_plus, u_minus, v_plus, v_minus = class_sums(one, np.array([True]), clip, mask)
        contribution = np.concatenate([u_plus, u_minus, v_plus, v_minus])
        assert np.all(np.isfinite(contribution)), i
        assert np.linalg.norm(contribution) <= clip * (1 + 1e-12), i
        # a declared non-negative column has no negative part, for every input
        assert u_minus[0] == 0.0, i
    # the non-finite rows contribute nothing; the long finite one is scaled to norm C
    assert not class_sums(X[1:3], np.array([True, True]), clip, mask)[0].any()
    long_row = class_sums(X[3:4], np.array([True]), clip, mask)[0]
    np.testing.assert_allclose(long_row, [clip / math.sqrt(2)] * 2)


def test_a_replacement_moves_the_histograms_by_sqrt2_at_most_and_reaches_it():
    rng = np.random.default_rng(seed_of("histogram sensitivity"))
    d = rng.normal(size=5)
    edges = score_edges(d, 1.0, 8)

    def histogram(X, positive):
        return score_histograms(X, d, positive, edges)

    base, labels = rng.normal(size=(20, 5)), rng.random(20) < 0.5
    odd = [np.full(5, np.nan), np.full(5, np.inf), np.full(5, -1e308), np.zeros(5)]
    worst = 0.0
    for k in range(500):
        a, b = rng.normal(size=(2, 5)) * 3
        if k < 4:
            a = odd[k]
        ya, yb = rng.random(2) < 0.5
        moved = histogram(np.vstack([base, a]), np.append(labels, ya)) - histogram(
            np.vstack([base, b]), np.append(labels, yb)
        )
        worst = max(worst, np.linalg.norm(moved))
    assert worst == pytest.approx(direction_plan(1.0).events[2].sensitivity)


# --- the noise of each release ---------------------------------------------------------------


def _band(k, alpha):
    return stats.chi2.ppf(alpha / 2, k) / k, stats.chi2.isf(alpha / 2, k) / k


#: fits drawn by the noise test
FITS = 300


def _fit_noise(seed, monkeypatch):
    """Each release's mean squared noise, as the fit adds it, over the variance the module
    docstring derives (its multiplier from the report, its sensitivity by hand), and the
    number of draws behind it: a spy on the one place a release adds its noise."""
    X, y = _text_like(seed, n=200, p=30)
    prob = Problem(X, y, "logistic", fit_intercept=True)
    mask = np.zeros(30, dtype=bool)
    mask[:20] = True
    clip = 0.7
    drawn = {}
    real_add = Release.add

    def add(self, values, **kwargs):
        noisy = real_add(self, values, **kwargs)
        drawn.setdefault(self.event.label, []).append(np.ravel(noisy - np.asarray(values)))
        return noisy

    monkeypatch.setattr(Release, "add", add)
    for k in range(FITS):
        fit = dp_direction(
            prob, epsilon=1.0, delta=DELTA, clip=clip, nonnegative=mask, random_state=seed + k
        )
    monkeypatch.undo()
    derived = [1.0, math.sqrt(2.0) * clip, math.sqrt(2.0)]  # the docstring's sensitivities
    ratios, sizes = [], []
    for mechanism, sensitivity in zip(fit.report.mechanisms, derived, strict=True):
        noise = np.concatenate(drawn[mechanism.label])
        std = mechanism.noise_multiplier * sensitivity
        ratios.append(float(np.mean(noise**2)) / std**2)
        sizes.append(noise.size)
    return ratios, sizes


def test_each_release_of_the_fit_draws_its_calibrated_noise(monkeypatch):
    # FITS x (1, 2 x 30 + 2 x 10, 32) draws of unit variance when the std is right: chi2(k)/k,
    # inside its band with probability 1 - ALPHA / 3 for each release
    ratios, sizes = _fit_noise(seed_of("direction noise"), monkeypatch)
    assert sizes == [FITS, FITS * 80, FITS * 32]
    for ratio, k in zip(ratios, sizes, strict=True):
        lo, hi = _band(k, ALPHA / 3)
        assert lo <= ratio <= hi, (ratios, sizes)
        assert lo > 0.5  # power: half the noise (a ratio of 1/4) cannot pass


def test_a_fit_with_half_its_noise_fails_the_noise_test(monkeypatch):
    with_less_noise(monkeypatch, factor=0.5)
    ratios, sizes = _fit_noise(seed_of("direction half noise"), monkeypatch)
    for ratio, k in zip(ratios, sizes, strict=True):
        assert ratio < _band(k, ALPHA / 3)[0], ratios


def test_the_direction_has_the_noise_variance_of_its_blocks():
    X, y = _text_like(seed_of("blocks"), n=200, p=30)
    mask = np.zeros(30, dtype=bool)
    mask[:20] = True
    positive = y > 0
    sums = class_sums(X, positive, 1.0, mask)
    count = float(positive.sum())
    quiet = Release(GaussianEvent(noise_multiplier=0.0, sensitivity=1.0))
    exact, ratio = noisy_direction(sums, count, 200, mask, quiet)
    noisy = Release(GaussianEvent(noise_multiplier=1.0, sensitivity=1.0), make_noise_source(3))
    draws = np.array(
        [noisy_direction(sums, count, 200, mask, noisy)[0] - exact for _ in range(400)]
    )
    # one block on a non-negative column, two (positive and negative parts) on the others
    for columns, blocks in ((mask, 1.0), (~mask, 2.0)):
        k = draws[:, columns].size
        value = float(np.mean(draws[:, columns] ** 2)) / (blocks * (1 + ratio**2))
        lo, hi = _band(k, ALPHA / 2)
        assert lo <= value <= hi


def test_the_plan_meets_the_target_and_the_fit_reports_it():
    X, y = _text_like(seed_of("plan"))
    budget = PrivacyBudget(epsilon=2.0, delta=1e-5)
    fit = dp_direction(
        Problem(X, y, "logistic", L2(1e-4), fit_intercept=True),
        epsilon=1.0,
        delta=DELTA,
        nonnegative=True,
        budget=budget,
        random_state=0,
    )
    assert fit.report.epsilon <= 1.0 and fit.report.neighbouring == "replace_one"
    assert [m.sensitivity for m in fit.report.mechanisms] == [1.0, math.sqrt(2), math.sqrt(2)]
    assert len(budget.charges) == 1
    stds = fit.info["noise_std"]
    multipliers = [m.noise_multiplier for m in fit.report.mechanisms]
    assert stds["sums"] == pytest.approx(multipliers[1] * math.sqrt(2))
    assert fit.info["penalty_applied"] is False
    assert any("L2 penalty (alpha = 0.0001) is not applied" in a for a in fit.report.assumptions)


# --- post-processing -------------------------------------------------------------------------


def test_side_weights_drop_a_side_of_pure_noise_and_keep_a_side_with_signal():
    rng = np.random.default_rng(seed_of("side weights"))
    S = rng.normal(0.0, 2.0, 20_000)
    f_plus, f_minus = side_weights(S, 2.0)
    # noise alone: each weight is about 0.016 |Z| (the energy's relative spread over 10,000
    # half-normal parts), below 0.1 but with probability under 1e-9
    assert f_plus < 0.1 and f_minus < 0.1
    S[:50] += 40.0
    f_plus, f_minus = side_weights(S, 2.0)
    assert f_plus > 0.5 and f_minus < 0.1


def test_the_line_fit_recovers_a_logistic_law_from_exact_counts():
    z = np.linspace(-3, 3, 13)
    p = 1 / (1 + np.exp(-(1.5 * z - 0.5)))
    a, b = line_fit(z, 1e6 * p, 1e6 * (1 - p), 13 * 10**6)
    assert a == pytest.approx(1.5, rel=1e-6) and b == pytest.approx(-0.5, abs=1e-6)


def test_the_line_fit_stays_finite_on_separated_counts_and_takes_the_log_odds_in_one_bin():
    z = np.array([-2.0, -1.0, 1.0, 2.0])
    positives, negatives = np.array([0.0, 0.0, 50.0, 50.0]), np.array([50.0, 50.0, 0.0, 0.0])
    free, _ = line_fit(z, positives, negatives, 200)
    held, _ = line_fit(z, positives, negatives, 200, penalty=1e-4)
    assert free > 10.0 and 1.0 < held < free  # the ridge bounds the slope
    a, b = line_fit(np.array([0.5, 1.0]), np.array([30.0, 0.0]), np.array([90.0, 0.0]), 120)
    assert a == 0.0 and b == pytest.approx(math.log(30 / 90))


def test_score_bins_take_the_public_sign_of_the_scores():
    d = np.array([0.0, 1.0, 2.0])
    assert score_side(d, np.ones(3, dtype=bool)) == 1
    assert score_side(-d, np.ones(3, dtype=bool)) == -1
    assert score_side(d, np.array([True, False, True])) == 0
    assert score_edges(d, 1.0, 4, 1)[0] == 0.0 and score_edges(-d, 1.0, 4, -1)[-1] == 0.0


def test_without_noise_the_direction_separates_and_a_seed_reproduces_the_fit():
    X, y = _text_like(seed_of("accuracy"), n=3000, p=40)
    prob = Problem(X, y, "logistic", fit_intercept=True)
    exact = dp_direction(prob, epsilon=math.inf, delta=0.0, nonnegative=True)
    assert np.mean(np.sign(X @ exact.coef + exact.intercept) == y) > 0.9
    first, second = (
        dp_direction(prob, epsilon=2.0, delta=DELTA, nonnegative=True, random_state=3)
        for _ in range(2)
    )
    np.testing.assert_array_equal(first.coef, second.coef)
    other = dp_direction(prob, epsilon=2.0, delta=DELTA, nonnegative=True, random_state=4)
    assert not np.array_equal(first.coef, other.coef)


# --- the estimators --------------------------------------------------------------------------


def test_auto_takes_it_for_sparse_binary_logistic_fits_with_more_columns_than_records():
    sparse = ProblemShape(400, 1000, "logistic", L2(1e-4), fit_intercept=True, sparse=True)
    assert choose_solver(sparse) == "dp-direction"
    dense = ProblemShape(400, 1000, "logistic", L2(1e-4), fit_intercept=True)
    assert choose_solver(dense) == "dp-gcd"
    assert choose_solver(ProblemShape(400, 1000, "logistic", L1(0.1), sparse=True)) == "dp-gcd"
    assert choose_solver(ProblemShape(400, 1000, "squared", L2(0.1), sparse=True)) == "dp-gcd"


def test_the_estimator_tells_the_solver_the_scalings_non_negative_columns():
    X, y = _text_like(seed_of("estimator"), n=300, p=400)
    X = sp.csr_matrix(X)
    # public ranges: the first 100 columns may be negative, the others start at 0
    bounds = np.tile([0.0, 1.0], (400, 1))
    bounds[:100, 0] = -1.0
    # the public label set: the positives (15 % of 300 records) would not pass a private
    # label selection
    model = DPLogisticRegression(
        epsilon=1.0, feature_bounds=bounds, classes=LABELS, random_state=0
    ).fit(X, y)
    assert model.solver_ == "dp-direction"
    np.testing.assert_array_equal(model.scaling_.nonnegative(), np.arange(400) >= 100)
    assert "300 of 400 columns declared non-negative" in str(model.privacy_report_)
    assert model.privacy_report_.epsilon <= 1.0
    # the model is linear on the raw scale: its decision is coef_ . x + intercept_
    np.testing.assert_allclose(
        model.decision_function(X), X @ model.coef_[0] + model.intercept_[0], rtol=1e-10
    )


def test_released_ranges_starting_at_zero_make_their_columns_non_negative():
    X, y = _text_like(seed_of("released ranges"), n=4000, p=400)
    model = DPLogisticRegression(epsilon=1.0, solver="dp-direction", random_state=0)
    model.fit(sp.csr_matrix(X), y)
    mask = model.scaling_.nonnegative()
    np.testing.assert_array_equal(mask, model.scaling_.low >= 0.0)  # scaled, not centred
    assert f"{int(mask.sum())} of 400 columns declared non-negative" in str(model.privacy_report_)
    assert mask.sum() > 0


def test_the_squared_hinge_line_fit_finds_the_margin_and_auto_takes_the_loss():
    z = np.array([-1.0, 1.0])
    a, b = line_fit(z, np.array([0.0, 100.0]), np.array([100.0, 0.0]), 200, 1e-6, SquaredHinge())
    assert a == pytest.approx(1.0, abs=1e-4) and b == pytest.approx(0.0, abs=1e-8)
    shape = ProblemShape(400, 1000, "squared_hinge", L2(1e-3), fit_intercept=True, sparse=True)
    assert choose_solver(shape) == "dp-direction"
    hinge = ProblemShape(400, 1000, "hinge", L2(1e-3), fit_intercept=True, sparse=True)
    assert choose_solver(hinge) == "dp-sgd"


@pytest.mark.parametrize(
    "datafit, penalty, message",
    [
        ("squared", None, "logistic and the squared hinge losses only"),
        ("hinge", None, "not the hinge loss"),
        ("logistic", L1(0.1), "no penalty or one L2 penalty"),
    ],
)
def test_a_refused_problem_is_refused_with_its_reason(datafit, penalty, message):
    X, y = _text_like(1, n=50, p=5)
    with pytest.raises(ValueError, match=message):
        dp_direction(Problem(X, y, datafit, penalty, True), epsilon=1.0, delta=DELTA)


def test_a_problem_without_intercept_is_refused_and_auto_does_not_take_it():
    X, y = _text_like(1, n=50, p=5)
    with pytest.raises(ValueError, match=r"needs an intercept \(fit_intercept=True\)"):
        dp_direction(Problem(X, y, "logistic"), epsilon=1.0, delta=DELTA)
    shape = ProblemShape(400, 1000, "logistic", L2(1e-4), sparse=True)
    assert choose_solver(shape) == "dp-gcd"


@pytest.mark.parametrize(
    "params, message",
    [
        ({"clip": 0.0}, "clip"),
        ({"clip": math.inf}, "clip must be positive and finite"),
        ({"bins": 1}, "bins must be at least 2"),
        ({"nonnegative": np.ones(3, dtype=bool)}, "nonnegative must be"),
    ],
)
def test_invalid_settings_are_refused_by_name(params, message):
    X, y = _text_like(2, n=50, p=5)
    with pytest.raises(ValueError, match=message):
        dp_direction(Problem(X, y, "logistic", None, True), epsilon=1.0, delta=DELTA, **params)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"passes": 5}, r"passes=5: DP-DIRECTION makes no passes to set"),
        ({"step": 0.5}, r"step=0.5: DP-DIRECTION has no step size to set"),
    ],
)
def test_the_estimators_refuse_the_settings_it_has_not_by_name(params, message):
    X, y = _text_like(3, n=100, p=200)
    model = DPLogisticRegression(epsilon=1.0, solver="dp-direction", random_state=0, **params)
    with pytest.raises(ValueError, match=message):
        model.fit(sp.csr_matrix(X), y)


@pytest.mark.parametrize("params", [{"passes": 5}, {"step": 0.5}], ids=["passes", "step"])
def test_auto_keeps_to_an_iterative_solver_when_a_step_or_passes_are_set(params):
    X, y = _text_like(3, n=100, p=200)
    # the public label set: 100 records are too few to select it privately
    model = DPLogisticRegression(epsilon=1.0, classes=LABELS, random_state=0, **params)
    assert model.fit(sp.csr_matrix(X), y).solver_ == "dp-gcd"
    default = DPLogisticRegression(epsilon=1.0, classes=LABELS)
    assert default.fit(sp.csr_matrix(X), y).solver_ == "dp-direction"


def test_dplinearsvc_fits_its_squared_hinge_along_the_direction():
    X, y = _text_like(seed_of("svc"), n=3000, p=4000, density=0.005)
    model = DPLinearSVC(epsilon=4.0, random_state=0).fit(sp.csr_matrix(X), y)
    assert model.solver_ == "dp-direction"
    logistic = DPLogisticRegression(epsilon=4.0, random_state=0).fit(sp.csr_matrix(X), y)
    # the same releases (one plan), a different line fit
    assert [m.sensitivity for m in model.privacy_report_.mechanisms] == [
        m.sensitivity for m in logistic.privacy_report_.mechanisms
    ]
    assert not np.allclose(model.coef_, logistic.coef_)
    exact = DPLinearSVC(epsilon=np.inf).fit(sp.csr_matrix(X), y)
    assert model.score(sp.csr_matrix(X), y) > 0.5 * (exact.score(sp.csr_matrix(X), y) + 0.85)


def test_auto_reads_a_step_given_in_the_solver_options():
    X, y = _text_like(3, n=100, p=200)
    model = DPLogisticRegression(
        epsilon=1.0, classes=LABELS, random_state=0, solver_options={"step": 0.5}
    )
    assert model.fit(sp.csr_matrix(X), y).solver_ == "dp-gcd"
