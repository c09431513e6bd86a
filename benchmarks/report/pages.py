"""The pages whose tables are generated: README.md and docs/, each table between markers::

    <!-- table: NAME -->
    ...generated lines...
    <!-- /table: NAME -->

``NAME`` is a description's marker (:data:`benchmarks.report.descriptions.TABLES`); the
renderer writes the lines between.
"""

from __future__ import annotations

import re
from pathlib import Path

from benchmarks.report.descriptions import TABLES
from benchmarks.report.paths import ROOT
from benchmarks.report.render import render
from stackexchange.io import atomic_write_text

# the pages whose marked tables are generated
PAGES = ("README.md", "docs")
MARKED = re.compile(
    r"(<!-- table: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /table: (?P=name) -->)", re.S
)


def pages(root: Path = ROOT) -> list[Path]:
    """README.md and every Markdown page of docs/."""
    found = []
    for name in PAGES:
        path = root / name
        found += sorted(path.rglob("*.md")) if path.is_dir() else [path]
    return found


def fill(text: str, where: str = "") -> str:
    """``text`` with every marked table generated afresh (an unknown name is an error naming
    ``where``, the page)."""

    def generate(match: re.Match) -> str:
        name = match["name"]
        if name not in TABLES:
            raise KeyError(f"{where}: unknown table {name!r}; known: {', '.join(TABLES)}")
        return f"{match[1]}{render(TABLES[name])}\n{match[4]}"

    return MARKED.sub(generate, text)


def marked_tables(text: str) -> dict[str, str]:
    """Name -> the lines a page holds between a table's markers."""
    return {m["name"]: m["body"] for m in MARKED.finditer(text)}


def stale_pages(root: Path = ROOT) -> list[Path]:
    """The pages whose marked tables differ from what the results give now."""
    return [
        p
        for p in pages(root)
        if fill(p.read_text(encoding="utf-8"), str(p)) != p.read_text(encoding="utf-8")
    ]


def write_pages(root: Path = ROOT) -> list[Path]:
    """Regenerate every marked table in place; return the pages that changed."""
    changed = []
    for path in pages(root):
        text = path.read_text(encoding="utf-8")
        new = fill(text, str(path))
        if new != text:
            atomic_write_text(path, new)
            changed.append(path)
    return changed
