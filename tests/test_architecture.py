"""Architecture rules: what each module of dpglm may import, and how public names read.

Every rule reads the source (``ast``), so it also sees the imports made
inside functions, which a check of ``sys.modules`` would miss.
"""

import ast
import importlib
import re
import sys
from pathlib import Path

import pytest

import dpglm

PACKAGE = Path(dpglm.__file__).parent


def _module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules():
    """``(module name, path, syntax tree)`` of every module of the package."""
    for path in sorted(PACKAGE.rglob("*.py")):
        yield _module_name(path), path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def _is_dpglm_module(name):
    """Whether ``name`` (e.g. ``dpglm._version``) is a module or package of dpglm."""
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imported(module, path, tree):
    """``(what, line)`` for every import of ``tree``, as dotted names.

    ``from a import b`` gives ``a.b`` when ``b`` is a module of dpglm (it
    imports that module), else ``a`` (it reads a name of ``a``).
    """
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                full = f"{base}.{alias.name}"
                yield (full if _is_dpglm_module(full) else base), node.lineno
        elif isinstance(node, ast.Call):
            name = _dynamic_import(node)
            if name is not None:
                yield name, node.lineno


def _dynamic_import(node):
    """The module an ``importlib.import_module`` call names, when its source spells it.

    A literal name, or the package of an f-string's literal start
    (``f"dpglm.solvers.{name}"`` imports a module of ``dpglm.solvers``); else None.
    """
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if called != "import_module" or not node.args:
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values:
        start = arg.values[0]
        if isinstance(start, ast.Constant) and isinstance(start.value, str):
            return start.value.rpartition(".")[0] or None
    return None


def _private(part):
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _dotted(node):
    """``a.b.c`` for an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def test_no_private_scikit_learn_name_is_imported():
    # scikit-learn changes its private names without a deprecation cycle
    found = []
    for module, _, tree in _modules():
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Attribute):
                names = [_dotted(node) or ""]
            for name in names:
                parts = name.split(".")
                if parts[0] == "sklearn" and any(_private(part) for part in parts[1:]):
                    found.append(f"{module}:{node.lineno}: {name}")
    assert not found, "private scikit-learn names:\n" + "\n".join(sorted(set(found)))


def _within(name, package):
    return name == package or name.startswith(package + ".")


def _upward_imports(layer, above):
    """Imports, in ``layer``, of the package top (``dpglm`` itself) or of ``above``.

    The package top re-exports from every layer, so importing from it runs
    upward whatever the name.
    """
    found = []
    for module, path, tree in _modules():
        if _within(module, layer):
            for name, line in _imported(module, path, tree):
                if name == "dpglm" or any(_within(name, top) for top in above):
                    found.append(f"{module}:{line}: {name}")
    return found


#: the layers above the solvers, each importing from the ones before it
ABOVE_SOLVERS = ("dpglm.distributed", "dpglm.estimators", "dpglm.tuning", "dpglm.cli")


def test_privacy_imports_nothing_from_a_layer_above():
    found = _upward_imports("dpglm.privacy", ("dpglm.solvers", *ABOVE_SOLVERS))
    assert not found, "upward imports from dpglm.privacy:\n" + "\n".join(found)


def test_solvers_import_nothing_from_a_layer_above():
    found = _upward_imports("dpglm.solvers", ABOVE_SOLVERS)
    assert not found, "upward imports from dpglm.solvers:\n" + "\n".join(found)


def test_nothing_imports_the_cli():
    found = []
    for module, path, tree in _modules():
        if _within(module, "dpglm.cli") or module == "dpglm.__main__":
            continue
        for name, line in _imported(module, path, tree):
            if _within(name, "dpglm.cli"):
                found.append(f"{module}:{line}: {name}")
    assert not found, "imports of the command line:\n" + "\n".join(found)


# --- the layers: what each module may import, by rank ------------------------------------

#: every module's layer and its rank (docs/architecture.md shows this table, and a test
#: keeps the two equal): a module may import modules of its own rank or a lower one, and
#: of its own rank only within its own entry. A module belongs to the longest entry that
#: contains it; ``dpglm`` is the package top alone, which re-exports from every layer
RANKS = {
    "dpglm.exceptions": 0,
    "dpglm._version": 0,
    "dpglm._lazy": 0,
    "dpglm.datafits": 0,
    "dpglm.penalties": 0,
    "dpglm.data": 1,
    "dpglm._kernels": 1,
    "dpglm.privacy": 1,
    "dpglm.plotting": 1,
    "dpglm.clipping": 2,
    "dpglm.audit": 2,
    "dpglm.preprocessing": 2,
    "dpglm.access": 3,
    "dpglm.problem": 4,
    "dpglm.solvers": 5,
    "dpglm.distributed": 6,
    "dpglm.estimators": 7,
    "dpglm.tuning": 8,
    "dpglm.cli": 10,
    "dpglm.__main__": 10,
    "dpglm": 10,
}

#: imports of a module of the same rank in another entry that are allowed, by (importing
#: module, imported module), and why; an upward import is never allowed
SAME_RANK_ALLOWED = {
    ("dpglm.__main__", "dpglm.cli"): "`python -m dpglm` is the dpglm command: it runs its main",
}


def _layer(name):
    """The entry of :data:`RANKS` that module ``name`` belongs to, or None."""
    entries = [
        entry for entry in RANKS if name == entry or (entry != "dpglm" and _within(name, entry))
    ]
    return max(entries, key=len, default=None)


def _layering_breaches(modules):
    """``(module, imported, line, why)`` for every import of a dpglm module that breaks the
    layering: of a higher rank, of the same rank in another entry, or of no entry."""
    found = []
    for module, path, tree in modules:
        layer = _layer(module)
        for name, line in _imported(module, path, tree):
            if not _within(name, "dpglm"):
                continue
            target = _layer(name)
            if layer is None or target is None:
                why = f"no rank for {module if layer is None else name}"
            elif RANKS[target] > RANKS[layer]:
                why = f"rank {RANKS[target]} ({target}) above rank {RANKS[layer]} ({layer})"
            elif RANKS[target] == RANKS[layer] and target != layer:
                why = f"same rank {RANKS[layer]}, another entry ({target}, not {layer})"
            else:
                continue
            found.append((module, name, line, why))
    return found


def _layering_violations(modules):
    """The breaches of the layering that :data:`SAME_RANK_ALLOWED` does not allow."""
    return [
        f"{module}:{line}: imports {name}: {why}"
        for module, name, line, why in _layering_breaches(modules)
        if not (why.startswith("same rank") and (module, name) in SAME_RANK_ALLOWED)
    ]


def test_every_module_has_a_rank():
    # a new top-level module or package takes its place in the table (and in
    # docs/architecture.md) before anything may import it
    missing = [module for module, _, _ in _modules() if _layer(module) is None]
    assert not missing, "modules without a rank in RANKS:\n" + "\n".join(missing)


def test_no_module_imports_above_its_rank():
    # the layers of docs/architecture.md: lazy imports (inside functions, or through
    # importlib.import_module) count, since they run as surely as the others
    found = _layering_violations(_modules())
    assert not found, "imports that break the layering:\n" + "\n".join(found)


def test_the_layering_allow_list_holds_current_imports_only():
    # an allowed breach that has been fixed leaves the list, so that it only shrinks
    current = {(module, name) for module, name, _, _ in _layering_breaches(_modules())}
    stale = [
        f"{module} -> {name}"
        for module, name in SAME_RANK_ALLOWED
        if (module, name) not in current
    ]
    assert not stale, "allowed imports that no longer occur:\n" + "\n".join(stale)


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("dpglm.privacy.fake", "from dpglm.solvers import dp_cd", True),
        (
            "dpglm.privacy.fake",
            "def f():\n    from dpglm.solvers.registry import get_solver",
            True,
        ),
        ("dpglm.privacy.fake", "import importlib\nimportlib.import_module('dpglm.tuning')", True),
        (
            "dpglm.privacy.fake",
            "import importlib\nimportlib.import_module(f'dpglm.cli.{x}')",
            True,
        ),
        ("dpglm.solvers.fake", "def f():\n    from dpglm.distributed import ShardedProblem", True),
        ("dpglm.solvers.fake", "from ..estimators import dispatch", True),
        ("dpglm.data.fake", "from dpglm import __version__", True),
        ("dpglm.data.fake", "from .. import privacy", True),
        ("dpglm.audit", "from dpglm.clipping import clip_terms", True),
        ("dpglm.access.fake", "import dpglm.problem", True),
        ("dpglm.fake", "from dpglm.data import load", True),
        ("dpglm.solvers.fake", "from ..privacy import spending", False),
        ("dpglm.solvers.fake", "from . import registry\nfrom .dp_sgd import prepare", False),
        (
            "dpglm.solvers.fake",
            "import importlib\nimportlib.import_module(f'dpglm.solvers.{x}')",
            False,
        ),
        (
            "dpglm.problem",
            "from dpglm import _kernels\nfrom dpglm.access.sums import row_norms",
            False,
        ),
        ("dpglm.cli.fake", "from dpglm.tuning import PrivateSearchCV\nimport numpy", False),
        ("dpglm.__main__", "from dpglm.cli import main", False),
    ],
)
def test_the_layering_rule_sees_every_form(module, source, expected):
    # the rule passes on the tree; this checks that it would notice a breach
    parts = module.split(".")
    path = PACKAGE.joinpath(*parts[1:-1], parts[-1] + ".py")
    found = _layering_violations([(module, path, ast.parse(source))])
    assert bool(found) == expected, found


# --- docs/architecture.md: the plan names what exists, and shows the checked ranks -------

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _doc_ranks():
    """The table of ranks of docs/architecture.md, as ``{module: rank}``."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    ranks = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0].isdigit():
            for name in re.findall(r"`([^`]+)`", cells[1]):
                assert name not in ranks, f"{name} has two ranks in {ARCHITECTURE.name}"
                ranks[name] = int(cells[0])
    return ranks


def _names_an_object(dotted):
    """Whether ``dotted`` is a module of dpglm, or an attribute chain on one."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        module = ".".join(parts[:end])
        if _is_dpglm_module(module):
            value = importlib.import_module(module)
            for attribute in parts[end:]:
                if not hasattr(value, attribute):
                    return False
                value = getattr(value, attribute)
            return True
    return False


def test_the_architecture_document_shows_the_checked_ranks():
    # the table the reader follows is the table the layering test enforces
    assert _doc_ranks() == RANKS


def test_the_architecture_document_names_only_what_exists():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    dotted = set(re.findall(r"(?<![\w.])dpglm(?:\.\w+)+", text))
    missing = sorted(name for name in dotted if not _names_an_object(name))
    paths = {
        path.rstrip(".")
        for path in re.findall(r"(?<![\w/])(?:src|tests|benchmarks|docs)/[\w/.<>-]+", text)
        if "<" not in path  # a pattern such as tests/test_dp_<name>.py
    }
    missing += sorted(path for path in paths if not (ROOT / path).exists())
    assert dotted and paths  # the patterns find the names
    assert not missing, f"named in {ARCHITECTURE.name} but missing:\n" + "\n".join(missing)


def _is_public_module(module):
    return not any(_private(part) for part in module.split("."))


def _parameter_names():
    """Parameter names of the public API: of public functions, methods and classes."""
    names = {}

    def visit(node, module, public):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                if public and (not _private(child.name) or child.name == "__init__"):
                    args = child.args
                    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                        names.setdefault(arg.arg, f"{module}.{child.name}")
            elif isinstance(child, ast.ClassDef):
                class_public = public and not _private(child.name)
                if class_public:  # dataclass fields are constructor parameters
                    for statement in child.body:
                        if isinstance(statement, ast.AnnAssign) and isinstance(
                            statement.target, ast.Name
                        ):
                            names.setdefault(statement.target.id, f"{module}.{child.name}")
                visit(child, module, class_public)

    for module, _, tree in _modules():
        if _is_public_module(module):
            visit(tree, module, True)
    names.pop("self", None)
    names.pop("cls", None)
    # the slots of a registered solver: each solver module defines functions of these
    # names on purpose, and the registry's Solver holds them under the same names
    for slot in REGISTRY_SLOTS:
        names.pop(slot, None)
    return names


#: what every solver module declares for the registry (dpglm.solvers.registry.Solver)
REGISTRY_SLOTS = ("fit", "prepare", "check")


def test_no_public_function_is_named_like_a_parameter():
    # a function named like a parameter (privacy.epsilon vs epsilon=...) is shadowed by
    # that parameter wherever both meet, and reads as a value rather than an action
    parameters = _parameter_names()
    found = []
    for module, _, tree in _modules():
        if not _is_public_module(module):
            continue
        for node in tree.body:
            is_function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            if is_function and not _private(node.name) and node.name in parameters:
                found.append(f"{module}.{node.name} (a parameter of {parameters[node.name]})")
    assert not found, "public functions named like parameters:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from sklearn.utils import _safe_indexing", True),
        ("import sklearn.utils._indexing", True),
        ("import sklearn\nsklearn.utils._safe_indexing", True),
        ("from sklearn.utils.validation import check_is_fitted", False),
        ("import sklearn\nsklearn.__version__", False),
    ],
)
def test_the_private_name_rule_sees_every_form(monkeypatch, source, expected):
    # the rule passes on a clean tree; this checks that it would notice a breach
    fake = [("dpglm.fake", PACKAGE / "fake.py", ast.parse(source))]
    monkeypatch.setattr(sys.modules[__name__], "_modules", lambda: iter(fake))
    if expected:
        with pytest.raises(AssertionError, match="private scikit-learn"):
            test_no_private_scikit_learn_name_is_imported()
    else:
        test_no_private_scikit_learn_name_is_imported()


# --- the data-access seam: a solver asks its problem, never where the records are -------------


def _where_data_is_asked(modules):
    """In the solvers: reads of ``.sharded`` (or ``getattr(..., "sharded")``) and imports
    of :mod:`dpglm.distributed`."""
    found = []
    for module, path, tree in modules:
        if not _within(module, "dpglm.solvers"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "sharded":
                found.append(f"{module}:{node.lineno}: reads .sharded")
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value == "sharded"
            ):
                found.append(f"{module}:{node.lineno}: {node.func.id}(..., 'sharded')")
        for name, line in _imported(module, path, tree):
            if _within(name, "dpglm.distributed"):
                found.append(f"{module}:{line}: imports {name}")
    return found


def _private_names_from_outside(modules):
    """In :mod:`dpglm.distributed`: private names of modules outside it, imported or read.

    A private module of the package (``dpglm._kernels``) is a layer of its own and may
    be imported; a private name defined in a module may not, whether imported
    (``from dpglm.solvers.dp_fw import _Blocks``) or read on the module
    (``dp_fw._Blocks``).
    """
    found = []
    for module, path, tree in modules:
        if not _within(module, "dpglm.distributed"):
            continue
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        bound = {}  # local name -> the module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        root = alias.name.partition(".")[0]
                        bound[root] = root
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{anchor}.{base}" if base else anchor
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if _is_dpglm_module(full):
                        bound[alias.asname or alias.name] = full
                    elif _private(alias.name) and not _within(base, "dpglm.distributed"):
                        found.append(f"{module}:{node.lineno}: imports {full}")
        for node in ast.walk(tree):
            chain = _dotted(node) if isinstance(node, ast.Attribute) else None
            if chain is None or not _private(node.attr):
                continue
            root, _, rest = chain.partition(".")
            if root not in bound:
                continue  # an attribute of an object, not a module's name
            full = f"{bound[root]}.{rest}"
            owner = full.rpartition(".")[0]
            if (
                _is_dpglm_module(owner)
                and not _is_dpglm_module(full)
                and not _within(owner, "dpglm.distributed")
            ):
                found.append(f"{module}:{node.lineno}: reads {full}")
    return found


def test_no_solver_asks_where_its_data_is():
    # the solvers reach their data through dpglm.access.DataAccess, which in-memory and
    # sharded problems both implement: a branch on the storage would bring back two copies
    # of every data side, one of them untested by the in-memory suite
    found = _where_data_is_asked(_modules())
    assert not found, "solvers asking where their data is:\n" + "\n".join(found)


def test_data_access_imports_nothing_from_a_layer_above():
    # dpglm.access lies below the problem and the solvers: both build on it, and a sharded
    # problem runs its code on every chunk
    found = _upward_imports("dpglm.access", ("dpglm.problem", "dpglm.solvers", *ABOVE_SOLVERS))
    assert not found, "upward imports from dpglm.access:\n" + "\n".join(found)


def test_distributed_uses_no_private_name_from_outside():
    # the data-parallel and vertical code build on public names (dpglm.access, the solvers'
    # functions): a private name of another layer may change under them without notice
    found = _private_names_from_outside(_modules())
    assert not found, "private names read by dpglm.distributed:\n" + "\n".join(found)


def test_problems_implement_every_data_access_operation():
    # a ShardedProblem that inherited an operation would run Problem's in-memory code,
    # which reads X and raises: each operation is implemented by both, on their own
    from dpglm.access import DataAccess
    from dpglm.distributed import ShardedProblem
    from dpglm.problem import Problem

    operations = [
        name
        for name, value in vars(DataAccess).items()
        if callable(value) and not name.startswith("_")
    ]
    assert operations  # the protocol lists them
    for cls in (Problem, ShardedProblem):
        missing = [name for name in operations if name not in vars(cls)]
        assert not missing, f"{cls.__name__} does not implement {missing}"


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("dpglm.solvers.fake", "if problem.sharded:\n    pass", True),
        ("dpglm.solvers.fake", "getattr(problem, 'sharded', False)", True),
        ("dpglm.solvers.fake", "from dpglm.distributed import ShardedProblem", True),
        ("dpglm.solvers.fake", "import dpglm.distributed.sharded", True),
        ("dpglm.solvers.fake", "from ..distributed import data_parallel", True),
        ("dpglm.solvers.fake", "problem.gradient_sums(1.0)", False),
        ("dpglm.distributed.fake", "from dpglm.solvers.dp_fw import _Blocks", True),
        ("dpglm.distributed.fake", "from ..solvers.dp_gcd import _ClippedGradient", True),
        ("dpglm.distributed.fake", "from dpglm._kernels.stochastic import _prox", True),
        ("dpglm.distributed.fake", "from dpglm.solvers import dp_fw\ndp_fw._Blocks", True),
        ("dpglm.distributed.fake", "import dpglm.solvers.dp_fw as f\nf._check_radius", True),
        ("dpglm.distributed.fake", "import dpglm.solvers.dp_fw\ndpglm.solvers.dp_fw._x", True),
        ("dpglm.distributed.fake", "import dpglm.distributed.sharded as s\ns._spill_root", False),
        ("dpglm.distributed.fake", "blocks = make()\nblocks._add_block", False),
        ("dpglm.distributed.fake", "from dpglm import _kernels\n_kernels.derivatives", False),
        ("dpglm.distributed.fake", "from dpglm.access.blocks import MarginBlocks", False),
        ("dpglm.distributed.fake", "from dpglm.distributed.sharded import _spill_root", False),
        ("dpglm.distributed.fake", "from .sharded import _spill_root", False),
    ],
)
def test_the_data_access_rules_see_every_form(module, source, expected):
    # the rules pass on a clean tree; this checks that they would notice a breach
    fake = [(module, PACKAGE / module.split(".")[1] / "fake.py", ast.parse(source))]
    found = _where_data_is_asked(fake) + _private_names_from_outside(fake)
    assert bool(found) == expected, found


# --- privacy spending: noise is drawn and scaled in dpglm.privacy only ------------------------

#: methods that draw noise, of a NoiseSource or of a numpy Generator
NOISE_DRAWS = ("standard_normal", "normal", "laplace", "gumbel", "exponential")
#: the mechanisms of dpglm.privacy.mechanisms, and its noise-scale arithmetic
MECHANISMS = (
    "gaussian_mechanism",
    "laplace_mechanism",
    "report_noisy_max",
    "noisy_min",
    "noise_scale_of",
    "add_gaussian",
    "add_laplace",
    "noisy_argmax",
)
#: what a noise multiplier is called: only a Release multiplies it by a sensitivity
MULTIPLIERS = ("noise_multiplier", "multiplier")
#: draws outside dpglm.privacy that are allowed, by (module, function), and why. The
#: audit harness (dpglm.audit) needs no entry: it samples mechanisms in its docstring
#: examples only, its code reads the samples its caller draws
NOISE_ALLOWED = {
    ("dpglm.data.synthetic", "make_synthetic"): "synthetic datasets: the data, not noise",
    ("dpglm.distributed.protocol", "SketchSpec.gaussian"): "the public sketch J (public seed)",
    ("dpglm._kernels.dual_coordinate", "_standard_normal"): (
        "DP-SCD's kernel draws unit noise from its Release's Generator (Release.generator) "
        "and scales it by Release.scale"
    ),
}


def _scoped(tree):
    """Every node of ``tree``, with the qualified name of the function or class it lies in."""
    stack = [(tree, "")]
    while stack:
        node, scope = stack.pop()
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = f"{scope}.{child.name}" if scope else child.name
            yield child, inner
            stack.append((child, inner))


def _noise_allowed(module, scope):
    return any(
        module == allowed and (scope == function or scope.startswith(function + "."))
        for allowed, function in NOISE_ALLOWED
    )


def _names_multiplier(node):
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
    return name in MULTIPLIERS


def _noise_outside_privacy(modules):
    """Outside :mod:`dpglm.privacy`: noise draws, mechanism imports and calls, and products
    of a noise multiplier."""
    found = []
    for module, path, tree in modules:
        if _within(module, "dpglm.privacy"):
            continue
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        privacy = {}  # local name -> the privacy module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and _within(alias.name, "dpglm.privacy"):
                        privacy[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{anchor}.{base}" if base else anchor
                if not _within(base, "dpglm.privacy"):
                    continue
                for alias in node.names:
                    if alias.name in MECHANISMS:
                        found.append(f"{module}:{node.lineno}: imports {base}.{alias.name}")
                    elif _is_dpglm_module(f"{base}.{alias.name}"):
                        privacy[alias.asname or alias.name] = f"{base}.{alias.name}"
        for node, scope in _scoped(tree):
            where = f"{module}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Name) and func.id in (*NOISE_DRAWS, *MECHANISMS):
                    found.append(f"{where}: calls {func.id}")
                elif isinstance(func, ast.Attribute) and func.attr in NOISE_DRAWS:
                    if not _noise_allowed(module, scope):
                        found.append(f"{where}: draws noise with {ast.unparse(func)}")
                elif isinstance(func, ast.Attribute) and func.attr in MECHANISMS:
                    # a Release's own noisy_min is allowed: only a module's mechanism is not
                    receiver = _dotted(func.value) or ""
                    root, _, rest = receiver.partition(".")
                    target = f"{privacy[root]}.{rest}".rstrip(".") if root in privacy else receiver
                    if _within(target, "dpglm.privacy"):
                        found.append(f"{where}: calls {receiver}.{func.attr}")
            elif (
                isinstance(node, ast.BinOp)
                and isinstance(node.op, ast.Mult)
                and (_names_multiplier(node.left) or _names_multiplier(node.right))
            ) or (
                isinstance(node, ast.AugAssign)
                and isinstance(node.op, ast.Mult)
                and (_names_multiplier(node.target) or _names_multiplier(node.value))
            ):
                found.append(f"{where}: multiplies a noise multiplier: {ast.unparse(node)}")
    return found


def test_noise_is_drawn_and_scaled_in_the_privacy_layer_only():
    # a wrong noise scale is the worst bug dpglm can have: every draw goes through a
    # dpglm.privacy.releases.Release, which alone turns a calibrated event and a sensitivity
    # into a scale, so that an audit covers it and each solver's plan, nothing more
    found = _noise_outside_privacy(_modules())
    assert not found, "noise drawn or scaled outside dpglm.privacy:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("dpglm.solvers.fake", "source.standard_normal(3)", True),
        ("dpglm.solvers.fake", "self.source.gumbel(1.0, (2, 3))", True),
        ("dpglm.solvers.fake", "rng.laplace(0.0, 1.0, 5)", True),
        ("dpglm.solvers.fake", "np.random.default_rng(0).normal(size=3)", True),
        ("dpglm.solvers.fake", "source.exponential(2.0)", True),
        ("dpglm.solvers.fake", "from numpy.random import laplace\nlaplace(size=3)", True),
        ("dpglm.solvers.fake", "from dpglm.privacy.mechanisms import gaussian_mechanism", True),
        ("dpglm.solvers.fake", "from dpglm.privacy import noisy_min", True),
        ("dpglm.solvers.fake", "from ..privacy.mechanisms import noise_scale_of", True),
        ("dpglm.solvers.fake", "from dpglm.privacy import mechanisms as m\nm.noisy_min(v)", True),
        ("dpglm.solvers.fake", "import dpglm.privacy.mechanisms as m\nm.noise_scale_of(z)", True),
        ("dpglm.solvers.fake", "import dpglm.privacy\ndpglm.privacy.laplace_mechanism(v)", True),
        ("dpglm.tuning", "scale = event.noise_multiplier * sensitivity", True),
        ("dpglm.solvers.fake", "std = multiplier * 2.0 * clip / n", True),
        ("dpglm.solvers.fake", "std = 2.0 * release.multiplier", True),
        ("dpglm.solvers.fake", "scale = 2.0\nscale *= multiplier", True),
        (
            "dpglm.distributed.protocol",
            "class Party:\n    def step(self):\n        source.gumbel(1.0)",
            True,
        ),
        ("dpglm.solvers.fake", "release.noisy_min(values)", False),
        ("dpglm.solvers.fake", "training.scale(2.0, clip, over=n)", False),
        ("dpglm.solvers.fake", "noise = release.unit(k) * noise_std[order]", False),
        ("dpglm.solvers.fake", "source.uniform(3)\nsource.integers(5)\nrng.permutation(4)", False),
        ("dpglm.solvers.fake", "rng.choice(3, size=2, replace=False)", False),
        ("dpglm.solvers.fake", "from dpglm.privacy.releases import Release", False),
        ("dpglm.privacy.fake", "source.laplace(1.0, 3)", False),
        ("dpglm.privacy.fake", "scale = noise_multiplier * sensitivity", False),
        (
            "dpglm.distributed.protocol",
            "class SketchSpec:\n    def gaussian(self):\n        rng.standard_normal(3)",
            False,
        ),
    ],
)
def test_the_noise_rule_sees_every_form(module, source, expected):
    # the rule passes on a clean tree; this checks that it would notice a breach
    parts = module.split(".")
    path = PACKAGE.joinpath(*parts[1:-1], parts[-1] + ".py")
    found = _noise_outside_privacy([(module, path, ast.parse(source))])
    assert bool(found) == expected, found


@pytest.mark.parametrize("word", ["/tmp", "/work", "/home", "TODO", "FIXME", "XXX"])
def test_the_architecture_document_speaks_of_the_project_only(word):
    assert word not in ARCHITECTURE.read_text(encoding="utf-8")


# --- modules speak to each other through public names -----------------------------------------


def _private_names_imported(modules):
    """``from dpglm.x import _name``, ``_name`` not a module: another module's internals."""
    found = []
    for module, path, tree in modules:
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            if not _within(base, "dpglm"):
                continue
            for alias in node.names:
                name = alias.name
                private = name.startswith("_") and not name.startswith("__")
                if private and not _is_dpglm_module(f"{base}.{name}"):
                    found.append(f"{module}:{node.lineno}: imports {base}.{name}")
    return found


def test_no_module_imports_another_modules_private_names():
    # an underscore name is its module's business: a name two modules need is public in one
    found = _private_names_imported(_modules())
    assert not found, "private names imported from other modules:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("dpglm.solvers.fake", "from dpglm.solvers.dp_sgd import _train", True),
        ("dpglm.solvers.fake", "from .dp_sgd import _train", True),
        ("dpglm.solvers.fake", "from dpglm.solvers.dp_sgd import dp_sgd", False),
        ("dpglm.solvers.fake", "from dpglm import _kernels", False),
        ("dpglm.solvers.fake", "from dpglm._version import __version__", False),
    ],
)
def test_the_private_import_rule_sees_every_form(module, source, expected):
    parts = module.split(".")
    path = PACKAGE.joinpath(*parts[1:-1], parts[-1] + ".py")
    found = _private_names_imported([(module, path, ast.parse(source))])
    assert bool(found) == expected, found
