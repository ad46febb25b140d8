"""Every default fit's epsilon, recomputed by dp-accounting from the report alone.

For each estimator and each solver that accepts it (default hyperparameters,
only ``epsilon`` and public feature bounds set), the report's mechanisms (kind,
count, noise scale, sensitivity, sampling) are turned into dp-accounting events
here, independently of dpglm's accountants, and composed by dp-accounting
under the report's own neighbouring relation: PLD when it analyses every
mechanism, Renyi DP otherwise. The result must meet the target.
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

EPSILON = 1.0
N, P = 2000, 6


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


def recompute(report):
    """(epsilon, how) of the report's mechanisms, by dp-accounting alone."""
    from dp_accounting.rdp import RdpAccountant

    relation = relation_of(report)
    plds = [pld_of(m, relation) for m in report.mechanisms]
    if all(p is not None for p in plds):
        total = plds[0]
        for one in plds[1:]:
            total = total.compose(one)
        return total.get_epsilon_for_delta(report.delta), "pld"
    accountant = RdpAccountant(neighboring_relation=relation)
    for m in report.mechanisms:
        accountant.compose(rdp_event_of(m))
    return accountant.get_epsilon(report.delta), "rdp"


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


def check_recomputed(model):
    report = model.privacy_report_
    assert report.guarantee and report.neighbouring == "replace_one"
    for m in report.mechanisms:
        if m.kind in ("gaussian", "sampled_gaussian", "laplace"):
            assert 0 < multiplier(m) < math.inf, m
    recomputed, how = recompute(report)
    # every mechanism the fit ran, accounted independently, meets the target; and the
    # report's own figure is neither above the target nor far below the recomputed one
    assert recomputed <= EPSILON * 1.02, (how, recomputed, report)
    assert report.epsilon <= EPSILON
    assert report.epsilon >= recomputed - 0.03 * EPSILON, (how, recomputed, report)
