"""Seeded fits of every solver, whose coefficients and reports are kept as fixtures.

``tests/test_golden.py`` checks that each case gives back, bit for bit, the
coefficients and the privacy report recorded in ``tests/data/golden_fits.json``:
a redesign of where the code lives must not change what it computes.
``python tests/golden_fits.py`` records them again (only when a change of the
numbers is meant, and said so in its commit).
"""

import json
import sys
import warnings
from pathlib import Path

import numpy as np

from dpglm.distributed import ShardedProblem, ShardedRows
from dpglm.distributed.vertical_fw import vertical_fw
from dpglm.estimators import DPLasso, DPLinearSVC, DPLogisticRegression, DPRidge
from dpglm.penalties import L1, L2, ElasticNet
from dpglm.problem import Problem
from dpglm.solvers.dp_agd import dp_agd
from dpglm.solvers.dp_cd import dp_cd
from dpglm.solvers.dp_fw import dp_bcfw, dp_fw
from dpglm.solvers.dp_gcd import dp_gcd
from dpglm.solvers.dp_gd import dp_gd
from dpglm.solvers.dp_scd import dp_scd
from dpglm.solvers.dp_sgd import dp_sgd
from solver_problems import make_data

FIXTURES = Path(__file__).resolve().parent / "data" / "golden_fits.json"
DELTA = 1e-6
N, P = 400, 6


def data(classification=False, sparse=False):
    return make_data(20261125, n=N, p=P, classification=classification, sparse=sparse)


def _quietly(fit, *args, **kwargs):
    """``fit(*args, **kwargs)`` without its regime warning: the golden problems are small
    on purpose (they pin the arithmetic, not the utility)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="vertical_fw is not expected to beat")
        return fit(*args, **kwargs)


def problem(datafit, penalty=None, intercept=False, *, classification=False, sparse=False):
    X, y = data(classification, sparse)
    return Problem(X, y, datafit, penalty, fit_intercept=intercept)


def sharded(datafit, penalty=None, intercept=False, *, classification=False):
    X, y = data(classification)
    rows = ShardedRows.from_array(X, y, chunks=150)
    return rows, ShardedProblem(rows, datafit, penalty, fit_intercept=intercept)


def on_rows(fit, *args, **kwargs):
    rows, prob = sharded(*args, **kwargs)
    with rows:
        return fit(prob)


def estimator(model, classification=False):
    X, y = data(classification)
    return model.fit(X, y)


#: name -> a fit, each with its own fixed seed; the result has ``theta`` (a solver's
#: FitResult) or ``coef_`` (an estimator) and a privacy report
CASES = {
    "dp-cd logistic private M": lambda: dp_cd(
        problem("logistic", L2(0.01), True, classification=True),
        epsilon=1.0, delta=DELTA, passes=4, feature_bounds=1.0, random_state=1,
    ),
    "dp-cd sparse lasso bounds": lambda: dp_cd(
        problem("squared", L1(0.01), True, sparse=True),
        epsilon=2.0, delta=DELTA, passes=3, feature_bounds=1.0, smoothness="bounds",
        random_state=2,
    ),
    "dp-gcd tight": lambda: dp_gcd(
        problem("squared", L1(0.02), True),
        epsilon=2.0, delta=DELTA, n_iter=25, feature_bounds=1.0, random_state=3,
    ),
    "dp-gcd paper sparse": lambda: dp_gcd(
        problem("logistic", ElasticNet(0.01, 0.5), False, classification=True, sparse=True),
        epsilon=2.0, delta=DELTA, n_iter=15, noise="paper", feature_bounds=1.0,
        smoothness="bounds", random_state=4,
    ),
    "dp-sgd poisson": lambda: dp_sgd(
        problem("logistic", L2(0.001), True, classification=True),
        epsilon=1.0, delta=DELTA, passes=2, batch_size=40, step=0.5, random_state=5,
    ),
    "dp-sgd without replacement sparse": lambda: dp_sgd(
        problem("huber", L1(0.001), True, sparse=True),
        epsilon=1.0, delta=DELTA, passes=2, batch_size=40, sampling="without_replacement",
        random_state=6,
    ),
    "dp-scd poisson": lambda: dp_scd(
        problem("logistic", L2(0.01), classification=True),
        epsilon=1.0, delta=DELTA, passes=2, batch_size=40, random_state=7,
    ),
    "seqdp-scd": lambda: dp_scd(
        problem("squared", L2(0.01)),
        epsilon=1.0, delta=DELTA, passes=1, batch_size=4, sampling="without_replacement",
        sequential=True, clip=0.05, random_state=8,
    ),
    "dp-agd": lambda: dp_agd(
        problem("logistic", L2(0.01), True, classification=True),
        epsilon=1.0, delta=DELTA, max_iter=30, random_state=9,
    ),
    "dp-gd": lambda: dp_gd(
        problem("squared", L2(0.01), True), epsilon=1.0, delta=DELTA, n_iter=20, random_state=10
    ),
    "dp-fw": lambda: dp_fw(
        problem("squared"), epsilon=2.0, delta=DELTA, radius=2.0, n_iter=30, random_state=11
    ),
    "dp-bcfw": lambda: dp_bcfw(
        problem("squared"), epsilon=2.0, delta=DELTA, radius=1.0,
        blocks=np.array([0, 1, 0, 1, 2, 2]), sampling="uniform", n_iter=30, random_state=12,
    ),
    "vertical fw": lambda: _quietly(
        vertical_fw, problem("squared"), epsilon=3.0, delta=DELTA, parties=3, tau=2,
        sketch_dim=20, radius=1.0, n_iter=15, clip=1.0, feature_bounds=1.0, variant="paper",
        random_state=13,
    ),
    "vertical fw gaussian": lambda: _quietly(
        vertical_fw, problem("squared"), epsilon=3.0, delta=DELTA, parties=3, tau=2,
        sketch_dim=20, sketch="gaussian", radius=1.0, n_iter=15, clip=1.0, feature_bounds=1.0,
        variant="paper", random_state=13,
    ),
    "data-parallel dp-gcd": lambda: on_rows(
        lambda prob: dp_gcd(
            prob, epsilon=2.0, delta=DELTA, n_iter=20, feature_bounds=1.0,
            smoothness="private", random_state=14,
        ),
        "squared", L1(0.02), True,
    ),
    "data-parallel dp-agd": lambda: on_rows(
        lambda prob: dp_agd(prob, epsilon=2.0, delta=DELTA, max_iter=30, random_state=15),
        "logistic", L2(0.01), True, classification=True,
    ),
    "data-parallel dp-fw": lambda: on_rows(
        lambda prob: dp_fw(prob, epsilon=2.0, delta=DELTA, radius=2.0, n_iter=20,
                           random_state=16),
        "squared",
    ),
    "data-parallel dp-sgd": lambda: on_rows(
        lambda prob: dp_sgd(prob, epsilon=2.0, delta=DELTA, passes=2, batch_size=40,
                            step=0.5, random_state=17),
        "logistic", L1(0.001), True, classification=True,
    ),
    "estimator logistic auto": lambda: estimator(
        DPLogisticRegression(epsilon=1.0, random_state=18, classes=[-1.0, 1.0]),
        classification=True,
    ),
    "estimator lasso auto": lambda: estimator(
        DPLasso(alpha=0.01, epsilon=1.0, feature_bounds=1.0, random_state=19)
    ),
    "estimator ridge dp-cd": lambda: estimator(
        DPRidge(alpha=0.01, solver="dp-cd", epsilon=1.0, feature_bounds=1.0, random_state=20)
    ),
    "estimator svm dp-scd": lambda: estimator(
        DPLinearSVC(
            solver="dp-scd", fit_intercept=False, epsilon=1.0, random_state=21,
            classes=[-1.0, 1.0],
        ),
        classification=True,
    ),
}  # fmt: skip


def outcome(fit) -> dict:
    """Coefficients as exact hexadecimal floats, and the report as its JSON document."""
    if hasattr(fit, "theta"):
        values, report = fit.theta, fit.report
    else:
        values, report = np.append(fit.coef_, fit.intercept_), fit.privacy_report_
    return {
        "theta": [float(v).hex() for v in np.asarray(values, dtype=float).ravel()],
        "report": json.loads(report.to_json()),
    }


def record(path=FIXTURES) -> None:
    fixtures = {name: outcome(fit()) for name, fit in CASES.items()}
    path.write_text(json.dumps(fixtures, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    sys.exit(record())
