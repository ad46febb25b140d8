"""The synthetic problems of the DP-GCD paper."""

import numpy as np
import pytest

from dpglm.data import SYNTHETIC_DATASETS, make_synthetic


@pytest.mark.parametrize(
    ("name", "shape", "task"),
    [
        ("log1", (1000, 100), "classification"),
        ("log2", (1000, 100), "classification"),
        ("square", (1000, 1000), "regression"),
    ],
)
def test_shapes_and_layout(name, shape, task):
    ds = make_synthetic(name, random_state=0)
    assert ds.X.shape == shape
    assert ds.task == task
    assert ds.X.flags.f_contiguous
    assert ds.X.dtype == np.float64
    assert ds.coef_true.shape == (shape[1],)
    assert ds.source == f"synthetic {name}"


@pytest.mark.parametrize("name", SYNTHETIC_DATASETS)
def test_same_seed_same_data_other_seed_other_data(name):
    a = make_synthetic(name, random_state=7)
    b = make_synthetic(name, random_state=7)
    c = make_synthetic(name, random_state=8)
    assert np.array_equal(a.X, b.X)
    assert np.array_equal(a.y, b.y)
    assert np.array_equal(a.coef_true, b.coef_true)
    assert not np.array_equal(a.X, c.X)
    assert not np.array_equal(a.coef_true, c.coef_true)


def test_generator_is_accepted():
    a = make_synthetic("log1", random_state=np.random.default_rng(3))
    b = make_synthetic("log1", random_state=3)
    assert np.array_equal(a.y, b.y)


@pytest.mark.parametrize("name", ["log1", "log2"])
def test_logistic_problems(name):
    ds = make_synthetic(name, random_state=1)
    assert set(np.unique(ds.y).tolist()) == {-1.0, 1.0}
    assert ds.classes.tolist() == [-1, 1]
    assert np.all(ds.coef_true > 0)
    # With positive coefficients the noisy linear model decides the label.
    margin = ds.X @ ds.coef_true
    assert np.mean(np.sign(margin) == ds.y) > 0.9


def test_log_normal_coefficients_sanity():
    # log(w) is N(0, sigma^2): its sample mean and sd over p = 100 draws (and
    # 20 seeds) are far inside these bounds for a correct generator.
    logs1 = np.concatenate(
        [np.log(make_synthetic("log1", random_state=s).coef_true) for s in range(20)]
    )
    logs2 = np.concatenate(
        [np.log(make_synthetic("log2", random_state=s).coef_true) for s in range(20)]
    )
    assert abs(logs1.mean()) < 0.2
    assert abs(logs1.std() - 1.0) < 0.1
    assert abs(logs2.mean()) < 0.4
    assert abs(logs2.std() - 2.0) < 0.2


def test_features_are_standard_normal():
    X = make_synthetic("log1", random_state=2).X
    assert abs(X.mean()) < 0.02
    assert abs(X.std() - 1.0) < 0.02


def test_square_has_ten_nonzeros_and_a_noisy_linear_target():
    ds = make_synthetic("square", random_state=5)
    assert np.count_nonzero(ds.coef_true) == 10
    assert ds.classes is None
    residual = ds.y - ds.X @ ds.coef_true
    assert abs(residual.std() - 1.0) < 0.1
    nonzero = ds.coef_true[ds.coef_true != 0]
    assert np.all(np.abs(nonzero) > 0)
    signs = np.concatenate(
        [np.sign(make_synthetic("square", random_state=s).coef_true) for s in range(10)]
    )
    assert (signs > 0).sum() > 20
    assert (signs < 0).sum() > 20


def test_unknown_name():
    with pytest.raises(
        ValueError,
        match=r"unknown synthetic dataset 'log3'; available: \('log1', 'log2', 'square'\)",
    ):
        make_synthetic("log3")
