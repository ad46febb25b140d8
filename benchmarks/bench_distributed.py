"""Feature-split private Frank-Wolfe on a local Dask cluster: time, uplink and utility.

The vertical part of the distributed benchmark:
:func:`~dpglm.distributed.vertical_fw.vertical_fw` (Lou and Cheung 2018,
Algorithm 2) on a synthetic LASSO problem, ``K`` parties each holding a block
of columns, run as Dask actors on a real ``distributed.LocalCluster``. For
each ``K`` it measures

* the wall time per iteration (median over iterations 2..T of the time between
  two ``callback`` calls: broadcast, every party's step, the coordinator's
  update), the setup (calibration, building the parties, and for the first
  fit of each ``K`` shipping the columns) and, for scale, one party's step
  alone on one core in this process (what an iteration would cost on ``K``
  machines, less the round trip);
* the uplink bytes counted by the engine on the messages themselves, per party
  and in total, against the paper's count ``K T`` int64 + ``m K T`` float64 and
  against sending the raw features once (``n d`` float64);
* the relative suboptimality ``(F(x_T) - F*) / F*`` after ``T`` iterations,
  against the centralized private Frank-Wolfe
  (:func:`~dpglm.solvers.dp_fw.dp_fw`) at the same ``epsilon``, ``delta`` and
  ``T``, over ``seeds`` seeds (mean, min, max), with the non-private runs of
  both (``epsilon = inf``) and the non-private vertical run without sketch
  (``J = I``, in process) to separate the sketch's cost from the rest.

Sizes (``FULL``): ``n = 200,000``, ``d = 2,000``, ``K`` in {2, 4, 8},
``m = 200``, ``T = 50``, ``epsilon`` in {1, 100}, 3 seeds. An iteration reads
all the columns (see ``tau`` below) and takes 0.3 to 0.6 s on this shared
2-core machine, and every fit rebuilds its parties (3 to 7 s, 10 to 17 s
when the columns are shipped too): the 21 vertical fits and the rest took 11
minutes on a quiet machine and 15 on a busy one. That is why ``T`` sits at the
low end of 50 to 200 and ``epsilon = 10`` is left out (a probe with ``d = 500``
at the same ``n`` put it between the two).
``--quick``: ``n = 20,000``, ``d = 500``, ``K`` in {2, 4}, 2 seeds, about a
minute.

Problem (fixed seed). ``X`` is ``n x d`` with i.i.d. uniform entries on
``[-1, 1]``, so ``feature_bounds = 1`` is a public bound that clips nothing;
``w_true`` has 24 non-zeros of magnitude 1 and random signs, 3 in each eighth
of the columns, so that every party of every ``K`` in {2, 4, 8} holds the
same L1 mass ``||w_true||_1 / K``; ``y = X w_true + N(0, 1)``. The objective is
``F(w) = (1/2n) ||X w - y||^2``. Domain: the centralized fit uses the L1 ball of
radius ``r = ||w_true||_1 = 24`` (the true ``w``'s norm, not the reference's;
chosen independently of the noise), the vertical fit the product of the
``K`` parties' balls of radius ``r / K`` (the domain of the paper's analysis),
which lies inside the ball and contains ``w_true``. ``F*`` is the optimum over
the ball, so both fits are scored against the same number; the product's own
optimum lies between ``F*`` and ``F(w_true)``, and the JSON records
``(F(w_true) - F*) / F*``, a bound on the gap. ``F*`` is computed on the
``d x d`` Cholesky factor ``R`` of ``X^T X`` (``||R w - c||^2 = ||X w - y||^2 -
const`` with ``R^T c = X^T y``: the same minimiser, 100 times fewer rows) by
:func:`~dpglm.solvers.reference.solve_reference`, certified by its duality gap.

Privacy: ``delta = 1 / n^2``; replace-one neighbours. Vertical: the paper's
calibration (``accountant=None``: half the budget to the ``K T`` Laplace
selections by advanced composition, half to the ``K T`` Gaussian sketches by
the paper's formula), ``tau = d / K`` (every party scores all its columns, so
the step sizes are ``2 / (t + 2)``, those of the centralized FW; a smaller
``tau`` slows the steps' decay by ``d / (K tau)``, too slow for ``T = 50``).
Centralized: DP-FW with Laplace selections by advanced composition, the
paper's baseline. The clip ``C`` bounds every per-sample gradient term; it is a
public hyperparameter, not tuned: ``CLIP_CENTRAL = 1`` (the residuals are
``O(1)``), and for the vertical fit ``clip_vertical`` of the order of the
spread of the parties' pseudo-margins ``u = J^T q``, whose JL error alone is
about ``||X w|| / sqrt(m) = sqrt(8 n / m)`` near ``w_true`` (90 in full, 28 in
quick): 100 and 30. A clip far below that spread keeps only the signs of the
residuals.

Memory. Each party holds its column block (``n d / K`` floats, twice: the
block shipped to its worker stays referenced by the engine, and the party
keeps its copy clipped to the bounds) and the public JL matrix ``J``
(``m x n`` floats, rebuilt from its seed by every party). With ``n = 200,000``,
``d = 2,000`` and ``m = SKETCH_DIM = 200`` that is 2 x 3.2 GB of columns over
all parties plus 0.32 GB of ``J`` per party (2.6 GB for ``K = 8``), and the
driver keeps ``X`` (3.2 GB): about 13 GB at ``K = 8``. ``m = 500`` would add
2.4 GB at ``K = 8``; ``m = 200`` keeps the whole run well under the machine's
23 GB. The script records each worker's resident memory at the end of each
fit.

Cluster. The machine has 2 cores, so each ``K`` runs on a fresh
``LocalCluster`` of ``min(K, 2)`` worker processes with 1 thread each (numba
on 1 thread in the workers), parties placed round-robin: ``K / 2`` parties
share a worker and run one after the other there. The wall time per
iteration is therefore that of ``K`` parties on 2 cores, not of ``K``
machines; one party's step on one core is measured alongside. Columns cross
a real TCP connection to the worker processes. ``DaskEngine`` ships them at
the start of every fit; :class:`ResidentDaskEngine` (here) ships each block
once per ``K`` and builds every later fit's parties from the copy already on
the worker (the actors and their steps are ``DaskEngine``'s), which saves
about 10 s per fit. The first fit of each ``K`` (the non-private one) pays
the shipping, and its setup is reported apart.

Out-of-core, data-parallel DP-GCD (the horizontal part of the issue) is
measured elsewhere, by its own script.

Usage::

    python benchmarks/bench_distributed.py            # full: JSON, PNG, README section
    python benchmarks/bench_distributed.py --quick    # n = 20,000, d = 500, K in {2, 4}
    python benchmarks/bench_distributed.py --table    # README section and PNG from the JSON

``--quick`` writes ``results/bench_distributed_quick.{json,png}`` and leaves the
README alone.
"""

from __future__ import annotations

import os

# the thread environment of bench_kernels (idle BLAS and OpenMP threads sleep at
# once) must be set before numpy is imported
from bench_kernels import THREAD_ENV

for _key, _value in THREAD_ENV.items():
    os.environ.setdefault(_key, _value)

import argparse  # noqa: E402
import contextlib  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
import psutil  # noqa: E402
import scipy.linalg as sl  # noqa: E402

from bench_kernels import _busy_seconds, environment, wait_until_quiet  # noqa: E402
from dpglm.distributed import DaskEngine, vertical_fw  # noqa: E402
from dpglm.distributed.protocol import Party, PartyConfig, SketchSpec  # noqa: E402
from dpglm.penalties import L1Ball  # noqa: E402
from dpglm.privacy.events import GaussianEvent, NoisyMaxEvent  # noqa: E402
from dpglm.privacy.releases import Release  # noqa: E402
from dpglm.problem import Problem  # noqa: E402
from dpglm.solvers.reference import solve_reference  # noqa: E402
from dpglm.solvers.registry import get_solver  # noqa: E402
from readme_tables import replace_table  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "bench_distributed.json"

# clip_vertical: of the order of the spread of the parties' pseudo-margins J^T q, about
# ||X w_true|| / sqrt(m) = sqrt(8 n / m) (90 in full, 28 in quick); see the docstring
FULL = {
    "n": 200_000,
    "d": 2_000,
    "parties": [2, 4, 8],
    "epsilons": [1.0, 100.0],
    "seeds": 3,
    "n_iter": 50,
    "clip_vertical": 100.0,
}
QUICK = {
    "n": 20_000,
    "d": 500,
    "parties": [2, 4],
    "epsilons": [1.0, 100.0],
    "seeds": 2,
    "n_iter": 50,
    "clip_vertical": 30.0,
}
SKETCH_DIM = 200
GROUPS, PER_GROUP = 8, 3  # non-zeros of w_true: PER_GROUP in each of GROUPS column groups
NOISE_STD = 1.0
CLIP_CENTRAL = 1.0
WORKER_MEMORY = "10GB"  # per worker process; K = 8 needs about 4.5 GB on each of the 2
WORKER_ENV = {"NUMBA_NUM_THREADS": "1", **THREAD_ENV}
PARTY_STEPS = 5  # steps of one party timed alone in this process


# --- the problem ---------------------------------------------------------------------------


def make_data(n, d, seed=0):
    """``X`` (Fortran order, uniform on [-1, 1]), ``y`` and the sparse ``w_true``."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (d, n)).T  # column by column: Fortran order, no copy
    w = np.zeros(d)
    # the groups' bounds include every party bound of K in {2, 4, 8} (party_ranges)
    for a, b in party_ranges(d, GROUPS):
        support = rng.choice(np.arange(a, b), PER_GROUP, replace=False)
        w[support] = rng.choice([-1.0, 1.0], PER_GROUP)
    support = np.flatnonzero(w)
    y = X[:, support] @ w[support] + NOISE_STD * rng.standard_normal(n)
    return X, y, w


def reference(X, y, radius):
    """``F*`` over the L1 ball, solved on the Cholesky factor of ``X^T X``."""
    t0 = time.perf_counter()
    n, d = X.shape
    R = sl.cholesky(X.T @ X, lower=False)
    c = sl.solve_triangular(R, X.T @ y, trans="T")
    reduced = solve_reference(Problem(R, c, "squared", L1Ball(radius)))
    # F(w) = (d / n) F_reduced(w) + const: the reduced gap scales by d / n
    return {
        "theta": reduced.theta,
        "gap": reduced.gap * d / n,
        "certified_reduced": reduced.certified,
        "method": f"{reduced.method}, on the {d} x {d} Cholesky factor of X^T X",
        "seconds": time.perf_counter() - t0,
    }


def party_ranges(d, K):
    bounds = np.linspace(0, d, K + 1).astype(int)
    return list(itertools.pairwise(bounds.tolist()))


# --- measurement helpers -------------------------------------------------------------------


def _tree_cpu():
    """CPU seconds of this process and its children (the cluster's nannies and workers)."""
    me = psutil.Process()
    total = 0.0
    for proc in [me, *me.children(recursive=True)]:
        try:
            times = proc.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


class TreeLoad:
    """Cores used by processes other than this one and its children during a fit."""

    def start(self):
        self._busy, self._own, self._wall = _busy_seconds(), _tree_cpu(), time.perf_counter()

    def stop(self):
        busy = _busy_seconds()
        if busy is None or self._busy is None:
            return None
        own = _tree_cpu() - self._own
        wall = time.perf_counter() - self._wall
        return max(0.0, (busy - self._busy - own) / wall)


def loadavg():
    try:
        return [float(v) for v in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None


def relative(problem, coef, f_star):
    return (problem.objective(coef) - f_star) / f_star


def iteration_times(stamps):
    """Seconds of iterations 2..T from the callback's timestamps."""
    gaps = np.diff(stamps)
    return {
        "median": float(np.median(gaps)),
        "min": float(gaps.min()),
        "max": float(gaps.max()),
        "count": int(gaps.size),
    }


def summary(values):
    return {
        "mean": float(np.mean(values)),
        "min": float(np.min(values)),
        "max": float(np.max(values)),
        "runs": len(values),
    }


# --- the fits ------------------------------------------------------------------------------


def central_runs(ball, plain, f_star, config, delta):
    """Centralized DP-FW: one non-private run, ``seeds`` private runs per epsilon."""
    T = config["n_iter"]
    rows = []
    for epsilon in [math.inf, *config["epsilons"]]:
        seeds = [0] if math.isinf(epsilon) else range(config["seeds"])
        for seed in seeds:
            meter = TreeLoad()
            meter.start()
            t0 = time.perf_counter()
            fit = get_solver("dp-fw").fit(
                ball,
                epsilon=epsilon,
                delta=0.0 if math.isinf(epsilon) else delta,
                n_iter=T,
                clip=CLIP_CENTRAL,
                noise="laplace",
                random_state=seed,
            )
            seconds = time.perf_counter() - t0
            rows.append(
                {
                    "epsilon": epsilon,
                    "seed": seed,
                    "relative_suboptimality": relative(plain, fit.coef, f_star),
                    "seconds": seconds,
                    "seconds_per_iteration": seconds / T,
                    "report_epsilon": fit.report.epsilon,
                    "selection_noise_scale": float(fit.info["selection_noise_scale"][0]),
                    "other_load": meter.stop(),
                }
            )
            print(
                f"  central eps={epsilon:g} seed={seed}: "
                f"rel {rows[-1]['relative_suboptimality']:.4g}, {seconds:.1f} s",
                flush=True,
            )
    return rows


def worker_memory(client):
    """Resident bytes of every worker process, by address."""
    return client.run(lambda: psutil.Process().memory_info().rss)


def vertical_run(blocks, plain, f_star, *, K, epsilon, delta, seed, radius, config, engine,
                 client=None, sketch_dim=SKETCH_DIM):  # fmt: skip
    """One vertical fit, timed per iteration through the callback."""
    T = config["n_iter"]
    stamps, memory = [], {}

    def callback(iteration, coef):
        stamps.append(time.perf_counter())
        if iteration == T and client is not None:  # after the timed gaps of 2..T-1
            memory.update(worker_memory(client))

    meter = TreeLoad()
    meter.start()
    t0 = time.perf_counter()
    fit = vertical_fw(
        blocks,
        epsilon=epsilon,
        delta=0.0 if math.isinf(epsilon) else delta,
        sketch_dim=sketch_dim,
        radius=radius / K,
        tau=blocks[0].n_features,
        n_iter=T,
        clip=config["clip_vertical"],
        feature_bounds=1.0,
        # the paper's Algorithm 2 and its Gaussian sketch; the centred variant is measured
        # by bench_vertical_sketch.py, the count sketch by bench_vertical_rule.py
        variant="paper",
        sketch="gaussian",
        engine=engine,
        random_state=seed,
        callback=callback,
    )
    total = time.perf_counter() - t0
    uplink = fit.info["uplink"]
    row = {
        "epsilon": epsilon,
        "seed": seed,
        "relative_suboptimality": relative(plain, fit.coef, f_star),
        "l1_norm": float(np.abs(fit.coef).sum()),
        "seconds": total,
        "setup_and_first_iteration_s": stamps[0] - t0,
        "iteration_s": iteration_times(stamps),
        "uplink": {
            "per_party": [int(v) for v in uplink["per_party"]],
            "total": uplink["total"],
            "expected_total": uplink["expected_total"],
            "expected_per_party": uplink["expected_per_party"],
            "matches": uplink["matches"],
        },
        "downlink_total": fit.info["downlink"]["total"],
        "engine": fit.info["engine"],
        "placement": fit.info["placement"],
        "sketch_dim": fit.info["sketch_dim"],
        "report_epsilon": fit.report.epsilon,
        "selection_noise_scale": float(np.max(fit.info["selection_noise_scale"])),
        "sketch_noise_std": None
        if fit.info["sketch_noise_std"] is None
        else float(np.max(fit.info["sketch_noise_std"])),
        "sketch_sensitivity": fit.info["sketch_sensitivity"],
        "other_load": meter.stop(),
        "worker_rss": memory,
    }
    print(
        f"  K={K} eps={epsilon:g} seed={seed} m={row['sketch_dim']}: "
        f"rel {row['relative_suboptimality']:.4g}, "
        f"iteration {row['iteration_s']['median']:.3g} s, "
        f"total {total:.1f} s, uplink {row['uplink']['total']:,} B",
        flush=True,
    )
    return row, fit


def party_step_time(block, y, fit, K, radius, clip):
    """One party's step alone on one core in this process (what one machine would do)."""
    info = fit.info
    d_k = block.shape[1]
    # the fit's releases (the party draws their unit noise) and its scales
    selection, sharing = fit.report.mechanisms
    config = PartyConfig(
        index=0,
        features=np.arange(d_k),
        tau=d_k,
        radius=radius / K,
        sketch=SketchSpec(n_samples=block.shape[0], dim=SKETCH_DIM, seed=info["sketch_seed"]),
        clip=clip,
        feature_bounds=np.ones(d_k),
        selection=Release(
            NoisyMaxEvent(noise="laplace", noise_multiplier=selection.noise_multiplier)
        ),
        selection_scale=float(info["selection_noise_scale"][0]),
        sketch_noise=Release(GaussianEvent(noise_multiplier=sharing.noise_multiplier)),
        sketch_std=np.asarray(info["sketch_noise_std"][:d_k]),
    )
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        t0 = time.perf_counter()
        party = Party(config, block, y, seed=0)
        build = time.perf_counter() - t0
        # any broadcast costs the same: a sketch of the margins' size
        q = np.random.default_rng(0).standard_normal(SKETCH_DIM) * math.sqrt(block.shape[0])
        times = []
        for t in range(PARTY_STEPS + 1):
            t0 = time.perf_counter()
            party.step(t, q)
            times.append(time.perf_counter() - t0)
    finally:
        numba.set_num_threads(previous)
    del party
    steps = times[1:]  # the first call may compile or load the kernels
    return {"median": statistics.median(steps), "min": min(steps), "build_s": build}


class ResidentDaskEngine(DaskEngine):
    """A :class:`DaskEngine` whose parties' columns stay on their workers between fits.

    ``DaskEngine`` ships every party's columns to its worker at the start of
    each fit and frees them at its end; here each block is shipped once, by
    the first fit that uses it, and later fits build their parties (the
    actors, with their clipped copy and ``J``) from the copy already on the
    worker, as parties that own their data would. The protocol, the actors
    and their steps are ``DaskEngine``'s; only the shipping (``_ship``) differs. The
    first fit of each ``K`` pays it, and the JSON records that fit's setup
    apart from the others'.
    """

    def __init__(self, client):
        super().__init__(client)
        self._resident = {}

    def _ship(self, k, setup, address):
        key = (k, address, id(setup.X), id(setup.y))
        if key not in self._resident:
            # the block itself is kept too, so that its id is not reused by another array
            self._resident[key] = (super()._ship(k, setup, address), setup.X)
        return self._resident[key][0]

    def release(self):
        """Free the shipped columns."""
        self.client.cancel([f for futures, _ in self._resident.values() for f in futures])
        self._resident = {}


@contextlib.contextmanager
def spawn_environment(env):
    """``env`` in this process's environment while the cluster spawns its workers.

    A worker process imports this script's modules (numba among them) before the
    Nanny's ``env`` is applied, so ``NUMBA_NUM_THREADS`` must be in the environment
    it is spawned with. This process's numba keeps the threads it has.
    """
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def local_cluster(n_workers, memory_limit=WORKER_MEMORY):
    """A ``LocalCluster`` of ``n_workers`` processes of 1 thread each, numba on 1 thread."""
    from distributed import LocalCluster

    with spawn_environment(WORKER_ENV):
        return LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=memory_limit,
            dashboard_address=":0",
            env=WORKER_ENV,
        )


def vertical_runs(X, y, plain, f_star, config, delta, radius):
    from distributed import Client

    n, d = X.shape
    T = config["n_iter"]
    out = {}
    for K in config["parties"]:
        ranges = party_ranges(d, K)
        blocks = [Problem(X[:, a:b], y, "squared") for a, b in ranges]  # views, no copy
        n_workers = min(K, 2)
        entry = {
            "workers": n_workers,
            "threads_per_worker": 1,
            "parties_per_worker": K / n_workers,
            "memory_estimate_bytes": {
                "per_party": 2 * n * (d // K) * 8 + SKETCH_DIM * n * 8,
                "all_parties": 2 * n * d * 8 + K * SKETCH_DIM * n * 8,
                "driver_X": n * d * 8,
            },
            "raw_feature_bytes": n * d * 8,
            "private": [],
        }
        waited, before = wait_until_quiet(0.3, 30.0)
        entry["load_before"] = {"waited_s": waited, "other_load": before, "loadavg": loadavg()}
        print(f"K={K}: LocalCluster({n_workers} workers x 1 thread)", flush=True)
        with local_cluster(n_workers) as cluster, Client(cluster) as client:
            entry["worker_numba_threads"] = client.run(numba.get_num_threads)
            if set(entry["worker_numba_threads"].values()) != {1}:
                raise RuntimeError(f"workers run numba on {entry['worker_numba_threads']}")
            engine = ResidentDaskEngine(client)
            row, _ = vertical_run(
                blocks, plain, f_star, K=K, epsilon=math.inf, delta=delta, seed=0,
                radius=radius, config=config, engine=engine, client=client,
            )  # fmt: skip
            entry["nonprivate"] = row
            fit_for_party = None
            for epsilon in config["epsilons"]:
                for seed in range(config["seeds"]):
                    row, fit = vertical_run(
                        blocks, plain, f_star, K=K, epsilon=epsilon, delta=delta, seed=seed,
                        radius=radius, config=config, engine=engine, client=client,
                    )  # fmt: skip
                    entry["private"].append(row)
                    if fit_for_party is None:
                        fit_for_party = fit
            engine.release()
        entry["load_after"] = {"loadavg": loadavg()}
        # the protocol without sketch (J = I), in this process: the domain's and the
        # K-vertices-per-step cost, without the sketch's
        row, _ = vertical_run(
            blocks, plain, f_star, K=K, epsilon=math.inf, delta=delta, seed=0, radius=radius,
            config=config, engine=None, sketch_dim=None,
        )  # fmt: skip
        entry["nonprivate_no_sketch"] = row
        entry["party_step"] = party_step_time(X[:, ranges[0][0] : ranges[0][1]], y,
                                              fit_for_party, K, radius,
                                              config["clip_vertical"])  # fmt: skip
        print(
            f"  one party's step alone (1 core): {entry['party_step']['median']:.3g} s",
            flush=True,
        )
        entry["uplink_formula"] = {
            "formula": "K T int64 + m K T float64",
            "bytes": K * T * 8 + SKETCH_DIM * K * T * 8,
        }
        out[str(K)] = entry
    return out


# --- the report ----------------------------------------------------------------------------


def _bytes(value):
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} B"


def _seconds(value):
    return f"{value * 1e3:.0f} ms" if value < 1 else f"{value:.2f} s"


def _cell(s):
    if s is None:
        return "-"
    if s["runs"] == 1:
        return f"{s['mean']:.3g}"
    return f"{s['mean']:.3g} [{s['min']:.3g}, {s['max']:.3g}]"


def summarise(report):
    """Per method and epsilon: relative suboptimality; per K: time and bytes."""
    config = report["config"]
    central = report["central"]
    out = {"central": {}, "vertical": {}}
    for epsilon in [math.inf, *config["epsilons"]]:
        rows = [r for r in central if r["epsilon"] == epsilon]
        out["central"][str(epsilon)] = {
            **summary([r["relative_suboptimality"] for r in rows]),
            "seconds_per_iteration": statistics.median(r["seconds_per_iteration"] for r in rows),
        }
    for K, entry in report["vertical"].items():
        private = entry["private"]
        by_eps = {
            str(eps): summary(
                [r["relative_suboptimality"] for r in private if r["epsilon"] == eps]
            )
            for eps in config["epsilons"]
        }
        by_eps[str(math.inf)] = summary([entry["nonprivate"]["relative_suboptimality"]])
        runs = [*private, entry["nonprivate"]]
        out["vertical"][K] = {
            "relative_suboptimality": by_eps,
            "no_sketch": entry["nonprivate_no_sketch"]["relative_suboptimality"],
            "iteration_s": statistics.median(r["iteration_s"]["median"] for r in runs),
            "iteration_s_min": min(r["iteration_s"]["min"] for r in runs),
            "iteration_s_max": max(r["iteration_s"]["max"] for r in runs),
            # the first fit (non-private) ships the columns; the others build on them
            "setup_first_s": entry["nonprivate"]["setup_and_first_iteration_s"],
            "setup_s": statistics.median(r["setup_and_first_iteration_s"] for r in private),
            "party_step_s": entry["party_step"]["median"],
            "uplink_per_party": private[0]["uplink"]["per_party"][0],
            "uplink_total": private[0]["uplink"]["total"],
            "uplink_formula": entry["uplink_formula"]["bytes"],
            "uplink_matches": all(r["uplink"]["matches"] for r in runs),
            "uplink_over_raw": private[0]["uplink"]["total"] / entry["raw_feature_bytes"],
            "downlink_total": private[0]["downlink_total"],
            "worker_rss_max": max(
                (max(r["worker_rss"].values()) for r in runs if r["worker_rss"]), default=None
            ),
            "sketch_noise_std": {
                str(eps): next(r["sketch_noise_std"] for r in private if r["epsilon"] == eps)
                for eps in config["epsilons"]
            },
            "other_load_max": max(
                (r["other_load"] for r in runs if r["other_load"] is not None), default=None
            ),
            "other_load_median": statistics.median(
                [r["other_load"] for r in runs if r["other_load"] is not None] or [math.nan]
            ),
        }
    return out


def markdown(report):
    config, data, s = report["config"], report["data"], report["summary"]
    n, d, T, m = config["n"], config["d"], config["n_iter"], config["sketch_dim"]
    epsilons = config["epsilons"]
    Ks = list(s["vertical"])
    loads = [
        r["other_load"]
        for e in report["vertical"].values()
        for r in [e["nonprivate"], *e["private"]]
        if r["other_load"] is not None
    ]
    loads += [r["other_load"] for r in report["central"] if r["other_load"] is not None]
    lines = [
        f"LASSO n = {n:,}, d = {d:,} (|X_ij| <= 1), 24 true non-zeros; T = {T} iterations, "
        f"sketch m = {m}, delta = 1/n^2 = {config['delta']:.3g}, clip C = "
        f"{config['clip_vertical']:g} (vertical) and {config['clip_central']:g} (centralized), "
        f"{config['seeds']} seeds per private cell. F* = {data['f_star']:.6g} over the L1 ball "
        f"of radius {data['radius']:g} (duality gap {data['reference_gap']:.1e}); w = 0 is at "
        f"relative suboptimality {data['rel_zero']:.3g}, w_true at {data['rel_true']:.2g}. "
        f"The run used both cores; other processes on this shared machine got "
        f"{statistics.median(loads or [0]):.2f} cores of CPU time (median over the fits, up "
        f"to {max(loads, default=0):.2f}; last column below)"
        + (", and slowed the fits they overlapped." if max(loads, default=0) > 0.2 else "."),
        "",
        f"Cost per iteration and uplink. Raw features once: n d float64 = {_bytes(n * d * 8)}.",
        "",
        "| K | workers x parties each | wall time / iteration, median [min, max] | one party's "
        "step alone, 1 core | setup + first iteration: first fit (ships the columns), later "
        "fits | uplink per party | uplink total | K T int64 + m K T float64 | counted = formula "
        "| total / raw features | downlink total | worker memory (max RSS) | other processes "
        "(cores, median [max] over the fits) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for K in Ks:
        v, e = s["vertical"][K], report["vertical"][K]
        lines.append(
            f"| {K} | {e['workers']} x {e['parties_per_worker']:g} | "
            f"{_seconds(v['iteration_s'])} [{_seconds(v['iteration_s_min'])}, "
            f"{_seconds(v['iteration_s_max'])}] | {_seconds(v['party_step_s'])} | "
            f"{_seconds(v['setup_first_s'])}, {_seconds(v['setup_s'])} | "
            f"{_bytes(v['uplink_per_party'])} | "
            f"{_bytes(v['uplink_total'])} | {_bytes(v['uplink_formula'])} | "
            f"{'yes' if v['uplink_matches'] else '**no**'} | {v['uplink_over_raw']:.1e} | "
            f"{_bytes(v['downlink_total'])} | "
            f"{'-' if v['worker_rss_max'] is None else _bytes(v['worker_rss_max'])} | "
            f"{v['other_load_median']:.2f} [{v['other_load_max']:.2f}] |"
        )
    c_time = s["central"][str(epsilons[0])]["seconds_per_iteration"]
    c_load = max((r["other_load"] or 0.0) for r in report["central"])
    lines += [
        f"| centralized DP-FW (this process, 2 threads, whole X) | - | {_seconds(c_time)} "
        f"(total / T) | - | - | - | - | - | - | - | - | - | {c_load:.2f} |",
        "",
        f"Relative suboptimality (F(x_T) - F*) / F* after T = {T}, mean [min, max] over "
        f"{config['seeds']} seeds (non-private: one run).",
        "",
        "| method | " + " | ".join(f"epsilon = {e:g}" for e in epsilons) + " | non-private |",
        "|---|" + "---|" * (len(epsilons) + 1),
    ]
    cells = [_cell(s["central"][str(e)]) for e in [*epsilons, math.inf]]
    lines.append(
        f"| centralized DP-FW, L1 ball r = {data['radius']:g} | " + " | ".join(cells) + " |"
    )
    for K in Ks:
        rel = s["vertical"][K]["relative_suboptimality"]
        cells = [_cell(rel[str(e)]) for e in [*epsilons, math.inf]]
        lines.append(f"| vertical FW, K = {K}, m = {m}, balls r / K | " + " | ".join(cells) + " |")
    for K in Ks:
        no_sketch = s["vertical"][K]["no_sketch"]
        lines.append(
            f"| vertical FW, K = {K}, no sketch (J = I, in process) | "
            + " | ".join("-" for _ in epsilons)
            + f" | {no_sketch:.3g} |"
        )
    lines += [
        "",
        "Noise per sketch entry (the vertical fit's Gaussian, std) against the rms entry of a "
        f"sketched column, sqrt(n / (3 m)) = {math.sqrt(n / (3 * m)):.3g}:",
        "",
        "| epsilon | " + " | ".join(f"K = {K}" for K in Ks) + " |",
        "|---|" + "---|" * len(Ks),
    ]
    for e in epsilons:
        stds = [s["vertical"][K]["sketch_noise_std"][str(e)] for K in Ks]
        lines.append(f"| {e:g} | " + " | ".join(f"{x:.3g}" for x in stds) + " |")
    lines += ["", *what_it_shows(report)]
    return "\n".join(lines)


def _power(value):
    """``7.3 x 10^7``."""
    exponent = math.floor(math.log10(value))
    return f"{value / 10**exponent:.1f} x 10^{exponent}"


def _join(items):
    return ", ".join(items)


def what_it_shows(report):
    """Prose read off the numbers (regenerated with the table)."""
    config, data, s = report["config"], report["data"], report["summary"]
    n, d, T, m = config["n"], config["d"], config["n_iter"], config["sketch_dim"]
    epsilons = config["epsilons"]
    Ks = list(s["vertical"])
    v, central = s["vertical"], s["central"]
    first, last = epsilons[0], epsilons[-1]
    inf = str(math.inf)
    lines = ["What it shows:", ""]

    big = Ks[-1]
    lines.append(
        "- **Uplink: exactly the paper's count.** In every run the bytes counted by the engine "
        "on the messages equal `K T` int64 + `m K T` float64"
        + ("" if all(v[K]["uplink_matches"] for K in Ks) else " (**except where marked**)")
        + f": for K = {big}, T = {T} and m = {m}, {_bytes(v[big]['uplink_total'])}, "
        f"{v[big]['uplink_over_raw']:.1e} of sending the raw features once "
        f"({_bytes(n * d * 8)}). A party sends {_bytes(v[Ks[0]]['uplink_per_party'])} "
        "whatever its share of the columns, and receives as much (the broadcast sketch `q`)."
    )

    times = _join(f"{_seconds(v[K]['iteration_s'])} (K = {K})" for K in Ks)
    alone = _join(f"{_seconds(v[K]['party_step_s'])} (K = {K})" for K in Ks)
    c_time = central[str(first)]["seconds_per_iteration"]
    lines.append(
        f"- **Time.** An iteration on the cluster takes {times}, against {_seconds(c_time)} "
        "for one of the centralized FW over the whole X in this process (its gradient reads "
        "every column in place). A party's step reads `J` twice (`u = J^T q`, `2 m n` flops, "
        "and the sketch of its chosen column) and the gradient of its sampled columns (its "
        "whole block, read in place, at `tau = d / K`), so an iteration reads every column "
        "once and `J` 2K times. One party's "
        f"step alone on one core takes {alone}; with 2 cores, K / 2 parties share each "
        "worker and the two workers share the memory bandwidth, so on K machines an "
        f"iteration would cost about one party's step plus a round trip of {_bytes(8 * m + 8)} "
        "each way. Each fit rebuilds its parties (the clipped copy of the block and `J`): "
        f"{_join(_seconds(v[K]['setup_s']) for K in Ks)} (K = {_join(Ks)}) before the first "
        f"iteration ends, {_join(_seconds(v[K]['setup_first_s']) for K in Ks)} when the "
        "columns are also shipped."
    )

    zero = data["rel_zero"]
    rel = {K: v[K]["relative_suboptimality"] for K in Ks}
    at_first = _join(f"{rel[K][str(first)]['mean']:.3g} (K = {K})" for K in Ks)
    useless = all(rel[K][str(first)]["mean"] >= 0.5 * zero for K in Ks)
    worse = all(rel[K][str(first)]["mean"] > zero for K in Ks)
    std_first = _join(f"{v[K]['sketch_noise_std'][str(first)]:.3g}" for K in Ks)
    signal = math.sqrt(n / (3 * m))
    lines.append(
        f"- **Utility at epsilon = {first:g}"
        + (": the vertical fit does not learn.**" if useless else ".**")
        + f" Its relative suboptimality is {at_first}, against "
        f"{central[str(first)]['mean']:.3g} for the centralized FW and {zero:.3g} for w = 0"
        + (" (it ends worse than it started). " if worse else ". ")
        + f"The selections are not what limits it (at n = {n:,} their Laplace noise is small: "
        f"the centralized fit is within {central[str(first)]['mean'] / central[inf]['mean']:.2f}x "
        "of its non-private run); the shared features are: each sketched column gets "
        f"Gaussian noise of std {std_first} per entry (K = {_join(Ks)}) against an rms entry "
        f"of {signal:.3g}. The paper's calibration gives each of the `K T` sketches the noise "
        "multiplier `sqrt(K T) sqrt(2 (log(1/delta') + epsilon')) / epsilon'` at "
        "`epsilon' = epsilon / 2`, and their sensitivity `2 b max_i ||J e_i||` does not "
        "shrink with n while the signal grows like `sqrt(n)`. The noise accumulates in the "
        "broadcast `q`, dominates the parties' "
        "pseudo-margins `J^T q`, and the clipped gradients keep little of the signal."
    )

    at_last = _join(f"{rel[K][str(last)]['mean']:.3g} (K = {K})" for K in Ks)
    np_sketch = _join(f"{rel[K][inf]['mean']:.3g}" for K in Ks)
    std_k0 = v[Ks[0]]["sketch_noise_std"][str(first)]
    matches = all(
        rel[K][str(last)]["min"] <= rel[K][inf]["mean"] <= rel[K][str(last)]["max"] for K in Ks
    )
    lines.append(
        f"- At epsilon = {last:g} the vertical fit reaches {at_last}, against "
        f"{central[str(last)]['mean']:.3g} centralized and {np_sketch} for its own "
        "non-private runs"
        + (
            " (inside the private runs' spread: there the sketch, not the noise, limits it). "
            if matches
            else ". "
        )
        + "A sketch's signal-to-noise ratio grows like "
        "`epsilon sqrt(n / (m K T log(1/delta)))`: at epsilon = "
        f"{first:g} and K = {Ks[0]} its noise would match its signal (rms entry "
        f"`sqrt(n / 3m)`) only at n of about {_power(n * (std_k0 / signal) ** 2)}, "
        f"{(std_k0 / signal) ** 2:.0f} times this n."
    )

    no_sketch = _join(f"{v[K]['no_sketch']:.3g}" for K in Ks)
    c_np = central[inf]["mean"]
    better = all(v[K]["no_sketch"] < c_np for K in Ks)
    lines.append(
        f"- **Without privacy** the vertical fit reaches {np_sketch} for K = {_join(Ks)} with "
        f"the sketch (m = {m}; it minimises the sketched objective) and {no_sketch} without "
        f"it (J = I), against {c_np:.3g} for the centralized FW (T = {T} Frank-Wolfe steps "
        "leave it that far from F*). "
        + (
            "Without the sketch the protocol does better than the centralized FW in the same "
            "T: every iteration moves K coordinates, one per party, each towards a vertex of "
            "its own ball. So the sketch, not the split of the domain, costs the non-private "
            "protocol its accuracy."
            if better
            else "The difference between the last two is the product of balls and the K "
            "vertices per step; the rest is the sketch."
        )
    )
    lines.append(
        "- Not measured here: the data-parallel, out-of-core DP-GCD (the horizontal part of "
        "the issue), in its own section above (`bench_out_of_core.py`); the tighter "
        "accounting of the same plan "
        '(`accountant="auto"`, one zCDP calibration of the selections and sketches together, '
        "which lowers both noises); a tuned clip; other sketch sizes."
    )
    return lines


def figure(report, path):
    """Relative suboptimality against epsilon, time per iteration and uplink against K."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    config, data, s = report["config"], report["data"], report["summary"]
    epsilons = config["epsilons"]
    Ks = list(s["vertical"])
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    ax = axes[0]
    series = [("centralized DP-FW", s["central"])]
    series += [(f"vertical K = {K}", s["vertical"][K]["relative_suboptimality"]) for K in Ks]
    for label, table in series:
        mean = [table[str(e)]["mean"] for e in epsilons]
        low = [table[str(e)]["mean"] - table[str(e)]["min"] for e in epsilons]
        high = [table[str(e)]["max"] - table[str(e)]["mean"] for e in epsilons]
        line = ax.errorbar(epsilons, mean, yerr=[low, high], marker="o", ms=4, capsize=3,
                           label=label)  # fmt: skip
        ax.axhline(table[str(math.inf)]["mean"], color=line[0].get_color(), ls="--", lw=0.8)
    ax.axhline(data["rel_zero"], color="k", ls=":", lw=1, label="w = 0")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("epsilon (delta = 1/n^2)")
    ax.set_ylabel("(F(x_T) - F*) / F*")
    ax.set_title(f"after T = {config['n_iter']} (dashed: non-private)", fontsize=9)
    ax.legend(fontsize=8)

    ax = axes[1]
    x = [int(K) for K in Ks]
    med = [s["vertical"][K]["iteration_s"] for K in Ks]
    low = [m - s["vertical"][K]["iteration_s_min"] for m, K in zip(med, Ks, strict=True)]
    high = [s["vertical"][K]["iteration_s_max"] - m for m, K in zip(med, Ks, strict=True)]
    ax.errorbar(x, med, yerr=[low, high], marker="o", capsize=3,
                label="Dask cluster, 2 workers x 1 thread")  # fmt: skip
    ax.plot(x, [s["vertical"][K]["party_step_s"] for K in Ks], marker="s",
            label="one party's step alone, 1 core")  # fmt: skip
    ax.axhline(s["central"][str(epsilons[0])]["seconds_per_iteration"], color="k", ls=":",
               label="centralized DP-FW, 2 threads")  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_xticks(x, [str(k) for k in x])
    ax.set_ylim(bottom=0)
    ax.set_xlabel("parties K")
    ax.set_ylabel("seconds per iteration")
    ax.set_title(f"n = {config['n']:,}, d = {config['d']:,}, m = {config['sketch_dim']}",
                 fontsize=9)  # fmt: skip
    ax.legend(fontsize=8)

    ax = axes[2]
    ax.plot(x, [s["vertical"][K]["uplink_total"] for K in Ks], marker="o",
            label="uplink counted, total")  # fmt: skip
    ax.plot(x, [s["vertical"][K]["uplink_formula"] for K in Ks], ls="--", marker="x",
            label="K T int64 + m K T float64")  # fmt: skip
    ax.axhline(config["n"] * config["d"] * 8, color="k", ls=":", label="raw features, n d float64")
    ax.set_xscale("log", base=2)
    ax.set_xticks(x, [str(k) for k in x])
    ax.set_yscale("log")
    ax.set_xlabel("parties K")
    ax.set_ylabel("bytes")
    ax.set_title(f"uplink over T = {config['n_iter']} iterations", fontsize=9)
    ax.legend(fontsize=8)
    fig.suptitle("Feature-split private Frank-Wolfe (Lou and Cheung, Algorithm 2) on a local "
                 "Dask cluster", fontsize=10)  # fmt: skip
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


#: the heading and prose of this script's section of benchmarks/README.md
SECTION = (
    "## Feature-split private Frank-Wolfe on a Dask cluster (`bench_distributed.py`)\n\n"
    "The vertical part of the distributed benchmark: `vertical_fw` (Lou and Cheung 2018, "
    "Algorithm 2), K parties each holding a block of the columns, run as Dask actors on a "
    "`LocalCluster`, against the centralized private Frank-Wolfe (`dp_fw`) at the same "
    "epsilon, delta and T. Synthetic LASSO, X uniform on [-1, 1] (so `feature_bounds = 1` "
    "is public and clips nothing), 24 true non-zeros spread evenly over the columns, "
    "y = X w_true + N(0, 1); the centralized fit uses the L1 ball of radius ||w_true||_1, "
    "the vertical one the product of the parties' balls of radius ||w_true||_1 / K (which "
    "contains w_true); both are scored against F*, the ball's optimum. Both use the paper's "
    "calibration (Laplace selections by advanced composition; the vertical fit gives half "
    "the budget to its Gaussian sketches). Each party scores all its columns (tau = d / K), "
    "so both methods take the step 2 / (t + 2). The machine has 2 cores: every K runs on 2 "
    "worker processes of 1 thread, K / 2 parties per worker, so the wall time is that of K "
    "parties on 2 cores; one party's step alone on one core is measured too. The columns "
    "cross TCP to the workers once per K and stay there for all its fits (each fit still "
    "builds its parties). Memory: each party holds its columns twice (the shipped block "
    "and its clipped copy) and the public JL matrix J (m x n): about 13 GB in all at K = 8 "
    "with m = 200. The data-parallel, out-of-core DP-GCD is measured elsewhere. Sizes, "
    "choices and their reasons are in the script's docstring. Generated from "
    "`results/bench_distributed.json` (`python benchmarks/bench_distributed.py`, sized for "
    "about 20 minutes; `--table` rewrites the table and the figure from the JSON).\n\n"
    "![relative suboptimality, time per iteration and uplink](results/bench_distributed.png)"
)


def update_readme(table):
    replace_table("bench_distributed", table, SECTION)


def run(config, delta):
    report = {"loadavg_start": loadavg()}
    n, d = config["n"], config["d"]
    t0 = time.perf_counter()
    X, y, w_true = make_data(n, d)
    generation = time.perf_counter() - t0
    radius = float(np.abs(w_true).sum())
    ref = reference(X, y, radius)
    plain = Problem(X, y, "squared")  # F, without the constraint: every fit is inside
    ball = Problem(X, y, "squared", L1Ball(radius))
    f_star = plain.objective(ref["theta"])
    report["data"] = {
        "generation_s": generation,
        "radius": radius,
        "support": np.flatnonzero(w_true).tolist(),
        "f_star": f_star,
        "reference_gap": ref["gap"],
        "reference_relative_gap": ref["gap"] / f_star,
        "reference_certified_reduced": ref["certified_reduced"],
        "reference_method": ref["method"],
        "reference_s": ref["seconds"],
        "rel_zero": relative(plain, np.zeros(d), f_star),
        "rel_true": relative(plain, w_true, f_star),
    }
    print(
        f"data {generation:.1f} s; F* = {f_star:.6g} ({ref['seconds']:.1f} s, gap "
        f"{ref['gap']:.1e}); w = 0 at {report['data']['rel_zero']:.3g}, w_true at "
        f"{report['data']['rel_true']:.3g}",
        flush=True,
    )
    print("centralized DP-FW", flush=True)
    report["central"] = central_runs(ball, plain, f_star, config, delta)
    report["vertical"] = vertical_runs(X, y, plain, f_star, config, delta, radius)
    report["loadavg_end"] = loadavg()
    import dask
    import distributed

    # after the fits: numba's threading layer is known once a parallel kernel ran
    report["environment"] = {
        **environment(),
        "dask": dask.__version__,
        "distributed": distributed.__version__,
    }
    return report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="n = 20,000, d = 500, K in {2, 4}")
    parser.add_argument("--table", action="store_true", help="README table and figure from JSON")
    parser.add_argument("--out", type=Path, help="results JSON (the figure goes next to it)")
    args = parser.parse_args(argv)
    if args.out is not None:
        path = args.out
    else:
        path = RESULTS.with_name("bench_distributed_quick.json") if args.quick else RESULTS
    readme = not args.quick and args.out is None
    if args.table:
        report = json.loads(path.read_text())
    else:
        config = dict(QUICK if args.quick else FULL)
        delta = 1.0 / config["n"] ** 2
        config.update(
            delta=delta,
            sketch_dim=SKETCH_DIM,
            clip_central=CLIP_CENTRAL,
            noise_std=NOISE_STD,
            nonzeros=GROUPS * PER_GROUP,
            worker_memory=WORKER_MEMORY,
            worker_env=WORKER_ENV,
            vertical="vertical_fw, paper's calibration (accountant=None), Laplace selections, "
            "tau = d / K, radius r / K per party, Dask actors",
            central="dp_fw, Laplace selections, advanced composition, L1 ball of radius r",
        )
        # distributed logs every large scatter and slow garbage collection
        logging.getLogger("distributed").setLevel(logging.ERROR)
        t0 = time.perf_counter()
        report = run(config, delta)
        report["config"] = config
        report["wall_s"] = time.perf_counter() - t0
        report["summary"] = summarise(report)
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(report, indent=1))
        print(f"wrote {path} ({report['wall_s'] / 60:.1f} min)")
    figure(report, path.with_suffix(".png"))
    table = markdown(report)
    print(table)
    if readme:
        update_readme(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
