"""Privacy: event plans, noise mechanisms, accountants, calibration, budget and report.

A solver describes what it will release as a :class:`PrivacyPlan`, has
:func:`calibrate` find the least noise that meets the target, charges the plan
to a :class:`PrivacyBudget` before touching the data (all three through
:func:`~dpglm.privacy.spending.spend`), draws its noise through the
:class:`~dpglm.privacy.releases.Release` of each calibrated event (the one
place where a multiplier and a sensitivity become a noise scale), and returns
a :class:`PrivacyReport`. Targets are validated, and budgets split into
shares, in :mod:`dpglm.privacy.targets`.

Examples
--------
>>> from dpglm.privacy import GaussianEvent, PrivacyBudget, PrivacyPlan, calibrate
>>> template = PrivacyPlan([GaussianEvent(noise_multiplier=1.0, count=500)])
>>> result = calibrate(template, epsilon=1.0, delta=1e-6)
>>> _ = PrivacyBudget(epsilon=3.0, delta=1e-6).charge(result.plan, label="fit")
"""

from dpglm.privacy.accounting import (
    ACCOUNTANTS,
    Accounting,
    account,
    compute_epsilon,
    get_accountant,
)
from dpglm.privacy.budget import Charge, PrivacyBudget
from dpglm.privacy.calibration import CalibrationResult, calibrate
from dpglm.privacy.events import (
    GaussianEvent,
    LaplaceEvent,
    NoisyMaxEvent,
    NonPrivateEvent,
    PrivacyPlan,
    PureDPEvent,
    SampledGaussianEvent,
    ZCDPEvent,
)
from dpglm.privacy.leaks import collect_privacy_warnings, warn_privacy_leak
from dpglm.privacy.mechanisms import (
    NoiseSource,
    gaussian_mechanism,
    laplace_mechanism,
    make_noise_source,
    noisy_min,
    report_noisy_max,
)
from dpglm.privacy.releases import Release
from dpglm.privacy.report import MechanismRecord, PrivacyReport
from dpglm.privacy.targets import Share, check_privacy_target

__all__ = [
    "ACCOUNTANTS",
    "Accounting",
    "CalibrationResult",
    "Charge",
    "GaussianEvent",
    "LaplaceEvent",
    "MechanismRecord",
    "NoiseSource",
    "NoisyMaxEvent",
    "NonPrivateEvent",
    "PrivacyBudget",
    "PrivacyPlan",
    "PrivacyReport",
    "PureDPEvent",
    "Release",
    "SampledGaussianEvent",
    "Share",
    "ZCDPEvent",
    "account",
    "calibrate",
    "check_privacy_target",
    "collect_privacy_warnings",
    "compute_epsilon",
    "gaussian_mechanism",
    "get_accountant",
    "laplace_mechanism",
    "make_noise_source",
    "noisy_min",
    "report_noisy_max",
    "warn_privacy_leak",
]
