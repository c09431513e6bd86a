"""Imports inside functions say why they are there (CONTRIBUTING, "Inside adapter_zoo").

An import belongs at its module's top. One inside a function (at any depth: a method, a
nested function, a branch of one) must be explained by a comment, which is one of:

- a comment on the import's own line (or on one of its lines, when it spans several);
- a comment line directly above it (nothing, not even a blank line, between the two);
- the group rule: an import that directly follows another import of the same block
  (the next line, nothing between) shares that import's explanation, so one comment above a
  run of imports explains the whole run.

Typical reasons: a heavy library on first use (``# torch on first use: the CLI starts without
it``), an import cycle (``# cycle: X imports this module at its top``), an allowed upward import.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "adapter_zoo"


def _comments(source: str) -> tuple[set[int], set[int]]:
    """(lines holding a comment, lines that are only a comment), from the tokens: a ``#``
    inside a string is no comment."""
    anywhere, alone = set(), set()
    lines = source.splitlines()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            row = token.start[0]
            anywhere.add(row)
            if lines[row - 1].lstrip().startswith("#"):
                alone.add(row)
    return anywhere, alone


def _blocks(tree: ast.AST):
    """Every statement list inside a function, with nothing of the module's top level."""
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                for field in ("body", "orelse", "finalbody"):
                    block = getattr(node, field, None)
                    if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                        yield block
                for handler in getattr(node, "handlers", ()):
                    yield handler.body
                for case in getattr(node, "cases", ()):
                    yield case.body


def unexplained_imports(path: Path) -> list[int]:
    """The line of each import inside a function that no comment explains."""
    source = path.read_text(encoding="utf-8")
    anywhere, alone = _comments(source)
    found, seen = [], set()
    for block in _blocks(ast.parse(source)):
        # the statement before: None (no import), else whether that import is explained
        previous_explained, previous_end = None, 0
        for statement in block:
            if not isinstance(statement, ast.Import | ast.ImportFrom):
                previous_explained = None
                continue
            own = set(range(statement.lineno, statement.end_lineno + 1)) & anywhere
            explained = bool(own) or (statement.lineno - 1) in alone
            if not explained and previous_explained and previous_end + 1 == statement.lineno:
                explained = True
            if not explained and statement.lineno not in seen:
                found.append(statement.lineno)
            seen.add(statement.lineno)
            previous_explained, previous_end = explained, statement.end_lineno
    return found


def _files():
    return sorted(PACKAGE.rglob("*.py"))


def test_every_import_inside_a_function_says_why():
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in _files()
        for line in unexplained_imports(path)
    ]
    assert found == [], (
        "imports inside functions without a comment saying why (move them to the module's top, "
        f"or comment them): {found}"
    )


def test_the_rule_sees_comments_groups_and_strings(tmp_path):
    path = tmp_path / "probe.py"
    source = '''
def explained():
    # torch on first use
    import torch
    import numpy  # the group: follows the explained import
    x = 1
    import json  # its own comment
    return torch, numpy, x, json


def not_explained():
    """A docstring with a # that is no comment."""
    import torch

    # a comment, then a blank line: it explains nothing below

    import os
    import sys
    return torch, os, sys
'''
    path.write_text(source, encoding="utf-8")
    assert unexplained_imports(path) == [13, 17, 18]
