"""The numba losses and derivatives agree with the numpy datafits."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpglm._kernels import (
    clip_value,
    derivative_value,
    derivatives,
    fast_exp,
    logistic_derivative,
    loss_value,
    prox_elastic_net_box,
    soft_threshold,
)
from dpglm.datafits import Hinge, Huber, Logistic, Squared, SquaredHinge

ALL = [Squared(), Logistic(), Hinge(), SquaredHinge(), Huber(0.7)]
IDS = [d.name for d in ALL]
TINY = np.finfo(float).smallest_subnormal

# Margins from subnormal to 1e300, both signs, and the kinks of the losses.
EXTREME = np.array(
    [
        *[0.0, -0.0, TINY, -TINY, 1e-300, -1e-300, 1e-8, 0.5, 1.0, -1.0, 1.7, 0.3, -0.7],
        *[30.0, -30.0, 700.0, -700.0, 709.9, -745.5, 800.0, -800.0, 1e150, -1e150, 1e300, -1e300],
    ]
)


def close(got, want, rtol=1e-13, atol=1e-300):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def grid(datafit):
    """All pairs of extreme margins and targets valid for the datafit."""
    targets = [-1.0, 1.0] if datafit.binary_labels else [-1e150, -2.5, 0.0, 1.0, 3.0, 1e150]
    z, y = np.meshgrid(EXTREME, np.array(targets))
    return z.ravel(), y.ravel()


@pytest.mark.parametrize("datafit", ALL, ids=IDS)
def test_derivatives_match_datafit_at_extreme_margins(datafit):
    z, y = grid(datafit)
    want = datafit.derivative(z, y)
    got = derivatives(datafit.code, datafit.param, z, y, np.empty_like(z))
    close(got, want)
    assert np.isfinite(got).all()
    scalar = [
        derivative_value(datafit.code, datafit.param, a, b) for a, b in zip(z, y, strict=True)
    ]
    close(scalar, want)


@pytest.mark.parametrize("datafit", ALL, ids=IDS)
def test_loss_value_matches_datafit_at_extreme_margins(datafit):
    z, y = grid(datafit)
    with np.errstate(over="ignore"):
        want = datafit.loss(z, y)
    got = [loss_value(datafit.code, datafit.param, a, b) for a, b in zip(z, y, strict=True)]
    close(got, want)


@pytest.mark.parametrize("datafit", ALL, ids=IDS)
@settings(max_examples=60, deadline=None)
@given(
    z=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=40),
    seed=st.integers(0, 2**32 - 1),
)
def test_derivatives_match_datafit_on_random_margins(datafit, z, seed):
    z = np.array(z)
    rng = np.random.default_rng(seed)
    if datafit.binary_labels:
        y = rng.choice([-1.0, 1.0], size=z.shape)
    else:
        y = rng.standard_normal(z.shape) * 10.0 ** rng.integers(-3, 4, size=z.shape)
    out = np.full_like(z, np.nan)
    returned = derivatives(datafit.code, datafit.param, z, y, out)
    assert returned is out or np.shares_memory(returned, out)
    close(out, datafit.derivative(z, y))


def test_logistic_derivative_keeps_relative_accuracy_in_both_tails():
    yz = np.concatenate(
        [-np.logspace(-3, np.log10(700), 200), np.logspace(-3, np.log10(700), 200)]
    )
    got = np.array([logistic_derivative(v, 1.0) for v in yz])
    want = Logistic().derivative(yz, 1.0)
    # relative, not absolute: for y z = 700 the derivative is about 1e-304
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)


def test_fast_exp_matches_numpy():
    rng = np.random.default_rng(0)
    t = np.concatenate([rng.uniform(-708, 709, 20_000), rng.uniform(-1, 1, 5_000)])
    got = np.array([fast_exp(v) for v in t])
    np.testing.assert_allclose(got, np.exp(t), rtol=4e-16, atol=0)
    special = np.array([-np.inf, np.inf, -1e300, 1e300, 0.0, -745.2, 709.78, 710.0])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal([fast_exp(v) for v in special], np.exp(special))
    assert math.isnan(fast_exp(np.nan))
    # subnormal results keep the precision a subnormal has
    sub = np.linspace(-744.0, -709.0, 101)
    np.testing.assert_allclose([fast_exp(v) for v in sub], np.exp(sub), rtol=0, atol=2 * TINY)


@pytest.mark.nojit
@pytest.mark.parametrize("datafit", ALL, ids=IDS)
def test_derivative_and_loss_small(datafit):
    z = np.array([-3.0, -1.0, -0.2, 0.0, 0.4, 1.0, 2.5, 40.0])
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, 1.0])
    if not datafit.binary_labels:
        y = y * 1.5
    code, param = datafit.code, datafit.param
    pairs = list(zip(z, y, strict=True))
    close(derivatives(code, param, z, y, np.empty_like(z)), datafit.derivative(z, y))
    close([derivative_value(code, param, a, b) for a, b in pairs], datafit.derivative(z, y))
    close([loss_value(code, param, a, b) for a, b in pairs], datafit.loss(z, y))


@pytest.mark.nojit
def test_unknown_code_gives_nan():
    assert math.isnan(derivative_value(99, 0.0, 1.0, 1.0))
    assert math.isnan(loss_value(-1, 0.0, 1.0, 1.0))
    assert np.isnan(derivatives(7, 0.0, np.zeros(3), np.ones(3), np.zeros(3))).all()


@pytest.mark.nojit
def test_scalar_helpers():
    inf = float("inf")
    assert [clip_value(v, 2.0) for v in (-3.0, -1.0, 0.5, 7.0)] == [-2.0, -1.0, 0.5, 2.0]
    assert clip_value(-1e300, inf) == -1e300
    assert clip_value(5.0, 0.0) == 0.0
    # a non-finite term is still bounded: +-inf clips to +-c, NaN contributes nothing
    assert clip_value(float("nan"), 1.0) == 0.0
    assert [clip_value(v, 2.0) for v in (-inf, inf)] == [-2.0, 2.0]
    assert [soft_threshold(v, 1.0) for v in (-3.0, -0.5, 0.0, 1.0, 2.5)] == [-2.0, 0, 0, 0, 1.5]
    assert math.isnan(soft_threshold(float("nan"), 1.0))
    # soft threshold by 0.5 * 2, ridge shrink 1 / (1 + 0.5 * 2), then the box
    assert prox_elastic_net_box(5.0, 0.5, 2.0, 2.0, -inf, inf) == 2.0
    assert prox_elastic_net_box(5.0, 0.5, 2.0, 2.0, -1.0, 1.5) == 1.5
    assert prox_elastic_net_box(-5.0, 0.5, 2.0, 2.0, -1.0, 1.5) == -1.0
    assert prox_elastic_net_box(0.5, 0.5, 2.0, 0.0, -1.0, 1.5) == 0.0
    assert abs(fast_exp(1.0) - math.e) <= 4e-16 * math.e
    assert fast_exp(-1e300) == 0.0
