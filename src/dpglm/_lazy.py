"""Names a package exports but imports on first use: its module ``__getattr__`` and ``__dir__``.

A package whose modules bring heavy dependencies (numba for the kernels,
scikit-learn for the estimators, SQLite for the budget) exports their names
without importing them: the first access imports the defining module and
keeps the value in the package's namespace, so the next one is a plain
attribute lookup.

Examples
--------
>>> namespace = {}
>>> getattr_, dir_ = lazy_exports("dpglm", {"DataError": "dpglm.exceptions"}, namespace)
>>> getattr_("DataError").__module__, "DataError" in namespace
('dpglm.exceptions', True)
>>> dir_()
['DataError']
"""

from __future__ import annotations

import importlib


def lazy_exports(package: str, exports: dict, namespace: dict, *, submodules=(), removed=None):
    """The ``__getattr__`` and ``__dir__`` of ``package`` for names imported on first use.

    Parameters
    ----------
    package : str
        The package's name (for messages and its submodules).
    exports : dict
        Each exported name -> the module (absolute name) that defines it.
    namespace : dict
        The package's ``globals()``, where a name is kept once imported.
    submodules : iterable of str
        Submodules reachable as attributes without their own import.
    removed : dict, optional
        A name no longer exported -> what replaced it, for the error.

    Returns
    -------
    (callable, callable)
    """
    submodules = frozenset(submodules)
    removed = dict(removed or {})

    def attribute(name):
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")
        module = exports.get(name)
        if module is None:
            hint = f": use {removed[name]}" if name in removed else ""
            raise AttributeError(f"module {package!r} has no attribute {name!r}{hint}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def names():
        return sorted(set(namespace) | set(exports))

    return attribute, names
