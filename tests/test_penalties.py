"""Properties of the penalties: prox optimality, subdifferential distances, L1 ball."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpglm.penalties import (
    L1,
    L2,
    Box,
    ElasticNet,
    L1Ball,
    NoPenalty,
    get_penalty,
    soft_threshold,
)

SEPARABLE = [
    NoPenalty(),
    L2(0.8),
    L1(0.5),
    ElasticNet(1.5, 0.3),
    ElasticNet(1.0, 1.0),
    Box(-1.0, 2.0),
    Box(np.array([-1.0, 0.0, 0.5]), np.array([1.0, 0.0, 3.0])),
]
IDS = [repr(p) for p in SEPARABLE]

points = arrays(np.float64, 3, elements=st.floats(-10, 10))
steps = st.floats(1e-3, 10.0)


def one_d_objective(penalty, x, step, u, j):
    """(u - x_j)^2 / 2 + step psi_j(u) for coordinate j."""
    l1, l2, lo, hi = penalty.prox_params(3)
    inside = lo[j] <= u <= hi[j]
    psi = l1[j] * abs(u) + 0.5 * l2[j] * u * u if inside else np.inf
    return 0.5 * (u - x[j]) ** 2 + step * psi


@pytest.mark.parametrize("penalty", SEPARABLE, ids=IDS)
@settings(max_examples=150, deadline=None)
@given(x=points, step=steps)
def test_prox_satisfies_its_optimality_condition(penalty, x, step):
    p = penalty.prox(x, step)
    # p = prox(x) iff (x - p) / step is in d psi(p): the gradient (p - x) / step is cancelled
    dist = penalty.subdiff_distance(p, (p - x) / step)
    assert np.all(dist <= 1e-9 * (1 + np.abs(x) / step))


@pytest.mark.parametrize("penalty", SEPARABLE, ids=IDS)
@settings(max_examples=150, deadline=None)
@given(x=points, step=steps, probes=st.lists(st.floats(-12, 12), min_size=1, max_size=6))
def test_prox_minimises_the_one_dimensional_problem(penalty, x, step, probes):
    p = penalty.prox(x, step)
    for j in range(3):
        best = one_d_objective(penalty, x, step, p[j], j)
        assert np.isfinite(best)
        for u in probes:
            assert best <= one_d_objective(penalty, x, step, u, j) + 1e-9


@pytest.mark.parametrize("penalty", SEPARABLE, ids=IDS)
@settings(max_examples=150, deadline=None)
@given(w=points, g=points)
def test_subdiff_distance_is_zero_iff_coordinate_is_optimal(penalty, w, g):
    """dist_j = 0 exactly when w_j minimises g_j u + psi_j(u) near w_j."""
    w = penalty.prox(w, 1.0)  # make w feasible
    dist = penalty.subdiff_distance(w, g)
    assert np.all(dist >= 0)
    l1, l2, lo, hi = penalty.prox_params(3)
    h = 1e-7
    for j in range(3):

        def local(u, j=j):
            if not lo[j] <= u <= hi[j]:
                return np.inf
            return g[j] * u + l1[j] * abs(u) + 0.5 * l2[j] * u * u

        # the one-sided slopes of the local model; dist is how much the better one descends
        descent = max(local(w[j]) - local(w[j] + h), local(w[j]) - local(w[j] - h)) / h
        assert dist[j] == pytest.approx(max(descent, 0.0), abs=1e-5 * (1 + abs(g[j])))


@pytest.mark.parametrize("penalty", SEPARABLE, ids=IDS)
def test_value_matches_definition(penalty):
    w = penalty.prox(np.array([0.5, -2.0, 1.0]), 1.0)
    l1, l2, _, hi = penalty.prox_params(3)
    expected = np.sum(l1 * np.abs(w) + 0.5 * l2 * w * w)
    assert penalty.value(w) == pytest.approx(expected)
    if np.any(np.isfinite(hi)):
        assert penalty.value(hi + 1.0) == np.inf


def test_named_values():
    w = np.array([1.0, -2.0])
    assert L1(0.5).value(w) == pytest.approx(1.5)
    assert L2(2.0).value(w) == pytest.approx(5.0)
    assert ElasticNet(2.0, 0.25).value(w) == pytest.approx(2.0 * (0.25 * 3 + 0.75 / 2 * 5))
    assert NoPenalty().value(w) == 0.0


def test_soft_threshold():
    np.testing.assert_array_equal(
        soft_threshold(np.array([-3.0, -1.0, 0.0, 0.5, 4.0]), 1.0), [-2.0, 0.0, 0.0, 0.0, 3.0]
    )


vectors = arrays(np.float64, st.integers(1, 12), elements=st.floats(-5, 5))


@settings(max_examples=200, deadline=None)
@given(x=vectors, radius=st.floats(0.1, 10.0))
def test_l1_ball_projection_is_the_euclidean_projection(x, radius):
    ball = L1Ball(radius)
    p = ball.prox(x)
    assert np.abs(p).sum() <= radius * (1 + 1e-12)
    assert ball.value(p) == 0.0
    # variational inequality <x - p, q - p> <= 0 for every q in the ball, i.e.
    # its worst case over the 2p vertices: radius ||x - p||_inf <= <x - p, p>
    r = x - p
    assert radius * np.max(np.abs(r)) <= r @ p + 1e-9 * (1 + np.abs(x).sum())
    if np.abs(x).sum() <= radius:
        np.testing.assert_array_equal(p, x)


@settings(max_examples=200, deadline=None)
@given(g=vectors, radius=st.floats(0.1, 10.0))
def test_l1_ball_lmo_minimises_the_linear_function(g, radius):
    ball = L1Ball(radius)
    j, value = ball.lmo(g)
    assert abs(value) == radius
    assert value * g[j] == pytest.approx(-radius * np.max(np.abs(g)))


@settings(max_examples=200, deadline=None)
@given(w=vectors, g=st.floats(-5, 5), x=st.floats(-20, 20), radius=st.floats(0.1, 10.0))
def test_l1_ball_coordinate_prox_and_subdiff_distance(w, g, x, radius):
    ball = L1Ball(radius)
    w = ball.prox(w)
    j = 0
    new = ball.coordinate_prox(w, j, x)
    moved = w.copy()
    moved[j] = new
    assert ball.value(moved) == 0.0
    # the coordinate prox of the step x = w_j - g lands where the coordinate is optimal
    moved[j] = ball.coordinate_prox(w, j, w[j] - g)
    grad = np.zeros_like(w)
    grad[j] = moved[j] - (w[j] - g)
    assert ball.subdiff_distance(moved, grad)[j] <= 1e-9 * (1 + abs(x) + abs(g))


def test_l1_ball_subdiff_distance_at_the_boundary():
    ball = L1Ball(1.0)
    w = np.array([1.0, 0.0])
    # w_0 sits at its end of [-1, 1]: pushing it outwards (negative gradient) is blocked
    np.testing.assert_allclose(ball.subdiff_distance(w, np.array([-2.0, 5.0])), [0.0, 0.0])
    np.testing.assert_allclose(ball.subdiff_distance(w, np.array([2.0, 5.0])), [2.0, 0.0])
    w = np.array([0.5, 0.0])
    np.testing.assert_allclose(ball.subdiff_distance(w, np.array([-2.0, 5.0])), [2.0, 5.0])


def test_parameter_validation():
    with pytest.raises(ValueError, match="alpha"):
        L1(-1.0)
    with pytest.raises(ValueError, match="alpha"):
        L2(np.nan)
    with pytest.raises(ValueError, match="l1_ratio"):
        ElasticNet(1.0, 1.5)
    with pytest.raises(ValueError, match="radius"):
        L1Ball(0.0)
    with pytest.raises(ValueError, match="coordinate 1"):
        Box([0.0, 2.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="length 3"):
        Box([0.0, 0.0], [1.0, 1.0]).prox_params(3)
    with pytest.raises(TypeError, match="not separable"):
        L1Ball(1.0).prox_params(3)


def test_get_penalty():
    assert get_penalty(None) == NoPenalty()
    assert get_penalty("l1", alpha=0.2) == L1(0.2)
    assert get_penalty("elasticnet", 1.0, 0.1) == ElasticNet(1.0, 0.1)
    assert get_penalty(L2(3.0)) == L2(3.0)
    with pytest.raises(ValueError, match="unknown penalty 'l3'"):
        get_penalty("l3")
