"""No two modules of the project need each other (CONTRIBUTING, "Inside adapter_zoo"): the
module-level import graph of ``adapter_zoo`` and ``benchmarks`` has no circle but those
:data:`KNOWN` names (none now), each waiting for its move.

Every import counts, those inside functions too (a circle through an import inside a function
still means neither module can be read or changed alone); ``TYPE_CHECKING`` imports do not
(they never run). The graph is read from the source with ``ast`` rather than grimp, so that
every script of ``benchmarks``' rooms is in it, run as a file or imported.
``python tests/test_import_circles.py`` prints the circles.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

# pytest imports test files by path (--import-mode=importlib), and the file runs as a script
# too: tests/ is on sys.path only while the one graph walk both import tests share is
# imported (tests/adapter_zoo would otherwise stand for the package in grimp's graph)
sys.path.insert(0, str(Path(__file__).resolve().parent))
from import_graph import circles  # noqa: E402

del sys.path[0]

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("adapter_zoo", "benchmarks")

# The circles not yet broken, each a sorted tuple of module names: a new circle fails the
# test, and so does one broken without being struck from here. None is left.
KNOWN: set[tuple[str, ...]] = set()


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {
        _module(path): path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def _type_checking_imports(tree: ast.AST) -> set[int]:
    """The ids of the import statements under an ``if TYPE_CHECKING:``."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skipped


def _imported(node: ast.AST, importer: str, is_package: bool, modules) -> set[str]:
    """The project modules one import statement names (``from A import b`` names ``A.b``
    when that is a module, else ``A``)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in modules}
    if node.level:  # relative: resolved against the importer's package
        base = importer.split(".")
        base = base[: len(base) - node.level + (1 if is_package else 0)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    found = set()
    for alias in node.names:
        child = f"{source}.{alias.name}"
        if child in modules:
            found.add(child)
        elif source in modules:
            found.add(source)
    return found


def module_imports() -> dict[str, set[str]]:
    """Module -> the project modules it imports anywhere in its file."""
    modules = _modules()
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _type_checking_imports(tree)
        targets = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in skipped:
                targets |= _imported(node, name, path.name == "__init__.py", modules)
        edges[name] = targets - {name}
    return edges


def test_the_graph_reads_imports_inside_functions_and_the_perf_scripts():
    edges = module_imports()
    # inside a function of adapt.adapt (learn is imported on the auto strategy's first use)
    assert "adapter_zoo.adapt.learn" in edges["adapter_zoo.adapt.adapt"]
    assert "benchmarks.studies.adapt_study" in edges  # a script of a room
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {("a", "b", "c")}


def test_no_module_imports_one_that_imports_it_back():
    assert circles(module_imports()) == KNOWN


if __name__ == "__main__":
    found = circles(module_imports())
    print(f"import circles between modules: {len(found)}", *sorted(found), sep="\n  ")
    sys.exit(0)
