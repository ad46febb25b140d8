"""Engines: where the parties of the vertical Frank-Wolfe protocol run.

An engine builds each party (Algorithm 2's
:class:`~dpglm.distributed.protocol.Party`, or the class its
:class:`~dpglm.distributed.protocol.PartySetup` names: the screened protocol's
:class:`~dpglm.distributed.vertical_screened.ScreenedParty`), calls every
party's ``step`` once per iteration (or round) with the coordinator's
broadcast, and returns their messages in party order. It counts
the bytes of exactly what each party sends back (the uplink) and of what the
coordinator broadcasts to each party (the downlink).

``InProcessEngine`` (the default)
    Every party in this process, one after the other.
``DaskEngine(client)``
    One Dask actor per party, pinned to a worker of ``client``: its columns
    are sent to that worker once, at start, and stay there. Each iteration
    calls all parties at once and waits for their messages. A party whose
    worker is lost, or whose call fails, raises
    :class:`~dpglm.distributed.protocol.PartyLostError` naming the party, its
    worker and the iteration.

The parties' computations do not depend on where they run: each draws from its
own stream, and Algorithm 2's sums go through numba kernels, never through a
BLAS whose threading differs between processes, so both engines give the same
bits for the same seed. The screened protocol's statistics are BLAS products:
the same noise, and the same fit up to their rounding.

Examples
--------
>>> import numpy as np
>>> from dpglm.distributed.engines import InProcessEngine
>>> from dpglm.distributed.protocol import PartyConfig, PartySetup, SketchSpec
>>> config = PartyConfig(
...     index=0, features=np.arange(2), tau=1, radius=1.0, sketch=SketchSpec(4, 2, seed=1)
... )
>>> engine = InProcessEngine()
>>> engine.start([PartySetup(config, np.eye(4)[:, :2], np.ones(4), seed=0)])
>>> messages = engine.step(0, np.zeros(2))
>>> engine.uplink.tolist(), engine.downlink.tolist()  # one int64 + 2 float64; 2 float64
([24], [16])
>>> engine.stop()
"""

from __future__ import annotations

import contextlib

import numpy as np

from dpglm.distributed.protocol import FLOAT_BYTES, PartyError, PartyLostError
from dpglm.exceptions import MissingDependencyError

__all__ = ["DaskEngine", "Engine", "InProcessEngine", "get_engine"]


class Engine:
    """Base class: runs the parties and counts the bytes that cross the network.

    Subclasses implement ``_start(setups)``, ``_step(iteration, q)`` and ``_stop()``.

    Attributes
    ----------
    uplink : ndarray of int of shape (K,)
        Bytes received from each party so far.
    downlink : ndarray of int of shape (K,)
        Bytes of the broadcasts sent to each party so far (the sketch ``q``).
    placement : list of str
        Where each party runs.
    """

    name = "engine"

    def __init__(self):
        self.uplink = np.zeros(0, dtype=np.int64)
        self.downlink = np.zeros(0, dtype=np.int64)
        self.placement: list = []
        self._running = False

    @property
    def n_parties(self) -> int:
        return self.uplink.size

    def start(self, setups) -> None:
        """Build one party per setup, where it will run."""
        if self._running:
            raise RuntimeError(f"{self!r} is already running a fit; one fit at a time")
        setups = list(setups)
        self.uplink = np.zeros(len(setups), dtype=np.int64)
        self.downlink = np.zeros(len(setups), dtype=np.int64)
        self._running = True
        try:
            self._start(setups)
        except BaseException:
            self.stop()
            raise

    def step(self, iteration: int, q) -> list:
        """Broadcast ``q``, run every party's iteration, return their messages in party order."""
        q = np.ascontiguousarray(q, dtype=float)
        self.downlink += q.size * FLOAT_BYTES
        messages = self._step(int(iteration), q)
        for k, message in enumerate(messages):
            if not isinstance(message, bytes):
                raise PartyError(
                    f"party {k} sent {type(message).__name__} at iteration {iteration}; a "
                    "party sends bytes only",
                    party=k,
                    iteration=iteration,
                    completed=iteration,
                )
            self.uplink[k] += len(message)
        return messages

    def stop(self) -> None:
        """Release the parties (their data with them)."""
        try:
            if self._running:
                self._stop()
        finally:
            self._running = False

    def _start(self, setups):
        raise NotImplementedError

    def _step(self, iteration, q):
        raise NotImplementedError

    def _stop(self):
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class InProcessEngine(Engine):
    """Every party in this process, called in turn.

    Examples
    --------
    >>> InProcessEngine().name
    'in-process'
    """

    name = "in-process"

    def _start(self, setups):
        self._parties = [setup.build() for setup in setups]
        self.placement = ["in-process"] * len(setups)

    def _step(self, iteration, q):
        return [party.step(iteration, q) for party in self._parties]

    def _stop(self):
        self._parties = []


class DaskEngine(Engine):
    """One Dask actor per party, pinned to a worker of ``client``.

    Parameters
    ----------
    client : distributed.Client
    workers : sequence of str, optional
        Worker addresses to place the parties on, party ``k`` on
        ``workers[k % len(workers)]``. Defaults to every worker of the
        client's cluster, in sorted order.
    timeout : float, optional
        Seconds to wait for a party's message before declaring it lost
        (default: wait as long as Dask keeps the connection).

    Notes
    -----
    The engine calls nothing on the actors but
    :meth:`~dpglm.distributed.protocol.Party.step`, and only its return value
    reaches the coordinator. The columns cross the network once, from this
    process to their worker at start (for a fit given a whole
    :class:`~dpglm.problem.Problem`, which this process then holds anyway).
    Dask itself is no trust boundary: a client can run any code on its
    workers (``client.run``), so the guarantee is about what the protocol
    sends, not about what a hostile client could fetch.
    """

    name = "dask"

    def __init__(self, client, *, workers=None, timeout=None):
        super().__init__()
        try:
            import distributed  # noqa: F401
        except ImportError as err:  # pragma: no cover - only without the extra
            raise MissingDependencyError(
                "DaskEngine needs dask.distributed: pip install 'dpglm[dask]'"
            ) from err
        self.client = client
        self.workers = None if workers is None else [str(w) for w in workers]
        self.timeout = timeout
        self._futures: list = []
        self._actors: list = []

    def _start(self, setups):
        # asked of the scheduler, not read from scheduler_info(): that returns the client's
        # cache, which its periodic refresh can replace at any moment with one listing no worker
        workers = self.workers or sorted(self.client.nthreads())
        if not workers:
            raise RuntimeError("the Dask client has no workers to run the parties on")
        self.placement = [workers[k % len(workers)] for k in range(len(setups))]
        for k, (setup, address) in enumerate(zip(setups, self.placement, strict=True)):
            try:
                X, y = self._ship(k, setup, address)
                self._launch(setup, address, X, y)
                # the party holds its own (clipped) copy now: let the shipped block go
                del X, y
            except Exception as err:
                raise PartyLostError(
                    f"party {k} could not start on worker {address}: {type(err).__name__}: {err}",
                    party=k,
                    iteration=None,
                ) from err

    def _ship(self, k, setup, address):
        """Send party ``k``'s columns and targets straight to its worker; their futures."""
        return self.client.scatter([setup.X, setup.y], workers=[address], hash=False)

    def _launch(self, setup, address, X, y):
        """Start one party as an actor pinned to ``address``, from its shipped data."""
        from dpglm.distributed.protocol import Party

        future = self.client.submit(
            Party if setup.party_type is None else setup.party_type,
            setup.config,
            X,
            y,
            seed=setup.seed,
            secure=setup.secure,
            actor=True,
            workers=[address],
            allow_other_workers=False,
            pure=False,
        )
        self._futures.append(future)
        self._actors.append(future.result(timeout=self.timeout))

    def _lost(self, k, iteration, err):
        return PartyLostError(
            f"party {k} (worker {self.placement[k]}) was lost at iteration {iteration}: "
            f"{type(err).__name__}: {err}",
            party=k,
            iteration=iteration,
            completed=iteration,
        )

    def _step(self, iteration, q):
        calls = []
        # every party is called before any is waited for: they compute at once
        for k, actor in enumerate(self._actors):
            try:
                calls.append(actor.step(iteration, q))
            except Exception as err:
                raise self._lost(k, iteration, err) from err
        messages = []
        for k, call in enumerate(calls):
            try:
                messages.append(call.result(timeout=self.timeout))
            except PartyError:
                raise
            except Exception as err:
                raise self._lost(k, iteration, err) from err
        return messages

    def _stop(self):
        futures = self._futures
        self._actors, self._futures = [], []
        # cancelling, not just dropping the futures: the actor proxies hold their own
        # references, and the workers must free the parties (and their columns) now
        with contextlib.suppress(Exception):  # a lost worker's keys may be gone already
            self.client.cancel(futures)

    def __repr__(self) -> str:
        return f"DaskEngine(client={self.client!r})"


def get_engine(engine) -> Engine:
    """The engine of a fit: ``None`` is a new :class:`InProcessEngine`.

    A ``distributed.Client`` is accepted too, as ``DaskEngine(client)``.

    Examples
    --------
    >>> get_engine(None)
    InProcessEngine()
    """
    if engine is None:
        return InProcessEngine()
    if isinstance(engine, Engine):
        return engine
    if type(engine).__name__ == "Client" and type(engine).__module__.startswith("distributed"):
        return DaskEngine(engine)
    raise TypeError(
        f"engine must be None, an Engine (InProcessEngine, DaskEngine) or a "
        f"distributed.Client, got {type(engine).__name__}"
    )
