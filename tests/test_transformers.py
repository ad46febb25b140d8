"""The private transformers: what they release, what it costs, and how they sit in a pipeline.

The clipper's ranges hold the bulk of every column; the min-max scaler maps into
``[0, 1]``; the standard scaler's output has mean 0 and standard deviation 1 at
``n = 20000``, ``epsilon = 1``. Every fit that releases something is one charge
of part ``"preprocessing"``; public bounds cost nothing. The moments' noise is
audited against the report (a chi-square test that half the noise fails), their
sensitivities against worst-case neighbours. The transformers work in a
pipeline with a private estimator and in ``GridSearchCV``, sharing one budget;
:func:`check_pipeline` flags scikit-learn's scalers and not ours.
"""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from scipy.stats import chi2
from sklearn.base import clone
from sklearn.compose import make_column_transformer
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MinMaxScaler,
    OneHotEncoder,
    PolynomialFeatures,
    StandardScaler,
)
from sklearn.utils.validation import check_is_fitted

from dpglm.estimators import DPLogisticRegression
from dpglm.exceptions import BudgetExceededError, NonFiniteValueError, PrivacyLeakWarning
from dpglm.preprocessing import (
    PrivateClipper,
    PrivateMinMaxScaler,
    PrivateStandardScaler,
    check_pipeline,
)
from dpglm.preprocessing.transformers import SQUARES_LABEL, SUMS_LABEL
from dpglm.privacy.budget import PrivacyBudget
from solver_problems import seed_of, with_less_noise

TRANSFORMERS = [PrivateClipper, PrivateMinMaxScaler, PrivateStandardScaler]


def raw_table(n=20_000, seed=0):
    """Columns on scales from 1e-3 to 1e5, one of them skewed, one of integers."""
    rng = np.random.default_rng(seed)
    return np.column_stack(
        [
            rng.normal(0.002, 0.001, n),
            rng.lognormal(7.0, 1.0, n),
            rng.integers(0, 50, n).astype(float),
            rng.normal(-40_000.0, 5_000.0, n),
        ]
    )


def labelled(n=4000, seed=0):
    """Raw-scale features and a label that depends on two of them."""
    X = raw_table(n, seed)
    rng = np.random.default_rng(seed + 1)
    signal = (X[:, 0] - 0.002) / 0.001 - (X[:, 3] + 40_000.0) / 5_000.0
    return X, signal + 0.3 * rng.standard_normal(n) > 0


# -- what each transformer outputs ---------------------------------------------------------------


def test_the_clipper_ranges_hold_the_bulk_of_each_column():
    X = raw_table()
    clipper = PrivateClipper(epsilon=1.0, random_state=seed_of("clipper bulk"))
    out = clipper.fit_transform(X)
    q_low, q_high = np.quantile(X, [0.001, 0.999], axis=0)
    bulk_low, bulk_high = np.quantile(X, [0.05, 0.95], axis=0)
    # the ranges are octaves of the log grid: they contain the bulk of every column (a
    # thin tail may be clipped, e.g. the few negatives of the first column, spread over
    # many octaves), and are not absurdly wider than the columns' spread
    assert np.all((clipper.low_ <= bulk_low) & (bulk_high <= clipper.high_))
    assert np.all((out != X).mean(axis=0) < 0.05), (clipper.low_, clipper.high_)
    assert np.all(clipper.high_ - clipper.low_ < 4.0 * (q_high - q_low))
    low, high = clipper.low_, clipper.high_
    assert np.all((low <= out) & (out <= high))
    assert np.array_equal(out, np.clip(X, low, high))


def test_the_min_max_scaler_maps_the_clipped_columns_onto_the_unit_interval():
    X = raw_table()
    scaler = PrivateMinMaxScaler(epsilon=1.0, random_state=seed_of("min max"))
    Z = scaler.fit_transform(X)
    low, high = scaler.low_, scaler.high_
    assert np.allclose(Z, (np.clip(X, low, high) - low) / (high - low))
    assert Z.min() >= 0.0 and Z.max() <= 1.0
    # every column spreads over a good part of [0, 1]
    assert np.all(Z.max(axis=0) - Z.min(axis=0) > 0.2)


def test_a_zero_width_column_maps_to_zero():
    X = np.array([[5.0, 2.0, 7.0], [-1.0, 0.0, 3.0]])
    bounds = [[0.0, 10.0], [-1.0, 1.0], [3.0, 3.0]]
    expected = np.array([[0.5, 1.0, 0.0], [0.0, 0.5, 0.0]])
    assert np.array_equal(PrivateMinMaxScaler(bounds=bounds).fit_transform(X), expected)
    scaler = PrivateStandardScaler(bounds=bounds, epsilon=math.inf).fit(X)
    assert scaler.transform(X)[:, 2].tolist() == [0.0, 0.0]
    assert scaler.scale_[2] == 1.0 and scaler.var_[2] == 0.0 and scaler.mean_[2] == 3.0


def test_the_standard_scaler_gives_mean_zero_and_deviation_one():
    X = raw_table()
    scaler = PrivateStandardScaler(epsilon=1.0, random_state=seed_of("standard"))
    Z = scaler.fit_transform(X)
    assert np.all(np.abs(Z.mean(axis=0)) < 0.05), Z.mean(axis=0)
    assert np.all(np.abs(Z.std(axis=0) - 1.0) < 0.05), Z.std(axis=0)
    # the released moments are those of the clipped columns, and the output bound holds
    clipped = np.clip(X, scaler.low_, scaler.high_)
    assert np.allclose(scaler.mean_, clipped.mean(axis=0), rtol=0, atol=0.05 * clipped.std(0))
    assert np.allclose(np.sqrt(scaler.var_), clipped.std(axis=0), rtol=0.05)
    assert np.abs(Z).max() <= scaler.output_bounds_
    reach = np.maximum(np.abs(scaler.low_ - scaler.mean_), np.abs(scaler.high_ - scaler.mean_))
    assert scaler.output_bounds_ == pytest.approx(np.max(reach / scaler.scale_))


def test_without_the_mean_the_standard_scaler_only_scales():
    X = raw_table(5000)
    scaler = PrivateStandardScaler(with_mean=False, epsilon=1.0, random_state=0).fit(X)
    Z = scaler.transform(X)
    assert np.allclose(Z, np.clip(X, scaler.low_, scaler.high_) / scaler.scale_)
    assert np.all(np.abs(Z.std(axis=0) - 1.0) < 0.1), Z.std(axis=0)
    assert np.abs(Z).max() <= scaler.output_bounds_


# -- sparse input --------------------------------------------------------------------------------


def sparse_counts(n=20_000, p=4, seed=0):
    """Nonnegative sparse columns (counts), a tenth of them nonzero."""
    rng = np.random.default_rng(seed)
    X = rng.poisson(3.0, (n, p)).astype(float) * (rng.random((n, p)) < 0.1)
    return sp.csr_matrix(X)


def test_the_clipper_keeps_sparse_input_sparse_and_its_zeros_zeros():
    X = sparse_counts()
    Z = PrivateClipper(epsilon=1.0, random_state=0).fit(X).transform(X)
    assert sp.issparse(Z) and isinstance(Z, sp.spmatrix)
    assert Z.nnz <= X.nnz and np.array_equal(Z.toarray() != 0, X.toarray() != 0)
    Z = PrivateClipper(bounds=2.0).fit(sp.csr_array(X)).transform(sp.csr_array(X))
    assert isinstance(Z, sp.sparray) and Z.max() == 2.0 and Z.nnz == X.nnz


def test_sparse_input_with_the_mean_is_refused_before_anything_is_charged():
    budget = PrivacyBudget(10.0, 1e-6)
    with pytest.raises(ValueError, match="with_mean=False"):
        PrivateStandardScaler(budget=budget).fit(sparse_counts())
    assert budget.charges == ()


def test_the_standard_scaler_without_the_mean_scales_sparse_input():
    X = sparse_counts()
    scaler = PrivateStandardScaler(with_mean=False, epsilon=1.0, random_state=0).fit(X)
    Z = scaler.transform(X)
    assert sp.issparse(Z) and Z.nnz == X.nnz
    assert np.all(scaler.low_ == 0.0)  # sparse ranges contain 0
    assert np.all(np.abs(Z.toarray().std(axis=0) - 1.0) < 0.05)
    with pytest.raises(ValueError, match="with_mean=False"):
        scaler.set_params(with_mean=True).transform(X)


def test_the_min_max_scaler_takes_sparse_input_only_when_every_low_is_zero():
    X = sparse_counts()
    scaler = PrivateMinMaxScaler(epsilon=1.0, random_state=0).fit(X)
    Z = scaler.transform(X)
    assert sp.issparse(Z) and Z.nnz == X.nnz and Z.max() <= 1.0 and Z.min() >= 0.0
    budget = PrivacyBudget(10.0, 1e-6)
    with pytest.raises(ValueError, match="sparse input would lose its zeros"):
        PrivateMinMaxScaler(bounds=[[-1.0, 5.0]] * 4, budget=budget).fit(X)
    assert budget.charges == ()


def test_a_range_without_zero_refuses_sparse_input_at_transform():
    clipper = PrivateClipper(bounds=[[1.0, 2.0], [-1.0, 1.0]]).fit(np.ones((3, 2)))
    with pytest.raises(ValueError, match="excludes 0"):
        clipper.transform(sp.csr_matrix(np.ones((3, 2))))


# -- what a fit costs ----------------------------------------------------------------------------


@pytest.mark.parametrize("cls", TRANSFORMERS)
def test_every_fit_is_one_charge_of_part_preprocessing(cls):
    X = raw_table(3000)
    budget = PrivacyBudget(10.0, 1e-5)
    transformer = cls(epsilon=1.0, budget=budget, random_state=0)
    transformer.fit(X)
    transformer.fit(X)
    assert len(budget.charges) == 2
    assert [c.label for c in budget.charges] == [cls.__name__] * 2
    report = transformer.privacy_report_
    assert set(report.parts) == {"preprocessing"}
    assert {m.part for m in report.mechanisms} == {"preprocessing"}
    assert {e.part for c in budget.charges for e in c.plan.events} == {"preprocessing"}
    assert report.epsilon <= 1.0 + 1e-9 and report.delta == transformer.delta_ == 1.0 / 3000**2
    labels = [m.label for m in report.mechanisms]
    if cls is PrivateStandardScaler:
        # the ranges (two histograms) and the two moments, in one plan
        assert len(labels) == 4 and labels[2:] == [SUMS_LABEL, SQUARES_LABEL]
    else:
        assert len(labels) == 2


@pytest.mark.parametrize("cls", [PrivateClipper, PrivateMinMaxScaler])
def test_public_bounds_cost_nothing(cls):
    budget = PrivacyBudget(1.0, 1e-6)
    transformer = cls(bounds=100_000.0, budget=budget).fit(raw_table(1000))
    assert budget.charges == () and transformer.privacy_report_ is None
    assert np.all(transformer.low_ == -100_000.0)


def test_public_bounds_leave_the_standard_scaler_its_moments_only():
    budget = PrivacyBudget(1.0, 1e-6)
    scaler = PrivateStandardScaler(bounds=1.0, epsilon=0.5, delta=1e-7, budget=budget)
    scaler.fit(np.random.default_rng(0).uniform(-1.0, 1.0, (1000, 3)))
    (charge,) = budget.charges
    assert [e.label for e in charge.plan.events] == [SUMS_LABEL, SQUARES_LABEL]
    assert scaler.privacy_report_.epsilon == pytest.approx(0.5, rel=1e-3)


@pytest.mark.parametrize("cls", TRANSFORMERS)
def test_a_refused_charge_leaves_the_transformer_unfitted(cls):
    budget = PrivacyBudget(0.1, 1e-6)
    transformer = cls(epsilon=1.0, budget=budget)
    with pytest.raises(BudgetExceededError):
        transformer.fit(raw_table(1000))
    assert budget.charges == ()
    with pytest.raises(NotFittedError):
        check_is_fitted(transformer)
    with pytest.raises(NotFittedError):
        transformer.transform(raw_table(10))


@pytest.mark.parametrize("cls", TRANSFORMERS)
def test_clone_shares_the_budget(cls):
    budget = PrivacyBudget(1.0, 1e-6)
    assert clone(cls(budget=budget)).budget is budget


# -- the moments' noise and sensitivities --------------------------------------------------------

AUDIT_N, AUDIT_P, AUDIT_FITS = 2000, 3, 100


@pytest.mark.parametrize("variant", ["correct", "half noise"])
def test_the_moments_noise_is_what_the_report_claims(variant, monkeypatch):
    """Chi-square on the released means and second moments against the report's noise.

    With public bounds ``[-1, 1]`` the columns are their own ``u``, the released
    mean is ``S1~ / n`` and ``var_ + mean_**2`` is ``S2~ / n``; standardised by
    the report's noise scales over ``n``, the errors of ``AUDIT_FITS`` fits are
    ``2 p AUDIT_FITS`` independent standard normals. The two-sided test fails a
    correct release with probability 1e-6; half the noise divides the statistic
    by 4, far below its lower quantile.
    """
    if variant == "half noise":
        with_less_noise(monkeypatch)
    rng = np.random.default_rng(seed_of("moments audit data"))
    X = rng.uniform(-0.5, 0.5, (AUDIT_N, AUDIT_P))
    true_m1, true_m2 = X.mean(axis=0), (X**2).mean(axis=0)
    statistic, terms = 0.0, 0
    for fit in range(AUDIT_FITS):
        scaler = PrivateStandardScaler(
            bounds=1.0, epsilon=1.0, delta=1e-6, random_state=seed_of("moments audit", fit)
        ).fit(X)
        scales = {m.label: m.noise_scale for m in scaler.privacy_report_.mechanisms}
        # the report's scales are the calibrated multiplier times the sensitivity
        sigma1, sigma2 = scales[SUMS_LABEL] / AUDIT_N, scales[SQUARES_LABEL] / AUDIT_N
        assert 4.0 * sigma2 < scaler.var_.min()  # far from the floor: no clamping
        m2 = scaler.var_ + scaler.mean_**2
        statistic += float((((scaler.mean_ - true_m1) / sigma1) ** 2).sum())
        statistic += float((((m2 - true_m2) / sigma2) ** 2).sum())
        terms += 2 * AUDIT_P
    low, high = chi2.ppf(0.5e-6, terms), chi2.isf(0.5e-6, terms)
    if variant == "correct":
        assert low < statistic < high, (statistic, low, high)
    else:
        assert statistic < low, f"half noise not caught: {statistic} >= {low}"


def test_the_moments_sensitivities_hold_for_worst_case_neighbours():
    """Without noise, the sums change by 2 sqrt(p) and sqrt(p) at most, and reach it."""
    rng = np.random.default_rng(0)
    bounds = np.array([[-1.0, 3.0], [0.0, 10.0], [-50.0, -10.0]])
    low, high = bounds[:, 0], bounds[:, 1]
    centre, half = (low + high) / 2, (high - low) / 2
    X = rng.uniform(low, high, (500, 3))
    # one record at the lower corner becomes one far beyond the upper corner (clipped)
    D, D_prime = X.copy(), X.copy()
    D[0], D_prime[0] = low, high + 1e6
    moments = []
    for data in (D, D_prime):
        scaler = PrivateStandardScaler(bounds=bounds, epsilon=math.inf).fit(data)
        u_mean = (scaler.mean_ - centre) / half
        moments.append((500 * u_mean, 500 * (scaler.var_ / half**2 + u_mean**2)))
    (s1, s2), (t1, t2) = moments
    assert np.linalg.norm(t1 - s1) == pytest.approx(2 * math.sqrt(3))
    # u**2 goes from 1 to 1 at the corners: the centre reaches the bound for S2
    D_prime[0] = centre
    scaler = PrivateStandardScaler(bounds=bounds, epsilon=math.inf).fit(D_prime)
    u_mean = (scaler.mean_ - centre) / half
    t2 = 500 * (scaler.var_ / half**2 + u_mean**2)
    assert np.linalg.norm(t2 - s2) == pytest.approx(math.sqrt(3))


# -- pipelines -----------------------------------------------------------------------------------


def test_a_pipeline_with_a_private_estimator_charges_both_to_one_budget():
    X, y = labelled()
    budget = PrivacyBudget(5.0, 1e-5)
    model = make_pipeline(
        PrivateStandardScaler(budget=budget, random_state=0),
        # a public bound on the standardised features, fixed before the data; the public
        # label set, so that the model's fit is one charge
        DPLogisticRegression(
            budget=budget, feature_bounds=4.0, classes=[False, True], random_state=0
        ),
    ).fit(X, y)
    labels = [c.label for c in budget.charges]
    assert len(labels) == 2 and labels[0] == "PrivateStandardScaler"
    assert labels[1].startswith("DPLogisticRegression")
    assert model.score(X, y) > 0.85
    scaler = model[0]
    assert np.abs(scaler.transform(X)).max() <= scaler.output_bounds_
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        assert check_pipeline(model) == []


def test_grid_search_clones_the_transformer_and_shares_its_budget():
    X, y = labelled(2000)
    budget = PrivacyBudget(30.0, 1e-5)
    pipeline = make_pipeline(
        PrivateStandardScaler(budget=budget, random_state=0),
        # the public label set: each pipeline's model is one charge
        DPLogisticRegression(
            budget=budget, feature_bounds=4.0, classes=[False, True], random_state=0
        ),
    )
    search = GridSearchCV(pipeline, {"dplogisticregression__alpha": [1e-4, 1e-2]}, cv=2)
    search.fit(X, y)
    # two candidates on two folds, then the refit: five pipelines, two charges each
    labels = [c.label.split(" ")[0] for c in budget.charges]
    assert labels == ["PrivateStandardScaler", "DPLogisticRegression"] * 5
    assert search.best_estimator_[0].budget is budget
    assert search.best_estimator_[0].privacy_report_ is not None
    assert search.score(X, y) > 0.8


def test_check_pipeline_flags_scikit_learn_scalers_and_not_ours():
    X, y = labelled(500)
    leaky = make_pipeline(StandardScaler(), MinMaxScaler(), LogisticRegression()).fit(X, y)
    with pytest.warns(PrivacyLeakWarning) as shown:
        found = check_pipeline(leaky)
    assert [name for name, _ in found] == ["standardscaler", "minmaxscaler"]
    assert found[0][1] is leaky[0]
    messages = [str(w.message) for w in shown]
    assert len(messages) == 2 and "'standardscaler' (StandardScaler) learned" in messages[0]
    assert "mean_" in messages[0] and "data_min_" in messages[1]
    private = make_pipeline(
        PrivateStandardScaler(random_state=0),
        FunctionTransformer(np.tanh),
        PolynomialFeatures(2),
        PrivateClipper(bounds=10.0),
        LogisticRegression(),
    ).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        assert check_pipeline(private) == []


def test_check_pipeline_looks_inside_nested_steps_and_at_non_private_fits():
    X, y = labelled(500)
    X = np.column_stack([X, np.arange(500) % 3])
    nested = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(), [4]), (PrivateClipper(bounds=100_000.0), [0, 1, 2, 3])
        ),
        make_pipeline(PrivateMinMaxScaler(epsilon=math.inf)),
        LogisticRegression(),
    ).fit(X, y)
    with pytest.warns(PrivacyLeakWarning):
        found = check_pipeline(nested)
    assert [name for name, _ in found] == [
        "columntransformer__onehotencoder",
        "pipeline__privateminmaxscaler",
    ]


def test_check_pipeline_takes_fitted_pipelines_only():
    with pytest.raises(TypeError, match="Pipeline"):
        check_pipeline(StandardScaler())
    with pytest.raises(NotFittedError):
        check_pipeline(make_pipeline(StandardScaler(), LogisticRegression()))


# -- parameters and data -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": "1"}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"delta": 1.0}, "delta"),
        ({"delta": -1e-6}, "delta"),
        ({"delta": "small"}, "delta"),
        ({"delta": 0.0}, "delta must be > 0"),
        ({"bounds": 0.0}, "bounds"),
        ({"bounds": -2.0}, "bounds"),
        ({"bounds": float("inf")}, "bounds"),
        ({"bounds": [[1.0, 0.0]] * 4}, "bounds"),
        ({"bounds": np.ones((4, 3))}, "bounds"),
        ({"bounds": "wide"}, "bounds"),
        ({"bounds": [1.0, 2.0]}, "bounds has 2 values; X has 4 features"),
        ({"bounds": [[0.0, 1.0]] * 3}, "bounds has 3 rows; X has 4 features"),
        ({"budget": object()}, "budget"),
        ({"random_state": -1}, "random_state"),
        ({"random_state": "seed"}, "random_state"),
    ],
)
@pytest.mark.parametrize("cls", TRANSFORMERS)
def test_bad_parameters_are_refused_before_anything_is_charged(cls, params, match):
    budget = PrivacyBudget(10.0, 1e-6)
    transformer = cls(**{"budget": budget, **params})
    with pytest.raises(ValueError, match=match):
        transformer.fit(raw_table(100))
    assert budget.charges == ()


@pytest.mark.parametrize("with_mean", ["yes", 1, None])
def test_with_mean_must_be_a_bool(with_mean):
    budget = PrivacyBudget(10.0, 1e-6)
    with pytest.raises(ValueError, match="with_mean must be a bool"):
        PrivateStandardScaler(with_mean=with_mean, budget=budget).fit(raw_table(100))
    assert budget.charges == ()


def test_public_bounds_need_no_delta():
    # nothing is released, so delta = 0 (Gaussian noise's refusal) does not apply
    clipper = PrivateClipper(bounds=1.0, delta=0.0).fit([[3.0], [-0.5]])
    assert clipper.transform([[3.0], [-0.5]]).ravel().tolist() == [1.0, -0.5]


@pytest.mark.parametrize("cls", TRANSFORMERS)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_values_never_pass_a_clip(cls, bad):
    budget = PrivacyBudget(10.0, 1e-6)
    X = raw_table(100)
    X[7, 2] = bad
    with pytest.raises(NonFiniteValueError, match="NaN or infinity"):
        cls(budget=budget).fit(X)
    assert budget.charges == ()
    fitted = cls(bounds=100_000.0, epsilon=math.inf).fit(raw_table(100))
    with pytest.raises(NonFiniteValueError):
        fitted.transform(X)


def test_feature_names_follow_the_data_frame():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(raw_table(1000), columns=["a", "b", "c", "d"])
    scaler = PrivateStandardScaler(random_state=0).fit(frame)
    assert scaler.feature_names_in_.tolist() == ["a", "b", "c", "d"]
    assert scaler.get_feature_names_out().tolist() == ["a", "b", "c", "d"]
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        plain = scaler.transform(frame.to_numpy())
    assert np.array_equal(scaler.transform(frame), plain)
    with pytest.raises(ValueError, match="feature names should match"):
        scaler.transform(frame[["b", "a", "c", "d"]])
    with pytest.raises(ValueError, match="X has 3 features"):
        scaler.fit(frame.to_numpy()).transform(frame.to_numpy()[:, :3])
    assert not hasattr(scaler, "feature_names_in_")  # the refit on an array dropped them
    assert scaler.get_feature_names_out().tolist() == ["x0", "x1", "x2", "x3"]


SKLEARN_VERSION = tuple(int(part) for part in sklearn.__version__.split(".")[:2])


@pytest.mark.skipif(SKLEARN_VERSION < (1, 6), reason="the checks need scikit-learn >= 1.6")
@pytest.mark.parametrize(
    "transformer",
    [
        PrivateClipper(random_state=0),
        PrivateClipper(bounds=5.0),
        PrivateMinMaxScaler(random_state=0),
        PrivateStandardScaler(random_state=0),
        PrivateStandardScaler(with_mean=False, random_state=0),
    ],
    ids=repr,
)
def test_scikit_learn_conformance(transformer):
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(transformer, on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    # dpglm's loader refuses an object array holding a dict with a ValueError naming its
    # row and column, not numpy's TypeError (as for the estimators)
    assert failed == {"check_dtype_object"}
    assert len(results) > 40
