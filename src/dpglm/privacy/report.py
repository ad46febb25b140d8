"""The privacy report: what a fit spent, how, and under which assumptions.

A :class:`PrivacyReport` is built from the plan a solver ran. It states the
total ``(epsilon, delta)``, the neighbouring relation, the accountant, each
mechanism with its count, noise and sensitivity, the epsilon of each part of
the fit on its own (e.g. smoothness estimation vs. training), every assumption
the guarantee rests on and every :class:`~dpglm.exceptions.PrivacyLeakWarning`
raised during the fit. It round-trips through standard JSON (infinite values
are written as the string ``"inf"``).

Examples
--------
>>> from dpglm.privacy.events import GaussianEvent, PrivacyPlan
>>> from dpglm.privacy.report import PrivacyReport
>>> plan = PrivacyPlan(
...     [
...         GaussianEvent(
...             noise_multiplier=30.0, count=50, sensitivity=0.02, label="coordinate gradient"
...         )
...     ]
... )
>>> report = PrivacyReport.from_plan(plan, delta=1e-6, assumptions=["feature bounds public"])
>>> round(report.epsilon, 3), report.accountant, report.guarantee
(0.995, 'gdp', True)
>>> PrivacyReport.from_json(report.to_json()) == report
True
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field

from dpglm._version import __version__
from dpglm.privacy.accounting import account
from dpglm.privacy.events import PrivacyPlan, RepeatAndSelectEvent, SampledGaussianEvent

# re-exported: the fits record their leaks for the report with it
from dpglm.privacy.leaks import collect_privacy_warnings
from dpglm.privacy.mechanisms import noise_scale_of

__all__ = ["MechanismRecord", "PrivacyReport", "collect_privacy_warnings"]

_RELATION_NAMES = {"replace_one": "replace-one", "add_remove": "add/remove"}


@dataclass(frozen=True)
class MechanismRecord:
    """One mechanism of a plan, as the report shows it.

    Attributes
    ----------
    kind : str
        Event kind (``"gaussian"``, ``"noisy_max"``, ...).
    label, part : str
        What it releases and which part of the fit it belongs to.
    count : int
        Number of applications.
    noise_multiplier : float or None
        Noise scale over sensitivity.
    sensitivity : float or None
        Sensitivity under the plan's neighbouring relation, when a single number.
    noise_scale : float or None
        ``noise_multiplier * sensitivity`` (std for Gaussian, scale otherwise).
    details : dict
        Kind-specific facts: noise distribution, sampling, per-use epsilon or rho,
        the fixed ``delta`` of a threshold;
        for a repeat-and-select search, the ``distribution``, ``mean`` and
        ``shape`` of the number of runs and the ``inner`` mechanisms of one run
        (as dictionaries of these same fields).
    """

    kind: str
    label: str
    part: str
    count: int
    noise_multiplier: float | None
    sensitivity: float | None
    noise_scale: float | None
    details: dict = field(default_factory=dict)

    @classmethod
    def from_event(cls, event) -> MechanismRecord:
        """Describe ``event``."""
        multiplier = getattr(event, "noise_multiplier", None)
        scale = None
        if multiplier is not None and event.sensitivity is not None:
            scale = noise_scale_of(multiplier, event.sensitivity)  # as the release draws it
        details = {}
        for name in ("noise", "monotone", "epsilon", "rho", "delta"):
            if hasattr(event, name):
                details[name] = getattr(event, name)
        if isinstance(event, SampledGaussianEvent):
            details["sampling"] = event.sampling
            details["sampling_rate"] = event.rate
            if event.sampling == "without_replacement":
                details["batch_size"] = event.batch_size
                details["dataset_size"] = event.dataset_size
        if isinstance(event, RepeatAndSelectEvent):
            details["distribution"] = event.distribution
            details["mean"] = event.mean
            details["shape"] = event.shape
            details["inner"] = [asdict(cls.from_event(e)) for e in event.inner.events]
        return cls(
            kind=event.kind,
            label=event.label,
            part=event.part,
            count=event.count,
            noise_multiplier=multiplier,
            sensitivity=event.sensitivity,
            noise_scale=scale,
            details=details,
        )


@dataclass(frozen=True)
class PrivacyReport:
    """What a fit spent, how, and under which assumptions.

    Attributes
    ----------
    epsilon, delta : float
        The guarantee of the whole fit (``epsilon = inf``: not private).
    neighbouring : str
        ``"replace_one"`` or ``"add_remove"``.
    accountant : str
        The accountant that gave ``epsilon``.
    mechanisms : tuple of MechanismRecord
    parts : dict
        Epsilon at ``delta`` of each part of the fit on its own.
    epsilon_by_accountant : dict
        Epsilon of the whole plan under each accountant consulted.
    assumptions : tuple of str
        What the guarantee rests on (e.g. "feature bounds supplied by the user").
    warnings : tuple of str
        Every privacy-leak warning raised during the fit.
    execution : str
        How the fit ran when it matters to the reader, e.g. ``"data-parallel on
        8 row chunks across 2 Dask workers"``; empty for a fit in memory.
    secure : bool
        Whether the noise came from a cryptographically secure source.
    library_version : str
        The dpglm version that wrote the report.
    """

    epsilon: float
    delta: float
    neighbouring: str
    accountant: str
    mechanisms: tuple = ()
    parts: dict = field(default_factory=dict)
    epsilon_by_accountant: dict = field(default_factory=dict)
    assumptions: tuple = ()
    warnings: tuple = ()
    execution: str = ""
    secure: bool = False
    library_version: str = __version__

    def __post_init__(self):
        object.__setattr__(self, "mechanisms", tuple(self.mechanisms))
        object.__setattr__(self, "assumptions", tuple(self.assumptions))
        object.__setattr__(self, "warnings", tuple(self.warnings))

    @classmethod
    def from_plan(
        cls,
        plan: PrivacyPlan,
        delta: float,
        *,
        accountant="auto",
        assumptions=(),
        warnings=(),
        secure: bool = False,
    ) -> PrivacyReport:
        """Account ``plan`` and describe it.

        Parameters
        ----------
        plan : PrivacyPlan
            The plan the solver ran.
        delta : float
        accountant : str, default="auto"
        assumptions, warnings : sequence of str
            Assumptions of the guarantee; privacy-leak warnings raised.
        secure : bool, default=False
        """
        total = account(plan, delta, accountant)
        parts = {name: account(sub, delta, accountant).epsilon for name, sub in plan.parts.items()}
        return cls(
            epsilon=total.epsilon,
            delta=delta,
            neighbouring=plan.neighbouring,
            accountant=total.accountant,
            mechanisms=tuple(MechanismRecord.from_event(e) for e in plan.events),
            parts=parts,
            epsilon_by_accountant=dict(total.by_accountant),
            assumptions=tuple(assumptions),
            warnings=tuple(warnings),
            secure=secure,
        )

    @property
    def non_private(self) -> bool:
        """Whether the fit released anything without privacy (``epsilon = inf``)."""
        return math.isinf(self.epsilon)

    @property
    def guarantee(self) -> bool:
        """Whether the stated ``(epsilon, delta)`` holds: private, and nothing leaked."""
        return not self.non_private and not self.warnings

    # -- serialisation ------------------------------------------------------------------

    def to_dict(self) -> dict:
        """JSON-ready dictionary (infinite values as the string ``"inf"``)."""
        return _encode(asdict(self))

    @classmethod
    def from_dict(cls, data: dict) -> PrivacyReport:
        """Rebuild a report from :meth:`to_dict`."""
        data = _decode(dict(data))
        data["mechanisms"] = tuple(MechanismRecord(**m) for m in data.get("mechanisms", ()))
        return cls(**data)

    def to_json(self, **kwargs) -> str:
        """Standard JSON text of the report."""
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    @classmethod
    def from_json(cls, text: str) -> PrivacyReport:
        """Rebuild a report from :meth:`to_json`."""
        return cls.from_dict(json.loads(text))

    def __str__(self) -> str:
        if self.non_private:
            head = "NOT PRIVATE: this fit has no differential-privacy guarantee (epsilon = inf)"
        else:
            head = (
                f"({self.epsilon:.4g}, {self.delta:.3g})-differentially private "
                f"for {_RELATION_NAMES[self.neighbouring]} neighbours "
                f"({self.accountant} accountant)"
            )
            if self.warnings:
                head += "\nWARNING: the guarantee does NOT hold: data were used without privacy"
        lines = [head]
        if len(self.parts) > 1:
            lines.append("budget by part (each on its own):")
            lines += [f"  {name}: epsilon {eps:.4g}" for name, eps in self.parts.items()]
        if self.mechanisms:
            lines.append("mechanisms:")
            for m in self.mechanisms:
                noise = ""
                if m.noise_multiplier is not None:
                    noise = f", noise multiplier {m.noise_multiplier:.4g}"
                if m.noise_scale is not None:
                    noise += f" (scale {m.noise_scale:.4g}, sensitivity {m.sensitivity:.4g})"
                lines += _mechanism_lines(m, "  ")
        if self.assumptions:
            lines.append("assumptions:")
            lines += [f"  - {a}" for a in self.assumptions]
        if self.warnings:
            lines.append("privacy leaks:")
            lines += [f"  - {w}" for w in self.warnings]
        if self.execution:
            lines.append(f"ran {self.execution}")
        if self.secure:
            lines.append("noise drawn from a cryptographically secure source")
        return "\n".join(lines)


def _mechanism_lines(m, indent):
    if isinstance(m, dict):
        m = MechanismRecord(**m)
    noise = ""
    if m.noise_multiplier is not None:
        noise = f", noise multiplier {m.noise_multiplier:.4g}"
    if m.noise_scale is not None:
        noise += f" (scale {m.noise_scale:.4g}, sensitivity {m.sensitivity:.4g})"
    extra = ", ".join(f"{k} {v}" for k, v in m.details.items() if k not in ("rho", "inner"))
    lines = [
        f"{indent}{m.count} x {m.kind}{' [' + m.label + ']' if m.label else ''}"
        f"{noise}{'; ' + extra if extra else ''}"
    ]
    if "inner" in m.details:
        lines.append(f"{indent}  each run, of which only the best is released:")
        for inner in m.details["inner"]:
            lines += _mechanism_lines(inner, indent + "    ")
    return lines


def _encode(value):
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else ("-inf" if value < 0 else "nan")
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    return value


def _number(value):
    """A numeric field read back from JSON: ``"inf"`` and friends become floats."""
    if isinstance(value, str):
        if value not in ("inf", "-inf", "nan"):
            raise ValueError(f"expected a number, got {value!r}")
        return float(value)
    return value


_NUMERIC_DETAILS = ("epsilon", "rho", "delta", "sampling_rate", "mean", "shape")


def _decode(data):
    """Undo :func:`_encode` on the numeric fields only (a label "inf" stays a string)."""
    for key in ("epsilon", "delta"):
        data[key] = _number(data[key])
    for key in ("parts", "epsilon_by_accountant"):
        data[key] = {k: _number(v) for k, v in data.get(key, {}).items()}
    data["mechanisms"] = [_decode_mechanism(m) for m in data.get("mechanisms", ())]
    return data


def _decode_mechanism(m):
    m = dict(m)
    for key in ("noise_multiplier", "sensitivity", "noise_scale"):
        m[key] = None if m[key] is None else _number(m[key])
    details = {k: _number(v) if k in _NUMERIC_DETAILS else v for k, v in m["details"].items()}
    if "inner" in details:
        details["inner"] = [_decode_mechanism(inner) for inner in details["inner"]]
    m["details"] = details
    return m


def neighbouring_assumptions(neighbouring: str) -> tuple:
    """The assumption behind each neighbouring relation, for the report."""
    if neighbouring == "replace_one":
        return (
            "replace-one neighbours: datasets differ in one record's values, the number of "
            "records n is public",
        )
    return ("add/remove neighbours: datasets differ by one record added or removed",)
