"""Where feature-split private Frank-Wolfe pays: its utility against n, beside centralized fits.

The scaling run of the issue "feature-split private Frank-Wolfe that learns".
:func:`~dpglm.distributed.vertical_fw.vertical_fw` with only ``epsilon``,
``delta``, the parties, the radius and the public feature bounds given: its
default, the screened variant (the shared columns, the sketch's rows and the
ridge from its own rules), or with ``--variant paper`` Algorithm 2 (``T``,
``m``, the clip and the budget split from its parameter rule; its own JSON), on the
synthetic LASSO problem of ``bench_distributed.py`` (``X`` uniform on
``[-1, 1]``, 24 true non-zeros of magnitude 1, ``y = X w_true + N(0, 1)``, the
L1 ball of radius ``||w_true||_1 = 24``; the vertical fit on the product of the
``K`` parties' balls of radius ``24 / K``), for ``n`` from 200,000 to 4,000,000
at ``d = 200``, ``epsilon`` in {1, 4, 16}, ``K`` in {2, 4}, against

* centralized private Frank-Wolfe (:func:`~dpglm.solvers.dp_fw.dp_fw`, its
  defaults: ``T = 100``, Gumbel selections, clip 1) on the whole ``X``;
* centralized DP-GCD (:func:`~dpglm.solvers.dp_gcd.dp_gcd`, 100 greedy steps,
  clip 10, step 3, public bounds ``|X_ij| <= 1``; see ``GCD``) on the penalised LASSO whose
  multiplier matches the ball: ``lambda = ||X^T (y - X w*)||_inf / n`` at the
  ball's optimum ``w*`` (the KKT condition of the active constraint; read from
  the data without privacy, like the radius: a tuning assumption of the
  comparison, not of a fit);
* ``w = 0`` (relative suboptimality ``rel_zero``).

Scores: relative suboptimality ``(F(w) - F*) / F*`` of
``F(w) = (1/2n) ||X w - y||^2`` against the ball's certified optimum ``F*``
(DP-GCD's iterate may leave the ball; its score is then below what the ball
allows, and the table says so), wall time of each fit, and the vertical fit's
uplink bytes counted by the engine.

The vertical fits run on a real ``distributed.LocalCluster`` (2 worker
processes, 1 thread each; the columns shipped once per ``(n, K)`` and reused,
as in ``bench_distributed.py``), with the fit's default count sketch
(``--variant paper --sketch gaussian``: the paper's dense Gaussian ``J``, whose ``m x n``
float64 every party rebuilds, ``K m n 8`` bytes over the cluster, which caps
the rule's ``m`` at ``2 10^8 / n``; its results go to their own JSON). Memory
bounds ``n`` through the columns (``n d 8`` bytes, held by the driver and,
once clipped, by the parties). The
crossover ``n`` (the smallest at which the vertical fit beats ``w = 0``, and
at which it comes within 2x of the centralized FW) is read off the measured
points where it lies inside their range, and otherwise extrapolated from a
power law ``rel = a n^b`` fitted to the measured points of that curve: the
output says which.

Usage::

    python benchmarks/bench_vertical_scaling.py           # about 9 minutes on 2 cores
    python benchmarks/bench_vertical_scaling.py --variant paper   # Algorithm 2
    python benchmarks/bench_vertical_scaling.py --quick   # n = 20,000 and 50,000, a minute
    python benchmarks/bench_vertical_scaling.py --table   # README section and PNG from the JSON

Writes ``benchmarks/results/bench_vertical_scaling.json`` and ``.png`` (with
``_paper`` for ``--variant paper``, ``_gaussian`` for its Gaussian sketch, and
``_quick`` for ``--quick``; only the default run rewrites the README's table).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np
import scipy.linalg as sl

from bench_distributed import (
    ResidentDaskEngine,
    local_cluster,
    make_data,
    party_ranges,
    reference,
    relative,
)
from dpglm.distributed import vertical_fw
from dpglm.distributed.protocol import COUNT, SKETCHES
from dpglm.penalties import L1, L1Ball
from dpglm.problem import Problem
from dpglm.solvers.registry import get_solver
from readme_tables import replace_table
from result_store import spread

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "bench_vertical_scaling.json"

FULL = {
    "ns": [200_000, 500_000, 1_000_000, 2_000_000, 4_000_000],
    "d": 200,
    "parties": [2, 4],
    "epsilons": [1.0, 4.0, 16.0],
    "seeds": 2,
}
QUICK = {"ns": [20_000, 50_000], "d": 100, "parties": [2], "epsilons": [4.0, 16.0], "seeds": 1}
#: DP-GCD: 100 greedy steps, clip 10 (the order of the targets' spread: a per-sample term
#: x_ij r_i clipped much lower keeps little of the gradient), step 3 / M_j with the bound's
#: M_j = 1: the columns' second moment is 1/3 by construction (uniform on [-1, 1]), public
GCD = {"n_iter": 100, "clip": 10.0, "step": 3.0}
SECTION = """## Feature-split private Frank-Wolfe against n: where it pays

`python benchmarks/bench_vertical_scaling.py` (about 9 minutes on 2 cores; the method and
the problem are in its docstring): the vertical fit as a user gets it (the screened
variant, only epsilon, delta, the parties, the radius and the feature bounds given),
against the centralized private Frank-Wolfe and DP-GCD on the same data, for n from
200,000 to 4,000,000. `--variant paper` runs Algorithm 2 with its parameter rule instead.
Figure: `results/bench_vertical_scaling.png`."""


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def matching_lambda(X, y, w_star):
    """The L1 penalty whose optimum is the ball's: the multiplier of the active constraint."""
    return float(np.max(np.abs(X.T @ (y - X @ w_star)))) / len(y)


def central_rows(X, y, radius, lam, epsilons, seeds, delta):
    rows = []
    ball = Problem(X, y, "squared", L1Ball(radius))
    lasso = Problem(X, y, "squared", L1(lam))
    for epsilon in epsilons:
        for seed in range(seeds):
            fw, fw_s = timed(
                lambda e=epsilon, s=seed: get_solver("dp-fw").fit(
                    ball, epsilon=e, delta=delta, random_state=s
                )
            )
            gcd, gcd_s = timed(
                lambda e=epsilon, s=seed: get_solver("dp-gcd").fit(
                    lasso, epsilon=e, delta=delta, feature_bounds=1.0, random_state=s, **GCD
                )
            )  # fmt: skip
            rows.append({"method": "central-fw", "epsilon": epsilon, "seed": seed, "coef": fw.coef,
                         "seconds": fw_s})  # fmt: skip
            rows.append(
                {
                    "method": "dp-gcd",
                    "epsilon": epsilon,
                    "seed": seed,
                    "coef": gcd.coef,
                    "seconds": gcd_s,
                    "l1_norm": float(np.abs(gcd.coef).sum()),
                }
            )
    return rows


def vertical_rows(X, y, radius, parties, epsilons, seeds, delta, sketch, variant):
    from distributed import Client

    rows = []
    d = X.shape[1]
    for K in parties:
        blocks = [Problem(X[:, a:b], y, "squared") for a, b in party_ranges(d, K)]
        with local_cluster(min(K, 2)) as cluster, Client(cluster) as client:
            engine = ResidentDaskEngine(client)
            for epsilon in epsilons:
                for seed in range(seeds):
                    fit, seconds = timed(
                        lambda e=epsilon, s=seed, blocks=blocks, K=K, engine=engine: vertical_fw(
                            blocks,
                            epsilon=e,
                            delta=delta,
                            radius=radius / K,
                            feature_bounds=1.0,
                            engine=engine,
                            random_state=s,
                            sketch=sketch,
                            variant=variant,
                        )
                    )
                    info = fit.info
                    rows.append(
                        {
                            "method": f"vertical K={K}",
                            "K": K,
                            "epsilon": epsilon,
                            "seed": seed,
                            "coef": fit.coef,
                            "seconds": seconds,
                            "uplink": int(info["uplink"]["total"]),
                            "n_iter": int(fit.n_iter),
                            "sketch_dim": info["sketch_dim"],
                            "sketch": info["sketch"],
                            "variant": info["variant"],
                            "tau": info.get("tau"),
                            "clip": info.get("clip"),
                            "shared": [len(s) for s in info.get("shared", [])],
                            "rule": info["rule"],
                            "regime": info["regime"],
                            "report_epsilon": fit.report.epsilon,
                        }
                    )
                    print(
                        f"    K={K} eps={epsilon:g} seed={seed}: {seconds:.1f} s, "
                        f"m={rows[-1]['sketch_dim']}, T={rows[-1]['n_iter']}",
                        flush=True,
                    )
            engine.release()
    return rows


def measure(config):
    out = {"config": config, "points": []}
    for n in config["ns"]:
        d = config["d"]
        print(f"n = {n:,}, d = {d}", flush=True)
        X, y, w_true = make_data(n, d)
        plain = Problem(X, y, "squared")
        radius = float(np.abs(w_true).sum())
        ref = reference(X, y, radius)
        f_star = plain.objective(ref["theta"])
        delta = 1.0 / n**2
        lam = matching_lambda(X, y, ref["theta"])
        rows = central_rows(X, y, radius, lam, config["epsilons"], config["seeds"], delta)
        rows += vertical_rows(X, y, radius, config["parties"], config["epsilons"],
                              config["seeds"], delta, config["sketch"],
                              config.get("variant", "paper"))  # fmt: skip
        for row in rows:
            row["relative_suboptimality"] = relative(plain, row.pop("coef"), f_star)
        point = {
            "n": n,
            "d": d,
            "delta": delta,
            "f_star": f_star,
            "reference_gap": ref["gap"],
            "rel_zero": relative(plain, np.zeros(d), f_star),
            "radius": radius,
            "lambda": lam,
            "rows": rows,
        }
        for row in rows:
            print(f"  {row['method']:<14} eps={row['epsilon']:<4g} seed={row['seed']}: "
                  f"rel {row['relative_suboptimality']:.4g} ({row['seconds']:.1f} s)")  # fmt: skip
        out["points"].append(point)
        del X, plain
    return out


# --- the crossovers -------------------------------------------------------------------


def curves(report):
    """``{(method, epsilon): [(n, mean rel, min, max, mean seconds, uplink)]}``."""
    table = {}
    for point in report["points"]:
        groups = {}
        for row in point["rows"]:
            groups.setdefault((row["method"], row["epsilon"]), []).append(row)
        for key, rows in groups.items():
            rel = spread([r["relative_suboptimality"] for r in rows])
            table.setdefault(key, []).append(
                {
                    "n": point["n"],
                    **rel,
                    "seconds": float(np.mean([r["seconds"] for r in rows])),
                    "uplink": rows[0].get("uplink"),
                    "n_iter": rows[0].get("n_iter"),
                    "sketch_dim": rows[0].get("sketch_dim"),
                    "shared": rows[0].get("shared"),
                }
            )
    return table


def power_law(ns, values):
    """``(a, b)`` of ``value = a n^b``, least squares in logs (None with fewer than 2 points)."""
    if len(ns) < 2 or min(values) <= 0:
        return None
    b, log_a = np.polyfit(np.log(ns), np.log(values), 1)
    return float(math.exp(log_a)), float(b)


def crossing(ns, values, level):
    """The smallest ``n`` with ``value < level``: ``(n, "measured" | "extrapolated" | None)``.

    Between two measured points the crossing is interpolated in logs; outside
    them, read off the power law fitted to all the points (None if it never
    crosses, e.g. a curve that does not fall).
    """
    ns, values = list(ns), list(values)
    if values[0] < level:
        return ns[0], "measured (already at the smallest n)"
    for i in range(len(ns) - 1):
        (n0, v0), (n1, v1) = (ns[i], values[i]), (ns[i + 1], values[i + 1])
        if v1 < level <= v0 and v0 > 0 and v1 > 0:
            t = (math.log(level) - math.log(v0)) / (math.log(v1) - math.log(v0))
            return float(math.exp(math.log(n0) + t * (math.log(n1) - math.log(n0)))), "measured"
    law = power_law(ns, values)
    if law is None or law[1] >= 0:
        return None, None
    a, b = law
    return float((level / a) ** (1.0 / b)), "extrapolated"


def crossovers(report):
    table = curves(report)
    zero = {p["n"]: p["rel_zero"] for p in report["points"]}
    out = []
    config = report["config"]
    for epsilon in config["epsilons"]:
        central = table[("central-fw", epsilon)]
        for K in config["parties"]:
            vertical = table[(f"vertical K={K}", epsilon)]
            ns = [c["n"] for c in vertical]
            ratio = [v["mean"] / c["mean"] for v, c in zip(vertical, central, strict=True)]
            below_zero = [v["mean"] / zero[v["n"]] for v in vertical]
            n_zero, how_zero = crossing(ns, below_zero, 1.0)
            n_two, how_two = crossing(ns, ratio, 2.0)
            out.append(
                {
                    "epsilon": epsilon,
                    "K": K,
                    "beats_zero_n": n_zero,
                    "beats_zero_how": how_zero,
                    "within_2x_central_n": n_two,
                    "within_2x_central_how": how_two,
                    "law": power_law(ns, [v["mean"] for v in vertical]),
                    "ratio_to_central": ratio,
                }
            )
    return out


# --- the report -----------------------------------------------------------------------


def _n(value):
    if value is None:
        return "never (the curve does not fall)"
    return f"{value:.2g}"


def _methods(config):
    return ["central-fw", "dp-gcd", *(f"vertical K={K}" for K in config["parties"])]


def _method_rows(table, config, cell):
    """A row per epsilon and method, ``cell`` of each n's point."""
    return [
        f"| {method} | {epsilon:g} | "
        + " | ".join(cell(c) for c in table[(method, epsilon)])
        + " |"
        for epsilon in config["epsilons"]
        for method in _methods(config)
    ]


def _time_cell(c):
    cell = f"{c['seconds']:.1f} s"
    if c["uplink"] is not None and c.get("shared"):
        shared = "+".join(str(s) for s in c["shared"])
        cell += f", shared {shared}, m {c['sketch_dim']}, {c['uplink'] / 1e6:.2g} MB"
    elif c["uplink"] is not None:
        cell += f", T {c['n_iter']}, m {c['sketch_dim']}, {c['uplink'] / 1e6:.2g} MB"
    return cell


def markdown(report):
    config = report["config"]
    table = curves(report)
    points = report["points"]
    lines = [
        f"LASSO, d = {config['d']}, 24 true non-zeros, |X_ij| <= 1, delta = 1/n^2; relative "
        f"suboptimality (F(w) - F*) / F*, mean [min, max] over {config['seeds']} seeds; "
        "w = 0 is at " + ", ".join(f"{p['rel_zero']:.3g} (n = {p['n']:,})" for p in points) + ".",
        "",
        "| method | epsilon | " + " | ".join(f"n = {p['n']:,}" for p in points) + " |",
        "|---|---|" + "---|" * len(points),
    ]
    lines += _method_rows(
        table, config, lambda c: f"{c['mean']:.3g} [{c['min']:.3g}, {c['max']:.3g}]"
    )
    lines += [
        "",
        "Wall time per fit (mean, seconds; vertical on the cluster, centralized in this "
        "process) and the vertical fit's parameters (from its rule) and uplink:",
        "",
        "| method | epsilon | " + " | ".join(f"n = {p['n']:,}" for p in points) + " |",
        "|---|---|" + "---|" * len(points),
    ]
    lines += _method_rows(table, config, _time_cell)
    lines += [
        "",
        "Crossovers (smallest n; interpolated between measured points, or extrapolated from "
        "the power law fitted to the vertical curve, as marked):",
        "",
        "| epsilon | K | beats w = 0 | within 2x of centralized FW | vertical rel ~ a n^b |",
        "|---|---|---|---|---|",
    ]
    for c in crossovers(report):
        law = "-" if c["law"] is None else f"a = {c['law'][0]:.3g}, b = {c['law'][1]:.2f}"
        lines.append(
            f"| {c['epsilon']:g} | {c['K']} | {_n(c['beats_zero_n'])} "
            f"({c['beats_zero_how'] or '-'}) | {_n(c['within_2x_central_n'])} "
            f"({c['within_2x_central_how'] or '-'}) | {law} |"
        )
    return "\n".join(lines)


def figure(report, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    config = report["config"]
    table = curves(report)
    epsilons = config["epsilons"]
    fig, axes = plt.subplots(1, len(epsilons), figsize=(5 * len(epsilons), 4.2), squeeze=False)
    ns = [p["n"] for p in report["points"]]
    for ax, epsilon in zip(axes[0], epsilons, strict=True):
        for method in _methods(config):
            c = table[(method, epsilon)]
            mean = [v["mean"] for v in c]
            err = [[v["mean"] - v["min"] for v in c], [v["max"] - v["mean"] for v in c]]
            ax.errorbar(ns, mean, yerr=err, marker="o", ms=4, capsize=3, label=method)
        ax.plot(ns, [p["rel_zero"] for p in report["points"]], "k:", label="w = 0")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n (records)")
        ax.set_title(f"epsilon = {epsilon:g}, d = {config['d']}")
    axes[0][0].set_ylabel("(F(w) - F*) / F*")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--table", action="store_true", help="rewrite the README from the JSON")
    parser.add_argument(
        "--sketch",
        choices=SKETCHES,
        default=COUNT,
        help="the vertical fit's sketch (gaussian: the paper's, with --variant paper; its "
        "own JSON)",
    )
    parser.add_argument(
        "--variant",
        choices=("screened", "paper"),
        default="screened",
        help="the vertical fit's variant (paper: Algorithm 2, its own JSON)",
    )
    args = parser.parse_args(argv)
    if args.sketch == "gaussian" and args.variant != "paper":
        parser.error("--sketch gaussian runs Algorithm 2: give --variant paper")
    suffix = ("_quick" if args.quick else "") + (
        "_gaussian" if args.sketch == "gaussian" else "_paper" if args.variant == "paper" else ""
    )
    path = RESULTS.with_name(RESULTS.stem + suffix + ".json")
    if args.table:
        report = json.loads(path.read_text())
    else:
        config = {**(QUICK if args.quick else FULL), "sketch": args.sketch,
                  "variant": args.variant}  # fmt: skip
        t0 = time.perf_counter()
        report = measure(dict(config))
        report["seconds"] = time.perf_counter() - t0
        report["machine"] = {"python": platform.python_version(), "numpy": np.__version__,
                             "scipy": sl.__name__}  # fmt: skip
        report["crossovers"] = crossovers(report)
        path.parent.mkdir(exist_ok=True)
        # NumPy scalars and arrays in the rule and the regime, as JSON numbers and lists
        path.write_text(json.dumps(report, indent=1, default=lambda value: value.tolist()))
    text = markdown(report)
    print(text)
    figure(report, path.with_suffix(".png"))
    if not args.quick and args.sketch == "count" and args.variant == "screened":
        replace_table("bench_vertical_scaling", text, section=SECTION)
    return 0


if __name__ == "__main__":
    sys.exit(main())
