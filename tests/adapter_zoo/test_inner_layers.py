"""The floors inside ``adapter_zoo`` (CONTRIBUTING, "Inside adapter_zoo"): its folders and
top modules in one order, no import circle between them, and only the upward imports
:data:`UPWARD` names, each for its reason.

Every import counts, those inside functions too (grimp reads them all); ``TYPE_CHECKING``
imports do not (they never run). ``python tests/adapter_zoo/test_inner_layers.py`` prints the
counts: circles between folders, imports running up, imports inside functions.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import grimp

# pytest imports test files by path (--import-mode=importlib), and the file runs as a script
# too: tests/ is on sys.path only while the one graph walk both import tests share is
# imported (tests/adapter_zoo would otherwise stand for the package in grimp's graph)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import import_graph  # noqa: E402

del sys.path[0]

PACKAGE = "adapter_zoo"
ROOT = Path(__file__).resolve().parents[2] / PACKAGE

# Top to bottom; a floor may import the floors below it. The names on one floor do not
# import each other. ``adapter_zoo/__init__.py`` (the public API, re-exporting every floor) is
# above them all.
LAYERS = (
    ("__main__",),
    ("cli", "zoo_cli"),
    ("export", "sweep"),
    ("adapt",),
    ("loading",),
    ("onnx",),
    ("build",),
    ("kinds",),
    ("compose",),
    ("cascade",),
    ("training",),
    ("biencoder",),
    ("resolve",),
    ("hub",),
    ("zoo",),
    ("ranker",),
    ("precision",),
    ("devices",),
    ("registry",),
    ("objectives",),
    ("documents",),
    ("losses", "metrics", "lengths", "modes", "names"),
    ("errors", "fusion_defaults", "tiny"),
)

# (importer, imported): the imports allowed to run up a floor, each for the reason CONTRIBUTING
# gives.
UPWARD = {
    # a composition spec's members are model names, each loaded as `load` loads any name
    ("adapter_zoo.compose.spec", "adapter_zoo.loading"),
    ("adapter_zoo.compose.composite", "adapter_zoo.loading"),
}


def _node(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _floor() -> dict[str, int]:
    return {name: level for level, names in enumerate(LAYERS) for name in names}


def inner_imports(graph=None) -> dict[tuple[str, str], set[tuple[str, str]]]:
    """(importer node, imported node) -> the module imports between two nodes of the package."""
    graph = graph or grimp.build_graph(PACKAGE, cache_dir=None)
    edges: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if not imported.startswith(PACKAGE):
                continue
            a, b = _node(module), _node(imported)
            if a != b and "__init__" not in (a, b):
                edges.setdefault((a, b), set()).add((module, imported))
    return edges


def circles(edges) -> list[tuple[str, ...]]:
    """The import circles (of two nodes or more) between the package's nodes."""
    pairs: dict[str, set[str]] = {}
    for a, b in edges:
        pairs.setdefault(a, set()).add(b)
    return sorted(import_graph.circles(pairs))


def upward(edges) -> set[tuple[str, str]]:
    """The module imports from a floor to a floor above it (or beside it) in :data:`LAYERS`."""
    floor = _floor()
    return {
        pair
        for (a, b), pairs in edges.items()
        if floor.get(b, len(LAYERS)) <= floor.get(a, len(LAYERS))
        for pair in pairs
    }


def imports_inside_functions() -> int:
    """The package's ``import`` statements of its own modules inside a function."""
    count = 0
    for file in ROOT.rglob("*.py"):
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in ast.walk(function):
                    if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
                        count += 1
                    elif isinstance(node, ast.Import):
                        count += sum(a.name.startswith(PACKAGE) for a in node.names)
    return count


def test_every_folder_and_top_module_has_a_floor():
    names = {p.stem for p in ROOT.glob("*.py")} | {
        p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()
    }
    assert sorted(names - {"__init__"} - set(_floor())) == []


def test_no_import_circle_between_folders_of_adapter_zoo():
    assert circles(inner_imports()) == []


def test_only_the_named_imports_run_up_a_floor():
    assert upward(inner_imports()) == UPWARD
    assert len(UPWARD) <= 3


if __name__ == "__main__":
    edges = inner_imports()
    found = circles(edges)
    up = upward(edges)
    mutual = sorted((a, b) for a, b in edges if a < b and (b, a) in edges)
    print(f"circles between folders/top modules: {len(found)}", *found, sep="\n  ")
    print(f"pairs importing each other: {len(mutual)}", *mutual, sep="\n  ")
    print(f"imports running up a floor: {len(up)}", *sorted(up), sep="\n  ")
    print(f"imports of {PACKAGE} inside functions: {imports_inside_functions()}")
    sys.exit(0)
