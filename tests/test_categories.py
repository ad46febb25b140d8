"""The private selection of the values of categorical columns.

The plan: a Gaussian release of every observed value's count (sensitivity
``sqrt(2c)``) and a threshold event of half of delta, calibrated together to
the target. Two audits: a value one record alone holds is kept at the rate the
threshold claims (a binomial test of 20,000 runs that half the noise, or a
threshold set for ``c`` values instead of ``2c``, fails), and the noisy counts
projected on a canary's change have the variance the report claims (a
chi-square test and a Gaussian-DP audit that half the noise fails). Then the
selection itself: frequent values kept, rare ones dropped, missing markers one
level, the order of the output, and columns of many distinct values.
"""

import math
import time

import numpy as np
import pytest
from scipy.stats import binom, chi2, norm

from dpglm.audit import mu_lower_bound
from dpglm.preprocessing import categories
from dpglm.preprocessing.categories import (
    COUNTS_LABEL,
    MISSING,
    THRESHOLD_LABEL,
    CategoryPlan,
    count_levels,
    level_of,
    missing_markers,
    select,
    sort_levels,
)
from dpglm.privacy.accounting import compute_epsilon
from dpglm.privacy.events import GaussianEvent, PrivacyPlan, ThresholdEvent
from dpglm.privacy.spending import spend
from solver_problems import seed_of, with_less_noise

# -- the plan ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("c", "epsilon", "delta"), [(1, 1.0, 1e-6), (8, 0.1, 1e-9)])
def test_the_plan_meets_its_target_with_half_of_delta_for_the_threshold(c, epsilon, delta):
    plan = CategoryPlan.create(10_000, c, epsilon, delta)
    gaussian, cut = plan.plan.events
    assert isinstance(gaussian, GaussianEvent) and isinstance(cut, ThresholdEvent)
    assert gaussian.fixed and gaussian.sensitivity == math.sqrt(2 * c)
    assert (gaussian.label, cut.label) == (COUNTS_LABEL, THRESHOLD_LABEL)
    assert gaussian.part == cut.part == "preprocessing"
    assert cut.delta == pytest.approx(delta / 2, rel=1e-15)
    total = compute_epsilon(plan.plan, delta)
    assert total <= epsilon and total == pytest.approx(epsilon, rel=1e-3)
    # the Gaussian release alone, at the other half of delta, is the whole cost
    alone = compute_epsilon(PrivacyPlan([gaussian]), delta - cut.delta)
    assert alone == pytest.approx(total, rel=1e-12)
    sigma = gaussian.noise_multiplier * math.sqrt(2 * c)
    assert plan.noise_scale == pytest.approx(sigma, rel=1e-15)
    # a value of count 1 passes with probability delta_t / (2c)
    assert plan.threshold == pytest.approx(1 + sigma * norm.isf(cut.delta / (2 * c)), rel=1e-12)
    assert norm.sf((plan.threshold - 1) / sigma) == pytest.approx(cut.delta / (2 * c), rel=1e-6)


def test_the_default_delta_is_one_over_n_squared():
    plan = CategoryPlan.create(1_000, 2, 1.0)
    assert plan.plan.events[1].delta == pytest.approx(0.5e-6, rel=1e-12)
    assert compute_epsilon(plan.plan, 1e-6) <= 1.0


def test_infinite_epsilon_keeps_every_observed_value_without_noise():
    plan = CategoryPlan.create(5, 1, math.inf, 1e-3)
    assert plan.threshold == 0.0 and plan.noise_scale == 0.0
    spent = spend(plan.plan, epsilon=math.inf, delta=1e-3)
    kept = select([["a", "b", "b", None, "c"]], plan, spent.release(0))
    assert kept[0].tolist() == ["a", "b", "c", MISSING]
    assert spent.report.non_private


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((0, 1, 1.0, 1e-6), "n_samples must be an integer >= 1"),
        ((10, 0, 1.0, 1e-6), "n_columns must be an integer >= 1"),
        ((10, 1.5, 1.0, 1e-6), "n_columns must be an integer"),
        ((10, 1, 0.0, 1e-6), "epsilon must be positive"),
        ((10, 1, 1.0, 0.0), "delta must be > 0 for a private selection"),
    ],
)
def test_bad_plan_parameters_are_refused(args, match):
    with pytest.raises(ValueError, match=match):
        CategoryPlan.create(*args)


# -- audits --------------------------------------------------------------------------------------

#: a one-record value passes with probability DELTA_T / 2 = 1e-2 (one column)
SINGLETON_EPSILON, SINGLETON_DELTA, SINGLETON_RUNS = 1.0, 0.04, 20_000


def _broken_threshold(monkeypatch):
    """The threshold of c values per pair of neighbours instead of 2c (twice the rate)."""
    real = categories.selection_threshold

    def threshold(sigma, delta, n_columns):
        return real(sigma, 2.0 * delta, n_columns)

    monkeypatch.setattr(categories, "selection_threshold", threshold)


@pytest.mark.parametrize("variant", ["correct", "half noise", "threshold for c values"])
def test_a_value_one_record_holds_is_kept_at_the_rate_the_threshold_claims(
    variant, monkeypatch, request
):
    """20,000 selections of a column where ``"rare"`` has count 1.

    Each keeps it with probability exactly ``delta_t / (2c) = 1e-2`` (its noisy
    count is ``1 + N(0, sigma**2)``, the threshold ``1 + sigma z``), the bound
    the privacy argument needs. The number kept is tested two-sided against
    Binomial(20000, 1e-2), each side at 0.5e-6: above it, the threshold lets
    more one-record values through than the plan's delta pays for (the
    threshold set for ``c`` values keeps it at 2e-2, about 400 times); below
    it, the noise is not the calibrated one (half of it keeps the value at
    ``P[N > 2 z] = 1.7e-6``, about never).
    """
    if variant == "half noise":
        with_less_noise(monkeypatch)
    elif variant == "threshold for c values":
        _broken_threshold(monkeypatch)
    column = np.array(["common"] * 100 + ["rare"], dtype=object)
    plan = CategoryPlan.create(101, 1, SINGLETON_EPSILON, SINGLETON_DELTA)
    bound = plan.plan.events[1].delta / 2
    assert bound == pytest.approx(1e-2)
    rng = np.random.default_rng(seed_of(request.node.name))
    spent = spend(plan.plan, epsilon=SINGLETON_EPSILON, delta=SINGLETON_DELTA, random_state=rng)
    release = spent.release(0)
    kept = sum("rare" in select([column], plan, release)[0] for _ in range(SINGLETON_RUNS))
    not_too_many = binom.sf(kept - 1, SINGLETON_RUNS, bound) > 0.5e-6
    not_too_few = binom.cdf(kept, SINGLETON_RUNS, bound) > 0.5e-6
    if variant == "correct":
        assert not_too_many and not_too_few, f"kept {kept} of {SINGLETON_RUNS} at {bound}"
    elif variant == "half noise":
        assert not not_too_few, f"half noise not caught: kept {kept} times"
    else:
        assert not not_too_many, f"threshold for c values not caught: kept {kept} times"


def _canary_columns():
    """Two columns of common values; the canary record turns ("a", "x") into ("b", "y")."""
    D0 = [np.array(["a"] * 30 + ["b"] * 30, dtype=object), np.array(["x"] * 30 + ["y"] * 30)]
    D1 = [column.copy() for column in D0]
    D1[0][0], D1[1][0] = "b", "y"
    return D0, D1


AUDIT_RUNS = 4_000
#: a target whose mu (about 2) the runs resolve, and the chi-square's power at half noise
AUDIT_EPSILON, AUDIT_DELTA = 8.0, 1e-5


@pytest.mark.parametrize("variant", ["correct", "half noise"])
def test_the_noisy_counts_have_the_variance_the_report_claims(variant, monkeypatch, request):
    """The noisy counts projected on the canary's change, on both neighbours.

    The canary moves one count down and one up in each column: the change has
    norm ``sqrt(2c)``, the sensitivity. Standardised by the report's noise
    scale, the projections of ``AUDIT_RUNS`` releases on ``D0`` are standard
    normals: their sum of squares is chi-square, tested two-sided at 1e-6 (half
    the noise divides it by 4). The releases on ``D0`` and ``D1`` together
    bound the Gaussian-DP ``mu`` from below (at 1e-6), which must not exceed
    the claimed ``1 / z`` (and half the noise doubles it).
    """
    if variant == "half noise":
        with_less_noise(monkeypatch)
    plan = CategoryPlan.create(60, 2, AUDIT_EPSILON, AUDIT_DELTA)
    rng = np.random.default_rng(seed_of(request.node.name))
    spent = spend(plan.plan, epsilon=AUDIT_EPSILON, delta=AUDIT_DELTA, random_state=rng)
    release = spent.release(0)
    (record,) = [m for m in spent.report.mechanisms if m.kind == "gaussian"]
    sigma = record.noise_scale
    D0, D1 = _canary_columns()
    exact = [plan.counts(D) for D in (D0, D1)]
    # every level is observed on both sides, in the same order
    assert [list(c) for c in exact[0]] == [list(c) for c in exact[1]] == [["a", "b"], ["x", "y"]]
    vectors = [np.array([n for c in counts for n in c.values()], float) for counts in exact]
    change = vectors[1] - vectors[0]
    norm_ = float(np.linalg.norm(change))
    assert norm_ == pytest.approx(plan.sensitivity, rel=1e-12) == record.sensitivity
    stats = []
    for counts in exact:
        runs = []
        for _ in range(AUDIT_RUNS):
            noisy = np.concatenate([values for _, values in plan.noisy_counts(counts, release)])
            runs.append(float(noisy @ change) / norm_)
        stats.append(np.array(runs))
    expected = [float(v @ change) / norm_ for v in vectors]
    statistic = float((((stats[0] - expected[0]) / sigma) ** 2).sum())
    low, high = chi2.ppf(0.5e-6, AUDIT_RUNS), chi2.isf(0.5e-6, AUDIT_RUNS)
    bound = mu_lower_bound(stats[0], stats[1], sum(expected) / 2, alpha=1e-6)
    claim = 1.0 / record.noise_multiplier
    if variant == "correct":
        assert low < statistic < high, (statistic, low, high)
        assert not bound.exceeds(claim), f"correct release refuted: {bound}"
        assert bound.mu > 0.5 * claim, f"audit without power: {bound}"
    else:
        assert statistic < low, f"half noise not caught: {statistic} >= {low}"
        assert bound.exceeds(claim), f"half noise not caught: {bound} <= {claim}"


def test_the_counts_move_by_at_most_the_sensitivity_for_any_neighbour():
    """Replacing one record changes the counts (0 for a value absent) by at most sqrt(2c)."""
    rng = np.random.default_rng(0)
    D = [rng.choice(["a", "b", "c"], 200).astype(object) for _ in range(3)]
    D[0][7], D[1][7], D[2][7] = "a", "b", "c"
    replacements = {
        ("a", "b", "c"): 0.0,  # the same record
        ("b", "b", "c"): math.sqrt(2),  # one column changes
        ("new", "b", None): 2.0,  # two columns, to values absent from D
        ("z", "y", "x"): math.sqrt(6),  # every column: the sensitivity
    }
    for values, expected in replacements.items():
        D1 = [column.copy() for column in D]
        for j, value in enumerate(values):
            D1[j][7] = value
        moved = 0.0
        for before, after in zip(D, D1, strict=True):
            c0, c1 = count_levels(before), count_levels(after)
            moved += sum((c1.get(v, 0) - c0.get(v, 0)) ** 2 for v in set(c0) | set(c1))
        assert math.sqrt(moved) == pytest.approx(expected, abs=1e-12), values
        assert math.sqrt(moved) <= CategoryPlan.create(200, 3, 1.0, 1e-6).sensitivity + 1e-12


# -- the selection ----------------------------------------------------------------------------


def test_frequent_values_are_kept_and_rare_ones_are_not():
    rng = np.random.default_rng(1)
    n = 20_000
    colour = rng.choice(["red", "green", "blue"], n, p=[0.5, 0.3, 0.2]).astype(object)
    colour[:5] = "violet"  # five records: far below the threshold
    size = rng.choice(["S", "M"], n).astype(object)
    size[:2000] = None
    plan = CategoryPlan.create(n, 2, 1.0, 1e-8)
    assert 5 + 5 * plan.noise_scale < plan.threshold < 2000 - 6 * plan.noise_scale
    spent = spend(plan.plan, epsilon=1.0, delta=1e-8, random_state=0)
    kept = select([colour, size], plan, spent.release(0))
    assert [k.tolist() for k in kept] == [["blue", "green", "red"], ["M", "S", MISSING]]


def test_missing_markers_are_one_level():
    values = ["a", None, float("nan"), np.nan, "?", "n/a", "a", MISSING]
    assert count_levels(values, ("?", "n/a")) == {"a": 2, MISSING: 6}
    # without markers, "?" and "n/a" are values like any other
    assert count_levels(values) == {"?": 1, "a": 2, "n/a": 1, MISSING: 4}
    pd = pytest.importorskip("pandas")
    assert level_of(pd.NA) == level_of(pd.NaT) == MISSING
    assert count_levels(pd.array(["a", None, "a"], dtype="string")) == {"a": 2, MISSING: 1}


def test_absent_values_have_no_count():
    counts = count_levels(np.array(["b", "a", "b"]))
    assert counts == {"a": 1, "b": 2}
    assert all(isinstance(level, str) for level in counts)  # numpy's strings as str


def test_levels_are_sorted_by_their_string_form_with_missing_last():
    assert sort_levels(["b", MISSING, 10, "a", 2]).tolist() == [10, 2, "a", "b", MISSING]
    assert list(count_levels(["z", None, "y"])) == ["y", "z", MISSING]


def test_missing_markers_must_be_strings():
    assert missing_markers(("?",)) == ("?",)
    for bad in (1, [None], ["?", 3]):
        with pytest.raises(ValueError, match="missing_values must be None, a string"):
            missing_markers(bad)


def test_the_columns_must_match_the_plan():
    plan = CategoryPlan.create(3, 2, 1.0, 1e-3)
    with pytest.raises(ValueError, match="selects the values of 2 columns, got 1"):
        plan.counts([["a", "b", "c"]])
    with pytest.raises(ValueError, match="column 1 has 2 records"):
        plan.counts([["a", "b", "c"], ["a", "b"]])


def test_a_column_of_many_distinct_values_is_counted_quickly():
    rng = np.random.default_rng(2)
    n, k = 200_000, 800
    names = np.array([f"value {i:04d}" for i in range(k)], dtype=object)
    column = names[rng.integers(0, k, n)]
    start = time.perf_counter()
    counts = count_levels(column)
    elapsed = time.perf_counter() - start
    levels, exact = np.unique(column.astype(str), return_counts=True)
    assert list(counts) == levels.tolist()
    assert list(counts.values()) == exact.tolist()
    assert elapsed < 1.0, f"counting {n} records of {k} values took {elapsed:.2f} s"
    plan = CategoryPlan.create(n, 1, 1.0, 1e-9)
    spent = spend(plan.plan, epsilon=1.0, delta=1e-9, random_state=0)
    # every value is held by about 250 records, far above the threshold
    assert plan.threshold < 100
    assert select([column], plan, spent.release(0))[0].tolist() == levels.tolist()
