"""Every docstring example of the installed package runs and prints what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import dpglm


def _modules():
    names = [dpglm.__name__]
    for info in pkgutil.walk_packages(dpglm.__path__, prefix="dpglm."):
        names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
