"""Every default fit's epsilon, recomputed by dp-accounting from the report alone.

For each estimator and each solver that accepts it (default hyperparameters,
only ``epsilon`` and public feature bounds set), the report's mechanisms (kind,
count, noise scale, sensitivity, sampling) are turned into dp-accounting events
here, independently of dpglm's accountants, and composed by dp-accounting
under the report's own neighbouring relation: PLD when it analyses every
mechanism, Renyi DP otherwise. The result must meet the target.

A classifier fitted without ``classes=`` first selects its label set privately
(Gaussian noise on the label counts, L2 sensitivity ``sqrt(2)`` under
replace-one, then a threshold that lets the label of a single record pass with
probability at most its fixed delta), at its share of ``(epsilon, delta)``,
and fits the model at the rest. The two are composed by basic composition
(the model's plan depends on the labels kept), and so they are recomputed
here: each part by dp-accounting at its own delta, less the threshold's fixed
delta, and the two epsilons added.
"""

import math

import numpy as np
import pytest

from dpglm.estimators import (
    DPElasticNet,
    DPLasso,
    DPLinearRegression,
    DPLinearSVC,
    DPLogisticRegression,
    DPRidge,
)
from dpglm.preprocessing.label_sets import label_share

EPSILON = 1.0
N, P = 2000, 6
#: the part of a classifier's report that selected its label set privately
LABEL_PART = "label selection"
#: replace-one moves one record's label: one count loses one and another gains one
LABEL_SENSITIVITY = math.sqrt(2.0)


def data(task):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (N, P))
    w = np.array([1.0, -2.0, 0.5, 0.0, 0.0, 1.0])
    y = X @ w + 0.3 * rng.standard_normal(N)
    return X, (np.sign(y) if task == "classification" else y)


ESTIMATORS = {
    DPLinearRegression: ("auto", "dp-cd", "dp-gcd", "dp-sgd", "dp-agd"),
    DPRidge: ("auto", "dp-cd", "dp-gcd", "dp-sgd", "dp-scd", "dp-agd"),
    DPLasso: ("auto", "dp-cd", "dp-gcd", "dp-sgd"),
    DPElasticNet: ("auto", "dp-cd", "dp-gcd", "dp-sgd"),
    DPLogisticRegression: ("auto", "dp-cd", "dp-gcd", "dp-sgd", "dp-scd", "dp-agd"),
    DPLinearSVC: ("auto", "dp-sgd", "dp-scd"),
}
CASES = [(cls, solver) for cls, solvers in ESTIMATORS.items() for solver in solvers]


def relation_of(report):
    import dp_accounting

    return {
        "replace_one": dp_accounting.NeighboringRelation.REPLACE_ONE,
        "add_remove": dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
    }[report.neighbouring]


def randomized_response(epsilon):
    import dp_accounting

    return dp_accounting.RandomizedResponseDpEvent(2.0 / (1.0 + math.exp(epsilon)), 2)


def multiplier(mechanism):
    """Noise over sensitivity, from the two when the report states both."""
    if mechanism.noise_scale is None or mechanism.sensitivity is None:
        # per-coordinate sensitivities (DP-GCD, DP-CD): the report states the ratio only
        return mechanism.noise_multiplier
    ratio = mechanism.noise_scale / mechanism.sensitivity
    assert ratio == pytest.approx(mechanism.noise_multiplier, rel=1e-12)
    return ratio


def pld_of(mechanism, relation):
    """One mechanism's PLD from the report's numbers, or None if PLD has none."""
    import dp_accounting
    from dp_accounting.pld import privacy_loss_distribution as pld

    kind, details = mechanism.kind, mechanism.details
    if kind == "gaussian":
        one = pld.from_gaussian_mechanism(multiplier(mechanism))
    elif kind == "sampled_gaussian" and details["sampling"] == "poisson":
        replace = relation == dp_accounting.NeighboringRelation.REPLACE_ONE
        # per-record contribution: half the replace-one sensitivity, all of the add/remove one
        contribution = mechanism.sensitivity / (2.0 if replace else 1.0)
        one = pld.from_gaussian_mechanism(
            mechanism.noise_scale / contribution,
            sampling_prob=details["sampling_rate"],
            neighboring_relation=relation,
        )
    elif kind == "laplace":
        one = pld.from_laplace_mechanism(multiplier(mechanism))
    elif kind == "pure_dp" or (kind == "noisy_max" and details["noise"] != "gumbel"):
        one = pld.from_randomized_response(2.0 / (1.0 + math.exp(details["epsilon"])), 2)
    else:
        # zCDP costs, and Gumbel selections, whose zCDP bound (bounded range) is tighter
        return None
    return one.self_compose(mechanism.count) if mechanism.count > 1 else one


def rdp_event_of(mechanism):
    import dp_accounting

    kind, details = mechanism.kind, mechanism.details
    if kind == "gaussian":
        one = dp_accounting.GaussianDpEvent(multiplier(mechanism))
    elif kind == "sampled_gaussian":
        inner = dp_accounting.GaussianDpEvent(multiplier(mechanism))
        assert details["sampling"] == "without_replacement"
        one = dp_accounting.SampledWithoutReplacementDpEvent(
            details["dataset_size"], details["batch_size"], inner
        )
    elif kind == "laplace":
        one = dp_accounting.LaplaceDpEvent(multiplier(mechanism))
    elif kind == "zcdp" or (kind == "noisy_max" and details["noise"] == "gumbel"):
        one = dp_accounting.ZCDpEvent(details["rho"])
    elif kind in ("noisy_max", "pure_dp"):
        one = randomized_response(details["epsilon"])
    else:
        raise AssertionError(f"no dp-accounting event for {mechanism}")
    return dp_accounting.SelfComposedDpEvent(one, mechanism.count)


def fixed_delta(mechanisms):
    """The delta the thresholds cost whatever the noise: ``sum count * delta``."""
    return math.fsum(m.count * m.details["delta"] for m in mechanisms if m.kind == "threshold")


def composed(mechanisms, relation, delta):
    """(epsilon, how) of ``mechanisms`` at ``delta``, by dp-accounting alone.

    A threshold costs its fixed delta and no epsilon: the noisy mechanisms
    are accounted at ``delta`` less the thresholds' deltas.
    """
    from dp_accounting.rdp import RdpAccountant

    noisy = [m for m in mechanisms if m.kind != "threshold"]
    delta = delta - fixed_delta(mechanisms)
    assert noisy and delta > 0, (mechanisms, delta)
    plds = [pld_of(m, relation) for m in noisy]
    if all(p is not None for p in plds):
        total = plds[0]
        for one in plds[1:]:
            total = total.compose(one)
        return total.get_epsilon_for_delta(delta), "pld"
    accountant = RdpAccountant(neighboring_relation=relation)
    for m in noisy:
        accountant.compose(rdp_event_of(m))
    return accountant.get_epsilon(delta), "rdp"


def recompute(report, delta):
    """(epsilon, how) of the report's mechanisms, by dp-accounting alone.

    ``delta`` is the fit's. A label selection's part is accounted at its
    share of ``delta`` (the share of ``(epsilon, delta)`` that the public
    ``n``, ``epsilon`` and ``delta`` give it), the model's part at the rest,
    and the two epsilons add up (basic composition).
    """
    relation = relation_of(report)
    selection = [m for m in report.mechanisms if m.part == LABEL_PART]
    if not selection:
        return composed(report.mechanisms, relation, delta)
    model = [m for m in report.mechanisms if m.part != LABEL_PART]
    share = label_share(N, EPSILON, delta)
    selected, how = composed(selection, relation, share * delta)
    # the selection's own figure, recomputed from its Gaussian counts and threshold alone
    assert selected <= share * EPSILON * 1.02, (how, selected, share, report)
    assert report.parts[LABEL_PART] >= selected - 0.03 * share * EPSILON, (selected, report)
    fitted, model_how = composed(model, relation, (1.0 - share) * delta)
    return selected + fitted, f"{how} + {model_how}"


@pytest.mark.parametrize(("cls", "solver"), CASES, ids=lambda v: getattr(v, "__name__", v))
def test_default_fit_epsilon_recomputed_by_dp_accounting(cls, solver):
    task = "classification" if cls in (DPLogisticRegression, DPLinearSVC) else "regression"
    X, y = data(task)
    params = {"epsilon": EPSILON, "solver": solver, "feature_bounds": 1.0}
    check_recomputed(cls(**params).fit(X, y))


#: more than two classes: multinomial (DP-SGD by default, DP-AGD) and one-vs-rest
MULTICLASS = [
    (DPLogisticRegression, "auto"),
    (DPLogisticRegression, "dp-agd"),
    (DPLogisticRegression, "dp-cd"),
    (DPLogisticRegression, "dp-gcd"),
    (DPLinearSVC, "auto"),
    (DPLinearSVC, "dp-agd"),
    (DPLinearSVC, "dp-scd"),
]


@pytest.mark.parametrize(("cls", "solver"), MULTICLASS, ids=lambda v: getattr(v, "__name__", v))
def test_multiclass_fit_epsilon_recomputed_by_dp_accounting(cls, solver):
    """Three classes, with the private ranges: every class's releases, recomputed."""
    X, _ = data("classification")
    y = np.argmax(X[:, :3], axis=1)
    model = cls(epsilon=EPSILON, solver=solver).fit(X, y)
    assert model.multi_class_ in ("multinomial", "ovr")
    check_recomputed(model)


def check_label_selection(report):
    """The label set selected privately: a Gaussian release of the counts, then a threshold,
    listed first as its own part."""
    counts, threshold = report.mechanisms[:2]
    assert counts.part == threshold.part == LABEL_PART
    assert (counts.kind, threshold.kind) == ("gaussian", "threshold")
    assert counts.count == threshold.count == 1
    assert counts.sensitivity == pytest.approx(LABEL_SENSITIVITY, rel=1e-12)
    assert [m.part for m in report.mechanisms[2:]].count(LABEL_PART) == 0
    assert 0 < threshold.details["delta"] < report.delta
    assert next(iter(report.parts)) == LABEL_PART
    lines = report.assumptions
    assert any(line.startswith("label set ") and " selected privately (" in line for line in lines)


def check_recomputed(model):
    report = model.privacy_report_
    assert report.guarantee and report.neighbouring == "replace_one"
    for m in report.mechanisms:
        if m.kind in ("gaussian", "sampled_gaussian", "laplace"):
            assert 0 < multiplier(m) < math.inf, m
    if hasattr(model, "classes_"):
        check_label_selection(report)
    # the default delta, 1 / n^2, all of which the fit spends
    assert model.delta_ == pytest.approx(1.0 / N**2, rel=1e-12)
    assert report.delta <= model.delta_ and report.delta == pytest.approx(model.delta_)
    recomputed, how = recompute(report, model.delta_)
    # every mechanism the fit ran, accounted independently, meets the target; and the
    # report's own figure is neither above the target nor far below the recomputed one
    assert recomputed <= EPSILON * 1.02, (how, recomputed, report)
    assert report.epsilon <= EPSILON
    assert report.epsilon >= recomputed - 0.03 * EPSILON, (how, recomputed, report)
