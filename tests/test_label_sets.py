"""A classifier's label set on its default path: selected privately, charged, reported.

Without ``classes=``, the label set a classifier releases is selected with
noisy counts and a threshold (:mod:`dpglm.preprocessing.label_sets`): a label
of one record never shows, the selection's noise is the plan's (a half-noise
variant is caught), the fit's two charges add up to its target, and public
labels skip it.
"""

import math

import numpy as np
import pytest
from scipy.stats import norm

from dpglm.data import load
from dpglm.estimators import DPLinearSVC, DPLogisticRegression
from dpglm.exceptions import BudgetExceededError, TargetError
from dpglm.preprocessing.label_sets import (
    LABEL_FRACTION,
    LABEL_RECORDS,
    MAX_SHARE,
    MIN_SHARE,
    SMALL_FRACTION,
    KeptLabels,
    LabelSelection,
    label_share,
    relabelled,
)
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.events import GaussianEvent
from dpglm.privacy.mechanisms import make_noise_source
from dpglm.privacy.releases import Release

N = 20_000


def labelled(n=N, seed=0, rare=0):
    """Two features; labels 'no' / 'yes' from the first, and ``rare`` labels of one record."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, "yes", "no").astype(object)
    y[:rare] = [f"id{k:04d}" for k in range(rare)]
    return X, y


# -- the share and the threshold ---------------------------------------------------------------


@pytest.mark.parametrize("n", [300, 1_000, 2_000, 15_000, 100_000, 10**7])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_the_share_is_the_least_that_puts_the_threshold_under_its_target(n, epsilon):
    delta = 1.0 / n**2
    share = label_share(n, epsilon, delta)
    assert MIN_SHARE <= share <= MAX_SHARE

    plan = LabelSelection.create(n, epsilon, delta).plan
    assert plan.n_columns == 1 and plan.sensitivity == pytest.approx(math.sqrt(2.0))
    target = max(LABEL_FRACTION * n, min(LABEL_RECORDS, SMALL_FRACTION * n))
    if share < MAX_SHARE:
        assert plan.threshold <= target
    if share > MIN_SHARE:  # one hundredth less would not do
        from dpglm.preprocessing.categories import CategoryPlan

        less = CategoryPlan.create(n, 1, (share - 0.01) * epsilon, (share - 0.01) * delta)
        assert less.threshold > target


def test_too_few_records_are_refused_before_anything_is_charged():
    budget = PrivacyBudget(10.0, 1e-3)
    X, y = labelled(n=150)
    with pytest.raises(TargetError, match="too few to select the label set privately"):
        DPLogisticRegression(epsilon=1.0, budget=budget).fit(X, y)
    assert budget.charges == ()
    # the public label set needs no selection
    model = DPLogisticRegression(epsilon=1.0, budget=budget, classes=["no", "yes"]).fit(X, y)
    assert len(budget.charges) == 1 and "label selection" not in model.privacy_report_.parts


def test_delta_zero_without_classes_is_refused_before_the_charge():
    budget = PrivacyBudget(10.0, 1e-3)
    X, y = labelled()
    options = {"noise": "paper", "accountant": "basic"}
    model = DPLogisticRegression(
        epsilon=1.0,
        delta=0.0,
        budget=budget,
        solver="dp-gcd",
        solver_options=options,
        feature_bounds=5.0,
    )
    with pytest.raises(ValueError, match=r"delta=0\) cannot select its label set privately"):
        model.fit(X, y)
    assert budget.charges == ()


# -- what is released --------------------------------------------------------------------------


def test_labels_of_single_records_are_never_released():
    X, y = labelled(rare=300)
    for seed in range(3):
        model = DPLogisticRegression(epsilon=1.0, random_state=seed).fit(X, y)
        assert model.classes_.tolist() == ["no", "yes"]
        assert set(model.predict(X).tolist()) <= {"no", "yes"}
        assert model.score(X[300:], y[300:]) > 0.85


def test_records_of_a_label_not_kept_take_the_fallback():
    data = load(np.zeros((6, 1)), ["a", "b", "c", "b", "c", "c"], task="classification")
    for fallback, expected in (("c", ["c", "b", "c", "b", "c", "c"]), ("b", list("bbcbcc"))):
        kept = relabelled(data, KeptLabels(type(data.labels).of(["b", "c"]), fallback))
        assert kept.labels.classes.tolist() == ["b", "c"]
        assert kept.decode(kept.y).tolist() == expected
    three = load(np.zeros((5, 1)), ["a", "b", "c", "d", "a"], task="classification")
    kept = relabelled(three, KeptLabels(type(three.labels).of(["a", "b", "d"]), "a"))
    assert kept.decode(kept.y).tolist() == ["a", "b", "a", "d", "a"]
    assert kept.y.tolist() == [0.0, 1.0, 0.0, 2.0, 0.0]


def test_a_selection_that_keeps_one_label_is_a_clear_error_after_its_charge():
    budget = PrivacyBudget(10.0, 1e-3)
    X, y = labelled(n=400)
    y[:] = "no"
    y[:5] = "yes"  # 5 records: far under the threshold
    with pytest.raises(TargetError, match=r"kept 1 label\(s\) \['no'\].*classes="):
        DPLogisticRegression(epsilon=1.0, budget=budget, random_state=0).fit(X, y)
    (charge,) = budget.charges  # the selection's, and nothing else
    assert {e.part for e in charge.plan.events} == {"label selection"}


# -- the noise, audited --------------------------------------------------------------------


@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_the_counts_noise_is_the_plans_and_half_of_it_is_caught(scale):
    """Labels whose count is one noise scale under the threshold pass with probability
    Phi(-1) = 0.159; with half the noise, Phi(-2) = 0.023. Over 20,000 labels the kept
    fraction's standard deviation is 0.0026, and 5 of them (failure below 1e-6) lie far
    inside the gap."""
    selection = LabelSelection.create(N, 1.0, 1.0 / N**2)
    plan = selection.plan
    sigma = plan.noise_scale
    labels = 20_000
    counts = np.full(labels, plan.threshold - sigma)
    event = GaussianEvent(noise_multiplier=scale * sigma / plan.sensitivity)
    release = Release(event.frozen(), make_noise_source(1234))
    kept = selection.keep(np.arange(labels), counts, release)
    fraction = kept.n_classes / labels
    expected = norm.cdf(-1.0)
    tolerance = 5.0 * math.sqrt(expected * (1 - expected) / labels)
    if scale == 1.0:
        assert abs(fraction - expected) < tolerance
    else:
        assert abs(fraction - expected) > tolerance


def test_the_plan_calibrates_the_counts_at_sensitivity_sqrt_2_and_the_threshold_from_it():
    selection = LabelSelection.create(N, 1.0, 1.0 / N**2)
    counts, cut = selection.plan.plan.events
    assert (counts.kind, cut.kind) == ("gaussian", "threshold")
    assert counts.sensitivity == pytest.approx(math.sqrt(2.0))
    assert {counts.part, cut.part} == {"label selection"}
    z = -norm.ppf(cut.delta / 2.0)
    assert selection.plan.threshold == pytest.approx(1.0 + selection.plan.noise_scale * z)
    # the plan meets the selection's own target and no more
    from dpglm.privacy.report import PrivacyReport

    report = PrivacyReport.from_plan(selection.plan.plan, selection.delta)
    assert report.epsilon <= selection.epsilon * (1 + 1e-9)
    assert report.epsilon >= 0.99 * selection.epsilon


# -- the fit's accounting ------------------------------------------------------------------


@pytest.mark.parametrize("cls", [DPLogisticRegression, DPLinearSVC])
def test_the_fit_charges_the_selection_then_the_model_and_they_add_up(cls):
    budget = PrivacyBudget(10.0, 1e-3)
    X, y = labelled()
    delta = 1.0 / N**2
    model = cls(epsilon=1.0, budget=budget, random_state=0).fit(X, y)
    selection, fit = budget.charges
    share = label_share(N, 1.0, delta)
    assert {e.part for e in selection.plan.events} == {"label selection"}
    assert "label selection" not in {e.part for e in fit.plan.events}
    report = model.privacy_report_
    assert share * 0.99 <= report.parts["label selection"] <= share * (1 + 1e-9)
    assert 0.999 <= report.epsilon <= 1.0 + 1e-9
    assert report.delta == pytest.approx(delta) and report.delta <= delta * (1 + 1e-12)
    assert [m.part for m in report.mechanisms][:2] == ["label selection"] * 2
    line = next(a for a in report.assumptions if a.startswith("label set"))
    assert "selected privately" in line and "read from the data" not in line
    # the plan of the model, known before the data, is what the fit charged after the selection
    plan, _ = cls(epsilon=1.0, random_state=0).planned_fit(N, 2)
    assert plan.to_dict() == fit.plan.to_dict()


def test_public_labels_and_a_non_private_fit_select_nothing():
    X, y = labelled()
    budget = PrivacyBudget(10.0, 1e-3)
    model = DPLogisticRegression(epsilon=1.0, budget=budget, classes=["no", "yes"]).fit(X, y)
    assert len(budget.charges) == 1
    assert "label selection" not in model.privacy_report_.parts
    exact = DPLogisticRegression(epsilon=math.inf).fit(*labelled(rare=3))
    assert exact.classes_.tolist() == ["id0000", "id0001", "id0002", "no", "yes"]
    assert any("read from the data" in a for a in exact.privacy_report_.assumptions)


def test_more_than_two_classes_keep_every_frequent_one():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(N, 3))
    z = X @ rng.normal(size=3)
    y = np.array(list("abcde"))[np.digitize(z, np.quantile(z, [0.2, 0.4, 0.6, 0.8]))]
    y[:2] = "z"
    model = DPLogisticRegression(epsilon=1.0, random_state=0).fit(X, y)
    assert model.classes_.tolist() == list("abcde")
    assert model.coef_.shape == (5, 3)


def test_a_dask_target_is_selected_as_in_memory():
    da = pytest.importorskip("dask.array")
    X, y = labelled(rare=40)
    local = DPLogisticRegression(epsilon=1.0, random_state=3, solver="dp-sgd").fit(X, y)
    sharded = DPLogisticRegression(epsilon=1.0, random_state=3, solver="dp-sgd").fit(
        da.from_array(X, chunks=(5_000, 2)), da.from_array(y, chunks=5_000)
    )
    assert sharded.classes_.tolist() == local.classes_.tolist() == ["no", "yes"]
    assert sharded.privacy_report_.parts["label selection"] == pytest.approx(
        local.privacy_report_.parts["label selection"]
    )
    np.testing.assert_allclose(sharded.coef_, local.coef_, rtol=1e-8)


def test_a_budget_that_cannot_afford_the_model_after_the_selection_charges_nothing():
    X, y = labelled()
    # the budget composes its charges with its own accountant (tighter than the report's
    # basic composition of the two): 0.3 is under what a fit at epsilon 1 spends there
    budget = PrivacyBudget(0.3, 1e-3)
    with pytest.raises(BudgetExceededError, match=r"label selection .* nothing was charged"):
        DPLogisticRegression(epsilon=1.0, budget=budget).fit(X, y)
    assert budget.charges == ()
    DPLogisticRegression(epsilon=0.3, budget=budget).fit(X, y)  # what it can afford
    assert len(budget.charges) == 2


def test_a_fit_that_leaves_out_many_records_labels_warns_and_says_how_many():
    """Ten classes of 160 records in 6,000: the threshold (about 300) keeps none of the
    small ones; the kept labels' noisy counts say how many records they hold (4,400)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(6_000, 2))
    y = np.array(["big"] * 4_400 + [f"c{k}" for k in range(10) for _ in range(160)], dtype=object)
    y[:600] = "other"
    with pytest.warns(UserWarning, match=r"hold about \d+% of the records .* classes="):
        model = DPLogisticRegression(epsilon=1.0, random_state=0).fit(X, y)
    assert model.classes_.tolist() == ["big", "other"]
    line = next(a for a in model.privacy_report_.assumptions if a.startswith("label set"))
    coverage = int(line.split("holding about ")[1].split("%")[0])
    assert 65 <= coverage <= 81  # 73 %: the noise on the sum of two counts is 1.1 %


def test_the_selection_draws_a_stream_apart_from_every_spawned_child():
    """A pipeline's private steps take the seed's children 1, 2, ..., the category
    selection child 0: the label selection's stream is none of them, nor the seed's own."""
    from dpglm.estimators.labels import label_random_state
    from dpglm.estimators.tables import child_random_states

    for seed in (0, 7, np.random.SeedSequence(11)):
        draws = np.random.default_rng(label_random_state(seed)).normal(size=8)
        others = [np.random.default_rng(s).normal(size=8) for s in child_random_states(seed, 6)]
        others.append(np.random.default_rng(seed).normal(size=8))
        assert all(not np.allclose(draws, other) for other in others)
    again = np.random.SeedSequence(11)
    label_random_state(again)
    assert again.n_children_spawned == 0  # a given SeedSequence is not advanced


def test_a_table_whose_labels_are_refused_is_refused_before_the_category_charge():
    import pandas as pd

    rng = np.random.default_rng(2)
    X = pd.DataFrame({"x": rng.normal(size=3_000), "city": rng.choice(["a", "b"], 3_000)})
    budget = PrivacyBudget(10.0, 1e-3)
    with pytest.raises(TargetError, match="only one class"):
        DPLogisticRegression(epsilon=1.0, budget=budget).fit(X, np.full(3_000, "yes"))
    assert budget.charges == ()


def test_a_search_over_a_pipeline_reports_no_more_than_its_target():
    from sklearn.pipeline import make_pipeline

    from dpglm.preprocessing import PrivateStandardScaler
    from dpglm.tuning import PrivateSearchCV

    X, y = labelled(n=6_000)
    search = PrivateSearchCV(
        make_pipeline(PrivateStandardScaler(), DPLogisticRegression(feature_bounds=5.0)),
        {"dplogisticregression__alpha": [1e-4, 1e-3]},
        epsilon=2.0,
        delta=1e-7,
        random_state=7,
    ).fit(X, y)
    report = search.privacy_report_
    assert report.delta <= 1e-7 and report.epsilon <= 2.0
    assert "label selection" in report.parts


def test_a_budget_too_small_for_dask_records_charges_nothing():
    da = pytest.importorskip("dask.array")
    X, y = labelled()
    budget = PrivacyBudget(0.3, 1e-3)
    chunks = da.from_array(X, chunks=(5_000, 2)), da.from_array(y, chunks=5_000)
    with pytest.raises(BudgetExceededError, match="nothing was charged"):
        DPLogisticRegression(epsilon=1.0, budget=budget).fit(*chunks)
    assert budget.charges == ()
