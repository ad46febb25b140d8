"""The shared budget: composition, refusal, sharing across clones, the SQLite ledger."""

import copy
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.model_selection import GridSearchCV

from dpglm.exceptions import BudgetExceededError, LedgerError, PlanError
from dpglm.privacy.accounting import compute_epsilon
from dpglm.privacy.budget import PrivacyBudget
from dpglm.privacy.calibration import calibrate
from dpglm.privacy.events import GaussianEvent, PrivacyPlan, PureDPEvent


def gaussian(z, count=100):
    return PrivacyPlan([GaussianEvent(noise_multiplier=z, count=count)])


class ChargingRegressor(RegressorMixin, BaseEstimator):
    """The smallest estimator that spends a budget: charge a calibrated plan, then fit."""

    def __init__(self, epsilon=0.5, delta=1e-6, alpha=1.0, budget=None):
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.budget = budget

    def fit(self, X, y):
        plan = calibrate(gaussian(1.0, 10), self.epsilon, self.delta).plan
        self.budget.charge(plan, label=f"ChargingRegressor(alpha={self.alpha})")
        self.coef_ = np.linalg.lstsq(X, y, rcond=None)[0]
        return self

    def predict(self, X):
        return X @ self.coef_


def test_charges_compose_with_the_accountant_not_by_adding_epsilons():
    plan = gaussian(40.0)
    one = compute_epsilon(plan, 1e-6)
    budget = PrivacyBudget(epsilon=2.5 * one, delta=1e-6)
    for _ in range(4):
        budget.charge(plan)
    # four charges of `one` each fit in 2.5 times `one`: Gaussian DP composes in mu
    assert len(budget.charges) == 4
    assert budget.spent() == pytest.approx(compute_epsilon(gaussian(40.0, 400), 1e-6))
    assert budget.spent() < 2.5 * one < 4 * one
    assert budget.charges[-1].epsilon_after == pytest.approx(budget.spent())


def test_a_refused_charge_changes_nothing_and_says_why():
    budget = PrivacyBudget(epsilon=2.0, delta=1e-6)
    budget.charge(gaussian(40.0), label="first fit")
    before = (budget.spent(), budget.charges)
    with pytest.raises(BudgetExceededError) as info:
        budget.charge(gaussian(5.0), label="greedy fit")
    message = str(info.value)
    assert "'greedy fit'" in message and "budget epsilon=2" in message
    assert "1 charges so far" in message and "nothing was charged" in message
    assert (budget.spent(), budget.charges) == before
    assert not budget.can_afford(gaussian(5.0))
    assert budget.can_afford(gaussian(400.0))


def test_relation_and_argument_checks():
    budget = PrivacyBudget(epsilon=5.0, delta=1e-6)
    budget.charge(gaussian(40.0))
    with pytest.raises(PlanError, match="composes replace_one plans"):
        budget.charge(PrivacyPlan([GaussianEvent(noise_multiplier=40.0)], "add_remove"))
    with pytest.raises(TypeError, match="PrivacyPlan"):
        budget.charge({"events": []})
    with pytest.raises(ValueError, match="budget epsilon"):
        PrivacyBudget(epsilon=0.0, delta=1e-6)
    with pytest.raises(ValueError, match="budget delta"):
        PrivacyBudget(epsilon=1.0, delta=1.0)
    with pytest.raises(ValueError, match="unknown accountant"):
        PrivacyBudget(epsilon=1.0, delta=1e-6, accountant="moments")


def test_copies_clones_and_pickles_are_the_same_budget():
    budget = PrivacyBudget(epsilon=5.0, delta=1e-6)
    assert copy.copy(budget) is budget
    assert copy.deepcopy(budget) is budget
    assert copy.deepcopy({"b": [budget]})["b"][0] is budget
    assert pickle.loads(pickle.dumps(budget)) is budget
    estimator = ChargingRegressor(budget=budget)
    assert clone(estimator).budget is budget
    assert copy.deepcopy(estimator).budget is budget


def test_ten_fits_through_grid_search_charge_ten_times():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 3)), rng.normal(size=50)
    budget = PrivacyBudget(epsilon=50.0, delta=1e-6)
    search = GridSearchCV(
        ChargingRegressor(epsilon=0.5, budget=budget),
        {"alpha": [0.1, 1.0]},
        cv=5,
        refit=False,
        error_score="raise",
    )
    search.fit(X, y)
    assert len(budget.charges) == 10
    labels = [c.label for c in budget.charges]
    assert labels.count("ChargingRegressor(alpha=0.1)") == 5
    assert budget.spent() > compute_epsilon(calibrate(gaussian(1.0, 10), 0.5, 1e-6).plan, 1e-6)


def test_grid_search_stops_when_the_budget_runs_out():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 3)), rng.normal(size=50)
    budget = PrivacyBudget(epsilon=1.2, delta=1e-6)
    search = GridSearchCV(
        ChargingRegressor(epsilon=0.5, budget=budget), {"alpha": [0.1, 1.0]}, cv=5,
        error_score="raise",
    )  # fmt: skip
    with pytest.raises(BudgetExceededError):
        search.fit(X, y)
    assert budget.spent() <= 1.2


def test_an_in_memory_budget_refuses_to_travel_to_another_process():
    budget = PrivacyBudget(epsilon=1.0, delta=1e-6)
    data = pickle.dumps(budget)
    code = "import pickle, sys; pickle.loads(sys.stdin.buffer.read())"
    run = subprocess.run(
        [sys.executable, "-c", code], input=data, capture_output=True, check=False
    )
    assert run.returncode != 0
    assert b"cannot be shared with another process" in run.stderr
    assert b"PrivacyBudget.open" in run.stderr


# -- the SQLite ledger ------------------------------------------------------------------------


def test_ledger_creates_reopens_and_refuses_changes(tmp_path):
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget.open(path, dataset="census", epsilon=3.0, delta=1e-6)
    assert budget.persistent
    budget.charge(gaussian(40.0), label="fit 1")
    again = PrivacyBudget.open(path, dataset="census")
    assert (again.epsilon, again.delta, again.accountant) == (3.0, 1e-6, "auto")
    assert [c.label for c in again.charges] == ["fit 1"]
    assert again.charges[0].plan == gaussian(40.0)
    assert again.spent() == pytest.approx(budget.spent())
    with pytest.raises(LedgerError, match=r"has budget epsilon=3\.0, not 4\.0"):
        PrivacyBudget.open(path, dataset="census", epsilon=4.0)
    with pytest.raises(LedgerError, match="no budget for dataset 'hospital'"):
        PrivacyBudget.open(path, dataset="hospital")
    # several datasets live side by side and do not share spending
    other = PrivacyBudget.open(path, dataset="hospital", epsilon=1.0, delta=1e-7)
    assert other.charges == () and len(again.charges) == 1


def test_ledger_refusal_leaves_no_trace(tmp_path):
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget.open(path, dataset="d", epsilon=2.0, delta=1e-6)
    budget.charge(gaussian(40.0))
    with pytest.raises(BudgetExceededError, match="nothing was charged"):
        budget.charge(gaussian(2.0))
    rows = sqlite3.connect(path).execute("SELECT COUNT(*) FROM charges").fetchone()[0]
    assert rows == 1


def test_ledger_rejects_a_file_that_is_not_a_ledger(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("shopping list\n" * 100)
    with pytest.raises(LedgerError, match=r"notes\.txt"):
        PrivacyBudget.open(path, dataset="d", epsilon=1.0, delta=1e-6)


def test_a_ledger_budget_pickles_as_the_same_ledger(tmp_path):
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget.open(path, dataset="d", epsilon=5.0, delta=1e-6)
    code = textwrap.dedent(
        """
        import pickle, sys
        from dpglm.privacy.events import GaussianEvent, PrivacyPlan
        budget = pickle.loads(sys.stdin.buffer.read())
        plan = PrivacyPlan([GaussianEvent(noise_multiplier=40.0, count=100)])
        budget.charge(plan, label="child")
        """
    )
    subprocess.run([sys.executable, "-c", code], input=pickle.dumps(budget), check=True)
    assert [c.label for c in budget.charges] == ["child"]


def test_grid_search_with_worker_processes_charges_the_ledger(tmp_path):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), rng.normal(size=40)
    budget = PrivacyBudget.open(tmp_path / "l.sqlite", dataset="d", epsilon=50.0, delta=1e-6)
    search = GridSearchCV(
        ChargingRegressor(epsilon=0.5, budget=budget),
        {"alpha": [0.1, 1.0]},
        cv=5,
        refit=False,
        n_jobs=2,
        error_score="raise",
    )
    search.fit(X, y)
    charges = budget.charges
    assert len(charges) == 10
    assert len({c.created for c in charges}) == 10


CHARGER = textwrap.dedent(
    """
    import sys, time
    from dpglm.exceptions import BudgetExceededError
    from dpglm.privacy.budget import PrivacyBudget
    from dpglm.privacy.events import PrivacyPlan, PureDPEvent

    path, start = sys.argv[1], float(sys.argv[2])
    budget = PrivacyBudget.open(path, dataset="shared")
    plan = PrivacyPlan([PureDPEvent(epsilon=0.125)])
    while time.time() < start:
        time.sleep(0.001)
    done = 0
    for _ in range(10):
        try:
            budget.charge(plan, label="worker")
            done += 1
        except BudgetExceededError:
            pass
    print(done)
    """
)


def test_eight_processes_never_overspend_and_lose_no_record(tmp_path):
    path = tmp_path / "ledger.sqlite"
    # basic composition: 0.125 adds up exactly, so exactly 16 charges fit in epsilon 2
    PrivacyBudget.open(path, dataset="shared", epsilon=2.0, delta=0.0, accountant="basic")
    start = time.time() + 2.0
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", CHARGER, str(path), str(start)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    successes = [int(w.communicate(timeout=120)[0]) for w in workers]
    assert all(w.returncode == 0 for w in workers)
    budget = PrivacyBudget.open(path, dataset="shared")
    assert sum(successes) == 16 == len(budget.charges)
    assert budget.spent() == 2.0
    # the spent epsilon recorded with each charge rises by exactly one step each time
    assert [c.epsilon_after for c in budget.charges] == [0.125 * (k + 1) for k in range(16)]
    assert len({c.created for c in budget.charges}) == 16
    pids = sqlite3.connect(path).execute("SELECT COUNT(DISTINCT pid) FROM charges").fetchone()[0]
    assert pids >= 2  # the charges really came from concurrent processes


CRASHER = textwrap.dedent(
    """
    import sys, time
    from dpglm.privacy import budget as budget_module
    from dpglm.privacy.budget import PrivacyBudget
    from dpglm.privacy.events import GaussianEvent, PrivacyPlan

    insert = budget_module._SQLiteLedger._insert

    def insert_then_hang(self, conn, charge):
        insert(self, conn, charge)
        print("inside the transaction", flush=True)
        time.sleep(600)

    budget_module._SQLiteLedger._insert = insert_then_hang
    budget = PrivacyBudget.open(sys.argv[1], dataset="d")
    budget.charge(PrivacyPlan([GaussianEvent(noise_multiplier=40.0, count=100)]), label="doomed")
    """
)


def test_a_process_killed_during_a_charge_leaves_a_readable_ledger(tmp_path):
    path = tmp_path / "ledger.sqlite"
    budget = PrivacyBudget.open(path, dataset="d", epsilon=5.0, delta=1e-6)
    budget.charge(gaussian(40.0), label="before")
    victim = subprocess.Popen(
        [sys.executable, "-c", CRASHER, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert victim.stdout.readline().strip() == "inside the transaction"
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(timeout=30)
    assert victim.returncode == -signal.SIGKILL
    reopened = PrivacyBudget.open(path, dataset="d")
    assert [c.label for c in reopened.charges] == ["before"]
    check = sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0]
    assert check == "ok"
    # the dead process's lock is gone: the next charge goes through at once
    started = time.monotonic()
    reopened.charge(gaussian(40.0), label="after")
    assert time.monotonic() - started < 10
    assert [c.label for c in reopened.charges] == ["before", "after"]


def test_pure_dp_plans_at_delta_zero():
    budget = PrivacyBudget(epsilon=1.0, delta=0.0)
    for _ in range(4):
        budget.charge(PrivacyPlan([PureDPEvent(epsilon=0.25)]))
    assert budget.spent() == 1.0
    with pytest.raises(BudgetExceededError):
        budget.charge(PrivacyPlan([PureDPEvent(epsilon=0.01)]))
