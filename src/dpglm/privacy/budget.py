"""The privacy budget: one object, shared by every fit that spends it.

``PrivacyBudget(epsilon, delta)`` keeps the plans charged to it and composes
them with the accountant (never by adding epsilons when the accountant can do
better). A charge that would take the composition over the budget raises
:class:`~dpglm.exceptions.BudgetExceededError` and changes nothing; solvers
charge before they read the data.

A budget is shared, never copied: ``copy.copy``, ``copy.deepcopy`` and
``sklearn.base.clone`` return the same object, and unpickling in the same
process gives it back. ``PrivacyBudget.open(path, dataset=...)`` keeps the
charges of a dataset in an SQLite ledger instead, so that separate processes
(and later sessions) spend one budget: every charge is one ``BEGIN IMMEDIATE``
transaction that re-reads the ledger, accounts, and writes, so concurrent
charges can never overspend and a crash leaves all of a charge or none of it.

Every charge has an identity within its budget, :attr:`Charge.index` (its
position among the budget's charges) and, for a ledger, its dataset: the fit
charged draws its noise from a stream keyed to it (:attr:`Charge.noise_key`,
see :func:`~dpglm.privacy.spending.spend`), so two charges to one budget never
share noise, even with the same ``random_state``.

Examples
--------
>>> from dpglm.privacy.budget import PrivacyBudget
>>> from dpglm.privacy.events import GaussianEvent, PrivacyPlan
>>> budget = PrivacyBudget(epsilon=2.0, delta=1e-6)
>>> plan = PrivacyPlan([GaussianEvent(noise_multiplier=40.0, count=100)])
>>> _ = budget.charge(plan, label="fit 1")
>>> _ = budget.charge(plan, label="fit 2")
>>> round(budget.spent(), 3), len(budget.charges)
(1.544, 2)
>>> [c.index for c in budget.charges]
[0, 1]
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import uuid
import weakref
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from dpglm.exceptions import BudgetExceededError, LedgerError, PlanError
from dpglm.privacy.accounting import account, get_accountant
from dpglm.privacy.events import PrivacyPlan
from dpglm.privacy.targets import check_privacy_target

#: in-process budgets by identity, so that unpickling returns the same object
_REGISTRY: weakref.WeakValueDictionary = weakref.WeakValueDictionary()

#: seconds a charge waits for another process's charge to finish
LOCK_TIMEOUT = 60.0

SCHEMA_VERSION = "1"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS budgets (
        dataset TEXT PRIMARY KEY,
        epsilon REAL NOT NULL,
        delta REAL NOT NULL,
        accountant TEXT NOT NULL,
        neighbouring TEXT,
        created TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS charges (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        dataset TEXT NOT NULL REFERENCES budgets(dataset),
        label TEXT NOT NULL,
        plan TEXT NOT NULL,
        epsilon_after REAL NOT NULL,
        created TEXT NOT NULL,
        pid INTEGER NOT NULL
    )""",
)


#: first word of every charge's noise key, so that a keyed stream is never one that
#: ``SeedSequence.spawn`` gives the same seed (spawn keys ``(0,)``, ``(1,)``, ...)
_NOISE_KEY_TAG = 0x64706763  # "dpgc"


@dataclass(frozen=True)
class Charge:
    """One charged plan.

    Attributes
    ----------
    label : str
        What was charged (e.g. the estimator and its parameters).
    plan : PrivacyPlan
    epsilon_after : float
        The budget's spent epsilon once this charge was added.
    created : str
        UTC time of the charge, ISO 8601.
    index : int
        Position of the charge among its budget's charges (0-based; per dataset
        in an SQLite ledger). Charges are serialised by the budget's lock or
        the ledger's transaction and never removed, so no two charges of one
        budget share an index, whichever process made them.
    dataset : str or None
        The dataset of a ledger budget, None in memory.

    Examples
    --------
    >>> from dpglm.privacy.events import GaussianEvent, PrivacyPlan
    >>> budget = PrivacyBudget(1.0, 1e-6)
    >>> charge = budget.charge(PrivacyPlan([GaussianEvent(noise_multiplier=50.0)]))
    >>> charge.index, charge.dataset, len(charge.noise_key)
    (0, None, 8)
    """

    label: str
    plan: PrivacyPlan
    epsilon_after: float
    created: str
    index: int
    dataset: str | None

    @property
    def noise_key(self) -> tuple:
        """Words that key the charged fit's noise stream: unique within one budget.

        A tag, the kind of budget (in memory or ledger), the index (two 32-bit
        words) and a digest of the dataset (four words, zero in memory): fixed
        length, so that no two keys read as the same words. It holds nothing
        secret; a stream keyed to it is as secret as the seed it is mixed with
        (see :func:`~dpglm.privacy.mechanisms.keyed_seed_sequence`).
        """
        if self.dataset is None:
            kind, digest = 0, bytes(16)
        else:
            kind, digest = 1, hashlib.sha256(self.dataset.encode("utf-8")).digest()[:16]
        words = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
        return (_NOISE_KEY_TAG, kind, self.index & 0xFFFFFFFF, self.index >> 32, *words)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


class _MemoryLedger:
    """Charges kept in this process, behind a lock (fits may run in threads)."""

    def __init__(self, epsilon, delta, accountant):
        self.settings = {"epsilon": epsilon, "delta": delta, "accountant": accountant}
        self._charges = []
        self._neighbouring = None
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def transaction(self):
        with self._lock:
            pending = []
            state = _State(list(self._charges), self._neighbouring, pending)
            yield state
            self._charges.extend(pending)
            self._neighbouring = state.neighbouring

    def charges(self):
        with self._lock:
            return list(self._charges)

    def describe(self):
        return "in memory"


@dataclass
class _State:
    charges: list
    neighbouring: str | None
    pending: list

    def append(self, charge):
        self.pending.append(charge)


class _SQLiteLedger:
    """Charges of one dataset in an SQLite file, one transaction per charge."""

    def __init__(self, path, dataset, epsilon, delta, accountant):
        self.path = Path(path)
        self.dataset = str(dataset)
        with self._connect() as conn:
            self._create_schema(conn)
            self.settings = self._budget_row(conn, epsilon, delta, accountant)

    def _connect(self):
        try:
            conn = sqlite3.connect(self.path, timeout=LOCK_TIMEOUT, isolation_level=None)
            conn.execute("PRAGMA synchronous=FULL")
        except sqlite3.Error as err:
            raise LedgerError(f"cannot open the budget ledger {self.path}: {err}") from None
        return contextlib.closing(conn)

    def _create_schema(self, conn):
        try:
            conn.execute("BEGIN IMMEDIATE")
            # one statement at a time: executescript would commit the transaction first
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
                (SCHEMA_VERSION,),
            )
            conn.execute("COMMIT")
        except sqlite3.DatabaseError as err:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise LedgerError(f"{self.path} is not a dpglm budget ledger: {err}") from None
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if version is None or version[0] != SCHEMA_VERSION:
            raise LedgerError(
                f"{self.path} has ledger schema {version and version[0]!r}; this dpglm reads "
                f"version {SCHEMA_VERSION}"
            )

    def _budget_row(self, conn, epsilon, delta, accountant):
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute(
                "SELECT epsilon, delta, accountant FROM budgets WHERE dataset = ?",
                (self.dataset,),
            ).fetchone()
            if row is None:
                if epsilon is None or delta is None:
                    raise LedgerError(
                        f"the ledger {self.path} has no budget for dataset {self.dataset!r}; "
                        "give epsilon and delta to create it"
                    )
                check_privacy_target(epsilon, delta, owner="budget")
                conn.execute(
                    "INSERT INTO budgets (dataset, epsilon, delta, accountant, created) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (self.dataset, float(epsilon), float(delta), accountant or "auto", _now()),
                )
                row = (float(epsilon), float(delta), accountant or "auto")
            else:
                asked = {"epsilon": epsilon, "delta": delta, "accountant": accountant}
                stored = dict(zip(("epsilon", "delta", "accountant"), row, strict=True))
                for key, value in asked.items():
                    if value is not None and value != stored[key]:
                        raise LedgerError(
                            f"dataset {self.dataset!r} in {self.path} has budget {key}="
                            f"{stored[key]!r}, not {value!r}; a ledger's budget cannot change"
                        )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return {"epsilon": row[0], "delta": row[1], "accountant": row[2]}

    @contextlib.contextmanager
    def transaction(self):
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                neighbouring = conn.execute(
                    "SELECT neighbouring FROM budgets WHERE dataset = ?", (self.dataset,)
                ).fetchone()[0]
                state = _State(self._read(conn), neighbouring, [])
                yield state
                if state.neighbouring != neighbouring:
                    conn.execute(
                        "UPDATE budgets SET neighbouring = ? WHERE dataset = ?",
                        (state.neighbouring, self.dataset),
                    )
                for charge in state.pending:
                    self._insert(conn, charge)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def _insert(self, conn, charge):
        conn.execute(
            "INSERT INTO charges (dataset, label, plan, epsilon_after, created, pid) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                self.dataset,
                charge.label,
                json.dumps(charge.plan.to_dict()),
                charge.epsilon_after,
                charge.created,
                os.getpid(),
            ),
        )

    def _read(self, conn):
        rows = conn.execute(
            "SELECT label, plan, epsilon_after, created FROM charges WHERE dataset = ? "
            "ORDER BY id",
            (self.dataset,),
        ).fetchall()
        try:
            # a charge's index is its position: rows are only ever appended, one
            # BEGIN IMMEDIATE transaction at a time, so it needs no column of its own
            return [
                Charge(
                    label, PrivacyPlan.from_dict(json.loads(plan)), eps, created, i, self.dataset
                )
                for i, (label, plan, eps, created) in enumerate(rows)
            ]
        except (ValueError, KeyError, TypeError, PlanError) as err:
            raise LedgerError(f"the ledger {self.path} has an unreadable charge: {err}") from None

    def charges(self):
        with self._connect() as conn:
            return self._read(conn)

    def describe(self):
        return f"ledger {self.path}, dataset {self.dataset!r}"


class PrivacyBudget:
    """A total ``(epsilon, delta)`` that every charged plan is composed against.

    Parameters
    ----------
    epsilon : float
        Total epsilon, positive (``inf`` for an unlimited, non-private budget).
    delta : float
        Total delta in ``[0, 1)``; the composition of all charges is accounted
        at this delta.
    accountant : str, default="auto"
        How charges compose (see :mod:`dpglm.privacy.accounting`).

    Attributes
    ----------
    charges : tuple of Charge
        What has been charged, in order.

    Examples
    --------
    >>> import copy
    >>> budget = PrivacyBudget(1.0, 1e-6)
    >>> copy.deepcopy(budget) is budget
    True
    """

    def __init__(self, epsilon: float, delta: float, *, accountant: str = "auto"):
        check_privacy_target(epsilon, delta, owner="budget")
        if accountant != "auto":
            get_accountant(accountant)
        self._ledger = _MemoryLedger(float(epsilon), float(delta), accountant)
        self._register()

    def _register(self):
        self._key = uuid.uuid4().hex
        _REGISTRY[self._key] = self

    @classmethod
    def open(
        cls,
        path,
        *,
        dataset: str,
        epsilon: float | None = None,
        delta: float | None = None,
        accountant: str | None = None,
    ) -> PrivacyBudget:
        """A budget kept in the SQLite ledger at ``path`` for ``dataset``.

        The first opening of a dataset creates its budget from ``epsilon`` and
        ``delta``; later openings (in any process) read it back, and refuse
        values that differ from the stored ones.

        Parameters
        ----------
        path : str or os.PathLike
            The ledger file (created if missing).
        dataset : str
            Name of the dataset whose privacy the budget protects.
        epsilon, delta : float, optional
            The budget, required when the dataset is new.
        accountant : str, optional
            Accountant of a new budget (default ``"auto"``).

        Raises
        ------
        LedgerError
            Unreadable file, unknown dataset without a budget, or a budget that
            differs from the stored one.

        Examples
        --------
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "ledger.sqlite")
        >>> b = PrivacyBudget.open(path, dataset="census", epsilon=3.0, delta=1e-6)
        >>> PrivacyBudget.open(path, dataset="census").epsilon
        3.0
        """
        if accountant is not None and accountant != "auto":
            get_accountant(accountant)
        budget = cls.__new__(cls)
        budget._ledger = _SQLiteLedger(path, dataset, epsilon, delta, accountant)
        budget._register()
        return budget

    # -- what the budget is -------------------------------------------------------------

    @property
    def epsilon(self) -> float:
        """Total epsilon."""
        return self._ledger.settings["epsilon"]

    @property
    def delta(self) -> float:
        """Total delta."""
        return self._ledger.settings["delta"]

    @property
    def accountant(self) -> str:
        """Accountant composing the charges."""
        return self._ledger.settings["accountant"]

    @property
    def charges(self) -> tuple:
        """The charges so far, oldest first."""
        return tuple(self._ledger.charges())

    @property
    def persistent(self) -> bool:
        """Whether the charges live in an SQLite ledger."""
        return isinstance(self._ledger, _SQLiteLedger)

    @property
    def ledger_path(self) -> Path | None:
        """The SQLite ledger's path, None for an in-memory budget."""
        return self._ledger.path if self.persistent else None

    @property
    def dataset(self) -> str | None:
        """The dataset a persistent budget protects, None for an in-memory budget."""
        return self._ledger.dataset if self.persistent else None

    # -- spending -----------------------------------------------------------------------

    def _composed_epsilon(self, charges, plan=None, neighbouring=None):
        plans = [c.plan for c in charges] + ([plan] if plan is not None else [])
        if not plans:
            return 0.0
        relation = neighbouring or plans[0].neighbouring
        events = tuple(e for p in plans for e in p.events)
        total = PrivacyPlan(events, relation)
        return account(total, self.delta, self.accountant).epsilon

    @staticmethod
    def _check_relation(state, plan):
        if state.neighbouring is None:
            state.neighbouring = plan.neighbouring
        elif plan.neighbouring != state.neighbouring:
            raise PlanError(
                f"this budget composes {state.neighbouring} plans; a {plan.neighbouring} plan "
                "cannot be charged to it"
            )

    def charge(self, plan: PrivacyPlan, *, label: str = "") -> Charge:
        """Charge ``plan`` if the composition of all charges stays within the budget.

        Parameters
        ----------
        plan : PrivacyPlan
            What is about to be released (charge before touching the data).
        label : str
            What is being fitted, for the record.

        Returns
        -------
        Charge
            The charge, with its :attr:`~Charge.index` in the budget.

        Raises
        ------
        BudgetExceededError
            When the composition with ``plan`` would exceed the budget; nothing
            is charged.
        PlanError
            When ``plan``'s neighbouring relation differs from earlier charges'.
        """
        if not isinstance(plan, PrivacyPlan):
            raise TypeError(f"charge takes a PrivacyPlan, got {type(plan).__name__}")
        with self._ledger.transaction() as state:
            self._check_relation(state, plan)
            after = self._composed_epsilon(state.charges, plan, state.neighbouring)
            if not after <= self.epsilon:
                before = self._composed_epsilon(state.charges, None, state.neighbouring)
                raise BudgetExceededError(
                    f"charging {label or 'this plan'!r} would bring the spent epsilon from "
                    f"{before:.6g} to {after:.6g}, over the budget epsilon={self.epsilon:g} "
                    f"(delta={self.delta:g}, {len(state.charges)} charges so far, "
                    f"{self._ledger.describe()}); nothing was charged"
                )
            # the transaction holds the lock (or the ledger's write lock): no other
            # charge can take this index
            charge = Charge(label, plan, after, _now(), len(state.charges), self.dataset)
            state.append(charge)
        return charge

    def can_afford(self, plan: PrivacyPlan) -> bool:
        """Whether :meth:`charge` would accept ``plan`` now (nothing is charged)."""
        charges = self._ledger.charges()
        relation = charges[0].plan.neighbouring if charges else plan.neighbouring
        if plan.neighbouring != relation:
            return False
        return self._composed_epsilon(charges, plan, relation) <= self.epsilon

    def spent(self) -> float:
        """Epsilon of the composition of all charges, at the budget's delta."""
        return self._composed_epsilon(self._ledger.charges())

    def remaining(self) -> float:
        """``epsilon - spent()``: an indication only, since epsilons do not add up."""
        return self.epsilon - self.spent()

    # -- sharing, never copying ---------------------------------------------------------

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        if isinstance(self._ledger, _SQLiteLedger):
            return (_reopen, (str(self._ledger.path), self._ledger.dataset))
        return (_lookup, (self._key,))

    def __repr__(self) -> str:
        return (
            f"PrivacyBudget(epsilon={self.epsilon!r}, delta={self.delta!r}, "
            f"{self._ledger.describe()}, {len(self.charges)} charges)"
        )


def _lookup(key):
    try:
        return _REGISTRY[key]
    except KeyError:
        raise LedgerError(
            "an in-memory PrivacyBudget cannot be shared with another process; use "
            "PrivacyBudget.open(path, dataset=...) to keep the budget in an SQLite ledger"
        ) from None


def _reopen(path, dataset):
    return PrivacyBudget.open(path, dataset=dataset)
