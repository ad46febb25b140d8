"""The vertical fit: Algorithm 2 calibrated as one plan with its parameter rule, and the default.

On the problem of ``bench_vertical_sketch.py`` (the issue's: ``K = 2``,
``n = 100,000``, ``d = 100`` uniform on ``[-1, 1]``, 8 true non-zeros,
radius ``||w_true||_1``, ``feature_bounds = 1``, ``delta = 1 / n^2``),
held-out ``R^2`` over three seeds:

1. **Calibration.** The sizes of ``bench_vertical_sketch.py`` (``m = 200``,
   ``T = 50``, ``tau = 50``, ``C = 1``) under the paper's calibration
   (``accountant="paper"``) and the default (the plan calibrated as a whole,
   least noise on the last vertex scores): the noise multipliers, the
   selections' noise scale and the sketches' noise std, their ratios, and
   ``R^2``, at ``epsilon`` in {1, 4, 16}.
2. **The rule.** :func:`~dpglm.distributed.vertical_fw.vertical_fw` given only
   ``epsilon``, ``delta``, ``parties``, ``radius`` and ``feature_bounds``
   (``T``, ``m``, ``C``, ``tau`` and the split from
   :func:`~dpglm.distributed.vertical_fw.vertical_fw_rule`), at ``epsilon`` in
   {1, 2, 4, 16}, with the predicted signal-to-noise of its regime
   (``--rule-epsilons 4 --rule-seeds 8``: more seeds at some epsilons only).
3. **The rule against a grid** at ``epsilon = 4``: ``T`` in {25, 50, 100},
   ``m`` in {200, the rule's}, ``C`` in {1, the rule's, 4 times the rule's}.
4. **Larger n at epsilon 1**: the rule at ``n`` in ``--large`` (default
   1,000,000), against ``w = 0``; ``--large-sketch-dim`` and ``--large-n-iter``
   fix ``m`` and ``T`` instead; rows of other ``n`` from earlier runs are kept.
6. **The screened variant** (``vertical_fw``'s default since; parts 1 to 4 run
   Algorithm 2, ``variant="paper"``): at ``n = 100,000`` and ``epsilon`` in
   {1, 2, 4, 16}, then at ``epsilon = 1`` for the ``n`` of
   ``--screened-sizes``, ``--screened-seeds`` seeds each (default 10), with
   the shared columns, the sketch's rows and the regime's prediction.

Parts 1 and 3 run the paper's Gaussian sketch (``sketch="gaussian"``); parts 2
and 4 the sketch of ``--sketch`` (default ``count``, the fit's default), and
keep the rows of the other sketch from earlier runs (rows recorded before the
count sketch existed are the Gaussian's). Every row names its sketch.

Run ``python benchmarks/bench_vertical_rule.py`` (about 25 minutes on 2 cores;
``--parts 1,2`` for some parts only). Writes
``benchmarks/results/bench_vertical_rule.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))
sys.path.insert(0, str(ROOT))

from bench_vertical_sketch import make_data, r2  # noqa: E402
from dpglm.distributed import vertical_fw  # noqa: E402
from dpglm.distributed.protocol import COUNT, SKETCHES  # noqa: E402
from dpglm.distributed.vertical_rule import vertical_fw_rule  # noqa: E402
from dpglm.problem import Problem  # noqa: E402

RESULTS = ROOT / "results" / "bench_vertical_rule.json"
N, D, K, NONZEROS, SEEDS = 100_000, 100, 2, 8, 3
SKETCH_SIZES = {"sketch_dim": 200, "n_iter": 50, "tau": 50, "clip": 1.0}


def fit_row(problem, test, radius, epsilon, seed, **kwargs):
    n = problem.n_samples
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = vertical_fw(
            problem,
            epsilon=epsilon,
            delta=1.0 / n**2,
            parties=K,
            radius=radius,
            feature_bounds=1.0,
            random_state=seed,
            **{"variant": "paper", **kwargs},
        )
    selection, sketch = fit.report.mechanisms
    regime = fit.info["regime"]
    return {
        "sketch": fit.info["sketch"],
        "epsilon": epsilon,
        "seed": seed,
        "r2": r2(*test, fit.coef),
        "report_epsilon": fit.report.epsilon,
        "selection_multiplier": selection.noise_multiplier,
        "sketch_multiplier": sketch.noise_multiplier,
        "selection_scale": float(fit.info["selection_noise_scale"][0]),
        "sketch_std": float(fit.info["sketch_noise_std"][0]),
        "n_iter": fit.n_iter,
        "sketch_dim": fit.info["sketch_dim"],
        "clip": fit.info["clip"],
        "tau": fit.info["tau"],
        "snr": regime["snr"],
        "min_n": regime["min_n"],
        "warned": any(issubclass(w.category, UserWarning) for w in caught),
        "seconds": time.perf_counter() - t0,
    }


def show(tag, row):
    print(
        f"  {tag:28s} eps={row['epsilon']:<5g} seed={row['seed']} R^2={row['r2']:7.3f} "
        f"z_sel={row['selection_multiplier']:8.2f} z_g={row['sketch_multiplier']:7.2f} "
        f"T={row['n_iter']} m={row['sketch_dim']} C={row['clip']:.3g} snr={row['snr']:.3g} "
        f"({row['seconds']:.0f} s)",
        flush=True,
    )


def calibration(problem, test, radius):
    rows = []
    for epsilon in (1.0, 4.0, 16.0):
        for accountant in ("paper", None):
            for seed in range(SEEDS):
                row = fit_row(problem, test, radius, epsilon, seed, accountant=accountant,
                              sketch="gaussian", **SKETCH_SIZES)  # fmt: skip
                row["calibration"] = accountant or "default"
                rows.append(row)
                show(row["calibration"], row)
    return rows


def rule(problem, test, radius, epsilons=(1.0, 2.0, 4.0, 16.0), seeds=SEEDS, sketch="count"):
    rows = []
    for epsilon in epsilons:
        for seed in range(seeds):
            row = fit_row(problem, test, radius, epsilon, seed, sketch=sketch)
            rows.append(row)
            show("rule", row)
    return rows


def grid(problem, test, radius, epsilon=4.0):
    n = problem.n_samples
    chosen = vertical_fw_rule(n, D, K, epsilon, 1.0 / n**2, radius, 1.0, sketch="gaussian")
    rows = []
    for T in (25, 50, 100):
        for m in (200, chosen.sketch_dim):
            for C in (1.0, chosen.clip, 4.0 * chosen.clip):
                for seed in range(SEEDS):
                    row = fit_row(problem, test, radius, epsilon, seed, n_iter=T, sketch_dim=m,
                                  clip=C, sketch="gaussian")  # fmt: skip
                    rows.append(row)
                    show("grid", row)
    return {"rule": chosen.as_dict(), "rows": rows}


def large(sizes, radius_of, **given):
    rows = []
    for n in sizes:
        train, test, w = make_data(n, D, NONZEROS)
        problem = Problem(*train, "squared")
        for seed in range(SEEDS):
            row = fit_row(problem, test, radius_of(w), 1.0, seed, **given)
            row["n"], row["given"] = n, given
            rows.append(row)
            show(f"rule n={n}", row)
        del problem, train
    return rows


def screened_row(problem, test, radius, epsilon, seed):
    """The default (screened) fit with only epsilon, delta, parties, radius and bounds given."""
    n = problem.n_samples
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = vertical_fw(problem, epsilon=epsilon, delta=1.0 / n**2, parties=K, radius=radius,
                          feature_bounds=1.0, random_state=seed)  # fmt: skip
    info = fit.info
    return {
        "n": n,
        "epsilon": epsilon,
        "seed": seed,
        "r2": r2(*test, fit.coef),
        "report_epsilon": fit.report.epsilon,
        "multipliers": info["noise_multipliers"],
        "shared": [len(s) for s in info["shared"]],
        "sketch_dim": info["sketch_dim"],
        "ridge": info["ridge"],
        "uplink": info["uplink"]["total"],
        "regime": info["regime"],
        "warned": any(issubclass(w.category, UserWarning) for w in caught),
        "seconds": time.perf_counter() - t0,
    }


def screened(sizes, epsilons, seeds):
    """Part 6: the screened default at each ``(n, epsilon)``, ``seeds`` seeds each."""
    rows = []
    for n in sizes:
        train, test, w = make_data(n, D, NONZEROS)
        problem = Problem(*train, "squared")
        for epsilon in epsilons:
            scores = []
            for seed in range(seeds):
                row = screened_row(problem, test, float(np.abs(w).sum()), epsilon, seed)
                rows.append(row)
                scores.append(row["r2"])
            print(
                f"  screened n={n} eps={epsilon:g}: R^2 mean {np.mean(scores):.3f} "
                f"[{min(scores):.3f}, {max(scores):.3f}] shared {row['shared']} "
                f"m={row['sketch_dim']} warned={row['warned']} "
                f"least={max(row['regime']['least_coefficient_over_radius']):.3g} "
                f"min_n={row['regime']['min_n']}",
                flush=True,
            )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", default="1,2,3,4,6")
    parser.add_argument("--screened-sizes", default="10000,20000,30000,50000,70000,100000")
    parser.add_argument("--screened-seeds", type=int, default=10)
    parser.add_argument("--rule-epsilons", default="1,2,4,16")
    parser.add_argument("--rule-seeds", type=int, default=SEEDS)
    parser.add_argument("--large", default="1000000")
    parser.add_argument("--large-sketch-dim", type=int, default=None)
    parser.add_argument("--large-n-iter", type=int, default=None)
    parser.add_argument(
        "--sketch",
        choices=SKETCHES,
        default=COUNT,
        help="the sketch of parts 2 and 4 (parts 1 and 3: the paper's Gaussian)",
    )
    args = parser.parse_args(argv)
    parts = {int(p) for p in args.parts.split(",")}
    train, test, w = make_data(N, D, NONZEROS)
    radius = float(np.abs(w).sum())
    problem = Problem(*train, "squared")
    report = {"config": {"n": N, "d": D, "K": K, "nonzeros": NONZEROS, "seeds": SEEDS,
                         "radius": radius, "delta": 1.0 / N**2}}  # fmt: skip
    if RESULTS.exists():  # parts not rerun keep their last results
        report = {**json.loads(RESULTS.read_text()), **report}
        for part in ("calibration", "rule", "large"):  # rows from before the count sketch
            for row in report.get(part, []):
                row.setdefault("sketch", "gaussian")
    if 1 in parts:
        print("1. calibration: the paper's against the default, sizes of bench_vertical_sketch")
        report["calibration"] = calibration(problem, test, radius)
    if 2 in parts:
        print("2. the rule: only epsilon, delta, parties, radius and feature_bounds given")
        epsilons = [float(e) for e in args.rule_epsilons.split(",")]
        kept = [
            row
            for row in report.get("rule", [])
            if row["epsilon"] not in epsilons or row["sketch"] != args.sketch
        ]
        report["rule"] = kept + rule(problem, test, radius, epsilons, args.rule_seeds, args.sketch)
    if 3 in parts:
        print("3. the rule against a grid at epsilon 4")
        report["grid"] = grid(problem, test, radius)
    if 4 in parts:
        print("4. larger n at epsilon 1")
        del problem, train
        sizes = [int(x) for x in args.large.split(",")]
        given = {"sketch": args.sketch}
        if args.large_sketch_dim is not None:
            given["sketch_dim"] = args.large_sketch_dim
        if args.large_n_iter is not None:
            given["n_iter"] = args.large_n_iter
        rows = large(sizes, lambda w: float(np.abs(w).sum()), **given)
        # rows of other n (or other given sizes) from earlier runs are kept
        kept = [
            row
            for row in report.get("large", [])
            if not (row["n"] in sizes and {"sketch": "gaussian", **row.get("given", {})} == given)
        ]
        report["large"] = kept + rows
    if 6 in parts:
        print("6. the screened variant (the default): only epsilon and the public numbers")
        sizes = [int(x) for x in args.screened_sizes.split(",")]
        rows = screened([N], [1.0, 2.0, 4.0, 16.0], args.screened_seeds)
        rows += screened([n for n in sizes if n != N], [1.0], args.screened_seeds)
        report["screened"] = rows
    report["machine"] = {"python": platform.python_version(), "platform": platform.platform()}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=1, default=float))
    print(f"wrote {RESULTS.relative_to(ROOT.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
