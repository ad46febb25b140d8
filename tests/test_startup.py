"""Start-up: what importing dpglm loads, checked in fresh interpreters.

``import dpglm`` is meant for scripts that only read a version, catch an
exception or open a budget, and the estimators for code that may never fit:
numba (and the kernels it compiles), dp-accounting and the solver modules wait
for the first fit or accounting that needs them. The checks read
``sys.modules`` of a new process, never a clock: what is imported is stable,
how long it takes is not.
"""

import importlib
import json
import subprocess
import sys

import pytest

#: what neither import may load: numba and the kernels, dp-accounting's analyses
DEFERRED = ("numba", "dp_accounting")


def imported_after(statement):
    """The modules a fresh interpreter holds after running ``statement``."""
    code = f"{statement}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def loaded(modules, package):
    """The modules of ``modules`` that are ``package`` or lie inside it."""
    return sorted(m for m in modules if m == package or m.startswith(package + "."))


def test_import_dpglm_loads_no_heavy_dependency():
    modules = imported_after("import dpglm")
    for package in (*DEFERRED, "scipy.optimize", "sklearn", "sqlite3"):
        assert not loaded(modules, package), f"import dpglm imports {package}"
    # the package top holds the version and the exceptions; the rest waits for first use
    top = ["dpglm", "dpglm._lazy", "dpglm._version", "dpglm.exceptions"]
    assert loaded(modules, "dpglm") == top


def test_importing_an_estimator_loads_neither_numba_nor_dp_accounting():
    modules = imported_after("from dpglm import DPLogisticRegression")
    for package in DEFERRED:
        assert not loaded(modules, package), f"importing the estimators imports {package}"
    # the kernels' package is imported (the data access calls through it), none of them
    assert loaded(modules, "dpglm._kernels") == ["dpglm._kernels"]
    # the solvers are found through the registry at the first fit
    solvers = {"dpglm.solvers", "dpglm.solvers.registry", "dpglm.solvers.result"}
    solvers |= {"dpglm.solvers.hyperparameters", "dpglm.solvers.smoothness"}
    assert set(loaded(modules, "dpglm.solvers")) <= solvers
    # the private transformers bring scikit-learn's pipelines: not needed by the estimators
    assert not loaded(modules, "dpglm.preprocessing.transformers")


def test_importing_the_privacy_package_loads_none_of_its_modules():
    modules = imported_after("import dpglm.privacy")
    assert loaded(modules, "dpglm.privacy") == ["dpglm.privacy"]
    assert not loaded(modules, "sqlite3")


@pytest.mark.parametrize(
    "package", ["dpglm", "dpglm.privacy", "dpglm.preprocessing", "dpglm._kernels"]
)
def test_every_exported_name_resolves_on_first_use(package):
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"
        assert name in dir(module)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        module.nothing_here  # noqa: B018


@pytest.mark.parametrize(
    ("exported", "defined"),
    [
        ("dpglm.PrivacyBudget", "dpglm.privacy.budget.PrivacyBudget"),
        ("dpglm.PrivacyReport", "dpglm.privacy.report.PrivacyReport"),
        ("dpglm.privacy.PrivacyBudget", "dpglm.privacy.budget.PrivacyBudget"),
        ("dpglm.privacy.calibrate", "dpglm.privacy.calibration.calibrate"),
        ("dpglm.privacy.Release", "dpglm.privacy.releases.Release"),
        ("dpglm.preprocessing.PrivateClipper", "dpglm.preprocessing.transformers.PrivateClipper"),
        ("dpglm._kernels.clip_value", "dpglm._kernels.elementwise.clip_value"),
        ("dpglm._kernels.sgd_steps_dense", "dpglm._kernels.stochastic.sgd_steps_dense"),
    ],
)
def test_a_lazy_export_is_the_object_its_module_defines(exported, defined):
    def resolve(dotted):
        module, _, name = dotted.rpartition(".")
        return getattr(importlib.import_module(module), name)

    assert resolve(exported) is resolve(defined)


def test_the_privacy_modules_stay_reachable_from_the_package_top():
    # code written when the package top imported dpglm.privacy and its modules eagerly
    # reads them as attributes after a bare import dpglm
    code = (
        "import dpglm\n"
        "account = dpglm.privacy.accounting.account\n"
        "from dpglm.privacy.accounting import account as imported\n"
        "assert account is imported is dpglm.privacy.account\n"
        "assert dpglm.privacy.PrivacyBudget is dpglm.PrivacyBudget\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
