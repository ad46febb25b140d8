"""Event plans: what a solver releases, described before it touches the data.

A :class:`PrivacyPlan` lists the mechanism applications of one fit (each an
:class:`Event` repeated ``count`` times) and the neighbouring relation they are
analysed under. Accountants turn a plan into ``(epsilon, delta)``; calibration
scales the plan's noise until it meets a target; the budget composes plans.

The **noise multiplier** of an event is always the noise scale divided by the
sensitivity *under the plan's neighbouring relation*: a Gaussian release of a
query whose value moves by at most ``Delta`` between neighbours, with noise
``N(0, sigma**2)``, has ``noise_multiplier = sigma / Delta``. With replace-one
neighbours an average of clipped terms ``|t_i| <= C`` has ``Delta = 2 C / n``;
with add/remove neighbours a sum has ``Delta = C``. Solvers compute ``Delta``;
the plan records it for the report.

Examples
--------
>>> from dpglm.privacy.events import GaussianEvent, NoisyMaxEvent, PrivacyPlan
>>> plan = PrivacyPlan(
...     [
...         GaussianEvent(noise_multiplier=20.0, count=100, label="coordinate step"),
...         NoisyMaxEvent(noise_multiplier=40.0, count=100, noise="gumbel"),
...     ],
...     neighbouring="replace_one",
... )
>>> plan.scaled(2.0).events[0].noise_multiplier
40.0
>>> PrivacyPlan.from_dict(plan.to_dict()) == plan
True
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, replace

from dpglm.exceptions import PlanError

NEIGHBOURING = ("replace_one", "add_remove")
NOISY_MAX_NOISE = ("laplace", "gumbel", "exponential")
SAMPLING = ("poisson", "without_replacement")


def _check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PlanError(f"{name} must be a non-negative integer, got {value!r}")


def _check_multiplier(value):
    if not (isinstance(value, int | float) and value >= 0 and not math.isnan(value)):
        raise PlanError(f"noise_multiplier must be a number >= 0 (inf allowed), got {value!r}")


@dataclass(frozen=True, kw_only=True)
class Event:
    """One mechanism, applied ``count`` times (adaptively).

    Attributes
    ----------
    count : int
        Number of applications.
    label : str
        What is released, for the report (e.g. ``"coordinate gradient"``).
    part : str
        Which part of the fit it belongs to (e.g. ``"training"``,
        ``"smoothness estimation"``); the report splits the budget by part.
    sensitivity : float or None
        The sensitivity ``Delta`` the noise is calibrated to, when known as a
        single number (for the report; accounting only uses the multiplier).
    """

    count: int = 1
    label: str = ""
    part: str = "training"
    sensitivity: float | None = None

    kind = "event"

    def __post_init__(self):
        _check_positive_int("count", self.count)
        if self.sensitivity is not None and not self.sensitivity >= 0:
            raise PlanError(f"sensitivity must be >= 0, got {self.sensitivity!r}")

    def scaled(self, factor: float) -> Event:
        """The same event with its noise multiplied by ``factor`` (fixed costs unchanged)."""
        return self

    @property
    def scalable(self) -> bool:
        """Whether calibration can scale this event's noise."""
        return False

    @classmethod
    def from_fields(cls, data: dict) -> Event:
        """Build the event from the fields of :meth:`to_dict` (without ``kind``)."""
        return cls(**data)

    def to_dict(self) -> dict:
        """JSON-ready description, with the event's ``kind``."""
        return {"kind": self.kind, **asdict(self)}

    def to_dp_event(self):
        """This event as a dp-accounting ``DpEvent`` (``count`` self-compositions).

        dp-accounting is imported here, not when dpglm is. Its events take the
        noise multiplier as is; pure-DP events become the binary randomized
        response that dominates them, and Gumbel noisy max its zCDP cost.
        """
        import dp_accounting

        one = self._dp_event(dp_accounting)
        return one if self.count == 1 else dp_accounting.SelfComposedDpEvent(one, self.count)

    def _dp_event(self, dpa):
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class _NoisyEvent(Event):
    """An event with a noise multiplier; ``fixed=True`` keeps it out of calibration.

    A fixed event has its noise already chosen (e.g. a separately budgeted
    preprocessing release): :meth:`PrivacyPlan.scaled` leaves it unchanged, so
    calibrating the rest of the plan accounts for its cost without moving it.
    """

    noise_multiplier: float
    fixed: bool = False

    def __post_init__(self):
        super().__post_init__()
        _check_multiplier(self.noise_multiplier)

    def scaled(self, factor):
        if self.fixed:
            return self
        return replace(self, noise_multiplier=self.noise_multiplier * factor)

    @property
    def scalable(self) -> bool:
        return not self.fixed

    def frozen(self):
        """The same event, excluded from further calibration."""
        return replace(self, fixed=True)


@dataclass(frozen=True, kw_only=True)
class GaussianEvent(_NoisyEvent):
    """Gaussian noise of std ``noise_multiplier * Delta`` (L2 sensitivity) on a full-data query.

    Examples
    --------
    >>> GaussianEvent(noise_multiplier=2.0, count=3).count
    3
    """

    kind = "gaussian"

    def _dp_event(self, dpa):
        return dpa.GaussianDpEvent(self.noise_multiplier)


@dataclass(frozen=True, kw_only=True)
class SampledGaussianEvent(_NoisyEvent):
    """A Gaussian release of a sum of per-record terms over a random subsample.

    ``sampling="poisson"``: each record is included independently with
    probability ``sampling_rate``, analysed under the plan's relation. Under
    add/remove neighbours the sensitivity is one record's largest term;
    under replace-one it is the largest change of the sum, twice that, and
    the accountants use the pair whose sampled component moves by half of it
    either way (dp-accounting's ``REPLACE_ONE`` analysis): the sum must be one
    of per-record terms, a record absent from the batch contributing nothing.
    ``sampling="without_replacement"``: a uniformly random batch of
    ``batch_size`` distinct records out of ``dataset_size`` (replace-one
    neighbours only). The sampler a solver runs must be exactly this one.

    Examples
    --------
    >>> SampledGaussianEvent(noise_multiplier=1.1, sampling_rate=0.01, count=500).sampling
    'poisson'
    """

    sampling: str = "poisson"
    sampling_rate: float | None = None
    dataset_size: int | None = None
    batch_size: int | None = None

    kind = "sampled_gaussian"

    def _dp_event(self, dpa):
        inner = dpa.GaussianDpEvent(self.noise_multiplier)
        if self.sampling == "poisson":
            return dpa.PoissonSampledDpEvent(self.sampling_rate, inner)
        return dpa.SampledWithoutReplacementDpEvent(self.dataset_size, self.batch_size, inner)

    def __post_init__(self):
        super().__post_init__()
        if self.sampling not in SAMPLING:
            raise PlanError(f"sampling must be one of {SAMPLING}, got {self.sampling!r}")
        if self.sampling == "poisson":
            q = self.sampling_rate
            if q is None or not 0.0 <= q <= 1.0:
                raise PlanError(f"Poisson sampling needs sampling_rate in [0, 1], got {q!r}")
        else:
            _check_positive_int("dataset_size", self.dataset_size)
            _check_positive_int("batch_size", self.batch_size)
            if not 0 < self.batch_size <= self.dataset_size:
                raise PlanError(
                    f"batch_size must lie in [1, dataset_size={self.dataset_size}], "
                    f"got {self.batch_size}"
                )

    @property
    def rate(self) -> float:
        """The probability that a given record is in a batch."""
        if self.sampling == "poisson":
            return self.sampling_rate
        return self.batch_size / self.dataset_size


@dataclass(frozen=True, kw_only=True)
class LaplaceEvent(_NoisyEvent):
    """Laplace noise of scale ``noise_multiplier * Delta`` (L1 sensitivity).

    Each release is ``1 / noise_multiplier``-DP.

    Examples
    --------
    >>> LaplaceEvent(noise_multiplier=0.5).epsilon
    2.0
    """

    kind = "laplace"

    def _dp_event(self, dpa):
        return dpa.LaplaceDpEvent(self.noise_multiplier)

    @property
    def epsilon(self) -> float:
        """Pure-DP epsilon of one application."""
        return _inverse(self.noise_multiplier)


@dataclass(frozen=True, kw_only=True)
class NoisyMaxEvent(_NoisyEvent):
    """Report-noisy-max: the argmax of scores plus i.i.d. noise.

    The noise scale is ``noise_multiplier * Delta``, where ``Delta`` bounds
    the change of every score between neighbours. With ``noise="gumbel"``
    this is the exponential mechanism, whose guarantee reads only the spread
    of those changes: it also holds when they span at most ``2 Delta``
    (``max_a Delta_a - min_b Delta_b <= 2 Delta``), whatever each one's size. Each selection is
    ``epsilon = 2 / noise_multiplier``-DP, or ``1 / noise_multiplier`` when the
    scores are ``monotone`` (all move in the same direction between
    neighbours, as counts do). Gumbel noise is moreover ``epsilon``-bounded
    range, hence ``epsilon**2 / 8``-zCDP; Laplace and exponential noise give
    ``epsilon**2 / 2``-zCDP.

    Examples
    --------
    >>> NoisyMaxEvent(noise_multiplier=4.0, noise="laplace").epsilon
    0.5
    """

    noise: str = "gumbel"
    monotone: bool = False

    kind = "noisy_max"

    def _dp_event(self, dpa):
        if self.noise == "gumbel":
            return dpa.ZCDpEvent(self.rho)
        return _pure_dp_event(self.epsilon, dpa)

    def __post_init__(self):
        super().__post_init__()
        if self.noise not in NOISY_MAX_NOISE:
            raise PlanError(f"noise must be one of {NOISY_MAX_NOISE}, got {self.noise!r}")

    @property
    def epsilon(self) -> float:
        """Pure-DP epsilon of one selection."""
        return (1.0 if self.monotone else 2.0) * _inverse(self.noise_multiplier)

    @property
    def rho(self) -> float:
        """zCDP parameter of one selection."""
        factor = 8.0 if self.noise == "gumbel" else 2.0
        return self.epsilon**2 / factor


@dataclass(frozen=True, kw_only=True)
class PureDPEvent(Event):
    """Any ``epsilon``-DP mechanism, a fixed cost that calibration does not scale.

    Examples
    --------
    >>> PureDPEvent(epsilon=0.1, count=2).epsilon
    0.1
    """

    epsilon: float

    kind = "pure_dp"

    def _dp_event(self, dpa):
        return _pure_dp_event(self.epsilon, dpa)

    def __post_init__(self):
        super().__post_init__()
        if not self.epsilon >= 0:
            raise PlanError(f"epsilon must be >= 0, got {self.epsilon!r}")


@dataclass(frozen=True, kw_only=True)
class ZCDPEvent(Event):
    """Any ``rho``-zCDP mechanism, a fixed cost that calibration does not scale.

    Examples
    --------
    >>> ZCDPEvent(rho=0.01).rho
    0.01
    """

    rho: float

    kind = "zcdp"

    def _dp_event(self, dpa):
        return dpa.ZCDpEvent(self.rho)

    def __post_init__(self):
        super().__post_init__()
        if not self.rho >= 0:
            raise PlanError(f"rho must be >= 0, got {self.rho!r}")


@dataclass(frozen=True, kw_only=True)
class ThresholdEvent(Event):
    """A fixed ``delta`` per application, the chance that a threshold lets one record through.

    A release that keeps only what passes a threshold on noisy counts (the
    values of a categorical column, say) may keep a value that one record
    alone holds: a value its neighbouring dataset has no count for at all,
    which no amount of noise on the other counts hides. The threshold is set so
    that this happens with probability at most ``delta``; the rest of the
    release is analysed without those values. Each application is therefore
    an ``(0, delta)`` cost, and every accountant accounts a plan holding such
    events by basic composition of approximate DP (``(e1, d1)`` then
    ``(e2, d2)`` is ``(e1 + e2, d1 + d2)``): the plan's other events are
    accounted at ``delta`` minus ``count * delta`` of these, and the epsilon is
    ``inf`` when nothing remains. Calibration never scales it.

    Attributes
    ----------
    delta : float
        In ``[0, 1)``, per application.

    Examples
    --------
    >>> event = ThresholdEvent(delta=5e-7, label="rare values kept")
    >>> event.scalable, event.scaled(2.0) == event
    (False, True)
    >>> event_from_dict(event.to_dict()) == event
    True
    """

    delta: float

    kind = "threshold"

    def __post_init__(self):
        super().__post_init__()
        value = self.delta
        if isinstance(value, bool) or not (isinstance(value, int | float) and 0 <= value < 1):
            raise PlanError(f"delta must be a number in [0, 1), got {value!r}")
        object.__setattr__(self, "delta", float(value))

    def to_dp_event(self):
        """Not available: dp-accounting has no event of a fixed delta.

        dpglm's accountants subtract it from the plan's delta instead (see
        :mod:`dpglm.privacy.accounting`).
        """
        raise NotImplementedError(
            "a threshold event costs a fixed delta, which dp-accounting has no event for: "
            "account the plan's other events at delta minus count * delta of this one"
        )


@dataclass(frozen=True, kw_only=True)
class NonPrivateEvent(Event):
    """A release without any privacy guarantee (``epsilon = inf``).

    Examples
    --------
    >>> NonPrivateEvent(label="non-private fit").kind
    'non_private'
    """

    kind = "non_private"

    def _dp_event(self, dpa):
        return dpa.NonPrivateDpEvent()


@dataclass(frozen=True, kw_only=True)
class RepeatAndSelectEvent(Event):
    """Run a mechanism a random number of times and release only the best run.

    The repeat-and-select algorithm of Papernot and Steinke (2022),
    "Hyperparameter tuning with Renyi differential privacy": draw the number of
    runs ``K`` from a distribution of mean ``mean``, run the base mechanism
    (whose events are ``inner``) ``K`` times independently, and release the one
    output that ranks best (e.g. the model with the highest noisy validation
    score); ``K`` and the other outputs stay secret. The distribution of ``K``
    is dp-accounting's:

    * ``shape = inf``: Poisson of mean ``mean`` (``K = 0`` is possible, and then
      nothing but that fact is released);
    * ``0 <= shape < inf``: the truncated negative binomial of the paper's
      Definition 1, ``P[K = k] ~ (1 - gamma)**k binom(k + shape - 1, k)`` on
      ``k >= 1`` with ``gamma`` set by ``mean`` (``shape = 1``: geometric,
      ``shape = 0``: logarithmic).

    Only the Renyi DP accountant analyses it (Theorems 2 and 6 of the paper, as
    implemented by dp-accounting's ``RepeatAndSelectDpEvent``); every other
    accountant refuses a plan that holds one. ``count`` independent searches
    compose as usual. :meth:`scaled` scales the noise of the inner plan.

    Parameters
    ----------
    inner : PrivacyPlan or sequence of Event
        The events of one run of the base mechanism; a sequence becomes a
        replace-one plan. Its relation must be the enclosing plan's.
    mean : float
        Expected number of runs, at least 1 (finite).
    shape : float, default=inf
        ``inf`` (Poisson) or a number ``>= 0`` (truncated negative binomial).

    Examples
    --------
    >>> base = PrivacyPlan([GaussianEvent(noise_multiplier=5.0, count=10)])
    >>> search = RepeatAndSelectEvent(inner=base, mean=10.0)
    >>> search.distribution, search.scaled(2.0).inner.events[0].noise_multiplier
    ('poisson', 10.0)
    >>> event_from_dict(search.to_dict()) == search
    True
    """

    inner: PrivacyPlan
    mean: float
    shape: float = math.inf
    part: str = "hyperparameter search"

    kind = "repeat_and_select"

    def __post_init__(self):
        super().__post_init__()
        inner = self.inner
        if not isinstance(inner, PrivacyPlan):
            try:
                inner = PrivacyPlan(tuple(inner))
            except TypeError:
                raise PlanError(
                    f"inner must be a PrivacyPlan or a sequence of events, got {inner!r}"
                ) from None
            object.__setattr__(self, "inner", inner)
        if any(isinstance(e, ThresholdEvent) for e in inner.events):
            # its delta is paid by every run that keeps a value, and the number of runs
            # is random: the analysis of the search does not cover it
            raise PlanError(
                "a repeat-and-select search cannot hold a threshold event: its fixed delta "
                "is not analysed through a random number of runs"
            )
        mean, shape = _number_field("mean", self.mean), _number_field("shape", self.shape)
        if not (math.isfinite(mean) and mean >= 1.0):
            raise PlanError(f"mean must be a finite number >= 1, got {self.mean!r}")
        if not shape >= 0.0:
            raise PlanError(f"shape must be a number >= 0 (inf: Poisson), got {self.shape!r}")
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "shape", shape)

    @property
    def distribution(self) -> str:
        """Name of the distribution of the number of runs."""
        if math.isinf(self.shape):
            return "poisson"
        if self.shape == 0.0:
            return "logarithmic"
        if self.shape == 1.0:
            return "geometric"
        return "truncated negative binomial"

    def scaled(self, factor):
        return replace(self, inner=self.inner.scaled(factor))

    @property
    def scalable(self) -> bool:
        return self.inner.scalable

    def to_dict(self) -> dict:
        data = super().to_dict()
        data["inner"] = self.inner.to_dict()
        return data

    @classmethod
    def from_fields(cls, data):
        data = dict(data)
        if isinstance(data.get("inner"), dict):
            data["inner"] = PrivacyPlan.from_dict(data["inner"])
        return cls(**data)

    def _dp_event(self, dpa):
        from dp_accounting import dp_event

        return dp_event.RepeatAndSelectDpEvent(self.inner.to_dp_event(), self.mean, self.shape)


def _number_field(name, value):
    """A float field that JSON may have written as ``"inf"``."""
    if isinstance(value, str) and value in ("inf", "Infinity"):
        return math.inf
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PlanError(f"{name} must be a number, got {value!r}")
    return float(value)


def _inverse(value: float) -> float:
    return math.inf if value == 0 else 1.0 / value


def randomized_response_parameter(epsilon: float) -> float:
    """Noise parameter of binary randomized response with privacy ``epsilon``.

    Binary randomized response dominates every ``epsilon``-DP mechanism
    (Kairouz, Oh and Viswanath 2015), so its privacy loss bounds theirs.

    Examples
    --------
    >>> round(randomized_response_parameter(math.log(3.0)), 6)
    0.5
    """
    return 2.0 / (1.0 + math.exp(epsilon))


def _pure_dp_event(epsilon, dpa):
    return dpa.RandomizedResponseDpEvent(randomized_response_parameter(epsilon), 2)


EVENT_TYPES = {
    cls.kind: cls
    for cls in (
        GaussianEvent,
        SampledGaussianEvent,
        LaplaceEvent,
        NoisyMaxEvent,
        PureDPEvent,
        ZCDPEvent,
        ThresholdEvent,
        NonPrivateEvent,
        RepeatAndSelectEvent,
    )
}


def event_from_dict(data: dict) -> Event:
    """Rebuild an event from :meth:`Event.to_dict`.

    Examples
    --------
    >>> event_from_dict(GaussianEvent(noise_multiplier=1.5).to_dict()).noise_multiplier
    1.5
    """
    data = dict(data)
    kind = data.pop("kind", None)
    try:
        cls = EVENT_TYPES[kind]
    except KeyError:
        raise PlanError(
            f"unknown event kind {kind!r}; expected one of {list(EVENT_TYPES)}"
        ) from None
    names = {f.name for f in fields(cls)}
    unknown = set(data) - names
    if unknown:
        raise PlanError(f"unknown fields {sorted(unknown)} for a {kind!r} event")
    return cls.from_fields(data)


@dataclass(frozen=True)
class PrivacyPlan:
    """The events of one fit and the neighbouring relation they are analysed under.

    Parameters
    ----------
    events : sequence of Event
        What is released, in order.
    neighbouring : {"replace_one", "add_remove"}
        Replace-one: neighbours differ in one record's value (the dataset size
        is public); every dpglm solver plans under it. Add/remove: one record
        is added or removed (nothing released may then depend on the exact
        number of records).

    Raises
    ------
    PlanError
        When the plan's sampling cannot be analysed under ``neighbouring``:
        sampling without replacement needs replace-one neighbours (Poisson
        sampling is analysed under both).
    """

    events: tuple = field(default_factory=tuple)
    neighbouring: str = "replace_one"

    def __post_init__(self):
        object.__setattr__(self, "events", tuple(self.events))
        if self.neighbouring not in NEIGHBOURING:
            raise PlanError(
                f"neighbouring must be one of {NEIGHBOURING}, got {self.neighbouring!r}"
            )
        for event in self.events:
            if not isinstance(event, Event):
                raise PlanError(f"a plan holds Event objects, got {event!r}")
            if (
                isinstance(event, RepeatAndSelectEvent)
                and event.inner.neighbouring != self.neighbouring
            ):
                raise PlanError(
                    f"a repeat-and-select event of a {event.inner.neighbouring} base plan "
                    f"cannot be part of a {self.neighbouring} plan"
                )
            if (
                isinstance(event, SampledGaussianEvent)
                and event.sampling == "without_replacement"
                and self.neighbouring != "replace_one"
            ):
                raise PlanError(
                    "sampling without replacement is analysed for replace_one neighbours only "
                    "(a fixed batch size out of a public number of records); this plan is "
                    f"{self.neighbouring}"
                )

    def scaled(self, factor: float) -> PrivacyPlan:
        """Every noise multiplier times ``factor``; fixed costs are unchanged."""
        return PrivacyPlan(tuple(e.scaled(factor) for e in self.events), self.neighbouring)

    def __add__(self, other: PrivacyPlan) -> PrivacyPlan:
        """Sequential composition of two plans over the same relation."""
        if not isinstance(other, PrivacyPlan):
            return NotImplemented
        if other.neighbouring != self.neighbouring:
            raise PlanError(
                f"cannot compose a {self.neighbouring} plan with a {other.neighbouring} plan"
            )
        return PrivacyPlan(self.events + other.events, self.neighbouring)

    @property
    def scalable(self) -> bool:
        """Whether any event has a noise multiplier that calibration can scale."""
        return any(e.scalable for e in self.events)

    @property
    def parts(self) -> dict:
        """The sub-plans of each ``part``, in order of first appearance."""
        names = dict.fromkeys(e.part for e in self.events)
        return {
            name: PrivacyPlan(tuple(e for e in self.events if e.part == name), self.neighbouring)
            for name in names
        }

    @property
    def releases(self) -> int:
        """Total number of mechanism applications."""
        return sum(e.count for e in self.events)

    def to_dict(self) -> dict:
        """JSON-ready description."""
        return {"neighbouring": self.neighbouring, "events": [e.to_dict() for e in self.events]}

    def to_dp_event(self):
        """The plan as a dp-accounting ``ComposedDpEvent``.

        Noise multipliers are relative to the sensitivity under this plan's
        relation, and pure-DP events become randomized response, whose
        ``REPLACE_ONE`` analysis bounds every ``epsilon``-DP pair under either
        relation (dp-accounting's ``REPLACE_SPECIAL`` analysis of it does not).
        dp-accounting's RDP accountant has no replace-one analysis of Poisson
        sampling; :class:`~dpglm.privacy.accounting.RDPAccountant` supplies
        both curves itself.
        """
        import dp_accounting

        return dp_accounting.ComposedDpEvent([e.to_dp_event() for e in self.events])

    @classmethod
    def from_dict(cls, data: dict) -> PrivacyPlan:
        """Rebuild a plan from :meth:`to_dict`."""
        return cls(tuple(event_from_dict(e) for e in data["events"]), data["neighbouring"])
