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

from dpglm._lazy import lazy_exports

#: each public name -> the module of this package that defines it. They are imported on
#: first use: the accountants bring scipy's optimisers and the budget SQLite, which
#: importing one module of the package (or the package top) does not need
_EXPORTS = {
    "ACCOUNTANTS": "accounting",
    "Accounting": "accounting",
    "account": "accounting",
    "compute_epsilon": "accounting",
    "get_accountant": "accounting",
    "Charge": "budget",
    "PrivacyBudget": "budget",
    "CalibrationResult": "calibration",
    "calibrate": "calibration",
    "GaussianEvent": "events",
    "LaplaceEvent": "events",
    "NoisyMaxEvent": "events",
    "NonPrivateEvent": "events",
    "PrivacyPlan": "events",
    "PureDPEvent": "events",
    "SampledGaussianEvent": "events",
    "ZCDPEvent": "events",
    "collect_privacy_warnings": "leaks",
    "warn_privacy_leak": "leaks",
    "NoiseSource": "mechanisms",
    "gaussian_mechanism": "mechanisms",
    "laplace_mechanism": "mechanisms",
    "make_noise_source": "mechanisms",
    "noisy_min": "mechanisms",
    "report_noisy_max": "mechanisms",
    "Release": "releases",
    "MechanismRecord": "report",
    "PrivacyReport": "report",
    "Share": "targets",
    "check_privacy_target": "targets",
}

#: modules reachable as attributes of the package without their own import, as when the
#: package imported them all (the exports' modules and what they import)
_SUBMODULES = frozenset({*_EXPORTS.values(), "rdp_curves"})

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


__getattr__, __dir__ = lazy_exports(
    __name__,
    {name: f"{__name__}.{module}" for name, module in _EXPORTS.items()},
    globals(),
    submodules=_SUBMODULES,
)
