"""The package rules of DESIGN.md, read from the source with ``ast``.

- no import circle between project modules (a package's ``__init__`` counts as a
  module: a submodule that imports its own package while the package imports it
  closes a circle);
- ``sim`` never imports ``formulations`` or ``pipeline`` (it stays an independent
  judge); ``formulations`` never imports ``pipeline``; ``model`` imports only
  ``hardware``; ``hardware`` imports no other project package;
- project imports sit at the top of a module, and no private name (``_x``) is
  imported from another module;
- the pipeline asks which kind of hardware it has in one module only, the target table
  (``pipeline.targets``): nowhere else is a ``kind`` compared with a kind's name, and no
  other pipeline module imports a target's flow (:data:`TARGET_FLOWS`);
- the solver layer is entered only by its package, ``formulations.solver``: no module
  outside it imports one of its modules (backends, CP-SAT, budget) directly;
- every ``fabric`` parameter says its type (``RduFabric``);
- public functions take no ``**kwargs`` catch-all, and no function is longer than
  :data:`MAX_LINES` lines;
- a model that both CP-SAT and the linear backends solve is written once: in the packages of
  :data:`ONE_MODEL_PACKAGES` no module builds a ``LinearModel`` itself (the MILP is emitted from
  the ``ModelDescription`` the CP model is emitted from).
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("hardware", "model", "formulations", "pipeline", "sim", "benchmarks")
#: What each package may import besides itself (DESIGN.md's package table).
ALLOWED = {
    "hardware": set(),
    "model": {"hardware"},
    "formulations": {"model", "hardware"},
    "sim": {"model", "hardware"},
    "pipeline": {"formulations", "model", "hardware", "sim"},
    "benchmarks": set(PACKAGES),
}
MAX_LINES = 80
#: The module that tells the kinds of hardware apart (the target table).
TARGET_TABLE = "pipeline.targets"
#: The solver layer's package: the one door to the backends.
SOLVER = "formulations.solver"
#: Packages whose models are stated once, as a ``ModelDescription``, for every backend.
ONE_MODEL_PACKAGES = ("formulations.cgra", "formulations.streaming")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()
TREES = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in MODULES.items()}


def _imports(name: str, tree: ast.Module):
    """(imported module, names, node, at top level) for every project import of ``name``."""
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    top = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            target, names = "", [alias.name for alias in node.names]
        else:
            continue
        for module in ([target] if target else names):
            if module.split(".")[0] in PACKAGES:
                yield module, (names if target else []), node, id(node) in top


def _import_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(MODULES)
    for name, tree in TREES.items():
        for module, names, _, _ in _imports(name, tree):
            targets = [module] + [f"{module}.{n}" for n in names]
            graph.add_edges_from((name, t) for t in targets if t in MODULES and t != name)
    return graph


def test_no_import_circles():
    circles = [sorted(c) for c in nx.strongly_connected_components(_import_graph()) if len(c) > 1]
    assert circles == []


@pytest.mark.parametrize("package", PACKAGES)
def test_package_imports_follow_the_design(package):
    broken = []
    for name, tree in TREES.items():
        if name.split(".")[0] != package:
            continue
        for module, _, node, _ in _imports(name, tree):
            other = module.split(".")[0]
            if other != package and other not in ALLOWED[package]:
                broken.append(f"{name}:{node.lineno} imports {module}")
    assert broken == []


def test_project_imports_at_the_top_and_no_private_names():
    broken = []
    for name, tree in TREES.items():
        for module, names, node, at_top in _imports(name, tree):
            if not at_top and not _in_type_checking(tree, node):
                broken.append(f"{name}:{node.lineno} imports {module} inside a block")
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private and module != name:
                broken.append(f"{name}:{node.lineno} imports private {private} from {module}")
    assert broken == []


def test_the_solver_layer_is_entered_only_by_its_package():
    broken = [f"{name}:{node.lineno} imports {module}"
              for name, tree in TREES.items() if not name.startswith(SOLVER)
              for module, _, node, _ in _imports(name, tree)
              if module.startswith(SOLVER + ".")]
    assert broken == []


def test_the_target_table_is_the_one_place_that_tells_kinds_apart():
    broken = [f"{name}:{node.lineno}: {ast.unparse(node)}"
              for name, tree in TREES.items()
              if name.startswith("pipeline") and name != TARGET_TABLE
              for node in ast.walk(tree) if _compares_kind(node)]
    assert broken == []


#: Each target's flow: the RDU's package, the Streaming Engine's and the CGRA's modules.
TARGET_FLOWS = ("pipeline.rdu", "pipeline.streaming", "pipeline.cgra")


def test_a_targets_flow_is_entered_only_from_the_target_table():
    """The levels of each target live together: no other pipeline module reaches into a
    target's flow but the table of targets (so no shared module grows RDU-only code again;
    benchmarks and tests may measure a flow's parts)."""
    broken = [f"{name}:{node.lineno} imports {module}"
              for name, tree in TREES.items()
              if name.startswith("pipeline") and name != TARGET_TABLE
              for module, _, node, _ in _imports(name, tree)
              for flow in TARGET_FLOWS
              if (module == flow or module.startswith(flow + "."))
              and not (name == flow or name.startswith(flow + "."))]
    assert broken == []


def _compares_kind(node: ast.AST) -> bool:
    """Whether ``node`` compares a ``.kind`` attribute with a string (``spec.kind == "rdu"``)."""
    if not isinstance(node, ast.Compare):
        return False
    sides = [node.left, *node.comparators]
    return (any(isinstance(s, ast.Attribute) and s.attr == "kind" for s in sides)
            and any(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in sides))


def _in_type_checking(tree: ast.Module, node: ast.AST) -> bool:
    """Whether ``node`` sits in a top-level ``if TYPE_CHECKING:`` block."""
    for block in tree.body:
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test):
            if any(inner is node for inner in ast.walk(block)):
                return True
    return False


def test_public_functions_have_no_kwargs_catch_all():
    broken = [f"{name}.{fn.name}" for name, tree in TREES.items() for fn in ast.walk(tree)
              if isinstance(fn, ast.FunctionDef) and fn.args.kwarg
              and not fn.name.startswith("_")]
    assert broken == []


def test_fabric_parameters_are_typed():
    untyped = [f"{name}.{fn.name}" for name, tree in TREES.items() for fn in ast.walk(tree)
               if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
               for arg in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
               if arg.arg == "fabric" and arg.annotation is None]
    assert untyped == []


def test_functions_are_short():
    long = [f"{name}.{fn.name}: {fn.end_lineno - fn.lineno + 1} lines"
            for name, tree in TREES.items() for fn in ast.walk(tree)
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
            and fn.end_lineno - fn.lineno + 1 > MAX_LINES]
    assert long == []


def test_models_for_both_backends_are_written_once():
    built = [name for name, tree in TREES.items() if name.startswith(ONE_MODEL_PACKAGES)
             for node in ast.walk(tree) if isinstance(node, ast.Call)
             and getattr(node.func, "id", getattr(node.func, "attr", "")) == "LinearModel"]
    assert built == []
