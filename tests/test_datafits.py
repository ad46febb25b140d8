"""Properties of the datafits: derivatives, curvature, conjugates and dual steps."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from dpglm.datafits import (
    Datafit,
    Hinge,
    Huber,
    Logistic,
    Squared,
    SquaredHinge,
    get_datafit,
)

ALL = [Squared(), Logistic(), Hinge(), SquaredHinge(), Huber(0.7)]
SMOOTH = [d for d in ALL if d.smooth]
IDS = [d.name for d in ALL]

margins = st.floats(-30, 30, allow_nan=False)
labels = st.sampled_from([-1.0, 1.0])
regression_targets = st.floats(-20, 20, allow_nan=False)


def target(datafit, draw_label, draw_value):
    return draw_label if datafit.binary_labels else draw_value


def kink(datafit, z, y):
    """Distance to the points where the loss is not twice differentiable."""
    if isinstance(datafit, Hinge | SquaredHinge):
        return abs(y * z - 1.0)
    if isinstance(datafit, Huber):
        return abs(abs(z - y) - datafit.delta)
    return np.inf


@pytest.mark.parametrize("datafit", ALL, ids=IDS)
@settings(max_examples=200, deadline=None)
@given(z=margins, label=labels, value=regression_targets)
def test_derivative_matches_finite_differences(datafit, z, label, value):
    y = target(datafit, label, value)
    h = 1e-6
    assume(kink(datafit, z, y) > 10 * h)
    zz = np.array([z - h, z + h])
    fd = np.diff(datafit.loss(zz, y))[0] / (2 * h)
    grad = datafit.derivative(np.array([z]), y)[0]
    assert grad == pytest.approx(fd, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("datafit", SMOOTH, ids=[d.name for d in SMOOTH])
@settings(max_examples=200, deadline=None)
@given(z=margins, label=labels, value=regression_targets, h=st.floats(1e-4, 3.0))
def test_curvature_bounds_derivative_changes(datafit, z, label, value, h):
    y = target(datafit, label, value)
    d = datafit.derivative(np.array([z, z + h]), y)
    assert abs(d[1] - d[0]) <= datafit.curvature * h * (1 + 1e-9) + 1e-12


def test_curvature_constants():
    # the sup of l'' is attained: these are the exact constants, not loose bounds
    assert Squared().curvature == 1.0
    assert Logistic().curvature == 0.25
    assert SquaredHinge().curvature == 2.0
    assert Huber().curvature == 1.0
    assert not Hinge().smooth
    h = 1e-5
    d = Logistic().derivative(np.array([-h, h]), 1.0)
    assert (d[1] - d[0]) / (2 * h) == pytest.approx(0.25, rel=1e-6)


def dual_point(datafit, z, y):
    """A subgradient of the loss at z: the dual point where Fenchel-Young is tight."""
    return datafit.derivative(np.array([z]), y)[0]


@pytest.mark.parametrize("datafit", ALL, ids=IDS)
@settings(max_examples=200, deadline=None)
@given(z=margins, label=labels, value=regression_targets)
def test_fenchel_young_equality_at_the_dual_map(datafit, z, label, value):
    y = target(datafit, label, value)
    u = dual_point(datafit, z, y)
    lhs = datafit.loss(np.array([z]), y)[0] + datafit.conjugate(np.array([u]), y)[0]
    assert lhs == pytest.approx(z * u, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("datafit", ALL, ids=IDS)
@settings(max_examples=200, deadline=None)
@given(z=margins, label=labels, value=regression_targets, t=st.floats(0.0, 1.0))
def test_fenchel_young_inequality(datafit, z, label, value, t):
    y = target(datafit, label, value)
    u = -feasible_alpha(datafit, y, t)
    conj = datafit.conjugate(np.array([u]), y)[0]
    assert np.isfinite(conj)
    assert datafit.loss(np.array([z]), y)[0] + conj >= z * u - 1e-9 * (1 + abs(z * u))


@pytest.mark.parametrize("datafit", ALL, ids=IDS)
def test_conjugate_is_infinite_outside_its_domain(datafit):
    y = 1.0
    outside = {
        "squared": None,
        "logistic": [0.5, -1.5],
        "hinge": [0.5, -1.5],
        "squared_hinge": [0.5],
        "huber": [0.71, -0.71],
    }[datafit.name]
    if outside is None:
        assert np.all(np.isfinite(datafit.conjugate(np.array([-1e6, 1e6]), y)))
    else:
        assert np.all(np.isinf(datafit.conjugate(np.array(outside), y)))


def dual_subproblem(datafit, alpha, y, z, s, d):
    return datafit.conjugate(-(alpha + d), y) + z * d + 0.5 * s * d * d


def feasible_alpha(datafit, y, t):
    """A dual variable inside the domain of l*(-.) indexed by t in [0, 1]."""
    if datafit.name == "logistic":
        return y * (0.01 + 0.98 * t)
    if datafit.name == "hinge":
        return y * t
    if datafit.name == "squared_hinge":
        return y * 3.0 * t
    if datafit.name == "huber":
        return datafit.delta * (2 * t - 1)
    return 10 * (2 * t - 1)


EXACT_DUAL = [d for d in ALL if not isinstance(d, Logistic)]


@pytest.mark.parametrize("datafit", EXACT_DUAL, ids=[d.name for d in EXACT_DUAL])
@settings(max_examples=200, deadline=None)
@given(
    t=st.floats(0, 1),
    z=st.floats(-5, 5),
    s=st.floats(1e-3, 1e3),
    label=labels,
    value=regression_targets,
    probes=st.lists(st.floats(-1, 1), min_size=1, max_size=5),
)
def test_closed_form_dual_step_minimises_the_subproblem(datafit, t, z, s, label, value, probes):
    y = target(datafit, label, value)
    alpha = feasible_alpha(datafit, y, t)
    d = datafit.dual_step(np.array([alpha]), y, z, s)[0]
    best = dual_subproblem(datafit, alpha, y, z, s, d)
    assert np.isfinite(best)
    scale = 1.0 + abs(d)
    for probe in probes:
        other = dual_subproblem(datafit, alpha, y, z, s, d + probe * scale)
        assert best <= other + 1e-9 * (1 + abs(best))


@settings(max_examples=100, deadline=None)
@given(t=st.floats(0, 1), z=st.floats(-5, 5), s=st.floats(1e-2, 1e2), y=labels)
def test_logistic_newton_steps_stay_in_the_box_and_converge(t, z, s, y):
    fit = Logistic()
    lo, hi = fit.dual_box, 1 - fit.dual_box
    alpha0 = y * (lo + (hi - lo) * t)
    alpha = alpha0
    for _ in range(60):
        # the margin follows the dual variable, as v = X alpha does in SDCA
        d = fit.dual_step(np.array([alpha]), y, z + s * (alpha - alpha0), s)[0]
        alpha += d
        assert lo - 1e-15 <= y * alpha <= hi + 1e-15
    # repeated single Newton steps reach the exact minimiser over the box
    res = minimize_scalar(
        lambda b: dual_subproblem(fit, alpha0, y, z, s, y * b - alpha0),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-12},
    )
    best = dual_subproblem(fit, alpha0, y, z, s, y * res.x - alpha0)
    assert dual_subproblem(fit, alpha0, y, z, s, alpha - alpha0) <= best + 1e-9


@pytest.mark.parametrize("datafit", ALL, ids=IDS)
@settings(max_examples=100, deadline=None)
@given(z=st.floats(-4, 4), s=st.floats(1e-2, 1e2), label=labels, value=regression_targets)
def test_dual_step_fixed_point_is_minus_the_derivative(datafit, z, s, label, value):
    """At alpha = -l'(z) the subproblem is already solved: the step is zero."""
    y = target(datafit, label, value)
    alpha = -datafit.derivative(np.array([z]), y)[0]
    if isinstance(datafit, Logistic):
        assume(datafit.dual_box < y * alpha < 1 - datafit.dual_box)
    d = datafit.dual_step(np.array([alpha]), y, z, s)[0]
    assert d == pytest.approx(0.0, abs=1e-9 * (1 + abs(alpha)))


def test_logistic_is_stable_at_extreme_margins():
    fit = Logistic()
    z = np.array([-1e300, -800.0, 800.0, 1e300])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        loss = fit.loss(z, 1.0)
        der = fit.derivative(z, 1.0)
    assert np.all(np.isfinite(loss)) and np.all(np.isfinite(der))
    assert loss[1] == pytest.approx(800.0) and loss[2] == 0.0
    assert der[0] == -1.0 and der[3] == 0.0


def test_get_datafit_by_name_and_errors():
    assert isinstance(get_datafit("squared_hinge"), SquaredHinge)
    fit = Huber(2.0)
    assert get_datafit(fit) is fit
    with pytest.raises(ValueError, match="unknown datafit 'sqaured'"):
        get_datafit("sqaured")
    with pytest.raises(ValueError, match="delta"):
        Huber(0.0)
    with pytest.raises(ValueError, match="dual_box"):
        Logistic(dual_box=0.7)


def test_kernel_codes_are_distinct_and_params_reach_kernels():
    codes = {d.code for d in ALL}
    assert len(codes) == len(ALL)
    assert Huber(0.3).param == 0.3
    assert Squared().param == 0.0
    assert all(isinstance(d, Datafit) for d in ALL)
