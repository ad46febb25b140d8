"""One public name for one thing: the top-level and subpackage exports."""

import importlib
import subprocess
import sys

import pytest

import dpglm
import dpglm.privacy
import dpglm.solvers

SOLVERS = {
    "dp_agd": "dpglm.solvers.dp_agd",
    "dp_bcfw": "dpglm.solvers.dp_fw",
    "dp_cd": "dpglm.solvers.dp_cd",
    "dp_fw": "dpglm.solvers.dp_fw",
    "dp_gcd": "dpglm.solvers.dp_gcd",
    "dp_gd": "dpglm.solvers.dp_gd",
    "dp_scd": "dpglm.solvers.dp_scd",
    "dp_sgd": "dpglm.solvers.dp_sgd",
    "solve_reference": "dpglm.solvers.reference",
}


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_solvers_export_their_functions(name):
    module = importlib.import_module(SOLVERS[name])
    assert getattr(dpglm.solvers, name) is getattr(module, name)
    assert callable(getattr(dpglm.solvers, name))
    assert name in dpglm.solvers.__all__ and name in dir(dpglm.solvers)


def test_solvers_export_the_result_types():
    from dpglm.solvers.result import FitResult, History

    assert dpglm.solvers.FitResult is FitResult and dpglm.solvers.History is History
    assert {"FitResult", "History"} <= set(dpglm.solvers.__all__)


@pytest.mark.parametrize("first", ["submodule", "package"])
def test_a_solver_is_the_function_whichever_is_imported_first(first):
    # importing dpglm.solvers.dp_cd binds that module on the package: the export must win
    imports = {
        "submodule": "from dpglm.solvers.dp_cd import dp_cd\nimport dpglm.solvers\n",
        "package": "import dpglm.solvers\nfrom dpglm.solvers.dp_cd import dp_cd\n",
    }[first]
    code = (
        imports + "import sys\n"
        "assert dpglm.solvers.dp_cd is dp_cd, dpglm.solvers.dp_cd\n"
        "from dpglm.solvers import dp_cd as exported\n"
        "assert exported is dp_cd\n"
        "assert sys.modules['dpglm.solvers.dp_cd'].dp_cd is dp_cd\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_importing_the_solvers_package_does_not_import_the_solvers():
    code = (
        "import sys, dpglm.solvers\n"
        "assert 'dpglm.solvers.dp_cd' not in sys.modules\n"
        "assert not any(m.split('.')[0] == 'numba' for m in sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unknown_solver_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'dp_nothing'"):
        dpglm.solvers.dp_nothing  # noqa: B018


def test_compute_epsilon_is_the_privacy_layer_function():
    from dpglm.privacy.accounting import compute_epsilon
    from dpglm.privacy.events import LaplaceEvent, PrivacyPlan

    assert dpglm.privacy.compute_epsilon is compute_epsilon
    assert "compute_epsilon" in dpglm.privacy.__all__
    # a function named epsilon would be shadowed by every epsilon parameter
    assert "epsilon" not in dpglm.privacy.__all__ and not hasattr(dpglm.privacy, "epsilon")
    assert compute_epsilon(PrivacyPlan([LaplaceEvent(noise_multiplier=2.0, count=3)]), 0.0) == 1.5


def test_the_report_records_the_package_version():
    from dpglm.privacy.events import GaussianEvent, PrivacyPlan
    from dpglm.privacy.report import PrivacyReport

    plan = PrivacyPlan([GaussianEvent(noise_multiplier=5.0)])
    assert PrivacyReport.from_plan(plan, delta=1e-6).library_version == dpglm.__version__
