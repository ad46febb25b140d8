"""What a user waits for besides training: calibration, start-up, the first fit at a new epsilon.

Three measurements, each a ratio taken in one run of this script (the
machine's speed drifts by a fifth between runs):

1. **Calibration of each solver's plan** (plan only, no data), for adult's
   shape and for a synthetic problem of 1e6 rows and 100 features at
   ``delta = 1e-12``: the time ``calibrate`` takes now, the time the
   calibration took before (dp-accounting's privacy loss distributions at a
   1e-4 grid, and its Renyi DP of sampling without replacement, searched by
   doubling and Brent's method from the template's noise), and the epsilon
   that today's calibrated plan has under that former accountant (within 1%
   of it, never below: the new accountant is pessimistic).
2. **A fit on adult at a new epsilon** (every solver, default arguments, the
   private preprocessing included), in a process whose kernels are compiled:
   the fit at a new epsilon against the same fit again with the calibration
   cached; and a ``PrivateSearchCV`` over 8 candidates against the sum of its
   candidates' fits with their calibrations cached.
3. **Start-up**: ``import dpglm`` over ``import numpy, scipy.sparse``, and
   ``from dpglm import DPLogisticRegression`` over ``import sklearn.base``
   (fresh interpreters, best of 7).

Usage::

    python benchmarks/bench_overhead.py            # all three, ~1 minute
    python benchmarks/bench_overhead.py --only calibration

Results go to ``benchmarks/results/bench_overhead.json``; the table is in
``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "datasets"
RESULTS = HERE / "results" / "bench_overhead.json"
EPSILONS = (0.7, 1.0)  # the first warms the process up, the second is "new"


# -- the former accountants, for the "before" column -----------------------------------------


def former_accountants():
    """The PLD and RDP accountants as calibration used them before: dp-accounting's."""
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as pld
    from dp_accounting.rdp import RdpAccountant

    from dpglm.privacy.accounting import RDPAccountant, active_events
    from dpglm.privacy.events import (
        GaussianEvent,
        LaplaceEvent,
        NoisyMaxEvent,
        PureDPEvent,
        SampledGaussianEvent,
        randomized_response_parameter,
    )

    def pld_epsilon(plan, delta):
        events = active_events(plan)
        if events is None:
            return math.inf
        parts = []
        gaussians = [e for e in events if isinstance(e, GaussianEvent)]
        if gaussians:
            mu = math.sqrt(sum(e.count / e.noise_multiplier**2 for e in gaussians))
            parts.append(pld.from_gaussian_mechanism(1 / mu, value_discretization_interval=1e-4))
        for e in events:
            if isinstance(e, SampledGaussianEvent):
                replace_one = plan.neighbouring == "replace_one"
                one = pld.from_gaussian_mechanism(
                    e.noise_multiplier,
                    sensitivity=0.5 if replace_one else 1.0,
                    sampling_prob=e.sampling_rate,
                    value_discretization_interval=1e-4,
                    neighboring_relation=NeighboringRelation.REPLACE_ONE
                    if replace_one
                    else NeighboringRelation.ADD_OR_REMOVE_ONE,
                )
            elif isinstance(e, LaplaceEvent):
                one = pld.from_laplace_mechanism(
                    e.noise_multiplier, value_discretization_interval=1e-4
                )
            elif isinstance(e, NoisyMaxEvent | PureDPEvent):
                one = pld.from_randomized_response(
                    randomized_response_parameter(e.epsilon), 2, value_discretization_interval=1e-4
                )
            else:
                continue
            parts.append(one.self_compose(e.count) if e.count > 1 else one)
        total = parts[0]
        for one in parts[1:]:
            total = total.compose(one)
        return total.get_epsilon_for_delta(delta)

    rdp_now = RDPAccountant()

    def rdp_epsilon(plan, delta):
        if not any(getattr(e, "sampling", None) == "without_replacement" for e in plan.events):
            return rdp_now.epsilon(plan, delta)
        accountant = RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
        accountant.compose(plan.to_dp_event())
        return accountant.get_epsilon(delta)

    return {"pld": pld_epsilon, "rdp": rdp_epsilon}


def former_calibration(epsilon_of, template, epsilon, delta, rtol=1e-4):
    """The search calibration ran before: doubling from the template, then Brent's method."""
    from scipy.optimize import brentq

    def cost(log_scale):
        return epsilon_of(template.scaled(math.exp(log_scale)), delta)

    hi = 0.0
    while cost(hi) > epsilon:
        hi += math.log(2)
    lo = hi - math.log(2)
    while cost(lo) <= epsilon:
        hi, lo = lo, lo - math.log(2)
    root = brentq(lambda t: cost(t) - epsilon, lo, hi, xtol=rtol / 4, rtol=1e-15)
    return math.exp(root)


# -- 1. calibration, plan only -----------------------------------------------------------------

SOLVERS = {
    "dp-sgd": ("logistic", ("l2", 1e-4), True),
    "dp-cd": ("logistic", ("l2", 1e-4), True),
    "dp-gcd": ("logistic", ("l1", 1e-4), True),
    "dp-agd": ("logistic", ("l2", 1e-4), True),
    "dp-scd": ("hinge", ("l2", 1e-4), False),
    "adassp": ("squared", ("l2", 1e-4), True),
}


def solver_templates(n_samples, n_features, epsilon=1.0):
    """Each solver's template plan with its default hyperparameters, from the shape alone."""
    from dpglm.penalties import L1, L2
    from dpglm.solvers.registry import ProblemShape, get_solver

    delta = 1.0 / n_samples**2
    templates = {}
    for name, (datafit, (kind, alpha), intercept) in SOLVERS.items():
        penalty = (L1 if kind == "l1" else L2)(alpha=alpha)
        shape = ProblemShape(n_samples, n_features, datafit, penalty, fit_intercept=intercept)
        kwargs = {"feature_bounds": 1.0} if name in ("dp-cd", "dp-gcd", "adassp") else {}
        if name == "adassp":
            kwargs["target_bound"] = 1.0
        plan = get_solver(name).fit_plan(shape, epsilon=epsilon, delta=delta, **kwargs)
        templates[name] = plan.template
    return templates, delta


def measure_calibration(n_samples, n_features):
    from dpglm.privacy.accounting import account
    from dpglm.privacy.calibration import calibrate

    former = former_accountants()
    templates, delta = solver_templates(n_samples, n_features)
    warm, _ = solver_templates(n_samples, n_features, 0.3)
    rows = {}
    for name, template in templates.items():
        calibrate(warm[name], 0.3, delta)  # imports and first calls out of the timing
        start = time.perf_counter()
        result = calibrate(template, 1.0, delta)
        now = time.perf_counter() - start
        row = {
            "accountant": result.accountant,
            "events": sum(e.count for e in template.events),
            "calibration_s": now,
            "epsilon": result.epsilon,
        }
        if result.accountant in former:
            epsilon_of = former[result.accountant]
            start = time.perf_counter()
            scale = former_calibration(epsilon_of, template, 1.0, delta)
            row["former_calibration_s"] = time.perf_counter() - start
            row["former_scale_over_scale"] = scale / result.scale
            row["former_epsilon_of_plan"] = epsilon_of(result.plan, delta)
        else:
            row["former_calibration_s"] = now  # closed forms: unchanged
        row["report_epsilon"] = account(result.plan, delta, result.accountant).epsilon
        rows[name] = row
        former_s = row["former_calibration_s"]
        extra = ""
        if "former_epsilon_of_plan" in row:
            extra = (
                f"  former eps of this plan {row['former_epsilon_of_plan']:.5f}"
                f"  former noise / noise {row['former_scale_over_scale']:.4f}"
            )
        print(
            f"  {name:7s} {result.accountant:5s} {row['events']:7d} events  "
            f"calibration {now * 1e3:7.1f} ms  before {former_s * 1e3:8.1f} ms  "
            f"eps {result.epsilon:.5f}{extra}",
            flush=True,
        )
    return rows


def measure_long_plans(steps=100_000, delta=1e-12):
    """Calibration of plans of ``steps`` Poisson-subsampled Gaussian releases (plan only)."""
    from dpglm.privacy.calibration import calibrate
    from dpglm.privacy.events import PrivacyPlan, SampledGaussianEvent

    rows = {}
    for rate in (2.56e-4, 1e-3, 1e-2):
        event = SampledGaussianEvent(
            count=steps, sensitivity=2.0, noise_multiplier=1.0, sampling_rate=rate
        )
        plan = PrivacyPlan([event], neighbouring="replace_one")
        calibrate(plan, 0.3, delta)  # imports and first calls out of the timing
        for epsilon in (0.5, 1.0, 2.0):
            start = time.perf_counter()
            result = calibrate(plan, epsilon, delta)
            elapsed = time.perf_counter() - start
            rows[f"q={rate:g} eps={epsilon:g}"] = {
                "calibration_s": elapsed,
                "epsilon": result.epsilon,
            }
            print(
                f"  {steps} steps q={rate:g} eps={epsilon:g}: calibration {elapsed * 1e3:6.1f} ms"
                f"  eps {result.epsilon:.5f}",
                flush=True,
            )
    return rows


# -- 2. fits on adult ---------------------------------------------------------------------------


def load_adult():
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(DATA / "adult_a9a_train.svm.gz"), n_features=123)
    return X.toarray(), y


def estimators():
    from dpglm import DPLinearSVC, DPLogisticRegression

    return {
        "auto": lambda: DPLogisticRegression(),
        "dp-sgd": lambda: DPLogisticRegression(solver="dp-sgd"),
        "dp-cd": lambda: DPLogisticRegression(solver="dp-cd"),
        "dp-gcd": lambda: DPLogisticRegression(solver="dp-gcd", penalty="l1"),
        "dp-agd": lambda: DPLogisticRegression(solver="dp-agd"),
        "dp-scd": lambda: DPLinearSVC(solver="dp-scd", fit_intercept=False),
    }


def timed_fit(make, X, y, epsilon):
    est = make().set_params(epsilon=epsilon, random_state=0)
    start = time.perf_counter()
    est.fit(X, y)
    return time.perf_counter() - start


def measure_fits():
    X, y = load_adult()
    rows = {}
    for name, make in estimators().items():
        timed_fit(make, X, y, EPSILONS[0])  # compiles (or loads) the kernels, imports
        new = timed_fit(make, X, y, EPSILONS[1])
        again = min(timed_fit(make, X, y, EPSILONS[1]) for _ in range(3))
        rows[name] = {"new_epsilon_s": new, "cached_s": again, "ratio": new / again}
        print(
            f"  {name:7s} new epsilon {new:6.3f} s  cached {again:6.3f} s  "
            f"ratio {new / again:5.2f}",
            flush=True,
        )
    return rows


def measure_search():
    from dpglm import DPLogisticRegression, PrivateSearchCV

    X, y = load_adult()
    grid = {"alpha": [1e-4, 1e-3, 1e-2, 1e-1], "clip": [0.5, 2.0]}
    search = PrivateSearchCV(
        DPLogisticRegression(solver="dp-sgd"), grid, epsilon=1.3, random_state=0
    )
    search.fit(X[:2000], y[:2000])  # warm-up on a slice
    search = PrivateSearchCV(
        DPLogisticRegression(solver="dp-sgd"), grid, epsilon=1.0, random_state=0
    )
    start = time.perf_counter()
    search.fit(X, y)
    total = time.perf_counter() - start
    # the same candidates again, their calibrations cached: the search's training
    start = time.perf_counter()
    search.fit(X, y)
    training = time.perf_counter() - start
    print(
        f"  PrivateSearchCV, 8 candidates: {total:6.3f} s, with calibrations cached "
        f"{training:6.3f} s, ratio {total / training:5.2f}",
        flush=True,
    )
    return {"search_s": total, "cached_s": training, "ratio": total / training}


# -- 3. start-up --------------------------------------------------------------------------------


def import_time(before: str, statement: str, runs: int = 7) -> float:
    code = (
        f"import time\n{before}\nstart = time.perf_counter()\n{statement}\n"
        "print(time.perf_counter() - start)"
    )
    return min(
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(runs)
    )


def measure_imports():
    rows = {
        "numpy+scipy.sparse": import_time("", "import numpy, scipy.sparse"),
        "dpglm over numpy+scipy.sparse": import_time("import numpy, scipy.sparse", "import dpglm"),
        "sklearn.base": import_time("", "import sklearn.base"),
        "estimator over sklearn.base": import_time(
            "import sklearn.base", "from dpglm import DPLogisticRegression"
        ),
    }
    for name, value in rows.items():
        print(f"  {name:32s} {value:6.3f} s", flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("calibration", "fits", "search", "imports"))
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    parts = {
        "calibration": lambda: {
            "adult (32561 x 123)": measure_calibration(32_561, 123),
            "synthetic (1e6 x 100)": measure_calibration(1_000_000, 100),
            "1e5 steps": measure_long_plans(),
        },
        "fits": measure_fits,
        "search": measure_search,
        "imports": measure_imports,
    }
    for name, run in parts.items():
        if args.only and name != args.only:
            continue
        print(name, flush=True)
        results[name] = run()
    results["machine"] = {"python": platform.python_version(), "platform": platform.platform()}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1, default=float))
    print(f"saved in {RESULTS}")
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
