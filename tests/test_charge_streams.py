"""No two charges to one budget or ledger share noise; a seed still reproduces a fresh budget.

Every fit charged to a budget draws from a stream keyed to its charge (its
index in the budget and, in a ledger, its dataset) as well as to its seed. The
first test is the attack of the issue: two seeded fits that differ only in
their clipping threshold, composed by the budget as independent, would
otherwise cancel their noise and give back the exact non-private gradient.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from dpglm.distributed.vertical_fw import vertical_fw
from dpglm.estimators import DPRidge
from dpglm.penalties import L2
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.mechanisms import make_noise_source
from dpglm.problem import Problem
from dpglm.solvers.dp_agd import dp_agd
from dpglm.solvers.dp_cd import dp_cd
from dpglm.solvers.dp_fw import dp_fw
from dpglm.solvers.dp_gcd import dp_gcd
from dpglm.solvers.dp_gd import dp_gd
from dpglm.solvers.dp_scd import dp_scd
from dpglm.solvers.dp_sgd import dp_sgd
from dpglm.tuning import PrivateSearchCV
from solver_problems import make_data

DELTA = 1e-6


# -- the attack of the issue -----------------------------------------------------------------


def one_feature_problem():
    """One coordinate, so both fits update it; per-sample terms far below the clip."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1.0, 1.0, (2000, 1))
    y = 0.7 * X[:, 0] + 0.1 * rng.standard_normal(2000)
    return Problem(X, y, "squared")


def recover_gradient(prob, budget):
    """Two eps=1 DP-CD fits with one seed, clip 100 and 200, one update each from 0.

    Fit ``k`` returns ``-gamma (g + s_k xi_k)`` with ``s_2 = 2 s_1``: if
    ``xi_1 = xi_2`` (shared noise), ``-(2 theta_1 - theta_2) / gamma`` is ``g``
    exactly; otherwise it is ``g + 2 s_1 (xi_1 - xi_2)``.
    """
    fits = [
        dp_cd(
            prob,
            epsilon=1.0,
            delta=DELTA,
            passes=1,  # one coordinate: one update
            clip=clip,
            smoothness="bounds",
            feature_bounds=1.0,
            budget=budget,
            random_state=0,
        )
        for clip in (100.0, 200.0)
    ]
    assert [f.n_iter for f in fits] == [1, 1]
    gamma = fits[0].info["step_sizes"][0]
    recovered = -(2.0 * fits[0].coef[0] - fits[1].coef[0]) / gamma
    return recovered, fits[0].info["noise_std"][0]


def test_two_seeded_fits_on_one_budget_do_not_give_back_the_gradient():
    prob = one_feature_problem()
    # clipping is inactive at w = 0: every term |y_i x_i| is far below clip = 100
    assert np.abs(prob.y * prob.X[:, 0]).max() < 2.0
    budget = PrivacyBudget(3.0, DELTA)
    recovered, noise_std = recover_gradient(prob, budget)
    gradient = prob.gradient(np.zeros(1))[0]
    assert len(budget.charges) == 2 and budget.spent() < 3.0
    # with shared noise the error is rounding (1e-17); with independent noise it is of
    # the order of the noise, 2 s (xi_1 - xi_2)
    error = abs(recovered - gradient)
    assert 1e-3 * noise_std < error < 20.0 * noise_std, (error, noise_std)


def test_the_attack_fails_on_a_ledger_too(tmp_path):
    prob = one_feature_problem()
    ledger = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget.open(ledger, dataset="one feature", epsilon=3.0, delta=DELTA)
    recovered, noise_std = recover_gradient(prob, budget)
    assert abs(recovered - prob.gradient(np.zeros(1))[0]) > 1e-3 * noise_std


# -- reproducible from a fresh budget, independent within one --------------------------------

PROBLEM = Problem(*make_data(3, n=300, p=4), "squared", L2(0.1))
FW_PROBLEM = Problem(*make_data(3, n=300, p=4), "squared")
# the screened vertical fit shares no column of 300 records at epsilon 1: more records
SCREENED_PROBLEM = Problem(*make_data(3, n=20_000, p=4), "squared")
SOLVERS = {
    "dp-cd": lambda **kw: dp_cd(PROBLEM, passes=2, feature_bounds=1.0, **kw),
    "dp-gcd": lambda **kw: dp_gcd(PROBLEM, n_iter=5, feature_bounds=1.0, **kw),
    "dp-sgd": lambda **kw: dp_sgd(PROBLEM, passes=1, batch_size=30, **kw),
    "dp-scd": lambda **kw: dp_scd(PROBLEM, passes=1, batch_size=30, **kw),
    "dp-agd": lambda **kw: dp_agd(PROBLEM, max_iter=5, **kw),
    "dp-gd": lambda **kw: dp_gd(PROBLEM, n_iter=5, **kw),
    "dp-fw": lambda **kw: dp_fw(FW_PROBLEM, radius=1.0, n_iter=10, **kw),
    "vertical-fw": lambda **kw: vertical_fw(
        FW_PROBLEM,
        parties=2,
        sketch_dim=20,
        radius=1.0,
        n_iter=5,
        feature_bounds=1.0,
        variant="paper",
        **kw,
    ),
    "vertical-fw screened": lambda **kw: vertical_fw(
        SCREENED_PROBLEM, parties=2, radius=4.0, feature_bounds=1.0, **kw
    ),
}


def two_fits(solver, budget, random_state=0):
    return [
        SOLVERS[solver](epsilon=1.0, delta=DELTA, budget=budget, random_state=random_state)
        for _ in range(2)
    ]


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_a_fresh_budget_reproduces_and_one_budget_never_repeats(solver):
    first = two_fits(solver, PrivacyBudget(10.0, DELTA))
    again = two_fits(solver, PrivacyBudget(10.0, DELTA))
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a.coef, b.coef)
        np.testing.assert_array_equal(a.history.thetas, b.history.thetas)
    # the same seed on one budget: two charges, two streams
    assert not np.array_equal(first[0].coef, first[1].coef)
    if solver.startswith("vertical-fw"):  # J is public, drawn before the charge: one seed, one J
        assert first[0].info["sketch_seed"] == first[1].info["sketch_seed"]


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_a_fit_without_a_budget_keeps_the_seed_stream(solver):
    unkeyed = SOLVERS[solver](epsilon=1.0, delta=DELTA, random_state=5)
    again = SOLVERS[solver](epsilon=1.0, delta=DELTA, random_state=5)
    charged = SOLVERS[solver](
        epsilon=1.0, delta=DELTA, budget=PrivacyBudget(2.0, DELTA), random_state=5
    )
    np.testing.assert_array_equal(unkeyed.coef, again.coef)
    assert not np.array_equal(unkeyed.coef, charged.coef)
    if not solver.startswith("vertical-fw"):  # its parties spawn streams from the seed
        # the seed's own stream, exactly: the same as a source made from it, used as is
        given = SOLVERS[solver](epsilon=1.0, delta=DELTA, random_state=make_noise_source(5))
        np.testing.assert_array_equal(unkeyed.coef, given.coef)


def test_a_generator_is_keyed_from_its_draws():
    budget = PrivacyBudget(3.0, DELTA)
    a, b = (
        SOLVERS["dp-cd"](
            epsilon=1.0, delta=DELTA, budget=budget, random_state=np.random.default_rng(0)
        )
        for _ in range(2)
    )
    assert not np.array_equal(a.coef, b.coef)
    c = SOLVERS["dp-cd"](
        epsilon=1.0,
        delta=DELTA,
        budget=PrivacyBudget(3.0, DELTA),
        random_state=np.random.default_rng(0),
    )
    np.testing.assert_array_equal(a.coef, c.coef)


def test_an_estimator_refit_on_one_budget_draws_new_noise():
    X, y = make_data(4, n=400, p=3)
    budget = PrivacyBudget(3.0, DELTA)
    model = DPRidge(epsilon=1.0, delta=DELTA, feature_bounds=1.0, budget=budget, random_state=0)
    first = model.fit(X, y).coef_.copy()
    assert not np.array_equal(first, model.fit(X, y).coef_)
    fresh = model.set_params(budget=PrivacyBudget(3.0, DELTA))
    np.testing.assert_array_equal(first, fresh.fit(X, y).coef_)


def test_scikit_learn_folds_on_one_budget_draw_new_noise():
    from sklearn.model_selection import cross_validate

    X, y = make_data(4, n=400, p=3)
    rows = np.arange(400)
    # two folds on the same records, the extreme case of overlapping folds
    model = DPRidge(epsilon=1.0, delta=DELTA, feature_bounds=1.0, random_state=0)
    folds = [(rows, rows), (rows, rows)]
    budget = PrivacyBudget(3.0, DELTA)
    fits = cross_validate(model.set_params(budget=budget), X, y, cv=folds, return_estimator=True)[
        "estimator"
    ]
    assert len(budget.charges) == 2
    assert not np.array_equal(fits[0].coef_, fits[1].coef_)


# -- charges of a ledger ---------------------------------------------------------------------


def first_draw(budget, plan):
    from dpglm.privacy.spending import spend

    return spend(plan, epsilon=0.5, delta=DELTA, budget=budget, random_state=0).source.uniform()


def gaussian_plan():
    from dpglm.privacy.events import GaussianEvent, PrivacyPlan

    return PrivacyPlan([GaussianEvent(noise_multiplier=1.0, count=10)])


def test_two_handles_on_one_ledger_get_two_indices_and_two_streams(tmp_path):
    ledger = tmp_path / "ledger.sqlite"
    one = PrivacyBudget.open(ledger, dataset="census", epsilon=5.0, delta=DELTA)
    two = PrivacyBudget.open(ledger, dataset="census")  # as another process would
    plan = gaussian_plan()
    draws = [first_draw(one, plan), first_draw(two, plan), first_draw(one, plan)]
    assert len(set(draws)) == 3
    charges = PrivacyBudget.open(ledger, dataset="census").charges
    assert [c.index for c in charges] == [0, 1, 2]
    assert {c.dataset for c in charges} == {"census"}
    assert len({c.noise_key for c in charges}) == 3
    # another dataset of the same file is another budget: its own indices, its own keys
    other = PrivacyBudget.open(ledger, dataset="survey", epsilon=5.0, delta=DELTA)
    assert first_draw(other, plan) not in draws
    (charge,) = other.charges
    assert charge.index == 0 and charge.noise_key != charges[0].noise_key
    # a fresh ledger reproduces the first draw; an in-memory budget keys differently
    fresh = PrivacyBudget.open(tmp_path / "new.sqlite", dataset="census", epsilon=5.0, delta=DELTA)
    assert first_draw(fresh, plan) == draws[0]
    assert first_draw(PrivacyBudget(5.0, DELTA), plan) not in draws


def test_a_charge_from_another_process_takes_the_next_index(tmp_path):
    ledger = tmp_path / "ledger.sqlite"
    here = PrivacyBudget.open(ledger, dataset="census", epsilon=5.0, delta=DELTA)
    script = textwrap.dedent(
        f"""
        from dpglm.privacy.budget import PrivacyBudget
        from dpglm.privacy.events import GaussianEvent, PrivacyPlan
        from dpglm.privacy.spending import spend

        budget = PrivacyBudget.open({str(ledger)!r}, dataset="census")
        plan = PrivacyPlan([GaussianEvent(noise_multiplier=1.0, count=10)])
        spent = spend(plan, epsilon=0.5, delta={DELTA!r}, budget=budget, random_state=0)
        print(spent.charge.index, repr(spent.source.uniform()))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    index, theirs = done.stdout.split()
    assert index == "0"
    mine = first_draw(here, gaussian_plan())
    assert [c.index for c in here.charges] == [0, 1] and mine != float(theirs)


def test_keys_are_fixed_length_words():
    from dpglm.privacy.mechanisms import keyed_seed_sequence

    budget = PrivacyBudget(5.0, DELTA)
    charge = budget.charge(gaussian_plan().scaled(50.0))
    assert len(charge.noise_key) == 8 and all(0 <= w < 2**32 for w in charge.noise_key)
    # appended to the seed's spawn key: never the seed's own stream, nor a spawned child's
    keyed = keyed_seed_sequence(0, charge.noise_key)
    assert keyed.spawn_key == charge.noise_key and keyed.entropy == 0
    with pytest.raises(ValueError, match="32-bit words"):
        keyed_seed_sequence(0, [2**32])


# -- the private search --------------------------------------------------------------------


def search(budget, random_state=0):
    X, y = make_data(6, n=1500, p=3)
    return PrivateSearchCV(
        DPRidge(solver="dp-cd", feature_bounds=1.0, smoothness="bounds", clip=2.0),
        {"alpha": [1e-3, 1e-2, 10.0]},
        epsilon=1.0,
        delta=DELTA,
        error_bound=4.0,
        mean_repetitions=3.0,
        shape=1.0,
        random_state=random_state,
        budget=budget,
    ).fit(X, y)


def test_two_searches_with_one_seed_on_one_budget_share_no_noise():
    budget = PrivacyBudget(5.0, DELTA)
    first, second = search(budget), search(budget)
    assert len(budget.charges) == 2
    assert first.candidates_ == second.candidates_  # public, from the seed alone
    assert first.best_score_ != second.best_score_
    # a fresh budget reproduces the first search
    again = search(PrivacyBudget(5.0, DELTA))
    assert again.best_score_ == first.best_score_
    np.testing.assert_array_equal(again.best_estimator_.coef_, first.best_estimator_.coef_)


# -- the report ------------------------------------------------------------------------------


def test_a_seeded_fit_says_what_its_seed_voids():
    from dpglm.privacy.spending import SEED_ASSUMPTION, SOURCE_ASSUMPTION

    fit = SOLVERS["dp-cd"]
    assert SEED_ASSUMPTION in fit(epsilon=1.0, delta=DELTA, random_state=0).report.assumptions
    seeded = fit(epsilon=1.0, delta=DELTA, random_state=np.random.default_rng(0)).report
    assert SEED_ASSUMPTION in seeded.assumptions
    for unseeded in (fit(epsilon=1.0, delta=DELTA), fit(epsilon=1.0, delta=DELTA, secure=True)):
        assert SEED_ASSUMPTION not in unseeded.report.assumptions
    given = fit(epsilon=1.0, delta=DELTA, random_state=make_noise_source(0)).report
    assert SOURCE_ASSUMPTION in given.assumptions and SEED_ASSUMPTION not in given.assumptions
    assert "outside one shared budget" in SEED_ASSUMPTION and "secret" in SEED_ASSUMPTION
    # the line is in the printed report, and in every solver's
    assert "outside one shared budget" in str(fit(epsilon=1.0, delta=DELTA, random_state=1).report)
    for solver in sorted(SOLVERS):
        report = SOLVERS[solver](epsilon=1.0, delta=DELTA, random_state=0).report
        assert SEED_ASSUMPTION in report.assumptions, solver


def test_a_search_states_its_own_seed_not_its_runs():
    from dpglm.privacy.spending import SEED_ASSUMPTION

    seeded = search(None, random_state=0).privacy_report_
    unseeded = search(None, random_state=None).privacy_report_
    assert SEED_ASSUMPTION in seeded.assumptions
    # the runs' seeds are the search's secret randomness, drawn from its own stream
    assert SEED_ASSUMPTION not in unseeded.assumptions
