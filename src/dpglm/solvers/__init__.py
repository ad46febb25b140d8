"""Solvers: the private optimisers and the non-private reference.

One module per method, each with one public function that takes a
:class:`~dpglm.problem.Problem` and returns a :class:`FitResult`:

* :func:`dpglm.solvers.dp_cd.dp_cd`: private randomized proximal coordinate descent;
* :func:`dpglm.solvers.dp_gcd.dp_gcd`: private greedy (proximal) coordinate descent;
* :func:`dpglm.solvers.dp_scd.dp_scd`: private dual mini-batch coordinate descent (and
  SeqDP-SCD);
* :func:`dpglm.solvers.dp_agd.dp_agd`: DP-AGD, gradient descent with an adaptive
  per-iteration zCDP budget and a private line search;
* :func:`dpglm.solvers.dp_gd.dp_gd`: private gradient descent with a fixed budget split
  (DP-AGD's baseline);
* :func:`dpglm.solvers.dp_fw.dp_fw`: private Frank-Wolfe on the L1 ball;
* :func:`dpglm.solvers.dp_fw.dp_bcfw`: private block-coordinate Frank-Wolfe under
  arbitrary sampling (samplings in :mod:`dpglm.solvers.fw_sampling`);
* :func:`dpglm.solvers.dp_sgd.dp_sgd`: DP-SGD, the baseline;
* :func:`dpglm.solvers.reference.solve_reference`: the certified non-private optimum.

Each private solver turns its hyperparameters into an event plan, has it
calibrated and charged (:mod:`dpglm.privacy.spending`) before it trains, and
runs exactly that plan.

The solver functions, :class:`FitResult` and :class:`History` are also
exported here (``dpglm.solvers.dp_cd`` is the function, not its module); the
solvers are imported on first use, as they bring numba and their kernels.

Examples
--------
>>> import dpglm.solvers
>>> from dpglm.solvers.dp_cd import dp_cd
>>> dpglm.solvers.dp_cd is dp_cd
True
"""

import importlib
import sys
import types

from dpglm.solvers.result import FitResult, History

# solver -> the module that defines it
_SOLVERS = {
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

__all__ = ["FitResult", "History", *_SOLVERS]


def __getattr__(name):
    module = _SOLVERS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_SOLVERS))


class _SolversPackage(types.ModuleType):
    """This package, binding each solver over the submodule of the same name.

    Importing ``dpglm.solvers.dp_cd`` sets the package's attribute ``dp_cd``
    to that module, which would shadow the lazy export depending on what was
    imported first; the solver is bound instead, so the attribute is always the
    function. The module stays reachable as ``sys.modules["dpglm.solvers.dp_cd"]``
    (``importlib.import_module``, ``from dpglm.solvers.dp_cd import ...``).
    """

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and _SOLVERS.get(name) == value.__name__:
            # the submodule has run to its end by now: its solver is defined
            value = getattr(value, name, value)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _SolversPackage
