"""Private by default: the ranges an estimator needs are released privately, inside its plan.

Every estimator, with every solver that accepts its problem, fits raw-scale data
with ``PrivacyLeakWarning`` as an error and reports a guarantee whose parts are
the preprocessing's release and the training; the release's three Gaussian
histograms are audited on worst-case replace-one neighbours (half their noise
is caught); the scaling maps a model back to the raw scale exactly; public
ranges skip the release and its charge; ``epsilon=inf`` with public ranges is
scikit-learn's optimum on the same clipped records.
"""

import math
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression, Ridge

from dpglm import PrivacyLeakWarning
from dpglm.audit import mu_lower_bound
from dpglm.estimators import (
    DPElasticNet,
    DPLasso,
    DPLinearRegression,
    DPLinearSVC,
    DPLogisticRegression,
    DPRidge,
    load_model,
)
from dpglm.estimators.preprocessing import preprocessing_share
from dpglm.penalties import L2
from dpglm.preprocessing.ranges import GRID, RangePlan, column_counts
from dpglm.preprocessing.scaling import Scaling
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.spending import spend
from dpglm.solvers.registry import ProblemShape, estimator_solvers, get_solver
from dpglm.tuning import PrivateSearchCV
from solver_problems import seed_of, with_less_noise

ESTIMATORS = [
    DPLinearRegression(),
    DPRidge(alpha=0.01),
    DPLasso(alpha=0.01),
    DPElasticNet(alpha=0.01),
    DPLogisticRegression(),
    DPLinearSVC(),
]


def raw_table(n=3000, seed=0):
    """Columns on scales from 1e-3 to 1e5, one of them skewed; a target in dollars."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [
            rng.normal(0.002, 0.001, n),
            rng.lognormal(7.0, 1.0, n),
            rng.integers(0, 50, n).astype(float),
            rng.normal(-40_000.0, 5_000.0, n),
        ]
    )
    signal = (X[:, 0] - 0.002) / 0.001 + np.log(X[:, 1]) - 7.0 + (X[:, 2] - 25.0) / 15.0
    y = 200_000.0 + 50_000.0 * signal + 10_000.0 * rng.standard_normal(n)
    labels = np.where(signal + 0.5 * rng.standard_normal(n) > 0, "high", "low")
    return X, y, labels


def _cases():
    for model in ESTIMATORS:
        regression = model._task == "regression"
        shape = ProblemShape(3000, 4, model._datafit(), model._penalty(), fit_intercept=True)
        for name in ("auto", *estimator_solvers()):
            if name != "auto" and get_solver(name).accepts(shape) is not None:
                continue  # e.g. DP-SCD and DP-AGD fit no L1 part
            yield pytest.param(
                clone(model).set_params(solver=name), regression, id=f"{model!r}-{name}"
            )


@pytest.mark.parametrize("model, regression", list(_cases()))
def test_every_default_path_is_private(model, regression):
    X, y, labels = raw_table()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        model.set_params(random_state=0).fit(X, y if regression else labels)
    report = model.privacy_report_
    assert report.guarantee and report.warnings == ()
    # the whole plan's epsilon is the one asked for, its parts listed on their own
    assert 0.98 <= report.epsilon <= 1.0 + 1e-9
    assert set(report.parts) >= {"preprocessing", "training"}
    assert 0 < report.parts["preprocessing"] < report.parts["training"]
    assert any("feature ranges released privately" in a for a in report.assumptions)
    assert model.scaling_.n_features == 4 and np.isfinite(model.coef_).all()
    if regression:
        assert model.scaling_.target_low is not None
        assert any("target range released privately" in a for a in report.assumptions)


def test_private_search_on_raw_data_is_private():
    X, _, labels = raw_table(n=2000)
    search = PrivateSearchCV(
        DPLogisticRegression(),
        {"alpha": [0.01, 0.1]},
        epsilon=1.0,
        mean_repetitions=2,
        shape=1.0,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        search.fit(X, labels)
    assert search.privacy_report_.guarantee
    assert search.privacy_report_.epsilon <= 1.0 + 1e-9


def test_defaults_learn_raw_scale_data_and_predict_on_the_raw_scale():
    X, y, labels = raw_table(n=20_000)
    regressor = DPLinearRegression(random_state=0).fit(X, y)
    assert regressor.score(X, y) > 0.6
    # coef_ and intercept_ are on the raw scale: predictions are the clipped records' X coef + b
    clipped = regressor.scaling_.clip(X)
    np.testing.assert_allclose(
        regressor.predict(X), clipped @ regressor.coef_ + regressor.intercept_, rtol=1e-9
    )
    classifier = DPLogisticRegression(random_state=0).fit(X, labels)
    assert classifier.score(X, labels) > 0.8


def test_the_released_ranges_hold_the_bulk_of_each_column():
    X, y, _ = raw_table(n=20_000)
    model = DPLinearRegression(random_state=1).fit(X, y)
    scaling = model.scaling_
    inside = (scaling.low <= X) & (scaling.high >= X)
    assert (inside.mean(axis=0) > 0.8).all(), inside.mean(axis=0)
    # within a factor of a few of the span of the bulk: log-scale bins
    spread = np.quantile(X, 0.99, axis=0) - np.quantile(X, 0.01, axis=0)
    width = scaling.high - scaling.low
    assert ((width > spread / 8) & (width < 8 * spread)).all(), (width, spread)
    assert scaling.target_low < np.median(y) < scaling.target_high


def test_public_ranges_skip_the_release_and_its_charge():
    X, y, _ = raw_table()
    ranges = np.column_stack([X.min(axis=0), X.max(axis=0)])
    budget = PrivacyBudget(1.0, 1e-6)
    model = DPRidge(
        alpha=0.01,
        feature_bounds=ranges,
        target_bounds=(y.min(), y.max()),
        budget=budget,
        random_state=0,
    ).fit(X, y)
    report = model.privacy_report_
    assert "preprocessing" not in report.parts and report.guarantee
    assert len(budget.charges) == 1
    assert all(m.part != "preprocessing" for m in budget.charges[0].plan.events)
    # only the target public: the features' release alone
    partly = DPRidge(alpha=0.01, target_bounds=(0, 5e5), random_state=0).fit(X, y)
    labels = [m.label for m in partly.privacy_report_.mechanisms if m.part == "preprocessing"]
    assert len(labels) == 2 and not any("target" in label for label in labels)


def test_one_charge_covers_the_release_and_the_training():
    X, y, _ = raw_table()
    budget = PrivacyBudget(2.0, 1e-6)
    model = DPLinearRegression(budget=budget, delta=1e-7, random_state=0).fit(X, y)
    (charge,) = budget.charges
    parts = [e.part for e in charge.plan.events]
    assert parts[:3] == ["preprocessing"] * 3 and parts[3:] == ["training"] * (len(parts) - 3)
    # the budget composes the charge with its own accountant: never above the report
    assert budget.spent() <= model.privacy_report_.epsilon + 1e-9
    # the release took its share of the budget on its own
    share = RangePlan.share_of(
        4, target=True, epsilon=1.0, delta=1e-7, share=preprocessing_share(3000, 4, 1.0)
    )
    assert [e.noise_multiplier for e in charge.plan.events[:3]] == [
        e.noise_multiplier for e in share.plan.events
    ]


def test_planned_fit_is_what_the_fit_charges():
    X, y, _ = raw_table()
    model = DPLasso(alpha=0.01, random_state=0)
    plan, leaks = model.planned_fit(*X.shape)
    budget = PrivacyBudget(5.0, 1e-3)
    model.set_params(budget=budget).fit(X, y)
    assert leaks == ()
    charged = budget.charges[0].plan
    assert [(e.kind, e.count, e.noise_multiplier) for e in charged.events] == [
        (e.kind, e.count, e.noise_multiplier) for e in plan.events
    ]


def test_ranges_read_from_the_data_are_a_leak_the_report_shows():
    X, y, _ = raw_table()
    with pytest.warns(PrivacyLeakWarning, match="ranges read from the data"):
        model = DPLinearRegression(feature_bounds="data", random_state=0).fit(X, y)
    assert not model.privacy_report_.guarantee
    np.testing.assert_array_equal(model.scaling_.low, X.min(axis=0))


# -- epsilon = inf: the same pipeline, the exact optimum ------------------------------------


def test_infinite_epsilon_equals_scikit_learn_on_the_same_clipped_records():
    X, y, labels = raw_table(n=2000)
    # public ranges narrower than the data: clipping changes records
    low, high = np.quantile(X, 0.05, axis=0), np.quantile(X, 0.95, axis=0)
    bounds = np.column_stack([low, high])
    target = (np.quantile(y, 0.05), np.quantile(y, 0.95))
    n, alpha = X.shape[0], 0.01
    ours = DPRidge(alpha=alpha, epsilon=math.inf, feature_bounds=bounds, target_bounds=target)
    ours.fit(X, y)
    scaling = Scaling.from_ranges(low, high, target=target)
    Z, t = scaling.transform(X), scaling.transform_target(y)
    assert np.abs(Z).max() <= 1.0 + 1e-12 and np.abs(t).max() <= 1.0 + 1e-12
    theirs = Ridge(alpha=n * alpha, solver="cholesky").fit(Z, t)
    coef, intercept = scaling.raw_model(theirs.coef_, theirs.intercept_)
    np.testing.assert_allclose(ours.coef_, coef, rtol=1e-7)
    assert ours.intercept_ == pytest.approx(intercept, rel=1e-7)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(Z) * 0 + scaling.target_centre
                               + scaling.target_scale * theirs.predict(Z), rtol=1e-7)  # fmt: skip
    logistic = DPLogisticRegression(alpha=alpha, epsilon=math.inf, feature_bounds=bounds)
    logistic.fit(X, labels)
    codes = np.where(labels == "low", 1, 0)  # "low" sorts after "high": the +1 class
    reference = LogisticRegression(C=1.0 / (n * alpha), tol=1e-12, max_iter=10_000)
    reference.fit(Z, codes)
    coef, intercept = scaling.raw_model(reference.coef_.ravel(), reference.intercept_[0])
    coef, intercept = (
        coef / scaling.target_scale,
        (intercept - scaling.target_centre) / (scaling.target_scale),
    )
    np.testing.assert_allclose(logistic.coef_, [coef], atol=1e-6 * np.abs(coef).max())


# -- the scaling ------------------------------------------------------------------------------


def test_scaling_round_trip_and_zero_width_columns():
    rng = np.random.default_rng(0)
    scaling = Scaling.from_ranges([-1.0, 5.0, 2.0], [3.0, 9.0, 2.0], target=(10.0, 30.0))
    w, b = rng.standard_normal(3), 0.3
    coef, intercept = scaling.raw_model(w, b)
    assert coef[2] == 0.0  # a column of zero width carries nothing
    back_w, back_b = scaling.scaled_model(coef, intercept)
    np.testing.assert_allclose(back_w[:2], w[:2], rtol=1e-12)
    assert back_b == pytest.approx(b, rel=1e-12)
    X = rng.uniform(-5, 12, (50, 3))
    scaled = scaling.target_centre + scaling.target_scale * (
        scaling.transform(X) @ np.append(w[:2], 0.0) + b
    )
    np.testing.assert_allclose(scaling.clip(X) @ coef + intercept, scaled, rtol=1e-12)


def test_sparse_features_keep_their_zeros():
    rng = np.random.default_rng(0)
    X = sp.random(2000, 30, density=0.1, format="csr", random_state=0) * 50.0 + 0.0
    y = np.asarray(X[:, :3].sum(axis=1)).ravel() + rng.standard_normal(2000)
    model = DPLinearRegression(random_state=0).fit(X, y)
    scaling = model.scaling_
    assert not scaling.centred and (scaling.low <= 0).all() and (scaling.high >= 0).all()
    Z = scaling.transform(X)
    assert sp.issparse(Z) and Z.nnz <= X.nnz
    assert abs(Z).max() <= 1.0


def test_the_model_file_keeps_the_scaling(tmp_path):
    X, y, labels = raw_table()
    for model, target in [(DPRidge(random_state=0), y), (DPLinearSVC(random_state=0), labels)]:
        model.fit(X, target)
        again = load_model(model.save(tmp_path / "model.json"))
        assert again.scaling_.to_dict() == model.scaling_.to_dict()
        np.testing.assert_array_equal(again.predict(X), model.predict(X))


# -- audits of the three releases -------------------------------------------------------------

RUNS = 6_000
#: a target whose per-release mu (about 1.9) the runs resolve: half the noise doubles it
AUDIT_EPSILON, AUDIT_DELTA = 8.0, 1e-5


def _neighbours():
    """One record, replaced by one that moves every histogram of the release."""
    D = (np.array([[1.0, -3.0, 0.01]]), np.array([5.0]))
    other = (np.array([[-2.0, 100.0, 7e5]]), np.array([-7.0]))
    return D, other


@pytest.mark.parametrize("variant", ["correct", "half noise"])
def test_range_release_gaussian_audit(variant, monkeypatch, request):
    """Each histogram's noisy counts, projected on the canary's change, against mu = 1 / z.

    The three releases are audited on the same runs, each at error probability 1e-6 / 3.
    """
    from dpglm.preprocessing.ranges import row_extreme_counts

    if variant == "half noise":
        with_less_noise(monkeypatch)
    plan = RangePlan.create(3, target=True, epsilon=AUDIT_EPSILON, delta=AUDIT_DELTA)
    rng = np.random.default_rng(seed_of(request.node.name))
    spent = spend(plan.plan, epsilon=AUDIT_EPSILON, delta=AUDIT_DELTA, random_state=rng)
    releases = [spent.release(i) for i in range(3)]
    (X0, y0), (X1, y1) = _neighbours()

    def counts(X, y):
        # the noiseless histograms, in the release's order
        return [column_counts(X), row_extreme_counts(X), column_counts(y.reshape(-1, 1))]

    c0, c1 = counts(X0, y0), counts(X1, y1)
    changes = [b - a for a, b in zip(c0, c1, strict=True)]
    samples = {0: [[], [], []], 1: [[], [], []]}
    for side, (X, y) in enumerate([(X0, y0), (X1, y1)]):
        for _ in range(RUNS):
            for k, (noisy, _sigma) in enumerate(plan.histograms(X, y, releases)):
                samples[side][k].append(float((noisy * changes[k]).sum()))
    fails = variant != "correct"
    for k, event in enumerate(plan.plan.events):
        norm = math.sqrt((changes[k] ** 2).sum())
        # the canary moves each histogram by its full sensitivity, in every row
        assert norm == pytest.approx(event.sensitivity, rel=1e-12)
        stat0 = np.array(samples[0][k]) / norm
        stat1 = np.array(samples[1][k]) / norm
        midpoint = float(((c0[k] + c1[k]) * changes[k]).sum()) / 2 / norm
        bound = mu_lower_bound(stat0, stat1, midpoint, alpha=1e-6 / 3)
        claim = 1.0 / event.noise_multiplier
        if fails:
            assert bound.exceeds(claim), f"event {k}: half noise not caught: {bound} <= {claim}"
        else:
            assert not bound.exceeds(claim), f"event {k}: correct release refuted: {bound}"
            assert bound.mu > 0.5 * claim, f"event {k}: audit without power: {bound}"


def test_ranges_are_ordered_whatever_the_noise():
    """Spans read from pure noise (and from zeros alone) never have low above high."""
    from dpglm.preprocessing.ranges import _read_ranges

    rng = np.random.default_rng(seed_of("ordered ranges"))
    zero = GRID.magnitudes
    for _ in range(300):
        noisy = rng.normal(0.0, 1.0, (4, GRID.size))
        noisy[:, zero] += rng.choice([0.0, 6.0, 9.0], 4)
        low, high, found, hit = _read_ranges(noisy, 1.0, GRID)
        assert (low <= high).all() and not (found & ~hit).any()


def test_a_span_keeps_the_half_octave_its_records_fill():
    """A wider sum that overlaps the span found does not round it out to its own edges."""
    from dpglm.preprocessing.ranges import _read_ranges

    counts = np.zeros((1, GRID.size))
    # 1,000 records in the half-octave (362, 512], none around it
    counts[0, GRID.index(np.array([400.0]))[0]] = 1000.0
    low, high, found, _ = _read_ranges(counts, 1.0, GRID)
    assert found[0] and (low[0], high[0]) == pytest.approx((2**8.5, 512.0))


def test_a_bin_far_from_the_records_needs_the_far_threshold():
    """The fit of the README's first example with seed 572, before: its target's records
    end at 5e5, and one empty bin at 1.9e8 passed at 4.06 noise scales (the threshold of
    one false bin in a hundred releases), stretching the range 360-fold (R^2 -325). Far
    from the records a bin must pass the threshold of one in a million (5.8 scales here),
    near them the first one still counts (a thin tail's bins)."""
    from dpglm.preprocessing.ranges import NEAR_BINS, _read_ranges

    counts = np.zeros((1, GRID.size))
    bulk = GRID.index(np.array([1e5, 2e5, 4e5]))
    counts[0, bulk] = 2000.0
    far = GRID.index(np.array([1.5e8]))[0]
    counts[0, far] = 4.2  # past the near threshold, not the far one (sigma 1)
    _, high, found, _ = _read_ranges(counts, 1.0, GRID)
    assert found[0] and high[0] <= 2**19.5
    counts[0, far] = 7.0  # past both: a real cluster of records
    assert _read_ranges(counts, 1.0, GRID)[1][0] >= 1.5e8
    counts[0, far] = 0.0
    near = bulk.max() + NEAR_BINS
    counts[0, near] = 4.2  # a tail's bin within reach of the records counts at 4.2
    assert _read_ranges(counts, 1.0, GRID)[1][0] >= GRID.lower(np.array([near]))[0]


def test_wide_dense_records_give_the_common_range_by_their_one_percent_quantiles():
    """Beyond 100 dense columns the rows' 1% quantiles, not their extremes, make the range
    of the columns no histogram can read (madelon's shape: a few wide columns)."""
    from dpglm.preprocessing.ranges import row_quantiles, row_rank

    rng = np.random.default_rng(seed_of("row quantiles"))
    n, p = 2000, 500
    X = rng.normal(480.0, 15.0, (n, p))
    X[:, :3] = rng.uniform(0.0, 1000.0, (n, 3))  # the widest columns hold every extreme
    assert row_rank(p, sparse=False) == 5 and row_rank(100, sparse=False) == 1
    low, high = row_quantiles(X)
    assert (low > 380).mean() > 0.99 and (high < 580).mean() > 0.99
    # sparse rows keep their extremes: their zeros would be most of any quantile
    sparse_low, sparse_high = row_quantiles(sp.csr_array(np.array([[0.0, 2.0, 0.0]])))
    assert (sparse_low[0], sparse_high[0]) == (0.0, 2.0)
    model = DPLogisticRegression(random_state=0).fit(X, X[:, 10] > 480.0)
    read = model.scaling_
    # the columns' own histograms are too noisy at this size: the common range serves them
    found = re.search(
        r"(\d+) from the records' extremes", " ".join(model.privacy_report_.assumptions)
    )
    assert found and int(found.group(1)) >= 490
    # the narrow columns' range is that of the bulk, centred near it, not [0, 1024]
    narrow = slice(3, None)
    assert (read.low[narrow] >= 256.0).all() and (read.high[narrow] <= 724.1).all()
    centre = (read.low[narrow] + read.high[narrow]) / 2
    assert (np.abs(centre - 480.0) < 120.0).all()


def test_grid_puts_every_finite_value_in_one_bin():
    values = np.array([0.0, -0.0, 1e-300, -1e-300, 1.0, -1.0, 1e308, -1e308, 3.0, 2.0**40])
    bins = GRID.index(values)
    assert ((bins >= 0) & (bins < GRID.size)).all()
    # each value lies within its bin's edges, the grid's end bins aside
    inner = np.abs(values) <= 2.0**40
    inner &= np.abs(values) >= 2.0**GRID.low
    assert (GRID.lower(bins[inner]) <= values[inner]).all()
    assert (values[inner] <= GRID.upper(bins[inner])).all()


def test_penalty_applies_on_the_solver_scale():
    assert DPRidge(alpha=0.5)._penalty() == L2(0.5)
