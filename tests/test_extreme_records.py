"""Every sensitivity holds for every finite record, in every solver.

One record with extreme but finite values (``x = (1e308, 0)``, ``1e-308``,
``y = +-1e308``) makes margins, derivatives and squared norms overflow or
underflow: ``1e308 * 3`` is ``inf``, ``inf * 0`` and ``inf - inf`` are NaN, and the
square of ``3.4e-162`` rounds to a subnormal whose square root is 8 % off. A
clipped sum is a bounded function of each record only if such terms are
clipped too, so:

* every clipping helper bounds every term: ``+-inf`` clips to ``+-C``, a NaN
  term contributes nothing (``clip_value``, ``l2_clip_coefficient``, DP-SCD's
  scaled dual step, and their numpy counterparts);
* record norms are exact to rounding for every finite record;
* with public feature bounds, every entry is clipped to them per record before
  any kernel reads the data (a copy only when some entry lies outside).

The regression tests below fail on the code before these fixes (NaN
coefficients, a refused release, or a clipped term above its bound); the
property test swaps one record of small problems for extreme values in every
solver and task and checks that the model and its history stay finite. The
single-step audits with an extreme canary are in ``test_solver_audits.py``.
"""

import importlib
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpglm import DPLinearRegression, DPLinearSVC, DPLogisticRegression
from dpglm._kernels import (
    clip_value,
    clipped_coordinate_gradient_csc,
    clipped_coordinate_gradient_dense,
    clipped_gradient_csc,
    clipped_gradient_dense,
    clipped_row_gradient_sum_csr,
    clipped_row_gradient_sum_dense,
    coordinate_steps_csc,
    coordinate_steps_dense,
    patch_clipped_gradient,
    sgd_steps_csr,
    sgd_steps_dense,
)
from dpglm._kernels.dual_coordinate import scd_steps_csr, scd_steps_dense
from dpglm.access.batches import sample_norms
from dpglm.access.sums import row_norms
from dpglm.datafits import SQUARED
from dpglm.distributed.vertical_fw import vertical_fw
from dpglm.exceptions import PrivacyLeakWarning
from dpglm.penalties import L1, L2, L1Ball
from dpglm.problem import Problem
from dpglm.solvers.dp_agd import dp_agd
from dpglm.solvers.dp_cd import dp_cd
from dpglm.solvers.dp_fw import dp_bcfw, dp_fw
from dpglm.solvers.dp_gcd import dp_gcd
from dpglm.solvers.dp_gd import dp_gd
from dpglm.solvers.dp_scd import dp_scd, row_scales
from dpglm.solvers.dp_sgd import dp_sgd
from solver_problems import seed_of

DELTA = 1e-6
INF, NAN = math.inf, math.nan
HUGE = 1e308


def regression(n=200, p=2, w=(3.0, -2.0), seed=1):
    """Features in [-1, 1] (``feature_bounds=1`` holds) and coefficients beyond 1.8, so that
    a coordinate of ``1e308`` overflows the margin once the model is fitted."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, p))
    y = X @ np.asarray(w[:p]) + 0.1 * rng.standard_normal(n)
    return X, y


def with_record(X, y, x=None, target=None, row=0):
    X, y = X.copy(), y.copy()
    if x is not None:
        X[row] = x
    if target is not None:
        y[row] = target
    return X, y


@pytest.fixture
def ieee():
    """Overflow without warnings, as in compiled kernels: under ``NUMBA_DISABLE_JIT=1`` the
    kernels compute on numpy scalars, which warn where compiled code follows IEEE silently."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        yield


def assert_finite_fit(fit):
    assert np.isfinite(fit.coef).all(), fit.coef
    assert np.isfinite(fit.intercept), fit.intercept
    assert np.isfinite(fit.history.thetas).all()


# --- the clipping helpers bound every term ----------------------------------------------------


@pytest.mark.nojit
def test_clip_value_bounds_every_term():
    assert [clip_value(v, 2.0) for v in (INF, -INF, NAN, 3.0, -0.5)] == [2.0, -2.0, 0.0, 2.0, -0.5]


@pytest.mark.nojit
def test_clipped_gradients_bound_non_finite_terms(ieee):
    """Overflowed derivatives (``inf``, and NaN from ``inf - inf``) times entries, some 0."""
    X = np.asfortranarray([[1.0, 0.0], [-1.0, 0.0], [1.0, 1.0], [0.5, -2.0]])
    s = np.array([INF, INF, NAN, 1.0])
    c = np.array([1.0, 0.5])
    # terms: column 0 (C, -C, 0, 0.5), column 1 (0 * inf -> 0, 0, 0, -C)
    want = np.array([0.5 / 4, -0.5 / 4])
    out = np.empty(2)
    clipped_gradient_dense(X, s, c, out)
    np.testing.assert_array_equal(out, want)
    A = sp.csc_array(X)
    clipped_gradient_csc(A.data, A.indices, A.indptr, 4, s, c, out)
    np.testing.assert_array_equal(out, want)
    for j in range(2):
        assert clipped_coordinate_gradient_dense(X, j, s, c[j]) == want[j]
        got = clipped_coordinate_gradient_csc(A.data, A.indices, A.indptr, 4, j, s, c[j])
        assert got == want[j]


@pytest.mark.nojit
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
def test_coordinate_steps_with_overflowed_margins_stay_finite(sparse, ieee):
    """Row 0's margin overflowed (inf), row 1's is NaN: their terms are clipped (C) or dropped."""
    X = np.asfortranarray([[HUGE, 0.0], [1.0, 1.0], [1.0, -1.0]])
    y = np.zeros(3)
    z = np.array([INF, NAN, 0.5])
    w = np.zeros(3)
    order = np.array([1, 0, 2, 1])
    one = np.ones(3)
    arrays = (one, np.full(3, 0.25), 0 * one, 0 * one, -INF * one, INF * one)
    trace = np.empty(4)
    if sparse:
        A = sp.csc_array(X)
        coordinate_steps_csc(
            A.data, A.indices, A.indptr, y, z, w, order, np.zeros(4), *arrays, SQUARED, 0.0, 2,
            trace,
        )  # fmt: skip
    else:
        coordinate_steps_dense(X, y, z, w, order, np.zeros(4), *arrays, SQUARED, 0.0, 2, trace)
    assert np.isfinite(w).all() and np.isfinite(trace).all()
    # the first step reads column 1: terms 0 * inf -> 0, NaN -> 0, -0.5 clipped to -0.25
    assert trace[0] == pytest.approx(0.25 / 3)


@pytest.mark.nojit
@pytest.mark.parametrize("margin", [INF, NAN])
def test_greedy_patch_with_an_overflowed_margin_stays_finite(margin, ieee):
    """DP-GCD's sparse patch after a step on column 0, row 0's margin overflowed."""
    X = sp.csc_matrix(np.array([[HUGE, 0.5], [1.0, 0.0]]))
    R = X.tocsr()
    y, z, s = np.zeros(2), np.array([margin, 0.0]), np.zeros(2)
    c = np.array([1.0, 1.0, 1.0])
    G = np.zeros(3)
    patch_clipped_gradient(
        X.data, X.indices, X.indptr, R.data, R.indices, R.indptr,
        0, 3.0, y, z, s, c, G, SQUARED, 0.0, 2, True,
    )  # fmt: skip
    # row 1 moved to 3 (terms 1 / 2 on column 0 and the intercept); row 0 adds C / 2 per
    # entry when its derivative is inf, nothing when it is NaN
    want = [1.0, 0.5, 1.0] if margin == INF else [0.5, 0.0, 0.5]
    np.testing.assert_array_equal(G, want)


@pytest.mark.nojit
def test_row_gradient_sums_bound_non_finite_derivatives(ieee):
    """DP-SGD's and DP-AGD's L2 clipping: an infinite derivative clips to norm C, NaN drops."""
    X = np.array([[3.0, 4.0], [1.0, 0.0], [0.0, 0.0]])
    norms = np.array([5.0, 1.0, 0.0])
    rows = np.array([0, 1, 2])
    s = np.array([INF, NAN, -INF])  # the last: inf times a zero row
    out = np.empty(2)
    total = clipped_row_gradient_sum_dense(X, rows, s, norms, 1.0, out)
    np.testing.assert_allclose(out, [0.6, 0.8], rtol=1e-15)
    assert total == pytest.approx(0.2)
    A = sp.csr_array(X)
    total = clipped_row_gradient_sum_csr(A.data, A.indices, A.indptr, rows, s, norms, 1.0, out)
    np.testing.assert_allclose(out, [0.6, 0.8], rtol=1e-15)
    assert total == pytest.approx(0.2)


@pytest.mark.nojit
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_sgd_steps_with_an_overflowing_margin_stay_finite(sparse, ieee):
    """``(1e308, -1e308, 1e308) . (2, 2, 2)``: ``inf - inf`` without fused multiply-adds."""
    X = np.array([[HUGE, -HUGE, HUGE], [1.0, 0.0, 0.5]])
    y = np.array([1.0, -1.0])
    norms = sample_norms(X, False)
    theta = np.full(3, 2.0)
    zeros, inf3 = np.zeros(3), np.full(3, INF)
    penalty = (zeros, zeros, -inf3, inf3)
    counts, rows, noise = np.array([2, 2]), np.array([0, 1, 0, 1]), np.zeros((2, 3))
    if sparse:
        A = sp.csr_array(X)
        sgd_steps_csr(
            A.data, A.indices, A.indptr, y, norms, counts, rows, noise, theta, np.empty(3),
            0.0, 1.0, 0.5, 0.5, *penalty, SQUARED, 0.0, False,
        )  # fmt: skip
    else:
        sgd_steps_dense(
            X, y, norms, counts, rows, noise, theta, np.empty(3),
            0.0, 1.0, 0.5, 0.5, *penalty, SQUARED, 0.0, False,
        )  # fmt: skip
    assert np.isfinite(theta).all(), theta


@pytest.mark.nojit
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_dual_steps_of_an_overflowing_target_are_scaled_to_the_bound(sparse, ieee):
    """``zeta = (y - z - alpha) / (1 + s)`` with ``y = 1e308, z = -1e308`` is ``inf``: it must
    become ``C`` (``inf * (C / inf)`` is NaN), and a NaN margin's step 0."""
    X = np.array([[1.0], [1.0]])
    y = np.array([HUGE, 0.0])
    alpha = np.zeros(2)
    v = np.array([-HUGE])  # z = x . v / (lambda N) = -1e308 for row 0
    clip = 0.5
    args = (
        y, np.ones(2), np.zeros(0), np.array([1]), np.array([0]), np.zeros(0), np.zeros(0),
        alpha, v, np.zeros(1), 0.0, clip, 1.0, 1.0, 0, 0.0, False, False,
        np.random.default_rng(0), False,
    )  # fmt: skip
    if sparse:
        A = sp.csr_array(X)
        scd_steps_csr(A.data, A.indices, A.indptr, *args)
    else:
        scd_steps_dense(X, *args)
    assert alpha[0] == clip and v[0] == -HUGE + clip
    v[0] = NAN  # a NaN margin: the step is dropped
    alpha[:] = 0.0
    if sparse:
        scd_steps_csr(A.data, A.indices, A.indptr, *args)
    else:
        scd_steps_dense(X, *args)
    assert alpha[0] == 0.0


def test_numpy_clipping_helpers_bound_every_term():
    from dpglm.clipping import clip_terms, l2_clip_coefficients

    got = clip_terms(np.array([INF, -INF, NAN, 0.5, -3.0]), 1.0)
    np.testing.assert_array_equal(got, [1.0, -1.0, 0.0, 0.5, -1.0])
    s = np.array([INF, -INF, NAN, INF, 3.0, 0.0, -INF, -HUGE])
    norms = np.array([4.0, 2.0, 1.0, 0.0, INF, INF, 1e-308, 1e-308])
    # +-c / norm over the bound; NaN norms (NaN s, inf on a zero row, 0 on inf) give 0;
    # 2 / 1e-308 overflows, so the largest double stands for it; -1e308 1e-308 is -1
    want = [0.5, -1.0, 0.0, 0.0, 0.0, 0.0, -np.finfo(float).max, -HUGE]
    np.testing.assert_array_equal(l2_clip_coefficients(s, norms, 2.0), want)


def test_tiny_clips_of_huge_rows_stay_under_the_bound():
    """``c / norm`` is subnormal for a clip of 3e-16 on a row of norm 1.2e308, and rounds
    up to twice its value: such a factor clips the record to nothing instead."""
    from dpglm._kernels import elementwise
    from dpglm._kernels.elementwise import l2_clip_coefficient
    from dpglm._kernels.multinomial import residual_scale
    from dpglm.clipping import (
        SMALLEST_NORMAL,
        SUBNORMAL_STEP,
        l2_clip_coefficients,
        l2_clip_residuals,
    )
    from dpglm.solvers.dp_direction import class_sums

    assert (SMALLEST_NORMAL, SUBNORMAL_STEP) == (
        elementwise.SMALLEST_NORMAL,
        elementwise.SUBNORMAL_STEP,
    )

    for c, norm in [(3e-16, 1.2e308), (1e-15, 1.2e308), (1e-12, 1.7e308), (1e-9, 1.7e308)]:
        coef = l2_clip_coefficients(np.array([1.0, -2.0]), np.array([norm, norm]), c)
        assert np.all(np.abs(coef) * norm <= c * (1 + 1e-15))
        assert abs(l2_clip_coefficient(1.0, norm, c)) * norm <= c * (1 + 1e-15)
        rows = l2_clip_residuals(np.array([[0.6, -0.8]]), np.array([norm]), c)
        assert np.linalg.norm(rows) * norm <= c * (1 + 1e-15)
        # the coefficient over the bound, and each scaled residual, rounded into the
        # subnormals: random derivatives and residuals, every one no larger than exact
        rng = np.random.default_rng(seed_of("tiny clips", int(norm / 1e300), c))
        s = rng.uniform(-1.0, 1.0, 2000)
        coef = l2_clip_coefficients(s, np.full(2000, norm), c)
        assert np.all(np.abs(coef) * norm <= c * (1 + 1e-15))
        for r in rng.uniform(-1.0, 1.0, (300, 3)):
            rows = l2_clip_residuals(r[None, :], np.array([norm]), c)
            assert math.hypot(*rows[0]) * norm <= c * (1 + 1e-15)
            scores = np.log(rng.uniform(0.1, 1.0, 3))
            residual_scale(scores, 0, norm, c)
            assert math.hypot(*scores) * norm <= c * (1 + 1e-15)
        X = np.array([[norm, 0.0], [1.0, 0.0]])
        sums = class_sums(X, np.array([True, False]), c, np.zeros(2, dtype=bool))
        assert np.all(np.abs(np.concatenate([np.ravel(a) for a in sums])) <= c * (1 + 1e-15))


def test_paper_multinomial_losses_stay_between_zero_and_the_bound():
    """The multinomial loss reads its largest score twice; under the kernels' fast-math
    flags the two may round apart and a record's loss come out negative (-6 on this
    record, -inf where the exponentials underflow): each term must stay in [0, clip]."""
    from dpglm.access.sums import candidate_losses
    from dpglm.datafits import Multinomial

    prob = Problem(np.array([[1e16, -0.7e16]]), np.array([0.0]), Multinomial(3))
    rng = np.random.default_rng(0)
    lowest, highest = np.inf, -np.inf
    for _ in range(2000):
        theta = rng.normal(size=6)
        direction = rng.normal(size=6)
        direction /= np.linalg.norm(direction)
        out = candidate_losses(prob, prob.margins(theta), direction, np.linspace(0, 2, 21), 3.0)
        lowest, highest = min(lowest, out.min()), max(highest, out.max())
    assert lowest >= 0.0 and highest <= 3.0


def test_problem_clipped_gradient_bounds_the_intercept_terms():
    prob = Problem(np.array([[1.0], [0.0]]), np.zeros(2), "squared", fit_intercept=True)
    got = prob.clipped_gradient(np.zeros(2), 1.0, derivatives=np.array([NAN, -INF]))
    np.testing.assert_array_equal(got, [0.0, -0.5])


@pytest.mark.nojit
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_tiny_fits_with_an_extreme_record(sparse, ieee):
    """The solvers end to end on 16 records, one of them extreme (CI also runs this with
    ``NUMBA_DISABLE_JIT=1``, where no fused multiply-add absorbs an overflow)."""
    X, y = regression(n=16, p=3, w=(3.0, 3.0, -2.0))
    X, y = with_record(X, y, x=(HUGE, -HUGE, 1e-308), target=-HUGE, row=3)
    data = sp.csr_matrix(X) if sparse else X
    kwargs = {"epsilon": 1.0, "delta": DELTA, "random_state": 0}
    fits = [
        dp_cd(Problem(data, y, "squared", L1(0.01), True), passes=2, feature_bounds=1.0,
              **kwargs),
        dp_sgd(Problem(data, y, "squared", L2(0.01), True), passes=2, batch_size=4, step=0.5,
               **kwargs),
        dp_scd(Problem(data, y, "squared", L2(0.1)), passes=2, batch_size=4, **kwargs),
        dp_gd(Problem(data, y, "squared", L2(0.01), True), n_iter=3, **kwargs),
    ]  # fmt: skip
    for fit in fits:
        assert_finite_fit(fit)


# --- record norms are exact for every finite record -----------------------------------------

# rows whose sum of squares overflows, underflows to 0, or is a subnormal 8 % off
EXTREME_ROWS = np.array(
    [[3.4e-162, 0.0], [1e-308, 0.0], [HUGE, HUGE], [5e-324, 0.0], [3.0, 4.0], [0.0, 0.0]]
)
EXACT_NORMS = np.array([3.4e-162, 1e-308, math.sqrt(2) * HUGE, 5e-324, 5.0, 0.0])


@pytest.mark.parametrize("layout", ["dense", "csr", "csc"])
def test_record_norms_are_exact_for_extreme_rows(layout):
    X = EXTREME_ROWS
    data = {"dense": X, "csr": sp.csr_matrix(X), "csc": sp.csc_matrix(X)}[layout]
    np.testing.assert_allclose(sample_norms(data, False), EXACT_NORMS, rtol=1e-15)
    with np.errstate(over="ignore", under="ignore"):
        with_one = np.sqrt(EXACT_NORMS**2 + 1.0)
    with_one[2] = EXACT_NORMS[2]
    np.testing.assert_allclose(sample_norms(data, True), with_one, rtol=1e-15)
    prob = Problem(data, np.zeros(X.shape[0]), "squared")
    np.testing.assert_allclose(row_norms(prob), EXACT_NORMS, rtol=1e-15)
    if layout != "csc":
        with np.errstate(divide="ignore", over="ignore"):
            inverse = np.where(EXACT_NORMS > 0, 1.0 / EXACT_NORMS, 0.0)
        np.testing.assert_allclose(row_scales(data), inverse, rtol=1e-15)


def test_dp_sgd_clipped_gradient_of_a_tiny_row_stays_within_the_bound():
    """``3.4e-162**2`` rounds to a subnormal 8 % off: the gradient's norm, hence its clipping,
    must not inherit the error (else one record moves the sum by 1.08 C)."""
    X = np.array([[3.4e-162, 0.0], [1.0, 0.0]])
    norms = sample_norms(X, False)
    out = np.empty(2)
    clip = 1.0
    clipped_row_gradient_sum_dense(X, np.array([0]), np.array([-HUGE]), norms, clip, out)
    assert np.linalg.norm(out) <= clip * (1 + 1e-15), out


def test_normalised_rows_are_unit_rows():
    from dpglm.clipping import normalised_rows

    for X in (EXTREME_ROWS, sp.csr_matrix(EXTREME_ROWS)):
        rows, scale = normalised_rows(X)
        dense = rows.toarray() if sp.issparse(rows) else rows
        unit = np.linalg.norm(dense * scale[:, None], axis=1)
        np.testing.assert_allclose(unit, [1, 1, 1, 1, 1, 0], rtol=1e-15)
        assert rows is not X and type(rows) is type(X)
        ordinary = X[4:]  # (3, 4) and a zero row: read in place
        assert normalised_rows(ordinary)[0] is ordinary


# --- public bounds: every entry clipped per record before any kernel -------------------------


@pytest.mark.parametrize("layout", ["C", "F", "csr", "csc"])
def test_clip_features_copies_only_outside_the_bounds_and_keeps_the_layout(layout):
    from dpglm.clipping import clip_features

    inside = np.array([[0.5, -2.0], [-1.0, 0.0]])
    outside = np.array([[HUGE, -2.0], [-1.0, -3.0]])
    make = {
        "C": np.ascontiguousarray,
        "F": np.asfortranarray,
        "csr": sp.csr_matrix,
        "csc": sp.csc_matrix,
    }[layout]
    bounds = np.array([1.0, 2.0])
    X = make(inside)
    assert clip_features(X, bounds) is X
    X = make(outside)
    clipped = clip_features(X, bounds)
    assert clipped is not X
    want = np.array([[1.0, -2.0], [-1.0, -2.0]])
    if sp.issparse(X):
        assert clipped.format == X.format and clipped.nnz == X.nnz
        np.testing.assert_array_equal(clipped.toarray(), want)
        assert X.toarray()[0, 0] == HUGE  # the data is not modified
    else:
        assert clipped.flags.c_contiguous == X.flags.c_contiguous
        assert clipped.flags.f_contiguous == X.flags.f_contiguous
        np.testing.assert_array_equal(clipped, want)
        assert X[0, 0] == HUGE


@pytest.mark.parametrize("layout", ["rows", "columns"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_problem_clipped_to_keeps_the_layout_targets_and_model(sparse, layout):
    from dpglm.data.layout import as_layout

    X, y = regression(n=30, p=3, w=(3.0, -2.0, 1.0))
    X[4] = (HUGE, -2.0, 0.5)
    data = as_layout(sp.csr_matrix(X) if sparse else X, layout)
    prob = Problem(data, y, "squared", L1(0.1), fit_intercept=True)
    bounds = np.array([1.0, 1.5, 1.0])
    clipped = prob.clipped_to(bounds)
    assert clipped is not prob and clipped.layouts == (layout,)
    got = clipped.features.toarray() if sparse else clipped.features
    np.testing.assert_array_equal(got, np.clip(X, -bounds, bounds))
    assert clipped.y is prob.y and clipped.penalty is prob.penalty and clipped.fit_intercept
    assert (prob.features.toarray() if sparse else prob.features)[4, 0] == HUGE
    # within its bounds, a problem is its own clipped problem, and stays so
    assert clipped.clipped_to(bounds) is clipped
    assert prob.clipped_to(HUGE) is prob and prob.clipped_to(HUGE) is prob
    with pytest.raises(ValueError, match="feature_bounds"):
        prob.clipped_to(-1.0)


CD_FIT = {"epsilon": 1.0, "delta": DELTA, "passes": 10, "clip": 2.0, "feature_bounds": 1.0}
CD_FIT = {"epsilon": 1.0, "delta": DELTA, "passes": 10, "clip": 2.0, "feature_bounds": 1.0}
GCD_FIT = {"epsilon": 1.0, "delta": DELTA, "n_iter": 30, "clip": 2.0, "feature_bounds": 1.0}


@pytest.mark.parametrize("intercept", [False, True], ids=["no-icpt", "icpt"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
def test_dp_cd_with_bounds_trains_on_the_clipped_record(sparse, intercept):
    """The issue's case: ``x = (1e308, 0)`` made every DP-CD fit NaN (20 of 20 seeds); with
    ``feature_bounds=1`` the record is the clipped ``(1, 0)``, bit for bit."""
    X, y = regression()
    extreme, _ = with_record(X, y, x=(HUGE, 0.0))
    clipped, _ = with_record(X, y, x=(1.0, 0.0))
    kind = sp.csc_matrix if sparse else np.asarray
    for seed in range(3):
        fit = dp_cd(Problem(kind(extreme), y, "squared", L2(0.01), intercept), random_state=seed,
                    **CD_FIT)  # fmt: skip
        assert_finite_fit(fit)
        want = dp_cd(Problem(kind(clipped), y, "squared", L2(0.01), intercept),
                     random_state=seed, **CD_FIT)  # fmt: skip
        np.testing.assert_array_equal(fit.theta, want.theta)
        np.testing.assert_array_equal(fit.history.thetas, want.history.thetas)
    assert any("clipped to [-B_j, B_j]" in a for a in fit.report.assumptions)


@pytest.mark.parametrize("smoothness", ["bounds", "private"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
def test_dp_gcd_with_bounds_trains_on_the_clipped_record(sparse, smoothness):
    X, y = regression()
    extreme, _ = with_record(X, y, x=(HUGE, 0.0))
    clipped, _ = with_record(X, y, x=(1.0, 0.0))
    kind = sp.csc_matrix if sparse else np.asarray
    for seed in range(2):
        fits = [
            dp_gcd(Problem(kind(data), y, "squared", L1(0.01)), smoothness=smoothness,
                   random_state=seed, **GCD_FIT)
            for data in (extreme, clipped)
        ]  # fmt: skip
        assert_finite_fit(fits[0])
        np.testing.assert_array_equal(fits[0].theta, fits[1].theta)
        np.testing.assert_array_equal(fits[0].info["selected"], fits[1].info["selected"])


def spy_on(monkeypatch, module_name, function_name, argument):
    """Record the array argument ``argument`` of every call to ``module.function``."""
    module = importlib.import_module(module_name)
    real = getattr(module, function_name)
    seen = []

    def spy(*args):
        seen.append(np.array(args[argument]))
        return real(*args)

    monkeypatch.setattr(module, function_name, spy)
    return seen


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
def test_dp_gcd_scores_finite_clipped_gradients(sparse, monkeypatch):
    """Without bounds (smoothness from the data, a leak), the kernels alone must keep the
    clipped gradient the selection scores finite: ``inf * 0`` in column 1 was NaN."""
    seen = spy_on(monkeypatch, "dpglm.solvers.dp_gcd", "greedy_select", 1)
    X, y = regression(w=(3.0, 3.0))
    extreme, _ = with_record(X, y, x=(HUGE, 0.0))
    data = sp.csc_matrix(extreme) if sparse else extreme
    with pytest.warns(PrivacyLeakWarning):
        fit = dp_gcd(Problem(data, y, "squared"), epsilon=1.0, delta=DELTA, n_iter=30, clip=2.0,
                     random_state=0)  # fmt: skip
    assert_finite_fit(fit)
    assert len(seen) == 30 and all(np.isfinite(g).all() for g in seen)


def test_dp_fw_scores_finite_clipped_gradients(monkeypatch):
    """Frank-Wolfe's margins overflow at the first step (radius 5); NaN scores were never
    selected, so the fit could not move coordinate 1 at all."""
    seen = spy_on(monkeypatch, "dpglm.solvers.dp_fw", "noisy_vertex", 0)
    X, y = regression(w=(3.0, 3.0))
    extreme, _ = with_record(X, y, x=(HUGE, 0.0))
    fit = dp_fw(Problem(extreme, y, "squared"), epsilon=1.0, delta=DELTA, radius=5.0, n_iter=20,
                clip=2.0, random_state=0)  # fmt: skip
    assert_finite_fit(fit)
    assert len(seen) == 20 and all(np.isfinite(g).all() for g in seen)


@pytest.mark.parametrize("solver", [dp_agd, dp_gd], ids=["dp-agd", "dp-gd"])
@pytest.mark.parametrize("intercept", [False, True], ids=["no-icpt", "icpt"])
def test_full_gradient_solvers_release_a_finite_clipped_sum(solver, intercept):
    """DP-AGD and DP-GD refused to release (``values must be finite``): the clipped sum of
    ``inf * 0`` was NaN."""
    X, y = regression()
    extreme, _ = with_record(X, y, x=(HUGE, 0.0))
    kwargs = {"max_iter": 30} if solver is dp_agd else {"n_iter": 30}
    fit = solver(Problem(extreme, y, "squared", L2(0.01), intercept), epsilon=1.0, delta=DELTA,
                 random_state=0, **kwargs)  # fmt: skip
    assert_finite_fit(fit)


@pytest.mark.parametrize("task", ["squared", "logistic"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_dp_scd_normalises_an_extreme_row(task, sparse):
    """``||(1e308, 0)||**2`` overflowed, so the row's scale was 0 and its dual step NaN."""
    X, y = regression()
    if task == "logistic":
        y = np.where(y > 0, 1.0, -1.0)
    extreme, _ = with_record(X, y, x=(HUGE, 0.0))
    unit, _ = with_record(X, y, x=(1.0, 0.0))
    kind = sp.csr_matrix if sparse else np.asarray
    kwargs = {"epsilon": 1.0, "delta": DELTA, "passes": 3, "batch_size": 10, "random_state": 0}
    fit = dp_scd(Problem(kind(extreme), y, task, L2(0.1)), **kwargs)
    assert_finite_fit(fit)
    # normalised, the extreme row is the unit row (1, 0)
    want = dp_scd(Problem(kind(unit), y, task, L2(0.1)), **kwargs)
    np.testing.assert_allclose(fit.coef, want.coef, rtol=1e-12)


def test_vertical_fw_parties_clip_to_the_bounds_without_copying_bounded_columns():
    from dpglm.distributed.protocol import Party, PartyConfig, SketchSpec

    X, y = regression(n=50, p=4, w=(3.0, -2.0, 1.0, 0.0))
    X = np.asfortranarray(X)
    config = PartyConfig(
        index=0, features=np.arange(4), tau=2, radius=1.0,
        sketch=SketchSpec(n_samples=50, dim=None, seed=0), feature_bounds=np.ones(4),
    )  # fmt: skip
    assert Party(config, X, y)._X is X
    extreme, _ = with_record(X, y, x=(HUGE, -HUGE, 0.0, 2.0))
    kwargs = {"epsilon": 1.0, "delta": DELTA, "sketch_dim": 20, "parties": 2, "tau": 1,
              "radius": 3.0, "n_iter": 20, "clip": 2.0, "feature_bounds": 1.0,
              "variant": "paper"}  # fmt: skip
    fit = vertical_fw(Problem(extreme, y, "squared"), random_state=3, **kwargs)
    want = vertical_fw(Problem(np.clip(extreme, -1, 1), y, "squared"), random_state=3, **kwargs)
    assert_finite_fit(fit)
    np.testing.assert_array_equal(fit.info["vertices"], want.info["vertices"])


@pytest.mark.parametrize("resident", [True, False], ids=["resident", "spilled"])
def test_sharded_dp_gcd_with_bounds_is_the_in_memory_fit(resident):
    from dpglm.distributed import ShardedProblem, ShardedRows

    X, y = regression(n=120)
    extreme, _ = with_record(X, y, x=(HUGE, 0.0), row=70)
    local = dp_gcd(Problem(extreme, y, "squared", L1(0.01)), random_state=0, **GCD_FIT)
    with ShardedRows.from_array(extreme, y, chunks=50, resident=resident) as rows:
        fit = dp_gcd(ShardedProblem(rows, "squared", L1(0.01)), random_state=0, **GCD_FIT)
    assert_finite_fit(fit)
    np.testing.assert_array_equal(fit.info["selected"], local.info["selected"])
    np.testing.assert_allclose(fit.coef, local.coef, rtol=1e-10, atol=0)


# --- every solver, every task: one extreme record keeps the model finite --------------------

EXTREME_VALUES = [HUGE, -HUGE, 1e-308, -1e-308, 5e-324, 3.4e-162, np.finfo(float).max]
N, P = 24, 3


def on_chunks(fit):
    """``fit`` run on the problem's records cut into row chunks (in this process)."""
    from dpglm.distributed import ShardedProblem, ShardedRows

    def run(prob, seed):
        with ShardedRows.from_array(prob.features, prob.y, chunks=10) as rows:
            sharded = ShardedProblem(rows, prob.datafit, prob.penalty, prob.fit_intercept)
            return fit(sharded, seed)

    return run


def _solver_cases():
    """``{name: (tasks, sparse, intercept, fit)}``, ``fit(problem, seed)`` a private fit."""
    fw = {"radius": 3.0, "n_iter": 8, "clip": 1.0}
    cases = [
        ("dp-cd", ("squared", "logistic", "squared_hinge", "huber"), True, True,
         lambda prob, seed: dp_cd(prob, epsilon=1.0, delta=DELTA, passes=3, clip=1.0,
                                  feature_bounds=1.0, smoothness="bounds", random_state=seed)),
        ("dp-cd private M", ("squared", "logistic"), True, True,
         lambda prob, seed: dp_cd(prob, epsilon=1.0, delta=DELTA, passes=3, clip=1.0,
                                  feature_bounds=1.0, smoothness="private", random_state=seed)),
        ("dp-cd data M", ("squared", "logistic"), True, True,
         lambda prob, seed: dp_cd(prob, epsilon=1.0, delta=DELTA, passes=3, clip=1.0,
                                  random_state=seed)),
        ("dp-gcd", ("squared", "logistic", "squared_hinge"), True, True,
         lambda prob, seed: dp_gcd(prob, epsilon=1.0, delta=DELTA, n_iter=8, clip=1.0,
                                   feature_bounds=1.0, random_state=seed)),
        ("dp-gcd data M", ("squared", "logistic"), True, True,
         lambda prob, seed: dp_gcd(prob, epsilon=1.0, delta=DELTA, n_iter=8, clip=1.0,
                                   noise="paper", random_state=seed)),
        ("dp-sgd", ("squared", "logistic", "hinge", "squared_hinge", "huber"), True, True,
         lambda prob, seed: dp_sgd(prob, epsilon=1.0, delta=DELTA, passes=3, batch_size=6,
                                   step=0.5, random_state=seed)),
        ("dp-agd", ("squared", "logistic", "squared_hinge"), True, True,
         lambda prob, seed: dp_agd(prob, epsilon=1.0, delta=DELTA, max_iter=8,
                                   random_state=seed)),
        ("dp-gd", ("squared", "logistic", "hinge", "squared_hinge"), True, True,
         lambda prob, seed: dp_gd(prob, epsilon=1.0, delta=DELTA, n_iter=8, random_state=seed)),
        ("dp-scd", ("squared", "logistic", "hinge", "squared_hinge"), True, False,
         lambda prob, seed: dp_scd(prob, epsilon=1.0, delta=DELTA, passes=3, batch_size=6,
                                   random_state=seed)),
        ("dp-fw", ("squared", "logistic", "squared_hinge"), True, False,
         lambda prob, seed: dp_fw(prob, epsilon=1.0, delta=DELTA, random_state=seed, **fw)),
        ("dp-bcfw", ("squared", "logistic"), True, False,
         lambda prob, seed: dp_bcfw(prob, epsilon=1.0, delta=DELTA, sampling="uniform",
                                    random_state=seed, **fw)),
        ("vertical-fw", ("squared",), True, False,
         lambda prob, seed: vertical_fw(prob, epsilon=1.0, delta=DELTA, sketch_dim=8, parties=2,
                                        feature_bounds=1.0, random_state=seed, variant="paper",
                                        **fw)),
        ("vertical-fw screened", ("squared",), True, False,
         lambda prob, seed: vertical_fw(prob, epsilon=1.0, delta=DELTA, parties=2, radius=3.0,
                                        feature_bounds=1.0, random_state=seed)),
        ("data-parallel dp-gcd", ("squared", "logistic"), True, True,
         on_chunks(lambda prob, seed: dp_gcd(prob, epsilon=1.0, delta=DELTA, n_iter=8, clip=1.0,
                                             feature_bounds=1.0, random_state=seed))),
        ("data-parallel dp-agd", ("squared", "logistic"), True, True,
         on_chunks(lambda prob, seed: dp_agd(prob, epsilon=1.0, delta=DELTA, max_iter=8,
                                             random_state=seed))),
        ("data-parallel dp-fw", ("squared", "logistic"), True, False,
         on_chunks(lambda prob, seed: dp_fw(prob, epsilon=1.0, delta=DELTA, random_state=seed,
                                            **fw))),
        ("data-parallel dp-sgd", ("squared", "logistic", "hinge"), True, True,
         on_chunks(lambda prob, seed: dp_sgd(prob, epsilon=1.0, delta=DELTA, passes=3,
                                             batch_size=6, step=0.5, random_state=seed))),
    ]  # fmt: skip
    return {name: (tasks, sparse, intercept, fit) for name, tasks, sparse, intercept, fit in cases}


SOLVER_CASES = _solver_cases()


def _penalty(name, task):
    name = name.removeprefix("data-parallel ")
    if name == "dp-scd":
        return L2(0.1)
    if name in ("dp-fw", "dp-bcfw", "vertical-fw", "vertical-fw screened"):
        return L1Ball(3.0) if name == "dp-fw" else None
    if name in ("dp-agd", "dp-gd"):
        return L2(0.01)
    return L1(0.01) if task == "squared" else L2(0.01)


@st.composite
def extreme_problems(draw, name):
    tasks, sparse_ok, intercept_ok, _ = SOLVER_CASES[name]
    task = draw(st.sampled_from(tasks))
    sparse = sparse_ok and draw(st.booleans())
    intercept = intercept_ok and draw(st.booleans())
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (N, P))
    if task in ("squared", "huber"):
        y = X @ np.array([3.0, 3.0, -2.0]) + 0.1 * rng.standard_normal(N)
        target = draw(st.one_of(st.sampled_from([HUGE, -HUGE, 1e-308]), st.none()))
    else:
        y = np.where(X @ np.array([3.0, 3.0, -2.0]) > 0, 1.0, -1.0)
        target = None
    record = draw(
        st.lists(st.one_of(st.sampled_from(EXTREME_VALUES), st.sampled_from([0.0, 1.0])),
                 min_size=P, max_size=P)
    )  # fmt: skip
    X, y = with_record(X, y, x=record, target=target, row=draw(st.integers(0, N - 1)))
    data = sp.csr_matrix(X) if sparse else X
    return Problem(data, y, task, _penalty(name, task), fit_intercept=intercept), seed


@pytest.mark.parametrize("name", SOLVER_CASES)
def test_one_extreme_record_keeps_every_solver_finite(name):
    fit = SOLVER_CASES[name][3]

    @settings(
        max_examples=6 if name.startswith("data-parallel") else 12,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(extreme_problems(name))
    def check(case):
        problem, seed = case
        with warnings.catch_warnings():
            # the "data M" cases leak on purpose: the point is only that they stay finite
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            result = fit(problem, seed)
        assert_finite_fit(result)
        assert result.report.epsilon <= 1.0 + 1e-9

    check()


ESTIMATORS = {
    "linear dp-cd": (DPLinearRegression, {"solver": "dp-cd", "feature_bounds": 1.0}),
    "linear dp-gcd": (DPLinearRegression, {"solver": "dp-gcd", "feature_bounds": 1.0}),
    "linear dp-sgd": (DPLinearRegression, {"solver": "dp-sgd"}),
    "logistic dp-cd": (DPLogisticRegression, {"solver": "dp-cd", "feature_bounds": 1.0}),
    "logistic dp-scd": (DPLogisticRegression, {"solver": "dp-scd", "fit_intercept": False}),
    "logistic dp-agd": (DPLogisticRegression, {"solver": "dp-agd"}),
    "svc dp-sgd": (DPLinearSVC, {"solver": "dp-sgd"}),
}


@pytest.mark.parametrize("name", ESTIMATORS)
def test_one_extreme_record_keeps_every_estimator_finite(name):
    cls, params = ESTIMATORS[name]
    classifier = cls is not DPLinearRegression

    @settings(max_examples=8, deadline=None, derandomize=True)
    @given(
        st.lists(st.sampled_from([*EXTREME_VALUES, 0.0]), min_size=P, max_size=P),
        st.sampled_from([HUGE, -HUGE, 0.5]),
        st.booleans(),
    )
    def check(record, target, sparse):
        rng = np.random.default_rng(seed_of(name))
        X = rng.uniform(-1.0, 1.0, (N, P))
        y = X @ np.array([3.0, 3.0, -2.0])
        if classifier:
            y, target = np.where(y > 0, 1.0, -1.0), None
        X, y = with_record(X, y, x=record, target=target, row=5)
        # the public label set: 24 records are too few to select it privately
        labels = {"classes": [-1.0, 1.0]} if classifier else {}
        # the plans of the solver cases above: their calibrations are cached
        model = cls(
            epsilon=1.0, delta=DELTA, passes=3, batch_size=6, random_state=0, **labels, **params
        )
        model.fit(sp.csr_matrix(X) if sparse else X, y)
        assert np.isfinite(model.coef_).all() and np.isfinite(model.intercept_)

    check()
