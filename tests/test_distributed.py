"""Vertical (feature-split) private Frank-Wolfe: the protocol, its engines, its privacy.

Without noise and without sketch the protocol is BCFW-AS over the parties'
balls, checked against :func:`dp_bcfw` and :func:`dp_fw`; with a sketch it
approaches the optimum as the sketch grows. The Dask engine runs one actor per
party on a real ``LocalCluster`` (two worker processes on loopback) and must
give the same bits as the in-process engine. The uplink is read off the
messages the coordinator receives. One party's index selection is audited on
a worst-case neighbouring pair; statistical tests fail a correct
implementation with probability below 1e-6.
"""

import math

import numpy as np
import pytest

from dpglm.audit import audit_event
from dpglm.distributed import DaskEngine, InProcessEngine, PartyLostError, vertical_fw
from dpglm.distributed import protocol as protocol_module
from dpglm.distributed.protocol import (
    FLOAT_BYTES,
    INT_BYTES,
    Party,
    PartyConfig,
    SketchSpec,
    decode_message,
    encode_message,
)
from dpglm.distributed.vertical_plan import paper_sketch_multiplier
from dpglm.exceptions import BudgetExceededError
from dpglm.penalties import L1Ball
from dpglm.privacy.accounting import advanced_composition_epsilon
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.events import GaussianEvent, NoisyMaxEvent
from dpglm.privacy.releases import Release
from dpglm.problem import Problem
from dpglm.solvers.dp_fw import dp_bcfw, dp_fw
from dpglm.solvers.reference import solve_reference
from solver_problems import (
    actor_indices,
    cluster_workers,
    kill_worker,
    local_client,
    make_data,
    seed_of,
    wait_until,
    with_less_noise,
)

DELTA = 1e-6
ALPHA = 1e-6


def private_kwargs(**overrides):
    kwargs = {
        "epsilon": 3.0,
        "delta": DELTA,
        "parties": 3,
        "tau": 2,
        "sketch_dim": 20,
        "radius": 1.0,
        "n_iter": 15,
        "clip": 1.0,
        "feature_bounds": 1.0,
        "random_state": 7,
        "variant": "paper",
        # the paper's own calibration, which these tests check against its formulas
        "accountant": "paper",
    }
    return {**kwargs, **overrides}


@pytest.fixture(scope="module")
def problem():
    X, y = make_data(seed_of("vertical"), n=240, p=7)
    return Problem(X, y, "squared")


# --- messages and the public sketch ---------------------------------------------------------


def test_a_message_is_one_int64_and_m_float64():
    sketch = np.array([0.25, -3.0, 1e-300])
    message = encode_message(11, -1, sketch)
    assert len(message) == INT_BYTES + 3 * FLOAT_BYTES
    feature, sign, decoded = decode_message(message, 3)
    assert (feature, sign) == (11, -1)
    np.testing.assert_array_equal(decoded, sketch)
    for bad, why in [
        (message[:-1], "bytes"),
        (message + b"\0" * 8, "bytes"),
        (bytes(8) + sketch.tobytes(), "names no feature"),
        (encode_message(0, 1, np.array([1.0, np.nan, 0.0])), "non-finite"),
    ]:
        with pytest.raises(ValueError, match=why):
            decode_message(bad, 3)


def test_the_sketch_is_rebuilt_from_its_public_seed():
    spec = SketchSpec(n_samples=40, dim=6, seed=123)
    G = spec.gaussian()
    np.testing.assert_array_equal(G, SketchSpec(40, 6, 123).gaussian())
    assert not np.array_equal(G, SketchSpec(40, 6, 124).gaussian())
    J = G / math.sqrt(6)
    # a record moves one entry of a column: the sketch moves by that entry times ||J e_i||
    assert spec.column_norm_bound() == pytest.approx(np.linalg.norm(J, axis=0).max(), rel=1e-14)
    assert spec.column_norm_bound() < np.linalg.norm(J, 2)  # tighter than the paper's sigma(J)
    identity = SketchSpec(40, None, 0)
    assert (identity.m, identity.gaussian(), identity.column_norm_bound()) == (40, None, 1.0)
    with pytest.raises(ValueError, match="kind must be one of"):
        SketchSpec(40, 6, 0, "hadamard")


def test_a_count_sketch_is_one_signed_entry_per_record_and_unbiased():
    spec = SketchSpec(n_samples=500, dim=7, seed=5, kind="count")
    J = spec.matrix()
    np.testing.assert_array_equal(J, SketchSpec(500, 7, 5, "count").matrix())
    assert not np.array_equal(J, SketchSpec(500, 7, 6, "count").matrix())
    assert spec.gaussian() is None and spec.column_norm_bound() == 1.0
    np.testing.assert_array_equal(np.abs(J).sum(axis=0), np.ones(500))  # one +-1 per column
    np.testing.assert_array_equal(np.linalg.norm(J, axis=0), np.ones(500))
    # every row is used: 500 records over 7 rows leave none empty (a miss has odds < 1e-30)
    assert (np.abs(J).sum(axis=1) > 0).all()
    # the party applies J and J^T without forming it
    rng = np.random.default_rng(0)
    X, q = rng.uniform(-1, 1, (500, 2)), rng.normal(size=7)
    config = PartyConfig(index=0, features=np.arange(2), tau=1, radius=1.0, sketch=spec)
    party = Party(config, X, np.zeros(500), seed=0)
    np.testing.assert_allclose(party._sketch_column(1), J @ X[:, 1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(party._pseudo_margins(q), J.T @ q, rtol=1e-15)
    # E[J^T J] = I: over many seeds, a^T J^T J b averages to a^T b; on non-centred vectors a
    # sketch without its signs would be off by about sum(a) sum(b) / m (thousands here)
    a, b = rng.uniform(0, 1, 500), rng.uniform(0, 1, 500)
    sketches = [SketchSpec(500, 7, seed, "count").matrix() for seed in range(400)]
    estimates = [(S @ a) @ (S @ b) for S in sketches]
    spread = np.std(estimates) / math.sqrt(len(estimates))
    assert abs(np.mean(estimates) - a @ b) < 6 * spread


# --- the protocol without noise -------------------------------------------------------------


@pytest.mark.parametrize("sparse", [False, True])
def test_without_sketch_or_noise_the_protocol_is_bcfw_over_the_parties_balls(sparse):
    X, y = make_data(seed_of("bcfw equivalence", sparse), n=120, p=6, sparse=sparse)
    prob = Problem(X, y, "squared")
    labels, radii, T = np.array([0, 1, 0, 1, 1, 0]), np.array([0.7, 1.2]), 60
    # every party sampling all its coordinates: BCFW-AS with the elementary sampling
    fit = vertical_fw(
        prob, epsilon=math.inf, delta=0.0, sketch_dim=None, parties=labels, tau=3, radius=radii,
        n_iter=T, random_state=0, variant="paper",
    )  # fmt: skip
    ref = dp_bcfw(
        prob, epsilon=math.inf, delta=0.0, radius=radii, blocks=labels, sampling="elementary",
        n_iter=T,
    )  # fmt: skip
    assert fit.info["p_min"] == 1.0
    np.testing.assert_array_equal(fit.info["vertices"], ref.info["vertices"])
    np.testing.assert_allclose(fit.coef, ref.coef, rtol=1e-12, atol=1e-14)
    assert fit.report.non_private
    # tau below a party's size: the universal step of the (K, tau)-distributed sampling
    fit = vertical_fw(
        prob, epsilon=math.inf, delta=0.0, sketch_dim=None, parties=labels, tau=2,
        radius=1.0, n_iter=T, random_state=0, variant="paper",
    )  # fmt: skip
    assert fit.info["p_min"] == pytest.approx(2 / 3)
    np.testing.assert_allclose(fit.info["step_sizes"], 2 / (2 / 3 * np.arange(T) + 2))


def test_one_party_without_sketch_is_dp_fw(problem):
    prob = Problem(problem.X, problem.y, "squared", L1Ball(1.5))
    fit = vertical_fw(
        prob,
        epsilon=math.inf,
        delta=0.0,
        sketch_dim=None,
        parties=1,
        tau=7,
        n_iter=80,
        variant="paper",
    )
    ref = dp_fw(prob, epsilon=math.inf, delta=0.0, n_iter=80)
    np.testing.assert_array_equal(fit.info["vertices"], ref.info["vertices"])
    np.testing.assert_allclose(fit.coef, ref.coef, rtol=1e-12, atol=1e-14)


def test_non_private_fit_approaches_the_l1_ball_optimum_as_the_sketch_grows():
    X, y = make_data(seed_of("sketched optimum"), n=200, p=5)
    # a ball the least-squares solution is just outside of: the optimum is on a face
    radius = 0.9 * np.abs(np.linalg.lstsq(X, y, rcond=None)[0]).sum()
    prob = Problem(X, y, "squared", L1Ball(radius))
    best = solve_reference(prob)
    f0 = prob.objective(np.zeros(5))
    gaps = []
    for m in (10, 2000, None):
        fit = vertical_fw(
            prob, epsilon=math.inf, delta=0.0, sketch_dim=m, parties=1, tau=5, n_iter=400,
            random_state=0, variant="paper",
        )  # fmt: skip
        assert np.abs(fit.coef).sum() <= radius * (1 + 1e-12)
        gaps.append((prob.objective(fit.coef) - best.objective) / (f0 - best.objective))
    # the sketched objective's minimiser is off by the JL distortion, ~ sqrt(d / m);
    # without sketch, Frank-Wolfe's O(1/T)
    assert gaps[0] > gaps[1] > gaps[2], gaps
    assert gaps[1] < 5e-3 and gaps[2] < 1e-4, gaps


def test_blocks_given_per_party_are_the_split_problem(problem):
    X, y = problem.X, problem.y
    blocks = [Problem(X[:, :3], y, "squared"), Problem(X[:, 3:], y, "squared")]
    a = vertical_fw(blocks, **private_kwargs(parties=None))
    b = vertical_fw(problem, **private_kwargs(parties=[0, 0, 0, 1, 1, 1, 1]))
    np.testing.assert_array_equal(a.coef, b.coef)
    np.testing.assert_array_equal(a.info["vertices"], b.info["vertices"])
    other = Problem(X[:, 3:], -y, "squared")
    with pytest.raises(ValueError, match="other targets than party 0"):
        vertical_fw([blocks[0], other], **private_kwargs(parties=None))
    with pytest.raises(ValueError, match="parties=3 contradicts the 2 blocks"):
        vertical_fw(blocks, **private_kwargs())


# --- uplink ---------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["in-process", "dask"])
def test_the_coordinator_receives_an_index_and_m_floats_per_party_and_iteration(
    problem, monkeypatch, request, engine
):
    if engine == "dask":
        client = request.getfixturevalue("client")
        idle_workers(client)
        engine = DaskEngine(client)
    else:
        engine = InProcessEngine()
    received = []
    real_receive = protocol_module.Coordinator.receive

    def receive(self, iteration, messages):
        received.append((iteration, list(messages)))
        return real_receive(self, iteration, messages)

    monkeypatch.setattr(protocol_module.Coordinator, "receive", receive)
    m, K, T = 20, 3, 15
    fit = vertical_fw(problem, engine=engine, **private_kwargs())
    assert [t for t, _ in received] == list(range(T))
    columns = np.asarray(problem.X)
    owner = fit.info["parties"]
    for _, messages in received:
        assert len(messages) == K
        for k, message in enumerate(messages):
            assert type(message) is bytes and len(message) == INT_BYTES + m * FLOAT_BYTES
            feature, sign, sketch = decode_message(message, m)
            assert owner[feature] == k and sign in (-1, 1)
            # shorter than a column, and no raw (prefix of a) column either
            assert sketch.size == m < problem.n_samples
            assert not np.isclose(sketch[:, None], columns[:m]).all(axis=0).any()
    uplink = fit.info["uplink"]
    np.testing.assert_array_equal(uplink["per_party"], [T * (INT_BYTES + m * FLOAT_BYTES)] * K)
    # the paper's count: K T integers and m K T floats
    assert uplink["total"] == K * T * 8 + m * K * T * 8 == uplink["expected_total"]
    assert uplink["total"] == sum(len(msg) for _, msgs in received for msg in msgs)
    assert uplink["matches"]
    np.testing.assert_array_equal(fit.info["downlink"]["per_party"], [T * m * FLOAT_BYTES] * K)


# --- the report matches the plan ------------------------------------------------------------


def test_paper_calibration_splits_the_budget_and_the_report_matches_the_plan(problem):
    target, K, T, m, clip, radius, bound = 3.0, 3, 15, 20, 1.0, 1.0, 1.0
    fit = vertical_fw(problem, **private_kwargs())
    report, info = fit.report, fit.info
    selection, sharing = report.mechanisms
    n = problem.n_samples
    assert (selection.kind, selection.count) == ("noisy_max", K * T)
    assert (sharing.kind, sharing.count) == ("gaussian", K * T)
    assert (selection.part, sharing.part) == ("index selection", "feature sharing")
    assert selection.details["noise"] == "laplace" and not selection.details["monotone"]
    assert selection.sensitivity == pytest.approx(2 * radius * clip / n, rel=1e-14)
    column_norm = SketchSpec(n, m, info["sketch_seed"], info["sketch"]).column_norm_bound()
    assert sharing.sensitivity == pytest.approx(2 * bound * column_norm, rel=1e-14)
    # the parties ran exactly the plan's noise
    np.testing.assert_allclose(info["selection_noise_scale"], selection.noise_scale, rtol=1e-14)
    np.testing.assert_allclose(info["sketch_noise_std"], sharing.noise_scale, rtol=1e-14)
    # half the budget to each part: advanced composition of K T selections at (eps/2, delta/2)
    eps1 = selection.details["epsilon"]
    spent1 = advanced_composition_epsilon([eps1], [K * T], DELTA / 2)
    assert spent1 <= target / 2 and spent1 == pytest.approx(target / 2, rel=1e-3)
    # and the paper's Gaussian scale at (eps/2, delta/2)
    z = math.sqrt(K * T) * math.sqrt(2 * (math.log(2 / DELTA) + target / 2)) / (target / 2)
    assert sharing.noise_multiplier == pytest.approx(z, rel=1e-14)
    assert paper_sketch_multiplier(K * T, target / 2, DELTA / 2) == pytest.approx(z, rel=1e-14)
    # the report accounts the plan as run: valid, and below the paper's sum
    assert report.epsilon <= target and report.neighbouring == "replace_one"
    assert set(report.parts) == {"index selection", "feature sharing"}
    assert info["calibration"]["mode"] == "paper"
    assert any("Lou and Cheung" in a for a in report.assumptions)
    assert any("J need not be secret" in a for a in report.assumptions)


@pytest.mark.parametrize("noise", ["laplace", "gumbel"])
def test_an_accountant_calibrates_the_whole_plan_with_the_split_in_rho(problem, noise):
    share = 0.3
    fit = vertical_fw(
        problem, **private_kwargs(noise=noise, accountant="zcdp", selection_share=share)
    )
    report = fit.report
    selection, sharing = report.mechanisms
    assert report.accountant == "zcdp" and report.epsilon <= 3.0
    assert report.epsilon == pytest.approx(3.0, rel=1e-3)
    rho_selection = selection.count * selection.details["rho"]
    rho_sharing = sharing.count / (2 * sharing.noise_multiplier**2)
    assert rho_selection / (rho_selection + rho_sharing) == pytest.approx(share, rel=1e-12)
    # a tighter accountant buys less noise than the paper's calibration
    paper = vertical_fw(problem, **private_kwargs(noise=noise, selection_share=share))
    assert selection.noise_multiplier < paper.report.mechanisms[0].noise_multiplier
    assert sharing.noise_multiplier < paper.report.mechanisms[1].noise_multiplier


def test_budget_is_charged_once_before_any_party_starts(problem, monkeypatch):
    budget = PrivacyBudget(2.0, DELTA)
    starts = []
    real_init = Party.__init__

    def init(self, *args, **kwargs):
        starts.append(len(budget.charges))
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(Party, "__init__", init)
    fit = vertical_fw(problem, **private_kwargs(budget=budget))
    assert starts == [1, 1, 1]  # charged once, before the three parties read their data
    (charge,) = budget.charges
    assert [e.noise_multiplier for e in charge.plan.events] == [
        m.noise_multiplier for m in fit.report.mechanisms
    ]
    with pytest.raises(BudgetExceededError):
        vertical_fw(problem, **private_kwargs(budget=budget))
    assert starts == [1, 1, 1] and len(budget.charges) == 1


def test_non_private_fit_reports_no_guarantee(problem):
    fit = vertical_fw(problem, **private_kwargs(epsilon=math.inf, feature_bounds=None))
    assert fit.report.non_private and not fit.report.guarantee
    assert fit.info["sketch_noise_std"] is None and math.isinf(fit.info["clip"])


def test_secure_mode(problem):
    fit = vertical_fw(problem, **private_kwargs(random_state=None, secure=True))
    assert fit.report.secure and fit.info["vertices"].shape == (45, 2)
    with pytest.raises(ValueError, match="refuses a seed"):
        vertical_fw(problem, **private_kwargs(secure=True))


BAD = [
    ("epsilon", 0.0),
    ("delta", 1.0),
    ("delta", 0.0),  # the sketches' Gaussian noise needs delta > 0
    ("n_iter", 0),
    ("clip", -1.0),
    ("clip", math.inf),
    ("noise", "gaussian"),
    ("tau", 0),
    ("tau", 3),  # party 2 holds two features
    ("parties", 0),
    ("parties", 8),
    ("parties", None),
    ("sketch_dim", 0),
    ("sketch_dim", 2.5),
    ("radius", 0.0),
    ("radius", [1.0, 2.0]),
    ("radius", None),
    ("feature_bounds", None),
    ("feature_bounds", -1.0),
    ("feature_bounds", [1.0, 2.0]),
    ("selection_share", 1.0),
    ("accountant", "guess"),
    ("accountant", "advanced"),  # pure-DP only, the sketches are Gaussian
    ("engine", "local"),
    ("random_state", "seed"),
    ("sketch_seed", -1),
]


@pytest.mark.parametrize(("name", "value"), BAD)
def test_bad_parameters_are_named(problem, name, value):
    with pytest.raises((ValueError, TypeError), match=name):
        vertical_fw(problem, **private_kwargs(**{name: value}))


def test_problems_the_protocol_cannot_fit_are_refused():
    X, y = make_data(seed_of("refused"), n=30, p=4, classification=True)
    kwargs = private_kwargs(parties=2, tau=1)
    with pytest.raises(ValueError, match="squared loss"):
        vertical_fw(Problem(X, y, "logistic"), **kwargs)
    with pytest.raises(ValueError, match="fit_intercept"):
        vertical_fw(Problem(X, y, "squared", fit_intercept=True), **kwargs)
    with pytest.raises(TypeError, match="problem_or_blocks"):
        vertical_fw(X, **kwargs)


@pytest.mark.parametrize("sketch", ["count", "gaussian"])
def test_declared_sketch_sensitivity_bounds_every_neighbour_and_is_reached(problem, sketch):
    """White-box: swapping one record moves the sketch of a clipped column by at most the
    report's sensitivity, and the swap of the record at the longest column of J reaches it."""
    bound, m = 0.5, 20
    fit = vertical_fw(problem, **private_kwargs(feature_bounds=bound, sketch_dim=m, sketch=sketch))
    declared = fit.report.mechanisms[1].sensitivity
    n, p = problem.n_samples, problem.n_features
    spec = SketchSpec(n, m, fit.info["sketch_seed"], sketch)
    assert fit.info["sketch"] == sketch and (sketch == "gaussian") == (declared > 2 * bound)
    worst = int(np.argmax(np.linalg.norm(spec.matrix(), axis=0)))
    config = PartyConfig(
        index=0, features=np.arange(p), tau=1, radius=1.0, sketch=spec,
        feature_bounds=np.full(p, bound),
    )  # fmt: skip
    largest = 0.0
    for i in (worst, 0, n - 1):
        high, low = np.array(problem.X), np.array(problem.X)
        high[i], low[i] = 10.0, -10.0  # far beyond the bound: clipped to +-b
        a, b = Party(config, high, problem.y, seed=0), Party(config, low, problem.y, seed=0)
        for j in range(p):
            moved = np.linalg.norm(a._sketch_column(j) - b._sketch_column(j))
            largest = max(largest, moved)
            assert moved <= declared * (1 + 1e-12)
    assert largest == pytest.approx(declared, rel=1e-12)


# --- audit of one party's index selection ---------------------------------------------------

CLIP = 1.0
COORDS = 20  # 40 vertices
BACKGROUND = 9
N_AUDIT = 6000  # runs per side


def rnm_neighbours():
    """At q = 0, every clipped per-sample term at +-C (as in the DP-FW audit).

    Background records add -C to every g_j. The canary adds (+C, -C, ..., -C) in D and
    (-C, +C, ..., +C) in D': the score of +r e_0 rises by the full sensitivity
    2 r C / n and every other +r e_j falls by it, the non-monotone worst case.
    """
    n = BACKGROUND + 1
    X = -np.ones((n, COORDS))
    X[0, 0] = 1.0
    y = np.full(n, -10.0 * CLIP)
    other = y.copy()
    other[0] = 10.0 * CLIP
    return X, {"D": y, "D'": other}


@pytest.mark.parametrize("variant", ["correct", "half noise"])
def test_one_party_selection_audit(variant, monkeypatch, request):
    if variant != "correct":  # the selections' scale, sent to the party, is halved
        with_less_noise(monkeypatch, kinds=("noisy_max",))
    X, targets = rnm_neighbours()
    # a large budget, mostly to the indices, so that one selection's claim is auditable
    fit = vertical_fw(
        Problem(X, targets["D"], "squared"), epsilon=12.0, delta=1e-5, sketch_dim=1, parties=1,
        tau=COORDS, radius=1.0, n_iter=1, clip=CLIP, feature_bounds=1.0, accountant="zcdp",
        selection_share=0.9, variant="paper", random_state=0,
    )  # fmt: skip
    (selection, sharing) = fit.report.mechanisms
    assert selection.count == 1
    assert selection.sensitivity == pytest.approx(2 * CLIP / (BACKGROUND + 1), rel=1e-14)
    claim = selection.details["epsilon"]  # 2 / z, the pure epsilon of one selection
    # the party of the fit, built here to run its first step alone
    z_selection, z_sketch = selection.noise_multiplier, sharing.noise_multiplier
    config = PartyConfig(
        index=0, features=np.arange(COORDS), tau=COORDS, radius=1.0,
        sketch=SketchSpec(X.shape[0], 1, fit.info["sketch_seed"], fit.info["sketch"]), clip=CLIP,
        feature_bounds=np.ones(COORDS),
        selection=Release(NoisyMaxEvent(noise="laplace", noise_multiplier=z_selection)),
        selection_scale=fit.info["selection_noise_scale"][0],
        sketch_noise=Release(GaussianEvent(noise_multiplier=z_sketch)),
        sketch_std=fit.info["sketch_noise_std"],
    )  # fmt: skip

    def sample(key, n, rng):
        out = np.empty(n, dtype=np.int64)
        seeds = np.random.SeedSequence(rng.integers(2**63)).spawn(n)
        for i in range(n):
            party = Party(config, X, targets[key], seed=seeds[i])
            feature, sign, _ = decode_message(party.step(0, np.zeros(1)), 1)
            out[i] = 2 * feature + (sign < 0)
        return out

    bound = audit_event(sample, "D", "D'", n=N_AUDIT, delta=0.0, rng=seed_of(request.node.name))
    print(f"vertical FW selection {variant}: claim eps={claim:.4f}; {bound}")
    if variant == "correct":
        assert not bound.exceeds(claim), f"correct party refuted: {bound} > {claim:.4f}"
        assert bound.epsilon > 0.4 * claim, f"audit without power: {bound}"
    else:
        assert bound.exceeds(claim), f"half noise not caught: {bound} <= {claim:.4f}"


# --- the Dask engine: one actor per party on a real LocalCluster ----------------------------


@pytest.fixture(scope="module")
def client():
    with local_client() as client:
        yield client


def parties_by_worker(client):
    """``{worker: the indices of the parties it runs}``, asked of each worker."""
    return actor_indices(client, lambda party: party.config.index)


def idle_workers(client):
    """The cluster's two workers, once no party of an earlier fit runs on them (a stopped
    engine's parties are freed by the workers after the fit has returned)."""
    workers = cluster_workers(client)
    wait_until(
        lambda: not any(parties_by_worker(client).values()),
        lambda: f"parties of an earlier fit still run: {parties_by_worker(client)}",
    )
    return workers


def test_dask_engine_gives_the_in_process_bits(problem, client):
    workers = idle_workers(client)
    kwargs = private_kwargs()
    local = vertical_fw(problem, engine=InProcessEngine(), **kwargs)
    engine = DaskEngine(client)
    running = []

    def record_parties(iteration, coef):
        if iteration == 1:
            running.append(parties_by_worker(client))

    remote = vertical_fw(problem, engine=engine, callback=record_parties, **kwargs)
    np.testing.assert_array_equal(remote.coef, local.coef)
    np.testing.assert_array_equal(remote.info["vertices"], local.info["vertices"])
    np.testing.assert_array_equal(remote.history.thetas, local.history.thetas)
    np.testing.assert_array_equal(
        remote.info["uplink"]["per_party"], local.info["uplink"]["per_party"]
    )
    assert remote.info["uplink"]["matches"] and remote.info["engine"] == "dask"
    # one actor per party, round-robin over the workers in sorted order: what the engine
    # recorded, and where each worker says the parties ran
    placement = remote.info["placement"]
    assert placement == engine.placement == [workers[0], workers[1], workers[0]]
    assert running == [{workers[0]: [0, 2], workers[1]: [1]}]
    wait_until(
        lambda: not any(parties_by_worker(client).values()),
        lambda: f"the parties outlive their fit: {parties_by_worker(client)}",
    )
    # a client is accepted as the engine; another seed gives other bits
    again = vertical_fw(problem, engine=client, **kwargs)
    np.testing.assert_array_equal(again.coef, local.coef)
    other = vertical_fw(problem, engine=client, **private_kwargs(random_state=8))
    assert not np.array_equal(other.info["vertices"], local.info["vertices"])


def test_dask_engine_gives_the_in_process_fit_of_the_screened_variant(client):
    workers = idle_workers(client)
    rng = np.random.default_rng(seed_of("screened on dask"))
    X = rng.uniform(-1.0, 1.0, (20_000, 6))
    y = 2.0 * X[:, 0] - 1.5 * X[:, 4] + 0.1 * rng.standard_normal(20_000)
    kwargs = {"epsilon": 4.0, "delta": 1e-8, "parties": 3, "radius": 2.0,
              "feature_bounds": 1.0, "random_state": 3}  # fmt: skip
    local = vertical_fw(Problem(X, y, "squared"), engine=InProcessEngine(), **kwargs)
    remote = vertical_fw(Problem(X, y, "squared"), engine=DaskEngine(client), **kwargs)
    # the same noise; the statistics are BLAS products, whose rounding may follow the threads
    np.testing.assert_allclose(remote.coef, local.coef, rtol=1e-12, atol=1e-14)
    assert [s.tolist() for s in local.info["shared"]] == [[0], [], [4]]
    assert remote.info["placement"] == [workers[0], workers[1], workers[0]]
    np.testing.assert_array_equal(
        remote.info["uplink"]["per_party"], local.info["uplink"]["per_party"]
    )
    assert remote.info["uplink"]["matches"] and remote.info["engine"] == "dask"
    wait_until(
        lambda: not any(parties_by_worker(client).values()),
        lambda: f"the parties outlive their fit: {parties_by_worker(client)}",
    )


def test_a_worker_lost_mid_run_names_the_party_and_the_iteration(problem, client):
    workers = idle_workers(client)
    budget = PrivacyBudget(10.0, DELTA)
    engine = DaskEngine(client)
    seen = []

    def callback(iteration, coef):
        seen.append(iteration)
        if iteration == 4:  # after 4 complete iterations, party 1's worker dies
            kill_worker(client, engine.placement[1])

    with pytest.raises(PartyLostError) as caught:
        vertical_fw(problem, engine=engine, budget=budget, callback=callback, **private_kwargs())
    err = caught.value
    assert engine.placement == [workers[0], workers[1], workers[0]]
    assert (err.party, err.iteration, err.completed) == (1, 4, 4)
    assert seen == [1, 2, 3, 4]  # no further iteration, no model
    message = str(err)
    assert "party 1" in message and "iteration 4" in message and engine.placement[1] in message
    assert "No model is returned" in message and "4 of 15 iterations" in message
    # what was spent: the whole plan, charged once before training
    (charge,) = budget.charges
    assert err.report is not None and err.report.epsilon <= 3.0
    assert [m.count for m in err.report.mechanisms] == [45, 45]
    assert [e.noise_multiplier for e in charge.plan.events] == [
        m.noise_multiplier for m in err.report.mechanisms
    ]
    assert f"epsilon={err.report.epsilon:.6g}" in message
    # the nanny restarts the worker (at another address); the cluster serves the next fit
    restarted = idle_workers(client)
    assert workers[0] in restarted
    fit = vertical_fw(problem, engine=DaskEngine(client), **private_kwargs())
    assert fit.info["uplink"]["matches"]
    assert fit.info["placement"] == [restarted[0], restarted[1], restarted[0]]
